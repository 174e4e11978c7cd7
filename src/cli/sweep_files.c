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
    const cJSON *item = root;
    char name[SK_SWEEP_KEY_MAX];
    for (const char *part = key; item && *part;) {
        size_t length = strcspn(part, ".");
        snprintf(name, sizeof name, "%.*s", (int)(length < sizeof name - 1 ? length : sizeof name - 1),
                 part);
        item = cJSON_GetObjectItemCaseSensitive(item, name);
        part += length + (part[length] == '.');
    }
    bool found = cJSON_IsNumber(item) && isfinite(item->valuedouble);
    if (found) *out = item->valuedouble;
    cJSON_Delete(root);
    return found;
}

int sweep_split_args(char *text, char **args) {
    int count = 0;
    for (char *word = strtok(text, " \t"); word; word = strtok(NULL, " \t")) {
        if (count == SWEEP_EVAL_MAX_ARGS) return -1;
        args[count++] = word;
    }
    return count;
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

/* Runs argv (this program) with stdout to out_path (NULL: discarded); its error message in
 * message, or "" when it exited 0. */
static sk_status run_probe(char **argv, const char *out_path, char *message, size_t size) {
    int pipe_fds[2];
    message[0] = '\0';
    if (pipe(pipe_fds) != 0) return sk_fail(SK_ERR_IO, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) return sk_fail(SK_ERR_IO, "fork: %s", strerror(errno));
    if (pid == 0) {
        int out_fd = out_path ? open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644)
                              : open("/dev/null", O_WRONLY);
        if (out_fd >= 0) dup2(out_fd, STDOUT_FILENO);
        dup2(pipe_fds[1], STDERR_FILENO);
        close(pipe_fds[0]);
        scrub_launcher_environment();
        execv(argv[0], argv);
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
    else if (!message[0]) snprintf(message, size, "'skinner %s' failed", argv[1]);
    char *end = message + strlen(message);
    while (end > message && end[-1] == '\n') *--end = '\0';
    /* the last line says what went wrong */
    char *last = strrchr(message, '\n');
    if (last) memmove(message, last + 1, strlen(last + 1) + 1);
    return SK_OK;
}

/* Runs `skinner config ENV --config probe` (how train would resolve a trial's config). */
static sk_status probe_config(const char *self, const char *env, const char *probe, char *message,
                              size_t size) {
    char *argv[] = {(char *)self, "config", (char *)env, "--config", (char *)probe, NULL};
    return run_probe(argv, NULL, message, size);
}

/* metric = eval.KEY: a one-update run of the centre's config, then `skinner eval --json` with
 * the sweep's eval arguments; refused unless that reports KEY as a number. */
static sk_status check_eval_metric(const char *path, const sk_sweep_spec *spec, const char *self) {
    char dir[] = "/tmp/skinner-sweep-eval-XXXXXX", config[128], run_dir[128], json[128];
    if (!mkdtemp(dir)) return sk_fail(SK_ERR_IO, "cannot create a probe folder: %s", strerror(errno));
    snprintf(config, sizeof config, "%s/probe.ini", dir);
    snprintf(run_dir, sizeof run_dir, "%s/run", dir);
    snprintf(json, sizeof json, "%s/eval.json", dir);
    double value[SK_SWEEP_MAX_PARAMS];
    for (int d = 0; d < spec->num_params; d++) value[d] = spec->params[d].centre;
    char message[PROBE_OUTPUT_MAX], threads[32], eval_text[SK_SWEEP_TEXT_MAX];
    snprintf(threads, sizeof threads, "%d", spec->threads_per_trial);
    sk_status status = sweep_trial_config(spec, value, true, config);
    char *train[] = {(char *)self, "train", (char *)spec->env, "--config", config, "--run-dir",
                     run_dir, "--total-steps", "1", "--threads", threads, "--quiet", NULL};
    if (status == SK_OK) status = run_probe(train, NULL, message, sizeof message);
    if (status == SK_OK && message[0])
        status = sk_fail_at(SK_ERR_CONFIG, path, spec->metric_line,
                            "metric = eval.%s: a probe run to evaluate failed: %s", spec->metric,
                            message);
    char *eval[SWEEP_EVAL_MAX_ARGS + 8] = {(char *)self, "eval", (char *)spec->env, "--checkpoint",
                                           run_dir, "--json"};
    snprintf(eval_text, sizeof eval_text, "%s", spec->eval_args);
    int count = sweep_split_args(eval_text, eval + 6);
    if (status == SK_OK && count < 0)
        status = sk_fail_at(SK_ERR_CONFIG, path, spec->metric_line, "eval has more than %d arguments",
                            SWEEP_EVAL_MAX_ARGS);
    if (status == SK_OK) {
        eval[6 + count] = NULL;
        status = run_probe(eval, json, message, sizeof message);
    }
    if (status == SK_OK && message[0])
        status = sk_fail_at(SK_ERR_CONFIG, path, spec->metric_line,
                            "metric = eval.%s: 'skinner eval %s --json %s' of a trial's run fails: %s",
                            spec->metric, spec->env, spec->eval_args, message);
    double number;
    if (status == SK_OK && !sweep_summary_number(json, spec->metric, &number)) {
        char *text = sweep_read_text(json);
        if (text) text[strcspn(text, "\n")] = '\0';
        status = sk_fail_at(SK_ERR_CONFIG, path, spec->metric_line,
                            "metric = eval.%s: 'skinner eval %s --json' reports no number %s "
                            "(it reports: %.600s)",
                            spec->metric, spec->env, spec->metric, text ? text : "nothing");
        free(text);
    }
    sweep_remove_tree(dir);
    return status;
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
        status = sweep_trial_config(spec, value, true, probe);
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
    if (status == SK_OK && spec->metric_from_eval) status = check_eval_metric(path, spec, self);
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
