/*
 * MinAtar's Seaquest (seaquest.c): the state of one game, plain data, open so that
 * tests/test_minatar_validate.c can tamper with each field. A checkpoint saves it as bytes.
 * The lists' capacities are the game's maxima (derived in seaquest.c).
 */
#ifndef SKINNER_MINATAR_SEAQUEST_H
#define SKINNER_MINATAR_SEAQUEST_H

#include "minatar.h"

/* Seaquest's facts, stated once here: the observation's channels (10x10x10) and MinAtar's minimal
 * action set, ascending (the -v1 id's actions). seaquest.c's ops and env.c's tables read them. */
#define MINATAR_SEAQUEST_CHANNELS 10
#define MINATAR_SEAQUEST_MINIMAL_ACTIONS MINATAR_NOOP, MINATAR_LEFT, MINATAR_UP, MINATAR_RIGHT, MINATAR_DOWN, MINATAR_FIRE

#define SEAQUEST_MAX_ENEMIES 64
#define SEAQUEST_MAX_ENEMY_BULLETS 80
#define SEAQUEST_MAX_FRIENDLY_BULLETS 4
#define SEAQUEST_MAX_DIVER_OBJECTS 4

/* One of MinAtar's list items: a bullet [x, y, dir], a fish or diver [x, y, lr, move_t], a
 * sub [x, y, lr, move_t, shot_t]. Unused fields stay 0, so equality over all fields is
 * Python's list equality. right: moving (or facing) toward larger x. */
typedef struct seaquest_object {
    int8_t x, y; /* x in -1..10 for the frame it leaves the board */
    int8_t right;
    int8_t move_timer; /* 0..INIT_MOVE_INTERVAL */
    int8_t shot_timer; /* 0..ENEMY_SHOT_INTERVAL */
} seaquest_object;
_Static_assert(sizeof(seaquest_object) == 5, "an item is 5 bytes: a game's state is ~1.1 KB");

typedef struct seaquest_state {
    seaquest_object friendly_bullets[SEAQUEST_MAX_FRIENDLY_BULLETS];
    seaquest_object enemy_bullets[SEAQUEST_MAX_ENEMY_BULLETS];
    seaquest_object fish[SEAQUEST_MAX_ENEMIES];
    seaquest_object subs[SEAQUEST_MAX_ENEMIES];
    seaquest_object divers[SEAQUEST_MAX_DIVER_OBJECTS];
    int32_t num_friendly_bullets, num_enemy_bullets, num_fish, num_subs, num_divers;
    int32_t oxygen;
    int32_t diver_count; /* -1 after a full surfacing: MinAtar's quirk */
    int32_t sub_x, sub_y;
    int32_t sub_right; /* facing right */
    int32_t enemy_spawn_speed, enemy_spawn_timer, diver_spawn_timer;
    int32_t move_speed, ramp_index, shot_timer;
    bool surface;
    bool terminal;
    bool ramping;
} seaquest_state;

#endif /* SKINNER_MINATAR_SEAQUEST_H */
