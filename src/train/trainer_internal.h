/* The trainer's state, shared by its files (trainer.c, rollout.c, update.c,
 * run_files.c). Not part of the public API. */
#ifndef SK_TRAINER_INTERNAL_H
#define SK_TRAINER_INTERNAL_H

#include "../core/config.h"
#include "../policy/policy.h"
#include "../vec/pool.h"
#include "normalize.h"
#include "ppo.h"

#include <stdio.h>

#define SK_WINDOW 100
#define SK_MAX_WORKERS 1024 /* train.threads is at most this */ /* episodes in the moving mean that decides "solved" */

typedef struct sk_ppo_settings {
    int num_envs, horizon, num_minibatches, update_epochs, threads;
    int64_t total_steps;
    uint64_t seed;
    bool stop_when_solved;
    int checkpoint_every; /* updates between periodic checkpoints; 0: only at the end */
    int grad_stats_every; /* updates between per-layer gradient-norm events; 0: never */
    double learning_rate, gamma, gae_lambda, clip_coef, ent_coef, vf_coef, max_grad_norm;
    double target_kl; /* <= 0: off */
    double adam_eps;
    bool anneal_lr, norm_adv, clip_vloss;
    bool norm_obs, norm_reward;   /* running observation normalisation, return-based reward scaling */
    double clip_obs, clip_reward;
    bool bootstrap_truncated; /* false: a time-limit cut is treated as terminal, as CleanRL does */
    double governor_max_kl;
    int governor_max_anomalies, governor_window;
} sk_ppo_settings;

#define SK_GOVERNOR_MAX_ANOMALIES 100

/* The governor: the last good weights and optimiser state, restored when an
 * update goes numerically wrong. */
typedef struct sk_governor {
    float *params, *adam_m, *adam_v; /* (num_params) each */
    int64_t adam_step;
    double max_kl;    /* an update whose mean approx KL exceeds this is rolled back */
    int max_anomalies; /* more anomalies than this within `window` updates stop the run */
    int window;
    int64_t recent[SK_GOVERNOR_MAX_ANOMALIES + 1]; /* updates of the latest anomalies, a ring */
    int64_t anomalies;
    char last_event[192];
} sk_governor;

/* What one worker owns: its slice of envs, its RNG, its scratch. */
typedef struct sk_worker {
    int lo, hi;             /* env slice */
    uint64_t rng;           /* action sampling stream */
    sk_policy_work work;
    float *grads;           /* (num_params) this worker's share of a minibatch gradient */
    sk_ppo_loss_sums sums;
    /* gathered minibatch block */
    int mb_lo, mb_hi;
    float *mb_obs, *mb_logp, *mb_adv, *mb_returns, *mb_values;
    int32_t *mb_actions;
    uint8_t *mb_masks;
    /* truncation bootstrap scratch */
    float *trunc_obs;       /* (slice, obs_size) */
    int *trunc_index;       /* (slice) */
    float *mb_actions_f;    /* (block, action_dim) */
    sk_welford obs_acc, return_acc; /* what this worker saw, for the running statistics */
    /* episodes finished in this rollout, in order: the env's episode_log
     * fields (return, length, ...) then the step */
    float *episodes;        /* (horizon * slice, num_log_fields + 1) */
    int num_episodes;
} sk_worker;

struct sk_trainer {
    sk_config *cfg;
    const sk_env_def *env;
    void *env_state;
    sk_ppo_settings s;
    sk_policy policy;
    int obs_size, num_heads, action_dim, mask_size, batch_size, minibatch_size;
    /* parameters, gradients, Adam moments: one layout */
    float *params, *grads, *adam_m, *adam_v;
    int64_t adam_step;
    /* rollout storage, rows of N envs; obs, masks and values have T + 1 rows */
    float *obs, *logp, *values, *rewards, *bootstrap, *advantages, *returns;
    int32_t *actions;        /* (T, N, num_heads) discrete */
    float *actions_f;        /* (T, N, action_dim) continuous, as sampled (unclipped) */
    uint8_t *masks, *terminated, *truncated;
    /* normalisation: statistics, the maps frozen for a rollout, per-env discounted returns */
    sk_running_stats obs_stats, return_stats;
    sk_norm_map obs_map, reward_map;
    double *discounted_return; /* (N) */
    float *final_obs, *episode_log;
    float *mb_adv_norm;     /* (minibatch_size) */
    int32_t *perm;          /* (batch_size) */
    uint64_t rng;           /* shuffling stream */
    sk_pool *pool;
    int num_workers;
    sk_worker *workers;
    /* progress */
    int64_t update, steps, episodes;
    /* the env's extra episode_log fields (2..) summed over this update's episodes */
    double log_sum[SK_MAX_LOG_FIELDS];
    int log_count;
    float window_return[SK_WINDOW], window_length[SK_WINDOW];
    int window_count, window_pos;
    double start_time, elapsed_before; /* wall seconds */
    sk_train_result result;
    sk_update_stats last;
    sk_update_fn callback;
    void *callback_user;
    char run_dir[4096];
    FILE *metrics;
    int current_minibatch; /* start index into perm for the dispatched minibatch */
    sk_governor governor;
    bool resumed; /* state restored from a checkpoint: no reset at the start */
    bool ran;     /* sk_trainer_run was called: a trainer runs once */
    struct sk_telemetry *telemetry;      /* RUN_DIR/events.jsonl, when a run folder is set */
    struct sk_live *live;                /* RUN_DIR/live.bin for skinner monitor */
    double grad_norms[SK_MAX_TENSORS];   /* per tensor, last minibatch of a stats update */
};

sk_status sk_settings_resolve(sk_ppo_settings *s, const sk_config *cfg, const sk_env_def *env);

#endif
