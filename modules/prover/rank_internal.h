/*
 * The ranking's private parts, shared by its files (rank.h has the protocol):
 *
 *   rank.c             sk_rank_run: the true queries, then their corruptions
 *                      chunk by chunk, into per-query records and the figures
 *   rank_candidates.c  the filtered corruptions of a query, their sampling,
 *                      and the chunks that hold them
 *   rank_workers.c     the env slots the host's workers prove candidates in:
 *                      claiming, the least model's pruning, the bound
 *   rank_branch.c      the branch search that leaves a greedy proof once
 *   rank_score.c       ranks from scores: RL, KGE-only and hybrid; the means
 *   rank_gather.c      a distributed ranking's records and counters, gathered
 *   rank_eval.c        the ranking as Prover-v0's evaluation: eval.* options,
 *                      its metrics, text and JSON
 */
#ifndef SK_PROVER_RANK_INTERNAL_H
#define SK_PROVER_RANK_INTERNAL_H

#include "rank.h"

#include "skinner/vec.h"

#include <stdatomic.h>

/* ---- rank_candidates.c ---- */

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

void sk_rank_chunk_free(rank_chunk *c);
sk_status sk_rank_chunk_alloc(rank_chunk *c, int cap);
/* Room a query of pred needs at most: every candidate constant on the ranked
 * sides (at least 1, so that a chunk always takes a query). */
int sk_rank_room_for(const sk_kb *kb, int32_t pred, int sides);
/* Appends the corruptions of a query on the ranked sides (each side sampled
 * down to `negatives` from rng when > 0), each bounded by the query's score;
 * the caller made sk_rank_room_for it. */
void sk_rank_chunk_add(rank_chunk *c, const sk_kb *kb, const int32_t query[3], double score,
                       int sides, int negatives, uint64_t *rng);

/* ---- rank_workers.c ---- */

/* The candidates one run of sk_rank_workers_score proves. Workers claim them one
 * at a time through next, so a worker whose proofs are short takes more.
 *
 * A candidate with a bound only has to be told apart from a score of bound:
 * a proof's log-probability only falls as it goes on (every step adds the
 * log of a probability, <= 0 also in float: the greedy action's logit minus
 * a log-sum-exp that includes it), so once the running sum is below the
 * bound the candidate will score below it, and its proof stops there with
 * the score SK_RANK_FAILED, which is below it too. A corruption ranks the
 * same either way; when the true query failed (bound -infinity) nothing is
 * cut.
 *
 * With the kb's least model (rank_workers.model), a candidate outside it
 * cannot be proved by any actions: it scores SK_RANK_FAILED without a step,
 * and a proof that reaches a state with a ground goal outside it fails there.
 * These are the scores proving to the end would give. */
typedef struct rank_jobs {
    const int32_t (*atoms)[3]; /* (count) */
    const uint8_t *positive;   /* (count) NULL: all negatives */
    const double *bound;       /* (count) NULL: no bounds */
    double *score;             /* (count) written, each by the worker that claimed it */
    int count;
    atomic_int next;           /* the first unclaimed */
    /* added once per worker: proofs started (the rest the model settled),
     * policy steps taken, proofs stopped at a dead state */
    atomic_llong started, steps, dead;
} rank_jobs;

/* One sk_vec of num_workers x batch env slots: worker w proves in slots
 * [w * batch, (w + 1) * batch), acting through the host's actor. */
typedef struct rank_workers {
    sk_vec *vec;
    int num_workers, batch;
    const sk_actor *actor;
    const sk_parallel *parallel;
    sk_kb_model model; /* incomplete: prove every candidate to its end */
    int *job;         /* (slots) the candidate a slot proves, -1 if idle */
    double *logp_sum; /* (slots) log-probability of the actions taken so far */
    float *logp;      /* (slots) of the last action */
    /* the branch search (sk_rank_options.branches; NULL arrays when 0): a
     * slot's attempt (0 greedy, then branches, see rank_branch.c), the steps
     * of the attempt so far, the best proof found, the greedy path of
     * attempt 0 (max_steps entries a slot: actions, log-probabilities,
     * allowed actions) with its length, and the actions tried at the
     * current branch step (alternatives + 1 a slot) with their count and
     * total probability */
    int branches, alternatives, max_steps;
    int *attempt, *step, *path_len, *tried_count;
    double *best, *tried_mass;
    int32_t *path_action, *tried_action;
    float *path_logp;
    int32_t *path_allowed;
    rank_jobs *jobs;  /* what the current parallel run scores */
    /* progress within a batch of candidates (one query of a large knowledge
     * base can take minutes): worker 0 reports the candidates started */
    sk_progress_fn progress;
    void *progress_user;
    double progress_at;
} rank_workers;

sk_status sk_rank_workers_alloc(rank_workers *w, const sk_env_def *env, const sk_config *env_cfg,
                                const sk_actor *actor, const sk_parallel *parallel, int batch,
                                int branches, int alternatives, uint64_t seed);
void sk_rank_workers_free(rank_workers *w);
/* Builds the kb's least model into w->model (up to SK_RANK_MODEL_ATOMS_PER_FACT
 * atoms per train fact), which the workers then prune with when complete. */
sk_status sk_rank_workers_prune(rank_workers *w, const sk_kb *kb);
/* Scores every job on all workers. */
void sk_rank_workers_score(rank_workers *w, rank_jobs *jobs);

/* ---- rank_branch.c: the branch search (its rules there) ---- */

/* The branch search's part of starting attempt `attempt` in slot. */
void sk_rank_branch_start(rank_workers *w, int slot, int attempt);
/* Before the policy acts on slots first..last-1, and after. */
void sk_rank_branch_before_act(rank_workers *w, int first, int last);
void sk_rank_branch_after_act(rank_workers *w, int first, int last);
/* The first attempt after `attempt` worth running for slot i (given its best
 * proof so far and, if bounded, its bound); 0 if none. */
int sk_rank_branch_next(const rank_workers *w, int i, int attempt, bool bounded, double bound);

/* ---- rank_score.c ---- */

/* What ranking query q gives (one record of RECORD doubles per query, at
 * q * RECORD): its position against its head and tail corruptions (0 for a
 * side not ranked), whether the policy proved it, and its corruptions. The
 * records of every part of a distributed ranking are gathered, then summed
 * in query order, so the figures do not depend on the split. */
enum {
    R_HEAD, R_TAIL, R_PROVED, R_NUM_HEAD, R_NUM_TAIL,
    R_KGE_HEAD, R_KGE_TAIL, R_HYB_HEAD, R_HYB_TAIL, R_NEG_PROVED, /* with a KGE model */
    RECORD
};

/* Ranks the chunk's queries (scored query_score) into their records; with a
 * KGE model also by its scores alone and by the hybrid score. kge_scratch
 * and hyb_scratch hold a chunk's candidates. */
void sk_rank_chunk_queries(const rank_chunk *c, const double *query_score,
                           const int32_t (*queries)[3], const sk_rank_options *o, int sides,
                           double *kge_scratch, double *hyb_scratch, double *records,
                           double *grid_records);
/* With o->grid: grid_records holds (queries, grid_count, 2) positions (head,
 * tail), which sk_rank_sum_grid turns into each hybrid's overall figures. */
void sk_rank_sum_grid(const double *grid_records, int total, int sides, int grid_count,
                      sk_rank_metrics *out);
/* The main hybrid of o (its kge_weight, ... fields). */
sk_rank_hybrid sk_rank_hybrid_of(const sk_rank_options *o);
/* Every query's figures from all[0..total) (RECORD doubles each, in query
 * order) into out: the counts, the means of the ranked sides, the proved
 * rates, those by recorded depth (depths, NULL: none recorded) and, with a
 * KGE model, its figures and the hybrid's. */
void sk_rank_sum_records(const double *all, int total, int sides, const int32_t *depths, bool kge,
                         sk_rank_result *out);

/* ---- rank_gather.c ---- */

/* Every part's records, in part order, into all (one part: a copy). */
void sk_rank_gather_records(const sk_parallel *parallel, int total, const double *records,
                            double *all);
/* The sum over the parts of each part's count counters (one part: as they are). */
void sk_rank_sum_over_parts(const sk_parallel *parallel, int64_t *counters, int count);

#endif
