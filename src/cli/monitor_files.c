/* What skinner monitor reads beside a run's metrics.csv (the path monitor.c follows) other
 * than the live file: the learner in config.ini, its own figures from learner.csv, and the
 * self-play lines from elo.csv and opponents.csv, each summed into one line of text; and the
 * table of a folder of runs. */
#include "cli.h"
#include "io/live.h"
#include "io/run_state.h"
#include "sweep_cli.h"
#include "train/selfplay.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The file `name` beside metrics (a run's metrics.csv), into path; false without one. */
static bool run_file(const char *metrics, const char *name, char *path, size_t size) {
    const char *slash = strrchr(metrics, '/');
    if (!metrics[0]) return false;
    snprintf(path, size, "%.*s%s", slash ? (int)(slash - metrics + 1) : 0, metrics, name);
    return true;
}

bool cli_monitor_learner(const char *metrics, char *out, size_t size) {
    char path[4300];
    sk_config *cfg = run_file(metrics, "config.ini", path, sizeof path) ? sk_config_new() : NULL;
    bool read = cfg && sk_config_load_file(cfg, path) == SK_OK;
    const char *algo = read ? sk_config_get(cfg, "train.algo") : NULL;
    snprintf(out, size, "%s", algo ? algo : "ppo"); /* none: a skinner before train.algo */
    sk_config_free(cfg);
    return read;
}

/* A self-play run's ratings (RUN_DIR/elo.csv beside metrics.csv, its last
 * row: update, games, the learner's rating, the pool's) as one line into
 * out; false when the run has none. */
bool cli_monitor_elo_line(const char *metrics, char *out, size_t size) {
    char path[4300], line[1024] = "", row[1024];
    FILE *f = run_file(metrics, "elo.csv", path, sizeof path) ? fopen(path, "r") : NULL;
    if (!f) return false;
    while (fgets(row, sizeof row, f))
        if (row[0] >= '0' && row[0] <= '9') snprintf(line, sizeof line, "%s", row);
    fclose(f);
    long long update, games;
    double learner;
    int used = 0;
    if (sscanf(line, "%lld,%lld,%lf%n", &update, &games, &learner, &used) != 3) return false;
    size_t at = (size_t)snprintf(out, size, "learner %.0f after %lld games; pool", learner, games);
    for (const char *p = line + used; *p == ',' && at < size; ) {
        char *end;
        double rating = strtod(p + 1, &end);
        if (end == p + 1) break; /* an empty slot: the pool is not full yet */
        at += (size_t)snprintf(out + at, size - at, " %.0f", rating);
        p = end;
    }
    return true;
}

#define OPPONENT_ROWS 10 /* updates the opponents line sums over */

/* The next line of f into buf (size bytes) without its newline; false at the end. A line
 * cut short (longer than buf, or the last one still being written) sets *whole false. */
static bool read_line(FILE *f, char *buf, size_t size, bool *whole) {
    if (!fgets(buf, (int)size, f)) return false;
    size_t n = strlen(buf);
    *whole = n > 0 && buf[n - 1] == '\n';
    if (*whole) buf[n - 1] = '\0';
    else if (n + 1 == size) /* the rest of a long line, skipped */
        for (int c = fgetc(f); c != EOF && c != '\n'; c = fgetc(f)) {}
    return true;
}

/* A row of opponents.csv, "UPDATE,MEAN,GAMES,...", as each of the count players' summed score
 * (mean x games; MEAN is empty without games) and games; false for a row that is not one. */
static bool parse_row(const char *row, int count, double *score, long long *games) {
    if (row[0] < '0' || row[0] > '9') return false;
    const char *p = strchr(row, ',');
    for (int k = 0; k < count; k++) {
        if (!p) return false;
        const char *cell = p + 1;
        char *end;
        double mean = strtod(cell, &end);
        if (!(p = strchr(cell, ','))) return false;
        long long n = strtoll(p + 1, &end, 10);
        if (end == p + 1 || n < 0 || (*end != ',' && *end != '\0')) return false;
        score[k] = cell == p ? 0.0 : mean * (double)n;
        games[k] = n;
        p = *end == ',' ? end : NULL;
    }
    return true;
}

/* A self-play run's games against its listed players (RUN_DIR/opponents.csv: a row per
 * update, each player's mean score then its count of games) over the last OPPONENT_ROWS
 * updates, as one line into out: "alphabeta:3 0.98, alphabeta:4 0.87 (last 10 updates,
 * 812 games)", each score the games-weighted mean ("-": no game); false when the run has no
 * such file or it has no row yet. Rows that are cut short or malformed are passed over. */
bool cli_monitor_opponents_line(const char *metrics, char *out, size_t size) {
    enum { MAX = SK_SELFPLAY_MAX_OPPONENTS };
    char path[4300], row[4096], names[MAX][64];
    FILE *f = run_file(metrics, "opponents.csv", path, sizeof path) ? fopen(path, "r") : NULL;
    if (!f) return false;
    int count = 0, rows = 0;
    bool whole = false;
    if (read_line(f, row, sizeof row, &whole) && whole) /* update,NAME score,NAME games,... */
        for (char *p = strchr(row, ','); p && count < MAX; p = strchr(p + 1, ',')) {
            char *end = strstr(p + 1, " score,");
            if (!end) break;
            snprintf(names[count++], sizeof names[0], "%.*s", (int)(end - p - 1), p + 1);
            p = strchr(end + 1, ',');
            if (!p) break;
        }
    double score[OPPONENT_ROWS][MAX];
    long long games[OPPONENT_ROWS][MAX];
    while (count && read_line(f, row, sizeof row, &whole)) {
        double row_score[MAX];
        long long row_games[MAX];
        if (!whole || !parse_row(row, count, row_score, row_games)) continue;
        int slot = rows++ % OPPONENT_ROWS; /* the oldest row's */
        memcpy(score[slot], row_score, sizeof row_score);
        memcpy(games[slot], row_games, sizeof row_games);
    }
    fclose(f);
    if (!count || !rows) return false;
    long long total = 0;
    size_t at = 0;
    out[0] = 0;
    for (int k = 0; k < count && at < size; k++) {
        double sum = 0.0;
        long long n = 0;
        for (int r = 0; r < rows && r < OPPONENT_ROWS; r++) sum += score[r][k], n += games[r][k];
        total += n;
        if (n) at += (size_t)snprintf(out + at, size - at, "%s%s %.2f", k ? ", " : "", names[k], sum / (double)n);
        else at += (size_t)snprintf(out + at, size - at, "%s%s -", k ? ", " : "", names[k]);
    }
    if (at < size)
        snprintf(out + at, size - at, " (last %d update%s, %lld games)",
                 rows < OPPONENT_ROWS ? rows : OPPONENT_ROWS, rows == 1 ? "" : "s", total);
    return true;
}

/* An off-policy run's own figures (RUN_DIR/learner.csv: update,steps then the learner's
 * columns), its last whole row as "alpha 0.0412, qf1_value 51.3, ..., gradient_steps 12000":
 * counts whole, the rest to 4 digits, "-" for NaN. False without the file or a row. */
bool cli_monitor_figures_line(const char *metrics, char *out, size_t size) {
    char path[4300], header[1024] = "", row[1024] = "", line[1024];
    FILE *f = run_file(metrics, "learner.csv", path, sizeof path) ? fopen(path, "r") : NULL;
    if (!f) return false;
    bool whole;
    if (read_line(f, line, sizeof line, &whole) && whole) snprintf(header, sizeof header, "%s", line);
    /* the last row is in the last 4 KB (a row is under 300 bytes): a long run's file is not
     * read through each frame; the line the seek lands in is cut, so it is passed over */
    long start = ftell(f);
    if (fseek(f, 0, SEEK_END) == 0 && ftell(f) - start > 4096) {
        fseek(f, -4096, SEEK_END);
        read_line(f, line, sizeof line, &whole);
    } else {
        fseek(f, start, SEEK_SET);
    }
    while (read_line(f, line, sizeof line, &whole))
        if (whole && line[0] >= '0' && line[0] <= '9') snprintf(row, sizeof row, "%s", line);
    fclose(f);
    const char *steps = strchr(row, ','); /* the row's update, then its steps */
    if (!steps || strncmp(header, "update,steps,", 13) != 0) return false;
    const char *name = header + 13, *cell = strchr(steps + 1, ',');
    size_t at = 0;
    out[0] = '\0';
    while (cell && *name && at < size) {
        char *end;
        double value = strtod(cell + 1, &end);
        int length = (int)strcspn(name, ",");
        char number[32];
        if (end == cell + 1 || isnan(value)) snprintf(number, sizeof number, "-");
        else if (value == floor(value) && fabs(value) < 1e15) snprintf(number, sizeof number, "%.0f", value);
        else snprintf(number, sizeof number, "%.4g", value);
        at += (size_t)snprintf(out + at, size - at, "%s%.*s %s", at ? ", " : "", length, name, number);
        name += length + (name[length] == ',');
        cell = strchr(cell + 1, ',');
    }
    return at > 0;
}

bool cli_live_snapshot_patiently(const sk_live_reader *reader, sk_live_data *data) {
    enum { TRIES = 20 }; /* attempts, 10 ms apart, at a consistent copy */
    for (int i = 0; i < TRIES; i++) {
        if (sk_live_snapshot(reader, data)) return true;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return false;
}

/* A run folder's live record; false without one. */
static bool read_live(const char *run_dir, sk_live_data *data) {
    char path[4300];
    snprintf(path, sizeof path, "%s/live.bin", run_dir);
    sk_live_reader *reader = NULL;
    if (access(path, F_OK) != 0 || sk_live_open_read(&reader, path) != SK_OK) return false;
    bool ok = cli_live_snapshot_patiently(reader, data);
    sk_live_close_read(reader);
    return ok;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
    return strcmp((*a)->d_name, (*b)->d_name);
}

int cli_monitor_folder(const char *dir) {
    struct dirent **entries = NULL;
    int count = scandir(dir, &entries, NULL, by_name), shown = 0;
    for (int i = 0; i < count; i++) {
        const char *name = entries[i]->d_name;
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/%s", dir, name);
        sk_live_data data;
        bool live = name[0] != '.' && read_live(sub, &data);
        bool sweep = name[0] != '.' && !live && sweep_is_folder(sub);
        if ((live || sweep) && shown++ == 0)
            printf("%s holds run folders (skinner monitor %s/NAME for one):\n  %-32s %-26s "
                   "%-12s %-22s %s\n", dir, dir, "NAME", "env", "status", "steps / planned",
                   "return");
        if (sweep) {
            printf("  %-32s a sweep: skinner monitor %s\n", name, sub);
        } else if (live) {
            char steps[64], ret[32] = "-";
            snprintf(steps, sizeof steps, "%lld / %lld", (long long)data.steps,
                     (long long)data.total_steps);
            if (isfinite(data.mean_return)) snprintf(ret, sizeof ret, "%.1f", data.mean_return);
            printf("  %-32s %-26s %-12s %-22s %s\n", name, data.env_id,
                   sk_live_status_name(sk_run_state(sub, &data)), steps, ret);
        }
        free(entries[i]);
    }
    free(entries);
    if (shown == 0)
        return cli_error(SK_EXIT_FAILURE, "no live metrics in %s, and no run folder in it "
                         "(expected a folder that 'skinner train' writes, or one holding them)",
                         dir);
    return fflush(stdout) == 0 ? SK_EXIT_OK : cli_error(SK_EXIT_FAILURE, "cannot write the table");
}
