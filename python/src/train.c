/* skinner._core: the trainer and evaluation driven from Python (bench.c: raw stepping), and
 * agents (loaded policies). The trainer runs with the GIL released; once per
 * update the callback takes it back to run Python's signal handlers (Ctrl-C)
 * and the user's callback, and stops the run cleanly when either says so. */
#include "module.h"

#include <math.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ train */

typedef struct train_ctx {
    PyObject *callback; /* or NULL */
    PyObject *error;    /* the exception raised in the callback or by a signal */
    int64_t updates;
} train_ctx;

static PyObject *stats_dict(const sk_update_stats *s) {
    return Py_BuildValue(
        "{s:L,s:L,s:d,s:d,s:d,s:d,s:L,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:L,s:O}", "update",
        (long long)s->update, "steps", (long long)s->steps, "wall_seconds", s->wall_seconds, "sps",
        s->sps, "mean_return", s->mean_return, "mean_length", s->mean_length, "episodes",
        (long long)s->episodes, "policy_loss", s->policy_loss, "value_loss", s->value_loss,
        "entropy", s->entropy, "approx_kl", s->approx_kl, "clip_fraction", s->clip_fraction,
        "explained_variance", s->explained_variance, "learning_rate", s->learning_rate,
        "anomalies", (long long)s->anomalies, "restored", s->restored ? Py_True : Py_False);
}

static void keep_error(train_ctx *ctx) {
    PyObject *exc = skpy_error_fetch();
    if (ctx->error) Py_XDECREF(exc); /* the first one is the cause */
    else ctx->error = exc;
}

static bool on_update(const sk_update_stats *stats, void *user) {
    train_ctx *ctx = user;
    PyGILState_STATE gil = PyGILState_Ensure();
    bool go_on = true;
    ctx->updates++;
    if (skpy_env_error_pending()) go_on = false;
    if (go_on && PyErr_CheckSignals() < 0) { /* Ctrl-C: KeyboardInterrupt */
        keep_error(ctx);
        go_on = false;
    }
    if (go_on && ctx->callback) {
        PyObject *d = stats_dict(stats);
        PyObject *r = d ? PyObject_CallOneArg(ctx->callback, d) : NULL;
        Py_XDECREF(d);
        if (!r) {
            keep_error(ctx);
            go_on = false;
        } else {
            /* None goes on; otherwise the value's truth (False, np.False_, 0 stop) */
            int truth = r == Py_None ? 1 : PyObject_IsTrue(r);
            Py_DECREF(r);
            if (truth < 0) keep_error(ctx);
            go_on = truth > 0;
        }
    }
    PyGILState_Release(gil);
    return go_on;
}

static PyObject *result_dict(const sk_train_result *r, int64_t updates) {
    return Py_BuildValue("{s:L,s:L,s:d,s:d,s:O,s:N,s:d,s:d,s:O,s:L}", "total_steps",
                         (long long)r->total_steps, "updates", (long long)updates, "wall_seconds",
                         r->wall_seconds, "sps", r->sps, "solved", r->solved ? Py_True : Py_False,
                         "solved_at_steps",
                         r->solved ? PyLong_FromLongLong(r->solved_at_steps) : Py_NewRef(Py_None),
                         "solved_at_seconds", r->solved ? r->solved_at_seconds : NAN,
                         "final_mean_return", r->final_mean_return, "interrupted",
                         r->interrupted ? Py_True : Py_False, "anomalies",
                         (long long)r->anomalies);
}

/* train(config_files, pairs, run_dir, callback, resume, given_from) -> dict
 * config_files: paths loaded in order (the preset, the user's file);
 * pairs: (key, value) overrides on top; the env is pairs' env.id. The files from index
 * given_from on and the pairs are the user's: a key of theirs that belongs to another
 * learner than the run's is refused (sk_config_check_learner_keys). */
PyObject *skpy_train(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *kwlist[] = {"config_files", "config",     "run_dir", "callback",
                             "resume",       "given_from", NULL};
    PyObject *files = Py_None, *pairs = Py_None, *run_dir_obj = Py_None, *callback = Py_None,
             *resume_obj = Py_None;
    Py_ssize_t given_from = PY_SSIZE_T_MAX;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOOn", kwlist, &files, &pairs, &run_dir_obj,
                                     &callback, &resume_obj, &given_from))
        return NULL;
    if (callback != Py_None && !PyCallable_Check(callback)) {
        PyErr_SetString(PyExc_TypeError, "callback must be callable (stats: dict) -> bool");
        return NULL;
    }
    sk_config *cfg = sk_config_new(), *given = sk_config_new();
    if (!cfg || !given) goto no_memory;
    PyObject *seq = PySequence_Fast(files, "config_files must be a sequence of paths");
    if (!seq) goto fail_cfg;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *bytes = NULL;
        if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(seq, i), &bytes)) {
            Py_DECREF(seq);
            goto fail_cfg;
        }
        sk_status st = sk_config_load_file(cfg, PyBytes_AS_STRING(bytes));
        if (st == SK_OK && i >= given_from) st = sk_config_load_file(given, PyBytes_AS_STRING(bytes));
        Py_DECREF(bytes);
        if (st != SK_OK) {
            Py_DECREF(seq);
            skpy_raise(st, NULL);
            goto fail_cfg;
        }
    }
    Py_DECREF(seq);
    /* the overrides on top, as the CLI's --section.key flags */
    PyObject *pseq = PySequence_Fast(pairs, "config must be a sequence of (key, value) pairs");
    if (!pseq) goto fail_cfg;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(pseq); i++) {
        const char *key, *value;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(pseq, i),
                              "ss;config entries are (key, value) strings", &key, &value) ||
            ((sk_config_set(cfg, key, value) != SK_OK || sk_config_set(given, key, value) != SK_OK) &&
             !skpy_raise(SK_ERR_CONFIG, NULL) && PyErr_Occurred())) {
            Py_DECREF(pseq);
            goto fail_cfg;
        }
    }
    Py_DECREF(pseq);
    if (sk_config_check_learner_keys(given, cfg) != SK_OK) {
        skpy_raise(SK_ERR_CONFIG, NULL);
        goto fail_cfg;
    }
    sk_config_free(given);
    given = NULL;

    const char *env_name = sk_config_get(cfg, "env.id");
    const sk_env_def *env = env_name ? skpy_find_env(env_name) : NULL;
    if (!env_name) PyErr_SetString(PyExc_ValueError, "no env.id in the config");
    if (!env) goto fail_cfg;
    if (skpy_env_is_python(env)) {
        const char *threads = sk_config_get(cfg, "train.threads");
        if (threads && strcmp(threads, "1") != 0) {
            PyErr_Format(PyExc_ValueError,
                         "%s is a Python-defined env: it steps its whole batch on one thread "
                         "(train.threads = %s; expected 1)",
                         env->id, threads);
            goto fail_cfg;
        }
        const char *slices = sk_config_get(cfg, "train.slices");
        if (slices && strcmp(slices, "0") != 0 && strcmp(slices, "1") != 0) {
            PyErr_Format(PyExc_ValueError,
                         "%s is a Python-defined env: it steps its whole batch in one call "
                         "(train.slices = %s; expected 0 or 1)",
                         env->id, slices);
            goto fail_cfg;
        }
        if (resume_obj != Py_None) {
            PyErr_Format(PyExc_ValueError,
                         "a run on %s cannot be resumed: a Python-defined env's state is not "
                         "saved in checkpoints",
                         env->id);
            goto fail_cfg;
        }
        sk_config_set(cfg, "train.threads", "1");
    }
    sk_trainer *trainer = NULL;
    sk_status status = sk_trainer_create(&trainer, cfg);
    sk_config_free(cfg);
    cfg = NULL;
    if (status != SK_OK) {
        if (skpy_env_error_take() < 0) return NULL;
        return skpy_raise(status, NULL);
    }
    if (run_dir_obj != Py_None) {
        PyObject *bytes = NULL;
        if (!PyUnicode_FSConverter(run_dir_obj, &bytes)) goto fail_trainer;
        status = sk_trainer_set_run_dir(trainer, PyBytes_AS_STRING(bytes));
        Py_DECREF(bytes);
        if (status != SK_OK) {
            skpy_raise(status, sk_trainer_last_error(trainer));
            goto fail_trainer;
        }
    }
    if (resume_obj != Py_None) {
        PyObject *bytes = NULL;
        if (!PyUnicode_FSConverter(resume_obj, &bytes)) goto fail_trainer;
        status = sk_trainer_resume(trainer, PyBytes_AS_STRING(bytes));
        Py_DECREF(bytes);
        if (status != SK_OK) {
            skpy_raise(status, sk_trainer_last_error(trainer));
            goto fail_trainer;
        }
    }
    train_ctx ctx = {.callback = callback == Py_None ? NULL : callback};
    sk_trainer_set_callback(trainer, on_update, &ctx);
    skpy_set_trainer(trainer);
    Py_BEGIN_ALLOW_THREADS
    status = sk_trainer_run(trainer);
    Py_END_ALLOW_THREADS
    skpy_set_trainer(NULL);
    sk_train_result result = sk_trainer_result(trainer);
    PyObject *out = NULL;
    if (skpy_env_error_take() < 0) {
        Py_CLEAR(ctx.error);
    } else if (ctx.error) { /* the callback's exception, or KeyboardInterrupt */
        skpy_error_restore(ctx.error);
        ctx.error = NULL;
    } else if (status != SK_OK) {
        skpy_raise(status, sk_trainer_last_error(trainer));
    } else {
        out = result_dict(&result, ctx.updates);
    }
    sk_trainer_destroy(trainer);
    return out;
fail_trainer:
    sk_trainer_destroy(trainer);
    return NULL;
no_memory:
    PyErr_NoMemory();
fail_cfg:
    sk_config_free(cfg);
    sk_config_free(given);
    return NULL;
}

/* --------------------------------------------------------------- evaluate */

/* One outcome of sk_versus_result into d: NAME (count), NAME_rate, NAME_ci95 (low, high). */
static int set_outcome(PyObject *d, const char *name, const sk_outcome *o) {
    char key[32];
    PyObject *count = PyLong_FromLong(o->count), *rate = PyFloat_FromDouble(o->rate);
    PyObject *ci = Py_BuildValue("(dd)", o->low, o->high);
    int failed = !count || !rate || !ci || PyDict_SetItemString(d, name, count) < 0;
    snprintf(key, sizeof key, "%s_rate", name);
    failed = failed || PyDict_SetItemString(d, key, rate) < 0;
    snprintf(key, sizeof key, "%s_ci95", name);
    failed = failed || PyDict_SetItemString(d, key, ci) < 0;
    Py_XDECREF(count), Py_XDECREF(rate), Py_XDECREF(ci);
    return failed ? -1 : 0;
}

/* sk_evaluate_versus's result as `skinner eval --opponent --json` prints it. */
static PyObject *versus_dict(const sk_versus_result *r) {
    PyObject *d = Py_BuildValue("{s:i,s:i,s:d,s:d,s:L,s:d,s:s}", "games", r->games, "episodes",
                                r->games, "mean_return", r->mean_return, "std_return",
                                r->std_return, "opponent_episodes",
                                (long long)r->opponent_episodes, "opponent_mean_return",
                                r->opponent_mean_return, "interval", "wilson95");
    PyObject *roles = PyDict_New();
    if (!d || !roles || set_outcome(d, "wins", &r->win) < 0 ||
        set_outcome(d, "draws", &r->draw) < 0 || set_outcome(d, "losses", &r->loss) < 0)
        goto fail;
    for (int a = 0; a < r->num_roles; a++) {
        PyObject *role = Py_BuildValue("{s:i,s:i,s:i,s:i}", "games", r->role_games[a], "wins",
                                       r->role_wins[a], "draws", r->role_draws[a], "losses",
                                       r->role_losses[a]);
        int failed = !role || PyDict_SetItemString(roles, r->role_names[a], role) < 0;
        Py_XDECREF(role);
        if (failed) goto fail;
    }
    if (PyDict_SetItemString(d, "by_role", roles) < 0) goto fail;
    Py_DECREF(roles);
    return d;
fail:
    Py_XDECREF(d);
    Py_XDECREF(roles);
    return NULL;
}

/* evaluate(checkpoint, episodes, greedy, seed, overrides, opponent, epsilon) -> dict */
PyObject *skpy_evaluate(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *kwlist[] = {"checkpoint", "episodes", "greedy", "seed", "config", "opponent",
                             "epsilon", NULL};
    PyObject *path_obj, *pairs = Py_None;
    PyObject *seed_obj = NULL;
    const char *opponent = NULL;
    int episodes = 10, greedy = 0;
    double epsilon = 0.0;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|ipOOzd", kwlist, &path_obj, &episodes,
                                     &greedy, &seed_obj, &pairs, &opponent, &epsilon))
        return NULL;
    if (opponent && epsilon != 0.0) { /* as `skinner eval --epsilon E --opponent NAME` */
        char text[32];
        PyErr_Format(PyExc_ValueError,
                     "epsilon = %s acts with a DQN checkpoint on its own, not against an "
                     "opponent (expected epsilon = 0 with opponent=)",
                     skpy_num(text, sizeof text, epsilon));
        return NULL;
    }
    if (seed_obj && skpy_seed(seed_obj, &seed) < 0) return NULL;
    if (episodes < 1) {
        PyErr_Format(PyExc_ValueError, "episodes = %d (expected 1 or more)", episodes);
        return NULL;
    }
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(path_obj, &bytes)) return NULL;
    sk_config *over = skpy_config_from_pairs(pairs);
    if (!over) {
        Py_DECREF(bytes);
        return NULL;
    }
    sk_eval_result r;
    sk_versus_result versus;
    sk_status status;
    const char *path = PyBytes_AS_STRING(bytes);
    Py_BEGIN_ALLOW_THREADS
    if (opponent) status = sk_evaluate_versus(path, NULL, opponent, episodes, greedy, seed, &versus);
    else {
        sk_eval_options options = {.overrides = over, .greedy = greedy, .epsilon = epsilon};
        status = sk_evaluate_with_options(path, episodes, seed, &options, &r);
    }
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    sk_config_free(over);
    if (skpy_env_error_take() < 0) return NULL;
    if (status != SK_OK) return skpy_raise(status, NULL);
    if (opponent) return versus_dict(&versus);
    return Py_BuildValue("{s:i,s:d,s:d,s:d,s:d,s:d}", "episodes", r.episodes, "mean_return",
                         r.mean_return, "std_return", r.std_return, "mean_length", r.mean_length,
                         "min_return", r.min_return, "max_return", r.max_return);
}

/* ------------------------------------------------------------------ Agent */

typedef struct {
    PyObject_HEAD
    sk_agent *agent;
    int acting; /* act() calls under way: converting their inputs may release the GIL */
} Agent;

static void agent_dealloc(Agent *self) {
    sk_agent_free(self->agent);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Agent(path, config_pairs) */
static int agent_init(Agent *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"path", "config", NULL};
    PyObject *path_obj, *pairs = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O", kwlist, &path_obj, &pairs)) return -1;
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(path_obj, &bytes)) return -1;
    sk_config *over = skpy_config_from_pairs(pairs);
    if (!over) {
        Py_DECREF(bytes);
        return -1;
    }
    if (self->acting) { /* checked here: the conversions above may run Python code */
        PyErr_SetString(PyExc_RuntimeError,
                        "__init__ while another thread acts with this policy (its network would "
                        "be freed under it)");
        Py_DECREF(bytes);
        sk_config_free(over);
        return -1;
    }
    sk_agent_free(self->agent);
    self->agent = NULL;
    sk_status status = sk_agent_load(&self->agent, PyBytes_AS_STRING(bytes), over);
    Py_DECREF(bytes);
    sk_config_free(over);
    if (status != SK_OK) {
        if (skpy_env_error_take() < 0) return -1;
        skpy_raise(status, NULL);
        return -1;
    }
    return 0;
}

static int agent_ok(Agent *self) {
    if (self->agent) return 1;
    PyErr_SetString(PyExc_ValueError, "the agent is not loaded");
    return 0;
}

static PyObject *shape_actions(PyObject *actions, npy_intp rows, npy_intp width, int single,
                               int one_head);

/* A recurrent policy's memory for `rows` rows: a new float32 array (rows, S)
 * (single: (S,)), zeros for None, else a copy of state_obj; episode_start
 * (rows) bools or None into *starts (a new reference or NULL). */
static PyArrayObject *recurrent_state(Agent *self, PyObject *state_obj, PyObject *start_obj,
                                      npy_intp rows, int single, PyArrayObject **starts) {
    int S = sk_agent_state_size(self->agent);
    npy_intp dims[2] = {rows, S};
    *starts = NULL;
    PyArrayObject *state;
    if (state_obj == Py_None) {
        state = (PyArrayObject *)PyArray_ZEROS(2, dims, NPY_FLOAT32, 0);
    } else {
        PyArrayObject *given = (PyArrayObject *)PyArray_FromAny(
            state_obj, PyArray_DescrFromType(NPY_FLOAT32), 1, 2,
            NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
        if (!given) return NULL;
        if ((PyArray_NDIM(given) == 1) != single || PyArray_SIZE(given) != rows * S) {
            PyErr_Format(PyExc_ValueError,
                         "state must have shape %s%d) to match obs (the policy's memory: %d "
                         "floats per row; None for new episodes)",
                         single ? "(" : "(batch, ", S, S);
            Py_DECREF(given);
            return NULL;
        }
        state = (PyArrayObject *)PyArray_NewCopy(given, NPY_CORDER);
        Py_DECREF(given);
    }
    if (!state || start_obj == Py_None) return state;
    *starts = (PyArrayObject *)PyArray_FromAny(start_obj, PyArray_DescrFromType(NPY_BOOL), 0, 1,
                                               NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
    if (*starts && PyArray_SIZE(*starts) != rows) {
        PyErr_Format(PyExc_ValueError, "episode_start must have one flag per row (%ld)", (long)rows);
        Py_CLEAR(*starts);
    }
    if (!*starts) Py_CLEAR(state);
    return state;
}

/* The rows of obs: flat rows ((obs_size,) or (batch, obs_size)), or, for an env that
 * declares a shape of several dimensions, images as the env gives them ((H, W, C) or
 * (batch, H, W, C)). *width is the values per row; false for any other shape. */
static bool obs_rows(const sk_env_def *env, PyArrayObject *obs, npy_intp *rows, npy_intp *width,
                     int *single) {
    int dims[SK_MAX_OBS_DIMS];
    int count = sk_obs_dims(env, dims), ndim = PyArray_NDIM(obs);
    *width = PyArray_DIM(obs, ndim - 1);
    /* flat rows, unless the array is exactly one image of a 2-d shape, (H, W) */
    bool one_image = count == 2 && ndim == 2 && PyArray_DIM(obs, 0) == dims[0] &&
                     PyArray_DIM(obs, 1) == dims[1] && dims[1] != env->obs_size;
    if (ndim <= 2 && !one_image) {
        *single = ndim == 1;
        *rows = *single ? 1 : PyArray_DIM(obs, 0);
        return true;
    }
    if (count < 2 || (ndim != count && ndim != count + 1)) return false;
    *single = ndim == count;
    int first = *single ? 0 : 1;
    for (int d = 0; d < count; d++)
        if (PyArray_DIM(obs, first + d) != dims[d]) return false;
    *rows = *single ? 1 : PyArray_DIM(obs, 0);
    *width = env->obs_size;
    return true;
}

/* act of a policy that __init__ may not replace meanwhile (self->acting) */
static PyObject *act_held(Agent *self, PyObject *obs_obj, int greedy, PyObject *mask_obj,
                          PyObject *state_obj, PyObject *start_obj) {
    int recurrent = sk_agent_state_size(self->agent) > 0;
    if (!recurrent && (state_obj != Py_None || start_obj != Py_None)) {
        PyErr_SetString(PyExc_ValueError,
                        "the policy is feed-forward: it takes no state or episode_start");
        return NULL;
    }
    const sk_env_def *env = sk_agent_env(self->agent);
    const sk_action_space *space = &env->action_space;
    PyArrayObject *obs = (PyArrayObject *)PyArray_FromAny(
        obs_obj, PyArray_DescrFromType(NPY_FLOAT32), 1, 1 + SK_MAX_OBS_DIMS,
        NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
    if (!obs) return NULL;
    npy_intp rows, width;
    int single;
    if (!obs_rows(env, obs, &rows, &width, &single) || width != env->obs_size ||
        rows > INT32_MAX) {
        char shape[128] = "";
        int dims[SK_MAX_OBS_DIMS], count = sk_obs_dims(env, dims);
        if (count >= 2) { /* ", images (H, W, C) or (batch, H, W, C)" */
            char image[64] = "";
            for (int d = 0, used = 0; d < count && used < (int)sizeof image; d++)
                used += snprintf(image + used, sizeof image - (size_t)used, d ? ", %d" : "%d",
                                 dims[d]);
            snprintf(shape, sizeof shape, ", or images (%s) or (batch, %s)", image, image);
        }
        char got[128] = "";
        for (int d = 0, used = 0; d < PyArray_NDIM(obs) && used < (int)sizeof got; d++)
            used += snprintf(got + used, sizeof got - (size_t)used, d ? ", %ld" : "%ld",
                             (long)PyArray_DIM(obs, d));
        PyErr_Format(PyExc_ValueError, "obs must have shape (%d,) or (batch, %d)%s for %s; got (%s)",
                     env->obs_size, env->obs_size, shape, env->id, got);
        Py_DECREF(obs);
        return NULL;
    }
    PyArrayObject *mask = NULL;
    if (mask_obj != Py_None) {
        mask = (PyArrayObject *)PyArray_FromAny(mask_obj, PyArray_DescrFromType(NPY_BOOL), 1, 2,
                                                NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
        if (!mask) {
            Py_DECREF(obs);
            return NULL;
        }
        npy_intp mrows = PyArray_NDIM(mask) == 1 ? 1 : PyArray_DIM(mask, 0);
        npy_intp mwidth = PyArray_DIM(mask, PyArray_NDIM(mask) - 1);
        if (!env->mask_size || mrows != rows || mwidth != env->mask_size ||
            (PyArray_NDIM(mask) == 1) != single) {
            if (!env->mask_size)
                PyErr_Format(PyExc_ValueError, "%s has no action masks (expected None)", env->id);
            else
                PyErr_Format(PyExc_ValueError, "action_mask must have shape %s%d) to match obs",
                             single ? "(" : "(batch, ", env->mask_size);
            Py_DECREF(obs);
            Py_DECREF(mask);
            return NULL;
        }
    }
    npy_intp dims[2] = {rows, space->kind == SK_SPACE_DISCRETE ? space->num_heads : space->dim};
    int one_head = space->kind == SK_SPACE_DISCRETE && space->num_heads == 1;
    PyObject *actions = PyArray_SimpleNew(2, dims, space->kind == SK_SPACE_DISCRETE ? NPY_INT32 : NPY_FLOAT32);
    if (!actions) {
        Py_DECREF(obs);
        Py_XDECREF(mask);
        return NULL;
    }
    PyArrayObject *state = NULL, *starts = NULL;
    if (recurrent && !(state = recurrent_state(self, state_obj, start_obj, rows, single, &starts))) {
        Py_DECREF(obs);
        Py_XDECREF(mask);
        Py_DECREF(actions);
        return NULL;
    }
    sk_status status;
    void *out = PyArray_DATA((PyArrayObject *)actions);
    const float *obs_data = PyArray_DATA(obs);
    const uint8_t *mask_data = mask ? PyArray_DATA(mask) : NULL;
    /* with the GIL held: an sk_agent has one scratch space and one sampling
     * stream, so two threads must not act at once (nor one re-init it) */
    if (recurrent)
        status = sk_agent_act_recurrent(self->agent, obs_data, mask_data,
                                        starts ? PyArray_DATA(starts) : NULL, PyArray_DATA(state),
                                        (int)rows, greedy,
                                        space->kind == SK_SPACE_DISCRETE ? out : NULL,
                                        space->kind == SK_SPACE_CONTINUOUS ? out : NULL);
    else
        status = sk_agent_act(self->agent, obs_data, mask_data, (int)rows, greedy,
                              space->kind == SK_SPACE_DISCRETE ? out : NULL,
                              space->kind == SK_SPACE_CONTINUOUS ? out : NULL);
    Py_DECREF(obs);
    Py_XDECREF(mask);
    Py_XDECREF(starts);
    if (status != SK_OK) {
        Py_DECREF(actions);
        Py_XDECREF(state);
        return skpy_raise(status, NULL);
    }
    PyObject *shaped_actions = shape_actions(actions, rows, dims[1], single, one_head);
    if (!recurrent || !shaped_actions) {
        Py_XDECREF(state);
        return shaped_actions;
    }
    PyObject *state_out = (PyObject *)state;
    if (single) { /* one observation, one memory: (S,) */
        npy_intp flat[1] = {PyArray_SIZE(state)};
        PyArray_Dims one = {flat, 1};
        state_out = PyArray_Newshape(state, &one, NPY_CORDER);
        Py_DECREF(state);
        if (!state_out) {
            Py_DECREF(shaped_actions);
            return NULL;
        }
    }
    return Py_BuildValue("(NN)", shaped_actions, state_out);
}

/* act(obs (B, obs_size), greedy, masks (B, mask_size) or None, state, episode_start)
 * -> actions, or (actions, state) for a recurrent policy */
static PyObject *agent_act(Agent *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"obs", "deterministic", "action_mask", "state", "episode_start", NULL};
    PyObject *obs_obj, *mask_obj = Py_None, *state_obj = Py_None, *start_obj = Py_None;
    int greedy = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|pOOO", kwlist, &obs_obj, &greedy, &mask_obj,
                                     &state_obj, &start_obj))
        return NULL;
    if (!agent_ok(self)) return NULL;
    self->acting++;
    PyObject *result = act_held(self, obs_obj, greedy, mask_obj, state_obj, start_obj);
    self->acting--;
    return result;
}

/* Gymnasium's shapes: Discrete (batch,), others (batch, k); a single
 * observation gives a scalar or (k,). Steals actions. */
static PyObject *shape_actions(PyObject *actions, npy_intp rows, npy_intp width, int single,
                               int one_head) {
    npy_intp shape[2] = {rows, width};
    PyArray_Dims newshape = {shape, 2};
    if (single) {
        shape[0] = width;
        newshape.len = one_head ? 0 : 1;
    } else if (one_head) {
        newshape.len = 1;
    }
    PyObject *shaped = PyArray_Newshape((PyArrayObject *)actions, &newshape, NPY_CORDER);
    Py_DECREF(actions);
    if (shaped && single && one_head) { /* a 0-d array: give the scalar */
        PyObject *scalar = PyArray_Return((PyArrayObject *)shaped);
        return scalar;
    }
    return shaped;
}

static PyObject *agent_seed(Agent *self, PyObject *arg) {
    if (!agent_ok(self)) return NULL;
    unsigned long long s;
    if (skpy_seed(arg, &s) < 0) return NULL;
    sk_agent_seed(self->agent, s);
    Py_RETURN_NONE;
}

static PyObject *agent_state_dict(Agent *self, PyObject *unused) {
    (void)unused;
    if (!agent_ok(self)) return NULL;
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < sk_agent_num_tensors(self->agent); i++) {
        sk_tensor_view t;
        if (sk_agent_tensor(self->agent, i, &t) != SK_OK) {
            Py_DECREF(d);
            return skpy_raise(SK_ERR_INVALID, NULL);
        }
        npy_intp dims[2] = {(npy_intp)t.shape[0], (npy_intp)t.shape[1]};
        PyObject *a = PyArray_SimpleNew(t.ndim, dims, NPY_FLOAT32);
        if (a) memcpy(PyArray_DATA((PyArrayObject *)a), t.data, (size_t)PyArray_NBYTES((PyArrayObject *)a));
        if (!a || PyDict_SetItemString(d, t.name, a) < 0) Py_CLEAR(d);
        Py_XDECREF(a);
    }
    return d;
}

static PyObject *agent_state_size(Agent *self, void *closure) {
    (void)closure;
    if (!agent_ok(self)) return NULL;
    return PyLong_FromLong(sk_agent_state_size(self->agent));
}

static PyObject *agent_env_id(Agent *self, void *closure) {
    (void)closure;
    if (!agent_ok(self)) return NULL;
    return PyUnicode_FromString(sk_agent_env(self->agent)->id);
}

/* export_onnx(path) / export_c(path): the policy leaves skinner (docs/export.md). */
static PyObject *agent_export(Agent *self, PyObject *arg,
                              sk_status (*write)(const sk_agent *, const char *)) {
    if (!agent_ok(self)) return NULL;
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
    sk_status status = write(self->agent, PyBytes_AS_STRING(bytes));
    Py_DECREF(bytes);
    if (status != SK_OK) return skpy_raise(status, NULL);
    Py_RETURN_NONE;
}

static PyObject *agent_export_onnx(Agent *self, PyObject *arg) {
    return agent_export(self, arg, sk_agent_export_onnx);
}

static PyObject *agent_export_c(Agent *self, PyObject *arg) {
    return agent_export(self, arg, sk_agent_export_c);
}

static PyMethodDef agent_methods[] = {
    {"act", (PyCFunction)(void (*)(void))agent_act, METH_VARARGS | METH_KEYWORDS,
     "act(obs, deterministic=False, action_mask=None, state=None, episode_start=None) -> "
     "actions, or (actions, state) for a recurrent policy"},
    {"seed", (PyCFunction)agent_seed, METH_O, "seed(n): restarts the sampling stream"},
    {"state_dict", (PyCFunction)agent_state_dict, METH_NOARGS,
     "state_dict() -> {name: float32 array}, named as in the checkpoint"},
    {"export_onnx", (PyCFunction)agent_export_onnx, METH_O,
     "export_onnx(path): the policy as an ONNX model (opset 17; docs/export.md)"},
    {"export_c", (PyCFunction)agent_export_c, METH_O,
     "export_c(path): the policy as one C99 header needing only libm (docs/export.md)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef agent_getset[] = {
    {"env_id", (getter)agent_env_id, NULL, "the env the policy was trained on", NULL},
    {"state_size", (getter)agent_state_size, NULL,
     "floats of one row's memory (0: feed-forward; GRU h; LSTM h then c)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject skpy_AgentType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "skinner._core.Agent",
    .tp_basicsize = sizeof(Agent),
    .tp_dealloc = (destructor)agent_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "a policy loaded from a checkpoint (the base of skinner.Policy)",
    .tp_methods = agent_methods,
    .tp_getset = agent_getset,
    .tp_init = (initproc)agent_init,
    .tp_new = PyType_GenericNew,
};

int skpy_agent_ready(PyObject *module) { return PyModule_AddType(module, &skpy_AgentType); }
