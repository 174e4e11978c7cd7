/*
 * skinner plot end to end, on run folders written here by hand (no training): the images it
 * writes (a PNG of the requested size with a well-formed IHDR chunk, an SVG document) and its
 * exit codes and messages for every kind of bad input. The axes are checked in the SVG's own
 * coordinates: the panel's frame from its grid lines, the curve's vertices against the runs'
 * steps and returns (headroom above a solved run, --xlim, --logx), and the threshold lines and
 * their labels when several envs are plotted.
 *
 * Each command runs in a child (fork + execv) with stdout and stderr in files of this run's
 * temp folder, so the wait status is the program's own and the two streams stay apart (help on
 * stdout, errors on stderr). An alarm turns a hang into a reported SIGALRM.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zlib.h>

#define CHILD_TIMEOUT_SECONDS 60
#define MAX_CHILD_ARGS 16
#define SVG_MAX_POINTS 100000
#define PIXEL_TOLERANCE 0.5

/* Colours as cairo writes them in SVG styles: the first run's, the second's, the threshold's
 * and the grid's (plot.c's palette). */
#define SVG_RUN0 "rgb(12.156863%,46.666667%,70.588235%)"
#define SVG_RUN1 "rgb(100%,49.803922%,5.490196%)"
#define SVG_THRESHOLD "rgb(35.294118%,35.294118%,35.294118%)"
#define SVG_GRID "rgb(88.235294%,88.235294%,88.235294%)"

static const char *g_header =
    "update,steps,wall_seconds,sps,mean_return,mean_length,episodes,policy_loss,value_loss,"
    "entropy,approx_kl,clip_fraction,explained_variance,learning_rate\n";

static char g_tmp[4096]; /* this run's folder, removed at the end */

/* ------------------------------------------------------------------ files */

/* g_tmp/name into out. */
static const char *tmp_path(char *out, size_t size, const char *name) {
    int n = snprintf(out, size, "%s/%s", g_tmp, name);
    if (n < 0 || (size_t)n >= size) fail_msg("path too long: %s/%s", g_tmp, name);
    return out;
}

static void put_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("cannot create %s: %s", path, strerror(errno));
    size_t len = strlen(text);
    if (fwrite(text, 1, len, f) != len || fclose(f) != 0) fail_msg("cannot write %s", path);
}

/* The file's bytes, NUL-terminated, or NULL if it cannot be read; *size without the NUL. */
static unsigned char *get_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *data = NULL;
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (len >= 0 && fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)len + 1)) != NULL) {
        *size = fread(data, 1, (size_t)len, f);
        data[*size] = '\0';
    }
    fclose(f);
    return data;
}

static bool file_exists(const char *path) { return access(path, F_OK) == 0; }

/* A run folder g_tmp/name; each of metrics, summary and config is written unless NULL. */
static const char *make_run(char *dir, size_t size, const char *name, const char *metrics,
                            const char *summary, const char *config) {
    tmp_path(dir, size, name);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", dir, strerror(errno));
    char path[4200];
    const char *names[3] = {"metrics.csv", "summary.json", "config.ini"};
    const char *texts[3] = {metrics, summary, config};
    for (int i = 0; i < 3; i++) {
        if (!texts[i]) continue;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        put_file(path, texts[i]);
    }
    return dir;
}

/* A metrics.csv of num_rows updates of 2048 steps whose first num_nan returns are nan, the rest
 * rising from base. The caller frees it. */
static char *metrics_text(int num_rows, int num_nan, double base) {
    size_t cap = strlen(g_header) + (size_t)num_rows * 160 + 1, used = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    used += (size_t)snprintf(text, cap, "%s", g_header);
    for (int u = 1; u <= num_rows; u++) {
        char ret[32] = "nan";
        if (u > num_nan) snprintf(ret, sizeof ret, "%.4f", base + 9.5 * u);
        used += (size_t)snprintf(text + used, cap - used,
                                 "%d,%d,%.3f,100000,%s,%s,%d,-0.01,0.5,0.6,0.01,0.1,0.3,0.0025\n",
                                 u, 2048 * u, 0.02 * u, ret, ret, 10 * u);
    }
    return text;
}

static const char *g_summary =
    "{\n  \"env\": \"CartPole-v1\",\n  \"seed\": 7,\n  \"solved\": true,\n"
    "  \"solved_threshold\": 475,\n  \"final_mean_return\": 500\n}\n";
static const char *g_config = "[env]\nid = CartPole-v1\nnum_envs = 16\n\n[train]\nseed = 3\n";

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* -------------------------------------------------------- running the program */

typedef struct child {
    char command[1024]; /* for failure messages */
    int status;         /* from waitpid */
    char *out, *err;
} child;

/* Runs SKINNER_BINARY with the NULL-terminated args and waits for it. */
static void run_args(child *c, const char *const *args) {
    memset(c, 0, sizeof *c);
    char *argv[MAX_CHILD_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)SKINNER_BINARY;
    size_t used = (size_t)snprintf(c->command, sizeof c->command, "skinner");
    for (; *args; args++) {
        if (argc > MAX_CHILD_ARGS) fail_msg("too many arguments");
        argv[argc++] = (char *)*args;
        if (used < sizeof c->command)
            used += (size_t)snprintf(c->command + used, sizeof c->command - used, " %s", *args);
    }
    argv[argc] = NULL;
    char out_path[4200], err_path[4200];
    tmp_path(out_path, sizeof out_path, "child.out");
    tmp_path(err_path, sizeof err_path, "child.err");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(err, 2) < 0)
            _exit(125);
        alarm(CHILD_TIMEOUT_SECONDS);
        execv(argv[0], argv);
        _exit(127);
    }
    while (waitpid(pid, &c->status, 0) < 0)
        if (errno != EINTR) fail_msg("waitpid: %s", strerror(errno));
    size_t size;
    c->out = (char *)get_file(out_path, &size);
    c->err = (char *)get_file(err_path, &size);
    if (!c->out || !c->err) fail_msg("cannot read the output of '%s'", c->command);
    if (WIFEXITED(c->status) && WEXITSTATUS(c->status) == 127 && !*c->out && !*c->err)
        fail_msg("cannot run %s (build the skinner program first)", SKINNER_BINARY);
}

static void child_free(child *c) {
    free(c->out);
    free(c->err);
}

#define RUN(c, ...) run_args((c), (const char *const[]){"plot", __VA_ARGS__, NULL})

#define FAIL_CHILD(c, line, fmt, ...)                                                              \
    fail_msg("test_plot.c:%d: '%s': " fmt "\n--- stdout ---\n%s\n--- stderr ---\n%s", (line),     \
             (c)->command, __VA_ARGS__, (c)->out, (c)->err)

static void expect_exit_at(const child *c, int code, int line) {
    if (WIFSIGNALED(c->status))
        FAIL_CHILD(c, line, "killed by signal %d (%s)", WTERMSIG(c->status),
                   strsignal(WTERMSIG(c->status)));
    if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != code)
        FAIL_CHILD(c, line, "exit code %d, want %d", WEXITSTATUS(c->status), code);
}

/* Exit code code and, on stderr, a "skinner: error:" line holding every one of the texts. */
static void expect_error_at(const child *c, int code, const char *const *texts, int line) {
    expect_exit_at(c, code, line);
    const char *message = strstr(c->err, "skinner: error: ");
    if (!message) FAIL_CHILD(c, line, "%s", "no 'skinner: error:' on stderr");
    for (; *texts; texts++)
        if (!strstr(message, *texts)) FAIL_CHILD(c, line, "the error does not name \"%s\"", *texts);
}

#define EXPECT_EXIT(c, code) expect_exit_at((c), (code), __LINE__)
#define EXPECT_ERROR(c, code, ...)                                                                 \
    expect_error_at((c), (code), (const char *const[]){__VA_ARGS__, NULL}, __LINE__)

/* Runs plot with args and expects the error: ERROR_CASE(1, ARGS(dir), "text", ...). */
#define ARGS(...) __VA_ARGS__
#define ERROR_CASE(code, args, ...)                                                                \
    do {                                                                                           \
        child c_;                                                                                  \
        RUN(&c_, args);                                                                            \
        EXPECT_ERROR(&c_, code, __VA_ARGS__);                                                      \
        child_free(&c_);                                                                           \
    } while (0)

/* A successful run: exit 0, the path on stdout, and not a word on stderr (PLplot kept quiet). */
static void expect_written_at(const child *c, const char *path, int line) {
    expect_exit_at(c, 0, line);
    if (!strstr(c->out, path)) FAIL_CHILD(c, line, "stdout does not name %s", path);
    if (*c->err) FAIL_CHILD(c, line, "%s", "stderr is not empty");
}
#define EXPECT_WRITTEN(c, path) expect_written_at((c), (path), __LINE__)

/* ------------------------------------------------------------------ images */

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A PNG: the signature, then an IHDR chunk (13 bytes, its CRC right) of width x height, and an
 * IEND chunk at the very end. */
static void expect_png(const char *path, uint32_t width, uint32_t height) {
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    size_t size = 0;
    unsigned char *png = get_file(path, &size);
    if (!png) fail_msg("%s was not written", path);
    if (size < 8 + 25 + 12) fail_msg("%s is only %zu bytes", path, size);
    if (memcmp(png, signature, 8) != 0) fail_msg("%s lacks the PNG signature", path);
    if (be32(png + 8) != 13 || memcmp(png + 12, "IHDR", 4) != 0)
        fail_msg("%s does not start with an IHDR chunk", path);
    uLong crc = crc32(0L, png + 12, 4 + 13);
    if (be32(png + 12 + 4 + 13) != (uint32_t)crc) fail_msg("%s: IHDR CRC mismatch", path);
    if (be32(png + 16) != width || be32(png + 20) != height)
        fail_msg("%s is %ux%u, want %ux%u", path, be32(png + 16), be32(png + 20), width, height);
    if (memcmp(png + size - 8, "IEND", 4) != 0) fail_msg("%s does not end with IEND", path);
    free(png);
}

/* ------------------------------------------------------------------ SVG geometry */

typedef struct svg_point {
    double x, y; /* SVG user units (pixels), y down */
} svg_point;

/* The vertices of every path stroked in color, in SVG coordinates (cairo writes PLplot's paths
 * flipped, with transform="matrix(1,0,0,-1,0,H)"). Returns how many. */
static int svg_stroke_points(const char *svg, const char *color, svg_point *points) {
    char needle[128];
    snprintf(needle, sizeof needle, "stroke:%s;", color);
    int n = 0;
    for (const char *p = strstr(svg, "<path "); p; p = strstr(p + 1, "<path ")) {
        const char *end = strstr(p, "/>");
        const char *style = strstr(p, needle), *d = strstr(p, " d=\"");
        if (!end || !style || style > end || !d || d > end) continue;
        const char *transform = strstr(p, "matrix(1,0,0,-1,0,");
        double flip = transform && transform < end ? strtod(transform + 18, NULL) : NAN;
        const char *c = d + 4;
        while (*c && *c != '"') {
            if (*c == 'M' || *c == 'L' || *c == ' ' || *c == 'Z') {
                c++;
                continue;
            }
            char *after = NULL;
            double x = strtod(c, &after);
            if (after == c) fail_msg("unexpected path data at '%.20s'", c);
            double y = strtod(after, &after);
            if (n == SVG_MAX_POINTS) fail_msg("more than %d path points", SVG_MAX_POINTS);
            points[n++] = (svg_point){x, isnan(flip) ? y : flip - y};
            c = after;
        }
    }
    return n;
}

/* A panel's frame in SVG coordinates. */
typedef struct svg_panel {
    double left, right, top, bottom;
} svg_panel;

/* Panel index (0 = env steps, the left one; 1 = seconds) of a side-by-side figure, from its grid:
 * a horizontal grid line spans the panel's width, a vertical one its height. */
static svg_panel svg_find_panel(const char *svg, int index) {
    static svg_point grid[SVG_MAX_POINTS];
    int n = svg_stroke_points(svg, SVG_GRID, grid);
    double lefts[2] = {INFINITY, INFINITY};
    for (int i = 0; i + 1 < n; i += 2) /* each grid line is its own two-point path */
        if (fabs(grid[i].y - grid[i + 1].y) < 1e-6) {
            double left = fmin(grid[i].x, grid[i + 1].x);
            if (left < lefts[0] - 1) lefts[1] = lefts[0], lefts[0] = left;
            else if (fabs(left - lefts[0]) > 1 && left < lefts[1]) lefts[1] = left;
        }
    if (!isfinite(lefts[index])) fail_msg("no panel %d in the grid lines", index);
    svg_panel panel = {lefts[index], -INFINITY, INFINITY, -INFINITY};
    for (int i = 0; i + 1 < n; i += 2) {
        if (fabs(grid[i].y - grid[i + 1].y) < 1e-6 &&
            fabs(fmin(grid[i].x, grid[i + 1].x) - panel.left) < 1e-6)
            panel.right = fmax(panel.right, fmax(grid[i].x, grid[i + 1].x));
    }
    for (int i = 0; i + 1 < n; i += 2) {
        if (fabs(grid[i].x - grid[i + 1].x) < 1e-6 && grid[i].x >= panel.left - 1e-6 &&
            grid[i].x <= panel.right + 1e-6) {
            panel.top = fmin(panel.top, fmin(grid[i].y, grid[i + 1].y));
            panel.bottom = fmax(panel.bottom, fmax(grid[i].y, grid[i + 1].y));
        }
    }
    if (!(panel.right > panel.left && panel.bottom > panel.top))
        fail_msg("panel %d has no grid to find its frame by", index);
    return panel;
}

static bool in_panel(const svg_panel *panel, svg_point p) {
    return p.x >= panel->left - PIXEL_TOLERANCE && p.x <= panel->right + PIXEL_TOLERANCE &&
           p.y >= panel->top - PIXEL_TOLERANCE && p.y <= panel->bottom + PIXEL_TOLERANCE;
}

/* The points of color inside the panel (its legend sample is outside), in x order as drawn. */
static int panel_points(const char *svg, const char *color, const svg_panel *panel,
                        svg_point *points) {
    int n = svg_stroke_points(svg, color, points), kept = 0;
    for (int i = 0; i < n; i++)
        if (in_panel(panel, points[i])) points[kept++] = points[i];
    return kept;
}

/* The vertex drawn at x (within PIXEL_TOLERANCE), or a failure naming what was sought. */
static svg_point vertex_at(const svg_point *points, int n, double x, const char *what) {
    int best = -1;
    for (int i = 0; i < n; i++)
        if (best < 0 || fabs(points[i].x - x) < fabs(points[best].x - x)) best = i;
    if (best < 0 || fabs(points[best].x - x) > PIXEL_TOLERANCE)
        fail_msg("no curve vertex at x = %.2f for %s (nearest: %.2f)", x, what,
                 best < 0 ? NAN : points[best].x);
    return points[best];
}

/* The y axis as drawn: svg_y = scale * value + offset, from two vertices of known value. */
typedef struct y_axis {
    double scale, offset;
} y_axis;

static y_axis fit_y_axis(svg_point a, double a_value, svg_point b, double b_value) {
    y_axis axis;
    axis.scale = (b.y - a.y) / (b_value - a_value);
    axis.offset = a.y - axis.scale * a_value;
    return axis;
}

static double y_value(const y_axis *axis, double svg_y) {
    return (svg_y - axis->offset) / axis->scale;
}

/* The figure's SVG text; the caller frees it. */
static char *plot_svg(const char *name, const char *const *args) {
    char svg[4200];
    tmp_path(svg, sizeof svg, name);
    const char *argv[MAX_CHILD_ARGS + 1];
    int argc = 0;
    argv[argc++] = "plot";
    for (; *args; args++) argv[argc++] = *args;
    argv[argc++] = "-o";
    argv[argc++] = svg;
    argv[argc] = NULL;
    child c;
    run_args(&c, argv);
    EXPECT_WRITTEN(&c, svg);
    child_free(&c);
    size_t size = 0;
    char *text = (char *)get_file(svg, &size);
    if (!text) fail_msg("%s was not written", svg);
    return text;
}
#define PLOT_SVG(name, ...) plot_svg((name), (const char *const[]){__VA_ARGS__, NULL})

/* alpha's rows (setup): update u at 2048 u steps and 0.02 u seconds, return 20 + 9.5 u, the
 * first two nan; solved threshold 475 (summary.json). */
#define ALPHA_FIRST 3
#define ALPHA_LAST 60
#define ALPHA_STEPS(u) (2048.0 * (u))
#define ALPHA_RETURN(u) (20.0 + 9.5 * (u))
#define ALPHA_THRESHOLD 475.0

/* ------------------------------------------------------------------- tests */

static int setup(void **unused) {
    (void)unused;
    const char *base = getenv("TMPDIR");
    snprintf(g_tmp, sizeof g_tmp, "%s/skinner-test-plot-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(g_tmp)) {
        fprintf(stderr, "mkdtemp %s: %s\n", g_tmp, strerror(errno));
        return -1;
    }
    /* In a sanitizer build, fontconfig and libltdl (under PLplot's cairo devices) keep
     * allocations for the life of the process; LeakSanitizer would fail every plot for them. */
    char dir[4200], supp[4200], options[4300];
    put_file(tmp_path(supp, sizeof supp, "lsan.supp"), "leak:libfontconfig.so\nleak:libltdl.so\n");
    snprintf(options, sizeof options, "suppressions=%s:print_suppressions=0", supp);
    if (!getenv("LSAN_OPTIONS")) setenv("LSAN_OPTIONS", options, 1);
    char *metrics = metrics_text(60, 2, 20.0);
    make_run(dir, sizeof dir, "alpha", metrics, g_summary, g_config);
    free(metrics);
    metrics = metrics_text(45, 5, 10.0); /* in progress: no summary.json yet */
    make_run(dir, sizeof dir, "beta", metrics, NULL, g_config);
    free(metrics);
    return 0;
}

static int teardown(void **unused) {
    (void)unused;
    nftw(g_tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static void test_png_default(void **unused) {
    (void)unused;
    char dir[4200], png[4300];
    tmp_path(dir, sizeof dir, "alpha");
    snprintf(png, sizeof png, "%s/curves.png", dir);
    remove(png);
    child c;
    RUN(&c, dir);
    EXPECT_WRITTEN(&c, png);
    expect_png(png, 1200, 500);
    child_free(&c);
}

static void test_png_sizes(void **unused) {
    (void)unused;
    char dir[4200], png[4200];
    tmp_path(dir, sizeof dir, "alpha");
    child c;
    RUN(&c, dir, "-o", tmp_path(png, sizeof png, "wide.png"), "--width", "800", "--height", "300");
    EXPECT_WRITTEN(&c, png);
    expect_png(png, 800, 300);
    child_free(&c);
    /* taller than wide: the panels stack */
    char flag[4300];
    snprintf(flag, sizeof flag, "--output=%s", tmp_path(png, sizeof png, "tall.png"));
    RUN(&c, dir, flag, "--width=640", "--height=900");
    EXPECT_WRITTEN(&c, png);
    expect_png(png, 640, 900);
    child_free(&c);
}

static void test_svg(void **unused) {
    (void)unused;
    char dir[4200], svg[4200];
    tmp_path(dir, sizeof dir, "alpha");
    child c;
    RUN(&c, dir, "-o", tmp_path(svg, sizeof svg, "curves.svg"));
    EXPECT_WRITTEN(&c, svg);
    size_t size = 0;
    char *text = (char *)get_file(svg, &size);
    assert_non_null(text);
    if (strncmp(text, "<?xml", 5) != 0 && strncmp(text, "<svg", 4) != 0)
        fail_msg("%s does not start with an XML or SVG header: %.40s", svg, text);
    if (!strstr(text, "<svg") || !strstr(text, "</svg>"))
        fail_msg("%s is not a complete SVG document", svg);
    free(text);
    child_free(&c);
}

static void test_two_runs(void **unused) {
    (void)unused;
    char alpha[4200], beta[4200], one[4200], two[4200];
    tmp_path(alpha, sizeof alpha, "alpha");
    tmp_path(beta, sizeof beta, "beta");
    child c;
    RUN(&c, alpha, "-o", tmp_path(one, sizeof one, "one.png"));
    EXPECT_WRITTEN(&c, one);
    child_free(&c);
    RUN(&c, alpha, beta, "-o", tmp_path(two, sizeof two, "two.png"));
    EXPECT_WRITTEN(&c, two);
    child_free(&c);
    expect_png(two, 1200, 500);
    size_t one_size = 0, two_size = 0;
    unsigned char *one_png = get_file(one, &one_size), *two_png = get_file(two, &two_size);
    assert_non_null(one_png);
    assert_non_null(two_png);
    if (one_size == two_size && memcmp(one_png, two_png, one_size) == 0)
        fail_msg("the second run changed nothing in the picture");
    free(one_png);
    free(two_png);
}

static void test_partial_last_row(void **unused) {
    (void)unused;
    /* a trainer mid-write: the last row has no newline yet and is skipped, not an error */
    char *metrics = metrics_text(10, 1, 0.0);
    size_t len = strlen(metrics);
    char *text = malloc(len + 32);
    assert_non_null(text);
    snprintf(text, len + 32, "%s11,22528,0.2", metrics);
    char dir[4200], png[4200];
    make_run(dir, sizeof dir, "partial", text, NULL, NULL);
    child c;
    RUN(&c, dir, "-o", tmp_path(png, sizeof png, "partial.png"));
    EXPECT_WRITTEN(&c, png);
    child_free(&c);
    free(text);
    free(metrics);
}

static void test_usage(void **unused) {
    (void)unused;
    child c;
    run_args(&c, (const char *const[]){"plot", NULL});
    EXPECT_ERROR(&c, 2, "missing RUN_DIR");
    if (!strstr(c.err, "usage: skinner plot")) fail_msg("no usage on stderr:\n%s", c.err);
    child_free(&c);
    RUN(&c, "--help");
    EXPECT_EXIT(&c, 0);
    if (!strstr(c.out, "usage: skinner plot")) fail_msg("--help printed no usage:\n%s", c.out);
    child_free(&c);

    char dir[4200], path[4200];
    tmp_path(dir, sizeof dir, "alpha");
    ERROR_CASE(2, ARGS(dir, "-o", "curves.jpg"), "'.jpg'");
    ERROR_CASE(2, ARGS(dir, "-o", "curves"), "'curves'", "extension");
    ERROR_CASE(2, ARGS(dir, "-o"), "'-o' needs a value");
    ERROR_CASE(2, ARGS(dir, "--width", "wide"), "--width", "'wide'");
    ERROR_CASE(2, ARGS(dir, "--height", "5"), "--height", "out of range");
    ERROR_CASE(2, ARGS(dir, "--bogus"), "unknown option '--bogus'");
    /* a usage error writes nothing */
    ERROR_CASE(2, ARGS(dir, "-o", tmp_path(path, sizeof path, "never.gif")), ".gif");
    if (file_exists(path)) fail_msg("%s was written", path);
}

static void test_bad_folders(void **unused) {
    (void)unused;
    char dir[4200], where[4400], png[4300];

    /* no metrics.csv */
    tmp_path(dir, sizeof dir, "empty_folder");
    mkdir(dir, 0755);
    ERROR_CASE(1, ARGS(dir), dir, "metrics.csv");
    tmp_path(dir, sizeof dir, "no_such_folder");
    ERROR_CASE(1, ARGS(dir), dir, "metrics.csv");

    /* wrong header */
    make_run(dir, sizeof dir, "bad_header", "update,steps,reward\n1,2048,3\n", NULL, NULL);
    snprintf(where, sizeof where, "%s/metrics.csv:1", dir);
    ERROR_CASE(1, ARGS(dir), where, "header");

    /* empty file */
    make_run(dir, sizeof dir, "empty_file", "", NULL, NULL);
    snprintf(where, sizeof where, "%s/metrics.csv", dir);
    ERROR_CASE(1, ARGS(dir), where, "empty");

    /* a row with a field too few, on line 3 */
    char *good = metrics_text(4, 0, 10.0);
    char text[8192];
    snprintf(text, sizeof text, "%s", good);
    char *line3 = strchr(strchr(text, '\n') + 1, '\n') + 1; /* after the header and row 1 */
    char *line3_end = strchr(line3, '\n');
    char *last_comma = line3_end;
    while (*last_comma != ',') last_comma--;
    memmove(last_comma, line3_end, strlen(line3_end) + 1); /* drop the last field */
    make_run(dir, sizeof dir, "short_row", text, NULL, NULL);
    snprintf(where, sizeof where, "%s/metrics.csv:3", dir);
    ERROR_CASE(1, ARGS(dir), where, "13");

    /* a non-numeric field on line 4; also no curves.png left behind */
    snprintf(text, sizeof text, "%s", good);
    char *row = text;
    for (int i = 0; i < 3; i++) row = strchr(row, '\n') + 1;
    memcpy(strchr(row, ',') + 1, "abcd", 4); /* steps 6144 -> abcd */
    make_run(dir, sizeof dir, "word_in_row", text, NULL, NULL);
    snprintf(where, sizeof where, "%s/metrics.csv:4", dir);
    ERROR_CASE(1, ARGS(dir), where, "'abcd'");
    snprintf(png, sizeof png, "%s/curves.png", dir);
    if (file_exists(png)) fail_msg("%s was written for a malformed run", png);
    free(good);

    /* the first bad folder stops the plot even after a good one */
    char alpha[4200];
    tmp_path(alpha, sizeof alpha, "alpha");
    ERROR_CASE(1, ARGS(alpha, dir, "-o", tmp_path(png, sizeof png, "mixed.png")), where);
}

static void test_no_finite_returns(void **unused) {
    (void)unused;
    char dir[4200];
    char *all_nan = metrics_text(5, 5, 0.0);
    make_run(dir, sizeof dir, "all_nan", all_nan, NULL, g_config);
    ERROR_CASE(1, ARGS(dir), dir, "no finite mean_return");
    free(all_nan);
    make_run(dir, sizeof dir, "header_only", g_header, NULL, NULL);
    ERROR_CASE(1, ARGS(dir), dir, "no finite mean_return");
}

static void test_unwritable_output(void **unused) {
    (void)unused;
    char dir[4200], out[4200];
    tmp_path(dir, sizeof dir, "alpha");
    tmp_path(out, sizeof out, "no/such/folder/curves.png");
    ERROR_CASE(1, ARGS(dir, "-o", out), out);
    tmp_path(out, sizeof out, "a_folder.png");
    mkdir(out, 0755);
    ERROR_CASE(1, ARGS(dir, "-o", out), out);
}

/* The highest point (a solved run's plateau, or a threshold above it) stays clear of the frame:
 * the y range reaches at least 8% of its height above it. Before, it reached 5% of the data's
 * span (4.5% of the height), and the plateau ran into the top ticks. */
static void test_headroom(void **unused) {
    (void)unused;
    char dir[4200];
    tmp_path(dir, sizeof dir, "alpha");
    char *svg = PLOT_SVG("headroom.svg", dir);
    static svg_point curve[SVG_MAX_POINTS], dashes[SVG_MAX_POINTS];
    for (int p = 0; p < 2; p++) {
        svg_panel panel = svg_find_panel(svg, p);
        int n = panel_points(svg, SVG_RUN0, &panel, curve);
        double width = panel.right - panel.left;
        /* x from 0 to the last point: steps on the left panel, seconds (0.02 u) on the right */
        double first_x = panel.left + width * ALPHA_FIRST / ALPHA_LAST;
        svg_point first = vertex_at(curve, n, first_x, "the first finite row");
        svg_point last = vertex_at(curve, n, panel.right, "the last row");
        y_axis axis = fit_y_axis(first, ALPHA_RETURN(ALPHA_FIRST), last, ALPHA_RETURN(ALPHA_LAST));
        /* the vertices in between lie on the same axes */
        svg_point middle = vertex_at(curve, n, panel.left + width * 30 / ALPHA_LAST, "update 30");
        if (fabs(y_value(&axis, middle.y) - ALPHA_RETURN(30)) > 0.5)
            fail_msg("panel %d: update 30 drawn at return %g, want %g", p,
                     y_value(&axis, middle.y), ALPHA_RETURN(30));
        double top = y_value(&axis, panel.top), bottom = y_value(&axis, panel.bottom);
        double headroom = (top - ALPHA_RETURN(ALPHA_LAST)) / (top - bottom);
        if (headroom < 0.08)
            fail_msg("panel %d: the frame's top (%g) is %.1f%% of the height above the highest "
                     "return (%g); want at least 8%%", p, top, 100 * headroom,
                     ALPHA_RETURN(ALPHA_LAST));
        if (!(bottom < ALPHA_RETURN(ALPHA_FIRST)))
            fail_msg("panel %d: the frame's bottom (%g) is above the lowest return", p, bottom);
        /* the threshold is one dashed line, at 475, across the panel */
        int dash_points = panel_points(svg, SVG_THRESHOLD, &panel, dashes);
        if (dash_points < 2) fail_msg("panel %d: no threshold line", p);
        for (int i = 0; i < dash_points; i++)
            if (fabs(y_value(&axis, dashes[i].y) - ALPHA_THRESHOLD) > 0.5)
                fail_msg("panel %d: a threshold dash at return %g, want %g", p,
                         y_value(&axis, dashes[i].y), ALPHA_THRESHOLD);
    }
    free(svg);
}

/* --xlim LO:HI sets the steps axis (either side may be empty); the seconds axis keeps its own. */
static void test_xlim(void **unused) {
    (void)unused;
    char dir[4200];
    tmp_path(dir, sizeof dir, "alpha");
    static svg_point curve[SVG_MAX_POINTS];
    const struct {
        const char *flag;
        double low, high; /* in steps */
    } cases[] = {
        {"20480:81920", 20480, 81920},               /* updates 10..40 */
        {":61440", 0, 61440},                        /* 0 .. update 30 */
        {"61440:", 61440, ALPHA_STEPS(ALPHA_LAST)}, /* update 30 .. the last */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *svg = PLOT_SVG("xlim.svg", dir, "--xlim", cases[k].flag);
        svg_panel panel = svg_find_panel(svg, 0);
        int n = panel_points(svg, SVG_RUN0, &panel, curve);
        double width = panel.right - panel.left, span = cases[k].high - cases[k].low;
        double min_x = INFINITY, max_x = -INFINITY;
        for (int i = 0; i < n; i++) min_x = fmin(min_x, curve[i].x), max_x = fmax(max_x, curve[i].x);
        /* the curve runs from edge to edge, clipped, with the rows inside where they belong */
        double first = fmax(cases[k].low, ALPHA_STEPS(ALPHA_FIRST));
        double want_min = panel.left + width * (first - cases[k].low) / span;
        if (fabs(min_x - want_min) > PIXEL_TOLERANCE || fabs(max_x - panel.right) > PIXEL_TOLERANCE)
            fail_msg("--xlim %s: the curve spans x %.2f..%.2f, want %.2f..%.2f", cases[k].flag,
                     min_x, max_x, want_min, panel.right);
        for (int u = ALPHA_FIRST; u <= ALPHA_LAST; u++) {
            double steps = ALPHA_STEPS(u);
            if (steps <= cases[k].low || steps >= cases[k].high) continue;
            vertex_at(curve, n, panel.left + width * (steps - cases[k].low) / span, cases[k].flag);
        }
        /* the seconds panel: still 0 to the last point */
        svg_panel seconds = svg_find_panel(svg, 1);
        n = panel_points(svg, SVG_RUN0, &seconds, curve);
        vertex_at(curve, n, seconds.right, "the seconds panel's last row");
        vertex_at(curve, n,
                  seconds.left + (seconds.right - seconds.left) * ALPHA_FIRST / ALPHA_LAST,
                  "the seconds panel's first row");
        free(svg);
    }
    ERROR_CASE(2, ARGS(dir, "--xlim", "5"), "--xlim", "LO:HI", "'5'");
    ERROR_CASE(2, ARGS(dir, "--xlim", "1:2:3"), "--xlim", "'1:2:3'");
    ERROR_CASE(2, ARGS(dir, "--xlim", "abc:"), "--xlim LO", "'abc'");
    ERROR_CASE(2, ARGS(dir, "--xlim", "9:3"), "--xlim 9:3", "below");
    ERROR_CASE(2, ARGS(dir, "--xlim", ":0"), "--xlim :0", "above 0");
    ERROR_CASE(2, ARGS(dir, "--xlim"), "'--xlim' needs a value");
    ERROR_CASE(2, ARGS(dir, "--logx", "--xlim", "0:100"), "--logx", "above 0");
}

/* --logx: both x axes logarithmic, from the first point's x to the last's. */
static void test_logx(void **unused) {
    (void)unused;
    char dir[4200];
    tmp_path(dir, sizeof dir, "alpha");
    static svg_point curve[SVG_MAX_POINTS];
    char *svg = PLOT_SVG("logx.svg", dir, "--logx");
    for (int p = 0; p < 2; p++) {
        svg_panel panel = svg_find_panel(svg, p);
        int n = panel_points(svg, SVG_RUN0, &panel, curve);
        double low = log10(ALPHA_FIRST), high = log10(ALPHA_LAST); /* x is u times a unit */
        for (int u = ALPHA_FIRST; u <= ALPHA_LAST; u++) {
            char what[64];
            snprintf(what, sizeof what, "panel %d, update %d on a log axis", p, u);
            double x = panel.left + (panel.right - panel.left) * (log10(u) - low) / (high - low);
            vertex_at(curve, n, x, what);
        }
    }
    free(svg);
    /* with --xlim: from LO */
    svg = PLOT_SVG("logx_xlim.svg", dir, "--logx", "--xlim", "1000:");
    svg_panel panel = svg_find_panel(svg, 0);
    int n = panel_points(svg, SVG_RUN0, &panel, curve);
    double low = log10(1000.0), high = log10(ALPHA_STEPS(ALPHA_LAST));
    double x = panel.left + (panel.right - panel.left) *
                                (log10(ALPHA_STEPS(ALPHA_FIRST)) - low) / (high - low);
    vertex_at(curve, n, x, "the first row on a log axis from 1000");
    free(svg);
}

/* Runs of several envs: each env's threshold is a dashed line at its value, labelled (grey text
 * just above the line at its left end); runs of one env need no label (the title names it). */
static void test_thresholds_of_several_envs(void **unused) {
    (void)unused;
    char alpha[4200], acro[4200];
    tmp_path(alpha, sizeof alpha, "alpha");
    char *metrics = metrics_text(ALPHA_LAST, 0, -600.0); /* -590.5 .. -30 */
    make_run(acro, sizeof acro, "acro", metrics,
             "{\"env\": \"Acrobot-v1\", \"seed\": 1, \"solved_threshold\": -100}\n", NULL);
    free(metrics);
    const double thresholds[2] = {ALPHA_THRESHOLD, -100.0};
    static svg_point curve[SVG_MAX_POINTS], dashes[SVG_MAX_POINTS];
    char *svg = PLOT_SVG("envs.svg", alpha, acro);
    for (int p = 0; p < 2; p++) {
        svg_panel panel = svg_find_panel(svg, p);
        int n = panel_points(svg, SVG_RUN0, &panel, curve);
        double width = panel.right - panel.left;
        svg_point first = vertex_at(curve, n, panel.left + width * ALPHA_FIRST / ALPHA_LAST, "a");
        svg_point last = vertex_at(curve, n, panel.right, "alpha's last row");
        y_axis axis = fit_y_axis(first, ALPHA_RETURN(ALPHA_FIRST), last, ALPHA_RETURN(ALPHA_LAST));
        int dash_points = panel_points(svg, SVG_THRESHOLD, &panel, dashes);
        for (int t = 0; t < 2; t++) {
            double line_y = axis.scale * thresholds[t] + axis.offset, left = INFINITY;
            double right = -INFINITY;
            for (int i = 0; i < dash_points; i++)
                if (fabs(dashes[i].y - line_y) < PIXEL_TOLERANCE)
                    left = fmin(left, dashes[i].x), right = fmax(right, dashes[i].x);
            if (right - left < 0.9 * width)
                fail_msg("panel %d: no dashed line across at the threshold %g (y %.1f)", p,
                         thresholds[t], line_y);
            /* its label: grey glyphs above the line, within 3 text heights, in the left third */
            bool labelled = false;
            for (const char *g = strstr(svg, "<g style=\"fill:" SVG_THRESHOLD); g && !labelled;
                 g = strstr(g + 1, "<g style=\"fill:" SVG_THRESHOLD)) {
                const char *use = strstr(g, "<use "), *x_attr = use ? strstr(use, " x=\"") : NULL;
                const char *y_attr = use ? strstr(use, " y=\"") : NULL;
                if (!x_attr || !y_attr) continue;
                double x = strtod(x_attr + 4, NULL), y = strtod(y_attr + 4, NULL);
                labelled = x >= panel.left && x < panel.left + width / 3 && y < line_y &&
                           y > line_y - 40;
            }
            if (!labelled) fail_msg("panel %d: the threshold %g has no label", p, thresholds[t]);
        }
    }
    free(svg);
    svg = PLOT_SVG("one_env.svg", alpha);
    if (strstr(svg, "<g style=\"fill:" SVG_THRESHOLD))
        fail_msg("a plot of one env labels its threshold in the panel (the title names it)");
    free(svg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_png_default),       cmocka_unit_test(test_png_sizes),
        cmocka_unit_test(test_svg),               cmocka_unit_test(test_two_runs),
        cmocka_unit_test(test_partial_last_row),  cmocka_unit_test(test_usage),
        cmocka_unit_test(test_bad_folders),       cmocka_unit_test(test_no_finite_returns),
        cmocka_unit_test(test_unwritable_output), cmocka_unit_test(test_headroom),
        cmocka_unit_test(test_xlim),              cmocka_unit_test(test_logx),
        cmocka_unit_test(test_thresholds_of_several_envs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
