/*
 * MinAtar's Freeway (modules/minatar/freeway.c) against MinAtar 1.0.15 itself:
 * its four recorded traces replayed bit for bit (applied action, reward,
 * terminal, every cell after every step and reset; the _biased one crosses the
 * road 64 times), its minimal action set, the episode's length and act() on a
 * game already over. Also prints the game's single-core speed (no assertion).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "minatar_replay.h"

#include <stdlib.h>

#define FREEWAY_EPISODE_ACTS 2501 /* MinAtar's time limit 2500, ending on the call after it */

typedef struct trace_case {
    const char *file;
    int steps;
} trace_case;

static trace_case seed0_sticky = {"freeway_seed0_sticky0.1_ramp1.jsonl", 3000};
static trace_case seed1_sticky = {"freeway_seed1_sticky0.1_ramp1.jsonl", 3000};
static trace_case seed2_no_sticky_no_ramp = {"freeway_seed2_sticky0_ramp0.jsonl", 3000};
static trace_case seed3_biased = {"freeway_seed3_sticky0.1_ramp1_biased.jsonl", 6000};

/* One trace, every one of its steps replayed. */
static void test_replay(void **state) {
    const trace_case *trace = *state;
    assert_int_equal(minatar_replay(&minatar_freeway, trace->file), trace->steps);
}

/* MinAtar's minimal_action_set() for freeway: n, u, d (rules/00_common.md). */
static void test_minimal_actions(void **unused) {
    (void)unused;
    assert_int_equal(minatar_freeway.num_minimal_actions, 3);
    assert_int_equal(minatar_freeway.minimal_actions[0], MINATAR_NOOP);
    assert_int_equal(minatar_freeway.minimal_actions[1], MINATAR_UP);
    assert_int_equal(minatar_freeway.minimal_actions[2], MINATAR_DOWN);
    assert_int_equal(minatar_freeway.channels, 7);
}

/* The game ends on exactly its 2,501st act(), crossings or not; one more act() returns 0
 * and terminal and changes neither the state nor the stream. */
static void test_act_after_game_over(void **unused) {
    (void)unused;
    void *game = calloc(1, minatar_freeway.state_size);
    assert_non_null(game);
    minatar_rng rng;
    minatar_rng_seed(&rng, 7);
    minatar_freeway.init(game, true);
    minatar_freeway.reset(game, &rng);
    bool terminal = false;
    int acts = 0;
    float crossings = 0.0f;
    while (!terminal) {
        /* always up: the chicken crosses, so the end is the time limit's, not an idle game's */
        crossings += minatar_freeway.act(game, &rng, MINATAR_UP, &terminal);
        acts++;
        assert_true(acts <= FREEWAY_EPISODE_ACTS);
    }
    assert_int_equal(acts, FREEWAY_EPISODE_ACTS);
    assert_true(crossings > 0.0f);
    minatar_expect_over_unchanged(&minatar_freeway, game, &rng);
    free(game);
}

static void test_print_speed(void **unused) {
    (void)unused;
    minatar_print_speed(&minatar_freeway, 1000000, "~234k");
}

/* A replay case named after its trace_case. */
#define REPLAY_CASE(trace) {"test_replay_" #trace, test_replay, NULL, NULL, &(trace)}

int main(void) {
    const struct CMUnitTest tests[] = {
        REPLAY_CASE(seed0_sticky),
        REPLAY_CASE(seed1_sticky),
        REPLAY_CASE(seed2_no_sticky_no_ramp),
        REPLAY_CASE(seed3_biased),
        cmocka_unit_test(test_minimal_actions),
        cmocka_unit_test(test_act_after_game_over),
        cmocka_unit_test(test_print_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
