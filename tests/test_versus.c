/* Evaluation against an opponent (issue 52 ask 2, src/train/versus.c): the
 * Wilson interval against scipy's, the first move alternating (counted by an
 * env in which the first mover always wins), Connect Four's opponents (a
 * trained policy beats random, an untrained one loses to alpha-beta, a policy
 * against itself is even), the module's searcher against the bench copy it
 * replaced, Arena's random, heuristic and checkpoint opponents, the docs' commands as
 * printed, bad opponents refused by name, by the CLI with exit 2, and an env
 * ABI 7 plugin's extras. */
#include "test_util.h"

#include "connect4/search.h"
#include "train/versus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[64];

/* ------------------------------------------------------------ FirstWins-v0
 * Two agents; a game is one move of agent 0 (agent 1 waits), after which
 * agent 0 has won (+1) and agent 1 lost (-1). A policy's wins are exactly the
 * games it moved first. */
typedef struct first_wins {
    int num_envs;
} first_wins;

static sk_status fw_create(void **state, int num_envs, const sk_config *cfg) {
    (void)cfg;
    first_wins *s = calloc(1, sizeof *s);
    if (!s) return SK_ERR_NOMEM;
    s->num_envs = num_envs;
    *state = s;
    return SK_OK;
}

static void fw_destroy(void *state) { free(state); }

static void fw_rows(const sk_env_io *io, float *obs, int e) {
    for (int a = 0; a < 2; a++) {
        obs[e * 2 + a] = (float)a;
        io->active[e * 2 + a] = a == 0;
    }
}

static void fw_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)state, (void)seed;
    for (int e = lo; e < hi; e++) fw_rows(io, io->obs, e);
}

static void fw_step(void *state, const sk_env_io *io, int lo, int hi) {
    (void)state;
    for (int e = lo; e < hi; e++) {
        for (int a = 0; a < 2; a++) {
            int row = e * 2 + a;
            io->rewards[row] = a == 0 ? 1.0f : -1.0f;
            io->terminated[row] = 1;
            io->truncated[row] = 0;
            io->episode_log[row * 2] = io->rewards[row];
            io->episode_log[row * 2 + 1] = 1.0f - (float)a;
        }
        fw_rows(io, io->final_obs, e);
        fw_rows(io, io->obs, e);
    }
}

static int fw_arrays(void *state, sk_env_array *arrays) {
    (void)state, (void)arrays;
    return 0;
}

static const float g_fw_low[1] = {0}, g_fw_high[1] = {1};
static const sk_env_def g_first_wins = {
    .id = "FirstWins-v0",
    .obs_size = 1,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
    .max_episode_steps = 1,
    .solved_threshold = NAN,
    .num_log_fields = 2,
    .log_names = {"return", "length"},
    .create = fw_create,
    .destroy = fw_destroy,
    .reset = fw_reset,
    .step = fw_step,
    .state_arrays = fw_arrays,
    .obs_low = g_fw_low,
    .obs_high = g_fw_high,
    .num_agents = 2,
};

/* A checkpoint of env (a few updates: what it plays does not matter here). */
static void save_policy(const char *env, const char *steps, const char *path) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", env);
    sk_config_set(cfg, "env.num_envs", "8");
    sk_config_set(cfg, "ppo.horizon", "16");
    sk_config_set(cfg, "train.total_steps", steps);
    sk_config_set(cfg, "train.checkpoint_every", "0");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    assert_int_equal(sk_trainer_save(tr, path), SK_OK);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

/* The first move alternates: in every count of games (one env, a few, more
 * than the 64 envs) the policy wins exactly the games it opened, half of them
 * (the odd one out to the first envs), and the split by role says the same. */
static void test_first_move_alternates(void **state) {
    (void)state;
    const sk_env_def *known = sk_env_find("FirstWins-v0");
    if (!known) assert_int_equal(sk_env_register(&g_first_wins), SK_OK);
    char path[128];
    snprintf(path, sizeof path, "%s/first_wins.safetensors", g_dir);
    save_policy("FirstWins-v0", "256", path);
    static const int counts[] = {1, 2, 7, 10, 64, 65, 200, 301};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int games = counts[k];
        sk_versus_result r;
        assert_int_equal(sk_evaluate_versus(path, NULL, "random", games, true, 3, &r), SK_OK);
        assert_int_equal(r.games, games);
        int envs = games < 64 ? games : 64, opened = 0;
        for (int e = 0; e < envs; e++) /* env e opens its even games when e is even */
            for (int g = 0; g < games / envs + (e < games % envs); g++) opened += (e + g) % 2 == 0;
        if (r.win.count != opened || r.loss.count != games - opened || r.draw.count != 0)
            fail_msg("%d games: %d won, %d lost (expected %d opened, all won)", games,
                     r.win.count, r.loss.count, opened);
        assert_int_equal(r.num_roles, 2);
        assert_int_equal(r.role_games[0], opened);
        assert_int_equal(r.role_wins[0], opened);
        assert_int_equal(r.role_losses[1], games - opened);
        assert_true(abs(2 * opened - games) <= 1); /* half, the odd one out aside */
    }
}

/* sk_wilson_interval against scipy 1.10's binomtest(k, n).proportion_ci(
 * confidence_level=0.95, method="wilson"). */
static void test_wilson_against_scipy(void **state) {
    (void)state;
    static const struct { int count, total; double low, high; } want[] = {
        {89, 100, 0.813687034969, 0.937458036429}, {0, 100, 0.0, 0.036993498207},
        {100, 100, 0.963006501793, 1.0},           {1, 3, 0.061491944720, 0.792340399198},
        {50, 100, 0.403831530366, 0.596168469634}, {7, 64, 0.054001133444, 0.208986413269},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        double low, high;
        sk_wilson_interval(want[k].count, want[k].total, 1.959963984540054, &low, &high);
        if (fabs(low - want[k].low) > 1e-9 || fabs(high - want[k].high) > 1e-9)
            fail_msg("%d of %d: [%.12f, %.12f] (scipy: [%.12f, %.12f])", want[k].count,
                     want[k].total, low, high, want[k].low, want[k].high);
    }
}

/* The module's searcher plays the moves the bench's copy played (fixture). */
static void test_searcher_as_bench_had_it(void **state) {
    (void)state;
    FILE *f = fopen(SKINNER_SOURCE_DIR "/tests/reference/connect4_search_moves.txt", "r");
    assert_non_null(f);
    char line[256];
    int checked = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long mine, all, seed;
        int depth, col, score;
        if (line[0] == '#') continue;
        assert_int_equal(sscanf(line, "%llu %llu %d %llu %d %d", &mine, &all, &depth, &seed, &col,
                                &score), 6);
        uint64_t rng = seed;
        int got_score = 0, got = c4_search_move(mine, all, depth, &rng, &got_score);
        if (got != col || got_score != score)
            fail_msg("position %llx/%llx depth %d: column %d score %d (bench: %d, %d)", mine, all,
                     depth, got, got_score, col, score);
        checked++;
    }
    fclose(f);
    assert_int_equal(checked, 60);
}

/* runs a shell command in g_dir, its output into text; returns its exit code */
static int run(const char *command, char *text, size_t size) {
    char line[2000];
    snprintf(line, sizeof line, "cd %s && SKINNER_CONFIG_DIR=%s/configs %s 2>&1", g_dir,
             SKINNER_SOURCE_DIR, command);
    return test_run_command(line, text, size);
}

/* run() that must exit 0 */
static void run_ok(const char *command, char *text, size_t size) {
    int code = run(command, text, size);
    if (code != 0) fail_msg("%s: exit %d:\n%s", command, code, text);
}

/* A policy trained for 65536 steps (the preset, as docs/multiagent.md's
 * command) beats random in most games; one trained 2 updates loses to
 * alpha-beta of depth 4 in most; a policy against itself wins as often as
 * it loses (greedy: the same games from both seats, the openings aside). */
/* A baseline in the policy's seat (`skinner eval --policy random --opponent NAME`): on
 * FirstWins-v0 it wins exactly the games it opened, as a policy does; on Connect Four,
 * random against random wins as often as it loses (the seats alternate, so the two sides
 * are one distribution), the heuristic beats random and the depth-2 searcher beats random. */
static void test_baselines_in_the_seat(void **state) {
    (void)state;
    if (!sk_env_find("FirstWins-v0")) assert_int_equal(sk_env_register(&g_first_wins), SK_OK);
    sk_config *cfg = sk_config_new();
    sk_opponent random, heuristic, searcher;
    sk_versus_result r;
    assert_int_equal(sk_opponent_resolve(&random, sk_env_find("FirstWins-v0"), "random"), SK_OK);
    assert_int_equal(sk_evaluate_versus_baseline(sk_env_find("FirstWins-v0"), cfg, &random,
                                                 &random, 65, false, 3, &r), SK_OK);
    assert_int_equal(r.games, 65);
    assert_int_equal(r.role_games[0], r.win.count);
    assert_int_equal(r.role_wins[0], r.win.count);
    assert_true(abs(2 * r.win.count - 65) <= 1);
    const sk_env_def *c4 = sk_env_find("ConnectFour-v1");
    assert_int_equal(sk_opponent_resolve(&heuristic, c4, "heuristic"), SK_OK);
    assert_int_equal(sk_opponent_resolve(&searcher, c4, "alphabeta:2"), SK_OK);
    assert_int_equal(sk_evaluate_versus_baseline(c4, cfg, &random, &random, 1000, false, 1, &r),
                     SK_OK);
    if (!(fabs(r.win.rate - r.loss.rate) < 0.1 && r.role_games[0] == 500))
        fail_msg("random vs random: %d won, %d lost of 1000, %d opened", r.win.count,
                 r.loss.count, r.role_games[0]);
    assert_int_equal(sk_evaluate_versus_baseline(c4, cfg, &heuristic, &random, 200, false, 1, &r),
                     SK_OK);
    if (!(r.win.low > 0.9)) fail_msg("heuristic vs random: %d of 200 won", r.win.count);
    assert_int_equal(sk_evaluate_versus_baseline(c4, cfg, &random, &searcher, 200, false, 1, &r),
                     SK_OK);
    if (!(r.loss.low > 0.9)) fail_msg("random vs alphabeta:2: %d of 200 lost", r.loss.count);
    sk_config_free(cfg);
    char text[4096]; /* the CLI's, with the user's env keys */
    run_ok(SKINNER_BINARY " eval ConnectFour-v1 --policy heuristic --opponent random --episodes "
                         "20 --env.num_envs 3", text, sizeof text);
    assert_non_null(strstr(text, "ConnectFour-v1: 20 games against random"));
    assert_non_null(strstr(text, "as first: 10 games"));
    assert_int_equal(run(SKINNER_BINARY " eval ConnectFour-v1 --policy random --opponent random "
                         "--env.bogus 1", text, sizeof text), 1);
    assert_non_null(strstr(text, "env.bogus"));
}

static void test_connect_four_opponents(void **state) {
    (void)state;
    char text[8192];
    run_ok(SKINNER_BINARY " train ConnectFour-v1 --total-steps 65536 --run-dir "
                         "c4 --quiet", text, sizeof text);
    run_ok(SKINNER_BINARY " train ConnectFour-v1 --total-steps 2048 --run-dir "
                         "c4-raw --quiet", text, sizeof text);
    char trained[128], raw[128];
    snprintf(trained, sizeof trained, "%s/c4/policy.safetensors", g_dir);
    snprintf(raw, sizeof raw, "%s/c4-raw", g_dir);
    sk_versus_result r;
    assert_int_equal(sk_evaluate_versus(trained, "ConnectFour-v1", "random", 200, true, 1, &r),
                     SK_OK);
    if (!(r.win.low > 0.6)) fail_msg("trained vs random: %d of 200 won", r.win.count);
    assert_int_equal(r.role_games[0], 100);
    assert_true(r.win.count + r.draw.count + r.loss.count == 200);
    /* zero-sum: the opponent's every game, each the policy's return negated */
    assert_true(r.opponent_episodes == 200 && r.opponent_mean_return == -r.mean_return);
    assert_int_equal(sk_evaluate_versus(raw, "ConnectFour-v1", "alphabeta:4", 200, false, 1, &r),
                     SK_OK);
    if (!(r.loss.low > 0.8)) fail_msg("untrained vs alphabeta:4: %d of 200 lost", r.loss.count);
    assert_int_equal(sk_evaluate_versus(trained, "ConnectFour-v1", trained, 400, false, 2, &r),
                     SK_OK);
    if (!(r.win.low < 0.5 && r.loss.low < 0.5 && fabs(r.win.rate - r.loss.rate) < 0.12))
        fail_msg("itself: %d won, %d lost of 400", r.win.count, r.loss.count);
    /* the same from the CLI, its JSON with the split */
    run_ok(SKINNER_BINARY " eval ConnectFour-v1 --checkpoint c4 --opponent "
                         "heuristic --episodes 20 --json", text, sizeof text);
    assert_non_null(strstr(text, "\"games\": 20"));
    assert_non_null(strstr(text, "\"by_role\": {\"first\": {\"games\": 10"));
    assert_non_null(strstr(text, "\"wins_ci95\": ["));
}

/* Every `skinner` line of docs/multiagent.md's "Against an opponent" (in order: they
 * train the runs the others read), then every other --opponent line of README.md and
 * docs/reference.md, verbatim in one folder: exit 0, and a report. */
static void test_docs_commands(void **state) {
    (void)state;
    static const char *const files[] = {"docs/multiagent.md", "README.md", "docs/reference.md"};
    char text[16384];
    int ran = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", SKINNER_SOURCE_DIR, files[f]);
        FILE *doc = fopen(path, "r");
        assert_non_null(doc);
        bool in_section = f > 0, in_sh = false;
        char line[1000];
        while (fgets(line, sizeof line, doc)) {
            line[strcspn(line, "\n")] = '\0';
            if (f == 0 && strncmp(line, "## ", 3) == 0)
                in_section = strcmp(line, "## Against an opponent") == 0;
            if (strncmp(line, "```", 3) == 0) {
                in_sh = !in_sh && strcmp(line, "```sh") == 0;
                continue;
            }
            if (!in_section || !in_sh || strncmp(line, "skinner ", 8) != 0) continue;
            if (f > 0 && !strstr(line, "--opponent")) continue;
            char command[1200];
            snprintf(command, sizeof command, "mkdir -p docs && cd docs && %s%s", SKINNER_BINARY,
                     line + strlen("skinner"));
            int code = run(command, text, sizeof text);
            const char *want = strstr(line, " train ") ? "run folder: runs/"
                               : strstr(line, "--help") ? "'s opponents (--opponent NAME)"
                               : strstr(line, "--json") ? "\"wins_ci95\": ["
                                                        : " games against ";
            if (code != 0 || !strstr(text, want))
                fail_msg("%s: %s: exit %d, no '%s' in:\n%s", files[f], line, code, want, text);
            ran++;
        }
        fclose(doc);
    }
    assert_true(ran >= 8);
}

/* Arena-v0 (64 snakes a map) gets random and checkpoint opponents. */
static void test_arena_opponents(void **state) {
    (void)state;
    char text[8192];
    run_ok(SKINNER_BINARY " train Arena-v0 --total-steps 8192 --run-dir arena "
                         "--quiet --env.num_envs 1", text, sizeof text);
    char path[128];
    snprintf(path, sizeof path, "%s/arena", g_dir);
    sk_versus_result r;
    assert_int_equal(sk_evaluate_versus(path, "Arena-v0", "random", 8, false, 1, &r), SK_OK);
    assert_int_equal(r.games, 8);
    assert_int_equal(r.num_roles, 0); /* 64 agents: no split by role */
    assert_int_equal(sk_evaluate_versus(path, "Arena-v0", path, 8, false, 1, &r), SK_OK);
    assert_int_equal(r.games, 8);
    assert_int_not_equal(sk_evaluate_versus(path, "Arena-v0", "alphabeta:2", 8, false, 1, &r),
                         SK_OK);
    assert_non_null(
        strstr(sk_last_error(), "expected random, heuristic, or a checkpoint of Arena-v0"));
}

/* Arena-v0's heuristic (the opponent "heuristic") against uniform random snakes: looking
 * one cell ahead, its lives eat several times more and die less often. */
static void test_arena_heuristic(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    sk_eval_result heuristic, random;
    assert_int_equal(sk_evaluate_controller("Arena-v0", cfg, SK_CONTROLLER_HEURISTIC, 200, 1,
                                            NULL, &heuristic), SK_OK);
    assert_int_equal(sk_evaluate_controller("Arena-v0", cfg, SK_CONTROLLER_RANDOM, 200, 1, NULL,
                                            &random), SK_OK);
    sk_config_free(cfg);
    if (!(heuristic.mean_return > 4.0 * random.mean_return + 1.0 &&
          heuristic.mean_length > random.mean_length))
        fail_msg("heuristic: return %.2f, life %.1f steps; random: %.2f, %.1f",
                 heuristic.mean_return, heuristic.mean_length, random.mean_return,
                 random.mean_length);
    sk_opponent who;
    assert_int_equal(sk_opponent_resolve(&who, sk_env_find("Arena-v0"), "heuristic"), SK_OK);
    assert_int_equal(who.kind, SK_OPPONENT_HEURISTIC);
}

/* Unknown names, bad arguments, another env's checkpoint and a single-agent
 * env are refused, naming what the env offers; the CLI exits 2. */
static void test_bad_opponents(void **state) {
    (void)state;
    const sk_env_def *c4 = sk_env_find("ConnectFour-v1"), *cartpole = sk_env_find("CartPole-v1");
    assert_non_null(c4);
    static const struct { const char *spec, *message; } bad[] = {
        {"minimax", "unknown opponent 'minimax' for ConnectFour-v1 (expected random, heuristic, "
                    "alphabeta:DEPTH (1..10), or a checkpoint of ConnectFour-v1"},
        {"alphabeta", "opponent 'alphabeta' needs its DEPTH (expected alphabeta:DEPTH"},
        {"alphabeta:0", "DEPTH '0' (expected an integer from 1 to 10)"},
        {"alphabeta:4x", "DEPTH '4x' (expected an integer from 1 to 10)"},
        {"random:2", "unknown opponent 'random:2'"},
        {"runs/none", "opponent 'runs/none': no such checkpoint"},
        {"", "an empty opponent"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        sk_opponent who;
        assert_int_equal(sk_opponent_resolve(&who, c4, bad[k].spec), SK_ERR_INVALID);
        if (!strstr(sk_last_error(), bad[k].message))
            fail_msg("'%s': %s (expected '%s')", bad[k].spec, sk_last_error(), bad[k].message);
    }
    sk_opponent who;
    assert_int_equal(sk_opponent_resolve(&who, cartpole, "random"), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "CartPole-v1 has one agent"));
    char path[128];
    snprintf(path, sizeof path, "%s/first_wins.safetensors", g_dir);
    assert_int_equal(sk_opponent_resolve(&who, c4, path), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "trained on FirstWins-v0, not on ConnectFour-v1"));

    char text[8192];
    static const struct { const char *args, *message; } cli[] = {
        {"--opponent minimax", "unknown opponent 'minimax' for ConnectFour-v1"},
        {"--opponent alphabeta:99", "DEPTH '99' (expected an integer from 1 to 10)"},
        {"--opponent random --trace t.jsonl", "--trace and --video follow one policy"},
    };
    for (size_t k = 0; k < sizeof cli / sizeof cli[0]; k++) {
        char command[600];
        snprintf(command, sizeof command, "%s eval ConnectFour-v1 --checkpoint c4 %s",
                 SKINNER_BINARY, cli[k].args);
        int code = run(command, text, sizeof text);
        if (code != 2 || !strstr(text, cli[k].message))
            fail_msg("%s: exit %d, '%s' (expected 2 and '%s')", command, code, text,
                     cli[k].message);
    }
    /* a baseline plays in the policy's seat (test_baselines_in_the_seat), except zero, which
     * would play action 0 into a full column */
    assert_int_equal(run(SKINNER_BINARY " eval ConnectFour-v1 --policy zero --opponent random",
                         text, sizeof text), 2);
    assert_non_null(strstr(text, "--policy zero plays action 0"));
    run_ok(SKINNER_BINARY " eval ConnectFour-v1 --help", text, sizeof text);
    assert_non_null(strstr(text, "ConnectFour-v1's opponents (--opponent NAME): random"));
    assert_non_null(strstr(text, "alphabeta:DEPTH\n      negamax"));
}

/* An env ABI 7 plugin's extras end before opponents: read as NULL whatever
 * follows them, and its configure still sees the table as it is. */
static void test_abi_v7_plugin(void **state) {
    (void)state;
    if (sk_env_load_plugin(PLUGIN_V7) != SK_OK) fail_msg("%s", sk_last_error());
    const sk_env_def *env = sk_env_find("OldAbi7-v0");
    assert_non_null(env);
    assert_null(sk_env_extras_of(env)->opponents);
    assert_string_equal(sk_env_extras_of(env)->preset, "none");
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_set(cfg, "env.steps", "33"), SK_OK);
    const sk_env_def *configured;
    assert_int_equal(sk_env_configure(env, cfg, &configured), SK_OK);
    assert_int_equal(configured->max_episode_steps, 33);
    assert_true(configured->action_space.high[19] == 3.5f);
    assert_true(configured->action_space.low[19] == -1.0f);
    assert_null(sk_env_extras_of(configured)->opponents);
    sk_config_free(cfg);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner_versus_%d", (int)getpid());
    char command[200];
    snprintf(command, sizeof command, "rm -rf %s && mkdir -p %s", g_dir, g_dir);
    if (system(command) != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wilson_against_scipy),
        cmocka_unit_test(test_first_move_alternates),
        cmocka_unit_test(test_baselines_in_the_seat),
        cmocka_unit_test(test_searcher_as_bench_had_it),
        cmocka_unit_test(test_connect_four_opponents),
        cmocka_unit_test(test_arena_opponents),
        cmocka_unit_test(test_docs_commands),
        cmocka_unit_test(test_arena_heuristic),
        cmocka_unit_test(test_bad_opponents),
        cmocka_unit_test(test_abi_v7_plugin),
    };
    int failed = test_run_group("test_versus", tests, sizeof tests / sizeof tests[0], NULL, NULL);
    snprintf(command, sizeof command, "rm -rf %s", g_dir);
    if (system(command) != 0) return 1;
    return failed;
}
