/* A physics env's state from Python (docs/mujoco.md): VecEnv.get_state(index) and
 * VecEnv.set_state(index, qpos, qvel) over sk_vec_get_physics / sk_vec_set_physics. */
#include "module.h"

/* get_state(index) -> (qpos, qvel): copies, float64 */
PyObject *skpy_physics_get(sk_vec *vec, PyObject *args) {
    int index;
    if (!PyArg_ParseTuple(args, "i", &index)) return NULL;
    int nq, nv;
    sk_status status = sk_vec_physics_sizes(vec, &nq, &nv);
    if (status != SK_OK) return skpy_raise(status, NULL);
    npy_intp qpos_dims[1] = {nq}, qvel_dims[1] = {nv};
    PyObject *qpos = PyArray_ZEROS(1, qpos_dims, NPY_FLOAT64, 0);
    PyObject *qvel = PyArray_ZEROS(1, qvel_dims, NPY_FLOAT64, 0);
    if (qpos && qvel) {
        status = sk_vec_get_physics(vec, index, PyArray_DATA((PyArrayObject *)qpos), nq,
                                    PyArray_DATA((PyArrayObject *)qvel), nv);
        if (status == SK_OK) return Py_BuildValue("(NN)", qpos, qvel);
        skpy_raise(status, NULL);
    }
    Py_XDECREF(qpos);
    Py_XDECREF(qvel);
    return NULL;
}

/* set_state(index, qpos, qvel) -> obs: the env's new observation (a copy) */
PyObject *skpy_physics_set(sk_vec *vec, PyObject *args) {
    int index;
    PyObject *qpos_in, *qvel_in;
    if (!PyArg_ParseTuple(args, "iOO", &index, &qpos_in, &qvel_in)) return NULL;
    int flags = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST;
    PyObject *qpos = PyArray_FROMANY(qpos_in, NPY_FLOAT64, 1, 1, flags);
    PyObject *qvel = qpos ? PyArray_FROMANY(qvel_in, NPY_FLOAT64, 1, 1, flags) : NULL;
    PyObject *result = NULL;
    if (qpos && qvel) {
        sk_status status = sk_vec_set_physics(
            vec, index, PyArray_DATA((PyArrayObject *)qpos),
            (int)PyArray_SIZE((PyArrayObject *)qpos), PyArray_DATA((PyArrayObject *)qvel),
            (int)PyArray_SIZE((PyArrayObject *)qvel));
        if (status != SK_OK) {
            skpy_raise(status, NULL);
        } else {
            int obs_size = sk_vec_env(vec)->obs_size;
            npy_intp dims[1] = {obs_size};
            result = PyArray_SimpleNew(1, dims, NPY_FLOAT32);
            if (result)
                memcpy(PyArray_DATA((PyArrayObject *)result),
                       sk_vec_buffers_of(vec)->obs + (size_t)index * (size_t)obs_size,
                       (size_t)obs_size * sizeof(float));
        }
    }
    Py_XDECREF(qpos);
    Py_XDECREF(qvel);
    return result;
}
