/*
 * Self-play against the env's built-in players (issue 52 ask 3): selfplay.opponents and
 * selfplay.opponent_share (src/train/selfplay.c). A share of the games goes to Connect Four's
 * alpha-beta searcher, which plays its rows from the whole board, scores in opponents.csv
 * and rates no one (`skinner monitor` shows the last scores); bad settings and bad
 * checkpoints are refused by name; runs repeat and resume bit for bit.
 */
#include "test_recorder.h"

#include "train/selfplay.h"
#include "train/trainer_internal.h"

#include <stdlib.h>
#include <unistd.h>

static char g_dir[64];

/* Connect Four v0, 8 envs x 16 steps x 2 agents an update, self-play with a pool of 3 and
 * the given share of games against `opponents`. */
static sk_config *c4_config(const char *steps, const char *opponents, const char *share,
                            const char *pool_share) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "ConnectFour-v0");
    sk_config_set(cfg, "env.num_envs", "8");
    sk_config_set(cfg, "ppo.horizon", "16");
    sk_config_set(cfg, "ppo.num_minibatches", "4");
    sk_config_set(cfg, "ppo.anneal_lr", "false"); /* a half run anneals as the whole one */
    sk_config_set(cfg, "train.total_steps", steps);
    sk_config_set(cfg, "train.threads", "2");
    sk_config_set(cfg, "train.checkpoint_every", "0");
    sk_config_set(cfg, "selfplay.enabled", "true");
    sk_config_set(cfg, "selfplay.pool_size", "3");
    sk_config_set(cfg, "selfplay.snapshot_every", "2");
    if (opponents) sk_config_set(cfg, "selfplay.opponents", opponents);
    if (share) sk_config_set(cfg, "selfplay.opponent_share", share);
    if (pool_share) sk_config_set(cfg, "selfplay.pool_share", pool_share);
    return cfg;
}

static void expect_config_refused(sk_config *cfg, const char *needle) {
    sk_trainer *tr = NULL;
    sk_status status = sk_trainer_create(&tr, cfg);
    const char *message = sk_last_error();
    if (status == SK_OK) fail_msg("created, where '%s' was expected", needle);
    print_message("refused: %s\n", message);
    assert_int_equal(status, SK_ERR_CONFIG);
    if (!strstr(message, needle)) fail_msg("message lacks '%s': %s", needle, message);
    sk_config_free(cfg);
}

/* A player that is not the env's own, a depth outside 1..10, a share without players or
 * players without a share, and shares adding up past 1: each refused with what was wrong. */
static void test_refused_settings(void **state) {
    (void)state;
    expect_config_refused(c4_config("1024", "random", "0.2", "0.2"),
                          "'random' is not one of ConnectFour-v0's built-in players (expected a "
                          "comma-separated list of alphabeta:DEPTH (1..10)");
    expect_config_refused(c4_config("1024", "alphabeta:2, alphabeta:11", "0.2", "0.2"),
                          "DEPTH '11' (expected an integer from 1 to 10)");
    expect_config_refused(c4_config("1024", "alphabeta", "0.2", "0.2"), "needs its DEPTH");
    expect_config_refused(c4_config("1024", NULL, "0.2", "0.2"),
                          "selfplay.opponent_share = 0.2 with no selfplay.opponents");
    expect_config_refused(c4_config("1024", "alphabeta:2", NULL, "0.2"),
                          "'alphabeta:2' are never played: selfplay.opponent_share is 0");
    sk_config *off = c4_config("1024", "alphabeta:2", "0.2", "0.2");
    sk_config_set(off, "selfplay.enabled", "false");
    expect_config_refused(off, "they need selfplay.enabled = true");
    /* pool_share's default is 1: every game against the pool */
    expect_config_refused(c4_config("1024", "alphabeta:2", "0.2", NULL),
                          "selfplay.opponent_share = 0.2 and selfplay.pool_share = 1 add up to "
                          "more than 1 (the rest of the games are the learner against itself): "
                          "lower selfplay.pool_share to at most 0.8");
}

/* The run folder's opponents.csv: its header, then each row's scores and game counts summed
 * into score[k] (games-weighted) and games[k]; returns the rows. */
static int read_opponents_csv_from(const char *dir, const char *header, double *score,
                                   long long *games, int count, int skip) {
    char path[256], line[512];
    snprintf(path, sizeof path, "%s/opponents.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("no %s", path);
    if (!fgets(line, sizeof line, f)) fail_msg("%s is empty", path);
    line[strcspn(line, "\n")] = 0;
    if (strcmp(line, header) != 0) fail_msg("%s's header: '%s' (expected '%s')", path, line, header);
    int rows = 0;
    for (int k = 0; k < count; k++) score[k] = 0.0, games[k] = 0;
    while (fgets(line, sizeof line, f)) {
        char *p = strchr(line, ',');
        assert_non_null(p);
        assert_int_equal(atoi(line), rows + 1); /* a row an update, in order */
        for (int k = 0; k < count; k++) {
            double mean = p[1] == ',' ? 0.0 : strtod(p + 1, NULL); /* empty: no game */
            p = strchr(p + 1, ',');
            assert_non_null(p);
            long long n = strtoll(p + 1, NULL, 10);
            if (n == 0 && p[-1] != ',') fail_msg("a score without games in '%s'", line);
            if (mean < 0.0 || mean > 1.0) fail_msg("a score outside [0, 1] in '%s'", line);
            if (rows >= skip) score[k] += mean * (double)n, games[k] += n;
            p = strchr(p + 1, ',');
            if (k + 1 < count) assert_non_null(p);
        }
        rows++;
    }
    fclose(f);
    for (int k = 0; k < count; k++) score[k] = games[k] ? score[k] / (double)games[k] : -1.0;
    return rows;
}

static int read_opponents_csv(const char *dir, const char *header, double *score,
                              long long *games, int count) {
    return read_opponents_csv_from(dir, header, score, games, count, 0);
}

/* `skinner monitor DIR --once`'s output (the test's folder's run `dir`) into text. */
static void monitor_once(const char *dir, char *text, size_t size) {
    char command[300];
    snprintf(command, sizeof command, "%s monitor %s --once", SKINNER_BINARY, dir);
    FILE *p = popen(command, "r");
    assert_non_null(p);
    size_t n = fread(text, 1, size - 1, p);
    text[n] = 0;
    assert_int_equal(pclose(p), 0);
}

/* `skinner monitor DIR --once` shows the last 10 updates of opponents.csv as read
 * independently here: each listed player's games-weighted score, and the games. */
static void expect_monitor_line(const char *dir, const char *header, const char *const *names,
                                int count, int rows) {
    double score[2];
    long long games[2], total = 0;
    read_opponents_csv_from(dir, header, score, games, count, rows - 10);
    char want[256] = "opponents     ", text[8192];
    for (int k = 0; k < count; k++) {
        size_t at = strlen(want);
        snprintf(want + at, sizeof want - at, "%s%s %.2f", k ? ", " : "", names[k], score[k]);
        total += games[k];
    }
    size_t at = strlen(want);
    snprintf(want + at, sizeof want - at, " (last 10 updates, %lld games)\n", total);
    monitor_once(dir, text, sizeof text);
    if (!strstr(text, want)) fail_msg("skinner monitor lacks '%s':\n%s", want, text);
}

/* Every game against the searcher (opponent_share 1): its rows are its moves, so a fresh
 * policy scores near 0 against depth 4 (if the policy played them too, as in self-play, the
 * mean would be near 0.5); both listed players are met; no game is rated; the learner's
 * episodes are its own games only (its rows are the only samples). With a share of 0.5
 * beside a pool's 0.25, games go to both. */
static void test_games_against_the_searcher(void **state) {
    (void)state;
    char dir[128];
    snprintf(dir, sizeof dir, "%s/all", g_dir);
    sk_config *cfg = c4_config("8192", "alphabeta:4, alphabeta:3", "1", "0");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_set_run_dir(tr, dir), SK_OK);
    if (sk_trainer_run(tr) != SK_OK) fail_msg("training failed: %s", sk_trainer_last_error(tr));
    assert_int_equal(tr->sp.counters[SK_SELFPLAY_GAMES], 0);
    assert_true(tr->sp.ratings[tr->sp.pool_size] == 1000.0);
    /* every env-step is a listed game's; the searcher searches only on its own moves, about
     * half of them (before, it searched the learner's moves too and threw them away) */
    int64_t steps = 0, searched = 0;
    for (int w = 0; w < tr->num_workers; w++)
        steps += tr->workers[w].listed_steps, searched += tr->workers[w].listed_searches;
    print_message("%lld env-steps against the searcher, %lld searched\n", (long long)steps,
                  (long long)searched);
    assert_int_equal(steps, 8192 / 2);
    if (searched < steps * 4 / 10 || searched > steps * 6 / 10)
        fail_msg("the searcher searched %lld of %lld env-steps (expected about half: its own "
                 "moves)", (long long)searched, (long long)steps);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
    double score[2];
    long long games[2];
    int rows = read_opponents_csv(dir, "update,alphabeta:4 score,alphabeta:4 games,"
                                  "alphabeta:3 score,alphabeta:3 games", score, games, 2);
    print_message("%d rows; depth 4: %lld games, score %.3f; depth 3: %lld games, score %.3f\n",
                  rows, games[0], score[0], games[1], score[1]);
    assert_int_equal(rows, 32); /* 8192 / (8 x 16 x 2) updates */
    if (games[0] < 50 || games[1] < 50) fail_msg("%lld and %lld games", games[0], games[1]);
    if (score[0] > 0.25) fail_msg("a fresh policy scored %.3f against depth 4", score[0]);
    static const char *const searchers[2] = {"alphabeta:4", "alphabeta:3"};
    expect_monitor_line(dir, "update,alphabeta:4 score,alphabeta:4 games,alphabeta:3 score,"
                        "alphabeta:3 games", searchers, 2, rows);

    snprintf(dir, sizeof dir, "%s/mixed", g_dir);
    cfg = c4_config("8192", "alphabeta:1", "0.5", "0.25");
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_set_run_dir(tr, dir), SK_OK);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    int64_t rated = tr->sp.counters[SK_SELFPLAY_GAMES];
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
    rows = read_opponents_csv(dir, "update,alphabeta:1 score,alphabeta:1 games", score, games, 1);
    print_message("mixed: %lld rated games, %lld against depth 1, score %.3f\n", (long long)rated,
                  games[0], score[0]);
    static const char *const depth1[1] = {"alphabeta:1"};
    expect_monitor_line(dir, "update,alphabeta:1 score,alphabeta:1 games", depth1, 1, rows);
    if (rated <= 0 || games[0] <= rated)
        fail_msg("%lld rated, %lld listed (expected some, the listed twice the pool's)",
                 (long long)rated, games[0]);
}

/* The monitor's opponents line from hand-written opponents.csv files: the last 10 whole rows
 * weighted by games, a player without games there shown as "-", rows that are malformed or
 * still being written passed over, and no line for a file with a header only. */
static void test_monitor_opponents_files(void **state) {
    (void)state;
    char dir[128], path[160], text[8192];
    snprintf(dir, sizeof dir, "%s/handwritten", g_dir);
    sk_config *cfg = c4_config("1024", "alphabeta:1, alphabeta:2", "0.3", "0.2");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_set_run_dir(tr, dir), SK_OK);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
    snprintf(path, sizeof path, "%s/opponents.csv", dir);
    static const struct {
        const char *file, *want; /* want NULL: no opponents line */
    } cases[] = {
        /* rows 3-12: depth 1 at 9 x 0.5 x 2 + 1.0 x 2 = 11 over 20 games, depth 2 1 over 4 */
        {"update,alphabeta:1 score,alphabeta:1 games,alphabeta:2 score,alphabeta:2 games\n"
         "1,0.0,8,,0\n2,0.0,8,,0\n3,0.5,2,,0\n4,0.5,2,,0\n5,0.5,2,,0\n6,0.5,2,,0\n7,0.5,2,,0\n"
         "8,0.5,2,,0\n9,0.5,2,,0\n10,0.5,2,,0\n11,0.5,2,,0\n12,1.0,2,0.25,4\n13,0.5\n"
         "14,1.0,2,1.0,2",
         "opponents     alphabeta:1 0.55, alphabeta:2 0.25 (last 10 updates, 24 games)\n"},
        {"update,alphabeta:1 score,alphabeta:1 games,alphabeta:2 score,alphabeta:2 games\n"
         "1,0.5,4,,0\n",
         "opponents     alphabeta:1 0.50, alphabeta:2 - (last 1 update, 4 games)\n"},
        {"update,alphabeta:1 score,alphabeta:1 games,alphabeta:2 score,alphabeta:2 games\n", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(cases[c].file, f);
        fclose(f);
        monitor_once(dir, text, sizeof text);
        if (cases[c].want && !strstr(text, cases[c].want))
            fail_msg("case %zu: skinner monitor lacks '%s':\n%s", c, cases[c].want, text);
        if (!cases[c].want && strstr(text, "opponents "))
            fail_msg("case %zu: an opponents line without rows:\n%s", c, text);
    }
}

/* Two runs repeat each other, and a run stopped halfway and resumed (each env's opponent, a
 * listed one among them, and its stream in the checkpoint) continues as the one that did not
 * stop; opponents.csv keeps the rows up to the checkpoint's update and goes on. */
static void test_identical_and_resumed(void **state) {
    (void)state;
    static recorder once, twice, first, second;
    char path[128], dir[128];
    snprintf(path, sizeof path, "%s/half.safetensors", g_dir);
    snprintf(dir, sizeof dir, "%s/resumed", g_dir);
    sk_config *whole = c4_config("4096", "alphabeta:2, alphabeta:3", "0.4", "0.3");
    sk_config *half = c4_config("2048", "alphabeta:2, alphabeta:3", "0.4", "0.3");
    train_recorded(whole, &once, NULL, NULL, NULL);
    train_recorded(whole, &twice, NULL, NULL, NULL);
    assert_int_equal(once.count, 16);
    assert_memory_equal(once.rows, twice.rows, sizeof once.rows[0] * 16);
    train_recorded(half, &first, NULL, path, dir);
    /* the checkpoint has envs whose listed player waits (their flag kept: without it the
     * resumed run would search there and draw from the env's stream, and differ) */
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, half), SK_OK);
    assert_int_equal(sk_trainer_resume(tr, path), SK_OK);
    int waiting = 0;
    for (int e = 0; e < 8; e++) waiting += tr->sp.listed_waits[e];
    sk_trainer_destroy(tr);
    if (waiting == 0) fail_msg("no env's listed player waits at the checkpoint: the resume "
                               "below would not test the flag");
    train_recorded(whole, &second, path, NULL, dir);
    assert_int_equal(first.count + second.count, 16);
    for (int i = 0; i < second.count; i++)
        if (memcmp(&second.rows[i], &once.rows[first.count + i], sizeof once.rows[0]) != 0)
            fail_msg("update %d differs after resuming", first.count + i + 1);
    double score[2];
    long long games[2];
    assert_int_equal(read_opponents_csv(dir, "update,alphabeta:2 score,alphabeta:2 games,"
                                        "alphabeta:3 score,alphabeta:3 games", score, games, 2),
                     16);
    sk_config_free(whole);
    sk_config_free(half);
}

/* A checkpoint whose env plays a listed opponent past the list (-3 with one listed: the
 * rollout would call opponents[1]) is refused as corrupt. A resume with another list than the
 * checkpoint's (its metadata names it) is refused naming both: none where it had one,
 * another, or one where it had none; its games under way would go on against another
 * player. */
static void test_bad_opponent_refused(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/bad.safetensors", g_dir);
    static const struct {
        const char *saved, *resumed, *message;
        sk_status status;
    } cases[] = {
        {"alphabeta:2", "alphabeta:2", "selfplay.opponent[5] = -3 is outside [-2, 2] (-2 - k: "
                                       "selfplay.opponents' k-th", SK_ERR_CORRUPT},
        {"alphabeta:2", NULL, "played selfplay.opponents = 'alphabeta:2'; this run lists 'none'",
         SK_ERR_INVALID},
        {"alphabeta:2", "alphabeta:3", "played selfplay.opponents = 'alphabeta:2'; this run lists "
                                       "'alphabeta:3'", SK_ERR_INVALID},
        {NULL, "alphabeta:2", "played no selfplay.opponents; this run lists 'alphabeta:2'",
         SK_ERR_INVALID},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *share = cases[c].saved ? "0.5" : NULL;
        sk_config *cfg = c4_config("1024", cases[c].saved, share, "0.2");
        sk_trainer *tr = NULL;
        assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
        assert_int_equal(sk_trainer_run(tr), SK_OK);
        if (c == 0) {
            for (int e = 0; e < 8; e++) /* env 5 the only one against a listed player */
                if (tr->sp.opponent[e] <= -2) tr->sp.opponent[e] = -1;
            tr->sp.opponent[5] = -3;
        }
        assert_int_equal(sk_trainer_save(tr, path), SK_OK);
        sk_trainer_destroy(tr);
        sk_config_free(cfg);
        share = cases[c].resumed ? "0.5" : NULL;
        expect_resume_refused(c4_config("1024", cases[c].resumed, share, "0.2"), path,
                              cases[c].message, NULL, cases[c].status);
    }
}

/* docs/multiagent.md's self-play section's sh blocks, line by line, verbatim in the test's
 * folder (`skinner` as the built program): the run trains and its opponents.csv holds both
 * listed players' columns and rows. */
static void test_docs_commands(void **state) {
    (void)state;
    char path[600], line[1000], command[2400], text[8192];
    snprintf(path, sizeof path, "%s/docs/multiagent.md", SKINNER_SOURCE_DIR);
    FILE *doc = fopen(path, "r");
    assert_non_null(doc);
    bool in_section = false, in_sh = false;
    int ran = 0;
    while (fgets(line, sizeof line, doc)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "## ", 3) == 0)
            in_section = strcmp(line, "## Self-play with an Elo-rated pool") == 0;
        if (strncmp(line, "```", 3) == 0) {
            in_sh = !in_sh && strcmp(line, "```sh") == 0;
            continue;
        }
        if (!in_section || !in_sh || !line[0]) continue;
        bool ours = strncmp(line, "skinner ", 8) == 0;
        snprintf(command, sizeof command, "cd %s && SKINNER_CONFIG_DIR=%s/configs %s%s 2>&1", g_dir,
                 SKINNER_SOURCE_DIR, ours ? SKINNER_BINARY : "", ours ? line + 7 : line);
        int code = test_run_command(command, text, sizeof text);
        /* the monitor's line as the docs quote it: both players, the updates so far */
        const char *want = strstr(line, " monitor ") ? "opponents     alphabeta:1 0."
                           : ours ? "run folder: runs/c4-searcher"
                                  : "update,alphabeta:1 score,alphabeta:1 games,alphabeta:3 "
                                    "score,alphabeta:3 games\n1,";
        if (code != 0 || !strstr(text, want))
            fail_msg("%s: exit %d, no '%s' in:\n%s", line, code, want, text);
        if (strstr(line, " monitor ") && !strstr(text, ", alphabeta:3 0."))
            fail_msg("%s: no depth 3 score in:\n%s", line, text);
        if (strstr(line, " monitor ") && !strstr(text, " (last 4 updates, "))
            fail_msg("%s: not the 4 updates the docs quote in:\n%s", line, text);
        /* training a two-player env suggests an evaluation against a random player, which
         * runs as printed (against itself the policy would score 0.5 by construction) */
        const char *evaluate = "evaluate: skinner eval ConnectFour-v0 --checkpoint "
                               "runs/c4-searcher/policy.safetensors --opponent random\n";
        if (strstr(line, " train ") && !strstr(text, evaluate))
            fail_msg("%s: no '%s' in:\n%s", line, evaluate, text);
        if (strstr(line, " train ")) {
            snprintf(command, sizeof command, "cd %s && %s eval ConnectFour-v0 --checkpoint "
                     "runs/c4-searcher/policy.safetensors --opponent random 2>&1", g_dir,
                     SKINNER_BINARY);
            code = test_run_command(command, text, sizeof text);
            if (code != 0 || !strstr(text, "as second: "))
                fail_msg("the suggested evaluation: exit %d:\n%s", code, text);
        }
        ran++;
    }
    fclose(doc);
    assert_int_equal(ran, 3);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner_opponents_%d", (int)getpid());
    char command[160];
    snprintf(command, sizeof command, "rm -rf %s && mkdir -p %s", g_dir, g_dir);
    if (system(command) != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_settings),
        cmocka_unit_test(test_games_against_the_searcher),
        cmocka_unit_test(test_monitor_opponents_files),
        cmocka_unit_test(test_identical_and_resumed),
        cmocka_unit_test(test_bad_opponent_refused),
        cmocka_unit_test(test_docs_commands),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    snprintf(command, sizeof command, "rm -rf %s", g_dir);
    if (system(command) != 0) return 1;
    return failed;
}
