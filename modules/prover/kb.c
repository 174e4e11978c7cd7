/*
 * The knowledge base: interning, DeepProofLog's text formats, and the fact
 * indexes. Built once at env creation, so plain malloc/realloc growth; the
 * step loop only reads the finalized arrays.
 */
#include "kb.h"

#include "skinner.h"

#include <stdio.h>

#include <stdlib.h>

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#define NAME_MAX_LEN 255
/* Variables the prover numbers after the constants must fit in SK_KB_MAX_ARG. */
#define VARIABLE_HEADROOM 1024

/* ------------------------------------------------------------ growth */

/* Grows *ptr (of *cap elements of size elem) to hold at least need. */
static bool grow(void **ptr, int *cap, int need, size_t elem) {
    if (need <= *cap) return true;
    int new_cap = *cap ? *cap : 16;
    while (new_cap < need) new_cap *= 2;
    void *p = realloc(*ptr, (size_t)new_cap * elem);
    if (!p) return false;
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(new_cap - *cap) * elem);
    *ptr = p;
    *cap = new_cap;
    return true;
}

/* ------------------------------------------------------------ interning */

static uint64_t hash_name(const char *name) {
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a offset basis */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ULL; /* FNV prime */
    return sk_mix64(h);
}

static int32_t names_find(const sk_kb_names *t, const char *name) {
    if (!t->slots) return -1;
    for (uint32_t slot = (uint32_t)hash_name(name) & t->mask;; slot = (slot + 1) & t->mask) {
        int32_t id = t->slots[slot] - 1;
        if (id < 0) return -1;
        if (strcmp(t->names[id], name) == 0) return id;
    }
}

static bool names_rehash(sk_kb_names *t, uint32_t capacity) {
    int32_t *slots = calloc(capacity, sizeof *slots);
    if (!slots) return false;
    free(t->slots);
    t->slots = slots;
    t->mask = capacity - 1;
    for (int id = 0; id < t->count; id++) {
        uint32_t slot = (uint32_t)hash_name(t->names[id]) & t->mask;
        while (t->slots[slot]) slot = (slot + 1) & t->mask;
        t->slots[slot] = id + 1;
    }
    return true;
}

static int32_t names_intern(sk_kb_names *t, const char *name) {
    int32_t id = names_find(t, name);
    if (id >= 0) return id;
    if (!grow((void **)&t->names, &t->cap, t->count + 1, sizeof *t->names)) return -1;
    if ((uint32_t)(t->count + 1) * 2 > (t->slots ? t->mask + 1 : 0)) {
        uint32_t capacity = t->slots ? (t->mask + 1) * 2 : 64;
        while ((uint32_t)(t->count + 1) * 2 > capacity) capacity *= 2;
        if (!names_rehash(t, capacity)) return -1;
    }
    char *copy = strdup(name);
    if (!copy) return -1;
    id = t->count++;
    t->names[id] = copy;
    uint32_t slot = (uint32_t)hash_name(name) & t->mask;
    while (t->slots[slot]) slot = (slot + 1) & t->mask;
    t->slots[slot] = id + 1;
    return id;
}

static void names_free(sk_kb_names *t) {
    for (int i = 0; i < t->count; i++) free(t->names[i]);
    free(t->names);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

sk_kb *sk_kb_new(void) {
    sk_kb *kb = calloc(1, sizeof *kb);
    if (!kb) return NULL;
    static const char *const reserved[] = {"", "True", "False", "End"};
    for (int i = 0; i < SK_KB_FIRST_PRED; i++)
        if (names_intern(&kb->preds, reserved[i]) != i) goto oom;
    if (names_intern(&kb->consts, "") != 0) goto oom; /* padding */
    return kb;
oom:
    sk_kb_free(kb);
    return NULL;
}

void sk_kb_free(sk_kb *kb) {
    if (!kb) return;
    names_free(&kb->preds);
    names_free(&kb->consts);
    names_free(&kb->types);
    names_free(&kb->rule_names);
    for (int s = 0; s < SK_KB_NUM_SPLITS; s++) {
        free(kb->facts[s].atoms);
        free(kb->facts[s].depths);
        free(kb->queries[s].atoms);
        free(kb->queries[s].depths);
    }
    free(kb->rules);
    free(kb->const_type);
    sk_kb_set_free(&kb->train_set);
    sk_kb_set_free(&kb->known_set);
    sk_kb_index_free(&kb->by0);
    sk_kb_index_free(&kb->by1);
    free(kb->pred_start);
    free(kb->rule_start);
    free(kb->rule_order);
    free(kb->cand_start);
    free(kb->cand);
    free(kb);
}

void sk_kb_set_free(sk_kb_atom_set *set) {
    free(set->keys);
    free(set->filter);
    memset(set, 0, sizeof *set);
}

void sk_kb_index_free(sk_kb_fact_index *index) {
    free(index->runs);
    free(index->pairs);
    memset(index, 0, sizeof *index);
}

int32_t sk_kb_pred(sk_kb *kb, const char *name) {
    SK_ASSERT(!kb->finalized);
    int32_t id = names_intern(&kb->preds, name);
    if (id < 0) sk_fail(SK_ERR_NOMEM, "out of memory interning predicate '%s'", name);
    return id;
}

int32_t sk_kb_const(sk_kb *kb, const char *name) {
    SK_ASSERT(!kb->finalized);
    int32_t id = names_intern(&kb->consts, name);
    if (id < 0) sk_fail(SK_ERR_NOMEM, "out of memory interning constant '%s'", name);
    return id;
}

int32_t sk_kb_find_pred(const sk_kb *kb, const char *name) {
    return names_find(&kb->preds, name);
}

int32_t sk_kb_find_const(const sk_kb *kb, const char *name) {
    return names_find(&kb->consts, name);
}

/* ------------------------------------------------------------ building */

static bool atoms_push(sk_kb_atoms *list, int32_t pred, int32_t arg0, int32_t arg1,
                       int32_t depth) {
    int cap = list->cap;
    if (!grow((void **)&list->atoms, &cap, list->count + 1, sizeof *list->atoms)) return false;
    int depth_cap = list->cap;
    if (!grow((void **)&list->depths, &depth_cap, list->count + 1, sizeof *list->depths))
        return false;
    list->cap = cap;
    list->atoms[list->count][0] = pred;
    list->atoms[list->count][1] = arg0;
    list->atoms[list->count][2] = arg1;
    list->depths[list->count] = depth;
    list->count++;
    return true;
}

sk_status sk_kb_add_fact(sk_kb *kb, sk_kb_split split, int32_t pred, int32_t arg0,
                         int32_t arg1) {
    SK_ASSERT(!kb->finalized && split < SK_KB_NUM_SPLITS);
    SK_ASSERT(pred >= SK_KB_FIRST_PRED && pred < kb->preds.count);
    SK_ASSERT(arg0 > 0 && arg0 < kb->consts.count && arg1 > 0 && arg1 < kb->consts.count);
    if (!atoms_push(&kb->facts[split], pred, arg0, arg1, SK_KB_DEPTH_UNKNOWN))
        return sk_fail(SK_ERR_NOMEM, "out of memory for facts");
    if (!kb->explicit_queries[split] &&
        !atoms_push(&kb->queries[split], pred, arg0, arg1, SK_KB_DEPTH_UNKNOWN))
        return sk_fail(SK_ERR_NOMEM, "out of memory for queries");
    return SK_OK;
}

sk_status sk_kb_add_query(sk_kb *kb, sk_kb_split split, int32_t pred, int32_t arg0, int32_t arg1,
                          int32_t depth) {
    SK_ASSERT(!kb->finalized && split < SK_KB_NUM_SPLITS);
    SK_ASSERT(pred >= SK_KB_FIRST_PRED && pred < kb->preds.count);
    SK_ASSERT(arg0 > 0 && arg0 < kb->consts.count && arg1 > 0 && arg1 < kb->consts.count);
    if (!kb->explicit_queries[split]) {
        kb->queries[split].count = 0;
        kb->explicit_queries[split] = true;
    }
    if (!atoms_push(&kb->queries[split], pred, arg0, arg1, depth))
        return sk_fail(SK_ERR_NOMEM, "out of memory for queries");
    return SK_OK;
}

sk_status sk_kb_add_rule(sk_kb *kb, const sk_kb_rule *rule) {
    SK_ASSERT(!kb->finalized);
    if (rule->body_len < 1 || rule->body_len > SK_KB_MAX_BODY)
        return sk_fail(SK_ERR_INVALID, "a rule body holds 1..%d atoms, not %d", SK_KB_MAX_BODY,
                       rule->body_len);
    if (rule->num_vars < 1 || rule->num_vars > SK_KB_MAX_RULE_VARS)
        return sk_fail(SK_ERR_INVALID, "a rule holds 1..%d variables, not %d",
                       SK_KB_MAX_RULE_VARS, rule->num_vars);
    for (int k = 0; k <= rule->body_len; k++) {
        const int32_t *atom = k == 0 ? rule->head : rule->body[k - 1];
        SK_ASSERT(atom[0] >= SK_KB_FIRST_PRED && atom[0] < kb->preds.count);
        SK_ASSERT(atom[1] >= 0 && atom[1] < rule->num_vars && atom[2] >= 0 &&
                  atom[2] < rule->num_vars);
    }
    if (!grow((void **)&kb->rules, &kb->rules_cap, kb->num_rules + 1, sizeof *kb->rules))
        return sk_fail(SK_ERR_NOMEM, "out of memory for rules");
    kb->rules[kb->num_rules++] = *rule;
    return SK_OK;
}

sk_status sk_kb_set_type(sk_kb *kb, int32_t c, const char *type_name) {
    SK_ASSERT(!kb->finalized && c > 0 && c < kb->consts.count);
    int32_t type = names_intern(&kb->types, type_name);
    if (type < 0 || !grow((void **)&kb->const_type, &kb->const_type_cap, c + 1,
                          sizeof *kb->const_type))
        return sk_fail(SK_ERR_NOMEM, "out of memory for constant types");
    kb->const_type[c] = type + 1;
    return SK_OK;
}

/* ------------------------------------------------------------ parsing */

typedef struct cursor {
    const char *p, *end; /* the current line, without its newline */
    const char *file;
    int line;
} cursor;

typedef struct parsed_atom {
    char pred[NAME_MAX_LEN + 1];
    char args[2][NAME_MAX_LEN + 1];
} parsed_atom;

/* A syntax error at the cursor's line. */
#define syntax_error(c, ...) sk_fail_at(SK_ERR_CORRUPT, (c)->file, (c)->line, __VA_ARGS__)

static void skip_space(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t')) c->p++;
}

static bool name_char(char ch) {
    return ch != ' ' && ch != '\t' && ch != '(' && ch != ')' && ch != ',' && ch != '\r';
}

/* Reads a name (any run of characters but blanks, parentheses and commas)
 * stopping before `stop` if it is not 0; returns its length, 0 if none, -1 if
 * too long. */
static int read_name(cursor *c, char *out, char stop) {
    skip_space(c);
    int len = 0;
    while (c->p < c->end && name_char(*c->p) && *c->p != stop) {
        if (len == NAME_MAX_LEN) return -1;
        out[len++] = *c->p++;
    }
    out[len] = '\0';
    return len;
}

static bool accept(cursor *c, char ch) {
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

static bool at_end(cursor *c) {
    skip_space(c);
    return c->p >= c->end;
}

static sk_status parse_atom(cursor *c, parsed_atom *atom) {
    int len = read_name(c, atom->pred, 0);
    if (len < 0) return syntax_error(c, "expected a name of at most %d characters", NAME_MAX_LEN);
    if (len == 0) return syntax_error(c, "expected a predicate name");
    if (!accept(c, '(')) return syntax_error(c, "expected '(' after '%s'", atom->pred);
    for (int k = 0; k < 2; k++) {
        len = read_name(c, atom->args[k], 0);
        if (len < 0)
            return syntax_error(c, "expected a name of at most %d characters", NAME_MAX_LEN);
        if (len == 0)
            return syntax_error(c, "expected argument %d of '%s'", k + 1, atom->pred);
        char want = k == 0 ? ',' : ')';
        if (!accept(c, want)) {
            bool arity = (k == 0 && c->p < c->end && *c->p == ')') ||
                         (k == 1 && c->p < c->end && *c->p == ',');
            if (arity)
                return syntax_error(c, "expected 2 arguments in '%s(...)' (only binary "
                                       "predicates are supported)", atom->pred);
            return syntax_error(c, "expected '%c' after argument %d of '%s'", want, k + 1,
                                atom->pred);
        }
    }
    return SK_OK;
}

/* Interns a parsed ground atom. */
static sk_status intern_ground(sk_kb *kb, const parsed_atom *parsed, int32_t atom[3]) {
    atom[0] = sk_kb_pred(kb, parsed->pred);
    atom[1] = sk_kb_const(kb, parsed->args[0]);
    atom[2] = sk_kb_const(kb, parsed->args[1]);
    if (atom[0] < 0 || atom[1] < 0 || atom[2] < 0) return SK_ERR_NOMEM;
    if (atom[0] < SK_KB_FIRST_PRED) return SK_ERR_INVALID;
    return SK_OK;
}

typedef sk_status (*line_fn)(sk_kb *kb, cursor *c, void *ctx);

/* Calls fn on every line that is not blank or a comment. */
static sk_status for_each_line(sk_kb *kb, const char *text, const char *file, line_fn fn,
                               void *ctx) {
    cursor c = {.file = file, .line = 0};
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        if (!eol) eol = p + strlen(p);
        c.line++;
        c.p = p;
        c.end = eol;
        while (c.end > c.p && (c.end[-1] == '\r' || c.end[-1] == ' ' || c.end[-1] == '\t'))
            c.end--;
        skip_space(&c);
        if (c.p < c.end && *c.p != '%' && *c.p != '#') {
            sk_status status = fn(kb, &c, ctx);
            if (status != SK_OK) return status;
        }
        p = *eol ? eol + 1 : eol;
    }
    return SK_OK;
}

static sk_status reserved_name_error(const cursor *c, const char *name) {
    return syntax_error(c, "expected a predicate name, not the reserved '%s'", name);
}

static sk_status fact_line(sk_kb *kb, cursor *c, void *ctx) {
    sk_kb_split split = *(const sk_kb_split *)ctx;
    parsed_atom parsed;
    sk_status status = parse_atom(c, &parsed);
    if (status != SK_OK) return status;
    accept(c, '.');
    if (!at_end(c)) return syntax_error(c, "expected end of line after the fact");
    int32_t atom[3];
    status = intern_ground(kb, &parsed, atom);
    if (status == SK_ERR_INVALID) return reserved_name_error(c, parsed.pred);
    if (status != SK_OK) return status;
    return sk_kb_add_fact(kb, split, atom[0], atom[1], atom[2]);
}

sk_status sk_kb_parse_facts(sk_kb *kb, sk_kb_split split, const char *text, const char *file) {
    return for_each_line(kb, text, file, fact_line, &split);
}

static sk_status depth_line(sk_kb *kb, cursor *c, void *ctx) {
    sk_kb_split split = *(const sk_kb_split *)ctx;
    parsed_atom parsed;
    sk_status status = parse_atom(c, &parsed);
    if (status != SK_OK) return status;
    accept(c, '.');
    char word[NAME_MAX_LEN + 1];
    int64_t depth;
    if (read_name(c, word, 0) <= 0 || !sk_parse_i64(word, &depth) || depth < -1 ||
        depth > INT32_MAX)
        return syntax_error(c, "expected a depth (an integer >= -1) after the atom");
    if (!at_end(c)) return syntax_error(c, "expected end of line after the depth");
    int32_t atom[3];
    status = intern_ground(kb, &parsed, atom);
    if (status == SK_ERR_INVALID) return reserved_name_error(c, parsed.pred);
    if (status != SK_OK) return status;
    return sk_kb_add_query(kb, split, atom[0], atom[1], atom[2], (int32_t)depth);
}

sk_status sk_kb_parse_depths(sk_kb *kb, sk_kb_split split, const char *text, const char *file) {
    SK_ASSERT(!kb->finalized && split < SK_KB_NUM_SPLITS);
    /* the depths file lists the split's queries, in place of its facts (an empty
     * file leaves none) */
    if (!kb->explicit_queries[split]) {
        kb->queries[split].count = 0;
        kb->explicit_queries[split] = true;
    }
    return for_each_line(kb, text, file, depth_line, &split);
}

typedef struct rule_vars {
    char names[SK_KB_MAX_RULE_VARS][NAME_MAX_LEN + 1];
    int count;
} rule_vars;

static sk_status rule_atom(sk_kb *kb, cursor *c, rule_vars *vars, int32_t out[3]) {
    parsed_atom parsed;
    sk_status status = parse_atom(c, &parsed);
    if (status != SK_OK) return status;
    out[0] = sk_kb_pred(kb, parsed.pred);
    if (out[0] < 0) return SK_ERR_NOMEM;
    if (out[0] < SK_KB_FIRST_PRED) return reserved_name_error(c, parsed.pred);
    for (int k = 0; k < 2; k++) {
        int v = 0;
        while (v < vars->count && strcmp(vars->names[v], parsed.args[k]) != 0) v++;
        if (v == vars->count) {
            if (vars->count == SK_KB_MAX_RULE_VARS)
                return syntax_error(c, "expected at most %d variables in a rule",
                                    SK_KB_MAX_RULE_VARS);
            memcpy(vars->names[vars->count++], parsed.args[k], sizeof vars->names[0]);
        }
        out[1 + k] = v;
    }
    return SK_OK;
}

static sk_status rule_line(sk_kb *kb, cursor *c, void *ctx) {
    (void)ctx;
    char name[NAME_MAX_LEN + 1], weight_text[NAME_MAX_LEN + 1];
    int len = read_name(c, name, ':');
    if (len <= 0 || !accept(c, ':'))
        return syntax_error(c, "expected 'name:weight:body(X,Y), ... -> head(X,Y)'");
    len = read_name(c, weight_text, ':');
    double weight;
    if (len <= 0 || !sk_parse_f64(weight_text, &weight))
        return syntax_error(c, "expected a number as the weight of rule '%s'", name);
    if (!accept(c, ':')) return syntax_error(c, "expected ':' after the weight of rule '%s'", name);
    sk_kb_rule rule = {.weight = weight};
    rule_vars vars = {.count = 0};
    sk_status status;
    for (;;) {
        if (rule.body_len == SK_KB_MAX_BODY)
            return syntax_error(c, "expected at most %d body atoms in rule '%s'", SK_KB_MAX_BODY,
                                name);
        if ((status = rule_atom(kb, c, &vars, rule.body[rule.body_len])) != SK_OK) return status;
        rule.body_len++;
        if (accept(c, ',')) continue;
        skip_space(c);
        if (c->end - c->p >= 2 && c->p[0] == '-' && c->p[1] == '>') {
            c->p += 2;
            break;
        }
        return syntax_error(c, "expected ',' or '->' after a body atom of rule '%s'", name);
    }
    if ((status = rule_atom(kb, c, &vars, rule.head)) != SK_OK) return status;
    if (!at_end(c))
        return syntax_error(c, "expected end of line after the head of rule '%s'", name);
    rule.num_vars = vars.count;
    if (names_intern(&kb->rule_names, name) < 0) return SK_ERR_NOMEM;
    return sk_kb_add_rule(kb, &rule);
}

sk_status sk_kb_parse_rules(sk_kb *kb, const char *text, const char *file) {
    SK_ASSERT(!kb->finalized);
    return for_each_line(kb, text, file, rule_line, NULL);
}

static sk_status domain_line(sk_kb *kb, cursor *c, void *ctx) {
    (void)ctx;
    char type[NAME_MAX_LEN + 1], name[NAME_MAX_LEN + 1];
    int len = read_name(c, type, 0);
    if (len <= 0) return syntax_error(c, "expected 'type constant constant ...'");
    while (!at_end(c)) {
        len = read_name(c, name, 0);
        if (len <= 0) return syntax_error(c, "expected a constant name");
        int32_t id = sk_kb_const(kb, name);
        if (id < 0) return SK_ERR_NOMEM;
        sk_status status = sk_kb_set_type(kb, id, type);
        if (status != SK_OK) return status;
    }
    return SK_OK;
}

sk_status sk_kb_parse_domains(sk_kb *kb, const char *text, const char *file) {
    SK_ASSERT(!kb->finalized);
    return for_each_line(kb, text, file, domain_line, NULL);
}

/* ------------------------------------------------------------ indexes */

#define FILTER_BITS_PER_ATOM 16

bool sk_kb_set_init(sk_kb_atom_set *set, int64_t count) {
    uint64_t capacity = 16;
    while (capacity < (uint64_t)count * 2) capacity *= 2;
    set->keys = calloc(capacity, sizeof *set->keys);
    set->mask = capacity - 1;
    uint64_t bits = 64;
    while (bits < (uint64_t)count * FILTER_BITS_PER_ATOM) bits *= 2;
    set->filter = calloc(bits / 64, sizeof *set->filter);
    set->filter_mask = bits - 1;
    return set->keys && set->filter;
}

bool sk_kb_set_insert(sk_kb_atom_set *set, uint64_t key) {
    uint64_t hash = sk_mix64(key), bit = (hash >> 32) & set->filter_mask;
    set->filter[bit >> 6] |= (uint64_t)1 << (bit & 63);
    uint64_t slot = hash & set->mask;
    while (set->keys[slot]) {
        if (set->keys[slot] == key) return false;
        slot = (slot + 1) & set->mask;
    }
    set->keys[slot] = key;
    return true;
}

/* A fact's place in an index: its (pred, arg) and its file position. */
typedef struct index_entry {
    int32_t pred, arg, order;
} index_entry;

static int index_entry_cmp(const void *a, const void *b) {
    const index_entry *x = a, *y = b;
    if (x->pred != y->pred) return x->pred < y->pred ? -1 : 1;
    if (x->arg != y->arg) return x->arg < y->arg ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

bool sk_kb_index_build(const int32_t (*facts)[3], int count, int pos, sk_kb_fact_index *index) {
    index_entry *entries = malloc((size_t)(count ? count : 1) * sizeof *entries);
    index->pairs = malloc((size_t)(count ? count : 1) * sizeof *index->pairs);
    int groups = 0;
    if (!entries || !index->pairs) {
        free(entries);
        return false;
    }
    for (int k = 0; k < count; k++)
        entries[k] = (index_entry){facts[k][0], facts[k][1 + pos], k};
    qsort(entries, (size_t)count, sizeof *entries, index_entry_cmp);
    for (int k = 0; k < count; k++) {
        const int32_t *fact = facts[entries[k].order];
        index->pairs[k][0] = fact[1];
        index->pairs[k][1] = fact[2];
        groups += k == 0 || entries[k].pred != entries[k - 1].pred ||
                  entries[k].arg != entries[k - 1].arg;
    }
    uint64_t capacity = 16;
    while (capacity < (uint64_t)groups * 2) capacity *= 2;
    index->runs = calloc(capacity, sizeof *index->runs);
    index->mask = capacity - 1;
    if (!index->runs) {
        free(entries);
        return false;
    }
    for (int lo = 0, hi; lo < count; lo = hi) {
        for (hi = lo + 1; hi < count && entries[hi].pred == entries[lo].pred &&
                          entries[hi].arg == entries[lo].arg;
             hi++) {
        }
        uint64_t key = sk_kb_key(entries[lo].pred, entries[lo].arg, 0), slot = sk_mix64(key) & index->mask;
        while (index->runs[slot].key) slot = (slot + 1) & index->mask;
        index->runs[slot] = (sk_kb_run){.key = key, .lo = lo, .hi = hi};
    }
    free(entries);
    return true;
}

void sk_kb_pred_starts(const int32_t (*atoms)[3], int count, int num_preds, int32_t *starts) {
    memset(starts, 0, ((size_t)num_preds + 1) * sizeof *starts);
    for (int k = 0; k < count; k++) starts[atoms[k][0] + 1]++;
    for (int p = 0; p < num_preds; p++) starts[p + 1] += starts[p];
}

/* Where each predicate's facts start in by0 (grouped by pred first). */
static bool build_pred_start(sk_kb *kb, const int32_t (*facts)[3], int count) {
    kb->pred_start = malloc(((size_t)kb->num_preds + 1) * sizeof *kb->pred_start);
    if (!kb->pred_start) return false;
    sk_kb_pred_starts(facts, count, kb->num_preds, kb->pred_start);
    return true;
}

/* Corruption candidates of (pred, position): the constants whose type was seen
 * there in any split (untyped counts as one type). */
static bool build_candidates(sk_kb *kb) {
    int num_types = kb->types.count + 1, P = kb->num_preds, C = kb->num_consts;
    uint8_t *seen = calloc((size_t)P * 2 * (size_t)num_types, 1);
    kb->cand_start = calloc((size_t)P * 2 + 1, sizeof *kb->cand_start);
    if (!seen || !kb->cand_start) {
        free(seen);
        return false;
    }
    for (int s = 0; s < SK_KB_NUM_SPLITS; s++)
        for (int pass = 0; pass < 2; pass++) {
            const sk_kb_atoms *list = pass ? &kb->queries[s] : &kb->facts[s];
            for (int k = 0; k < list->count; k++)
                for (int pos = 0; pos < 2; pos++) {
                    int32_t c = list->atoms[k][1 + pos];
                    int32_t type = c < kb->const_type_cap ? kb->const_type[c] : 0;
                    seen[((size_t)list->atoms[k][0] * 2 + (size_t)pos) * (size_t)num_types +
                         (size_t)type] = 1;
                }
        }
    size_t total = 0;
    for (int slot = 0; slot < P * 2; slot++)
        for (int32_t c = 1; c <= C; c++) {
            int32_t type = c < kb->const_type_cap ? kb->const_type[c] : 0;
            total += seen[(size_t)slot * (size_t)num_types + (size_t)type];
        }
    kb->cand = malloc((total ? total : 1) * sizeof *kb->cand);
    if (!kb->cand) {
        free(seen);
        return false;
    }
    size_t at = 0;
    for (int slot = 0; slot < P * 2; slot++) {
        kb->cand_start[slot] = (int32_t)at;
        for (int32_t c = 1; c <= C; c++) {
            int32_t type = c < kb->const_type_cap ? kb->const_type[c] : 0;
            if (seen[(size_t)slot * (size_t)num_types + (size_t)type]) kb->cand[at++] = c;
        }
    }
    kb->cand_start[P * 2] = (int32_t)at;
    free(seen);
    return true;
}

sk_status sk_kb_finalize(sk_kb *kb) {
    SK_ASSERT(!kb->finalized);
    kb->num_preds = kb->preds.count;
    kb->num_consts = kb->consts.count - 1;
    if (kb->num_preds > SK_KB_MAX_PREDS)
        return sk_fail(SK_ERR_INVALID, "%d predicates: at most %d are supported", kb->num_preds,
                       SK_KB_MAX_PREDS);
    if (kb->num_consts + VARIABLE_HEADROOM > SK_KB_MAX_ARG)
        return sk_fail(SK_ERR_INVALID, "%d constants: at most %d are supported", kb->num_consts,
                       SK_KB_MAX_ARG - VARIABLE_HEADROOM);
    int64_t all = 0;
    for (int s = 0; s < SK_KB_NUM_SPLITS; s++) all += kb->facts[s].count;
    const sk_kb_atoms *train = &kb->facts[SK_KB_TRAIN];
    int32_t(*unique)[3] = malloc((size_t)(train->count ? train->count : 1) * sizeof *unique);
    if (!unique || !sk_kb_set_init(&kb->train_set, train->count) || !sk_kb_set_init(&kb->known_set, all)) {
        free(unique);
        return sk_fail(SK_ERR_NOMEM, "out of memory for the fact sets");
    }
    int num_unique = 0;
    for (int k = 0; k < train->count; k++) {
        const int32_t *a = train->atoms[k];
        if (sk_kb_set_insert(&kb->train_set, sk_kb_key(a[0], a[1], a[2])))
            memcpy(unique[num_unique++], a, sizeof unique[0]);
    }
    for (int s = 0; s < SK_KB_NUM_SPLITS; s++)
        for (int k = 0; k < kb->facts[s].count; k++) {
            const int32_t *a = kb->facts[s].atoms[k];
            sk_kb_set_insert(&kb->known_set, sk_kb_key(a[0], a[1], a[2]));
        }
    const int32_t(*facts)[3] = (const int32_t(*)[3])unique;
    bool ok = sk_kb_index_build(facts, num_unique, 0, &kb->by0) &&
              sk_kb_index_build(facts, num_unique, 1, &kb->by1) &&
              build_pred_start(kb, facts, num_unique);
    free(unique);
    if (!ok) return sk_fail(SK_ERR_NOMEM, "out of memory for the fact index");

    kb->rule_start = calloc((size_t)kb->num_preds + 1, sizeof *kb->rule_start);
    kb->rule_order = malloc((size_t)(kb->num_rules ? kb->num_rules : 1) * sizeof *kb->rule_order);
    if (!kb->rule_start || !kb->rule_order)
        return sk_fail(SK_ERR_NOMEM, "out of memory for the rule index");
    for (int r = 0; r < kb->num_rules; r++) kb->rule_start[kb->rules[r].head[0] + 1]++;
    for (int p = 0; p < kb->num_preds; p++) kb->rule_start[p + 1] += kb->rule_start[p];
    for (int p = 0, r = 0; p < kb->num_preds; p++)
        for (int k = 0; k < kb->num_rules; k++)
            if (kb->rules[k].head[0] == p) kb->rule_order[r++] = k;
    if (!build_candidates(kb)) return sk_fail(SK_ERR_NOMEM, "out of memory for corruptions");
    kb->finalized = true;
    return SK_OK;
}

/* ------------------------------------------------------------ loading */

/* Reads path into a NUL-terminated malloc'd buffer; NULL and SK_ERR_IO if it
 * cannot be read or is not a regular file (a FIFO in a dataset folder would
 * block the read forever), SK_ERR_CORRUPT if it is over the data-file limit. */
static char *read_text(const char *path, sk_status *status) {
    int fd;
    *status = sk_open_regular(path, SK_DATA_FILE_MAX_BYTES, "knowledge-base file", &fd, NULL);
    if (*status != SK_OK) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        *status = sk_fail(SK_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    while (text) {
        len += fread(text + len, 1, cap - len - 1, f);
        if (len < cap - 1) break;
        char *bigger = realloc(text, cap * 2);
        if (!bigger) {
            free(text);
            text = NULL;
            break;
        }
        text = bigger;
        cap *= 2;
    }
    bool failed = ferror(f) != 0;
    fclose(f);
    if (!text) {
        *status = sk_fail(SK_ERR_NOMEM, "out of memory reading '%s'", path);
        return NULL;
    }
    if (failed) {
        free(text);
        *status = sk_fail(SK_ERR_IO, "error reading '%s'", path);
        return NULL;
    }
    text[len] = '\0';
    if (memchr(text, '\0', len)) {
        free(text);
        *status = sk_fail(SK_ERR_CORRUPT, "%s: expected a text file (it holds NUL bytes)", path);
        return NULL;
    }
    *status = SK_OK;
    return text;
}

typedef enum file_kind { FILE_FACTS, FILE_DEPTHS, FILE_RULES, FILE_DOMAINS } file_kind;

static sk_status load_file(sk_kb *kb, const char *dir, const char *name, file_kind kind,
                           sk_kb_split split, bool required) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return sk_fail(SK_ERR_IO, "dataset path too long: '%s'", dir);
    if (!required && access(path, F_OK) != 0) return SK_OK;
    sk_status status;
    char *text = read_text(path, &status);
    if (!text) return status;
    switch (kind) {
    case FILE_FACTS: status = sk_kb_parse_facts(kb, split, text, path); break;
    case FILE_DEPTHS: status = sk_kb_parse_depths(kb, split, text, path); break;
    case FILE_RULES: status = sk_kb_parse_rules(kb, text, path); break;
    case FILE_DOMAINS: status = sk_kb_parse_domains(kb, text, path); break;
    }
    free(text);
    return status;
}

sk_status sk_kb_load(sk_kb **out, const char *dir) {
    *out = NULL;
    sk_kb *kb = sk_kb_new();
    if (!kb) return sk_fail(SK_ERR_NOMEM, "out of memory for a knowledge base");
    static const char *const split_names[] = {"train", "valid", "test"};
    sk_status status = SK_OK;
    for (int s = 0; s < SK_KB_NUM_SPLITS && status == SK_OK; s++) {
        char name[64];
        snprintf(name, sizeof name, "%s.txt", split_names[s]);
        status = load_file(kb, dir, name, FILE_FACTS, (sk_kb_split)s, s == SK_KB_TRAIN);
        snprintf(name, sizeof name, "%s_depths.txt", split_names[s]);
        if (status == SK_OK) status = load_file(kb, dir, name, FILE_DEPTHS, (sk_kb_split)s, false);
    }
    if (status == SK_OK) status = load_file(kb, dir, "rules.txt", FILE_RULES, SK_KB_TRAIN, true);
    if (status == SK_OK)
        status = load_file(kb, dir, "domain2constants.txt", FILE_DOMAINS, SK_KB_TRAIN, false);
    if (status == SK_OK) status = sk_kb_finalize(kb);
    if (status != SK_OK) {
        sk_kb_free(kb);
        return status;
    }
    *out = kb;
    return SK_OK;
}

void sk_kb_format_atom(const sk_kb *kb, const int32_t atom[3], char *buf, size_t size) {
    const char *pred = atom[0] >= 0 && atom[0] < kb->preds.count ? kb->preds.names[atom[0]] : "?";
    char args[2][64];
    for (int k = 0; k < 2; k++) {
        int32_t a = atom[1 + k];
        if (a > 0 && a < kb->consts.count)
            snprintf(args[k], sizeof args[k], "%s", kb->consts.names[a]);
        else if (a > kb->num_consts && kb->num_consts > 0)
            snprintf(args[k], sizeof args[k], "_V%d", a - kb->num_consts);
        else snprintf(args[k], sizeof args[k], "%d", a);
    }
    if (atom[0] > SK_KB_PAD && atom[0] < SK_KB_FIRST_PRED) snprintf(buf, size, "%s", pred);
    else snprintf(buf, size, "%s(%s,%s)", pred, args[0], args[1]);
}
