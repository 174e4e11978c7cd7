/*
 * A synthetic family-tree knowledge base, the default of Prover-v0 when no
 * dataset is given. A forest of families: each founding couple has 1..K
 * children, a child marries someone from outside the forest with some
 * probability and has children in turn, for a few generations.
 *
 * Base facts (all train, the evidence proofs use): father(x,y), mother(x,y)
 * (x is the father/mother of y), brother(x,y), sister(x,y) (x is a brother/
 * sister of y: same father and mother, x != y). Derived facts, computed from
 * the tree with exactly the definitions the rules state, are split into
 * train/valid/test; train's are facts too, and the queries of every split are
 * its derived facts, so each query is provable from the base facts alone.
 */
#include "kb.h"

#include "skinner.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

static const char g_rules[] =
    "parent_f:1:father(X,Y) -> parent(X,Y)\n"
    "parent_m:1:mother(X,Y) -> parent(X,Y)\n"
    "sibling_b:1:brother(X,Y) -> sibling(X,Y)\n"
    "sibling_s:1:sister(X,Y) -> sibling(X,Y)\n"
    "grandparent:1:parent(X,Y), parent(Y,Z) -> grandparent(X,Z)\n"
    "uncle:1:brother(X,Y), parent(Y,Z) -> uncle(X,Z)\n"
    "aunt:1:sister(X,Y), parent(Y,Z) -> aunt(X,Z)\n"
    "cousin:1:parent(Y,X), sibling(Y,W), parent(W,Z) -> cousin(X,Z)\n";

typedef struct person {
    bool male;
    int father, mother; /* -1 for founders and in-laws */
} person;

typedef struct forest {
    person *people;
    int count, cap;
} forest;

static int add_person(forest *f, bool male, int father, int mother) {
    if (f->count == f->cap) {
        int cap = f->cap ? f->cap * 2 : 256;
        person *p = realloc(f->people, (size_t)cap * sizeof *p);
        if (!p) return -1;
        f->people = p;
        f->cap = cap;
    }
    f->people[f->count] = (person){.male = male, .father = father, .mother = mother};
    return f->count++;
}

typedef struct couple {
    int husband, wife, generation;
} couple;

/* Grows the forest couple by couple, breadth first. */
static bool grow_forest(forest *f, uint64_t *rng, sk_kb_synth_params params) {
    int cap = params.families * 4, count = 0;
    couple *queue = malloc((size_t)cap * sizeof *queue);
    if (!queue) return false;
    for (int k = 0; k < params.families; k++) {
        int husband = add_person(f, true, -1, -1), wife = add_person(f, false, -1, -1);
        if (husband < 0 || wife < 0) goto oom;
        queue[count++] = (couple){husband, wife, 0};
    }
    for (int head = 0; head < count; head++) {
        couple c = queue[head];
        int children = 1 + (int)sk_rng_below(rng, (uint32_t)params.max_children);
        for (int k = 0; k < children; k++) {
            bool male = sk_rng_below(rng, 2) == 0;
            int child = add_person(f, male, c.husband, c.wife);
            if (child < 0) goto oom;
            if (c.generation + 1 >= params.generations || sk_rng_double(rng) >= params.marry_prob)
                continue;
            int spouse = add_person(f, !male, -1, -1);
            if (spouse < 0) goto oom;
            if (count == cap) {
                couple *q = realloc(queue, (size_t)cap * 2 * sizeof *q);
                if (!q) goto oom;
                queue = q;
                cap *= 2;
            }
            queue[count++] = male ? (couple){child, spouse, c.generation + 1}
                                  : (couple){spouse, child, c.generation + 1};
        }
    }
    free(queue);
    return true;
oom:
    free(queue);
    return false;
}

static bool siblings(const forest *f, int x, int y) {
    const person *a = &f->people[x], *b = &f->people[y];
    return x != y && a->father >= 0 && a->father == b->father && a->mother == b->mother;
}

typedef struct atom_list {
    int32_t (*atoms)[3];
    int count, cap;
} atom_list;

static bool push(atom_list *list, int32_t pred, int32_t arg0, int32_t arg1) {
    if (list->count == list->cap) {
        int cap = list->cap ? list->cap * 2 : 1024;
        int32_t(*a)[3] = realloc(list->atoms, (size_t)cap * sizeof *a);
        if (!a) return false;
        list->atoms = a;
        list->cap = cap;
    }
    list->atoms[list->count][0] = pred;
    list->atoms[list->count][1] = arg0;
    list->atoms[list->count][2] = arg1;
    list->count++;
    return true;
}

static int compare_atoms(const void *a, const void *b) {
    const int32_t *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

enum {
    FATHER, MOTHER, BROTHER, SISTER,                   /* base */
    PARENT, SIBLING, GRANDPARENT, UNCLE, AUNT, COUSIN, /* derived */
    NUM_PREDS
};
static const char *const g_pred_names[NUM_PREDS] = {
    "father", "mother", "brother", "sister", "parent",
    "sibling", "grandparent", "uncle", "aunt", "cousin"};

/* parents of person x: up to two */
static int parents_of(const forest *f, int x, int out[2]) {
    int n = 0;
    if (f->people[x].father >= 0) out[n++] = f->people[x].father;
    if (f->people[x].mother >= 0) out[n++] = f->people[x].mother;
    return n;
}

/* Base facts into `base`, derived facts into `derived`; person x is constant x + 1. */
static bool collect_facts(const forest *f, const int32_t *pred, atom_list *base,
                          atom_list *derived) {
    int n = f->count;
    for (int x = 0; x < n; x++) {
        const person *p = &f->people[x];
        int32_t cx = x + 1;
        if (p->father >= 0 && (!push(base, pred[FATHER], p->father + 1, cx) ||
                               !push(derived, pred[PARENT], p->father + 1, cx)))
            return false;
        if (p->mother >= 0 && (!push(base, pred[MOTHER], p->mother + 1, cx) ||
                               !push(derived, pred[PARENT], p->mother + 1, cx)))
            return false;
    }
    for (int x = 0; x < n; x++)
        for (int y = 0; y < n; y++) {
            if (!siblings(f, x, y)) continue;
            if (!push(base, pred[f->people[x].male ? BROTHER : SISTER], x + 1, y + 1) ||
                !push(derived, pred[SIBLING], x + 1, y + 1))
                return false;
        }
    for (int z = 0; z < n; z++) {
        int zp[2], nzp = parents_of(f, z, zp);
        for (int k = 0; k < nzp; k++) {
            int y = zp[k], yp[2], nyp = parents_of(f, y, yp);
            for (int j = 0; j < nyp; j++)
                if (!push(derived, pred[GRANDPARENT], yp[j] + 1, z + 1)) return false;
            for (int s = 0; s < n; s++) {
                if (!siblings(f, s, y)) continue;
                if (!push(derived, pred[f->people[s].male ? UNCLE : AUNT], s + 1, z + 1))
                    return false;
                /* cousin(z, c): a parent y of z, a sibling s of y, a parent s of c */
                for (int c = 0; c < n; c++)
                    if ((f->people[c].father == s || f->people[c].mother == s) &&
                        !push(derived, pred[COUSIN], z + 1, c + 1))
                        return false;
            }
        }
    }
    return true;
}

sk_status sk_kb_synthetic(sk_kb **out, uint64_t seed, sk_kb_synth_params params) {
    *out = NULL;
    if (params.families < 1 || params.generations < 1 || params.max_children < 1 ||
        params.valid_frac < 0 || params.test_frac < 0 || params.valid_frac + params.test_frac >= 1)
        return sk_fail(SK_ERR_INVALID, "bad synthetic family parameters");
    uint64_t rng = sk_rng_seed(seed, 0x5f4d11eULL);
    forest f = {0};
    atom_list base = {0}, derived = {0};
    sk_status status = SK_OK;
    sk_kb *kb = sk_kb_new();
    if (!kb || !grow_forest(&f, &rng, params)) {
        status = sk_fail(SK_ERR_NOMEM, "out of memory for a synthetic family forest");
        goto done;
    }
    int32_t pred[NUM_PREDS];
    for (int k = 0; k < NUM_PREDS; k++)
        if ((pred[k] = sk_kb_pred(kb, g_pred_names[k])) < 0) {
            status = SK_ERR_NOMEM;
            goto done;
        }
    for (int x = 0; x < f.count; x++) {
        char name[32];
        snprintf(name, sizeof name, "p%d", x);
        if (sk_kb_const(kb, name) != x + 1) {
            status = SK_ERR_NOMEM;
            goto done;
        }
    }
    if (!collect_facts(&f, pred, &base, &derived)) {
        status = sk_fail(SK_ERR_NOMEM, "out of memory for synthetic facts");
        goto done;
    }
    /* unique derived facts, shuffled, then split */
    qsort(derived.atoms, (size_t)derived.count, sizeof derived.atoms[0], compare_atoms);
    int unique = 0;
    for (int k = 0; k < derived.count; k++)
        if (unique == 0 || compare_atoms(derived.atoms[unique - 1], derived.atoms[k]) != 0)
            memcpy(derived.atoms[unique++], derived.atoms[k], sizeof derived.atoms[0]);
    for (int k = unique - 1; k > 0; k--) {
        int j = (int)sk_rng_below(&rng, (uint32_t)(k + 1));
        int32_t tmp[3];
        memcpy(tmp, derived.atoms[k], sizeof tmp);
        memcpy(derived.atoms[k], derived.atoms[j], sizeof tmp);
        memcpy(derived.atoms[j], tmp, sizeof tmp);
    }
    int num_test = (int)(params.test_frac * unique), num_valid = (int)(params.valid_frac * unique);
    for (int k = 0; k < base.count && status == SK_OK; k++)
        status = sk_kb_add_fact(kb, SK_KB_TRAIN, base.atoms[k][0], base.atoms[k][1],
                                base.atoms[k][2]);
    for (int k = 0; k < unique && status == SK_OK; k++) {
        sk_kb_split split = k < num_test               ? SK_KB_TEST
                            : k < num_test + num_valid ? SK_KB_VALID
                                                       : SK_KB_TRAIN;
        const int32_t *a = derived.atoms[k];
        status = sk_kb_add_query(kb, split, a[0], a[1], a[2], SK_KB_DEPTH_UNKNOWN);
        if (status == SK_OK) status = sk_kb_add_fact(kb, split, a[0], a[1], a[2]);
    }
    if (status == SK_OK) status = sk_kb_parse_rules(kb, g_rules, "<synthetic rules>");
    if (status == SK_OK) status = sk_kb_finalize(kb);
done:
    free(f.people);
    free(base.atoms);
    free(derived.atoms);
    if (status != SK_OK) {
        sk_kb_free(kb);
        return status;
    }
    *out = kb;
    return SK_OK;
}
