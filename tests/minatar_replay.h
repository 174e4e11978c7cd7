/*
 * Replays one of MinAtar's recorded traces (minatar_trace.h) through a game's
 * table (modules/minatar/minatar.h) and fails at the first difference: the
 * applied action, the reward, the terminal flag or any cell of the state after
 * each step and after each reset, naming the file, the step and the cells.
 * Also what every game's test checks alike: act() on a game that is over, and
 * the printed single-core speed.
 */
#ifndef SKINNER_TEST_MINATAR_REPLAY_H
#define SKINNER_TEST_MINATAR_REPLAY_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <time.h>

#include "minatar/minatar.h"
#include "minatar_trace.h"
#include "test_util.h"

/* The first cells where got and want differ, "(y,x,c) got/want" each, into text. */
static inline void minatar_describe_cells(const uint8_t *got, const uint8_t *want, int channels,
                                          char *text, size_t size) {
    size_t used = 0;
    int shown = 0;
    text[0] = '\0';
    for (int k = 0; k < MINATAR_SIDE * MINATAR_SIDE * channels && shown < 8; k++) {
        if (got[k] == want[k]) continue;
        int c = k % channels, x = k / channels % MINATAR_SIDE, y = k / channels / MINATAR_SIDE;
        int wrote = snprintf(text + used, size - used, " (y%d,x%d,c%d) %d/%d", y, x, c, got[k],
                             want[k]);
        if (wrote < 0 || (size_t)wrote >= size - used) break;
        used += (size_t)wrote;
        shown++;
    }
}

/* Checks the game's state against want; fails naming the file, the step and what. */
static inline void minatar_expect_state(const minatar_game_ops *ops, const void *game,
                                        const uint8_t *want, const char *path, int step,
                                        const char *when) {
    uint8_t got[MINATAR_SIDE * MINATAR_SIDE * MINATAR_MAX_CHANNELS];
    ops->observe(game, got);
    size_t cells = (size_t)(MINATAR_SIDE * MINATAR_SIDE * ops->channels);
    if (memcmp(got, want, cells) != 0) {
        char cells_text[512];
        minatar_describe_cells(got, want, ops->channels, cells_text, sizeof cells_text);
        fail_msg("%s: step %d, state %s differs (got/want):%s", path, step, when, cells_text);
    }
}

/* A new game of ops (freed by the caller) on rng seeded with seed: MinAtar's
 * Environment(...); seed(seed); reset(). */
static inline void *minatar_start_game(const minatar_game_ops *ops, minatar_rng *rng,
                                       uint32_t seed, bool ramping) {
    void *game = calloc(1, ops->state_size);
    assert_non_null(game);
    minatar_rng_seed(rng, seed);
    ops->init(game, ramping);
    ops->reset(game, rng);
    return game;
}

/* Replays file NAME of ../shared/reference/minatar (skipped loudly without ../shared,
 * a failure under CI) through ops; returns the number of steps replayed. */
static inline int minatar_replay(const minatar_game_ops *ops, const char *name) {
    REQUIRE_SHARED(shared);
    char path[4200];
    snprintf(path, sizeof path, "%s/reference/minatar/%s", shared, name);
    minatar_trace trace;
    if (!minatar_trace_load(path, &trace)) fail_msg("cannot load %s", path);
    assert_string_equal(trace.game, ops->name);
    assert_int_equal(trace.channels, ops->channels);
    minatar_rng rng;
    void *game = minatar_start_game(ops, &rng, trace.seed, trace.ramping);
    minatar_expect_state(ops, game, trace.obs0, path, -1, "after the first reset");
    int last_action = 0;
    for (int t = 0; t < trace.num_steps; t++) {
        const minatar_trace_step *step = &trace.steps[t];
        int action = minatar_sticky(&rng, trace.sticky, &last_action, step->action);
        if (action != step->effective)
            fail_msg("%s: step %d: applied action %d, MinAtar applied %d", path, t, action,
                     step->effective);
        bool terminal = false;
        float reward = ops->act(game, &rng, action, &terminal);
        if ((double)reward != step->reward || terminal != step->terminal)
            fail_msg("%s: step %d (action %d): reward %g terminal %d, MinAtar %g %d", path, t,
                     action, (double)reward, terminal, step->reward, step->terminal);
        minatar_expect_state(ops, game, step->obs, path, t, "after the step");
        if (step->reset) {
            ops->reset(game, &rng);
            minatar_expect_state(ops, game, step->obs_after_reset, path, t, "after the reset");
        }
    }
    int replayed = trace.num_steps;
    free(game);
    minatar_trace_free(&trace);
    return replayed;
}

/* One trace of a game as a cmocka case: MINATAR_REPLAY_CASE(name) runs
 * minatar_replay on the minatar_trace_case `name` and expects all its steps. */
typedef struct minatar_trace_case {
    const minatar_game_ops *ops;
    const char *file;
    int steps; /* 3,000, or 6,000 for a _biased trace (README there) */
} minatar_trace_case;

static inline void minatar_test_replay(void **state) {
    const minatar_trace_case *trace = *state;
    assert_int_equal(minatar_replay(trace->ops, trace->file), trace->steps);
}

#define MINATAR_REPLAY_CASE(trace)                                                                 \
    {"test_replay_" #trace, minatar_test_replay, NULL, NULL, &(trace)}

/* act() with each of the six actions on a game that is over: each returns 0 and terminal
 * and changes neither the game nor the stream (MinAtar's act() on a terminal game). */
static inline void minatar_expect_over_unchanged(const minatar_game_ops *ops, void *game,
                                                 minatar_rng *rng) {
    void *before = malloc(ops->state_size);
    assert_non_null(before);
    for (int action = 0; action < MINATAR_NUM_ACTIONS; action++) {
        memcpy(before, game, ops->state_size);
        minatar_rng rng_before = *rng;
        bool terminal = false;
        float reward = ops->act(game, rng, action, &terminal);
        assert_true(reward == 0.0f);
        assert_true(terminal);
        assert_memory_equal(before, game, ops->state_size);
        assert_memory_equal(&rng_before, rng, sizeof *rng);
    }
    free(before);
}

/* Prints the single-core speed of act() over steps uniform random actions (drawn
 * beforehand) through the sticky rule (p = 0.1), resetting at each end, as MinAtar's
 * Python figure python_speed (rules/00_common.md) was measured. Printed, not asserted. */
static inline void minatar_print_speed(const minatar_game_ops *ops, int steps,
                                       const char *python_speed) {
    uint8_t *actions = malloc((size_t)steps);
    void *game = calloc(1, ops->state_size);
    assert_non_null(actions);
    assert_non_null(game);
    minatar_rng rng;
    minatar_rng_seed(&rng, 1);
    for (int t = 0; t < steps; t++)
        actions[t] = (uint8_t)minatar_rng_randint(&rng, 0, MINATAR_NUM_ACTIONS);
    minatar_rng_seed(&rng, 0);
    ops->init(game, true);
    ops->reset(game, &rng);
    int last_action = 0, episodes = 0;
    double total_reward = 0.0;
    struct timespec start, stop;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int t = 0; t < steps; t++) {
        bool terminal = false;
        int action = minatar_sticky(&rng, 0.1, &last_action, actions[t]);
        total_reward += (double)ops->act(game, &rng, action, &terminal);
        if (terminal) {
            ops->reset(game, &rng);
            episodes++;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &stop);
    double elapsed =
        (double)(stop.tv_sec - start.tv_sec) + 1e-9 * (double)(stop.tv_nsec - start.tv_nsec);
    printf("%s: %d random acts in %.3f s, %.0f acts/s on one core (MinAtar's Python: %s); "
           "%d episodes, return per step %.4f\n",
           ops->name, steps, elapsed, steps / elapsed, python_speed, episodes,
           total_reward / steps);
    free(game);
    free(actions);
}

#endif /* SKINNER_TEST_MINATAR_REPLAY_H */
