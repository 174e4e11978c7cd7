/* The registry's internals shared with the plugin loader (plugin.c). */
#ifndef SK_ENVS_REGISTRY_H
#define SK_ENVS_REGISTRY_H

#include "../core/core.h"

/* Envs that sk_env_register and plugins may add beside the built-ins. */
#define SK_MAX_REGISTERED_ENVS 64

/*
 * Checks one table on its own (not against the registry): id, sizes, log
 * names, functions and action space. True when it is usable; otherwise false
 * with why (a NUL-terminated message of at most why_size bytes) naming the
 * field, its value and what was expected.
 */
bool sk_env_validate(const sk_env_def *env, char *why, size_t why_size);

/*
 * Validates count tables, checks that no id or alias is taken (by a
 * registered env or by another of the tables) and registers all of them, or
 * none: SK_ERR_INVALID with a message that starts with `source` (e.g.
 * "plugin 'libx.so'") and names the table by index and id.
 */
sk_status sk_env_register_all(const sk_env_def *const *envs, int count, const char *source);

/*
 * The env a run's config names: the plugin recorded as env.plugin (if any)
 * is loaded first, then `name` (env.id, or the id a checkpoint recorded) is
 * found. The key is marked as read. NULL with a message on failure.
 */
const sk_env_def *sk_env_of_config(const sk_config *cfg, const char *name);

/* The observation's dtype and shape as `skinner envs` prints them and
 * checkpoints record them ("float32 4", "uint8 10x10x3") into out. */
void sk_env_obs_type(const sk_env_def *env, char *out, size_t size);

/* Checks a checkpoint's recorded observation type (its "observation"
 * metadata; NULL: a checkpoint from before it was recorded, which holds
 * float vectors) against env's: SK_ERR_INVALID naming both when they differ. */
sk_status sk_env_check_obs_type(const sk_env_def *env, const char *recorded, const char *path);
/* Where the modules are looked for (the folder, SKINNER_MODULE_PATH's value,
 * or where none was found), for messages. */
const char *sk_env_module_folder(void);

/* Records the plugin env came from as env.plugin in cfg (nothing for a
 * built-in env), so that a resumed or evaluated run loads it again. */
sk_status sk_env_record_plugin(sk_config *cfg, const sk_env_def *env);
/* name read as sk_env_find reads it: "FILE.so:ID" split at its last ".so:", the file
 * into plugin (size bytes; "" without one) and *id pointing into name at the ID (at name
 * itself without one); SK_ERR_INVALID when the file's path does not fit. */
sk_status sk_env_split_name(const char *name, char *plugin, size_t size, const char **id);

#endif
