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

#ifdef __cplusplus
extern "C" {
#endif

#define SK_VERSION "0.1.0"

/* ------------------------------------------------------------------ errors */

typedef enum sk_status {
    SK_OK = 0,
    SK_ERR_INVALID,     /* a value out of range or of the wrong type */
    SK_ERR_CONFIG,      /* a malformed config file or an unknown key */
    SK_ERR_UNKNOWN_ENV, /* no environment with that name */
    SK_ERR_IO,          /* a file could not be read or written */
    SK_ERR_CORRUPT,     /* a checkpoint or data file that fails validation */
    SK_ERR_NOMEM,       /* an allocation failed */
    SK_ERR_NUMERIC,     /* training diverged (non-finite values) */
    SK_ERR_INTERRUPTED, /* stopped by a signal or a callback */
} sk_status;

/* The message of the last failure on this thread; never NULL. */
const char *sk_last_error(void);
/* A short name for a status ("invalid value", ...). */
const char *sk_status_name(sk_status status);

/* Where log lines go. The default writes to stderr. level: 0 info, 1 warning. */
typedef void (*sk_log_fn)(int level, const char *message, void *user);
void sk_set_log_callback(sk_log_fn fn, void *user);

/* ------------------------------------------------------------------ config */

/*
 * A config is a flat table of "section.key" -> string, filled from an INI file
 * and from overrides. Typed reads validate and name the key on failure. Every
 * key that was set but never read by the component it belongs to is reported
 * as unknown, so a typo never passes silently.
 */
typedef struct sk_config sk_config;

sk_config *sk_config_new(void);
void sk_config_free(sk_config *cfg);
/* Reads an INI file; later values override earlier ones. SK_ERR_IO if the file
 * cannot be read, SK_ERR_CONFIG with file:line on a syntax error. */
sk_status sk_config_load_file(sk_config *cfg, const char *path);
/* Sets "section.key" to value (copied). SK_ERR_CONFIG if the key is not of the
 * form section.key. */
sk_status sk_config_set(sk_config *cfg, const char *key, const char *value);
/* The value of key, or NULL. The returned string lives as long as cfg. */
const char *sk_config_get(const sk_config *cfg, const char *key);
/* Writes the table as INI, sorted by section then key. */
sk_status sk_config_write(const sk_config *cfg, const char *path);

/* ------------------------------------------------------------ environments */

#define SK_MAX_HEADS 8
#define SK_MAX_ACTION_DIM 16
#define SK_MAX_HEAD0_PRIOR 8
#define SK_MAX_LOG_FIELDS 8

typedef enum sk_space_kind { SK_SPACE_DISCRETE, SK_SPACE_CONTINUOUS } sk_space_kind;

/*
 * Discrete: num_heads factored categorical heads of head_sizes[h] choices.
 * Head 0 is always relevant; head h > 0 is relevant only for the head-0
 * values whose bit is set in relevant_when[h] (0 = always relevant). An
 * irrelevant head contributes nothing to the log-probability or entropy the
 * learner uses. Continuous: dim values, each within [low, high].
 *
 * Masks (sk_env_def.mask_size > 0), one byte per choice, 1 = allowed: by
 * default one block per head, in head order (sk_action_mask_size gives the
 * size). With masks_by_head0 the allowed choices of heads h > 0 depend on
 * the head-0 choice: head 0's block, then for each head h > 0 one block of
 * head_sizes[h] per head-0 value a (the one used when head 0 chose a). A
 * head irrelevant to the chosen head-0 value is not masked.
 */
typedef struct sk_action_space {
    sk_space_kind kind;
    int num_heads;
    int head_sizes[SK_MAX_HEADS];
    uint64_t relevant_when[SK_MAX_HEADS];
    bool masks_by_head0;
    /* An exploration prior: added to the actor's initial logits of head 0's
     * first SK_MAX_HEAD0_PRIOR choices (all 0: uniform). Morpho-v0 favours
     * WAIT at the start, so that exploring seeds are not pruned at once. */
    float head0_prior[SK_MAX_HEAD0_PRIOR];
    int dim;
    float low[SK_MAX_ACTION_DIM];
    float high[SK_MAX_ACTION_DIM];
} sk_action_space;

/*
 * The I/O buffers of a batch of envs, owned by the caller, struct-of-arrays,
 * indexed by the absolute env index i. An env reads actions and writes
 * everything else for the indices it is asked to step.
 */
typedef struct sk_env_io {
    float *obs;                      /* (num_envs, obs_size) after the step, after autoreset */
    float *final_obs;                /* (num_envs, obs_size) the observation that ended an episode */
    const int32_t *actions;          /* (num_envs, num_heads) discrete actions */
    const float *actions_continuous; /* (num_envs, dim) continuous actions */
    float *rewards;                  /* (num_envs) */
    uint8_t *terminated;             /* (num_envs) the episode reached a terminal state */
    uint8_t *truncated;              /* (num_envs) the episode hit its time limit (and not terminated) */
    uint8_t *masks;                  /* (num_envs, mask_size) 1 = allowed; NULL if mask_size is 0 */
    float *episode_log;              /* (num_envs, num_log_fields) written where an episode ended */
} sk_env_io;

/* One struct-of-arrays field of an env's state, for checkpoints: `count`
 * elements of `type` per env, num_envs x count in all, at data. */
typedef enum sk_array_type {
    SK_ARRAY_F32, SK_ARRAY_F64, SK_ARRAY_I32, SK_ARRAY_I64, SK_ARRAY_U8, SK_ARRAY_U64
} sk_array_type;

typedef struct sk_env_array {
    const char *name;
    sk_array_type type;
    int count;
    void *data;
} sk_env_array;

#define SK_MAX_ENV_ARRAYS 16

/* How a symbolic observation is laid out (see sk_env_def.obs_atoms). */
typedef struct sk_obs_atoms {
    int atoms;        /* atoms per state, padded with predicate 0 */
    int candidates;   /* candidate states after the current one */
    int num_preds;    /* predicate indices are < num_preds */
    int num_args;     /* argument indices are < num_args */
} sk_obs_atoms;

/*
 * An environment is a table of functions over a batch of envs. State is
 * struct-of-arrays so the step loop vectorises. step(state, io, lo, hi)
 * advances envs lo..hi-1: it clears reward and flags, advances the state,
 * and for an episode that ended writes final_obs and episode_log, then resets
 * that env in place and writes its first observation to obs. Different
 * threads may step disjoint ranges at once. The env owns only its state.
 *
 * episode_log fields: 0 is the episode return, 1 its length; more are
 * env-specific scores named by log_names. All floats, so a runner can sum,
 * average and zero them without knowing the env.
 */
typedef struct sk_env_def {
    const char *id;      /* Gymnasium-style id with version, e.g. "CartPole-v1" */
    const char *alias;   /* short name, e.g. "cartpole" */
    const char *summary; /* one line */
    const char *preset;  /* basename of its config preset in configs/, e.g. "cartpole" */
    int obs_size;
    sk_action_space action_space;
    int mask_size;
    int max_episode_steps;
    double solved_threshold; /* mean return over 100 episodes that counts as solved; NAN: none */
    int num_log_fields;
    const char *log_names[SK_MAX_LOG_FIELDS];
    int bench_num_envs; /* envs `skinner bench env` steps by default; 0: 4096 */
    const char *const *action_names; /* names of head 0's choices for reports, or NULL */
    /* Allocates state for num_envs envs; reads env.* keys from cfg. */
    sk_status (*create)(void **state, int num_envs, const sk_config *cfg);
    void (*destroy)(void *state);
    /* Seeds each env i in lo..hi-1 with its own stream from (seed, i), resets it
     * and writes its observation (and mask). */
    void (*reset)(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed);
    void (*step)(void *state, const sk_env_io *io, int lo, int hi);
    /* Lists the arrays that make up the whole state (RNG streams included), so a
     * checkpoint can save and restore it exactly; returns how many (at most
     * SK_MAX_ENV_ARRAYS). */
    int (*state_arrays)(void *state, sk_env_array *arrays);
    /* Symbolic observations only (NULL otherwise): the observation is the
     * current state's atoms then each candidate's, `atoms` atoms of
     * [predicate, arg0, arg1] indices each, and the action picks a
     * candidate. Reports the index ranges, which can depend on the data. */
    void (*obs_atoms)(const void *state, sk_obs_atoms *out);
    /* A hand-written baseline controller, NULL if the env has none (`skinner
     * eval ENV --policy heuristic`): writes actions (num_envs, num_heads) for
     * envs lo..hi-1 from their current state, within their masks. */
    void (*heuristic)(const void *state, int lo, int hi, int32_t *actions);
} sk_env_def;

/* The mask bytes per env the action space's layout needs (see above). */
int sk_action_mask_size(const sk_action_space *space);

/* Finds an env by id or alias, case-insensitively. NULL with a message listing
 * the known envs if there is none. */
const sk_env_def *sk_env_find(const char *name);
/* The registered envs, NULL-terminated. */
const sk_env_def *const *sk_env_list(void);

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
 * cfg must outlive the trainer.
 */
sk_status sk_trainer_create(sk_trainer **out, sk_config *cfg);
void sk_trainer_destroy(sk_trainer *trainer);
void sk_trainer_set_callback(sk_trainer *trainer, sk_update_fn fn, void *user);
/* Writes the run folder (config.ini, metrics.csv, checkpoints, summary.json)
 * into dir, created if missing. Without it, nothing is written. */
sk_status sk_trainer_set_run_dir(sk_trainer *trainer, const char *dir);
/* Trains until train.total_steps, until solved when train.stop_when_solved,
 * or until the callback returns false. */
sk_status sk_trainer_run(sk_trainer *trainer);
sk_train_result sk_trainer_result(const sk_trainer *trainer);
/* Worker threads the trainer uses: train.threads (0 = all cores), capped at env.num_envs. */
int sk_trainer_threads(const sk_trainer *trainer);
/* Writes a checkpoint (safetensors): the policy under plain tensor names
 * (actor.0.weight, ...), loadable by sk_evaluate and by PyTorch, plus the whole
 * training state (optimiser, counters, RNG streams, normalisation statistics,
 * env states) and the resolved config as metadata. Atomic: written to a
 * temporary file, fsynced and renamed. */
sk_status sk_trainer_save(const sk_trainer *trainer, const char *path);
/* Restores a checkpoint written by sk_trainer_save into a fresh trainer built
 * from the same config (and thread count); the next sk_trainer_run continues
 * the run as if it had never stopped. A checkpoint of another env, another
 * shape or thread count is refused with a message naming the mismatch; after a
 * failure, destroy the trainer. */
sk_status sk_trainer_resume(sk_trainer *trainer, const char *path);

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
sk_status sk_evaluate(const char *checkpoint, const char *env_name, int episodes, bool greedy,
                      uint64_t seed, const char *trace_path, sk_eval_result *out);

/* Baselines without a policy: the env's hand-written heuristic
 * (sk_env_def.heuristic), or action 0 on every head (for Morpho-v0: WAIT,
 * the host alone). */
typedef enum sk_controller { SK_CONTROLLER_HEURISTIC, SK_CONTROLLER_ZERO } sk_controller;
/* Runs `episodes` episodes of env_name, created from cfg's env.* keys, with a
 * controller; as sk_evaluate otherwise. */
sk_status sk_evaluate_controller(const char *env_name, const sk_config *cfg,
                                 sk_controller controller, int episodes, uint64_t seed,
                                 const char *trace_path, sk_eval_result *out);

#ifdef __cplusplus
}
#endif
#endif /* SKINNER_H */
