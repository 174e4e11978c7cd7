/* The skinner Python module's C half (skinner._core): shared declarations.
 * Every file includes this first: Python.h must come before any system
 * header, and the NumPy C API table is shared across the files. */
#ifndef SKPY_MODULE_H
#define SKPY_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL skinner_ARRAY_API
#ifndef SKPY_MAIN
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <skinner.h>

/* Raises the Python exception for a failed skinner call (ValueError for bad
 * values, configs and unknown envs; OSError; MemoryError; FloatingPointError
 * for divergence) with sk_last_error() or msg; returns NULL. */
PyObject *skpy_raise(sk_status status, const char *msg);

/* VecEnv.get_state(index) and set_state(index, qpos, qvel) of a physics env (physics.c). */
PyObject *skpy_physics_get(sk_vec *vec, PyObject *args);
PyObject *skpy_physics_set(sk_vec *vec, PyObject *args);

/* Builds an sk_config from a sequence of (key, value) string pairs; NULL
 * with an exception set on failure. */
sk_config *skpy_config_from_pairs(PyObject *pairs);

/* Finds an env ("CartPole-v1", an alias, "FILE.so:ID"); NULL with a
 * ValueError naming the known envs. */
const sk_env_def *skpy_find_env(const char *name);
/* An env table's spaces and limits as a dict (skinner.describe, Vec._describe). */
PyObject *skpy_describe_env(const sk_env_def *env);

/* The pending exception as one object (normalised, traceback attached; a new
 * reference), or NULL; and setting it again (steals exc). */
PyObject *skpy_error_fetch(void);
void skpy_error_restore(PyObject *exc);

/* An exception a Python-defined env raised inside a C loop, kept until the
 * loop returns (the first one wins); skpy_env_error_take re-raises it and
 * returns -1, or returns 0 when there is none. Called with the GIL held. */
void skpy_env_error_set(void);
int skpy_env_error_pending(void);
int skpy_env_error_take(void);
/* The trainer running on this thread (or NULL): an env error aborts it. */
void skpy_set_trainer(sk_trainer *trainer);
/* Formats a double for PyErr_Format, which has no %g. */
const char *skpy_num(char *buf, size_t size, double value);

/* A seed from Python, parsed one way for make() and reset(): an int or NumPy
 * integer in [0, 2**64). 0, or -1 with TypeError (not an integer) or
 * ValueError (negative, or 2**64 and above: never wrapped around). */
int skpy_seed(PyObject *obj, unsigned long long *seed);

/* The most envs one vector env takes from Python: the CLI's cap on
 * `skinner bench env --num-envs` (src/cli/bench.c), which test_vec checks. */
#define SKPY_MAX_NUM_ENVS (1 << 24)
/* num_envs from Python, in 1..SKPY_MAX_NUM_ENVS: 0, or -1 with TypeError or
 * ValueError naming the range. */
int skpy_num_envs(PyObject *obj, int *num_envs);

/* Whether env is a Python-defined env (it steps on one thread). */
int skpy_env_is_python(const sk_env_def *env);

/* Types and functions of the files. */
extern PyTypeObject skpy_VecType;
extern PyTypeObject skpy_AgentType;
PyObject *skpy_register(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *skpy_train(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *skpy_evaluate(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *skpy_bench(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *skpy_check_env(PyObject *self, PyObject *args, PyObject *kwargs); /* check.c */
int skpy_vec_ready(PyObject *module);
int skpy_agent_ready(PyObject *module);

#endif
