/*
 * The knowledge base behind Prover-v0: interned names, facts indexed for
 * constant-time lookup, rules with variables, constant types and the query
 * sets of each split. Binary predicates only, as in DeepProofLog's datasets.
 *
 * Indices. Predicates: 0 is padding, 1..3 are the reserved terminal atoms
 * True, False and End, data predicates follow from SK_KB_FIRST_PRED.
 * Constants: 0 is padding, 1..num_consts are constants; a prover numbers its
 * variables after them (num_consts + 1, ...), so one int32 holds any argument.
 *
 * Building. A kb is filled by sk_kb_load (a dataset folder), by
 * sk_kb_synthetic (a random family forest), or by hand for tests: sk_kb_new,
 * sk_kb_parse_* / sk_kb_add_fact, then sk_kb_finalize, which builds the
 * indexes. After finalize the kb is read-only and may be shared by threads.
 */
#ifndef SK_PROVER_KB_H
#define SK_PROVER_KB_H

#include "skinner.h"


#include <stdbool.h>
#include <stdint.h>

enum {
    SK_KB_PAD = 0,
    SK_KB_TRUE = 1,  /* the proved state */
    SK_KB_FALSE = 2, /* the failed state */
    SK_KB_END = 3,   /* the optional end-proof action */
    SK_KB_FIRST_PRED = 4,
};

typedef enum sk_kb_split { SK_KB_TRAIN, SK_KB_VALID, SK_KB_TEST, SK_KB_NUM_SPLITS } sk_kb_split;

#define SK_KB_MAX_BODY 8       /* atoms in a rule body */
#define SK_KB_MAX_RULE_VARS 16 /* distinct variables in one rule */
/* Packed atom keys hold an argument in 24 bits and a predicate in 16. */
#define SK_KB_MAX_ARG ((1 << 24) - 1)
#define SK_KB_MAX_PREDS (1 << 15)
/* A query's depth when its split has no *_depths.txt. */
#define SK_KB_DEPTH_UNKNOWN (-2)

/* A rule: head :- body. Its arguments are rule-local variables 0..num_vars-1
 * (every argument in rules.txt is a variable, as in DeepProofLog's files). */
typedef struct sk_kb_rule {
    int32_t head[3];                     /* pred, var, var */
    int32_t body[SK_KB_MAX_BODY][3];     /* (body_len) pred, var, var */
    int body_len;
    int num_vars;
    double weight;
} sk_kb_rule;

/* Name <-> id, open addressing over ids. */
typedef struct sk_kb_names {
    char **names; /* (count) names[id] */
    int count, cap;
    int32_t *slots; /* (mask + 1) id + 1, 0 = empty */
    uint32_t mask;
} sk_kb_names;

/* A set of ground atoms by packed key, open addressing; key 0 never occurs
 * because predicates of data atoms are >= SK_KB_FIRST_PRED. A one-hash Bloom
 * filter of 16 bits per atom (6% false positives, no false negatives) sits in
 * front: small enough to stay in cache, it answers most misses without
 * touching the table (the prover's successors test many atoms that are not
 * facts). */
typedef struct sk_kb_atom_set {
    uint64_t *keys; /* (mask + 1) */
    uint64_t mask;
    uint64_t *filter;    /* (filter_mask / 64 + 1) bits */
    uint64_t filter_mask; /* bits - 1 */
} sk_kb_atom_set;

/* The train facts with one argument bound, pred(arg, *) or pred(*, arg): a
 * hash table from (pred, arg) to the run [lo, hi) of its facts in the pairs
 * array, which holds the facts grouped by (pred, arg) in file order. One
 * entry per distinct pair, at most twice as many slots: O(facts) memory
 * whatever the number of constants (a dense table of preds x constants was
 * 2.3 MB on WN18RR for 87k facts, and grows with a kb's constants). */
typedef struct sk_kb_run {
    uint64_t key; /* sk_kb_key(pred, arg, 0); 0: a free slot */
    int32_t lo, hi;
} sk_kb_run;

typedef struct sk_kb_fact_index {
    sk_kb_run *runs; /* (mask + 1) */
    uint64_t mask;
    int32_t (*pairs)[2]; /* (train facts) (arg0, arg1) grouped by (pred, arg) */
} sk_kb_fact_index;

typedef struct sk_kb_atoms {
    int32_t (*atoms)[3]; /* (count) */
    int32_t *depths;     /* (count) for queries: recorded depth, -1 unprovable, or unknown */
    int count, cap;
} sk_kb_atoms;

typedef struct sk_kb {
    sk_kb_names preds, consts, types, rule_names;
    sk_kb_atoms facts[SK_KB_NUM_SPLITS];   /* facts of each split as read */
    sk_kb_atoms queries[SK_KB_NUM_SPLITS]; /* from *_depths.txt when present, else the facts */
    bool explicit_queries[SK_KB_NUM_SPLITS]; /* queries were given apart from the facts */
    sk_kb_rule *rules; /* (num_rules) in file order */
    int num_rules, rules_cap;
    int32_t *const_type; /* (consts.count) type id + 1, 0 = untyped */
    int const_type_cap;
    bool finalized;

    /* Built by sk_kb_finalize. */
    int num_preds, num_consts;  /* predicate ids < num_preds; constants 1..num_consts */
    sk_kb_atom_set train_set;   /* the facts proofs may use: train */
    sk_kb_atom_set known_set;   /* every true fact (train, valid, test): filters corruptions */
    sk_kb_fact_index by0;       /* train facts by (pred, arg0) */
    sk_kb_fact_index by1;       /* by (pred, arg1) */
    int32_t *pred_start;        /* (num_preds + 1) into by0.pairs: every fact of pred */
    int32_t *rule_start;        /* (num_preds + 1) into rule_order */
    int32_t *rule_order;        /* (num_rules) rule ids grouped by head predicate */
    int32_t *cand_start;        /* (num_preds * 2 + 1) into cand: corruption candidates */
    int32_t *cand;              /* constants of the types seen at (pred, position) */
} sk_kb;

/* Parameters of the synthetic family forest. */
typedef struct sk_kb_synth_params {
    int families;        /* founding couples */
    int generations;     /* below the founders */
    int max_children;    /* per couple, uniform in 1..max_children */
    double marry_prob;   /* a child marries someone from outside and has children */
    double valid_frac, test_frac; /* of the derived facts; the rest are train */
} sk_kb_synth_params;

#define SK_KB_SYNTH_DEFAULTS                                                                       \
    ((sk_kb_synth_params){.families = 24, .generations = 3, .max_children = 4,                    \
                          .marry_prob = 0.7, .valid_frac = 0.1, .test_frac = 0.1})

/* An empty kb with the reserved predicates interned; NULL if out of memory. */
sk_kb *sk_kb_new(void);
void sk_kb_free(sk_kb *kb);

/* Interns a name; the id, or -1 if out of memory (a message is set). */
int32_t sk_kb_pred(sk_kb *kb, const char *name);
int32_t sk_kb_const(sk_kb *kb, const char *name);
/* The id of a name, or -1 if it was never interned. */
int32_t sk_kb_find_pred(const sk_kb *kb, const char *name);
int32_t sk_kb_find_const(const sk_kb *kb, const char *name);

/* Adds a fact to split, and to its queries unless they were given apart. */
sk_status sk_kb_add_fact(sk_kb *kb, sk_kb_split split, int32_t pred, int32_t arg0, int32_t arg1);
/* Adds a query to split with its recorded depth (-1 unprovable, or
 * SK_KB_DEPTH_UNKNOWN). The first one replaces the queries taken from facts. */
sk_status sk_kb_add_query(sk_kb *kb, sk_kb_split split, int32_t pred, int32_t arg0, int32_t arg1,
                          int32_t depth);
/* Adds a rule; SK_ERR_INVALID if its shape is out of bounds. */
sk_status sk_kb_add_rule(sk_kb *kb, const sk_kb_rule *rule);
/* Gives constant c the type named type_name. */
sk_status sk_kb_set_type(sk_kb *kb, int32_t c, const char *type_name);

/*
 * Parsers of DeepProofLog's text formats. text is the whole file; file names it
 * in messages, which read "FILE:LINE: expected ..." (SK_ERR_CORRUPT).
 *   facts:   `pred(a,b).` per line
 *   rules:   `name:weight:body(X,Y), body(Y,Z) -> head(X,Z)` per line
 *   depths:  `pred(a,b) DEPTH` per line, DEPTH -1 for unprovable
 *   domains: `type c1 c2 ...` per line
 * Blank lines and lines starting with '%' or '#' are skipped.
 */
sk_status sk_kb_parse_facts(sk_kb *kb, sk_kb_split split, const char *text, const char *file);
sk_status sk_kb_parse_rules(sk_kb *kb, const char *text, const char *file);
sk_status sk_kb_parse_depths(sk_kb *kb, sk_kb_split split, const char *text, const char *file);
sk_status sk_kb_parse_domains(sk_kb *kb, const char *text, const char *file);

/* Builds the indexes; SK_ERR_INVALID if the kb exceeds the packed limits. */
sk_status sk_kb_finalize(sk_kb *kb);

/*
 * Loads dir/{train,valid,test}.txt, rules.txt, domain2constants.txt and
 * {train,valid,test}_depths.txt and finalizes. train.txt and rules.txt are
 * required (SK_ERR_IO naming the path); the others are optional.
 */
sk_status sk_kb_load(sk_kb **out, const char *dir);

/* A synthetic family forest (see synth.c), finalized. */
sk_status sk_kb_synthetic(sk_kb **out, uint64_t seed, sk_kb_synth_params params);

/* Writes "pred(a,b)" into buf (arguments past num_consts print as _V<k>). */
void sk_kb_format_atom(const sk_kb *kb, const int32_t atom[3], char *buf, size_t size);

/* The atom set and the index of finalize, for other sets of atoms (the least
 * model). set_init sizes a set for count atoms (false: out of memory; free it
 * anyway); set_insert is false if key was there already. index_build groups
 * count unique atoms by (pred, arg at pos), their order kept within a group. */
bool sk_kb_set_init(sk_kb_atom_set *set, int64_t count);
bool sk_kb_set_insert(sk_kb_atom_set *set, uint64_t key);
void sk_kb_set_free(sk_kb_atom_set *set);
bool sk_kb_index_build(const int32_t (*atoms)[3], int count, int pos, sk_kb_fact_index *index);
void sk_kb_index_free(sk_kb_fact_index *index);
/* starts (num_preds + 1): where each predicate's atoms begin once grouped by
 * predicate, as index_build's pairs are. */
void sk_kb_pred_starts(const int32_t (*atoms)[3], int count, int num_preds, int32_t *starts);

/*
 * The least model: every ground atom the rules derive from the train facts,
 * by forward chaining to a fixed point (semi-naive: each round joins a rule
 * with at least one atom derived in the round before). A proof of Prover-v0,
 * whatever its actions, resolves against train facts and rules only, so it
 * proves only atoms of the model: an atom outside it, or a state with a
 * ground goal outside it, can never be proved. Ranking uses this to settle
 * such candidates without running the policy (the ranks are the same).
 *
 * Datalog has no function symbols, so the model is finite (at most preds x
 * constants^2 atoms), but it can be large: past max_atoms the build stops and
 * the model is left incomplete (complete false, nothing to test against). A
 * rule with a head variable its body does not bind derives atoms for every
 * constant; the model is then not built either.
 */
typedef struct sk_kb_model {
    sk_kb_atom_set set; /* the atoms, when complete */
    int64_t count;      /* atoms derived (train facts included) */
    int rounds;         /* rounds to the fixed point */
    bool complete;      /* false: not built (over max_atoms, or a rule it cannot run) */
} sk_kb_model;

/* SK_ERR_NOMEM if memory runs out; SK_OK otherwise, complete or not. */
sk_status sk_kb_model_build(const sk_kb *kb, int64_t max_atoms, sk_kb_model *out);
void sk_kb_model_free(sk_kb_model *model);

/* ------------------------------------------------------------ lookups */

static inline uint64_t sk_kb_key(int32_t pred, int32_t arg0, int32_t arg1) {
    return ((uint64_t)(uint32_t)pred << 48) | ((uint64_t)(uint32_t)arg0 << 24) |
           (uint64_t)(uint32_t)arg1;
}

static inline bool sk_kb_set_has(const sk_kb_atom_set *set, uint64_t key) {
    uint64_t hash = sk_mix64(key), bit = (hash >> 32) & set->filter_mask;
    if (!(set->filter[bit >> 6] >> (bit & 63) & 1)) return false;
    uint64_t slot = hash & set->mask;
    for (;;) {
        uint64_t k = set->keys[slot];
        if (k == key) return true;
        if (k == 0) return false;
        slot = (slot + 1) & set->mask;
    }
}

/* Whether the ground atom is a train fact (usable in proofs). */
static inline bool sk_kb_is_fact(const sk_kb *kb, uint64_t key) {
    return sk_kb_set_has(&kb->train_set, key);
}

/* Whether the ground atom is true in any split. */
static inline bool sk_kb_is_known(const sk_kb *kb, uint64_t key) {
    return sk_kb_set_has(&kb->known_set, key);
}

/* Whether an atom may be provable: in the model, or the model is incomplete. */
static inline bool sk_kb_model_allows(const sk_kb_model *model, uint64_t key) {
    return !model->complete || sk_kb_set_has(&model->set, key);
}

/* Whether a list of goals (terms >= first_var are variables) has a ground
 * goal outside the model: no proof goes on from there. */
static inline bool sk_kb_model_rules_out(const sk_kb_model *model, const int32_t *goals,
                                         int num_goals, int32_t first_var) {
    for (int g = 0; g < num_goals; g++) {
        const int32_t *a = goals + 3 * g;
        if (a[1] < first_var && a[2] < first_var &&
            !sk_kb_model_allows(model, sk_kb_key(a[0], a[1], a[2])))
            return true;
    }
    return false;
}

/* The facts of index whose (pred, arg) is given, in [*begin, *end). */
static inline void sk_kb_index_find(const sk_kb_fact_index *index, int32_t pred, int32_t arg,
                                    const int32_t (**begin)[2], const int32_t (**end)[2]) {
    uint64_t key = sk_kb_key(pred, arg, 0);
    for (uint64_t slot = sk_mix64(key) & index->mask;; slot = (slot + 1) & index->mask) {
        const sk_kb_run *run = &index->runs[slot];
        if (run->key == key || run->key == 0) {
            /* a free slot: no fact, an empty run */
            *begin = (const int32_t(*)[2])(index->pairs + (run->key ? run->lo : 0));
            *end = (const int32_t(*)[2])(index->pairs + (run->key ? run->hi : 0));
            return;
        }
    }
}

/* Train facts pred(arg0, *): (arg0, arg1) pairs in [*begin, *end), in file order. */
static inline void sk_kb_by_arg0(const sk_kb *kb, int32_t pred, int32_t arg0,
                                 const int32_t (**begin)[2], const int32_t (**end)[2]) {
    sk_kb_index_find(&kb->by0, pred, arg0, begin, end);
}

/* Train facts pred(*, arg1). */
static inline void sk_kb_by_arg1(const sk_kb *kb, int32_t pred, int32_t arg1,
                                 const int32_t (**begin)[2], const int32_t (**end)[2]) {
    sk_kb_index_find(&kb->by1, pred, arg1, begin, end);
}

/* All train facts of pred, grouped by arg0. */
static inline void sk_kb_by_pred(const sk_kb *kb, int32_t pred, const int32_t (**begin)[2],
                                 const int32_t (**end)[2]) {
    *begin = (const int32_t(*)[2])(kb->by0.pairs + kb->pred_start[pred]);
    *end = (const int32_t(*)[2])(kb->by0.pairs + kb->pred_start[pred + 1]);
}

#endif
