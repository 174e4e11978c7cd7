/*
 * sk_vec: N envs of one kind, their buffers and the workers that step them.
 * Every buffer is allocated once at creation; a step touches no lock (each
 * worker steps its own contiguous slice) and allocates nothing.
 */
#include "vec_internal.h"

#include "../core/core.h"
#include "pool.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* OpenBLAS's own thread count (process-wide). */
extern void openblas_set_num_threads(int num_threads);

struct sk_vec {
    const sk_env_def *env;
    void *state;
    int num_envs;
    int num_agents, num_rows; /* agents per env (1: single-agent); rows = envs x agents */
    int lo, hi; /* the envs this process steps (all of them but in a distributed run) */
    sk_pool *pool;
    sk_vec_buffers buffers;
    sk_env_io io;
    /* the checked steps (sk_vec_step_checked): the observation's bounds, the
     * declared Box clamped to the finite floats, and the first fault seen */
    float *obs_low, *obs_high; /* (bounds_rows, obs_size) each: the bounds repeated */
    int bounds_rows;
    pthread_mutex_t fault_lock;
    atomic_bool faulted;
    char fault[768];
};

/* A buffer of `per_env` values of `size` bytes for each row (an env's, or
 * an (env, agent) pair's; what: its name, for the message); the product is
 * checked, not wrapped. */
static sk_status alloc_buffer(const sk_vec *vec, const char *what, void **out, size_t per_env,
                              size_t size) {
    size_t values, bytes;
    *out = NULL;
    if (!__builtin_mul_overflow((size_t)vec->num_rows, per_env, &values) &&
        !__builtin_mul_overflow(values, size, &bytes) && bytes < SIZE_MAX)
        *out = sk_alloc(bytes + 1); /* + 1: a zero-sized buffer is still a distinct pointer */
    return *out ? SK_OK
                : sk_fail(SK_ERR_NOMEM, "%s: out of memory for its %s: %d envs x %zu values x "
                                        "%zu bytes (obs_size %d, mask_size %d)",
                          vec->env->id, what, vec->num_envs, per_env, size, vec->env->obs_size,
                          vec->env->mask_size);
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        sk_status check_status_ = (expr);                                                          \
        if (check_status_ != SK_OK) return check_status_;                                          \
    } while (0)

/* Values of bounds the Box check compares a block of rows against: a short
 * observation (CartPole's 4) repeated over rows, so the check runs as one
 * flat loop that vectorises instead of an inner loop of 4. */
#define BOUNDS_BLOCK_VALUES 256

/* The observation's bounds for the checked steps: the declared Box clamped
 * to the finite floats ("unbounded" still means finite), repeated for
 * bounds_rows rows. */
static sk_status alloc_bounds(sk_vec *vec) {
    const sk_env_def *env = vec->env;
    size_t obs = (size_t)env->obs_size;
    size_t rows = obs < BOUNDS_BLOCK_VALUES ? BOUNDS_BLOCK_VALUES / obs : 1;
    vec->bounds_rows = (int)rows;
    vec->obs_low = sk_alloc(rows * obs * sizeof(float));
    vec->obs_high = sk_alloc(rows * obs * sizeof(float));
    if (!vec->obs_low || !vec->obs_high)
        return sk_fail(SK_ERR_NOMEM, "%s: out of memory for its observation bounds (obs_size %d)",
                       env->id, env->obs_size);
    for (size_t j = 0; j < rows * obs; j++) {
        size_t k = j % obs;
        vec->obs_low[j] = env->obs_low ? fmaxf(env->obs_low[k], -FLT_MAX) : -FLT_MAX;
        vec->obs_high[j] = env->obs_high ? fminf(env->obs_high[k], FLT_MAX) : FLT_MAX;
    }
    return SK_OK;
}

static sk_status vec_build(sk_vec *vec, int threads, const sk_config *cfg) {
    const sk_env_def *env = vec->env;
    size_t obs = (size_t)env->obs_size;
    sk_vec_buffers *b = &vec->buffers;
    bool discrete = env->action_space.kind == SK_SPACE_DISCRETE;
    if (env->obs_dtype == SK_OBS_U8) { /* bytes until the policy reads them */
        CHECK(alloc_buffer(vec, "observations", (void **)&b->obs_u8, obs, 1));
        CHECK(alloc_buffer(vec, "final observations", (void **)&b->final_obs_u8, obs, 1));
    } else {
        CHECK(alloc_buffer(vec, "observations", (void **)&b->obs, obs, sizeof(float)));
        CHECK(alloc_buffer(vec, "final observations", (void **)&b->final_obs, obs, sizeof(float)));
    }
    if (discrete)
        CHECK(alloc_buffer(vec, "actions", (void **)&b->actions,
                           (size_t)env->action_space.num_heads, sizeof(int32_t)));
    else
        CHECK(alloc_buffer(vec, "actions", (void **)&b->actions_continuous,
                           (size_t)env->action_space.dim, sizeof(float)));
    CHECK(alloc_buffer(vec, "rewards", (void **)&b->rewards, 1, sizeof(float)));
    CHECK(alloc_buffer(vec, "terminated flags", (void **)&b->terminated, 1, 1));
    CHECK(alloc_buffer(vec, "truncated flags", (void **)&b->truncated, 1, 1));
    if (env->mask_size > 0)
        CHECK(alloc_buffer(vec, "masks", (void **)&b->masks, (size_t)env->mask_size, 1));
    CHECK(alloc_buffer(vec, "episode logs", (void **)&b->episode_log,
                       (size_t)env->num_log_fields, sizeof(float)));
    /* every row of a single-agent env acts: the env never writes these */
    CHECK(alloc_buffer(vec, "active flags", (void **)&b->active, 1, 1));
    memset(b->active, 1, (size_t)vec->num_rows);
    CHECK(alloc_bounds(vec));
    vec->io = (sk_env_io){
        .obs = b->obs,
        .final_obs = b->final_obs,
        .actions = b->actions,
        .actions_continuous = b->actions_continuous,
        .rewards = b->rewards,
        .terminated = b->terminated,
        .truncated = b->truncated,
        .masks = b->masks,
        .episode_log = b->episode_log,
        .obs_u8 = b->obs_u8,
        .final_obs_u8 = b->final_obs_u8,
        .active = vec->num_agents > 1 ? b->active : NULL,
    };
    int workers = SK_MAX(1, SK_MIN(sk_threads_or_cores(threads), vec->hi - vec->lo));
    CHECK(sk_pool_create(&vec->pool, workers));
    /* skinner's workers are the parallelism: a BLAS call inside an env's step
     * (Morpho-v0's host training) or a policy runs on its worker's core */
    openblas_set_num_threads(1);
    sk_error_clear();
    CHECK(sk_fail_if_silent(env->create(&vec->state, vec->num_envs, cfg), "%s's create", env->id));
    if (!vec->state)
        return sk_fail(SK_ERR_ENV, "%s's create returned SK_OK but set no state (expected "
                       "*state to point at the env's state, or an error status)", env->id);
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    return sk_vec_state_arrays(vec, arrays) < 0 ? SK_ERR_ENV : SK_OK;
}

sk_status sk_vec_create(sk_vec **out, const sk_env_def *env, int num_envs, int threads,
                        const sk_config *cfg) {
    return sk_vec_create_range(out, env, num_envs, 0, num_envs, threads, cfg);
}

sk_status sk_vec_create_range(sk_vec **out, const sk_env_def *env, int num_envs, int lo, int hi,
                              int threads, const sk_config *cfg) {
    *out = NULL;
    if (!env) return sk_fail(SK_ERR_INVALID, "sk_vec_create: no environment given");
    if (num_envs < 1)
        return sk_fail(SK_ERR_INVALID, "%s: num_envs = %d (expected at least 1)", env->id, num_envs);
    if ((int64_t)num_envs * sk_env_agents(env) > INT32_MAX)
        return sk_fail(SK_ERR_INVALID, "%s: num_envs = %d x %d agents is too many rows (expected "
                       "at most %d)", env->id, num_envs, sk_env_agents(env), INT32_MAX);
    if (lo < 0 || lo > hi || hi > num_envs)
        return sk_fail(SK_ERR_INVALID, "%s: envs %d..%d of %d (expected a range within them)",
                       env->id, lo, hi - 1, num_envs);
    if (threads < 0)
        return sk_fail(SK_ERR_INVALID, "%s: threads = %d (expected 0 for one per core, or more)",
                       env->id, threads);
    sk_config *empty = NULL;
    if (!cfg && !(cfg = empty = sk_config_new())) return sk_fail(SK_ERR_NOMEM, "out of memory");
    /* the buffers take the sizes cfg gives the env (sk_env_def.configure) */
    sk_status configured = sk_env_configure(env, cfg, &env);
    if (configured != SK_OK) {
        sk_config_free(empty);
        return configured;
    }
    sk_vec *vec = calloc(1, sizeof *vec);
    sk_status status = vec ? SK_OK : sk_fail(SK_ERR_NOMEM, "out of memory");
    if (vec) {
        pthread_mutex_init(&vec->fault_lock, NULL);
        vec->env = env;
        vec->num_envs = num_envs;
        vec->num_agents = sk_env_agents(env);
        vec->lo = lo;
        vec->hi = hi;
        vec->num_rows = num_envs * vec->num_agents;
        status = vec_build(vec, threads, cfg);
    }
    sk_config_free(empty);
    if (status != SK_OK) {
        sk_vec_destroy(vec);
        return status;
    }
    *out = vec;
    return SK_OK;
}

void sk_vec_destroy(sk_vec *vec) {
    if (!vec) return;
    if (vec->pool) sk_pool_destroy(vec->pool);
    if (vec->state) vec->env->destroy(vec->state);
    sk_vec_buffers *b = &vec->buffers;
    void *all[] = {b->obs,       b->final_obs, b->actions,     b->actions_continuous,
                   b->rewards,   b->terminated, b->truncated, b->masks,
                   b->episode_log, vec->obs_low, vec->obs_high, b->obs_u8, b->final_obs_u8,
                   b->active};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sk_free(all[i]);
    pthread_mutex_destroy(&vec->fault_lock);
    free(vec);
}

const sk_env_def *sk_vec_env(const sk_vec *vec) { return vec->env; }
int sk_vec_num_envs(const sk_vec *vec) { return vec->num_envs; }
int sk_vec_num_agents(const sk_vec *vec) { return vec->num_agents; }
int sk_vec_num_rows(const sk_vec *vec) { return vec->num_rows; }
int sk_vec_num_workers(const sk_vec *vec) { return sk_pool_size(vec->pool); }
const sk_vec_buffers *sk_vec_buffers_of(const sk_vec *vec) { return &vec->buffers; }
void *sk_vec_state(const sk_vec *vec) { return vec->state; }
const sk_env_io *sk_vec_io(const sk_vec *vec) { return &vec->io; }

void sk_vec_slices(const sk_vec *vec, int slice, int num_slices, int *lo, int *hi) {
    sk_slice(vec->hi - vec->lo, slice, num_slices, lo, hi);
    *lo += vec->lo;
    *hi += vec->lo;
}

void sk_vec_slice(const sk_vec *vec, int worker, int *lo, int *hi) {
    sk_vec_slices(vec, worker, sk_pool_size(vec->pool), lo, hi);
}

void sk_vec_reset_range(sk_vec *vec, int lo, int hi, uint64_t seed) {
    SK_ASSERT(0 <= lo && lo <= hi && hi <= vec->num_envs);
    if (lo < hi) vec->env->reset(vec->state, &vec->io, lo, hi, seed);
}

void sk_vec_step_range(sk_vec *vec, int lo, int hi) {
    SK_ASSERT(0 <= lo && lo <= hi && hi <= vec->num_envs);
    if (lo < hi) vec->env->step(vec->state, &vec->io, lo, hi);
}

typedef struct reset_job_ctx {
    sk_vec *vec;
    uint64_t seed;
} reset_job_ctx;

static void reset_job(void *ctx, int w, int num_workers) {
    (void)num_workers;
    reset_job_ctx *job = ctx;
    int lo, hi;
    sk_vec_slice(job->vec, w, &lo, &hi);
    sk_vec_reset_range(job->vec, lo, hi, job->seed);
}

static void step_job(void *ctx, int w, int num_workers) {
    (void)num_workers;
    sk_vec *vec = ctx;
    int lo, hi;
    sk_vec_slice(vec, w, &lo, &hi);
    sk_vec_step_range(vec, lo, hi);
}

void sk_vec_reset(sk_vec *vec, uint64_t seed) {
    reset_job_ctx job = {vec, seed};
    sk_pool_run(vec->pool, reset_job, &job);
}

void sk_vec_step(sk_vec *vec) { sk_pool_run(vec->pool, step_job, vec); }

void sk_vec_parallel(sk_vec *vec, sk_parallel_job job, void *ctx) {
    sk_pool_run(vec->pool, job, ctx);
}

static void parallel_run(void *ctx, sk_parallel_job job, void *job_ctx) {
    sk_vec_parallel(ctx, job, job_ctx);
}

sk_parallel sk_vec_parallel_of(sk_vec *vec) {
    return (sk_parallel){.ctx = vec, .run = parallel_run};
}

int sk_vec_state_arrays(sk_vec *vec, sk_env_array *arrays) {
    /* room past the limit, so an env that lists a few too many is reported, not
     * let loose on the caller's stack */
    sk_env_array listed[2 * SK_MAX_ENV_ARRAYS];
    const char *id = vec->env->id;
    int count = vec->env->state_arrays(vec->state, listed);
    if (count < 0 || count > SK_MAX_ENV_ARRAYS) {
        sk_fail(SK_ERR_ENV, "env %s: state_arrays returned %d arrays (expected 0..%d, "
                            "SK_MAX_ENV_ARRAYS)", id, count, SK_MAX_ENV_ARRAYS);
        return -1;
    }
    for (int a = 0; a < count; a++) {
        const sk_env_array *array = &listed[a];
        const char *name = array->name ? array->name : "(no name)";
        if ((unsigned)array->type > (unsigned)SK_ARRAY_U64) {
            sk_fail(SK_ERR_ENV, "env %s: state array %d ('%s') has type %d (expected an "
                                "sk_array_type, SK_ARRAY_F32..SK_ARRAY_U64)",
                    id, a, name, (int)array->type);
            return -1;
        }
        if (array->count < 0 || (array->count > 0 && !array->data)) {
            sk_fail(SK_ERR_ENV, "env %s: state array %d ('%s') has count %d and %s data "
                                "(expected a count >= 0 and data for count > 0)",
                    id, a, name, array->count, array->data ? "some" : "no");
            return -1;
        }
    }
    memcpy(arrays, listed, (size_t)count * sizeof *arrays);
    return count;
}

/* Element k of an array as a double; integers beyond 2^53 are compared
 * after rounding, which no range of an env's state comes near. */
static double element(const sk_env_array *a, size_t k) {
    switch (a->type) {
    case SK_ARRAY_F32: return ((const float *)a->data)[k];
    case SK_ARRAY_F64: return ((const double *)a->data)[k];
    case SK_ARRAY_I32: return ((const int32_t *)a->data)[k];
    case SK_ARRAY_I64: return (double)((const int64_t *)a->data)[k];
    case SK_ARRAY_U8: return ((const uint8_t *)a->data)[k];
    case SK_ARRAY_U64: return (double)((const uint64_t *)a->data)[k];
    }
    SK_ASSERT(false && "unknown array type");
    return 0.0;
}

sk_status sk_vec_check_state(sk_vec *vec, const char *source) {
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    int count = sk_vec_state_arrays(vec, arrays);
    if (count < 0) return SK_ERR_ENV;
    for (int a = 0; a < count; a++) {
        const sk_env_array *array = &arrays[a];
        if (!array->has_range) continue;
        size_t total = (size_t)vec->num_envs * (size_t)array->count;
        for (size_t k = 0; k < total; k++) {
            double value = element(array, k);
            if (value >= array->lo && value <= array->hi) continue; /* false for NaN */
            return sk_fail(SK_ERR_CORRUPT,
                           "%s: env.%s[%zu] (env %zu) = %.17g is outside its allowed range [%.17g, "
                           "%.17g]",
                           source, array->name, k, k / (size_t)array->count, value, array->lo,
                           array->hi);
        }
    }
    sk_error_clear();
    sk_status status = vec->env->check_state ? vec->env->check_state(vec->state, vec->num_envs) : SK_OK;
    status = sk_fail_if_silent(status, "%s's check_state", vec->env->id);
    if (status != SK_OK) {
        char message[1024]; /* sk_last_error's buffer is the one written next */
        snprintf(message, sizeof message, "%s", sk_last_error());
        return sk_fail(status, "%s: %s", source, message);
    }
    return SK_OK;
}

/* ---- checked steps: what the env wrote, blamed on the env ---- */

/* A quiet NaN with a payload no arithmetic produces (operations on NaN give
 * the default 0x7fc00000 or keep an input's payload): an observation value
 * that still holds it after a step was never written. */
#define OBS_CANARY_BITS 0x7fc0ca9eu
/* A uint8 env's canary: every byte value is a valid byte, so an unwritten one
 * shows only where the declared Box excludes 0xa5 (a 0/1 image's does); an
 * env without a Box gets no unwritten-byte check. */
#define OBS_CANARY_BYTE 0xa5

typedef union canary_bits {
    uint32_t bits;
    float value;
} canary_bits;

static float obs_canary(void) { return (canary_bits){.bits = OBS_CANARY_BITS}.value; }
static bool is_canary(float value) { return (canary_bits){.value = value}.bits == OBS_CANARY_BITS; }

/* Names buffer row `row` into out: "env index E" (`index`) or "env E", with ", agent A" or
 * " agent A" after it for a multi-agent env (whose rows are env * agents + agent). */
static const char *row_name(const sk_vec *vec, int row, bool index, char *out, size_t size) {
    int A = vec->num_agents;
    if (A > 1)
        snprintf(out, size, index ? "env index %d, agent %d" : "env %d agent %d", row / A, row % A);
    else
        snprintf(out, size, index ? "env index %d" : "env %d", row);
    return out;
}

/* Records the first fault at buffer row `row` (later ones are consequences or repeats). */
static void record_fault(sk_vec *vec, int row, int64_t step, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void record_fault(sk_vec *vec, int row, int64_t step, const char *fmt, ...) {
    char what[512], when[64], where[64];
    if (step > 0) snprintf(when, sizeof when, "step %lld", (long long)step);
    else snprintf(when, sizeof when, "reset");
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof what, fmt, args);
    va_end(args);
    pthread_mutex_lock(&vec->fault_lock);
    if (!atomic_load(&vec->faulted)) {
        snprintf(vec->fault, sizeof vec->fault,
                 "env %s broke its contract (%s, %s): %s; this is the env's fault, not "
                 "the learner's",
                 vec->env->id, row_name(vec, row, true, where, sizeof where), when, what);
        atomic_store(&vec->faulted, true);
    }
    pthread_mutex_unlock(&vec->fault_lock);
}

/* Whether every value of rows lo..hi-1 (width values each) lies within the
 * bounds, which hold block_rows rows: one compare pair per value over blocks of
 * whole rows, false for NaN, no branch in the loop. */
static bool rows_within(const float *values, const float *low, const float *high, size_t lo,
                        size_t hi, size_t width, size_t block_rows) {
    int outside = 0;
    const float *row = values + lo * width;
    for (size_t i = lo; i < hi; i += block_rows) {
        size_t count = (hi - i < block_rows ? hi - i : block_rows) * width;
        for (size_t k = 0; k < count; k++)
            outside |= !(row[k] >= low[k]) | !(row[k] <= high[k]);
        row += count;
    }
    return !outside;
}

/* Whether all count values are finite: one compare per value, over the flat
 * array (what an env without a declared Box must satisfy); vectorises. */
static bool all_finite(const float *values, size_t count) {
    int outside = 0;
    for (size_t k = 0; k < count; k++) outside |= !(fabsf(values[k]) <= FLT_MAX);
    return !outside;
}

/* Whether byte rows lo..hi-1 (width values each) lie within the bounds, as
 * rows_within for floats. */
static bool byte_rows_within(const uint8_t *values, const float *low, const float *high,
                             size_t lo, size_t hi, size_t width, size_t block_rows) {
    int outside = 0;
    const uint8_t *row = values + lo * width;
    for (size_t i = lo; i < hi; i += block_rows) {
        size_t count = (hi - i < block_rows ? hi - i : block_rows) * width;
        for (size_t k = 0; k < count; k++)
            outside |= !((float)row[k] >= low[k]) | !((float)row[k] <= high[k]);
        row += count;
    }
    return !outside;
}

/* Whether observation rows lo..hi-1 are finite and inside the declared Box
 * (obs or, for a uint8 env, obs_u8: a byte is always finite, so only a
 * declared Box can find fault with it). */
static bool obs_rows_good(const sk_vec *vec, const float *obs, const uint8_t *obs_u8, size_t lo,
                          size_t hi) {
    size_t O = (size_t)vec->env->obs_size;
    if (!vec->env->obs_low) return obs_u8 || all_finite(obs + lo * O, (hi - lo) * O);
    if (obs_u8)
        return byte_rows_within(obs_u8, vec->obs_low, vec->obs_high, lo, hi, O,
                                (size_t)vec->bounds_rows);
    return rows_within(obs, vec->obs_low, vec->obs_high, lo, hi, O, (size_t)vec->bounds_rows);
}

/* Names the first byte of a uint8 observation row outside the declared Box;
 * false when the row is good. The canary byte (OBS_CANARY_BYTE) is reported
 * as unwritten where the Box excludes it. */
static bool blame_byte_row(sk_vec *vec, const uint8_t *row, int env_index, int64_t step,
                           const char *field) {
    const sk_env_def *env = vec->env;
    char name[64];
    for (int k = 0; env->obs_low && k < env->obs_size; k++) {
        float value = row[k];
        if (value >= vec->obs_low[k] && value <= vec->obs_high[k]) continue;
        if (row[k] == OBS_CANARY_BYTE)
            record_fault(vec, env_index, step,
                         "%s byte %d of %s = 0x%02x was never written, or written outside "
                         "the declared Box [%g, %g] (obs_size = %d)",
                         field, k, row_name(vec, env_index, false, name, sizeof name),
                         OBS_CANARY_BYTE, (double)env->obs_low[k],
                         (double)env->obs_high[k], env->obs_size);
        else
            record_fault(vec, env_index, step,
                         "%s byte %d = %d is outside the declared Box [%g, %g] (obs_low[%d], "
                         "obs_high[%d])",
                         field, k, (int)row[k], (double)env->obs_low[k], (double)env->obs_high[k],
                         k, k);
        return true;
    }
    return false;
}

/* Names the first bad value of one observation row (`field`: "observation" or
 * "final_obs") into the vec's fault; false when the row is good. */
static bool blame_obs_row(sk_vec *vec, const float *row, int env_index, int64_t step,
                          const char *field) {
    const sk_env_def *env = vec->env;
    char name[64];
    for (int k = 0; k < env->obs_size; k++) {
        float value = row[k];
        if (value >= vec->obs_low[k] && value <= vec->obs_high[k]) continue;
        if (is_canary(value))
            record_fault(vec, env_index, step,
                         "%s value %d of %s was never written (obs_size = %d: the env "
                         "wrote fewer values than it declares)",
                         field, k, row_name(vec, env_index, false, name, sizeof name),
                         env->obs_size);
        else if (!isfinite(value))
            record_fault(vec, env_index, step, "%s value %d = %g is not finite", field, k,
                         (double)value);
        else
            record_fault(vec, env_index, step,
                         "%s value %d = %.9g is outside the declared Box [%g, %g] "
                         "(obs_low[%d], obs_high[%d])",
                         field, k, (double)value,
                         (double)(env->obs_low ? env->obs_low[k] : vec->obs_low[k]),
                         (double)(env->obs_high ? env->obs_high[k] : vec->obs_high[k]), k, k);
        return true;
    }
    return false;
}

/* Checks the outputs of rows lo..hi-1 after a reset (step 0) or step; records
 * the first fault (naming the row's env, and agent for a multi-agent env). */
static bool check_outputs(sk_vec *vec, int lo, int hi, int64_t step) {
    const sk_env_def *env = vec->env;
    const sk_vec_buffers *b = &vec->buffers;
    size_t O = (size_t)env->obs_size, M = (size_t)env->mask_size;
    bool good = obs_rows_good(vec, b->obs, b->obs_u8, (size_t)lo, (size_t)hi);
    int ended = 0, flags = 0; /* a multi-agent env's active flags: 0 or 1 */
    if (step > 0) {
        good &= all_finite(b->rewards + lo, (size_t)(hi - lo));
        for (int i = lo; i < hi; i++) ended |= b->terminated[i] | b->truncated[i];
    }
    if (vec->num_agents > 1)
        for (int i = lo; i < hi; i++) flags |= b->active[i];
    good &= flags <= 1;
    if (good && !ended && M == 0) return true; /* the common case: nothing more to look at */
    for (int i = lo; i < hi; i++) {
        if (!good && (b->obs_u8 ? blame_byte_row(vec, b->obs_u8 + (size_t)i * O, i, step,
                                                 "observation")
                                : blame_obs_row(vec, b->obs + (size_t)i * O, i, step,
                                                "observation")))
            return false;
        if (!good && step > 0 && !all_finite(b->rewards + i, 1)) {
            record_fault(vec, i, step, "reward = %g is not finite", (double)b->rewards[i]);
            return false;
        }
        if (vec->num_agents > 1 && b->active[i] > 1) {
            record_fault(vec, i, step, "active = %d (expected 1: the agent acts at the next "
                                       "step, or 0: its action is ignored)", b->active[i]);
            return false;
        }
        if (ended && (b->terminated[i] || b->truncated[i]) &&
            !obs_rows_good(vec, b->final_obs, b->final_obs_u8, (size_t)i, (size_t)i + 1)) {
            if (b->final_obs_u8)
                blame_byte_row(vec, b->final_obs_u8 + (size_t)i * O, i, step, "final_obs");
            else
                blame_obs_row(vec, b->final_obs + (size_t)i * O, i, step, "final_obs");
            return false;
        }
        int head = M ? sk_action_mask_unusable(&env->action_space, b->masks + (size_t)i * M) : -1;
        if (head >= 0) {
            record_fault(vec, i, step, "its mask row allows no action of head %d (expected at "
                                       "least one allowed choice per head)", head);
            return false;
        }
    }
    return true;
}

static void fill_canary(sk_vec *vec, int lo, int hi) {
    float canary = obs_canary();
    size_t O = (size_t)vec->env->obs_size;
    if (vec->buffers.obs_u8) {
        memset(vec->buffers.obs_u8 + (size_t)lo * O, OBS_CANARY_BYTE, (size_t)(hi - lo) * O);
        return;
    }
    float *obs = vec->buffers.obs;
    for (size_t k = (size_t)lo * O; k < (size_t)hi * O; k++) obs[k] = canary;
}

bool sk_vec_reset_checked(sk_vec *vec, int lo, int hi, uint64_t seed) {
    int A = vec->num_agents;
    fill_canary(vec, lo * A, hi * A);
    sk_vec_reset_range(vec, lo, hi, seed);
    return check_outputs(vec, lo * A, hi * A, 0);
}

bool sk_vec_step_checked(sk_vec *vec, int lo, int hi, int64_t step) {
    int A = vec->num_agents;
    fill_canary(vec, lo * A, hi * A);
    sk_vec_step_range(vec, lo, hi);
    return check_outputs(vec, lo * A, hi * A, step);
}

bool sk_vec_faulted(const sk_vec *vec) { return atomic_load(&vec->faulted); }

sk_status sk_vec_fault(sk_vec *vec) {
    if (!atomic_load(&vec->faulted)) return SK_OK;
    pthread_mutex_lock(&vec->fault_lock);
    sk_status status = sk_fail(SK_ERR_ENV, "%s", vec->fault);
    pthread_mutex_unlock(&vec->fault_lock);
    return status;
}

sk_status sk_vec_check_actions(const sk_vec *vec, int lo, int hi, const char *source) {
    const sk_env_def *env = vec->env;
    const sk_action_space *space = &env->action_space;
    const sk_vec_buffers *b = &vec->buffers;
    if (space->kind != SK_SPACE_DISCRETE) return SK_OK;
    size_t H = (size_t)space->num_heads, M = (size_t)env->mask_size;
    for (int i = lo * vec->num_agents; i < hi * vec->num_agents; i++) {
        if (!b->active[i]) continue; /* an inactive agent's action is ignored */
        const int32_t *row = b->actions + (size_t)i * H;
        int head = sk_action_check(space, M ? b->masks + (size_t)i * M : NULL, row);
        char name[64];
        if (head >= 0)
            return sk_fail(SK_ERR_ENV, "env %s: %s wrote action %d for head %d of %s "
                                       "(expected 0..%d, allowed by its mask)",
                           env->id, source, (int)row[head], head,
                           row_name(vec, i, true, name, sizeof name), space->head_sizes[head] - 1);
    }
    return SK_OK;
}

/* ---- a physics env's state from outside (sk_env_extras' physics calls) ---- */

sk_status sk_vec_physics_sizes(const sk_vec *vec, int *qpos_size, int *qvel_size) {
    const sk_env_extras *extras = sk_env_extras_of(vec->env);
    *qpos_size = *qvel_size = 0;
    if (!extras->physics_sizes || !extras->get_physics || !extras->set_physics)
        return sk_fail(SK_ERR_INVALID, "env %s has no physics state to get or set (its extras "
                                       "have no physics_sizes, get_physics and set_physics)",
                       vec->env->id);
    extras->physics_sizes(vec->state, qpos_size, qvel_size);
    return SK_OK;
}

/* Whether index and the sizes fit the env: SK_OK or the message. */
static sk_status check_physics_call(const sk_vec *vec, int index, int qpos_size, int qvel_size) {
    int nq, nv;
    sk_status status = sk_vec_physics_sizes(vec, &nq, &nv);
    if (status != SK_OK) return status;
    if (index < vec->lo || index >= vec->hi)
        return sk_fail(SK_ERR_INVALID, "env %s: index %d is outside the envs %d..%d", vec->env->id,
                       index, vec->lo, vec->hi - 1);
    if (qpos_size != nq || qvel_size != nv)
        return sk_fail(SK_ERR_INVALID,
                       "env %s: %d positions and %d velocities given, but its model has %d and %d",
                       vec->env->id, qpos_size, qvel_size, nq, nv);
    return SK_OK;
}

sk_status sk_vec_get_physics(const sk_vec *vec, int index, double *qpos, int qpos_size,
                             double *qvel, int qvel_size) {
    sk_status status = check_physics_call(vec, index, qpos_size, qvel_size);
    if (status == SK_OK) sk_env_extras_of(vec->env)->get_physics(vec->state, index, qpos, qvel);
    return status;
}

sk_status sk_vec_set_physics(sk_vec *vec, int index, const double *qpos, int qpos_size,
                             const double *qvel, int qvel_size) {
    sk_status status = check_physics_call(vec, index, qpos_size, qvel_size);
    if (status != SK_OK) return status;
    float *obs_row = vec->buffers.obs + (size_t)index * (size_t)vec->env->obs_size;
    sk_error_clear();
    status = sk_env_extras_of(vec->env)->set_physics(vec->state, index, qpos, qvel, obs_row);
    return sk_fail_if_silent(status, "%s's set_physics", vec->env->id);
}
