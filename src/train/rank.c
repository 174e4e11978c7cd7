/* Ranking evaluation of a Prover-v0 policy: see rank.h for the protocol. */
#include "rank.h"

#include "../core/core.h"
#include "../core/rng.h"
#include "../envs/prover/prover.h"
#include "../vec/pool.h"

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* OpenBLAS's own threads would compete with the workers, and at these sizes
 * (256 rows) gain nothing even alone: one thread, as the trainer sets it. */
extern void openblas_set_num_threads(int num_threads);

/* Candidates scored between two rankings: bounds the memory of a split with
 * many queries and many constants (family: ~5.6k queries x ~6k candidates)
 * while keeping the batch full, since a chunk's last few episodes are the
 * only ones that run beside idle slots. */
#define CHUNK_CANDIDATES 65536
#define LOG_PROVED 2 /* Prover-v0's episode_log: return, length, proved, positive */

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

/* ------------------------------------------------------------ arithmetic */

int sk_rank_corruptions(const sk_kb *kb, const int32_t query[3], int side, int32_t (*out)[3],
                        int cap) {
    SK_ASSERT(side == 0 || side == 1);
    SK_ASSERT(query[0] >= SK_KB_FIRST_PRED && query[0] < kb->num_preds);
    int32_t lo = kb->cand_start[query[0] * 2 + side], hi = kb->cand_start[query[0] * 2 + side + 1];
    int count = 0;
    for (int32_t k = lo; k < hi; k++) {
        int32_t c = kb->cand[k];
        if (c == query[1 + side]) continue;
        int32_t atom[3] = {query[0], query[1], query[2]};
        atom[1 + side] = c;
        if (sk_kb_is_known(kb, sk_kb_key(atom[0], atom[1], atom[2]))) continue;
        SK_ASSERT(count < cap);
        memcpy(out[count++], atom, sizeof atom);
    }
    return count;
}

int sk_rank_position(double true_score, const double *others, int count, uint64_t *rng) {
    int above = 0, ties = 0;
    for (int k = 0; k < count; k++) {
        above += others[k] > true_score;
        ties += others[k] == true_score;
    }
    int place = ties ? (int)sk_rng_below(rng, (uint32_t)ties + 1) : 0;
    return 1 + above + place;
}

void sk_rank_metrics_add(sk_rank_metrics *sum, int rank) {
    SK_ASSERT(rank >= 1);
    sum->mrr += 1.0 / rank;
    sum->hits1 += rank <= 1;
    sum->hits3 += rank <= 3;
    sum->hits10 += rank <= 10;
}

sk_rank_metrics sk_rank_mean(sk_rank_metrics sum, int count) {
    if (count <= 0) return (sk_rank_metrics){0};
    return (sk_rank_metrics){sum.mrr / count, sum.hits1 / count, sum.hits3 / count,
                             sum.hits10 / count};
}

/* ------------------------------------------------------------ candidates */

/* The corruptions of consecutive queries: for each, its head corruptions,
 * then its tail corruptions. */
typedef struct rank_chunk {
    int cap;                /* candidates */
    int count;              /* candidates used */
    int32_t (*atoms)[3];    /* (cap) */
    double *score;          /* (cap) */
    double *bound;          /* (cap) the score of the candidate's true query */
    int num_queries;        /* queries in the chunk */
    int first_query;        /* index of the first in the split */
    int *start;             /* (cap) each query's first corruption */
    int *num_head, *num_tail; /* (cap) its corruptions */
} rank_chunk;

/* The env slots and the I/O the policy and the env share. */
typedef struct rank_batch {
    int slots;
    void *state;
    sk_env_io io;
    float *obs, *final_obs, *rewards, *episode_log, *logp, *policy_obs;
    int32_t *actions;
    uint8_t *terminated, *truncated, *masks;
    int *job;          /* (slots) the candidate a slot proves, -1 if idle */
    double *logp_sum;  /* (slots) log-probability of the actions taken so far */
    sk_policy_work work;
} rank_batch;

static void chunk_free(rank_chunk *c) {
    free(c->atoms);
    free(c->score);
    free(c->bound);
    free(c->start);
    free(c->num_head);
    free(c->num_tail);
}

static sk_status chunk_alloc(rank_chunk *c, int cap) {
    memset(c, 0, sizeof *c);
    c->cap = cap;
    size_t n = (size_t)cap;
    c->atoms = malloc(n * sizeof *c->atoms);
    c->score = malloc(n * sizeof *c->score);
    c->bound = malloc(n * sizeof *c->bound);
    c->start = malloc(n * sizeof *c->start);
    c->num_head = malloc(n * sizeof *c->num_head);
    c->num_tail = malloc(n * sizeof *c->num_tail);
    if (!c->atoms || !c->score || !c->bound || !c->start || !c->num_head || !c->num_tail) {
        chunk_free(c);
        return sk_fail(SK_ERR_NOMEM, "out of memory for %d ranking candidates", cap);
    }
    return SK_OK;
}

/* Room a query of pred needs at most: every candidate constant on the ranked
 * sides (at least 1, so that a chunk always takes a query). */
static int room_for(const sk_kb *kb, int32_t pred, int sides) {
    const int32_t *s = kb->cand_start + pred * 2;
    return 1 + (sides & SK_PROVER_CORRUPT_HEAD ? s[1] - s[0] : 0) +
           (sides & SK_PROVER_CORRUPT_TAIL ? s[2] - s[1] : 0);
}

/* Appends the corruptions of a query on the ranked sides, each bounded by the
 * query's score; the caller made room_for it. */
static void chunk_add(rank_chunk *c, const sk_kb *kb, const int32_t query[3], double score,
                      int sides) {
    int q = c->num_queries++, at = c->count;
    c->start[q] = at;
    int room = c->cap - at;
    c->num_head[q] = sides & SK_PROVER_CORRUPT_HEAD
                         ? sk_rank_corruptions(kb, query, 0, c->atoms + at, room)
                         : 0;
    c->num_tail[q] = sides & SK_PROVER_CORRUPT_TAIL
                         ? sk_rank_corruptions(kb, query, 1, c->atoms + at + c->num_head[q],
                                               room - c->num_head[q])
                         : 0;
    c->count = at + c->num_head[q] + c->num_tail[q];
    for (int k = at; k < c->count; k++) c->bound[k] = score;
}

/* ------------------------------------------------------------ the batch */

static void batch_free(rank_batch *b, const sk_env_def *env) {
    if (b->state) env->destroy(b->state);
    void *all[] = {b->obs,     b->final_obs,  b->rewards,    b->episode_log, b->logp,
                   b->actions, b->terminated, b->truncated, b->masks,       b->policy_obs};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) sk_free(all[k]);
    free(b->job);
    free(b->logp_sum);
    sk_policy_work_free(&b->work);
    memset(b, 0, sizeof *b);
}

static sk_status batch_alloc(rank_batch *b, const sk_loaded_policy *lp, int slots, uint64_t seed) {
    memset(b, 0, sizeof *b);
    SK_ASSERT(lp->env->num_log_fields == SK_PROVER_NUM_LOG_FIELDS && slots >= 1);
    const sk_env_def *env = lp->env;
    size_t n = (size_t)slots, obs = n * (size_t)env->obs_size;
    b->slots = slots;
    b->obs = sk_alloc(obs * sizeof(float));
    b->final_obs = sk_alloc(obs * sizeof(float));
    b->policy_obs = lp->obs_map.size ? sk_alloc(obs * sizeof(float)) : NULL;
    b->rewards = sk_alloc(n * sizeof(float));
    b->episode_log = sk_alloc(n * (size_t)env->num_log_fields * sizeof(float));
    b->logp = sk_alloc(n * sizeof(float));
    b->actions = sk_alloc(n * (size_t)env->action_space.num_heads * sizeof(int32_t));
    b->terminated = sk_alloc(n);
    b->truncated = sk_alloc(n);
    b->masks = sk_alloc(n * (size_t)env->mask_size);
    b->job = malloc(n * sizeof *b->job);
    b->logp_sum = malloc(n * sizeof *b->logp_sum);
    if (!b->obs || !b->final_obs || (lp->obs_map.size && !b->policy_obs) || !b->rewards ||
        !b->episode_log || !b->logp || !b->actions || !b->terminated || !b->truncated ||
        !b->masks || !b->job || !b->logp_sum) {
        batch_free(b, env);
        return sk_fail(SK_ERR_NOMEM, "out of memory for %d ranking slots", slots);
    }
    sk_status status = sk_policy_work_alloc(&b->work, &lp->policy, slots);
    if (status == SK_OK) status = env->create(&b->state, slots, lp->cfg);
    if (status != SK_OK) {
        batch_free(b, env);
        return status;
    }
    b->io = (sk_env_io){
        .obs = b->obs, .final_obs = b->final_obs, .actions = b->actions,
        .rewards = b->rewards, .terminated = b->terminated, .truncated = b->truncated,
        .masks = b->masks, .episode_log = b->episode_log,
    };
    /* every slot gets a valid observation and mask, so the policy may run on
     * slots that sit idle between two busy ones */
    env->reset(b->state, &b->io, 0, slots, seed);
    for (int i = 0; i < slots; i++) b->job[i] = -1;
    return SK_OK;
}

/* The candidates one run of score_candidates proves. Workers claim them one
 * at a time through next, so a worker whose proofs are short takes more.
 *
 * A candidate with a bound only has to be told apart from a score of bound:
 * a proof's log-probability only falls as it goes on (every step adds the
 * log of a probability, <= 0 also in float: the greedy action's logit minus
 * a log-sum-exp that includes it), so once the running sum is below the
 * bound the candidate will score below it, and its proof stops there with
 * the score SK_RANK_FAILED, which is below it too. A corruption ranks the
 * same either way; when the true query failed (bound -infinity) nothing is
 * cut. */
typedef struct rank_jobs {
    const int32_t (*atoms)[3]; /* (count) */
    const uint8_t *positive;   /* (count) NULL: all negatives */
    const double *bound;       /* (count) NULL: no bounds */
    double *score;             /* (count) written, each by the worker that claimed it */
    int count;
    atomic_int next;           /* the first unclaimed */
} rank_jobs;

static int claim(rank_jobs *jobs) {
    int job = atomic_fetch_add_explicit(&jobs->next, 1, memory_order_relaxed);
    return job < jobs->count ? job : -1;
}

static void start_candidate(rank_batch *b, const rank_jobs *jobs, int slot, int job) {
    b->job[slot] = job;
    b->logp_sum[slot] = 0.0;
    sk_prover_set_query(b->state, &b->io, slot, jobs->atoms[job],
                        jobs->positive && jobs->positive[job]);
}

/* Proves every candidate with greedy actions and scores it. */
static void score_candidates(rank_batch *b, const sk_loaded_policy *lp, rank_jobs *jobs) {
    const sk_env_def *env = lp->env;
    int log_fields = env->num_log_fields, obs_size = env->obs_size;
    int busy = 0;
    for (int i = 0, job; i < b->slots && (job = claim(jobs)) >= 0; i++, busy++)
        start_candidate(b, jobs, i, job);
    uint64_t unused_rng = 0; /* greedy actions draw nothing */
    while (busy > 0) {
        int rows = b->slots;
        while (b->job[rows - 1] < 0) rows--;
        const float *obs = b->obs;
        if (lp->obs_map.size) {
            memcpy(b->policy_obs, b->obs, (size_t)rows * (size_t)obs_size * sizeof(float));
            for (int i = 0; i < rows; i++)
                sk_norm_apply(&lp->obs_map, b->policy_obs + (size_t)i * (size_t)obs_size);
            obs = b->policy_obs;
        }
        sk_policy_forward(&lp->policy, SK_NET_ACTOR, lp->params, obs, rows, &b->work);
        sk_policy_sample(&lp->policy, lp->params, b->work.out[SK_NET_ACTOR], b->masks, rows,
                         &unused_rng, true, b->actions, NULL, b->logp);
        /* step the runs of busy slots; an idle slot keeps its state */
        for (int lo = 0; lo < rows;) {
            int hi = lo;
            while (hi < rows && b->job[hi] >= 0) hi++;
            if (hi > lo) env->step(b->state, &b->io, lo, hi);
            lo = hi + 1;
        }
        for (int i = 0; i < rows; i++) {
            if (b->job[i] < 0) continue;
            b->logp_sum[i] += b->logp[i];
            bool below = jobs->bound && b->logp_sum[i] < jobs->bound[b->job[i]];
            if (!b->terminated[i] && !b->truncated[i] && !below) continue;
            bool proved = !below && b->terminated[i] &&
                          b->episode_log[(size_t)i * (size_t)log_fields + LOG_PROVED] > 0.5f;
            jobs->score[b->job[i]] = proved ? b->logp_sum[i] : SK_RANK_FAILED;
            int job = claim(jobs);
            if (job >= 0) {
                start_candidate(b, jobs, i, job);
            } else {
                b->job[i] = -1;
                busy--;
            }
        }
    }
}

/* Worker threads, each with its own batch of env slots. */
typedef struct rank_workers {
    sk_pool *pool;
    int count;
    rank_batch *batches; /* (count) */
    const sk_loaded_policy *lp;
    rank_jobs *jobs;     /* what the current sk_pool_run scores */
} rank_workers;

static void workers_free(rank_workers *w) {
    for (int k = 0; w->batches && k < w->count; k++) batch_free(&w->batches[k], w->lp->env);
    free(w->batches);
    if (w->pool) sk_pool_destroy(w->pool);
    memset(w, 0, sizeof *w);
}

/* threads 0: one per core. Each worker's env instance loads the dataset. */
static sk_status workers_alloc(rank_workers *w, const sk_loaded_policy *lp, int threads,
                               int slots, uint64_t seed) {
    memset(w, 0, sizeof *w);
    w->lp = lp;
    if (lp->env != &sk_env_prover)
        return sk_fail(SK_ERR_INVALID, "ranking evaluation needs a Prover-v0 policy, not %s",
                       lp->env->id);
    if (threads < 0 || slots < 0)
        return sk_fail(SK_ERR_INVALID, "threads = %d, batch = %d (expected >= 0; 0: default)",
                       threads, slots);
    int count = threads ? threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    count = count < 1 ? 1 : count;
    w->batches = calloc((size_t)count, sizeof *w->batches);
    if (!w->batches) return sk_fail(SK_ERR_NOMEM, "out of memory for %d ranking workers", count);
    sk_status status = SK_OK;
    for (int k = 0; k < count && status == SK_OK; k++, w->count++)
        status = batch_alloc(&w->batches[k], lp, slots ? slots : SK_RANK_DEFAULT_BATCH,
                             sk_rng_seed(seed, (uint64_t)k));
    if (status == SK_OK) status = sk_pool_create(&w->pool, count);
    if (status != SK_OK) {
        workers_free(w);
        return status;
    }
    openblas_set_num_threads(1);
    return SK_OK;
}

static void score_job(void *ctx, int worker, int num_workers) {
    (void)num_workers;
    rank_workers *w = ctx;
    score_candidates(&w->batches[worker], w->lp, w->jobs);
}

/* Scores every job on all workers. */
static void workers_score(rank_workers *w, rank_jobs *jobs) {
    atomic_store(&jobs->next, 0);
    w->jobs = jobs;
    sk_pool_run(w->pool, score_job, w);
    w->jobs = NULL;
}

/* Ranks the chunk's queries (scored query_score) into the running sums of
 * the ranked sides. */
static void rank_chunk_queries(const rank_chunk *c, const double *query_score, uint64_t seed,
                               int sides, sk_rank_metrics *head, sk_rank_metrics *tail) {
    for (int q = 0; q < c->num_queries; q++) {
        const double *score = c->score + c->start[q];
        double truth = query_score[c->first_query + q];
        /* one stream per query: the draws do not depend on how queries were chunked */
        uint64_t rng = sk_rng_seed(seed, (uint64_t)(c->first_query + q));
        if (sides & SK_PROVER_CORRUPT_HEAD)
            sk_rank_metrics_add(head, sk_rank_position(truth, score, c->num_head[q], &rng));
        if (sides & SK_PROVER_CORRUPT_TAIL)
            sk_rank_metrics_add(tail, sk_rank_position(truth, score + c->num_head[q],
                                                       c->num_tail[q], &rng));
    }
}

/* ------------------------------------------------------------ entry points */

sk_status sk_rank_policy(const sk_loaded_policy *lp, const sk_rank_options *options,
                         sk_rank_result *out) {
    memset(out, 0, sizeof *out);
    if ((int)options->split < 0 || (int)options->split >= SK_KB_NUM_SPLITS ||
        options->max_queries < 0)
        return sk_fail(SK_ERR_INVALID, "split %d, max_queries %d (expected a split, and >= 0)",
                       (int)options->split, options->max_queries);
    double started = sk_now();
    rank_workers w;
    sk_status status = workers_alloc(&w, lp, options->threads, options->batch, options->seed);
    if (status != SK_OK) return status;
    const sk_prover_state *env = w.batches[0].state;
    const sk_kb *kb = env->kb;
    int sides = options->sides ? options->sides : env->corrupt_sides;
    if (sides < SK_PROVER_CORRUPT_HEAD || sides > SK_PROVER_CORRUPT_BOTH) {
        workers_free(&w);
        return sk_fail(SK_ERR_INVALID, "sides = %d (expected 0 for env.corrupt, or 1..3)",
                       sides);
    }
    const sk_kb_atoms *queries = &kb->queries[options->split];
    int total = queries->count;
    if (options->max_queries && options->max_queries < total) total = options->max_queries;
    if (total == 0) {
        workers_free(&w);
        return sk_fail(SK_ERR_INVALID, "the %s split has no queries to rank",
                       g_split_names[options->split]);
    }
    int cap = CHUNK_CANDIDATES;
    for (int32_t pred = SK_KB_FIRST_PRED; pred < kb->num_preds; pred++)
        cap = SK_MAX(cap, room_for(kb, pred, sides));
    rank_chunk c;
    double *query_score = malloc((size_t)total * sizeof *query_score);
    uint8_t *positive = malloc((size_t)total);
    if (!query_score || !positive || (status = chunk_alloc(&c, cap)) != SK_OK) {
        free(query_score);
        free(positive);
        workers_free(&w);
        return query_score && positive ? status
                                       : sk_fail(SK_ERR_NOMEM, "out of memory for %d queries",
                                                 total);
    }
    /* the true queries first (as positives), so that their scores bound
     * their corruptions' proofs */
    memset(positive, 1, (size_t)total);
    rank_jobs truths = {.atoms = (const int32_t(*)[3])queries->atoms, .positive = positive,
                        .score = query_score, .count = total};
    workers_score(&w, &truths);
    int proved = 0;
    for (int q = 0; q < total; q++) proved += query_score[q] != SK_RANK_FAILED;
    out->candidates = total;
    sk_rank_metrics head = {0}, tail = {0};
    for (int q = 0; q < total;) {
        c.count = c.num_queries = 0;
        c.first_query = q;
        while (q < total && c.count + room_for(kb, queries->atoms[q][0], sides) <= c.cap) {
            chunk_add(&c, kb, queries->atoms[q], query_score[q], sides);
            q++;
        }
        rank_jobs jobs = {.atoms = (const int32_t(*)[3])c.atoms, .bound = c.bound,
                          .score = c.score, .count = c.count};
        workers_score(&w, &jobs);
        rank_chunk_queries(&c, query_score, options->seed, sides, &head, &tail);
        out->candidates += c.count;
        for (int k = 0; k < c.num_queries; k++) {
            out->head_corruptions += c.num_head[k];
            out->tail_corruptions += c.num_tail[k];
        }
        if (options->progress) options->progress(q, total, options->progress_user);
    }
    out->queries = total;
    out->sides = sides;
    if (sides & SK_PROVER_CORRUPT_HEAD) out->head = sk_rank_mean(head, total);
    if (sides & SK_PROVER_CORRUPT_TAIL) out->tail = sk_rank_mean(tail, total);
    /* the mean over the ranked sides: the sums of one side, or of both over 2 * total */
    sk_rank_metrics both = {head.mrr + tail.mrr, head.hits1 + tail.hits1,
                            head.hits3 + tail.hits3, head.hits10 + tail.hits10};
    out->overall = sk_rank_mean(both, sides == SK_PROVER_CORRUPT_BOTH ? 2 * total : total);
    out->proved_rate = (double)proved / total;
    out->seconds = sk_now() - started;
    free(query_score);
    free(positive);
    chunk_free(&c);
    workers_free(&w);
    return SK_OK;
}

sk_status sk_rank_score(const sk_loaded_policy *lp, const int32_t (*atoms)[3],
                        const uint8_t *positive, int count, int threads, int batch,
                        double *scores) {
    if (count < 0) return sk_fail(SK_ERR_INVALID, "count = %d (expected >= 0)", count);
    rank_workers w;
    sk_status status = workers_alloc(&w, lp, threads, batch, 0);
    if (status != SK_OK) return status;
    rank_jobs jobs = {.atoms = atoms, .positive = positive, .score = scores, .count = count};
    workers_score(&w, &jobs);
    workers_free(&w);
    return SK_OK;
}

sk_status sk_rank_evaluate(const char *checkpoint, const char *split, int max_queries,
                           uint64_t seed, sk_rank_result *out) {
    memset(out, 0, sizeof *out);
    sk_rank_options options = {.split = SK_KB_TEST, .max_queries = max_queries, .seed = seed};
    if (split && !sk_rank_split_parse(split, &options.split))
        return sk_fail(SK_ERR_INVALID, "split '%s' (expected train, valid or test)", split);
    if (max_queries < 0)
        return sk_fail(SK_ERR_INVALID, "max_queries = %d (expected 0 for all, or more)",
                       max_queries);
    sk_loaded_policy lp;
    sk_status status = sk_policy_load(&lp, checkpoint, sk_env_prover.id);
    if (status != SK_OK) return status;
    status = sk_rank_policy(&lp, &options, out);
    sk_loaded_policy_free(&lp);
    return status;
}
