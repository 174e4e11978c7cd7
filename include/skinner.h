/*
 * skinner: reinforcement learning at hardware speed, in C.
 *
 * One process holds the environments, the policy and the learner. This is the
 * one public header. A complete training program:
 *
 *     #include <skinner.h>
 *     #include <stdio.h>
 *
 *     int main(void) {
 *         sk_config *cfg = sk_config_new();
 *         sk_trainer *trainer = NULL;
 *         if (sk_config_set(cfg, "env.id", "CartPole-v1") != SK_OK ||
 *             sk_config_set(cfg, "train.stop_when_solved", "true") != SK_OK ||
 *             sk_trainer_create(&trainer, cfg) != SK_OK ||
 *             sk_trainer_run(trainer) != SK_OK) {
 *             fprintf(stderr, "error: %s\n", sk_last_error());
 *             return 1;
 *         }
 *         sk_train_result result = sk_trainer_result(trainer);
 *         printf("solved=%d after %lld steps\n", result.solved,
 *                (long long)result.solved_at_steps);
 *         sk_trainer_destroy(trainer);
 *         sk_config_free(cfg);
 *         return 0;
 *     }
 *
 * Build with: cc prog.c $(pkg-config --cflags --libs skinner)
 *
 * Conventions: everything public starts with sk_ / SK_. Functions that can
 * fail on bad input return sk_status and leave a message in sk_last_error();
 * the library never calls exit(). A violated contract (a bug in the caller or
 * in skinner) aborts with file and line.
 */
#ifndef SKINNER_H
#define SKINNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "skinner/env.h"
#include "skinner/vec.h"
#include "skinner/check.h"
#include "skinner/module.h"
#include "skinner/version.h" /* SK_VERSION, generated from CMakeLists.txt */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ errors */

/* sk_status, sk_last_error, sk_fail and the other error calls are in
 * skinner/env.h. The last failure of one trainer, whichever thread it ran on
 * (sk_trainer_last_error), is kept beside the thread-local one. */

/* Where log lines go. The default writes to stderr. level: 0 info, 1 warning. */
typedef void (*sk_log_fn)(int level, const char *message, void *user);
SK_API void sk_set_log_callback(sk_log_fn fn, void *user);

/* ------------------------------------------------------------------ config */

/*
 * A config is a flat table of "section.key" -> string, filled from an INI file
 * and from overrides. Typed reads validate and name the key on failure. Every
 * key that was set but never read by the component it belongs to is reported
 * as unknown, so a typo never passes silently.
 */
typedef struct sk_config sk_config;

SK_API sk_config *sk_config_new(void);
SK_API void sk_config_free(sk_config *cfg);
/* Reads an INI file on top of what cfg holds (a preset, then a user's file):
 * the file's values override earlier ones. Values may be "quoted" with \\, \",
 * \n, \t, \r and \xHH escapes (sk_config_write quotes what needs it). SK_ERR_IO
 * if the file cannot be read or is not a regular file (a directory, a FIFO,
 * /dev/zero), SK_ERR_CORRUPT if it is over 16 MiB, SK_ERR_CONFIG with file:line
 * on a syntax error or on a key or [section] given twice in the file (naming
 * both lines). */
SK_API sk_status sk_config_load_file(sk_config *cfg, const char *path);
/* Sets "section.key" to value (copied; any C string survives sk_config_write).
 * SK_ERR_CONFIG naming the key and the problem if it is not of the form
 * section.key or a part is empty or holds a blank, a control character, '=',
 * ':', '[', ']', ';', '#', a quote or a backslash. */
SK_API sk_status sk_config_set(sk_config *cfg, const char *key, const char *value);
/* The value of key, or NULL. The returned string lives as long as cfg. */
SK_API const char *sk_config_get(const sk_config *cfg, const char *key);
/* A copy of cfg, or NULL when out of memory. */
SK_API sk_config *sk_config_copy(const sk_config *cfg);
/* Fails (SK_ERR_CONFIG) naming the first key of `section` ("env") that was
 * set but never read by a typed read: a typo, or a key the component does
 * not take. */
SK_API sk_status sk_config_check_unused(const sk_config *cfg, const char *section);
/* Writes the table as INI, sorted by section then key; sk_config_load_file
 * reads every value back byte for byte. */
SK_API sk_status sk_config_write(const sk_config *cfg, const char *path);

/* ------------------------------------------------------------ environments */

/* The env author kit (sk_env_def, action spaces, SoA tables, the RNG, typed
 * config reads, plugins) and the vectorized runner (sk_vec). */

/* ----------------------------------------------------------------- trainer */

typedef struct sk_trainer sk_trainer;

/* What one PPO update reports; also one row of metrics.csv. */
typedef struct sk_update_stats {
    int64_t update;
    int64_t steps;
    double wall_seconds;
    double sps;
    double mean_return; /* over the last 100 finished episodes; NAN before the first */
    double mean_length;
    int64_t episodes;   /* finished so far */
    double policy_loss, value_loss, entropy, approx_kl, clip_fraction, explained_variance;
    double learning_rate;
    int64_t anomalies; /* numerical anomalies so far, each answered by restoring the last good state */
    bool restored;     /* this update was rolled back by the governor */
} sk_update_stats;

typedef struct sk_train_result {
    int64_t total_steps;
    double wall_seconds;
    double sps;
    bool solved;
    int64_t solved_at_steps; /* -1 if not solved */
    double solved_at_seconds;
    double final_mean_return;
    bool interrupted;
    int64_t anomalies; /* updates rolled back by the governor */
} sk_train_result;

/* Called after every update; return false to stop training early. */
typedef bool (*sk_update_fn)(const sk_update_stats *stats, void *user);

/*
 * Builds a trainer from cfg (env.id, env.num_envs, ppo.*, policy.*, train.*).
 * Reads every key it knows; an unknown key in those sections, a malformed or
 * out-of-range value, or an unknown env fails with a message naming it.
 * The trainer keeps its own copy of cfg: cfg is not changed and may be freed
 * after the call.
 */
SK_API sk_status sk_trainer_create(sk_trainer **out, const sk_config *cfg);
/*
 * Fails naming a key of `given` (the keys a user set, as against an env preset's) that
 * belongs to another learner than cfg's train.algo: ppo.clip_coef under SAC, sac.tau under
 * DQN. sk_trainer_create refuses another learner's sections itself, except ppo.*, which
 * every run reads (the presets set it); a front end that layers a user's keys on a preset
 * calls this to refuse a ppo.* key that SAC or DQN would ignore.
 */
SK_API sk_status sk_config_check_learner_keys(const sk_config *given, const sk_config *cfg);
/* The trainer's resolved config: every key it read, with the defaults it
 * used for those not given. Lives as long as the trainer. */
SK_API const sk_config *sk_trainer_config(const sk_trainer *trainer);
/* The message of this trainer's last failure, whichever thread it happened
 * on ("no error" if none); lives as long as the trainer. */
SK_API const char *sk_trainer_last_error(const sk_trainer *trainer);
SK_API void sk_trainer_destroy(sk_trainer *trainer);
SK_API void sk_trainer_set_callback(sk_trainer *trainer, sk_update_fn fn, void *user);
/* Asks a running sk_trainer_run to stop without learning from the rollout in
 * progress, from any thread (an env that failed mid-step, a host's watchdog):
 * the run ends after that rollout with SK_ERR_INTERRUPTED, and its run folder
 * keeps the last checkpoint written before it. */
SK_API void sk_trainer_abort(sk_trainer *trainer);
/* Writes the run folder (config.ini, metrics.csv, checkpoints, summary.json)
 * into dir, created if missing. Without it, nothing is written. The folder
 * is locked until sk_trainer_destroy: while another process (or trainer)
 * writes into dir, SK_ERR_IO names it and nothing is written. */
SK_API sk_status sk_trainer_set_run_dir(sk_trainer *trainer, const char *dir);
/* Trains until train.total_steps, until solved when train.stop_when_solved,
 * or until the callback returns false. Every env step is checked: an env
 * that writes a non-finite or out-of-Box observation, a non-finite reward,
 * fewer observation values than obs_size or a mask allowing no action ends
 * the run with SK_ERR_ENV naming the env, index, step and value (nothing is
 * learned from that rollout); SK_ERR_NUMERIC is the learner's divergence. */
SK_API sk_status sk_trainer_run(sk_trainer *trainer);
SK_API sk_train_result sk_trainer_result(const sk_trainer *trainer);
/* Worker threads the trainer uses: train.threads (0 = all cores), capped at env.num_envs. */
SK_API int sk_trainer_threads(const sk_trainer *trainer);
/* Threads the learner's update runs on: PPO's minibatches, sk_trainer_threads; SAC's,
 * train.threads (0 = all cores) up to its 2 row blocks, whatever env.num_envs is (one env, as
 * CleanRL's SAC, still updates on 2 threads, the same bits as on one); DQN's, 1. */
SK_API int sk_trainer_learner_threads(const sk_trainer *trainer);
/* The model's FLOPs per env step of training, counting matrix products only:
 * one forward of both nets (and any recurrent core) in the rollout, then per
 * update epoch a forward and a backward (twice the forward's). */
SK_API double sk_trainer_flops_per_step(const sk_trainer *trainer);
/* Wall seconds this process's sk_trainer_run spent collecting rollouts (stepping the
 * envs and acting, and the exchange between ranks) and learning from them (advantages
 * and the update epochs), summed over its updates; either may be NULL. The rest of the
 * run's time is bookkeeping, logging and checkpoints. */
SK_API void sk_trainer_time_split(const sk_trainer *trainer, double *rollout_seconds,
                                  double *learn_seconds);
/* The share of the rollouts' thread-time the threads spent waiting for each other (0 to 1):
 * 1 - (seconds in workers' jobs) / (threads x the rollouts' wall seconds). Envs whose steps
 * take uneven time leave threads idle at the end of each rollout; train.slices (more slices
 * than threads, taken as threads come free) lowers it. 0 before the first rollout. */
SK_API double sk_trainer_rollout_idle(const sk_trainer *trainer);
/* The policy's parameters (floats) and the env steps of one update (env.num_envs x
 * ppo.horizon): a model's size and an update's batch, for reports. */
SK_API size_t sk_trainer_num_params(const sk_trainer *trainer);
SK_API int sk_trainer_batch_size(const sk_trainer *trainer);
/* Writes a checkpoint (safetensors): the policy under plain tensor names
 * (actor.0.weight, ...), loadable by sk_evaluate and by PyTorch, plus the whole
 * training state (optimiser, counters, RNG streams, normalisation statistics,
 * env states) and the resolved config as metadata. Atomic: written to a
 * temporary file, fsynced and renamed. */
SK_API sk_status sk_trainer_save(const sk_trainer *trainer, const char *path);
/* Restores a checkpoint written by sk_trainer_save into a fresh trainer built
 * from the same config (and thread count); the next sk_trainer_run continues
 * the run as if it had never stopped. A checkpoint of another env, another
 * shape or thread count is refused with a message naming the mismatch; after a
 * failure, destroy the trainer. */
SK_API sk_status sk_trainer_resume(sk_trainer *trainer, const char *path);

/* ------------------------------------------------------------- evaluation */

#define SK_EVAL_MAX_OPS 64

typedef struct sk_eval_result {
    int episodes;
    double mean_return, std_return;
    double mean_length;
    double min_return, max_return;
    /* every episode_log field (0 return, 1 length, then the env's log_names):
     * mean and standard deviation over the episodes */
    int num_log_fields;
    double log_mean[SK_MAX_LOG_FIELDS], log_std[SK_MAX_LOG_FIELDS];
    /* discrete envs: how often each head-0 action was taken in the counted
     * episodes (num_ops = head 0's size, at most SK_EVAL_MAX_OPS) */
    int num_ops;
    int64_t op_counts[SK_EVAL_MAX_OPS];
} sk_eval_result;

/*
 * Loads a checkpoint written by sk_trainer_save and runs `episodes` episodes
 * (each env contributes a fixed quota, so short episodes are not favoured).
 * greedy picks the most likely action instead of sampling.
 * trace_path, if not NULL, is written as JSON lines: one object per counted
 * step {"env", "episode" (the env's k-th), "step", "action": [...], "op"
 * (head 0's name, where the env names them), "reward"}, and one per episode
 * end {"env", "episode", "end": true, "return", "length", and each of the
 * env's log_names}.
 */
SK_API sk_status sk_evaluate(const char *checkpoint, const char *env_name, int episodes, bool greedy,
                      uint64_t seed, const char *trace_path, sk_eval_result *out);

/* sk_evaluate with overrides (may be NULL) of the run's data locations: keys
 * the env reads as paths (sk_cfg_path), such as Prover-v0's env.dataset, so
 * a checkpoint evaluates where its data now lives. Any other key is refused
 * with SK_ERR_INVALID: it shapes the env or the policy the checkpoint holds. */
SK_API sk_status sk_evaluate_with(const char *checkpoint, const char *env_name,
                                  const sk_config *overrides, int episodes, bool greedy,
                                  uint64_t seed, const char *trace_path, sk_eval_result *out);

/* What an evaluation of a checkpoint may change besides its episodes and seed. All zero
 * (sk_eval_options options = {0}), like a NULL pointer, is sk_evaluate's defaults: the
 * checkpoint's env, sampled actions, no exploration, no trace, the data where the run left
 * it. Fields are only ever added at the end, zero meaning what the call did before, so a
 * program that names the fields it sets (designated initializers) builds unchanged. */
typedef struct sk_eval_options {
    const char *env_name;       /* NULL: the checkpoint's env; else it must name that env */
    const sk_config *overrides; /* data locations, as sk_evaluate_with's; NULL: none */
    bool greedy;                /* the most likely action instead of a sampled one */
    /* A DQN run's epsilon-greedy acting, as `skinner eval --epsilon` (CleanRL evaluates its
     * DQN at 0.05): each step, with chance epsilon, a row takes a uniform allowed action in
     * place of its argmax of Q, drawn from the eval seed's stream. 0: the argmax always. */
    double epsilon;
    const char *trace_path; /* the JSON lines of sk_evaluate; NULL: none */
} sk_eval_options;

/* sk_evaluate with options (NULL: the defaults). SK_ERR_INVALID naming the value for an
 * epsilon outside [0, 1], and naming the learner for an epsilon above 0 with a checkpoint
 * whose run is not DQN's (train.algo = dqn): PPO samples its own policy, SAC acts by its
 * deterministic action. Everything else as sk_evaluate_with. */
SK_API sk_status sk_evaluate_with_options(const char *checkpoint, int episodes, uint64_t seed,
                                          const sk_eval_options *options, sk_eval_result *out);

/* Baselines without a policy: the env's hand-written heuristic
 * (sk_env_def.heuristic), action 0 on every head (for Morpho-v0: WAIT, the
 * host alone), or uniform random actions (each head's allowed choices, or
 * each continuous value within its bounds; seeded, one stream per env). */
typedef enum sk_controller {
    SK_CONTROLLER_HEURISTIC,
    SK_CONTROLLER_ZERO,
    SK_CONTROLLER_RANDOM
} sk_controller;
/* Runs `episodes` episodes of env_name, created from cfg's env.* keys, with a
 * controller; as sk_evaluate otherwise. */
SK_API sk_status sk_evaluate_controller(const char *env_name, const sk_config *cfg,
                                 sk_controller controller, int episodes, uint64_t seed,
                                 const char *trace_path, sk_eval_result *out);

/*
 * A multi-agent env's games against an opponent (`skinner eval ENV --checkpoint RUN
 * --opponent NAME`). In each of min(episodes, 64) envs the policy plays one agent and the
 * opponent every other; env e's policy starts as agent e % agents and moves to the next
 * agent after each game in which every agent's episode ended together (a board game), so
 * the first move alternates; in an env whose agents live on (Arena-v0) it keeps its agent.
 * `episodes` of the policy's episodes are counted, each by the sign of its return: a win
 * (> 0), a draw (0) or a loss (< 0), as in a zero-sum game.
 *
 * opponent: "random" (uniform over each row's allowed actions), "heuristic" (the env's
 * heuristic controller, where it has one), one of the env's built-in opponents
 * (sk_env_extras.opponents: "NAME" or "NAME:ARG", as ConnectFour's "alphabeta:4"), or a
 * checkpoint of the same env (a run folder or its policy.safetensors), whose policy plays
 * the other agents, greedy when greedy is. SK_ERR_INVALID naming what the env offers for
 * an opponent it does not know, and for a single-agent env.
 */
#define SK_VERSUS_MAX_ROLES 8
#define SK_VERSUS_NAME_SIZE 32
/* One outcome: how many games, their share and its 95% Wilson score interval. */
typedef struct sk_outcome {
    int count;
    double rate, low, high;
} sk_outcome;
typedef struct sk_versus_result {
    int games;
    sk_outcome win, draw, loss;
    double mean_return, std_return; /* the policy's */
    /* the opponent's episodes (its agents') that ended while the games were counted, and
     * their mean return: Arena-v0's snakes against the policy's */
    int64_t opponent_episodes;
    double opponent_mean_return;
    /* the split by the agent the policy played (its index in the env: 0 moves first in
     * Connect Four), for envs of at most SK_VERSUS_MAX_ROLES agents (else num_roles 0) */
    int num_roles;
    char role_names[SK_VERSUS_MAX_ROLES][SK_VERSUS_NAME_SIZE];
    int role_games[SK_VERSUS_MAX_ROLES], role_wins[SK_VERSUS_MAX_ROLES],
        role_draws[SK_VERSUS_MAX_ROLES], role_losses[SK_VERSUS_MAX_ROLES];
} sk_versus_result;
/* checkpoint: a policy.safetensors or the run folder that holds it. */
SK_API sk_status sk_evaluate_versus(const char *checkpoint, const char *env_name,
                                    const char *opponent, int episodes, bool greedy,
                                    uint64_t seed, sk_versus_result *out);
/* The Wilson score interval of `count` successes in `total` trials at the normal quantile
 * z (1.96 for 95%): the interval's ends into *low and *high; [0, 1] for no trials. */
SK_API void sk_wilson_interval(int count, int total, double z, double *low, double *high);

/* ----------------------------------------------------------------- agents */

/*
 * A saved policy to act with: what `skinner eval` runs, for a program that
 * steps its own envs (the Python module's skinner.load). Not thread-safe: one
 * agent per thread.
 */
typedef struct sk_agent sk_agent;

/* One tensor of the policy, named as in the checkpoint ("actor.0.weight"):
 * ndim 1 (shape[0]) or 2 (shape[0] rows of shape[1]), float32, row-major;
 * data lives as long as the agent. */
typedef struct sk_tensor_view {
    const char *name;
    int ndim;
    int64_t shape[2];
    const float *data;
} sk_tensor_view;

/* Loads a checkpoint written by sk_trainer_save (and the plugin its run
 * recorded); overrides (may be NULL) move data locations as in
 * sk_evaluate_with. Samples from stream 0 of seed 0 until sk_agent_seed. */
SK_API sk_status sk_agent_load(sk_agent **out, const char *checkpoint, const sk_config *overrides);
SK_API void sk_agent_free(sk_agent *agent);
/* The env the policy was trained on, and the run's resolved config. */
SK_API const sk_env_def *sk_agent_env(const sk_agent *agent);
SK_API const sk_config *sk_agent_config(const sk_agent *agent);
SK_API void sk_agent_seed(sk_agent *agent, uint64_t seed);
/*
 * Actions for `rows` raw observations (rows, obs_size), normalised as in
 * training: discrete envs into actions (rows, num_heads), continuous ones
 * into actions_continuous (rows, dim). masks (rows, mask_size) or NULL (all
 * allowed). greedy takes the most likely action (the mean). A continuous run's actions are
 * what its env got in training: clipped to the bounds with ppo.clip_actions, tanh-squashed
 * into them for SAC. SK_ERR_INVALID
 * naming the row for an observation the policy cannot take (non-finite, an
 * index out of range) or a mask row that allows nothing for some head.
 */
SK_API sk_status sk_agent_act(sk_agent *agent, const float *obs, const uint8_t *masks, int rows,
                              bool greedy, int32_t *actions, float *actions_continuous);
/* Floats of one row's memory for a recurrent policy (policy.core): core_size
 * for a GRU (h), twice that for an LSTM (h, then c); 0 for a feed-forward one. */
SK_API int sk_agent_state_size(const sk_agent *agent);
/*
 * sk_agent_act for a recurrent policy (sk_agent_act refuses one): state
 * (rows, state_size) holds each row's memory and is advanced in place;
 * episode_start (rows) or NULL: where 1, that row's episode starts with this
 * observation and its memory is taken as zero (as after a reset in training).
 */
SK_API sk_status sk_agent_act_recurrent(sk_agent *agent, const float *obs, const uint8_t *masks,
                                        const uint8_t *episode_start, float *state, int rows,
                                        bool greedy, int32_t *actions, float *actions_continuous);
/* The policy's tensors: index 0 .. sk_agent_num_tensors - 1. */
SK_API int sk_agent_num_tensors(const sk_agent *agent);
SK_API sk_status sk_agent_tensor(const sk_agent *agent, int index, sk_tensor_view *out);
/* The policy as an ONNX model, or as one C99 header needing only libm (docs/export.md):
 * SK_ERR_INVALID for a policy kind that cannot be exported, SK_ERR_IO naming the path. */
SK_API sk_status sk_agent_export_onnx(const sk_agent *agent, const char *path);
SK_API sk_status sk_agent_export_c(const sk_agent *agent, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* SKINNER_H */
