#include "run_files.h"

#include "algo.h"
#include "events.h"

#include "../io/live.h"
#include "../io/safetensors.h"
#include "../io/tfevents.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define LOCK_FILE "run.lock"
#define LOCK_TEXT_MAX 2048 /* bytes of the holder's record read back or written */

/* This process's command line, arguments separated by spaces, into out. */
static void own_command(char *out, size_t size) {
    snprintf(out, size, "(unknown command)");
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f) return;
    size_t len = fread(out, 1, size - 1, f);
    fclose(f);
    while (len > 0 && out[len - 1] == '\0') len--;
    for (size_t k = 0; k < len; k++)
        if (out[k] == '\0') out[k] = ' ';
    out[len] = '\0';
}

/* The holder's record (pid, host, command lines) as one line: "pid 12, host h:
 * skinner train ...". Empty if the holder has not written it yet. */
static void holder_of(int fd, char *out, size_t size) {
    char text[LOCK_TEXT_MAX];
    ssize_t got = pread(fd, text, sizeof text - 1, 0);
    text[got > 0 ? got : 0] = '\0';
    char pid[32] = "?", host[256] = "?", command[LOCK_TEXT_MAX] = "?";
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "pid ", 4) == 0) snprintf(pid, sizeof pid, "%s", line + 4);
        else if (strncmp(line, "host ", 5) == 0) snprintf(host, sizeof host, "%s", line + 5);
        else if (strncmp(line, "command ", 8) == 0)
            snprintf(command, sizeof command, "%s", line + 8);
    }
    snprintf(out, size, "pid %s on host %s: %s", pid, host, command);
}

sk_status sk_run_lock(const char *dir, int *lock_fd) {
    *lock_fd = -1;
    char path[4200];
    snprintf(path, sizeof path, "%s/" LOCK_FILE, dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return sk_fail(SK_ERR_IO, "cannot open the run folder's lock '%s': %s", path,
                       strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int error = errno;
        char holder[LOCK_TEXT_MAX + 300];
        if (error == EWOULDBLOCK) holder_of(fd, holder, sizeof holder);
        close(fd);
        if (error != EWOULDBLOCK)
            return sk_fail(SK_ERR_IO, "cannot lock the run folder '%s' (%s): %s", dir, path,
                           strerror(error));
        return sk_fail(SK_ERR_IO,
                       "run folder '%s' is in use by another process (%s); two writers would "
                       "interleave its metrics.csv and checkpoints: wait for that run to end, or "
                       "stop it, then resume it",
                       dir, holder);
    }
    char host[256] = "?", command[LOCK_TEXT_MAX - 300], record[LOCK_TEXT_MAX];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    own_command(command, sizeof command);
    int len = snprintf(record, sizeof record, "pid %ld\nhost %s\ncommand %s\n", (long)getpid(),
                       host, command);
    size_t size = (size_t)SK_MIN(len, (int)sizeof record - 1);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, record, size, 0) != (ssize_t)size) {
        int error = errno;
        close(fd);
        return sk_fail(SK_ERR_IO, "cannot write the run folder's lock '%s': %s", path,
                       strerror(error));
    }
    *lock_fd = fd;
    return SK_OK;
}

void sk_run_unlock(int lock_fd) {
    if (lock_fd >= 0) close(lock_fd); /* closing the last descriptor releases the flock */
}

/* metrics.csv's columns, in the order of sk_run_metrics_row's format; TensorBoard's
 * scalars (telemetry.tensorboard) are tagged with them */
static const char *const g_metrics_columns[] = {
    "update",   "steps",       "wall_seconds", "sps",     "mean_return", "mean_length",
    "episodes", "policy_loss", "value_loss",   "entropy", "approx_kl",   "clip_fraction",
    "explained_variance",      "learning_rate"};
enum { METRICS_COLUMNS = sizeof g_metrics_columns / sizeof g_metrics_columns[0] };
#define METRICS_ROW_MAX 1024 /* 14 numbers of at most ~25 characters */

/* On resume, metrics.csv (and self-play's elo.csv) keeps the rows up to the checkpoint's
 * update: rows written after the last checkpoint belong to updates that will run again. */
sk_status sk_run_truncate_rows(const char *path, int64_t last_update) {
    FILE *in = fopen(path, "r");
    if (!in) return sk_fail(SK_ERR_IO, "cannot read '%s' to resume it", path);
    char *kept = NULL;
    size_t kept_size = 0;
    FILE *out = open_memstream(&kept, &kept_size);
    char line[4096];
    bool header = true;
    while (out && fgets(line, sizeof line, in)) {
        if (!header && strtoll(line, NULL, 10) > last_update) break;
        fputs(line, out);
        header = false;
    }
    fclose(in);
    if (!out) return sk_fail(SK_ERR_NOMEM, "out of memory");
    fclose(out);
    FILE *rewrite = fopen(path, "w");
    bool ok = rewrite && fwrite(kept, 1, kept_size, rewrite) == kept_size;
    if (rewrite) ok = (fclose(rewrite) == 0) && ok;
    free(kept);
    return ok ? SK_OK : sk_fail(SK_ERR_IO, "cannot rewrite '%s'", path);
}

/* A multi-agent env's returns per role (its first SK_MAX_ROLES agents) by update, beside
 * metrics.csv (whose columns skinner plot, the dashboard and users' scripts read as they
 * are): update,steps,return_NAME...,episodes_NAME..., the mean return of the episodes that
 * ended in that update for that role, empty when none did. Names keep [A-Za-z0-9_-]. */
static void roles_header(FILE *f, const sk_trainer *tr) {
    int roles = SK_MIN(sk_env_agents(tr->env), SK_MAX_ROLES);
    fputs("update,steps", f);
    for (int part = 0; part < 2; part++)
        for (int k = 0; k < roles; k++) {
            fprintf(f, ",%s_", part ? "episodes" : "return");
            if (!tr->env->agent_names) {
                fprintf(f, "agent_%d", k);
                continue;
            }
            for (const char *c = tr->env->agent_names[k]; *c; c++)
                fputc(isalnum((unsigned char)*c) || *c == '-' ? *c : '_', f);
        }
    fputc('\n', f);
}

sk_status sk_run_open_rows(const sk_trainer *tr, const char *name, int64_t last_update, FILE **f,
                           char *path, size_t size) {
    snprintf(path, size, "%s/%s", tr->out.run_dir, name);
    bool resumed = tr->resumed && access(path, F_OK) == 0;
    if (resumed) {
        sk_status status = sk_run_truncate_rows(path, last_update);
        if (status != SK_OK) return status;
    }
    if (!(*f = fopen(path, resumed ? "a" : "w")))
        return sk_fail(SK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    return SK_OK;
}

static sk_status open_roles(sk_trainer *tr) {
    if (sk_env_agents(tr->env) < 2) return SK_OK;
    char path[4200];
    sk_status status = sk_run_open_rows(tr, "roles.csv", tr->progress.update, &tr->out.roles, path,
                                        sizeof path);
    if (status != SK_OK) return status;
    if (ftell(tr->out.roles) == 0) roles_header(tr->out.roles, tr);
    fflush(tr->out.roles);
    return SK_OK;
}

/* telemetry.tensorboard: the event file beside metrics.csv, its scalars by env steps (the
 * x of skinner plot and the dashboard). A resumed run cuts what followed the checkpoint,
 * as metrics.csv's rows, and writes the config it runs with at the checkpoint's steps. */
static sk_status open_tensorboard(sk_trainer *tr) {
    if (!tr->s.tensorboard) return SK_OK;
    sk_status status =
        sk_tfevents_open(&tr->out.tensorboard, tr->out.run_dir, tr->resumed, tr->progress.steps);
    if (status != SK_OK) return status;
    char *config = sk_config_to_string(tr->cfg);
    if (!config) return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_tfevents_text(tr->out.tensorboard, tr->progress.steps, "config", config);
    free(config);
    return SK_OK;
}

/* A CSV row's cells (count of them from `cells`, named by tags) as scalars, each the value
 * the row holds (the text parsed back, so a value is float(the CSV's number) rounded to
 * float, whatever the CSV's precision): metrics.csv's rows, learner.csv's figures. */
static void tensorboard_row(sk_trainer *tr, int64_t steps, const char *cells,
                            const char *const *tags, int count) {
    float values[METRICS_COLUMNS];
    SK_ASSERT(count <= METRICS_COLUMNS);
    const char *at = cells;
    for (int k = 0; k < count; k++) {
        char *end;
        values[k] = (float)strtod(at, &end);
        at = *end == ',' ? end + 1 : end;
    }
    sk_tfevents_scalars(tr->out.tensorboard, steps, tags, values, count);
}

/* learner.csv: update,steps and the learner's own figures (sk_algo.figures), a row beside
 * each metrics.csv row, thinned and resumed as it is (its rows after the checkpoint cut). */
static sk_status open_learner(sk_trainer *tr) {
    if (!tr->algo->figures) return SK_OK;
    char path[4200];
    sk_status status = sk_run_open_rows(tr, "learner.csv", tr->progress.update, &tr->out.learner,
                                        path, sizeof path);
    if (status != SK_OK) return status;
    if (ftell(tr->out.learner) == 0) {
        fputs("update,steps", tr->out.learner);
        for (const char *const *name = tr->algo->figures; *name; name++)
            fprintf(tr->out.learner, ",%s", *name);
        fputc('\n', tr->out.learner);
    }
    fflush(tr->out.learner);
    return SK_OK;
}

/* learner.csv's row of update st (and its figures as TensorBoard scalars, as metrics.csv's) */
static void learner_row(sk_trainer *tr, const sk_update_stats *st) {
    double values[SK_ALGO_MAX_FIGURES];
    char row[METRICS_ROW_MAX];
    int count = 0;
    while (tr->algo->figures[count]) count++;
    SK_ASSERT(count <= SK_ALGO_MAX_FIGURES);
    tr->algo->figure_values(tr, values);
    int figures_at =
        snprintf(row, sizeof row, "%lld,%lld,", (long long)st->update, (long long)st->steps);
    for (int k = 0, at = figures_at; k < count; k++) /* 8 numbers fit the row many times */
        at += snprintf(row + at, sizeof row - (size_t)at, "%.9g%c", values[k],
                       k + 1 < count ? ',' : '\n');
    fputs(row, tr->out.learner);
    fflush(tr->out.learner);
    if (tr->out.tensorboard)
        tensorboard_row(tr, st->steps, row + figures_at, tr->algo->figures, count);
}

/* A resumed run's live.bin starts from the checkpoint's figures (its losses were not saved:
 * NaN), so `skinner monitor` shows where the run stands before the first update, and after a
 * resume that had no update left to run, rather than update 0. */
static void live_from_checkpoint(sk_trainer *tr) {
    const double elapsed = tr->progress.elapsed_before;
    sk_update_stats st = {
        .update = tr->progress.update, .steps = tr->progress.steps, .wall_seconds = elapsed,
        .sps = elapsed > 0.0 ? (double)tr->progress.steps / elapsed : 0.0,
        .mean_return = sk_window_mean(tr->progress.window_return, tr->progress.window_count),
        .mean_length = sk_window_mean(tr->progress.window_length, tr->progress.window_count),
        .episodes = tr->progress.episodes, .policy_loss = NAN, .value_loss = NAN, .entropy = NAN,
        .approx_kl = NAN, .clip_fraction = NAN, .explained_variance = NAN, .learning_rate = NAN,
        .anomalies = tr->learner.governor.anomalies};
    sk_live_update(tr->out.live, &st, tr->progress.result.solved, tr->progress.result.solved_at_steps);
}

sk_status sk_run_begin(sk_trainer *tr) {
    char path[4200];
    snprintf(path, sizeof path, "%s/config.ini", tr->out.run_dir);
    sk_status status = sk_config_write(tr->cfg, path);
    if (status != SK_OK) return status;
    snprintf(path, sizeof path, "%s/metrics.csv", tr->out.run_dir);
    if (tr->resumed) {
        status = sk_run_truncate_rows(path, tr->progress.update);
        if (status != SK_OK) return status;
        tr->out.metrics = fopen(path, "a");
    } else {
        tr->out.metrics = fopen(path, "w");
        for (int k = 0; tr->out.metrics && k < METRICS_COLUMNS; k++)
            fprintf(tr->out.metrics, "%s%c", g_metrics_columns[k],
                    k + 1 < METRICS_COLUMNS ? ',' : '\n');
    }
    if (!tr->out.metrics) return sk_fail(SK_ERR_IO, "cannot write '%s'", path);
    fflush(tr->out.metrics);
    status = open_tensorboard(tr);
    if (status != SK_OK) return status;
    status = open_roles(tr);
    if (status != SK_OK) return status;
    status = open_learner(tr);
    if (status != SK_OK) return status;
    snprintf(path, sizeof path, "%s/live.bin", tr->out.run_dir);
    int64_t num_updates = SK_MAX(1, tr->s.total_steps / tr->batch_size);
    status = sk_live_create(&tr->out.live, path, tr->env->id, num_updates * tr->batch_size);
    if (status != SK_OK) return status;
    if (tr->resumed) live_from_checkpoint(tr);
    return sk_events_begin(tr);
}

sk_status sk_run_checkpoint(sk_trainer *tr) {
    char path[4200];
    snprintf(path, sizeof path, "%s/policy.safetensors", tr->out.run_dir);
    sk_status status = sk_trainer_save(tr, path);
    if (status == SK_OK) sk_events_checkpoint(tr, path);
    return status;
}

void sk_run_metrics_row(sk_trainer *tr, const sk_update_stats *st) {
    char row[METRICS_ROW_MAX];
    snprintf(row, sizeof row,
             "%lld,%lld,%.3f,%.0f,%.6g,%.6g,%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n",
             (long long)st->update, (long long)st->steps, st->wall_seconds, st->sps,
             st->mean_return, st->mean_length, (long long)st->episodes, st->policy_loss,
             st->value_loss, st->entropy, st->approx_kl, st->clip_fraction,
             st->explained_variance, st->learning_rate);
    fputs(row, tr->out.metrics);
    fflush(tr->out.metrics);
    if (tr->out.tensorboard)
        tensorboard_row(tr, st->steps, row, g_metrics_columns, METRICS_COLUMNS);
    if (tr->out.learner) learner_row(tr, st);
    if (!tr->out.roles) return;
    int roles = SK_MIN(sk_env_agents(tr->env), SK_MAX_ROLES);
    fprintf(tr->out.roles, "%lld,%lld", (long long)st->update, (long long)st->steps);
    for (int k = 0; k < roles; k++) {
        int64_t count = tr->progress.role_count[k];
        if (count) fprintf(tr->out.roles, ",%.6g", tr->progress.role_return_sum[k] / (double)count);
        else fputc(',', tr->out.roles);
    }
    for (int k = 0; k < roles; k++)
        fprintf(tr->out.roles, ",%lld", (long long)tr->progress.role_count[k]);
    fputc('\n', tr->out.roles);
    fflush(tr->out.roles);
}

static void json_number(FILE *f, const char *key, double value, bool last) {
    if (isfinite(value)) fprintf(f, "  \"%s\": %.10g%s\n", key, value, last ? "" : ",");
    else fprintf(f, "  \"%s\": null%s\n", key, last ? "" : ",");
}

/* A multi-agent env's episodes and mean return per role (its first
 * SK_MAX_ROLES agents, by name), over the episodes this process saw. */
static void write_roles(FILE *f, const sk_trainer *tr) {
    int roles = SK_MIN(sk_env_agents(tr->env), SK_MAX_ROLES);
    if (roles < 2) return;
    fprintf(f, "  \"roles\": {");
    for (int k = 0; k < roles; k++) {
        int64_t count = tr->progress.role_count_total[k];
        double mean = count ? tr->progress.role_return_total[k] / (double)count : 0.0;
        if (tr->env->agent_names) fprintf(f, "%s\"%s\": ", k ? ", " : "", tr->env->agent_names[k]);
        else fprintf(f, "%s\"agent_%d\": ", k ? ", " : "", k);
        fprintf(f, "{\"episodes\": %lld, \"mean_return\": %.10g}", (long long)count, mean);
    }
    fprintf(f, "},\n");
}

sk_status sk_run_end(sk_trainer *tr, sk_status run_status) {
    sk_live_set_status(tr->out.live, run_status != SK_OK      ? SK_LIVE_FAILED
                                 : tr->progress.result.interrupted ? SK_LIVE_INTERRUPTED
                                                          : SK_LIVE_FINISHED);
    sk_live_close(tr->out.live);
    tr->out.live = NULL;
    if (tr->out.metrics) {
        fclose(tr->out.metrics);
        tr->out.metrics = NULL;
    }
    if (tr->out.roles) {
        fclose(tr->out.roles);
        tr->out.roles = NULL;
    }
    if (tr->out.learner) {
        fclose(tr->out.learner);
        tr->out.learner = NULL;
    }
    /* a row that did not reach the event file warns, as metrics.csv's rows go unchecked:
     * the run and its checkpoint stand */
    if (sk_tfevents_close(tr->out.tensorboard) != SK_OK) sk_log(1, "%s", sk_last_error());
    tr->out.tensorboard = NULL;
    /* an aborted run keeps its last checkpoint: the env state after the
     * aborted rollout is not one to resume from */
    sk_status status = atomic_load(&tr->abort_requested) ? SK_OK : sk_run_checkpoint(tr);
    uint64_t dropped = sk_events_end(tr, status != SK_OK ? status : run_status);
    if (dropped > 0)
        sk_log(1, "telemetry dropped %llu events (the event ring was full)",
               (unsigned long long)dropped);
    if (status != SK_OK) return status;
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", tr->out.run_dir);
    FILE *f = fopen(path, "w");
    if (!f) return sk_fail(SK_ERR_IO, "cannot write '%s'", path);
    const sk_train_result *r = &tr->progress.result;
    fprintf(f, "{\n  \"env\": \"%s\",\n", tr->env->id);
    fprintf(f, "  \"algo\": \"%s\",\n", tr->algo->name);
    fprintf(f, "  \"seed\": %llu,\n", (unsigned long long)tr->s.seed);
    fprintf(f, "  \"threads\": %d,\n", tr->num_threads);
    fprintf(f, "  \"learner_threads\": %d,\n", tr->learner_threads);
    fprintf(f, "  \"slices\": %d,\n", tr->num_workers);
    fprintf(f, "  \"num_envs\": %d,\n", tr->s.num_envs);
    fprintf(f, "  \"total_steps\": %lld,\n", (long long)r->total_steps);
    json_number(f, "wall_seconds", r->wall_seconds, false);
    json_number(f, "sps", r->sps, false);
    json_number(f, "rollout_idle", sk_trainer_rollout_idle(tr), false);
    fprintf(f, "  \"solved\": %s,\n", r->solved ? "true" : "false");
    json_number(f, "solved_threshold", tr->env->solved_threshold, false);
    if (r->solved) fprintf(f, "  \"solved_at_steps\": %lld,\n", (long long)r->solved_at_steps);
    else fprintf(f, "  \"solved_at_steps\": null,\n");
    json_number(f, "solved_at_seconds", r->solved_at_seconds, false);
    json_number(f, "final_mean_return", r->final_mean_return, false);
    fprintf(f, "  \"episodes\": %lld,\n", (long long)tr->progress.episodes);
    write_roles(f, tr);
    sk_selfplay_summary(tr, f);
    fprintf(f, "  \"interrupted\": %s,\n", r->interrupted ? "true" : "false");
    fprintf(f, "  \"anomalies\": %lld,\n", (long long)r->anomalies);
    fprintf(f, "  \"telemetry_dropped\": %llu,\n", (unsigned long long)dropped);
    fprintf(f, "  \"checkpoint\": \"policy.safetensors\"\n}\n");
    if (fclose(f) != 0) return sk_fail(SK_ERR_IO, "cannot write '%s'", path);
    return SK_OK;
}
