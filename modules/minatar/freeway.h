/*
 * MinAtar's Freeway (freeway.c): the state of one game, plain data, open so that
 * tests/test_minatar_validate.c can tamper with each field. A checkpoint saves it as bytes.
 */
#ifndef SKINNER_MINATAR_FREEWAY_H
#define SKINNER_MINATAR_FREEWAY_H

#include "minatar.h"

/* Freeway's facts, stated once here: the observation's channels (10x10x7) and MinAtar's minimal
 * action set, ascending (the -v1 id's actions). freeway.c's ops and env.c's tables read them. */
#define MINATAR_FREEWAY_CHANNELS 7
#define MINATAR_FREEWAY_MINIMAL_ACTIONS MINATAR_NOOP, MINATAR_UP, MINATAR_DOWN

#define FREEWAY_CARS 8 /* one car per lane, lanes are rows 1..8 */

/* One lane's car. speed's sign is its direction (+1 right, -1 left); its size
 * the frames a move waits. speed is 0 only if rand() drew exactly 0.5 (numpy's
 * sign(0) = 0): such a car never moves, as in MinAtar. */
typedef struct freeway_car {
    int32_t x, y;  /* column 0..9, row 1..8 (lane i is row i + 1) */
    int32_t timer; /* frames until its next move */
    int32_t speed; /* -5..5 */
} freeway_car;

/* One game: plain data, no pointers. The car count is fixed by the rules (one
 * per lane, never added or removed), so the array is exact, not a bound. */
typedef struct freeway_state {
    freeway_car cars[FREEWAY_CARS];
    int32_t chicken_row;     /* 0..9 */
    int32_t move_timer;      /* frames until the chicken may move again */
    int32_t terminate_timer; /* counts down from TIME_LIMIT; below 0 the game is over */
    bool terminal;
} freeway_state;

#endif /* SKINNER_MINATAR_FREEWAY_H */
