/* skinner plot: learning curves of run folders, drawn with PLplot. */
#include "cli.h"
#include "commands.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <plplot.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *g_plot_usage =
    "usage: skinner plot RUN_DIR [RUN_DIR ...] [options]\n"
    "\n"
    "Draws the learning curves of run folders written by 'skinner train': the mean\n"
    "return over the last 100 episodes against env steps and against wall-clock\n"
    "seconds, several runs overlaid, with each env's solved threshold dashed (and\n"
    "labelled with the env's id when the runs are of several envs).\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   FILE.png or FILE.svg (default RUN_DIR/curves.png of the\n"
    "                      first run)\n"
    "  --width W           image width in pixels (default 1200)\n"
    "  --height H          image height in pixels (default 500)\n"
    "  --xlim LO:HI        the env-steps axis from LO to HI; either may be left out\n"
    "                      (:100000, 5e4:) for the data's end (default 0 to the last\n"
    "                      step; the seconds axis keeps its range)\n"
    "  --logx              logarithmic x axes (steps and seconds), from the first\n"
    "                      point's x unless --xlim says otherwise\n";

#define PLOT_DEFAULT_WIDTH 1200
#define PLOT_DEFAULT_HEIGHT 500
#define PLOT_MIN_SIZE 300
#define PLOT_MAX_SIZE 10000
#define METRICS_COLUMNS 14
#define COL_STEPS 1
#define COL_WALL_SECONDS 2
#define COL_MEAN_RETURN 4
#define PLOT_TEXT_PIXELS 12.5 /* tick and label text height at the default size */
#define MM_PER_PIXEL (25.4 / 72) /* the cairo devices' resolution: 72 dpi */
#define DOT_SYMBOL 17 /* PLplot's filled circle */
#define DIGIT_WIDTH 0.65 /* of the text height, for laying out tick labels */
#define PLOT_MAX_RUNS 10 /* one colour each */
#define PLOT_LABEL_SIZE 256
#define PLOT_ENV_SIZE 64
#define PLOT_HEADROOM 0.10 /* above the highest return or threshold, of the y span */
#define PLOT_FOOTROOM 0.05 /* below the lowest */
#define THRESHOLD_LABEL_LIFT 0.5 /* a threshold's label sits this many text heights above it */

static const char *g_metrics_header =
    "update,steps,wall_seconds,sps,mean_return,mean_length,episodes,policy_loss,value_loss,"
    "entropy,approx_kl,clip_fraction,explained_variance,learning_rate";

/* cmap0: background, foreground, threshold and grid greys, then a colour per run (Tableau 10). */
enum { COLOR_BG, COLOR_FG, COLOR_THRESHOLD, COLOR_GRID, COLOR_FIRST_RUN };
static const PLINT g_palette[COLOR_FIRST_RUN + PLOT_MAX_RUNS][3] = {
    {255, 255, 255}, {0, 0, 0},       {90, 90, 90},    {225, 225, 225}, {31, 119, 180},
    {255, 127, 14},  {44, 160, 44},   {214, 39, 40},   {148, 103, 189}, {140, 86, 75},
    {227, 119, 194}, {127, 127, 127}, {188, 189, 34},  {23, 190, 207},
};

typedef struct plot_run {
    char label[PLOT_LABEL_SIZE]; /* folder basename (seed N), PLplot-escaped */
    char env[PLOT_ENV_SIZE];     /* "" when unknown */
    double threshold;            /* NAN when unknown */
    int num_points;              /* rows with a finite mean_return */
    double *steps, *seconds, *returns; /* (num_points) */
} plot_run;

/* Copies text to out, doubling PLplot's escape character '#'. */
static void escape_label(char *out, size_t size, const char *text) {
    size_t used = 0;
    for (; *text && used + 3 < size; text++) {
        if (*text == '#') out[used++] = '#';
        out[used++] = *text;
    }
    out[used] = '\0';
}

/* The folder's own name, in resolved or dir: "runs/a/" -> "a", "." -> the current folder's. */
static const char *folder_name(const char *dir, char resolved[PATH_MAX]) {
    const char *path = realpath(dir, resolved) ? resolved : dir, *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* dir/name, without doubling a slash that dir ends with. */
static void run_file(char *out, size_t size, const char *dir, const char *name) {
    size_t len = strlen(dir);
    snprintf(out, size, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name);
}

/* The whole file, NUL-terminated (NULL with errno set if unreadable); the caller frees it. */
static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1)) != NULL) {
        size_t got = fread(text, 1, (size_t)size, f);
        text[got] = '\0';
    }
    fclose(f);
    return text;
}

/* Parses one data row into its numbers; false with the reason in why. */
static bool parse_row(char *line, double values[METRICS_COLUMNS], char *why, size_t why_size) {
    int count = 1;
    for (const char *p = line; *p; p++) count += *p == ',';
    if (count != METRICS_COLUMNS) {
        snprintf(why, why_size, "expected %d comma-separated fields, got %d", METRICS_COLUMNS,
                 count);
        return false;
    }
    char *field = line;
    for (int i = 0; i < METRICS_COLUMNS; i++) {
        char *comma = strchr(field, ',');
        if (comma) *comma = '\0';
        char *end = NULL;
        values[i] = strtod(field, &end);
        if (!*field || *end != '\0') {
            const char *name = g_metrics_header; /* the column's name from the header */
            for (int k = 0; k < i; k++) name = strchr(name, ',') + 1;
            snprintf(why, why_size, "field %d (%.*s) is not a number: '%.40s'", i + 1,
                     (int)strcspn(name, ","), name, field);
            return false;
        }
        field = comma + 1;
    }
    return true;
}

/* Reads dir/metrics.csv into run: the rows with a finite mean_return. A message and false on
 * failure. A last line without its newline may be a row the trainer is still writing: it is
 * skipped if incomplete. */
static bool load_metrics(plot_run *run, const char *dir) {
    char path[PATH_MAX + 32], why[128];
    run_file(path, sizeof path, dir, "metrics.csv");
    char *text = read_text(path);
    if (!text) {
        cli_error(SK_EXIT_FAILURE, "cannot read %s: %s (is %s a run folder written by 'skinner "
                  "train'?)", path, strerror(errno), dir);
        return false;
    }
    size_t rows = 1;
    for (const char *p = text; *p; p++) rows += *p == '\n';
    run->steps = malloc(rows * sizeof(double));
    run->seconds = malloc(rows * sizeof(double));
    run->returns = malloc(rows * sizeof(double));
    bool ok = run->steps && run->seconds && run->returns;
    if (!ok) cli_error(SK_EXIT_FAILURE, "out of memory reading %s", path);
    char *line = text;
    for (int line_number = 1; ok && *line; line_number++) {
        char *newline = strchr(line, '\n'), *next = newline ? newline + 1 : line + strlen(line);
        if (newline) *newline = '\0';
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        double values[METRICS_COLUMNS];
        if (line_number == 1) {
            if (strcmp(line, g_metrics_header) != 0) {
                cli_error(SK_EXIT_FAILURE, "%s:1: not a metrics.csv header (expected '%s')",
                          path, g_metrics_header);
                ok = false;
            }
        } else if (len && !parse_row(line, values, why, sizeof why)) {
            if (newline) cli_error(SK_EXIT_FAILURE, "%s:%d: %s", path, line_number, why);
            ok = !newline;
        } else if (len && isfinite(values[COL_MEAN_RETURN]) && isfinite(values[COL_STEPS]) &&
                   isfinite(values[COL_WALL_SECONDS])) {
            run->steps[run->num_points] = values[COL_STEPS];
            run->seconds[run->num_points] = values[COL_WALL_SECONDS];
            run->returns[run->num_points++] = values[COL_MEAN_RETURN];
        }
        line = next;
    }
    if (ok && !*text) {
        cli_error(SK_EXIT_FAILURE, "%s:1: empty file, no header", path);
        ok = false;
    } else if (ok && run->num_points == 0) {
        cli_error(SK_EXIT_FAILURE,
                  "%s: no finite mean_return yet (no episode has ended); nothing to plot", path);
        ok = false;
    }
    free(text);
    return ok;
}

/* Env id, seed (for the label) and solved threshold from summary.json, else config.ini (a run in
 * progress has no summary yet; its threshold then comes from the env registry). Missing files
 * are fine. */
static void load_run_info(plot_run *run, const char *dir) {
    char path[PATH_MAX + 32], seed[32] = "";
    run_file(path, sizeof path, dir, "summary.json");
    char *text = read_text(path);
    if (text) {
        cJSON *root = cJSON_Parse(text);
        if (!root) fprintf(stderr, "skinner: warning: %s is not valid JSON; ignored\n", path);
        const cJSON *env = cJSON_GetObjectItemCaseSensitive(root, "env");
        const cJSON *seed_item = cJSON_GetObjectItemCaseSensitive(root, "seed");
        const cJSON *threshold = cJSON_GetObjectItemCaseSensitive(root, "solved_threshold");
        if (cJSON_IsString(env)) snprintf(run->env, sizeof run->env, "%s", env->valuestring);
        if (cJSON_IsNumber(seed_item)) snprintf(seed, sizeof seed, "%.0f", seed_item->valuedouble);
        if (cJSON_IsNumber(threshold)) run->threshold = threshold->valuedouble;
        cJSON_Delete(root);
        free(text);
    }
    sk_config *cfg = sk_config_new();
    run_file(path, sizeof path, dir, "config.ini");
    if (cfg && access(path, R_OK) == 0 && sk_config_load_file(cfg, path) == SK_OK) {
        const char *env = sk_config_get(cfg, "env.id");
        const char *seed_text = sk_config_get(cfg, "train.seed");
        if (!run->env[0] && env) snprintf(run->env, sizeof run->env, "%s", env);
        if (!seed[0] && seed_text) snprintf(seed, sizeof seed, "%.20s", seed_text);
    }
    sk_config_free(cfg);
    const sk_env_def *def = run->env[0] && isnan(run->threshold) ? sk_env_find(run->env) : NULL;
    if (def) run->threshold = def->solved_threshold;
    char resolved[PATH_MAX], label[PLOT_LABEL_SIZE / 2];
    snprintf(label, sizeof label, "%.80s%s%s%s", folder_name(dir, resolved),
             seed[0] ? " (seed " : "", seed, seed[0] ? ")" : "");
    escape_label(run->label, sizeof run->label, label);
}

/* ------------------------------------------------------------------ drawing */

/* What the command line asks of the axes. */
typedef struct plot_axes {
    double steps_low, steps_high; /* --xlim; NAN = the data's */
    bool logx;
} plot_axes;

typedef struct plot_frame {
    double x_min, x_max, y_min, y_max; /* world coordinates (log10 of x on a log axis) */
    double x_tick, y_tick;             /* major tick spacing */
    bool x_steps;                      /* env steps, else wall-clock seconds */
    bool logx;
    double text_height;                /* in y world units */
    const char *x_label, *y_label;
} plot_frame;

/* A 1-2-5 step for an axis spanning range that leaves at least min_gap_mm between ticks. */
static double tick_step(double range, double length_mm, double min_gap_mm) {
    double max_ticks = fmax(2.0, floor(length_mm / min_gap_mm));
    double raw = range / max_ticks, magnitude = pow(10.0, floor(log10(raw)));
    static const double steps[] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++)
        if (steps[i] * magnitude >= raw) return steps[i] * magnitude;
    return 10 * magnitude;
}

/* Tick labels without PLplot's shared "(x10^N)" exponent, which would collide with the title:
 * 250k and 1.5M from 10^3 on the steps axis, from 10^5 on the others. */
static void tick_label(PLINT axis, PLFLT value, char *label, PLINT length, PLPointer data) {
    const plot_frame *frame = data;
    double tick = axis == PL_X_AXIS ? frame->x_tick : frame->y_tick;
    double thousands = axis == PL_X_AXIS && frame->x_steps ? 1e3 : 1e5;
    if (tick > 0) value = round(value / tick) * tick; /* 0, not 1.4e-17 */
    if (axis == PL_X_AXIS && frame->logx) value = pow(10.0, value); /* PLplot passes the log */
    double size = fabs(value);
    if (size >= fmax(1e6, thousands)) snprintf(label, (size_t)length, "%gM", value / 1e6);
    else if (size >= thousands) snprintf(label, (size_t)length, "%gk", value / 1e3);
    else snprintf(label, (size_t)length, "%g", value);
}

static const char *g_plot_output; /* removed if PLplot gives up half way */
static char g_plot_abort[256];    /* first non-fatal PLplot error */

static int on_plplot_exit(const char *message) {
    unlink(g_plot_output);
    exit(cli_error(SK_EXIT_FAILURE, "plotting failed: %s", message));
}

static void on_plplot_abort(const char *message) {
    if (!g_plot_abort[0]) snprintf(g_plot_abort, sizeof g_plot_abort, "%s", message);
}

/* Whether run i has a threshold no earlier run has (each is drawn and listed once). */
static bool first_threshold(const plot_run *runs, int i) {
    if (isnan(runs[i].threshold)) return false;
    for (int j = 0; j < i; j++)
        if (runs[j].threshold == runs[i].threshold) return false;
    return true;
}

/* Whether the runs are of more than one env. */
static bool several_envs(const plot_run *runs, int num_runs) {
    for (int i = 1; i < num_runs; i++)
        if (strcmp(runs[i].env, runs[0].env) != 0) return true;
    return false;
}

/* "CartPole-v1 solved (475)": the ids of the envs whose threshold is run i's, then it ("solved
 * (475)" when named is false or no env is known). */
static void threshold_text(const plot_run *runs, int num_runs, int i, bool named, char *out,
                           size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (int j = 0; named && j < num_runs; j++) {
        bool seen = !runs[j].env[0] || runs[j].threshold != runs[i].threshold;
        for (int k = 0; k < j && !seen; k++)
            seen = runs[k].threshold == runs[i].threshold && strcmp(runs[k].env, runs[j].env) == 0;
        if (!seen && used < size)
            used += (size_t)snprintf(out + used, size - used, "%s%s", used ? ", " : "",
                                     runs[j].env);
    }
    if (used < size)
        snprintf(out + used, size - used, "%ssolved (%g)", used ? " " : "", runs[i].threshold);
}

/* The run's x values on the frame's axis into xs (log10 on a log axis, dropping x <= 0, with
 * the returns kept in step into ys); returns how many. */
static int panel_points(const plot_run *run, const plot_frame *frame, double *xs, double *ys) {
    const double *x = frame->x_steps ? run->steps : run->seconds;
    int n = 0;
    for (int k = 0; k < run->num_points; k++) {
        if (frame->logx && !(x[k] > 0)) continue;
        xs[n] = frame->logx ? log10(x[k]) : x[k];
        ys[n++] = run->returns[k];
    }
    return n;
}

/* One panel: grid, curves, threshold lines, box and labels in the current viewport. */
static void draw_panel(const plot_run *runs, int num_runs, plot_frame *frame, double y_label_disp,
                       double scale) {
    const char *x_grid = frame->logx ? "gl" : "g", *x_box = frame->logx ? "bcnstlo" : "bcnsto";
    plwind(frame->x_min, frame->x_max, frame->y_min, frame->y_max);
    plcol0(COLOR_GRID);
    plwidth(scale);
    plbox(x_grid, frame->x_tick, 0, "g", frame->y_tick, 0);
    pllsty(2);
    plcol0(COLOR_THRESHOLD);
    plwidth(2.0 * scale);
    bool label_thresholds = several_envs(runs, num_runs);
    for (int i = 0; i < num_runs; i++) {
        if (!first_threshold(runs, i)) continue;
        PLFLT xs[2] = {frame->x_min, frame->x_max}, ys[2] = {runs[i].threshold, runs[i].threshold};
        plline(2, xs, ys);
        if (!label_thresholds) continue; /* the title names the env */
        char text[PLOT_LABEL_SIZE], escaped[2 * PLOT_LABEL_SIZE];
        threshold_text(runs, num_runs, i, true, text, sizeof text);
        escape_label(escaped, sizeof escaped, text);
        plschr(0, 0.8);
        plptex(frame->x_min + 0.02 * (frame->x_max - frame->x_min),
               runs[i].threshold + THRESHOLD_LABEL_LIFT * frame->text_height, 1, 0, 0, escaped);
        plschr(0, 1.0);
    }
    pllsty(1);
    plwidth(2.0 * scale);
    plssym(0, 2.5 * scale);
    for (int i = 0; i < num_runs; i++) {
        double *xs = malloc((size_t)runs[i].num_points * sizeof *xs);
        double *ys = malloc((size_t)runs[i].num_points * sizeof *ys);
        int n = xs && ys ? panel_points(&runs[i], frame, xs, ys) : 0;
        plcol0(COLOR_FIRST_RUN + i);
        if (n == 1) plpoin(1, xs, ys, DOT_SYMBOL); /* no line */
        if (n > 0) plline(n, xs, ys);
        free(xs);
        free(ys);
    }
    plcol0(COLOR_FG);
    plwidth(scale);
    plslabelfunc(tick_label, frame);
    plbox(x_box, frame->x_tick, 0, "bcnstvo", frame->y_tick, 0);
    plmtex("b", 3.0, 0.5, 0.5, frame->x_label);
    if (y_label_disp > 0) plmtex("l", y_label_disp, 0.5, 0.5, frame->y_label);
}

/* The legend at the top right of the current viewport, inside it: one line per run and one per
 * distinct threshold, its text shrunk to fit max_lines text heights. Returns its width as a
 * fraction of the viewport. */
static double draw_legend(const plot_run *runs, int num_runs, double x_offset, double sample_width,
                          double max_lines, double scale) {
    enum { MAX_ENTRIES = 2 * PLOT_MAX_RUNS };
    const char *texts[MAX_ENTRIES], *symbols[MAX_ENTRIES];
    char threshold_texts[PLOT_MAX_RUNS][PLOT_LABEL_SIZE];
    PLINT opts[MAX_ENTRIES], colors[MAX_ENTRIES], styles[MAX_ENTRIES], text_colors[MAX_ENTRIES],
        zeros[MAX_ENTRIES];
    PLFLT widths[MAX_ENTRIES], ones[MAX_ENTRIES];
    bool named = several_envs(runs, num_runs); /* else the title names the env */
    int entries = 0;
    for (int i = 0; i < num_runs; i++, entries++) {
        texts[entries] = runs[i].label;
        colors[entries] = COLOR_FIRST_RUN + i;
        styles[entries] = 1;
    }
    for (int i = 0; i < num_runs; i++) {
        if (!first_threshold(runs, i)) continue;
        char text[sizeof threshold_texts[i]];
        threshold_text(runs, num_runs, i, named, text, sizeof text);
        escape_label(threshold_texts[i], sizeof threshold_texts[i], text);
        texts[entries] = threshold_texts[i];
        colors[entries] = COLOR_THRESHOLD;
        styles[entries++] = 2;
    }
    for (int i = 0; i < entries; i++) {
        opts[i] = PL_LEGEND_LINE;
        text_colors[i] = COLOR_FG;
        widths[i] = 2.0 * scale;
        zeros[i] = 0;
        ones[i] = 1;
        symbols[i] = "";
    }
    double spacing = 1.8, text_scale = fmin(1.0, max_lines / (spacing * entries + 1.0));
    PLFLT legend_w, legend_h;
    pllegend(&legend_w, &legend_h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_RIGHT | PL_POSITION_TOP | PL_POSITION_INSIDE, x_offset, 0, sample_width,
             COLOR_BG, COLOR_FG, 1, entries, 1, entries, opts, 0.6, text_scale, spacing, 0.0,
             text_colors, texts, zeros, zeros, ones, ones, colors, styles, widths, zeros, ones,
             zeros, symbols);
    return legend_w;
}

/* Axis ranges: x from 0 (from the first positive x on a log axis) to the last point, the steps'
 * as --xlim says; y, shared by both panels, around every return and threshold with headroom
 * above, so a solved run's curve stays clear of the frame. */
static void frame_ranges(const plot_run *runs, int num_runs, const plot_axes *axes,
                         plot_frame frames[2]) {
    double y_min = INFINITY, y_max = -INFINITY;
    double x_low[2] = {INFINITY, INFINITY}, x_high[2] = {0, 0}; /* positive x only */
    for (int i = 0; i < num_runs; i++) {
        for (int k = 0; k < runs[i].num_points; k++) {
            y_min = fmin(y_min, runs[i].returns[k]);
            y_max = fmax(y_max, runs[i].returns[k]);
            double x[2] = {runs[i].steps[k], runs[i].seconds[k]};
            for (int p = 0; p < 2; p++) {
                if (x[p] > 0) x_low[p] = fmin(x_low[p], x[p]);
                x_high[p] = fmax(x_high[p], x[p]);
            }
        }
        if (!isnan(runs[i].threshold)) {
            y_min = fmin(y_min, runs[i].threshold);
            y_max = fmax(y_max, runs[i].threshold);
        }
    }
    double span = y_max > y_min ? y_max - y_min : fmax(1.0, 0.05 * fabs(y_max)) / PLOT_FOOTROOM;
    for (int p = 0; p < 2; p++) {
        double low = axes->logx ? x_low[p] : 0, high = x_high[p];
        if (p == 0 && !isnan(axes->steps_low)) low = axes->steps_low;
        if (p == 0 && !isnan(axes->steps_high)) high = axes->steps_high;
        if (!isfinite(low)) low = 1; /* a log axis without a positive point */
        if (!(high > low)) high = axes->logx ? 10 * low : low + 1;
        frames[p].logx = axes->logx;
        frames[p].x_min = axes->logx ? log10(low) : low;
        frames[p].x_max = axes->logx ? log10(high) : high;
        frames[p].y_min = y_min - PLOT_FOOTROOM * span;
        frames[p].y_max = y_max + PLOT_HEADROOM * span;
    }
}

/* "CartPole-v1: learning curves" from the distinct env ids. */
static void figure_title(const plot_run *runs, int num_runs, char *out, size_t size) {
    char title[256] = "";
    for (int i = 0; i < num_runs; i++) {
        bool seen = !runs[i].env[0];
        for (int j = 0; j < i; j++) seen |= strcmp(runs[j].env, runs[i].env) == 0;
        size_t used = strlen(title);
        if (!seen)
            snprintf(title + used, sizeof title - used, "%s%s", used ? ", " : "", runs[i].env);
    }
    size_t used = strlen(title);
    snprintf(title + used, sizeof title - used, "%slearning curve%s", used ? ": " : "",
             num_runs > 1 ? "s" : "");
    escape_label(out, size, title);
}

/* Whether PLplot has the file device; asked for one it lacks, it would list its devices on
 * stdout and prompt on stdin. */
static bool has_device(const char *device) {
    enum { MAX_DEVICES = 128 };
    const char *menus[MAX_DEVICES], *names[MAX_DEVICES], **menu_list = menus, **name_list = names;
    int num_devices = MAX_DEVICES;
    plgFileDevs(&menu_list, &name_list, &num_devices);
    for (int i = 0; i < num_devices; i++)
        if (strcmp(name_list[i], device) == 0) return true;
    return false;
}

/* Draws the whole figure to path with the device; false with a message on failure. */
static bool draw_figure(const plot_run *runs, int num_runs, const plot_axes *axes,
                        const char *device, const char *path, int width, int height) {
    g_plot_output = path;
    plsexit(on_plplot_exit);
    plsabort(on_plplot_abort);
    plsdev(device);
    plsfnam(path);
    plspage(0, 0, width, height, 0, 0);
    plscmap0n(COLOR_FIRST_RUN + PLOT_MAX_RUNS);
    for (int i = 0; i < COLOR_FIRST_RUN + PLOT_MAX_RUNS; i++)
        plscol0(i, g_palette[i][0], g_palette[i][1], g_palette[i][2]);
    plinit();
    pladv(0);

    /* text grows with the image but stays legible when it is small */
    double scale = sqrt((double)width * height / (PLOT_DEFAULT_WIDTH * PLOT_DEFAULT_HEIGHT));
    scale = fmin(fmax(scale, 0.85), 3.0);
    double text_mm = PLOT_TEXT_PIXELS * scale * MM_PER_PIXEL;
    double page_w = width * MM_PER_PIXEL, page_h = height * MM_PER_PIXEL;
    plschr(text_mm, 1.0);

    char title[512];
    figure_title(runs, num_runs, title, sizeof title);
    plvpor(0, 1, 0, 1);
    plwind(0, 1, 0, 1);
    plcol0(COLOR_FG);
    plschr(text_mm, 1.4);
    plmtex("t", -1.4, 0.5, 0.5, title);
    plschr(text_mm, 1.0);

    /* panels side by side when the image is wide enough for two, else stacked */
    bool side = width >= 3 * height / 2;
    double bottom = 4.6 * text_mm / page_h, top = 1.0 - 4.4 * text_mm / page_h;
    double gap_y = side ? 0 : 6.0 * text_mm / page_h;
    double panel_h = side ? top - bottom : (top - bottom - gap_y) / 2;
    plot_frame frames[2] = {{.x_steps = true, .x_label = "env steps"},
                            {.x_label = "wall-clock seconds"}};
    frame_ranges(runs, num_runs, axes, frames);
    frames[0].y_tick = frames[1].y_tick = tick_step(frames[0].y_max - frames[0].y_min,
                                                    panel_h * page_h, 3.5 * text_mm);
    /* room at the left of a panel for its widest y tick label (an end one), then the y label */
    char low[64], high[64];
    double y_tick = frames[0].y_tick;
    tick_label(PL_Y_AXIS, ceil(frames[0].y_min / y_tick) * y_tick, low, sizeof low, &frames[0]);
    tick_label(PL_Y_AXIS, floor(frames[0].y_max / y_tick) * y_tick, high, sizeof high, &frames[0]);
    size_t widest = strlen(low) > strlen(high) ? strlen(low) : strlen(high);
    double ticks_chars = DIGIT_WIDTH * (double)widest + 1.0, y_label_chars = ticks_chars + 1.2;

    /* the legend goes first, at the page's right edge: its width leaves the rest to the panels */
    double margin = 0.8 * text_mm / page_w;
    plvpor(0, 1, bottom, top);
    plwind(0, 1, 0, 1);
    double legend_w = draw_legend(runs, num_runs, margin, 3.0 * text_mm / page_w,
                                  (top - bottom) * page_h / text_mm, scale);
    double left = (y_label_chars + 1.2) * text_mm / page_w, right = 1.0 - legend_w - 3 * margin;
    double gap_x = side ? (ticks_chars + 1.0) * text_mm / page_w : 0;
    double panel_w = side ? (right - left - gap_x) / 2 : right - left;
    const char *y_label = "mean return (last 100 episodes)";
    if (panel_h * page_h < DIGIT_WIDTH * (double)strlen(y_label) * text_mm) y_label = "mean return";
    for (int p = 0; p < 2; p++) {
        frames[p].y_label = y_label;
        frames[p].text_height = (frames[p].y_max - frames[p].y_min) * text_mm / (panel_h * page_h);
        /* a log axis: a tick a decade when it spans one, else PLplot's choice */
        if (frames[p].logx)
            frames[p].x_tick = frames[p].x_max - frames[p].x_min >= 1 ? 1 : 0;
        else
            frames[p].x_tick = tick_step(frames[p].x_max - frames[p].x_min, panel_w * page_w,
                                         5.0 * text_mm);
        double x0 = side ? left + p * (panel_w + gap_x) : left;
        double y1 = side ? top : top - p * (panel_h + gap_y);
        plvpor(x0, x0 + panel_w, y1 - panel_h, y1);
        /* side by side, the right panel shares the left one's y label */
        draw_panel(runs, num_runs, &frames[p], p == 0 || !side ? y_label_chars : 0, scale);
    }
    plend();
    if (g_plot_abort[0]) {
        unlink(path);
        cli_error(SK_EXIT_FAILURE, "plotting failed: %s", g_plot_abort);
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------- the command */

/* --xlim LO:HI, either side empty for the data's end; LO < HI when both are given. */
static void parse_xlim(const char *text, plot_axes *axes, int *rc) {
    const char *colon = strchr(text, ':');
    if (!colon || strchr(colon + 1, ':')) {
        *rc = cli_error(SK_EXIT_USAGE, "--xlim expects LO:HI (either may be empty), got '%s'",
                        text);
        return;
    }
    char low[64], high[64];
    int low_length = colon - text < (int)sizeof low ? (int)(colon - text) : (int)sizeof low - 1;
    snprintf(low, sizeof low, "%.*s", low_length, text);
    snprintf(high, sizeof high, "%s", colon + 1);
    if (low[0] && !cli_parse_double("--xlim LO", low, -1e18, 1e18, &axes->steps_low, rc)) return;
    if (high[0] && !cli_parse_double("--xlim HI", high, -1e18, 1e18, &axes->steps_high, rc))
        return;
    if (!(axes->steps_high > axes->steps_low) && low[0] && high[0])
        *rc = cli_error(SK_EXIT_USAGE, "--xlim %s: LO must be below HI", text);
    else if (!low[0] && high[0] && !(axes->steps_high > 0))
        *rc = cli_error(SK_EXIT_USAGE, "--xlim %s: HI must be above 0, where the axis starts",
                        text);
}

int cmd_plot(int argc, char **argv) {
    const char *output = NULL, *device = "pngcairo";
    long long width = PLOT_DEFAULT_WIDTH, height = PLOT_DEFAULT_HEIGHT;
    int rc = SK_EXIT_OK, num_dirs = 0;
    const char *dirs[PLOT_MAX_RUNS];
    plot_axes axes = {NAN, NAN, false};
    cli_args args = {argc, 0, argv};
    while (rc == SK_EXIT_OK && args.index < argc) {
        const char *value = NULL, *arg = argv[args.index];
        bool missing = false;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(g_plot_usage, stdout);
            return SK_EXIT_OK;
        } else if (cli_flag(&args, "-o", &value, &missing) ||
                   cli_flag(&args, "--output", &value, &missing)) {
            output = value;
        } else if (cli_flag(&args, "--width", &value, &missing)) {
            if (!missing)
                cli_parse_int("--width", value, PLOT_MIN_SIZE, PLOT_MAX_SIZE, &width, &rc);
        } else if (cli_flag(&args, "--height", &value, &missing)) {
            if (!missing)
                cli_parse_int("--height", value, PLOT_MIN_SIZE, PLOT_MAX_SIZE, &height, &rc);
        } else if (cli_flag(&args, "--xlim", &value, &missing)) {
            if (!missing) parse_xlim(value, &axes, &rc);
        } else if (cli_flag(&args, "--logx", NULL, &missing)) {
            axes.logx = true;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            rc = cli_error(SK_EXIT_USAGE, "unknown option '%s' (see 'skinner plot --help')", arg);
        } else if (num_dirs == PLOT_MAX_RUNS) {
            rc = cli_error(SK_EXIT_USAGE, "at most %d run folders fit in one plot", PLOT_MAX_RUNS);
        } else {
            dirs[num_dirs++] = argv[args.index++];
        }
        if (missing) rc = cli_error(SK_EXIT_USAGE, "option '%s' needs a value", arg);
    }
    if (rc == SK_EXIT_OK && axes.logx && !(isnan(axes.steps_low) || axes.steps_low > 0))
        rc = cli_error(SK_EXIT_USAGE, "--xlim %g: with --logx the axis must start above 0",
                       axes.steps_low);
    if (rc == SK_EXIT_OK && num_dirs == 0) {
        fputs(g_plot_usage, stderr);
        rc = cli_error(SK_EXIT_USAGE, "missing RUN_DIR (a folder written by 'skinner train')");
    }
    char default_output[PATH_MAX + 32];
    if (rc == SK_EXIT_OK && !output) {
        run_file(default_output, sizeof default_output, dirs[0], "curves.png");
        output = default_output;
    } else if (rc == SK_EXIT_OK) {
        const char *dot = strrchr(output, '.'), *slash = strrchr(output, '/');
        const char *ext = dot && (!slash || dot > slash) ? dot : "";
        if (strcasecmp(ext, ".svg") == 0) device = "svgcairo";
        else if (strcasecmp(ext, ".png") != 0)
            rc = cli_error(SK_EXIT_USAGE, "cannot tell the image format of '%s' from its "
                           "extension '%s' (use .png or .svg)", output, ext);
    }
    if (rc == SK_EXIT_OK && !has_device(device))
        rc = cli_error(SK_EXIT_FAILURE, "PLplot has no %s device (on Debian, install "
                       "plplot-driver-cairo)", device);

    plot_run runs[PLOT_MAX_RUNS] = {0};
    for (int i = 0; rc == SK_EXIT_OK && i < num_dirs; i++) {
        runs[i].threshold = NAN;
        if (!load_metrics(&runs[i], dirs[i])) rc = SK_EXIT_FAILURE;
        else load_run_info(&runs[i], dirs[i]);
    }
    if (rc == SK_EXIT_OK) {
        /* PLplot would retry and prompt on stdin for another name: check the path first */
        FILE *probe = fopen(output, "ab");
        if (!probe) rc = cli_error(SK_EXIT_FAILURE, "cannot write %s: %s", output, strerror(errno));
        else fclose(probe);
    }
    if (rc == SK_EXIT_OK &&
        !draw_figure(runs, num_dirs, &axes, device, output, (int)width, (int)height))
        rc = SK_EXIT_FAILURE;
    if (rc == SK_EXIT_OK) printf("wrote %s\n", output);
    for (int i = 0; i < num_dirs; i++) {
        free(runs[i].steps);
        free(runs[i].seconds);
        free(runs[i].returns);
    }
    return rc;
}
