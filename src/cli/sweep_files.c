/* skinner sweep's folder: creating it after every check, opening it again, reading the
 * trials' files, and `skinner sweep report`. */
#define _GNU_SOURCE /* nftw's FTW_DEPTH */
#include "cli.h"
#include "sweep_cli.h"

#include "skinner/module.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBE_OUTPUT_MAX 2048

char *sweep_read_text(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    char chunk[4096];
    size_t got;
    while (out && (got = fread(chunk, 1, sizeof chunk, file)) > 0) fwrite(chunk, 1, got, out);
    fclose(file);
    if (!out) return NULL;
    fclose(out);
    return text;
}

static int remove_entry(const char *path, const struct stat *info, int flag, struct FTW *ftw) {
    (void)info, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void sweep_remove_tree(const char *path) {
    if (access(path, F_OK) == 0) nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

bool sweep_summary_number(const char *path, const char *key, double *out) {
    char *text = sweep_read_text(path);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    bool found = cJSON_IsNumber(item) && isfinite(item->valuedouble);
    if (found) *out = item->valuedouble;
    cJSON_Delete(root);
    return found;
}

int sweep_highest_trial(const char *dir) {
    DIR *folder = opendir(dir);
    int highest = -1;
    if (!folder) return highest;
    struct dirent *entry;
    while ((entry = readdir(folder))) {
        int index = -1;
        char tail;
        if (sscanf(entry->d_name, "trial-%d%c", &index, &tail) == 1 && index >= 0 &&
            index < 1000000 && index > highest)
            highest = index;
    }
    closedir(folder);
    return highest;
}

static sk_status copy_file(const char *from, const char *to) {
    char *text = sweep_read_text(from);
    if (!text) return sk_fail(SK_ERR_IO, "cannot read '%s': %s", from, strerror(errno));
    FILE *file = fopen(to, "w");
    bool written = file && fputs(text, file) >= 0;
    if (file && fclose(file) != 0) written = false;
    free(text);
    return written ? SK_OK : sk_fail(SK_ERR_IO, "cannot write '%s'", to);
}

/* Runs `skinner config ENV --config probe` (how train would resolve a trial's config); its
 * error message in message, or "" when it accepted the config. */
static sk_status probe_config(const char *self, const char *env, const char *probe, char *message,
                              size_t size) {
    int pipe_fds[2];
    message[0] = '\0';
    if (pipe(pipe_fds) != 0) return sk_fail(SK_ERR_IO, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) return sk_fail(SK_ERR_IO, "fork: %s", strerror(errno));
    if (pid == 0) {
        int null_fd = open("/dev/null", O_WRONLY);
        if (null_fd >= 0) dup2(null_fd, STDOUT_FILENO);
        dup2(pipe_fds[1], STDERR_FILENO);
        close(pipe_fds[0]);
        scrub_launcher_environment();
        char *argv[] = {(char *)self, "config", (char *)env, "--config", (char *)probe, NULL};
        execv(self, argv);
        _exit(127);
    }
    close(pipe_fds[1]);
    size_t used = 0;
    ssize_t got;
    while ((got = read(pipe_fds[0], message + used, size - 1 - used)) > 0) used += (size_t)got;
    close(pipe_fds[0]);
    message[used] = '\0';
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) message[0] = '\0';
    else if (!message[0]) snprintf(message, size, "'skinner config' failed");
    char *end = message + strlen(message);
    while (end > message && end[-1] == '\n') *--end = '\0';
    return SK_OK;
}

/* The line of the sweep file a config error is about: the key it names, else the env's. */
static int blame_line(const sk_sweep_spec *spec, const char *message) {
    for (int d = 0; d < spec->num_params; d++)
        if (strstr(message, spec->params[d].key)) return spec->params[d].line;
    for (int i = 0; i < spec->num_fixed; i++)
        if (strstr(message, spec->fixed_key[i])) return spec->fixed_line[i];
    if (spec->base_config[0] && strstr(message, spec->base_config)) return spec->config_line;
    return spec->env_line;
}

/* Every tuned key at its min, then at its max, as a trial's config: an unknown key, a
 * value the trainer refuses or an env that does not exist stop the sweep here. */
static sk_status check_trial_configs(const char *path, const sk_sweep_spec *spec, const char *self) {
    char probe[] = "/tmp/skinner-sweep-probe-XXXXXX";
    int fd = mkstemp(probe);
    if (fd < 0) return sk_fail(SK_ERR_IO, "cannot create a probe file: %s", strerror(errno));
    close(fd);
    sk_status status = SK_OK;
    for (int end = 0; end < 2 && status == SK_OK; end++) {
        double value[SK_SWEEP_MAX_PARAMS];
        for (int d = 0; d < spec->num_params; d++)
            value[d] = sk_sweep_value(&spec->params[d], end ? 1.0 : -1.0);
        status = sweep_trial_config(spec, value, probe);
        char message[PROBE_OUTPUT_MAX];
        if (status == SK_OK) status = probe_config(self, spec->env, probe, message, sizeof message);
        if (status == SK_OK && message[0]) {
            const char *text = strncmp(message, "skinner: error: ", 16) == 0 ? message + 16 : message;
            status = sk_fail_at(SK_ERR_CONFIG, path, blame_line(spec, text),
                                "a trial with every tuned key at its %s would be refused: %s",
                                end ? "max" : "min", text);
        }
    }
    unlink(probe);
    return status;
}

sk_status sweep_create(const char *dir, const char *config, const char *self, sk_sweep_spec *spec) {
    sk_status status = sk_sweep_spec_load(spec, config);
    if (status != SK_OK) return status;
    DIR *existing = opendir(dir);
    if (existing) {
        struct dirent *entry;
        bool empty = true;
        while ((entry = readdir(existing)))
            if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) empty = false;
        closedir(existing);
        if (!empty)
            return sk_fail(SK_ERR_IO,
                           "sweep folder '%s' exists and is not empty (continue a sweep with "
                           "--resume %s, or give a new --run-dir)",
                           dir, dir);
    }
    status = check_trial_configs(config, spec, self);
    if (status != SK_OK) return status;
    char path[PATH_MAX + 64];
    status = sk_mkdirs(dir);
    if (status == SK_OK && spec->base_config[0]) {
        snprintf(path, sizeof path, "%s/base.ini", dir);
        status = copy_file(spec->base_config, path);
        snprintf(spec->base_config, sizeof spec->base_config, "%s", path);
    }
    /* sweep.ini last and whole (by rename): other ranks wait for it to join */
    char temporary[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/sweep.ini", dir);
    snprintf(temporary, sizeof temporary, "%s/sweep.ini.new", dir);
    if (status == SK_OK) status = copy_file(config, temporary);
    if (status == SK_OK && rename(temporary, path) != 0)
        status = sk_fail(SK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    return status;
}

sk_status sweep_open_existing(const char *dir, sk_sweep_spec *spec) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/sweep.ini", dir);
    if (access(path, R_OK) != 0)
        return sk_fail(SK_ERR_IO, "'%s' is not a sweep folder (no sweep.ini)", dir);
    sk_status status = sk_sweep_spec_load(spec, path);
    if (status == SK_OK && spec->base_config[0])
        snprintf(spec->base_config, sizeof spec->base_config, "%s/base.ini", dir);
    return status;
}
