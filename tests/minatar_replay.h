/*
 * Replays one of MinAtar's recorded traces (minatar_trace.h) through a game's
 * table (src/envs/minatar/minatar.h) and fails at the first difference: the
 * applied action, the reward, the terminal flag or any cell of the state after
 * each step and after each reset, naming the file, the step and the cells.
 */
#ifndef SKINNER_TEST_MINATAR_REPLAY_H
#define SKINNER_TEST_MINATAR_REPLAY_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "envs/minatar/minatar.h"
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
    void *game = calloc(1, ops->state_size);
    assert_non_null(game);
    minatar_rng rng;
    minatar_rng_seed(&rng, trace.seed);
    ops->init(game, trace.ramping);
    ops->reset(game, &rng);
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

#endif /* SKINNER_TEST_MINATAR_REPLAY_H */
