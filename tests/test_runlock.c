/*
 * One writer per run folder (issue 30 item 16). Before the lock, a `--resume` started while the
 * run still trained ran beside it: both exited 0 and metrics.csv got NUL bytes and duplicate
 * updates. Now the second `skinner train` (a --resume, or a fresh run with --force into the
 * held folder) and the second `skinner kge train` exit 1 naming the holder's pid and command,
 * and write nothing; a holder killed with SIGKILL leaves no lock behind (flock dies with it), so
 * the crashed run resumes. Two trainers of one process are refused the same way.
 *
 * The programs run through test_spawn.h (the wait status is theirs, each with an alarm); the
 * background run is stopped by its pid.
 */
#include "test_util.h"
#include "test_spawn.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#define RUN_TIMEOUT_SECONDS 120 /* a refused command ends at once; this is for a hang */
#define WAIT_SECONDS 60.0       /* for the background run to reach a state */

static char g_tmp[64];
static pid_t g_holder; /* the background run of the case, killed by the teardown if it fails */

static int kill_holder(void **state) {
    (void)state;
    if (g_holder > 0) {
        int status;
        kill(g_holder, SIGKILL);
        waitpid(g_holder, &status, 0);
    }
    g_holder = 0;
    return 0;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The whole file as a NUL-terminated string (NULL if unreadable); *size without the NUL. */
static char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)(len > 0 ? len : 0) + 1);
    size_t got = text ? fread(text, 1, (size_t)(len > 0 ? len : 0), f) : 0;
    fclose(f);
    if (!text) return NULL;
    text[got] = '\0';
    if (size) *size = got;
    return text;
}

/* Starts SKINNER_BINARY with args (NULL-terminated), stdout and stderr into g_tmp/NAME.out and
 * NAME.err. */
static pid_t start(const char *name, const char *const *args) {
    char out_path[128], err_path[128];
    snprintf(out_path, sizeof out_path, "%s/%s.out", g_tmp, name);
    snprintf(err_path, sizeof err_path, "%s/%s.err", g_tmp, name);
    const char *argv[32] = {SKINNER_BINARY};
    int argc = 1;
    for (int k = 0; args[k]; k++) argv[argc++] = args[k];
    argv[argc] = NULL;
    pid_t pid = test_spawn((char *const *)argv, out_path, err_path, RUN_TIMEOUT_SECONDS);
    if (pid < 0) fail_msg("fork: %s", strerror(errno));
    return pid;
}

/* Waits up to seconds for pid; its wait status, or -1 if it still runs (then it is killed
 * and reaped, so that no writer is left behind). */
static int wait_for(pid_t pid, double seconds) {
    double until = now_seconds() + seconds;
    int status;
    while (now_seconds() < until) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid) return status;
        if (got < 0 && errno != EINTR) fail_msg("waitpid: %s", strerror(errno));
        usleep(20000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* Runs skinner with args to its end; its stderr into *err (free it). */
static int run(const char *name, const char *const *args, char **err) {
    int status = wait_for(start(name, args), WAIT_SECONDS);
    char path[128];
    snprintf(path, sizeof path, "%s/%s.err", g_tmp, name);
    *err = slurp(path, NULL);
    assert_non_null(*err);
    if (status == -1)
        fail_msg("'%s' still ran after %.0f s: a second writer was not refused\n%s", args[1],
                 WAIT_SECONDS, *err);
    return status;
}

/* Data lines of a CSV file (the header not counted), 0 if it is missing. */
static int data_rows(const char *path) {
    char *text = slurp(path, NULL);
    if (!text) return 0;
    int lines = 0;
    for (const char *c = text; *c; c++) lines += *c == '\n';
    free(text);
    return lines > 0 ? lines - 1 : 0;
}

/* Waits until path has at least rows data rows (and, if also is given, that file exists)
 * while pid runs. */
static void wait_for_rows(pid_t pid, const char *path, int rows, const char *also) {
    double until = now_seconds() + WAIT_SECONDS;
    struct stat st;
    while (data_rows(path) < rows || (also && stat(also, &st) != 0)) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid)
            fail_msg("the background run ended (status %d) before %s had %d rows", status, path,
                     rows);
        if (now_seconds() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("%s did not reach %d rows in %.0f s", path, rows, WAIT_SECONDS);
        }
        usleep(50000);
    }
}

/* The refusal: exit 1 (not a signal), naming the holder's pid and its command. */
static void expect_refused(int status, const char *err, pid_t holder, const char *holder_command) {
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
        fail_msg("wanted exit 1, got status %d:\n%s", status, err);
    char pid_text[64];
    snprintf(pid_text, sizeof pid_text, "in use by another process (pid %ld on host",
             (long)holder);
    if (!strstr(err, pid_text) || !strstr(err, holder_command))
        fail_msg("the refusal names neither '%s' nor '%s':\n%s", pid_text, holder_command, err);
}

/* metrics.csv as one writer leaves it: no NUL byte, the header once, then update (or epoch)
 * numbers 1, 2, 3, ... each once. Returns the rows. */
static int check_clean_metrics(const char *path, const char *header_start) {
    size_t size = 0;
    char *text = slurp(path, &size);
    assert_non_null(text);
    if (strlen(text) != size) fail_msg("%s holds a NUL byte at %zu", path, strlen(text));
    if (strncmp(text, header_start, strlen(header_start)) != 0)
        fail_msg("%s does not start with its header:\n%.200s", path, text);
    int rows = 0;
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        long number = strtol(line + 1, NULL, 10);
        if (number != rows + 1)
            fail_msg("%s: row %d is of update %ld (expected %d): two writers?", path, rows + 1,
                     number, rows + 1);
        rows++;
    }
    free(text);
    return rows;
}

static void test_second_train_refused(void **state) {
    (void)state;
    char dir[128], metrics[160], checkpoint[160], config[160], lock[160];
    snprintf(dir, sizeof dir, "%s/run", g_tmp);
    snprintf(metrics, sizeof metrics, "%s/metrics.csv", dir);
    snprintf(checkpoint, sizeof checkpoint, "%s/policy.safetensors", dir);
    snprintf(config, sizeof config, "%s/config.ini", dir);
    snprintf(lock, sizeof lock, "%s/run.lock", dir);
    /* a run far longer than the test, checkpointing every 2 updates */
    const char *first[] = {"train", "CartPole-v1", "--run-dir", dir, "--total-steps", "1000000000",
                           "--threads", "1", "--train.checkpoint_every", "2", "--quiet", NULL};
    pid_t holder = g_holder = start("first", first);
    wait_for_rows(holder, metrics, 3, checkpoint);
    char *config_before = slurp(config, NULL);
    char *record = slurp(lock, NULL);
    char pid_line[32];
    snprintf(pid_line, sizeof pid_line, "pid %ld\n", (long)holder);
    if (!record || strncmp(record, pid_line, strlen(pid_line)) != 0)
        fail_msg("run.lock does not record the holder (%s): %s", pid_line, record);
    free(record);

    char *err;
    const char *resume[] = {"train", "CartPole-v1", "--resume", dir, NULL};
    int resume_status = run("resume", resume, &err);
    expect_refused(resume_status, err, holder, "train CartPole-v1 --run-dir");
    free(err);
    const char *force[] = {"train", "CartPole-v1", "--run-dir", dir, "--force", NULL};
    int force_status = run("force", force, &err);
    expect_refused(force_status, err, holder, "train CartPole-v1 --run-dir");
    free(err);
    /* nothing written by either: config.ini is the holder's */
    char *config_after = slurp(config, NULL);
    assert_non_null(config_before);
    assert_non_null(config_after);
    assert_string_equal(config_before, config_after);
    free(config_before);
    free(config_after);

    /* a crash (SIGKILL) leaves run.lock in the folder but no lock: the run resumes */
    kill_holder(NULL);
    int rows_before = check_clean_metrics(metrics, "update,steps,");
    pid_t resumed = g_holder = start("resumed", resume);
    wait_for_rows(resumed, metrics, rows_before + 2, NULL);
    kill(resumed, SIGINT); /* Ctrl-C: the run saves and exits 0 */
    int status = wait_for(resumed, WAIT_SECONDS);
    g_holder = 0;
    char path[128];
    snprintf(path, sizeof path, "%s/resumed.err", g_tmp);
    char *resumed_err = slurp(path, NULL);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the resume after the holder's death ended with status %d:\n%s", status,
                 resumed_err);
    free(resumed_err);
    int rows = check_clean_metrics(metrics, "update,steps,");
    print_message("metrics.csv: %d rows, each update once\n", rows);
}

/* A knowledge base small enough for an epoch in microseconds (the one of fuzz/fuzz_kge.c). */
static void write_dataset(const char *dir) {
    static const char *const files[][2] = {
        {"train.txt", "locatedIn(c1,e).\nlocatedIn(c3,f).\nneighborOf(c2,c1).\nneighborOf(c4,c3).\n"},
        {"valid.txt", "locatedIn(c4,f).\n"},
        {"test.txt", "locatedIn(c2,e).\n"},
        {"rules.txt", "r1:1:neighborOf(X,Y), locatedIn(Y,Z) -> locatedIn(X,Z)\n"},
    };
    assert_int_equal(mkdir(dir, 0755), 0);
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char path[160];
        snprintf(path, sizeof path, "%s/%s", dir, files[k][0]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(files[k][1], f);
        fclose(f);
    }
}

static void test_second_kge_train_refused(void **state) {
    (void)state;
    char data[128], dir[128], metrics[160], model[160];
    snprintf(data, sizeof data, "%s/kb", g_tmp);
    snprintf(dir, sizeof dir, "%s/kge-run", g_tmp);
    snprintf(metrics, sizeof metrics, "%s/metrics.csv", dir);
    snprintf(model, sizeof model, "%s/kge.safetensors", dir);
    write_dataset(data);
    const char *first[] = {"kge", "train", "--dataset", data, "--run-dir", dir, "--dim", "4",
                           "--epochs", "900000", "--batch-size", "2", "--negatives", "2",
                           "--eval-every", "5", "--threads", "1", "--quiet", NULL};
    pid_t holder = g_holder = start("kge-first", first);
    wait_for_rows(holder, metrics, 10, model);
    char *err;
    const char *resume[] = {"kge", "train", "--resume", dir, "--epochs", "1000000", NULL};
    int resume_status = run("kge-resume", resume, &err);
    expect_refused(resume_status, err, holder, "kge train --dataset");
    free(err);
    const char *force[] = {"kge", "train", "--dataset", data, "--run-dir", dir, "--force",
                           "--epochs", "3", NULL};
    int force_status = run("kge-force", force, &err);
    expect_refused(force_status, err, holder, "kge train --dataset");
    free(err);
    kill_holder(NULL);
    check_clean_metrics(metrics, "epoch,steps,");
}

/* In one process: a second trainer on a held folder is refused, and gets it once the first
 * trainer is destroyed. */
static void test_second_trainer_refused(void **state) {
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/library-run", g_tmp);
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "CartPole-v1");
    sk_trainer *first = NULL, *second = NULL;
    assert_int_equal(sk_trainer_create(&first, cfg), SK_OK);
    assert_int_equal(sk_trainer_create(&second, cfg), SK_OK);
    assert_int_equal(sk_trainer_set_run_dir(first, dir), SK_OK);
    assert_int_equal(sk_trainer_set_run_dir(first, dir), SK_OK); /* its own lock: again is fine */
    assert_int_equal(sk_trainer_set_run_dir(second, dir), SK_ERR_IO);
    const char *message = sk_trainer_last_error(second);
    char pid_text[64];
    snprintf(pid_text, sizeof pid_text, "(pid %ld on host", (long)getpid());
    if (!strstr(message, pid_text)) fail_msg("the refusal does not name %s: %s", pid_text, message);
    sk_trainer_destroy(first);
    assert_int_equal(sk_trainer_set_run_dir(second, dir), SK_OK);
    sk_trainer_destroy(second);
    sk_config_free(cfg);
}

int main(void) {
    snprintf(g_tmp, sizeof g_tmp, "/tmp/skinner-test-runlock-XXXXXX");
    if (!mkdtemp(g_tmp)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_trainer_refused),
        cmocka_unit_test_teardown(test_second_train_refused, kill_holder),
        cmocka_unit_test_teardown(test_second_kge_train_refused, kill_holder),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_tmp);
    if (system(cmd) != 0) return 1;
    return rc;
}
