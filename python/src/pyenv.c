/* Python-defined envs: a batched NumPy env class behind an sk_env_def, so
 * that skinner's vec, trainer, evaluation and bench step it like a built-in.
 * skinner calls the class once per batch step (never once per env), with
 * the GIL taken for the call; the time limit, autoreset, final observations
 * and episode statistics are done here in C.
 *
 * The class's contract (docs/python.md):
 *     cls(num_envs, **kwargs)
 *     reset(seed, mask=None) -> obs (num_envs, obs_size); with a mask (bool,
 *         num_envs) only those rows are reset (and read back); seed is an int,
 *         or None for the env's own stream (autoreset)
 *     step(actions) -> (obs, rewards, terminations, truncations)
 * An exception in the class is kept, the batch is marked terminated so that
 * every loop ends, and the exception is raised where Python called in.
 *
 * A multi-agent class (register(num_agents=A >= 2)) works in rows, row = env * A +
 * agent (skinner/env.h): obs, rewards and flags are (num_envs * A), the reset mask
 * stays (num_envs), and step may return a fifth array, active (rows). Here, per the
 * kit's rule, an agent finishes on the step its row ends (final_obs and episode log
 * there), its row is inactive with no reward or flag after, and its env is reset once
 * every agent of it has finished or the time limit ends them all.
 *
 * sk_env_def.create gets no pointer to its own table, so each registered
 * class takes one of a fixed number of slots, each with its own create. */
#include "module.h"

#include <math.h>
#include <string.h>

#define MAX_SLOTS 32

typedef struct slot {
    sk_env_def def;
    char id[128];
    PyObject *cls, *kwargs;
    float *obs_bounds; /* (2, obs_size): the observation Box's low, then high; or NULL */
    char **agent_names; /* (num_agents) a multi-agent class's names, or NULL */
} slot;

static slot g_slots[MAX_SLOTS];
static int g_num_slots;

typedef struct pyenv {
    slot *slot;
    PyObject *inst;
    int num_envs, num_agents, num_rows, failed;
    int32_t *elapsed; /* (num_envs) */
    double *ret;      /* (rows) */
    uint8_t *finished; /* (rows) a multi-agent env's agents that ended this episode */
    uint8_t *active;   /* (rows) step's fifth array, when it returned one */
    int has_active;
    PyObject *mask; /* bool (num_envs) */
} pyenv;

int skpy_env_is_python(const sk_env_def *env) {
    return env >= &g_slots[0].def && env < &g_slots[MAX_SLOTS].def;
}

static sk_status create_in(slot *s, void **state, int num_envs, const sk_config *cfg) {
    (void)cfg;
    PyGILState_STATE gil = PyGILState_Ensure();
    sk_status status = SK_OK;
    pyenv *e = calloc(1, sizeof *e);
    if (!e) {
        PyGILState_Release(gil);
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    }
    e->slot = s;
    e->num_envs = num_envs;
    e->num_agents = sk_env_agents(&s->def);
    e->num_rows = num_envs * e->num_agents;
    e->elapsed = sk_alloc((size_t)num_envs * sizeof(int32_t));
    e->ret = sk_alloc((size_t)e->num_rows * sizeof(double));
    e->finished = sk_alloc((size_t)e->num_rows);
    e->active = sk_alloc((size_t)e->num_rows);
    npy_intp n = num_envs;
    e->mask = PyArray_ZEROS(1, &n, NPY_BOOL, 0);
    if (!e->elapsed || !e->ret || !e->finished || !e->active || !e->mask) {
        status = sk_fail(SK_ERR_NOMEM, "out of memory for %d envs of %s", num_envs, s->id);
    } else {
        PyObject *args = Py_BuildValue("(i)", num_envs);
        e->inst = args ? PyObject_Call(s->cls, args, s->kwargs) : NULL;
        Py_XDECREF(args);
        if (!e->inst) {
            skpy_env_error_set();
            status = sk_fail(SK_ERR_INVALID, "%s: creating the Python env failed (the exception "
                                             "follows)", s->id);
        }
    }
    if (status != SK_OK) {
        Py_XDECREF(e->mask);
        sk_free(e->elapsed);
        sk_free(e->ret);
        sk_free(e->finished);
        sk_free(e->active);
        free(e);
        e = NULL;
    }
    PyGILState_Release(gil);
    *state = e;
    return status;
}

#define SLOT_CREATE(k)                                                                             \
    static sk_status create_##k(void **state, int num_envs, const sk_config *cfg) {                \
        return create_in(&g_slots[k], state, num_envs, cfg);                                       \
    }
SLOT_CREATE(0) SLOT_CREATE(1) SLOT_CREATE(2) SLOT_CREATE(3) SLOT_CREATE(4) SLOT_CREATE(5)
SLOT_CREATE(6) SLOT_CREATE(7) SLOT_CREATE(8) SLOT_CREATE(9) SLOT_CREATE(10) SLOT_CREATE(11)
SLOT_CREATE(12) SLOT_CREATE(13) SLOT_CREATE(14) SLOT_CREATE(15) SLOT_CREATE(16) SLOT_CREATE(17)
SLOT_CREATE(18) SLOT_CREATE(19) SLOT_CREATE(20) SLOT_CREATE(21) SLOT_CREATE(22) SLOT_CREATE(23)
SLOT_CREATE(24) SLOT_CREATE(25) SLOT_CREATE(26) SLOT_CREATE(27) SLOT_CREATE(28) SLOT_CREATE(29)
SLOT_CREATE(30) SLOT_CREATE(31)
static sk_status (*const g_creates[MAX_SLOTS])(void **, int, const sk_config *) = {
    create_0,  create_1,  create_2,  create_3,  create_4,  create_5,  create_6,  create_7,
    create_8,  create_9,  create_10, create_11, create_12, create_13, create_14, create_15,
    create_16, create_17, create_18, create_19, create_20, create_21, create_22, create_23,
    create_24, create_25, create_26, create_27, create_28, create_29, create_30, create_31,
};

static void destroy(void *state) {
    pyenv *e = state;
    if (!e) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_XDECREF(e->inst);
    Py_XDECREF(e->mask);
    PyGILState_Release(gil);
    sk_free(e->elapsed);
    sk_free(e->ret);
    sk_free(e->finished);
    sk_free(e->active);
    free(e);
}

/* Row i of the observations (final: final_obs) as bytes, floats or a uint8 env's bytes;
 * row_bytes gives a row's size. */
static uint8_t *obs_row(const pyenv *e, const sk_env_io *io, bool final, int i) {
    uint8_t *base = io->obs_u8 ? (final ? io->final_obs_u8 : io->obs_u8)
                               : (uint8_t *)(final ? io->final_obs : io->obs);
    return base + (size_t)i * (size_t)e->slot->def.obs_size * sk_obs_elem_size(&e->slot->def);
}

static size_t row_bytes(const pyenv *e) {
    return (size_t)e->slot->def.obs_size * sk_obs_elem_size(&e->slot->def);
}

/* The NumPy type of the env's observations. */
static int obs_typenum(const pyenv *e) {
    return e->slot->def.obs_dtype == SK_OBS_U8 ? NPY_UINT8 : NPY_FLOAT32;
}

/* After a failure: every env ends now, with nothing, so loops finish. */
static void fail_batch(pyenv *e, const sk_env_io *io, int lo, int hi, int stepping) {
    e->failed = 1;
    int L = e->slot->def.num_log_fields, A = e->num_agents;
    for (int i = lo * A; i < hi * A; i++) {
        memset(obs_row(e, io, false, i), 0, row_bytes(e));
        if (io->active) io->active[i] = 1;
        if (!stepping) continue;
        memset(obs_row(e, io, true, i), 0, row_bytes(e));
        io->rewards[i] = 0.0f;
        io->terminated[i] = 1;
        io->truncated[i] = 0;
        io->episode_log[(size_t)i * (size_t)L] = (float)e->ret[i];
        io->episode_log[(size_t)i * (size_t)L + 1] = (float)(e->elapsed[i / A] + 1);
        e->ret[i] = 0.0;
    }
    for (int i = lo; i < hi && stepping; i++) e->elapsed[i] = 0;
}

/* Reads `what` from a returned object as a C-contiguous array of typenum
 * with the shape (rows[, width]); NULL with an exception naming it. */
static PyArrayObject *read_array(pyenv *e, PyObject *obj, int typenum, int width,
                                 const char *what) {
    PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(
        obj, PyArray_DescrFromType(typenum), 1, width ? 1 + SK_MAX_OBS_DIMS : 1,
        NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
    if (!a) return NULL;
    int N = e->num_rows;
    /* observations: (N, obs_size), or (N, H, W, C) for an image of that shape */
    int ok = width == 0 ? PyArray_NDIM(a) == 1 && PyArray_DIM(a, 0) == N
                        : PyArray_NDIM(a) >= 2 && PyArray_DIM(a, 0) == N &&
                              PyArray_SIZE(a) == (npy_intp)N * width &&
                              (PyArray_NDIM(a) == 2 || PyArray_NDIM(a) - 1 ==
                               sk_obs_dims(&e->slot->def, (int[SK_MAX_OBS_DIMS]){0}));
    if (!ok) {
        if (width)
            PyErr_Format(PyExc_ValueError, "%s: %s must have shape (%d, %d) or (%d, *shape of "
                         "the observation space)", e->slot->id, what, N, width, N);
        else
            PyErr_Format(PyExc_ValueError, "%s: %s must have shape (%d,)", e->slot->id, what, N);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* Calls inst.reset(seed, mask) and copies the masked rows' observations. */
static int call_reset(pyenv *e, const sk_env_io *io, PyObject *seed, const uint8_t *rows) {
    PyObject *mask = Py_None;
    if (rows) { /* rows may already be the mask array's own data (autoreset) */
        uint8_t *data = PyArray_DATA((PyArrayObject *)e->mask);
        if (rows != data) memcpy(data, rows, (size_t)e->num_envs);
        mask = e->mask;
    }
    PyObject *obs = PyObject_CallMethod(e->inst, "reset", "(OO)", seed, mask);
    if (!obs) return -1;
    PyArrayObject *a = read_array(e, obs, obs_typenum(e), e->slot->def.obs_size, "reset's obs");
    Py_DECREF(obs);
    if (!a) return -1;
    const uint8_t *src = PyArray_DATA(a);
    size_t bytes = row_bytes(e) * (size_t)e->num_agents; /* an env's rows */
    for (int i = 0; i < e->num_envs; i++)
        if (!rows || rows[i])
            memcpy(obs_row(e, io, false, i * e->num_agents), src + (size_t)i * bytes, bytes);
    Py_DECREF(a);
    return 0;
}

static void reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    pyenv *e = state;
    if (lo >= hi) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    int A = e->num_agents;
    for (int i = lo; i < hi; i++) e->elapsed[i] = 0;
    for (int i = lo * A; i < hi * A; i++) {
        e->ret[i] = 0.0;
        e->finished[i] = 0;
        if (io->active) io->active[i] = 1;
    }
    e->failed = skpy_env_error_pending();
    int status = -1;
    if (!e->failed) {
        uint8_t *rows = NULL;
        if (lo != 0 || hi != e->num_envs) {
            rows = calloc((size_t)e->num_envs, 1);
            if (rows) memset(rows + lo, 1, (size_t)(hi - lo));
        }
        PyObject *s = PyLong_FromUnsignedLongLong(seed);
        status = s && (rows || (lo == 0 && hi == e->num_envs)) ? call_reset(e, io, s, rows) : -1;
        Py_XDECREF(s);
        free(rows);
        if (status < 0) skpy_env_error_set();
    }
    if (status < 0) fail_batch(e, io, lo, hi, 0);
    PyGILState_Release(gil);
}

/* A fresh array of this step's actions: the class may keep it (it is not a
 * view of skinner's buffer, which the next step overwrites and close()
 * frees). Discrete: int32 (num_envs,) or (num_envs, heads); Box: float32
 * (num_envs, dim), clipped to the space's bounds as Gymnasium's envs clip. */
static PyObject *actions_of(pyenv *e, const sk_env_io *io) {
    const sk_action_space *space = &e->slot->def.action_space;
    int discrete = space->kind == SK_SPACE_DISCRETE;
    npy_intp dims[2] = {e->num_rows, discrete ? space->num_heads : space->dim};
    int nd = discrete && space->num_heads == 1 ? 1 : 2;
    PyObject *a = PyArray_SimpleNew(nd, dims, discrete ? NPY_INT32 : NPY_FLOAT32);
    if (!a) return NULL;
    size_t count = (size_t)dims[0] * (size_t)dims[1];
    if (discrete) {
        memcpy(PyArray_DATA((PyArrayObject *)a), io->actions, count * sizeof(int32_t));
    } else {
        float *out = PyArray_DATA((PyArrayObject *)a);
        for (size_t k = 0; k < count; k++) {
            size_t d = k % (size_t)space->dim;
            float v = io->actions_continuous[k];
            out[k] = v < space->low[d] ? space->low[d] : v > space->high[d] ? space->high[d] : v;
        }
    }
    return a;
}

static int call_step(pyenv *e, const sk_env_io *io) {
    PyObject *actions = actions_of(e, io);
    if (!actions) return -1;
    PyObject *result = PyObject_CallMethod(e->inst, "step", "(O)", actions);
    Py_DECREF(actions);
    if (!result) return -1;
    Py_ssize_t returned = PyTuple_Check(result) ? PyTuple_GET_SIZE(result) : 0;
    if (returned != 4 && !(returned == 5 && e->num_agents > 1)) {
        PyErr_Format(PyExc_ValueError,
                     e->num_agents > 1 ? "%s: step must return (obs, rewards, terminations, "
                                         "truncations) or those and active"
                                       : "%s: step must return (obs, rewards, terminations, "
                                         "truncations)",
                     e->slot->id);
        Py_DECREF(result);
        return -1;
    }
    int O = e->slot->def.obs_size, N = e->num_rows;
    PyArrayObject *obs = read_array(e, PyTuple_GET_ITEM(result, 0), obs_typenum(e), O, "step's obs");
    PyArrayObject *rew = obs ? read_array(e, PyTuple_GET_ITEM(result, 1), NPY_FLOAT32, 0, "rewards") : NULL;
    PyArrayObject *term = rew ? read_array(e, PyTuple_GET_ITEM(result, 2), NPY_BOOL, 0, "terminations") : NULL;
    PyArrayObject *trunc = term ? read_array(e, PyTuple_GET_ITEM(result, 3), NPY_BOOL, 0, "truncations") : NULL;
    e->has_active = returned == 5;
    PyArrayObject *active = trunc && e->has_active
        ? read_array(e, PyTuple_GET_ITEM(result, 4), NPY_BOOL, 0, "active") : NULL;
    Py_DECREF(result);
    int status = trunc && (active || !e->has_active) ? 0 : -1;
    if (status == 0 && active) memcpy(e->active, PyArray_DATA(active), (size_t)N);
    Py_XDECREF(active);
    if (status == 0) {
        memcpy(obs_row(e, io, false, 0), PyArray_DATA(obs), (size_t)N * row_bytes(e));
        memcpy(io->rewards, PyArray_DATA(rew), (size_t)N * sizeof(float));
        memcpy(io->terminated, PyArray_DATA(term), (size_t)N);
        memcpy(io->truncated, PyArray_DATA(trunc), (size_t)N);
    }
    Py_XDECREF(obs);
    Py_XDECREF(rew);
    Py_XDECREF(term);
    Py_XDECREF(trunc);
    return status;
}

/* A multi-agent step's ends (the kit's rule, above): each row that ends now logs its
 * episode; a finished row reads no reward or flag; an env none of whose agents is left
 * (or at its time limit) is marked in done for the reset. Returns how many envs. */
static int end_agents(pyenv *e, const sk_env_io *io, uint8_t *done) {
    int A = e->num_agents, L = e->slot->def.num_log_fields, ended = 0;
    int limit = e->slot->def.max_episode_steps;
    for (int env = 0; env < e->num_envs; env++) {
        int live = 0, at_limit = ++e->elapsed[env] >= limit;
        for (int row = env * A; row < env * A + A; row++) {
            if (e->finished[row]) {
                io->rewards[row] = 0.0f;
                io->terminated[row] = io->truncated[row] = 0;
                io->active[row] = 0;
                continue;
            }
            e->ret[row] += (double)io->rewards[row];
            io->terminated[row] = io->terminated[row] != 0;
            io->truncated[row] = !io->terminated[row] && (io->truncated[row] || at_limit);
            io->active[row] = e->has_active ? e->active[row] != 0 : 1;
            if (!io->terminated[row] && !io->truncated[row]) {
                live++;
                continue;
            }
            e->finished[row] = 1;
            io->active[row] = 0;
            memcpy(obs_row(e, io, true, row), obs_row(e, io, false, row), row_bytes(e));
            io->episode_log[(size_t)row * (size_t)L] = (float)e->ret[row];
            io->episode_log[(size_t)row * (size_t)L + 1] = (float)e->elapsed[env];
        }
        done[env] = live == 0;
        if (!done[env]) continue;
        ended++;
        e->elapsed[env] = 0;
        for (int row = env * A; row < env * A + A; row++) {
            e->ret[row] = 0.0;
            e->finished[row] = 0;
            io->active[row] = 1;
        }
    }
    return ended;
}

static void step(void *state, const sk_env_io *io, int lo, int hi) {
    pyenv *e = state;
    PyGILState_STATE gil = PyGILState_Ensure();
    int status = 0;
    if (skpy_env_error_pending()) { /* an earlier step of this loop failed */
        status = -1;
    } else if (e->failed) { /* it failed in an earlier call, whose caller got the exception */
        PyErr_Format(PyExc_RuntimeError,
                     "%s raised in an earlier step; reset() it before stepping again",
                     e->slot->id);
        skpy_env_error_set();
        status = -1;
    } else if (lo != 0 || hi != e->num_envs) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s is a Python-defined env: it steps its whole batch on one thread (asked "
                     "for envs %d..%d of %d)",
                     e->slot->id, lo, hi - 1, e->num_envs);
        skpy_env_error_set();
        status = -1;
    } else if (call_step(e, io) < 0) {
        skpy_env_error_set();
        status = -1;
    }
    if (status < 0) {
        fail_batch(e, io, lo, hi, 1);
        PyGILState_Release(gil);
        return;
    }
    int N = e->num_envs, L = e->slot->def.num_log_fields;
    int limit = e->slot->def.max_episode_steps;
    uint8_t *done = PyArray_DATA((PyArrayObject *)e->mask);
    int ended = 0;
    if (e->num_agents > 1) {
        ended = end_agents(e, io, done);
        N = 0; /* the rows are done */
    }
    for (int i = 0; i < N; i++) {
        e->ret[i] += (double)io->rewards[i];
        e->elapsed[i]++;
        io->terminated[i] = io->terminated[i] != 0;
        io->truncated[i] = !io->terminated[i] && (io->truncated[i] || e->elapsed[i] >= limit);
        done[i] = io->terminated[i] | io->truncated[i];
        if (!done[i]) continue;
        ended++;
        memcpy(obs_row(e, io, true, i), obs_row(e, io, false, i), row_bytes(e));
        io->episode_log[(size_t)i * (size_t)L] = (float)e->ret[i];
        io->episode_log[(size_t)i * (size_t)L + 1] = (float)e->elapsed[i];
        e->ret[i] = 0.0;
        e->elapsed[i] = 0;
    }
    if (ended) {
        status = call_reset(e, io, Py_None, done);
        if (status < 0) {
            skpy_env_error_set();
            fail_batch(e, io, 0, N, 1);
        }
    }
    PyGILState_Release(gil);
}

static int state_arrays(void *state, sk_env_array *arrays) {
    pyenv *e = state;
    /* the counters only: a Python env's own state is not saved, so a run
     * on one cannot be resumed (skinner.train refuses it) */
    arrays[0] = (sk_env_array){"elapsed", SK_ARRAY_I32, 1, e->elapsed, true, 0, 2147483647.0};
    arrays[1] = (sk_env_array){"episode_return", SK_ARRAY_F64, e->num_agents, e->ret, false, 0, 0};
    if (e->num_agents == 1) return 2;
    arrays[2] = (sk_env_array){"finished", SK_ARRAY_U8, e->num_agents, e->finished, true, 0, 1};
    return 3;
}

/* ------------------------------------------------------------- register */

static int read_space(PyObject *space, sk_action_space *out, int *obs_size, const char *what) {
    memset(out, 0, sizeof *out);
    PyObject *n = PyObject_GetAttrString(space, "n");
    PyErr_Clear();
    PyObject *nvec = n ? NULL : PyObject_GetAttrString(space, "nvec");
    PyErr_Clear();
    int status = 0;
    if (obs_size) { /* an observation space: a Box, 1-D or an image (H, W, C), read_obs_type */
        PyObject *shape = PyObject_GetAttrString(space, "shape");
        Py_ssize_t dims = shape && PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : 0;
        if (dims < 1 || dims > SK_MAX_OBS_DIMS || n || nvec) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError,
                         "%s must be a 1-D Box (shape (obs_size,)) or an image's Box (H, W, C), "
                         "of at most %d dimensions",
                         what, SK_MAX_OBS_DIMS);
            status = -1;
        } else {
            long size = 1;
            for (Py_ssize_t d = 0; d < dims && size <= 65536; d++)
                size *= PyLong_AsLong(PyTuple_GET_ITEM(shape, d));
            if (size < 1 || size > 65536) {
                PyErr_Clear();
                PyErr_Format(PyExc_ValueError, "%s: size %ld (expected 1 to 65536)", what, size);
                status = -1;
            }
            *obs_size = (int)size;
        }
        Py_XDECREF(shape);
    } else if (n) {
        PyObject *start = PyObject_GetAttrString(space, "start");
        PyErr_Clear();
        PyObject *shape = PyObject_GetAttrString(space, "shape");
        PyErr_Clear();
        long first = start ? PyLong_AsLong(start) : 0;
        PyErr_Clear();
        int scalar = !shape || (PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == 0);
        Py_XDECREF(start);
        Py_XDECREF(shape);
        if (!scalar || first != 0) {
            PyErr_Format(PyExc_ValueError,
                         "%s: only Discrete(n) starting at 0, MultiDiscrete or a 1-D Box are "
                         "supported (got %s)",
                         what, scalar ? "a Discrete with start != 0" : "a space of shape != ()");
            Py_XDECREF(n);
            return -1;
        }
        long v = PyLong_AsLong(n);
        if (v < 1 || v > 65536) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: Discrete(%ld) (expected 1 to 65536 choices)", what, v);
            status = -1;
        }
        out->kind = SK_SPACE_DISCRETE;
        out->num_heads = 1;
        out->head_sizes[0] = (int)v;
    } else if (nvec) {
        PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(nvec, PyArray_DescrFromType(NPY_INT64),
                                                            1, 1, NPY_ARRAY_CARRAY_RO, NULL);
        if (!a || PyArray_DIM(a, 0) < 1 || PyArray_DIM(a, 0) > SK_MAX_HEADS) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: MultiDiscrete needs a 1-D nvec of 1 to %d heads",
                         what, SK_MAX_HEADS);
            status = -1;
        } else {
            out->kind = SK_SPACE_DISCRETE;
            out->num_heads = (int)PyArray_DIM(a, 0);
            for (int h = 0; h < out->num_heads && status == 0; h++) {
                int64_t v = ((const int64_t *)PyArray_DATA(a))[h];
                if (v < 1 || v > 65536) {
                    PyErr_Format(PyExc_ValueError, "%s: nvec[%d] = %lld (expected 1 to 65536)",
                                 what, h, (long long)v);
                    status = -1;
                }
                out->head_sizes[h] = (int)v;
            }
        }
        Py_XDECREF(a);
    } else { /* a Box */
        PyObject *low = PyObject_GetAttrString(space, "low"), *high = PyObject_GetAttrString(space, "high");
        PyArrayObject *l = low ? (PyArrayObject *)PyArray_FromAny(low, PyArray_DescrFromType(NPY_FLOAT32), 1, 1, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL) : NULL;
        PyArrayObject *u = high && l ? (PyArrayObject *)PyArray_FromAny(high, PyArray_DescrFromType(NPY_FLOAT32), 1, 1, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL) : NULL;
        if (!u || PyArray_DIM(l, 0) != PyArray_DIM(u, 0) || PyArray_DIM(l, 0) < 1 ||
            PyArray_DIM(l, 0) > SK_MAX_ACTION_DIM) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError,
                         "%s must be Discrete, MultiDiscrete or a 1-D Box of 1 to %d dims", what,
                         SK_MAX_ACTION_DIM);
            status = -1;
        } else {
            out->kind = SK_SPACE_CONTINUOUS;
            out->dim = (int)PyArray_DIM(l, 0);
            for (int d = 0; d < out->dim; d++) {
                out->low[d] = ((const float *)PyArray_DATA(l))[d];
                out->high[d] = ((const float *)PyArray_DATA(u))[d];
            }
        }
        Py_XDECREF(low);
        Py_XDECREF(high);
        Py_XDECREF(l);
        Py_XDECREF(u);
    }
    Py_XDECREF(n);
    Py_XDECREF(nvec);
    return status;
}

/* The observation space's low and high (a Box's) as the table's declared
 * space, so that training and `skinner check` hold observations to it; none
 * when the space has no bounds. -1 with an exception for bounds of the wrong
 * shape. */
/* The observation space's dtype (uint8 or float) and, past one dimension, its shape. */
static int read_obs_type(PyObject *space, sk_env_def *def) {
    PyObject *dtype = PyObject_GetAttrString(space, "dtype");
    PyObject *name = dtype ? PyObject_Str(dtype) : NULL;
    const char *text = name ? PyUnicode_AsUTF8(name) : NULL;
    PyErr_Clear();
    def->obs_dtype = text && strcmp(text, "uint8") == 0 ? SK_OBS_U8 : SK_OBS_F32;
    Py_XDECREF(name);
    Py_XDECREF(dtype);
    PyObject *shape = PyObject_GetAttrString(space, "shape");
    Py_ssize_t dims = shape && PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : 0;
    for (Py_ssize_t d = 0; dims > 1 && d < dims && d < SK_MAX_OBS_DIMS; d++)
        def->obs_shape[d] = (int)PyLong_AsLong(PyTuple_GET_ITEM(shape, d));
    Py_XDECREF(shape);
    PyErr_Clear();
    return 0;
}

static int read_obs_bounds(PyObject *space, slot *s) {
    PyObject *bound[2] = {PyObject_GetAttrString(space, "low"),
                          PyObject_GetAttrString(space, "high")};
    PyErr_Clear();
    int status = 0, O = s->def.obs_size;
    if (bound[0] && bound[1] && !(s->obs_bounds = malloc(2 * (size_t)O * sizeof(float)))) {
        PyErr_NoMemory();
        status = -1;
    }
    for (int side = 0; side < 2 && s->obs_bounds && status == 0; side++) {
        PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(
            bound[side], PyArray_DescrFromType(NPY_FLOAT32), 0, 0, /* any shape: an image's */
            NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
        float *out = s->obs_bounds + (size_t)side * (size_t)O;
        if (!a || (PyArray_SIZE(a) != O && PyArray_SIZE(a) != 1)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "observation space: %s must have %d values (or one)",
                         side ? "high" : "low", O);
            status = -1;
        } else {
            const float *values = PyArray_DATA(a);
            for (int k = 0; k < O; k++) out[k] = values[PyArray_SIZE(a) == 1 ? 0 : k];
        }
        Py_XDECREF(a);
    }
    Py_XDECREF(bound[0]);
    Py_XDECREF(bound[1]);
    if (status == 0 && s->obs_bounds) {
        s->def.obs_low = s->obs_bounds;
        s->def.obs_high = s->obs_bounds + O;
    }
    return status;
}

/* The most agents of a Python-defined env. */
#define MAX_PY_AGENTS 1024

static void free_agent_names(slot *s) {
    for (int a = 0; s->agent_names && a < s->def.num_agents; a++) free(s->agent_names[a]);
    free(s->agent_names);
    s->agent_names = NULL;
}

/* A multi-agent class's count and names (a list of str, or None) into slot s. */
static int read_agents(slot *s, int num_agents, PyObject *names) {
    if (num_agents < 1 || num_agents > MAX_PY_AGENTS) {
        PyErr_Format(PyExc_ValueError, "num_agents = %d (expected 1 to %d)", num_agents,
                     MAX_PY_AGENTS);
        return -1;
    }
    if (names == Py_None || num_agents == 1) {
        s->def.num_agents = num_agents > 1 ? num_agents : 0;
        return 0;
    }
    if (!PyList_Check(names) || PyList_GET_SIZE(names) != num_agents) {
        PyErr_Format(PyExc_ValueError, "agent_names must be a list of num_agents = %d names",
                     num_agents);
        return -1;
    }
    s->def.num_agents = num_agents;
    if (!(s->agent_names = calloc((size_t)num_agents, sizeof *s->agent_names))) {
        PyErr_NoMemory();
        return -1;
    }
    for (int a = 0; a < num_agents; a++) {
        const char *name = PyUnicode_AsUTF8(PyList_GET_ITEM(names, a));
        if (!name || !(s->agent_names[a] = strdup(name))) {
            if (!PyErr_Occurred()) PyErr_NoMemory();
            free_agent_names(s);
            return -1;
        }
    }
    s->def.agent_names = (const char *const *)s->agent_names;
    return 0;
}

/* register(env_id, cls, observation_space, action_space, max_episode_steps,
 *          reward_threshold, kwargs, num_agents, agent_names) */
PyObject *skpy_register(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *kwlist[] = {"env_id", "cls", "observation_space", "action_space",
                             "max_episode_steps", "reward_threshold", "kwargs", "num_agents",
                             "agent_names", NULL};
    const char *id;
    PyObject *cls, *obs_space, *act_space, *threshold = Py_None, *ctor_kwargs = Py_None;
    PyObject *names = Py_None;
    int max_steps = 0, num_agents = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sOOO|iOOiO", kwlist, &id, &cls, &obs_space,
                                     &act_space, &max_steps, &threshold, &ctor_kwargs,
                                     &num_agents, &names))
        return NULL;
    if (!PyCallable_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "cls must be a class (callable as cls(num_envs))");
        return NULL;
    }
    if (ctor_kwargs != Py_None && !PyDict_Check(ctor_kwargs)) {
        PyErr_SetString(PyExc_TypeError, "kwargs must be a dict or None");
        return NULL;
    }
    if (strlen(id) >= sizeof g_slots[0].id) {
        PyErr_Format(PyExc_ValueError, "env id '%s' is too long (at most %zu characters)", id,
                     sizeof g_slots[0].id - 1);
        return NULL;
    }
    if (g_num_slots == MAX_SLOTS) {
        PyErr_Format(PyExc_ValueError, "at most %d Python-defined envs can be registered in one "
                                       "process", MAX_SLOTS);
        return NULL;
    }
    double solved = NAN;
    if (threshold != Py_None) {
        solved = PyFloat_AsDouble(threshold);
        if (PyErr_Occurred()) return NULL;
    }
    if (max_steps < 0) {
        PyErr_Format(PyExc_ValueError, "max_episode_steps = %d (expected 1 or more, or None)", max_steps);
        return NULL;
    }
    slot *s = &g_slots[g_num_slots];
    free(s->obs_bounds); /* an earlier registration that failed in this slot */
    free_agent_names(s);
    memset(s, 0, sizeof *s);
    snprintf(s->id, sizeof s->id, "%s", id);
    sk_env_def *d = &s->def;
    if (read_space(obs_space, &d->action_space, &d->obs_size, "observation space") < 0 ||
        read_obs_type(obs_space, d) < 0 || read_obs_bounds(obs_space, s) < 0 ||
        read_space(act_space, &d->action_space, NULL, "action space") < 0 ||
        read_agents(s, num_agents, names) < 0)
        return NULL;
    d->id = s->id;
    d->summary = "a Python-defined env (skinner.register)";
    d->max_episode_steps = max_steps > 0 ? max_steps : 2147483647;
    d->solved_threshold = solved;
    d->num_log_fields = 2;
    d->log_names[0] = "return";
    d->log_names[1] = "length";
    d->create = g_creates[g_num_slots];
    d->destroy = destroy;
    d->reset = reset;
    d->step = step;
    d->state_arrays = state_arrays;
    sk_status status = sk_env_register(d);
    if (status != SK_OK) return skpy_raise(status, NULL);
    s->cls = Py_NewRef(cls);
    s->kwargs = ctor_kwargs == Py_None ? NULL : Py_NewRef(ctor_kwargs);
    g_num_slots++;
    Py_RETURN_NONE;
}
