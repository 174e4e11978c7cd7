/* A command's env and checkpoint, resolved once (plan.h). */
#include "plan.h"

#include "../core/config.h"
#include "../envs/registry.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>


sk_status sk_run_plan_init(sk_run_plan *plan) {
    memset(plan, 0, sizeof *plan);
    plan->cfg = sk_config_new();
    return plan->cfg ? SK_OK : sk_fail(SK_ERR_NOMEM, "out of memory");
}

void sk_run_plan_free(sk_run_plan *plan) {
    if (plan->checkpoint) sk_st_close(plan->checkpoint);
    sk_config_free(plan->checkpoint_cfg);
    sk_config_free(plan->cfg);
    memset(plan, 0, sizeof *plan);
}

sk_status sk_run_plan_set_checkpoint(sk_run_plan *plan, const char *file_or_run_dir) {
    struct stat info;
    bool run_dir = stat(file_or_run_dir, &info) == 0 && S_ISDIR(info.st_mode);
    int length = snprintf(plan->checkpoint_path, sizeof plan->checkpoint_path,
                          run_dir ? "%s/policy.safetensors" : "%s", file_or_run_dir);
    if (length >= 0 && (size_t)length < sizeof plan->checkpoint_path) return SK_OK;
    plan->checkpoint_path[0] = '\0';
    /* the room left for the argument: the whole buffer, or less the file name a run
     * folder gets */
    size_t room = sizeof plan->checkpoint_path - 1 - (run_dir ? strlen("/policy.safetensors") : 0);
    return sk_fail(SK_ERR_INVALID, "checkpoint %s '%s' is too long (at most %zu bytes)",
                   run_dir ? "run folder" : "path", file_or_run_dir, room);
}

sk_status sk_run_plan_open_checkpoint(sk_run_plan *plan) {
    if (plan->checkpoint) return SK_OK;
    if (!plan->checkpoint_path[0])
        return sk_fail(SK_ERR_INVALID, "the command has no checkpoint to read");
    if (plan->checkpoint_closed)
        return sk_fail(SK_ERR_INVALID, "checkpoint '%s' was read and closed: a plan opens it once",
                       plan->checkpoint_path);
    if (plan->checkpoint_status != SK_OK)
        return sk_fail(plan->checkpoint_status, "%s", plan->checkpoint_error);
    sk_status status = sk_st_open(&plan->checkpoint, plan->checkpoint_path);
    if (status == SK_OK) {
        const char *text = sk_st_meta_get(plan->checkpoint, "config");
        plan->checkpoint_cfg = sk_config_new();
        if (!plan->checkpoint_cfg) status = sk_fail(SK_ERR_NOMEM, "out of memory");
        /* a checkpoint without a config is refused by its reader, naming the file */
        else if (text) status = sk_config_load_string(plan->checkpoint_cfg, text);
    }
    if (status != SK_OK) { /* remembered: a later call repeats it, as plan.h says */
        plan->checkpoint_status = status;
        snprintf(plan->checkpoint_error, sizeof plan->checkpoint_error, "%s", sk_last_error());
        if (plan->checkpoint) sk_st_close(plan->checkpoint);
        plan->checkpoint = NULL;
        sk_config_free(plan->checkpoint_cfg);
        plan->checkpoint_cfg = NULL;
    }
    return status;
}

void sk_run_plan_close_checkpoint(sk_run_plan *plan) {
    if (!plan->checkpoint) return;
    sk_st_close(plan->checkpoint);
    plan->checkpoint = NULL;
    plan->checkpoint_closed = true;
}

/* Whether the plugin at path is loaded already (under this or another name). */
static bool plugin_loaded(const char *path) {
    char wanted[PATH_MAX], loaded[PATH_MAX];
    if (!realpath(path, wanted)) return false; /* sk_env_load_plugin names the problem */
    const sk_env_def *const *envs = sk_env_list();
    for (int i = 0; envs[i]; i++) {
        const char *from = sk_env_plugin_path(envs[i]);
        if (from && realpath(from, loaded) && strcmp(loaded, wanted) == 0) return true;
    }
    return false;
}

sk_status sk_run_plan_load_plugin(const char *path) {
    if (!path || !path[0] || plugin_loaded(path)) return SK_OK;
    return sk_env_load_plugin(path);
}

sk_status sk_run_plan_resolve_env(sk_run_plan *plan, const char *name) {
    char plugin[PATH_MAX];
    const char *id = NULL;
    if (!name) return sk_fail(SK_ERR_UNKNOWN_ENV, "no environment given (set env.id)");
    if (sk_env_split_name(name, plugin, sizeof plugin, &id) != SK_OK ||
        sk_run_plan_load_plugin(plugin) != SK_OK)
        return SK_ERR_UNKNOWN_ENV; /* as sk_env_find reports FILE.so:ID's plugin */
    char why[1024] = ""; /* why the checkpoint's plugin is not loaded */
    if (plan->checkpoint_path[0]) {
        sk_status status = sk_run_plan_open_checkpoint(plan);
        const char *recorded = status == SK_OK ? sk_config_get(plan->checkpoint_cfg, "env.plugin")
                                               : NULL;
        if (recorded) status = sk_run_plan_load_plugin(recorded);
        if (status != SK_OK) snprintf(why, sizeof why, "%s", sk_last_error());
    }
    plan->env = sk_env_find(id);
    if (plan->env) return SK_OK;
    if (why[0]) {
        char lookup[2048];
        snprintf(lookup, sizeof lookup, "%s", sk_last_error());
        sk_fail(SK_ERR_UNKNOWN_ENV, "%s; nor could the plugin its checkpoint names be loaded: %s",
                lookup, why);
    }
    return SK_ERR_UNKNOWN_ENV;
}

bool sk_run_plan_names(const sk_env_def *env, const char *name) {
    char plugin[PATH_MAX];
    if (!env || !name || sk_env_split_name(name, plugin, sizeof plugin, &name) != SK_OK)
        return false;
    return strcasecmp(env->id, name) == 0 || (env->alias && strcasecmp(env->alias, name) == 0);
}
