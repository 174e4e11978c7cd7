/*
 * The MinAtar envs (modules/minatar/env.c) through sk_vec: every recorded trace of
 * ../shared/reference/minatar replayed by one env of a batch (the sticky draw inside the env,
 * env.seed_mode = numpy so that the env's numpy seed is the trace's): rewards, terminal flags
 * and every observation, final_obs at terminal steps and the next episode's first observation.
 * Also the -v1 ids' actions against MinAtar's minimal sets, the tables' sizes against the
 * games', the config keys' refusals, a corrupted stream position refused, and the commands
 * docs/minatar.md prints (a short `skinner train` among them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "skinner.h"
#include "minatar/minatar.h"
#include "minatar_trace.h"
#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NUM_ENVS 3
#define TRACE_ENV 1 /* the env that replays the trace: not the first, so its index counts */
#define NUM_GAMES 5

typedef struct game_case {
    const char *id_v0, *id_v1, *file_name; /* file_name: the traces' game name */
    const minatar_game_ops *ops;
    int channels;
    int minimal[MINATAR_NUM_ACTIONS], num_minimal; /* rules/00_common.md */
} game_case;

static const game_case g_games[NUM_GAMES] = {
    {"MinAtar/Asterix-v0", "MinAtar/Asterix-v1", "asterix", &minatar_asterix, 4,
     {0, 1, 2, 3, 4}, 5},
    {"MinAtar/Breakout-v0", "MinAtar/Breakout-v1", "breakout", &minatar_breakout, 4,
     {0, 1, 3}, 3},
    {"MinAtar/Freeway-v0", "MinAtar/Freeway-v1", "freeway", &minatar_freeway, 7, {0, 2, 4}, 3},
    {"MinAtar/Seaquest-v0", "MinAtar/Seaquest-v1", "seaquest", &minatar_seaquest, 10,
     {0, 1, 2, 3, 4, 5}, 6},
    {"MinAtar/SpaceInvaders-v0", "MinAtar/SpaceInvaders-v1", "space_invaders",
     &minatar_space_invaders, 6, {0, 1, 3, 5}, 4},
};

static const char *const g_trace_kinds[] = {"seed0_sticky0.1_ramp1", "seed1_sticky0.1_ramp1",
                                            "seed2_sticky0_ramp0",
                                            "seed3_sticky0.1_ramp1_biased"};

/* A vec of NUM_ENVS of id with the given env.* settings (value NULL: the key unset). */
static sk_status make_vec(sk_vec **vec, const char *id, const char *sticky, const char *ramping,
                          const char *seed_mode) {
    sk_config *cfg = sk_config_new();
    assert_non_null(cfg);
    if (sticky) assert_int_equal(sk_config_set(cfg, "env.sticky_action_prob", sticky), SK_OK);
    if (ramping) assert_int_equal(sk_config_set(cfg, "env.difficulty_ramping", ramping), SK_OK);
    if (seed_mode) assert_int_equal(sk_config_set(cfg, "env.seed_mode", seed_mode), SK_OK);
    const sk_env_def *env = sk_env_find(id);
    assert_non_null(env);
    sk_status status = sk_vec_create(vec, env, NUM_ENVS, 1, cfg);
    sk_config_free(cfg);
    return status;
}

/* Fails naming the file, the step and the first differing cell unless the uint8 observation
 * equals the trace's 0/1 bytes. */
static void expect_obs(const uint8_t *got, const uint8_t *want, int cells, const char *path,
                       int step, const char *what) {
    for (int k = 0; k < cells; k++)
        if (got[k] != want[k])
            fail_msg("%s: step %d, %s: cell %d is %d, MinAtar %d", path, step, what, k, got[k],
                     want[k]);
}

static void replay_trace(const game_case *game, const char *kind) {
    REQUIRE_SHARED(shared);
    char path[4300];
    snprintf(path, sizeof path, "%s/reference/minatar/%s_%s.jsonl", shared, game->file_name, kind);
    minatar_trace trace;
    if (!minatar_trace_load(path, &trace)) fail_msg("cannot load %s", path);
    char sticky[32];
    snprintf(sticky, sizeof sticky, "%.17g", trace.sticky);
    sk_vec *vec;
    assert_int_equal(make_vec(&vec, game->id_v0, sticky, trace.ramping ? "true" : "false",
                              "numpy"),
                     SK_OK);
    int cells = sk_vec_env(vec)->obs_size;
    assert_int_equal(cells, MINATAR_SIDE * MINATAR_SIDE * trace.channels);
    /* env i's numpy seed is seed + i (mod 2^32): this seed gives TRACE_ENV the trace's */
    sk_vec_reset(vec, (uint64_t)trace.seed + (1ull << 32) - TRACE_ENV);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    const uint8_t *obs = b->obs_u8 + (size_t)TRACE_ENV * (size_t)cells;
    const uint8_t *final_obs = b->final_obs_u8 + (size_t)TRACE_ENV * (size_t)cells;
    expect_obs(obs, trace.obs0, cells, path, -1, "the first observation");
    int episodes = 0;
    for (int t = 0; t < trace.num_steps; t++) {
        const minatar_trace_step *step = &trace.steps[t];
        for (int i = 0; i < NUM_ENVS; i++) b->actions[i] = i == TRACE_ENV ? step->action : t % 6;
        sk_vec_step(vec);
        if ((double)b->rewards[TRACE_ENV] != step->reward ||
            b->terminated[TRACE_ENV] != step->terminal || b->truncated[TRACE_ENV])
            fail_msg("%s: step %d: reward %g terminated %d truncated %d, MinAtar %g %d", path, t,
                     (double)b->rewards[TRACE_ENV], b->terminated[TRACE_ENV],
                     b->truncated[TRACE_ENV], step->reward, step->terminal);
        if (step->terminal) {
            assert_true(step->reset);
            expect_obs(final_obs, step->obs, cells, path, t, "final_obs");
            expect_obs(obs, step->obs_after_reset, cells, path, t, "the reset observation");
            episodes++;
        } else {
            expect_obs(obs, step->obs, cells, path, t, "the observation");
        }
    }
    assert_true(episodes > 0);
    sk_vec_destroy(vec);
    minatar_trace_free(&trace);
}

static void test_traces_through_the_vec(void **state) {
    const game_case *game = *state;
    for (size_t k = 0; k < sizeof g_trace_kinds / sizeof g_trace_kinds[0]; k++)
        replay_trace(game, g_trace_kinds[k]);
}

/* The tables' sizes and the v1 action sets against MinAtar's (rules/00_common.md). */
static void test_tables_match_games(void **unused) {
    (void)unused;
    for (int g = 0; g < NUM_GAMES; g++) {
        const game_case *game = &g_games[g];
        const sk_env_def *v0 = sk_env_find(game->id_v0), *v1 = sk_env_find(game->id_v1);
        assert_non_null(v0);
        assert_non_null(v1);
        assert_int_equal(game->ops->channels, game->channels);
        assert_int_equal(v0->obs_size, 100 * game->channels);
        assert_int_equal(v1->obs_size, 100 * game->channels);
        assert_int_equal(v0->action_space.head_sizes[0], MINATAR_NUM_ACTIONS);
        assert_int_equal(v1->action_space.head_sizes[0], game->num_minimal);
        assert_int_equal(game->ops->num_minimal_actions, game->num_minimal);
        for (int a = 0; a < game->num_minimal; a++)
            assert_int_equal(game->ops->minimal_actions[a], game->minimal[a]);
    }
}

/* A -v1 env given action k acts as the -v0 env given the minimal set's k-th action: the same
 * seeds and sticky draws, so every reward and observation agree over 3,000 steps. */
static void test_v1_maps_minimal_actions(void **unused) {
    (void)unused;
    for (int g = 0; g < NUM_GAMES; g++) {
        const game_case *game = &g_games[g];
        sk_vec *full, *minimal;
        assert_int_equal(make_vec(&full, game->id_v0, NULL, NULL, NULL), SK_OK);
        assert_int_equal(make_vec(&minimal, game->id_v1, NULL, NULL, NULL), SK_OK);
        sk_vec_reset(full, 7);
        sk_vec_reset(minimal, 7);
        const sk_vec_buffers *bf = sk_vec_buffers_of(full), *bm = sk_vec_buffers_of(minimal);
        size_t obs_bytes = (size_t)NUM_ENVS * (size_t)sk_vec_env(full)->obs_size;
        uint64_t rng = 11;
        bool acted_beyond_noop = false;
        for (int t = 0; t < 3000; t++) {
            for (int i = 0; i < NUM_ENVS; i++) {
                int k = (int)sk_rng_below(&rng, (uint32_t)game->num_minimal);
                bm->actions[i] = k;
                bf->actions[i] = game->minimal[k];
                acted_beyond_noop |= game->minimal[k] != 0;
            }
            sk_vec_step(full);
            sk_vec_step(minimal);
            assert_memory_equal(bf->obs_u8, bm->obs_u8, obs_bytes);
            assert_memory_equal(bf->rewards, bm->rewards, NUM_ENVS * sizeof(float));
            assert_memory_equal(bf->terminated, bm->terminated, NUM_ENVS);
        }
        assert_true(acted_beyond_noop);
        sk_vec_destroy(full);
        sk_vec_destroy(minimal);
    }
}

/* A wrong mapping would be caught above only if the v0 side were right: check one directly.
 * Breakout-v1's action 2 is "right" (3): the paddle, starting at column 4, moves right. */
static void test_breakout_v1_right_moves_right(void **unused) {
    (void)unused;
    sk_vec *vec;
    assert_int_equal(make_vec(&vec, "MinAtar/Breakout-v1", "0", NULL, NULL), SK_OK);
    sk_vec_reset(vec, 3);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    for (int i = 0; i < NUM_ENVS; i++) b->actions[i] = 2;
    sk_vec_step(vec);
    /* channel 0 (paddle) of the bottom row, env 0: the paddle at column 5 */
    const uint8_t *obs = b->obs_u8;
    for (int x = 0; x < MINATAR_SIDE; x++)
        assert_true(obs[(9 * MINATAR_SIDE + x) * 4 + 0] == (x == 5 ? 1 : 0));
    sk_vec_destroy(vec);
}

static void expect_refused(const char *key, const char *value) {
    sk_vec *vec = NULL;
    sk_status status = make_vec(&vec, "MinAtar/Breakout-v1", strcmp(key, "sticky") == 0 ? value : NULL,
                                strcmp(key, "ramping") == 0 ? value : NULL,
                                strcmp(key, "seed_mode") == 0 ? value : NULL);
    assert_int_not_equal(status, SK_OK);
    assert_null(vec);
    const char *names[] = {"env.sticky_action_prob", "env.difficulty_ramping", "env.seed_mode"};
    const char *name = strcmp(key, "sticky") == 0 ? names[0]
                       : strcmp(key, "ramping") == 0 ? names[1] : names[2];
    if (!strstr(sk_last_error(), name)) fail_msg("'%s' does not name %s", sk_last_error(), name);
}

static void test_config_refusals(void **unused) {
    (void)unused;
    expect_refused("sticky", "1.5");
    expect_refused("sticky", "-0.1");
    expect_refused("ramping", "maybe");
    expect_refused("seed_mode", "python");
}

/* A restored stream whose position is past its 624 words is refused before a step reads it. */
static void test_bad_rng_position_refused(void **unused) {
    (void)unused;
    sk_vec *vec;
    assert_int_equal(make_vec(&vec, "MinAtar/Asterix-v1", NULL, NULL, NULL), SK_OK);
    sk_vec_reset(vec, 1);
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    int count = sk_vec_state_arrays(vec, arrays);
    int rng = -1;
    for (int a = 0; a < count; a++)
        if (strcmp(arrays[a].name, "rng") == 0) rng = a;
    assert_true(rng >= 0);
    assert_int_equal(arrays[rng].count, (int)sizeof(minatar_rng));
    assert_int_equal(sk_vec_check_state(vec, "test"), SK_OK);
    minatar_rng *streams = arrays[rng].data;
    streams[2].position = MINATAR_MT_WORDS + 1;
    assert_int_equal(sk_vec_check_state(vec, "test"), SK_ERR_CORRUPT);
    streams[2].position = -1;
    assert_int_equal(sk_vec_check_state(vec, "test"), SK_ERR_CORRUPT);
    streams[2].position = MINATAR_MT_WORDS;
    assert_int_equal(sk_vec_check_state(vec, "test"), SK_OK);
    sk_vec_destroy(vec);
}

/* Runs one command line from the docs in folder dir, `skinner` being the built binary; fails
 * with its output unless it exits 0. */
static void run_doc_line(const char *dir, const char *line) {
    char command[8192];
    snprintf(command, sizeof command, "cd %s && %s%s >out.txt 2>&1", dir, SKINNER_BINARY,
             line + strlen("skinner"));
    int code = system(command);
    if (code != 0) {
        snprintf(command, sizeof command, "cat %s/out.txt", dir);
        if (system(command) != 0) print_message("(no output)\n");
        fail_msg("docs/minatar.md's '%s' exited with %d", line, code);
    }
    print_message("docs/minatar.md: %s: exit 0\n", line);
}

/* Every `skinner` line of docs/minatar.md's sh blocks, verbatim, in a fresh folder: each exits
 * 0, and the training run writes metrics rows. */
static void test_doc_commands(void **unused) {
    (void)unused;
    char path[4200];
    snprintf(path, sizeof path, "%s/docs/minatar.md", SKINNER_SOURCE_DIR);
    FILE *doc = fopen(path, "r");
    assert_non_null(doc);
    char dir[] = "/tmp/test_minatar_env_XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* the page's lines run from the source tree's top: configs/minatar_fast.ini */
    char configs[4300], link_path[4300];
    snprintf(configs, sizeof configs, "%s/configs", SKINNER_SOURCE_DIR);
    snprintf(link_path, sizeof link_path, "%s/configs", dir);
    assert_int_equal(symlink(configs, link_path), 0);
    char line[1024];
    bool in_sh = false, trained = false;
    int ran = 0;
    while (fgets(line, sizeof line, doc)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "```", 3) == 0) {
            in_sh = !in_sh && strcmp(line, "```sh") == 0;
            continue;
        }
        if (!in_sh || strncmp(line, "skinner ", 8) != 0) continue;
        run_doc_line(dir, line);
        trained |= strncmp(line, "skinner train ", 14) == 0;
        ran++;
    }
    fclose(doc);
    assert_true(ran >= 3);
    assert_true(trained);
    char command[8192];
    snprintf(command, sizeof command,
             "test $(find %s -name metrics.csv -exec cat {} + | wc -l) -ge 2", dir);
    assert_int_equal(system(command), 0);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    assert_int_equal(system(command), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        {"test_traces_asterix", test_traces_through_the_vec, NULL, NULL, (void *)&g_games[0]},
        {"test_traces_breakout", test_traces_through_the_vec, NULL, NULL, (void *)&g_games[1]},
        {"test_traces_freeway", test_traces_through_the_vec, NULL, NULL, (void *)&g_games[2]},
        {"test_traces_seaquest", test_traces_through_the_vec, NULL, NULL, (void *)&g_games[3]},
        {"test_traces_space_invaders", test_traces_through_the_vec, NULL, NULL,
         (void *)&g_games[4]},
        cmocka_unit_test(test_tables_match_games),
        cmocka_unit_test(test_v1_maps_minimal_actions),
        cmocka_unit_test(test_breakout_v1_right_moves_right),
        cmocka_unit_test(test_config_refusals),
        cmocka_unit_test(test_bad_rng_position_refused),
        cmocka_unit_test(test_doc_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
