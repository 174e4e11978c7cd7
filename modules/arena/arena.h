/*
 * Arena (issue 37 ask 4b): many snakes on one shared map, in the spirit of PufferLib's Ocean
 * snake. Each env is one map of width x height cells walled around, holding num_agents snakes
 * and `food` food items; every agent of a map moves at once.
 *
 * A step of one map, in order:
 *   1. each snake turns to its action (0 up, 1 right, 2 down, 3 left; the reverse of its
 *      heading, into its own neck, keeps the heading) and aims its head at the next cell;
 *   2. each snake that will not grow (no food there, or at max_length) frees its tail cell,
 *      so a head may enter the cell a tail leaves in the same step;
 *   3. a head that enters a wall or any body (its own, another's, another's old head: so two
 *      heads that swap cells both die) dies, and so do all heads that enter one free cell
 *      together;
 *   4. every survivor moves there; one that finds food eats it (+1) and grows by one cell up
 *      to max_length, and a new food appears on a random empty cell, so the count stays;
 *   5. a snake that died (-1, terminated) or lived max_steps steps (truncated) leaves the map
 *      and a new snake of length 1 is born on a random empty cell at once: an agent's
 *      episode is one life, and its row autoresets like a single-agent env's.
 *
 * Observations: each agent sees the (2 vision + 1)^2 cells around its head, channels last,
 * uint8 0/1: ARENA_FOOD, ARENA_BODY (a wall or any snake's cell, heads included) and
 * ARENA_HEAD (the heads, its own at the centre). The map is kept padded by `vision` wall cells
 * on every side in exactly that layout, so an observation is 2 vision + 1 copies of one row.
 *
 * State, struct-of-arrays: the map's cells (num_envs, cells, 3), each agent's body as a ring
 * of cell indices (rows, max_length) with its head's position and length, its heading, its
 * life's steps and return, and one splitmix64 stream per map (skinner/env.h). Rows are
 * env * num_agents + agent. Nothing is allocated after create.
 */
#ifndef SKINNER_ARENA_H
#define SKINNER_ARENA_H

#include <skinner/env.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { ARENA_FOOD, ARENA_BODY, ARENA_HEAD, ARENA_CHANNELS };
enum { ARENA_UP, ARENA_RIGHT, ARENA_DOWN, ARENA_LEFT, ARENA_NUM_ACTIONS };

/* What one agent's episode log holds (sk_env_io.episode_log, per row). */
enum { ARENA_LOG_RETURN, ARENA_LOG_LENGTH, ARENA_LOG_SNAKE_LENGTH, ARENA_LOG_FIELDS };

#define ARENA_MAX_VISION 7
#define ARENA_MAX_VIEW (2 * ARENA_MAX_VISION + 1)
#define ARENA_MAX_OBS_SIZE (ARENA_MAX_VIEW * ARENA_MAX_VIEW * ARENA_CHANNELS)
#define ARENA_MAX_AGENTS 1024
#define ARENA_MAX_SIDE 1024

/* The shape of every map of a batch (env.* keys, arena_settings_read). */
typedef struct arena_settings {
    int num_agents; /* snakes per map */
    int width, height; /* the playable cells, walls not counted */
    int vision;     /* the view's radius: (2 vision + 1)^2 cells */
    int food;       /* food items on a map at all times */
    int max_length; /* a snake's longest body */
    int max_steps;  /* the steps of one life before it is truncated */
} arena_settings;

typedef struct arena {
    arena_settings settings;
    int num_envs;
    int pad_width, pad_height; /* the map with its walls: width + 2 vision, ... */
    size_t cells;              /* pad_width * pad_height */
    int view;                  /* 2 vision + 1 */
    size_t obs_size;           /* view * view * ARENA_CHANNELS */
    int deltas[ARENA_NUM_ACTIONS]; /* a move's change of cell index, by action */
    int ring;                  /* a body ring's slots: max_length rounded up to a power of 2,
                                  so that positions wrap by a mask, not a division */
    const char *id;            /* for check_state's errors */
    /* the state, saved by checkpoints */
    uint8_t *grid;          /* (num_envs, cells, ARENA_CHANNELS) */
    int32_t *body;          /* (rows, ring) cell indices, a ring */
    int32_t *head_at;       /* (rows) the ring position of the head, 0..ring-1 */
    int32_t *length;        /* (rows) cells in the body, 1..max_length */
    int32_t *heading;       /* (rows) the last move, ARENA_UP..ARENA_LEFT */
    int32_t *life_steps;    /* (rows) steps of the current life */
    float *life_return;     /* (rows) its return so far */
    uint64_t *rng;          /* (num_envs) */
    /* scratch of a step, per row so that threads may step disjoint maps at once */
    int32_t *target;        /* (rows) the cell a head enters */
    uint8_t *fate;          /* (rows) ARENA_FATE_* bits */
} arena;

/* fate's bits: the snake's body keeps its tail this step; it dies */
enum { ARENA_FATE_GROWS = 1, ARENA_FATE_DIES = 2 };

/* Reads and checks the env.* keys (with their defaults) into *out. */
sk_status arena_settings_read(const sk_config *cfg, arena_settings *out);
/* Allocates a batch of num_envs maps; NULL-safe destroy. */
sk_status arena_create(arena **out, const arena_settings *settings, int num_envs,
                       const char *id);
void arena_destroy(arena *game);

/* The cell index of playable cell (x, y), 0 <= x < width, 0 <= y < height. */
static inline int32_t arena_cell(const arena *game, int x, int y) {
    return (int32_t)((y + game->settings.vision) * game->pad_width + x + game->settings.vision);
}
/* The channels of map env's cell. */
static inline uint8_t *arena_at(const arena *game, int env, int32_t cell) {
    return game->grid + ((size_t)env * game->cells + (size_t)cell) * ARENA_CHANNELS;
}
/* The cell of the k-th body cell of row from its tail (k = length - 1: the head). */
static inline int32_t arena_body_cell(const arena *game, int row, int k) {
    int at = (game->head_at[row] - game->length[row] + 1 + k) & (game->ring - 1);
    return game->body[(size_t)row * (size_t)game->ring + (size_t)at];
}

/* An empty map env (walls around it, nothing inside), its stream seeded from (seed, env). */
void arena_clear(arena *game, int env, uint64_t seed);
/* Places row's snake with the given cells, tail first, heading as given (a test's hand-built
 * map); the cells must be free and adjacent. */
void arena_place(arena *game, int row, const int32_t *cells, int length, int heading);
/* A new map env: cleared, a snake of length 1 per agent and the food on random empty cells;
 * writes every agent's observation into obs_u8 (rows of obs_size bytes, indexed by row). */
void arena_reset_env(arena *game, int env, uint64_t seed, uint8_t *obs_u8);
/* One step of map env (the rules above) with io's actions, writing io's rows. */
void arena_step_env(arena *game, int env, const sk_env_io *io);
/* Writes the view of row (an agent of map env) into obs (obs_size bytes). */
void arena_observe(const arena *game, int env, int row, uint8_t *obs);
/* Whether a restored state is one the game can step; false with what in why. */
bool arena_validate(const arena *game, char *why, size_t why_size);

#endif /* SKINNER_ARENA_H */
