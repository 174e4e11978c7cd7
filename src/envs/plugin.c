/*
 * Env plugins: a shared object that exports sk_plugin_abi_version and
 * sk_plugin_envs (SK_PLUGIN_EXPORT in skinner/env.h). It is built without
 * -lskinner: its sk_* calls resolve to the program that loads it, which must
 * export them (the skinner program is linked with --export-dynamic; a host
 * program linked with libskinner.so exports them through it). Every table is
 * checked before any is registered; a refused plugin is closed again. A loaded
 * plugin stays loaded for the life of the process (its tables are in it).
 * Modules (skinner/module.h) are plugins this file finds in the module folder
 * and loads once, at the registry's first use.
 */
#include "registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_PLUGINS SK_MAX_REGISTERED_ENVS
#define MAX_ENVS_PER_PLUGIN SK_MAX_REGISTERED_ENVS

static void *g_handles[MAX_PLUGINS];
static char *g_paths[MAX_PLUGINS]; /* each plugin's absolute path */
static bool g_is_module[MAX_PLUGINS]; /* found in the module folder (skinner/module.h) */
static const sk_env_def *const *g_tables[MAX_PLUGINS];
static int g_num_tables[MAX_PLUGINS];
static int g_num_handles;
static pthread_mutex_t g_plugins_lock = PTHREAD_MUTEX_INITIALIZER;

static bool already_loaded(void *handle) {
    for (int i = 0; i < g_num_handles; i++)
        if (g_handles[i] == handle) return true;
    return false;
}

static void free_tables(const sk_env_def **tables, int count) {
    for (int k = 0; tables && k < count; k++) free((void *)tables[k]);
    free(tables);
}

/*
 * Older tables. Versions 1 to 6 held SK_MAX_ACTION_DIM = 16 bounds in low and high; from
 * version 7 they hold more, so every member after action_space.low sits further on. A table
 * of those versions is its bytes up to action_space.low as now (the head), 16 lows, 16
 * highs, then the rest (the tail) as now, LEGACY_SHIFT bytes earlier.
 */
#define LEGACY_ACTION_DIM 16
typedef struct legacy_bounds {
    float low[LEGACY_ACTION_DIM], high[LEGACY_ACTION_DIM];
} legacy_bounds;
#define HEAD_SIZE offsetof(sk_env_def, action_space.low)
#define TAIL_AT offsetof(sk_env_def, mask_size)
#define LEGACY_SHIFT (2 * (SK_MAX_ACTION_DIM - LEGACY_ACTION_DIM) * sizeof(float))
_Static_assert(TAIL_AT == HEAD_SIZE + 2 * SK_MAX_ACTION_DIM * sizeof(float),
               "high ends where mask_size starts, no padding");
_Static_assert(LEGACY_SHIFT % _Alignof(sk_env_def) == 0,
               "the tail keeps its alignment LEGACY_SHIFT bytes earlier");
/* The largest legacy table, bytes aligned as a table */
typedef union legacy_table {
    sk_env_def aligned;
    unsigned char bytes[sizeof(sk_env_def) - LEGACY_SHIFT];
} legacy_table;

/* The bytes of sk_env_def a table of `version` has, in its own layout: version 1 ends
 * before configure, version 2 before obs_low, versions 3 and 4 before num_agents. */
static size_t table_size_of_version(int version) {
    size_t end = version == 1   ? offsetof(sk_env_def, configure)
                 : version == 2 ? offsetof(sk_env_def, obs_low)
                 : version < 5  ? offsetof(sk_env_def, num_agents)
                                : sizeof(sk_env_def);
    return version < 7 ? end - LEGACY_SHIFT : end;
}

/* A legacy table (`size` bytes) as this version's (members it lacks zeroed). */
static void from_legacy(const unsigned char *old, size_t size, sk_env_def *out) {
    unsigned char *bytes = (unsigned char *)out;
    memset(out, 0, sizeof *out);
    memcpy(bytes, old, HEAD_SIZE);
    legacy_bounds bounds;
    memcpy(&bounds, old + HEAD_SIZE, sizeof bounds);
    memcpy(out->action_space.low, bounds.low, sizeof bounds.low);
    memcpy(out->action_space.high, bounds.high, sizeof bounds.high);
    memcpy(bytes + TAIL_AT, old + TAIL_AT - LEGACY_SHIFT, size - (TAIL_AT - LEGACY_SHIFT));
}

/* This version's table in the legacy layout (the bounds past 16 dropped: a legacy
 * table cannot declare them). */
static void to_legacy(const sk_env_def *def, legacy_table *out) {
    const unsigned char *bytes = (const unsigned char *)def;
    memcpy(out->bytes, bytes, HEAD_SIZE);
    legacy_bounds bounds;
    memcpy(bounds.low, def->action_space.low, sizeof bounds.low);
    memcpy(bounds.high, def->action_space.high, sizeof bounds.high);
    memcpy(out->bytes + HEAD_SIZE, &bounds, sizeof bounds);
    memcpy(out->bytes + TAIL_AT - LEGACY_SHIFT, bytes + TAIL_AT, sizeof(sk_env_def) - TAIL_AT);
}

/* The bytes of sk_env_extras a table of an older ABI version has: before
 * version 3 it ends before eval_options, version 3 before render_width,
 * versions 4 and 5 before physics_sizes, versions 6 and 7 before opponents. */
static size_t extras_size_of_version(int version) {
    if (version < 3) return offsetof(sk_env_extras, eval_options);
    if (version == 3) return offsetof(sk_env_extras, render_width);
    if (version < 6) return offsetof(sk_env_extras, physics_sizes);
    if (version < 8) return offsetof(sk_env_extras, opponents);
    return sizeof(sk_env_extras);
}

/* A table of an older version as this version reads it. A legacy plugin's configure and
 * evaluation read and write tables in its own layout: the copy holds wrappers that find
 * the plugin's functions here (by the table's id, which a configured copy keeps) and pass
 * them a table in that layout. */
typedef struct upgraded_table {
    sk_env_def def;
    sk_env_extras extras;
    sk_env_evaluation evaluation;
    int version;
    sk_status (*configure)(sk_env_def *def, const sk_config *cfg); /* the plugin's */
    const sk_env_evaluation *plugin_evaluation;
    struct upgraded_table *next; /* in g_upgraded, once registered */
} upgraded_table;
static upgraded_table *g_upgraded;
static pthread_mutex_t g_upgraded_lock = PTHREAD_MUTEX_INITIALIZER;

static const upgraded_table *upgraded_of(const char *id) {
    pthread_mutex_lock(&g_upgraded_lock);
    const upgraded_table *found = g_upgraded;
    while (found && found->def.id != id) found = found->next;
    pthread_mutex_unlock(&g_upgraded_lock);
    return found;
}

static sk_status legacy_configure(sk_env_def *def, const sk_config *cfg) {
    const upgraded_table *up = upgraded_of(def->id);
    if (!up) return sk_fail(SK_ERR_INVALID, "%s: no plugin table to configure", def->id);
    legacy_table table = {0};
    to_legacy(def, &table);
    sk_status status = up->configure(&table.aligned, cfg);
    const sk_env_extras *extras = def->extras;
    from_legacy(table.bytes, sizeof table.bytes, def);
    def->configure = legacy_configure;
    def->extras = extras;
    return status;
}

static sk_status legacy_evaluate(const sk_env_def *env, const sk_config *env_cfg,
                                 const sk_config *options, const sk_actor *actor,
                                 const sk_parallel *parallel, sk_progress_fn progress,
                                 void *progress_user, sk_env_report *out) {
    const upgraded_table *up = upgraded_of(env->id);
    if (!up) return sk_fail(SK_ERR_INVALID, "%s: no plugin table to evaluate", env->id);
    legacy_table table = {0};
    to_legacy(env, &table);
    return up->plugin_evaluation->run(&table.aligned, env_cfg, options, actor, parallel,
                                      progress, progress_user, out);
}

/* Copies of an older version's tables, converted, with the newer members zeroed (reading
 * them as the current version would read past their end), their extras too. One
 * allocation each. */
static const sk_env_def **upgrade_tables(const sk_env_def *const *envs, int count, int version) {
    const sk_env_def **tables = calloc((size_t)count + 1, sizeof *tables);
    for (int k = 0; tables && k < count; k++) {
        upgraded_table *copy = calloc(1, sizeof *copy);
        if (!copy) {
            free_tables(tables, k);
            return NULL;
        }
        copy->version = version;
        if (version < 7) from_legacy((const void *)envs[k], table_size_of_version(version),
                                     &copy->def);
        else memcpy(&copy->def, envs[k], sizeof copy->def);
        /* from version 7 the table's layout is this one's: its functions read it as is */
        if (version < 7 && (copy->configure = copy->def.configure))
            copy->def.configure = legacy_configure;
        if (copy->def.extras) {
            memcpy(&copy->extras, copy->def.extras, extras_size_of_version(version));
            copy->def.extras = &copy->extras;
            if (version < 7 && (copy->plugin_evaluation = copy->extras.evaluation)) {
                copy->evaluation = *copy->plugin_evaluation;
                copy->evaluation.run = legacy_evaluate;
                copy->extras.evaluation = &copy->evaluation;
            }
        }
        tables[k] = &copy->def;
    }
    return tables;
}

/* Makes a registered plugin's converted tables findable by their wrappers. */
static void keep_upgraded(const sk_env_def *const *tables, int count) {
    pthread_mutex_lock(&g_upgraded_lock);
    for (int k = 0; k < count; k++) {
        upgraded_table *copy = (upgraded_table *)(void *)tables[k];
        copy->next = g_upgraded;
        g_upgraded = copy;
    }
    pthread_mutex_unlock(&g_upgraded_lock);
}

/* Checks the loaded object's symbols and tables and registers them; under g_plugins_lock. */
static sk_status register_plugin(void *handle, const char *path, bool module) {
    const int *version = dlsym(handle, "sk_plugin_abi_version");
    if (!version)
        return sk_fail(SK_ERR_INVALID,
                       "plugin '%s' does not export 'sk_plugin_abi_version' (expected a shared "
                       "object that ends with SK_PLUGIN_EXPORT(...) from <skinner/env.h>)",
                       path);
    if (*version < SK_ENV_ABI_OLDEST || *version > SK_ENV_ABI_VERSION)
        return sk_fail(SK_ERR_INVALID,
                       "plugin '%s' was built for env ABI version %d, but this skinner has "
                       "version %d and loads %d..%d (rebuild it against this skinner's "
                       "<skinner/env.h>)",
                       path, *version, SK_ENV_ABI_VERSION, SK_ENV_ABI_OLDEST, SK_ENV_ABI_VERSION);
    const sk_env_def *const *const *envs_symbol = dlsym(handle, "sk_plugin_envs");
    if (!envs_symbol)
        return sk_fail(SK_ERR_INVALID,
                       "plugin '%s' does not export 'sk_plugin_envs' (expected a shared object "
                       "that ends with SK_PLUGIN_EXPORT(...) from <skinner/env.h>)",
                       path);
    const sk_env_def *const *envs = *envs_symbol;
    int count = 0;
    while (envs && envs[count] && count <= MAX_ENVS_PER_PLUGIN) count++;
    if (count == 0)
        return sk_fail(SK_ERR_INVALID,
                       "plugin '%s' exports no env tables (expected sk_plugin_envs to list at "
                       "least one before its NULL)",
                       path);
    if (count > MAX_ENVS_PER_PLUGIN)
        return sk_fail(SK_ERR_INVALID, "plugin '%s' exports more than %d env tables", path,
                       MAX_ENVS_PER_PLUGIN);
    if (g_num_handles == MAX_PLUGINS)
        return sk_fail(SK_ERR_INVALID, "plugin '%s': %d plugins are loaded already (the limit)",
                       path, MAX_PLUGINS);
    char source[4200];
    snprintf(source, sizeof source, "%s '%s'", module ? "module" : "plugin", path);
    char *absolute = realpath(path, NULL);
    if (!absolute) return sk_fail(SK_ERR_NOMEM, "plugin '%s': %s", path, strerror(errno));
    const sk_env_def **upgraded = NULL;
    if (*version < SK_ENV_ABI_VERSION &&
        !(envs = upgraded = upgrade_tables(envs, count, *version))) {
        free(absolute);
        return sk_fail(SK_ERR_NOMEM, "plugin '%s': out of memory", path);
    }
    sk_status status = sk_env_register_all(envs, count, source);
    if (status != SK_OK) {
        free_tables(upgraded, count);
        free(absolute);
        return status;
    }
    if (upgraded) keep_upgraded(envs, count);
    g_paths[g_num_handles] = absolute;
    g_tables[g_num_handles] = envs;
    g_num_tables[g_num_handles] = count;
    g_is_module[g_num_handles] = module;
    g_handles[g_num_handles++] = handle;
    return SK_OK;
}

/* Reads `size` bytes at `offset` of f; false past its end. */
static bool read_at(FILE *f, long offset, void *out, size_t size) {
    return fseek(f, offset, SEEK_SET) == 0 && fread(out, 1, size, f) == size;
}

/* Whether a table of `count` entries of `entry` bytes at `offset` lies inside file_size. */
static bool table_inside(uint64_t offset, uint64_t count, uint64_t entry, uint64_t file_size) {
    return offset <= file_size && count <= (file_size - offset) / (entry ? entry : 1);
}

/*
 * dlopen maps a shared object's segments as its headers say, and a segment
 * that runs past the end of a truncated file faults (SIGBUS) on first touch,
 * inside dlopen, where no error can be reported. So the file is checked
 * first: an ELF header of this machine's class, and the program headers, the
 * section headers and every loaded segment inside the file. What this cannot
 * see (a file truncated or rewritten between this check and dlopen, a
 * corrupt segment's content) still reaches dlopen.
 */
static sk_status check_elf(const char *path, uint64_t file_size) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return sk_fail(SK_ERR_INVALID, "plugin '%s' cannot be opened: %s", path, strerror(errno));
    ElfW(Ehdr) header;
    const char *problem = NULL;
    if (!read_at(f, 0, &header, sizeof header) || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
        problem = "it does not start with an ELF header (expected a shared object built with "
                  "-shared -fPIC)";
    else if (header.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
        problem = "its ELF class is not this machine's (32 vs 64 bits)";
    else if (header.e_phentsize != sizeof(ElfW(Phdr)) ||
             !table_inside(header.e_phoff, header.e_phnum, header.e_phentsize, file_size))
        problem = "its program headers lie past the end of the file (truncated?)";
    else if (header.e_shnum > 0 &&
             !table_inside(header.e_shoff, header.e_shnum, header.e_shentsize, file_size))
        problem = "its section headers lie past the end of the file (truncated?)";
    for (int p = 0; !problem && p < header.e_phnum; p++) {
        ElfW(Phdr) segment;
        if (!read_at(f, (long)(header.e_phoff + (uint64_t)p * sizeof segment), &segment,
                     sizeof segment))
            problem = "its program headers cannot be read";
        else if (segment.p_type == PT_LOAD &&
                 !table_inside(segment.p_offset, segment.p_filesz, 1, file_size))
            problem = "a loaded segment runs past the end of the file (truncated?)";
    }
    fclose(f);
    if (problem)
        return sk_fail(SK_ERR_INVALID,
                       "plugin '%s' (%llu bytes) is not a loadable shared object: %s", path,
                       (unsigned long long)file_size, problem);
    return SK_OK;
}

/* Loads a plugin (module: from the module folder) and registers its tables. */
static sk_status load_shared(const char *path, bool module) {
    if (!path || !path[0])
        return sk_fail(SK_ERR_INVALID, "no plugin file given (expected the path of a .so)");
    struct stat info;
    if (stat(path, &info) != 0)
        return sk_fail(SK_ERR_INVALID, "plugin '%s' cannot be opened: %s", path, strerror(errno));
    if (!S_ISREG(info.st_mode))
        return sk_fail(SK_ERR_INVALID, "plugin '%s' is not a regular file (expected a .so)", path);
    sk_status elf = check_elf(path, (uint64_t)info.st_size);
    if (elf != SK_OK) return elf;
    /* dlopen searches the library path for a name without a '/': ask for this file. */
    char local[4200];
    const char *file = path;
    if (!strchr(path, '/')) {
        snprintf(local, sizeof local, "./%s", path);
        file = local;
    }
    dlerror();
    void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        bool undefined = reason && strstr(reason, "undefined symbol");
        /* linked with -lskinner and the library is not on the loader's path */
        bool linked = reason && strstr(reason, "libskinner.so");
        return sk_fail(SK_ERR_INVALID, "plugin '%s' is not a loadable shared object: %s%s", path,
                       reason ? reason : "dlopen failed",
                       undefined ? " (a plugin takes its sk_* functions from the program that "
                                   "loads it, which must export them: link it with "
                                   "-Wl,--export-dynamic or against libskinner.so)"
                       : linked ? " (a plugin needs no libskinner: the program that loads it "
                                  "provides the sk_* functions; build plugins with `cc my_env.c "
                                  "-o libmy_env.so $(pkg-config --cflags --libs skinner-plugin)`, "
                                  "no -lskinner)"
                                : "");
    }
    pthread_mutex_lock(&g_plugins_lock);
    bool seen = already_loaded(handle);
    sk_status status = seen ? SK_OK : register_plugin(handle, path, module);
    /* a refused plugin is closed; a file loaded before (under any name) gives back the
     * reference this dlopen counted */
    if (seen || status != SK_OK) dlclose(handle);
    pthread_mutex_unlock(&g_plugins_lock);
    return status;
}

sk_status sk_env_load_plugin(const char *path) {
    sk_env_load_modules(); /* first: a plugin's id that a module holds is taken */
    return load_shared(path, false);
}

/* A module's env is found by its id: no path to record. */
const char *sk_env_plugin_path(const sk_env_def *env) {
    const char *found = NULL;
    pthread_mutex_lock(&g_plugins_lock);
    for (int p = 0; p < g_num_handles && !found; p++)
        for (int k = 0; k < g_num_tables[p] && !g_is_module[p]; k++)
            if (sk_env_same(g_tables[p][k], env)) found = g_paths[p];
    pthread_mutex_unlock(&g_plugins_lock);
    return found;
}

/* ----------------------------------------------------------------- modules */

#define MODULE_PREFIX "skinner-"
#define MODULE_SUFFIX ".so"
#ifndef SKINNER_MODULE_LIBDIR
#define SKINNER_MODULE_LIBDIR "lib" /* CMAKE_INSTALL_LIBDIR, set by CMakeLists.txt */
#endif
#ifndef SKINNER_BIN_TO_PREFIX /* the prefix from the program's folder, set by CMakeLists.txt */
#define SKINNER_BIN_TO_PREFIX ".."
#endif

static pthread_once_t g_modules_once = PTHREAD_ONCE_INIT;
/* where the modules were looked for, for messages: written once, under g_modules_once */
static char g_module_folder[4400] = "no folder (the program's own path is unknown)";

static bool is_module_name(const char *name) {
    size_t length = strlen(name), prefix = strlen(MODULE_PREFIX), suffix = strlen(MODULE_SUFFIX);
    return length > prefix + suffix && strncmp(name, MODULE_PREFIX, prefix) == 0 &&
           strcmp(name + length - suffix, MODULE_SUFFIX) == 0;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads every skinner-*.so of folder, in name order; a failure is a warning. */
static void load_folder(const char *folder) {
    DIR *dir = opendir(folder);
    if (!dir) return;
    char *names[MAX_PLUGINS];
    int count = 0, dropped = 0;
    const char *first_dropped = NULL;
    for (struct dirent *entry; (entry = readdir(dir));) {
        if (!is_module_name(entry->d_name)) continue;
        if (count < MAX_PLUGINS && (names[count] = strdup(entry->d_name))) count++;
        else if (dropped++ == 0) first_dropped = strdup(entry->d_name);
    }
    closedir(dir);
    if (dropped) { /* said, not silently skipped */
        sk_log(1, "%d module(s) of '%s' not loaded, '%s' among them: at most %d modules and "
               "plugins load in one process", dropped, folder,
               first_dropped ? first_dropped : "?", MAX_PLUGINS);
        free((void *)first_dropped);
    }
    qsort(names, (size_t)count, sizeof *names, compare_names);
    for (int i = 0; i < count; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", folder, names[i]);
        free(names[i]);
        if (load_shared(path, true) != SK_OK) {
            sk_log(1, "module '%s' not loaded: %s", path, sk_last_error());
            sk_error_clear();
        }
    }
}

static bool is_folder(const char *path) {
    struct stat info;
    return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

static void load_all_modules(void) {
    const char *list = getenv("SKINNER_MODULE_PATH");
    if (list) { /* folders separated by ':'; empty: none */
        snprintf(g_module_folder, sizeof g_module_folder, "SKINNER_MODULE_PATH='%s'", list);
        char folder[4096];
        for (const char *at = list; *at;) {
            size_t length = strcspn(at, ":");
            if (length > 0 && length < sizeof folder) {
                memcpy(folder, at, length);
                folder[length] = '\0';
                load_folder(folder);
            }
            at += length + (at[length] == ':');
        }
        return;
    }
    char own[4096], folder[4200];
    if (!sk_code_folder((void (*)(void))sk_env_load_modules, own, sizeof own)) return;
    /* installed library, installed program, build folder, a build subfolder (tests) */
    const char *const below[] = {"/skinner/modules",
                                 "/" SKINNER_BIN_TO_PREFIX "/" SKINNER_MODULE_LIBDIR "/skinner/modules",
                                 "/modules", "/../modules"};
    for (size_t c = 0; c < sizeof below / sizeof *below; c++) {
        snprintf(folder, sizeof folder, "%s%s", own, below[c]);
        if (is_folder(folder)) {
            snprintf(g_module_folder, sizeof g_module_folder, "'%s'", folder);
            load_folder(folder);
            return;
        }
    }
    snprintf(g_module_folder, sizeof g_module_folder,
             "skinner/modules, " SKINNER_BIN_TO_PREFIX "/" SKINNER_MODULE_LIBDIR
             "/skinner/modules, modules and ../modules beside '%s' (none exists)",
             own);
}

const char *sk_env_module_folder(void) {
    sk_env_load_modules();
    return g_module_folder;
}

sk_status sk_env_load_modules(void) {
    pthread_once(&g_modules_once, load_all_modules);
    return SK_OK;
}

const char *sk_module_path(int index) {
    sk_env_load_modules();
    const char *found = NULL;
    pthread_mutex_lock(&g_plugins_lock);
    for (int p = 0, seen = 0; p < g_num_handles && !found; p++)
        if (g_is_module[p] && seen++ == index) found = g_paths[p];
    pthread_mutex_unlock(&g_plugins_lock);
    return found;
}

void *sk_module_symbol(const char *symbol) {
    sk_env_load_modules();
    void *found = NULL;
    int searched = 0;
    pthread_mutex_lock(&g_plugins_lock);
    for (int p = 0; p < g_num_handles && !found; p++)
        if (g_is_module[p]) {
            searched++;
            found = dlsym(g_handles[p], symbol);
        }
    pthread_mutex_unlock(&g_plugins_lock);
    if (!found)
        sk_fail(SK_ERR_INVALID,
                "no loaded module exports '%s' (%d module%s loaded; is skinner's module folder "
                "installed? set SKINNER_MODULE_PATH to the folder of skinner-*.so)",
                symbol ? symbol : "(null)", searched, searched == 1 ? "" : "s");
    return found;
}
