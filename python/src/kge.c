/* skinner._core.kge_train: skinner/kge.h's training driver (see skinner.kge_train). */
#include "module.h"

#include <skinner/kge.h>

typedef struct kge_ctx {
    PyObject *callback; /* borrowed; NULL: none */
    PyObject *error;    /* the callback's exception, which stops the training */
} kge_ctx;

static PyObject *scores_dict(const sk_kge_scores *s) {
    return Py_BuildValue("{s:d,s:d,s:d,s:d}", "mrr", s->mrr, "hits1", s->hits1, "hits3", s->hits3,
                         "hits10", s->hits10);
}

/* Called without the GIL, after every epoch. */
static bool on_epoch(const sk_kge_epoch *epoch, void *user) {
    kge_ctx *ctx = user;
    if (!ctx->callback) return true;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *valid = epoch->ranked ? scores_dict(&epoch->valid) : Py_NewRef(Py_None);
    PyObject *info = valid ? Py_BuildValue("{s:L,s:L,s:L,s:d,s:d,s:N}", "epoch",
                                           (long long)epoch->epoch, "epochs",
                                           (long long)epoch->epochs, "steps",
                                           (long long)epoch->steps, "seconds", epoch->seconds,
                                           "loss", epoch->loss, "valid", valid)
                           : NULL;
    PyObject *result = info ? PyObject_CallOneArg(ctx->callback, info) : NULL;
    Py_XDECREF(info);
    /* False stops the training, as an exception does */
    bool go_on = result && result != Py_False;
    Py_XDECREF(result);
    if (!result) ctx->error = skpy_error_fetch();
    PyGILState_Release(gil);
    return go_on;
}

/* kge_train(pairs, config_path, callback) -> dict */
PyObject *skpy_kge_train(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *kwlist[] = {"config", "config_path", "callback", NULL};
    PyObject *pairs = NULL, *path_obj = Py_None, *callback = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO", kwlist, &pairs, &path_obj, &callback))
        return NULL;
    if (callback != Py_None && !PyCallable_Check(callback)) {
        PyErr_SetString(PyExc_TypeError, "callback must be callable or None");
        return NULL;
    }
    PyObject *path_bytes = NULL;
    if (path_obj != Py_None && !PyUnicode_FSConverter(path_obj, &path_bytes)) return NULL;
    sk_config *cfg = skpy_config_from_pairs(pairs);
    if (!cfg) {
        Py_XDECREF(path_bytes);
        return NULL;
    }
    kge_ctx ctx = {.callback = callback == Py_None ? NULL : callback};
    sk_kge_train_summary summary;
    sk_status status;
    const char *config_path = path_bytes ? PyBytes_AS_STRING(path_bytes) : NULL;
    Py_BEGIN_ALLOW_THREADS
    status = sk_kge_train_run(cfg, config_path, NULL, on_epoch, &ctx, &summary);
    Py_END_ALLOW_THREADS
    sk_config_free(cfg);
    Py_XDECREF(path_bytes);
    if (ctx.error) {
        skpy_error_restore(ctx.error);
        return NULL;
    }
    if (status != SK_OK) return skpy_raise(status, NULL);
    PyObject *valid = summary.ranked ? scores_dict(&summary.valid) : Py_NewRef(Py_None);
    if (!valid) return NULL;
    return Py_BuildValue("{s:s,s:i,s:i,s:i,s:i,s:L,s:L,s:d,s:d,s:N,s:s,s:s,s:s}", "model",
                         summary.model, "dim", summary.dim, "entities", summary.entities,
                         "relations", summary.relations, "train_facts", summary.train_facts,
                         "first_epoch", (long long)summary.first_epoch, "epochs",
                         (long long)summary.epochs, "seconds", summary.seconds, "loss",
                         summary.loss, "valid", valid, "dataset", summary.dataset, "run_dir",
                         summary.run_dir, "model_path", summary.model_path);
}
