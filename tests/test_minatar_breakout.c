/*
 * MinAtar's Breakout (modules/minatar/breakout.c) against MinAtar 1.0.15 itself: the four
 * recorded traces of ../shared/reference/minatar replayed bit for bit (applied action, reward,
 * terminal and every cell after every step and reset), MinAtar's minimal action set, a game
 * that is over staying over, and the game's single-core speed (printed, not asserted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "minatar/minatar.h"
#include "minatar_replay.h"
#include "test_util.h"

#include <stdalign.h>

/* Breakout's channels (rules/breakout.md) and its wall: rows 1-3, 30 bricks */
#define CHANNEL_PADDLE 0
#define CHANNEL_BALL 1
#define CHANNEL_TRAIL 2
#define CHANNEL_BRICK 3
#define NUM_CHANNELS 4
#define BRICK_FIRST_ROW 1
#define BRICK_LAST_ROW 3
#define NUM_BRICKS ((BRICK_LAST_ROW - BRICK_FIRST_ROW + 1) * MINATAR_SIDE)
#define MAX_STEPS 20000 /* ample: the player below clears the wall in about 700 */

static minatar_trace_case seed0_sticky = {&minatar_breakout,
                                          "breakout_seed0_sticky0.1_ramp1.jsonl", 3000};
static minatar_trace_case seed1_sticky = {&minatar_breakout,
                                          "breakout_seed1_sticky0.1_ramp1.jsonl", 3000};
static minatar_trace_case seed2_no_sticky_no_ramp = {&minatar_breakout,
                                                     "breakout_seed2_sticky0_ramp0.jsonl", 3000};
static minatar_trace_case seed3_biased = {&minatar_breakout,
                                          "breakout_seed3_sticky0.1_ramp1_biased.jsonl", 6000};

/* The cells of one channel that are set, in one row (or all rows, row < 0). */
static int count_channel(const uint8_t *obs, int channel, int row) {
    int count = 0;
    for (int y = 0; y < MINATAR_SIDE; y++)
        for (int x = 0; x < MINATAR_SIDE; x++)
            count += (row < 0 || y == row) && obs[(y * MINATAR_SIDE + x) * NUM_CHANNELS + channel];
    return count;
}

static void test_minimal_actions(void **unused) {
    (void)unused;
    /* rules/00_common.md: breakout [0, 1, 3] (no-op, left, right) */
    assert_int_equal(minatar_breakout.num_minimal_actions, 3);
    assert_int_equal(minatar_breakout.minimal_actions[0], 0);
    assert_int_equal(minatar_breakout.minimal_actions[1], 1);
    assert_int_equal(minatar_breakout.minimal_actions[2], 3);
    assert_int_equal(minatar_breakout.channels, NUM_CHANNELS);
}

static void test_act_after_game_over(void **unused) {
    (void)unused;
    const minatar_game_ops *ops = &minatar_breakout;
    minatar_rng rng;
    void *game = minatar_start_game(ops, &rng, 7, true);
    /* a paddle that never moves misses the ball within a few bounces; the missed ball stays
     * drawn on the bottom row, beside the paddle (MinAtar's final state) */
    bool terminal = false;
    for (int steps = 0; !terminal && steps < 1000; steps++)
        ops->act(game, &rng, MINATAR_NOOP, &terminal);
    assert_true(terminal);
    uint8_t obs[MINATAR_SIDE * MINATAR_SIDE * NUM_CHANNELS];
    ops->observe(game, obs);
    assert_int_equal(count_channel(obs, CHANNEL_BALL, MINATAR_SIDE - 1), 1);
    assert_int_equal(count_channel(obs, CHANNEL_PADDLE, MINATAR_SIDE - 1), 1);
    minatar_expect_over_unchanged(ops, game, &rng);
    free(game);
}

/* A player that looks ahead through copies of the game (its state is plain data): true when
 * some sequence of minimal actions keeps the game alive for depth more steps. Breakout's act()
 * draws nothing (its one draw is reset's), so the copies step without a stream. */
#define LOOKAHEAD_DEPTH 12 /* the ball comes back to the paddle's row within 12 steps */
#define STATE_CAPACITY 512
#define GAME_COPY(name) alignas(max_align_t) unsigned char name[STATE_CAPACITY]

static bool survives(const minatar_game_ops *ops, const void *game, int depth) {
    if (depth == 0) return true;
    GAME_COPY(copy);
    for (int k = 0; k < ops->num_minimal_actions; k++) {
        memcpy(copy, game, ops->state_size);
        bool terminal = false;
        ops->act(copy, NULL, ops->minimal_actions[k], &terminal);
        if (!terminal && survives(ops, copy, depth - 1)) return true;
    }
    return false;
}


/* The wall of 30 bricks comes back, whole, on the step the ball comes down to the bottom row
 * after the last brick broke (rules/breakout.md, act 5c), and not before. No recorded trace
 * clears the wall, so this is played here: a player that never misses breaks all 30 bricks. */
static void test_wall_comes_back(void **unused) {
    (void)unused;
    const minatar_game_ops *ops = &minatar_breakout;
    assert_true(ops->state_size <= STATE_CAPACITY);
    GAME_COPY(game);
    GAME_COPY(cleared);
    minatar_rng rng, choices;
    minatar_rng_seed(&rng, 3);
    minatar_rng_seed(&choices, 4);
    ops->init(game, true);
    ops->reset(game, &rng);
    uint8_t obs[MINATAR_SIDE * MINATAR_SIDE * NUM_CHANNELS];
    double score = 0.0;
    int cleared_at = -1, refilled_at = -1;
    for (int t = 0; t < MAX_STEPS && refilled_at < 0; t++) {
        /* a random action among those that keep the game alive (a fixed preference can
         * lock the ball into a loop that never reaches the last bricks) */
        int action = MINATAR_NOOP, first = minatar_rng_randint(&choices, 0, 3);
        for (int k = 0; k < ops->num_minimal_actions; k++) {
            int candidate = ops->minimal_actions[(first + k) % ops->num_minimal_actions];
            GAME_COPY(copy);
            memcpy(copy, game, ops->state_size);
            bool terminal = false;
            ops->act(copy, NULL, candidate, &terminal);
            if (!terminal && survives(ops, copy, LOOKAHEAD_DEPTH)) {
                action = candidate;
                break;
            }
        }
        bool terminal = false;
        score += ops->act(game, &rng, action, &terminal);
        assert_false(terminal);
        ops->observe(game, obs);
        int bricks = count_channel(obs, CHANNEL_BRICK, -1);
        /* the ball came down to the paddle's row this step: it bounced back to row 8, where
         * it was (its trail), as nothing else keeps a ball on its row (bricks stand in rows
         * 1-3, the ceiling is row 0) */
        bool reached_bottom = count_channel(obs, CHANNEL_BALL, MINATAR_SIDE - 2) == 1 &&
                              count_channel(obs, CHANNEL_TRAIL, MINATAR_SIDE - 2) == 1;
        if (cleared_at < 0) {
            /* each point is one brick broken: the wall is what the score has not taken */
            assert_int_equal(bricks, NUM_BRICKS - (int)score);
            if (bricks == 0) {
                cleared_at = t;
                memcpy(cleared, game, ops->state_size);
            }
        } else if (!reached_bottom) {
            assert_int_equal(bricks, 0);
        } else {
            for (int y = BRICK_FIRST_ROW; y <= BRICK_LAST_ROW; y++)
                assert_int_equal(count_channel(obs, CHANNEL_BRICK, y), MINATAR_SIDE);
            assert_int_equal(bricks, NUM_BRICKS);
            refilled_at = t;
        }
    }
    if (refilled_at < 0)
        fail_msg("the wall was not cleared and rebuilt in %d steps (score %g)", MAX_STEPS, score);
    /* the wall comes back before the paddle is tested: a miss with no bricks left ends the
     * game with the whole wall drawn */
    int missed_after = 0;
    bool terminal = false;
    while (!terminal) {
        int action = MINATAR_NOOP;
        for (int k = 0; k < ops->num_minimal_actions; k++) {
            GAME_COPY(copy);
            memcpy(copy, cleared, ops->state_size);
            bool ends = false;
            ops->act(copy, NULL, ops->minimal_actions[k], &ends);
            if (ends) action = ops->minimal_actions[k];
        }
        ops->act(cleared, NULL, action, &terminal);
        ops->observe(cleared, obs);
        if (!terminal) assert_int_equal(count_channel(obs, CHANNEL_BRICK, -1), 0);
        assert_true(++missed_after < MAX_STEPS);
    }
    assert_int_equal(count_channel(obs, CHANNEL_BALL, MINATAR_SIDE - 1), 1);
    assert_int_equal(count_channel(obs, CHANNEL_BRICK, -1), NUM_BRICKS);
    print_message("wall cleared at step %d, rebuilt at step %d; a miss %d steps after clearing "
                  "ends with the wall rebuilt\n", cleared_at, refilled_at, missed_after);
}

static void test_print_speed(void **unused) {
    (void)unused;
    minatar_print_speed(&minatar_breakout, 1000000, "~144k");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        MINATAR_REPLAY_CASE(seed0_sticky),
        MINATAR_REPLAY_CASE(seed1_sticky),
        MINATAR_REPLAY_CASE(seed2_no_sticky_no_ramp),
        MINATAR_REPLAY_CASE(seed3_biased),
        cmocka_unit_test(test_minimal_actions),
        cmocka_unit_test(test_act_after_game_over),
        cmocka_unit_test(test_wall_comes_back),
        cmocka_unit_test(test_print_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
