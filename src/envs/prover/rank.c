/* Ranking evaluation of a Prover-v0 policy: see rank.h for the protocol. */
#include "rank.h"

#include "../../core/core.h"
#include "../../kge/kge.h"
#include "../../vec/pool.h"
#include "skinner/vec.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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
int sk_rank_sample(int32_t (*atoms)[3], int count, int keep, uint64_t *rng) {
    if (keep <= 0 || keep >= count) return count;
    for (int k = 0; k < keep; k++) {
        int j = k + (int)sk_rng_below(rng, (uint32_t)(count - k));
        int32_t tmp[3];
        memcpy(tmp, atoms[k], sizeof tmp);
        memcpy(atoms[k], atoms[j], sizeof tmp);
        memcpy(atoms[j], tmp, sizeof tmp);
    }
    return keep;
}

uint64_t sk_rank_sample_stream(uint64_t seed, int query) {
    return sk_rng_seed(seed ^ 0x5a3d1e5ULL, (uint64_t)query);
}

static void chunk_add(rank_chunk *c, const sk_kb *kb, const int32_t query[3], double score,
                      int sides, int negatives, uint64_t *rng) {
    int q = c->num_queries++, at = c->count;
    c->start[q] = at;
    int room = c->cap - at;
    c->num_head[q] = sides & SK_PROVER_CORRUPT_HEAD
                         ? sk_rank_sample(c->atoms + at,
                                        sk_rank_corruptions(kb, query, 0, c->atoms + at, room),
                                        negatives, rng)
                         : 0;
    c->num_tail[q] = sides & SK_PROVER_CORRUPT_TAIL
                         ? sk_rank_sample(c->atoms + at + c->num_head[q],
                                        sk_rank_corruptions(kb, query, 1, c->atoms + at + c->num_head[q],
                                                            room - c->num_head[q]),
                                        negatives, rng)
                         : 0;
    c->count = at + c->num_head[q] + c->num_tail[q];
    for (int k = at; k < c->count; k++) c->bound[k] = score;
}

/* ------------------------------------------------------------ the workers */

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
     * slot's attempt (0 greedy, then branches, see next_attempt), the steps
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

#define PROGRESS_SECONDS 0.5 /* between reports within a batch */

static void workers_free(rank_workers *w) {
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

static sk_status workers_alloc(rank_workers *w, const sk_env_def *env, const sk_config *env_cfg,
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
            status = sk_fail(SK_ERR_NOMEM, "out of memory for the branch search of %d slots", slots);
    }
    if (status != SK_OK) {
        workers_free(w);
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

/* Attempt a >= 1 of the branch search: branch step (a - 1) / alternatives,
 * taking the (a - 1) % alternatives + 2nd most likely action there. */
static int branch_step(const rank_workers *w, int a) { return (a - 1) / w->alternatives; }
static int branch_rank(const rank_workers *w, int a) { return (a - 1) % w->alternatives + 2; }

/* Starts attempt `attempt` of job's proof in slot (0: a new candidate). */
static void start_attempt(rank_workers *w, const rank_jobs *jobs, int slot, int job, int attempt) {
    if (w->actor->episode_start)
        w->actor->episode_start(w->actor->ctx, slot / w->batch, slot % w->batch);
    w->job[slot] = job;
    w->logp_sum[slot] = 0.0;
    if (w->branches) {
        w->attempt[slot] = attempt;
        w->step[slot] = 0;
        if (attempt == 0) {
            w->best[slot] = SK_RANK_FAILED;
            w->path_len[slot] = 0;
        } else if (branch_rank(w, attempt) == 2) { /* a new branch step: only its greedy action tried */
            size_t at = (size_t)slot * (size_t)w->max_steps + (size_t)branch_step(w, attempt);
            w->tried_action[(size_t)slot * (size_t)(w->alternatives + 1)] = w->path_action[at];
            w->tried_count[slot] = 1;
            w->tried_mass[slot] = exp((double)w->path_logp[at]);
        }
    }
    sk_prover_set_query(sk_vec_state(w->vec), sk_vec_io(w->vec), slot, jobs->atoms[job],
                        jobs->positive && jobs->positive[job]);
}

static void start_candidate(rank_workers *w, const rank_jobs *jobs, int slot, int job) {
    start_attempt(w, jobs, slot, job, 0);
}

/* ---- the branch search ----
 *
 * With branches = B > 0 and alternatives = K, a candidate's greedy proof
 * (attempt 0) is followed by attempts that each leave the greedy path once:
 * at each of its first B steps t in turn, the 2nd, 3rd, ..., (K + 1)th most
 * likely action there (the ones tried before masked out), after the greedy
 * path's first t actions and followed by greedy actions. The candidate scores
 * the best log-probability of the proofs found (SK_RANK_FAILED if none). An
 * attempt's log-probability is that of the policy's own distribution: the
 * replayed steps keep the greedy path's, and the branch's is the masked
 * choice's times 1 - (the probability of the actions masked out).
 *
 * An attempt stops, like a greedy proof, once its running sum falls below the
 * candidate's bound or its best proof so far (it can no longer beat either),
 * and at a dead state; one that could not reach either is not started, and a
 * candidate stops once a proof beats its bound. None of this changes the
 * ranks (the same argument as for greedy proofs): an attempt's path is fixed
 * by the greedy path and the actions tried before at its branch step, every
 * attempt that is started reaches its branch step, and a branch past where the
 * greedy path was cut starts from a prefix that is already below the bound or
 * dead, so it cannot give a proof that counts. */

/* Number of allowed actions in mask[0..n). */
static int32_t allowed_count(const uint8_t *mask, int n) {
    int32_t count = 0;
    for (int j = 0; j < n; j++) count += mask[j] != 0;
    return count;
}

/* Before the policy acts: at its branch step an attempt cannot take the
 * actions tried there before, and attempt 0 records how many it may take. */
static void branch_before_act(rank_workers *w, int first, int last) {
    const sk_vec_buffers *b = sk_vec_buffers_of(w->vec);
    int mask_size = sk_vec_env(w->vec)->mask_size;
    for (int i = first; i < last; i++) {
        if (w->job[i] < 0) continue;
        int a = w->attempt[i], t = w->step[i];
        uint8_t *mask = b->masks + (size_t)i * (size_t)mask_size;
        if (a == 0 && t < w->max_steps)
            w->path_allowed[(size_t)i * (size_t)w->max_steps + (size_t)t] = allowed_count(mask, mask_size);
        if (a > 0 && t == branch_step(w, a)) {
            const int32_t *tried = w->tried_action + (size_t)i * (size_t)(w->alternatives + 1);
            for (int k = 0; k < w->tried_count[i]; k++) mask[tried[k]] = 0;
        }
    }
}

/* After it acted: replayed steps take the greedy path's actions and
 * log-probabilities, a branch step's log-probability becomes that of the
 * unmasked distribution (and its action is tried), and attempt 0's path is
 * recorded. */
static void branch_after_act(rank_workers *w, int first, int last) {
    const sk_vec_buffers *b = sk_vec_buffers_of(w->vec);
    size_t heads = (size_t)sk_vec_env(w->vec)->action_space.num_heads;
    for (int i = first; i < last; i++) {
        if (w->job[i] < 0) continue;
        size_t path = (size_t)i * (size_t)w->max_steps;
        int a = w->attempt[i], t = w->step[i];
        int32_t *action = b->actions + (size_t)i * heads;
        if (a == 0) {
            if (t < w->max_steps) {
                w->path_action[path + (size_t)t] = *action;
                w->path_logp[path + (size_t)t] = w->logp[i];
                w->path_len[i] = t + 1;
            }
        } else if (t < branch_step(w, a)) {
            *action = w->path_action[path + (size_t)t];
            w->logp[i] = w->path_logp[path + (size_t)t];
        } else if (t == branch_step(w, a)) {
            w->logp[i] += (float)log1p(-w->tried_mass[i]); /* log(1 - p(the masked actions)) */
            w->tried_action[(size_t)i * (size_t)(w->alternatives + 1) + (size_t)w->tried_count[i]++] =
                *action;
            w->tried_mass[i] += exp((double)w->logp[i]);
        }
    }
}

/* The first attempt after `attempt` worth running for slot i (given its best
 * proof so far and, if bounded, its bound); 0 if none. */
static int next_attempt(const rank_workers *w, int i, int attempt, bool bounded, double bound) {
    size_t path = (size_t)i * (size_t)w->max_steps;
    int len = SK_MIN(w->path_len[i], w->branches);
    if (bounded && w->best[i] > bound) return 0; /* it ranks above its true query */
    double floor = bounded ? fmax(bound, w->best[i]) : w->best[i];
    int a = attempt + 1;
    if (attempt > 0 && branch_rank(w, a) > 2) { /* the next action at the same step */
        int t = branch_step(w, a);
        double prefix = 0.0;
        for (int k = 0; k < t; k++) prefix += w->path_logp[path + (size_t)k];
        /* the next action has at most 1 - p(those tried); fewer than rank allowed: none */
        if (w->path_allowed[path + (size_t)t] >= branch_rank(w, a) && w->tried_mass[i] < 1.0 &&
            prefix + log1p(-w->tried_mass[i]) >= floor)
            return a;
        a = (t + 1) * w->alternatives + 1; /* the next step's first branch */
    }
    double prefix = 0.0;
    for (int k = 0; k < branch_step(w, a) && k < len; k++) prefix += w->path_logp[path + (size_t)k];
    for (int t = branch_step(w, a); t < len; t++) {
        float greedy = w->path_logp[path + (size_t)t];
        /* the second action has at most 1 - p(greedy action) */
        if (w->path_allowed[path + (size_t)t] >= 2 && prefix + log1p(-exp((double)greedy)) >= floor)
            return t * w->alternatives + 1;
        prefix += greedy;
    }
    return 0;
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
        if (w->branches) branch_before_act(w, first, last);
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
        if (w->branches) branch_after_act(w, first, last);
        /* step the runs of busy slots; an idle slot keeps its state */
        for (int lo = first; lo < last;) {
            int hi = lo;
            while (hi < last && w->job[hi] >= 0) hi++;
            if (hi > lo) sk_vec_step_range(w->vec, lo, hi);
            lo = hi + 1;
        }
        if (worker == 0 && w->progress && sk_now() - w->progress_at > PROGRESS_SECONDS) {
            w->progress_at = sk_now();
            int claimed = SK_MIN(atomic_load_explicit(&jobs->next, memory_order_relaxed), jobs->count);
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
            bool dead = !ended && !below &&
                        sk_kb_model_rules_out(&w->model, s->goals + (size_t)i * (size_t)s->atom_ints,
                                              s->num_goals[i], s->first_var);
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
                int next = next_attempt(w, i, w->attempt[i], jobs->bound != NULL,
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

/* Scores every job on all workers. */
static void workers_score(rank_workers *w, rank_jobs *jobs) {
    atomic_store(&jobs->next, 0);
    atomic_store(&jobs->started, 0);
    atomic_store(&jobs->steps, 0);
    atomic_store(&jobs->dead, 0);
    w->jobs = jobs;
    w->parallel->run(w->parallel->ctx, score_job, w);
    w->jobs = NULL;
}

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

/* The KGE score of a Prover atom (pred, arg0, arg1). */
static double kge_of(const sk_kge *kge, const int32_t atom[3]) {
    return sk_kge_score(kge, sk_kge_entity(kge, atom[1] - 1),
                        sk_kge_relation(kge, atom[0] - SK_KB_FIRST_PRED),
                        sk_kge_entity(kge, atom[2] - 1));
}

static double log_sigmoid(double x) { return x >= 0 ? -log1p(exp(-x)) : x - log1p(exp(x)); }

/* The hybrid score of a candidate from its KGE score and its proof's. */
static double hybrid_of(const sk_rank_options *o, double kge, double proof) {
    bool proved = proof != SK_RANK_FAILED;
    double term = !proved                                   ? -o->fail_penalty
                  : o->proof_term == SK_RANK_PROOF_LOGPROB ? o->rl_weight * proof
                                                            : o->proof_bonus;
    return o->kge_weight * log_sigmoid(kge) + term;
}

/* Ranks the chunk's queries (scored query_score) into their records; with a
 * KGE model also by its scores alone and by the hybrid score. kge_scratch
 * and hyb_scratch hold a chunk's candidates. */
static void rank_chunk_queries(const rank_chunk *c, const double *query_score,
                               const int32_t (*queries)[3], const sk_rank_options *o, int sides,
                               double *kge_scratch, double *hyb_scratch, double *records) {
    for (int q = 0; q < c->num_queries; q++) {
        const double *score = c->score + c->start[q];
        int query = c->first_query + q, count = c->num_head[q] + c->num_tail[q];
        double truth = query_score[query];
        double *record = records + (size_t)query * RECORD;
        /* one stream per query: the draws do not depend on how queries were chunked */
        uint64_t rng = sk_rng_seed(o->seed, (uint64_t)query);
        if (sides & SK_PROVER_CORRUPT_HEAD)
            record[R_HEAD] = sk_rank_position(truth, score, c->num_head[q], &rng);
        if (sides & SK_PROVER_CORRUPT_TAIL)
            record[R_TAIL] = sk_rank_position(truth, score + c->num_head[q], c->num_tail[q], &rng);
        record[R_PROVED] = truth != SK_RANK_FAILED;
        record[R_NUM_HEAD] = c->num_head[q];
        record[R_NUM_TAIL] = c->num_tail[q];
        if (!o->kge) continue;
        double *ks = kge_scratch + c->start[q], *hs = hyb_scratch + c->start[q];
        int proved = 0;
        for (int k = 0; k < count; k++) {
            ks[k] = kge_of(o->kge, c->atoms[c->start[q] + k]);
            hs[k] = hybrid_of(o, ks[k], score[k]);
            proved += score[k] != SK_RANK_FAILED;
        }
        double kge_truth = kge_of(o->kge, queries[query]);
        double hyb_truth = hybrid_of(o, kge_truth, truth);
        int nh = c->num_head[q];
        if (sides & SK_PROVER_CORRUPT_HEAD) {
            record[R_KGE_HEAD] = sk_rank_position(kge_truth, ks, nh, &rng);
            record[R_HYB_HEAD] = sk_rank_position(hyb_truth, hs, nh, &rng);
        }
        if (sides & SK_PROVER_CORRUPT_TAIL) {
            record[R_KGE_TAIL] = sk_rank_position(kge_truth, ks + nh, c->num_tail[q], &rng);
            record[R_HYB_TAIL] = sk_rank_position(hyb_truth, hs + nh, c->num_tail[q], &rng);
        }
        record[R_NEG_PROVED] = proved;
    }
}

/* Every part's records, in part order, into all (one part: a copy). */
static void gather_records(const sk_parallel *parallel, int total, const double *records,
                           double *all) {
    int parts = parallel->num_parts > 1 ? parallel->num_parts : 1;
    if (parts == 1) {
        memcpy(all, records, (size_t)total * RECORD * sizeof(double));
        return;
    }
    size_t *counts = malloc((size_t)parts * sizeof *counts);
    SK_ASSERT(counts && parallel->gather);
    for (int p = 0; p < parts; p++) {
        int lo, hi;
        sk_slice(total, p, parts, &lo, &hi);
        counts[p] = (size_t)(hi - lo) * RECORD;
    }
    int lo, hi;
    sk_slice(total, parallel->part, parts, &lo, &hi);
    parallel->gather(parallel->gather_ctx, records + (size_t)lo * RECORD, all, counts);
    free(counts);
}

/* The sum over the parts of each part's count counters (one part: as they are). */
static void sum_over_parts(const sk_parallel *parallel, int64_t *counters, int count) {
    int parts = parallel->num_parts > 1 ? parallel->num_parts : 1;
    if (parts == 1) return;
    double mine[8], *all = malloc((size_t)parts * (size_t)count * sizeof *all);
    size_t *counts = malloc((size_t)parts * sizeof *counts);
    SK_ASSERT(count <= 8 && all && counts && parallel->gather);
    for (int k = 0; k < count; k++) mine[k] = (double)counters[k];
    for (int p = 0; p < parts; p++) counts[p] = (size_t)count;
    parallel->gather(parallel->gather_ctx, mine, all, counts);
    for (int k = 0; k < count; k++) {
        counters[k] = 0;
        for (int p = 0; p < parts; p++) counters[k] += (int64_t)all[(size_t)p * (size_t)count + (size_t)k];
    }
    free(all);
    free(counts);
}

/* ------------------------------------------------------------ entry points */

void sk_rank_side_means(int sides, int total, sk_rank_metrics head, sk_rank_metrics tail,
                        sk_rank_metrics *head_out, sk_rank_metrics *tail_out,
                        sk_rank_metrics *overall) {
    if (sides & SK_PROVER_CORRUPT_HEAD) *head_out = sk_rank_mean(head, total);
    if (sides & SK_PROVER_CORRUPT_TAIL) *tail_out = sk_rank_mean(tail, total);
    sk_rank_metrics both = {head.mrr + tail.mrr, head.hits1 + tail.hits1,
                            head.hits3 + tail.hits3, head.hits10 + tail.hits10};
    *overall = sk_rank_mean(both, sides == SK_PROVER_CORRUPT_BOTH ? 2 * total : total);
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
    sk_status status =
        workers_alloc(&w, env_def, env_cfg, actor, parallel, options->batch, options->branches,
                      options->alternatives ? options->alternatives : 1, options->seed);
    if (status != SK_OK) return status;
    w.progress = options->progress;
    w.progress_user = options->progress_user;
    w.progress_at = started;
    const sk_prover_state *env = sk_vec_state(w.vec);
    const sk_kb *kb = env->kb;
    if (!options->unpruned) {
        int64_t facts = kb->pred_start[kb->num_preds];
        status = sk_kb_model_build(
            kb, SK_MAX((int64_t)SK_RANK_MODEL_MIN_ATOMS, SK_RANK_MODEL_ATOMS_PER_FACT * facts),
            &w.model);
        if (status != SK_OK) {
            workers_free(&w);
            return status;
        }
        out->model_atoms = w.model.count;
        out->model_used = w.model.complete;
    }
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
    /* a distributed ranking: this part ranks queries lo..hi-1 */
    int parts = parallel->num_parts > 1 ? parallel->num_parts : 1;
    int part = parts > 1 ? parallel->part : 0;
    int lo, hi;
    sk_slice(total, part, parts, &lo, &hi);
    int cap = CHUNK_CANDIDATES;
    for (int32_t pred = SK_KB_FIRST_PRED; pred < kb->num_preds; pred++)
        cap = SK_MAX(cap, room_for(kb, pred, sides));
    rank_chunk c;
    double *query_score = malloc((size_t)total * sizeof *query_score);
    uint8_t *positive = malloc((size_t)total);
    double *records = calloc((size_t)total * RECORD, sizeof *records);
    double *all = malloc((size_t)total * RECORD * sizeof *all);
    double *kge_scratch = options->kge ? malloc((size_t)cap * sizeof *kge_scratch) : NULL;
    double *hyb_scratch = options->kge ? malloc((size_t)cap * sizeof *hyb_scratch) : NULL;
    if (options->kge && (options->kge->num_entities != kb->num_consts ||
                         options->kge->num_relations != kb->num_preds - SK_KB_FIRST_PRED)) {
        /* the message first: the kb goes with the workers' envs */
        status = sk_fail(SK_ERR_INVALID,
                         "the KGE model has %d entities and %d relations, the dataset %d "
                         "constants and %d predicates (expected a model trained on the same "
                         "dataset)",
                         options->kge->num_entities, options->kge->num_relations, kb->num_consts,
                         kb->num_preds - SK_KB_FIRST_PRED);
        free(query_score), free(positive), free(records), free(all), free(kge_scratch),
            free(hyb_scratch);
        workers_free(&w);
        return status;
    }
    if (!query_score || !positive || !records || !all ||
        (options->kge && (!kge_scratch || !hyb_scratch)) || (status = chunk_alloc(&c, cap)) != SK_OK) {
        bool allocated = query_score && positive && records && all &&
                         (!options->kge || (kge_scratch && hyb_scratch));
        free(query_score);
        free(positive);
        free(records);
        free(all);
        free(kge_scratch);
        free(hyb_scratch);
        workers_free(&w);
        return allocated ? status : sk_fail(SK_ERR_NOMEM, "out of memory for %d queries", total);
    }
    /* the true queries first (as positives), so that their scores bound
     * their corruptions' proofs */
    memset(positive, 1, (size_t)total);
    rank_jobs truths = {.atoms = (const int32_t(*)[3])queries->atoms + lo, .positive = positive,
                        .score = query_score + lo, .count = hi - lo};
    workers_score(&w, &truths);
    out->settled += truths.count - truths.started;
    out->steps += truths.steps;
    out->dead_states += truths.dead;
    for (int q = lo; q < hi;) {
        c.count = c.num_queries = 0;
        c.first_query = q;
        while (q < hi && c.count + room_for(kb, queries->atoms[q][0], sides) <= c.cap) {
            uint64_t sampling = sk_rank_sample_stream(options->seed, q);
            chunk_add(&c, kb, queries->atoms[q], query_score[q], sides, options->negatives, &sampling);
            q++;
        }
        /* the bound stops a corruption's proof once it cannot beat the true query's:
         * the hybrid score needs every proof to its end */
        rank_jobs jobs = {.atoms = (const int32_t(*)[3])c.atoms,
                          .bound = options->kge ? NULL : c.bound,
                          .score = c.score, .count = c.count};
        workers_score(&w, &jobs);
        out->settled += jobs.count - jobs.started;
        out->steps += jobs.steps;
        out->dead_states += jobs.dead;
        rank_chunk_queries(&c, query_score, (const int32_t(*)[3])queries->atoms, options, sides,
                           kge_scratch, hyb_scratch, records);
        if (options->progress) options->progress(q - lo, hi - lo, "queries", options->progress_user);
    }
    gather_records(parallel, total, records, all);
    int64_t counters[3] = {out->steps, out->settled, out->dead_states};
    sum_over_parts(parallel, counters, 3);
    out->steps = counters[0];
    out->settled = counters[1];
    out->dead_states = counters[2];
    /* every query's figures, summed in query order */
    sk_rank_metrics head = {0}, tail = {0}, kge_head = {0}, kge_tail = {0}, hyb_head = {0},
                    hyb_tail = {0};
    int proved = 0;
    double negatives_proved = 0.0;
    bool h = sides & SK_PROVER_CORRUPT_HEAD, t = sides & SK_PROVER_CORRUPT_TAIL;
    out->candidates = total;
    for (int q = 0; q < total; q++) {
        const double *record = all + (size_t)q * RECORD;
        if (h) sk_rank_metrics_add(&head, (int)record[R_HEAD]);
        if (t) sk_rank_metrics_add(&tail, (int)record[R_TAIL]);
        proved += record[R_PROVED] != 0.0;
        int32_t depth = queries->depths ? queries->depths[q] : SK_KB_DEPTH_UNKNOWN;
        int bucket = depth == -1 ? 0 : depth >= 1 && depth < SK_RANK_DEPTHS - 1 ? depth
                                                                                 : SK_RANK_DEPTHS - 1;
        out->depth_count[bucket]++;
        out->depth_proved[bucket] += record[R_PROVED] != 0.0;
        out->head_corruptions += (int64_t)record[R_NUM_HEAD];
        out->tail_corruptions += (int64_t)record[R_NUM_TAIL];
        if (!options->kge) continue;
        if (h) sk_rank_metrics_add(&kge_head, (int)record[R_KGE_HEAD]);
        if (t) sk_rank_metrics_add(&kge_tail, (int)record[R_KGE_TAIL]);
        if (h) sk_rank_metrics_add(&hyb_head, (int)record[R_HYB_HEAD]);
        if (t) sk_rank_metrics_add(&hyb_tail, (int)record[R_HYB_TAIL]);
        negatives_proved += record[R_NEG_PROVED];
    }
    out->candidates += out->head_corruptions + out->tail_corruptions;
    out->queries = total;
    out->sides = sides;
    sk_rank_side_means(sides, total, head, tail, &out->head, &out->tail, &out->overall);
    if (options->kge) {
        out->has_kge = true;
        sk_rank_side_means(sides, total, kge_head, kge_tail, &out->kge_head, &out->kge_tail,
                        &out->kge_overall);
        sk_rank_side_means(sides, total, hyb_head, hyb_tail, &out->hybrid_head,
                        &out->hybrid_tail, &out->hybrid_overall);
        int64_t corruptions = out->head_corruptions + out->tail_corruptions;
        out->negatives_proved_rate = corruptions ? negatives_proved / (double)corruptions : 0.0;
    }
    out->proved_rate = (double)proved / total;
    out->seconds = sk_now() - started;
    free(query_score);
    free(positive);
    free(records);
    free(all);
    free(kge_scratch);
    free(hyb_scratch);
    chunk_free(&c);
    workers_free(&w);
    return SK_OK;
}

sk_status sk_rank_score(const sk_env_def *env, const sk_config *env_cfg, const sk_actor *actor,
                        const sk_parallel *parallel, const int32_t (*atoms)[3],
                        const uint8_t *positive, int count, int batch, int branches,
                        int alternatives, double *scores) {
    if (count < 0) return sk_fail(SK_ERR_INVALID, "count = %d (expected >= 0)", count);
    rank_workers w;
    sk_status status =
        workers_alloc(&w, env, env_cfg, actor, parallel, batch, branches, alternatives, 0);
    if (status != SK_OK) return status;
    rank_jobs jobs = {.atoms = atoms, .positive = positive, .score = scores, .count = count};
    workers_score(&w, &jobs);
    workers_free(&w);
    return SK_OK;
}

/* ------------------------------------------------------------ as an evaluation */

/* eval.* options; a bad value names its key and what was expected. */
static sk_status read_options(const sk_config *options, sk_rank_options *out) {
    memset(out, 0, sizeof *out);
    const char *split = sk_cfg_string(options, "eval.split", "test");
    if (!sk_rank_split_parse(split, &out->split))
        return sk_fail(SK_ERR_INVALID, "eval.split '%s' (expected train, valid or test)", split);
    const char *corrupt = sk_cfg_string(options, "eval.corrupt", NULL);
    if (corrupt && !sk_prover_corrupt_parse(corrupt, &out->sides))
        return sk_fail(SK_ERR_INVALID, "eval.corrupt '%s' (expected head, tail or both)", corrupt);
    int64_t queries, seed, batch, negatives, branches, alternatives;
    static const char *const proof_terms[] = {"fixed", "logprob", NULL};
    int proof_term = 0;
    sk_status status = sk_cfg_int(options, "eval.queries", 0, 0, INT32_MAX, &queries);
    if (status == SK_OK) status = sk_cfg_int(options, "eval.seed", 1, 0, INT64_MAX, &seed);
    if (status == SK_OK) status = sk_cfg_int(options, "eval.batch", 0, 0, 1 << 20, &batch);
    if (status == SK_OK) status = sk_cfg_int(options, "eval.negatives", 0, 0, INT32_MAX, &negatives);
    if (status == SK_OK) status = sk_cfg_int(options, "eval.branches", 0, 0, 1 << 16, &branches);
    if (status == SK_OK)
        status = sk_cfg_int(options, "eval.alternatives", 1, 1, 1 << 16, &alternatives);
    if (status == SK_OK)
        status = sk_cfg_double(options, "eval.kge_weight", SK_RANK_KGE_WEIGHT, 0.0, 1e6, &out->kge_weight);
    if (status == SK_OK)
        status = sk_cfg_double(options, "eval.rl_weight", SK_RANK_RL_WEIGHT, 0.0, 1e6, &out->rl_weight);
    if (status == SK_OK)
        status = sk_cfg_double(options, "eval.proof_bonus", SK_RANK_PROOF_BONUS, -1e6, 1e6,
                               &out->proof_bonus);
    if (status == SK_OK)
        status = sk_cfg_double(options, "eval.fail_penalty", SK_RANK_FAIL_PENALTY, -1e6, 1e6,
                               &out->fail_penalty);
    if (status == SK_OK) status = sk_cfg_choice(options, "eval.proof", "fixed", proof_terms, &proof_term);
    bool prune = true;
    if (status == SK_OK) status = sk_cfg_bool(options, "eval.prune", true, &prune);
    if (status != SK_OK) return status;
    out->unpruned = !prune;
    out->max_queries = (int)queries;
    out->seed = (uint64_t)seed;
    out->batch = (int)batch;
    out->negatives = (int)negatives;
    out->branches = (int)branches;
    out->alternatives = (int)alternatives;
    out->proof_term = (sk_rank_proof_term)proof_term;
    return SK_OK;
}

static void add_metric(sk_env_report *out, const char *prefix, const char *name, double value) {
    SK_ASSERT(out->num_metrics < SK_MAX_METRICS);
    sk_metric *m = &out->metrics[out->num_metrics++];
    snprintf(m->name, sizeof m->name, "%s%s", prefix, name);
    m->value = value;
}

static void add_side(sk_env_report *out, const char *prefix, const sk_rank_metrics *m) {
    add_metric(out, prefix, "mrr", m->mrr);
    add_metric(out, prefix, "hits1", m->hits1);
    add_metric(out, prefix, "hits3", m->hits3);
    add_metric(out, prefix, "hits10", m->hits10);
}

/* Appends to a fixed buffer; the report's texts are a few hundred bytes. */
static void append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...) {
    size_t used = strlen(buf);
    SK_ASSERT(used < size);
    va_list args;
    va_start(args, fmt);
    vsnprintf(buf + used, size - used, fmt, args);
    va_end(args);
}

static void side_json(char *buf, size_t size, const char *name, const sk_rank_metrics *m,
                      const char *end) {
    append(buf, size, "\"%s\": {\"mrr\": %.6g, \"hits1\": %.6g, \"hits3\": %.6g, \"hits10\": %.6g}%s",
           name, m->mrr, m->hits1, m->hits3, m->hits10, end);
}

static void report(const sk_env_def *env, const sk_rank_options *options, const sk_rank_result *r,
                   sk_env_report *out) {
    bool head = r->sides & SK_PROVER_CORRUPT_HEAD, tail = r->sides & SK_PROVER_CORRUPT_TAIL;
    add_side(out, "", &r->overall);
    if (head) add_side(out, "head_", &r->head);
    if (tail) add_side(out, "tail_", &r->tail);
    add_metric(out, "", "queries", r->queries);
    add_metric(out, "", "candidates", (double)r->candidates);
    add_metric(out, "", "head_corruptions", (double)r->head_corruptions);
    add_metric(out, "", "tail_corruptions", (double)r->tail_corruptions);
    add_metric(out, "", "proved_rate", r->proved_rate);
    add_metric(out, "", "seconds", r->seconds);
    add_metric(out, "", "steps", (double)r->steps);
    add_metric(out, "", "settled", (double)r->settled);
    const char *split = sk_rank_split_name(options->split), *sides = sk_prover_corrupt_name(r->sides);
    append(out->json, sizeof out->json,
           "\"split\": \"%s\", \"corrupt\": \"%s\", \"queries\": %d, \"candidates\": %lld, "
           "\"head_corruptions\": %lld, \"tail_corruptions\": %lld, \"proved_rate\": %.6g, "
           "\"seconds\": %.3f, \"steps\": %lld, \"model_atoms\": %lld, \"model_used\": %s, "
           "\"settled\": %lld, \"dead_states\": %lld, \"branches\": %d, \"alternatives\": %d, "
           "\"seed\": %llu, "
           "\"mrr\": %.6g, \"hits1\": %.6g, "
           "\"hits3\": %.6g, \"hits10\": %.6g, ",
           split, sides, r->queries, (long long)r->candidates, (long long)r->head_corruptions,
           (long long)r->tail_corruptions, r->proved_rate, r->seconds, (long long)r->steps,
           (long long)r->model_atoms, r->model_used ? "true" : "false", (long long)r->settled,
           (long long)r->dead_states, options->branches, options->branches ? options->alternatives : 0,
           (unsigned long long)options->seed, r->overall.mrr, r->overall.hits1, r->overall.hits3,
           r->overall.hits10);
    /* a side that was not ranked has no entry */
    if (head) side_json(out->json, sizeof out->json, "head", &r->head, tail ? ", " : "");
    if (tail) side_json(out->json, sizeof out->json, "tail", &r->tail, "");
    append(out->text, sizeof out->text,
           "%s ranking, %s split, %s corruptions: %d queries, %lld candidates, %.1f s; true "
           "queries proved: %.1f%%\n",
           env->id, split, sides, r->queries, (long long)r->candidates, r->seconds,
           100.0 * r->proved_rate);
    if (options->branches)
        append(out->text, sizeof out->text,
               "proof search: the greedy proof, then the next %d most likely action%s at each "
               "of its first %d steps\n",
               options->alternatives, options->alternatives == 1 ? "" : "s", options->branches);
    if (r->model_used)
        append(out->text, sizeof out->text,
               "least model: %lld atoms; %.1f%% of the candidates are outside it and failed "
               "without a proof; %lld policy steps\n",
               (long long)r->model_atoms, 100.0 * (double)r->settled / (double)r->candidates,
               (long long)r->steps);
    else if (r->model_atoms)
        append(out->text, sizeof out->text,
               "least model: over %lld atoms, not used; %lld policy steps\n",
               (long long)r->model_atoms, (long long)r->steps);
    append(out->text, sizeof out->text, "%-8s %7s %7s %7s %7s\n", "", "MRR", "Hits@1", "Hits@3",
           "Hits@10");
    const char *names[3] = {"head", "tail", "overall"};
    const sk_rank_metrics *rows[3] = {&r->head, &r->tail, &r->overall};
    const bool shown[3] = {head, tail, true};
    for (int k = 0; k < 3; k++)
        if (shown[k])
            append(out->text, sizeof out->text, "%-8s %7.3f %7.3f %7.3f %7.3f\n", names[k],
                   rows[k]->mrr, rows[k]->hits1, rows[k]->hits3, rows[k]->hits10);
    /* the true queries proved by recorded depth (the *_depths.txt files) */
    append(out->text, sizeof out->text, "true queries proved by recorded depth:");
    append(out->json, sizeof out->json, ", \"proved_by_depth\": {");
    bool first = true;
    for (int d = 0; d < SK_RANK_DEPTHS; d++) {
        if (!r->depth_count[d]) continue;
        char name[16];
        if (d == 0) snprintf(name, sizeof name, "unprovable");
        else if (d == SK_RANK_DEPTHS - 1) snprintf(name, sizeof name, "other");
        else snprintf(name, sizeof name, "%d", d);
        append(out->text, sizeof out->text, " %s %d/%d (%.1f%%)", name, r->depth_proved[d],
               r->depth_count[d], 100.0 * r->depth_proved[d] / r->depth_count[d]);
        append(out->json, sizeof out->json, "%s\"%s\": [%d, %d]", first ? "" : ", ", name,
               r->depth_proved[d], r->depth_count[d]);
        first = false;
    }
    append(out->text, sizeof out->text, "\n");
    append(out->json, sizeof out->json, "}");
    if (!r->has_kge) return;
    /* the KGE-only and hybrid figures of the same candidates */
    add_side(out, "kge_", &r->kge_overall);
    add_side(out, "hybrid_", &r->hybrid_overall);
    add_metric(out, "", "negatives_proved_rate", r->negatives_proved_rate);
    append(out->json, sizeof out->json, ", \"negatives\": %d, \"negatives_proved_rate\": %.6g, ",
           options->negatives, r->negatives_proved_rate);
    side_json(out->json, sizeof out->json, "kge", &r->kge_overall, ", ");
    side_json(out->json, sizeof out->json, "hybrid", &r->hybrid_overall, "");
    append(out->text, sizeof out->text,
           "with the KGE model: corruptions proved %.1f%%; hybrid = %g log sigmoid(kge) + %s\n",
           100.0 * r->negatives_proved_rate, options->kge_weight,
           options->proof_term == SK_RANK_PROOF_LOGPROB ? "w_rl log p(proof)" : "a fixed proof term");
    const char *scorers[3] = {"rl", "kge", "hybrid"};
    const sk_rank_metrics *overall[3] = {&r->overall, &r->kge_overall, &r->hybrid_overall};
    for (int k = 0; k < 3; k++)
        append(out->text, sizeof out->text, "%-8s %7.3f %7.3f %7.3f %7.3f\n", scorers[k],
               overall[k]->mrr, overall[k]->hits1, overall[k]->hits3, overall[k]->hits10);
}

static sk_status ranking_run(const sk_env_def *env, const sk_config *env_cfg,
                             const sk_config *options, const sk_actor *actor,
                             const sk_parallel *parallel, sk_progress_fn progress,
                             void *progress_user, sk_env_report *out) {
    memset(out, 0, sizeof *out);
    sk_rank_options ranking;
    sk_status status = read_options(options, &ranking);
    if (status != SK_OK) return status;
    ranking.progress = progress;
    ranking.progress_user = progress_user;
    /* eval.kge: a model of `skinner kge train` for the KGE-only and hybrid figures */
    const char *kge_path = sk_cfg_string(options, "eval.kge", NULL);
    sk_kge kge;
    if (kge_path && kge_path[0]) {
        char path[4200];
        struct stat st;
        if (stat(kge_path, &st) == 0 && S_ISDIR(st.st_mode))
            snprintf(path, sizeof path, "%s/kge.safetensors", kge_path);
        else snprintf(path, sizeof path, "%s", kge_path);
        status = sk_kge_load(&kge, path, NULL, 0);
        if (status != SK_OK) return status;
        ranking.kge = &kge;
    }
    sk_rank_result r;
    status = sk_rank_run(env, env_cfg, actor, parallel, &ranking, &r);
    if (status == SK_OK) report(env, &ranking, &r, out);
    if (ranking.kge) sk_kge_free(&kge);
    return status;
}

const sk_env_evaluation sk_prover_ranking = {
    .name = "ranking",
    .description = "MRR and Hits@1/3/10 of each query of a split among its filtered corruptions",
    .run = ranking_run,
};
