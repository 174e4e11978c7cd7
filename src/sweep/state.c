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

/* value under key as the shortest decimal that reads back as the same double (null if not
 * finite, as cJSON writes it). cJSON's own printer stops at 15 digits when the 17-digit
 * value is within a couple of ulps, so a metric of 475.50000000000006 came back as 475.5 and
 * a resumed sweep fitted other numbers than the one that never stopped (found by
 * fuzz_sweep). False when out of memory. */
static bool add_exact(cJSON *object, const char *key, double value) {
    char text[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, value);
        if (strtod(text, NULL) == value) break;
    }
    cJSON *item = isfinite(value) ? cJSON_CreateRaw(text) : cJSON_CreateNull();
    return item && cJSON_AddItemToObject(object, key, item);
}

sk_status sk_sweep_state_append(const char *path, const sk_sweep_spec *spec,
                                const sk_sweep_trial *trial) {
    cJSON *line = cJSON_CreateObject(), *params = cJSON_CreateObject();
    if (!line || !params) {
        cJSON_Delete(line);
        cJSON_Delete(params);
        return sk_fail(SK_ERR_NOMEM, "out of memory writing '%s'", path);
    }
    bool built = add_exact(line, "trial", trial->index) &&
                 cJSON_AddStringToObject(line, "status", trial->ok ? "ok" : "failed");
    for (int d = 0; d < spec->num_params; d++)
        built = built && add_exact(params, spec->params[d].key, trial->value[d]);
    built = built && cJSON_AddItemToObject(line, "params", params);
    if (!built) cJSON_Delete(params); /* not yet the line's */
    if (trial->ok)
        built = built && add_exact(line, "metric", trial->metric) &&
                add_exact(line, "cost", trial->cost);
    else
        built = built && cJSON_AddStringToObject(line, "message", trial->message);
    if (trial->retest_of >= 0) built = built && add_exact(line, "retest_of", trial->retest_of);
    built = built && add_exact(line, "trial_seconds", trial->trial_seconds) &&
            add_exact(line, "sweep_seconds", trial->sweep_seconds);
    char *text = built ? cJSON_PrintUnformatted(line) : NULL;
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

/* A finite number at key of line, into *out; false if absent, not a number or not finite
 * (cJSON reads 1e999 as infinity, which the writer could not write back). */
static bool finite_at(const cJSON *line, const char *key, double *out) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(line, key);
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble)) return false;
    *out = item->valuedouble;
    return true;
}

/* Whether value lies in param's [min, max], up to the rounding of the transform that made it
 * (a log_uniform value is exp(log(max)) at most): a value the sweep could not have suggested
 * (a 200-digit horizon, found by fuzz_sweep) is refused, not fitted far outside the space. */
static bool within_range(const sk_sweep_param *param, double value) {
    double slack = 1e-9 * fmax(fabs(param->min), fabs(param->max));
    return value >= param->min - slack && value <= param->max + slack;
}

#define STATE_EXPECTED                                                                         \
    "expected trial, status ok or failed, params with each tuned key within its range, metric "  \
    "and a positive cost when ok, all finite"

static sk_status parse_line(const char *path, int number, const char *text,
                            const sk_sweep_spec *spec, sk_sweep_trial *trial) {
    cJSON *line = cJSON_Parse(text);
    memset(trial, 0, sizeof *trial);
    trial->retest_of = -1;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(line, "status");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(line, "params");
    double index = -1, retest = -1;
    const char *bad = NULL; /* what is wrong with the line, NULL: nothing */
    if (!finite_at(line, "trial", &index) || index < 0 || index >= 1e7 || index != floor(index))
        bad = "its trial number";
    else if (!cJSON_IsString(status) ||
             (strcmp(status->valuestring, "ok") != 0 && strcmp(status->valuestring, "failed") != 0))
        bad = "its status";
    else if (!cJSON_IsObject(params))
        bad = "its params";
    if (!bad) {
        trial->index = (int)index;
        trial->ok = strcmp(status->valuestring, "ok") == 0;
        for (int d = 0; d < spec->num_params && !bad; d++)
            if (!finite_at(params, spec->params[d].key, &trial->value[d])) bad = "a tuned key";
            else if (!within_range(&spec->params[d], trial->value[d]))
                bad = "a tuned key (outside its range in the sweep file)";
    }
    if (!bad && trial->ok &&
        !(finite_at(line, "metric", &trial->metric) && finite_at(line, "cost", &trial->cost)))
        bad = "its metric or cost";
    if (!bad && trial->ok && !(trial->cost > 0)) bad = "its cost";
    if (!bad && cJSON_GetObjectItemCaseSensitive(line, "retest_of") &&
        (!finite_at(line, "retest_of", &retest) || retest < 0 || retest >= index ||
         retest != floor(retest)))
        bad = "its retest_of (an earlier trial)";
    if (!bad) {
        trial->retest_of = (int)retest;
        const cJSON *message = cJSON_GetObjectItemCaseSensitive(line, "message");
        if (cJSON_IsString(message))
            snprintf(trial->message, sizeof trial->message, "%s", message->valuestring);
        (void)finite_at(line, "trial_seconds", &trial->trial_seconds);
        (void)finite_at(line, "sweep_seconds", &trial->sweep_seconds);
    }
    cJSON_Delete(line);
    if (bad)
        return sk_fail_at(SK_ERR_CORRUPT, path, number,
                          "not a trial of this sweep: %s is wrong (" STATE_EXPECTED ")", bad);
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
