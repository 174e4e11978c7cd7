/* skinner: the command-line front end. */
#define _GNU_SOURCE /* dladdr */
#include "cli.h"
#include "comm_cli.h"

#include "core/config.h"
#include "core/core.h"
#include "core/isa.h"
#include "skinner/module.h"

#include <dlfcn.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *g_usage =
    "usage: skinner COMMAND [ARGS]\n"
    "\n"
    "Train reinforcement-learning agents at hardware speed.\n"
    "\n"
    "commands:\n"
    "  train ENV   train a PPO agent on ENV and write a run folder\n"
    "  eval ENV    evaluate a saved policy on ENV\n"
    "  envs        list the environments\n"
    "  config ENV  print the resolved config a training run of ENV would use\n"
    "  bench       measure env stepping (bench env) or training (bench train) speed\n"
    "  monitor DIR watch a run live: progress, returns, losses, the return curve\n"
    "  plot RUN_DIR [RUN_DIR ...]  draw learning curves of run folders (PNG or SVG)\n"
    "  kge         train and rank knowledge-graph embeddings (TransE, ComplEx, RotatE)\n"
    "  check ENV   check an env (buffers, spaces, determinism, state) before training it\n"
    "  sweep       search hyperparameters over training runs (resumable; sweep report DIR)\n"
    "  export CHECKPOINT  write a saved policy as an ONNX model or a C header\n"
    "  serve [DIR ...]  a web dashboard of the runs under DIR, live (read-only, loopback)\n"
    "  NAME ...    a command a loaded module adds (docs/architecture.md: module commands)\n"
    "\n"
    "global options (before or after COMMAND):\n"
    "  --env-lib FILE  load an env plugin (a .so built against <skinner/env.h>) and\n"
    "                  register its envs; repeatable\n"
    "\n"
    "'skinner COMMAND --help' describes each. ENV is an id (Gymnasium's, where the env\n"
    "has one) or a short alias as 'skinner envs' lists them, or FILE.so:ID for an env of\n"
    "a plugin. A run or a checkpoint of a plugin env needs the plugin again (--env-lib\n"
    "or FILE.so:ID).\n";

int cli_error(int code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    fputs("skinner: error: ", stderr);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    return code;
}

bool cli_flag(cli_args *args, const char *name, const char **value, bool *missing) {
    const char *arg = args->argv[args->index];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0) return false;
    if (arg[len] == '=') {
        if (!value) return false; /* a switch takes no value */
        *value = arg + len + 1;
        args->index++;
        return true;
    }
    if (arg[len] != '\0') return false;
    args->index++;
    if (value) {
        if (args->index >= args->argc) {
            *missing = true;
            return true;
        }
        *value = args->argv[args->index++];
    }
    return true;
}

/* A number that is not there (a config key nobody set) is refused, not parsed. */
static bool refuse_missing(const char *flag, const char *text, int *exit_code) {
    if (text) return false;
    *exit_code = cli_error(SK_EXIT_USAGE, "%s has no value (expected a number)", flag);
    return true;
}

bool cli_parse_int(const char *flag, const char *text, long long lo, long long hi, long long *out,
                   int *exit_code) {
    if (refuse_missing(flag, text, exit_code)) return false;
    char *end = NULL;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    bool overflow = *text && *end == '\0' && errno == ERANGE;
    if (!*text || *end != '\0') {
        double as_double = strtod(text, &end); /* accept 1e6 */
        if (!*text || *end != '\0' || as_double != floor(as_double)) {
            *exit_code = cli_error(SK_EXIT_USAGE, "%s expects an integer, got '%s'", flag, text);
            return false;
        }
        overflow = !(fabs(as_double) < 9.2e18); /* converting would be undefined */
        if (!overflow) value = (long long)as_double;
    }
    if (overflow || value < lo || value > hi) {
        *exit_code = cli_error(SK_EXIT_USAGE, "%s = %s is out of range (expected %lld..%lld)",
                               flag, text, lo, hi);
        return false;
    }
    *out = value;
    return true;
}

bool cli_parse_double(const char *flag, const char *text, double lo, double hi, double *out,
                      int *exit_code) {
    if (refuse_missing(flag, text, exit_code)) return false;
    char *end = NULL;
    double value = strtod(text, &end);
    if (!*text || *end != '\0' || value != value) {
        *exit_code = cli_error(SK_EXIT_USAGE, "%s expects a number, got '%s'", flag, text);
        return false;
    }
    if (value < lo || value > hi) {
        *exit_code = cli_error(SK_EXIT_USAGE, "%s = %g is out of range (expected %g..%g)", flag,
                               value, lo, hi);
        return false;
    }
    *out = value;
    return true;
}

static bool file_exists(const char *path) { return access(path, R_OK) == 0; }

bool cli_env_flag(cli_args *args, sk_config *cfg, int *exit_code) {
    const char *arg = args->argv[args->index];
    if (strncmp(arg, "--env.", 6) != 0) return false;
    *exit_code = SK_EXIT_OK;
    const char *eq = strchr(arg, '='), *value = NULL;
    char key[256];
    size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    args->index++;
    if (len >= sizeof key) {
        *exit_code = cli_error(SK_EXIT_USAGE, "option '%s' is too long", arg);
        return true;
    }
    memcpy(key, arg + 2, len);
    key[len] = '\0';
    if (eq) value = eq + 1;
    else if (args->index < args->argc) value = args->argv[args->index++];
    else {
        *exit_code = cli_error(SK_EXIT_USAGE, "option '--%s' needs a value", key);
        return true;
    }
    if (sk_config_set(cfg, key, value) != SK_OK)
        *exit_code = cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    return true;
}

/* Loads the preset named `name` (configs/NAME.ini, looked up as below) into
 * cfg: SK_EXIT_OK, with a warning when no such file exists. */
static int load_preset(sk_config *cfg, const char *name) {
    char path[4096];
    const char *chosen = NULL;
    const char *env_dir = getenv("SKINNER_CONFIG_DIR");
    char exe_dir[4096] = "";
    int n = sk_code_folder((void (*)(void))load_preset, exe_dir, sizeof exe_dir) ? 1 : 0;
    /* $SKINNER_CONFIG_DIR; a build tree (build/skinner -> configs/); an install
     * moved anywhere (PREFIX/bin -> PREFIX/share/skinner/configs, or a wheel's
     * bin -> site-packages/skinner/share/skinner/configs); the configured install
     * prefix (not in a wheel, whose prefix was a staging folder) */
#ifndef SKINNER_CONFIG_INSTALL_DIR
#define SKINNER_CONFIG_INSTALL_DIR NULL
#endif
    const char *candidates[4] = {env_dir, n > 0 ? exe_dir : NULL, n > 0 ? exe_dir : NULL,
                                 SKINNER_CONFIG_INSTALL_DIR};
    const char *suffixes[4] = {"", "/../configs",
                               "/" SKINNER_BIN_TO_PREFIX "/" SKINNER_DATADIR_REL "/skinner/configs",
                               ""};
    for (int i = 0; i < 4 && !chosen; i++) {
        if (!candidates[i]) continue;
        snprintf(path, sizeof path, "%s%s/%s.ini", candidates[i], suffixes[i], name);
        if (file_exists(path)) chosen = path;
    }
    if (!chosen) {
        fprintf(stderr,
                "skinner: warning: no preset %s.ini found (set SKINNER_CONFIG_DIR); using "
                "built-in defaults\n",
                name);
        return SK_EXIT_OK;
    }
    if (sk_config_load_file(cfg, chosen) != SK_OK)
        return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    return SK_EXIT_OK;
}

int cli_load_config(sk_config *cfg, const sk_env_def *env, const char *explicit_path,
                    sk_config *explicit_keys) {
    /* the env's preset: one name, or several separated by spaces, layered in
     * order ("minatar minatar_seaquest": the game's keys over the suite's) */
    const char *preset = sk_env_extras_of(env)->preset;
    for (const char *at = preset; at && *at;) {
        size_t len = strcspn(at, " ");
        if (len > 0) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)SK_MIN(len, sizeof name - 1), at);
            int code = load_preset(cfg, name);
            if (code != SK_EXIT_OK) return code;
        }
        at += len;
        at += strspn(at, " ");
    }
    if (!explicit_path) return SK_EXIT_OK;
    /* the user's file layers on the preset: its keys override, the rest stay.
     * It is read once, into a layer of its own (whose keys the caller may
     * want), and the layer's text goes on top of the preset. */
    sk_config *layer = explicit_keys ? explicit_keys : sk_config_new();
    char *text = NULL;
    sk_status status = layer ? sk_config_load_file(layer, explicit_path)
                             : sk_fail(SK_ERR_NOMEM, "out of memory");
    if (status == SK_OK && !(text = sk_config_to_string(layer)))
        status = sk_fail(SK_ERR_NOMEM, "out of memory");
    if (status == SK_OK) status = sk_config_load_string(cfg, text);
    free(text);
    if (layer != explicit_keys) sk_config_free(layer);
    return status == SK_OK ? SK_EXIT_OK : cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
}

const char *cli_env_name(const sk_env_def *env, char *buf, size_t size) {
    Dl_info table = {0}, program = {0};
    /* a built-in or a module's env (found by its id): no plugin to name */
    if (!sk_env_plugin_path(env) || !dladdr(env, &table) || !dladdr((void *)cli_error, &program) ||
        !table.dli_fname || table.dli_fbase == program.dli_fbase)
        return env->id;
    size_t len = strlen(table.dli_fname);
    if (len >= 3 && strcmp(table.dli_fname + len - 3, ".so") == 0)
        snprintf(buf, size, "%s:%s", table.dli_fname, env->id);
    else snprintf(buf, size, "%s --env-lib %s", env->id, table.dli_fname);
    return buf;
}

/* Removes every --env-lib FILE / --env-lib=FILE from argv (whichever command
 * follows) and loads each plugin, so that every command sees its envs.
 * SK_EXIT_USAGE for a missing FILE, SK_EXIT_FAILURE for a refused plugin. */
static int load_env_libs(int *argc, char **argv) {
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        const char *path = NULL;
        if (strcmp(argv[i], "--env-lib") == 0) {
            if (i + 1 >= *argc)
                return cli_error(SK_EXIT_USAGE, "option '--env-lib' needs a value (a plugin .so)");
            path = argv[++i];
        } else if (strncmp(argv[i], "--env-lib=", 10) == 0) {
            path = argv[i] + 10;
        } else {
            argv[kept++] = argv[i];
            continue;
        }
        if (sk_env_load_plugin(path) != SK_OK)
            return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    }
    argv[kept] = NULL;
    *argc = kept;
    return SK_EXIT_OK;
}

static int run_command(int argc, char **argv);

/* The command word: the first argument that is not an --env-lib option (which may come
 * before it), or NULL. */
static const char *command_word(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--env-lib") == 0)
            i++;
        else if (strncmp(argv[i], "--env-lib=", 10) != 0)
            return argv[i];
    }
    return NULL;
}

int main(int argc, char **argv) {
    /* Into a file or a pipe, stdout is fully buffered by default: a command's lines (a sweep's
     * header before its first trial, bench's per-env results) reached a log in bursts, or at
     * exit after stderr's later lines. Each line goes out as written, as on a terminal. */
    if (!isatty(STDOUT_FILENO)) setvbuf(stdout, NULL, _IOLBF, 0);
    /* under mpirun (or srun) this process is one rank of a distributed run;
     * `train` and `bench train` split their envs over the ranks (docs/distributed.md) */
    /* a sweep's ranks share its folder, not MPI (docs/sweeps.md): it starts no MPI */
    const char *command = command_word(argc, argv);
    bool sweep = command && strcmp(command, "sweep") == 0;
    int rc = sweep ? SK_EXIT_OK : cli_comm_init(&argc, &argv);
    if (rc != SK_EXIT_OK) return rc;
    rc = run_command(argc, argv);
    if (!sweep) cli_comm_finalize();
    return rc;
}

/* `skinner NAME ...` for a command a module adds (skinner/module.h): the
 * modules' sk_module_command_NAME, or -1 when none exports it. */
static int module_command(const char *command, int argc, char **argv) {
    size_t len = strlen(command);
    if (len == 0 || len > 64 || strspn(command, "abcdefghijklmnopqrstuvwxyz0123456789_") != len)
        return -1;
    char symbol[96];
    snprintf(symbol, sizeof symbol, "%s%s", SK_MODULE_COMMAND_PREFIX, command);
    void *found = sk_module_symbol(symbol);
    if (!found) return -1;
    sk_module_command_fn fn;
    memcpy(&fn, &found, sizeof fn); /* a data pointer to a function pointer, as dlsym's */
    return fn(argc, argv);
}

static int run_command(int argc, char **argv) {
    /* SKINNER_ISA naming a level this CPU lacks, or no level, is refused before anything runs */
    if (sk_isa_check() != SK_OK) return cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    int rc = load_env_libs(&argc, argv);
    if (rc != SK_EXIT_OK) return rc;
    if (argc < 2) {
        fputs(g_usage, stderr);
        return SK_EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        fputs(g_usage, stdout);
        return SK_EXIT_OK;
    }
    if (strcmp(command, "--version") == 0) {
        char isa[160];
        sk_isa_describe(isa, sizeof isa);
        printf("skinner %s\nkernels: %s\n", SK_VERSION, isa);
        return SK_EXIT_OK;
    }
    if (strcmp(command, "train") == 0) return cmd_train(argc - 2, argv + 2);
    if (strcmp(command, "eval") == 0) return cmd_eval(argc - 2, argv + 2);
    if (strcmp(command, "envs") == 0) return cmd_envs(argc - 2, argv + 2);
    if (strcmp(command, "config") == 0) return cmd_config(argc - 2, argv + 2);
    if (strcmp(command, "bench") == 0) return cmd_bench(argc - 2, argv + 2);
    if (strcmp(command, "plot") == 0) return cmd_plot(argc - 2, argv + 2);
    if (strcmp(command, "monitor") == 0) return cmd_monitor(argc - 2, argv + 2);
    if (strcmp(command, "kge") == 0) return cmd_kge(argc - 2, argv + 2);
    if (strcmp(command, "check") == 0) return cmd_check(argc - 2, argv + 2);
    if (strcmp(command, "sweep") == 0) return cmd_sweep(argc - 2, argv + 2);
    if (strcmp(command, "export") == 0) return cmd_export(argc - 2, argv + 2);
    if (strcmp(command, "serve") == 0) return cmd_serve(argc - 2, argv + 2);
    int module_rc = module_command(command, argc - 1, argv + 1);
    if (module_rc >= 0) return module_rc;
    fputs(g_usage, stderr);
    return cli_error(SK_EXIT_USAGE, "unknown command '%s'", command);
}
