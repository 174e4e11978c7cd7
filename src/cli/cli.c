/* The skinner program's helpers, below its commands: errors, flags, numbers, --section.key
 * options, presets and env names. Every command uses them; they include no command (the
 * layering test holds it: docs/architecture.md, the layers block's `base` line). */
#define _GNU_SOURCE /* dladdr */
#include "cli.h"

#include "core/config.h"
#include "core/core.h"

#include <dlfcn.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

bool cli_key_flag(cli_args *args, const char *section, char *key, size_t key_size,
                  const char **value, int *exit_code) {
    const char *arg = args->argv[args->index];
    size_t section_len = section ? strlen(section) : 0;
    bool match = strncmp(arg, "--", 2) == 0 &&
                 (section ? strncmp(arg + 2, section, section_len) == 0 && arg[2 + section_len] == '.'
                          : strchr(arg + 2, '.') != NULL);
    if (!match) return false;
    *exit_code = SK_EXIT_OK;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    args->index++;
    if (len >= key_size) {
        *exit_code = cli_error(SK_EXIT_USAGE, "option '%s' is too long", arg);
        return true;
    }
    memcpy(key, arg + 2, len);
    key[len] = '\0';
    if (eq) *value = eq + 1;
    else if (args->index < args->argc) *value = args->argv[args->index++];
    else *exit_code = cli_error(SK_EXIT_USAGE, "option '--%s' needs a value", key);
    return true;
}

bool cli_env_flag(cli_args *args, sk_config *cfg, int *exit_code) {
    char key[256];
    const char *value = NULL;
    if (!cli_key_flag(args, "env", key, sizeof key, &value, exit_code)) return false;
    if (*exit_code == SK_EXIT_OK && sk_config_set(cfg, key, value) != SK_OK)
        *exit_code = cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    return true;
}

/* The preset named `name` (configs/NAME.ini, looked up as below) into path; false when
 * there is none. */
static bool find_preset(const char *name, char *path, size_t size) {
    const char *env_dir = getenv("SKINNER_CONFIG_DIR");
    char exe_dir[4096] = "";
    int n = sk_code_folder((void (*)(void))find_preset, exe_dir, sizeof exe_dir) ? 1 : 0;
    /* $SKINNER_CONFIG_DIR; a build tree (build/skinner -> configs/); an install
     * moved anywhere (PREFIX/bin -> PREFIX/share/skinner/configs, or a wheel's
     * bin -> site-packages/skinner/share/skinner/configs); the configured install
     * prefix, then the source tree's configs/ for a build folder outside it (neither in a
     * wheel, whose prefix was a staging folder) */
#ifndef SKINNER_CONFIG_INSTALL_DIR
#define SKINNER_CONFIG_INSTALL_DIR NULL
#endif
#ifndef SKINNER_CONFIG_SOURCE_DIR
#define SKINNER_CONFIG_SOURCE_DIR NULL
#endif
    enum { CANDIDATES = 5 };
    const char *candidates[CANDIDATES] = {env_dir, n > 0 ? exe_dir : NULL, n > 0 ? exe_dir : NULL,
                                          SKINNER_CONFIG_INSTALL_DIR, SKINNER_CONFIG_SOURCE_DIR};
    const char *suffixes[CANDIDATES] = {
        "", "/../configs", "/" SKINNER_BIN_TO_PREFIX "/" SKINNER_DATADIR_REL "/skinner/configs",
        "", ""};
    for (int i = 0; i < CANDIDATES; i++) {
        if (!candidates[i]) continue;
        snprintf(path, size, "%s%s/%s.ini", candidates[i], suffixes[i], name);
        if (file_exists(path)) return true;
    }
    return false;
}

/* Loads the preset named `name` into cfg: SK_EXIT_OK, with a warning when no such file
 * exists. */
static int load_preset(sk_config *cfg, const char *name) {
    char path[4096];
    const char *chosen = find_preset(name, path, sizeof path) ? path : NULL;
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
    /* a shipped preset by its name ("cartpole_dqn"), or by the docs' path outside the source
     * folder ("configs/cartpole_dqn.ini"): the installed one, said so; any other path that
     * is not there stays an error (a mistyped one must not train on a preset) */
    char preset_path[4096];
    const char *name = strncmp(explicit_path, "configs/", 8) == 0 ? explicit_path + 8 : explicit_path;
    if (!file_exists(explicit_path) && !strchr(name, '/') && strlen(name) < 256) {
        char stem[256];
        snprintf(stem, sizeof stem, "%s", name);
        size_t len = strlen(stem);
        if (len > 4 && strcmp(stem + len - 4, ".ini") == 0) stem[len - 4] = '\0';
        if (find_preset(stem, preset_path, sizeof preset_path)) {
            fprintf(stderr, "skinner: note: no file %s in this folder; using the preset %s\n",
                    explicit_path, preset_path);
            explicit_path = preset_path;
        }
    }
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
