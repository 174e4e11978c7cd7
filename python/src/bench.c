/* skinner._core.bench: raw env stepping driven from Python (skinner.bench), apart from
 * the trainer and agents (train.c). */
#include "module.h"

#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ bench */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* bench(env_id, num_envs, threads, seconds, seed, config) -> dict: raw
 * stepping with uniformly random actions (among the allowed ones), drawn in
 * C, for every row (each (env, agent) pair of a multi-agent env); for a
 * Python-defined env, one Python call per batch step. */
PyObject *skpy_bench(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *kwlist[] = {"env_id", "num_envs", "threads", "seconds", "seed", "config", NULL};
    const char *name;
    int num_envs = 4096, threads = 1;
    double seconds = 1.0;
    unsigned long long seed = 0;
    PyObject *num_envs_obj = NULL, *seed_obj = NULL, *pairs = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|OidOO", kwlist, &name, &num_envs_obj,
                                     &threads, &seconds, &seed_obj, &pairs))
        return NULL;
    if ((num_envs_obj && skpy_num_envs(num_envs_obj, &num_envs) < 0) ||
        (seed_obj && skpy_seed(seed_obj, &seed) < 0))
        return NULL;
    if (threads < 0 || !(seconds > 0.0 && seconds <= 3600.0)) {
        char text[32];
        PyErr_Format(PyExc_ValueError,
                     "threads = %d, seconds = %s (expected threads >= 0, 0 < seconds <= 3600)",
                     threads, skpy_num(text, sizeof text, seconds));
        return NULL;
    }
    const sk_env_def *env = skpy_find_env(name);
    if (!env) return NULL;
    if (skpy_env_is_python(env)) threads = 1;
    sk_config *cfg = skpy_config_from_pairs(pairs);
    if (!cfg) return NULL;
    sk_vec *vec = NULL;
    sk_status status = sk_vec_create(&vec, env, num_envs, threads, cfg);
    if (status == SK_OK) status = sk_config_check_unused(cfg, "env");
    sk_config_free(cfg);
    if (status != SK_OK) {
        sk_vec_destroy(vec);
        if (skpy_env_error_take() < 0) return NULL;
        return skpy_raise(status, NULL);
    }
    env = sk_vec_env(vec); /* the sizes its config gave it */
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    const sk_action_space *space = &env->action_space;
    uint64_t rng = sk_rng_seed(seed, 0xbe4cULL);
    /* Unmasked envs step through 16 batches of random actions drawn before the
     * clock starts, so the figure is the env's, not the generator's; masked
     * envs draw each step among the allowed actions. */
    int width = space->kind == SK_SPACE_DISCRETE ? space->num_heads : space->dim;
    int rows = sk_vec_num_rows(vec), agents = sk_vec_num_agents(vec);
    size_t batch = (size_t)rows * (size_t)width;
    enum { DRAWN = 16 };
    int32_t *drawn = env->mask_size ? NULL : sk_alloc(DRAWN * batch * sizeof(int32_t));
    if (!env->mask_size && !drawn) {
        sk_vec_destroy(vec);
        return PyErr_NoMemory();
    }
    for (size_t k = 0; drawn && k < DRAWN * batch; k++) {
        int h = (int)(k % (size_t)width);
        if (space->kind == SK_SPACE_DISCRETE)
            drawn[k] = (int32_t)sk_rng_below(&rng, (uint32_t)space->head_sizes[h]);
        else {
            float v = space->low[h] + (space->high[h] - space->low[h]) * sk_rng_float(&rng);
            memcpy(&drawn[k], &v, sizeof v);
        }
    }
    int64_t steps = 0, t = 0;
    double elapsed = 0.0, next_check = 0.1;
    int interrupted = 0;
    Py_BEGIN_ALLOW_THREADS
    sk_vec_reset(vec, seed);
    double start = now();
    while ((elapsed = now() - start) < seconds) {
        if (drawn) {
            void *dst = space->kind == SK_SPACE_DISCRETE ? (void *)b->actions
                                                         : (void *)b->actions_continuous;
            memcpy(dst, drawn + (size_t)(t++ % DRAWN) * batch, batch * sizeof(int32_t));
        }
        for (int i = 0; !drawn && i < rows; i++) { /* masked: draw among the allowed */
            int32_t *row = b->actions + (size_t)i * (size_t)space->num_heads;
            const uint8_t *mask = b->masks + (size_t)i * (size_t)env->mask_size;
            for (int tries = 0; tries < 64; tries++) {
                for (int h = 0; h < space->num_heads; h++)
                    row[h] = (int32_t)sk_rng_below(&rng, (uint32_t)space->head_sizes[h]);
                if (sk_action_check(space, mask, row) < 0) break;
            }
        }
        sk_vec_step(vec);
        steps += num_envs;
        if (skpy_env_error_pending()) break;
        if (elapsed >= next_check) { /* Ctrl-C ends a long bench */
            next_check = elapsed + 0.1;
            Py_BLOCK_THREADS
            interrupted = PyErr_CheckSignals() < 0;
            Py_UNBLOCK_THREADS
            if (interrupted) break;
        }
    }
    Py_END_ALLOW_THREADS
    int workers = sk_vec_num_workers(vec);
    sk_vec_destroy(vec);
    sk_free(drawn);
    if (skpy_env_error_take() < 0 || interrupted) return NULL;
    return Py_BuildValue("{s:s,s:i,s:i,s:L,s:d,s:d,s:i,s:d}", "env", env->id, "num_envs",
                         num_envs, "threads", workers, "steps", (long long)steps, "seconds",
                         elapsed, "steps_per_second", (double)steps / elapsed, "num_agents",
                         agents, "agent_steps_per_second", (double)steps * agents / elapsed);
}
