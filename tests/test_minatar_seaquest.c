/*
 * MinAtar's Seaquest (src/envs/minatar/seaquest.c) against MinAtar 1.0.15 itself: the four
 * recorded traces of ../shared/reference/minatar replayed bit for bit (applied action, reward,
 * terminal and every cell after every step and reset), MinAtar's minimal action set, a game
 * that is over staying over, and the game's single-core speed (printed, not asserted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "minatar_replay.h"

#include <stdlib.h>

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

/* Diving and staying down ends the game by the 201st submerged act at the latest (the
 * oxygen, 200, is tested before its decrement), sooner if an enemy gets the sub; act() on
 * the game over returns 0 and terminal and changes neither the game nor the stream. */
static void test_act_after_game_over(void **unused) {
    (void)unused;
    const minatar_game_ops *ops = &minatar_seaquest;
    void *game = calloc(1, ops->state_size);
    assert_non_null(game);
    minatar_rng rng;
    minatar_rng_seed(&rng, 7);
    ops->init(game, true);
    ops->reset(game, &rng);
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
        cmocka_unit_test(test_print_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
