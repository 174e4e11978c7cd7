/*
 * Modules: env plugins that skinner finds by itself, and the few calls a
 * module (or any plugin) needs beyond skinner/env.h: assertions, located
 * errors, time, number parsing, config listing, run-folder creation and
 * locking, the CPU's ISA level. (The worker pool is skinner/pool.h, layers skinner/nn.h, tensor
 * files skinner/safetensors.h.) A program sees the modules without asking:
 *
 *     #include <skinner/module.h>
 *     #include <stdio.h>
 *
 *     int main(void) {
 *         // MinAtar's envs are in skinner-minatar.so, found at the first lookup
 *         const sk_env_def *env = sk_env_find("MinAtar/Breakout-v1");
 *         if (!env) {
 *             fprintf(stderr, "%s\n", sk_last_error());
 *             return 1;
 *         }
 *         // a call a module implements (skinner/kge.h's, the Prover module's)
 *         void *train = sk_module_symbol("sk_module_kge_train_run");
 *         printf("%s, KGE calls: %s\n", env->id, train ? "yes" : "no");
 *         return 0;
 *     }
 *
 * Build a module as a plugin is built (SK_PLUGIN_EXPORT, skinner/env.h) and install it as
 * $(pkg-config --variable=moduledir skinner-plugin)/skinner-NAME.so.
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
#ifdef __cplusplus
#define SK_NORETURN [[noreturn]]
#else
#define SK_NORETURN _Noreturn
#endif
SK_API SK_NORETURN void sk_panic(const char *file, int line, const char *msg);
#define SK_ASSERT(cond)                                                                            \
    do {                                                                                           \
        if (!(cond)) sk_panic(__FILE__, __LINE__, #cond);                                          \
    } while (0)

/* ------------------------------------------------------ errors, time, text */

/* sk_fail with the message located, "source:line: message": a parser's
 * errors naming the file and line of the bad input. */
SK_API sk_status sk_fail_at(sk_status status, const char *source, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Monotonic seconds (for durations). */
SK_API double sk_now(void);

/* Parses a whole string as a number; false if it is not one or has trailing
 * characters (no errno, no message: the caller names the field). */
SK_API bool sk_parse_i64(const char *text, int64_t *out);
SK_API bool sk_parse_f64(const char *text, double *out);

#define SK_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SK_MAX(a, b) ((a) > (b) ? (a) : (b))

/* ------------------------------------------------------------------ config */

/* The index-th entry in insertion order; false past the end. */
SK_API bool sk_config_entry_at(const sk_config *cfg, int index, const char **key,
                               const char **value);
/* The whole table as INI text (malloc'd; the caller frees it), sorted by key;
 * sk_config_load_file reads it back. NULL when out of memory. */
SK_API char *sk_config_to_string(const sk_config *cfg);
/* SK_ERR_CONFIG naming the first key of `section` ("kge") that was set but
 * never read by a typed read: a misspelt key is refused, not ignored. */
SK_API sk_status sk_cfg_check_unused(const sk_config *cfg, const char *section);

/* ------------------------------------------------------------- run folders */

/* mkdir -p; SK_ERR_IO naming the path on failure. */
SK_API sk_status sk_mkdirs(const char *path);

/* A run folder has one writer: DIR/run.lock, flock'd for as long as the
 * descriptor *lock_fd stays open, records the holder's pid, host and command.
 * While another process holds it, SK_ERR_IO names that holder and nothing in
 * the folder is touched; a dead holder's lock went with it (flock), so a
 * crashed run never blocks its own resume. sk_run_unlock releases it (the
 * file stays: removing it would let a third process lock a fresh file while a
 * second still holds the old one). The trainer takes it for its run folder; a module that writes
 * a run folder of its own (the Prover module's KGE training) takes it too. */
SK_API sk_status sk_run_lock(const char *dir, int *lock_fd);
SK_API void sk_run_unlock(int lock_fd);

/* --------------------------------------------------------------- CPU level */

/* The ISA level skinner's hot code runs at (docs/architecture.md, "One binary, every CPU"):
 * chosen once per process from CPUID, the highest the CPU has unless SKINNER_ISA forces a lower
 * one (so one machine tests every level it has). A module with code for a level compiles that
 * code in a file of its own with the level's flags (-march=x86-64-v3 for avx2, -march=x86-64-v4
 * for avx512) and picks it once, when it creates an env state, where sk_isa_level_used() is at
 * least that level: never from `#if __AVX2__`, which says what the build machine had. */
typedef enum sk_isa_level {
    SK_ISA_BASELINE = 0, /* x86-64-v2 (SSE4.2, POPCNT), or the portable C of aarch64 */
    SK_ISA_AVX2 = 1,     /* x86-64-v3: AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE */
    SK_ISA_AVX512 = 2,   /* x86-64-v4: AVX-512 F, BW, CD, DQ, VL */
    SK_ISA_LEVELS = 3
} sk_isa_level;

/* The level in use (the first call decides, thread-safely; later calls return it). */
SK_API sk_isa_level sk_isa_level_used(void);

/* Whether the CPU has AVX-512 VBMI (vpermb and friends: Ice Lake, Zen 4 and later) with the OS
 * saving zmm state. VBMI is no part of x86-64-v4, so it is asked apart; code built with
 * -mavx512vbmi runs where this is true and sk_isa_level_used() is SK_ISA_AVX512 (so that
 * SKINNER_ISA=avx2 turns it off too). */
SK_API bool sk_isa_has_avx512vbmi(void);

/* SK_OK, or SK_ERR_CONFIG with sk_last_error() naming the variable and what the CPU lacks, when
 * the environment asks for code this CPU cannot run: SKINNER_ISA naming a level it lacks (or no
 * level), or OPENBLAS_CORETYPE pinning OpenBLAS to kernels it lacks (Haswell without AVX2).
 * `skinner` and the Python module's import call it once at start; a host embedding libskinner
 * should too. */
SK_API sk_status sk_isa_check(void);

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

/* --------------------------------------------------------- module commands */

/* A module may add a command to the skinner program: `skinner NAME ARGS...`,
 * for a NAME that is no built-in command (letters, digits and '_'), runs the
 * function the loaded modules export as sk_module_command_NAME, with argv[0]
 * = NAME and the arguments after it. It returns the program's exit code (0,
 * 1 failure, 2 usage error) and prints its own usage and errors. */
typedef int (*sk_module_command_fn)(int argc, char **argv);
#define SK_MODULE_COMMAND_PREFIX "sk_module_command_"

#ifdef __cplusplus
}
#endif
#endif /* SKINNER_MODULE_H */
