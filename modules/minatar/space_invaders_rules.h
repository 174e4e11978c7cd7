/*
 * MinAtar's Space Invaders: the rules of a frame (reset, act and their helpers), shared by
 * space_invaders.c and space_invaders_vbmi.c, which compile the batch step with them inlined,
 * each at its own ISA level. static inline, so each file compiles its own copy.
 */
#ifndef SKINNER_MINATAR_SPACE_INVADERS_RULES_H
#define SKINNER_MINATAR_SPACE_INVADERS_RULES_H

#include "space_invaders.h"

#include "minatar_batch.h"


enum {
    SI_CHANNEL_CANNON,
    SI_CHANNEL_ALIEN,
    SI_CHANNEL_ALIEN_LEFT,  /* every alien, while the block marches left */
    SI_CHANNEL_ALIEN_RIGHT, /* every alien, while the block marches right */
    SI_CHANNEL_FRIENDLY_BULLET,
    SI_CHANNEL_ENEMY_BULLET,
    SI_NUM_CHANNELS
};
_Static_assert(SI_NUM_CHANNELS == MINATAR_SPACE_INVADERS_CHANNELS,
               "space_invaders.h states the channels");

#define SI_BOTTOM_ROW (MINATAR_SIDE - 1)      /* the cannon's row */
#define SI_RIGHT_COLUMN (MINATAR_SIDE - 1)
#define SI_ROW_MASK ((1u << MINATAR_SIDE) - 1) /* the ten cells of a row */
#define SI_CANNON_START 5
#define SI_SHOT_COOL_DOWN 5       /* frames between the cannon's shots */
#define SI_ENEMY_MOVE_INTERVAL 12 /* frames between alien moves, at the start */
#define SI_ENEMY_MOVE_FASTEST 6   /* ramping stops once the interval is down to this */
#define SI_ENEMY_SHOT_INTERVAL 10 /* frames between alien shots */
/* A wave: rows 0..3, columns 2..7 (24 aliens) */
#define SI_WAVE_ROWS 4
#define SI_WAVE_COLUMNS (((1u << 8) - 1) & ~((1u << 2) - 1))

static inline void si_fill_wave(space_invaders *game) {
    for (int y = 0; y < SI_WAVE_ROWS; y++) game->aliens[y] = (uint16_t)SI_WAVE_COLUMNS;
}

static inline void si_reset(void *state, minatar_rng *rng) {
    (void)rng; /* MinAtar's reset draws nothing */
    space_invaders *game = state;
    bool ramping = game->ramping;
    *game = (space_invaders){
        .cannon = SI_CANNON_START,
        .alien_dir = -1,
        .move_interval = SI_ENEMY_MOVE_INTERVAL,
        .move_timer = SI_ENEMY_MOVE_INTERVAL,
        .shot_timer = SI_ENEMY_SHOT_INTERVAL,
        .ramping = ramping,
    };
    si_fill_wave(game);
}

/* The columns holding at least one cell of a map, as bits. */
static inline unsigned si_columns(const uint16_t rows[MINATAR_SIDE]) {
    unsigned columns = 0;
    for (int y = 0; y < MINATAR_SIDE; y++) columns |= rows[y];
    return columns;
}

static inline int si_count(const uint16_t rows[MINATAR_SIDE]) {
    int count = 0;
    for (int y = 0; y < MINATAR_SIDE; y++) count += __builtin_popcount(rows[y]);
    return count;
}

/* The aliens' march: sideways, or down one row (and turn) at a wall. */
static inline void si_move_aliens(space_invaders *game) {
    int alien_count = si_count(game->aliens);
    game->move_timer = alien_count < game->move_interval ? alien_count : game->move_interval;
    unsigned columns = si_columns(game->aliens);
    bool at_left_wall = (columns & 1u) && game->alien_dir < 0;
    bool at_right_wall = (columns & (1u << SI_RIGHT_COLUMN)) && game->alien_dir > 0;
    if (at_left_wall || at_right_wall) {
        game->alien_dir = -game->alien_dir;
        if (game->aliens[SI_BOTTOM_ROW]) game->terminal = true;
        /* MinAtar rolls the map: the bottom row comes back as the top row */
        uint16_t bottom = game->aliens[SI_BOTTOM_ROW];
        for (int y = SI_BOTTOM_ROW; y > 0; y--) game->aliens[y] = game->aliens[y - 1];
        game->aliens[0] = bottom;
    } else {
        /* a roll too in MinAtar, but the leading column is empty, so nothing wraps */
        for (int y = 0; y < MINATAR_SIDE; y++) {
            unsigned row = game->aliens[y];
            row = game->alien_dir < 0 ? row >> 1 : row << 1;
            game->aliens[y] = (uint16_t)(row & SI_ROW_MASK);
        }
    }
    if (game->aliens[SI_BOTTOM_ROW] & (1u << game->cannon)) game->terminal = true;
}

/* The aliens' shot: from the lowest alien of the column nearest the cannon (of two at the
 * same distance, the left one), starting on that alien's own cell. */
static inline void si_alien_shoots(space_invaders *game) {
    unsigned columns = si_columns(game->aliens);
    for (int distance = 0; distance < MINATAR_SIDE; distance++) {
        const int candidates[2] = {game->cannon - distance, game->cannon + distance};
        for (int k = 0; k < (distance ? 2 : 1); k++) {
            int x = candidates[k];
            if (x < 0 || x >= MINATAR_SIDE || !(columns & (1u << x))) continue;
            int y = SI_BOTTOM_ROW;
            while (!(game->aliens[y] & (1u << x))) y--;
            game->enemy_bullets[y] |= (uint16_t)(1u << x);
            return;
        }
    }
}

static inline float si_act(void *state, minatar_rng *rng, int action, bool *terminal) {
    (void)rng; /* the game draws nothing */
    space_invaders *game = state;
    if (game->terminal) {
        *terminal = true;
        return 0.0f;
    }
    int reward = 0;
    /* the cannon: fire when cooled down, otherwise (or for any other action) move */
    if (action == MINATAR_FIRE && game->cool_down == 0) {
        game->friendly_bullets[SI_BOTTOM_ROW] |= (uint16_t)(1u << game->cannon);
        game->cool_down = SI_SHOT_COOL_DOWN;
    } else if (action == MINATAR_LEFT && game->cannon > 0) {
        game->cannon--;
    } else if (action == MINATAR_RIGHT && game->cannon < SI_RIGHT_COLUMN) {
        game->cannon++;
    }
    /* bullets: the cannon's move up (off the top, gone), the aliens' down (off the bottom) */
    for (int y = 0; y < SI_BOTTOM_ROW; y++)
        game->friendly_bullets[y] = game->friendly_bullets[y + 1];
    game->friendly_bullets[SI_BOTTOM_ROW] = 0;
    for (int y = SI_BOTTOM_ROW; y > 0; y--) game->enemy_bullets[y] = game->enemy_bullets[y - 1];
    game->enemy_bullets[0] = 0;
    unsigned cannon_bit = 1u << game->cannon;
    if (game->enemy_bullets[SI_BOTTOM_ROW] & cannon_bit) game->terminal = true;
    if (game->aliens[SI_BOTTOM_ROW] & cannon_bit) game->terminal = true;
    /* the aliens move, then shoot, each on its timer */
    if (game->move_timer == 0) si_move_aliens(game);
    if (game->shot_timer == 0) {
        game->shot_timer = SI_ENEMY_SHOT_INTERVAL;
        si_alien_shoots(game);
    }
    /* hits: only cells where a bullet and an alien end the frame together (a bullet and an
     * alien that swap cells pass through each other, as in MinAtar) */
    for (int y = 0; y < MINATAR_SIDE; y++) {
        uint16_t hits = game->aliens[y] & game->friendly_bullets[y];
        reward += __builtin_popcount(hits);
        game->aliens[y] &= (uint16_t)~hits;
        game->friendly_bullets[y] &= (uint16_t)~hits;
    }
    if (game->cool_down > 0) game->cool_down--;
    game->move_timer--;
    game->shot_timer--;
    /* a cleared wave: a new one (direction and timers kept), faster with ramping */
    if (si_count(game->aliens) == 0) {
        if (game->move_interval > SI_ENEMY_MOVE_FASTEST && game->ramping) {
            game->move_interval--;
            game->ramp_index++;
        }
        si_fill_wave(game);
    }
    *terminal = game->terminal;
    return (float)reward;
}

/* space_invaders_vbmi.c's, for the VBMI table of space_invaders.c (x86-64 only). */
void minatar_si_observe_vbmi(const void *state, uint8_t *obs);
void minatar_si_step_vbmi(const minatar_batch *batch, const sk_env_io *io, int lo, int hi);

#endif /* SKINNER_MINATAR_SPACE_INVADERS_RULES_H */
