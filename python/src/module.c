/* skinner._core: module set-up, errors, configs and env descriptions. The
 * Python half (python/skinner/__init__.py) builds the public API on it. */
#define SKPY_MAIN
#include "module.h"

#include <dlfcn.h>
#include <math.h>

PyObject *skpy_raise(sk_status status, const char *msg) {
    if (!msg) msg = sk_last_error();
    PyObject *type = PyExc_RuntimeError;
    switch (status) {
    case SK_ERR_INVALID:
    case SK_ERR_CONFIG:
    case SK_ERR_UNKNOWN_ENV:
    case SK_ERR_CORRUPT: type = PyExc_ValueError; break;
    case SK_ERR_IO: type = PyExc_OSError; break;
    case SK_ERR_NOMEM: type = PyExc_MemoryError; break;
    case SK_ERR_NUMERIC: type = PyExc_FloatingPointError; break;
    case SK_ERR_ENV: type = PyExc_RuntimeError; break; /* the env's fault, not the numerics' */
    case SK_ERR_INTERRUPTED: type = PyExc_KeyboardInterrupt; break;
    default: break;
    }
    PyErr_SetString(type, msg);
    return NULL;
}

sk_config *skpy_config_from_pairs(PyObject *pairs) {
    sk_config *cfg = sk_config_new();
    if (!cfg) return (sk_config *)PyErr_NoMemory();
    if (pairs == NULL || pairs == Py_None) return cfg;
    PyObject *seq = PySequence_Fast(pairs, "config must be a sequence of (key, value) pairs");
    if (!seq) goto fail;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(seq, i);
        const char *key, *value;
        if (!PyArg_ParseTuple(pair, "ss;config entries are (key, value) strings", &key, &value)) {
            Py_DECREF(seq);
            goto fail;
        }
        if (sk_config_set(cfg, key, value) != SK_OK) {
            Py_DECREF(seq);
            skpy_raise(SK_ERR_CONFIG, NULL);
            goto fail;
        }
    }
    Py_DECREF(seq);
    return cfg;
fail:
    sk_config_free(cfg);
    return NULL;
}

const sk_env_def *skpy_find_env(const char *name) {
    const sk_env_def *env = sk_env_find(name);
    if (!env) skpy_raise(SK_ERR_UNKNOWN_ENV, NULL);
    return env;
}

/* ------------------------------------------------------ env exceptions */

PyObject *skpy_error_fetch(void) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (!type) return NULL;
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb) PyException_SetTraceback(value, tb);
    Py_DECREF(type);
    Py_XDECREF(tb);
    return value;
}

void skpy_error_restore(PyObject *exc) {
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
}

/* The exception, or NULL. Per thread: a Python-defined env always steps on
 * the thread that called into skinner (one worker), so its error belongs to
 * that call and no other thread's loop sees it. */
static _Thread_local PyObject *g_env_error;
static _Thread_local sk_trainer *g_trainer;

void skpy_set_trainer(sk_trainer *trainer) { g_trainer = trainer; }

void skpy_env_error_set(void) {
    if (!PyErr_Occurred()) PyErr_NoMemory(); /* a failure with no exception: out of memory */
    PyObject *exc = skpy_error_fetch();
    if (g_trainer) sk_trainer_abort(g_trainer); /* learn nothing from the failed rollout */
    if (g_env_error) Py_DECREF(exc); /* the first one wins; later ones are consequences */
    else g_env_error = exc;
}

int skpy_env_error_pending(void) { return g_env_error != NULL; }

int skpy_env_error_take(void) {
    if (!g_env_error) return 0;
    PyObject *exc = g_env_error;
    g_env_error = NULL;
    skpy_error_restore(exc);
    return -1;
}

const char *skpy_num(char *buf, size_t size, double value) {
    snprintf(buf, size, "%g", value);
    return buf;
}

/* ------------------------------------------------------ integer arguments */

/* obj as an int object (ints and NumPy integers), or NULL with a TypeError
 * naming what: PyNumber_Index's own message does not say which argument. */
static PyObject *integer_arg(PyObject *obj, const char *what, const char *expected) {
    PyObject *index = PyNumber_Index(obj);
    if (!index && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be %s (got %s)", what, expected,
                     Py_TYPE(obj)->tp_name);
    }
    return index;
}

int skpy_seed(PyObject *obj, unsigned long long *seed) {
    static const char expected[] = "an int in [0, 2**64) or None";
    PyObject *index = integer_arg(obj, "seed", expected);
    if (!index) return -1;
    *seed = PyLong_AsUnsignedLongLong(index); /* refuses negatives and 2**64 up */
    if (PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "seed = %S is out of range (expected %s)", index, expected);
        Py_DECREF(index);
        return -1;
    }
    Py_DECREF(index);
    return 0;
}

int skpy_num_envs(PyObject *obj, int *num_envs) {
    PyObject *index = integer_arg(obj, "num_envs", "an int");
    if (!index) return -1;
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (overflow || value < 1 || value > SKPY_MAX_NUM_ENVS) {
        PyErr_Format(PyExc_ValueError, "num_envs = %S is out of range (expected 1..%d)", index,
                     SKPY_MAX_NUM_ENVS);
        Py_DECREF(index);
        return -1;
    }
    Py_DECREF(index);
    *num_envs = (int)value;
    return 0;
}

/* --------------------------------------------------------- descriptions */

PyObject *skpy_describe_env(const sk_env_def *env) {
    const sk_action_space *space = &env->action_space;
    PyObject *heads = PyList_New(0), *low = PyList_New(0), *high = PyList_New(0),
             *logs = PyList_New(0), *obs_low = NULL, *obs_high = NULL;
    if (!heads || !low || !high || !logs) goto fail;
    if (space->kind == SK_SPACE_DISCRETE) {
        for (int h = 0; h < space->num_heads; h++) {
            PyObject *n = PyLong_FromLong(space->head_sizes[h]);
            if (!n || PyList_Append(heads, n) < 0) { Py_XDECREF(n); goto fail; }
            Py_DECREF(n);
        }
    } else {
        for (int d = 0; d < space->dim; d++) {
            PyObject *l = PyFloat_FromDouble(space->low[d]), *u = PyFloat_FromDouble(space->high[d]);
            int bad = !l || !u || PyList_Append(low, l) < 0 || PyList_Append(high, u) < 0;
            Py_XDECREF(l);
            Py_XDECREF(u);
            if (bad) goto fail;
        }
    }
    for (int k = 0; k < env->num_log_fields; k++) {
        const char *name = k == 0 ? "r" : k == 1 ? "l" : env->log_names[k];
        PyObject *s = PyUnicode_FromString(name ? name : "?");
        if (!s || PyList_Append(logs, s) < 0) { Py_XDECREF(s); goto fail; }
        Py_DECREF(s);
    }
    if (env->obs_low) {
        obs_low = PyList_New(env->obs_size);
        obs_high = PyList_New(env->obs_size);
        if (!obs_low || !obs_high) goto fail;
        for (int k = 0; k < env->obs_size; k++) {
            PyList_SET_ITEM(obs_low, k, PyFloat_FromDouble(env->obs_low[k]));
            PyList_SET_ITEM(obs_high, k, PyFloat_FromDouble(env->obs_high[k]));
        }
    } else {
        obs_low = Py_NewRef(Py_None);
        obs_high = Py_NewRef(Py_None);
    }
    int dims[SK_MAX_OBS_DIMS], num_dims = sk_obs_dims(env, dims);
    PyObject *obs_shape = PyTuple_New(num_dims);
    if (!obs_shape) goto fail;
    for (int d = 0; d < num_dims; d++) PyTuple_SET_ITEM(obs_shape, d, PyLong_FromLong(dims[d]));
    const sk_env_extras *extras = sk_env_extras_of(env);
    const char *plugin = sk_env_plugin_path(env);
    /* the agents' names (a multi-agent env's roles; "agent_0", ... when it names none) */
    int num_agents = sk_env_agents(env);
    PyObject *agent_names = PyList_New(num_agents);
    if (!agent_names) {
        Py_DECREF(obs_shape);
        goto fail;
    }
    for (int a = 0; a < num_agents; a++) {
        PyObject *name = env->agent_names && env->agent_names[a]
                             ? PyUnicode_FromString(env->agent_names[a])
                             : PyUnicode_FromFormat("agent_%d", a);
        if (!name) {
            Py_DECREF(agent_names);
            Py_DECREF(obs_shape);
            goto fail;
        }
        PyList_SET_ITEM(agent_names, a, name);
    }
    return Py_BuildValue(
        "{s:s,s:N,s:s,s:z,s:z,s:i,s:N,s:N,s:s,s:N,s:N,s:N,s:i,s:N,s:N,s:N,s:z,s:z,s:O,s:i,s:N}",
        "obs_dtype", sk_obs_dtype_name(env->obs_dtype), "obs_shape", obs_shape, "id", env->id,
        "alias", env->alias, "summary", env->summary, "obs_size", env->obs_size, "obs_low",
        obs_low, "obs_high", obs_high, "kind",
        space->kind == SK_SPACE_DISCRETE ? "discrete" : "continuous", "heads", heads, "low", low,
        "high", high, "mask_size", env->mask_size, "max_episode_steps",
        env->max_episode_steps == INT32_MAX ? Py_NewRef(Py_None)
                                            : PyLong_FromLong(env->max_episode_steps),
        "reward_threshold",
        isnan(env->solved_threshold) ? Py_NewRef(Py_None) : PyFloat_FromDouble(env->solved_threshold),
        "log_names", logs, "preset", extras->preset, "plugin", plugin, "python",
        skpy_env_is_python(env) ? Py_True : Py_False, "num_agents", num_agents, "agent_names",
        agent_names);
fail:
    Py_XDECREF(obs_low);
    Py_XDECREF(obs_high);
    Py_XDECREF(heads);
    Py_XDECREF(low);
    Py_XDECREF(high);
    Py_XDECREF(logs);
    return NULL;
}

static PyObject *py_describe(PyObject *self, PyObject *arg) {
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    const sk_env_def *env = skpy_find_env(name);
    return env ? skpy_describe_env(env) : NULL;
}

static PyObject *py_env_ids(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    for (const sk_env_def *const *e = sk_env_list(); *e; e++) {
        PyObject *s = PyUnicode_FromString((*e)->id);
        if (!s || PyList_Append(list, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(s);
    }
    return list;
}

static PyObject *py_load_plugin(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
    sk_status status = sk_env_load_plugin(PyBytes_AS_STRING(bytes));
    Py_DECREF(bytes);
    if (status != SK_OK) return skpy_raise(status, NULL);
    Py_RETURN_NONE;
}

PyObject *skpy_kge_train(PyObject *self, PyObject *args, PyObject *kwargs); /* kge.c */

static PyMethodDef methods[] = {
    {"describe", py_describe, METH_O, "describe(env_id) -> dict: the env's spaces and limits"},
    {"env_ids", py_env_ids, METH_NOARGS, "env_ids() -> list of the registered env ids"},
    {"load_plugin", py_load_plugin, METH_O, "load_plugin(path): registers a plugin's envs"},
    {"register", (PyCFunction)(void (*)(void))skpy_register, METH_VARARGS | METH_KEYWORDS,
     "register a Python-defined batched env (see skinner.register)"},
    {"train", (PyCFunction)(void (*)(void))skpy_train, METH_VARARGS | METH_KEYWORDS,
     "runs the C trainer (see skinner.train)"},
    {"evaluate", (PyCFunction)(void (*)(void))skpy_evaluate, METH_VARARGS | METH_KEYWORDS,
     "evaluates a checkpoint (see skinner.evaluate)"},
    {"check_env", (PyCFunction)(void (*)(void))skpy_check_env, METH_VARARGS | METH_KEYWORDS,
     "check_env(env_id, config, num_envs, steps, seed, threads) -> the report as JSON"},
    {"kge_train", (PyCFunction)(void (*)(void))skpy_kge_train, METH_VARARGS | METH_KEYWORDS,
     "trains a knowledge-graph embedding (see skinner.kge_train)"},
    {"bench", (PyCFunction)(void (*)(void))skpy_bench, METH_VARARGS | METH_KEYWORDS,
     "raw env stepping with random actions, in C (see skinner.bench)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "skinner._core",
    "skinner's C core: vector envs, Python-defined envs, the trainer and agents.", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* Env plugins are built without -lskinner: they find the sk_* functions in
 * the process's global scope. Python loads extension modules (and so the
 * libskinner.so they link) with RTLD_LOCAL; promote the library to global. */
static void promote_library(void) {
    Dl_info info;
    if (dladdr((void *)sk_env_find, &info) && info.dli_fname) {
        void *handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
        if (handle) dlclose(handle); /* the library stays loaded: the module holds it */
    }
}

PyMODINIT_FUNC PyInit__core(void) {
    import_array();
    /* what `skinner` refuses at start (SKINNER_ISA, OPENBLAS_CORETYPE), import refuses too */
    if (sk_isa_check() != SK_OK) {
        PyErr_SetString(PyExc_ImportError, sk_last_error());
        return NULL;
    }
    promote_library();
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (skpy_vec_ready(m) < 0 || skpy_agent_ready(m) < 0 ||
        PyModule_AddStringConstant(m, "__version__", SK_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
