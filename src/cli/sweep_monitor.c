/* skinner monitor DIR on a sweep folder: the trials done and failed, the best so far, and
 * each running trial's seed, steps and return (its run's metrics.csv). */
#include "cli.h"
#include "sweep_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define MONITOR_REFRESH_SECONDS 1
#define MONITOR_LAST_SHOWN 5

bool sweep_is_folder(const char *dir) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/sweep.ini", dir);
    return access(path, R_OK) == 0;
}

/* Whether a process holds the trial's claim (it is running). */
static bool claimed(const char *trial_dir) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/claim.lock", trial_dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
}

/* The newest seed run of a running trial: its seed, steps and mean return. */
static void print_progress(const char *trial_dir, int index, int seeds) {
    int newest = -1, done = 0;
    for (int k = 0; k < seeds; k++) {
        /* a trial's seeds are 1..N; a re-test's 1000 (index + 1) + k (sweep.c) */
        int candidates[2] = {1 + k, 1000 * (index + 1) + k};
        for (int c = 0; c < 2; c++) {
            char path[PATH_MAX + 96];
            snprintf(path, sizeof path, "%s/seed-%d", trial_dir, candidates[c]);
            if (access(path, F_OK) != 0) continue;
            newest = candidates[c];
            snprintf(path, sizeof path, "%s/seed-%d/summary.json", trial_dir, candidates[c]);
            done += access(path, F_OK) == 0;
        }
    }
    printf("  trial %4d  ", index);
    if (newest < 0) {
        printf("starting\n");
        return;
    }
    char path[PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/seed-%d/metrics.csv", trial_dir, newest);
    char *text = sweep_read_text(path);
    long long steps = 0;
    double mean_return = NAN;
    if (text) {
        char *end = text + strlen(text);
        while (end > text && end[-1] == '\n') *--end = '\0';
        char *last = strrchr(text, '\n');
        long long update;
        double wall, sps;
        /* update,steps,wall_seconds,sps,mean_return,... (src/train/run_files.c) */
        if (last && sscanf(last + 1, "%lld,%lld,%lf,%lf,%lf", &update, &steps, &wall, &sps,
                           &mean_return) != 5)
            steps = 0, mean_return = NAN;
        free(text);
    }
    printf("seed %d (%d of %d done)  steps %lld  mean return %.1f\n", newest, done, seeds, steps,
           mean_return);
}

static void snapshot(const char *dir, const sk_sweep_spec *spec) {
    sk_sweep_trial *trials = NULL;
    int count = 0, ok = 0, best = -1;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/sweep.jsonl", dir);
    if (sk_sweep_state_read(path, spec, &trials, &count) != SK_OK) {
        printf("cannot read %s: %s\n", path, sk_last_error());
        return;
    }
    double seconds = 0;
    for (int i = 0; i < count; i++) {
        seconds = fmax(seconds, trials[i].sweep_seconds);
        if (!trials[i].ok) continue;
        ok++;
        if (best < 0 || (spec->maximize ? trials[i].metric > trials[best].metric
                                        : trials[i].metric < trials[best].metric))
            best = i;
    }
    printf("skinner sweep %s: %s, %s search, metric %s (goal %s)\n", dir, spec->env,
           sk_sweep_method_name(spec->method), spec->metric,
           sk_sweep_goal_name(spec->maximize));
    printf("trials: %d done (%d ok, %d failed)", count, ok, count - ok);
    if (spec->trials) printf(" of %lld", (long long)spec->trials);
    printf(", %.0f s", seconds);
    if (spec->seconds) printf(" of %.0f s", spec->seconds);
    printf("\n");
    if (best >= 0) {
        printf("best so far: trial %d, %s %.6g, cost %.4g\n ", trials[best].index, spec->metric,
               trials[best].metric, trials[best].cost);
        for (int d = 0; d < spec->num_params; d++)
            printf(" %s=%.4g", spec->params[d].key, trials[best].value[d]);
        printf("\n");
    }
    printf("running:\n");
    int running = 0, highest = sweep_highest_trial(dir);
    for (int index = 0; index <= highest; index++) {
        char trial_dir[PATH_MAX + 32];
        sweep_trial_dir(trial_dir, sizeof trial_dir, dir, index);
        bool finished = false;
        for (int i = 0; i < count && !finished; i++) finished = trials[i].index == index;
        if (finished || !claimed(trial_dir)) continue;
        print_progress(trial_dir, index, spec->seeds_per_trial);
        running++;
    }
    if (!running) printf("  none\n");
    printf("last finished:\n");
    for (int i = count > MONITOR_LAST_SHOWN ? count - MONITOR_LAST_SHOWN : 0; i < count; i++) {
        if (trials[i].ok)
            printf("  trial %4d  %s %.6g  cost %.4g\n", trials[i].index, spec->metric,
                   trials[i].metric, trials[i].cost);
        else printf("  trial %4d  failed: %s\n", trials[i].index, trials[i].message);
    }
    free(trials);
    fflush(stdout);
}

static volatile sig_atomic_t g_monitor_quit;

static void on_monitor_quit(int signo) {
    (void)signo;
    g_monitor_quit = 1;
}

int sweep_monitor(const char *dir, bool once) {
    sk_sweep_spec spec;
    if (sweep_open_existing(dir, &spec) != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    bool live = !once && isatty(STDOUT_FILENO);
    struct sigaction action = {.sa_handler = on_monitor_quit};
    sigaction(SIGINT, &action, NULL);
    do {
        if (live) printf("\033[H\033[2J"); /* home, clear: one frame a second */
        snapshot(dir, &spec);
        if (live) {
            printf("\n(Ctrl-C quits)\n");
            fflush(stdout);
            sleep(MONITOR_REFRESH_SECONDS);
        }
    } while (live && !g_monitor_quit);
    return SK_EXIT_OK;
}
