/*
 * The MinAtar games' validate() (issue 32, ask 7): a checkpoint's `env.game` bytes are hostile
 * input, stepped and drawn as they are, so every count, position, index, enum and bool a game
 * reads is range-checked before the env runs it.
 * - Real states validate: every state of a few thousand random acts of each game, ramping on
 *   and off, across resets, and every state of MinAtar's recorded traces (the biased ones
 *   reach deep states): validate must never refuse what the game itself reaches.
 * - Each tampered field is refused, naming the field and the value: one case per field that
 *   bounds an index or a count, set out of its range in a real state.
 * - Through the env: check_state refuses a tampered game naming the id and the env.
 * - Through the CLI: `skinner train --resume` of a checkpoint whose env.game was tampered
 *   exits 1 naming the env, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "skinner.h"
#include "minatar/asterix.h"
#include "minatar/breakout.h"
#include "minatar/freeway.h"
#include "minatar/seaquest.h"
#include "minatar/space_invaders.h"
#include "io/safetensors.h"
#include "minatar_trace.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MAX_STATE 4096 /* bytes: Seaquest's ~1.1 KB is the largest */
#define REAL_STEPS 3000
#define TAMPER_AFTER 300 /* random acts before the state the tamper cases start from */

/* One tamper: the field's name as validate prints it, its place and width in the state, the
 * out-of-range value written there, and an optional setup that makes the field live (a list
 * item counted, an entity present) while the state still validates. */
typedef struct tamper_case {
    const char *field;
    size_t offset, width;
    long value;
    void (*prepare)(void *game);
} tamper_case;

#define TAMPER(type, member, bad)                                                                  \
    {#member, offsetof(type, member), sizeof(((type *)0)->member), (bad), NULL}
#define TAMPER_LIVE(type, member, bad, setup)                                                      \
    {#member, offsetof(type, member), sizeof(((type *)0)->member), (bad), (setup)}

typedef struct game_case {
    const char *id;
    const minatar_game_ops *ops;
    const tamper_case *tampers;
    int num_tampers;
} game_case;

static void asterix_entity_live(void *game) {
    ((asterix_game *)game)->entities[3] = (asterix_entity){true, true, false, 4};
}

static const tamper_case g_asterix[] = {
    TAMPER(asterix_game, ramping, 2),
    TAMPER(asterix_game, terminal, 2),
    TAMPER(asterix_game, player_x, 10),
    TAMPER(asterix_game, player_x, -1),
    TAMPER(asterix_game, player_y, 0),
    TAMPER(asterix_game, player_y, 9),
    TAMPER(asterix_game, entities[3].present, 2),
    TAMPER(asterix_game, entities[3].moving_right, 2),
    TAMPER(asterix_game, entities[3].gold, 2),
    TAMPER_LIVE(asterix_game, entities[3].x, 10, asterix_entity_live),
    TAMPER_LIVE(asterix_game, entities[3].x, -1, asterix_entity_live),
    TAMPER(asterix_game, spawn_speed, 0),
    TAMPER(asterix_game, spawn_speed, 11),
    TAMPER(asterix_game, spawn_timer, -1),
    TAMPER(asterix_game, spawn_timer, 11),
    TAMPER(asterix_game, move_speed, 0),
    TAMPER(asterix_game, move_timer, -1),
    TAMPER(asterix_game, ramp_timer, -2),
    TAMPER(asterix_game, ramp_timer, 101),
    TAMPER(asterix_game, ramp_index, -1),
};

static const tamper_case g_breakout[] = {
    TAMPER(breakout_state, bricks[0][0], 1), /* bricks stand only in rows 1-3 */
    TAMPER(breakout_state, bricks[2][5], 2),
    TAMPER(breakout_state, bricks_left, 31),
    TAMPER(breakout_state, bricks_left, -1),
    TAMPER(breakout_state, ball_x, 10),
    TAMPER(breakout_state, ball_x, -1),
    TAMPER(breakout_state, ball_y, 9), /* a live ball on the paddle row reads bricks[10] */
    TAMPER(breakout_state, ball_y, -1),
    TAMPER(breakout_state, ball_direction, 4),
    TAMPER(breakout_state, ball_direction, -1),
    TAMPER(breakout_state, last_x, 10),
    TAMPER(breakout_state, last_y, -1),
    TAMPER(breakout_state, paddle_x, 10),
    TAMPER(breakout_state, paddle_x, -1),
    TAMPER(breakout_state, strike, 2),
    TAMPER(breakout_state, terminal, 2),
    TAMPER(breakout_state, ramping, 2),
};

static const tamper_case g_freeway[] = {
    TAMPER(freeway_state, cars[2].speed, 6),
    TAMPER(freeway_state, cars[2].speed, -6),
    TAMPER(freeway_state, cars[2].x, 10),
    TAMPER(freeway_state, cars[2].x, -1),
    TAMPER(freeway_state, cars[2].y, 4), /* lane 2 is row 3 */
    TAMPER(freeway_state, cars[7].y, 10),
    TAMPER(freeway_state, cars[2].timer, -1),
    TAMPER(freeway_state, cars[2].timer, 6),
    TAMPER(freeway_state, chicken_row, 10),
    TAMPER(freeway_state, chicken_row, -1),
    TAMPER(freeway_state, move_timer, 4),
    TAMPER(freeway_state, move_timer, -1),
    TAMPER(freeway_state, terminate_timer, 2501),
    TAMPER(freeway_state, terminate_timer, -2),
    TAMPER(freeway_state, terminal, 2),
};

static const seaquest_object g_valid_item = {3, 2, 1, 2, 0};

/* One valid item first in each list, counted: the items' fields are then checked. */
static void lists_live(void *game) {
    seaquest_state *state = game;
    state->num_fish = state->num_subs = state->num_enemy_bullets = 1;
    state->num_friendly_bullets = state->num_divers = 1;
    state->fish[0] = state->subs[0] = state->enemy_bullets[0] = g_valid_item;
    state->friendly_bullets[0] = state->divers[0] = g_valid_item;
}
/* facing left, so its back is drawn at x + 1: column 9 would put it off the board */
static void sub_facing_left(void *game) {
    seaquest_state *state = game;
    state->sub_right = 0;
    state->sub_x = 5;
}

static const tamper_case g_seaquest[] = {
    TAMPER(seaquest_state, num_fish, SEAQUEST_MAX_ENEMIES + 1),
    TAMPER(seaquest_state, num_fish, -1),
    TAMPER(seaquest_state, num_subs, SEAQUEST_MAX_ENEMIES + 1),
    TAMPER(seaquest_state, num_enemy_bullets, SEAQUEST_MAX_ENEMY_BULLETS + 1),
    TAMPER(seaquest_state, num_friendly_bullets, SEAQUEST_MAX_FRIENDLY_BULLETS + 1),
    TAMPER(seaquest_state, num_divers, SEAQUEST_MAX_DIVER_OBJECTS + 1),
    TAMPER_LIVE(seaquest_state, fish[0].x, 10, lists_live),
    TAMPER_LIVE(seaquest_state, fish[0].x, -1, lists_live),
    TAMPER_LIVE(seaquest_state, fish[0].y, 9, lists_live),
    TAMPER_LIVE(seaquest_state, fish[0].right, 2, lists_live),
    TAMPER_LIVE(seaquest_state, fish[0].move_timer, 6, lists_live),
    TAMPER_LIVE(seaquest_state, subs[0].shot_timer, 11, lists_live),
    TAMPER_LIVE(seaquest_state, subs[0].x, 100, lists_live),
    TAMPER_LIVE(seaquest_state, enemy_bullets[0].y, -1, lists_live),
    TAMPER_LIVE(seaquest_state, friendly_bullets[0].x, 10, lists_live),
    TAMPER_LIVE(seaquest_state, divers[0].y, 10, lists_live),
    TAMPER(seaquest_state, sub_right, 2),
    TAMPER(seaquest_state, sub_x, 10),
    TAMPER(seaquest_state, sub_x, -1),
    TAMPER_LIVE(seaquest_state, sub_x, 9, sub_facing_left),
    TAMPER(seaquest_state, sub_y, 9),
    TAMPER(seaquest_state, sub_y, -1),
    TAMPER(seaquest_state, oxygen, 201),
    TAMPER(seaquest_state, oxygen, -2),
    TAMPER(seaquest_state, diver_count, 7),
    TAMPER(seaquest_state, diver_count, INT32_MIN), /* 9 - diver_count overflows */
    TAMPER(seaquest_state, enemy_spawn_speed, 0),
    TAMPER(seaquest_state, enemy_spawn_timer, -1),
    TAMPER(seaquest_state, diver_spawn_timer, 31),
    TAMPER(seaquest_state, move_speed, 1),
    TAMPER(seaquest_state, ramp_index, -1),
    TAMPER(seaquest_state, shot_timer, 6),
    TAMPER(seaquest_state, surface, 2),
    TAMPER(seaquest_state, terminal, 2),
    TAMPER(seaquest_state, ramping, 2),
};

static const tamper_case g_space_invaders[] = {
    TAMPER(space_invaders, aliens[9], 0x400), /* column 10 */
    TAMPER(space_invaders, friendly_bullets[0], 0x8000),
    TAMPER(space_invaders, enemy_bullets[3], 0xffff),
    TAMPER(space_invaders, cannon, 10), /* 1 << cannon tests the bottom row */
    TAMPER(space_invaders, cannon, -1),
    TAMPER(space_invaders, alien_dir, 0),
    TAMPER(space_invaders, alien_dir, 2),
    TAMPER(space_invaders, move_interval, 5),
    TAMPER(space_invaders, move_interval, 13),
    TAMPER(space_invaders, move_timer, -1),
    TAMPER(space_invaders, move_timer, 13),
    TAMPER(space_invaders, shot_timer, -1),
    TAMPER(space_invaders, shot_timer, 11),
    TAMPER(space_invaders, cool_down, 6),
    TAMPER(space_invaders, cool_down, -1),
    TAMPER(space_invaders, ramp_index, 7),
    TAMPER(space_invaders, ramp_index, -1),
    TAMPER(space_invaders, ramping, 2),
    TAMPER(space_invaders, terminal, 2),
};

#define CASES(table) table, (int)(sizeof table / sizeof table[0])
static const game_case g_games[] = {
    {"MinAtar/Asterix-v1", &minatar_asterix, CASES(g_asterix)},
    {"MinAtar/Breakout-v1", &minatar_breakout, CASES(g_breakout)},
    {"MinAtar/Freeway-v1", &minatar_freeway, CASES(g_freeway)},
    {"MinAtar/Seaquest-v1", &minatar_seaquest, CASES(g_seaquest)},
    {"MinAtar/SpaceInvaders-v1", &minatar_space_invaders, CASES(g_space_invaders)},
};

/* Fails with the reason unless the game validates. */
static void expect_valid(const minatar_game_ops *ops, const void *game, const char *when,
                         int step) {
    char why[200] = "";
    if (!ops->validate(game, why, sizeof why))
        fail_msg("%s: a real state refused (%s, act %d): %s", ops->name, when, step, why);
}

/* steps random acts of a new game (a new one at each terminal), each state validated. Leaves
 * the last state in game: never a terminal one (a terminal game is reset). */
static void play(const minatar_game_ops *ops, void *game, uint32_t seed, bool ramping,
                 int steps) {
    minatar_rng rng, actions;
    minatar_rng_seed(&rng, seed);
    minatar_rng_seed(&actions, seed + 1000u);
    ops->init(game, ramping);
    ops->reset(game, &rng);
    expect_valid(ops, game, "after reset", 0);
    for (int step = 1; step <= steps; step++) {
        bool terminal = false;
        int action = minatar_rng_randint(&actions, 0, MINATAR_NUM_ACTIONS);
        (void)ops->act(game, &rng, action, &terminal);
        expect_valid(ops, game, terminal ? "terminal" : "running", step);
        if (terminal) {
            ops->reset(game, &rng);
            expect_valid(ops, game, "after reset", step);
        }
    }
}

static void test_real_states_valid(void **state) {
    const game_case *tested = *state;
    static uint8_t game[MAX_STATE];
    assert_true(tested->ops->state_size <= MAX_STATE);
    for (uint32_t seed = 0; seed < 3; seed++) play(tested->ops, game, seed, true, REAL_STEPS);
    play(tested->ops, game, 7, false, REAL_STEPS);
}

/* Every state of the game's four recorded traces, replayed as tests/minatar_replay.h does
 * (the sticky draw kept, so the stream follows MinAtar's), validates. */
static void test_trace_states_valid(void **state) {
    const minatar_game_ops *ops = ((const game_case *)*state)->ops;
    REQUIRE_SHARED(shared);
    static const char *const kinds[] = {"seed0_sticky0.1_ramp1", "seed1_sticky0.1_ramp1",
                                        "seed2_sticky0_ramp0", "seed3_sticky0.1_ramp1_biased"};
    static uint8_t game[MAX_STATE];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/reference/minatar/%s_%s.jsonl", shared, ops->name,
                 kinds[k]);
        minatar_trace trace;
        if (!minatar_trace_load(path, &trace)) fail_msg("cannot load %s", path);
        minatar_rng rng;
        minatar_rng_seed(&rng, trace.seed);
        ops->init(game, trace.ramping);
        ops->reset(game, &rng);
        expect_valid(ops, game, path, -1);
        int last_action = 0;
        for (int t = 0; t < trace.num_steps; t++) {
            const minatar_trace_step *step = &trace.steps[t];
            int action = minatar_sticky(&rng, trace.sticky, &last_action, step->action);
            assert_int_equal(action, step->effective);
            bool terminal = false;
            (void)ops->act(game, &rng, action, &terminal);
            assert_int_equal(terminal, step->terminal);
            expect_valid(ops, game, path, t);
            if (step->reset) {
                ops->reset(game, &rng);
                expect_valid(ops, game, path, t);
            }
        }
        print_message("%s: %d states valid\n", path, trace.num_steps);
        minatar_trace_free(&trace);
    }
}

/* Writes value into width bytes at offset (two's complement, the state's byte order). */
static void write_field(uint8_t *game, size_t offset, size_t width, long value) {
    if (width == 1) {
        uint8_t byte = (uint8_t)(value & 0xff);
        memcpy(game + offset, &byte, 1);
    } else if (width == 2) {
        uint16_t half = (uint16_t)(value & 0xffff);
        memcpy(game + offset, &half, 2);
    } else {
        assert_int_equal(width, 4);
        int32_t word = (int32_t)value;
        memcpy(game + offset, &word, 4);
    }
}

static void test_tampered_fields_refused(void **state) {
    const game_case *tested = *state;
    const minatar_game_ops *ops = tested->ops;
    static uint8_t real[MAX_STATE], game[MAX_STATE];
    play(ops, real, 11, true, TAMPER_AFTER);
    for (int c = 0; c < tested->num_tampers; c++) {
        const tamper_case *tamper = &tested->tampers[c];
        memcpy(game, real, ops->state_size);
        if (tamper->prepare) tamper->prepare(game);
        expect_valid(ops, game, "prepared", c);
        write_field(game, tamper->offset, tamper->width, tamper->value);
        char why[200] = "", want[96];
        if (tamper->width == 2) /* the bit maps print in hex */
            snprintf(want, sizeof want, "%s is 0x%lx", tamper->field, tamper->value);
        else snprintf(want, sizeof want, "%s is %ld", tamper->field, tamper->value);
        if (ops->validate(game, why, sizeof why))
            fail_msg("%s: %s = %ld validated", ops->name, tamper->field, tamper->value);
        if (!strstr(why, want)) fail_msg("%s: '%s' lacks '%s'", ops->name, why, want);
        print_message("%s refused: %s\n", ops->name, why);
    }
}

/* Seaquest's quirks reach counts a plain range would refuse: surfacing again after a full
 * surfacing leaves diver_count at -2, -3, ...; running out of oxygen ends at -1. */
static void test_seaquest_quirk_states_valid(void **unused) {
    (void)unused;
    static seaquest_state game;
    play(&minatar_seaquest, &game, 11, true, TAMPER_AFTER);
    game.diver_count = -1000;
    expect_valid(&minatar_seaquest, &game, "diver_count -1000", 0);
    game.oxygen = -1;
    game.terminal = true;
    expect_valid(&minatar_seaquest, &game, "out of oxygen", 0);
    uint8_t obs[MINATAR_SIDE * MINATAR_SIDE * 10];
    minatar_seaquest.observe(&game, obs); /* the gauge's loop stays on the board */
}

/* Through the env: check_state names the id, the env and the field. */
static void test_check_state_names_env(void **unused) {
    (void)unused;
    const sk_env_def *def = sk_env_find("MinAtar/Breakout-v1");
    assert_non_null(def);
    sk_config *cfg = sk_config_new();
    assert_non_null(cfg);
    sk_vec *vec = NULL;
    assert_int_equal(sk_vec_create(&vec, def, 4, 1, cfg), SK_OK);
    sk_config_free(cfg);
    sk_vec_reset(vec, 1);
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    int count = sk_vec_state_arrays(vec, arrays);
    int at = -1;
    for (int a = 0; a < count; a++)
        if (strcmp(arrays[a].name, "game") == 0) at = a;
    assert_true(at >= 0);
    assert_int_equal(arrays[at].count, (int)sizeof(breakout_state));
    assert_int_equal(sk_vec_check_state(vec, "test"), SK_OK);
    breakout_state *games = arrays[at].data;
    games[3].ball_direction = 200; /* direction_dx[200] */
    assert_int_equal(sk_vec_check_state(vec, "test"), SK_ERR_CORRUPT);
    const char *message = sk_last_error();
    if (!strstr(message, "MinAtar/Breakout-v1: env.game of env 3: ball_direction is 200"))
        fail_msg("message: %s", message);
    games[3].ball_direction = 1;
    assert_int_equal(sk_vec_check_state(vec, "test"), SK_OK);
    sk_vec_destroy(vec);
}

/* ---- the CLI: a tampered checkpoint's resume exits 1 naming the env ---- */

/* The file's bytes and a NUL after them. */
static char *read_bytes(const char *path, size_t *size) {
    struct stat info;
    assert_int_equal(stat(path, &info), 0);
    *size = (size_t)info.st_size;
    char *bytes = malloc(*size + 1);
    FILE *f = fopen(path, "rb");
    assert_true(bytes && f);
    assert_int_equal(fread(bytes, 1, *size, f), *size);
    fclose(f);
    bytes[*size] = '\0';
    return bytes;
}

/* Writes value (width bytes) at byte offset of env `env`'s game in the checkpoint's env.game
 * tensor, resealed as a deliberate tamperer would. */
static void tamper_game(const char *path, size_t state_size, int env, size_t offset,
                        size_t width, long value) {
    sk_st_file *file = NULL;
    assert_int_equal(sk_st_open(&file, path), SK_OK);
    const sk_st_tensor *tensor = sk_st_find(file, "env.game");
    assert_non_null(tensor);
    assert_int_equal(tensor->dtype, SK_ST_U8);
    size_t size;
    char *bytes = read_bytes(path, &size);
    uint64_t header_len = 0;
    for (int b = 0; b < 8; b++) header_len |= (uint64_t)(uint8_t)bytes[b] << (8 * b);
    uint8_t *game = (uint8_t *)bytes + 8 + header_len + tensor->offset + (size_t)env * state_size;
    sk_st_close(file);
    write_field(game, offset, width, value);
    assert_true(sk_st_reseal(bytes, size));
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    fclose(f);
    free(bytes);
}

/* Runs command in dir; returns its exit status (or -1 when killed by a signal). */
static int run(const char *dir, const char *command) {
    char line[16600];
    snprintf(line, sizeof line, "cd %s && %s >out.txt 2>&1", dir, command);
    int code = system(line);
    if (code == -1 || !WIFEXITED(code)) return -1;
    return WEXITSTATUS(code);
}

static void expect_output(const char *dir, const char *needle) {
    char path[4200];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    size_t size;
    char *text = read_bytes(path, &size);
    if (!strstr(text, needle)) fail_msg("output lacks '%s':\n%s", needle, text);
    free(text);
}

/* One game: train 2,000 steps, tamper one field of env 3's game, resume: exit 1 naming the
 * env and the field. */
static void resume_tampered(const char *dir, const char *id, const char *run_name,
                            size_t state_size, size_t offset, size_t width, long value,
                            const char *why) {
    char command[8192], path[4400], needle[256];
    snprintf(command, sizeof command, "%s train %s --total-steps 2000 --run-dir runs/%s",
             SKINNER_BINARY, id, run_name);
    if (run(dir, command) != 0) fail_msg("%s: `%s` failed", id, command);
    snprintf(path, sizeof path, "%s/runs/%s/policy.safetensors", dir, run_name);
    tamper_game(path, state_size, 3, offset, width, value);
    snprintf(command, sizeof command, "%s train %s --total-steps 4000 --resume runs/%s",
             SKINNER_BINARY, id, run_name);
    int code = run(dir, command);
    snprintf(needle, sizeof needle, "%s: env.game of env 3: %s", id, why);
    expect_output(dir, needle);
    if (code != 1) fail_msg("%s: the tampered resume exited with %d (expected 1)", id, code);
    print_message("%s: resume refused, exit 1\n", id);
}

static void test_cli_resume_tampered(void **unused) {
    (void)unused;
    char dir[] = "/tmp/test_minatar_validate_XXXXXX";
    assert_non_null(mkdtemp(dir));
    resume_tampered(dir, "MinAtar/Breakout-v1", "breakout", sizeof(breakout_state),
                    offsetof(breakout_state, ball_direction), 4, 200000, "ball_direction");
    resume_tampered(dir, "MinAtar/Seaquest-v1", "seaquest", sizeof(seaquest_state),
                    offsetof(seaquest_state, num_fish), 4, 1000, "num_fish is 1000");
    char command[8192];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    assert_int_equal(system(command), 0);
}

/* One case per game of a test taking its game_case: test_NAME_asterix, ... */
#define GAME_CASE(test, game, index) {#test "_" game, test, NULL, NULL, (void *)&g_games[index]}
#define PER_GAME(test)                                                                             \
    GAME_CASE(test, "asterix", 0), GAME_CASE(test, "breakout", 1),                                 \
        GAME_CASE(test, "freeway", 2), GAME_CASE(test, "seaquest", 3),                             \
        GAME_CASE(test, "space_invaders", 4)

int main(void) {
    const struct CMUnitTest tests[] = {
        PER_GAME(test_real_states_valid),
        PER_GAME(test_trace_states_valid),
        PER_GAME(test_tampered_fields_refused),
        cmocka_unit_test(test_seaquest_quirk_states_valid),
        cmocka_unit_test(test_check_state_names_env),
        cmocka_unit_test(test_cli_resume_tampered),
    };
    return cmocka_run_group_tests_name("test_minatar_validate", tests, NULL, NULL);
}
