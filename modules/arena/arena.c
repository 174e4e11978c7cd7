/*
 * Arena's rules (arena.h says them): the settings, a map's reset and its simultaneous step.
 */
#include "arena.h"

#include <stdio.h>
#include <string.h>

/* The defaults: 64 snakes on a 64x64 map with 256 food, each seeing 11x11 cells. A body
 * may fill at most half of an empty map's share per snake, so a free cell always exists. */
#define DEFAULT_NUM_AGENTS 64
#define DEFAULT_SIDE 64
#define DEFAULT_VISION 5
#define DEFAULT_FOOD 256
#define DEFAULT_MAX_LENGTH 16
#define DEFAULT_MAX_STEPS 1024
#define MAX_STEPS_LIMIT 1000000

sk_status arena_settings_read(const sk_config *cfg, arena_settings *out) {
    int64_t num_agents, width, height, vision, food, max_length, max_steps;
    sk_status status =
        sk_cfg_int(cfg, "env.num_agents", DEFAULT_NUM_AGENTS, 1, ARENA_MAX_AGENTS, &num_agents);
    if (status == SK_OK)
        status = sk_cfg_int(cfg, "env.width", DEFAULT_SIDE, 3, ARENA_MAX_SIDE, &width);
    if (status == SK_OK)
        status = sk_cfg_int(cfg, "env.height", DEFAULT_SIDE, 3, ARENA_MAX_SIDE, &height);
    if (status == SK_OK)
        status = sk_cfg_int(cfg, "env.vision", DEFAULT_VISION, 1, ARENA_MAX_VISION, &vision);
    if (status == SK_OK) status = sk_cfg_int(cfg, "env.food", DEFAULT_FOOD, 0, 1 << 20, &food);
    if (status == SK_OK)
        status = sk_cfg_int(cfg, "env.max_length", DEFAULT_MAX_LENGTH, 1, 4096, &max_length);
    if (status == SK_OK)
        status = sk_cfg_int(cfg, "env.max_steps", DEFAULT_MAX_STEPS, 1, MAX_STEPS_LIMIT,
                            &max_steps);
    if (status != SK_OK) return status;
    int64_t cells = width * height, taken = num_agents * max_length + food;
    if (taken >= cells)
        return sk_fail(SK_ERR_INVALID,
                       "Arena: env.num_agents x env.max_length + env.food is %lld, not below the "
                       "map's %lld cells (env.width x env.height): a new snake or food could "
                       "find no empty cell",
                       (long long)taken, (long long)cells);
    *out = (arena_settings){(int)num_agents, (int)width, (int)height, (int)vision,
                            (int)food, (int)max_length, (int)max_steps};
    return SK_OK;
}

void arena_destroy(arena *game) {
    if (!game) return;
    sk_free(game->grid);
    sk_free(game->body);
    sk_free(game->head_at);
    sk_free(game->length);
    sk_free(game->heading);
    sk_free(game->life_steps);
    sk_free(game->life_return);
    sk_free(game->rng);
    sk_free(game->target);
    sk_free(game->fate);
    sk_free(game);
}

sk_status arena_create(arena **out, const arena_settings *settings, int num_envs,
                       const char *id) {
    arena *game = sk_alloc(sizeof *game);
    if (!game) return sk_fail(SK_ERR_NOMEM, "%s: out of memory", id);
    game->settings = *settings;
    game->num_envs = num_envs;
    game->id = id;
    game->pad_width = settings->width + 2 * settings->vision;
    game->pad_height = settings->height + 2 * settings->vision;
    game->cells = (size_t)game->pad_width * (size_t)game->pad_height;
    game->view = 2 * settings->vision + 1;
    game->obs_size = (size_t)game->view * (size_t)game->view * ARENA_CHANNELS;
    game->deltas[ARENA_UP] = -game->pad_width;
    game->deltas[ARENA_RIGHT] = 1;
    game->deltas[ARENA_DOWN] = game->pad_width;
    game->deltas[ARENA_LEFT] = -1;
    game->ring = 1;
    while (game->ring < settings->max_length) game->ring *= 2;
    size_t envs = (size_t)num_envs, rows = envs * (size_t)settings->num_agents;
    game->grid = sk_alloc(envs * game->cells * ARENA_CHANNELS);
    game->body = sk_alloc(rows * (size_t)game->ring * sizeof *game->body);
    game->head_at = sk_alloc(rows * sizeof *game->head_at);
    game->length = sk_alloc(rows * sizeof *game->length);
    game->heading = sk_alloc(rows * sizeof *game->heading);
    game->life_steps = sk_alloc(rows * sizeof *game->life_steps);
    game->life_return = sk_alloc(rows * sizeof *game->life_return);
    game->rng = sk_alloc(envs * sizeof *game->rng);
    game->target = sk_alloc(rows * sizeof *game->target);
    game->fate = sk_alloc(rows);
    if (!game->grid || !game->body || !game->head_at || !game->length || !game->heading ||
        !game->life_steps || !game->life_return || !game->rng || !game->target || !game->fate) {
        arena_destroy(game);
        return sk_fail(SK_ERR_NOMEM, "%s: out of memory for %d maps of %dx%d with %d snakes",
                       id, num_envs, settings->width, settings->height, settings->num_agents);
    }
    *out = game;
    return SK_OK;
}

void arena_clear(arena *game, int env, uint64_t seed) {
    uint8_t *grid = arena_at(game, env, 0);
    memset(grid, 0, game->cells * ARENA_CHANNELS);
    int vision = game->settings.vision;
    for (int y = 0; y < game->pad_height; y++)
        for (int x = 0; x < game->pad_width; x++) {
            bool wall = x < vision || y < vision || x >= vision + game->settings.width ||
                        y >= vision + game->settings.height;
            grid[((size_t)y * (size_t)game->pad_width + (size_t)x) * ARENA_CHANNELS +
                 ARENA_BODY] = wall;
        }
    game->rng[env] = sk_rng_seed(seed, (uint64_t)env);
}

static inline bool cell_empty(const uint8_t *at) {
    return (at[ARENA_FOOD] | at[ARENA_BODY]) == 0;
}

/* A uniformly drawn playable cell if empty, else the next empty one in reading order
 * (wrapping): one draw, and always a cell, since settings keep fewer bodies and food than
 * cells. */
static int32_t empty_cell(arena *game, int env) {
    int width = game->settings.width, playable = width * game->settings.height;
    int start = (int)sk_rng_below(&game->rng[env], (uint32_t)playable);
    for (int k = 0; k < playable; k++) {
        int index = (start + k) % playable;
        int32_t cell = arena_cell(game, index % width, index / width);
        if (cell_empty(arena_at(game, env, cell))) return cell;
    }
    return -1; /* unreachable: arena_settings_read keeps a cell free */
}

void arena_place(arena *game, int row, const int32_t *cells, int length, int heading) {
    int env = row / game->settings.num_agents;
    int32_t *body = game->body + (size_t)row * (size_t)game->ring;
    for (int k = 0; k < length; k++) {
        body[k] = cells[k];
        arena_at(game, env, cells[k])[ARENA_BODY] = 1;
    }
    arena_at(game, env, cells[length - 1])[ARENA_HEAD] = 1;
    game->head_at[row] = length - 1;
    game->length[row] = length;
    game->heading[row] = heading;
    game->life_steps[row] = 0;
    game->life_return[row] = 0.0f;
}

/* A new life for row: length 1 on a random empty cell, a random heading. */
static void spawn(arena *game, int env, int row) {
    int32_t cell = empty_cell(game, env);
    int heading = (int)sk_rng_below(&game->rng[env], ARENA_NUM_ACTIONS);
    arena_place(game, row, &cell, 1, heading);
}

static void spawn_food(arena *game, int env) {
    arena_at(game, env, empty_cell(game, env))[ARENA_FOOD] = 1;
}

/* The view's lines, each `line` bytes: a constant at every call below, so that each copy is
 * a few vector moves instead of a call to memcpy (which took 40% of a step). */
static inline __attribute__((always_inline)) void copy_view(uint8_t *obs, const uint8_t *corner,
                                                            size_t stride, int view,
                                                            size_t line) {
    for (int y = 0; y < view; y++) memcpy(obs + (size_t)y * line, corner + (size_t)y * stride, line);
}

void arena_observe(const arena *game, int env, int row, uint8_t *obs) {
    int32_t head = game->body[(size_t)row * (size_t)game->ring + (size_t)game->head_at[row]];
    int vision = game->settings.vision;
    const uint8_t *corner = arena_at(game, env, head - vision * game->pad_width - vision);
    size_t stride = (size_t)game->pad_width * ARENA_CHANNELS;
#define ARENA_VIEW_CASE(radius)                                                                    \
    case radius:                                                                                   \
        copy_view(obs, corner, stride, 2 * (radius) + 1, (2 * (radius) + 1) * ARENA_CHANNELS);    \
        return;
    switch (vision) {
        ARENA_VIEW_CASE(1) ARENA_VIEW_CASE(2) ARENA_VIEW_CASE(3) ARENA_VIEW_CASE(4)
        ARENA_VIEW_CASE(5) ARENA_VIEW_CASE(6) ARENA_VIEW_CASE(7)
    }
#undef ARENA_VIEW_CASE
    _Static_assert(ARENA_MAX_VISION == 7, "a case per vision");
}

void arena_reset_env(arena *game, int env, uint64_t seed, uint8_t *obs_u8) {
    arena_clear(game, env, seed);
    int num_agents = game->settings.num_agents, first = env * num_agents;
    for (int row = first; row < first + num_agents; row++) spawn(game, env, row);
    for (int k = 0; k < game->settings.food; k++) spawn_food(game, env);
    for (int row = first; row < first + num_agents; row++)
        arena_observe(game, env, row, obs_u8 + (size_t)row * game->obs_size);
}

/* Removes row's whole body from the map. */
static void remove_snake(arena *game, int env, int row) {
    for (int k = 0; k < game->length[row]; k++) {
        uint8_t *at = arena_at(game, env, arena_body_cell(game, row, k));
        at[ARENA_BODY] = 0;
        at[ARENA_HEAD] = 0;
    }
}

void arena_step_env(arena *game, int env, const sk_env_io *io) {
    const int num_agents = game->settings.num_agents, max_length = game->settings.max_length;
    const int ring = game->ring;
    const int first = env * num_agents, end = first + num_agents;
    uint8_t *grid = arena_at(game, env, 0);
    int32_t *target = game->target;
    uint8_t *fate = game->fate;
    /* 1-2: aim, free the tails of snakes that will not grow, lift the old heads' marks */
    for (int row = first; row < end; row++) {
        int action = io->actions[row], heading = game->heading[row];
        if (action == (heading + 2) % ARENA_NUM_ACTIONS && game->length[row] > 1) action = heading;
        game->heading[row] = action;
        int32_t head = game->body[(size_t)row * (size_t)ring + (size_t)game->head_at[row]];
        int32_t next = head + game->deltas[action];
        target[row] = next;
        grid[(size_t)head * ARENA_CHANNELS + ARENA_HEAD] = 0;
        bool grows = grid[(size_t)next * ARENA_CHANNELS + ARENA_FOOD] &&
                     game->length[row] < max_length;
        fate[row] = grows ? ARENA_FATE_GROWS : 0;
        if (!grows) {
            int32_t tail = arena_body_cell(game, row, 0);
            grid[(size_t)tail * ARENA_CHANNELS + ARENA_BODY] = 0;
            game->length[row]--;
        }
    }
    /* 3: a head into a wall or a body dies; the others claim their cell (a count in the
     * head channel, which no head marks now) */
    for (int row = first; row < end; row++) {
        uint8_t *at = grid + (size_t)target[row] * ARENA_CHANNELS;
        if (at[ARENA_BODY]) fate[row] |= ARENA_FATE_DIES;
        else at[ARENA_HEAD]++;
    }
    for (int row = first; row < end; row++)
        if (grid[(size_t)target[row] * ARENA_CHANNELS + ARENA_HEAD] > 1)
            fate[row] |= ARENA_FATE_DIES;
    /* 4: the survivors move and eat; the cells the dead claimed together are freed */
    int eaten = 0;
    for (int row = first; row < end; row++) {
        uint8_t *at = grid + (size_t)target[row] * ARENA_CHANNELS;
        float reward;
        if (fate[row] & ARENA_FATE_DIES) {
            if (!at[ARENA_BODY]) at[ARENA_HEAD] = 0;
            reward = -1.0f;
        } else {
            at[ARENA_BODY] = 1;
            at[ARENA_HEAD] = 1;
            reward = at[ARENA_FOOD] ? 1.0f : 0.0f;
            eaten += at[ARENA_FOOD];
            at[ARENA_FOOD] = 0;
            int head_at = (game->head_at[row] + 1) & (ring - 1);
            game->head_at[row] = head_at;
            game->body[(size_t)row * (size_t)ring + (size_t)head_at] = target[row];
            game->length[row]++;
        }
        io->rewards[row] = reward;
        game->life_return[row] += reward;
    }
    /* 5: the lives' last views (once every claim count is gone from the map) and logs; the
     * bodies leave once every view is written */
    for (int row = first; row < end; row++) {
        int32_t steps = ++game->life_steps[row];
        bool dies = fate[row] & ARENA_FATE_DIES;
        bool truncated = !dies && steps >= game->settings.max_steps;
        io->terminated[row] = dies;
        io->truncated[row] = truncated;
        if (!dies && !truncated) continue;
        arena_observe(game, env, row, io->final_obs_u8 + (size_t)row * game->obs_size);
        float *log = io->episode_log + (size_t)row * ARENA_LOG_FIELDS;
        log[ARENA_LOG_RETURN] = game->life_return[row];
        log[ARENA_LOG_LENGTH] = (float)steps;
        /* a dead snake's length as it entered the step (its tail may have left already) */
        bool tail_left = dies && !(fate[row] & ARENA_FATE_GROWS);
        log[ARENA_LOG_SNAKE_LENGTH] = (float)(game->length[row] + tail_left);
    }
    for (int row = first; row < end; row++)
        if (io->terminated[row] || io->truncated[row]) remove_snake(game, env, row);
    for (int row = first; row < end; row++)
        if (io->terminated[row] || io->truncated[row]) spawn(game, env, row);
    for (int k = 0; k < eaten; k++) spawn_food(game, env);
    for (int row = first; row < end; row++)
        arena_observe(game, env, row, io->obs_u8 + (size_t)row * game->obs_size);
}

/* Whether every map is the one its snakes and food make: walls all around, a body cell exactly
 * where a snake is (no two snakes on a cell), a head mark on each head only, and env.food
 * food on free playable cells (the bodies' cells are checked first). The step relies on it:
 * heads stay inside the walls, and a new snake or food always finds an empty cell. */
static bool maps_agree(const arena *game, char *why, size_t why_size) {
    const arena_settings *settings = &game->settings;
    uint8_t *mark = sk_alloc(game->cells); /* 0 free, 1 body, 2 head */
    if (!mark) {
        snprintf(why, why_size, "out of memory to check the maps");
        return false;
    }
    bool good = true;
    for (int env = 0; env < game->num_envs && good; env++) {
        memset(mark, 0, game->cells);
        int first = env * settings->num_agents, food = 0;
        for (int row = first; row < first + settings->num_agents && good; row++)
            for (int k = 0; k < game->length[row] && good; k++) {
                int32_t at = arena_body_cell(game, row, k);
                if (mark[at]) {
                    snprintf(why, why_size, "map %d: row %d's body cell %d (cell %d) is another "
                             "snake's too", env, row, k, (int)at);
                    good = false;
                }
                mark[at] = k == game->length[row] - 1 ? 2 : 1;
            }
        for (size_t at = 0; at < game->cells && good; at++) {
            int x = (int)(at % (size_t)game->pad_width) - settings->vision;
            int y = (int)(at / (size_t)game->pad_width) - settings->vision;
            bool wall = x < 0 || y < 0 || x >= settings->width || y >= settings->height;
            const uint8_t *c = arena_at(game, env, (int32_t)at);
            if (wall && !(c[ARENA_BODY] == 1 && c[ARENA_HEAD] == 0 && c[ARENA_FOOD] == 0)) {
                snprintf(why, why_size, "map %d's cell %zu, outside the %dx%d map, is not a wall",
                         env, at, settings->width, settings->height);
                good = false;
            } else if (!wall && (c[ARENA_BODY] != (mark[at] > 0) ||
                                 c[ARENA_HEAD] != (mark[at] == 2) ||
                                 (c[ARENA_FOOD] && mark[at]) || c[ARENA_FOOD] > 1)) {
                snprintf(why, why_size, "map %d's cell (%d, %d): body %d, head %d, food %d does "
                         "not agree with the snakes' bodies", env, x, y, c[ARENA_BODY],
                         c[ARENA_HEAD], c[ARENA_FOOD]);
                good = false;
            }
            food += !wall && c[ARENA_FOOD];
        }
        if (good && food != settings->food) {
            snprintf(why, why_size, "map %d holds %d food (expected %d, env.food)", env, food,
                     settings->food);
            good = false;
        }
    }
    sk_free(mark);
    return good;
}

bool arena_validate(const arena *game, char *why, size_t why_size) {
    const arena_settings *settings = &game->settings;
    int rows = game->num_envs * settings->num_agents;
    for (int row = 0; row < rows; row++) {
        if (game->length[row] < 1 || game->length[row] > settings->max_length ||
            game->head_at[row] < 0 || game->head_at[row] >= game->ring) {
            snprintf(why, why_size, "row %d has length %d and head_at %d (expected 1..%d and "
                     "0..%d)", row, (int)game->length[row], (int)game->head_at[row],
                     settings->max_length, game->ring - 1);
            return false;
        }
        for (int k = 0; k < game->length[row]; k++) {
            int32_t cell = arena_body_cell(game, row, k);
            int x = cell % game->pad_width - settings->vision;
            int y = cell / game->pad_width - settings->vision;
            if (cell < 0 || x < 0 || y < 0 || x >= settings->width || y >= settings->height) {
                snprintf(why, why_size, "row %d's body cell %d is %d, off the %dx%d map", row, k,
                         (int)cell, settings->width, settings->height);
                return false;
            }
        }
    }
    return maps_agree(game, why, why_size);
}
