/*
 * Soft Actor-Critic's learner (Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and
 * Applications": two Q networks with targets, a tanh-squashed Gaussian actor, and automatic
 * entropy tuning), with CleanRL's sac_continuous_action defaults. Independent of the trainer:
 * the caller owns the replay buffer and the env steps and hands in batches, noise and the
 * global step; an sk_sac owns the networks, their gradients, Adam's moments, the target
 * networks, log(alpha) and the workspace for up to max_rows rows, and allocates nothing after
 * sk_sac_create. One thread calls an sk_sac at a time. The layers run on the small-GEMM kernels
 * of the ISA level in use (src/nn/gemm_small.h).
 *
 * Threads: a batch's rows split into row_blocks contiguous blocks, each computed on its own
 * (forward, backward, its own gradient) and the blocks' gradients summed in block order before
 * Adam. With sk_sac_set_parallel the blocks run on the host's threads (worker w takes blocks
 * w, w + workers, ...) and so do the gradient sums and Adam (in slices of the parameters);
 * without, inline. The results depend on row_blocks, never on the number of threads.
 *
 *     sk_sac_config config = sk_sac_defaults(17, 6, low, high); // HalfCheetah's sizes
 *     sk_sac *sac;
 *     if (sk_sac_create(&sac, &config) != SK_OK) return; // sk_last_error() says why
 *     uint64_t rng = sk_rng_seed(1, 7);
 *     for (int64_t step = 1; ...; step++) {
 *         sk_sac_act(sac, obs, num_envs, noise, false, actions, NULL); // noise ~ N(0, 1)
 *         ... step the envs, store the transitions, sample `batch` from the replay ...
 *         sk_sac_losses losses;
 *         sk_sac_update_rng(sac, &batch, step, &rng, &losses); // CleanRL's schedule
 *     }
 *     sk_sac_destroy(sac);
 *
 * The networks (CleanRL's): the actor obs -> hidden (ReLU) x layers -> mean and log-std heads,
 * log-std squashed into [SK_SAC_LOG_STD_MIN, SK_SAC_LOG_STD_MAX] by tanh; u = mean + std * noise,
 * action = tanh(u) * scale + bias from the env's bounds, and
 *   log pi = sum_d [log N(u_d; mean_d, std_d) - log(scale_d (1 - tanh(u_d)^2) + 1e-6)].
 * Each Q network reads obs || action -> hidden (ReLU) x layers -> 1. Weights and biases start
 * as torch.nn.Linear's default, uniform in +-1/sqrt(fan_in); targets start as copies.
 */
#ifndef SK_SAC_CORE_H
#define SK_SAC_CORE_H

#include "../nn/kernels.h" /* SK_SAC_LOG_STD_MIN, SK_SAC_LOG_STD_MAX, SK_SAC_LOG_EPS */
#include "skinner.h"
#include "skinner/nn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SK_SAC_MAX_LAYERS 4        /* hidden layers of each network */
#define SK_SAC_MAX_BLOCKS 16       /* row blocks of a batch */

typedef struct sk_sac_config {
    int obs_size, act_dim;                 /* act_dim 1..SK_MAX_ACTION_DIM */
    float act_low[SK_MAX_ACTION_DIM];      /* the env's bounds, finite, low < high */
    float act_high[SK_MAX_ACTION_DIM];
    int hidden;                            /* width of every hidden layer: 256 */
    int layers;                            /* hidden layers per network: 2 */
    int max_rows;                          /* the most rows of a batch or an act call: 256 */
    int row_blocks;                        /* blocks a batch's rows split into: 2 (below) */
    float policy_lr;                       /* the actor's Adam: 3e-4 */
    float q_lr;                            /* both Q networks' Adam: 1e-3 */
    float alpha_lr;                        /* log(alpha)'s Adam: 1e-3 (CleanRL's q_lr) */
    float gamma;                           /* 0.99 */
    float tau;                             /* Polyak coefficient of the targets: 0.005 */
    int policy_frequency;                  /* 2: every 2nd step, 2 actor (and alpha) steps */
    int target_frequency;                  /* 1: targets move every step */
    bool autotune;                         /* learn alpha (true), or keep `alpha` fixed */
    float alpha;                           /* the fixed alpha without autotune: 0.2 */
    float log_alpha_init;                  /* with autotune: 0 */
    float target_entropy;                  /* with autotune: -act_dim */
    sk_adam adam;                          /* PyTorch's defaults {0.9, 0.999, 1e-8} */
    uint64_t seed;                         /* of the initial weights */
} sk_sac_config;

/* CleanRL's sac_continuous_action defaults for these sizes and bounds (each act_dim floats). */
sk_sac_config sk_sac_defaults(int obs_size, int act_dim, const float *act_low,
                              const float *act_high);

typedef struct sk_sac sk_sac;

/* *out = a learner with freshly initialised networks (NULL on failure). SK_ERR_INVALID naming
 * the config field that is out of range and the range, SK_ERR_NOMEM. Free with sk_sac_destroy. */
sk_status sk_sac_create(sk_sac **out, const sk_sac_config *config);
void sk_sac_destroy(sk_sac *sac); /* NULL-safe */
const sk_sac_config *sk_sac_get_config(const sk_sac *sac);
/* The threads the steps run their blocks on (the trainer's: a pool of train.threads, sac.c),
 * copied; NULL runs them on the calling thread. Must outlive the sac's use of it. */
void sk_sac_set_parallel(sk_sac *sac, const sk_parallel *parallel);

/* Actions (rows, act_dim) within the bounds for obs (rows, obs_size), rows <= max_rows:
 * tanh(mean + std * noise) scaled, noise (rows, act_dim) of N(0, 1) draws; deterministic
 * gives tanh(mean) scaled and ignores noise (may be NULL). logp (rows) may be NULL. */
void sk_sac_act(sk_sac *sac, const float *obs, int rows, const float *noise, bool deterministic,
                float *actions, float *logp);

/* A minibatch of transitions, rows <= max_rows. actions are the env's (scaled); terminated is
 * 1 where the episode ended in a terminal state (no bootstrap), 0 otherwise, truncations
 * included: next_obs is then the final observation. */
typedef struct sk_sac_batch {
    int rows;
    const float *obs;        /* (rows, obs_size) */
    const float *actions;    /* (rows, act_dim) */
    const float *rewards;    /* (rows) */
    const float *terminated; /* (rows) 0 or 1 */
    const float *next_obs;   /* (rows, obs_size) */
} sk_sac_batch;

/* The last update's figures, as CleanRL logs them (means over the rows). The actor and alpha
 * fields are those of the last actor step, and are left as they were when no actor step ran. */
typedef struct sk_sac_losses {
    float qf1_value, qf2_value; /* mean Q of the batch's actions */
    float qf1_loss, qf2_loss, qf_loss;
    float actor_loss, alpha, alpha_loss, entropy; /* entropy: -mean log pi of the actor step */
    bool actor_updated, targets_updated;
} sk_sac_losses;

/* The noise of one update, N(0, 1) draws: next (rows, act_dim) for the next actions of the
 * critic's target; actor and alpha (policy_frequency, rows, act_dim), one slice per actor step:
 * the actor's reparameterised actions and the fresh actions of alpha's loss. */
typedef struct sk_sac_noise {
    const float *next, *actor, *alpha;
} sk_sac_noise;

/* One step of CleanRL's schedule at global_step: a critic step; when global_step is a multiple
 * of policy_frequency, policy_frequency actor steps each followed by an alpha step
 * (autotune); when it is a multiple of target_frequency, the targets' Polyak step. */
void sk_sac_update(sk_sac *sac, const sk_sac_batch *batch, const sk_sac_noise *noise,
                   int64_t global_step, sk_sac_losses *out);
/* The same, with the noise drawn from *rng (advanced; sk_rng_normal) into the learner's own
 * buffers: next's first, then each actor step's actor and alpha slices. The critic's row
 * blocks draw their own rows' values, skipping to them in the stream: the same numbers as that
 * order drawn serially, on the workers. */
void sk_sac_update_rng(sk_sac *sac, const sk_sac_batch *batch, int64_t global_step,
                       uint64_t *rng, sk_sac_losses *out);

/* The steps sk_sac_update composes, for a caller with a schedule of its own. */
/* Critic: target y = r + gamma (1 - terminated) (min(Q1', Q2')(s', a') - alpha log pi(a'|s')),
 * a' from next_noise; loss mean (Q1 - y)^2 + mean (Q2 - y)^2; one Adam step (q_lr). */
void sk_sac_critic_step(sk_sac *sac, const sk_sac_batch *batch, const float *next_noise,
                        sk_sac_losses *out);
/* Actor: loss mean(alpha log pi - min(Q1, Q2)(s, a~pi)), one Adam step (policy_lr); then with
 * autotune alpha: loss mean(-alpha (log pi + target_entropy)) over fresh actions from the new
 * actor (alpha_noise), one Adam step on log(alpha) (alpha_lr). alpha_noise may be NULL without
 * autotune. */
void sk_sac_actor_step(sk_sac *sac, const float *obs, int rows, const float *actor_noise,
                       const float *alpha_noise, sk_sac_losses *out);
/* target = tau * online + (1 - tau) * target, both Q networks. */
void sk_sac_update_targets(sk_sac *sac);

/* The gradients alone, for tests: the sac's gradient block (sk_sac_arrays' grad) is zeroed for
 * that network(s) and filled, nothing else changes. Return the loss. */
float sk_sac_critic_grad(sk_sac *sac, const sk_sac_batch *batch, const float *next_noise,
                         sk_sac_losses *out);
float sk_sac_actor_grad(sk_sac *sac, const float *obs, int rows, const float *actor_noise,
                        sk_sac_losses *out);
float sk_sac_alpha(const sk_sac *sac); /* exp(log_alpha) with autotune, else the fixed alpha */

/* Everything a checkpoint holds, as named float arrays the caller may read and write between
 * calls (to restore: write every array, then sk_sac_set_counters): each parameter tensor
 * ("actor.0.weight", ..., "actor.mean.weight", "actor.log_std.weight", "actor.mean.bias",
 * "actor.log_std.bias", "qf1.0.weight", ..., "qf2.<layers>.bias", torch.nn.Linear's (out, in)
 * layout) with its gradient, each target tensor ("qf1_target.0.weight", ...), then whole
 * blocks: "adam.m" and "adam.v" (the moments of every parameter, in the tensors' order),
 * "log_alpha", "log_alpha.adam.m", "log_alpha.adam.v". */
typedef struct sk_sac_array {
    char name[40];
    float *data;
    float *grad; /* parameters only, else NULL */
    int rows, cols;
} sk_sac_array;
int sk_sac_num_arrays(const sk_sac *sac);
/* Each call marks the weights as written: the next step or act reads them again (the W^T
 * copies of src/train/sac_internal.h are made again). A caller that keeps the pointers and
 * writes through them after a later step calls sk_sac_arrays again before the next. */
const sk_sac_array *sk_sac_arrays(sk_sac *sac);
/* The array of that name, or NULL. */
const sk_sac_array *sk_sac_find_array(sk_sac *sac, const char *name);

/* Adam's step counts (1-based after the first step), saved beside the arrays. */
typedef struct sk_sac_counters {
    int64_t q_steps, actor_steps, alpha_steps;
} sk_sac_counters;
sk_sac_counters sk_sac_get_counters(const sk_sac *sac);
void sk_sac_set_counters(sk_sac *sac, sk_sac_counters counters);

/* Multiply-adds of one update's layers for rows rows: the critic step, and one actor step
 * with its alpha step's forward (for FLOP rates: 2 flops each). */
double sk_sac_critic_macs(const sk_sac *sac, int rows);
double sk_sac_actor_macs(const sk_sac *sac, int rows);

#endif
