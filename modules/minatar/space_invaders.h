/*
 * MinAtar's Space Invaders (space_invaders.c): the state of one game, open so
 * that tests can set up the positions MinAtar's recorded traces never reach (a
 * cleared wave, aliens stepping down onto the bottom row). Plain data: a
 * checkpoint saves it as bytes.
 */
#ifndef SKINNER_MINATAR_SPACE_INVADERS_H
#define SKINNER_MINATAR_SPACE_INVADERS_H

#include "minatar.h"

/* SpaceInvaders's facts, stated once here: the observation's channels (10x10x6) and MinAtar's minimal
 * action set, ascending (the -v1 id's actions). space_invaders.c's ops and env.c's tables read them. */
#define MINATAR_SPACE_INVADERS_CHANNELS 6
#define MINATAR_SPACE_INVADERS_MINIMAL_ACTIONS MINATAR_NOOP, MINATAR_LEFT, MINATAR_RIGHT, MINATAR_FIRE

typedef struct space_invaders {
    /* Each 10x10 map is ten rows of bits, bit x of row y being cell (y, x): a map holds any
     * number of aliens or bullets, so no list and no bound to keep. */
    uint16_t aliens[MINATAR_SIDE];           /* (y) */
    uint16_t friendly_bullets[MINATAR_SIDE]; /* (y) */
    uint16_t enemy_bullets[MINATAR_SIDE];    /* (y) */
    int32_t cannon;        /* the cannon's column on the bottom row, 0..9 */
    int32_t alien_dir;     /* -1 marching left, +1 right */
    int32_t move_interval; /* the alien move period while that many aliens or more are left */
    int32_t move_timer;    /* frames until the aliens move (0: this frame) */
    int32_t shot_timer;    /* frames until the aliens shoot (0: this frame) */
    int32_t cool_down;     /* frames until the cannon may shoot again */
    int32_t ramp_index;    /* waves that made the game faster (MinAtar's difficulty_ramp()) */
    bool ramping;          /* construction setting: cleared waves speed the aliens up */
    bool terminal;
} space_invaders;

#endif /* SKINNER_MINATAR_SPACE_INVADERS_H */
