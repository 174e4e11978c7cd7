/* The sweep's state: DIR/sweep.jsonl, one JSON line per finished trial, appended. The
 * file is the whole state (the suggestions are a function of the seed, the trial number
 * and the finished trials), so --resume replays it and goes on as if never stopped. */
#include "sweep.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

sk_sweep_obs sk_sweep_observe(const sk_sweep_spec *spec, const sk_sweep_trial *trial) {
    sk_sweep_obs obs = {.ok = trial->ok};
    for (int d = 0; d < spec->num_params; d++)
        obs.u[d] = sk_sweep_unit(&spec->params[d], trial->value[d]);
    obs.score = spec->maximize ? trial->metric : -trial->metric;
    obs.cost = trial->cost;
    return obs;
}

sk_status sk_sweep_state_append(const char *path, const sk_sweep_spec *spec,
                                const sk_sweep_trial *trial) {
    cJSON *line = cJSON_CreateObject(), *params = cJSON_CreateObject();
    if (!line || !params) {
        cJSON_Delete(line);
        cJSON_Delete(params);
        return sk_fail(SK_ERR_NOMEM, "out of memory writing '%s'", path);
    }
    cJSON_AddNumberToObject(line, "trial", trial->index);
    cJSON_AddStringToObject(line, "status", trial->ok ? "ok" : "failed");
    for (int d = 0; d < spec->num_params; d++)
        cJSON_AddNumberToObject(params, spec->params[d].key, trial->value[d]);
    cJSON_AddItemToObject(line, "params", params);
    if (trial->ok) {
        cJSON_AddNumberToObject(line, "metric", trial->metric);
        cJSON_AddNumberToObject(line, "cost", trial->cost);
    } else {
        cJSON_AddStringToObject(line, "message", trial->message);
    }
    if (trial->retest_of >= 0) cJSON_AddNumberToObject(line, "retest_of", trial->retest_of);
    cJSON_AddNumberToObject(line, "trial_seconds", trial->trial_seconds);
    cJSON_AddNumberToObject(line, "sweep_seconds", trial->sweep_seconds);
    char *text = cJSON_PrintUnformatted(line);
    cJSON_Delete(line);
    if (!text) return sk_fail(SK_ERR_NOMEM, "out of memory writing '%s'", path);
    size_t size = strlen(text);
    text[size] = '\n'; /* replaces the NUL: one write of the whole line */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    bool written = fd >= 0 && sk_write_all(fd, text, size + 1) && fsync(fd) == 0;
    int saved = errno;
    if (fd >= 0) close(fd);
    free(text);
    if (!written) return sk_fail(SK_ERR_IO, "cannot append to '%s': %s", path, strerror(saved));
    return SK_OK;
}

static sk_status parse_line(const char *path, int number, const char *text,
                            const sk_sweep_spec *spec, sk_sweep_trial *trial) {
    cJSON *line = cJSON_Parse(text);
    memset(trial, 0, sizeof *trial);
    trial->retest_of = -1;
    const cJSON *index = cJSON_GetObjectItemCaseSensitive(line, "trial");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(line, "status");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(line, "params");
    bool good = cJSON_IsNumber(index) && cJSON_IsString(status) && cJSON_IsObject(params) &&
                index->valuedouble >= 0 && index->valuedouble < 1e7;
    if (good) {
        trial->index = index->valueint;
        trial->ok = strcmp(status->valuestring, "ok") == 0;
        for (int d = 0; d < spec->num_params && good; d++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, spec->params[d].key);
            good = cJSON_IsNumber(v);
            if (good) trial->value[d] = v->valuedouble;
        }
        const cJSON *metric = cJSON_GetObjectItemCaseSensitive(line, "metric");
        const cJSON *cost = cJSON_GetObjectItemCaseSensitive(line, "cost");
        if (trial->ok) {
            good = good && cJSON_IsNumber(metric) && cJSON_IsNumber(cost);
            if (good) trial->metric = metric->valuedouble, trial->cost = cost->valuedouble;
        }
        const cJSON *message = cJSON_GetObjectItemCaseSensitive(line, "message");
        if (cJSON_IsString(message))
            snprintf(trial->message, sizeof trial->message, "%s", message->valuestring);
        const cJSON *retest = cJSON_GetObjectItemCaseSensitive(line, "retest_of");
        if (cJSON_IsNumber(retest)) trial->retest_of = retest->valueint;
        const cJSON *seconds = cJSON_GetObjectItemCaseSensitive(line, "trial_seconds");
        if (cJSON_IsNumber(seconds)) trial->trial_seconds = seconds->valuedouble;
        seconds = cJSON_GetObjectItemCaseSensitive(line, "sweep_seconds");
        if (cJSON_IsNumber(seconds)) trial->sweep_seconds = seconds->valuedouble;
    }
    cJSON_Delete(line);
    if (!good)
        return sk_fail_at(SK_ERR_CORRUPT, path, number,
                          "not a trial of this sweep (expected trial, status, params with each "
                          "tuned key, and metric and cost when ok)");
    return SK_OK;
}

sk_status sk_sweep_state_read(const char *path, const sk_sweep_spec *spec, sk_sweep_trial **trials,
                              int *count) {
    *trials = NULL;
    *count = 0;
    FILE *file = fopen(path, "r");
    if (!file) {
        if (errno == ENOENT) return SK_OK;
        return sk_fail(SK_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    }
    char *text = NULL;
    size_t capacity = 0;
    ssize_t length;
    off_t whole = 0; /* bytes of whole lines */
    int number = 0, allocated = 0;
    sk_status status = SK_OK;
    while (status == SK_OK && (length = getline(&text, &capacity, file)) > 0) {
        number++;
        if (text[length - 1] != '\n') break; /* torn by a kill: cut below */
        whole += length;
        if (*count == allocated) {
            allocated = allocated ? 2 * allocated : 64;
            sk_sweep_trial *grown = realloc(*trials, (size_t)allocated * sizeof *grown);
            if (!grown) {
                status = sk_fail(SK_ERR_NOMEM, "out of memory reading '%s'", path);
                break;
            }
            *trials = grown;
        }
        status = parse_line(path, number, text, spec, &(*trials)[*count]);
        if (status == SK_OK) (*count)++;
    }
    free(text);
    fclose(file);
    struct stat info;
    if (status == SK_OK && stat(path, &info) == 0 && info.st_size > whole &&
        truncate(path, whole) != 0)
        status = sk_fail(SK_ERR_IO, "cannot cut the torn last line of '%s': %s", path,
                         strerror(errno));
    if (status != SK_OK) {
        free(*trials);
        *trials = NULL;
        *count = 0;
    }
    return status;
}
