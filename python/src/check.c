/* skinner.check_env's C half: sk_check_env on a registered env, with the
 * report as the JSON text `skinner check --json` prints (the Python half
 * parses it and raises on a failure). */
#include "module.h"

#include <stdlib.h>

/* check_env(env_id, config_pairs, num_envs, steps, seed, threads) -> str */
PyObject *skpy_check_env(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *kwlist[] = {"env_id", "config", "num_envs", "steps", "seed", "threads", NULL};
    const char *name;
    PyObject *pairs = Py_None;
    int num_envs = 0, steps = 0, threads = 0;
    unsigned long long seed = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|OiiKi", kwlist, &name, &pairs, &num_envs,
                                     &steps, &seed, &threads))
        return NULL;
    if (num_envs < 0 || num_envs > (1 << 16) || steps < 0 || steps > (1 << 24) || threads < 0 ||
        threads > 1024) {
        PyErr_Format(PyExc_ValueError, "num_envs = %d, steps = %d, threads = %d (expected "
                     "0..65536, 0..16777216 and 0..1024; 0: the default)",
                     num_envs, steps, threads);
        return NULL;
    }
    const sk_env_def *env = skpy_find_env(name);
    if (!env) return NULL;
    sk_config *cfg = skpy_config_from_pairs(pairs);
    if (!cfg) return NULL;
    /* a Python-defined env steps its whole batch on the calling thread, and
     * its own objects are not part of the saved state */
    bool python = skpy_env_is_python(env) != 0;
    sk_check_options options = {.num_envs = num_envs, .steps = steps, .seed = seed,
                                .threads = threads, .whole_batch = python, .partial_state = python};
    sk_check_report *report = malloc(sizeof *report);
    if (!report) {
        sk_config_free(cfg);
        return PyErr_NoMemory();
    }
    sk_status status;
    Py_BEGIN_ALLOW_THREADS
    status = sk_check_env(env, cfg, &options, report);
    Py_END_ALLOW_THREADS
    if (status == SK_OK) status = sk_config_check_unused(cfg, "env");
    sk_config_free(cfg);
    PyObject *result = NULL;
    if (skpy_env_error_take() < 0) {
        /* the env raised: that exception, not a report */
    } else if (status != SK_OK) {
        skpy_raise(status, NULL);
    } else {
        char *text = sk_check_json(report);
        result = text ? PyUnicode_FromString(text) : PyErr_NoMemory();
        free(text);
    }
    free(report);
    return result;
}
