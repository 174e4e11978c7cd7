/*
 * MinAtar's Seaquest (modules/minatar/seaquest.c) against MinAtar 1.0.15 itself: the four
 * recorded traces of ../shared/reference/minatar replayed bit for bit (applied action, reward,
 * terminal and every cell after every step and reset), MinAtar's minimal action set, a game
 * that is over staying over, the rules the traces never reach (a full surfacing's bonus and
 * the -1 diver count after it) played by a lookahead player, and the game's single-core
 * speed (printed, not asserted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "minatar_replay.h"

#include <stdlib.h>
#include <string.h>

#define TRACE_STEPS 3000
#define BIASED_TRACE_STEPS 6000 /* the _biased traces are twice as long (README there) */
#define SEAQUEST_CHANNELS 10
#define MAX_SUBMERGED_ACTS 201 /* oxygen 200, tested before the decrement (rules/seaquest.md) */

static void test_trace_seed0_sticky(void **unused) {
    (void)unused;
    assert_int_equal(minatar_replay(&minatar_seaquest, "seaquest_seed0_sticky0.1_ramp1.jsonl"),
                     TRACE_STEPS);
}

static void test_trace_seed1_sticky(void **unused) {
    (void)unused;
    assert_int_equal(minatar_replay(&minatar_seaquest, "seaquest_seed1_sticky0.1_ramp1.jsonl"),
                     TRACE_STEPS);
}

static void test_trace_seed2_no_sticky_no_ramp(void **unused) {
    (void)unused;
    assert_int_equal(minatar_replay(&minatar_seaquest, "seaquest_seed2_sticky0_ramp0.jsonl"),
                     TRACE_STEPS);
}

static void test_trace_seed3_biased(void **unused) {
    (void)unused;
    assert_int_equal(
        minatar_replay(&minatar_seaquest, "seaquest_seed3_sticky0.1_ramp1_biased.jsonl"),
        BIASED_TRACE_STEPS);
}

static void test_minimal_actions(void **unused) {
    (void)unused;
    /* rules/00_common.md: seaquest [0..5], all six */
    assert_int_equal(minatar_seaquest.num_minimal_actions, 6);
    for (int k = 0; k < 6; k++) assert_int_equal(minatar_seaquest.minimal_actions[k], k);
    assert_int_equal(minatar_seaquest.channels, SEAQUEST_CHANNELS);
}

/* Diving and staying down ends the game by the 201st submerged act at the
 * latest (the oxygen, 200, is tested before its decrement), sooner if an enemy
 * gets the sub; act() on the game over returns 0 and terminal and changes
 * neither the game nor the stream. */
static void test_act_after_game_over(void **unused) {
    (void)unused;
    const minatar_game_ops *ops = &minatar_seaquest;
    minatar_rng rng;
    void *game = minatar_start_game(ops, &rng, 7, true);
    bool terminal = false;
    int acts = 0;
    while (!terminal && acts < 1000) {
        ops->act(game, &rng, MINATAR_DOWN, &terminal);
        acts++;
    }
    assert_true(terminal);
    assert_true(acts <= MAX_SUBMERGED_ACTS);
    minatar_expect_over_unchanged(ops, game, &rng);
    free(game);
}

/* A player for the rules the traces never reach (they collect at most 3
 * divers): it looks LOOKAHEAD_DEPTH acts ahead through copies of the game and
 * the stream to stay alive, and otherwise walks to the nearest diver, to the
 * surface when six are aboard or the oxygen is low. It never fires, so every
 * reward it sees is a surfacing bonus. */
#define LOOKAHEAD_DEPTH 3
#define STATE_CAPACITY 8192
#define LOW_OXYGEN_CELLS 3 /* oxygen < 60 of 200: head up with the divers aboard */
#define HOVER_ROW 4
#define CHANNEL_SUB_FRONT 0
#define CHANNEL_OXYGEN_GAUGE 7
#define CHANNEL_DIVER_GAUGE 8
#define CHANNEL_DIVER 9
#define MAX_DIVERS 6
#define WANTED_FULL_SURFACINGS 20 /* bonuses checked, difficulty ramped */

static const int moves[] = {MINATAR_NOOP, MINATAR_LEFT, MINATAR_RIGHT, MINATAR_UP, MINATAR_DOWN};
#define NUM_MOVES ((int)(sizeof moves / sizeof moves[0]))

/* One act() on copies of the game and the stream: true if it ends the game. */
static bool act_on_copy(const minatar_game_ops *ops, const void *game, const minatar_rng *rng,
                        int action, unsigned char *copy, minatar_rng *rng_copy) {
    *rng_copy = *rng;
    memcpy(copy, game, ops->state_size);
    bool terminal = false;
    ops->act(copy, rng_copy, action, &terminal);
    return terminal;
}

static bool survives(const minatar_game_ops *ops, const void *game, const minatar_rng *rng,
                     int depth) {
    if (depth == 0) return true;
    for (int k = 0; k < NUM_MOVES; k++) {
        unsigned char copy[STATE_CAPACITY];
        minatar_rng rng_copy;
        if (!act_on_copy(ops, game, rng, moves[k], copy, &rng_copy) &&
            survives(ops, copy, &rng_copy, depth - 1))
            return true;
    }
    return false;
}

static int count_cells(const uint8_t *obs, int channel, int row) {
    int count = 0;
    for (int y = 0; y < MINATAR_SIDE; y++)
        for (int x = 0; x < MINATAR_SIDE; x++)
            if ((row < 0 || y == row) && obs[(y * MINATAR_SIDE + x) * SEAQUEST_CHANNELS + channel])
                count++;
    return count;
}

static void find_sub(const uint8_t *obs, int *sub_x, int *sub_y) {
    for (int y = 0; y < MINATAR_SIDE; y++)
        for (int x = 0; x < MINATAR_SIDE; x++)
            if (obs[(y * MINATAR_SIDE + x) * SEAQUEST_CHANNELS + CHANNEL_SUB_FRONT]) {
                *sub_x = x;
                *sub_y = y;
            }
}

/* A diver in either row: one the sub might have picked up between the two
 * observations. */
static bool diver_near(const uint8_t *obs, int row, int other_row) {
    return count_cells(obs, CHANNEL_DIVER, row) + count_cells(obs, CHANNEL_DIVER, other_row) > 0;
}

/* The surviving move that brings the sub nearest (target_x, target_y); NOOP if
 * none lives. */
static int choose_move(const minatar_game_ops *ops, const void *game, const minatar_rng *rng,
                       int target_x, int target_y) {
    int best = MINATAR_NOOP, best_distance = 1 << 20;
    for (int k = 0; k < NUM_MOVES; k++) {
        unsigned char copy[STATE_CAPACITY];
        minatar_rng rng_copy;
        if (act_on_copy(ops, game, rng, moves[k], copy, &rng_copy) ||
            !survives(ops, copy, &rng_copy, LOOKAHEAD_DEPTH))
            continue;
        uint8_t obs[MINATAR_SIDE * MINATAR_SIDE * SEAQUEST_CHANNELS];
        ops->observe(copy, obs);
        int x = 0, y = 0;
        find_sub(obs, &x, &y);
        int distance = abs(x - target_x) + abs(y - target_y);
        if (distance < best_distance) {
            best = moves[k];
            best_distance = distance;
        }
    }
    return best;
}

/* Surfacing with six divers pays the oxygen left, oxygen*10//200, which is the
 * number of cells of the oxygen gauge (rules/seaquest.md); the diver count is
 * then -1 (zeroed, then decremented: MinAtar's quirk), so the next two
 * surfacings with no diver picked up do not end the game, where a count of 0
 * would (a spawned diver can only appear at x 0 or 9, and divers keep their
 * row: the sub away from the edges with no diver in its rows picks none). */
static void test_full_surfacing_bonus_and_minus_one(void **unused) {
    (void)unused;
    const minatar_game_ops *ops = &minatar_seaquest;
    assert_true(ops->state_size <= STATE_CAPACITY);
    unsigned char game[STATE_CAPACITY];
    minatar_rng rng;
    minatar_rng_seed(&rng, 11);
    ops->init(game, true);
    ops->reset(game, &rng);
    enum { HUNT, DIVE_AFTER_FULL, RISE_AFTER_FULL } phase = HUNT;
    bool quirk_seen = false;
    int full_surfacings = 0, empty_surfacings = 0, episodes = 0;
    uint8_t obs[MINATAR_SIDE * MINATAR_SIDE * SEAQUEST_CHANNELS];
    for (int t = 0; t < 200000 && !(quirk_seen && full_surfacings >= WANTED_FULL_SURFACINGS); t++) {
        ops->observe(game, obs);
        int sub_x = 0, sub_y = 0;
        find_sub(obs, &sub_x, &sub_y);
        int divers = count_cells(obs, CHANNEL_DIVER_GAUGE, -1);
        int oxygen_cells = count_cells(obs, CHANNEL_OXYGEN_GAUGE, MINATAR_SIDE - 1);
        int target_x = sub_x, target_y = HOVER_ROW;
        if (phase == DIVE_AFTER_FULL) {
            target_y = 1;
        } else if (phase == RISE_AFTER_FULL) {
            target_y = 0;
        } else if (divers == MAX_DIVERS || (divers > 0 && oxygen_cells < LOW_OXYGEN_CELLS)) {
            target_y = 0;
        } else {
            int nearest = 1 << 20;
            for (int y = 0; y < MINATAR_SIDE; y++)
                for (int x = 0; x < MINATAR_SIDE; x++) {
                    if (!obs[(y * MINATAR_SIDE + x) * SEAQUEST_CHANNELS + CHANNEL_DIVER]) continue;
                    int distance = abs(x - sub_x) + abs(y - sub_y);
                    if (distance < nearest) {
                        nearest = distance;
                        target_x = x;
                        target_y = y;
                    }
                }
        }
        int action = choose_move(ops, game, &rng, target_x, target_y);
        bool terminal = false;
        float reward = ops->act(game, &rng, action, &terminal);
        char why[200];
        if (!ops->validate(game, why, sizeof why)) /* a state a checkpoint may hold */
            fail_msg("act %d: a real state refused: %s", t, why);
        uint8_t after[sizeof obs];
        ops->observe(game, after);
        int new_x = 0, new_y = 0;
        find_sub(after, &new_x, &new_y);
        bool surfaced = new_y == 0 && sub_y > 0;
        if (phase == HUNT && surfaced && divers == MAX_DIVERS) {
            assert_false(terminal);
            assert_true(oxygen_cells > 0);
            assert_true(reward == (float)oxygen_cells);
            assert_int_equal(count_cells(after, CHANNEL_DIVER_GAUGE, -1), 0);
            full_surfacings++;
            phase = DIVE_AFTER_FULL;
        } else {
            assert_true(reward == 0.0f);
            /* a diver the sub could have picked up spoils the count: wait for the next */
            if ((phase == DIVE_AFTER_FULL || phase == RISE_AFTER_FULL) &&
                (diver_near(obs, sub_y, new_y) || diver_near(after, sub_y, new_y) || new_x == 0 ||
                 new_x == MINATAR_SIDE - 1)) {
                phase = HUNT;
                empty_surfacings = 0;
            }
            if (phase == DIVE_AFTER_FULL && new_y > 0) phase = RISE_AFTER_FULL;
            if (phase == RISE_AFTER_FULL && surfaced) {
                assert_false(terminal); /* count -1, then -2: not 0 */
                empty_surfacings++;
                if (empty_surfacings == 2) quirk_seen = true;
                phase = empty_surfacings == 2 ? HUNT : DIVE_AFTER_FULL;
            }
        }
        if (terminal) {
            ops->reset(game, &rng);
            episodes++;
            phase = HUNT;
            empty_surfacings = 0;
        }
    }
    print_message("%d full surfacings in %d episodes, the -1 quirk %s\n", full_surfacings, episodes,
                  quirk_seen ? "seen" : "never seen");
    assert_true(quirk_seen);
    assert_true(full_surfacings >= WANTED_FULL_SURFACINGS);
}

static void test_print_speed(void **unused) {
    (void)unused;
    minatar_print_speed(&minatar_seaquest, 1000000, "~164k");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_seed0_sticky),
        cmocka_unit_test(test_trace_seed1_sticky),
        cmocka_unit_test(test_trace_seed2_no_sticky_no_ramp),
        cmocka_unit_test(test_trace_seed3_biased),
        cmocka_unit_test(test_minimal_actions),
        cmocka_unit_test(test_act_after_game_over),
        cmocka_unit_test(test_full_surfacing_bonus_and_minus_one),
        cmocka_unit_test(test_print_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
