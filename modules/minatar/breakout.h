/*
 * MinAtar's Breakout (breakout.c): the state of one game, plain data, open so that
 * tests/test_minatar_validate.c can tamper with each field. A checkpoint saves it as bytes.
 */
#ifndef SKINNER_MINATAR_BREAKOUT_H
#define SKINNER_MINATAR_BREAKOUT_H

#include "minatar.h"

/* Breakout's facts, stated once here: the observation's channels (10x10x4) and MinAtar's minimal
 * action set, ascending (the -v1 id's actions). breakout.c's ops and env.c's tables read them. */
#define MINATAR_BREAKOUT_CHANNELS 4
#define MINATAR_BREAKOUT_MINIMAL_ACTIONS MINATAR_NOOP, MINATAR_LEFT, MINATAR_RIGHT

typedef struct breakout_state {
    /* the whole board, as MinAtar's brick_map; bricks stand only in rows 1-3 */
    uint8_t bricks[MINATAR_SIDE][MINATAR_SIDE]; /* [y][x], 1 = brick */
    /* the ones in bricks, kept as they change: MinAtar counts them at each bottom-row visit */
    int32_t bricks_left;
    int32_t ball_x, ball_y, ball_direction;
    int32_t last_x, last_y; /* the ball's cell before the last step: the trail */
    int32_t paddle_x;
    bool strike;  /* the ball hit a brick on the previous step and has not left bricks since */
    bool terminal;
    bool ramping; /* kept as MinAtar keeps it; Breakout has no ramping */
} breakout_state;

#endif /* SKINNER_MINATAR_BREAKOUT_H */
