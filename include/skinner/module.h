/*
 * Modules: env plugins that skinner finds by itself, and the few calls a
 * module (or any plugin) needs beyond skinner/env.h.
 *
 * A module is a plugin (an sk_env_def table list exported with
 * SK_PLUGIN_EXPORT, built without -lskinner) installed as
 * LIBDIR/skinner/modules/skinner-NAME.so, or built in the tree as
 * BUILD/modules/skinner-NAME.so (cmake/SkinnerModule.cmake). The registry
 * loads every such file once, at the first env lookup, listing or
 * registration, so `skinner envs` lists their envs and `--env-lib` is not
 * needed. Unlike a plugin's, a module env is not recorded as env.plugin in a
 * run's config: it is found by its id, wherever skinner is installed.
 *
 * The folder: $SKINNER_MODULE_PATH if set (folders separated by ':'; empty:
 * no modules), else the first of DIR/skinner/modules,
 * DIR/../LIBDIR/skinner/modules, DIR/modules and DIR/../modules that exists,
 * where DIR holds the program or the libskinner.so this code runs in (the
 * installed prefix and the build folder both work). A module that fails to
 * load is reported as a warning (sk_log) naming the file and why; the other
 * modules and the built-in envs are unaffected.
 */
#ifndef SKINNER_MODULE_H
#define SKINNER_MODULE_H

#include "env.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -------------------------------------------------------------- assertions */

/* A broken contract (a bug, not bad input): prints file, line and message to
 * stderr and aborts. Bad input is an sk_fail status instead. */
SK_API _Noreturn void sk_panic(const char *file, int line, const char *msg);
#define SK_ASSERT(cond)                                                                            \
    do {                                                                                           \
        if (!(cond)) sk_panic(__FILE__, __LINE__, #cond);                                          \
    } while (0)

/* ----------------------------------------------------------------- modules */

/* Loads the modules once (later calls return at once). The registry calls it
 * itself; a host calls it only to load them earlier. Always SK_OK: a module
 * that fails is a warning, not an error of the caller. */
SK_API sk_status sk_env_load_modules(void);

/* The index-th loaded module's absolute path, or NULL past the last; the
 * modules are loaded first. */
SK_API const char *sk_module_path(int index);

/* The address of `symbol` in the first loaded module that exports it, or NULL
 * (with an sk_fail message naming the symbol and the modules searched): how
 * a program reaches a module's own entry points (e.g. skinner/kge.h's
 * training, which the Prover module implements) without linking it. */
SK_API void *sk_module_symbol(const char *symbol);

#ifdef __cplusplus
}
#endif
#endif /* SKINNER_MODULE_H */
