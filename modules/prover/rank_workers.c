/* The env slots the ranking proves candidates in: one sk_vec of workers x
 * batch envs on the host's workers, each worker claiming the next candidate
 * as soon as a slot's proof ends, the least model settling candidates and
 * states no actions could prove, and the bound cutting proofs that can no
 * longer beat their true query (rank_internal.h: rank_jobs). */
#include "rank_internal.h"

#include "skinner.h"

#include <stdio.h>

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROGRESS_SECONDS 0.5 /* between reports within a batch */

void sk_rank_workers_free(rank_workers *w) {
    sk_vec_destroy(w->vec);
    sk_kb_model_free(&w->model);
    free(w->job);
    free(w->logp_sum);
    free(w->logp);
    free(w->attempt);
    free(w->step);
    free(w->path_len);
    free(w->best);
    free(w->path_action);
    free(w->path_logp);
    free(w->path_allowed);
    free(w->tried_count);
    free(w->tried_mass);
    free(w->tried_action);
    memset(w, 0, sizeof *w);
}

sk_status sk_rank_workers_alloc(rank_workers *w, const sk_env_def *env, const sk_config *env_cfg,
                                const sk_actor *actor, const sk_parallel *parallel, int batch,
                                int branches, int alternatives, uint64_t seed) {
    memset(w, 0, sizeof *w);
    if (!sk_env_same(env, &sk_env_prover))
        return sk_fail(SK_ERR_INVALID, "ranking evaluation needs a Prover-v0 policy, not %s",
                       env->id);
    if (batch < 0)
        return sk_fail(SK_ERR_INVALID, "batch = %d (expected >= 0; 0: default)", batch);
    SK_ASSERT(actor->num_workers >= 1 && actor->max_rows >= 1);
    w->num_workers = actor->num_workers;
    w->batch = batch ? batch : SK_RANK_DEFAULT_BATCH;
    w->actor = actor;
    w->parallel = parallel;
    if (w->batch > INT_MAX / w->num_workers)
        return sk_fail(SK_ERR_INVALID, "%d workers x batch %d env slots (expected at most %d)",
                       w->num_workers, w->batch, INT_MAX);
    if (actor->act_at && w->batch > actor->max_rows)
        return sk_fail(SK_ERR_INVALID,
                       "batch = %d env slots per worker is more than the %d a recurrent policy "
                       "keeps states for (expected at most %d)",
                       w->batch, actor->max_rows, actor->max_rows);
    int slots = w->num_workers * w->batch;
    /* one worker: the host's parallel runs the jobs, each on its own slice */
    sk_status status = sk_vec_create(&w->vec, env, slots, 1, env_cfg);
    w->job = malloc((size_t)slots * sizeof *w->job);
    w->logp_sum = malloc((size_t)slots * sizeof *w->logp_sum);
    w->logp = malloc((size_t)slots * sizeof *w->logp);
    if (status == SK_OK && (!w->job || !w->logp_sum || !w->logp))
        status = sk_fail(SK_ERR_NOMEM, "out of memory for %d ranking slots", slots);
    if (status == SK_OK && (branches < 0 || (branches > 0 && alternatives < 1)))
        status = sk_fail(SK_ERR_INVALID, "branches = %d, alternatives = %d (expected >= 0, and "
                         ">= 1 with branches)", branches, alternatives);
    if (status == SK_OK && branches > 0) {
        w->branches = branches;
        w->alternatives = alternatives;
        w->max_steps = SK_MAX(1, sk_vec_env(w->vec)->max_episode_steps);
        size_t n = (size_t)slots, path = n * (size_t)w->max_steps;
        w->attempt = malloc(n * sizeof *w->attempt);
        w->step = malloc(n * sizeof *w->step);
        w->path_len = malloc(n * sizeof *w->path_len);
        w->best = malloc(n * sizeof *w->best);
        w->path_action = malloc(path * sizeof *w->path_action);
        w->path_logp = malloc(path * sizeof *w->path_logp);
        w->path_allowed = malloc(path * sizeof *w->path_allowed);
        w->tried_count = malloc(n * sizeof *w->tried_count);
        w->tried_mass = malloc(n * sizeof *w->tried_mass);
        w->tried_action = malloc(n * (size_t)(alternatives + 1) * sizeof *w->tried_action);
        if (!w->attempt || !w->step || !w->path_len || !w->best || !w->path_action ||
            !w->path_logp || !w->path_allowed || !w->tried_count || !w->tried_mass ||
            !w->tried_action)
            status = sk_fail(SK_ERR_NOMEM, "out of memory for the branch search of %d slots",
                             slots);
    }
    if (status != SK_OK) {
        sk_rank_workers_free(w);
        return status;
    }
    /* every slot gets a valid observation and mask, so the policy may run on
     * slots that sit idle between two busy ones */
    sk_vec_reset(w->vec, seed);
    for (int i = 0; i < slots; i++) w->job[i] = -1;
    return SK_OK;
}

/* The next candidate to prove, -1 when none is left; those the model rules
 * out are scored on the way. */
static int claim(const rank_workers *w, rank_jobs *jobs) {
    for (;;) {
        int job = atomic_fetch_add_explicit(&jobs->next, 1, memory_order_relaxed);
        if (job >= jobs->count) return -1;
        const int32_t *atom = jobs->atoms[job];
        if (sk_kb_model_allows(&w->model, sk_kb_key(atom[0], atom[1], atom[2]))) return job;
        jobs->score[job] = SK_RANK_FAILED;
    }
}

/* Starts attempt `attempt` of job's proof in slot (0: a new candidate). */
static void start_attempt(rank_workers *w, const rank_jobs *jobs, int slot, int job, int attempt) {
    if (w->actor->episode_start)
        w->actor->episode_start(w->actor->ctx, slot / w->batch, slot % w->batch);
    w->job[slot] = job;
    w->logp_sum[slot] = 0.0;
    if (w->branches) sk_rank_branch_start(w, slot, attempt);
    sk_prover_set_query(sk_vec_state(w->vec), sk_vec_io(w->vec), slot, jobs->atoms[job],
                        jobs->positive && jobs->positive[job]);
}

static void start_candidate(rank_workers *w, const rank_jobs *jobs, int slot, int job) {
    start_attempt(w, jobs, slot, job, 0);
}

/* Worker `worker` proves candidates with greedy actions in its slots and
 * scores them, until none is left to claim. */
static void score_candidates(rank_workers *w, int worker) {
    rank_jobs *jobs = w->jobs;
    const sk_env_def *env = sk_vec_env(w->vec);
    const sk_vec_buffers *b = sk_vec_buffers_of(w->vec);
    size_t log_fields = (size_t)env->num_log_fields, obs_size = (size_t)env->obs_size;
    size_t mask_size = (size_t)env->mask_size, heads = (size_t)env->action_space.num_heads;
    const sk_prover_state *s = sk_vec_state(w->vec);
    int first = worker * w->batch, end = first + w->batch, busy = 0;
    int64_t started = 0, steps = 0, dead_states = 0;
    for (int i = first, job; i < end && (job = claim(w, jobs)) >= 0; i++, busy++, started++)
        start_candidate(w, jobs, i, job);
    while (busy > 0) {
        int last = end;
        while (w->job[last - 1] < 0) last--;
        if (w->branches) sk_rank_branch_before_act(w, first, last);
        for (int at = first; at < last; at += w->actor->max_rows) {
            int rows = SK_MIN(w->actor->max_rows, last - at);
            size_t row = (size_t)at;
            if (w->actor->act_at) /* a recurrent policy: each slot keeps its own state */
                w->actor->act_at(w->actor->ctx, worker, at - first, b->obs + row * obs_size,
                                 b->masks + row * mask_size, rows, true, b->actions + row * heads,
                                 w->logp + row);
            else
                w->actor->act(w->actor->ctx, worker, b->obs + row * obs_size,
                              b->masks + row * mask_size, rows, true, b->actions + row * heads,
                              w->logp + row);
        }
        if (w->branches) sk_rank_branch_after_act(w, first, last);
        /* step the runs of busy slots; an idle slot keeps its state */
        for (int lo = first; lo < last;) {
            int hi = lo;
            while (hi < last && w->job[hi] >= 0) hi++;
            if (hi > lo) sk_vec_step_range(w->vec, lo, hi);
            lo = hi + 1;
        }
        if (worker == 0 && w->progress && sk_now() - w->progress_at > PROGRESS_SECONDS) {
            w->progress_at = sk_now();
            int claimed =
                SK_MIN(atomic_load_explicit(&jobs->next, memory_order_relaxed), jobs->count);
            w->progress(claimed, jobs->count, "candidates", w->progress_user);
        }
        for (int i = first; i < last; i++) {
            if (w->job[i] < 0) continue;
            steps++;
            w->logp_sum[i] += w->logp[i];
            bool ended = b->terminated[i] || b->truncated[i];
            bool below = jobs->bound && w->logp_sum[i] < jobs->bound[w->job[i]];
            /* an attempt of the branch search also stops below its best proof */
            below = below || (w->branches && w->logp_sum[i] < w->best[i]);
            const int32_t *goals = s->goals + (size_t)i * (size_t)s->atom_ints;
            bool dead = !ended && !below &&
                        sk_kb_model_rules_out(&w->model, goals, s->num_goals[i], s->first_var);
            if (!ended && !below && !dead) {
                if (w->branches) w->step[i]++;
                continue;
            }
            dead_states += dead;
            bool proved = !below && b->terminated[i] &&
                          b->episode_log[(size_t)i * log_fields + SK_PROVER_LOG_PROVED] > 0.5f;
            if (w->branches) {
                int current = w->job[i];
                if (proved) w->best[i] = fmax(w->best[i], w->logp_sum[i]);
                int next = sk_rank_branch_next(w, i, w->attempt[i], jobs->bound != NULL,
                                               jobs->bound ? jobs->bound[current] : 0.0);
                if (next > 0) {
                    start_attempt(w, jobs, i, current, next);
                    continue;
                }
                jobs->score[current] = w->best[i];
            } else {
                jobs->score[w->job[i]] = proved ? w->logp_sum[i] : SK_RANK_FAILED;
            }
            int job = claim(w, jobs);
            if (job >= 0) {
                start_candidate(w, jobs, i, job);
                started++;
            } else {
                w->job[i] = -1;
                busy--;
            }
        }
    }
    atomic_fetch_add_explicit(&jobs->started, started, memory_order_relaxed);
    atomic_fetch_add_explicit(&jobs->steps, steps, memory_order_relaxed);
    atomic_fetch_add_explicit(&jobs->dead, dead_states, memory_order_relaxed);
}

static void score_job(void *ctx, int worker, int num_workers) {
    rank_workers *w = ctx;
    SK_ASSERT(num_workers == w->num_workers);
    score_candidates(w, worker);
}

sk_status sk_rank_workers_prune(rank_workers *w, const sk_kb *kb) {
    int64_t facts = kb->pred_start[kb->num_preds];
    return sk_kb_model_build(
        kb, SK_MAX((int64_t)SK_RANK_MODEL_MIN_ATOMS, SK_RANK_MODEL_ATOMS_PER_FACT * facts),
        &w->model);
}

void sk_rank_workers_score(rank_workers *w, rank_jobs *jobs) {
    atomic_store(&jobs->next, 0);
    atomic_store(&jobs->started, 0);
    atomic_store(&jobs->steps, 0);
    atomic_store(&jobs->dead, 0);
    w->jobs = jobs;
    w->parallel->run(w->parallel->ctx, score_job, w);
    w->jobs = NULL;
}

sk_status sk_rank_score(const sk_env_def *env, const sk_config *env_cfg, const sk_actor *actor,
                        const sk_parallel *parallel, const int32_t (*atoms)[3],
                        const uint8_t *positive, int count, int batch, int branches,
                        int alternatives, double *scores) {
    if (count < 0) return sk_fail(SK_ERR_INVALID, "count = %d (expected >= 0)", count);
    rank_workers w;
    sk_status status =
        sk_rank_workers_alloc(&w, env, env_cfg, actor, parallel, batch, branches, alternatives, 0);
    if (status != SK_OK) return status;
    rank_jobs jobs = {.atoms = atoms, .positive = positive, .score = scores, .count = count};
    sk_rank_workers_score(&w, &jobs);
    sk_rank_workers_free(&w);
    return SK_OK;
}
