/*
 * MinAtar's Space Invaders (modules/minatar/space_invaders.c) against MinAtar
 * 1.0.15 itself: its four recorded traces replayed bit for bit (applied action,
 * reward, terminal, every cell after every step and every reset), its minimal
 * action set, the first frames of a game worked out by hand from the rules, and
 * act() on a game already over. Also prints the game's single-core speed (no
 * assertion). The game's table is the one an env picks on this CPU (the AVX-512 VBMI
 * observation where the level in use is avx512 and the CPU has VBMI), so the @level runs of
 * this test (tests/CMakeLists.txt) replay the traces through each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "minatar/space_invaders.h"
#include "minatar_replay.h"

#include <stdlib.h>
#include <string.h>

#define SI_CHANNELS 6
#define SI_CELL(obs, y, x, c) ((obs)[((y) * MINATAR_SIDE + (x)) * SI_CHANNELS + (c)])

/* minatar_space_invaders, or its VBMI table where this process runs that (set by main) */
static const minatar_game_ops *g_game;

static void test_replay_seed0_sticky(void **unused) {
    (void)unused;
    assert_int_equal(
        minatar_replay(g_game, "space_invaders_seed0_sticky0.1_ramp1.jsonl"),
        3000);
}

static void test_replay_seed1_sticky(void **unused) {
    (void)unused;
    assert_int_equal(
        minatar_replay(g_game, "space_invaders_seed1_sticky0.1_ramp1.jsonl"),
        3000);
}

static void test_replay_seed2_no_sticky_no_ramp(void **unused) {
    (void)unused;
    assert_int_equal(
        minatar_replay(g_game, "space_invaders_seed2_sticky0_ramp0.jsonl"),
        3000);
}

static void test_replay_seed3_biased(void **unused) {
    (void)unused;
    assert_int_equal(minatar_replay(g_game,
                                    "space_invaders_seed3_sticky0.1_ramp1_biased.jsonl"),
                     6000);
}

/* MinAtar's minimal_action_set() for space_invaders: n, l, r, f (rules/00_common.md). */
static void test_minimal_actions(void **unused) {
    (void)unused;
    assert_string_equal(g_game->name, "space_invaders");
    assert_int_equal(g_game->channels, SI_CHANNELS);
    assert_int_equal(g_game->num_minimal_actions, 4);
    const int minimal[4] = {0, 1, 3, 5};
    for (int k = 0; k < 4; k++)
        assert_int_equal(g_game->minimal_actions[k], minimal[k]);
}

/* A cannon that never moves, from the rules in words: 24 aliens on rows 0..3, columns 2..7,
 * marching left; the first enemy bullet appears on act 11 below the cannon (column 5) on the
 * lowest alien's cell (row 3), falls a row a frame and reaches the cannon's row 9 on act 17,
 * which ends the game with nothing scored. Then one more act() of each action returns 0 and
 * terminal and changes nothing. */
static void test_idle_cannon_and_act_after_game_over(void **unused) {
    (void)unused;
    const size_t size = g_game->state_size;
    void *game = calloc(1, size);
    assert_non_null(game);
    minatar_rng rng;
    minatar_rng_seed(&rng, 3);
    g_game->init(game, true);
    g_game->reset(game, &rng);
    uint8_t obs[MINATAR_SIDE * MINATAR_SIDE * SI_CHANNELS];
    g_game->observe(game, obs);
    int aliens = 0, aliens_left = 0, aliens_right = 0;
    for (int y = 0; y < MINATAR_SIDE; y++) {
        for (int x = 0; x < MINATAR_SIDE; x++) {
            bool in_wave = y < 4 && x >= 2 && x <= 7;
            assert_int_equal(SI_CELL(obs, y, x, 1), in_wave);
            aliens += SI_CELL(obs, y, x, 1);
            aliens_left += SI_CELL(obs, y, x, 2);
            aliens_right += SI_CELL(obs, y, x, 3);
            assert_int_equal(SI_CELL(obs, y, x, 0), y == 9 && x == 5);
        }
    }
    assert_int_equal(aliens, 24);
    assert_int_equal(aliens_left, 24);
    assert_int_equal(aliens_right, 0);

    bool terminal = false;
    int acts = 0;
    while (!terminal) {
        float reward = g_game->act(game, &rng, MINATAR_NOOP, &terminal);
        acts++;
        assert_true(reward == 0.0f);
        g_game->observe(game, obs);
        if (acts == 11) assert_int_equal(SI_CELL(obs, 3, 5, 5), 1);
        assert_true(acts <= 17);
    }
    assert_int_equal(acts, 17);
    assert_int_equal(SI_CELL(obs, 9, 5, 5), 1);

    minatar_expect_over_unchanged(g_game, game, &rng);
    free(game);
}

/* The traces never clear a wave (their best episode scores 18 of 24) nor bring an alien down
 * to the bottom row, so these rules are checked here from MinAtar's rules in words. */

/* A fresh game (ramping as given) whose only alien is at (alien_y, alien_x). */
static space_invaders one_alien_game(bool ramping, int alien_y, int alien_x) {
    space_invaders game;
    minatar_rng rng;
    minatar_rng_seed(&rng, 0);
    g_game->init(&game, ramping);
    g_game->reset(&game, &rng);
    memset(game.aliens, 0, sizeof game.aliens);
    game.aliens[alien_y] = (uint16_t)(1u << alien_x);
    return game;
}

/* The last alien shot: +1 and a new wave of 24 on rows 0..3, columns 2..7; direction and timers
 * go on as they were. With ramping the aliens' move interval drops by one per wave, from 12 down
 * to 6 and no further (ramp index 6); without, it stays 12. */
static void test_cleared_wave_refills_and_ramps(void **unused) {
    (void)unused;
    for (int ramping = 0; ramping < 2; ramping++) {
        for (int wave = 1; wave <= 8; wave++) {
            space_invaders game = one_alien_game(ramping, 4, 7);
            minatar_rng rng;
            minatar_rng_seed(&rng, 0);
            if (wave > 1) { /* the interval and index the previous waves left */
                game.move_interval = ramping ? (wave - 1 < 6 ? 12 - (wave - 1) : 6) : 12;
                game.ramp_index = ramping ? 12 - game.move_interval : 0;
            }
            game.alien_dir = 1;
            game.move_timer = 3;
            game.shot_timer = 4;
            game.friendly_bullets[5] = 1u << 7; /* moves up onto the alien */
            bool terminal = true;
            float reward = g_game->act(&game, &rng, MINATAR_NOOP, &terminal);
            assert_true(reward == 1.0f);
            assert_false(terminal);
            for (int y = 0; y < MINATAR_SIDE; y++) {
                assert_int_equal(game.aliens[y], y < 4 ? 0xFC : 0); /* columns 2..7 */
                assert_int_equal(game.friendly_bullets[y], 0);
            }
            int want_interval = ramping ? (wave < 6 ? 12 - wave : 6) : 12;
            assert_int_equal(game.move_interval, want_interval);
            assert_int_equal(game.ramp_index, 12 - want_interval);
            assert_int_equal(game.alien_dir, 1);
            assert_int_equal(game.move_timer, 2);
            assert_int_equal(game.shot_timer, 3);
        }
    }
}

/* Aliens that reach a wall step down a row and turn; if one of them was on the bottom row the
 * game ends, and MinAtar's map roll brings that alien back on the top row. */
static void test_step_down_from_bottom_row_ends_game(void **unused) {
    (void)unused;
    space_invaders game = one_alien_game(true, 9, 0);
    minatar_rng rng;
    minatar_rng_seed(&rng, 0);
    game.move_timer = 0;
    bool terminal = false;
    float reward = g_game->act(&game, &rng, MINATAR_NOOP, &terminal);
    assert_true(reward == 0.0f);
    assert_true(terminal);
    uint8_t obs[MINATAR_SIDE * MINATAR_SIDE * SI_CHANNELS];
    g_game->observe(&game, obs);
    for (int y = 0; y < MINATAR_SIDE; y++) {
        for (int x = 0; x < MINATAR_SIDE; x++) {
            bool alien = y == 0 && x == 0;
            assert_int_equal(SI_CELL(obs, y, x, 1), alien);
            assert_int_equal(SI_CELL(obs, y, x, 2), 0);     /* no longer marching left */
            assert_int_equal(SI_CELL(obs, y, x, 3), alien); /* marching right */
        }
    }
}

/* A lone alien moves every frame (its period is min(aliens left, interval) = 1), and one that
 * marches onto the cannon's cell ends the game. */
static void test_lone_alien_moves_every_frame_onto_cannon(void **unused) {
    (void)unused;
    space_invaders game = one_alien_game(true, 9, 8);
    minatar_rng rng;
    minatar_rng_seed(&rng, 0);
    game.move_timer = 0;
    const int want_column[3] = {7, 6, 5}; /* the cannon is on column 5 */
    for (int act = 0; act < 3; act++) {
        bool terminal = false;
        g_game->act(&game, &rng, MINATAR_NOOP, &terminal);
        assert_int_equal(game.aliens[9], 1u << want_column[act]);
        assert_int_equal(terminal, act == 2);
    }
}

/* Single-core speed of act() over 1e6 random actions through the sticky rule: printed beside
 * MinAtar's Python figure, not asserted. */
static void test_print_speed(void **unused) {
    (void)unused;
    minatar_print_speed(g_game, 1000000, "~21k");
}

int main(void) {
    g_game = minatar_ops_for_cpu(&minatar_space_invaders);
    printf("space invaders: observing with %s\n",
           g_game == &minatar_space_invaders ? "the portable code" : "AVX-512 VBMI");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_seed0_sticky),
        cmocka_unit_test(test_replay_seed1_sticky),
        cmocka_unit_test(test_replay_seed2_no_sticky_no_ramp),
        cmocka_unit_test(test_replay_seed3_biased),
        cmocka_unit_test(test_minimal_actions),
        cmocka_unit_test(test_idle_cannon_and_act_after_game_over),
        cmocka_unit_test(test_cleared_wave_refills_and_ramps),
        cmocka_unit_test(test_step_down_from_bottom_row_ends_game),
        cmocka_unit_test(test_lone_alien_moves_every_frame_onto_cannon),
        cmocka_unit_test(test_print_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
