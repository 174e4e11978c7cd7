/*
 * Models: the embedded files (models_embedded.c, generated from models/ by
 * embed.cmake) loaded through MuJoCo's virtual file system, or any MJCF file
 * named by env.model. Each source is compiled once and kept for the life of
 * the process: every env and every batch of a task shares one read-only
 * mjModel (MuJoCo's mj_step only reads its model), so a second batch, or a
 * configure before a create, costs a lookup.
 */
#include "mujoco_env.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mj_embedded_model {
    const char *name;
    const unsigned char *bytes;
    int size;
} mj_embedded_model;
extern const mj_embedded_model mj_embedded_models[];

const char *mj_embedded(const char *name, int *size) {
    for (const mj_embedded_model *e = mj_embedded_models; e->name; e++)
        if (strcmp(e->name, name) == 0) {
            *size = e->size;
            return (const char *)e->bytes;
        }
    return NULL;
}

/* The models loaded so far: source ("embedded:NAME" or the absolute path),
 * appended under g_lock and never freed (envs hold pointers into them). */
#define MAX_MODELS 64
typedef struct loaded {
    char source[4200];
    mjModel *model;
} loaded;
static loaded g_loaded[MAX_MODELS];
static int g_num_loaded;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* Compiles source: the embedded file `name` (path NULL) or the file path. */
static mjModel *compile(const char *name, const char *path, char *error, int error_size) {
    if (path) return mj_loadXML(path, NULL, error, error_size);
    int size = 0;
    const char *bytes = mj_embedded(name, &size);
    mjVFS vfs;
    mj_defaultVFS(&vfs);
    mjModel *model = NULL;
    if (mj_addBufferVFS(&vfs, name, bytes, size) == 0)
        model = mj_loadXML(name, &vfs, error, error_size);
    else
        snprintf(error, (size_t)error_size, "MuJoCo's VFS refused the buffer");
    mj_deleteVFS(&vfs);
    return model;
}

static sk_status load(const char *name, const char *path, const mjModel **out) {
    char source[4200];
    snprintf(source, sizeof source, "%s%s", path ? "" : "embedded:", path ? path : name);
    pthread_mutex_lock(&g_lock);
    for (int k = 0; k < g_num_loaded; k++)
        if (strcmp(g_loaded[k].source, source) == 0) {
            *out = g_loaded[k].model;
            pthread_mutex_unlock(&g_lock);
            return SK_OK;
        }
    sk_status status = SK_OK;
    char error[1024] = "";
    mjModel *model = g_num_loaded < MAX_MODELS ? compile(name, path, error, sizeof error) : NULL;
    if (g_num_loaded == MAX_MODELS)
        status = sk_fail(SK_ERR_INVALID, "MuJoCo: %d models are loaded already (the limit)",
                         MAX_MODELS);
    else if (!model)
        status = sk_fail(path ? SK_ERR_IO : SK_ERR_INVALID, "MuJoCo could not load %s%s: %s",
                         path ? "env.model " : "the embedded model ", path ? path : name,
                         error[0] ? error : "(no message)");
    else {
        snprintf(g_loaded[g_num_loaded].source, sizeof g_loaded[g_num_loaded].source, "%s",
                 source);
        g_loaded[g_num_loaded++].model = model;
        *out = model;
    }
    pthread_mutex_unlock(&g_lock);
    return status;
}

/* Whether model m has what task reads (naming the first thing missing). */
static sk_status check_needs(const mj_task *task, const mjModel *m, const char *source,
                             mj_model_ref *out) {
    const mj_needs *needs = &task->needs;
    struct { const char *what; int have, need; } sizes[] = {
        {"positions (nq)", m->nq, needs->min_nq},   {"velocities (nv)", m->nv, needs->min_nv},
        {"actuators (nu)", m->nu, needs->min_nu},   {"bodies (nbody)", m->nbody, needs->min_nbody},
        {"sites (nsite)", m->nsite, needs->min_nsite},
    };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        if (sizes[k].have < sizes[k].need)
            return sk_fail(SK_ERR_INVALID,
                           "%s: model %s has %d %s, but the task reads at least %d",
                           task->id, source, sizes[k].have, sizes[k].what, sizes[k].need);
    if (m->nu > SK_MAX_ACTION_DIM)
        return sk_fail(SK_ERR_INVALID,
                       "%s: model %s has %d actuators, more than skinner's actions hold (%d, "
                       "SK_MAX_ACTION_DIM)",
                       task->id, source, m->nu, SK_MAX_ACTION_DIM);
    struct { int type; const char *kind; const char *const *names; } lists[] = {
        {mjOBJ_BODY, "body", needs->bodies}, {mjOBJ_SITE, "site", needs->sites}};
    int n = 0;
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < 4 && lists[l].names[k]; k++) {
            int id = mj_name2id(m, lists[l].type, lists[l].names[k]);
            if (id < 0)
                return sk_fail(SK_ERR_INVALID,
                               "%s: model %s has no %s named '%s', which the task reads",
                               task->id, source, lists[l].kind, lists[l].names[k]);
            out->ids[n++] = id;
        }
    return SK_OK;
}

sk_status mj_model_for(const mj_task *task, const sk_config *cfg, mj_model_ref *out) {
    memset(out, 0, sizeof *out);
    const char *path = NULL;
    sk_status status = sk_cfg_path(cfg, "env.model", "", &path);
    if (status != SK_OK) return status;
    if (path && !path[0]) path = NULL;
    int size;
    if (!path && !mj_embedded(task->model, &size))
        return sk_fail(SK_ERR_INVALID,
                       "%s: this build embeds no %s (modules/mujoco/models/ had none when it was "
                       "built); give a model file with --env.model FILE",
                       task->id, task->model);
    const mjModel *model = NULL;
    status = load(task->model, path, &model);
    if (status != SK_OK) return status;
    char source[4200];
    snprintf(source, sizeof source, "%s%s", path ? path : task->model, path ? "" : " (embedded)");
    status = check_needs(task, model, source, out);
    if (status == SK_OK) out->model = model;
    return status;
}
