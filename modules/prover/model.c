/*
 * The least model of a kb's train facts and rules (see kb.h): forward
 * chaining, semi-naive. The atoms live in one growing array in the order
 * they were derived, so the atoms new in a round are a range of it. Each
 * round indexes the atoms so far by (pred, arg0) and (pred, arg1) with the
 * kb's own index, then joins every rule once per body position: that atom
 * from the last round's range, the others from everything indexed. A head
 * not in the set yet is appended, and becomes next round's range.
 */
#include "kb.h"

#include "skinner.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

typedef struct model_build {
    const sk_kb *kb;
    int64_t max_atoms;
    int32_t (*atoms)[3];
    int64_t count, cap;
    sk_kb_atom_set set;    /* every atom of atoms, sized for set_for */
    int64_t set_for;
    sk_kb_fact_index by0, by1; /* atoms [0, indexed) */
    int32_t *pred_start;       /* (num_preds + 1) into by0.pairs */
    bool over, nomem;
} model_build;

/* Rebuilds the set for twice the atoms once it holds set_for of them: the
 * kb's set does not grow, and its filter is sized by its count. */
static bool set_reserve(model_build *m, int64_t need) {
    if (need <= m->set_for) return true;
    int64_t want = SK_MAX(need, 2 * m->set_for);
    sk_kb_set_free(&m->set);
    if (!sk_kb_set_init(&m->set, want)) return false;
    for (int64_t k = 0; k < m->count; k++)
        sk_kb_set_insert(&m->set, sk_kb_key(m->atoms[k][0], m->atoms[k][1], m->atoms[k][2]));
    m->set_for = want;
    return true;
}

static void add_atom(model_build *m, int32_t pred, int32_t a0, int32_t a1) {
    if (m->over || m->nomem) return;
    uint64_t key = sk_kb_key(pred, a0, a1);
    if (sk_kb_set_has(&m->set, key)) return;
    if (m->count == m->max_atoms) {
        m->over = true;
        return;
    }
    if (m->count == m->cap) {
        int64_t cap = m->cap ? 2 * m->cap : 1024;
        void *grown = realloc(m->atoms, (size_t)cap * sizeof *m->atoms);
        if (!grown) {
            m->nomem = true;
            return;
        }
        m->atoms = grown;
        m->cap = cap;
    }
    if (!set_reserve(m, m->count + 1)) {
        m->nomem = true;
        return;
    }
    sk_kb_set_insert(&m->set, key);
    m->atoms[m->count][0] = pred;
    m->atoms[m->count][1] = a0;
    m->atoms[m->count][2] = a1;
    m->count++;
}

/* Indexes atoms [0, count): the atoms grouped by pred (then arg0), so every
 * atom of a predicate is one range of by0.pairs. */
static bool index_atoms(model_build *m, int count) {
    sk_kb_index_free(&m->by0);
    sk_kb_index_free(&m->by1);
    const int32_t(*atoms)[3] = (const int32_t(*)[3])m->atoms;
    sk_kb_pred_starts(atoms, count, m->kb->num_preds, m->pred_start);
    return sk_kb_index_build(atoms, count, 0, &m->by0) && sk_kb_index_build(atoms, count, 1, &m->by1);
}

#define UNBOUND (-1)

typedef struct join {
    model_build *m;
    const sk_kb_rule *rule;
    int skip; /* the body position the delta atom filled */
    int32_t value[SK_KB_MAX_RULE_VARS];
} join;

/* Binds atom's variables to (a0, a1) if they agree with the bindings so far;
 * set records which were newly bound, for undo. */
static bool bind_pair(join *j, const int32_t atom[3], int32_t a0, int32_t a1, bool set[2]) {
    set[0] = set[1] = false;
    int32_t v0 = atom[1], v1 = atom[2];
    if (j->value[v0] != UNBOUND && j->value[v0] != a0) return false;
    if (j->value[v0] == UNBOUND) {
        j->value[v0] = a0;
        set[0] = true;
    }
    if (j->value[v1] != UNBOUND && j->value[v1] != a1) {
        if (set[0]) j->value[v0] = UNBOUND;
        return false;
    }
    if (j->value[v1] == UNBOUND) {
        j->value[v1] = a1;
        set[1] = true;
    }
    return true;
}

static void unbind(join *j, const int32_t atom[3], const bool set[2]) {
    if (set[1]) j->value[atom[2]] = UNBOUND;
    if (set[0]) j->value[atom[1]] = UNBOUND;
}

/* Matches body atoms k.. (but skip) against the indexed atoms, then adds the head. */
static void join_from(join *j, int k) {
    model_build *m = j->m;
    const sk_kb_rule *r = j->rule;
    if (k == j->skip) k++;
    if (k == r->body_len) {
        add_atom(m, r->head[0], j->value[r->head[1]], j->value[r->head[2]]);
        return;
    }
    const int32_t *atom = r->body[k];
    int32_t a0 = j->value[atom[1]], a1 = j->value[atom[2]];
    if (a0 != UNBOUND && a1 != UNBOUND) {
        if (sk_kb_set_has(&m->set, sk_kb_key(atom[0], a0, a1))) join_from(j, k + 1);
        return;
    }
    const int32_t(*begin)[2], (*end)[2];
    if (a0 != UNBOUND) sk_kb_index_find(&m->by0, atom[0], a0, &begin, &end);
    else if (a1 != UNBOUND) sk_kb_index_find(&m->by1, atom[0], a1, &begin, &end);
    else {
        begin = (const int32_t(*)[2])(m->by0.pairs + m->pred_start[atom[0]]);
        end = (const int32_t(*)[2])(m->by0.pairs + m->pred_start[atom[0] + 1]);
    }
    for (const int32_t(*p)[2] = begin; p < end && !m->over && !m->nomem; p++) {
        bool set[2];
        if (!bind_pair(j, atom, (*p)[0], (*p)[1], set)) continue;
        join_from(j, k + 1);
        unbind(j, atom, set);
    }
}

/* Whether every head variable occurs in the body: else the rule derives
 * atoms for every constant, which forward chaining here does not do. */
static bool range_restricted(const sk_kb_rule *r) {
    for (int h = 1; h <= 2; h++) {
        bool found = false;
        for (int k = 0; k < r->body_len && !found; k++)
            found = r->body[k][1] == r->head[h] || r->body[k][2] == r->head[h];
        if (!found) return false;
    }
    return true;
}

void sk_kb_model_free(sk_kb_model *model) {
    sk_kb_set_free(&model->set);
    memset(model, 0, sizeof *model);
}

sk_status sk_kb_model_build(const sk_kb *kb, int64_t max_atoms, sk_kb_model *out) {
    SK_ASSERT(kb->finalized && max_atoms >= 0);
    memset(out, 0, sizeof *out);
    for (int r = 0; r < kb->num_rules; r++)
        if (!range_restricted(&kb->rules[r]) || kb->rules[r].body_len < 1) return SK_OK;
    /* the index takes int counts */
    model_build m = {.kb = kb, .max_atoms = SK_MIN(max_atoms, (int64_t)INT32_MAX)};
    m.pred_start = malloc(((size_t)kb->num_preds + 1) * sizeof *m.pred_start);
    m.nomem = !m.pred_start || !set_reserve(&m, 1024);
    /* the train facts, each once, by predicate */
    for (int32_t p = 0; p < kb->num_preds && !m.nomem; p++) {
        const int32_t(*begin)[2], (*end)[2];
        sk_kb_by_pred(kb, p, &begin, &end);
        for (const int32_t(*f)[2] = begin; f < end; f++) add_atom(&m, p, (*f)[0], (*f)[1]);
    }
    int64_t delta_lo = 0;
    int rounds = 0;
    while (delta_lo < m.count && !m.over && !m.nomem) {
        int64_t delta_hi = m.count;
        if (!index_atoms(&m, (int)delta_hi)) {
            m.nomem = true;
            break;
        }
        rounds++;
        for (int r = 0; r < kb->num_rules && !m.over && !m.nomem; r++) {
            const sk_kb_rule *rule = &kb->rules[r];
            join j = {.m = &m, .rule = rule};
            for (int v = 0; v < SK_KB_MAX_RULE_VARS; v++) j.value[v] = UNBOUND;
            for (int pos = 0; pos < rule->body_len; pos++) {
                j.skip = pos;
                const int32_t *atom = rule->body[pos];
                for (int64_t d = delta_lo; d < delta_hi && !m.over && !m.nomem; d++) {
                    if (m.atoms[d][0] != atom[0]) continue;
                    bool set[2];
                    if (!bind_pair(&j, atom, m.atoms[d][1], m.atoms[d][2], set)) continue;
                    join_from(&j, 0);
                    unbind(&j, atom, set);
                }
            }
        }
        delta_lo = delta_hi;
    }
    sk_kb_index_free(&m.by0);
    sk_kb_index_free(&m.by1);
    free(m.pred_start);
    free(m.atoms);
    out->count = m.count;
    out->rounds = rounds;
    if (m.nomem) {
        sk_kb_set_free(&m.set);
        return sk_fail(SK_ERR_NOMEM, "out of memory for the least model (%lld atoms so far)",
                       (long long)m.count);
    }
    if (m.over) {
        sk_kb_set_free(&m.set);
        return SK_OK;
    }
    out->set = m.set;
    out->complete = true;
    return SK_OK;
}
