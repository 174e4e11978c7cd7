/* Issue 34 (skinner sweep): the distributions' transforms against their closed forms, the
 * Pareto front on fixed points, every refused sweep file (naming its line), the state
 * file's torn last line, the summary keys a metric may name against a real run's file,
 * and the program: a refused sweep runs nothing, and a sweep killed with SIGKILL and
 * resumed reruns no finished trial and ends with exactly its budget. */
#include "test_util.h"

#include "sweep/sweep.h"
#include "test_spawn.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

static char g_tmp[256];

/* |actual - expected| <= tolerance, in double (cmocka's float assert rounds to float). */
#define assert_close(actual, expected, tolerance)                                                  \
    do {                                                                                           \
        double actual_ = (actual), expected_ = (expected);                                         \
        if (!(fabs(actual_ - expected_) <= (tolerance))) {                                         \
            print_error("%s = %.17g, expected %.17g (within %g)\n", #actual, actual_, expected_,  \
                        (double)(tolerance));                                                      \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

static int make_tmp(void **state) {
    (void)state;
    snprintf(g_tmp, sizeof g_tmp, "/tmp/skinner-test-sweep-XXXXXX");
    if (!mkdtemp(g_tmp)) return -1;
    /* In a sanitizer build, fontconfig and libltdl (under PLplot's cairo devices, which
     * `skinner sweep report` draws with) keep allocations for the life of the process;
     * LeakSanitizer would fail every report for them (as test_plot says). */
    char supp[300], options[400];
    snprintf(supp, sizeof supp, "%s/lsan.supp", g_tmp);
    FILE *f = fopen(supp, "w");
    if (!f) return -1;
    fputs("leak:libfontconfig.so\nleak:libltdl.so\n", f);
    fclose(f);
    snprintf(options, sizeof options, "suppressions=%s:print_suppressions=0", supp);
    if (!getenv("LSAN_OPTIONS")) setenv("LSAN_OPTIONS", options, 1);
    return 0;
}

static int remove_tmp(void **state) {
    (void)state;
    char command[512];
    snprintf(command, sizeof command, "rm -rf '%s'", g_tmp);
    return system(command) == 0 ? 0 : -1;
}

static void write_text(const char *path, const char *text) {
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fputs(text, file);
    assert_int_equal(fclose(file), 0);
}

static char *read_text(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
    text[size] = '\0';
    fclose(file);
    return text;
}

/* ------------------------------------------------------------ transforms */

static sk_sweep_param param(sk_sweep_dist dist, double min, double max) {
    sk_sweep_param p = {.dist = dist, .min = min, .max = max, .scale = 0.5};
    return p;
}

static void test_transforms(void **state) {
    (void)state;
    /* the ends, and the middle as each distribution's closed form has it */
    struct {
        sk_sweep_param p;
        double middle;
    } cases[] = {
        {param(SK_DIST_UNIFORM, -2.0, 6.0), 2.0},
        {param(SK_DIST_LOG_UNIFORM, 1e-4, 1e-2), 1e-3},         /* geometric mean */
        {param(SK_DIST_INTEGER, 1, 8), 5.0},                    /* round(4.5) */
        {param(SK_DIST_POW2, 32, 512), 128.0},                  /* 2^round(7.0) */
        {param(SK_DIST_LOGIT, 0.9, 0.999), 1.0 / (1.0 + exp(-0.5 * (log(9.0) + log(999.0))))},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const sk_sweep_param *p = &cases[i].p;
        assert_close(sk_sweep_value(p, -1.0), p->min, 1e-12 * fabs(p->min) + 1e-15);
        assert_close(sk_sweep_value(p, 1.0), p->max, 1e-12 * fabs(p->max) + 1e-15);
        assert_close(sk_sweep_value(p, 0.0), cases[i].middle, 1e-12 * fabs(cases[i].middle));
        /* outside [-1, 1] clamps */
        assert_close(sk_sweep_value(p, -3.0), p->min, 1e-12 * fabs(p->min) + 1e-15);
        assert_close(sk_sweep_unit(p, p->max * 10), 1.0, 1e-12);
        /* the inverse, and monotone */
        double previous = -INFINITY;
        for (double u = -1.0; u <= 1.0 + 1e-9; u += 0.125) {
            double value = sk_sweep_value(p, u);
            assert_true(value >= previous);
            previous = value;
            if (p->dist == SK_DIST_INTEGER || p->dist == SK_DIST_POW2) {
                assert_close(value, round(value), 0); /* an integer */
                assert_close(sk_sweep_value(p, sk_sweep_unit(p, value)), value, 0);
            } else {
                assert_close(sk_sweep_unit(p, value), u, 1e-9);
            }
        }
    }
    /* log-uniform at a quarter: 10^(-4 + 0.25 * 2) */
    sk_sweep_param lr = param(SK_DIST_LOG_UNIFORM, 1e-4, 1e-2);
    assert_close(sk_sweep_value(&lr, -0.5), pow(10.0, -3.5), 1e-15);
    sk_sweep_param pow2 = param(SK_DIST_POW2, 4, 64);
    assert_close(sk_sweep_value(&pow2, -0.5), 8.0, 0); /* 2^round(3) */
}

/* ------------------------------------------------------------ the front */

static void test_pareto_front(void **state) {
    (void)state;
    /* score higher is better, cost lower is better; the front by hand: 4 (cost 1),
     * 0 (cost 2, score 3), 5 (cost 4, score 5), 2 (cost 9, score 7); 1 is beaten by 0,
     * 3 by 5, 6 ties 0 on score at a higher cost, 7 equals 5 exactly (kept: neither
     * beats the other) */
    double score[] = {3, 2, 7, 4, 1, 5, 3, 5};
    double cost[] = {2, 3, 9, 5, 1, 4, 2.5, 4};
    int front[8];
    int count = sk_pareto_front(score, cost, 8, front);
    int expected[] = {4, 0, 5, 7, 2};
    assert_int_equal(count, 5);
    for (int i = 0; i < count; i++) assert_int_equal(front[i], expected[i]);
    /* one point is its own front */
    assert_int_equal(sk_pareto_front(score, cost, 1, front), 1);
    assert_int_equal(front[0], 0);
}

/* ------------------------------------------------------------ refusals */

#define GOOD_SWEEP                                                                                 \
    "[sweep]\n"                                                                                    \
    "env = CartPole-v1\n"                                                                          \
    "metric = final_mean_return\n"                                                                 \
    "trials = 4\n"                                                                                 \
    "\n"                                                                                           \
    "[ppo.learning_rate]\n"                                                                        \
    "distribution = log_uniform\n"                                                                 \
    "min = 1e-4\n"                                                                                 \
    "max = 1e-2\n"

static void expect_refusal(const char *text, int line, const char *phrase) {
    char path[512], where[600];
    snprintf(path, sizeof path, "%s/refused.ini", g_tmp);
    write_text(path, text);
    sk_sweep_spec spec;
    sk_status status = sk_sweep_spec_load(&spec, path);
    snprintf(where, sizeof where, "%s:%d: ", path, line);
    if (status == SK_OK || !strstr(sk_last_error(), where) || !strstr(sk_last_error(), phrase)) {
        print_error("expected a refusal at '%s' saying '%s'; got %s: %s\n--- file:\n%s", where,
                    phrase, status == SK_OK ? "accepted" : "refused", sk_last_error(), text);
        fail();
    }
}

static void test_refused_inputs(void **state) {
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/good.ini", g_tmp);
    write_text(path, GOOD_SWEEP);
    sk_sweep_spec spec;
    assert_int_equal(sk_sweep_spec_load(&spec, path), SK_OK);
    assert_int_equal(spec.num_params, 1);
    assert_close(spec.params[0].centre, 1e-3, 1e-15); /* default: the middle */
    /* an unknown key in [sweep] and in a tuned key's section */
    expect_refusal("[sweep]\nenv = CartPole-v1\nmetrik = x\n", 3, "unknown key 'metrik' in [sweep]");
    expect_refusal(GOOD_SWEEP "mean = 3\n", 10, "unknown key 'mean' in [ppo.learning_rate]");
    /* empty and inverted ranges (named at the section's line) */
    expect_refusal("[sweep]\nenv = E\nmetric = wall_seconds\ntrials = 3\n[ppo.gamma]\n"
                   "distribution = uniform\nmin = 0.9\nmax = 0.9\n",
                   5, "range 0.9..0.9 is empty");
    expect_refusal("[sweep]\nenv = E\nmetric = wall_seconds\ntrials = 3\n[ppo.gamma]\n"
                   "distribution = uniform\nmin = 0.99\nmax = 0.9\n",
                   5, "is inverted");
    /* log ranges through zero */
    expect_refusal("[sweep]\nenv = E\nmetric = wall_seconds\ntrials = 3\n[ppo.learning_rate]\n"
                   "distribution = log_uniform\nmin = 0\nmax = 0.1\n",
                   5, "reaches zero or below");
    expect_refusal("[sweep]\nenv = E\nmetric = wall_seconds\ntrials = 3\n[ppo.horizon]\n"
                   "distribution = pow2\nmin = -4\nmax = 64\n",
                   5, "reaches zero or below");
    expect_refusal("[sweep]\nenv = E\nmetric = wall_seconds\ntrials = 3\n[ppo.horizon]\n"
                   "distribution = pow2\nmin = 3\nmax = 64\n",
                   5, "powers of two");
    expect_refusal("[sweep]\nenv = E\nmetric = wall_seconds\ntrials = 3\n[ppo.gamma]\n"
                   "distribution = logit\nmin = 0.5\nmax = 1\n",
                   5, "inside (0, 1)");
    /* an unknown distribution, at its line */
    expect_refusal("[sweep]\nenv = E\nmetric = wall_seconds\ntrials = 3\n[ppo.gamma]\n"
                   "distribution = normal\nmin = 0.5\nmax = 0.9\n",
                   6, "distribution = 'normal' is unknown");
    /* a metric no run produces */
    expect_refusal("[sweep]\nenv = E\nmetric = mean_reward\ntrials = 3\n", 3,
                   "metric = 'mean_reward': no run writes it");
    /* a centre outside its range, a missing budget, an unknown method, goal and cost */
    expect_refusal("[sweep]\nenv = E\nmetric = wall_seconds\ntrials = 3\n[ppo.gamma]\n"
                   "distribution = uniform\nmin = 0.5\nmax = 0.9\ncentre = 0.95\n",
                   5, "centre 0.95 is outside");
    expect_refusal("[sweep]\nenv = E\nmetric = wall_seconds\n[ppo.gamma]\n"
                   "distribution = uniform\nmin = 0.5\nmax = 0.9\n",
                   1, "sets no budget");
    expect_refusal("[sweep]\nmethod = grid\n", 2, "method = 'grid'");
    expect_refusal("[sweep]\ngoal = up\n", 2, "goal = 'up'");
    expect_refusal("[sweep]\ncost = dollars\n", 2, "cost = 'dollars'");
    /* steps as the cost with a fixed budget: every trial costs the same (issue 52) */
    expect_refusal("[sweep]\nenv = CartPole-v1\nmetric = final_mean_return\ntrials = 4\n"
                   "cost = steps\n[train]\ntotal_steps = 30000\n[ppo.learning_rate]\n"
                   "distribution = log_uniform\nmin = 1e-4\nmax = 1e-2\n",
                   5, "cost = steps is the same for every trial");
    /* ... and accepted where a trial stops when solved */
    write_text(path, "[sweep]\nenv = CartPole-v1\nmetric = final_mean_return\ntrials = 4\n"
                     "cost = steps\n[train]\ntotal_steps = 30000\nstop_when_solved = true\n"
                     "[ppo.learning_rate]\ndistribution = log_uniform\nmin = 1e-4\nmax = 1e-2\n");
    if (sk_sweep_spec_load(&spec, path) != SK_OK) {
        print_error("cost = steps with stop_when_solved refused: %s\n", sk_last_error());
        fail();
    }
    expect_refusal("[sweep]\ntrials = 0\n", 2, "trials = '0'");
    /* a key tuned twice, and both tuned and fixed */
    expect_refusal(GOOD_SWEEP "[ppo.learning_rate]\n", 10, "tuned twice (first on line 6)");
    expect_refusal(GOOD_SWEEP "[ppo]\nlearning_rate = 0.1\n", 6, "both tuned and fixed");
    /* keys the sweep sets per run */
    expect_refusal(GOOD_SWEEP "[train]\nthreads = 4\n", 11, "train.threads is the sweep's to set");
    expect_refusal(GOOD_SWEEP "[train.seed]\ndistribution = integer\nmin = 1\nmax = 9\n", 10,
                   "train.seed is the sweep's to set");
}

/* ------------------------------------------------------------ state file */

/* GOOD_SWEEP loaded into *spec from NAME.ini, and an empty state file NAME.jsonl's path. */
static void state_spec(const char *name, sk_sweep_spec *spec, char jsonl[512]) {
    char ini[512];
    snprintf(ini, 512, "%s/%s.ini", g_tmp, name);
    snprintf(jsonl, 512, "%s/%s.jsonl", g_tmp, name);
    write_text(ini, GOOD_SWEEP);
    unlink(jsonl);
    assert_int_equal(sk_sweep_spec_load(spec, ini), SK_OK);
}

static void test_state_torn_line(void **state) {
    (void)state;
    char jsonl[512];
    sk_sweep_spec spec;
    state_spec("state", &spec, jsonl);
    sk_sweep_trial ok = {.index = 0, .retest_of = -1, .ok = true, .value = {0.002}, .metric = 480,
                         .cost = 0.5};
    sk_sweep_trial failed = {.index = 1, .retest_of = -1, .ok = false, .value = {0.009}};
    snprintf(failed.message, sizeof failed.message, "seed 1 exited with 1: diverged");
    assert_int_equal(sk_sweep_state_append(jsonl, &spec, &ok), SK_OK);
    assert_int_equal(sk_sweep_state_append(jsonl, &spec, &failed), SK_OK);
    FILE *file = fopen(jsonl, "a");
    assert_non_null(file);
    fputs("{\"trial\": 2, \"status\": \"o", file); /* a write cut by SIGKILL */
    fclose(file);
    sk_sweep_trial *trials = NULL;
    int count = 0;
    assert_int_equal(sk_sweep_state_read(jsonl, &spec, &trials, &count), SK_OK);
    assert_int_equal(count, 2);
    assert_true(trials[0].ok);
    assert_close(trials[0].metric, 480, 0);
    assert_close(trials[0].value[0], 0.002, 0);
    assert_false(trials[1].ok);
    assert_string_equal(trials[1].message, "seed 1 exited with 1: diverged");
    free(trials);
    /* the torn line is gone: the next append starts a line of its own */
    char *text = read_text(jsonl);
    assert_non_null(text);
    assert_int_equal(text[strlen(text) - 1], '\n');
    assert_null(strstr(text, "\"trial\": 2"));
    free(text);
    ok.index = 2;
    assert_int_equal(sk_sweep_state_append(jsonl, &spec, &ok), SK_OK);
    assert_int_equal(sk_sweep_state_read(jsonl, &spec, &trials, &count), SK_OK);
    assert_int_equal(count, 3);
    free(trials);
    /* garbage in the middle is an error naming its line */
    write_text(jsonl, "{\"trial\": 0}\n{\"x\": 1}\n");
    assert_int_not_equal(sk_sweep_state_read(jsonl, &spec, &trials, &count), SK_OK);
    assert_non_null(strstr(sk_last_error(), ":1: not a trial of this sweep"));
    /* numbers the writer could not have written: cJSON reads 1e999 as infinity, a cost of 0
     * would be log(0) in the Gaussian process, a retest of a later trial is no retest */
    static const struct {
        const char *line, *what;
    } bad[] = {
        {"{\"trial\":1,\"status\":\"ok\",\"params\":{\"ppo.learning_rate\":0.01},"
         "\"metric\":1e999,\"cost\":1}\n",
         "its metric or cost is wrong"},
        {"{\"trial\":1,\"status\":\"ok\",\"params\":{\"ppo.learning_rate\":0.01},"
         "\"metric\":3,\"cost\":0}\n",
         "its cost is wrong"},
        {"{\"trial\":1,\"status\":\"ok\",\"params\":{\"ppo.learning_rate\":-1e999},"
         "\"metric\":3,\"cost\":1}\n",
         "a tuned key is wrong"},
        {"{\"trial\":1,\"status\":\"failed\",\"params\":{\"ppo.learning_rate\":6e199},"
         "\"message\":\"x\",\"trial_secoXds\":1}\n",
         "a tuned key (outside its range in the sweep file) is wrong"},
        {"{\"trial\":1,\"status\":\"ok\",\"params\":{\"ppo.learning_rate\":0.0125},"
         "\"metric\":3,\"cost\":1}\n",
         "a tuned key (outside its range in the sweep file) is wrong"},
        {"{\"trial\":1,\"status\":\"maybe\",\"params\":{\"ppo.learning_rate\":0.01}}\n",
         "its status is wrong"},
        {"{\"trial\":1.5,\"status\":\"failed\",\"params\":{\"ppo.learning_rate\":0.01}}\n",
         "its trial number is wrong"},
        {"{\"trial\":1,\"status\":\"failed\",\"params\":{\"ppo.learning_rate\":0.01},"
         "\"retest_of\":1}\n",
         "its retest_of (an earlier trial) is wrong"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        write_text(jsonl, bad[b].line);
        assert_int_not_equal(sk_sweep_state_read(jsonl, &spec, &trials, &count), SK_OK);
        if (!strstr(sk_last_error(), bad[b].what)) {
            print_error("line %zu: expected '%s' in: %s\n", b, bad[b].what, sk_last_error());
            fail();
        }
    }
    /* and a retest of an earlier trial reads */
    write_text(jsonl, "{\"trial\":3,\"status\":\"failed\",\"params\":{\"ppo.learning_rate\":0.01},"
                      "\"retest_of\":2}\n");
    assert_int_equal(sk_sweep_state_read(jsonl, &spec, &trials, &count), SK_OK);
    assert_int_equal(count, 1);
    assert_int_equal(trials[0].retest_of, 2);
    free(trials);
}

/* Every number comes back bit for bit: a resumed sweep fits the numbers the one that never
 * stopped fitted. cJSON's printer wrote 15 digits whenever they were within a couple of ulps
 * of the value (475.50000000000006 as 475.5), found by fuzz_sweep. */
static void test_state_exact_numbers(void **state) {
    (void)state;
    char jsonl[512];
    sk_sweep_spec spec;
    state_spec("exact", &spec, jsonl);
    const double values[] = {nextafter(475.5, 1e9), 0.1 + 0.2, nextafter(0.001, 1), 6.4e120,
                             4.9406564584124654e-324, 1.0 / 3.0, 2.0 / 3.0 * 1e-5};
    /* tuned values within the spec's [1e-4, 1e-2] (the reader refuses others) */
    const double tuned[] = {nextafter(0.001, 1), 0.001 * (0.1 + 0.2), nextafter(0.01, 0),
                            1e-4, 0.01 / 3.0, 2.0 / 3.0 * 1e-3, 0.00123456789012345678};
    const int n = (int)(sizeof values / sizeof *values);
    _Static_assert(sizeof tuned == sizeof values, "a tuned value a trial");
    for (int i = 0; i < n; i++) {
        sk_sweep_trial trial = {.index = i, .retest_of = -1, .ok = true, .value = {tuned[i]},
                                .metric = values[(i + 1) % n], .cost = values[(i + 2) % n],
                                .trial_seconds = values[(i + 3) % n],
                                .sweep_seconds = values[(i + 4) % n]};
        assert_int_equal(sk_sweep_state_append(jsonl, &spec, &trial), SK_OK);
    }
    sk_sweep_trial *trials = NULL;
    int count = 0;
    assert_int_equal(sk_sweep_state_read(jsonl, &spec, &trials, &count), SK_OK);
    assert_int_equal(count, n);
    for (int i = 0; i < n; i++) {
        assert_true(trials[i].value[0] == tuned[i]);
        assert_true(trials[i].metric == values[(i + 1) % n]);
        assert_true(trials[i].cost == values[(i + 2) % n]);
        assert_true(trials[i].trial_seconds == values[(i + 3) % n]);
        assert_true(trials[i].sweep_seconds == values[(i + 4) % n]);
    }
    free(trials);
}

/* ------------------------------------------------------------ the program */

static int run_program(char *const *argv, const char *out, const char *err, unsigned timeout) {
    pid_t pid = test_spawn(argv, out, err, timeout);
    assert_true(pid > 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status)) {
        print_error("%s was killed by signal %d\n", argv[0], WTERMSIG(status));
        fail();
    }
    return WEXITSTATUS(status);
}

/* Every key a metric may name is a number in a real run's summary.json, and every number
 * there is a metric or one of the run's settings. */
static void test_summary_keys(void **state) {
    (void)state;
    char run_dir[512], out[600], err[600], path[600];
    snprintf(run_dir, sizeof run_dir, "%s/run", g_tmp);
    snprintf(out, sizeof out, "%s/train.out", g_tmp);
    snprintf(err, sizeof err, "%s/train.err", g_tmp);
    char *argv[] = {SKINNER_BINARY, "train", "CartPole-v1", "--total-steps", "4096",
                    "--run-dir", run_dir, "--quiet", NULL};
    assert_int_equal(run_program(argv, out, err, 60), 0);
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    char *text = read_text(path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    for (int i = 0; sk_sweep_summary_keys[i]; i++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, sk_sweep_summary_keys[i]);
        if (!cJSON_IsNumber(item) && !cJSON_IsNull(item)) {
            print_error("summary.json has no number '%s'\n", sk_sweep_summary_keys[i]);
            fail();
        }
    }
    const char *settings[] = {"seed",   "threads",  "learner_threads",
                              "slices", "num_envs", "telemetry_dropped"};
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
        if (!cJSON_IsNumber(item) && !cJSON_IsNull(item)) continue;
        bool known = false;
        for (int i = 0; sk_sweep_summary_keys[i]; i++)
            known |= strcmp(item->string, sk_sweep_summary_keys[i]) == 0;
        for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
            known |= strcmp(item->string, settings[i]) == 0;
        if (!known) {
            print_error("summary.json's number '%s' is not in sk_sweep_summary_keys\n", item->string);
            fail();
        }
    }
    cJSON_Delete(root);
}

/* A tuned key no trainer knows is refused before any trial, naming its line; nothing is
 * created. */
static void test_program_refuses_unknown_key(void **state) {
    (void)state;
    char sweep[512], dir[512], out[600], err[600];
    snprintf(sweep, sizeof sweep, "%s/typo.ini", g_tmp);
    snprintf(dir, sizeof dir, "%s/typo-sweep", g_tmp);
    snprintf(out, sizeof out, "%s/typo.out", g_tmp);
    snprintf(err, sizeof err, "%s/typo.err", g_tmp);
    write_text(sweep, "[sweep]\nenv = CartPole-v1\nmetric = final_mean_return\ntrials = 2\n\n"
                      "[ppo.learning_rat]\ndistribution = log_uniform\nmin = 1e-4\nmax = 1e-2\n");
    char *argv[] = {SKINNER_BINARY, "sweep", "--config", sweep, "--run-dir", dir, NULL};
    assert_int_equal(run_program(argv, out, err, 60), 1);
    char *message = read_text(err), where[600];
    snprintf(where, sizeof where, "%s:6: ", sweep);
    if (!strstr(message, where) || !strstr(message, "ppo.learning_rat")) {
        print_error("expected '%s' naming ppo.learning_rat; got: %s\n", where, message);
        fail();
    }
    free(message);
    assert_int_not_equal(access(dir, F_OK), 0);
    /* a value the trainer refuses at the range's end: the same, at the key's line */
    write_text(sweep, "[sweep]\nenv = CartPole-v1\nmetric = final_mean_return\ntrials = 2\n\n"
                      "[ppo.horizon]\ndistribution = uniform\nmin = 16\nmax = 100.5\n");
    assert_int_equal(run_program(argv, out, err, 60), 1);
    message = read_text(err);
    snprintf(where, sizeof where, "%s:6: ", sweep);
    if (!strstr(message, where) || !strstr(message, "not an integer")) {
        print_error("expected '%s' and 'not an integer'; got: %s\n", where, message);
        fail();
    }
    free(message);
    assert_int_not_equal(access(dir, F_OK), 0);
}

/* metric = eval.KEY: a key the env's evaluation does not report is refused before any
 * trial, at the metric's line; one it reports is each seed's eval.json figure. */
static void test_eval_metric(void **state) {
    (void)state;
    char sweep[512], dir[512], out[600], err[600], path[700];
    snprintf(sweep, sizeof sweep, "%s/eval.ini", g_tmp);
    snprintf(dir, sizeof dir, "%s/eval-sweep", g_tmp);
    snprintf(out, sizeof out, "%s/eval.out", g_tmp);
    snprintf(err, sizeof err, "%s/eval.err", g_tmp);
    const char *body = "eval = --episodes 5 --greedy\ncost = seconds\ntrials = 2\n\n"
                       "[train]\ntotal_steps = 4096\n\n"
                       "[ppo.learning_rate]\ndistribution = log_uniform\nmin = 1e-3\nmax = 1e-2\n";
    char text[1024];
    snprintf(text, sizeof text, "[sweep]\nenv = CartPole-v1\nmetric = eval.mrr\n%s", body);
    write_text(sweep, text);
    char *argv[] = {SKINNER_BINARY, "sweep", "--config", sweep, "--run-dir", dir, NULL};
    assert_int_equal(run_program(argv, out, err, 60), 1);
    char *message = read_text(err), where[600];
    snprintf(where, sizeof where, "%s:3: metric = eval.mrr", sweep);
    if (!strstr(message, where) || !strstr(message, "reports no number mrr")) {
        print_error("expected '%s ... reports no number mrr'; got: %s\n", where, message);
        fail();
    }
    free(message);
    assert_int_not_equal(access(dir, F_OK), 0);
    snprintf(text, sizeof text, "[sweep]\nenv = CartPole-v1\nmetric = eval.mean_return\n%s", body);
    write_text(sweep, text);
    assert_int_equal(run_program(argv, out, err, 60), 0);
    snprintf(path, sizeof path, "%s/sweep.jsonl", dir);
    char *lines = read_text(path);
    cJSON *first = cJSON_Parse(lines); /* the first line: trial 0 or 1 */
    free(lines);
    assert_non_null(first);
    int index = cJSON_GetObjectItem(first, "trial")->valueint;
    double metric = cJSON_GetObjectItem(first, "metric")->valuedouble;
    cJSON_Delete(first);
    snprintf(path, sizeof path, "%s/trial-%04d/seed-1/eval.json", dir, index);
    char *eval = read_text(path);
    cJSON *root = cJSON_Parse(eval);
    free(eval);
    assert_non_null(root);
    assert_int_equal(cJSON_GetObjectItem(root, "episodes")->valueint, 5);
    assert_close(metric, cJSON_GetObjectItem(root, "mean_return")->valuedouble, 0);
    cJSON_Delete(root);
}

static int count_lines(const char *path) {
    char *text = read_text(path);
    int lines = 0;
    for (char *c = text; c && *c; c++) lines += *c == '\n';
    free(text);
    return lines;
}

static int line_trial(const char *line) {
    const char *at = strstr(line, "\"trial\":");
    return at ? atoi(at + 8) : -1;
}

/* early_stop: a trial whose return is far below the finished trials' at the same step
 * count is stopped before its budget and recorded as failed, saying so; early_stop with a
 * metric that is not a training return is refused at its line. */
static void test_early_stop(void **state) {
    (void)state;
    char sweep[512], dir[512], out[600], err[600], path[1000];
    snprintf(sweep, sizeof sweep, "%s/early.ini", g_tmp);
    snprintf(dir, sizeof dir, "%s/early-sweep", g_tmp);
    snprintf(out, sizeof out, "%s/early.out", g_tmp);
    snprintf(err, sizeof err, "%s/early.err", g_tmp);
    /* seed 3 draws learning rates 2.5e-3 (the centre), 9e-6, 2.1e-3, then 2.9e-6 and 2.4e-5,
     * which learn next to nothing in 150k steps while the good ones reach 500 */
    write_text(sweep, "[sweep]\nenv = CartPole-v1\nmethod = random\nmetric = final_mean_return\n"
                      "cost = seconds\ntrials = 5\nseed = 3\nearly_stop = 0.5\n\n"
                      "[train]\ntotal_steps = 150000\n\n"
                      "[ppo.learning_rate]\ndistribution = log_uniform\nmin = 1e-6\nmax = 3e-3\n"
                      "centre = 2.5e-3\n");
    char *argv[] = {SKINNER_BINARY, "sweep", "--config", sweep, "--run-dir", dir, NULL};
    /* ~10 s; minutes under the sanitizers on a loaded machine */
    assert_int_equal(run_program(argv, out, err, 400), 0);
    snprintf(path, sizeof path, "%s/sweep.jsonl", dir);
    char *text = read_text(path);
    int stopped = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0'; /* one line at a time */
        if (!strstr(line, "stopped early")) continue;
        stopped++;
        int index = line_trial(line);
        assert_true(index >= 3); /* only once three trials had finished */
        /* killed before its budget: no summary, and its curve ends short of 150k steps */
        char seed_dir[800];
        snprintf(seed_dir, sizeof seed_dir, "%s/trial-%04d/seed-1", dir, index);
        snprintf(path, sizeof path, "%s/summary.json", seed_dir);
        assert_int_not_equal(access(path, F_OK), 0);
    }
    free(text);
    if (stopped == 0) {
        print_error("no trial was stopped early:\n");
        char *printed = read_text(out);
        print_error("%s", printed);
        free(printed);
        fail();
    }
    write_text(sweep, "[sweep]\nenv = CartPole-v1\nmetric = wall_seconds\ngoal = min\ntrials = 2\n"
                      "early_stop = 0.5\n[ppo.learning_rate]\ndistribution = log_uniform\n"
                      "min = 1e-4\nmax = 1e-2\n");
    sk_sweep_spec spec;
    assert_int_not_equal(sk_sweep_spec_load(&spec, sweep), SK_OK);
    snprintf(path, sizeof path, "%s:6: early_stop compares training returns", sweep);
    assert_non_null(strstr(sk_last_error(), path));
}

/* A signal (SIGKILL, SIGINT) to the sweep mid-run, then --resume: the finished trials stay as they were (their
 * lines and run folders untouched), the unfinished ones rerun, and the file ends with the
 * budget's trials, each once. */
static void resume_after(int signo, const char *name) {
    enum { BUDGET = 10 };
    char sweep[512], dir[512], out[600], err[600], jsonl[600];
    snprintf(sweep, sizeof sweep, "%s/%s.ini", g_tmp, name);
    snprintf(dir, sizeof dir, "%s/%s-sweep", g_tmp, name);
    snprintf(out, sizeof out, "%s/kill.out", g_tmp);
    snprintf(err, sizeof err, "%s/kill.err", g_tmp);
    snprintf(jsonl, sizeof jsonl, "%s/sweep.jsonl", dir);
    write_text(sweep, "[sweep]\nenv = CartPole-v1\nmethod = pareto\nmetric = final_mean_return\n"
                      "goal = max\ncost = steps\ntrials = 10\ntrials_at_once = 2\n\n"
                      "[train]\ntotal_steps = 40000\nstop_when_solved = true\n\n"
                      "[ppo.learning_rate]\ndistribution = log_uniform\nmin = 1e-4\nmax = 1e-2\n\n"
                      "[ppo.update_epochs]\ndistribution = integer\nmin = 1\nmax = 6\n");
    char *argv[] = {SKINNER_BINARY, "sweep", "--config", sweep, "--run-dir", dir, NULL};
    pid_t pid = test_spawn(argv, out, err, 120);
    assert_true(pid > 0);
    struct timespec pause = {0, 5 * 1000 * 1000};
    int waited = 0, status = 0;
    while (count_lines(jsonl) < 3 && waited++ < 12000) nanosleep(&pause, NULL);
    kill(pid, signo);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (signo == SIGKILL) assert_true(WIFSIGNALED(status)); /* killed mid-run, not finished */
    else assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 130); /* stopped, says so */
    nanosleep(&pause, NULL);
    char *before = read_text(jsonl);
    int finished = count_lines(jsonl);
    assert_true(finished >= 3 && finished < BUDGET);
    /* the finished trials' summaries, to see that none is written again */
    struct stat seen[BUDGET];
    int index_of[BUDGET];
    const char *line = before;
    for (int i = 0; i < finished; i++, line = strchr(line, '\n') + 1) {
        char path[700];
        index_of[i] = line_trial(line);
        snprintf(path, sizeof path, "%s/trial-%04d/seed-1/summary.json", dir, index_of[i]);
        assert_int_equal(stat(path, &seen[i]), 0);
    }
    char *resume[] = {SKINNER_BINARY, "sweep", "--resume", dir, NULL};
    int code = run_program(resume, out, err, 120);
    if (code != 0) {
        char *message = read_text(err);
        print_error("resume exited with %d: %s\n", code, message);
        free(message);
        fail();
    }
    char *after = read_text(jsonl);
    assert_int_equal(strncmp(before, after, strlen(before)), 0); /* appended to, never rewritten */
    assert_int_equal(count_lines(jsonl), BUDGET);
    int times[BUDGET] = {0};
    line = after;
    for (int i = 0; i < BUDGET; i++, line = strchr(line, '\n') + 1) {
        int index = line_trial(line);
        assert_true(index >= 0 && index < BUDGET);
        times[index]++;
    }
    for (int i = 0; i < BUDGET; i++) assert_int_equal(times[i], 1);
    for (int i = 0; i < finished; i++) {
        char path[700];
        struct stat now;
        snprintf(path, sizeof path, "%s/trial-%04d/seed-1/summary.json", dir, index_of[i]);
        assert_int_equal(stat(path, &now), 0);
        assert_true(now.st_mtim.tv_sec == seen[i].st_mtim.tv_sec &&
                    now.st_mtim.tv_nsec == seen[i].st_mtim.tv_nsec);
    }
    free(before);
    free(after);
    if (signo != SIGKILL) return;
    /* the report reads it back, and its best.ini trains */
    char *report[] = {SKINNER_BINARY, "sweep", "report", dir, NULL};
    assert_int_equal(run_program(report, out, err, 60), 0);
    char *printed = read_text(out);
    assert_non_null(strstr(printed, "Pareto front"));
    assert_non_null(strstr(printed, "best: trial"));
    free(printed);
    /* best.ini holds what was tuned, not the trials' 40000-step budget (issue 52) */
    char best[700];
    snprintf(best, sizeof best, "%s/best.ini", dir);
    printed = read_text(best);
    if (strstr(printed, "total_steps") || !strstr(printed, "learning_rate") ||
        !strstr(printed, "stop_when_solved = true")) {
        print_error("best.ini keeps the trial's budget or lost a key:\n%s", printed);
        fail();
    }
    free(printed);
    /* skinner monitor on the sweep's folder: a snapshot of the trials (stdout is a file) */
    char *monitor[] = {SKINNER_BINARY, "monitor", dir, NULL};
    assert_int_equal(run_program(monitor, out, err, 60), 0);
    printed = read_text(out);
    if (!strstr(printed, "trials: 10 done") || !strstr(printed, "best so far: trial") ||
        !strstr(printed, "running:\n  none")) {
        print_error("skinner monitor on the sweep printed:\n%s", printed);
        fail();
    }
    free(printed);
    /* its figures are PNG files */
    for (int i = 0; i < 2; i++) {
        char path[700], magic[8] = {0};
        snprintf(path, sizeof path, "%s/%s", dir, i ? "params.png" : "front.png");
        FILE *png = fopen(path, "rb");
        assert_non_null(png);
        assert_int_equal(fread(magic, 1, sizeof magic, png), sizeof magic);
        fclose(png);
        assert_memory_equal(magic, "\x89PNG\r\n\x1a\n", 8);
    }
}

static void test_resume_after_sigkill(void **state) {
    (void)state;
    resume_after(SIGKILL, "kill");
}

/* Ctrl-C: the sweep stops its running trials, records none of them, exits 130; --resume
 * reruns them. */
static void test_resume_after_sigint(void **state) {
    (void)state;
    resume_after(SIGINT, "int");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transforms),
        cmocka_unit_test(test_pareto_front),
        cmocka_unit_test(test_refused_inputs),
        cmocka_unit_test(test_state_torn_line),
        cmocka_unit_test(test_state_exact_numbers),
        cmocka_unit_test(test_summary_keys),
        cmocka_unit_test(test_program_refuses_unknown_key),
        cmocka_unit_test(test_eval_metric),
        cmocka_unit_test(test_early_stop),
        cmocka_unit_test(test_resume_after_sigkill),
        cmocka_unit_test(test_resume_after_sigint),
    };
    return test_run_group("test_sweep", tests, sizeof tests / sizeof *tests, make_tmp, remove_tmp);
}
