/*
 * Checkpoints: one safetensors file holding the policy under plain names
 * (actor.0.weight, ..., loadable by PyTorch and by `skinner eval`) and, under
 * state.* and env.*, everything needed to continue the run exactly: the
 * arrays of the trainer's table (trainer_state.c) that carry a checkpoint
 * name, the counters, RNG streams, normalisation statistics, the episode
 * window and every env's state arrays. Resuming at the same thread count
 * reproduces the run that was never stopped.
 *
 * A checkpoint is input: on resume every tensor's dtype and size, every
 * counter and every element with a declared range (the trainer's table, the
 * env's state arrays) is checked before the trainer uses any of it, and a
 * bad value is refused naming the tensor, the index and the allowed range.
 * The format ("skinner-policy-1", training state "1") is unchanged since
 * before the table existed: older checkpoints load.
 */
#include "algo.h"
#include "trainer_state.h"

#include "../envs/registry.h"
#include "../io/safetensors.h"
#include "plan.h"
#include "skinner/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT "skinner-policy-1"
#define STATE_VERSION "1"
/* Metadata of a comm.mode = scale checkpoint: the number of processes that wrote it. */
#define SCALE_RANKS "comm_scale_ranks"
#define SELFPLAY_OPPONENTS "selfplay_opponents" /* selfplay.opponents as played */
/* with ppo.ema_decay the policy tensors hold the moving average, and this the weights */
#define EMA_RAW_PARAMS "state.raw_params"
#define MAX_ALGO_TENSORS 96 /* a learner's own (algo.h's save): SAC's networks, a buffer */
#define MAX_CHECKPOINT_TENSORS (SK_MAX_POLICY_TENSORS + SK_MAX_ENV_ARRAYS + 24 + MAX_ALGO_TENSORS)

/* sk_array_type and sk_st_dtype agree value for value (asserted in src/io/safetensors.c). */

/* The scalars packed into state.counters, in the file's order. */
enum { C_UPDATE, C_STEPS, C_EPISODES, C_ADAM_STEP, C_WINDOW_COUNT, C_WINDOW_POS, C_ANOMALIES,
       C_WORKERS, C_ENVS, C_SOLVED, C_SOLVED_AT, NUM_COUNTERS };

static const char *const g_counter_names[NUM_COUNTERS] = {
    "update", "steps", "episodes", "adam_step", "window_count", "window_pos", "anomalies",
    "workers", "envs", "solved", "solved_at_steps"};

/* An env state array is the tensor "env.NAME"; NAME fits in ENV_NAME_MAX bytes. */
#define ENV_TENSOR_PREFIX "env."
#define ENV_NAME_MAX 59

typedef struct tensor_list {
    sk_st_tensor items[MAX_CHECKPOINT_TENSORS];
    char names[SK_MAX_ENV_ARRAYS][sizeof ENV_TENSOR_PREFIX + ENV_NAME_MAX];
    int count;
} tensor_list;

/* The env's state arrays and their tensor names, each its own: a NULL name
 * would be written as "env.(null)", an empty one as "env.", and two arrays
 * of one name as two tensors of one key, of which a load reads one into both.
 * Checked on save and on resume, naming the env and the array. */
static sk_status env_arrays(sk_trainer *tr, sk_env_array *arrays, int *count,
                            char (*names)[sizeof ENV_TENSOR_PREFIX + ENV_NAME_MAX]) {
    const char *id = tr->env->id;
    *count = sk_vec_state_arrays(tr->vec, arrays);
    if (*count < 0) return SK_ERR_ENV; /* sk_vec_state_arrays said why */
    for (int a = 0; a < *count; a++) {
        const char *name = arrays[a].name;
        if (!name || !name[0])
            return sk_fail(SK_ERR_ENV,
                           "env %s: state array %d has %s name (expected a name of its own, "
                           "saved as the checkpoint tensor env.NAME)",
                           id, a, name ? "an empty" : "a NULL");
        if (strlen(name) > ENV_NAME_MAX)
            return sk_fail(SK_ERR_ENV,
                           "env %s: state array %d's name '%.*s...' is longer than %d characters",
                           id, a, ENV_NAME_MAX, name, ENV_NAME_MAX);
        for (int b = 0; b < a; b++)
            if (strcmp(arrays[b].name, name) == 0)
                return sk_fail(SK_ERR_ENV,
                               "env %s: state arrays %d and %d are both named '%s' (expected a "
                               "name of its own for each: the checkpoint keeps one tensor "
                               "env.%s)",
                               id, b, a, name, name);
        snprintf(names[a], sizeof names[a], ENV_TENSOR_PREFIX "%s", name);
    }
    return SK_OK;
}

static void add(tensor_list *list, const char *name, sk_st_dtype dtype, const void *data,
                int64_t rows, int64_t cols) {
    SK_ASSERT(list->count < MAX_CHECKPOINT_TENSORS);
    sk_st_tensor *t = &list->items[list->count++];
    *t = (sk_st_tensor){.name = name, .ndim = cols > 0 ? 2 : 1, .shape = {rows, cols},
                        .data = data, .dtype = dtype};
}

/* A table row's saved part: the storage arrays of (T + 1) rows keep only the
 * current row (N x width), the rest all of it. */
static void saved_part(sk_trainer *tr, const sk_trainer_array *row, void **data, int64_t *rows,
                       int64_t *cols) {
    char *base = *sk_trainer_array_slot(tr, row);
    size_t N = (size_t)tr->rollout.num_rows, width = 0; /* the rows this rank holds */
    if (row->size == SK_SIZE_ROWS1_OBS || row->size == SK_SIZE_ROWS1_OBS_U8)
        width = (size_t)tr->obs_size;
    if (row->size == SK_SIZE_ROWS1_MASK) width = (size_t)tr->mask_size;
    if (row->size == SK_SIZE_ROWS1_ACTIVE) width = 1;
    if (width) {
        *data = base + sk_trainer_current_row(tr) * width * sk_array_type_size(row->type);
        *rows = (int64_t)N;
        *cols = (int64_t)width;
    } else {
        *data = base;
        *rows = (int64_t)sk_trainer_array_count(tr, row->size);
        *cols = 0;
    }
}

/* A table row that holds one record per env (of the envs this rank holds). */
static bool per_env(const sk_trainer_array *row) {
    return row->size == SK_SIZE_ROWS1_OBS || row->size == SK_SIZE_ROWS1_OBS_U8 ||
           row->size == SK_SIZE_ROWS1_MASK || row->size == SK_SIZE_ROWS1_ACTIVE ||
           row->size == SK_SIZE_ENVS ||
           row->size == SK_SIZE_ENVS_STATE;
}

/* The core's states of N envs (N, S: each env's parts one after another) to or from the
 * layout checkpoints keep, part after part (parts, N, core_size). */
static void core_parts_copy(const sk_trainer *tr, size_t N, const float *state, float *parts,
                            bool to_parts) {
    const sk_policy *policy = &tr->learner.policy;
    size_t C = (size_t)policy->core_size;
    size_t P = (size_t)policy->core->num_parts;
    for (size_t p = 0; p < P; p++)
        for (size_t i = 0; i < N; i++) {
            const float *row = state + (i * P + p) * C;
            float *part = parts + (p * N + i) * C;
            if (to_parts) memcpy(part, row, C * sizeof(float));
            else memcpy((float *)row, part, C * sizeof(float));
        }
}

/* A core-parts row's tensor name for part p: "state.core_h", ... */
static void core_part_name(const sk_trainer *tr, const sk_trainer_array *row, int p, char *name,
                           size_t size) {
    snprintf(name, size, "%s_%s", row->checkpoint_name, tr->learner.policy.core->part_names[p]);
}

/* Whether a table row is in this run's checkpoints: not when it is empty
 * (masks of an env without them, recurrent states of a feed-forward policy). */
static bool saved(const sk_trainer *tr, const sk_trainer_array *row) {
    return row->checkpoint_name && sk_trainer_array_count(tr, row->size) > 0;
}

sk_status sk_trainer_save(const sk_trainer *tr_const, const char *path) {
    static _Thread_local tensor_list list; /* ~10 KB: keep it off the stack */
    sk_trainer *tr = (sk_trainer *)tr_const; /* the table hands out writable slots; nothing is written */
    static _Thread_local char part_names[SK_CORE_MAX_PARTS][64];
    list.count = 0;
    const sk_learner *ln = &tr->learner;
    float *parts = NULL; /* the core's states as checkpoints keep them */
    const sk_policy *policy = &ln->policy;
    /* with ppo.ema_decay, the policy every reader loads is the weights' moving average; the
     * weights themselves go on for a resume */
    bool ema = tr->s.ema_decay > 0.0;
    for (int i = 0; i < policy->num_tensors; i++) {
        const sk_tensor_info *info = &policy->tensors[i];
        add(&list, info->name, SK_ST_F32, (ema ? ln->ema : ln->params) + info->offset, info->rows,
            sk_policy_tensor_ndim(info) == 1 ? 0 : info->cols);
    }
    if (ema) add(&list, EMA_RAW_PARAMS, SK_ST_F32, ln->params, (int64_t)policy->num_params, 0);
    int O = tr->obs_size, W = tr->layout.total_workers; /* every rank's workers */
    /* one process has it all; a distributed run's ranks synced before rank 0 saves */
    if (tr->comm.size == 1) sk_trainer_sync_state(tr);
    float obs_mean[SK_MAX_OBS_NORM], obs_var[SK_MAX_OBS_NORM];
    if (tr->s.norm_obs) { /* float copies for eval and for PyTorch users */
        SK_ASSERT(O <= SK_MAX_OBS_NORM);
        for (int j = 0; j < O; j++) {
            obs_mean[j] = (float)ln->obs_stats.mean[j];
            obs_var[j] = (float)ln->obs_stats.var[j];
        }
        add(&list, "obs_norm.mean", SK_ST_F32, obs_mean, O, 0);
        add(&list, "obs_norm.var", SK_ST_F32, obs_var, O, 0);
    }
    for (int i = 0; i < sk_trainer_num_arrays; i++) {
        const sk_trainer_array *row = &sk_trainer_arrays[i];
        if (!saved(tr, row)) continue;
        void *data;
        int64_t rows, cols;
        saved_part(tr, row, &data, &rows, &cols);
        if (per_env(row)) { /* scale mode: every rank's envs, gathered (sk_trainer_sync_state) */
            data = (void *)sk_trainer_gathered(tr, data);
            rows = rows / tr->layout.env_count * tr->s.num_envs; /* a multi-agent env's rows */
        }
        if (!row->core_parts) {
            add(&list, row->checkpoint_name, (sk_st_dtype)row->type, data, rows, cols);
            continue;
        }
        SK_ASSERT(!parts);
        if (!(parts = sk_alloc((size_t)rows * sizeof(float))))
            return sk_trainer_fail(tr, sk_fail(SK_ERR_NOMEM, "out of memory (%lld floats of core "
                                                             "states)", (long long)rows));
        core_parts_copy(tr, (size_t)tr->s.num_envs, data, parts, true);
        int P = policy->core->num_parts;
        for (int p = 0; p < P; p++) {
            core_part_name(tr, row, p, part_names[p], sizeof part_names[p]);
            add(&list, part_names[p], (sk_st_dtype)row->type, parts + (rows / P) * p, rows / P, 0);
        }
    }
    int64_t counters[NUM_COUNTERS] = {
        [C_UPDATE] = tr->progress.update, [C_STEPS] = tr->progress.steps, [C_EPISODES] = tr->progress.episodes,
        [C_ADAM_STEP] = ln->adam_step, [C_WINDOW_COUNT] = tr->progress.window_count,
        [C_WINDOW_POS] = tr->progress.window_pos, [C_ANOMALIES] = ln->governor.anomalies,
        [C_WORKERS] = W, [C_ENVS] = tr->s.num_envs, [C_SOLVED] = tr->progress.result.solved,
        [C_SOLVED_AT] = tr->progress.result.solved_at_steps,
    };
    add(&list, "state.counters", SK_ST_I64, counters, NUM_COUNTERS, 0);
    double seconds[2] = {tr->progress.elapsed_before + (tr->progress.start_time > 0 ? sk_now() - tr->progress.start_time : 0.0),
                         tr->progress.result.solved_at_seconds};
    add(&list, "state.seconds", SK_ST_F64, seconds, 2, 0);
    add(&list, "state.window_return", SK_ST_F32, tr->progress.window_return, SK_WINDOW, 0);
    add(&list, "state.window_length", SK_ST_F32, tr->progress.window_length, SK_WINDOW, 0);
    add(&list, "state.governor_recent", SK_ST_I64, ln->governor.recent,
        SK_GOVERNOR_MAX_ANOMALIES + 1, 0);
    add(&list, "state.rng", SK_ST_U64, tr->layout.rngs_all, 1 + W, 0);
    double obs_count = ln->obs_stats.count;
    double return_stats[3] = {ln->return_stats.count, ln->return_stats.mean[0],
                              ln->return_stats.var[0]};
    add(&list, "state.obs_mean", SK_ST_F64, ln->obs_stats.mean, O, 0);
    add(&list, "state.obs_var", SK_ST_F64, ln->obs_stats.var, O, 0);
    add(&list, "state.obs_count", SK_ST_F64, &obs_count, 1, 0);
    add(&list, "state.return_stats", SK_ST_F64, return_stats, 3, 0);
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    int num_arrays;
    sk_status named = env_arrays(tr, arrays, &num_arrays, list.names);
    if (named != SK_OK) {
        sk_free(parts);
        return sk_trainer_fail(tr, named);
    }
    for (int a = 0; a < num_arrays; a++)
        add(&list, list.names[a], (sk_st_dtype)arrays[a].type,
            sk_trainer_gathered(tr, arrays[a].data), tr->s.num_envs, arrays[a].count);

    if (tr->algo->save) {
        int added = tr->algo->save(tr, list.items + list.count, MAX_ALGO_TENSORS);
        SK_ASSERT(added >= 0 && added <= MAX_ALGO_TENSORS);
        list.count += added;
    }
    char *config_text = sk_config_to_string(tr->cfg);
    if (!config_text) {
        sk_free(parts);
        return sk_trainer_fail(tr, sk_fail(SK_ERR_NOMEM, "out of memory"));
    }
    char steps[32];
    snprintf(steps, sizeof steps, "%lld", (long long)tr->progress.steps);
    char observation[96]; /* dtype and shape: a checkpoint of other observations is refused */
    sk_env_obs_type(tr->env, observation, sizeof observation);
    char ranks[32]; /* comm.mode = scale: the processes whose minibatches the run drew */
    snprintf(ranks, sizeof ranks, "%d", tr->comm.size);
    char opponents[SK_SELFPLAY_MAX_OPPONENTS * 66]; /* self-play's listed players ("": none) */
    sk_selfplay_opponents_text(&tr->sp, opponents, sizeof opponents);
    sk_st_meta meta[9] = {
        {"format", FORMAT},
        {"training_state", STATE_VERSION},
        {"env", tr->env->id},
        {"steps", steps},
        {"config", config_text},
        {"observation", observation},
    };
    int num_meta = 6;
    if (tr->s.comm_scale) meta[num_meta++] = (sk_st_meta){SCALE_RANKS, ranks};
    if (tr->sp.on) meta[num_meta++] = (sk_st_meta){SELFPLAY_OPPONENTS, opponents};
    sk_status status = sk_st_write(path, list.items, list.count, meta, num_meta);
    free(config_text);
    sk_free(parts);
    return sk_trainer_fail(tr, status);
}

/* ---- resume ---- */

/* Tensor `name`, after checking its dtype and element count. */
static sk_status find(const sk_st_file *file, const char *path, const char *name, sk_st_dtype dtype,
                      int64_t count, const sk_st_tensor **out) {
    const sk_st_tensor *t = sk_st_find(file, name);
    if (!t) return sk_fail(SK_ERR_CORRUPT, "checkpoint '%s' has no tensor '%s'", path, name);
    int64_t elements = 1;
    for (int d = 0; d < t->ndim; d++) elements *= t->shape[d];
    if (t->dtype != dtype || elements != count)
        return sk_fail(SK_ERR_CORRUPT,
                       "checkpoint '%s': tensor '%s' is %s with %lld elements (expected %s with "
                       "%lld: a different env, config or thread count?)",
                       path, name, sk_st_dtype_name(t->dtype), (long long)elements,
                       sk_st_dtype_name(dtype), (long long)count);
    *out = t;
    return SK_OK;
}

/* Element k of a tensor as a double (integers beyond 2^53 round, which no
 * range checked here comes near). */
static double element(const sk_st_tensor *t, int64_t k) {
    const char *base = t->data;
    switch (t->dtype) {
    case SK_ST_F32: { float v; memcpy(&v, base + 4 * k, 4); return v; }
    case SK_ST_F64: { double v; memcpy(&v, base + 8 * k, 8); return v; }
    case SK_ST_I32: { int32_t v; memcpy(&v, base + 4 * k, 4); return v; }
    case SK_ST_I64: { int64_t v; memcpy(&v, base + 8 * k, 8); return (double)v; }
    case SK_ST_U8: return (unsigned char)base[k];
    case SK_ST_U64: { uint64_t v; memcpy(&v, base + 8 * k, 8); return (double)v; }
    }
    return NAN;
}

/* Every element of t in [lo, hi] (NaN fails). */
static sk_status check_range(const sk_st_tensor *t, const char *path, int64_t count, double lo,
                             double hi) {
    for (int64_t k = 0; k < count; k++) {
        double v = element(t, k);
        if (v >= lo && v <= hi) continue;
        return sk_fail(SK_ERR_CORRUPT,
                       "checkpoint '%s': %s[%lld] = %.17g is outside its allowed range [%.17g, "
                       "%.17g]",
                       path, t->name, (long long)k, v, lo, hi);
    }
    return SK_OK;
}

/* A per-env tensor of the run's envs (per_env elements each), checked, and this rank's
 * envs' part of it (env_first.., all of them in exact mode) copied into dst. */
static sk_status restore_envs(const sk_trainer *tr, const sk_st_file *file, const char *path,
                              const char *name, sk_st_dtype dtype, void *dst, int64_t per_env,
                              bool has_range, double lo, double hi) {
    const sk_st_tensor *t = NULL;
    int64_t count = (int64_t)tr->s.num_envs * per_env;
    sk_status status = find(file, path, name, dtype, count, &t);
    if (status == SK_OK && has_range) status = check_range(t, path, count, lo, hi);
    size_t elem = sk_st_dtype_size(dtype);
    if (status == SK_OK)
        memcpy(dst, (const char *)t->data + (size_t)(tr->layout.env_first * per_env) * elem,
               (size_t)(tr->layout.env_count * per_env) * elem);
    return status;
}

/* Finds, checks and copies a tensor of count elements with a range. */
static sk_status restore(const sk_st_file *file, const char *path, const char *name,
                         sk_st_dtype dtype, void *dst, int64_t count, bool has_range, double lo,
                         double hi) {
    const sk_st_tensor *t = NULL;
    sk_status status = find(file, path, name, dtype, count, &t);
    if (status == SK_OK && has_range) status = check_range(t, path, count, lo, hi);
    if (status == SK_OK) memcpy(dst, t->data, (size_t)count * sk_st_dtype_size(dtype));
    return status;
}

sk_status sk_checkpoint_restore(const sk_st_file *file, const char *path, const char *name,
                                sk_st_dtype dtype, void *dst, int64_t count, bool has_range,
                                double lo, double hi) {
    return restore(file, path, name, dtype, dst, count, has_range, lo, hi);
}

/* A multi-agent run's deferred actions (state.pending_*): each head's action below its size,
 * as the learner will index the head's logits with it. */
static sk_status check_pending_actions(const sk_trainer *tr, const char *path) {
    const sk_rollout *ro = &tr->rollout;
    const sk_action_space *space = &tr->env->action_space;
    if (ro->num_agents < 2 || space->kind != SK_SPACE_DISCRETE) return SK_OK;
    for (int i = 0; i < ro->num_rows; i++)
        for (int h = 0; ro->pending.waiting[i] && h < space->num_heads; h++) {
            int32_t a = ro->pending_actions[(size_t)i * (size_t)space->num_heads + (size_t)h];
            if (a < 0 || a >= space->head_sizes[h])
                return sk_fail(SK_ERR_CORRUPT, "checkpoint '%s': state.pending_actions of row %d, "
                               "head %d = %d is outside [0, %d]", path, i, h, (int)a,
                               space->head_sizes[h] - 1);
        }
    return SK_OK;
}

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        status = (expr);                                                                           \
        if (status != SK_OK) goto done;                                                            \
    } while (0)

/* The counters' allowed ranges, from this trainer's config. */
static void counter_ranges(const sk_trainer *tr, const int64_t *c, double lo[NUM_COUNTERS],
                           double hi[NUM_COUNTERS]) {
    double batch = (double)tr->batch_size, huge = 0x1p62;
    double update = (double)c[C_UPDATE];
    double per_update = tr->algo->max_optimizer_steps
                            ? (double)tr->algo->max_optimizer_steps(tr)
                            : (double)tr->s.update_epochs * tr->s.num_minibatches;
    double bounds[NUM_COUNTERS][2] = {
        [C_UPDATE] = {1, huge / batch},
        [C_STEPS] = {update * batch, update * batch}, /* every update steps one batch */
        [C_EPISODES] = {0, update * batch},
        [C_ADAM_STEP] = {0, update * per_update},
        [C_WINDOW_COUNT] = {0, SK_WINDOW},
        [C_WINDOW_POS] = {0, SK_WINDOW - 1},
        [C_ANOMALIES] = {0, update + 1},
        [C_WORKERS] = {tr->layout.total_workers, tr->layout.total_workers},
        [C_ENVS] = {tr->s.num_envs, tr->s.num_envs},
        [C_SOLVED] = {0, 1},
        [C_SOLVED_AT] = {-1, update * batch},
    };
    for (int k = 0; k < NUM_COUNTERS; k++) {
        lo[k] = bounds[k][0];
        hi[k] = bounds[k][1];
    }
}

static sk_status check_counters(const sk_trainer *tr, const char *path, const int64_t *c) {
    if (c[C_WORKERS] != tr->layout.total_workers || c[C_ENVS] != tr->s.num_envs) {
        if (tr->comm.size > 1)
            return sk_fail(SK_ERR_INVALID,
                           "checkpoint '%s' was written by %lld workers over %lld envs; this "
                           "run has %d (%d processes); resume with as many processes x "
                           "--threads, or train.slices (and env.num_envs %lld), to continue the "
                           "same run",
                           path, (long long)c[C_WORKERS], (long long)c[C_ENVS],
                           tr->layout.total_workers, tr->comm.size, (long long)c[C_ENVS]);
        return sk_fail(SK_ERR_INVALID,
                       "checkpoint '%s' was written by %lld workers over %lld envs; resume "
                       "with --threads %lld, or --train.slices %lld (and env.num_envs %lld), to "
                       "continue the same run",
                       path, (long long)c[C_WORKERS], (long long)c[C_ENVS],
                       (long long)c[C_WORKERS], (long long)c[C_WORKERS], (long long)c[C_ENVS]);
    }
    double lo[NUM_COUNTERS], hi[NUM_COUNTERS];
    counter_ranges(tr, c, lo, hi);
    for (int k = 0; k < NUM_COUNTERS; k++)
        if (!((double)c[k] >= lo[k] && (double)c[k] <= hi[k]))
            return sk_fail(SK_ERR_CORRUPT,
                           "checkpoint '%s': state.counters[%d] (%s) = %lld is outside its allowed "
                           "range [%.0f, %.0f]",
                           path, k, g_counter_names[k], (long long)c[k], lo[k], hi[k]);
    /* the window fills before it wraps */
    if (c[C_WINDOW_COUNT] < SK_WINDOW && c[C_WINDOW_POS] != c[C_WINDOW_COUNT])
        return sk_fail(SK_ERR_CORRUPT,
                       "checkpoint '%s': state.counters window_pos = %lld must equal window_count "
                       "= %lld until the window is full",
                       path, (long long)c[C_WINDOW_POS], (long long)c[C_WINDOW_COUNT]);
    if (c[C_WINDOW_COUNT] > c[C_EPISODES])
        return sk_fail(SK_ERR_CORRUPT,
                       "checkpoint '%s': state.counters window_count = %lld exceeds episodes = "
                       "%lld",
                       path, (long long)c[C_WINDOW_COUNT], (long long)c[C_EPISODES]);
    return SK_OK;
}

static sk_status check_current_masks(sk_trainer *tr, const char *path);

/* The restored current observations and masks start the next rollout: the
 * policy must be able to read every observation, and every env must leave
 * every head a choice. */
static sk_status check_current_step(sk_trainer *tr, const char *path) {
    if (tr->rollout.obs_u8_dtype) return check_current_masks(tr, path); /* bytes: in range */
    const float *obs = tr->rollout.obs + sk_trainer_current_row(tr) * (size_t)tr->obs_size;
    for (int i = 0; i < tr->rollout.num_rows; i++) {
        const float *row = obs + (size_t)i * (size_t)tr->obs_size;
        int k = sk_policy_obs_invalid(&tr->learner.policy, row);
        if (k >= 0)
            return sk_fail(SK_ERR_CORRUPT,
                           "checkpoint '%s': state.obs of env %d holds %.9g at %d, which the "
                           "policy cannot read (outside the observation's ranges)",
                           path, i, (double)row[k], k);
    }
    return check_current_masks(tr, path);
}

static sk_status check_current_masks(sk_trainer *tr, const char *path) {
    if (tr->mask_size == 0) return SK_OK;
    const uint8_t *masks = tr->rollout.masks + sk_trainer_current_row(tr) * (size_t)tr->mask_size;
    for (int i = 0; i < tr->rollout.num_rows; i++) {
        int head = sk_action_mask_unusable(&tr->env->action_space,
                                           masks + (size_t)i * (size_t)tr->mask_size);
        if (head >= 0)
            return sk_fail(SK_ERR_CORRUPT,
                           "checkpoint '%s': state.masks of env %d allows no choice of head %d "
                           "(expected at least one allowed action per head)",
                           path, i, head);
    }
    return SK_OK;
}

/* Restores tr from an open checkpoint (borrowed: the caller closes it). */
static sk_status resume_from(sk_trainer *tr, const sk_st_file *file, const char *path) {
    sk_status status = SK_OK;
    sk_learner *ln = &tr->learner;
    const char *env = sk_st_meta_get(file, "env");
    const char *version = sk_st_meta_get(file, "training_state");
    int O = tr->obs_size, W = tr->layout.total_workers;
    int64_t counters[NUM_COUNTERS];
    double seconds[2], return_stats[3], obs_count;
    uint64_t *rngs = tr->layout.rngs_all;
    const double inf = INFINITY;
    float *parts = NULL; /* the core's states as checkpoints keep them */
    if (!version || strcmp(version, STATE_VERSION) != 0)
        TRY(sk_fail(SK_ERR_CORRUPT, "'%s' holds no training state to resume from", path));
    TRY(sk_st_require_checksum(file, path));
    if (!env || strcmp(env, tr->env->id) != 0)
        TRY(sk_fail(SK_ERR_INVALID, "checkpoint '%s' was trained on %s, not on %s", path,
                    env ? env : "(unknown)", tr->env->id));
    TRY(sk_env_check_obs_type(tr->env, sk_st_meta_get(file, "observation"), path));
    TRY(restore(file, path, "state.counters", SK_ST_I64, counters, NUM_COUNTERS, false, 0, 0));
    if (counters[C_UPDATE] < 1)
        TRY(sk_fail(SK_ERR_INVALID,
                    "checkpoint '%s' was saved before any training: there is nothing to "
                    "resume (start a new run)",
                    path));
    if (tr->ran) TRY(sk_fail(SK_ERR_INVALID, "resume into a fresh trainer, not one that has run"));
    const char *scale_ranks = sk_st_meta_get(file, SCALE_RANKS);
    if (scale_ranks && strtol(scale_ranks, NULL, 10) != tr->comm.size)
        TRY(sk_fail(SK_ERR_INVALID,
                    "checkpoint '%s' was written by a comm.mode = scale run of %s processes; this "
                    "run has %d: resume it under mpirun -np %s (with the same --threads): in "
                    "scale mode each process learns from its own envs' rows, so another number "
                    "of processes would not continue the same run",
                    path, scale_ranks, tr->comm.size, scale_ranks));
    TRY(check_counters(tr, path, counters));
    if (tr->sp.on) TRY(sk_selfplay_check_opponents(tr, sk_st_meta_get(file, SELFPLAY_OPPONENTS), path));
    tr->progress.update = counters[C_UPDATE]; /* where the current observations go (row T) */
    /* everything is checked into the trainer's own arrays; a failure leaves
     * a trainer to destroy (as documented), never one that runs */
    bool ema = tr->s.ema_decay > 0.0;
    if (ema != (sk_st_find(file, EMA_RAW_PARAMS) != NULL))
        TRY(sk_fail(SK_ERR_INVALID, "checkpoint '%s' was written %s a moving average of the "
                    "weights, and this run has ppo.ema_decay = %g: resume with the run's own "
                    "value (%s)", path, ema ? "without" : "with", tr->s.ema_decay,
                    ema ? "0" : "above 0, as its config.ini says"));
    for (int i = 0; i < ln->policy.num_tensors; i++) {
        const sk_tensor_info *info = &ln->policy.tensors[i];
        TRY(restore(file, path, info->name, SK_ST_F32, (ema ? ln->ema : ln->params) + info->offset,
                    (int64_t)info->rows * info->cols, true, -inf, inf));
    }
    if (ema)
        TRY(restore(file, path, EMA_RAW_PARAMS, SK_ST_F32, ln->params,
                    (int64_t)ln->policy.num_params, true, -inf, inf));
    for (int i = 0; i < sk_trainer_num_arrays; i++) {
        const sk_trainer_array *row = &sk_trainer_arrays[i];
        if (!saved(tr, row)) continue;
        void *data;
        int64_t rows, cols;
        saved_part(tr, row, &data, &rows, &cols);
        int64_t elements = rows * (cols > 0 ? cols : 1), n = tr->layout.env_count;
        if (row->optional && !sk_st_find(file, row->checkpoint_name)) { /* an older skinner's */
            memset(data, 0, (size_t)elements * sk_array_type_size(row->type));
            continue;
        }
        if (!row->core_parts && per_env(row)) {
            TRY(restore_envs(tr, file, path, row->checkpoint_name, (sk_st_dtype)row->type, data,
                             elements / n, row->has_range, row->lo, row->hi));
            continue;
        }
        if (!row->core_parts) {
            TRY(restore(file, path, row->checkpoint_name, (sk_st_dtype)row->type, data,
                        elements, row->has_range, row->lo, row->hi));
            continue;
        }
        const sk_core_ops *core = ln->policy.core;
        if (!parts && !(parts = sk_alloc((size_t)rows * sizeof(float))))
            TRY(sk_fail(SK_ERR_NOMEM, "out of memory (%lld floats of core states)",
                        (long long)rows));
        for (int p = 0; p < core->num_parts; p++) {
            char name[64];
            core_part_name(tr, row, p, name, sizeof name);
            double limit = core->part_limits[p];
            int64_t count = rows / core->num_parts;
            TRY(restore_envs(tr, file, path, name, (sk_st_dtype)row->type, parts + count * p,
                             count / n, true, -limit, limit));
        }
        core_parts_copy(tr, (size_t)n, data, parts, false);
    }
    TRY(sk_selfplay_check(tr, path)); /* its counters and opponents index the pool */
    sk_selfplay_transpose_pool(tr);     /* the restored members' W^T, before any rollout */
    TRY(check_pending_actions(tr, path));
    TRY(restore(file, path, "state.seconds", SK_ST_F64, seconds, 2, false, 0, 0));
    if (!(seconds[0] >= 0.0 && seconds[0] < inf))
        TRY(sk_fail(SK_ERR_CORRUPT, "checkpoint '%s': state.seconds[0] = %g is not a duration",
                    path, seconds[0]));
    TRY(restore(file, path, "state.window_return", SK_ST_F32, tr->progress.window_return, SK_WINDOW, true,
                -inf, inf));
    TRY(restore(file, path, "state.window_length", SK_ST_F32, tr->progress.window_length, SK_WINDOW, true,
                0, inf));
    TRY(restore(file, path, "state.governor_recent", SK_ST_I64, ln->governor.recent,
                SK_GOVERNOR_MAX_ANOMALIES + 1, true, 0, (double)counters[C_UPDATE]));
    TRY(restore(file, path, "state.rng", SK_ST_U64, rngs, 1 + W, false, 0, 0));
    TRY(restore(file, path, "state.obs_mean", SK_ST_F64, ln->obs_stats.mean, O, true, -inf, inf));
    TRY(restore(file, path, "state.obs_var", SK_ST_F64, ln->obs_stats.var, O, true, 0, inf));
    TRY(restore(file, path, "state.obs_count", SK_ST_F64, &obs_count, 1, true, 0, inf));
    TRY(restore(file, path, "state.return_stats", SK_ST_F64, return_stats, 3, true, -inf, inf));
    if (!(return_stats[0] >= 0.0 && return_stats[2] >= 0.0))
        TRY(sk_fail(SK_ERR_CORRUPT,
                    "checkpoint '%s': state.return_stats holds a negative count or variance",
                    path));
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    char names[SK_MAX_ENV_ARRAYS][sizeof ENV_TENSOR_PREFIX + ENV_NAME_MAX];
    int num_arrays;
    TRY(env_arrays(tr, arrays, &num_arrays, names));
    for (int a = 0; a < num_arrays; a++)
        TRY(restore_envs(tr, file, path, names[a], (sk_st_dtype)arrays[a].type, arrays[a].data,
                         arrays[a].count, false, 0, 0));
    TRY(sk_vec_check_state(tr->vec, path));
    TRY(check_current_step(tr, path));
    if (tr->algo->restore) TRY(tr->algo->restore(tr, file, path));
    tr->progress.steps = counters[C_STEPS];
    tr->progress.result.total_steps = counters[C_STEPS]; /* where the run stands until it runs */
    tr->progress.episodes = counters[C_EPISODES];
    ln->adam_step = counters[C_ADAM_STEP];
    tr->progress.window_count = (int)counters[C_WINDOW_COUNT];
    tr->progress.window_pos = (int)counters[C_WINDOW_POS];
    ln->governor.anomalies = counters[C_ANOMALIES];
    tr->progress.result.solved = counters[C_SOLVED] != 0;
    tr->progress.result.solved_at_steps = counters[C_SOLVED_AT];
    tr->progress.result.solved_at_seconds = seconds[1];
    tr->progress.elapsed_before = seconds[0];
    ln->rng = rngs[0];
    for (int w = 0; w < tr->num_workers; w++) tr->workers[w].rng = rngs[1 + tr->layout.worker_offset + w];
    ln->obs_stats.count = obs_count;
    ln->return_stats.count = return_stats[0];
    ln->return_stats.mean[0] = return_stats[1];
    ln->return_stats.var[0] = return_stats[2];
    if (tr->s.norm_obs) sk_norm_map_update(&ln->obs_map, &ln->obs_stats, true);
    if (tr->s.norm_reward) sk_norm_map_update(&ln->reward_map, &ln->return_stats, false);
    tr->resumed = true;
done:
    sk_free(parts);
    return status;
}

sk_status sk_trainer_resume(sk_trainer *tr, const char *path) {
    sk_st_file *file = NULL;
    sk_status status = sk_st_open(&file, path);
    if (status != SK_OK) return sk_trainer_fail(tr, status);
    status = resume_from(tr, file, path);
    sk_st_close(file);
    return sk_trainer_fail(tr, status);
}

sk_status sk_trainer_resume_plan(sk_trainer *tr, sk_run_plan *plan) {
    sk_status status = sk_run_plan_open_checkpoint(plan);
    if (status == SK_OK) status = resume_from(tr, plan->checkpoint, plan->checkpoint_path);
    return sk_trainer_fail(tr, status);
}
