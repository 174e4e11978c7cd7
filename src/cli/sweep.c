/* skinner sweep: hyperparameter search over `skinner train` runs (docs/sweeps.md).
 * Each seed of a trial is this program run again (fork and exec of `skinner train`), so
 * a trial that crashes, diverges or runs out of memory is a failed line of the state
 * file and never the sweep's end, and trials run side by side on the cores. */
#define _GNU_SOURCE /* PR_SET_PDEATHSIG */
#include "../sweep/sweep.h"
#include "cli.h"
#include "commands.h"
#include "sweep_cli.h"

#include "skinner/module.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *g_sweep_usage =
    "usage: skinner sweep --config SWEEP.ini --run-dir DIR\n"
    "       skinner sweep --resume DIR\n"
    "       skinner sweep report DIR\n"
    "\n"
    "Searches hyperparameters: runs trials ('skinner train' runs, DIR/trial-NNNN/seed-S)\n"
    "as SWEEP.ini's [sweep] section asks (env, metric and goal, cost, budget, method),\n"
    "each tuned key a [SECTION.KEY] section (distribution, min, max, centre, scale).\n"
    "The state is appended to DIR/sweep.jsonl after each trial: --resume DIR goes on\n"
    "after a Ctrl-C or a kill, rerunning only trials that had not finished.\n"
    "'report' prints the trials, the score-cost Pareto front and the best config, and\n"
    "writes the best as DIR/best.ini for 'skinner train ENV --config DIR/best.ini'.\n"
    "Under 'mpirun --enable-recovery -np K' every rank runs trials in the same DIR; a\n"
    "rank that dies loses only its trial, which another rank runs again.\n"
    "docs/sweeps.md describes the file and the methods.\n"
    "\n"
    "options:\n"
    "  --config FILE   the sweep file (a new sweep)\n"
    "  --run-dir DIR   the sweep's folder (new, or empty)\n"
    "  --resume DIR    continue the sweep in DIR\n"
    "  --quiet         no line per finished trial\n";

/* How often early stopping looks at the running seeds. */
#define EARLY_CHECK_MS 200
#define SWEEP_MESSAGE_MAX 512

/* How long the other ranks wait for rank 0 to create the sweep (tenths of a second). */
#define JOIN_TRIES 1200

static volatile sig_atomic_t g_stop;

static void on_stop_signal(int signo) {
    (void)signo;
    g_stop = 1;
}

/* One trial in flight: its seeds run one after another. */
typedef struct slot {
    bool busy;
    sk_sweep_trial trial;
    int seed_done; /* seeds finished */
    pid_t pid;
    int claim_fd;    /* the flock of DIR/trial-NNNN/claim.lock while it runs */
    bool evaluating; /* its process is the seed's `skinner eval`, not its training */
    char early_message[SWEEP_MESSAGE_MAX]; /* why early stopping ended it, or "" */
    double started, metric_sum, cost_sum;
} slot;

typedef struct sweep_run {
    const char *dir;
    char self[4096];
    sk_sweep_spec spec;
    sk_sweep_trial *trials; /* finished */
    int num_trials, capacity;
    double previous;   /* the latest sweep seconds the state file records */
    double start;        /* sk_now() of this session */
    double session_base; /* the sweep seconds when this session started */
    bool quiet;
    int recorded;      /* trials this process finished */
    sweep_curves *curves; /* early stopping's finished return curves */
    char eval_text[SK_SWEEP_TEXT_MAX]; /* [sweep] eval, split in place into eval_args */
    char *eval_args[SWEEP_EVAL_MAX_ARGS];
    int num_eval_args;
} sweep_run;

static int train_seed(const sk_sweep_trial *trial, int seed_done) {
    /* a re-test draws seeds no trial used, so it tests the config, not its seeds */
    return trial->retest_of >= 0 ? 1000 * (trial->index + 1) + seed_done : 1 + seed_done;
}

void sweep_trial_dir(char *buf, size_t size, const char *dir, int index) {
    snprintf(buf, size, "%s/trial-%04d", dir, index);
}

/* The trial's config: the base config, the fixed keys and the tuned keys' values. Without
 * with_budget (best.ini), the sweep file's fixed train.total_steps is left out: it is the
 * trial's budget, not something tuned, and `skinner train --config best.ini` then trains for
 * the preset's (or --total-steps). */
sk_status sweep_trial_config(const sk_sweep_spec *spec, const double *value, bool with_budget,
                             const char *path) {
    sk_config *cfg = sk_config_new();
    if (!cfg) return sk_fail(SK_ERR_NOMEM, "out of memory writing '%s'", path);
    sk_status status = spec->base_config[0] ? sk_config_load_file(cfg, spec->base_config) : SK_OK;
    for (int i = 0; i < spec->num_fixed && status == SK_OK; i++)
        if (with_budget || strcmp(spec->fixed_key[i], "train.total_steps") != 0)
            status = sk_config_set(cfg, spec->fixed_key[i], spec->fixed_value[i]);
    char threads[32]; /* as the trials ran: best.ini then trains as its trial did */
    snprintf(threads, sizeof threads, "%d", spec->threads_per_trial);
    if (status == SK_OK) status = sk_config_set(cfg, "train.threads", threads);
    for (int d = 0; d < spec->num_params && status == SK_OK; d++) {
        char text[64];
        snprintf(text, sizeof text, "%.10g", value[d]);
        status = sk_config_set(cfg, spec->params[d].key, text);
    }
    if (status == SK_OK) status = sk_config_write(cfg, path);
    sk_config_free(cfg);
    return status;
}

/* Writes what a started trial will run (DIR/trial-NNNN/params.json), so a resume reruns
 * the same config. */
static sk_status write_params(const sweep_run *run, const sk_sweep_trial *trial, const char *path) {
    cJSON *root = cJSON_CreateObject(), *params = cJSON_AddObjectToObject(root, "params");
    if (!root || !params) {
        cJSON_Delete(root);
        return sk_fail(SK_ERR_NOMEM, "out of memory writing '%s'", path);
    }
    cJSON_AddNumberToObject(root, "retest_of", trial->retest_of);
    for (int d = 0; d < run->spec.num_params; d++)
        cJSON_AddNumberToObject(params, run->spec.params[d].key, trial->value[d]);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    FILE *file = text ? fopen(path, "w") : NULL;
    bool written = file && fputs(text, file) >= 0;
    if (file && fclose(file) != 0) written = false;
    free(text);
    return written ? SK_OK : sk_fail(SK_ERR_IO, "cannot write '%s'", path);
}

static bool read_params(const sweep_run *run, int index, sk_sweep_trial *trial) {
    char path[4200];
    snprintf(path, sizeof path, "%s/trial-%04d/params.json", run->dir, index);
    char *text = sweep_read_text(path);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
    const cJSON *retest = cJSON_GetObjectItemCaseSensitive(root, "retest_of");
    bool good = cJSON_IsObject(params) && cJSON_IsNumber(retest);
    memset(trial, 0, sizeof *trial);
    trial->index = index;
    trial->retest_of = good ? retest->valueint : -1;
    for (int d = 0; d < run->spec.num_params && good; d++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, run->spec.params[d].key);
        good = cJSON_IsNumber(v) && isfinite(v->valuedouble); /* 1e999 reads as infinity */
        if (good) trial->value[d] = v->valuedouble;
    }
    cJSON_Delete(root);
    return good;
}

/* Sweep seconds: the state file's latest, plus this session's time since its own last
 * record (an estimate shared by the ranks, each of which started at about the same time). */
static double sweep_seconds(const sweep_run *run) {
    return fmax(run->previous, run->session_base + sk_now() - run->start);
}

/* Removes the variables by which a launcher tells a process it is a rank (Open MPI's OMPI_*,
 * PMIx's PMIX_*, PMI's PMI_*): `skinner train` started by a sweep's rank would otherwise
 * join the launcher's job as that rank. */
void scrub_launcher_environment(void) {
    extern char **environ;
    for (int i = 0; environ[i];) {
        const char *var = environ[i];
        if (strncmp(var, "OMPI_", 5) == 0 || strncmp(var, "PMIX_", 5) == 0 ||
            strncmp(var, "PMI_", 4) == 0) {
            char name[256];
            size_t length = strcspn(var, "=");
            snprintf(name, sizeof name, "%.*s", (int)(length < 255 ? length : 255), var);
            unsetenv(name);
        } else {
            i++;
        }
    }
}

/* Forks and execs argv with stdout to out_path and stderr to err_path (or both to out_path);
 * the child dies with the sweep and is not a rank of the sweep's launcher. */
static sk_status spawn(sweep_run *run, char **argv, const char *out_path, const char *err_path,
                       pid_t *pid_out) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return sk_fail(SK_ERR_IO, "cannot start a trial: fork: %s", strerror(errno));
    if (pid == 0) {
        /* a killed sweep takes its trials with it: a resume reruns them */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        signal(SIGINT, SIG_IGN); /* the sweep decides; a Ctrl-C reaches the sweep alone */
        scrub_launcher_environment(); /* a run under a sweep's rank is a run of its own */
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int err = err_path ? open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : out;
        if (out >= 0) dup2(out, STDOUT_FILENO);
        if (err >= 0) dup2(err, STDERR_FILENO);
        execv(run->self, argv);
        fprintf(stderr, "skinner sweep: cannot run '%s': %s\n", run->self, strerror(errno));
        _exit(127);
    }
    *pid_out = pid;
    return SK_OK;
}

/* Starts the next seed of the slot's trial: `skinner train` with the trial's config. */
static sk_status start_seed(sweep_run *run, slot *s) {
    char trial_dir[4200], config[4300], seed_dir[4300], log_path[4300], seed[32], threads[32];
    sweep_trial_dir(trial_dir, sizeof trial_dir, run->dir, s->trial.index);
    int train = train_seed(&s->trial, s->seed_done);
    snprintf(config, sizeof config, "%s/trial.ini", trial_dir);
    snprintf(seed_dir, sizeof seed_dir, "%s/seed-%d", trial_dir, train);
    snprintf(log_path, sizeof log_path, "%s/seed-%d.log", trial_dir, train);
    snprintf(seed, sizeof seed, "%d", train);
    snprintf(threads, sizeof threads, "%d", run->spec.threads_per_trial);
    sweep_remove_tree(seed_dir); /* a rerun's earlier, unfinished attempt */
    s->evaluating = false;
    char *argv[] = {run->self, "train", run->spec.env, "--config", config, "--run-dir",
                    seed_dir, "--seed", seed, "--threads", threads, "--quiet", NULL};
    return spawn(run, argv, log_path, NULL, &s->pid);
}

/* The seed's evaluation, for a metric of `skinner eval`: its JSON to seed-S/eval.json. */
static sk_status start_eval(sweep_run *run, slot *s) {
    char trial_dir[4200], seed_dir[4300], json_path[4400], log_path[4300];
    sweep_trial_dir(trial_dir, sizeof trial_dir, run->dir, s->trial.index);
    int train = train_seed(&s->trial, s->seed_done);
    snprintf(seed_dir, sizeof seed_dir, "%s/seed-%d", trial_dir, train);
    snprintf(json_path, sizeof json_path, "%s/eval.json", seed_dir);
    snprintf(log_path, sizeof log_path, "%s/seed-%d.eval.log", trial_dir, train);
    char *argv[SWEEP_EVAL_MAX_ARGS + 8] = {run->self, "eval", run->spec.env, "--checkpoint",
                                           seed_dir, "--json"};
    int argc = 6;
    for (int i = 0; i < run->num_eval_args; i++) argv[argc++] = run->eval_args[i];
    argv[argc] = NULL;
    s->evaluating = true;
    return spawn(run, argv, json_path, log_path, &s->pid);
}

/* The last non-empty line of a trial's log: what went wrong. */
static void last_line(const char *path, char *out, size_t size) {
    char *text = sweep_read_text(path);
    snprintf(out, size, "no message (its log is empty)");
    if (!text) return;
    char *end = text + strlen(text);
    while (end > text && (end[-1] == '\n' || end[-1] == ' ')) *--end = '\0';
    char *start = strrchr(text, '\n');
    start = start ? start + 1 : text;
    if (*start) snprintf(out, size, "%s", start);
    free(text);
}

/* A seed's process ended: the failure, or its training's cost and, for a metric of
 * summary.json, its metric; for a metric of `skinner eval`, true: start its evaluation. */
static bool collect_seed(sweep_run *run, slot *s, int wait_status) {
    char trial_dir[4200], path[4400];
    sweep_trial_dir(trial_dir, sizeof trial_dir, run->dir, s->trial.index);
    int train = train_seed(&s->trial, s->seed_done);
    const char *what = s->evaluating ? "evaluation of seed" : "seed";
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
        char message[400];
        snprintf(path, sizeof path, "%s/seed-%d%s.log", trial_dir, train,
                 s->evaluating ? ".eval" : "");
        last_line(path, message, sizeof message);
        s->seed_done++;
        if (WIFSIGNALED(wait_status))
            snprintf(s->trial.message, sizeof s->trial.message, "%s %d killed by signal %d: %s",
                     what, train, WTERMSIG(wait_status), message);
        else
            snprintf(s->trial.message, sizeof s->trial.message, "%s %d exited with %d: %s", what,
                     train, WEXITSTATUS(wait_status), message);
        return false;
    }
    double metric = NAN, cost = NAN;
    if (!s->evaluating) {
        const char *cost_key = run->spec.cost == SK_COST_SECONDS ? "wall_seconds" : "total_steps";
        snprintf(path, sizeof path, "%s/seed-%d/summary.json", trial_dir, train);
        if (!sweep_summary_number(path, cost_key, &cost) || !(cost > 0)) cost = 1e-9;
        s->cost_sum += cost;
        if (run->spec.metric_from_eval) return true;
    }
    s->seed_done++;
    snprintf(path, sizeof path, "%s/seed-%d/%s", trial_dir, train,
             s->evaluating ? "eval.json" : "summary.json");
    if (!sweep_summary_number(path, run->spec.metric, &metric)) {
        snprintf(s->trial.message, sizeof s->trial.message,
                 "seed %d: its %s has no %s (null: the run did not reach it)", train,
                 s->evaluating ? "eval.json" : "summary.json", run->spec.metric);
        return false;
    }
    s->metric_sum += metric;
    return false;
}

/* ------------------------------------------------------------ sharing the folder
 * Every process of a sweep (one, or each rank of `mpirun -np K skinner sweep`) runs the same
 * loop on the same folder. What to run next is decided under an exclusive flock of
 * DIR/sweep.lock, from the state file as it is then: so the ranks never run a trial twice,
 * and each suggestion sees every trial finished anywhere. A running trial is claimed by a
 * flock of DIR/trial-NNNN/claim.lock, which its process holds while it runs; the kernel
 * drops it when that process dies, however it dies, and the next process to look finds the
 * trial unfinished and unclaimed and runs it again. */

/* Opens and flocks path; its fd, or -1 (errno EWOULDBLOCK: held by another). */
static int lock_file(const char *path, bool wait) {
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
        if (errno == EINTR && wait) continue;
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* Under the sweep's lock: the state file again (other processes append to it). */
static sk_status reload(sweep_run *run) {
    char path[4200];
    snprintf(path, sizeof path, "%s/sweep.jsonl", run->dir);
    free(run->trials);
    run->trials = NULL;
    sk_status status = sk_sweep_state_read(path, &run->spec, &run->trials, &run->num_trials);
    run->capacity = run->num_trials;
    run->previous = 0;
    for (int i = 0; i < run->num_trials; i++)
        run->previous = fmax(run->previous, run->trials[i].sweep_seconds);
    return status;
}

static bool is_finished(const sweep_run *run, int index) {
    for (int i = 0; i < run->num_trials; i++)
        if (run->trials[i].index == index) return true;
    return false;
}

/* A new trial's values: the suggestion from every finished trial. */
static sk_status suggest(sweep_run *run, sk_sweep_trial *trial) {
    sk_sweep_obs *obs = malloc(((size_t)run->num_trials + 1) * sizeof *obs);
    if (!obs) return sk_fail(SK_ERR_NOMEM, "out of memory for the sweep's trials");
    for (int i = 0; i < run->num_trials; i++) obs[i] = sk_sweep_observe(&run->spec, &run->trials[i]);
    double u[SK_SWEEP_MAX_PARAMS];
    int retest = -1;
    sk_status status = sk_sweep_suggest(&run->spec, obs, run->num_trials, trial->index, u, &retest);
    free(obs);
    if (status != SK_OK) return status;
    trial->retest_of = retest >= 0 ? run->trials[retest].index : -1;
    for (int d = 0; d < run->spec.num_params; d++)
        trial->value[d] = sk_sweep_value(&run->spec.params[d], u[d]);
    return SK_OK;
}

typedef enum claim_result { CLAIMED, WAIT, DONE } claim_result;

/* Under the sweep's lock: claims an unfinished trial nobody runs (a rerun), else a new one
 * if the budget allows; WAIT when only other processes' trials are left (one may die and
 * leave its trial to rerun), DONE when nothing is left at all. */
static sk_status claim(sweep_run *run, slot *s, claim_result *result) {
    char dir[4200], path[4300];
    /* running_now: trials held by any process, this one's included */
    int running_now = 0, highest = sweep_highest_trial(run->dir);
    *result = DONE;
    memset(s, 0, sizeof *s);
    s->claim_fd = -1;
    for (int index = 0; index <= highest && s->claim_fd < 0; index++) {
        if (is_finished(run, index)) continue;
        sweep_trial_dir(dir, sizeof dir, run->dir, index);
        if (access(dir, F_OK) != 0) continue;
        snprintf(path, sizeof path, "%s/claim.lock", dir);
        int fd = lock_file(path, false);
        if (fd < 0) {
            running_now++;
            continue;
        }
        s->claim_fd = fd;
        if (!read_params(run, index, &s->trial)) { /* claimed before its params were written */
            s->trial.index = index;
            sk_status status = suggest(run, &s->trial);
            if (status != SK_OK) return status;
        }
    }
    if (s->claim_fd < 0) {
        bool trials_left =
            !run->spec.trials || run->num_trials + running_now < run->spec.trials;
        bool seconds_left = !run->spec.seconds || sweep_seconds(run) < run->spec.seconds;
        bool budget = !g_stop && trials_left && seconds_left;
        if (!budget) {
            *result = running_now > 0 && !g_stop ? WAIT : DONE;
            return SK_OK;
        }
        s->trial.index = highest + 1;
        sweep_trial_dir(dir, sizeof dir, run->dir, s->trial.index);
        sk_status status = sk_mkdirs(dir);
        snprintf(path, sizeof path, "%s/claim.lock", dir);
        if (status == SK_OK && (s->claim_fd = lock_file(path, false)) < 0)
            status = sk_fail(SK_ERR_IO, "cannot claim '%s': %s", path, strerror(errno));
        if (status == SK_OK) status = suggest(run, &s->trial);
        snprintf(path, sizeof path, "%s/params.json", dir);
        if (status == SK_OK) status = write_params(run, &s->trial, path);
        if (status != SK_OK) return status;
    }
    sweep_trial_dir(dir, sizeof dir, run->dir, s->trial.index);
    snprintf(path, sizeof path, "%s/trial.ini", dir);
    sk_status status = sweep_trial_config(&run->spec, s->trial.value, true, path);
    if (status != SK_OK) return status;
    *result = CLAIMED;
    return SK_OK;
}

static void release(slot *s) {
    if (s->claim_fd >= 0) close(s->claim_fd);
    s->claim_fd = -1;
    s->busy = false;
}

static void print_trial(const sweep_run *run, const sk_sweep_trial *trial) {
    if (trial->ok)
        printf("trial %4d  %s %-10.6g cost %-10.4g %s", trial->index, run->spec.metric,
               trial->metric, trial->cost, trial->retest_of >= 0 ? "(re-test) " : "");
    else printf("trial %4d  failed: %s ", trial->index, trial->message);
    for (int d = 0; d < run->spec.num_params; d++)
        printf(" %s=%.4g", run->spec.params[d].key, trial->value[d]);
    printf("\n");
    fflush(stdout);
}

/* waitpid for any child, checking the running seeds against the finished trials every
 * EARLY_CHECK_MS meanwhile (early_stop): a seed far below them is killed, and why is kept. */
static pid_t wait_checking(sweep_run *run, slot *slots, int width, int *wait_status) {
    for (;;) {
        pid_t pid = waitpid(-1, wait_status, WNOHANG);
        if (pid != 0 || g_stop) return pid != 0 ? pid : waitpid(-1, wait_status, 0);
        for (int i = 0; i < width; i++) {
            slot *s = &slots[i];
            if (!s->busy || s->evaluating || s->early_message[0]) continue;
            char seed_dir[4400];
            snprintf(seed_dir, sizeof seed_dir, "%s/trial-%04d/seed-%d", run->dir, s->trial.index,
                     train_seed(&s->trial, s->seed_done));
            if (sweep_early_stop(&run->curves, run->dir, run->spec.early_stop, run->trials,
                                 run->num_trials, seed_dir, s->early_message,
                                 sizeof s->early_message))
                kill(s->pid, SIGKILL);
        }
        struct timespec pause = {0, EARLY_CHECK_MS * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/* The loop: keep trials_at_once trials running until the budget is spent everywhere. */
static sk_status run_sweep(sweep_run *run) {
    int width = run->spec.trials_at_once;
    slot *slots = calloc((size_t)width, sizeof *slots);
    if (!slots) return sk_fail(SK_ERR_NOMEM, "out of memory for %d trial slots", width);
    char lock_path[4200], state_path[4200];
    snprintf(lock_path, sizeof lock_path, "%s/sweep.lock", run->dir);
    snprintf(state_path, sizeof state_path, "%s/sweep.jsonl", run->dir);
    sk_status status = SK_OK;
    int running = 0;
    bool waiting = false, stopped = false;
    for (;;) {
        waiting = false;
        while (status == SK_OK && !g_stop && running < width) {
            int free_slot = 0;
            while (slots[free_slot].busy) free_slot++;
            int lock = lock_file(lock_path, true);
            if (lock < 0) {
                status = sk_fail(SK_ERR_IO, "cannot lock '%s': %s", lock_path, strerror(errno));
                break;
            }
            claim_result result = DONE;
            status = reload(run);
            if (status == SK_OK) status = claim(run, &slots[free_slot], &result);
            close(lock);
            if (status != SK_OK || result != CLAIMED) {
                if (slots[free_slot].claim_fd >= 0) release(&slots[free_slot]);
                waiting = result == WAIT;
                break;
            }
            slots[free_slot].busy = true;
            slots[free_slot].started = sk_now();
            running++;
            status = start_seed(run, &slots[free_slot]);
        }
        if (running == 0 && !(waiting && status == SK_OK && !g_stop)) break;
        if (running == 0) { /* another process's trials are left: look again soon */
            struct timespec pause = {0, 200 * 1000 * 1000};
            nanosleep(&pause, NULL);
            continue;
        }
        if (g_stop && !stopped) { /* Ctrl-C or SIGTERM: the running trials end unrecorded */
            for (int i = 0; i < width; i++)
                if (slots[i].busy) kill(slots[i].pid, SIGKILL);
            stopped = true;
        }
        int wait_status = 0;
        pid_t pid = run->spec.early_stop > 0 ? wait_checking(run, slots, width, &wait_status)
                                             : waitpid(-1, &wait_status, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            status = sk_fail(SK_ERR_IO, "waitpid: %s", strerror(errno));
            break;
        }
        slot *s = NULL;
        for (int i = 0; i < width; i++)
            if (slots[i].busy && slots[i].pid == pid) s = &slots[i];
        if (!s) continue;
        if (g_stop) { /* unfinished: a resume reruns it */
            release(s);
            running--;
            continue;
        }
        bool evaluate = collect_seed(run, s, wait_status);
        if (s->early_message[0]) { /* stopped by wait_checking: say why, not "killed" */
            snprintf(s->trial.message, sizeof s->trial.message, "%s", s->early_message);
            evaluate = false;
        }
        bool failed = s->trial.message[0] != '\0';
        if (evaluate && status == SK_OK) {
            status = start_eval(run, s);
            if (status == SK_OK) continue;
        }
        if (!failed && s->seed_done < run->spec.seeds_per_trial && status == SK_OK) {
            status = start_seed(run, s);
            if (status == SK_OK) continue;
        }
        s->trial.ok = !failed;
        if (!failed) {
            s->trial.metric = s->metric_sum / s->seed_done;
            s->trial.cost = s->cost_sum / s->seed_done;
        }
        s->trial.trial_seconds = sk_now() - s->started;
        if (status == SK_OK) {
            int lock = lock_file(lock_path, true);
            status = reload(run);
            s->trial.sweep_seconds = sweep_seconds(run);
            if (status == SK_OK) status = sk_sweep_state_append(state_path, &run->spec, &s->trial);
            if (lock >= 0) close(lock);
            if (status == SK_OK) run->recorded++;
            if (status == SK_OK && !run->quiet) print_trial(run, &s->trial);
        }
        release(s);
        running--;
    }
    for (int i = 0; i < width; i++) /* an error left trials running: stop them */
        if (slots[i].busy) {
            kill(slots[i].pid, SIGKILL);
            waitpid(slots[i].pid, NULL, 0);
            release(&slots[i]);
        }
    free(slots);
    return status;
}

/* This process's rank when a launcher started it (mpirun, srun), else -1. A sweep's ranks
 * share its folder, not MPI messages (see above), so `skinner sweep` starts no MPI. */
static int launcher_rank(void) {
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (getenv(names[i])) return atoi(getenv(names[i]));
    return -1;
}

/* A rank other than 0: waits for rank 0 to create the folder (DIR/sweep.ini appears last,
 * by rename), then opens it. */
static sk_status join_sweep(sweep_run *run) {
    char path[4200];
    snprintf(path, sizeof path, "%s/sweep.ini", run->dir);
    for (int tries = 0; access(path, R_OK) != 0; tries++) {
        if (tries == JOIN_TRIES)
            return sk_fail(SK_ERR_IO, "rank 0 did not create the sweep '%s' within %d s (see its "
                                      "message)", run->dir, JOIN_TRIES / 10);
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return sweep_open_existing(run->dir, &run->spec);
}

int cmd_sweep(int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "report") == 0) return sweep_report(argc - 1, argv + 1);
    const char *config = NULL, *dir = NULL, *resume = NULL;
    bool quiet = false;
    cli_args args = {argc, 0, argv};
    while (args.index < argc) {
        bool missing = false;
        const char *arg = argv[args.index];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(g_sweep_usage, stdout);
            return SK_EXIT_OK;
        }
        if (cli_flag(&args, "--config", &config, &missing) ||
            cli_flag(&args, "--run-dir", &dir, &missing) ||
            cli_flag(&args, "--resume", &resume, &missing) || cli_flag(&args, "--quiet", NULL, &missing)) {
            if (missing) return cli_error(SK_EXIT_USAGE, "%s needs a value", arg);
            if (strcmp(arg, "--quiet") == 0) quiet = true;
            continue;
        }
        fputs(g_sweep_usage, stderr);
        return cli_error(SK_EXIT_USAGE, "unknown sweep argument '%s'", arg);
    }
    if (resume && (config || dir))
        return cli_error(SK_EXIT_USAGE, "--resume DIR takes the sweep's own file (DIR/sweep.ini): "
                                        "give no --config or --run-dir with it");
    if (!resume && (!config || !dir)) {
        fputs(g_sweep_usage, stderr);
        return cli_error(SK_EXIT_USAGE, "a new sweep needs --config SWEEP.ini and --run-dir DIR");
    }
    sweep_run *run = calloc(1, sizeof *run);
    if (!run) return cli_error(SK_EXIT_FAILURE, "out of memory");
    run->dir = resume ? resume : dir;
    run->quiet = quiet;
    ssize_t length = readlink("/proc/self/exe", run->self, sizeof run->self - 1);
    if (length <= 0) {
        free(run);
        return cli_error(SK_EXIT_FAILURE, "cannot find this program (/proc/self/exe)");
    }
    run->self[length] = '\0';
    /* under a launcher, rank 0 creates the folder and the other ranks join it */
    int rank = launcher_rank();
    sk_status status = SK_OK;
    if (resume || rank > 0) status = rank > 0 ? join_sweep(run) : sweep_open_existing(run->dir, &run->spec);
    else status = sweep_create(run->dir, config, run->self, &run->spec);
    if (status == SK_OK) status = reload(run);
    snprintf(run->eval_text, sizeof run->eval_text, "%s", run->spec.eval_args);
    run->num_eval_args = sweep_split_args(run->eval_text, run->eval_args);
    if (status == SK_OK && run->num_eval_args < 0)
        status = sk_fail(SK_ERR_CONFIG, "[sweep] eval has more than %d arguments", SWEEP_EVAL_MAX_ARGS);
    if (status == SK_OK) {
        struct sigaction action = {.sa_handler = on_stop_signal};
        sigaction(SIGINT, &action, NULL);
        sigaction(SIGTERM, &action, NULL);
        run->start = sk_now();
        run->session_base = run->previous;
        if (!quiet && rank <= 0)
            printf("sweep of %s in %s: %s search, %d trial(s) done\n", run->spec.env, run->dir,
                   sk_sweep_method_name(run->spec.method), run->num_trials);
        status = run_sweep(run);
    }
    int code = SK_EXIT_OK;
    if (status != SK_OK) code = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    else if (g_stop) {
        fprintf(stderr, "skinner sweep: stopped; continue with: skinner sweep --resume %s\n",
                run->dir);
        code = 130;
    } else if (!quiet) {
        if (rank <= 0) reload(run);
        if (rank <= 0)
            printf("sweep done: %d trial(s); see: skinner sweep report %s\n", run->num_trials,
                   run->dir);
    }
    sweep_curves_free(run->curves);
    free(run->trials);
    free(run);
    return code;
}
