/* skinner._core.Vec: an sk_vec seen from Python. Observations, rewards,
 * flags, final observations, masks and episode statistics are NumPy views
 * of the vec's own buffers, made once, one row per env, or per (env, agent)
 * for a multi-agent env (row = env * num_agents + agent, skinner/env.h); a step validates and copies the
 * actions in, steps every env in C with the GIL released, and hands the same
 * views back. The memory belongs to a small owner object that every view
 * references, so a view outliving close() still points at valid memory. */
#include "module.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------- owner */

typedef struct {
    PyObject_HEAD
    sk_vec *vec;
    uint8_t *done;  /* (rows) terminated | truncated of the last step */
    void *staging;  /* env.actions: where Python may write actions for step() */
} Owner;

static void owner_dealloc(Owner *self) {
    sk_vec_destroy(self->vec); /* a Python-defined env takes the GIL itself: we hold it */
    sk_free(self->done);
    sk_free(self->staging);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject OwnerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "skinner._core._Buffers",
    .tp_basicsize = sizeof(Owner),
    .tp_dealloc = (destructor)owner_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "owns a vector env's buffers until its last array view is gone",
};

/* A view of owner's memory at data: typenum, nd dims (strides NULL: C order). */
static PyObject *view(Owner *owner, void *data, int typenum, int nd, npy_intp *dims,
                      npy_intp *strides, int writeable) {
    PyObject *arr = PyArray_New(&PyArray_Type, nd, dims, typenum, strides, data, 0,
                                writeable ? NPY_ARRAY_CARRAY : NPY_ARRAY_CARRAY_RO, NULL);
    if (!arr) return NULL;
    if (strides) PyArray_UpdateFlags((PyArrayObject *)arr, NPY_ARRAY_UPDATE_ALL);
    Py_INCREF(owner);
    if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)owner) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

/* ------------------------------------------------------------------ Vec */

typedef struct {
    PyObject_HEAD
    Owner *owner; /* NULL once closed */
    const sk_env_def *env;
    const sk_vec_buffers *b;
    int num_envs, num_agents, num_rows, obs_size, heads, dim, mask_size, num_log;
    int copy, busy;
    uint64_t seed;
    int64_t resets_since_seed;
    PyObject *obs, *final_obs, *rewards, *terminated, *truncated, *masks, *done, *actions;
    PyObject *active; /* (rows) 1 where the agent acts at the next step (all 1: one agent) */
    PyObject *episode; /* {"r": returns, "l": lengths, env's own fields} */
} Vec;

static void vec_clear(Vec *self) {
    Py_CLEAR(self->obs);
    Py_CLEAR(self->final_obs);
    Py_CLEAR(self->rewards);
    Py_CLEAR(self->terminated);
    Py_CLEAR(self->truncated);
    Py_CLEAR(self->masks);
    Py_CLEAR(self->done);
    Py_CLEAR(self->actions);
    Py_CLEAR(self->active);
    Py_CLEAR(self->episode);
    Py_CLEAR(self->owner);
    self->b = NULL;
}

static void vec_dealloc(Vec *self) {
    vec_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int make_views(Vec *self) {
    Owner *o = self->owner;
    const sk_vec_buffers *b = self->b;
    npy_intp N = self->num_rows;
    /* a uint8 env's observations: uint8 views of its declared shape, (N, 10, 10, C) */
    const sk_env_def *env = sk_vec_env(o->vec);
    npy_intp obs_dims[1 + SK_MAX_OBS_DIMS] = {N, self->obs_size};
    int obs_ndim = 2;
    if (b->obs_u8) {
        int dims[SK_MAX_OBS_DIMS];
        obs_ndim = 1 + sk_obs_dims(env, dims);
        for (int d = 1; d < obs_ndim; d++) obs_dims[d] = dims[d - 1];
    }
    int obs_type = b->obs_u8 ? NPY_UINT8 : NPY_FLOAT32;
    void *obs = b->obs_u8 ? (void *)b->obs_u8 : (void *)b->obs;
    void *final_obs = b->obs_u8 ? (void *)b->final_obs_u8 : (void *)b->final_obs;
    if (!(self->obs = view(o, obs, obs_type, obs_ndim, obs_dims, NULL, 1)) ||
        !(self->final_obs = view(o, final_obs, obs_type, obs_ndim, obs_dims, NULL, 1)) ||
        !(self->rewards = view(o, b->rewards, NPY_FLOAT32, 1, &N, NULL, 1)) ||
        !(self->terminated = view(o, b->terminated, NPY_BOOL, 1, &N, NULL, 1)) ||
        !(self->truncated = view(o, b->truncated, NPY_BOOL, 1, &N, NULL, 1)) ||
        !(self->done = view(o, o->done, NPY_BOOL, 1, &N, NULL, 0)) ||
        !(self->active = view(o, b->active, NPY_BOOL, 1, &N, NULL, 0)))
        return -1;
    if (self->mask_size) {
        npy_intp dims[2] = {N, self->mask_size};
        if (!(self->masks = view(o, b->masks, NPY_BOOL, 2, dims, NULL, 0))) return -1;
    }
    if (b->actions) {
        npy_intp dims[2] = {N, self->heads};
        self->actions = view(o, o->staging, NPY_INT32, self->heads == 1 ? 1 : 2, dims, NULL, 1);
    } else {
        npy_intp dims[2] = {N, self->dim};
        self->actions = view(o, o->staging, NPY_FLOAT32, 2, dims, NULL, 1);
    }
    if (!self->actions) return -1;
    if (!(self->episode = PyDict_New())) return -1;
    npy_intp stride = (npy_intp)self->num_log * (npy_intp)sizeof(float);
    for (int k = 0; k < self->num_log; k++) {
        /* columns of the episode log, float32 like the env writes them (the
         * length too: converting it to integers each step cost a fifth of a
         * 65536-env CartPole step, for cache misses on the log) */
        PyObject *column = view(o, b->episode_log + k, NPY_FLOAT32, 1, &N, &stride, 0);
        const char *name = k == 0 ? "r" : k == 1 ? "l" : self->env->log_names[k];
        int bad = !column || PyDict_SetItemString(self->episode, name ? name : "?", column) < 0;
        Py_XDECREF(column);
        if (bad) return -1;
    }
    return 0;
}

/* Vec(env_id, num_envs, threads, seed, config_pairs, copy) */
static int vec_init(Vec *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"env_id", "num_envs", "threads", "seed", "config", "copy", NULL};
    const char *name;
    int num_envs = 1, threads = 1, copy = 0;
    unsigned long long seed = 0;
    PyObject *num_envs_obj = NULL, *seed_obj = NULL, *pairs = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|OiOOp", kwlist, &name, &num_envs_obj,
                                     &threads, &seed_obj, &pairs, &copy))
        return -1;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "__init__ while the env is being stepped");
        return -1;
    }
    vec_clear(self);
    if (num_envs_obj && skpy_num_envs(num_envs_obj, &num_envs) < 0) return -1;
    if (seed_obj && skpy_seed(seed_obj, &seed) < 0) return -1;
    if (threads < 0) {
        PyErr_Format(PyExc_ValueError, "threads = %d (expected 0 for one per core, or more)",
                     threads);
        return -1;
    }
    const sk_env_def *env = skpy_find_env(name);
    if (!env) return -1;
    if (skpy_env_is_python(env) && threads != 1) {
        PyErr_Format(PyExc_ValueError,
                     "%s is a Python-defined env: it steps its whole batch in one call, on one "
                     "thread (threads = %d; expected 1)",
                     env->id, threads);
        return -1;
    }
    sk_config *cfg = skpy_config_from_pairs(pairs);
    if (!cfg) return -1;
    Owner *owner = PyObject_New(Owner, &OwnerType);
    if (!owner) {
        sk_config_free(cfg);
        return -1;
    }
    owner->vec = NULL;
    owner->done = NULL;
    owner->staging = NULL;
    sk_status status = sk_vec_create(&owner->vec, env, num_envs, threads, cfg);
    if (status == SK_OK) status = sk_config_check_unused(cfg, "env");
    sk_config_free(cfg);
    if (status != SK_OK) {
        Py_DECREF(owner);
        if (skpy_env_error_take() < 0) return -1;
        skpy_raise(status, NULL);
        return -1;
    }
    env = sk_vec_env(owner->vec); /* the sizes its config gave it */
    int num_rows = sk_vec_num_rows(owner->vec);
    owner->done = sk_alloc((size_t)num_rows);
    int width = env->action_space.kind == SK_SPACE_DISCRETE ? env->action_space.num_heads
                                                            : env->action_space.dim;
    owner->staging = sk_alloc((size_t)num_rows * (size_t)width * 4); /* int32 or float32 */
    if (!owner->done || !owner->staging) {
        Py_DECREF(owner);
        PyErr_NoMemory();
        return -1;
    }
    self->owner = owner;
    self->env = env;
    self->b = sk_vec_buffers_of(owner->vec);
    self->num_envs = num_envs;
    self->num_agents = sk_vec_num_agents(owner->vec);
    self->num_rows = num_rows;
    self->obs_size = env->obs_size;
    self->heads = env->action_space.kind == SK_SPACE_DISCRETE ? env->action_space.num_heads : 0;
    self->dim = env->action_space.kind == SK_SPACE_CONTINUOUS ? env->action_space.dim : 0;
    self->mask_size = env->mask_size;
    self->num_log = env->num_log_fields;
    self->copy = copy;
    self->seed = seed;
    self->resets_since_seed = 0;
    if (make_views(self) < 0) {
        vec_clear(self);
        return -1;
    }
    return 0;
}

static int check_open(Vec *self) {
    if (!self->owner) {
        PyErr_SetString(PyExc_ValueError, "the env is closed");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the env is being stepped by another thread (one step at a time)");
        return -1;
    }
    return 0;
}

static const char *shape_text(PyArrayObject *a, char *buf, size_t size) {
    int n = snprintf(buf, size, "(");
    for (int d = 0; d < PyArray_NDIM(a) && n < (int)size; d++)
        n += snprintf(buf + n, size - (size_t)n, d ? ", %ld" : "%ld", (long)PyArray_DIM(a, d));
    if (n < (int)size) snprintf(buf + n, size - (size_t)n, PyArray_NDIM(a) == 1 ? ",)" : ")");
    return buf;
}

/* Does a (of ndim 1 or 2) have the shape (N,) [when width is 1] or (N, width)? */
static int shape_ok(PyArrayObject *a, int N, int width) {
    if (PyArray_NDIM(a) == 1) return width == 1 && PyArray_DIM(a, 0) == N;
    return PyArray_NDIM(a) == 2 && PyArray_DIM(a, 0) == N && PyArray_DIM(a, 1) == width;
}

/* What a row is: an env, or an (env, agent) pair of a multi-agent env. */
static const char *row_word(const Vec *self) { return self->num_agents > 1 ? "row" : "env"; }

static int bad_shape(Vec *self, PyArrayObject *a, int width, const char *what) {
    char got[96];
    const char *rows = self->num_agents > 1 ? "num_envs x num_agents" : "num_envs";
    if (width == 1)
        PyErr_Format(PyExc_ValueError,
                     "actions must have shape (%d,) (one %s per %s) or (%d, 1); got shape %s",
                     self->num_rows, what, row_word(self), self->num_rows,
                     shape_text(a, got, sizeof got));
    else
        PyErr_Format(PyExc_ValueError, "actions must have shape (%d, %d) (%s, %s); got %s",
                     self->num_rows, width, rows, what, shape_text(a, got, sizeof got));
    return -1;
}

/* Discrete actions: integers, in range per head and allowed by the masks.
 * They are copied into the vec's buffer first and validated there: that
 * buffer is never exposed to Python, so no other thread can change an
 * action between its check and the step (env.actions is a staging copy).
 * Invalid actions leave the buffer unused: the step does not happen. */
static int load_discrete(Vec *self, PyArrayObject *a) {
    const sk_action_space *space = &self->env->action_space;
    int N = self->num_rows, H = self->heads;
    if (!PyArray_ISINTEGER(a) || PyArray_ISBOOL(a)) {
        PyErr_Format(PyExc_ValueError, "actions must be integers (got dtype %s)",
                     PyArray_DESCR(a)->typeobj->tp_name);
        return -1;
    }
    if (!shape_ok(a, N, H)) return bad_shape(self, a, H, H == 1 ? "action" : "heads");
    int32_t *restrict dst = self->b->actions;
    size_t count = (size_t)N * (size_t)H;
    int type = PyArray_TYPE(a);
    /* int32 and int64 in native order, aligned and contiguous are read as
     * they are; anything else is converted to int64 first */
    PyArrayObject *c = a;
    if (!((type == NPY_INT32 || type == NPY_INT64) && PyArray_ISCARRAY_RO(a))) {
        c = (PyArrayObject *)PyArray_FromAny((PyObject *)a, PyArray_DescrFromType(NPY_INT64), 0, 0,
                                             NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
        if (!c) return -1;
        type = NPY_INT64;
    } else {
        Py_INCREF(c);
    }
    int status = 0;
    if (H == 1 && !self->mask_size) {
        /* the fast path: copy and check in one vectorised pass; what is checked
         * is what was written, so the source changing meanwhile is harmless */
        uint32_t n = (uint32_t)space->head_sizes[0];
        int ok = 1;
        if (type == NPY_INT32) {
            const int32_t *restrict src = PyArray_DATA(c);
            for (size_t k = 0; k < count; k++) {
                int32_t v = src[k];
                dst[k] = v;
                ok &= (uint32_t)v < n;
            }
        } else {
            const int64_t *restrict src = PyArray_DATA(c);
            for (size_t k = 0; k < count; k++) {
                int64_t v = src[k];
                dst[k] = (int32_t)v;
                ok &= (uint64_t)v < n;
            }
        }
        if (!ok) {
            const char *data = PyArray_DATA(c);
            for (size_t k = 0; k < count; k++) {
                int64_t v = type == NPY_INT32 ? ((const int32_t *)data)[k]
                                              : ((const int64_t *)data)[k];
                if (v < 0 || v >= (int64_t)n) {
                    PyErr_Format(PyExc_ValueError,
                                 "action %lld of %s %zu is out of range (expected 0 <= action "
                                 "< %u)",
                                 (long long)v, row_word(self), k, n);
                    break;
                }
            }
            if (!PyErr_Occurred()) /* it changed under us: say so rather than step */
                PyErr_SetString(PyExc_RuntimeError, "the actions changed while being read");
            status = -1;
        }
        Py_DECREF(c);
        return status;
    }
    if (type == NPY_INT32) {
        memcpy(dst, PyArray_DATA(c), count * sizeof(int32_t));
    } else {
        const int64_t *restrict src = PyArray_DATA(c);
        int wide = 0;
        for (size_t k = 0; k < count; k++) {
            dst[k] = (int32_t)src[k];
            wide |= src[k] != (int64_t)dst[k];
        }
        for (size_t k = 0; wide && k < count; k++)
            if (src[k] != (int64_t)dst[k]) { /* beyond int32: out of every head's range */
                PyErr_Format(PyExc_ValueError,
                             "action %lld of %s %zu, head %zu is out of range (expected 0 <= "
                             "action < %d)",
                             (long long)src[k], row_word(self), k / (size_t)H, k % (size_t)H,
                             space->head_sizes[k % (size_t)H]);
                Py_DECREF(c);
                return -1;
            }
    }
    Py_DECREF(c);
    for (int i = 0; i < N && status == 0; i++) {
        const int32_t *row = dst + (size_t)i * (size_t)H;
        for (int h = 0; h < H; h++)
            if (row[h] < 0 || row[h] >= space->head_sizes[h]) {
                PyErr_Format(PyExc_ValueError,
                             "action %d of %s %d, head %d is out of range (expected 0 <= "
                             "action < %d)",
                             row[h], row_word(self), i, h, space->head_sizes[h]);
                status = -1;
                break;
            }
        if (status == 0 && self->mask_size) {
            int h = sk_action_check(space, self->b->masks + (size_t)i * self->mask_size, row);
            if (h >= 0) {
                PyErr_Format(PyExc_ValueError,
                             "action %d of %s %d, head %d is not allowed by its mask "
                             "(infos[\"action_mask\"])",
                             row[h], row_word(self), i, h);
                status = -1;
            }
        }
    }
    return status;
}

/* Continuous actions: finite reals of shape (N, dim), copied then checked
 * (as above); the env clips them to its bounds as Gymnasium's do. */
static int load_continuous(Vec *self, PyArrayObject *a) {
    int N = self->num_rows, D = self->dim;
    if (!(PyArray_ISFLOAT(a) || PyArray_ISINTEGER(a)) || PyArray_ISBOOL(a)) {
        PyErr_Format(PyExc_ValueError, "actions must be real numbers (got dtype %s)",
                     PyArray_DESCR(a)->typeobj->tp_name);
        return -1;
    }
    if (!shape_ok(a, N, D)) return bad_shape(self, a, D, "action dims");
    PyArrayObject *c = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)a, PyArray_DescrFromType(NPY_FLOAT32), 0, 0,
        NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
    if (!c) return -1;
    float *dst = self->b->actions_continuous;
    size_t count = (size_t)N * (size_t)D;
    memcpy(dst, PyArray_DATA(c), count * sizeof(float));
    Py_DECREF(c);
    for (size_t k = 0; k < count; k++) {
        if (!isfinite(dst[k])) {
            char value[32], low[32], high[32];
            const sk_action_space *space = &self->env->action_space;
            PyErr_Format(PyExc_ValueError,
                         "action %s of %s %zu, dim %zu is not finite (expected a real number; "
                         "the env clips it to [%s, %s])",
                         skpy_num(value, sizeof value, dst[k]), row_word(self), k / (size_t)D, k % (size_t)D,
                         skpy_num(low, sizeof low, space->low[k % (size_t)D]),
                         skpy_num(high, sizeof high, space->high[k % (size_t)D]));
            return -1;
        }
    }
    return 0;
}

static PyObject *out(Vec *self, PyObject *arr) {
    if (self->copy) return PyArray_NewCopy((PyArrayObject *)arr, NPY_CORDER);
    Py_INCREF(arr);
    return arr;
}

/* infos[key] = out(view), for the arrays a reset's infos carry. */
static int set_out(Vec *self, PyObject *infos, const char *key, PyObject *view) {
    PyObject *value = out(self, view);
    int status = value ? PyDict_SetItemString(infos, key, value) : -1;
    Py_XDECREF(value);
    return status;
}

static PyObject *infos_after_reset(Vec *self) {
    PyObject *infos = PyDict_New();
    if (!infos) return NULL;
    if ((self->masks && set_out(self, infos, "action_mask", self->masks) < 0) ||
        (self->num_agents > 1 && set_out(self, infos, "active", self->active) < 0))
        Py_CLEAR(infos);
    return infos;
}

/* A reset of an env this thread holds (busy), as step_held: the seed's
 * __index__ may run Python code too. */
static PyObject *reset_held(Vec *self, PyObject *seed_obj) {
    if (seed_obj != Py_None) {
        unsigned long long s;
        if (skpy_seed(seed_obj, &s) < 0) return NULL;
        self->seed = s;
        self->resets_since_seed = 0;
    }
    uint64_t seed = self->seed + (uint64_t)self->resets_since_seed++;
    Owner *owner = self->owner; /* kept alive across the GIL-free call */
    Py_INCREF(owner);
    Py_BEGIN_ALLOW_THREADS
    sk_vec_reset(owner->vec, seed);
    Py_END_ALLOW_THREADS
    Py_DECREF(owner);
    if (skpy_env_error_take() < 0) return NULL;
    size_t rows = (size_t)self->num_rows;
    memset(self->owner->done, 0, rows);
    memset(self->b->rewards, 0, rows * sizeof(float));
    memset(self->b->terminated, 0, rows);
    memset(self->b->truncated, 0, rows);
    PyObject *obs = out(self, self->obs), *infos = infos_after_reset(self);
    if (!obs || !infos) {
        Py_XDECREF(obs);
        Py_XDECREF(infos);
        return NULL;
    }
    return Py_BuildValue("(NN)", obs, infos);
}

static PyObject *vec_reset(Vec *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"seed", "options", NULL};
    PyObject *seed_obj = Py_None, *options = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OO", kwlist, &seed_obj, &options))
        return NULL;
    if (check_open(self) < 0) return NULL;
    if (options != Py_None && !(PyDict_Check(options) && PyDict_Size(options) == 0)) {
        PyErr_SetString(PyExc_ValueError, "reset options are not supported (expected None)");
        return NULL;
    }
    self->busy = 1;
    PyObject *result = reset_held(self, seed_obj);
    self->busy = 0;
    return result;
}

/* done = terminated | truncated, in one vectorised pass; returns how many. */
static int mark_done(Vec *self) {
    const uint8_t *restrict te = self->b->terminated, *restrict tr = self->b->truncated;
    uint8_t *restrict done = self->owner->done;
    int N = self->num_rows, ended = 0;
    for (int i = 0; i < N; i++) {
        done[i] = te[i] | tr[i];
        ended += done[i];
    }
    return ended;
}

/* infos[key] = a fresh shallow copy of d (its arrays are the same views), so
 * that what a caller does to one step's dict does not carry over. */
static int set_copy(PyObject *infos, const char *key, PyObject *d) {
    PyObject *copy = PyDict_Copy(d);
    int status = copy ? PyDict_SetItemString(infos, key, copy) : -1;
    Py_XDECREF(copy);
    return status;
}

/* A step of an env this thread holds (busy): converting the actions may run
 * Python code (an __array__) that releases the GIL, so the env is held from
 * before the conversion until the outputs are built, and another thread's
 * step meanwhile is refused instead of running on half-written actions. */
static PyObject *step_held(Vec *self, PyObject *actions) {
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_O(actions);
    if (!a) return NULL;
    int status = self->heads ? load_discrete(self, a) : load_continuous(self, a);
    Py_DECREF(a);
    if (status < 0) return NULL;

    Owner *owner = self->owner; /* kept alive across the GIL-free call */
    Py_INCREF(owner);
    Py_BEGIN_ALLOW_THREADS
    sk_vec_step(owner->vec);
    Py_END_ALLOW_THREADS
    Py_DECREF(owner);
    if (skpy_env_error_take() < 0) return NULL;

    int ended = mark_done(self);
    PyObject *infos = PyDict_New();
    if (!infos) return NULL;
    int bad = self->masks && PyDict_SetItemString(infos, "action_mask", self->masks) < 0;
    if (!bad && self->num_agents > 1)
        bad = PyDict_SetItemString(infos, "active", self->active) < 0;
    if (ended && !bad) {
        bad = PyDict_SetItemString(infos, "final_obs", self->final_obs) < 0 ||
              PyDict_SetItemString(infos, "_final_obs", self->done) < 0 ||
              set_copy(infos, "episode", self->episode) < 0 ||
              PyDict_SetItemString(infos, "_episode", self->done) < 0;
    }
    if (!bad && self->copy) { /* fresh arrays everywhere, nested dict included */
        PyObject *key, *value, *fresh = PyDict_New();
        Py_ssize_t pos = 0;
        bad = !fresh;
        while (!bad && PyDict_Next(infos, &pos, &key, &value)) {
            PyObject *v = PyDict_Check(value) ? PyDict_New() : out(self, value);
            bad = !v;
            if (!bad && PyDict_Check(value)) {
                PyObject *k2, *v2;
                Py_ssize_t p2 = 0;
                while (!bad && PyDict_Next(value, &p2, &k2, &v2)) {
                    PyObject *c = out(self, v2);
                    bad = !c || PyDict_SetItem(v, k2, c) < 0;
                    Py_XDECREF(c);
                }
            }
            bad = bad || PyDict_SetItem(fresh, key, v) < 0;
            Py_XDECREF(v);
        }
        Py_DECREF(infos);
        infos = fresh;
    }
    if (bad) {
        Py_XDECREF(infos);
        return NULL;
    }
    PyObject *o = out(self, self->obs), *r = out(self, self->rewards),
             *t = out(self, self->terminated), *u = out(self, self->truncated);
    if (!o || !r || !t || !u) {
        Py_XDECREF(o);
        Py_XDECREF(r);
        Py_XDECREF(t);
        Py_XDECREF(u);
        Py_DECREF(infos);
        return NULL;
    }
    return Py_BuildValue("(NNNNN)", o, r, t, u, infos);
}

static PyObject *vec_step(Vec *self, PyObject *actions) {
    if (check_open(self) < 0) return NULL;
    self->busy = 1;
    PyObject *result = step_held(self, actions);
    self->busy = 0;
    return result;
}

static PyObject *vec_close(Vec *self, PyObject *unused) {
    (void)unused;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "close() while another thread steps the env");
        return NULL;
    }
    vec_clear(self);
    Py_RETURN_NONE;
}

/* The addresses of the buffers skinner writes, for tests of zero copy. */
static PyObject *vec_buffer_addresses(Vec *self, PyObject *unused) {
    (void)unused;
    if (check_open(self) < 0) return NULL;
    const sk_vec_buffers *b = self->b;
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "obs", (unsigned long long)(uintptr_t)b->obs,
                         "final_obs", (unsigned long long)(uintptr_t)b->final_obs, "rewards",
                         (unsigned long long)(uintptr_t)b->rewards, "terminated",
                         (unsigned long long)(uintptr_t)b->terminated, "truncated",
                         (unsigned long long)(uintptr_t)b->truncated, "masks",
                         (unsigned long long)(uintptr_t)b->masks, "actions",
                         (unsigned long long)(uintptr_t)(b->actions ? (void *)b->actions
                                                                    : (void *)b->actions_continuous),
                         "episode_log", (unsigned long long)(uintptr_t)b->episode_log);
}

static PyObject *get_actions(Vec *self, void *closure) {
    (void)closure;
    if (check_open(self) < 0) return NULL;
    Py_INCREF(self->actions);
    return self->actions;
}

static PyObject *get_num_envs(Vec *self, void *closure) {
    (void)closure;
    return PyLong_FromLong(self->num_envs);
}

static PyObject *get_num_agents(Vec *self, void *closure) {
    (void)closure;
    return PyLong_FromLong(self->num_agents);
}

static PyObject *get_num_rows(Vec *self, void *closure) {
    (void)closure;
    return PyLong_FromLong(self->num_rows);
}

static PyObject *get_active(Vec *self, void *closure) {
    (void)closure;
    if (check_open(self) < 0) return NULL;
    return out(self, self->active);
}

static PyObject *get_closed(Vec *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->owner == NULL);
}

static PyObject *get_env_id(Vec *self, void *closure) {
    (void)closure;
    return self->env ? PyUnicode_FromString(self->env->id) : Py_NewRef(Py_None);
}

static PyObject *get_workers(Vec *self, void *closure) {
    (void)closure;
    if (check_open(self) < 0) return NULL;
    return PyLong_FromLong(sk_vec_num_workers(self->owner->vec));
}

static PyObject *vec_describe(PyObject *obj, PyObject *unused) {
    (void)unused;
    Vec *self = (Vec *)obj;
    return skpy_describe_env(self->env);
}

/* _render(index): env index's picture from its render (sk_env_extras.render), a new
 * (height, width, 3) uint8 array; what VecEnv.render() returns for render_mode="rgb_array". */
static PyObject *vec_render(PyObject *obj, PyObject *arg) {
    Vec *self = (Vec *)obj;
    if (check_open(self) < 0) return NULL;
    long index = PyLong_AsLong(arg);
    if (index == -1 && PyErr_Occurred()) return NULL;
    if (index < 0 || index >= self->num_envs)
        return PyErr_Format(PyExc_IndexError, "env %ld of %d", index, self->num_envs);
    const sk_env_extras *extras = sk_env_extras_of(sk_vec_env(self->owner->vec));
    if (!extras->render)
        return PyErr_Format(PyExc_NotImplementedError,
                            "%s cannot be drawn: its env has no render (sk_env_extras.render)",
                            self->env->id);
    npy_intp dims[3] = {extras->render_height, extras->render_width, 3};
    PyObject *frame = PyArray_SimpleNew(3, dims, NPY_UINT8);
    if (!frame) return NULL;
    extras->render(sk_vec_state(self->owner->vec), (int)index,
                   PyArray_DATA((PyArrayObject *)frame));
    return frame;
}

/* state() -> {name: array}: a copy of each of the env state's arrays (sk_vec_state_arrays, the
 * arrays a checkpoint holds), (num_envs, count) in its element type; {} for an env that lists
 * none. A copy: the state moves on at the next step, and writing it back is not offered. */
static PyObject *vec_state(PyObject *obj, PyObject *unused) {
    (void)unused;
    Vec *self = (Vec *)obj;
    if (check_open(self) < 0) return NULL;
    static const int typenums[] = {[SK_ARRAY_F32] = NPY_FLOAT32, [SK_ARRAY_F64] = NPY_FLOAT64,
                                   [SK_ARRAY_I32] = NPY_INT32,   [SK_ARRAY_I64] = NPY_INT64,
                                   [SK_ARRAY_U8] = NPY_UINT8,    [SK_ARRAY_U64] = NPY_UINT64};
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    int count = sk_vec_state_arrays(self->owner->vec, arrays);
    if (count < 0) return skpy_raise(SK_ERR_ENV, NULL);
    PyObject *state = PyDict_New();
    for (int a = 0; state && a < count; a++) {
        npy_intp dims[2] = {self->num_envs, arrays[a].count};
        PyObject *copy = PyArray_SimpleNew(2, dims, typenums[arrays[a].type]);
        if (copy) {
            memcpy(PyArray_DATA((PyArrayObject *)copy), arrays[a].data,
                   (size_t)PyArray_NBYTES((PyArrayObject *)copy));
        }
        if (!copy || PyDict_SetItemString(state, arrays[a].name, copy) < 0) Py_CLEAR(state);
        Py_XDECREF(copy);
    }
    return state;
}

static PyObject *vec_get_state(PyObject *obj, PyObject *args) {
    Vec *self = (Vec *)obj;
    return check_open(self) < 0 ? NULL : skpy_physics_get(self->owner->vec, args);
}

static PyObject *vec_set_state(PyObject *obj, PyObject *args) {
    Vec *self = (Vec *)obj;
    return check_open(self) < 0 ? NULL : skpy_physics_set(self->owner->vec, args);
}

static PyMethodDef vec_methods[] = {
    {"get_state", vec_get_state, METH_VARARGS,
     "get_state(index) -> (qpos, qvel): a physics env's positions and velocities (copies)"},
    {"set_state", vec_set_state, METH_VARARGS,
     "set_state(index, qpos, qvel) -> obs: sets them, as Gymnasium's set_state does; the obs "
     "buffer's row too"},
    {"state", (PyCFunction)vec_state, METH_NOARGS,
     "state() -> {name: (num_envs, count) array}: a copy of the env state's arrays"},
    {"_render", (PyCFunction)vec_render, METH_O,
     "_render(index) -> (height, width, 3) uint8: env index's picture"},
    {"reset", (PyCFunction)(void (*)(void))vec_reset, METH_VARARGS | METH_KEYWORDS,
     "reset(*, seed=None, options=None) -> (obs, infos)"},
    {"step", (PyCFunction)vec_step, METH_O,
     "step(actions) -> (obs, rewards, terminations, truncations, infos)"},
    {"close", (PyCFunction)vec_close, METH_NOARGS, "close(): frees the envs (idempotent)"},
    {"_describe", (PyCFunction)vec_describe, METH_NOARGS,
     "_describe() -> dict: the spaces and limits of these envs, as their config sized them"},
    {"_buffer_addresses", (PyCFunction)vec_buffer_addresses, METH_NOARGS,
     "the addresses of skinner's buffers (tests of zero copy)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef vec_getset[] = {
    {"actions", (getter)get_actions, NULL,
     "a preallocated action array: fill it and pass it to step() to allocate nothing", NULL},
    {"num_envs", (getter)get_num_envs, NULL, "number of envs", NULL},
    {"num_agents", (getter)get_num_agents, NULL, "agents per env (1: a single-agent env)", NULL},
    {"num_rows", (getter)get_num_rows, NULL,
     "rows of every array: num_envs x num_agents, row = env * num_agents + agent", NULL},
    {"active", (getter)get_active, NULL,
     "(rows,) bool: whether each row's agent acts at the next step (a view, read-only)", NULL},
    {"closed", (getter)get_closed, NULL, "whether close() was called", NULL},
    {"env_id", (getter)get_env_id, NULL, "the env's id", NULL},
    {"num_workers", (getter)get_workers, NULL, "worker threads stepping the envs", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject skpy_VecType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "skinner._core.Vec",
    .tp_basicsize = sizeof(Vec),
    .tp_dealloc = (destructor)vec_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "N envs of one kind stepped in C (the base of skinner.VecEnv)",
    .tp_methods = vec_methods,
    .tp_getset = vec_getset,
    .tp_init = (initproc)vec_init,
    .tp_new = PyType_GenericNew,
};

int skpy_vec_ready(PyObject *module) {
    return PyType_Ready(&OwnerType) < 0 ? -1 : PyModule_AddType(module, &skpy_VecType);
}
