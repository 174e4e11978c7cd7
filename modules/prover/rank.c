/* Ranking evaluation of a Prover-v0 policy: see rank.h for the protocol, and
 * rank_internal.h for the files it is in. This one drives a ranking: the
 * true queries first, then their corruptions chunk by chunk, into one record
 * per query, from which the figures are summed in query order. */
#include "rank_internal.h"

#include "skinner.h"

#include <stdio.h>
#include "kge.h"
#include "skinner/pool.h"

#include <stdlib.h>
#include <string.h>

/* Candidates scored between two rankings: bounds the memory of a split with
 * many queries and many constants (family: ~5.6k queries x ~6k candidates)
 * while keeping the batch full, since a chunk's last few episodes are the
 * only ones that run beside idle slots. */
#define CHUNK_CANDIDATES 65536

static const char *const g_split_names[] = {"train", "valid", "test"};

bool sk_rank_split_parse(const char *name, sk_kb_split *out) {
    for (int k = 0; k < SK_KB_NUM_SPLITS; k++)
        if (strcmp(name, g_split_names[k]) == 0) {
            *out = (sk_kb_split)k;
            return true;
        }
    return false;
}

const char *sk_rank_split_name(sk_kb_split split) {
    SK_ASSERT((int)split >= 0 && (int)split < SK_KB_NUM_SPLITS);
    return g_split_names[split];
}

sk_status sk_rank_run(const sk_env_def *env_def, const sk_config *env_cfg, const sk_actor *actor,
                      const sk_parallel *parallel, const sk_rank_options *options,
                      sk_rank_result *out) {
    memset(out, 0, sizeof *out);
    if ((int)options->split < 0 || (int)options->split >= SK_KB_NUM_SPLITS ||
        options->max_queries < 0)
        return sk_fail(SK_ERR_INVALID, "split %d, max_queries %d (expected a split, and >= 0)",
                       (int)options->split, options->max_queries);
    double started = sk_now();
    rank_workers w;
    sk_status status = sk_rank_workers_alloc(&w, env_def, env_cfg, actor, parallel, options->batch,
                                             options->branches,
                                             options->alternatives ? options->alternatives : 1,
                                             options->seed);
    if (status != SK_OK) return status;
    w.progress = options->progress;
    w.progress_user = options->progress_user;
    w.progress_at = started;
    rank_chunk c = {0};
    double *query_score = NULL, *records = NULL, *all = NULL;
    double *kge_scratch = NULL, *hyb_scratch = NULL; /* with a KGE model: (c.cap) */
    uint8_t *positive = NULL;
    double *grid_records = NULL; /* with options->grid: (total, grid_count, 2) */
    const sk_prover_state *env = sk_vec_state(w.vec);
    const sk_kb *kb = env->kb; /* the workers' envs': valid until sk_rank_workers_free */
    if (!options->unpruned) {
        status = sk_rank_workers_prune(&w, kb);
        if (status != SK_OK) goto done;
        out->model_atoms = w.model.count;
        out->model_used = w.model.complete;
    }
    int sides = options->sides ? options->sides : env->corrupt_sides;
    if (sides < SK_PROVER_CORRUPT_HEAD || sides > SK_PROVER_CORRUPT_BOTH) {
        status = sk_fail(SK_ERR_INVALID, "sides = %d (expected 0 for env.corrupt, or 1..3)",
                         sides);
        goto done;
    }
    const sk_kb_atoms *queries = &kb->queries[options->split];
    int total = queries->count;
    if (options->max_queries && options->max_queries < total) total = options->max_queries;
    if (total == 0) {
        status = sk_fail(SK_ERR_INVALID, "the %s split has no queries to rank",
                         g_split_names[options->split]);
        goto done;
    }
    if (options->kge && (options->kge->num_entities != kb->num_consts ||
                         options->kge->num_relations != kb->num_preds - SK_KB_FIRST_PRED)) {
        status = sk_fail(SK_ERR_INVALID,
                         "the KGE model has %d entities and %d relations, the dataset %d "
                         "constants and %d predicates (expected a model trained on the same "
                         "dataset)",
                         options->kge->num_entities, options->kge->num_relations, kb->num_consts,
                         kb->num_preds - SK_KB_FIRST_PRED);
        goto done;
    }
    /* a distributed ranking: this part ranks queries lo..hi-1 */
    int parts = parallel->num_parts > 1 ? parallel->num_parts : 1;
    if (options->grid_count > 0 && (!options->kge || !options->grid_out || parts > 1)) {
        status = sk_fail(SK_ERR_INVALID, "a grid of %d hybrids needs a KGE model, room for its "
                                         "figures and one part (got %d parts)",
                         options->grid_count, parts);
        goto done;
    }
    int part = parts > 1 ? parallel->part : 0;
    int lo, hi;
    sk_slice(total, part, parts, &lo, &hi);
    int cap = CHUNK_CANDIDATES;
    for (int32_t pred = SK_KB_FIRST_PRED; pred < kb->num_preds; pred++)
        cap = SK_MAX(cap, sk_rank_room_for(kb, pred, sides));
    query_score = malloc((size_t)total * sizeof *query_score);
    positive = malloc((size_t)total);
    records = calloc((size_t)total * RECORD, sizeof *records);
    all = malloc((size_t)total * RECORD * sizeof *all);
    if (options->kge) {
        kge_scratch = malloc((size_t)cap * sizeof *kge_scratch);
        hyb_scratch = malloc((size_t)cap * sizeof *hyb_scratch);
    }
    if (options->grid_count > 0)
        grid_records = calloc((size_t)total * (size_t)options->grid_count * 2, sizeof(double));
    if (!query_score || !positive || !records || !all ||
        (options->grid_count > 0 && !grid_records) ||
        (options->kge && (!kge_scratch || !hyb_scratch))) {
        status = sk_fail(SK_ERR_NOMEM, "out of memory for %d queries", total);
        goto done;
    }
    status = sk_rank_chunk_alloc(&c, cap);
    if (status != SK_OK) goto done;
    /* the true queries first (as positives), so that their scores bound
     * their corruptions' proofs */
    memset(positive, 1, (size_t)total);
    rank_jobs truths = {.atoms = (const int32_t(*)[3])queries->atoms + lo, .positive = positive,
                        .score = query_score + lo, .count = hi - lo};
    sk_rank_workers_score(&w, &truths);
    out->settled += truths.count - truths.started;
    out->steps += truths.steps;
    out->dead_states += truths.dead;
    for (int q = lo; q < hi;) {
        c.count = c.num_queries = 0;
        c.first_query = q;
        while (q < hi && c.count + sk_rank_room_for(kb, queries->atoms[q][0], sides) <= c.cap) {
            uint64_t sampling = sk_rank_sample_stream(options->seed, q);
            sk_rank_chunk_add(&c, kb, queries->atoms[q], query_score[q], sides, options->negatives,
                              &sampling);
            q++;
        }
        /* the bound stops a corruption's proof once it cannot beat the true query's:
         * the hybrid score needs every proof to its end */
        rank_jobs jobs = {.atoms = (const int32_t(*)[3])c.atoms,
                          .bound = options->kge ? NULL : c.bound,
                          .score = c.score, .count = c.count};
        sk_rank_workers_score(&w, &jobs);
        out->settled += jobs.count - jobs.started;
        out->steps += jobs.steps;
        out->dead_states += jobs.dead;
        sk_rank_chunk_queries(&c, query_score, (const int32_t(*)[3])queries->atoms, options, sides,
                              kge_scratch, hyb_scratch, records, grid_records);
        if (options->progress)
            options->progress(q - lo, hi - lo, "queries", options->progress_user);
    }
    sk_rank_gather_records(parallel, total, records, all);
    int64_t counters[3] = {out->steps, out->settled, out->dead_states};
    sk_rank_sum_over_parts(parallel, counters, 3);
    out->steps = counters[0];
    out->settled = counters[1];
    out->dead_states = counters[2];
    sk_rank_sum_records(all, total, sides, queries->depths, options->kge != NULL, out);
    if (options->grid_count > 0)
        sk_rank_sum_grid(grid_records, total, sides, options->grid_count, options->grid_out);
    out->seconds = sk_now() - started;
done:
    free(query_score);
    free(positive);
    free(records);
    free(all);
    free(kge_scratch);
    free(hyb_scratch);
    free(grid_records);
    sk_rank_chunk_free(&c);
    sk_rank_workers_free(&w);
    return status;
}
