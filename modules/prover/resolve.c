/*
 * One SLD resolution step: the successors of a goal list (see prover.h).
 *
 * Terms are int32: constants below first_var, variables from it. Every
 * unification here is of two binary atoms (the first goal with a fact or a
 * rule head), so a substitution holds at most two bindings and lives in a
 * tiny array; dereferencing follows at most two links. Rule variables are
 * renamed by offset: a state's variables are first_var..first_var+k-1
 * (numbered by first appearance), a rule's variable j becomes first_var+k+j,
 * so two applications of one rule never share a variable and a rule never
 * captures one of the state's. Each successor is renumbered by first
 * appearance again, which bounds the variables of a state by 2A.
 */
#include "prover.h"

#include "skinner.h"

#include <stdio.h>

#include <stdlib.h>

#include <string.h>

/* Working room for one successor: the body replaces the first goal. */
#define WORK_ATOMS (SK_PROVER_ATOMS_CAP - 1 + SK_KB_MAX_BODY)
/* Variables one successor can name before renumbering: the state's and a rule's. */
#define WORK_VARS (SK_PROVER_VARS(SK_PROVER_ATOMS_CAP) + SK_KB_MAX_RULE_VARS)
#define MAX_BINDINGS 4
/* The keys of the successors kept, for the duplicate test: a linear probing
 * set of at least 4 max_successors slots (0 marks a free slot; a key of 0 is
 * a terminal, never tested), from which an evicted successor's key is
 * removed. It replaces a scan of the kept keys, which costs S^2 per state
 * at DeepProofLog's S = 262. */
#define SEEN_SLOTS_CAP (4 * SK_PROVER_SUCCESSORS_CAP)

typedef struct subst {
    int32_t var[MAX_BINDINGS], value[MAX_BINDINGS];
    int count;
} subst;

static inline int32_t deref(const subst *s, int32_t term, int32_t first_var) {
    while (term >= first_var) {
        int k = 0;
        while (k < s->count && s->var[k] != term) k++;
        if (k == s->count) break;
        term = s->value[k];
    }
    return term;
}

static inline void bind(subst *s, int32_t var, int32_t value) {
    SK_ASSERT(s->count < MAX_BINDINGS);
    s->var[s->count] = var;
    s->value[s->count] = value;
    s->count++;
}

/* Unifies two terms under s, extending it; false on a clash of constants. A
 * variable of x is bound in preference, so renamed rule variables (passed as
 * x) take the goal's terms. */
static inline bool unify_term(subst *s, int32_t x, int32_t y, int32_t first_var) {
    x = deref(s, x, first_var);
    y = deref(s, y, first_var);
    if (x == y) return true;
    if (x >= first_var) bind(s, x, y);
    else if (y >= first_var) bind(s, y, x);
    else return false;
    return true;
}

uint64_t sk_prover_state_key(const int32_t *atoms, int num_atoms) {
    uint64_t key = 0;
    for (int k = 0; k < num_atoms; k++)
        key += sk_mix64(sk_kb_key(atoms[3 * k], atoms[3 * k + 1], atoms[3 * k + 2]));
    return key;
}

typedef struct derive_ctx {
    const sk_kb *kb;
    int32_t first_var;
    uint64_t excluded;
    const uint64_t *visited;
    int num_visited;
    sk_prover_limits limits;
    int32_t *out_atoms, *out_len;
    uint64_t *out_key;
    int count;
    int longest; /* the length of the longest kept successor, once count is full */
    bool proved;
    size_t stride; /* int32s per successor slot */
    uint64_t *seen; /* seen_mask + 1 slots */
    uint32_t seen_mask;
    /* whether each goal after the first, as it is, is a ground fact to drop:
     * looked up once per derivation rather than once per successor, since
     * most successors leave most of those goals as they were */
    bool rest_is_fact[SK_PROVER_ATOMS_CAP];
} derive_ctx;

static inline bool key_in(const uint64_t *keys, int count, uint64_t key) {
    for (int k = 0; k < count; k++)
        if (keys[k] == key) return true;
    return false;
}

static inline uint32_t seen_home(const derive_ctx *c, uint64_t key) {
    return (uint32_t)sk_mix64(key) & c->seen_mask;
}

/* Adds key to the kept successors' keys; false if it was there. */
static inline bool seen_insert(derive_ctx *c, uint64_t key) {
    for (uint32_t slot = seen_home(c, key);; slot = (slot + 1) & c->seen_mask) {
        if (c->seen[slot] == key) return false;
        if (c->seen[slot] == 0) {
            c->seen[slot] = key;
            return true;
        }
    }
}

/* Removes key (present) by shifting back the entries of its probe run. */
static void seen_remove(derive_ctx *c, uint64_t key) {
    uint32_t hole = seen_home(c, key), mask = c->seen_mask;
    while (c->seen[hole] != key) hole = (hole + 1) & mask;
    for (uint32_t next = (hole + 1) & mask; c->seen[next]; next = (next + 1) & mask) {
        uint32_t home = seen_home(c, c->seen[next]);
        /* the entry at next may fill the hole unless its home lies in (hole, next] */
        if (((next - home) & mask) >= ((next - hole) & mask)) {
            c->seen[hole] = c->seen[next];
            hole = next;
        }
    }
    c->seen[hole] = 0;
}

/* Keeps the shortest max_successors in derivation order: when full, a newcomer
 * replaces the longest kept successor (the latest of equal ones) if it is
 * strictly shorter, which keeps exactly what a stable sort by length would. */
static void keep(derive_ctx *c, const int32_t (*atoms)[3], int len, uint64_t key) {
    int slot = c->count;
    if (c->count == c->limits.max_successors) {
        int longest = 0;
        for (int k = 1; k < c->count; k++)
            if (c->out_len[k] >= c->out_len[longest]) longest = k;
        if (len >= c->out_len[longest]) return;
        seen_remove(c, c->out_key[longest]);
        int tail = c->count - 1 - longest;
        memmove(c->out_atoms + (size_t)longest * c->stride,
                c->out_atoms + (size_t)(longest + 1) * c->stride,
                (size_t)tail * c->stride * sizeof(int32_t));
        memmove(c->out_len + longest, c->out_len + longest + 1, (size_t)tail * sizeof(int32_t));
        memmove(c->out_key + longest, c->out_key + longest + 1, (size_t)tail * sizeof(uint64_t));
        slot = c->count - 1;
    } else {
        c->count++;
    }
    int32_t *out = c->out_atoms + (size_t)slot * c->stride;
    memcpy(out, atoms, (size_t)len * 3 * sizeof(int32_t));
    c->out_len[slot] = len;
    c->out_key[slot] = key;
    if (c->count == c->limits.max_successors) {
        c->longest = 0;
        for (int k = 0; k < c->count; k++) c->longest = SK_MAX(c->longest, c->out_len[k]);
    }
}

/* Builds one successor: body then rest under s, known facts removed,
 * variables renumbered; then the A, visited, duplicate and S filters. */
static void emit(derive_ctx *c, const subst *s, const int32_t (*body)[3], int body_len,
                 const int32_t (*rest)[3], int rest_len) {
    const int32_t first_var = c->first_var;
    int32_t work[WORK_ATOMS][3];
    int len = 0;
    for (int k = 0; k < body_len + rest_len; k++) {
        const int32_t *atom = k < body_len ? body[k] : rest[k - body_len];
        int32_t a0 = deref(s, atom[1], first_var), a1 = deref(s, atom[2], first_var);
        if (k >= body_len && a0 == atom[1] && a1 == atom[2]) {
            if (c->rest_is_fact[k - body_len]) continue; /* untouched by s: known */
        } else if (a0 < first_var && a1 < first_var) {
            uint64_t key = sk_kb_key(atom[0], a0, a1);
            if (key != c->excluded && sk_kb_is_fact(c->kb, key)) continue;
        }
        if (len == c->limits.max_atoms) return; /* over A atoms */
        work[len][0] = atom[0];
        work[len][1] = a0;
        work[len][2] = a1;
        len++;
    }
    if (len == 0) {
        c->proved = true;
        return;
    }
    /* a full list takes only a strictly shorter successor: skip the rest early */
    if (c->count == c->limits.max_successors && len >= c->longest) return;
    /* renumber variables by first appearance */
    int32_t renamed[WORK_VARS] = {0};
    int32_t next = first_var;
    for (int k = 0; k < len; k++)
        for (int j = 1; j <= 2; j++) {
            int32_t term = work[k][j];
            if (term < first_var) continue;
            int32_t *slot = &renamed[term - first_var];
            if (!*slot) *slot = next++;
            work[k][j] = *slot;
        }
    uint64_t key = sk_prover_state_key(&work[0][0], len);
    if (key_in(c->visited, c->num_visited, key) || !seen_insert(c, key)) return;
    keep(c, (const int32_t(*)[3])work, len, key);
}

/* The successor of goal from one of its facts. */
static inline void from_fact(derive_ctx *c, const int32_t *goal, const int32_t *fact,
                             const int32_t (*rest)[3], int rest_len) {
    if (sk_kb_key(goal[0], fact[0], fact[1]) == c->excluded) return;
    subst sub = {.count = 0};
    if (!unify_term(&sub, goal[1], fact[0], c->first_var) ||
        !unify_term(&sub, goal[2], fact[1], c->first_var))
        return; /* p(X,X) against p(a,b) */
    emit(c, &sub, NULL, 0, rest, rest_len);
}

static int int_cmp(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Room for the facts that can still matter once the list is full. */
#define MATTER_CAP 2048

/*
 * The first goal p(X, Y) of two free variables meets every fact of p (tens of
 * thousands on WN18RR), while the list of successors fills after a few.
 * From then on a fact matters only if its successor is strictly shorter than
 * the longest kept one. A successor keeps every atom of rest with a variable
 * other than X and Y, and every untouched atom that is not a fact; the
 * others ("maybe" atoms: ground once X and Y are bound) drop out only when
 * they are facts. So when even the maybe atoms dropping out one short of all
 * would not beat the longest, a fact that matters makes at least one maybe
 * atom a fact. Those facts are found through the maybe atoms' own indexes
 * (a join, the way a query planner would order it), sorted back into the
 * order of [begin, end) and derived as the loop would have; the others are
 * skipped, which changes nothing the loop would have kept. Returns false
 * (nothing done) when that does not apply: the loop goes on.
 */
static bool facts_that_matter(derive_ctx *c, const int32_t *goal, const int32_t (*rest)[3],
                              int rest_len, const int32_t (*begin)[2], const int32_t (*from)[2],
                              const int32_t (*end)[2]) {
    const sk_kb *kb = c->kb;
    const int32_t first_var = c->first_var, pred = goal[0], X = goal[1], Y = goal[2];
    int kept_anyway = 0, num_maybe = 0, maybe[SK_PROVER_ATOMS_CAP];
    for (int k = 0; k < rest_len; k++) {
        const int32_t *atom = rest[k];
        bool bound = false, other_var = false;
        for (int j = 1; j <= 2; j++) {
            if (atom[j] < first_var) continue;
            if (atom[j] == X || atom[j] == Y) bound = true;
            else other_var = true;
        }
        if (other_var) kept_anyway++;
        else if (bound) maybe[num_maybe++] = k;
        else kept_anyway += !c->rest_is_fact[k];
    }
    int need = num_maybe - c->longest + kept_anyway + 1;
    if (need < 1) return false;
    int matter[MATTER_CAP], count = 0;
    for (int m = 0; m < num_maybe; m++) {
        const int32_t *atom = rest[maybe[m]];
        /* one variable (X or Y) beside a constant: its values from the index */
        int var_at = atom[1] >= first_var ? 1 : 2;
        int32_t var = atom[var_at], other = atom[3 - var_at];
        if (other >= first_var) return false; /* r(X, Y) or r(X, X): the whole of r */
        const int32_t(*rb)[2], (*re)[2];
        if (var_at == 1) sk_kb_by_arg1(kb, atom[0], other, &rb, &re);
        else sk_kb_by_arg0(kb, atom[0], other, &rb, &re);
        for (const int32_t(*r)[2] = rb; r < re; r++) {
            int32_t value = (*r)[var_at - 1];
            const int32_t(*gb)[2], (*ge)[2];
            if (var == X) { /* p(value, *): a run of [begin, end), grouped by arg0 */
                sk_kb_by_arg0(kb, pred, value, &gb, &ge);
                if (count + (ge - gb) > MATTER_CAP) return false;
                for (const int32_t(*g)[2] = gb; g < ge; g++) matter[count++] = (int)(g - begin);
                continue;
            }
            const int32_t(*yb)[2], (*ye)[2]; /* p(*, value), found again in [begin, end) */
            sk_kb_by_arg1(kb, pred, value, &yb, &ye);
            for (const int32_t(*y)[2] = yb; y < ye; y++) {
                sk_kb_by_arg0(kb, pred, (*y)[0], &gb, &ge);
                for (const int32_t(*g)[2] = gb; g < ge; g++) {
                    if ((*g)[1] != value) continue;
                    if (count == MATTER_CAP) return false;
                    matter[count++] = (int)(g - begin);
                }
            }
        }
    }
    qsort(matter, (size_t)count, sizeof matter[0], int_cmp);
    int at = (int)(from - begin);
    for (int k = 0; k < count && !c->proved; k++) {
        if (matter[k] < at || (k > 0 && matter[k] == matter[k - 1])) continue;
        SK_ASSERT(begin + matter[k] < end);
        from_fact(c, goal, begin[matter[k]], rest, rest_len);
    }
    return true;
}

static void resolve_with_facts(derive_ctx *c, const int32_t *goal, const int32_t (*rest)[3],
                               int rest_len) {
    const int32_t first_var = c->first_var, pred = goal[0], s = goal[1], t = goal[2];
    const int32_t(*begin)[2], (*end)[2];
    if (s < first_var && t < first_var) {
        uint64_t key = sk_kb_key(pred, s, t);
        subst sub = {.count = 0};
        if (key != c->excluded && sk_kb_is_fact(c->kb, key)) emit(c, &sub, NULL, 0, rest, rest_len);
        return;
    }
    if (s < first_var) sk_kb_by_arg0(c->kb, pred, s, &begin, &end);
    else if (t < first_var) sk_kb_by_arg1(c->kb, pred, t, &begin, &end);
    else sk_kb_by_pred(c->kb, pred, &begin, &end);
    bool free_pair = s >= first_var && t >= first_var && s != t && !c->limits.plain;
    for (const int32_t(*fact)[2] = begin; fact < end && !c->proved; fact++) {
        if (free_pair && c->count == c->limits.max_successors) {
            if (facts_that_matter(c, goal, rest, rest_len, begin, fact, end)) return;
            free_pair = false; /* it did not apply: the plain loop, to the end */
        }
        from_fact(c, goal, *fact, rest, rest_len);
    }
}

static void resolve_with_rules(derive_ctx *c, const int32_t *goal, int32_t num_state_vars,
                               const int32_t (*rest)[3], int rest_len) {
    const sk_kb *kb = c->kb;
    const int32_t first_var = c->first_var, base = first_var + num_state_vars;
    for (int32_t r = kb->rule_start[goal[0]]; r < kb->rule_start[goal[0] + 1] && !c->proved; r++) {
        const sk_kb_rule *rule = &kb->rules[kb->rule_order[r]];
        subst sub = {.count = 0};
        if (!unify_term(&sub, base + rule->head[1], goal[1], first_var) ||
            !unify_term(&sub, base + rule->head[2], goal[2], first_var))
            continue;
        int32_t body[SK_KB_MAX_BODY][3];
        for (int k = 0; k < rule->body_len; k++) {
            body[k][0] = rule->body[k][0];
            body[k][1] = base + rule->body[k][1];
            body[k][2] = base + rule->body[k][2];
        }
        emit(c, &sub, (const int32_t(*)[3])body, rule->body_len, rest, rest_len);
    }
}

static int terminal(int32_t *out_atoms, int32_t *out_len, uint64_t *out_key, int32_t pred) {
    out_atoms[0] = pred;
    out_atoms[1] = out_atoms[2] = 0;
    out_len[0] = 1;
    out_key[0] = 0;
    return 1;
}

int sk_prover_derive(const sk_kb *kb, int32_t first_var, const int32_t *goals, int num_goals,
                     uint64_t excluded, const uint64_t *visited, int num_visited,
                     sk_prover_limits limits, int32_t *out_atoms, int32_t *out_len,
                     uint64_t *out_key) {
    SK_ASSERT(num_goals >= 1 && num_goals <= SK_PROVER_ATOMS_CAP);
    SK_ASSERT(limits.max_atoms >= 1 && limits.max_atoms <= SK_PROVER_ATOMS_CAP);
    SK_ASSERT(limits.max_successors >= 1 && limits.max_successors <= SK_PROVER_SUCCESSORS_CAP);
    SK_ASSERT(limits.stride >= limits.max_atoms);
    uint32_t seen_slots = 4;
    while (seen_slots < 4 * (uint32_t)limits.max_successors) seen_slots *= 2;
    uint64_t seen[SEEN_SLOTS_CAP];
    memset(seen, 0, seen_slots * sizeof seen[0]);
    derive_ctx c = {.kb = kb, .first_var = first_var, .excluded = excluded, .visited = visited,
                    .num_visited = num_visited, .limits = limits, .out_atoms = out_atoms,
                    .out_len = out_len, .out_key = out_key, .stride = 3 * (size_t)limits.stride,
                    .seen = seen, .seen_mask = seen_slots - 1};
    int32_t num_state_vars = 0;
    for (int k = 0; k < 3 * num_goals; k++)
        if (k % 3 && goals[k] >= first_var)
            num_state_vars = SK_MAX(num_state_vars, goals[k] - first_var + 1);
    SK_ASSERT(num_state_vars <= SK_PROVER_VARS(SK_PROVER_ATOMS_CAP));
    const int32_t(*rest)[3] = (const int32_t(*)[3])(goals + 3);
    for (int k = 0; k < num_goals - 1; k++) {
        uint64_t key = sk_kb_key(rest[k][0], rest[k][1], rest[k][2]);
        c.rest_is_fact[k] = rest[k][1] < first_var && rest[k][2] < first_var &&
                            key != excluded && sk_kb_is_fact(kb, key);
    }
    resolve_with_facts(&c, goals, rest, num_goals - 1);
    if (!c.proved) resolve_with_rules(&c, goals, num_state_vars, rest, num_goals - 1);
    if (c.proved) return terminal(out_atoms, out_len, out_key, SK_KB_TRUE);
    if (c.count == 0) return terminal(out_atoms, out_len, out_key, SK_KB_FALSE);
    return c.count;
}
