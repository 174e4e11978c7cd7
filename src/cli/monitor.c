/* skinner monitor: a live view of a run's metrics file (RUN_DIR/live.bin). */
#include "../core/core.h"
#include "../io/live.h"
#include "../io/run_state.h"
#include "cli.h"
#include "commands.h"
#include "sweep_cli.h"

#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REFRESH_MS 250          /* four frames a second */
#define REOPEN_CHECK_SECONDS 1.0 /* how often to look for a new run's file at the same path */
#define STALE_SECONDS 30.0      /* a running run without a new update this long is flagged */
#define MAX_FIELDS 16
#define LABEL_WIDTH 14 /* "explained var" and a space */
#define CELL_WIDTH 30  /* a label and its value in the curses grid */
#define MAX_PLOT_WIDTH 1024
#define MIN_PLOT_ROWS 3
#define MIN_PLOT_WIDTH 10
#define MIN_BAR_WIDTH 10
/* Past this many rows the history keeps every other one (then every 4th, ...): still 64 rows a
 * column at the widest plot, and a frame's copy stays small however long the run. */
#define HISTORY_MAX_POINTS (1 << 16)
#define HISTORY_READ_CHUNK 65536
#define HISTORY_LINE_MAX 4096 /* a metrics.csv row is ~150 bytes */

static const char *g_monitor_usage =
    "usage: skinner monitor RUN_DIR [--once]\n"
    "       skinner monitor FOLDER     (a folder of runs, such as runs/: a line a run)\n"
    "\n"
    "Watches a training run from RUN_DIR/live.bin, four times a second: progress and\n"
    "ETA, speed, returns, losses, learning rate, solved, governor events and the\n"
    "return curve of the whole run (RUN_DIR/metrics.csv and live.bin, fitted to the\n"
    "window: each column the mean '*' and the range ':' of the updates it covers).\n"
    "Works on a run in progress (from another terminal) and on a finished one.\n"
    "Press q to quit.\n"
    "\n"
    "When standard input or output is not a terminal (a pipe, a file, a script),\n"
    "prints one plain-text snapshot of the same figures and exits.\n"
    "\n"
    "options:\n"
    "  --once   print the plain-text snapshot even on a terminal\n";

typedef struct field {
    const char *label;
    char value[64];
} field;

static volatile sig_atomic_t g_quit;

static void on_quit_signal(int signal_number) {
    (void)signal_number;
    g_quit = 1;
}

/* ------------------------------------------------------------- formatting */

static void format_value(char *buf, size_t size, const char *fmt, double value) {
    if (isfinite(value)) snprintf(buf, size, fmt, value);
    else snprintf(buf, size, "-");
}

static void format_duration(char *buf, size_t size, double seconds) {
    if (!isfinite(seconds) || seconds < 0 || seconds > 1e9) {
        snprintf(buf, size, "-");
        return;
    }
    long long total = llround(seconds);
    snprintf(buf, size, "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
}

static double progress_fraction(const sk_live_data *d) {
    if (d->total_steps <= 0) return 0.0;
    double fraction = (double)d->steps / (double)d->total_steps;
    return fraction < 0.0 ? 0.0 : fraction > 1.0 ? 1.0 : fraction;
}

/* "ETA 0:01:23" while running, "finished after 0:00:50" once it ended. */
static void format_eta(char *buf, size_t size, const sk_live_data *d) {
    char duration[32];
    if (d->status == SK_LIVE_RUNNING) {
        double left = d->sps > 0 ? (double)SK_MAX(d->total_steps - d->steps, 0) / d->sps : NAN;
        format_duration(duration, sizeof duration, left);
        snprintf(buf, size, "ETA %s", duration);
    } else {
        format_duration(duration, sizeof duration, d->wall_seconds);
        snprintf(buf, size, "%s after %s", sk_live_status_name(d->status), duration);
    }
}

static void format_steps(char *buf, size_t size, const sk_live_data *d) {
    snprintf(buf, size, "%lld / %lld (%.1f%%)", (long long)d->steps, (long long)d->total_steps,
             100.0 * progress_fraction(d));
}

static void add_text(field *f, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void add_text(field *f, const char *label, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    f->label = label;
    vsnprintf(f->value, sizeof f->value, fmt, args);
    va_end(args);
}

static void add_number(field *f, const char *label, const char *fmt, double value) {
    f->label = label;
    format_value(f->value, sizeof f->value, fmt, value);
}

/* The figures both views show, in reading order (the curses grid goes row by row). algo:
 * the run's learner ("" when not known, a bare live file: PPO's rows). PPO's own measures
 * (approx kl, clip fraction, explained var) have rows in a PPO run alone; the losses are
 * named as the learner has them (SAC: actor and Q losses; DQN: its TD loss alone). */
static int collect_fields(const sk_live_data *d, const char *algo, field *fields) {
    int n = 0;
    add_number(&fields[n++], "sps", "%.0f", d->sps);
    add_text(&fields[n++], "update", "%lld", (long long)d->update);
    fields[n].label = "wall time";
    format_duration(fields[n++].value, sizeof fields[0].value, d->wall_seconds);
    add_number(&fields[n++], "mean return", "%.2f", d->mean_return);
    add_number(&fields[n++], "mean length", "%.1f", d->mean_length);
    add_text(&fields[n++], "episodes", "%lld", (long long)d->episodes);
    bool ppo = !algo[0] || strcmp(algo, "ppo") == 0, dqn = strcmp(algo, "dqn") == 0;
    if (dqn) {
        add_number(&fields[n++], "td loss", "%.4g", d->value_loss);
    } else {
        add_number(&fields[n++], ppo ? "policy loss" : "actor loss", "%.4g", d->policy_loss);
        add_number(&fields[n++], ppo ? "value loss" : "q loss", "%.4g", d->value_loss);
        add_number(&fields[n++], "entropy", "%.4g", d->entropy);
    }
    if (ppo) {
        add_number(&fields[n++], "approx kl", "%.4g", d->approx_kl);
        add_number(&fields[n++], "clip fraction", "%.4g", d->clip_fraction);
        add_number(&fields[n++], "explained var", "%.4g", d->explained_variance);
    }
    add_number(&fields[n++], "learning rate", "%.3g", d->learning_rate);
    if (d->solved) add_text(&fields[n++], "solved", "yes, at %lld", (long long)d->solved_at_steps);
    else add_text(&fields[n++], "solved", "no");
    add_text(&fields[n++], "anomalies", "%lld (%lld restored)", (long long)d->anomalies,
             (long long)d->restores);
    SK_ASSERT(n <= MAX_FIELDS);
    return n;
}

/* ---------------------------------------------------------------- history */

/*
 * The return curve of the whole run. live.bin keeps the latest SK_LIVE_CURVE_POINTS updates;
 * the rows before those come from RUN_DIR/metrics.csv, read incrementally (only the bytes
 * appended since the last frame). A run resumed or started again in the same folder rewrites
 * metrics.csv: a shorter file, another file, or a row whose update is not after the last one
 * kept starts the history over from there.
 */
typedef struct history {
    char path[4200];            /* RUN_DIR/metrics.csv, "" when watching a bare live file */
    struct stat opened;         /* the file read so far (inode and device) */
    long offset;                /* bytes consumed: whole lines only */
    bool refused;               /* not a metrics.csv: ignored */
    int64_t stride, skipped;    /* keep every stride-th row once the history has halved */
    int64_t count, capacity;
    int64_t *updates;           /* (count) */
    sk_live_point *points;      /* (count) */
    char algo[16];              /* the run's learner (config.ini), "" until read again */
    /* the curve drawn: the history before the live ring, then the ring (history_curve) */
    int64_t curve_count, curve_capacity;
    sk_live_point *curve; /* (curve_count) */
} history;

static void history_reset(history *h) {
    h->algo[0] = '\0'; /* a run started again in the folder may learn otherwise */
    h->offset = 0;
    h->refused = false;
    h->stride = 1;
    h->skipped = 0;
    h->count = 0;
}

static void history_free(history *h) {
    free(h->updates);
    free(h->points);
    free(h->curve);
    h->updates = NULL;
    h->points = h->curve = NULL;
    h->count = h->capacity = h->curve_count = h->curve_capacity = 0;
}

/* update,steps,wall_seconds,sps,mean_return,...: false if the line is not such a row. */
static bool parse_metrics_row(const char *line, int64_t *update, sk_live_point *point) {
    double values[5];
    const char *text = line;
    for (int i = 0; i < 5; i++) {
        char *end = NULL;
        values[i] = strtod(text, &end);
        if (end == text || (*end != ',' && !(i == 4 && (*end == '\0' || *end == '\r'))))
            return false;
        text = end + 1;
    }
    if (!(values[0] >= 1 && values[0] < 9e18) || !isfinite(values[1])) return false;
    *update = (int64_t)values[0];
    *point = (sk_live_point){(int64_t)values[1], values[2], values[4]};
    return true;
}

static void history_add(history *h, int64_t update, sk_live_point point) {
    while (h->count > 0 && h->updates[h->count - 1] >= update) h->count--; /* rewritten */
    if (h->skipped++ % h->stride != 0) return;
    if (h->count == HISTORY_MAX_POINTS) { /* bounded: keep every other point */
        for (int64_t i = 0; i < h->count / 2; i++) {
            h->updates[i] = h->updates[2 * i];
            h->points[i] = h->points[2 * i];
        }
        h->count /= 2;
        h->stride *= 2;
    }
    if (h->count == h->capacity) {
        int64_t capacity = h->capacity ? 2 * h->capacity : 1024;
        int64_t *updates = realloc(h->updates, (size_t)capacity * sizeof *updates);
        if (updates) h->updates = updates;
        sk_live_point *points = realloc(h->points, (size_t)capacity * sizeof *points);
        if (points) h->points = points;
        if (!updates || !points) return; /* out of memory: the curve lacks this row */
        h->capacity = capacity;
    }
    h->updates[h->count] = update;
    h->points[h->count++] = point;
}

/* Reads the rows appended since the last call. */
static void history_refresh(history *h) {
    struct stat st;
    if (!h->path[0] || stat(h->path, &st) != 0) return;
    if (st.st_ino != h->opened.st_ino || st.st_dev != h->opened.st_dev || st.st_size < h->offset) {
        history_reset(h);
        h->opened = st;
    }
    if (h->refused || st.st_size == h->offset) return;
    FILE *f = fopen(h->path, "rb");
    if (!f) return;
    static char chunk[HISTORY_READ_CHUNK + HISTORY_LINE_MAX];
    size_t held = 0; /* bytes of an unfinished line carried to the next chunk */
    if (fseek(f, h->offset, SEEK_SET) == 0) {
        size_t got;
        while ((got = fread(chunk + held, 1, HISTORY_READ_CHUNK, f)) > 0) {
            held += got;
            char *line = chunk, *newline;
            while ((newline = memchr(line, '\n', held - (size_t)(line - chunk))) != NULL) {
                *newline = '\0';
                int64_t update;
                sk_live_point point;
                if (h->offset == 0) h->refused = strncmp(line, "update,steps,", 13) != 0;
                else if (parse_metrics_row(line, &update, &point)) history_add(h, update, point);
                h->offset += (long)(newline + 1 - line);
                line = newline + 1;
            }
            held -= (size_t)(line - chunk);
            if (held >= HISTORY_LINE_MAX) h->refused = true; /* no such line in a metrics file */
            if (h->refused) break;
            memmove(chunk, line, held);
        }
    }
    fclose(f);
}

/* Reads the history's new rows and makes h->curve the finite points of the whole run, oldest
 * first: the history's rows before the live ring's first point, then the ring. */
static void history_curve(history *h, const sk_live_data *d) {
    history_refresh(h);
    int64_t ring_start = d->curve_count > 0 ? sk_live_curve_at(d, 0).steps : INT64_MAX;
    int64_t earlier = 0;
    while (earlier < h->count && h->points[earlier].steps < ring_start) earlier++;
    int64_t needed = earlier + d->curve_count;
    if (needed > h->curve_capacity) {
        sk_live_point *grown = realloc(h->curve, (size_t)needed * sizeof *grown);
        if (grown) {
            h->curve = grown;
            h->curve_capacity = needed;
        }
    }
    if (needed > h->curve_capacity) earlier = 0; /* out of memory: the ring alone, if it fits */
    int64_t n = 0;
    for (int64_t i = 0; i < earlier; i++)
        if (isfinite(h->points[i].mean_return)) h->curve[n++] = h->points[i];
    for (int64_t i = 0; i < d->curve_count && n < h->curve_capacity; i++) {
        sk_live_point p = sk_live_curve_at(d, i);
        if (isfinite(p.mean_return)) h->curve[n++] = p;
    }
    h->curve_count = n;
}

/* The lowest and highest mean return of the curve (count > 0). */
static void curve_range(const sk_live_point *points, int64_t count, double *low, double *high) {
    *low = *high = points[0].mean_return;
    for (int64_t i = 1; i < count; i++) {
        *low = fmin(*low, points[i].mean_return);
        *high = fmax(*high, points[i].mean_return);
    }
}

/* The run's learner (config.ini beside metrics.csv, read once a run), or "" when it is not
 * known (a bare live file: nothing to read). */
static const char *learner_of(history *h) {
    if (!h->algo[0] && !cli_monitor_learner(h->path, h->algo, sizeof h->algo)) h->algo[0] = '\0';
    return h->algo;
}

/* ------------------------------------------------------------- plain text */

static void print_plain(const sk_live_data *d, history *h) {
    char text[64];
    printf("skinner monitor: %s (%s)\n", d->env_id, sk_live_status_name(d->status));
    format_steps(text, sizeof text, d);
    printf("%-*s%s\n", LABEL_WIDTH, "steps", text);
    format_eta(text, sizeof text, d);
    printf("%-*s%s\n", LABEL_WIDTH, "progress", text);
    field fields[MAX_FIELDS];
    int n = collect_fields(d, learner_of(h), fields);
    for (int i = 0; i < n; i++) printf("%-*s%s\n", LABEL_WIDTH, fields[i].label, fields[i].value);
    printf("%-*s%s\n", LABEL_WIDTH, "last event", d->governor_event[0] ? d->governor_event : "-");
    char line[512];
    if (cli_monitor_figures_line(h->path, line, sizeof line))
        printf("%-*s%s\n", LABEL_WIDTH, "learner", line);
    if (cli_monitor_elo_line(h->path, line, sizeof line)) printf("%-*s%s\n", LABEL_WIDTH, "elo", line);
    if (cli_monitor_opponents_line(h->path, line, sizeof line))
        printf("%-*s%s\n", LABEL_WIDTH, "opponents", line);
    history_curve(h, d);
    const sk_live_point *points = h->curve;
    int64_t count = h->curve_count;
    if (count == 0) {
        printf("%-*s%s\n", LABEL_WIDTH, "return curve", "no finished episodes yet");
        return;
    }
    double low, high;
    curve_range(points, count, &low, &high);
    printf("%-*s%lld points, steps %lld..%lld, return %.2f..%.2f\n", LABEL_WIDTH, "return curve",
           (long long)count, (long long)points[0].steps, (long long)points[count - 1].steps, low,
           high);
}

/* ------------------------------------------------------------------ curses */

enum { PAIR_GOOD = 1, PAIR_BUSY, PAIR_BAD, PAIR_CURVE };

static void put(int y, int x, const char *text) {
    if (y < 0 || y >= LINES || x < 0 || x >= COLS) return;
    mvaddnstr(y, x, text, COLS - x);
}

static attr_t pair_attr(int pair) { return has_colors() ? (attr_t)COLOR_PAIR(pair) : A_NORMAL; }

static attr_t status_attr(int64_t status) {
    switch (status) {
    case SK_LIVE_RUNNING: return pair_attr(PAIR_BUSY) | A_BOLD;
    case SK_LIVE_FINISHED: return pair_attr(PAIR_GOOD) | A_BOLD;
    default: return pair_attr(PAIR_BAD) | A_BOLD;
    }
}

/* Writes text at (y, x) in attr, cut at the right edge; returns the column after it. */
static int put_attr(int y, int x, const char *text, attr_t attr) {
    if (y < 0 || y >= LINES || x < 0 || x >= COLS) return x;
    int length = SK_MIN((int)strlen(text), COLS - x);
    attron(attr);
    mvaddnstr(y, x, text, length);
    attroff(attr);
    return x + length;
}

static void draw_title(const sk_live_data *d) {
    int x = put_attr(0, 0, "skinner monitor  ", A_BOLD);
    x = put_attr(0, x, d->env_id, A_BOLD | A_UNDERLINE);
    x = put_attr(0, x, "  ", A_NORMAL);
    x = put_attr(0, x, sk_live_status_name(d->status), status_attr(d->status));
    const char *hint = "q quits";
    int hint_x = COLS - (int)strlen(hint);
    if (hint_x > x + 2) put_attr(0, hint_x, hint, A_NORMAL);
}

/* [#####.....]  52.3%  261120/500000 steps  ETA 0:00:24, the bar taking what is left. */
static void draw_progress(int y, const sk_live_data *d) {
    char eta[64], tail[160];
    format_eta(eta, sizeof eta, d);
    double fraction = progress_fraction(d);
    snprintf(tail, sizeof tail, " %5.1f%%  %lld/%lld steps  %s", 100.0 * fraction,
             (long long)d->steps, (long long)d->total_steps, eta);
    int bar = COLS - (int)strlen(tail) - 2;
    if (bar < MIN_BAR_WIDTH) {
        put(y, 0, tail + 1);
        return;
    }
    int filled = (int)lround(fraction * bar);
    move(y, 0);
    addch('[');
    attron(status_attr(d->status));
    for (int i = 0; i < filled; i++) addch('#');
    attroff(status_attr(d->status));
    for (int i = filled; i < bar; i++) addch('.');
    addch(']');
    addnstr(tail, SK_MAX(0, COLS - getcurx(stdscr)));
}

/* Row by row, as many cells across as fit. Returns the next free row. */
static int draw_fields(int y, const sk_live_data *d, const char *algo) {
    field fields[MAX_FIELDS];
    int n = collect_fields(d, algo, fields);
    int across = SK_MAX(1, COLS / CELL_WIDTH);
    int cell = SK_MAX(CELL_WIDTH, COLS / across);
    int value_width = cell - LABEL_WIDTH - 1; /* a value never runs into the next cell */
    for (int i = 0; i < n; i++) {
        int row = y + i / across, x = (i % across) * cell;
        if (row >= LINES) break;
        put(row, x, fields[i].label);
        attr_t attr = A_NORMAL;
        if (strcmp(fields[i].label, "solved") == 0 && d->solved)
            attr = pair_attr(PAIR_GOOD) | A_BOLD;
        if (strcmp(fields[i].label, "anomalies") == 0 && d->anomalies > 0)
            attr = pair_attr(PAIR_BAD) | A_BOLD;
        char value[sizeof fields[i].value];
        snprintf(value, sizeof value, "%.*s", SK_MAX(value_width, 0), fields[i].value);
        put_attr(row, x + LABEL_WIDTH, value, attr);
    }
    return y + (n + across - 1) / across;
}

/* One column of the curve: the mean, lowest and highest return of the points that fall in it;
 * a column no point falls in gets the mean interpolated between its neighbours (low = high =
 * mean), NAN before the first point. */
typedef struct curve_column {
    double mean, low, high;
} curve_column;

static void curve_columns(const sk_live_point *points, int64_t count, int width,
                          curve_column *columns) {
    static double sums[MAX_PLOT_WIDTH];
    static int64_t hits[MAX_PLOT_WIDTH];
    memset(sums, 0, sizeof sums);
    memset(hits, 0, sizeof hits);
    double first = (double)points[0].steps, span = (double)(points[count - 1].steps) - first;
    for (int64_t i = 0; i < count; i++) {
        double position = span > 0 ? ((double)points[i].steps - first) / span : 0.0;
        int column = (int)lround(position * (width - 1));
        column = SK_MAX(0, SK_MIN(width - 1, column));
        double value = points[i].mean_return;
        curve_column *col = &columns[column];
        col->low = hits[column] ? fmin(col->low, value) : value;
        col->high = hits[column] ? fmax(col->high, value) : value;
        sums[column] += value;
        hits[column]++;
    }
    int previous = -1;
    for (int c = 0; c < width; c++) {
        if (!hits[c]) {
            columns[c] = (curve_column){NAN, NAN, NAN};
            continue;
        }
        columns[c].mean = sums[c] / (double)hits[c];
        for (int g = previous + 1; previous >= 0 && g < c; g++) {
            double t = (double)(g - previous) / (double)(c - previous);
            double mean = columns[previous].mean + t * (columns[c].mean - columns[previous].mean);
            columns[g] = (curve_column){mean, mean, mean};
        }
        previous = c;
    }
}

/* The row (0 at the top) of a return in a plot of rows rows spanning low..high. */
static int curve_row(double value, double low, double high, int rows) {
    int row = (int)lround((high - value) / (high - low) * (rows - 1));
    return SK_MAX(0, SK_MIN(rows - 1, row));
}

static void draw_curve(int top, const sk_live_data *d, history *h) {
    int bottom = LINES - 1; /* the x labels */
    int rows = bottom - 1 - (top + 1);
    history_curve(h, d);
    const sk_live_point *points = h->curve;
    int64_t count = h->curve_count;
    if (rows < MIN_PLOT_ROWS) {
        put(top, 0, "(a taller window shows the return curve)");
        return;
    }
    char heading[96];
    snprintf(heading, sizeof heading, "mean return by step, %s (%lld points)",
             h->count > 0 ? "whole run" : "last updates", (long long)count);
    attron(A_BOLD);
    put(top, 0, heading);
    attroff(A_BOLD);
    if (count == 0) {
        put(top + 1, 2, "no finished episodes yet");
        return;
    }
    double low, high;
    curve_range(points, count, &low, &high);
    char low_text[32], high_text[32];
    snprintf(low_text, sizeof low_text, "%.5g", low);
    snprintf(high_text, sizeof high_text, "%.5g", high);
    int label_width = (int)SK_MAX(strlen(low_text), strlen(high_text));
    int x0 = label_width + 2; /* labels, a space, the axis */
    int width = SK_MIN(COLS - x0 - 1, MAX_PLOT_WIDTH);
    if (width < MIN_PLOT_WIDTH) return;
    int plot_top = top + 1, axis = plot_top + rows;
    if (high - low < 1e-12) { /* flat: draw it across the middle */
        low -= 1.0;
        high += 1.0;
    }
    mvprintw(plot_top, 0, "%*s", label_width, high_text);
    mvprintw(plot_top + rows - 1, 0, "%*s", label_width, low_text);
    mvvline(plot_top, x0 - 1, ACS_VLINE, rows);
    mvaddch(axis, x0 - 1, ACS_LLCORNER);
    mvhline(axis, x0, ACS_HLINE, width);

    static curve_column columns[MAX_PLOT_WIDTH];
    curve_columns(points, count, width, columns);
    attron(pair_attr(PAIR_CURVE) | A_BOLD);
    int previous_row = -1;
    for (int c = 0; c < width; c++) {
        if (isnan(columns[c].mean)) continue;
        int row = curve_row(columns[c].mean, low, high, rows);
        /* the column's range, reaching to the previous column's mean on a steep change */
        int from = curve_row(columns[c].high, low, high, rows);
        int to = curve_row(columns[c].low, low, high, rows);
        if (previous_row >= 0) {
            from = SK_MIN(from, previous_row + 1);
            to = SK_MAX(to, previous_row - 1);
        }
        for (int r = from; r <= to; r++) mvaddch(plot_top + r, x0 + c, ':');
        mvaddch(plot_top + row, x0 + c, '*');
        previous_row = row;
    }
    attroff(pair_attr(PAIR_CURVE) | A_BOLD);

    char first[32], last[48];
    snprintf(first, sizeof first, "%lld", (long long)points[0].steps);
    snprintf(last, sizeof last, "%lld steps", (long long)points[count - 1].steps);
    put(bottom, x0, first);
    int last_x = x0 + width - (int)strlen(last);
    if (last_x > x0 + (int)strlen(first) + 1) put(bottom, last_x, last);
}

static void draw(const sk_live_data *d, history *h, double seconds_without_update,
                 bool copy_failed) {
    erase();
    draw_title(d);
    draw_progress(1, d);
    if (copy_failed) {
        put(2, 0, "(no consistent copy this time; showing the last one)");
    } else if (d->status == SK_LIVE_RUNNING && d->update == 0) {
        put(2, 0, "waiting for the first update...");
    } else if (d->status == SK_LIVE_RUNNING && seconds_without_update > STALE_SECONDS) {
        char note[96];
        snprintf(note, sizeof note, "no new update for %.0f s (is the trainer still running?)",
                 seconds_without_update);
        attron(pair_attr(PAIR_BAD));
        put(2, 0, note);
        attroff(pair_attr(PAIR_BAD));
    }
    int y = draw_fields(3, d, learner_of(h));
    put(y, 0, "last event");
    put(y, LABEL_WIDTH, d->governor_event[0] ? d->governor_event : "-");
    char line[512];
    if (cli_monitor_figures_line(h->path, line, sizeof line)) {
        put(++y, 0, "learner");
        put(y, LABEL_WIDTH, line);
    }
    if (cli_monitor_elo_line(h->path, line, sizeof line)) {
        put(++y, 0, "elo");
        put(y, LABEL_WIDTH, line);
    }
    if (cli_monitor_opponents_line(h->path, line, sizeof line)) {
        put(++y, 0, "opponents");
        put(y, LABEL_WIDTH, line);
    }
    draw_curve(y + 2, d, h);
    refresh();
}

/* The folder the live file is in ("." for a bare "live.bin"). */
static void run_folder_of(const char *live_path, char *out, size_t size) {
    const char *slash = strrchr(live_path, '/');
    if (slash) snprintf(out, size, "%.*s", (int)(slash - live_path), live_path);
    else snprintf(out, size, ".");
    if (!out[0]) snprintf(out, size, "/");
}

/* live.bin's status as skinner serve shows it too (io/run_state.h): a trainer that died
 * without saying so (SIGKILL) left "running" there, and its free run.lock makes it
 * interrupted. */
static void settle_status(sk_live_data *data, const char *live_path) {
    char run_dir[4200];
    run_folder_of(live_path, run_dir, sizeof run_dir);
    data->status = sk_run_state(run_dir, data);
}

/* The run folder's file was replaced (a new run in the same folder): follow it, and read the
 * history again. */
static void follow_replacement(sk_live_reader **reader, const char *path, struct stat *opened,
                               history *h) {
    struct stat now;
    if (stat(path, &now) != 0 || (now.st_ino == opened->st_ino && now.st_dev == opened->st_dev))
        return;
    sk_live_reader *fresh = NULL;
    if (sk_live_open_read(&fresh, path) != SK_OK) return; /* keep the old one; try again later */
    sk_live_close_read(*reader);
    *reader = fresh;
    *opened = now;
    history_reset(h);
}

static int run_curses(sk_live_reader **reader, const char *path, struct stat *opened,
                      sk_live_data *data, history *h) {
    struct sigaction action = {0};
    action.sa_handler = on_quit_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
    setlocale(LC_CTYPE, ""); /* line drawing in the terminal's encoding */
    SCREEN *screen = newterm(NULL, stdout, stdin);
    if (!screen) {
        const char *term = getenv("TERM");
        return cli_error(SK_EXIT_FAILURE,
                         "cannot start the terminal view (TERM=%s); use 'skinner monitor "
                         "RUN_DIR --once' for plain text",
                         term ? term : "unset");
    }
    cbreak();
    noecho();
    curs_set(0);
    keypad(stdscr, TRUE);
    timeout(REFRESH_MS);
    if (has_colors()) {
        start_color();
        use_default_colors();
        init_pair(PAIR_GOOD, COLOR_GREEN, -1);
        init_pair(PAIR_BUSY, COLOR_YELLOW, -1);
        init_pair(PAIR_BAD, COLOR_RED, -1);
        init_pair(PAIR_CURVE, COLOR_CYAN, -1);
    }
    double last_change = sk_now(), last_reopen_check = last_change;
    int64_t last_update = data->update;
    while (!g_quit) {
        double now = sk_now();
        if (now - last_reopen_check >= REOPEN_CHECK_SECONDS) {
            follow_replacement(reader, path, opened, h);
            last_reopen_check = now;
        }
        static sk_live_data fresh; /* a failed copy leaves it unspecified */
        bool copied = sk_live_snapshot(*reader, &fresh);
        if (copied) {
            settle_status(&fresh, path);
            *data = fresh;
        }
        if (copied && data->update != last_update) {
            last_update = data->update;
            last_change = now;
        }
        draw(data, h, now - last_change, !copied);
        int key = getch();
        if (key == 'q' || key == 'Q') break;
        if (key == KEY_RESIZE) clear(); /* repaint every cell at the new size */
    }
    endwin();
    delscreen(screen);
    return SK_EXIT_OK;
}

/* ------------------------------------------------------------------ command */

int cmd_monitor(int argc, char **argv) {
    const char *run_dir = NULL;
    bool once = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(g_monitor_usage, stdout);
            return SK_EXIT_OK;
        } else if (strcmp(arg, "--once") == 0) {
            once = true;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return cli_error(SK_EXIT_USAGE, "unknown option '%s' (see 'skinner monitor --help')",
                             arg);
        } else if (run_dir) {
            return cli_error(SK_EXIT_USAGE, "monitor takes one RUN_DIR, got '%s' and '%s'",
                             run_dir, arg);
        } else {
            run_dir = arg;
        }
    }
    if (!run_dir) {
        fputs(g_monitor_usage, stderr);
        return cli_error(SK_EXIT_USAGE, "missing RUN_DIR (the folder 'skinner train' writes)");
    }
    if (sweep_is_folder(run_dir)) return sweep_monitor(run_dir, once); /* sweep_monitor.c */
    /* RUN_DIR/live.bin, or the file itself when given one */
    char path[4096];
    struct stat st;
    if (stat(run_dir, &st) != 0)
        return cli_error(SK_EXIT_FAILURE, "%s: %s (expected a run folder that 'skinner train' "
                         "writes, or its live.bin)", run_dir, strerror(errno));
    if (S_ISREG(st.st_mode))
        snprintf(path, sizeof path, "%s", run_dir);
    else if (snprintf(path, sizeof path, "%s/live.bin", run_dir) >= (int)sizeof path)
        return cli_error(SK_EXIT_USAGE, "RUN_DIR is too long");
    if (stat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
        return cli_monitor_folder(run_dir); /* runs/: a table of its runs (monitor_files.c) */
    sk_live_reader *reader = NULL;
    if (sk_live_open_read(&reader, path) != SK_OK)
        return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    if (stat(path, &st) != 0) memset(&st, 0, sizeof st); /* which file: to notice a new run's */
    sk_live_data data;
    if (!cli_live_snapshot_patiently(reader, &data)) {
        sk_live_close_read(reader);
        return cli_error(SK_EXIT_FAILURE,
                         "'%s' stays mid-update (written too fast, or its writer died while "
                         "writing)",
                         path);
    }
    /* the rows before the live ring's: metrics.csv beside the live file */
    static history h;
    history_reset(&h);
    const char *slash = strrchr(path, '/');
    snprintf(h.path, sizeof h.path, "%.*smetrics.csv", slash ? (int)(slash - path + 1) : 0, path);
    int rc = SK_EXIT_OK;
    if (once || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
        settle_status(&data, path);
        print_plain(&data, &h);
        if (fflush(stdout) != 0) rc = cli_error(SK_EXIT_FAILURE, "cannot write the snapshot");
    } else {
        rc = run_curses(&reader, path, &st, &data, &h);
    }
    history_free(&h);
    sk_live_close_read(reader);
    return rc;
}
