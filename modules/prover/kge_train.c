/* KGE training (batches over worker threads, AdamW on touched rows) and ranking. */
#include "kge_train.h"

#include "skinner.h"

#include <stdio.h>
#include "skinner/safetensors.h"
#include "prover.h"
#include "skinner/pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct kge_worker {
    float *grads; /* (num_params) this worker's part of a batch's gradient */
    float *work;
    double loss;
} kge_worker;

struct sk_kge_trainer {
    sk_kge *kge;
    sk_kge_train_config config;
    int32_t (*train)[3]; /* (num_train) entity and relation indices */
    int num_train;
    float *adam_m, *adam_v; /* (num_params) */
    int64_t step;
    uint64_t rng;
    sk_pool *pool;
    int num_workers;
    kge_worker *workers;
    int32_t *negatives;      /* (config.negatives) */
    /* rows a batch touched: entity rows 0..E-1, relation rows E..E+R-1 */
    uint8_t *touched;
    int32_t *touched_rows;
    int num_touched;
    /* the dispatched batch */
    const int32_t (*batch)[3];
    int batch_count;
    sk_kge_side side;
    int num_negatives;
    const int32_t *batch_negatives;
};

static size_t row_offset(const sk_kge *kge, int32_t row, int *width) {
    if (row < kge->num_entities) {
        *width = kge->entity_width;
        return (size_t)row * (size_t)kge->entity_width;
    }
    *width = kge->relation_width;
    return (size_t)kge->num_entities * (size_t)kge->entity_width +
           (size_t)(row - kge->num_entities) * (size_t)kge->relation_width;
}

static void touch(sk_kge_trainer *tr, int32_t row) {
    if (tr->touched[row]) return;
    tr->touched[row] = 1;
    tr->touched_rows[tr->num_touched++] = row;
}

sk_status sk_kge_trainer_create(sk_kge_trainer **out, sk_kge *kge, const sk_kb *kb,
                                const sk_kge_train_config *config) {
    *out = NULL;
    if (config->batch_size < 1 || config->negatives < 1)
        return sk_fail(SK_ERR_INVALID, "KGE batch_size %d, negatives %d (expected at least 1 each)",
                       config->batch_size, config->negatives);
    const sk_kb_atoms *facts = &kb->facts[SK_KB_TRAIN];
    if (facts->count == 0) return sk_fail(SK_ERR_INVALID, "the knowledge base has no train facts");
    sk_kge_trainer *tr = calloc(1, sizeof *tr);
    if (!tr) return sk_fail(SK_ERR_NOMEM, "out of memory");
    tr->kge = kge;
    tr->config = *config;
    tr->num_train = facts->count;
    tr->rng = sk_rng_seed(config->seed, 0x6b67652d74ULL);
    int threads = config->threads > 0 ? config->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    tr->num_workers = SK_MAX(1, SK_MIN(threads, config->batch_size));
    size_t rows = (size_t)kge->num_entities + (size_t)kge->num_relations;
    size_t P = kge->num_params;
    tr->train = malloc((size_t)tr->num_train * sizeof *tr->train);
    tr->adam_m = sk_alloc(P * sizeof(float));
    tr->adam_v = sk_alloc(P * sizeof(float));
    tr->workers = calloc((size_t)tr->num_workers, sizeof *tr->workers);
    tr->negatives = malloc((size_t)config->negatives * sizeof *tr->negatives);
    tr->touched = calloc(rows, 1);
    tr->touched_rows = malloc(rows * sizeof *tr->touched_rows);
    sk_status status = tr->train && tr->adam_m && tr->adam_v && tr->workers && tr->negatives &&
                               tr->touched && tr->touched_rows
                           ? sk_pool_create(&tr->pool, tr->num_workers)
                           : sk_fail(SK_ERR_NOMEM, "out of memory for KGE training");
    for (int w = 0; w < tr->num_workers && status == SK_OK; w++) {
        kge_worker *wk = &tr->workers[w];
        wk->grads = sk_alloc(P * sizeof(float));
        wk->work = sk_alloc(sk_kge_batch_work_size(kge, config->negatives) * sizeof(float));
        if (!wk->grads || !wk->work) status = sk_fail(SK_ERR_NOMEM, "out of memory for KGE workers");
        else memset(wk->grads, 0, P * sizeof(float));
    }
    if (status != SK_OK) {
        sk_kge_trainer_destroy(tr);
        return status;
    }
    memset(tr->adam_m, 0, P * sizeof(float));
    memset(tr->adam_v, 0, P * sizeof(float));
    for (int i = 0; i < tr->num_train; i++) {
        tr->train[i][0] = sk_kge_entity_of(facts->atoms[i][1]);
        tr->train[i][1] = sk_kge_relation_of(facts->atoms[i][0]);
        tr->train[i][2] = sk_kge_entity_of(facts->atoms[i][2]);
    }
    *out = tr;
    return SK_OK;
}

void sk_kge_trainer_destroy(sk_kge_trainer *tr) {
    if (!tr) return;
    for (int w = 0; tr->workers && w < tr->num_workers; w++) {
        sk_free(tr->workers[w].grads);
        sk_free(tr->workers[w].work);
    }
    if (tr->pool) sk_pool_destroy(tr->pool);
    free(tr->workers);
    free(tr->train);
    sk_free(tr->adam_m);
    sk_free(tr->adam_v);
    free(tr->negatives);
    free(tr->touched);
    free(tr->touched_rows);
    free(tr);
}

int64_t sk_kge_trainer_steps(const sk_kge_trainer *tr) { return tr->step; }

static void batch_job(void *ctx, int w, int num_workers) {
    sk_kge_trainer *tr = ctx;
    int lo, hi;
    sk_slice(tr->batch_count, w, num_workers, &lo, &hi);
    kge_worker *wk = &tr->workers[w];
    wk->loss = hi > lo ? sk_kge_part_loss_grad(tr->kge, tr->batch + lo, hi - lo,
                                               1.0 / tr->batch_count, tr->side,
                                               tr->batch_negatives, tr->num_negatives,
                                               tr->config.adversarial_temperature, wk->grads,
                                               wk->work)
                       : 0.0;
}

double sk_kge_learning_rate(const sk_kge_train_config *config, int64_t step) {
    int64_t T = config->lr_decay_steps;
    if (T <= 0) return config->learning_rate;
    double f = step < T ? (double)step / (double)T : 1.0;
    return config->learning_rate * 0.5 * (1.0 + cos(M_PI * f));
}

/* AdamW's constants of one update, the same for every row it touches. */
typedef struct adam_update {
    float lr, c1, c2, eps, decay; /* c1, c2: the bias corrections 1 - beta^t */
} adam_update;

static adam_update adam_update_at(const sk_kge_trainer *tr) {
    double t = (double)tr->step;
    float lr = (float)sk_kge_learning_rate(&tr->config, tr->step);
    return (adam_update){.lr = lr,
                         .c1 = (float)(1.0 - pow(0.9, t)),
                         .c2 = (float)(1.0 - pow(0.999, t)),
                         .eps = (float)tr->config.adam_eps,
                         .decay = 1.0f - lr * (float)tr->config.weight_decay};
}

/* AdamW on one row: g is its summed gradient. */
static void adam_row(const adam_update *u, float *p, float *m, float *v, const float *g,
                     int width) {
    for (int j = 0; j < width; j++) {
        m[j] = 0.9f * m[j] + 0.1f * g[j];
        v[j] = 0.999f * v[j] + 0.001f * g[j] * g[j];
        p[j] = p[j] * u->decay - u->lr * (m[j] / u->c1) / (sqrtf(v[j] / u->c2) + u->eps);
    }
}

double sk_kge_train_step(sk_kge_trainer *tr, const int32_t (*triples)[3], int batch,
                         sk_kge_side side, const int32_t *negatives, int num_negatives) {
    sk_kge *kge = tr->kge;
    int E = kge->num_entities;
    SK_ASSERT(num_negatives <= tr->config.negatives); /* the workers' work was sized for those */
    tr->batch = triples;
    tr->batch_count = batch;
    tr->side = side;
    tr->batch_negatives = negatives;
    tr->num_negatives = num_negatives;
    sk_pool_run(tr->pool, batch_job, tr);
    /* the rows the batch touched, in a fixed order */
    tr->num_touched = 0;
    for (int b = 0; b < batch; b++) {
        touch(tr, triples[b][0]);
        touch(tr, triples[b][2]);
        touch(tr, E + triples[b][1]);
    }
    for (int k = 0; k < num_negatives; k++) touch(tr, negatives[k]);
    tr->step++;
    double loss = 0.0;
    for (int w = 0; w < tr->num_workers; w++) loss += tr->workers[w].loss;
    adam_update update = adam_update_at(tr);
    for (int i = 0; i < tr->num_touched; i++) {
        int32_t row = tr->touched_rows[i];
        int width;
        size_t at = row_offset(kge, row, &width);
        float *sum = tr->workers[0].grads + at; /* w0 + w1 + ... in worker order */
        for (int w = 1; w < tr->num_workers; w++) {
            float *part = tr->workers[w].grads + at;
            for (int j = 0; j < width; j++) sum[j] += part[j];
            memset(part, 0, (size_t)width * sizeof(float));
        }
        adam_row(&update, kge->params + at, tr->adam_m + at, tr->adam_v + at, sum, width);
        memset(sum, 0, (size_t)width * sizeof(float));
        tr->touched[row] = 0;
    }
    return loss;
}

double sk_kge_train_epoch(sk_kge_trainer *tr) {
    int n = tr->num_train, B = tr->config.batch_size, N = tr->config.negatives;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)sk_rng_below(&tr->rng, (uint32_t)(i + 1));
        int32_t tmp[3];
        memcpy(tmp, tr->train[i], sizeof tmp);
        memcpy(tr->train[i], tr->train[j], sizeof tmp);
        memcpy(tr->train[j], tmp, sizeof tmp);
    }
    double sum = 0.0;
    int batches = 0;
    for (int start = 0; start < n; start += B, batches++) {
        int count = SK_MIN(B, n - start);
        for (int k = 0; k < N; k++)
            tr->negatives[k] = (int32_t)sk_rng_below(&tr->rng, (uint32_t)tr->kge->num_entities);
        sk_kge_side side = (tr->step & 1) ? SK_KGE_HEAD : SK_KGE_TAIL;
        sum += sk_kge_train_step(tr, (const int32_t(*)[3])(tr->train + start), count, side,
                                 tr->negatives, N);
    }
    return sum / batches;
}

/* ------------------------------------------------------------ resume */

sk_status sk_kge_trainer_save(const sk_kge_trainer *tr, const char *path, const char *dataset,
                              int epochs_done, const sk_config *cfg) {
    const sk_kge *kge = tr->kge;
    int64_t counters[2] = {epochs_done, tr->step};
    uint64_t rng = tr->rng;
    sk_st_tensor state[] = {
        {.name = "state.adam_m", .ndim = 1, .shape = {(int64_t)kge->num_params},
         .data = tr->adam_m, .dtype = SK_ST_F32},
        {.name = "state.adam_v", .ndim = 1, .shape = {(int64_t)kge->num_params},
         .data = tr->adam_v, .dtype = SK_ST_F32},
        {.name = "state.counters", .ndim = 1, .shape = {2}, .data = counters, .dtype = SK_ST_I64},
        {.name = "state.rng", .ndim = 1, .shape = {1}, .data = &rng, .dtype = SK_ST_U64},
        {.name = "state.order", .ndim = 2, .shape = {tr->num_train, 3}, .data = tr->train,
         .dtype = SK_ST_I32},
    };
    return sk_kge_save_with(kge, path, dataset, epochs_done, cfg, state,
                            (int)(sizeof state / sizeof state[0]));
}

/* Tensor name of file as dtype with count elements, or a message naming it. */
static sk_status state_tensor(const sk_st_file *file, const char *path, const char *name,
                              sk_st_dtype dtype, int64_t count, const sk_st_tensor **out) {
    const sk_st_tensor *t = sk_st_find(file, name);
    int64_t elements = 1;
    for (int d = 0; t && d < t->ndim; d++) elements *= t->shape[d];
    if (!t || t->dtype != dtype || elements != count)
        return sk_fail(SK_ERR_CORRUPT,
                       "'%s' has no tensor %s of %lld %s values (a model without training "
                       "state, or one of another dataset or size?)",
                       path, name, (long long)count, sk_st_dtype_name(dtype));
    *out = t;
    return SK_OK;
}

sk_status sk_kge_trainer_restore(sk_kge_trainer *tr, const char *path, int *epochs_done) {
    sk_kge *kge = tr->kge, saved;
    sk_status status = sk_kge_load(&saved, path, NULL, 0);
    if (status != SK_OK) return status;
    bool same = saved.model == kge->model && saved.dim == kge->dim &&
                saved.num_entities == kge->num_entities && saved.num_relations == kge->num_relations;
    if (same) memcpy(kge->params, saved.params, kge->num_params * sizeof(float));
    sk_kge_free(&saved);
    if (!same)
        return sk_fail(SK_ERR_INVALID, "'%s' is a model of another size, model or dataset", path);
    sk_st_file *file = NULL;
    status = sk_st_open(&file, path);
    if (status != SK_OK) return status;
    const sk_st_tensor *m = NULL, *v = NULL, *counters = NULL, *rng = NULL, *order = NULL;
    size_t P = kge->num_params;
    if ((status = state_tensor(file, path, "state.adam_m", SK_ST_F32, (int64_t)P, &m)) == SK_OK &&
        (status = state_tensor(file, path, "state.adam_v", SK_ST_F32, (int64_t)P, &v)) == SK_OK &&
        (status = state_tensor(file, path, "state.counters", SK_ST_I64, 2, &counters)) == SK_OK &&
        (status = state_tensor(file, path, "state.rng", SK_ST_U64, 1, &rng)) == SK_OK)
        status = state_tensor(file, path, "state.order", SK_ST_I32, (int64_t)tr->num_train * 3, &order);
    int64_t c[2] = {0, 0};
    if (status == SK_OK) {
        memcpy(c, counters->data, sizeof c);
        int64_t batches = sk_kge_batches_per_epoch(tr->num_train, tr->config.batch_size);
        if (!(c[0] >= 1 && c[0] <= 1000000 && c[1] == c[0] * batches))
            status = sk_fail(SK_ERR_CORRUPT,
                             "'%s': state.counters (%lld epochs, %lld steps) do not go together "
                             "(expected %lld steps an epoch at this batch size)",
                             path, (long long)c[0], (long long)c[1], (long long)batches);
    }
    if (status == SK_OK) {
        memcpy(tr->adam_m, m->data, P * sizeof(float));
        memcpy(tr->adam_v, v->data, P * sizeof(float));
        for (size_t k = 0; k < P && status == SK_OK; k++)
            if (!isfinite(tr->adam_m[k]) || !(tr->adam_v[k] >= 0.0f && tr->adam_v[k] < INFINITY))
                status = sk_fail(SK_ERR_CORRUPT, "'%s': Adam's moments hold an invalid value at %zu",
                                 path, k);
    }
    if (status == SK_OK) {
        int32_t (*saved_order)[3] = malloc((size_t)tr->num_train * sizeof *saved_order);
        if (!saved_order) status = sk_fail(SK_ERR_NOMEM, "out of memory");
        else memcpy(saved_order, order->data, (size_t)tr->num_train * sizeof *saved_order);
        for (int i = 0; status == SK_OK && i < tr->num_train; i++)
            if (saved_order[i][0] < 0 || saved_order[i][0] >= kge->num_entities ||
                saved_order[i][2] < 0 || saved_order[i][2] >= kge->num_entities ||
                saved_order[i][1] < 0 || saved_order[i][1] >= kge->num_relations)
                status = sk_fail(SK_ERR_CORRUPT, "'%s': state.order[%d] is not a triple of the model",
                                 path, i);
        if (status == SK_OK) memcpy(tr->train, saved_order, (size_t)tr->num_train * sizeof *saved_order);
        free(saved_order);
    }
    if (status == SK_OK) {
        memcpy(&tr->rng, rng->data, sizeof tr->rng);
        tr->step = c[1];
        *epochs_done = (int)c[0];
    }
    sk_st_close(file);
    return status;
}

/* ------------------------------------------------------------ ranking */

typedef struct rank_job {
    const sk_kge *kge;
    const sk_kb *kb;
    const sk_kge_rank_options *options;
    const sk_kb_atoms *queries;
    int total;
    double *records; /* (total, 2): the position against head corruptions, tail corruptions */
    sk_status status;
} rank_job;

enum { RANK_CAP_MIN = 16 };

static void rank_worker(void *ctx, int w, int num_workers) {
    rank_job *job = ctx;
    const sk_kge *kge = job->kge;
    const sk_kb *kb = job->kb;
    int lo, hi;
    sk_slice(job->total, w, num_workers, &lo, &hi);
    int cap = kb->num_consts + RANK_CAP_MIN;
    int32_t(*corrupt)[3] = malloc((size_t)cap * sizeof *corrupt);
    double *scores = malloc((size_t)cap * sizeof *scores);
    float *q = malloc((size_t)kge->entity_width * sizeof *q);
    if (!corrupt || !scores || !q) {
        job->status = SK_ERR_NOMEM;
        free(corrupt), free(scores), free(q);
        return;
    }
    for (int i = lo; i < hi; i++) {
        const int32_t *atom = job->queries->atoms[i];
        int h = sk_kge_entity_of(atom[1]), r = sk_kge_relation_of(atom[0]), t = sk_kge_entity_of(atom[2]);
        /* the streams and samples of Prover-v0's ranking (rank.h): its KGE-only
         * figures and these rank the same candidates */
        uint64_t rng = sk_rng_seed(job->options->seed, (uint64_t)i);
        uint64_t sampling = sk_rank_sample_stream(job->options->seed, i);
        for (int side = 0; side < 2; side++) { /* 0: heads corrupted, 1: tails */
            int flag = side == 0 ? SK_PROVER_CORRUPT_HEAD : SK_PROVER_CORRUPT_TAIL;
            if (!(job->options->sides & flag)) continue;
            int count = sk_rank_sample(corrupt, sk_rank_corruptions(kb, atom, side, corrupt, cap),
                                       job->options->negatives, &sampling);
            sk_kge_side kside = side == 0 ? SK_KGE_HEAD : SK_KGE_TAIL;
            sk_kge_query(kge, kside, sk_kge_entity(kge, side == 0 ? t : h), sk_kge_relation(kge, r), q);
            double truth = sk_kge_score_query(kge, q, sk_kge_entity(kge, side == 0 ? h : t));
            for (int k = 0; k < count; k++)
                scores[k] = sk_kge_score_query(kge, q, sk_kge_entity(kge, sk_kge_entity_of(corrupt[k][1 + side])));
            job->records[(size_t)i * 2 + (size_t)side] = sk_rank_position(truth, scores, count, &rng);
        }
    }
    free(corrupt), free(scores), free(q);
}

sk_status sk_kge_rank(const sk_kge *kge, const sk_kb *kb, const sk_kge_rank_options *options,
                      sk_rank_result *out) {
    memset(out, 0, sizeof *out);
    const sk_kb_atoms *queries = &kb->queries[options->split];
    int total = queries->count;
    if (options->max_queries > 0 && options->max_queries < total) total = options->max_queries;
    if (total == 0) return sk_fail(SK_ERR_INVALID, "the split has no queries to rank");
    if (kb->num_consts != kge->num_entities || kb->num_preds - SK_KB_FIRST_PRED != kge->num_relations)
        return sk_fail(SK_ERR_INVALID,
                       "the model has %d entities and %d relations; the knowledge base %d and %d",
                       kge->num_entities, kge->num_relations, kb->num_consts,
                       kb->num_preds - SK_KB_FIRST_PRED);
    double started = sk_now();
    rank_job job = {kge, kb, options, queries, total, calloc((size_t)total * 2, sizeof(double)), SK_OK};
    int threads = options->threads > 0 ? options->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    sk_pool *pool = NULL;
    sk_status status = job.records ? sk_pool_create(&pool, SK_MAX(1, SK_MIN(threads, total)))
                                   : sk_fail(SK_ERR_NOMEM, "out of memory");
    if (status == SK_OK) {
        sk_pool_run(pool, rank_worker, &job);
        sk_pool_destroy(pool);
        if (job.status != SK_OK) status = sk_fail(job.status, "out of memory ranking");
    }
    if (status == SK_OK) {
        sk_rank_metrics head = {0}, tail = {0};
        for (int i = 0; i < total; i++) { /* in query order */
            if (options->sides & SK_PROVER_CORRUPT_HEAD) sk_rank_metrics_add(&head, (int)job.records[2 * i]);
            if (options->sides & SK_PROVER_CORRUPT_TAIL) sk_rank_metrics_add(&tail, (int)job.records[2 * i + 1]);
        }
        out->queries = total;
        out->sides = options->sides;
        sk_rank_side_means(options->sides, total, head, tail, &out->head, &out->tail, &out->overall);
        out->seconds = sk_now() - started;
    }
    free(job.records);
    return status;
}
