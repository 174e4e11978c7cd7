/*
 * The learner: the minibatch update (epochs x minibatches of PPO gradient
 * steps over the rollout), the governor that rolls back numerically bad
 * updates, and the normalisation statistics. Every sum over workers goes
 * through sk_comm in worker order.
 */
#include "../core/rng.h"
#include "../io/live.h"
#include "../nn/nn.h"
#include "../vec/pool.h"
#include "events.h"
#include "algo.h"

#include "skinner/vec.h"

#include <math.h>
#include <string.h>

bool sk_all_finite(const float *x, size_t n) {
    float acc = 0.0f;
    for (size_t i = 0; i < n; i++) acc += x[i] * 0.0f; /* NaN or inf poisons the sum */
    return acc == 0.0f;
}

void sk_governor_save(sk_learner *ln) {
    size_t bytes = ln->policy.num_params * sizeof(float);
    memcpy(ln->governor.params, ln->params, bytes);
    memcpy(ln->governor.adam_m, ln->adam_m, bytes);
    memcpy(ln->governor.adam_v, ln->adam_v, bytes);
    ln->governor.adam_step = ln->adam_step;
}

void sk_learner_ema_update(sk_learner *ln, double decay, int64_t update) {
    if (decay <= 0.0) return;
    /* bias-corrected (Adam's correction, as a rate): update 1 takes the weights whole, so a
     * short run's average holds its own updates, not the initial weights */
    const float rate = (float)((1.0 - decay) / (1.0 - pow(decay, (double)update)));
    float *restrict ema = ln->ema;
    const float *restrict params = ln->params;
    for (size_t i = 0; i < ln->policy.num_params; i++) ema[i] += rate * (params[i] - ema[i]);
}

static void governor_restore(sk_learner *ln) {
    size_t bytes = ln->policy.num_params * sizeof(float);
    memcpy(ln->params, ln->governor.params, bytes);
    memcpy(ln->adam_m, ln->governor.adam_m, bytes);
    memcpy(ln->adam_v, ln->governor.adam_v, bytes);
    ln->adam_step = ln->governor.adam_step;
}

sk_status sk_governor_trouble(sk_trainer *tr, const char *what) {
    sk_governor *g = &tr->learner.governor;
    int slots = g->max_anomalies + 1;
    g->recent[g->anomalies % slots] = tr->progress.update;
    g->anomalies++;
    snprintf(g->last_event, sizeof g->last_event, "update %lld: %s; restored the last good weights",
             (long long)tr->progress.update, what);
    governor_restore(&tr->learner);
    sk_log(1, "governor: %s", g->last_event);
    sk_events_anomaly(tr, g->last_event);
    sk_live_governor(tr->out.live, true, g->last_event);
    if (g->anomalies >= slots) {
        int64_t oldest = g->recent[g->anomalies % slots]; /* the slot written next */
        if (tr->progress.update - oldest < g->window)
            return sk_fail(SK_ERR_NUMERIC,
                           "training diverged: %d anomalies within %d updates (last: %s); the "
                           "last good policy is kept; the env's outputs were checked every step "
                           "(finite, inside its declared space), so the learner diverged: try a "
                           "lower ppo.learning_rate or ppo.max_grad_norm",
                           slots, g->window, what);
    }
    return SK_OK;
}

/* Merges every worker's accumulation (of every rank, through sk_comm) into
 * stats in (rank, worker) order, and clears them; `which` picks the
 * worker's accumulator. */
static void merge_moments(sk_trainer *tr, sk_running_stats *stats,
                          sk_welford *(*which)(sk_worker *wk)) {
    sk_learner *ln = &tr->learner;
    int W = tr->num_workers, Wmax = tr->layout.max_workers, size = stats->size;
    size_t part = 1 + 2 * (size_t)size;
    for (int w = 0; w < W; w++) {
        sk_welford *acc = which(&tr->workers[w]);
        sk_welford_pack(acc, ln->moments + (size_t)w * part);
        sk_welford_clear(acc);
    }
    /* every rank sends max_workers parts; those past a rank's own count are padding */
    sk_comm_allgather_f64(&tr->comm, ln->moments, (size_t)Wmax * part, ln->moments_all);
    for (int r = 0; r < tr->comm.size; r++)
        for (int w = 0; w < tr->layout.rank_workers[r]; w++) {
            const double *p = ln->moments_all + ((size_t)r * (size_t)Wmax + (size_t)w) * part;
            sk_running_stats_merge_moments(stats, p[0], p + 1, p + 1 + size);
        }
}

static sk_welford *obs_acc_of(sk_worker *wk) { return &wk->obs_acc; }
static sk_welford *return_acc_of(sk_worker *wk) { return &wk->return_acc; }

void sk_learner_merge_statistics(sk_trainer *tr) {
    sk_learner *ln = &tr->learner;
    if (tr->s.norm_obs) {
        merge_moments(tr, &ln->obs_stats, obs_acc_of);
        sk_norm_map_update(&ln->obs_map, &ln->obs_stats, true);
    }
    if (tr->s.norm_reward) {
        merge_moments(tr, &ln->return_stats, return_acc_of);
        sk_norm_map_update(&ln->reward_map, &ln->return_stats, false);
    }
}

/* Normalises the minibatch's advantages in place (mean 0, unbiased std 1).
 * In exact mode every rank of a distributed run holds the whole rollout
 * (exchanged after it), so each normalises the whole minibatch itself, as one
 * process does. In scale mode each rank normalises its own minibatch (its
 * share of the run's) over its own rows: a per-rank mean and std, not the
 * global minibatch's. */
static void normalize_advantages(float *adv, int n) {
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += adv[i];
    double mean = sum / (double)n;
    double spread = 0.0;
    for (int i = 0; i < n; i++) spread += (adv[i] - mean) * (adv[i] - mean);
    double count = n;
    double std = count > 1 ? sqrt(spread / (count - 1)) : 0.0;
    for (int i = 0; i < n; i++) adv[i] = (float)((adv[i] - mean) / (std + 1e-8));
}

/* Rollout row (t, env) of step t of sequence s (see sk_learner). */
static size_t sequence_row(const sk_rollout *ro, int32_t s, int t) {
    int N = ro->num_rows, L = ro->bptt_horizon;
    return ((size_t)(s / N) * (size_t)L + (size_t)t) * (size_t)N + (size_t)(s % N);
}

/* Gathers the states entering the block's sequences and where their
 * episodes start (an ended step cuts the state before the next one). */
static void gather_core(const sk_rollout *ro, sk_worker *wk, const int32_t *sequences, int count) {
    size_t S = (size_t)ro->state_size, N = (size_t)ro->num_rows;
    for (int j = 0; j < count; j++) {
        size_t s = (size_t)sequences[j];
        memcpy(wk->mb_state0 + (size_t)j * S, ro->chunk_state + s * S, S * sizeof(float));
        for (int t = 0; t < ro->bptt_horizon; t++) {
            size_t k = sequence_row(ro, sequences[j], t);
            wk->mb_resets[(size_t)t * (size_t)count + (size_t)j] =
                t > 0 && (ro->terminated[k - N] || ro->truncated[k - N]);
        }
    }
}

/* The advantage of sample k: a rollout row's, or (k >= T x N) a resolved waiting action's. */
static float sample_advantage(const sk_rollout *ro, size_t k) {
    size_t rows = (size_t)ro->horizon * (size_t)ro->num_rows;
    return k < rows ? ro->advantages[k] : ro->pending.resolved_adv[k - rows];
}

/* One minibatch, as its threads' job reads it: sequences perm[start..start + sequences - 1]
 * of the shuffle, their loss averaged over `samples` rows. */
typedef struct minibatch {
    sk_trainer *tr;
    int start, sequences, samples;
} minibatch;

/* Thread w's block of the dispatched minibatch (on worker w's scratch): gathers its sequences' rows,
 * time-major (row t * count + j: step t of its j-th sequence), and adds their
 * loss gradient to its own gradient buffer. */
static void minibatch_job(void *ctx, int w, int num_workers) {
    const minibatch *mb = ctx;
    sk_trainer *tr = mb->tr;
    const sk_rollout *ro = &tr->rollout;
    sk_learner *ln = &tr->learner;
    sk_worker *wk = &tr->workers[w];
    int O = tr->obs_size, H = tr->num_heads, D = tr->action_dim, M = tr->mask_size;
    int L = ro->bptt_horizon;
    int lo, hi;
    (void)num_workers;
    /* exact: the block of the run's worker offset + w of all ranks' workers; scale: block w
     * of this rank's own minibatch */
    sk_slice(mb->sequences, tr->layout.minibatch_part_offset + w,
             tr->layout.minibatch_parts, &lo, &hi);
    memset(wk->grads, 0, ln->policy.num_params * sizeof(float));
    memset(&wk->sums, 0, sizeof wk->sums);
    int count = hi - lo, rows = count * L;
    if (count == 0) return;
    const int32_t *sequences = ln->perm + mb->start + lo;
    if (ro->state_size) gather_core(ro, wk, sequences, count);
    /* policy.per_role (no core: a sequence is one row): the block gathered role by role,
     * role p's rows from role_start[p] in the block's order, for that role's copy of the
     * networks: counted by role, then each row placed in one pass */
    int roles = sk_policy_roles(&ln->policy), role_start[SK_MAX_POLICY_ROLES + 1] = {0};
    int next[SK_MAX_POLICY_ROLES] = {0}; /* where role p's next row goes */
    for (int r = 0; roles > 1 && r < rows; r++) /* row k's agent: k % roles */
        role_start[sequence_row(ro, sequences[r % count], r / count) % (size_t)roles + 1]++;
    role_start[roles] = rows;
    for (int p = 1; p < roles; p++) next[p] = role_start[p] += role_start[p - 1];
    size_t rollout_rows = (size_t)ro->horizon * (size_t)ro->num_rows;
    sk_sample_store gathered = {wk->mb_obs, NULL, wk->mb_masks, wk->mb_actions, wk->mb_actions_f,
                                wk->mb_logp};
    sk_sample_store rollout = sk_rollout_samples(ro), ready = sk_ready_samples(ro);
    for (int r = 0; r < rows; r++) {
        int t = r / count, j = r % count;
        size_t k = sequence_row(ro, sequences[j], t);
        size_t a = (size_t)next[roles > 1 ? k % (size_t)roles : 0]++;
        wk->mb_adv[a] = ln->mb_adv_norm[(size_t)(lo + j) * (size_t)L + (size_t)t];
        if (k >= rollout_rows) { /* a multi-agent action resolved from an earlier rollout */
            size_t i = k - rollout_rows;
            sk_copy_sample(ro, gathered, a, ready, i);
            wk->mb_returns[a] = ro->pending.resolved_ret[i];
            wk->mb_values[a] = ro->pending.resolved_value[i];
        } else {
            sk_copy_sample(ro, gathered, a, rollout, k);
            wk->mb_returns[a] = ro->returns[k];
            wk->mb_values[a] = ro->values[k];
        }
    }
    wk->gather_visits += rows;
    sk_ppo_loss_config loss = {
        .clip_coef = (float)tr->s.clip_coef,
        .ent_coef = (float)tr->s.ent_coef,
        .vf_coef = (float)tr->s.vf_coef,
        .clip_vloss = tr->s.clip_vloss,
    };
    size_t P1 = sk_policy_role_params(&ln->policy);
    for (int pass = 0; pass < roles; pass++) {
        size_t from = (size_t)role_start[pass];
        int n = role_start[pass + 1] - role_start[pass];
        if (n == 0) continue;
        sk_ppo_rows block = {
            .rows = n,
            .seq_len = L,
            .state0 = wk->mb_state0,
            .resets = wk->mb_resets,
            .obs = wk->mb_obs + from * O,
            .actions = H ? wk->mb_actions + from * H : NULL,
            .actions_continuous = D ? wk->mb_actions_f + from * D : NULL,
            .masks = M ? wk->mb_masks + from * M : NULL,
            .old_logp = wk->mb_logp + from,
            .advantages = wk->mb_adv + from,
            .returns = wk->mb_returns + from,
            .old_values = wk->mb_values + from,
        };
        sk_ppo_loss_grad(&ln->policy, ln->params + (size_t)pass * P1, wk->grads + (size_t)pass * P1,
                         &wk->work, &block, 1.0f / (float)mb->samples, &loss, &wk->sums);
    }
}

/* The parameters are cut among the workers at multiples of this many floats (a 64-byte line
 * of 16: each share's Adam takes the vector path over every element, its tail in the last). */
enum { PARAM_ALIGN = 16 };

/* The workers' minibatch gradients summed into ln->grads, worker w its share of the parameters,
 * each element in worker order as one sk_comm_sum_workers_f32 over them all adds it (was a
 * serial pass, the other thread spinning meanwhile: on HalfCheetah's 128-row minibatches the
 * sum and Adam were a third of each minibatch's time on two threads). */
static void sum_grads_job(void *ctx, int w, int workers) {
    sk_trainer *tr = ctx;
    sk_learner *ln = &tr->learner;
    size_t lo, hi;
    sk_slice_aligned(0, ln->policy.num_params, PARAM_ALIGN, w, workers, &lo, &hi);
    if (hi == lo) return;
    const float *parts[SK_MAX_WORKERS];
    for (int k = 0; k < tr->num_threads; k++) parts[k] = tr->workers[k].grads + lo;
    sk_comm_sum_workers_f32(ln->grads + lo, parts, tr->num_threads, hi - lo);
}

typedef struct {
    sk_learner *ln;
    float clip_scale; /* sk_clip_grad_scale's factor (1: none) */
    float lr;
    sk_adam adam;
    int64_t step;
} apply_job;

/* The clipped gradient's Adam step, worker w on its share of the parameters: elementwise, so
 * the same bits as one sk_clip_grad_norm and one sk_adam_update over them all. */
static void apply_grads_job(void *ctx, int w, int workers) {
    const apply_job *job = ctx;
    sk_learner *ln = job->ln;
    size_t lo, hi;
    sk_slice_aligned(0, ln->policy.num_params, PARAM_ALIGN, w, workers, &lo, &hi);
    if (hi == lo) return;
    sk_scale_grads(ln->grads + lo, hi - lo, job->clip_scale);
    sk_adam_update(ln->params + lo, ln->grads + lo, ln->adam_m + lo, ln->adam_v + lo, hi - lo,
                   job->lr, job->adam, job->step);
}

/* The minibatch gradient and loss sums over all workers (then all ranks),
 * in order, into ln->grads and *sums. */
static void reduce_minibatch(sk_trainer *tr, sk_ppo_loss_sums *sums) {
    sk_learner *ln = &tr->learner;
    size_t P = ln->policy.num_params;
    sk_trainer_run_threads(tr, sum_grads_job, tr); /* one worker: inline */
    double total[5] = {0};
    for (int w = 0; w < tr->num_threads; w++) {
        const sk_ppo_loss_sums *s = &tr->workers[w].sums;
        double part[5] = {s->policy_loss, s->value_loss, s->entropy, s->approx_kl, s->clip_fraction};
        for (int k = 0; k < 5; k++) total[k] = w == 0 ? part[k] : total[k] + part[k];
    }
    /* one collective for both: in rank order (exact, as threads add), or in the tree's
     * fixed order (scale: log2 K latencies; repeats for a given ranks x threads) */
    if (tr->s.comm_scale) sk_comm_tree_allreduce_f32_f64(&tr->comm, ln->grads, P, total, 5);
    else sk_comm_allreduce_f32_f64(&tr->comm, ln->grads, P, total, 5);
    *sums = (sk_ppo_loss_sums){.policy_loss = total[0], .value_loss = total[1],
                               .entropy = total[2], .approx_kl = total[3],
                               .clip_fraction = total[4]};
}

/* Shuffles perm's first count entries in place (Fisher-Yates). */
static void shuffle_first(sk_learner *ln, int count) {
    for (int i = count - 1; i > 0; i--) {
        int j = (int)sk_rng_below(&ln->rng, (uint32_t)(i + 1));
        int32_t tmp = ln->perm[i];
        ln->perm[i] = ln->perm[j];
        ln->perm[j] = tmp;
    }
}

static void shuffle(sk_learner *ln, int batch_size) {
    for (int i = 0; i < batch_size; i++) ln->perm[i] = i;
    shuffle_first(ln, batch_size);
}

/* A multi-agent env's samples: the rollout rows whose agent acted, in row
 * order (the first of each shuffle), then the rows whose action waited from
 * an earlier rollout and resolved in this one (T x N + row), into perm; how many. */
static int gather_active(const sk_rollout *ro, int32_t *perm) {
    int count = 0, rows = ro->horizon * ro->num_rows;
    for (int k = 0; k < rows; k++)
        if (ro->active[k]) perm[count++] = k;
    for (int i = 0; i < ro->num_rows; i++)
        if (ro->pending.resolved[i]) perm[count++] = rows + i;
    return count;
}

void sk_learner_update(sk_trainer *tr, float lr, sk_update_stats *stats, const char **anomaly) {
    sk_learner *ln = &tr->learner;
    size_t P = ln->policy.num_params;
    sk_adam adam = {0.9f, 0.999f, (float)tr->s.adam_eps};
    sk_ppo_loss_sums total = {0};
    int steps_taken = 0;
    double last_kl = 0.0;
    int L = tr->rollout.bptt_horizon, S = ln->num_sequences, MS = ln->minibatch_sequences;
    /* a multi-agent env's minibatches split its active samples (L = 1: no core) into
     * ppo.num_minibatches near-equal parts, whose sizes vary from update to update */
    bool multi = tr->rollout.num_agents > 1;
    int samples = multi ? gather_active(&tr->rollout, ln->perm) : S;
    int num_minibatches = multi ? tr->s.num_minibatches : (S + MS - 1) / MS;
    double rows_taken = 0.0;
    if (tr->s.comm_scale) /* each rank's own shuffle, drawn afresh each update: a resume needs no stream */
        ln->rng = sk_rng_seed(tr->s.seed ^ 0x5ca1e5417ULL,
                              (uint64_t)tr->progress.update * SK_MAX_COMM_RANKS + (uint64_t)tr->comm.rank);
    for (int epoch = 0; epoch < tr->s.update_epochs; epoch++) {
        if (multi) shuffle_first(ln, samples);
        else shuffle(ln, S);
        for (int m = 0; m < num_minibatches; m++) {
            int start = multi ? (int)((int64_t)m * samples / num_minibatches) : m * MS;
            if (multi) {
                MS = (int)((int64_t)(m + 1) * samples / num_minibatches) - start;
                if (MS == 0) continue;
            }
            /* the minibatch's rows: a multi-agent one's samples (L = 1), else every
             * minibatch's T x N / ppo.num_minibatches */
            minibatch job = {tr, start, MS, multi ? MS : tr->minibatch_size};
            /* sequence-major: sequence j's step t at j * L + t */
            for (int j = 0; j < MS; j++)
                for (int t = 0; t < L; t++)
                    ln->mb_adv_norm[(size_t)j * (size_t)L + (size_t)t] = sample_advantage(
                        &tr->rollout, sequence_row(&tr->rollout, ln->perm[start + j], t));
            if (tr->s.norm_adv) normalize_advantages(ln->mb_adv_norm, MS * L);
            sk_trainer_run_threads(tr, minibatch_job, &job);
            sk_ppo_loss_sums sums;
            reduce_minibatch(tr, &sums);
            bool last = epoch == tr->s.update_epochs - 1 && m == num_minibatches - 1;
            if (last && tr->s.grad_stats_every > 0 && (tr->progress.update % tr->s.grad_stats_every) == 0)
                for (int t = 0; t < ln->policy.num_tensors; t++) {
                    const sk_tensor_info *info = &ln->policy.tensors[t];
                    ln->grad_norms[t] = sk_grad_norm(ln->grads + info->offset,
                                                     (size_t)info->rows * (size_t)info->cols);
                }
            double norm = sk_grad_norm(ln->grads, P);
            if (!isfinite(norm) || !isfinite(sums.policy_loss) || !isfinite(sums.value_loss)) {
                *anomaly = "non-finite loss or gradient";
                break;
            }
            apply_job apply = {ln, sk_clip_grad_scale(norm, tr->s.max_grad_norm), lr, adam,
                               ++ln->adam_step};
            sk_trainer_run_threads(tr, apply_grads_job, &apply);
            total.policy_loss += sums.policy_loss;
            total.value_loss += sums.value_loss;
            total.entropy += sums.entropy;
            total.approx_kl += sums.approx_kl;
            total.clip_fraction += sums.clip_fraction;
            last_kl = sums.approx_kl / job.samples;
            rows_taken += job.samples;
            steps_taken++;
        }
        if (*anomaly || (tr->s.target_kl > 0.0 && last_kl > tr->s.target_kl)) break;
    }
    if (*anomaly) return;
    if (multi && rows_taken == 0) { /* no agent acted in the rollout: no step, no losses */
        stats->policy_loss = stats->value_loss = stats->entropy = NAN;
        stats->approx_kl = stats->clip_fraction = NAN;
        return;
    }
    double rows = multi ? rows_taken : (double)steps_taken * tr->minibatch_size;
    stats->policy_loss = total.policy_loss / rows;
    stats->value_loss = total.value_loss / rows;
    stats->entropy = total.entropy / rows;
    stats->approx_kl = total.approx_kl / rows;
    stats->clip_fraction = total.clip_fraction / rows;
    if (!(stats->approx_kl <= ln->governor.max_kl)) *anomaly = "approx KL above governor.max_kl";
    else if (!sk_all_finite(ln->params, P)) *anomaly = "non-finite weights after the update";
}

/* ---- PPO's row of the learners' table (algo.h) ---- */

/* Over the samples: every row, or a multi-agent env's active ones (mask). */
static double explained_variance(const float *predicted, const float *target, const uint8_t *mask,
                                 size_t n) {
    double mean_t = 0.0, mean_r = 0.0, count = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (mask && !mask[i]) continue;
        mean_t += target[i];
        mean_r += target[i] - predicted[i];
        count++;
    }
    if (count == 0.0) return NAN;
    mean_t /= count;
    mean_r /= count;
    double var_t = 0.0, var_r = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (mask && !mask[i]) continue;
        double dt = target[i] - mean_t, dr = (target[i] - predicted[i]) - mean_r;
        var_t += dt * dt;
        var_r += dr * dr;
    }
    return var_t == 0.0 ? NAN : 1.0 - var_r / var_t;
}

/* The policy's actions of the rows (sampled from the actor) and the critic's values: of
 * the learner's own rows whose agent acts, when another player acts for some (self-play's
 * pool members, whose rows' values and logp are no sample's) or some agents wait (a
 * turn-based env's), with the stream as if it sampled all. A left-out row keeps what its
 * arrays held: nothing reads it (sk_rollout_learner_rows). */
static void ppo_act(sk_trainer *tr, sk_worker *wk, int t, const float *obs_t,
                    const uint8_t *masks_t, int B) {
    sk_rollout *ro = &tr->rollout;
    const sk_learner *ln = &tr->learner;
    size_t at = (size_t)t * (size_t)ro->num_rows + (size_t)wk->lo;
    bool some = tr->hooks || ro->num_agents > 1; /* rows may be left out */
    int count = some ? sk_rollout_learner_rows(tr, wk, t, wk->role.rows) : B;
    if (count < B) {
        sk_policy_act_rows(&ln->policy, ln->params, obs_t, masks_t, wk->role.rows, count, B,
                           &wk->rng, false, ro->actions + at * (size_t)ro->num_heads,
                           ro->actions_f + at * (size_t)ro->action_dim, ro->logp + at,
                           ro->values + at, &wk->work, &wk->role);
        return;
    }
    sk_policy_forward_both(&ln->policy, ln->params, obs_t, B, &wk->work);
    sk_policy_sample(&ln->policy, ln->params, wk->work.out[SK_NET_ACTOR], masks_t, B, &wk->rng,
                     false, ro->actions + at * (size_t)ro->num_heads,
                     ro->actions_f + at * (size_t)ro->action_dim, ro->logp + at);
    memcpy(ro->values + at, wk->work.out[SK_NET_CRITIC], (size_t)B * sizeof(float));
}

/* The statistics the workers saw, then the update at this iteration's learning rate. */
static sk_status ppo_learn(sk_trainer *tr, sk_update_stats *st, const char **anomaly) {
    int64_t num_updates = SK_MAX(1, tr->s.total_steps / tr->batch_size);
    /* ppo.anneal_lr: linearly to 0 over the run, from the rate of the iteration's start */
    double frac = 1.0 - (double)(tr->progress.update - 1) / (double)num_updates;
    float lr = (float)(tr->s.anneal_lr ? frac * tr->s.learning_rate : tr->s.learning_rate);
    sk_learner_merge_statistics(tr);
    sk_learner_update(tr, lr, st, anomaly);
    st->explained_variance = /* scale mode: over this rank's rows */
        explained_variance(tr->rollout.values, tr->rollout.returns,
                           tr->rollout.num_agents > 1 ? tr->rollout.active : NULL,
                           (size_t)tr->rollout.num_rows * (size_t)tr->s.horizon);
    st->learning_rate = lr;
    return SK_OK;
}

static double ppo_flops_per_step(const sk_trainer *tr) {
    return sk_policy_forward_flops(&tr->learner.policy) * (1.0 + 3.0 * tr->s.update_epochs);
}

const sk_algo sk_algo_ppo = {
    .name = "ppo",
    /* ppo.* is read by every run (sk_settings_resolve): only sk_config_check_learner_keys refuses it */
    .sections = (const char *const[]){"ppo", NULL},
    .act = ppo_act,
    .rollout_values = true,
    .grad_norms = true,
    .governed = true,
    .learn = ppo_learn,
    .flops_per_step = ppo_flops_per_step,
};
