/* SAC's steps (src/train/sac_core.h): the critic's, the actor's and alpha's, each a pass over
 * the row blocks and then the blocks' gradients summed and Adam, on the sac's workers
 * (src/train/sac_internal.h). */
#include "../core/core.h"
#include "../core/rng.h"
#include "sac_internal.h"
#include "../vec/pool.h"

#include <math.h>
#include <string.h>

/* Adam and the gradient sums run on slices of the parameters that start at multiples of this
 * from the range's start, so that every element sees the same kernel path (vector or tail)
 * whatever the number of workers. */
enum { SLICE_ALIGN = 64 };
/* apply_slice's piece: a multiple of SLICE_ALIGN, so that the pieces keep the kernel paths */
enum { APPLY_PIECE = 32 * SLICE_ALIGN };

typedef enum { PHASE_CRITIC, PHASE_ACTOR, PHASE_ALPHA, PHASE_APPLY } phase;

typedef struct sac_job {
    sk_sac *sac;
    phase phase;
    /* the block phases */
    const sk_sac_batch *batch; /* critic */
    const float *obs;          /* actor, alpha */
    const float *noise;        /* (rows, act_dim) */
    int rows;
    float alpha;
    /* PHASE_APPLY: sum the blocks' gradients over params [begin, end), then Adam when lr > 0 */
    size_t begin, end;
    float lr;
    float *adam_m, *adam_v;
    int64_t step;
    bool targets; /* and then the targets' Polyak step over the same slice (the Q networks') */
    /* PHASE_CRITIC: NULL, or the update's noise for each block to draw its own rows of */
    const struct noise_plan *plan;
} sac_job;

/* sk_sac_update_rng's draws, in its order (next's values, then each actor step's actor and
 * alpha values) from state `start`, each normal two draws of the stream: a block draws the
 * values of its own rows by skipping to them (sk_rng_skip), the same numbers a serial fill
 * gives, on the workers. */
typedef struct noise_plan {
    uint64_t start;
    size_t slice;      /* values a segment: rows x act_dim */
    int segments;      /* 1 (next), or 1 + steps x per */
    int per;           /* segments an actor step: 1 (actor), or 2 (actor, alpha) */
    float *next, *actor, *alpha; /* (steps, slice) each */
} noise_plan;

/* Segment g of the order: next's, then actor step k's actor values and (per 2) alpha's. */
static float *segment(const noise_plan *plan, int g) {
    if (g == 0) return plan->next;
    int k = (g - 1) / plan->per;
    return ((g - 1) % plan->per ? plan->alpha : plan->actor) + (size_t)k * plan->slice;
}

/* Rows [lo, lo + n)'s values of every segment of the plan (act_dim a row). */
static void draw_rows(const noise_plan *plan, int lo, int n, int act_dim) {
    size_t from = (size_t)lo * (size_t)act_dim, count = (size_t)n * (size_t)act_dim;
    for (int g = 0; g < plan->segments; g++) {
        uint64_t state = plan->start;
        sk_rng_skip(&state, 2 * ((size_t)g * plan->slice + from));
        float *x = segment(plan, g) + from;
        for (size_t i = 0; i < count; i++) x[i] = (float)sk_rng_normal(&state);
    }
}

/* block->q_in = obs || actions, row by row. */
static void join_inputs(const sk_sac *sac, sk_sac_block *block, const float *obs,
                        const float *actions, int rows) {
    size_t O = (size_t)sac->config.obs_size, A = (size_t)sac->config.act_dim, width = O + A;
    for (int row = 0; row < rows; row++) {
        memcpy(block->q_in + (size_t)row * width, obs + (size_t)row * O, O * sizeof(float));
        memcpy(block->q_in + (size_t)row * width + O, actions + (size_t)row * A, A * sizeof(float));
    }
}

/* Rows [lo, lo + n) of the batch: the target, both Q losses and their gradients (divided by
 * all the batch's rows, total) into the block's gradient. */
static void critic_block(sk_sac *sac, sk_sac_block *block, const sac_job *job, int lo, int n) {
    const sk_sac_config *c = &sac->config;
    const sk_sac_batch *batch = job->batch;
    size_t O = (size_t)c->obs_size, A = (size_t)c->act_dim;
    const float *obs = batch->obs + (size_t)lo * O, *next_obs = batch->next_obs + (size_t)lo * O;
    const float *rewards = batch->rewards + lo, *terminated = batch->terminated + lo;
    memset(block->grads + sac->q_base[0], 0, sac->q_floats * sizeof(float));
    memset(block->sums, 0, sizeof block->sums);
    if (n == 0) return;
    if (job->plan) draw_rows(job->plan, lo, n, c->act_dim);
    /* the target: the next actions from the current actor, the target networks' values */
    sk_sac_actor_forward(sac, block, next_obs, n, job->noise + (size_t)lo * A);
    join_inputs(sac, block, next_obs, block->actions, n);
    for (int k = 0; k < 2; k++)
        sk_sac_net_forward(&sac->qf[k], sac->targets + sac->target_base[k], sac->wt_targets[k],
                           block->q_in, n, block->q_acts[k], block->q_out[k]);
    for (int i = 0; i < n; i++) {
        float next_v = fminf(block->q_out[0][i], block->q_out[1][i]) - job->alpha * block->logp[i];
        block->target_q[i] = rewards[i] + (1.0f - terminated[i]) * c->gamma * next_v;
    }
    /* both Q networks on the batch's actions, one after the other in the same activations */
    join_inputs(sac, block, obs, batch->actions + (size_t)lo * A, n);
    for (int k = 0; k < 2; k++) {
        sk_sac_net_forward(&sac->qf[k], sac->params + sac->q_base[k], sac->wt_q[k], block->q_in,
                           n, block->q_acts[0], block->q_out[0]);
        double loss = 0.0, q_sum = 0.0;
        for (int i = 0; i < n; i++) {
            float diff = block->q_out[0][i] - block->target_q[i];
            loss += (double)diff * diff;
            q_sum += block->q_out[0][i];
            block->dq[0][i] = 2.0f * diff / (float)job->rows; /* d mean(diff^2) */
        }
        block->sums[SK_SAC_SUM_QF1_LOSS + k] = loss;
        block->sums[SK_SAC_SUM_QF1 + k] = q_sum;
        sk_sac_net_backward(&sac->qf[k], sac->params + sac->q_base[k],
                            block->grads + sac->q_base[k], block->q_in, block->q_acts[0],
                            block->dq[0], NULL, n, block->scratch);
    }
}

/* Rows [lo, lo + n) of obs: the actor's loss mean(alpha logp - min(q1, q2)) and its gradient
 * into the block's. The min's gradient goes to the smaller Q, halved between them where they
 * tie (torch.min's); through the Q networks only to their action inputs (their weights stay). */
static void actor_block(sk_sac *sac, sk_sac_block *block, const sac_job *job, int lo, int n) {
    const sk_sac_config *c = &sac->config;
    size_t O = (size_t)c->obs_size, A = (size_t)c->act_dim, width = O + A;
    size_t actor_floats = sac->q_base[0] - sac->actor_base;
    const float *obs = job->obs + (size_t)lo * O, *noise = job->noise + (size_t)lo * A;
    memset(block->grads + sac->actor_base, 0, actor_floats * sizeof(float));
    memset(block->sums, 0, sizeof block->sums);
    if (n == 0) return;
    sk_sac_actor_forward(sac, block, obs, n, noise);
    join_inputs(sac, block, obs, block->actions, n);
    for (int k = 0; k < 2; k++)
        sk_sac_net_forward(&sac->qf[k], sac->params + sac->q_base[k], sac->wt_q[k], block->q_in,
                           n, block->q_acts[k], block->q_out[k]);
    double loss = 0.0, logp_sum = 0.0;
    float inv_rows = 1.0f / (float)job->rows;
    for (int i = 0; i < n; i++) {
        float q1 = block->q_out[0][i], q2 = block->q_out[1][i];
        loss += (double)(job->alpha * block->logp[i] - fminf(q1, q2));
        logp_sum += block->logp[i];
        float share1 = q1 < q2 ? 1.0f : (q1 > q2 ? 0.0f : 0.5f);
        block->dq[0][i] = -inv_rows * share1;
        block->dq[1][i] = -inv_rows * (1.0f - share1);
        block->dlogp[i] = job->alpha * inv_rows;
    }
    block->sums[SK_SAC_SUM_ACTOR_LOSS] = loss;
    block->sums[SK_SAC_SUM_LOGP] = logp_sum;
    memset(block->dq_in, 0, (size_t)n * width * sizeof(float));
    for (int k = 0; k < 2; k++)
        sk_sac_net_backward(&sac->qf[k], sac->params + sac->q_base[k], NULL, block->q_in,
                            block->q_acts[k], block->dq[k], block->dq_in, n, block->scratch);
    for (int i = 0; i < n; i++)
        memcpy(block->daction + (size_t)i * A, block->dq_in + (size_t)i * width + O,
               A * sizeof(float));
    memset(block->dhead, 0, 2 * (size_t)n * A * sizeof(float));
    sk_sac_squash_backward(block->head, noise, n, c->act_dim, sac->scale, block->squashed,
                           block->log_std_tanh, block->daction, block->dlogp, block->dhead);
    sk_sac_net_backward(&sac->actor, sac->params + sac->actor_base, block->grads + sac->actor_base,
                        obs, block->actor_acts, block->dhead, NULL, n, block->scratch);
}

/* Rows [lo, lo + n) of obs: the sum of logp + target_entropy over fresh actions. */
static void alpha_block(sk_sac *sac, sk_sac_block *block, const sac_job *job, int lo, int n) {
    size_t O = (size_t)sac->config.obs_size, A = (size_t)sac->config.act_dim;
    memset(block->sums, 0, sizeof block->sums);
    if (n == 0) return;
    sk_sac_actor_forward(sac, block, job->obs + (size_t)lo * O, n, job->noise + (size_t)lo * A);
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += (double)(block->logp[i] + sac->config.target_entropy);
    block->sums[SK_SAC_SUM_ALPHA] = sum;
}

/* target = tau * online + (1 - tau) * target over n floats. */
static void polyak(float *target, const float *online, size_t n, float tau) {
    float keep = 1.0f - tau;
    for (size_t i = 0; i < n; i++) target[i] = tau * online[i] + keep * target[i];
}

/* This worker's slice of [begin, end): the blocks' gradients summed in block order, then Adam. */
static void apply_slice(const sac_job *job, int worker, int workers) {
    sk_sac *sac = job->sac;
    size_t lo, hi;
    sk_slice_aligned(job->begin, job->end, SLICE_ALIGN, worker, workers, &lo, &hi);
    /* a piece at a time, each pass over it while the last left it in L1 (a whole slice of the
     * Q networks is 290 KB an array; its passes went to L2 and beyond) */
    for (size_t at = lo; at < hi; at += APPLY_PIECE) {
        size_t n = hi - at < APPLY_PIECE ? hi - at : APPLY_PIECE;
        float *grads = sac->grads + at;
        const float *first = sac->blocks[0].grads + at;
        if (sac->config.row_blocks == 1) {
            memcpy(grads, first, n * sizeof(float));
        } else { /* the first two blocks in one pass, then the rest, in block order */
            const float *second = sac->blocks[1].grads + at;
            for (size_t i = 0; i < n; i++) grads[i] = first[i] + second[i];
        }
        for (int b = 2; b < sac->config.row_blocks; b++) {
            const float *part = sac->blocks[b].grads + at;
            for (size_t i = 0; i < n; i++) grads[i] += part[i];
        }
        if (job->lr > 0.0f)
            sk_adam_update(sac->params + at, grads, job->adam_m + at, job->adam_v + at, n,
                           job->lr, sac->config.adam, job->step);
        if (job->targets) /* sk_sac_update_targets' step */
            polyak(sac->targets + (at - sac->q_base[0]), sac->params + at, n, sac->config.tau);
    }
}

static void run_job(void *ctx, int worker, int workers) {
    const sac_job *job = ctx;
    sk_sac *sac = job->sac;
    if (job->phase == PHASE_APPLY) {
        apply_slice(job, worker, workers);
        return;
    }
    for (int b = worker; b < sac->config.row_blocks; b += workers) {
        int lo, hi;
        sk_slice(job->rows, b, sac->config.row_blocks, &lo, &hi);
        if (job->phase == PHASE_CRITIC) critic_block(sac, &sac->blocks[b], job, lo, hi - lo);
        else if (job->phase == PHASE_ACTOR) actor_block(sac, &sac->blocks[b], job, lo, hi - lo);
        else alpha_block(sac, &sac->blocks[b], job, lo, hi - lo);
    }
}

static void run(sk_sac *sac, const sac_job *job) {
    if (sac->has_parallel) sac->parallel.run(sac->parallel.ctx, run_job, (void *)job);
    else run_job((void *)job, 0, 1);
}

void sk_sac_refresh_transposes(sk_sac *sac, unsigned need) {
    unsigned todo = need & sac->stale;
    if (todo & SK_SAC_WT_ACTOR)
        for (int l = 0; l < sac->actor.num_linear; l++)
            sk_sac_net_transpose(&sac->actor, sac->params + sac->actor_base, sac->wt_actor, l);
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < sac->qf[k].num_linear; l++) {
            if (todo & SK_SAC_WT_Q)
                sk_sac_net_transpose(&sac->qf[k], sac->params + sac->q_base[k], sac->wt_q[k], l);
            if (todo & SK_SAC_WT_TARGETS)
                sk_sac_net_transpose(&sac->qf[k], sac->targets + sac->target_base[k],
                                     sac->wt_targets[k], l);
        }
    sac->stale &= ~todo;
}

/* The blocks' sum of one figure, in block order. */
static double block_sum(const sk_sac *sac, sk_sac_sum which) {
    double sum = 0.0;
    for (int b = 0; b < sac->config.row_blocks; b++) sum += sac->blocks[b].sums[which];
    return sum;
}

/* Sums the blocks' gradients over params [begin, end) into grads, and with lr > 0 takes one
 * Adam step there (marking the network's W^T copies stale: `changed`), then with targets the
 * targets' Polyak step (the Q networks' range only). */
static void apply(sk_sac *sac, size_t begin, size_t end, float lr, int64_t step, unsigned changed,
                  bool targets) {
    sac_job job = {.sac = sac, .phase = PHASE_APPLY, .begin = begin, .end = end, .lr = lr,
                   .adam_m = sac->adam_m, .adam_v = sac->adam_v, .step = step,
                   .targets = targets};
    run(sac, &job);
    if (lr > 0.0f) sac->stale |= changed;
    if (targets) sac->stale |= SK_SAC_WT_TARGETS;
}

/* adam: the step, else the gradient alone; targets (with adam): the targets' Polyak step
 * after it, as sk_sac_update_targets (the actor steps between leave the Q networks as they are) */
static float critic(sk_sac *sac, const sk_sac_batch *batch, const float *next_noise,
                    sk_sac_losses *out, bool adam, bool targets, const noise_plan *plan) {
    SK_ASSERT(batch->rows >= 1 && batch->rows <= sac->config.max_rows);
    sk_sac_refresh_transposes(sac, SK_SAC_WT_ALL);
    sac_job job = {.sac = sac, .phase = PHASE_CRITIC, .batch = batch, .noise = next_noise,
                   .rows = batch->rows, .alpha = sk_sac_alpha(sac), .plan = plan};
    run(sac, &job);
    size_t begin = sac->q_base[0], end = begin + sac->q_floats;
    if (adam) apply(sac, begin, end, sac->config.q_lr, ++sac->counters.q_steps, SK_SAC_WT_Q, targets);
    else apply(sac, begin, end, 0.0f, 0, 0, false);
    double rows = batch->rows;
    double loss1 = block_sum(sac, SK_SAC_SUM_QF1_LOSS) / rows;
    double loss2 = block_sum(sac, SK_SAC_SUM_QF2_LOSS) / rows;
    if (out) {
        out->qf1_loss = (float)loss1, out->qf2_loss = (float)loss2;
        out->qf_loss = (float)(loss1 + loss2);
        out->qf1_value = (float)(block_sum(sac, SK_SAC_SUM_QF1) / rows);
        out->qf2_value = (float)(block_sum(sac, SK_SAC_SUM_QF2) / rows);
    }
    return (float)(loss1 + loss2);
}

static float actor(sk_sac *sac, const float *obs, int rows, const float *actor_noise,
                   sk_sac_losses *out, bool adam) {
    const sk_sac_config *c = &sac->config;
    SK_ASSERT(rows >= 1 && rows <= c->max_rows);
    sk_sac_refresh_transposes(sac, SK_SAC_WT_ACTOR | SK_SAC_WT_Q);
    sac_job job = {.sac = sac, .phase = PHASE_ACTOR, .obs = obs, .noise = actor_noise,
                   .rows = rows, .alpha = sk_sac_alpha(sac)};
    run(sac, &job);
    if (adam)
        apply(sac, sac->actor_base, sac->q_base[0], c->policy_lr, ++sac->counters.actor_steps,
              SK_SAC_WT_ACTOR, false);
    else apply(sac, sac->actor_base, sac->q_base[0], 0.0f, 0, 0, false);
    float loss = (float)(block_sum(sac, SK_SAC_SUM_ACTOR_LOSS) / rows);
    if (out) {
        out->actor_loss = loss;
        out->entropy = (float)(-block_sum(sac, SK_SAC_SUM_LOGP) / rows);
    }
    return loss;
}

/* The gradient entries are the finite differences' (tests/test_sac_grad.c), which write the
 * weights through pointers kept from one sk_sac_arrays call: every W^T copy is made again. */
float sk_sac_critic_grad(sk_sac *sac, const sk_sac_batch *batch, const float *next_noise,
                         sk_sac_losses *out) {
    sac->stale = SK_SAC_WT_ALL;
    return critic(sac, batch, next_noise, out, false, false, NULL);
}

float sk_sac_actor_grad(sk_sac *sac, const float *obs, int rows, const float *actor_noise,
                        sk_sac_losses *out) {
    sac->stale = SK_SAC_WT_ALL;
    return actor(sac, obs, rows, actor_noise, out, false);
}

void sk_sac_critic_step(sk_sac *sac, const sk_sac_batch *batch, const float *next_noise,
                        sk_sac_losses *out) {
    critic(sac, batch, next_noise, out, true, false, NULL);
}

void sk_sac_actor_step(sk_sac *sac, const float *obs, int rows, const float *actor_noise,
                       const float *alpha_noise, sk_sac_losses *out) {
    const sk_sac_config *c = &sac->config;
    actor(sac, obs, rows, actor_noise, out, true);
    if (c->autotune) {
        /* fresh actions from the updated actor; d/d(log_alpha) of
         * mean(-exp(log_alpha) (logp + target_entropy)) is that loss itself */
        SK_ASSERT(alpha_noise != NULL);
        sk_sac_refresh_transposes(sac, SK_SAC_WT_ACTOR);
        sac_job job = {.sac = sac, .phase = PHASE_ALPHA, .obs = obs, .noise = alpha_noise,
                       .rows = rows};
        run(sac, &job);
        float alpha = expf(sac->alpha_state[0]);
        float grad = -alpha * (float)(block_sum(sac, SK_SAC_SUM_ALPHA) / rows);
        if (out) out->alpha_loss = grad;
        sk_adam_update(sac->alpha_state, &grad, sac->alpha_state + 1, sac->alpha_state + 2, 1,
                       c->alpha_lr, c->adam, ++sac->counters.alpha_steps);
    }
    if (out) out->alpha = sk_sac_alpha(sac);
}

void sk_sac_update_targets(sk_sac *sac) {
    polyak(sac->targets, sac->params + sac->q_base[0], sac->q_floats, sac->config.tau);
    sac->stale |= SK_SAC_WT_TARGETS;
}

/* sk_sac_update, the noise drawn in the critic's blocks by plan when not NULL */
static void update(sk_sac *sac, const sk_sac_batch *batch, const sk_sac_noise *noise,
                   int64_t global_step, sk_sac_losses *out, const noise_plan *plan) {
    const sk_sac_config *c = &sac->config;
    bool targets_due = global_step % c->target_frequency == 0;
    critic(sac, batch, noise->next, out, true, targets_due, plan); /* the targets' step fused */
    bool actor_due = global_step % c->policy_frequency == 0;
    size_t slice = (size_t)batch->rows * (size_t)c->act_dim;
    if (actor_due)
        for (int k = 0; k < c->policy_frequency; k++)
            sk_sac_actor_step(sac, batch->obs, batch->rows, noise->actor + (size_t)k * slice,
                              noise->alpha ? noise->alpha + (size_t)k * slice : NULL, out);
    if (out) out->actor_updated = actor_due, out->targets_updated = targets_due;
}

void sk_sac_update(sk_sac *sac, const sk_sac_batch *batch, const sk_sac_noise *noise,
                   int64_t global_step, sk_sac_losses *out) {
    update(sac, batch, noise, global_step, out, NULL);
}

void sk_sac_update_rng(sk_sac *sac, const sk_sac_batch *batch, int64_t global_step,
                       uint64_t *rng, sk_sac_losses *out) {
    const sk_sac_config *c = &sac->config;
    SK_ASSERT(batch->rows >= 1 && batch->rows <= c->max_rows); /* the noise buffers' size */
    size_t slice = (size_t)batch->rows * (size_t)c->act_dim, pf = (size_t)c->policy_frequency;
    float *next = sac->noise, *actor_noise = next + slice, *alpha_noise = actor_noise + pf * slice;
    int per = c->autotune ? 2 : 1;
    noise_plan plan = {.start = *rng, .slice = slice, .segments = 1, .per = per,
                       .next = next, .actor = actor_noise, .alpha = alpha_noise};
    if (global_step % c->policy_frequency == 0) plan.segments += (int)pf * per;
    sk_rng_skip(rng, 2 * (size_t)plan.segments * slice); /* where a serial draw leaves it */
    sk_sac_noise noise = {next, actor_noise, c->autotune ? alpha_noise : NULL};
    update(sac, batch, &noise, global_step, out, &plan);
}
