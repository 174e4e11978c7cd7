/*
 * The list of environments: the built-ins first, in a fixed order, then the
 * envs a host program registered (sk_env_register) or a plugin brought
 * (sk_env_load_plugin, plugin.c) or a module (skinner/module.h, loaded at the
 * first lookup, listing or registration), in the order they came. Adding a built-in:
 * write src/envs/NAME.c exporting an sk_env_def, declare it here and add it to
 * g_envs. Every table, built-in or not, passes sk_env_validate.
 */
#include "registry.h"
#include "acrobot.h"
#include "cartpole.h"
#include "mountaincar.h"
#include "pendulum.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#define NUM_BUILTIN_ENVS 7
#define PLUGIN_SEPARATOR ".so:"

/* Entries are only ever appended, under g_lock, into slots that were NULL, so
 * a list read by sk_env_list stays NULL-terminated. */
static const sk_env_def *g_envs[NUM_BUILTIN_ENVS + SK_MAX_REGISTERED_ENVS + 1] = {
    &sk_env_cartpole,
    &sk_env_cartpole_p,
    &sk_env_acrobot,
    &sk_env_mountaincar,
    &sk_env_mountaincar_continuous,
    &sk_env_pendulum,
    &sk_env_pendulum_p,
};
static int g_num_envs = NUM_BUILTIN_ENVS;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

const sk_env_def *const *sk_env_list(void) {
    sk_env_load_modules();
    return g_envs;
}

/* Writes a formatted reason into why; returns false so callers can `return invalid(...)`. */
static bool invalid(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool invalid(char *why, size_t why_size, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(why, why_size, fmt, args);
    va_end(args);
    return false;
}

static bool validate_space(const sk_env_def *env, char *why, size_t why_size) {
    const sk_action_space *space = &env->action_space;
    if (space->kind == SK_SPACE_DISCRETE) {
        if (space->num_heads < 1 || space->num_heads > SK_MAX_HEADS)
            return invalid(why, why_size, "action_space.num_heads = %d (expected 1..%d)",
                           space->num_heads, SK_MAX_HEADS);
        int64_t logits = 0;
        for (int h = 0; h < space->num_heads; h++) {
            if (space->head_sizes[h] < 1)
                return invalid(why, why_size, "action_space.head_sizes[%d] = %d (expected >= 1)",
                               h, space->head_sizes[h]);
            logits += space->head_sizes[h];
        }
        if (logits > INT_MAX)
            return invalid(why, why_size,
                           "action_space.head_sizes add up to %lld choices (expected at most %d)",
                           (long long)logits, INT_MAX);
        for (int k = 0; k < SK_MAX_HEAD0_PRIOR; k++)
            if (!isfinite(space->head0_prior[k]))
                return invalid(why, why_size, "action_space.head0_prior[%d] = %g (expected a "
                                              "finite logit offset)",
                               k, (double)space->head0_prior[k]);
    } else if (space->kind == SK_SPACE_CONTINUOUS) {
        if (space->dim < 1 || space->dim > SK_MAX_ACTION_DIM)
            return invalid(why, why_size, "action_space.dim = %d (expected 1..%d)", space->dim,
                           SK_MAX_ACTION_DIM);
        for (int d = 0; d < space->dim; d++)
            if (!isfinite(space->low[d]) || !isfinite(space->high[d]) ||
                !(space->low[d] < space->high[d]))
                return invalid(why, why_size,
                               "action_space.low[%d] = %g, high[%d] = %g (expected finite bounds "
                               "with low < high)",
                               d, (double)space->low[d], d, (double)space->high[d]);
    } else {
        return invalid(why, why_size,
                       "action_space.kind = %d (expected SK_SPACE_DISCRETE or SK_SPACE_CONTINUOUS)",
                       (int)space->kind);
    }
    int expected_mask = sk_action_mask_size(space);
    if (expected_mask < 0) /* the layout's size, summed in 64 bits, passes INT_MAX */
        return invalid(why, why_size,
                       "action_space: its mask layout needs more than %d bytes per env "
                       "(head_sizes[0] x head_sizes[h]%s; expected smaller heads)",
                       INT_MAX, space->masks_by_head0 ? " with masks_by_head0" : "");
    if (env->mask_size != 0 && env->mask_size != expected_mask) {
        if (expected_mask == 0)
            return invalid(why, why_size, "mask_size = %d (expected 0: a continuous action "
                                          "space has no masks)", env->mask_size);
        return invalid(why, why_size, "mask_size = %d (expected 0 for no masks, or %d, what "
                                      "sk_action_mask_size gives for this action space)",
                       env->mask_size, expected_mask);
    }
    return true;
}

/* The extras are optional, but what an env declares there is called or read
 * as surely as its step: checked as strictly. */
static bool validate_extras(const sk_env_def *env, char *why, size_t why_size) {
    const sk_env_extras *extras = env->extras;
    if (!extras) return true;
    if (extras->preset && (!extras->preset[strspn(extras->preset, " ")] ||
                           strchr(extras->preset, '/')))
        return invalid(why, why_size, "extras.preset \"%s\" is empty or contains '/' (expected "
                                      "NULL or the basenames of presets in configs/, separated "
                                      "by spaces)",
                       extras->preset);
    if (extras->bench_num_envs < 0)
        return invalid(why, why_size, "extras.bench_num_envs = %d (expected 0 for the default, or "
                                      "more)", extras->bench_num_envs);
    if (extras->action_names) {
        bool discrete = env->action_space.kind == SK_SPACE_DISCRETE;
        int choices = discrete ? env->action_space.head_sizes[0] : 0, k = 0;
        /* reads at most one entry past head 0's choices: the NULL that ends the list */
        while (k <= choices && extras->action_names[k]) {
            if (!extras->action_names[k][0])
                return invalid(why, why_size, "extras.action_names[%d] is empty (expected a name "
                                              "for each of head 0's choices)", k);
            k++;
        }
        if (k != choices)
            return invalid(why, why_size, "extras.action_names lists %s%d names (expected NULL, or "
                                          "one name for each of head 0's %d choices, then NULL)",
                           k > choices ? "more than " : "", k > choices ? choices : k, choices);
    }
    const sk_env_evaluation *evaluation = extras->evaluation;
    if (evaluation) {
        if (!evaluation->name || !evaluation->name[0])
            return invalid(why, why_size, "extras.evaluation->name is empty (expected a name, "
                                          "e.g. \"ranking\")");
        if (!evaluation->run)
            return invalid(why, why_size, "extras.evaluation->run is NULL (expected a function: "
                                          "extras.evaluation declares an evaluation)");
    }
    return true;
}

/* The observation's dtype and shape: a known dtype, a shape of positive
 * sizes (then zeros) whose product is obs_size, and a uint8 Box within 0..255. */
static bool validate_obs_type(const sk_env_def *env, char *why, size_t why_size) {
    if ((unsigned)env->obs_dtype > (unsigned)SK_OBS_U8)
        return invalid(why, why_size, "obs_dtype = %d (expected SK_OBS_F32 (0) or SK_OBS_U8 (1))",
                       (int)env->obs_dtype);
    int64_t product = 1;
    int dims = 0;
    for (int d = 0; d < SK_MAX_OBS_DIMS; d++) {
        int size = env->obs_shape[d];
        if (size < 0 || (size > 0 && dims < d))
            return invalid(why, why_size, "obs_shape[%d] = %d (expected positive sizes, then "
                                          "zeros: all zero for a vector of obs_size)", d, size);
        if (size == 0) continue;
        dims++;
        product *= size;
        if (product > SK_MAX_OBS_SIZE) break;
    }
    if (dims > 0 && product != env->obs_size)
        return invalid(why, why_size, "obs_shape's sizes multiply to %lld but obs_size = %d "
                                      "(expected the same number of values)",
                       (long long)product, env->obs_size);
    for (int k = 0; env->obs_dtype == SK_OBS_U8 && env->obs_low && k < env->obs_size; k++)
        if (env->obs_low[k] < 0.0f || env->obs_high[k] > 255.0f)
            return invalid(why, why_size, "obs_low[%d] = %g, obs_high[%d] = %g for uint8 "
                                          "observations (expected bounds within 0..255)",
                           k, (double)env->obs_low[k], k, (double)env->obs_high[k]);
    return true;
}

bool sk_env_validate(const sk_env_def *env, char *why, size_t why_size) {
    if (!env) return invalid(why, why_size, "the table is NULL");
    if (!env->id || !env->id[0])
        return invalid(why, why_size, "id is empty (expected a name with a version, e.g. "
                                      "\"GridWorld-v0\")");
    if (strchr(env->id, ':'))
        return invalid(why, why_size, "id \"%s\" contains ':' (which separates FILE.so:ID)",
                       env->id);
    if (env->alias && (!env->alias[0] || strchr(env->alias, ':')))
        return invalid(why, why_size, "alias \"%s\" is empty or contains ':' (expected NULL or a "
                                      "short name)", env->alias);
    if (env->obs_size < 1 || env->obs_size > SK_MAX_OBS_SIZE)
        return invalid(why, why_size, "obs_size = %d (expected 1..%d, SK_MAX_OBS_SIZE)",
                       env->obs_size, SK_MAX_OBS_SIZE);
    if ((env->obs_low == NULL) != (env->obs_high == NULL))
        return invalid(why, why_size, "obs_low is %s but obs_high is %s (expected both NULL for "
                                      "an unbounded observation, or both set)",
                       env->obs_low ? "set" : "NULL", env->obs_high ? "set" : "NULL");
    for (int k = 0; env->obs_low && k < env->obs_size; k++)
        if (isnan(env->obs_low[k]) || isnan(env->obs_high[k]) ||
            !(env->obs_low[k] <= env->obs_high[k]))
            return invalid(why, why_size, "obs_low[%d] = %g, obs_high[%d] = %g (expected "
                                          "low <= high, +-INFINITY for an unbounded side)",
                           k, (double)env->obs_low[k], k, (double)env->obs_high[k]);
    if (!validate_obs_type(env, why, why_size)) return false;
    if (env->num_agents < 0 || env->num_agents > SK_MAX_AGENTS)
        return invalid(why, why_size, "num_agents = %d (expected 0 or 1 for a single-agent env, "
                                      "or 2..%d agents per env)", env->num_agents, SK_MAX_AGENTS);
    for (int k = 0; env->agent_names && k < sk_env_agents(env); k++)
        if (!env->agent_names[k] || !env->agent_names[k][0])
            return invalid(why, why_size, "agent_names[%d] is empty (expected a name for each of "
                                          "the %d agents, or agent_names NULL)", k, env->num_agents);
    if (env->max_episode_steps < 1)
        return invalid(why, why_size, "max_episode_steps = %d (expected >= 1)",
                       env->max_episode_steps);
    if (isinf(env->solved_threshold))
        return invalid(why, why_size, "solved_threshold = %g (expected a finite number, or NAN "
                                      "for none)", env->solved_threshold);
    if (env->num_log_fields < 2 || env->num_log_fields > SK_MAX_LOG_FIELDS)
        return invalid(why, why_size, "num_log_fields = %d (expected 2..%d: return, length, then "
                                      "the env's own)", env->num_log_fields, SK_MAX_LOG_FIELDS);
    for (int k = 0; k < env->num_log_fields; k++)
        if (!env->log_names[k] || !env->log_names[k][0])
            return invalid(why, why_size, "log_names[%d] is empty (expected a name for each of "
                                          "the %d log fields)", k, env->num_log_fields);
    const struct {
        const char *name;
        bool present;
    } functions[] = {
        {"create", env->create != NULL}, {"destroy", env->destroy != NULL},
        {"reset", env->reset != NULL},   {"step", env->step != NULL},
        {"state_arrays", env->state_arrays != NULL},
    };
    for (size_t f = 0; f < sizeof functions / sizeof functions[0]; f++)
        if (!functions[f].present)
            return invalid(why, why_size, "%s is NULL (expected a function)", functions[f].name);
    return validate_space(env, why, why_size) && validate_extras(env, why, why_size);
}

/* The env among the first count of envs whose id or alias is name, case-insensitively. */
static const sk_env_def *holder_of(const char *name, const sk_env_def *const *envs, int count) {
    for (int i = 0; name && i < count; i++)
        if (strcasecmp(envs[i]->id, name) == 0 ||
            (envs[i]->alias && strcasecmp(envs[i]->alias, name) == 0))
            return envs[i];
    return NULL;
}

/* "plugin 'x.so': env table 1 (\"Grid-v0\")" or "cannot register env \"Grid-v0\"". */
static void describe(char *out, size_t size, const char *source, int index, const sk_env_def *env) {
    const char *id = env && env->id ? env->id : "(no id)";
    if (source) snprintf(out, size, "%s: env table %d (\"%s\")", source, index, id);
    else snprintf(out, size, "cannot register env \"%s\"", id);
}

/* Checks tables for sk_env_register_all under g_lock. */
static sk_status check_tables(const sk_env_def *const *envs, int count, const char *source) {
    char what[512], why[512];
    if (g_num_envs + count > NUM_BUILTIN_ENVS + SK_MAX_REGISTERED_ENVS)
        return sk_fail(SK_ERR_INVALID, "%s: %d more envs would pass the limit of %d registered "
                                       "envs (%d are registered)",
                       source ? source : "cannot register env", count, SK_MAX_REGISTERED_ENVS,
                       g_num_envs - NUM_BUILTIN_ENVS);
    for (int i = 0; i < count; i++) {
        describe(what, sizeof what, source, i, envs[i]);
        if (!sk_env_validate(envs[i], why, sizeof why))
            return sk_fail(SK_ERR_INVALID, "%s: %s", what, why);
        const char *names[2] = {envs[i]->id, envs[i]->alias};
        for (int n = 0; n < 2; n++) {
            const sk_env_def *holder = holder_of(names[n], g_envs, g_num_envs);
            if (!holder) holder = holder_of(names[n], envs, i);
            if (holder)
                return sk_fail(SK_ERR_INVALID, "%s: %s \"%s\" is already taken by %s (expected a "
                                               "name no registered env uses as id or alias)",
                               what, n ? "alias" : "id", names[n], holder->id);
        }
    }
    return SK_OK;
}

sk_status sk_env_register_all(const sk_env_def *const *envs, int count, const char *source) {
    pthread_mutex_lock(&g_lock);
    sk_status status = check_tables(envs, count, source);
    if (status == SK_OK)
        for (int i = 0; i < count; i++) g_envs[g_num_envs++] = envs[i];
    pthread_mutex_unlock(&g_lock);
    return status;
}

sk_status sk_env_register(const sk_env_def *env) {
    sk_env_load_modules(); /* first: an id a module holds is taken */
    return sk_env_register_all(&env, 1, NULL);
}

sk_status sk_env_split_name(const char *name, char *plugin, size_t size, const char **id) {
    const char *sep = NULL;
    for (const char *at = strstr(name, PLUGIN_SEPARATOR); at; at = strstr(at + 1, PLUGIN_SEPARATOR))
        sep = at;
    plugin[0] = '\0';
    *id = name;
    if (!sep) return SK_OK;
    size_t length = (size_t)(sep - name) + strlen(".so");
    if (length >= size)
        return sk_fail(SK_ERR_INVALID, "plugin path in '%s' is too long (at most %zu bytes)", name,
                       size - 1);
    memcpy(plugin, name, length);
    plugin[length] = '\0';
    *id = sep + strlen(PLUGIN_SEPARATOR);
    return SK_OK;
}

/* Splits "FILE.so:ID" and loads FILE; *id points into name. */
static bool load_plugin_of(const char *name, const char **id) {
    char path[4096];
    if (sk_env_split_name(name, path, sizeof path, id) != SK_OK) return false;
    return !path[0] || sk_env_load_plugin(path) == SK_OK;
}

const sk_env_def *sk_env_find(const char *name) {
    const char *id = name;
    sk_env_load_modules();
    if (name && !load_plugin_of(name, &id)) return NULL;
    pthread_mutex_lock(&g_lock);
    const sk_env_def *found = holder_of(id, g_envs, g_num_envs);
    if (!found) {
        char known[2048] = "";
        for (int i = 0; i < g_num_envs; i++) {
            strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, g_envs[i]->id, sizeof known - strlen(known) - 1);
        }
        sk_fail(SK_ERR_UNKNOWN_ENV,
                "unknown environment '%s' (known: %s; see 'skinner envs'; an env from a plugin "
                "needs its library loaded first: FILE.so:ID, or --env-lib FILE.so; modules are "
                "looked for in %s)",
                id ? id : "(none)", known, sk_env_module_folder());
    }
    pthread_mutex_unlock(&g_lock);
    return found;
}

/* Configured tables, interned: one per distinct result, kept for the life
 * of the process (consumers hold on to them), appended under g_lock. */
typedef struct configured {
    sk_env_def def;
    struct configured *next;
} configured;
static configured *g_configured;

sk_status sk_env_configure(const sk_env_def *env, const sk_config *cfg, const sk_env_def **out) {
    *out = NULL;
    if (!env) return sk_fail(SK_ERR_INVALID, "sk_env_configure: no environment given");
    if (!env->configure) {
        *out = env;
        return SK_OK;
    }
    sk_config *empty = NULL;
    if (!cfg && !(cfg = empty = sk_config_new())) return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_env_def def;
    memcpy(&def, env, sizeof def); /* padding too: copies compare with memcmp */
    sk_status status = env->configure(&def, cfg);
    sk_config_free(empty);
    if (status != SK_OK) return status;
    char why[512];
    if (!sk_env_validate(&def, why, sizeof why))
        return sk_fail(SK_ERR_INVALID, "%s as configured: %s", env->id, why);
    if (memcmp(&def, env, sizeof def) == 0) {
        *out = env;
        return SK_OK;
    }
    pthread_mutex_lock(&g_lock);
    configured *found = g_configured;
    while (found && memcmp(&found->def, &def, sizeof def) != 0) found = found->next;
    if (!found && (found = malloc(sizeof *found))) {
        memcpy(&found->def, &def, sizeof def);
        found->next = g_configured;
        g_configured = found;
    }
    pthread_mutex_unlock(&g_lock);
    if (!found) return sk_fail(SK_ERR_NOMEM, "out of memory");
    *out = &found->def;
    return SK_OK;
}

const sk_env_def *sk_env_of_config(const sk_config *cfg, const char *name) {
    const char *plugin = sk_cfg_string(cfg, "env.plugin", NULL);
    if (plugin && plugin[0] && sk_env_load_plugin(plugin) != SK_OK) return NULL;
    return sk_env_find(name);
}

sk_status sk_env_record_plugin(sk_config *cfg, const sk_env_def *env) {
    const char *path = sk_env_plugin_path(env);
    if (!path) return SK_OK;
    sk_status status = sk_config_set(cfg, "env.plugin", path);
    if (status == SK_OK) sk_cfg_string(cfg, "env.plugin", ""); /* read: not an unknown key */
    return status;
}

void sk_env_obs_type(const sk_env_def *env, char *out, size_t size) {
    int dims[SK_MAX_OBS_DIMS];
    int count = sk_obs_dims(env, dims);
    int used = snprintf(out, size, "%s ", sk_obs_dtype_name(env->obs_dtype));
    for (int d = 0; d < count && used >= 0 && (size_t)used < size; d++)
        used += snprintf(out + used, size - (size_t)used, d ? "x%d" : "%d", dims[d]);
}

sk_status sk_env_check_obs_type(const sk_env_def *env, const char *recorded, const char *path) {
    char expected[96], legacy[96];
    sk_env_obs_type(env, expected, sizeof expected);
    if (!recorded) { /* older checkpoints: float vectors of obs_size */
        snprintf(legacy, sizeof legacy, "float32 %d", env->obs_size);
        recorded = legacy;
    }
    if (strcmp(recorded, expected) == 0) return SK_OK;
    return sk_fail(SK_ERR_INVALID,
                   "checkpoint '%s' was trained on %s observations of %s, but the env gives %s "
                   "(expected the same dtype and shape)",
                   path, recorded, env->id, expected);
}
