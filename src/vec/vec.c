/*
 * sk_vec: N envs of one kind, their buffers and the workers that step them.
 * Every buffer is allocated once at creation; a step touches no lock (each
 * worker steps its own contiguous slice) and allocates nothing.
 */
#include "vec_internal.h"

#include "../core/core.h"
#include "pool.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* OpenBLAS's own thread count (process-wide). */
extern void openblas_set_num_threads(int num_threads);

struct sk_vec {
    const sk_env_def *env;
    void *state;
    int num_envs;
    int lo, hi; /* the envs this process steps (all of them but in a distributed run) */
    sk_pool *pool;
    sk_vec_buffers buffers;
    sk_env_io io;
};

static sk_status alloc_buffer(void **out, size_t count, size_t size) {
    *out = sk_alloc(count * size + 1); /* + 1: a zero-sized buffer is still a distinct pointer */
    return *out ? SK_OK : sk_fail(SK_ERR_NOMEM, "out of memory (%zu x %zu bytes)", count, size);
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        sk_status check_status_ = (expr);                                                          \
        if (check_status_ != SK_OK) return check_status_;                                          \
    } while (0)

static sk_status vec_build(sk_vec *vec, int threads, const sk_config *cfg) {
    const sk_env_def *env = vec->env;
    size_t n = (size_t)vec->num_envs, obs = (size_t)env->obs_size;
    sk_vec_buffers *b = &vec->buffers;
    bool discrete = env->action_space.kind == SK_SPACE_DISCRETE;
    CHECK(alloc_buffer((void **)&b->obs, n * obs, sizeof(float)));
    CHECK(alloc_buffer((void **)&b->final_obs, n * obs, sizeof(float)));
    if (discrete)
        CHECK(alloc_buffer((void **)&b->actions, n * (size_t)env->action_space.num_heads,
                           sizeof(int32_t)));
    else
        CHECK(alloc_buffer((void **)&b->actions_continuous, n * (size_t)env->action_space.dim,
                           sizeof(float)));
    CHECK(alloc_buffer((void **)&b->rewards, n, sizeof(float)));
    CHECK(alloc_buffer((void **)&b->terminated, n, 1));
    CHECK(alloc_buffer((void **)&b->truncated, n, 1));
    if (env->mask_size > 0) CHECK(alloc_buffer((void **)&b->masks, n * (size_t)env->mask_size, 1));
    CHECK(alloc_buffer((void **)&b->episode_log, n * (size_t)env->num_log_fields, sizeof(float)));
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
    };
    int workers = threads > 0 ? threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    workers = SK_MAX(1, SK_MIN(workers, vec->hi - vec->lo));
    CHECK(sk_pool_create(&vec->pool, workers));
    /* skinner's workers are the parallelism: a BLAS call inside an env's step
     * (Morpho-v0's host training) or a policy runs on its worker's core */
    openblas_set_num_threads(1);
    return env->create(&vec->state, vec->num_envs, cfg);
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
        vec->env = env;
        vec->num_envs = num_envs;
        vec->lo = lo;
        vec->hi = hi;
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
    void *all[] = {b->obs,       b->final_obs, b->actions, b->actions_continuous, b->rewards,
                   b->terminated, b->truncated, b->masks,  b->episode_log};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) sk_free(all[i]);
    free(vec);
}

const sk_env_def *sk_vec_env(const sk_vec *vec) { return vec->env; }
int sk_vec_num_envs(const sk_vec *vec) { return vec->num_envs; }
int sk_vec_num_workers(const sk_vec *vec) { return sk_pool_size(vec->pool); }
const sk_vec_buffers *sk_vec_buffers_of(const sk_vec *vec) { return &vec->buffers; }
void *sk_vec_state(const sk_vec *vec) { return vec->state; }
const sk_env_io *sk_vec_io(const sk_vec *vec) { return &vec->io; }

void sk_vec_slice(const sk_vec *vec, int worker, int *lo, int *hi) {
    sk_slice(vec->hi - vec->lo, worker, sk_pool_size(vec->pool), lo, hi);
    *lo += vec->lo;
    *hi += vec->lo;
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
    int count = vec->env->state_arrays(vec->state, arrays);
    SK_ASSERT(count >= 0 && count <= SK_MAX_ENV_ARRAYS);
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
    sk_status status = vec->env->check_state ? vec->env->check_state(vec->state, vec->num_envs) : SK_OK;
    if (status != SK_OK) {
        char message[1024]; /* sk_last_error's buffer is the one written next */
        snprintf(message, sizeof message, "%s", sk_last_error());
        return sk_fail(status, "%s: %s", source, message);
    }
    return SK_OK;
}
