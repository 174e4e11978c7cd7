/*
 * MinAtar's Freeway (MinAtar 1.0.15, minatar/environments/freeway.py; rules
 * restated in ../shared/reference/minatar/rules/freeway.md, checked against
 * MinAtar's recorded traces by tests/test_minatar_freeway.c).
 *
 * A chicken in column 4 crosses ten rows from the bottom (row 9) to the top
 * (row 0) through eight lanes of cars (rows 1..8), one car per lane. It may
 * step up or down once every few frames; a car on its cell sends it back to
 * the bottom. Each crossing scores +1 and draws new car speeds (the cars keep
 * their columns). The game ends only on its time limit: exactly 2,501 act()
 * calls. Freeway has no difficulty ramping.
 *
 * Observation channels: 0 chicken, 1 car, 2..6 a car's trail (the cell behind
 * it) for speeds 1..5. A car of speed s moves one column every s + 1 frames.
 */
#include "freeway.h"

#include "minatar_batch.h"

#include <string.h>

#define CHANNEL_CHICKEN 0
#define CHANNEL_CAR 1
#define CHANNEL_TRAIL_BASE 1 /* a car of speed s leaves its trail in channel 1 + |s| */
#define NUM_CHANNELS MINATAR_FREEWAY_CHANNELS

#define NUM_CARS FREEWAY_CARS
#define CHICKEN_COLUMN 4      /* the chicken never leaves this column */
#define CHICKEN_START_ROW 9   /* the bottom row; back here after a crossing or a hit */
#define GOAL_ROW 0            /* reaching it scores and starts a new crossing */
#define PLAYER_SPEED 3        /* frames between two moves of the chicken */
#define TIME_LIMIT 2500       /* act() calls before the game ends, less one (see act) */
#define MIN_CAR_SPEED 1       /* speeds are randint(1, 6): 1..5 */
#define MAX_CAR_SPEED_EXCLUSIVE 6


/* numpy's sign() on a double: -1, 0 or +1. */
static int32_t sign_of(double value) { return (value > 0.0) - (value < 0.0); }

static int32_t sign_of_int(int32_t value) { return (value > 0) - (value < 0); }

/* New speeds and directions for every car, drawn as MinAtar's randomize_cars:
 * randint(1, 6, size=8) (8 integer draws), then sign(rand(8) - 0.5) (8 doubles).
 * A new game also places every car at column 0 of its lane; a crossing keeps
 * each car's column and changes only its speed and timer. */
static void randomize_cars(freeway_state *state, minatar_rng *rng, bool place) {
    int32_t speeds[NUM_CARS];
    for (int i = 0; i < NUM_CARS; i++)
        speeds[i] = minatar_rng_randint(rng, MIN_CAR_SPEED, MAX_CAR_SPEED_EXCLUSIVE);
    for (int i = 0; i < NUM_CARS; i++) speeds[i] *= sign_of(minatar_rng_rand(rng) - 0.5);
    for (int i = 0; i < NUM_CARS; i++) {
        freeway_car *car = &state->cars[i];
        if (place) {
            car->x = 0;
            car->y = i + 1;
        }
        car->timer = speeds[i] < 0 ? -speeds[i] : speeds[i];
        car->speed = speeds[i];
    }
}

static void freeway_init(void *game, bool ramping) {
    (void)ramping; /* Freeway has no difficulty ramping */
    memset(game, 0, sizeof(freeway_state));
}

static void freeway_reset(void *game, minatar_rng *rng) {
    freeway_state *state = game;
    randomize_cars(state, rng, true);
    state->chicken_row = CHICKEN_START_ROW;
    state->move_timer = PLAYER_SPEED;
    state->terminate_timer = TIME_LIMIT;
    state->terminal = false;
}

static bool car_on_chicken(const freeway_car *car, int32_t chicken_row) {
    return car->x == CHICKEN_COLUMN && car->y == chicken_row;
}

/* A column that left the board re-enters on the other side. */
static int32_t wrap_column(int32_t x) {
    if (x < 0) return MINATAR_SIDE - 1;
    if (x >= MINATAR_SIDE) return 0;
    return x;
}

static float freeway_act(void *game, minatar_rng *rng, int action, bool *terminal) {
    freeway_state *state = game;
    if (state->terminal) {
        *terminal = true;
        return 0.0f;
    }
    float reward = 0.0f;

    /* The chicken moves one row when its move timer has run out. */
    if (action == MINATAR_UP && state->move_timer == 0) {
        state->move_timer = PLAYER_SPEED;
        if (state->chicken_row > 0) state->chicken_row--;
    } else if (action == MINATAR_DOWN && state->move_timer == 0) {
        state->move_timer = PLAYER_SPEED;
        if (state->chicken_row < MINATAR_SIDE - 1) state->chicken_row++;
    }

    /* A crossing scores, draws new car speeds (16 draws) and starts again at the bottom. */
    if (state->chicken_row == GOAL_ROW) {
        reward += 1.0f;
        randomize_cars(state, rng, false);
        state->chicken_row = CHICKEN_START_ROW;
    }

    /* Cars in lane order: a car on the chicken's cell sends it to the bottom, before and
     * after the car's move; a car moves when its timer has run out, wrapping at the edges. */
    for (int i = 0; i < NUM_CARS; i++) {
        freeway_car *car = &state->cars[i];
        if (car_on_chicken(car, state->chicken_row)) state->chicken_row = CHICKEN_START_ROW;
        if (car->timer == 0) {
            car->timer = car->speed < 0 ? -car->speed : car->speed;
            car->x = wrap_column(car->x + sign_of_int(car->speed));
            if (car_on_chicken(car, state->chicken_row)) state->chicken_row = CHICKEN_START_ROW;
        } else {
            car->timer--;
        }
    }

    /* Timers; the game ends when the time-limit counter goes below zero, which makes an
     * episode exactly TIME_LIMIT + 1 act() calls. */
    if (state->move_timer > 0) state->move_timer--;
    state->terminate_timer--;
    if (state->terminate_timer < 0) state->terminal = true;

    *terminal = state->terminal;
    return reward;
}

/* MinAtar's state(): the chicken, each car, and each car's trail: the cell behind it (the
 * column it came from, wrapped) in the channel of its speed. */
static void freeway_observe(const void *game, uint8_t *obs) {
    const freeway_state *state = game;
    memset(obs, 0, (size_t)(MINATAR_SIDE * MINATAR_SIDE * NUM_CHANNELS));
#define CELL(y, x, c) obs[((y) * MINATAR_SIDE + (x)) * NUM_CHANNELS + (c)]
    CELL(state->chicken_row, CHICKEN_COLUMN, CHANNEL_CHICKEN) = 1;
    for (int i = 0; i < NUM_CARS; i++) {
        const freeway_car *car = &state->cars[i];
        CELL(car->y, car->x, CHANNEL_CAR) = 1;
        int32_t behind = wrap_column(car->speed > 0 ? car->x - 1 : car->x + 1);
        int32_t size = car->speed < 0 ? -car->speed : car->speed;
        CELL(car->y, behind, CHANNEL_TRAIL_BASE + size) = 1;
    }
#undef CELL
}

/* Each car keeps its lane; its speed's size is at most 5 (its trail's channel is 1 + |speed|; 0
 * is MinAtar's car that never moves) and its timer counts down from |speed|. */
static bool freeway_validate(const void *game, char *why, size_t why_size) {
    const freeway_state *state = game;
    char what[32];
    for (int i = 0; i < NUM_CARS; i++) {
        const freeway_car *car = &state->cars[i];
        snprintf(what, sizeof what, "cars[%d].speed", i);
        if (!minatar_check_range(what, car->speed, -(MAX_CAR_SPEED_EXCLUSIVE - 1),
                                 MAX_CAR_SPEED_EXCLUSIVE - 1, why, why_size))
            return false;
        int32_t size = car->speed < 0 ? -car->speed : car->speed;
        snprintf(what, sizeof what, "cars[%d].x", i);
        if (!minatar_check_range(what, car->x, 0, MINATAR_SIDE - 1, why, why_size)) return false;
        snprintf(what, sizeof what, "cars[%d].y", i);
        if (!minatar_check_range(what, car->y, i + 1, i + 1, why, why_size)) return false;
        snprintf(what, sizeof what, "cars[%d].timer", i);
        if (!minatar_check_range(what, car->timer, 0, size, why, why_size)) return false;
    }
    return minatar_check_range("chicken_row", state->chicken_row, 0, MINATAR_SIDE - 1, why,
                               why_size) &&
           minatar_check_range("move_timer", state->move_timer, 0, PLAYER_SPEED, why, why_size) &&
           minatar_check_range("terminate_timer", state->terminate_timer, -1, TIME_LIMIT, why,
                               why_size) &&
           minatar_check_flag("terminal", &state->terminal, why, why_size);
}

MINATAR_BATCH_STEP(freeway_step, freeway_state, freeway_act, freeway_observe, freeway_reset)

const minatar_game_ops minatar_freeway = {
    .name = "freeway",
    .channels = NUM_CHANNELS,
    .state_size = sizeof(freeway_state),
    .init = freeway_init,
    .reset = freeway_reset,
    .act = freeway_act,
    .observe = freeway_observe,
    .step = freeway_step,
    .num_minimal_actions = MINATAR_COUNT(MINATAR_FREEWAY_MINIMAL_ACTIONS),
    .minimal_actions = {MINATAR_FREEWAY_MINIMAL_ACTIONS},
    .validate = freeway_validate,
};
