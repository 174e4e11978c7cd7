/*
 * The trainer's parts, shared by its files. Not part of the public API.
 *
 *   sk_vec      the envs and their I/O buffers (src/vec)
 *   sk_rollout  rollout storage [T, N] and GAE (rollout.c)
 *   sk_learner  parameters, gradients, Adam, the governor, normalisation
 *               statistics, the minibatch update (learner.c)
 *   sk_comm     every cross-worker and cross-rank reduction (comm.c)
 *   sk_trainer  composes them: settings, workers, progress, the run folder
 *               (trainer.c, run_files.c, events.c, checkpoint.c)
 *
 * Every array the trainer owns is listed once, in trainer_state.c's table,
 * from which allocation, freeing, checkpoint writing, restoring and range
 * validation follow: a new persistent array is one row there.
 */
#ifndef SK_TRAINER_INTERNAL_H
#define SK_TRAINER_INTERNAL_H

#include <stdatomic.h>

#include "../core/config.h"
#include "../policy/policy.h"
#include "comm.h"
#include "normalize.h"
#include "ppo.h"
#include "selfplay.h"

#include <stdio.h>

#define SK_WINDOW 100       /* episodes in the moving mean that decides "solved" */
#define SK_MAX_WORKERS 1024 /* train.threads is at most this */
#define SK_MAX_OBS_NORM 4096 /* observation sizes the float copy of the normaliser covers */
#define SK_MAX_ROLES 8      /* agents of a multi-agent env whose returns are reported by name */
/* A finished episode's record: the env's episode_log fields, then the step it
 * ended at, then its agent (0 for a single-agent env). */
#define SK_EPISODE_RECORD(num_log_fields) ((size_t)(num_log_fields) + 2)

typedef struct sk_ppo_settings {
    int num_envs, horizon, num_minibatches, update_epochs, threads;
    /* train.slices: the envs cut into this many workers' slices, each with its own sampling
     * stream and statistics, that the threads take as they come free; 0: one per thread */
    int slices;
    int64_t total_steps;
    uint64_t seed;
    bool stop_when_solved;
    int checkpoint_every; /* updates between periodic checkpoints; 0: only at the end */
    int grad_stats_every; /* updates between per-layer gradient-norm events; 0: never */
    int log_every;        /* updates between rows of metrics.csv and update events */
    bool checkpoint_every_default, log_every_default; /* not given: the defaults above */
    bool tensorboard;     /* telemetry.tensorboard: metrics.csv's rows in a TensorBoard event file too */
    double learning_rate, gamma, gae_lambda, clip_coef, ent_coef, vf_coef, max_grad_norm;
    double target_kl; /* <= 0: off */
    double adam_eps;
    bool anneal_lr, norm_adv, clip_vloss;
    bool norm_obs, norm_reward;   /* running observation normalisation, return-based reward scaling */
    double clip_obs, clip_reward;
    bool bootstrap_truncated; /* false: a time-limit cut is treated as terminal, as CleanRL does */
    bool clip_actions;        /* continuous actions clipped to the bounds on their way to the env */
    /* ppo.ema_decay: 0, or the decay of the weights' exponential moving average, which the
     * checkpoints hold as the policy (the learner trains on its own weights, as without) */
    double ema_decay;
    double governor_max_kl;
    int governor_max_anomalies, governor_window;
    /* comm.mode = scale under more than one process: each rank learns from its own envs'
     * rows (docs/distributed.md); false for exact, and for scale in one process */
    bool comm_scale;
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

/* Rollout storage, T steps of N = num_rows rows (one per env; a multi-agent
 * env's envs x num_agents, row = env * A + agent); obs, masks and values have
 * T + 1 steps (step T: the observations after the last step, which start the
 * next rollout). Observations are stored as the policy sees them (normalised).
 * A multi-agent env's `active` says which rows acted at each step: only those
 * are samples. */
typedef struct sk_rollout {
    int num_rows;            /* N: envs x num_agents (row = env * A + agent) */
    int horizon, obs_size, num_heads, action_dim, mask_size;
    int num_agents;          /* agents per env (1: single-agent, every row a sample) */
    uint8_t *active;         /* (T + 1, N) multi-agent: the row's agent acts at that step (unused for one) */
    float *obs;              /* (T + 1, N, obs_size) float envs; NULL for uint8 */
    uint8_t *obs_u8;         /* (T + 1, N, obs_size) uint8 envs, as the env wrote them; else NULL */
    bool obs_u8_dtype;       /* the env observes uint8 (obs_u8 holds the rows, widened on reading) */
    float *logp, *rewards;   /* (T, N) */
    float *values;           /* (T + 1, N) */
    float *bootstrap;        /* (T, N) value of the final observation where an episode was truncated */
    float *advantages, *returns; /* (T, N) */
    int32_t *actions;        /* (T, N, num_heads) discrete */
    float *actions_f;        /* (T, N, action_dim) continuous, as sampled (unclipped) */
    /* ppo.clip_actions: the env's space, whose bounds the env's copy of actions_f is clipped
     * to (as CleanRL's ClipAction wrapper and SB3's rollout do); NULL: passed as sampled */
    const sk_action_space *clip_actions;
    uint8_t *masks;          /* (T + 1, N, mask_size) */
    uint8_t *terminated, *truncated; /* (T, N) */
    double *discounted_return; /* (N) per env, for reward scaling */
    /* with a core (S = its state's floats per env, L = ppo.bptt_horizon): */
    int state_size, bptt_horizon; /* S (0: no core), L (1 without a core) */
    float *state;                 /* (N, S) each env's state entering its next step */
    float *chunk_state;           /* (T / L, N, S) the state entering each L-step chunk */
    /* multi-agent: each row's action deferred at a rollout's end while its agent waited
     * (ppo.h's sk_gae_pending) and its sample's inputs; `ready` those resolved in this
     * rollout, samples of this update (learner rows T x N + row) */
    sk_gae_pending pending;
    float *pending_obs, *ready_obs;                 /* (N, obs_size) float envs */
    uint8_t *pending_obs_u8, *ready_obs_u8;         /* (N, obs_size) uint8 envs */
    uint8_t *pending_masks, *ready_masks;           /* (N, mask_size) */
    int32_t *pending_actions, *ready_actions;       /* (N, num_heads) */
    float *pending_actions_f, *ready_actions_f;     /* (N, action_dim) */
    float *pending_logp, *ready_logp;               /* (N) */
} sk_rollout;

/* Advantages and returns of rows lo..hi-1 (GAE, truncation bootstrapped). */
void sk_rollout_gae(sk_rollout *ro, bool bootstrap_truncated, float gamma, float gae_lambda,
                    int lo, int hi);

/* The learner: what the update changes and what it keeps between updates. */
typedef struct sk_learner {
    sk_policy policy;
    float *params, *grads, *adam_m, *adam_v; /* (num_params) each, one layout */
    /* the params' layout holding W^T of each weight whose forward transposes it
     * (sk_policy_transpose_weights): made before each rollout, read by its forwards */
    float *params_t;
    float *ema; /* (num_params) with ppo.ema_decay > 0: the weights' moving average */
    int64_t adam_step;
    sk_governor governor;
    sk_running_stats obs_stats, return_stats;
    sk_norm_map obs_map, reward_map; /* frozen for a rollout */
    uint64_t rng;                    /* shuffling stream */
    float *mb_adv_norm;              /* (minibatch_size) */
    int32_t *perm;                   /* (num_sequences) */
    /* the update's unit: a sequence of L = rollout.bptt_horizon steps of one env
     * (one row when there is no core, L = 1); sequence s is env s % N's chunk s / N */
    int num_sequences, minibatch_sequences;
    /* the most sequences a minibatch may hold: minibatch_sequences, or for a multi-agent
     * env, whose minibatches split its samples, those of T + 1 steps (the rollout's, and
     * actions resolved after waiting across the last rollout's end) */
    int minibatch_capacity;
    double *moments;                 /* (workers, 1 + 2 obs_size) packed accumulations to merge */
    double *moments_all;             /* (ranks, workers, 1 + 2 obs_size) every rank's, gathered */
    double grad_norms[SK_MAX_POLICY_TENSORS]; /* per tensor, last minibatch of a stats update */
} sk_learner;

/* What one worker owns: its slice of envs, its RNG, its scratch. */
typedef struct sk_worker {
    int lo, hi;             /* its rows lo..hi-1 (envs lo / A..hi / A - 1 of A agents each) */
    uint64_t rng;           /* action sampling stream */
    sk_policy_work work;
    float *grads;           /* (num_params) this worker's share of a minibatch gradient */
    sk_ppo_loss_sums sums;
    /* gathered minibatch block */
    float *mb_obs, *mb_logp, *mb_adv, *mb_returns, *mb_values;
    int32_t *mb_actions;
    uint8_t *mb_masks;
    float *mb_actions_f;    /* (block, action_dim) */
    int64_t gather_visits;  /* rows the minibatch gathers placed so far, each visited once (a
                               per-role block counts its roles first): tests count work */
    int64_t listed_steps;   /* self-play's env-steps against a listed player, and its searches */
    int64_t listed_searches; /* among them (its own moves only): tests count work */
    /* truncation bootstrap scratch */
    float *trunc_obs;       /* (slice, obs_size) */
    float *obs_wide;        /* (slice, obs_size) a uint8 env's rows widened for the policy */
    int obs_wide_step;      /* the rollout step whose rows obs_wide holds, else -1: the last
                               rollout's step T is the next one's step 0 (widened once) */
    int32_t *trunc_index;   /* (slice) */
    float *trunc_state;     /* (slice, state_size) copies of recurrent states */
    sk_role_scratch role;   /* rows gathered to act: by role (policy.per_role), self-play's */
    float *mb_state0;       /* (block sequences, state_size) the states entering them */
    uint8_t *mb_resets;     /* (block) */
    sk_welford obs_acc, return_acc; /* what this worker saw, for the running statistics */
    /* episodes finished in this rollout, in order: the env's episode_log
     * fields (return, length, ...) then the step */
    float *episodes;        /* (horizon * slice, SK_EPISODE_RECORD(num_log_fields)) */
    int num_episodes;
} sk_worker;

/* Players beside the learner in the rollout: a row of hooks that each worker's rollout
 * (rollout.c) calls at fixed points without knowing who the players are, as a policy kind's
 * functions are called. Self-play's pool is the one row (sk_selfplay_hooks); a run where
 * the learner acts for every row has none (sk_trainer.hooks NULL). ctx: the row's state. */
typedef struct sk_rollout_hooks {
    /* After the learner chose step t's actions for worker wk's rows (obs_t: their policy
     * input, from row wk->lo): writes the actions of the rows another player acts for, on
     * wk's scratch and stream. */
    void (*act)(void *ctx, sk_rollout *ro, const sk_policy *policy, sk_worker *wk, int t,
                const float *obs_t);
    /* After step t of rows lo..hi-1 was stored (t = -1: after their reset), with the envs'
     * episode logs (num_log_fields floats a row): the players' own records, and which of
     * those rows of step t + 1 are no sample (ro->active = 0). */
    void (*after_step)(void *ctx, sk_rollout *ro, int lo, int hi, int t,
                       const float *episode_log, int num_log_fields);
    /* Whether row `row` is another player's at the step under way: asked before act (the
     * learner acts for the other rows only; act writes this row's actions) and before the
     * step's after_step (an episode the row ended is not counted as the learner's). */
    bool (*is_other)(const void *ctx, int row);
    /* After every worker's rollout, in one thread. */
    void (*after_rollout)(void *ctx, const sk_rollout *ro);
} sk_rollout_hooks;

/* The run's processes (sk_comm), owned by trainer.c's count_workers and the
 * table's rows (trainer_state.c): this rank's workers are the run's workers
 * worker_offset .. worker_offset + num_workers - 1 of total_workers, in rank
 * order; each rank's count in rank_workers, the largest max_workers. */
typedef struct sk_run_layout {
    int worker_offset, total_workers, max_workers;
    /* the learner's parts are threads (train.slices cuts the rollout only): this rank's
     * threads are the run's thread_offset.. of total_threads */
    int thread_offset, total_threads;
    /* the envs this rank's rollout and vec hold: the run's envs env_first ..
     * env_first + env_count - 1 (comm.mode = scale: its own slice; exact: all of them) */
    int env_first, env_count;
    uint64_t env_seed; /* its envs reset from (env_seed, env): train.seed, or scale's rank seed */
    /* a minibatch is cut into minibatch_parts blocks; this rank's workers compute blocks
     * minibatch_part_offset.. (exact: every rank's workers share one minibatch; scale:
     * the rank's own minibatch is its workers' alone) */
    int minibatch_part_offset, minibatch_parts;
    int32_t *rank_workers;     /* (ranks) */
    uint64_t *rngs_all;        /* (1 + total_workers) the shuffle stream, then every worker's */
    /* (ranks x max_workers) the episode merge's parts: where each starts in episodes_all,
     * its records and the cursor */
    int64_t *part_start;
    int32_t *part_count, *part_cursor;
    size_t *rank_floats;       /* (ranks) */
    void *columns_scratch;     /* the rollout's exchange between ranks */
    /* finished episodes of a rollout, gathered for the merge */
    float *episodes_local;         /* this rank's workers' records, one after another */
    float *episodes_all;           /* every rank's */
    double *episode_counts;        /* (workers) records each worker has */
    double *episode_counts_all;    /* (ranks, workers) */
} sk_run_layout;

/* How far the run is, owned by trainer.c's loop (and restored by checkpoint.c). */
typedef struct sk_run_progress {
    int64_t update, steps, episodes;
    /* the env's extra episode_log fields (2..) summed over this update's episodes */
    double log_sum[SK_MAX_LOG_FIELDS];
    int log_count;
    float window_return[SK_WINDOW], window_length[SK_WINDOW];
    /* a multi-agent env's episode returns per role (agent index < SK_MAX_ROLES) over the
     * last update and the whole run */
    double role_return_sum[SK_MAX_ROLES], role_return_total[SK_MAX_ROLES];
    int64_t role_count[SK_MAX_ROLES], role_count_total[SK_MAX_ROLES];
    int window_count, window_pos;
    double start_time, elapsed_before; /* wall seconds */
    /* wall seconds this process spent collecting rollouts (envs and acting, the exchange
     * between ranks) and learning from them (advantages, the epochs), since it started */
    double rollout_seconds, learn_seconds;
    /* the rollouts' thread-seconds: spent in workers' jobs (busy) and available to them
     * (threads x wall): 1 - busy / available is the share spent waiting for each other */
    double rollout_busy, rollout_available;
    sk_train_result result;
    sk_update_stats last;
} sk_run_progress;

/* What the run writes and tells, owned by run_files.c and events.c. */
typedef struct sk_run_outputs {
    sk_update_fn callback;
    void *callback_user;
    bool run_files; /* rank 0 writes a run folder, so every rank joins its checkpoints */
    char run_dir[4096];
    int run_lock; /* run_dir's lock (sk_run_lock), -1 before one is held */
    FILE *metrics;
    FILE *roles; /* RUN_DIR/roles.csv of a multi-agent env, else NULL */
    FILE *learner; /* RUN_DIR/learner.csv of a learner with figures of its own (algo.h) */
    struct sk_tfevents *tensorboard; /* RUN_DIR/events.out.tfevents.*, telemetry.tensorboard */
    struct sk_telemetry *telemetry; /* RUN_DIR/events.jsonl, when a run folder is set */
    struct sk_live *live;           /* RUN_DIR/live.bin for skinner monitor */
} sk_run_outputs;

/* comm.mode = scale: the per-env state a checkpoint holds, gathered from every rank by
 * sk_trainer_sync_state for rank 0 to write (every env of the run, in env order); all[k]
 * holds the run's copy of this rank's local[k]. Empty in exact mode. */
enum { SK_MAX_GATHERED = 8 + SK_MAX_ENV_ARRAYS };
typedef struct sk_env_gather {
    int count;
    const void *local[SK_MAX_GATHERED];
    void *all[SK_MAX_GATHERED];
} sk_env_gather;

struct sk_trainer {
    sk_config *cfg; /* the trainer's own copy, resolved (defaults recorded) */
    const struct sk_algo *algo; /* train.algo: the learner's row (algo.h) */
    void *algo_state;           /* what the row's create allocated, for its own functions */
    const sk_env_def *env;
    struct sk_vec *vec;
    sk_ppo_settings s;
    sk_rollout rollout;
    sk_learner learner;
    sk_comm comm;
    int obs_size, num_heads, action_dim, mask_size, batch_size, minibatch_size;
    /* the workers (slices of the envs, streams, statistics, scratch) and the vec's threads
     * that run them: as many, each thread its worker, or more workers (train.slices),
     * taken by the threads as each comes free (sk_trainer_run_workers). The learner's
     * minibatch blocks are one per thread, on workers 0..num_threads - 1's scratch. */
    int num_workers, num_threads;
    /* threads the learner's update runs on (sk_trainer_learner_threads): PPO's minibatch
     * blocks, num_threads; an algo's create may set its own (SAC: its pool; DQN: 1) */
    int learner_threads;
    atomic_int next_worker;
    double thread_busy[SK_MAX_WORKERS]; /* seconds each thread spent in the last dispatch */
    sk_worker *workers;
    sk_run_layout layout;
    sk_env_gather gathered;
    sk_run_progress progress;
    sk_run_outputs out;
    sk_selfplay sp; /* selfplay.*: the opponent pool and its ratings (selfplay.c) */
    const sk_rollout_hooks *hooks; /* the rollout's other players (sk_selfplay_hooks), or NULL */
    void *hooks_ctx;               /* their state (&sp) */
    bool resumed; /* state restored from a checkpoint: no reset at the start */
    atomic_bool abort_requested; /* sk_trainer_abort: drop the rollout in progress */
    bool ran;     /* sk_trainer_run was called: a trainer runs once */
    char last_error[1024];       /* this trainer's last failure (sk_trainer_last_error) */
};

sk_status sk_settings_resolve(sk_ppo_settings *s, const sk_config *cfg, const sk_env_def *env);

/* The config sections a run reads (NULL-terminated, trainer.c): any other is refused;
 * events.jsonl records each that holds keys. */
extern const char *const sk_trainer_sections[];

/* sk_trainer_create for one rank of a distributed run (comm: its
 * communicator, which must outlive the trainer): every rank calls it with the
 * same config; a failure on any rank fails all of them, with that rank's
 * message. sk_trainer_create is this with the single-process communicator. */
sk_status sk_trainer_create_comm(sk_trainer **out, const sk_config *cfg, const sk_comm *comm);

/* Collective: brings the state a checkpoint holds that lives with each rank
 * (its envs' states and observations, its workers' streams) to every rank:
 * into the trainer's own arrays, or with comm.mode = scale into tr->gathered. */
void sk_trainer_sync_state(sk_trainer *tr);
/* The run's copy of a per-env array of this rank (every env's rows) gathered by the last
 * sk_trainer_sync_state in scale mode; local itself otherwise. */
const void *sk_trainer_gathered(const sk_trainer *tr, const void *local);
/* Frees what sk_trainer_sync_state gathered. */
void sk_trainer_gathered_free(sk_trainer *tr);
/* Bytes of this rank's rollout storage (the arrays of T or T + 1 rows). */
size_t sk_trainer_rollout_bytes(const sk_trainer *tr);

/* ---- the table of the trainer's arrays (trainer_state.c) ---- */

/* Allocates the arrays of the table, sized from the trainer's settings: with ranks_only
 * those sized by the communicator alone (the layout's counts, before the workers are
 * counted), else every other one, each worker's too (tr->workers and their slices set). */
sk_status sk_trainer_state_alloc(sk_trainer *tr, bool ranks_only);
/* Bytes of the rollout's exchange between ranks (0 in one process). */
size_t sk_trainer_exchange_bytes(sk_trainer *tr);
void sk_trainer_state_free(sk_trainer *tr);

/* Where the current observations live: row T once a rollout has run. */
size_t sk_trainer_current_row(const sk_trainer *tr);

/* ---- the learner (learner.c) ---- */

void sk_governor_save(sk_learner *ln);
/* After update number `update` (1, 2, ...) if the governor kept it, with ppo.ema_decay =
 * decay > 0: ema += (1 - decay) / (1 - decay^update) (params - ema), element by element, the
 * bias-corrected average of the weights after each update (nothing when decay is 0). */
void sk_learner_ema_update(sk_learner *ln, double decay, int64_t update);
/* Records an anomaly at `update` and rolls back to the last good state.
 * Fails the run when more than max_anomalies fall within `window` updates. */
sk_status sk_governor_trouble(sk_trainer *tr, const char *what);
/* Folds what the workers saw into the running statistics, in worker order,
 * and freezes the maps for the next rollout. */
void sk_learner_merge_statistics(sk_trainer *tr);
/* The epochs x minibatches of gradient steps of one update; fills the loss
 * statistics. An anomaly (non-finite loss, gradient or weights, KL above the
 * governor's limit) is reported in *anomaly. */
void sk_learner_update(sk_trainer *tr, float lr, sk_update_stats *stats, const char **anomaly);
bool sk_all_finite(const float *x, size_t n);

/* ---- the rollout (rollout.c): sk_vec_parallel jobs over a trainer ---- */

void sk_reset_job(void *ctx, int w, int num_workers);
void sk_rollout_job(void *ctx, int w, int num_workers);
/* Runs job(tr, w, num_workers) for every worker w on the vec's threads: thread w runs worker
 * w when they are as many; otherwise each thread takes the next worker not yet taken until
 * none is left (train.slices), so a slow slice holds up one thread, not the others. Returns
 * the wall seconds; tr->thread_busy holds each thread's seconds in jobs. */
double sk_trainer_run_workers(sk_trainer *tr, sk_parallel_job job);
/* The rollout: sk_rollout_job on every worker, its forwards reading the learner's weights
 * transposed once before it (learner.params_t; the learner's own forwards, whose weights
 * change every minibatch, transpose as they go). Returns the wall seconds. */
double sk_trainer_run_rollout(sk_trainer *tr);
/* Runs job(ctx, t, num_threads) on each thread t: the learner's per-thread blocks. */
void sk_trainer_run_threads(sk_trainer *tr, sk_parallel_job job, void *ctx);

/* Records this trainer's failure: the status, with sk_last_error()'s message
 * kept in the trainer too (sk_trainer_last_error). */
sk_status sk_trainer_fail(sk_trainer *tr, sk_status status);

/* The mean of the last episodes' values (the 100-episode window), NaN before the first. */
double sk_window_mean(const float *values, int count);

#endif
