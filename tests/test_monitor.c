/*
 * The live metrics file (src/io/live.c) and 'skinner monitor' (src/cli/monitor.c).
 *
 * Unit: a record written is the record read, field by field; the ring keeps the latest
 * SK_LIVE_CURVE_POINTS points; a reader copying continuously while a writer thread publishes
 * 100k updates never sees a torn record (every figure is a function of the update number, so a
 * mix of two updates breaks the invariant; with the seqlock's checks removed, thousands of copies
 * fail it); a file replaced under a reader leaves the reader's
 * copy intact; missing, foreign, truncated and wrong-version files are refused.
 *
 * Through the program: the plain-text snapshot (stdout not a terminal) and the error exits; then
 * a run whose trainer died (live.bin says running, run.lock is free) reads interrupted; then
 * the full-screen view in a tmux pseudo-terminal: figures shown, a live update picked up, a
 * resize re-laid out at the new size, and q ends it with exit code 0; a run of more updates than
 * live.bin's ring keeps shows its early rows (from metrics.csv) in the drawn curve, in the
 * snapshot and on the terminal. tmux runs on a private
 * server (-S, a socket in the temp folder) that the teardown kills, so a failure never leaves a
 * session behind.
 */
#include "test_util.h"

#include "io/live.h"
#include "skinner/module.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define PROGRAM_TIMEOUT_SECONDS 30
#define PANE_TIMEOUT_SECONDS 10.0
#define STRESS_UPDATES 100000
#define STRESS_GOVERNOR_EVERY 1000
#define STRESS_PACE_NS 2000 /* between updates: a copy (~1 us) often overlaps one, often not */
#define MAX_ARGS 16
#define PANE_WIDTH 100
#define PANE_HEIGHT 30
#define SMALL_PANE_WIDTH 60
#define SMALL_PANE_HEIGHT 20
#define LONG_RUN_UPDATES 2000 /* ~4x live.bin's ring */
#define VERY_LONG_RUN_UPDATES 70000 /* past the monitor's 65536 rows of history */
#define LONG_RUN_EARLY 100    /* the first updates, at LONG_RUN_EARLY_RETURN; then LATE */
#define LONG_RUN_EARLY_RETURN (-500.0)
#define LONG_RUN_LATE_RETURN 100.0

static char g_tmp[4096];        /* this run's temp folder, removed at the end */
static char g_tmux_socket[4200]; /* the private tmux server of the terminal test, or "" */

/* ------------------------------------------------------------------ helpers */

static void path_in_tmp(char *buf, size_t size, const char *name) {
    int n = snprintf(buf, size, "%s/%s", g_tmp, name);
    if (n < 0 || (size_t)n >= size) fail_msg("temp path too long: %s/%s", g_tmp, name);
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *grown = realloc(buf, 2 * cap);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}

static void write_bytes(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("cannot write %s: %s", path, strerror(errno));
    if (size && fwrite(data, 1, size, f) != size) fail_msg("cannot write %s", path);
    if (fclose(f) != 0) fail_msg("cannot write %s", path);
}

static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(path);
        struct dirent *entry;
        while (dir && (entry = readdir(dir)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
            char child[4200];
            int n = snprintf(child, sizeof child, "%s/%s", path, entry->d_name);
            if (n > 0 && (size_t)n < sizeof child) remove_tree(child);
        }
        if (dir) closedir(dir);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Figures a test can recognise: update u of a run, every field distinct. */
static sk_update_stats known_stats(int64_t update) {
    sk_update_stats st = {0};
    st.update = update;
    st.steps = 1024 * update;
    st.wall_seconds = 0.5 * (double)update;
    st.sps = 2048.0;
    st.mean_return = 10.25 * (double)update;
    st.mean_length = 20.5 + (double)update;
    st.episodes = 7 * update;
    st.policy_loss = -0.0123;
    st.value_loss = 45.75;
    st.entropy = 0.6875;
    st.approx_kl = 0.0042;
    st.clip_fraction = 0.1875;
    st.explained_variance = 0.8125;
    st.learning_rate = 0.00025;
    return st;
}

static void create_live(sk_live **live, const char *path, const char *env_id, int64_t total) {
    if (sk_live_create(live, path, env_id, total) != SK_OK)
        fail_msg("sk_live_create %s: %s", path, sk_last_error());
}

static void open_live(sk_live_reader **reader, const char *path) {
    if (sk_live_open_read(reader, path) != SK_OK)
        fail_msg("sk_live_open_read %s: %s", path, sk_last_error());
}

static void snapshot(const sk_live_reader *reader, sk_live_data *data) {
    if (!sk_live_snapshot(reader, data)) fail_msg("no consistent snapshot of an idle file");
}

/* -------------------------------------------------------------- unit tests */

static void test_roundtrip(void **state) {
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "roundtrip.bin");
    sk_live *live = NULL;
    create_live(&live, path, "CartPole-v1", 500000);
    sk_live_reader *reader = NULL;
    open_live(&reader, path);
    sk_live_data d;

    /* before the first update */
    snapshot(reader, &d);
    assert_string_equal(d.env_id, "CartPole-v1");
    assert_int_equal(d.total_steps, 500000);
    assert_int_equal(d.status, SK_LIVE_RUNNING);
    assert_int_equal(d.update, 0);
    assert_int_equal(d.steps, 0);
    assert_int_equal(d.solved, 0);
    assert_int_equal(d.solved_at_steps, -1);
    assert_true(isnan(d.mean_return));
    assert_int_equal(d.curve_count, 0);
    assert_int_equal(d.anomalies, 0);
    assert_string_equal(d.governor_event, "");

    sk_update_stats first = known_stats(1), second = known_stats(2);
    first.mean_return = NAN; /* no episode finished yet */
    sk_live_update(live, &first, false, 12345 /* ignored: not solved */);
    sk_live_update(live, &second, true, 2048);
    sk_live_governor(live, true, "update 2: approx KL above governor.max_kl; restored");
    sk_live_governor(live, false, NULL);
    sk_live_governor(live, false, "a second event");
    sk_live_set_status(live, SK_LIVE_INTERRUPTED);

    snapshot(reader, &d);
    assert_string_equal(d.env_id, "CartPole-v1");
    assert_int_equal(d.total_steps, 500000);
    assert_int_equal(d.status, SK_LIVE_INTERRUPTED);
    assert_string_equal(sk_live_status_name(d.status), "interrupted");
    assert_int_equal(d.update, second.update);
    assert_int_equal(d.steps, second.steps);
    assert_int_equal(d.episodes, second.episodes);
    assert_true(d.wall_seconds == second.wall_seconds);
    assert_true(d.sps == second.sps);
    assert_true(d.mean_return == second.mean_return);
    assert_true(d.mean_length == second.mean_length);
    assert_true(d.policy_loss == second.policy_loss);
    assert_true(d.value_loss == second.value_loss);
    assert_true(d.entropy == second.entropy);
    assert_true(d.approx_kl == second.approx_kl);
    assert_true(d.clip_fraction == second.clip_fraction);
    assert_true(d.explained_variance == second.explained_variance);
    assert_true(d.learning_rate == second.learning_rate);
    assert_int_equal(d.solved, 1);
    assert_int_equal(d.solved_at_steps, 2048);
    assert_int_equal(d.anomalies, 3);
    assert_int_equal(d.restores, 1);
    assert_string_equal(d.governor_event, "a second event");
    assert_int_equal(d.curve_count, 2);
    sk_live_point p0 = sk_live_curve_at(&d, 0), p1 = sk_live_curve_at(&d, 1);
    assert_int_equal(p0.steps, first.steps);
    assert_true(p0.wall_seconds == first.wall_seconds);
    assert_true(isnan(p0.mean_return));
    assert_int_equal(p1.steps, second.steps);
    assert_true(p1.wall_seconds == second.wall_seconds);
    assert_true(p1.mean_return == second.mean_return);

    /* a long event is cut, NUL-terminated */
    char long_text[400];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    sk_live_governor(live, true, long_text);
    snapshot(reader, &d);
    assert_int_equal(strlen(d.governor_event), SK_LIVE_EVENT_SIZE - 1);

    /* the file outlives the writer: a reader opened afterwards sees the final state */
    sk_live_set_status(live, SK_LIVE_FINISHED);
    sk_live_close(live);
    sk_live_close(NULL);
    sk_live_update(NULL, &second, false, -1); /* the writer calls accept NULL */
    sk_live_governor(NULL, true, "x");
    sk_live_set_status(NULL, SK_LIVE_FAILED);
    sk_live_close_read(reader);
    open_live(&reader, path);
    snapshot(reader, &d);
    assert_int_equal(d.status, SK_LIVE_FINISHED);
    assert_int_equal(d.steps, second.steps);
    assert_int_equal(d.anomalies, 4);
    sk_live_close_read(reader);
    sk_live_close_read(NULL);
}

static void test_curve_ring(void **state) {
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "ring.bin");
    sk_live *live = NULL;
    create_live(&live, path, "Pendulum-v1", 1 << 30);
    int64_t updates = SK_LIVE_CURVE_POINTS + 88;
    for (int64_t u = 1; u <= updates; u++) {
        sk_update_stats st = known_stats(u);
        sk_live_update(live, &st, false, -1);
    }
    sk_live_reader *reader = NULL;
    open_live(&reader, path);
    sk_live_data d;
    snapshot(reader, &d);
    assert_int_equal(d.curve_count, SK_LIVE_CURVE_POINTS);
    for (int64_t i = 0; i < d.curve_count; i++) {
        int64_t u = updates - SK_LIVE_CURVE_POINTS + 1 + i; /* oldest kept first */
        sk_live_point p = sk_live_curve_at(&d, i);
        if (p.steps != 1024 * u || p.mean_return != 10.25 * (double)u)
            fail_msg("curve point %lld: steps %lld return %g, want update %lld", (long long)i,
                     (long long)p.steps, p.mean_return, (long long)u);
    }
    sk_live_close_read(reader);
    sk_live_close(live);
}

/* --- no torn records: every field of a snapshot is a function of its update number */

typedef struct stress {
    const char *path;
    sk_live *live;
    atomic_bool done;
    /* reader results, checked on the main thread (cmocka asserts are not thread-safe) */
    long long copies, failures, torn;
    char first_torn[256];
} stress;

static void stress_stats(int64_t u, sk_update_stats *st) {
    memset(st, 0, sizeof *st);
    st->update = u;
    st->steps = 2 * u;
    st->mean_return = -(double)u;
    st->wall_seconds = 0.5 * (double)u;
    st->sps = 4.0 * (double)u;
    st->mean_length = (double)u + 0.25;
    st->episodes = 3 * u;
    st->policy_loss = (double)u * 1e-3;
    st->value_loss = (double)u * 2.0;
    st->entropy = (double)u + 1.0;
    st->approx_kl = (double)u + 2.0;
    st->clip_fraction = (double)u + 3.0;
    st->explained_variance = (double)u + 4.0;
    st->learning_rate = (double)u + 5.0;
}

static void *stress_writer(void *arg) {
    stress *s = arg;
    for (int64_t u = 1; u <= STRESS_UPDATES; u++) {
        /* unpaced, the writer would starve the reader of any consistent copy */
        double until = now_seconds() + 1e-9 * STRESS_PACE_NS;
        while (now_seconds() < until) continue;
        sk_update_stats st;
        stress_stats(u, &st);
        sk_live_update(s->live, &st, u % 2 == 1, u);
        if (u % STRESS_GOVERNOR_EVERY == 0) {
            char text[64];
            snprintf(text, sizeof text, "event %lld", (long long)(u / STRESS_GOVERNOR_EVERY));
            sk_live_governor(s->live, true, text);
        }
    }
    atomic_store(&s->done, true);
    return NULL;
}

/* NULL if d is consistent, else what is wrong. */
static const char *stress_violation(const sk_live_data *d) {
    int64_t u = d->update;
    if (u == 0) return d->steps == 0 && d->curve_count == 0 ? NULL : "initial record altered";
    sk_update_stats want;
    stress_stats(u, &want);
    if (d->steps != want.steps || d->episodes != want.episodes) return "steps/episodes";
    if (d->mean_return != want.mean_return || d->wall_seconds != want.wall_seconds ||
        d->sps != want.sps || d->mean_length != want.mean_length)
        return "return/time figures";
    if (d->policy_loss != want.policy_loss || d->value_loss != want.value_loss ||
        d->entropy != want.entropy || d->approx_kl != want.approx_kl ||
        d->clip_fraction != want.clip_fraction ||
        d->explained_variance != want.explained_variance ||
        d->learning_rate != want.learning_rate)
        return "loss figures";
    if (d->solved != (u % 2 == 1) || d->solved_at_steps != (u % 2 == 1 ? u : -1)) return "solved";
    int64_t events = u / STRESS_GOVERNOR_EVERY;
    /* the event of update u may or may not be in yet */
    if (d->anomalies != events && d->anomalies != events - 1) return "anomaly count";
    if (d->restores != d->anomalies) return "restore count";
    char text[64] = "";
    if (d->anomalies > 0) snprintf(text, sizeof text, "event %lld", (long long)d->anomalies);
    if (strcmp(d->governor_event, text) != 0) return "governor event text";
    int64_t count = u < SK_LIVE_CURVE_POINTS ? u : SK_LIVE_CURVE_POINTS;
    if (d->curve_count != count || d->curve_head != u % SK_LIVE_CURVE_POINTS) return "curve ring";
    for (int64_t i = 0; i < count; i++) {
        int64_t v = u - count + 1 + i;
        sk_live_point p = sk_live_curve_at(d, i);
        if (p.steps != 2 * v || p.mean_return != -(double)v || p.wall_seconds != 0.5 * (double)v)
            return "curve point";
    }
    return NULL;
}

static void *stress_reader(void *arg) {
    stress *s = arg;
    sk_live_reader *reader = NULL;
    if (sk_live_open_read(&reader, s->path) != SK_OK) {
        snprintf(s->first_torn, sizeof s->first_torn, "open: %s", sk_last_error());
        s->torn++;
        return NULL;
    }
    static sk_live_data d; /* one reader thread */
    bool last = false;
    while (!last) {
        last = atomic_load(&s->done); /* one more copy after the writer ends */
        if (!sk_live_snapshot(reader, &d)) {
            s->failures++;
            continue;
        }
        s->copies++;
        const char *what = stress_violation(&d);
        if (what && s->torn++ == 0)
            snprintf(s->first_torn, sizeof s->first_torn,
                     "torn record at update %lld (%s): steps %lld, mean return %g",
                     (long long)d.update, what, (long long)d.steps, d.mean_return);
    }
    if (d.update != STRESS_UPDATES && s->torn++ == 0)
        snprintf(s->first_torn, sizeof s->first_torn, "the last copy is of update %lld, not %d",
                 (long long)d.update, STRESS_UPDATES);
    sk_live_close_read(reader);
    return NULL;
}

static void test_no_torn_records(void **state) {
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "stress.bin");
    static stress s;
    memset(&s, 0, sizeof s);
    s.path = path;
    atomic_init(&s.done, false);
    create_live(&s.live, path, "Acrobot-v1", 2 * STRESS_UPDATES);
    pthread_t reader, writer;
    assert_int_equal(pthread_create(&reader, NULL, stress_reader, &s), 0);
    assert_int_equal(pthread_create(&writer, NULL, stress_writer, &s), 0);
    pthread_join(writer, NULL);
    pthread_join(reader, NULL);
    sk_live_close(s.live);
    print_message("%lld consistent copies, %lld given up, during %d updates\n", s.copies,
                  s.failures, STRESS_UPDATES);
    if (s.torn) fail_msg("%lld bad copies; first: %s", s.torn, s.first_torn);
    assert_true(s.copies > 0);
}

/* A new run's file at the same path leaves a reader of the old one working. */
static void test_replaced_under_reader(void **state) {
    (void)state;
    char path[4200];
    path_in_tmp(path, sizeof path, "replaced.bin");
    sk_live *old_run = NULL, *new_run = NULL;
    create_live(&old_run, path, "CartPole-v1", 1000);
    sk_update_stats st = known_stats(3);
    sk_live_update(old_run, &st, false, -1);
    sk_live_close(old_run);
    sk_live_reader *old_reader = NULL, *new_reader = NULL;
    open_live(&old_reader, path);
    create_live(&new_run, path, "MountainCar-v0", 2000);
    sk_live_data d;
    snapshot(old_reader, &d); /* would be a SIGBUS had the file been truncated in place */
    assert_string_equal(d.env_id, "CartPole-v1");
    assert_int_equal(d.steps, st.steps);
    open_live(&new_reader, path);
    snapshot(new_reader, &d);
    assert_string_equal(d.env_id, "MountainCar-v0");
    assert_int_equal(d.update, 0);
    sk_live_close_read(old_reader);
    sk_live_close_read(new_reader);
    sk_live_close(new_run);
}

static void expect_refused(const char *path, sk_status want, const char *label) {
    sk_live_reader *reader = (sk_live_reader *)(uintptr_t)1;
    sk_status got = sk_live_open_read(&reader, path);
    if (got != want)
        fail_msg("%s: status %s, want %s (%s)", label, sk_status_name(got), sk_status_name(want),
                 sk_last_error());
    assert_null(reader);
    if (!strstr(sk_last_error(), path))
        fail_msg("%s: the message does not name the file: %s", label, sk_last_error());
}

static void test_refuses_bad_files(void **state) {
    (void)state;
    char path[4200], good[4200];
    path_in_tmp(good, sizeof good, "good.bin");
    sk_live *live = NULL;
    create_live(&live, good, "CartPole-v1", 1000);
    sk_live_close(live);
    sk_live_file *image = malloc(sizeof *image);
    assert_non_null(image);
    FILE *f = fopen(good, "rb");
    assert_non_null(f);
    assert_int_equal(fread(image, 1, sizeof *image, f), sizeof *image);
    fclose(f);

    path_in_tmp(path, sizeof path, "missing.bin");
    expect_refused(path, SK_ERR_IO, "missing file");

    path_in_tmp(path, sizeof path, "empty.bin");
    write_bytes(path, "", 0);
    expect_refused(path, SK_ERR_CORRUPT, "empty file");

    path_in_tmp(path, sizeof path, "text.bin");
    write_bytes(path, "step,return\n1,2\n", 16);
    expect_refused(path, SK_ERR_CORRUPT, "foreign file");

    path_in_tmp(path, sizeof path, "truncated.bin");
    write_bytes(path, image, sizeof *image / 2);
    expect_refused(path, SK_ERR_CORRUPT, "truncated file");

    path_in_tmp(path, sizeof path, "oversized.bin");
    char *bigger = calloc(1, sizeof *image + 100);
    assert_non_null(bigger);
    memcpy(bigger, image, sizeof *image);
    write_bytes(path, bigger, sizeof *image + 100);
    free(bigger);
    expect_refused(path, SK_ERR_CORRUPT, "oversized file");

    path_in_tmp(path, sizeof path, "version.bin");
    image->version = SK_LIVE_VERSION + 1;
    write_bytes(path, image, sizeof *image);
    expect_refused(path, SK_ERR_CORRUPT, "another layout version");
    image->version = SK_LIVE_VERSION;

    path_in_tmp(path, sizeof path, "size.bin");
    image->size = (uint32_t)sizeof *image - 8;
    write_bytes(path, image, sizeof *image);
    expect_refused(path, SK_ERR_CORRUPT, "header size mismatch");
    free(image);

    path_in_tmp(path, sizeof path, "no-such-folder/live.bin");
    live = (sk_live *)(uintptr_t)1;
    assert_int_equal(sk_live_create(&live, path, "CartPole-v1", 1), SK_ERR_IO);
    assert_null(live);
    if (!strstr(sk_last_error(), path))
        fail_msg("create: the message does not name the file: %s", sk_last_error());
}

/* ------------------------------------------------------------ the program */

typedef struct program_run {
    int status;
    char *out, *err;
} program_run;

/* Runs SKINNER_BINARY with args (NULL-terminated), stdin from /dev/null, stdout and stderr to
 * files (so not a terminal); waits. */
static void run_program(program_run *r, const char *const *args) {
    memset(r, 0, sizeof *r);
    const char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = SKINNER_BINARY;
    for (int i = 0; args[i]; i++) {
        if (argc > MAX_ARGS) fail_msg("too many arguments");
        argv[argc++] = args[i];
    }
    argv[argc] = NULL;
    char out_path[4200], err_path[4200];
    path_in_tmp(out_path, sizeof out_path, "stdout.txt");
    path_in_tmp(err_path, sizeof err_path, "stderr.txt");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(err, 2) < 0)
            _exit(125);
        alarm(PROGRAM_TIMEOUT_SECONDS);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    while (waitpid(pid, &r->status, 0) < 0)
        if (errno != EINTR) fail_msg("waitpid: %s", strerror(errno));
    r->out = read_text(out_path);
    r->err = read_text(err_path);
    if (!r->out || !r->err) fail_msg("cannot read the program's output");
    if (WIFEXITED(r->status) && WEXITSTATUS(r->status) == 127)
        fail_msg("cannot execute %s (build the skinner program first)", SKINNER_BINARY);
}

static void program_run_free(program_run *r) {
    free(r->out);
    free(r->err);
}

#define RUN_PROGRAM(r, ...) run_program((r), (const char *const[]){__VA_ARGS__, NULL})

static void expect_run(const program_run *r, int code, const char *out_needle,
                       const char *err_needle, int line) {
    bool exited = WIFEXITED(r->status);
    if (!exited || WEXITSTATUS(r->status) != code || (out_needle && !strstr(r->out, out_needle)) ||
        (err_needle && !strstr(r->err, err_needle)))
        fail_msg("test_monitor.c:%d: %s %d (want exit %d, stdout with \"%s\", stderr with "
                 "\"%s\")\n--- stdout ---\n%s\n--- stderr ---\n%s",
                 line, exited ? "exit" : "signal",
                 exited ? WEXITSTATUS(r->status) : WTERMSIG(r->status), code,
                 out_needle ? out_needle : "", err_needle ? err_needle : "", r->out, r->err);
}
#define EXPECT_RUN(r, code, out, err) expect_run((r), (code), (out), (err), __LINE__)

/* A run folder with a live file of known figures; the writer stays open and run.lock stays
 * held in *lock_fd (a run in progress, as a trainer holds it). */
static sk_live *make_run_dir(char *dir, size_t size, const char *name, int *lock_fd) {
    path_in_tmp(dir, size, name);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", dir, strerror(errno));
    if (sk_run_lock(dir, lock_fd) != SK_OK) fail_msg("sk_run_lock %s: %s", dir, sk_last_error());
    char path[4300];
    snprintf(path, sizeof path, "%s/live.bin", dir);
    sk_live *live = NULL;
    create_live(&live, path, "CartPole-v1", 500000);
    for (int64_t u = 1; u <= 20; u++) {
        sk_update_stats st = known_stats(u);
        st.mean_return = 4.0 * (double)u;
        sk_live_update(live, &st, false, -1);
    }
    sk_update_stats st = known_stats(21);
    st.steps = 123456;
    st.mean_return = 87.25;
    sk_live_update(live, &st, false, -1);
    sk_live_governor(live, true, "update 17: approx KL above governor.max_kl; restored");
    return live;
}

/* A finished run of `updates` updates, 1024 steps each, as the trainer writes it:
 * live.bin (whose ring keeps the last SK_LIVE_CURVE_POINTS) and metrics.csv (every update, and a
 * row still being written). Its return is LONG_RUN_EARLY_RETURN for the first LONG_RUN_EARLY
 * updates: only the early rows hold it. */
static void make_long_run_dir(char *dir, size_t size, const char *name, int64_t updates) {
    path_in_tmp(dir, size, name);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", dir, strerror(errno));
    char path[4300];
    snprintf(path, sizeof path, "%s/live.bin", dir);
    sk_live *live = NULL;
    create_live(&live, path, "CartPole-v1", 1024 * updates);
    snprintf(path, sizeof path, "%s/metrics.csv", dir);
    FILE *metrics = fopen(path, "w");
    if (!metrics) fail_msg("cannot write %s", path);
    fputs("update,steps,wall_seconds,sps,mean_return,mean_length,episodes,policy_loss,value_loss,"
          "entropy,approx_kl,clip_fraction,explained_variance,learning_rate\n",
          metrics);
    for (int64_t u = 1; u <= updates; u++) {
        sk_update_stats st = known_stats(u);
        st.mean_return = u <= LONG_RUN_EARLY ? LONG_RUN_EARLY_RETURN : LONG_RUN_LATE_RETURN;
        sk_live_update(live, &st, false, -1);
        fprintf(metrics, "%lld,%lld,%.3f,%.0f,%.6g,%.6g,%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n",
                (long long)st.update, (long long)st.steps, st.wall_seconds, st.sps,
                st.mean_return, st.mean_length, (long long)st.episodes, st.policy_loss,
                st.value_loss, st.entropy, st.approx_kl, st.clip_fraction,
                st.explained_variance, st.learning_rate);
    }
    fprintf(metrics, "%lld,-7", (long long)updates + 1); /* a row not finished: not a point */
    if (fclose(metrics) != 0) fail_msg("cannot write %s", path);
    sk_live_set_status(live, SK_LIVE_FINISHED);
    sk_live_close(live);
}

static void test_program_whole_run_snapshot(void **state) {
    (void)state;
    char dir[4200];
    make_long_run_dir(dir, sizeof dir, "long-run", LONG_RUN_UPDATES);
    program_run r;
    RUN_PROGRAM(&r, "monitor", dir);
    /* the ring alone: "512 points, steps 1524736..2048000, return 100.00..100.00" */
    EXPECT_RUN(&r, 0, "return curve  2000 points, steps 1024..2048000, return -500.00..100.00",
               NULL);
    if (strstr(r.out, "learner  ")) fail_msg("a run without learner.csv has a learner line:\n%s", r.out);
    program_run_free(&r);

    /* an off-policy run's learner.csv (past 4 KB, its last row cut short): the last whole row */
    char learner[4300];
    snprintf(learner, sizeof learner, "%s/learner.csv", dir);
    FILE *f = fopen(learner, "w");
    if (!f) fail_msg("cannot write %s", learner);
    fputs("update,steps,alpha,qf1_value,qf2_value,gradient_steps,replay_rows\n", f);
    fputs("1,100,1,nan,nan,0,100\n", f);
    for (int u = 2; u <= 300; u++)
        fprintf(f, "%d,%d,%.9g,%.9g,nan,%d,%d\n", u, 100 * u, 1.0 / u, 0.5 * u, 150 * u, 100 * u);
    fputs("301,30100,0.0", f);
    fclose(f);
    RUN_PROGRAM(&r, "monitor", dir);
    EXPECT_RUN(&r, 0, "learner       alpha 0.003333, qf1_value 150, qf2_value -, "
               "gradient_steps 45000, replay_rows 30000\n", NULL);
    program_run_free(&r);
    /* a file that is not one: no line, no crash (a row with no comma, a header of another kind) */
    const char *bad[] = {"update,steps,alpha\n5\n", "update,steps,alpha\n7,\n", "alpha\n1,2,3\n",
                         "update,steps,alpha\n", ""};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        f = fopen(learner, "w");
        if (!f) fail_msg("cannot write %s", learner);
        fputs(bad[k], f);
        fclose(f);
        RUN_PROGRAM(&r, "monitor", dir);
        EXPECT_RUN(&r, 0, "return curve", NULL);
        if (strstr(r.out, "learner  ")) fail_msg("learner.csv '%s' gave a learner line:\n%s", bad[k], r.out);
        program_run_free(&r);
    }
    remove(learner);

    /* a bare live file (no metrics.csv beside it): the ring, as before */
    char live_path[4300], bare_dir[4200], bare[4300];
    snprintf(live_path, sizeof live_path, "%s/live.bin", dir);
    path_in_tmp(bare_dir, sizeof bare_dir, "bare-live");
    if (mkdir(bare_dir, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s", bare_dir);
    snprintf(bare, sizeof bare, "%s/live.bin", bare_dir);
    if (rename(live_path, bare) != 0) fail_msg("rename %s: %s", live_path, strerror(errno));
    RUN_PROGRAM(&r, "monitor", bare);
    EXPECT_RUN(&r, 0, "512 points, steps 1524736..2048000, return 100.00..100.00", NULL);
    program_run_free(&r);

    /* past 65536 rows the history keeps every other row, evenly: the odd updates before the
     * ring's first (69489), 34744 of them, then the ring's 512 */
    make_long_run_dir(dir, sizeof dir, "very-long-run", VERY_LONG_RUN_UPDATES);
    RUN_PROGRAM(&r, "monitor", dir);
    EXPECT_RUN(&r, 0, "return curve  35256 points, steps 1024..71680000, return -500.00..100.00",
               NULL);
    program_run_free(&r);
}

static void test_program_snapshot(void **state) {
    (void)state;
    char dir[4200];
    int lock_fd;
    sk_live *live = make_run_dir(dir, sizeof dir, "snapshot-run", &lock_fd);
    program_run r;
    RUN_PROGRAM(&r, "monitor", dir);
    EXPECT_RUN(&r, 0, "skinner monitor: CartPole-v1 (running)", NULL);
    const char *needles[] = {"running", "123456", "500000", "87.25", "41.5" /* mean length */,
                             "147" /* episodes */, "2048" /* sps */, "-0.0123", "45.75",
                             "0.6875", "0.0042", "0.1875", "0.8125", "0.00025",
                             "1 (1 restored)", "approx KL above governor.max_kl", NULL};
    for (int i = 0; needles[i]; i++) EXPECT_RUN(&r, 0, needles[i], NULL);
    program_run_free(&r);

    /* the trainer dies without a word (SIGKILL): live.bin still says running, run.lock is free.
     * skinner serve calls that interrupted, and so does the monitor (issue 52 ask 7) */
    sk_run_unlock(lock_fd);
    RUN_PROGRAM(&r, "monitor", dir);
    EXPECT_RUN(&r, 0, "skinner monitor: CartPole-v1 (interrupted)", NULL);
    EXPECT_RUN(&r, 0, "interrupted after", NULL);
    if (strstr(r.out, "running") || strstr(r.out, "ETA"))
        fail_msg("a dead trainer's run still reads as running:\n%s", r.out);
    program_run_free(&r);

    sk_live_set_status(live, SK_LIVE_FINISHED);
    sk_live_close(live);
    RUN_PROGRAM(&r, "monitor", dir);
    EXPECT_RUN(&r, 0, "finished", NULL);
    EXPECT_RUN(&r, 0, "123456", NULL);
    program_run_free(&r);
}

/* skinner monitor on a folder of runs (runs/): a line a run, its status by the rule the
 * run's own view uses (a free run.lock makes a "running" record interrupted), and a line a
 * sweep folder; files and folders that are neither are left out. */
static void test_program_folder_of_runs(void **state) {
    (void)state;
    char parent[4200], a[4300], b[4300], path[4400];
    path_in_tmp(parent, sizeof parent, "folder-of-runs");
    if (mkdir(parent, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s", parent);
    int lock_a, lock_b;
    sk_live *live_a = make_run_dir(a, sizeof a, "folder-of-runs/a-run", &lock_a);
    sk_live *live_b = make_run_dir(b, sizeof b, "folder-of-runs/b-run", &lock_b);
    sk_live_set_status(live_b, SK_LIVE_FINISHED);
    sk_run_unlock(lock_b);
    snprintf(path, sizeof path, "%s/c-sweep", parent);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s", path);
    snprintf(path, sizeof path, "%s/c-sweep/sweep.ini", parent);
    write_bytes(path, "[sweep]\n", 8);
    snprintf(path, sizeof path, "%s/d-empty", parent);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s", path);
    program_run r;
    RUN_PROGRAM(&r, "monitor", parent);
    EXPECT_RUN(&r, 0, "holds run folders", NULL);
    EXPECT_RUN(&r, 0, "a-run                            CartPole-v1", NULL);
    EXPECT_RUN(&r, 0, "running      123456 / 500000", NULL);
    EXPECT_RUN(&r, 0, "87.2", NULL);
    EXPECT_RUN(&r, 0, "finished     123456 / 500000", NULL);
    EXPECT_RUN(&r, 0, "c-sweep                          a sweep: skinner monitor", NULL);
    if (strstr(r.out, "d-empty")) fail_msg("an empty folder listed as a run:\n%s", r.out);
    program_run_free(&r);
    sk_run_unlock(lock_a); /* its trainer died without a word */
    RUN_PROGRAM(&r, "monitor", parent);
    EXPECT_RUN(&r, 0, "interrupted  123456 / 500000", NULL);
    program_run_free(&r);
    sk_live_close(live_a);
    sk_live_close(live_b);
}

static void test_program_errors(void **state) {
    (void)state;
    program_run r;
    RUN_PROGRAM(&r, "monitor", "--help");
    EXPECT_RUN(&r, 0, "usage: skinner monitor RUN_DIR", NULL);
    program_run_free(&r);

    run_program(&r, (const char *const[]){"monitor", NULL});
    EXPECT_RUN(&r, 2, NULL, "skinner: error: ");
    EXPECT_RUN(&r, 2, NULL, "RUN_DIR");
    program_run_free(&r);

    RUN_PROGRAM(&r, "monitor", "--bogus");
    EXPECT_RUN(&r, 2, NULL, "skinner: error: ");
    program_run_free(&r);

    char dir[4200];
    path_in_tmp(dir, sizeof dir, "not-a-run");
    RUN_PROGRAM(&r, "monitor", dir); /* not there at all: said so, not "no live metrics" */
    EXPECT_RUN(&r, 1, NULL, "not-a-run: No such file or directory (expected a run folder");
    program_run_free(&r);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s", dir);
    RUN_PROGRAM(&r, "monitor", dir);
    EXPECT_RUN(&r, 1, NULL, "skinner: error: ");
    EXPECT_RUN(&r, 1, NULL, "no live metrics in");
    EXPECT_RUN(&r, 1, NULL, "and no run folder in it");
    program_run_free(&r);

    char path[4300];
    snprintf(path, sizeof path, "%s/live.bin", dir);
    write_bytes(path, "not a live file at all", 22);
    RUN_PROGRAM(&r, "monitor", dir);
    EXPECT_RUN(&r, 1, NULL, "skinner: error: ");
    EXPECT_RUN(&r, 1, NULL, path);
    program_run_free(&r);
}

/* ----------------------------------------------------------- tmux: a real terminal */

/* Runs tmux on this test's private server; its stdout into out (if given). Returns the exit
 * code, 127 if tmux cannot be run. */
static int tmux_(char *out, size_t size, const char *first, ...) {
    const char *argv[MAX_ARGS + 6];
    int argc = 0;
    argv[argc++] = "tmux";
    argv[argc++] = "-S";
    argv[argc++] = g_tmux_socket;
    argv[argc++] = "-f";
    argv[argc++] = "/dev/null";
    va_list rest;
    va_start(rest, first);
    for (const char *arg = first; arg; arg = va_arg(rest, const char *)) {
        if (argc > MAX_ARGS + 4) fail_msg("too many tmux arguments");
        argv[argc++] = arg;
    }
    va_end(rest);
    argv[argc] = NULL;
    char out_path[4200];
    path_in_tmp(out_path, sizeof out_path, "tmux-out.txt");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int null_err = open("/dev/null", O_WRONLY);
        if (in < 0 || fd < 0 || null_err < 0 || dup2(in, 0) < 0 || dup2(fd, 1) < 0 ||
            dup2(null_err, 2) < 0)
            _exit(125);
        unsetenv("TMUX"); /* the test itself may run inside tmux */
        alarm(PROGRAM_TIMEOUT_SECONDS);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) fail_msg("waitpid: %s", strerror(errno));
    if (out) {
        char *text = read_text(out_path);
        snprintf(out, size, "%s", text ? text : "");
        free(text);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
#define TMUX(out, size, ...) tmux_((out), (size), __VA_ARGS__, (const char *)NULL)

static int tmux_teardown(void **state) {
    (void)state;
    if (g_tmux_socket[0]) {
        TMUX(NULL, 0, "kill-server");
        unlink(g_tmux_socket); /* tmux leaves it behind */
    }
    g_tmux_socket[0] = '\0';
    return 0;
}

/* Captures the pane until every needle shows (or fails after PANE_TIMEOUT_SECONDS). */
static void wait_for_pane(char *pane, size_t size, const char *session, const char *const *needles,
                          int line) {
    double deadline = now_seconds() + PANE_TIMEOUT_SECONDS;
    const char *missing = NULL;
    do {
        if (TMUX(pane, size, "capture-pane", "-p", "-t", session) != 0)
            fail_msg("test_monitor.c:%d: tmux capture-pane failed: did the monitor exit?\n%s",
                     line, pane);
        missing = NULL;
        for (int i = 0; needles[i] && !missing; i++)
            if (!strstr(pane, needles[i])) missing = needles[i];
        if (!missing) return;
        sleep_ms(100);
    } while (now_seconds() < deadline);
    fail_msg("test_monitor.c:%d: the pane does not show \"%s\" after %.0f s:\n%s", line, missing,
             PANE_TIMEOUT_SECONDS, pane);
}
#define WAIT_FOR_PANE(pane, session, ...)                                                          \
    wait_for_pane((pane), sizeof(pane), (session), (const char *const[]){__VA_ARGS__, NULL},       \
                  __LINE__)

/* Characters (not bytes: the axes are UTF-8 line drawing) of the widest line; counts lines. */
static int widest_line(const char *text, int *lines) {
    int widest = 0, width = 0;
    *lines = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '\n') {
            widest = width > widest ? width : widest;
            width = 0;
            ++*lines;
        } else if ((*p & 0xC0) != 0x80) {
            width++;
        }
    }
    if (width > 0) ++*lines;
    return width > widest ? width : widest;
}

/* Names this test's private tmux server's socket; false (and no socket) without tmux. */
static bool tmux_available(void) {
    /* a socket path must fit in sockaddr_un (108 bytes) */
    path_in_tmp(g_tmux_socket, sizeof g_tmux_socket, "tmux.sock");
    if (strlen(g_tmux_socket) >= 100)
        snprintf(g_tmux_socket, sizeof g_tmux_socket, "/tmp/skinner-test-monitor-%ld.sock",
                 (long)getpid());
    char version[256];
    if (TMUX(version, sizeof version, "-V") != 127) return true;
    g_tmux_socket[0] = '\0';
    return false;
}

/* 'skinner monitor dir' in a detached PANE_WIDTH x PANE_HEIGHT tmux session; its exit code goes
 * to exit_path unless NULL. */
static void start_monitor(const char *session, const char *dir, const char *exit_path) {
    if (strchr(dir, '\'') || strchr(SKINNER_BINARY, '\''))
        fail_msg("a path with a quote cannot go through tmux's shell: %s", dir);
    char command[13000];
    snprintf(command, sizeof command, "'%s' monitor '%s'%s%s%s", SKINNER_BINARY, dir,
             exit_path ? "; echo $? > '" : "", exit_path ? exit_path : "", exit_path ? "'" : "");
    char width[16], height[16];
    snprintf(width, sizeof width, "%d", PANE_WIDTH);
    snprintf(height, sizeof height, "%d", PANE_HEIGHT);
    if (TMUX(NULL, 0, "new-session", "-d", "-s", session, "-x", width, "-y", height, command) != 0)
        fail_msg("tmux new-session failed");
}

static void test_program_terminal(void **state) {
    (void)state;
    if (!tmux_available()) TEST_SKIP("tmux is not installed (scripts/setup.sh installs it)");
    char dir[4200];
    int lock_fd;
    sk_live *live = make_run_dir(dir, sizeof dir, "terminal-run", &lock_fd);
    char exit_path[4300];
    snprintf(exit_path, sizeof exit_path, "%s/monitor-exit-code", dir);
    const char *session = "monitor";
    start_monitor(session, dir, exit_path);
    static char pane[1 << 16];
    char width[16], height[16];

    /* what was written before the monitor started */
    WAIT_FOR_PANE(pane, session, "CartPole-v1", "running", "123456", "87.25", "ETA",
                  "mean return", "q quits");

    /* the run goes on: the next frame shows the new figures */
    sk_update_stats st = known_stats(22);
    st.steps = 130048;
    st.mean_return = 91.5;
    sk_live_update(live, &st, true, 130048);
    WAIT_FOR_PANE(pane, session, "130048", "91.50", "yes, at 130048");

    /* a smaller terminal: laid out again to fit */
    snprintf(width, sizeof width, "%d", SMALL_PANE_WIDTH);
    snprintf(height, sizeof height, "%d", SMALL_PANE_HEIGHT);
    if (TMUX(NULL, 0, "resize-window", "-t", session, "-x", width, "-y", height) != 0)
        fail_msg("tmux resize-window failed");
    /* at 100 columns "wall time" is the third cell of a row; at 60 it starts one, and the
     * progress line's tail (ETA) would have been cut off had nothing been redrawn */
    WAIT_FOR_PANE(pane, session, "CartPole-v1", "\nwall time", "ETA", "130048");
    int lines = 0, widest = widest_line(pane, &lines);
    if (widest > SMALL_PANE_WIDTH || lines > SMALL_PANE_HEIGHT)
        fail_msg("after the resize the pane holds %d lines up to %d wide (want <= %dx%d):\n%s",
                 lines, widest, SMALL_PANE_WIDTH, SMALL_PANE_HEIGHT, pane);
    if (strstr(strstr(pane, "CartPole-v1") + 1, "CartPole-v1"))
        fail_msg("the title shows twice after the resize:\n%s", pane);

    /* the run ends */
    sk_live_set_status(live, SK_LIVE_FINISHED);
    sk_live_close(live);
    sk_run_unlock(lock_fd);
    WAIT_FOR_PANE(pane, session, "finished");

    /* q quits: the session ends with the monitor, exit code 0 */
    if (TMUX(NULL, 0, "send-keys", "-t", session, "q") != 0) fail_msg("tmux send-keys failed");
    double deadline = now_seconds() + PANE_TIMEOUT_SECONDS;
    while (TMUX(NULL, 0, "has-session", "-t", session) == 0) {
        if (now_seconds() > deadline) fail_msg("the monitor did not quit on q");
        sleep_ms(50);
    }
    char *code = read_text(exit_path);
    if (!code || strcmp(code, "0\n") != 0)
        fail_msg("the monitor exited with '%s', want 0", code ? code : "(nothing)");
    free(code);
}

/* The early rows of a run longer than live.bin's ring are drawn: the curve starts at the first
 * update's steps and reaches down to the early return, at the left. */
static void test_program_terminal_whole_run(void **state) {
    (void)state;
    if (!tmux_available()) TEST_SKIP("tmux is not installed (scripts/setup.sh installs it)");
    char dir[4200];
    make_long_run_dir(dir, sizeof dir, "long-terminal-run", LONG_RUN_UPDATES);
    const char *session = "monitor-long";
    start_monitor(session, dir, NULL);
    static char pane[1 << 16];
    WAIT_FOR_PANE(pane, session, "finished", "whole run (2000 points)", "2048000 steps");
    /* the x axis starts at update 1's steps: its labels are the line after the axis */
    const char *corner = strstr(pane, "\xe2\x94\x94"); /* U+2514, the axis' corner */
    const char *labels = corner ? strchr(corner, '\n') : NULL;
    if (!labels || strncmp(labels + 1 + strspn(labels + 1, " "), "1024 ", 5) != 0)
        fail_msg("the curve does not start at step 1024 (update 1):\n%s", pane);
    /* the bottom row is labelled with the early return and has the curve at its left end */
    const char *low = strstr(pane, "-500 \xe2\x94\x82"); /* the label, a space, U+2502 */
    if (!low || low[8] != '*')
        fail_msg("the early return (-500) is not drawn at the left of the bottom row:\n%s", pane);
    const char *high = strstr(pane, " 100 \xe2\x94\x82");
    if (!high || high > low || !memchr(high, '*', (size_t)(strchr(high, '\n') - high)))
        fail_msg("the later return (100) is not the top row:\n%s", pane);
    if (TMUX(NULL, 0, "send-keys", "-t", session, "q") != 0) fail_msg("tmux send-keys failed");
}

/* ------------------------------------------------------------------ main */

static int setup(void **unused) {
    (void)unused;
    const char *base = getenv("TMPDIR");
    snprintf(g_tmp, sizeof g_tmp, "%s/skinner-test-monitor-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(g_tmp)) {
        fprintf(stderr, "mkdtemp %s: %s\n", g_tmp, strerror(errno));
        return -1;
    }
    return 0;
}

static int teardown(void **unused) {
    (void)unused;
    remove_tree(g_tmp);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_curve_ring),
        cmocka_unit_test(test_no_torn_records),
        cmocka_unit_test(test_replaced_under_reader),
        cmocka_unit_test(test_refuses_bad_files),
        cmocka_unit_test(test_program_snapshot),
        cmocka_unit_test(test_program_whole_run_snapshot),
        cmocka_unit_test(test_program_folder_of_runs),
        cmocka_unit_test(test_program_errors),
        cmocka_unit_test_teardown(test_program_terminal, tmux_teardown),
        cmocka_unit_test_teardown(test_program_terminal_whole_run, tmux_teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
