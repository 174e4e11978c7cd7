/*
 * Arena-v0's table (issue 37 ask 4b): the batch env over arena.c's maps. The map's shape
 * comes from the env.* keys (arena_settings_read), so configure sets the observation's size
 * and the agents per env from them; create reads the same keys.
 *
 * Rows are (map, agent) pairs (skinner/env.h, multi-agent envs): row = env * num_agents +
 * agent. Every agent acts at every step: a snake that dies or outlives env.max_steps ends its
 * episode on its row (terminated or truncated, final_obs and episode_log there) and a new
 * snake is born in its place in the same step, as a single-agent env autoresets; so every row
 * stays active and no map ever needs a reset of its own.
 */
#include "arena.h"
#include "arena_envs.h"

#include <string.h>

#define ARENA_ID "Arena-v0"

static void env_destroy(void *state) { arena_destroy(state); }

static sk_status env_create(void **out, int num_envs, const sk_config *cfg) {
    arena_settings settings;
    sk_status status = arena_settings_read(cfg, &settings);
    if (status != SK_OK) return status;
    arena *game = NULL;
    status = arena_create(&game, &settings, num_envs, ARENA_ID);
    if (status == SK_OK) *out = game;
    return status;
}

static void set_active(const arena *game, const sk_env_io *io, int lo, int hi) {
    if (!io->active) return;
    size_t agents = (size_t)game->settings.num_agents;
    memset(io->active + (size_t)lo * agents, 1, (size_t)(hi - lo) * agents);
}

static void env_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    arena *game = state;
    for (int env = lo; env < hi; env++) arena_reset_env(game, env, seed, io->obs_u8);
    set_active(game, io, lo, hi);
}

static void env_step(void *state, const sk_env_io *io, int lo, int hi) {
    arena *game = state;
    for (int env = lo; env < hi; env++) arena_step_env(game, env, io);
    set_active(game, io, lo, hi);
}

static int env_state_arrays(void *state, sk_env_array *arrays) {
    arena *game = state;
    const arena_settings *settings = &game->settings;
    int agents = settings->num_agents, max_length = settings->max_length;
    arrays[0] = (sk_env_array){"grid", SK_ARRAY_U8, (int)game->cells * ARENA_CHANNELS,
                               game->grid, true, 0.0, 1.0};
    arrays[1] = (sk_env_array){"body", SK_ARRAY_I32, agents * game->ring, game->body, true,
                               0.0, (double)game->cells - 1};
    arrays[2] = (sk_env_array){"head_at", SK_ARRAY_I32, agents, game->head_at, true, 0.0,
                               game->ring - 1};
    arrays[3] = (sk_env_array){"length", SK_ARRAY_I32, agents, game->length, true, 1.0,
                               max_length};
    arrays[4] = (sk_env_array){"heading", SK_ARRAY_I32, agents, game->heading, true, 0.0,
                               ARENA_NUM_ACTIONS - 1};
    arrays[5] = (sk_env_array){"life_steps", SK_ARRAY_I32, agents, game->life_steps, true, 0.0,
                               settings->max_steps - 1};
    arrays[6] = (sk_env_array){"life_return", SK_ARRAY_F32, agents, game->life_return, true,
                               -1e9, 1e9};
    arrays[7] = (sk_env_array){"rng", SK_ARRAY_U64, 1, game->rng, false, 0.0, 0.0};
    return 8;
}

static sk_status env_check_state(const void *state, int num_envs) {
    const arena *game = state;
    char why[160];
    if (num_envs != game->num_envs || !arena_validate(game, why, sizeof why))
        return sk_fail(SK_ERR_CORRUPT, "%s: a restored state: %s", ARENA_ID,
                       num_envs != game->num_envs ? "the number of maps differs" : why);
    return SK_OK;
}

static const float g_obs_low[ARENA_MAX_OBS_SIZE] = {0.0f};
static const float g_obs_high[ARENA_MAX_OBS_SIZE] = {[0 ... ARENA_MAX_OBS_SIZE - 1] = 1.0f};

static sk_status env_configure(sk_env_def *def, const sk_config *cfg) {
    arena_settings settings;
    sk_status status = arena_settings_read(cfg, &settings);
    if (status != SK_OK) return status;
    int view = 2 * settings.vision + 1;
    def->obs_size = view * view * ARENA_CHANNELS;
    def->obs_shape[0] = view;
    def->obs_shape[1] = view;
    def->obs_shape[2] = ARENA_CHANNELS;
    def->max_episode_steps = settings.max_steps;
    def->num_agents = settings.num_agents;
    return SK_OK;
}

/* ---- pictures: one pixel block per playable cell; food green, bodies grey, heads white */
#define RENDER_CELL 4
#define RENDER_MAX_SIDE 256 /* larger maps show their top-left corner */

static void env_render(const void *state, int index, uint8_t *rgb) {
    const arena *game = state;
    int side = RENDER_MAX_SIDE / RENDER_CELL;
    for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++) {
            uint8_t color[3] = {0, 0, 0};
            if (x < game->settings.width && y < game->settings.height) {
                const uint8_t *at = arena_at(game, index, arena_cell(game, x, y));
                if (at[ARENA_FOOD]) memcpy(color, (uint8_t[3]){40, 200, 60}, 3);
                if (at[ARENA_BODY]) memcpy(color, (uint8_t[3]){150, 150, 150}, 3);
                if (at[ARENA_HEAD]) memcpy(color, (uint8_t[3]){255, 255, 255}, 3);
            } else {
                memcpy(color, (uint8_t[3]){60, 30, 30}, 3);
            }
            for (int py = 0; py < RENDER_CELL; py++)
                for (int px = 0; px < RENDER_CELL; px++)
                    memcpy(rgb + 3 * ((size_t)(y * RENDER_CELL + py) * RENDER_MAX_SIDE +
                                      (size_t)(x * RENDER_CELL + px)),
                           color, 3);
        }
}

static const char *const g_action_names[] = {"up", "right", "down", "left", NULL};

/* The baseline snake (`skinner eval Arena-v0 --policy heuristic`, and the opponent
 * "heuristic"): a move into food if one is free, else on ahead if free, else the first free
 * turn clockwise from there; straight on when every cell around is taken. It looks one cell
 * ahead, as a snake's view of its neighbours lets it; a head that another head enters in the
 * same step still dies. */
static void env_heuristic(const void *state, int lo, int hi, int32_t *actions) {
    const arena *game = state;
    int agents = game->settings.num_agents;
    for (int row = lo * agents; row < hi * agents; row++) {
        int env = row / agents, heading = game->heading[row], pick = -1, fed = -1;
        int32_t head = arena_body_cell(game, row, game->length[row] - 1);
        for (int turn = 0; turn < ARENA_NUM_ACTIONS; turn++) {
            int move = (heading + turn) % ARENA_NUM_ACTIONS;
            if (turn == 2) continue; /* the reverse keeps the heading: the neck */
            const uint8_t *next = arena_at(game, env, head + game->deltas[move]);
            if (next[ARENA_BODY]) continue;
            if (pick < 0) pick = move;
            if (fed < 0 && next[ARENA_FOOD]) fed = move;
        }
        actions[row] = fed >= 0 ? fed : pick >= 0 ? pick : heading;
    }
}

/* bench_num_envs: 64 maps of 64 snakes are 4096 rows, the batch other envs bench with */
static const sk_env_extras g_extras = {.preset = "arena", .bench_num_envs = 64,
                                       .action_names = g_action_names,
                                       .heuristic = env_heuristic,
                                       .render_width = RENDER_MAX_SIDE,
                                       .render_height = RENDER_MAX_SIDE, .render = env_render};

const sk_env_def sk_env_arena_v0 = {
    .id = ARENA_ID,
    .alias = "arena",
    .summary = "snakes on a shared map: eat food (+1), die on walls and bodies (-1)",
    .obs_size = 11 * 11 * ARENA_CHANNELS,
    .obs_dtype = SK_OBS_U8,
    .obs_shape = {11, 11, ARENA_CHANNELS},
    .obs_low = g_obs_low,
    .obs_high = g_obs_high,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1,
                     .head_sizes = {ARENA_NUM_ACTIONS}},
    .mask_size = 0,
    .max_episode_steps = 1024,
    .solved_threshold = NAN,
    .num_log_fields = ARENA_LOG_FIELDS,
    .log_names = {"episode_return", "episode_length", "snake_length"},
    .create = env_create,
    .destroy = env_destroy,
    .reset = env_reset,
    .step = env_step,
    .state_arrays = env_state_arrays,
    .check_state = env_check_state,
    .extras = &g_extras,
    .configure = env_configure,
    .num_agents = 64,
};
