/*
 * MinAtar's Breakout (minatar/environments/breakout.py, MinAtar 1.0.15), rules restated in
 * ../shared/reference/minatar/rules/breakout.md and checked bit for bit against MinAtar's
 * recorded traces (tests/test_minatar_breakout.c).
 *
 * A paddle on the bottom row, a ball moving diagonally one cell a step, three rows of bricks.
 * A brick hit is +1 and bounces the ball back; the wall of bricks comes back when the ball
 * reaches the bottom row with none left; the game ends when the paddle misses the ball.
 * No difficulty ramping and no time limit. The only draw is reset's side for the ball.
 *
 * MinAtar's quirks kept here:
 * - After a brick hit the ball is "striking" for as long as its next cell is a brick: a second
 *   brick hit in a row scores nothing, and the ball moves into that brick, which stays.
 * - A ball on a side wall that turns into a brick takes the wall bounce and the brick bounce
 *   in one step (both components flip).
 * - The paddle moves before the ball, and the bounce tests the ball's OLD column against the
 *   paddle's NEW column (straight bounce) before the ball's new column (a corner hit, which
 *   reverses both components).
 * - The missed ball stays drawn on the bottom row of the final state.
 */
#include "breakout.h"

#include "minatar_batch.h"

#include <string.h>

#define CHANNEL_PADDLE 0
#define CHANNEL_BALL 1
#define CHANNEL_TRAIL 2 /* the ball's cell before the last step */
#define CHANNEL_BRICK 3
#define NUM_CHANNELS MINATAR_BREAKOUT_CHANNELS

#define LAST_CELL (MINATAR_SIDE - 1)
#define PADDLE_ROW LAST_CELL
#define PADDLE_START 4
#define BALL_START_ROW 3
#define BRICK_FIRST_ROW 1
#define BRICK_LAST_ROW 3
#define NUM_BRICKS ((BRICK_LAST_ROW - BRICK_FIRST_ROW + 1) * MINATAR_SIDE)

/* Ball directions, MinAtar's numbering, and their steps. */
enum { UP_LEFT, UP_RIGHT, DOWN_RIGHT, DOWN_LEFT, NUM_DIRECTIONS };
static const int direction_dx[NUM_DIRECTIONS] = {-1, +1, +1, -1};
static const int direction_dy[NUM_DIRECTIONS] = {-1, -1, +1, +1};
static const int flip_x[NUM_DIRECTIONS] = {UP_RIGHT, UP_LEFT, DOWN_LEFT, DOWN_RIGHT};
static const int flip_y[NUM_DIRECTIONS] = {DOWN_LEFT, DOWN_RIGHT, UP_RIGHT, UP_LEFT};
static const int flip_both[NUM_DIRECTIONS] = {DOWN_RIGHT, DOWN_LEFT, UP_LEFT, UP_RIGHT};

static void breakout_init(void *game, bool ramping) {
    breakout_state *state = game;
    memset(state, 0, sizeof *state);
    state->ramping = ramping;
}

/* The three rows of bricks, all standing. */
static void fill_bricks(breakout_state *state) {
    for (int y = BRICK_FIRST_ROW; y <= BRICK_LAST_ROW; y++)
        memset(state->bricks[y], 1, MINATAR_SIDE);
    state->bricks_left = NUM_BRICKS;
}

static void breakout_reset(void *game, minatar_rng *rng) {
    breakout_state *state = game;
    /* the ball starts on row 3 at the left wall heading down-right, or the right wall
     * heading down-left: randint(2), MinAtar's one draw */
    state->ball_y = BALL_START_ROW;
    if (minatar_rng_randint(rng, 0, 2) == 0) {
        state->ball_x = 0;
        state->ball_direction = DOWN_RIGHT;
    } else {
        state->ball_x = LAST_CELL;
        state->ball_direction = DOWN_LEFT;
    }
    state->paddle_x = PADDLE_START;
    memset(state->bricks, 0, sizeof state->bricks);
    fill_bricks(state);
    state->strike = false;
    state->last_x = state->ball_x;
    state->last_y = state->ball_y;
    state->terminal = false;
}

static float breakout_act(void *game, minatar_rng *rng, int action, bool *terminal) {
    (void)rng; /* Breakout draws nothing after reset */
    breakout_state *state = game;
    float reward = 0.0f;
    if (state->terminal) {
        *terminal = true;
        return 0.0f;
    }

    /* the paddle moves first; up, down and fire do nothing */
    if (action == MINATAR_LEFT && state->paddle_x > 0) state->paddle_x--;
    else if (action == MINATAR_RIGHT && state->paddle_x < LAST_CELL) state->paddle_x++;

    /* the ball's next cell */
    state->last_x = state->ball_x;
    state->last_y = state->ball_y;
    int direction = state->ball_direction;
    int next_x = state->ball_x + direction_dx[direction];
    int next_y = state->ball_y + direction_dy[direction];
    bool strike_toggle = false;

    /* a side wall: the ball stays in the column, horizontal motion reverses */
    if (next_x < 0 || next_x > LAST_CELL) {
        next_x = next_x < 0 ? 0 : LAST_CELL;
        direction = flip_x[direction];
    }

    if (next_y < 0) {
        /* the ceiling: vertical motion reverses */
        next_y = 0;
        direction = flip_y[direction];
    } else if (state->bricks[next_y][next_x]) {
        /* a brick: the first in a row breaks, scores and bounces the ball back to its row;
         * while striking, the ball passes into the brick and nothing else happens */
        strike_toggle = true;
        if (!state->strike) {
            reward += 1.0f;
            state->strike = true;
            state->bricks[next_y][next_x] = 0;
            state->bricks_left--;
            next_y = state->last_y;
            direction = flip_y[direction];
        }
    } else if (next_y == PADDLE_ROW) {
        /* the bottom row: a cleared wall comes back, then the paddle bounces or misses */
        if (state->bricks_left == 0) fill_bricks(state);
        if (state->ball_x == state->paddle_x) {
            direction = flip_y[direction];
            next_y = state->last_y;
        } else if (next_x == state->paddle_x) {
            direction = flip_both[direction];
            next_y = state->last_y;
        } else {
            state->terminal = true;
        }
    }
    if (!strike_toggle) state->strike = false;

    state->ball_x = next_x;
    state->ball_y = next_y;
    state->ball_direction = direction;
    *terminal = state->terminal;
    return reward;
}

/* Rows 1-3 are written whole, a cell (its four channels) a 32-bit word: the brick byte in its
 * channel's place and zeros in the others (the rows are contiguous in bricks and in obs: one
 * loop of 30 cells, which vectorises); the rows around them are cleared; then the paddle, ball
 * and trail cells are set (the ball and trail may lie in the brick rows). */
static void breakout_observe(const void *game, uint8_t *obs) {
    const breakout_state *state = game;
    enum { ROW_BYTES = MINATAR_SIDE * NUM_CHANNELS, BRICK_SHIFT = 8 * CHANNEL_BRICK };
    _Static_assert(NUM_CHANNELS == sizeof(uint32_t), "a cell is one 32-bit word");
    _Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "channel c is byte c of the word");
    memset(obs, 0, BRICK_FIRST_ROW * ROW_BYTES);
    const uint8_t *bricks = (const uint8_t *)state->bricks + BRICK_FIRST_ROW * MINATAR_SIDE;
    uint8_t *cells = obs + BRICK_FIRST_ROW * ROW_BYTES;
    for (int k = 0; k < NUM_BRICKS; k++) {
        uint32_t cell = (uint32_t)bricks[k] << BRICK_SHIFT;
        memcpy(cells + k * NUM_CHANNELS, &cell, sizeof cell);
    }
    memset(obs + (BRICK_LAST_ROW + 1) * ROW_BYTES, 0,
           (size_t)(MINATAR_SIDE - BRICK_LAST_ROW - 1) * ROW_BYTES);
#define CELL(y, x, channel) obs[((y) * MINATAR_SIDE + (x)) * NUM_CHANNELS + (channel)]
    CELL(state->ball_y, state->ball_x, CHANNEL_BALL) = 1;
    CELL(PADDLE_ROW, state->paddle_x, CHANNEL_PADDLE) = 1;
    CELL(state->last_y, state->last_x, CHANNEL_TRAIL) = 1;
#undef CELL
}

/* The ball's next row is read from bricks before any test, so a live ball stays above the paddle
 * row; only the missed ball of a finished game lies on it. */
static bool breakout_validate(const void *game, char *why, size_t why_size) {
    const breakout_state *state = game;
    int32_t bricks = 0;
    char what[32];
    for (int y = 0; y < MINATAR_SIDE; y++) {
        bool brick_row = y >= BRICK_FIRST_ROW && y <= BRICK_LAST_ROW;
        for (int x = 0; x < MINATAR_SIDE; x++) {
            snprintf(what, sizeof what, "bricks[%d][%d]", y, x);
            if (!minatar_check_range(what, state->bricks[y][x], 0, brick_row ? 1 : 0, why,
                                     why_size))
                return false;
            bricks += state->bricks[y][x];
        }
    }
    if (!minatar_check_flag("terminal", &state->terminal, why, why_size)) return false;
    unsigned char terminal;
    memcpy(&terminal, &state->terminal, 1);
    return minatar_check_range("bricks_left", state->bricks_left, bricks, bricks, why,
                               why_size) &&
           minatar_check_range("ball_x", state->ball_x, 0, LAST_CELL, why, why_size) &&
           minatar_check_range("ball_y", state->ball_y, 0, terminal ? LAST_CELL : PADDLE_ROW - 1,
                               why, why_size) &&
           minatar_check_range("ball_direction", state->ball_direction, 0, NUM_DIRECTIONS - 1,
                               why, why_size) &&
           minatar_check_range("last_x", state->last_x, 0, LAST_CELL, why, why_size) &&
           minatar_check_range("last_y", state->last_y, 0, LAST_CELL, why, why_size) &&
           minatar_check_range("paddle_x", state->paddle_x, 0, LAST_CELL, why, why_size) &&
           minatar_check_flag("strike", &state->strike, why, why_size) &&
           minatar_check_flag("ramping", &state->ramping, why, why_size);
}

MINATAR_BATCH_STEP(breakout_step, breakout_state, breakout_act, breakout_observe, breakout_reset)

const minatar_game_ops minatar_breakout = {
    .name = "breakout",
    .channels = NUM_CHANNELS,
    .state_size = sizeof(breakout_state),
    .init = breakout_init,
    .reset = breakout_reset,
    .act = breakout_act,
    .observe = breakout_observe,
    .step = breakout_step,
    .num_minimal_actions = MINATAR_COUNT(MINATAR_BREAKOUT_MINIMAL_ACTIONS),
    .minimal_actions = {MINATAR_BREAKOUT_MINIMAL_ACTIONS},
    .validate = breakout_validate,
};
