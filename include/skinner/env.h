/*
 * skinner/env.h: the environment author kit. Everything an environment needs,
 * in the tree or built outside it as a plugin, and nothing else: the status
 * codes and errors, typed config reads, the RNG, action spaces, the I/O of a
 * batch, the struct-of-arrays field table and the env table itself.
 *
 * A minimal env, outside skinner's tree (examples/plugin holds a whole one):
 *
 *     #include <skinner/env.h>
 *
 *     typedef struct coin { int32_t *elapsed; uint64_t *rng; } coin;
 *     static const sk_soa_field fields[] = {
 *         SK_SOA_FIELD_RANGE(coin, elapsed, SK_ARRAY_I32, 0, 10),
 *         SK_SOA_FIELD(coin, rng, SK_ARRAY_U64),
 *     };
 *     ... create: *state = sk_soa_create(sizeof(coin), fields, 2, num_envs, "Coin-v0");
 *     ... reset, step: read io->actions[i], write io->obs, rewards, flags ...
 *     const sk_env_def coin_env = {.id = "Coin-v0", .obs_size = 1, ...};
 *     SK_PLUGIN_EXPORT(&coin_env)
 *
 * Built with: cc -std=c17 -O2 coin.c -o libcoin.so $(pkg-config --cflags --libs skinner-plugin)
 * (-fPIC -shared and the headers, no -lskinner: the program that loads the plugin
 * provides the sk_* functions; docs/install.md)
 * Trained with: skinner train ./libcoin.so:Coin-v0
 */
#ifndef SKINNER_ENV_H
#define SKINNER_ENV_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the shared library exports; everything else in it is hidden. */
#if defined(__GNUC__)
#define SK_API __attribute__((visibility("default")))
#else
#define SK_API
#endif

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
    SK_ERR_ENV,         /* an env broke its contract (non-finite or unwritten output, a value
                           outside its declared space, no legal action): the env's fault */
} sk_status;

/* The message of the last failure on this thread; never NULL. */
SK_API const char *sk_last_error(void);
/* A short name for a status ("invalid value", ...). */
SK_API const char *sk_status_name(sk_status status);
/* Records a formatted message for sk_last_error() and returns status: how an
 * env's create reports bad config or unreadable data. */
SK_API sk_status sk_fail(sk_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A log line (level 0 info, 1 warning) through the host's log callback. */
SK_API void sk_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 64-byte aligned, zeroed allocation; NULL on failure. Free with sk_free. */
SK_API void *sk_alloc(size_t bytes);
SK_API void sk_free(void *ptr);

/* ------------------------------------------------------------------ config */

/*
 * A config is a flat table of "section.key" -> string. An env reads its own
 * keys (env.*) with the typed reads below, which validate, name the key on
 * failure, mark it as used (a key set but never read is reported as unknown)
 * and record the default when it was absent.
 */
typedef struct sk_config sk_config;

SK_API sk_status sk_cfg_int(const sk_config *cfg, const char *key, int64_t def, int64_t lo,
                            int64_t hi, int64_t *out);
SK_API sk_status sk_cfg_double(const sk_config *cfg, const char *key, double def, double lo,
                               double hi, double *out);
SK_API sk_status sk_cfg_bool(const sk_config *cfg, const char *key, bool def, bool *out);
/* choices: NULL-terminated list of accepted values; *out is the index. */
SK_API sk_status sk_cfg_choice(const sk_config *cfg, const char *key, const char *def,
                               const char *const *choices, int *out);
/* A string value; the default when absent. */
SK_API const char *sk_cfg_string(const sk_config *cfg, const char *key, const char *def);
/* A file-system path (a dataset folder): like sk_cfg_string, but a relative
 * value is made absolute, by realpath() when it exists and otherwise joined to
 * the current directory, and the absolute form is recorded in cfg, so that
 * config.ini and checkpoint metadata name the same data from any directory.
 * An empty value is kept (read keywords such as "auto" with sk_cfg_string
 * first). *out lives as long as cfg (NULL if key is
 * absent and def is NULL). SK_ERR_IO if the current directory cannot be read,
 * SK_ERR_NOMEM. */
SK_API sk_status sk_cfg_path(const sk_config *cfg, const char *key, const char *def,
                             const char **out);

/* ------------------------------------------------------------- data files */

/* The largest data file an env should read (a knowledge base's facts, gzip'd
 * IDX images): 2 GiB, so that a count of bytes or records read from a file
 * of at most this size stays below 2^31. */
#define SK_DATA_FILE_MAX_BYTES ((int64_t)2 << 30)

/* Opens path for reading only if it is a regular file of at most max_bytes:
 * a directory, a FIFO, a device (/dev/zero) or a socket is refused without
 * blocking, and so is a larger file. `what` names the file's role in the
 * message ("config file", "knowledge-base file"). On success *fd (the caller
 * closes it) and *size (may be NULL); else SK_ERR_IO (refused or unreadable) or
 * SK_ERR_CORRUPT (too large), recorded by sk_fail. */
SK_API sk_status sk_open_regular(const char *path, int64_t max_bytes, const char *what, int *fd,
                                 int64_t *size);

/* --------------------------------------------------------------------- rng */

/*
 * splitmix64 (Steele, Lea, Flood 2014): one 64-bit word of state, passes
 * BigCrush, and any (seed, stream) pair gives an independent start by
 * hashing, which is what per-env streams need: seed env i's stream with
 * sk_rng_seed(seed, i) and keep the word in the env's state (a U64 field),
 * so checkpoints carry it.
 */
static inline uint64_t sk_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#define SK_GOLDEN_GAMMA 0x9e3779b97f4a7c15ULL

static inline uint64_t sk_rng_next(uint64_t *state) {
    *state += SK_GOLDEN_GAMMA;
    return sk_mix64(*state);
}

/* The start of stream `stream` of `seed`. */
static inline uint64_t sk_rng_seed(uint64_t seed, uint64_t stream) {
    return sk_mix64(seed * SK_GOLDEN_GAMMA + sk_mix64(stream + 0x632be59bd9b4e019ULL));
}

/* Uniform in [0, 1) with 24 random bits. */
static inline float sk_rng_float(uint64_t *state) {
    return (float)(sk_rng_next(state) >> 40) * 0x1.0p-24f;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double sk_rng_double(uint64_t *state) {
    return (double)(sk_rng_next(state) >> 11) * 0x1.0p-53;
}

/* Uniform in [lo, hi). */
static inline double sk_rng_uniform(uint64_t *state, double lo, double hi) {
    return lo + (hi - lo) * sk_rng_double(state);
}

/* Uniform integer in [0, n). */
static inline uint32_t sk_rng_below(uint64_t *state, uint32_t n) {
    return (uint32_t)(((sk_rng_next(state) >> 32) * (uint64_t)n) >> 32);
}

/* Standard normal by Box-Muller (one of the pair): weight init, noise. */
static inline double sk_rng_normal(uint64_t *state) {
    double u1 = 1.0 - sk_rng_double(state); /* (0, 1] so log is finite */
    double u2 = sk_rng_double(state);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ------------------------------------------------------------ action space */

/* The largest obs_size a table may declare (64 MB of floats per observation):
 * a bound on every product of sizes with it, so a table cannot ask for
 * buffers no machine has and get a wrapped size instead. */
#define SK_MAX_OBS_SIZE (1 << 24)
#define SK_MAX_HEADS 8
/* The widest continuous action (ABI 7; ABI 1-6 held 16, and their tables still load:
 * src/envs/plugin.c converts them). 64 holds the largest MuJoCo bodies RL benchmarks
 * control: Humanoid's 17, MuJoCo Playground's Unitree G1 (29), dm_control's CMU
 * humanoid (56). SK_ENV_LAYOUT_ABI6 builds a table laid out as ABI 1-6 built it (the
 * loader's tests only: tests/plugins/v6_plugin.c). */
#ifdef SK_ENV_LAYOUT_ABI6
#define SK_MAX_ACTION_DIM 16
#else
#define SK_MAX_ACTION_DIM 64
#endif
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
     * first SK_MAX_HEAD0_PRIOR choices (all 0: uniform). */
    float head0_prior[SK_MAX_HEAD0_PRIOR];
    int dim;
    float low[SK_MAX_ACTION_DIM];
    float high[SK_MAX_ACTION_DIM];
} sk_action_space;

/* The mask bytes per env the action space's layout needs (see above); -1
 * when that passes INT_MAX (summed in 64 bits) or num_heads is out of range:
 * such a table is refused. */
SK_API int sk_action_mask_size(const sk_action_space *space);

/* A mask row every head can choose from: head 0 allows a choice, and so does
 * each head in the block that any allowed head-0 choice would use. -1 when
 * usable, else the first head with nothing allowed (what an env must never
 * write, and a restored checkpoint must not hold: sampling needs one allowed
 * choice per head). */
SK_API int sk_action_mask_unusable(const sk_action_space *space, const uint8_t *mask);

/* Checks one env's actions (num_heads values) against the space and its mask
 * row (NULL: unmasked): -1 when every head's value is within its size and,
 * where the head is relevant, allowed; else the first head that is not.
 * Continuous spaces: -1. */
SK_API int sk_action_check(const sk_action_space *space, const uint8_t *mask_row,
                           const int32_t *action_row);

/* -------------------------------------------------------------- batch I/O */

/*
 * The I/O buffers of a batch of envs, owned by the caller (sk_vec),
 * struct-of-arrays, indexed by the absolute env index i. An env reads actions
 * and writes everything else for the indices it is asked to step.
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
    /* A uint8 env (sk_env_def.obs_dtype SK_OBS_U8) writes these instead of obs
     * and final_obs, which are then NULL; NULL for a float env. */
    uint8_t *obs_u8;                 /* (num_envs, obs_size) */
    uint8_t *final_obs_u8;           /* (num_envs, obs_size) */
    /* A multi-agent env's (sk_env_def.num_agents > 1) per-row flags, written by
     * reset and step for the rows of envs lo..hi-1: 1 when the agent acts at
     * the next step (its turn, not finished), 0 when its action is ignored.
     * NULL for a single-agent env (every row acts). */
    uint8_t *active;                 /* (num_rows) */
} sk_env_io;

/*
 * Multi-agent envs (sk_env_def.num_agents = A > 1): every buffer above is per
 * ROW, not per env, where row = env * A + agent; "num_envs" in the shapes
 * above reads num_envs * A. step(state, io, lo, hi) still advances ENVS
 * lo..hi-1 (rows lo * A .. hi * A - 1). Per row: the agent's observation,
 * mask (a usable mask even when inactive), action, reward, flags and episode
 * log. An agent's episode ends on the step it finishes (terminated or
 * truncated on its row, final_obs and episode_log written there); then it
 * either stays inactive until its env resets, when every row of the env gets
 * the new episode's observation, or is reborn on its row in the same step
 * (the new life's first observation, active 1: a single-agent env's
 * autoreset, per row). Rewards may arrive on an inactive row (the
 * opponent's winning move): the learner adds them to the agent's last
 * action. The agent's role (player, team) belongs in its observation.
 */

/* ------------------------------------------------------------- state arrays */

/* The element types of state arrays. The values are those of the safetensors
 * dtypes skinner writes them as (checked at compile time in src/io). */
typedef enum sk_array_type {
    SK_ARRAY_F32, SK_ARRAY_F64, SK_ARRAY_I32, SK_ARRAY_I64, SK_ARRAY_U8, SK_ARRAY_U64
} sk_array_type;

/*
 * One struct-of-arrays field of an env's state, for checkpoints: `count`
 * elements of `type` per env, num_envs x count in all, at data. When
 * has_range, every element must lie in [lo, hi] (integers) or be finite and
 * in [lo, hi] (floats); a checkpoint whose array breaks its range is refused
 * before any of it is used.
 */
typedef struct sk_env_array {
    const char *name;
    sk_array_type type;
    int count;
    void *data;
    bool has_range;
    double lo, hi;
} sk_env_array;

#define SK_MAX_ENV_ARRAYS 16

/*
 * The SoA field table: an env describes each per-env array once, and the
 * table allocates, frees and lists (for checkpoints) them, so no field is
 * forgotten in one place. offset is offsetof the field's pointer member.
 */
typedef struct sk_soa_field {
    const char *name;
    sk_array_type type;
    size_t offset;
    bool has_range;
    double lo, hi;
} sk_soa_field;

#define SK_SOA_FIELD(state_type, member, array_type)                                               \
    {#member, array_type, offsetof(state_type, member), false, 0.0, 0.0}
/* A field saved under another name than its member's. */
#define SK_SOA_FIELD_NAMED(name, state_type, member, array_type)                                   \
    {name, array_type, offsetof(state_type, member), false, 0.0, 0.0}
/* A field whose every restored value must lie in [lo, hi]. */
#define SK_SOA_FIELD_RANGE(state_type, member, array_type, lo, hi)                                 \
    {#member, array_type, offsetof(state_type, member), true, (double)(lo), (double)(hi)}

/* Allocates a zeroed state struct of `size` bytes and every field's array of
 * num_envs elements. NULL (with a message naming env_id) when out of memory. */
SK_API void *sk_soa_create(size_t size, const sk_soa_field *fields, int num_fields, int num_envs,
                           const char *env_id);
/* Frees every field's array and the struct; NULL-safe. */
SK_API void sk_soa_destroy(void *state, const sk_soa_field *fields, int num_fields);
/* The fields as checkpoint arrays (one element per env each, ranges kept); -1 with a
 * message when state is NULL. */
SK_API int sk_soa_arrays(void *state, const sk_soa_field *fields, int num_fields,
                         sk_env_array *arrays);

/* -------------------------------------------------------------- the table */

typedef struct sk_env_extras sk_env_extras;

/* The element type of an observation. Zero is float32, so a table that does
 * not set it (or an older plugin's, read with the member zeroed) observes
 * floats. */
typedef enum sk_obs_dtype { SK_OBS_F32 = 0, SK_OBS_U8 = 1 } sk_obs_dtype;

/* Dimensions an observation's shape may have (10x10xC: 3). */
#define SK_MAX_OBS_DIMS 4

/*
 * An environment is a table of functions over a batch of envs. State is
 * struct-of-arrays so the step loop vectorises. step(state, io, lo, hi)
 * advances envs lo..hi-1: it clears reward and flags, advances the state,
 * and for an episode that ended writes final_obs and episode_log, then resets
 * that env in place and writes its first observation to obs. Different
 * threads may step disjoint ranges at once. The env owns only its state: no
 * process-wide side effects (thread counts, signals, globals).
 *
 * episode_log fields: 0 is the episode return, 1 its length; more are
 * env-specific scores named by log_names. All floats, so a runner can sum,
 * average and zero them without knowing the env.
 */
typedef struct sk_env_def {
    const char *id;      /* Gymnasium-style id with version, e.g. "CartPole-v1" */
    const char *alias;   /* short name, e.g. "cartpole"; may be NULL */
    const char *summary; /* one line; may be NULL */
    int obs_size;
    sk_action_space action_space;
    int mask_size;
    int max_episode_steps;
    double solved_threshold; /* mean return over 100 episodes that counts as solved; NAN: none */
    int num_log_fields;      /* at least 2 (return, length) */
    const char *log_names[SK_MAX_LOG_FIELDS];
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
    /* Optional (NULL: the arrays' ranges suffice): checks what ranges cannot
     * express in a restored state (indices that must agree with each other
     * or with the env's data) before the state is stepped; SK_ERR_CORRUPT
     * naming the array, the env and the value. */
    sk_status (*check_state)(const void *state, int num_envs);
    /* What single consumers need (see sk_env_extras); NULL for none. */
    const sk_env_extras *extras;
    /* Optional (ABI 2): an env whose sizes depend on its config sets them
     * here. def is a copy of this table; configure reads the env.* keys that
     * shape it (with the typed reads, the same keys create reads) and writes
     * obs_size, action_space, mask_size and max_episode_steps. NULL: the
     * table's sizes are the env's whatever its config. Consumers get the
     * configured table from sk_env_configure (sk_vec_create calls it). */
    sk_status (*configure)(struct sk_env_def *def, const sk_config *cfg);
    /* Optional (ABI 3): the observation's declared space, Box-style: value k
     * of every observation lies in [obs_low[k], obs_high[k]] (obs_size values
     * each; +-INFINITY for an unbounded side). NULL: unbounded, but finite.
     * Training and `skinner check` report an observation outside it as the
     * env's fault, naming the env, its index, the step and the value. */
    const float *obs_low;
    const float *obs_high;
    /* Optional (ABI 3): the observation's element type (0: float32, written
     * to io->obs; SK_OBS_U8: bytes, written to io->obs_u8, widened to float
     * only where the policy's encoder reads them) and its shape, channels
     * last (10x10xC as {10, 10, C}; all zero: a vector of obs_size). The
     * shape's product must be obs_size. obs_low/obs_high, when set, bound
     * the bytes as they bound floats. */
    sk_obs_dtype obs_dtype;
    int obs_shape[SK_MAX_OBS_DIMS];
    /* Optional (ABI 5): agents per env (0 or 1: a single-agent env; else the
     * rows of a batch are (env, agent) pairs, see sk_env_io), at most
     * SK_MAX_AGENTS, and their role names (num_agents names, e.g. {"first",
     * "second"}; NULL: "agent_0", "agent_1", ...). An older plugin's table
     * ends before these members (read as 0 and NULL). */
    int num_agents;
    const char *const *agent_names;
} sk_env_def;

/* The most agents an env may declare. */
#define SK_MAX_AGENTS 4096

/* The agents of each env: 1 for a single-agent env. */
static inline int sk_env_agents(const sk_env_def *env) {
    return env->num_agents > 1 ? env->num_agents : 1;
}

/* The number of dimensions of env's observation shape (1 for a vector) and
 * the shape itself into dims (a vector: {obs_size}). */
static inline int sk_obs_dims(const sk_env_def *env, int dims[SK_MAX_OBS_DIMS]) {
    int count = 0;
    while (count < SK_MAX_OBS_DIMS && env->obs_shape[count] > 0) {
        dims[count] = env->obs_shape[count];
        count++;
    }
    if (count == 0) dims[count++] = env->obs_size;
    return count;
}

/* The bytes of one element of env's observation. */
static inline size_t sk_obs_elem_size(const sk_env_def *env) {
    return env->obs_dtype == SK_OBS_U8 ? 1 : sizeof(float);
}

/* A short name of an observation dtype ("float32", "uint8"). */
static inline const char *sk_obs_dtype_name(sk_obs_dtype dtype) {
    return dtype == SK_OBS_U8 ? "uint8" : "float32";
}

/* ----------------------------------------------------------------- extras */

/* How a symbolic observation is laid out (see sk_env_extras.obs_atoms). */
typedef struct sk_obs_atoms {
    int atoms;        /* atoms per state, padded with predicate 0 */
    int candidates;   /* candidate states after the current one */
    int num_preds;    /* predicate indices are < num_preds */
    int num_args;     /* argument indices are < num_args */
} sk_obs_atoms;

/*
 * A policy lent to an env's own evaluation: worker w (0 <= w < num_workers)
 * may call act at the same time as other workers, on up to max_rows rows.
 * act writes each row's actions (rows, num_heads) and the log-probability of
 * the actions taken; greedy picks the most likely allowed action.
 */
typedef struct sk_actor {
    void *ctx;
    int num_workers, max_rows;
    void (*act)(void *ctx, int worker, const float *obs, const uint8_t *masks, int rows,
                bool greedy, int32_t *actions, float *logp);
    /* A recurrent policy (act_at not NULL) remembers each row's past: worker w
     * has max_rows rows of state. act_at acts for its rows at..at+rows-1 and
     * advances their state; episode_start zeroes row `row`'s state before the
     * first act of a new episode there. act is act_at with at = 0. */
    void (*act_at)(void *ctx, int worker, int at, const float *obs, const uint8_t *masks,
                   int rows, bool greedy, int32_t *actions, float *logp);
    void (*episode_start)(void *ctx, int worker, int row);
} sk_actor;

/* Runs job(ctx, worker, num_workers) on every worker at once and returns
 * when all are done (the host's threads). */
typedef void (*sk_parallel_job)(void *ctx, int worker, int num_workers);
typedef struct sk_parallel {
    void *ctx;
    void (*run)(void *ctx, sk_parallel_job job, void *job_ctx);
    /* An evaluation split across processes (skinner eval under mpirun): this
     * process is part `part` of `num_parts` (0 of 0 or 1: the only one). It
     * evaluates its contiguous share of the units, then gather() gives every
     * part every part's counts[p] doubles, in part order, in all (which holds
     * their sum); every part must call it. NULL when num_parts < 2. */
    int part, num_parts;
    void *gather_ctx;
    void (*gather)(void *gather_ctx, const double *mine, double *all, const size_t *counts);
} sk_parallel;

/* One figure of an env's own evaluation, for reports: name and value. */
typedef struct sk_metric {
    char name[48];
    double value;
} sk_metric;

#define SK_MAX_METRICS 64

/* What an env's own evaluation reports: its figures, a text summary and the
 * same as JSON. */
typedef struct sk_env_report {
    int num_metrics;
    sk_metric metrics[SK_MAX_METRICS];
    char text[2048];  /* the human-readable report, lines ending in '\n' */
    /* the members of `skinner eval --json`'s object after "env" ("key": value,
     * ... with no braces), where the figures need nesting or strings; empty:
     * the metrics, flat */
    char json[2048];
} sk_env_report;

/* Called as an env's evaluation progresses (done of total units). */
typedef void (*sk_progress_fn)(int done, int total, const char *unit, void *user);

/*
 * An env's own evaluation (Prover-v0's ranking), run in place of episodes by
 * `skinner eval`: options holds eval.* keys (eval.split, ...) that it reads
 * with the typed reads (an unread key is reported as unknown); env_cfg is the
 * run's config (env.* keys create its envs).
 */
typedef struct sk_env_evaluation {
    const char *name;        /* "ranking" */
    const char *description; /* one line for --help */
    sk_status (*run)(const sk_env_def *env, const sk_config *env_cfg, const sk_config *options,
                     const sk_actor *actor, const sk_parallel *parallel, sk_progress_fn progress,
                     void *progress_user, sk_env_report *out);
} sk_env_evaluation;

/* The kinds of value an evaluation option takes. */
typedef enum sk_option_kind {
    SK_OPTION_INT,    /* an integer in [low, high] */
    SK_OPTION_DOUBLE, /* a finite number in [low, high] */
    SK_OPTION_BOOL,   /* true/false, 1/0, yes/no, on/off */
    SK_OPTION_CHOICE, /* one of `choices` */
    SK_OPTION_STRING,
    SK_OPTION_PATH    /* a file or folder (a string the host may resolve) */
} sk_option_kind;

/*
 * One option of an env's own evaluation, key eval.NAME: `skinner eval ENV
 * --eval.NAME VALUE` sets it, `skinner eval ENV --help` prints the table.
 * alias is an extra flag of its own ("--split"), or NULL; with alias_value
 * the alias takes no value and sets that one ("--no-prune" sets prune to
 * "false"). The evaluation still reads and checks each key itself (typed
 * reads); the table is what hosts show and check before running it.
 */
typedef struct sk_env_option {
    const char *name;            /* "split": the key eval.split */
    sk_option_kind kind;
    const char *help;            /* one line */
    const char *default_text;    /* the default as --help shows it, or NULL */
    double low, high;            /* INT and DOUBLE: the range */
    const char *const *choices;  /* CHOICE: the values, NULL-terminated */
    const char *alias;           /* "--split", or NULL */
    const char *alias_value;     /* NULL: the alias takes a value */
} sk_env_option;

/*
 * A player an env offers to measure a policy against (`skinner eval ENV --checkpoint RUN
 * --opponent NAME[:ARG]`): it plays the rows of a multi-agent env that the evaluated policy
 * does not. It is not part of any policy and never trains: it reads the env's whole state
 * (Connect Four's board, unmirrored), which no policy sees.
 */
typedef struct sk_env_opponent {
    const char *name;      /* "alphabeta": `--opponent alphabeta:4` */
    const char *help;      /* one line for `skinner eval ENV --help` */
    const char *arg_name;  /* "DEPTH": NAME:ARG takes an integer in [arg_low, arg_high];
                              NULL: NAME takes no argument */
    int arg_low, arg_high;
    /* Writes actions (rows, num_heads) for every row of envs lo..hi-1 from their current
     * state, within their masks (the host keeps only the rows the opponent plays). arg is
     * NAME:ARG's value (0 without one); rng[e] is env e's stream, for its tie-breaks. */
    void (*act)(const void *state, int lo, int hi, int arg, uint64_t *rng, int32_t *actions);
} sk_env_opponent;

/*
 * Everything only one consumer needs, kept out of the contract: all optional.
 */
struct sk_env_extras {
    /* basename of its config preset in configs/ ("cartpole"); NULL: defaults */
    const char *preset;
    /* envs `skinner bench env` steps by default (0: 4096); a nonzero value
     * also says a step is slow (milliseconds): the bench checks its clock
     * after every step */
    int bench_num_envs;
    /* names of head 0's choices for reports, NULL-terminated, or NULL */
    const char *const *action_names;
    /* Symbolic observations only: the observation is the current state's
     * atoms then each candidate's, `atoms` atoms of [predicate, arg0, arg1]
     * indices each, and the action picks a candidate. Reports the index
     * ranges, which can depend on the data. */
    void (*obs_atoms)(const void *state, sk_obs_atoms *out);
    /* A hand-written baseline controller (`skinner eval ENV --policy
     * heuristic`): writes actions (num_envs, num_heads) for envs lo..hi-1
     * from their current state, within their masks. */
    void (*heuristic)(const void *state, int lo, int hi, int32_t *actions);
    /* An evaluation of its own, or NULL. */
    const sk_env_evaluation *evaluation;
    /* Optional (ABI 3): the options of that evaluation, ended by an entry
     * whose name is NULL; NULL: none. Here rather than in sk_env_evaluation
     * so an env can declare its options beside its extras; an older
     * plugin's extras end before this member (it is read as NULL). */
    const sk_env_option *eval_options;
    /* Optional (ABI 4): a picture of one env, for videos (`skinner eval --video`) and
     * Python's render_mode="rgb_array". render draws env `index` of a batch's state into
     * rgb: render_height rows of render_width pixels, top row first, 3 bytes a pixel (red,
     * green, blue). Only a caller that asks for frames calls it; NULL: no pictures. An older
     * plugin's extras end before these members (read as 0 and NULL). */
    int render_width, render_height;
    void (*render)(const void *state, int index, uint8_t *rgb);
    /* Optional (ABI 6): a physics env's generalised positions and velocities (MuJoCo's
     * qpos and qvel; docs/mujoco.md), read and set from outside: a test aligning an env
     * with a reference, a chosen start state. physics_sizes gives their counts;
     * get_physics copies env `index`'s out; set_physics puts them in as Gymnasium's
     * set_state does (the rest of the state as it was, then what follows from the
     * positions recomputed) and writes the env's observation into obs_row (obs_size
     * floats). SK_ERR_INVALID naming a value the physics refuses. Hosts call them through
     * sk_vec_get_physics / sk_vec_set_physics (skinner/vec.h). NULL: no physics state. An
     * older plugin's extras end before these members (read as NULL). */
    void (*physics_sizes)(const void *state, int *qpos_size, int *qvel_size);
    void (*get_physics)(const void *state, int index, double *qpos, double *qvel);
    sk_status (*set_physics)(void *state, int index, const double *qpos, const double *qvel,
                             float *obs_row);
#if !defined(SK_ENV_LAYOUT_ABI6) && !defined(SK_ENV_LAYOUT_ABI7)
    /* Optional (ABI 8): a multi-agent env's built-in opponents (`skinner eval ENV --opponent
     * NAME`), ended by an entry whose name is NULL; NULL: none beyond the ones every env gets
     * (random, and heuristic where the env has one). An older plugin's extras end before
     * this member (read as NULL). */
    const sk_env_opponent *opponents;
#endif
};

/* The env's extras, or an empty table when it has none: never NULL. */
static inline const sk_env_extras *sk_env_extras_of(const sk_env_def *env) {
    static const sk_env_extras none = {0};
    return env->extras ? env->extras : &none;
}

/* ------------------------------------------------------------- registry */

/* Finds an env by id or alias, case-insensitively. "FILE.so:Id" loads the
 * plugin FILE first (see sk_env_load_plugin). NULL with a message listing the
 * known envs if there is none. */
SK_API const sk_env_def *sk_env_find(const char *name);
/* The registered envs (built-in, then registered), NULL-terminated. */
SK_API const sk_env_def *const *sk_env_list(void);
/* The table of env as cfg shapes it (see sk_env_def.configure): env itself
 * when it has no configure function, else a validated copy owned by the
 * registry, the same pointer for the same sizes, valid for the life of the
 * process. Its id is env's, so compare envs by id (sk_env_same). NULL cfg:
 * the defaults. SK_ERR_INVALID / SK_ERR_CONFIG naming the key for a bad
 * value, or the field for sizes that fail the table's checks. */
SK_API sk_status sk_env_configure(const sk_env_def *env, const sk_config *cfg,
                                  const sk_env_def **out);
/* Whether a and b are the same env (a configured table and its original are). */
static inline bool sk_env_same(const sk_env_def *a, const sk_env_def *b) {
    return a == b || (a && b && a->id == b->id);
}
/* Checks a table (id, sizes, functions, action space) and adds it to the
 * registry, for a host program that defines envs itself. The table must
 * outlive every use. SK_ERR_INVALID naming the problem for a bad table or an
 * id already taken. */
SK_API sk_status sk_env_register(const sk_env_def *env);

/* ----------------------------------------------------------------- plugins */

/*
 * A plugin is a shared object that exports
 *     int sk_plugin_abi_version;                 = SK_ENV_ABI_VERSION
 *     const sk_env_def *const *sk_plugin_envs;   NULL-terminated tables
 * which SK_PLUGIN_EXPORT(...) defines. sk_env_load_plugin dlopens it, checks
 * the version and every table, and registers them.
 */
#if defined(SK_ENV_LAYOUT_ABI6)
#define SK_ENV_ABI_VERSION 6
#elif defined(SK_ENV_LAYOUT_ABI7)
#define SK_ENV_ABI_VERSION 7
#else
#define SK_ENV_ABI_VERSION 8
#endif
/* Version 1 tables (no configure member), version 2 tables (no
 * obs_low/obs_high), version 3 tables (extras without render), version 4
 * tables (no num_agents), version 5 tables (extras without the physics
 * calls), version 6 tables (action bounds of 16 values, SK_MAX_ACTION_DIM
 * before version 7) and version 7 tables (extras without opponents) still
 * load: the loader converts them, and calls a version 1-6 table's configure
 * and evaluation with a table in its own layout. SK_ENV_LAYOUT_ABI7 builds
 * extras laid out as version 7 built them (the loader's tests only). */
#define SK_ENV_ABI_OLDEST 1

#define SK_PLUGIN_EXPORT(...)                                                                      \
    SK_API const int sk_plugin_abi_version = SK_ENV_ABI_VERSION;                                    \
    static const sk_env_def *const sk_plugin_envs_list_[] = {__VA_ARGS__, NULL};                    \
    SK_API const sk_env_def *const *const sk_plugin_envs = sk_plugin_envs_list_;

/* Loads a plugin and registers its envs; SK_ERR_INVALID naming the file and
 * the problem (not a shared object, missing symbol, ABI version, bad table).
 * Loading the same file twice is a no-op. */
SK_API sk_status sk_env_load_plugin(const char *path);
/* The absolute path of the plugin that registered env, or NULL for a
 * built-in env or one registered by sk_env_register. A run records it as
 * env.plugin, so that resuming or evaluating it loads the plugin again. */
SK_API const char *sk_env_plugin_path(const sk_env_def *env);

#ifdef __cplusplus
}
#endif
#endif /* SKINNER_ENV_H */
