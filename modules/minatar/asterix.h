/*
 * MinAtar's Asterix (asterix.c): the state of one game, plain data, public so
 * that a test can set up the states MinAtar's recorded traces never reach
 * (all slots full at a spawn, the later difficulty ramps).
 */
#ifndef SKINNER_MINATAR_ASTERIX_H
#define SKINNER_MINATAR_ASTERIX_H

#include "minatar.h"

/* Asterix's facts, stated once here: the observation's channels (10x10x4) and MinAtar's minimal
 * action set, ascending (the -v1 id's actions). asterix.c's ops and env.c's tables read them. */
#define MINATAR_ASTERIX_CHANNELS 4
#define MINATAR_ASTERIX_MINIMAL_ACTIONS MINATAR_NOOP, MINATAR_LEFT, MINATAR_UP, MINATAR_RIGHT, MINATAR_DOWN

/* One entity slot per row the player can reach: slot i lives on row i + 1
 * (rows 0 and 9 are out of the player's range), so 8 slots are MinAtar's
 * maximum by construction: a spawn into a full set of slots is dropped. */
#define ASTERIX_SLOTS 8

typedef struct asterix_entity {
    bool present;
    bool moving_right; /* MinAtar's lr: enters at x 0 and moves right */
    bool gold;         /* else an enemy */
    int8_t x;          /* its row is its slot + 1 */
} asterix_entity;

typedef struct asterix_game {
    bool ramping; /* kept by reset (set at construction) */
    bool terminal;
    int32_t player_x, player_y;
    asterix_entity entities[ASTERIX_SLOTS];
    int32_t spawn_speed, spawn_timer; /* frames between spawns, frames to the next */
    int32_t move_speed, move_timer;   /* frames between moves, frames to the next */
    int32_t ramp_timer, ramp_index;   /* frames to the next ramp, ramps so far */
} asterix_game;

#endif /* SKINNER_MINATAR_ASTERIX_H */
