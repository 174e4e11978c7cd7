/* Settings derived from a knowledge base's statistics (issue 38 ask 2), for
 * `skinner prover run` when no preset is given: see derive.h. */
#include "derive.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of values[0..count), sorted in place; 0 if empty. */
static int quantile(int *values, int count, double q) {
    if (count == 0) return 0;
    qsort(values, (size_t)count, sizeof *values, compare_int);
    int at = (int)floor(q * (count - 1) + 0.5);
    return values[at];
}

static int64_t clamp64(int64_t value, int64_t low, int64_t high) {
    return value < low ? low : value > high ? high : value;
}

/* value rounded to the nearest multiple of step (at least step). */
static int64_t round_to(double value, int64_t step) {
    int64_t rounded = (int64_t)floor(value / (double)step + 0.5) * step;
    return rounded < step ? step : rounded;
}

sk_status sk_prover_settings_derive(const sk_kb *kb, sk_prover_derived *out) {
    memset(out, 0, sizeof *out);
    sk_prover_kb_stats *st = &out->stats;
    st->constants = kb->num_consts;
    st->predicates = kb->num_preds - SK_KB_FIRST_PRED;
    st->train_facts = kb->facts[SK_KB_TRAIN].count;
    st->rules = kb->num_rules;
    for (int r = 0; r < kb->num_rules; r++)
        st->max_body = SK_MAX(st->max_body, kb->rules[r].body_len);
    /* recorded depths of the train queries: the provable ones (depth >= 1) */
    const sk_kb_atoms *train = &kb->queries[SK_KB_TRAIN];
    int *depths = malloc((size_t)(train->count > 0 ? train->count : 1) * sizeof *depths);
    if (!depths) return sk_fail(SK_ERR_NOMEM, "out of memory for %d queries", train->count);
    for (int q = 0; q < train->count; q++) {
        int32_t depth = train->depths ? train->depths[q] : SK_KB_DEPTH_UNKNOWN;
        if (depth >= 1) {
            depths[st->provable_queries++] = depth;
            st->max_depth = SK_MAX(st->max_depth, depth);
            st->deep_queries += depth >= 2;
        }
    }
    st->depths_recorded = st->provable_queries > 0;
    st->median_depth = quantile(depths, st->provable_queries, 0.5);
    free(depths);
    /* facts per (predicate, first argument): what one free variable meets */
    int runs = 0, cap = (int)SK_MIN(kb->by0.mask + 1, (uint64_t)1 << 30);
    int *fanout = malloc((size_t)cap * sizeof *fanout);
    if (!fanout) return sk_fail(SK_ERR_NOMEM, "out of memory for the fact index's runs");
    for (uint64_t k = 0; k <= kb->by0.mask; k++)
        if (kb->by0.runs[k].key) fanout[runs++] = kb->by0.runs[k].hi - kb->by0.runs[k].lo;
    st->fanout_p90 = quantile(fanout, runs, 0.9);
    free(fanout);
    for (int32_t pred = SK_KB_FIRST_PRED; pred < kb->num_preds; pred++) {
        st->max_rules_per_head =
            SK_MAX(st->max_rules_per_head, kb->rule_start[pred + 1] - kb->rule_start[pred]);
        int tails = kb->cand_start[pred * 2 + 2] - kb->cand_start[pred * 2 + 1];
        /* the predicates queried in test: the largest tail type among them */
        bool queried = false;
        const sk_kb_atoms *test = &kb->queries[SK_KB_TEST];
        for (int q = 0; q < test->count && !queried; q++) queried = test->atoms[q][0] == pred;
        if (queried) st->max_tail_candidates = SK_MAX(st->max_tail_candidates, tails);
    }

    /* the env: room for a proof of median recorded depth through the longest body (each
     * step adds body - 1 goals), never below Prover-v0's default of 10 (max 16) */
    int depth = st->depths_recorded ? st->median_depth : 2;
    out->max_atoms = (int)clamp64(1 + (int64_t)(SK_MAX(st->max_body, 1) - 1) * depth, 10, 16);
    /* a goal of one free variable meets fanout_p90 facts (90% of them fewer) and its
     * predicate's rules, max_rules_per_head at most: room for both, within 20 (the
     * default, which S = 64 did not beat on family) .. 64 */
    out->max_successors =
        (int)clamp64((int64_t)st->fanout_p90 + st->max_rules_per_head, 20, 64);
    /* five steps a recorded depth, within 12 .. 20 (the default) */
    out->max_depth = st->depths_recorded ? (int)clamp64(5 * (int64_t)st->max_depth, 12, 20) : 20;
    out->embed = st->constants > 100000 ? 64 : 32;
    /* the tail only when queries' tails are a small class (Countries' 5 regions) */
    out->corrupt_tail = st->max_tail_candidates > 0 && st->max_tail_candidates <= 16;
    /* 700 steps a deep (depth >= 2) train query, in millions, within 1M .. 10M; without
     * depths, a tenth of the train facts stand for them */
    int64_t deep = st->depths_recorded ? st->deep_queries : st->train_facts / 10;
    out->total_steps = clamp64(round_to(700.0 * (double)deep, 1000000), 1000000, 10000000);
    /* the KGE: 8M floats of entities (a dimension of 200 for WN18RR's 41k, 500 at most),
     * and epochs so that each entity is seen about 120 times over the run */
    out->kge_dim = (int)clamp64(round_to(8e6 / SK_MAX(st->constants, 1), 50), 100, 500);
    double facts_per_entity = (double)st->train_facts / SK_MAX(st->constants, 1);
    out->kge_epochs = (int)clamp64(round_to(120.0 / SK_MAX(facts_per_entity, 0.1), 10), 20, 100);
    /* sparse graphs (under 4 train facts an entity, WN18RR's 2.1) take WN18RR's training,
     * dense ones (family's 6.7) family's: docs/prover.md has the measurements */
    out->kge_sparse = facts_per_entity < 4.0;
    return SK_OK;
}

sk_status sk_prover_derived_write(const sk_prover_derived *d, const char *dataset,
                                  const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return sk_fail(SK_ERR_IO, "cannot write the derived settings '%s'", path);
    const sk_prover_kb_stats *st = &d->stats;
    fprintf(f,
            "; skinner prover run: settings derived from the knowledge base's statistics\n"
            "; (modules/prover/derive.h): %d constants, %d predicates, %d train facts,\n"
            "; %d rules (bodies of up to %d atoms, up to %d rules a head), train queries of\n"
            "; recorded depth 1+: %d (median %d, max %d, depth 2+: %d), facts per (predicate,\n"
            "; first argument) p90: %d, tail candidates of the test predicates: %d\n",
            st->constants, st->predicates, st->train_facts, st->rules, st->max_body,
            st->max_rules_per_head, st->provable_queries, st->median_depth, st->max_depth,
            st->deep_queries, st->fanout_p90, st->max_tail_candidates);
    fprintf(f,
            "[env]\ndataset = %s\ncorrupt = %s\nmax_atoms = %d\nmax_successors = %d\n"
            "max_depth = %d\nnum_envs = 128\nnegative_ratio = 0\nreward_type = 0\n\n"
            "[ppo]\nhorizon = 32\nnorm_obs = false\nnorm_reward = false\n\n"
            "[policy]\ntype = candidates\nembed = %d\n\n[train]\ntotal_steps = %lld\n",
            dataset, d->corrupt_tail ? "tail" : "both", d->max_atoms, d->max_successors,
            d->max_depth, d->embed, (long long)d->total_steps);
    bool written = !ferror(f);
    if (fclose(f) != 0 || !written)
        return sk_fail(SK_ERR_IO, "cannot write the derived settings '%s'", path);
    return SK_OK;
}

sk_status sk_prover_derived_write_kge(const sk_prover_derived *d, const char *dataset,
                                      const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return sk_fail(SK_ERR_IO, "cannot write the derived KGE settings '%s'", path);
    fprintf(f,
            "; skinner prover run: the KGE's settings derived from the knowledge base\n"
            "; (modules/prover/derive.h): %d constants, %d train facts (%.2f an entity)\n",
            d->stats.constants, d->stats.train_facts,
            (double)d->stats.train_facts / SK_MAX(d->stats.constants, 1));
    fprintf(f,
            "[kge]\ndataset = %s\nmodel = rotate\ndim = %d\nepochs = %d\ngamma = %d\n"
            "batch_size = 512\nnegatives = 256\nlr = %s\n",
            dataset, d->kge_dim, d->kge_epochs, d->kge_sparse ? 4 : 6,
            d->kge_sparse ? "0.005" : "0.003");
    if (d->kge_sparse) fprintf(f, "lr_schedule = cosine\nadversarial_temperature = 0.5\n");
    bool written = !ferror(f);
    if (fclose(f) != 0 || !written)
        return sk_fail(SK_ERR_IO, "cannot write the derived KGE settings '%s'", path);
    return SK_OK;
}
