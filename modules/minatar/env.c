/*
 * The MinAtar envs (issue 32 ask 2): one batch env written once over the five games' tables
 * (minatar.h), ten ids as MinAtar's gym wrapper names them: MinAtar/<Game>-v0 takes all six
 * actions, MinAtar/<Game>-v1 MinAtar's minimal set, mapped to the game's actions here.
 *
 * Each env owns MinAtar's random stream (numpy's legacy MT19937, minatar_rng.h), one game's
 * plain-data state, its last applied action (the sticky rule's memory, 0 at the first reset,
 * kept across episodes as MinAtar keeps it) and its episode's return and length. A step is
 * MinAtar's Environment.act(): the sticky draw, the game's act(), and on a terminal state the
 * episode log and reset() from the same stream (Gymnasium's same-step autoreset); each game
 * compiles that loop with its own functions inlined (minatar_batch.h).
 *
 * Seeding: MinAtar seeds numpy with one 32-bit integer per env; env i's is
 * (uint32_t)sk_rng_seed(seed, i), or, with env.seed_mode = numpy, (uint32_t)(seed + i), so
 * that an env replays MinAtar's own episodes for a known seed (tests/test_minatar_env.c).
 *
 * MinAtar has no time limit but Freeway's own 2,500 frames; a batch env needs one, so episodes
 * are truncated at MINATAR_MAX_EPISODE_STEPS (minatar_batch.h).
 *
 * Observations: the (10, 10, C) 0/1 state in [y][x][c] order as uint8 (obs_dtype SK_OBS_U8,
 * obs_shape {10, 10, C}), the game's own cells written straight into io->obs_u8.
 */
#include "minatar_batch.h"

#include "minatar_envs.h"

#include "asterix.h"
#include "breakout.h"
#include "freeway.h"
#include "seaquest.h"
#include "space_invaders.h"

#include <math.h>
#include <string.h>

#define MAX_CHANNELS 10
#define MAX_OBS_SIZE (MINATAR_SIDE * MINATAR_SIDE * MAX_CHANNELS)
#define DEFAULT_STICKY_PROB 0.1 /* MinAtar's Environment default */
/* The stream is saved as its bytes (624 words, then the position, native byte order): a
 * game's act() takes the struct, so words and position cannot be two arrays; check_state
 * checks the position. */
#define RNG_BYTES ((int)sizeof(minatar_rng))
_Static_assert(sizeof(minatar_rng) == (MINATAR_MT_WORDS + 1) * sizeof(int32_t),
               "minatar_rng is 624 words and a position, no padding");

typedef struct minatar_env {
    minatar_batch batch; /* the per-env arrays and the step's settings */
    int num_envs;
    const minatar_game_ops *ops;
    const char *id; /* the env's id, for check_state's errors: "MinAtar/Breakout-v1" */
    bool ramping;
    bool numpy_seeds;
} minatar_env;

static const char *const g_seed_modes[] = {"derived", "numpy", NULL};

static void env_destroy(void *state) {
    minatar_env *env = state;
    if (!env) return;
    sk_free(env->batch.rng);
    sk_free(env->batch.games);
    sk_free(env->batch.last_action);
    sk_free(env->batch.episode_length);
    sk_free(env->batch.episode_return);
    sk_free(env);
}

/* id: the table's. */
static sk_status env_create(void **out, int num_envs, const sk_config *cfg,
                            const minatar_game_ops *ops, bool minimal, const char *id) {
    double sticky_prob;
    bool ramping;
    int seed_mode;
    sk_status status = sk_cfg_double(cfg, "env.sticky_action_prob", DEFAULT_STICKY_PROB, 0.0, 1.0,
                                     &sticky_prob);
    if (status == SK_OK) status = sk_cfg_bool(cfg, "env.difficulty_ramping", true, &ramping);
    if (status == SK_OK)
        status = sk_cfg_choice(cfg, "env.seed_mode", g_seed_modes[0], g_seed_modes, &seed_mode);
    if (status != SK_OK) return status;
    minatar_env *env = sk_alloc(sizeof *env);
    if (!env) return sk_fail(SK_ERR_NOMEM, "MinAtar %s: out of memory", ops->name);
    size_t count = (size_t)num_envs;
    env->num_envs = num_envs;
    env->ops = minatar_ops_for_cpu(ops);
    env->id = id;
    minatar_batch *batch = &env->batch;
    batch->action_map = minimal ? ops->minimal_actions : NULL;
    batch->sticky_threshold = minatar_rng_threshold53(sticky_prob);
    batch->obs_size = (size_t)(MINATAR_SIDE * MINATAR_SIDE * ops->channels);
    env->ramping = ramping;
    env->numpy_seeds = seed_mode == 1;
    batch->rng = sk_alloc(count * sizeof *batch->rng);
    batch->games = sk_alloc(count * ops->state_size);
    batch->last_action = sk_alloc(count * sizeof *batch->last_action);
    batch->episode_length = sk_alloc(count * sizeof *batch->episode_length);
    batch->episode_return = sk_alloc(count * sizeof *batch->episode_return);
    if (!batch->rng || !batch->games || !batch->last_action || !batch->episode_length ||
        !batch->episode_return) {
        env_destroy(env);
        return sk_fail(SK_ERR_NOMEM, "MinAtar %s: out of memory for %d envs", ops->name,
                       num_envs);
    }
    *out = env;
    return SK_OK;
}

static inline void *game_of(const minatar_env *env, int i) {
    return env->batch.games + (size_t)i * env->ops->state_size;
}

static void env_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    minatar_env *env = state;
    minatar_batch *batch = &env->batch;
    for (int i = lo; i < hi; i++) {
        uint32_t numpy_seed = env->numpy_seeds ? (uint32_t)(seed + (uint64_t)i)
                                               : (uint32_t)sk_rng_seed(seed, (uint64_t)i);
        minatar_rng_seed(&batch->rng[i], numpy_seed);
        env->ops->init(game_of(env, i), env->ramping);
        env->ops->reset(game_of(env, i), &batch->rng[i]);
        batch->last_action[i] = MINATAR_NOOP;
        batch->episode_length[i] = 0;
        batch->episode_return[i] = 0.0f;
        env->ops->observe(game_of(env, i), io->obs_u8 + (size_t)i * batch->obs_size);
    }
}

/* The game's own step loop (minatar_batch.h). */
static void env_step(void *state, const sk_env_io *io, int lo, int hi) {
    minatar_env *env = state;
    env->ops->step(&env->batch, io, lo, hi);
}

static int env_state_arrays(void *state, sk_env_array *arrays) {
    minatar_env *env = state;
    arrays[0] = (sk_env_array){"rng", SK_ARRAY_U8, RNG_BYTES, env->batch.rng, false, 0.0, 0.0};
    arrays[1] = (sk_env_array){"game", SK_ARRAY_U8, (int)env->ops->state_size, env->batch.games,
                               false, 0.0, 0.0};
    arrays[2] = (sk_env_array){"last_action", SK_ARRAY_I32, 1, env->batch.last_action, true, 0.0,
                               MINATAR_NUM_ACTIONS - 1};
    arrays[3] = (sk_env_array){"episode_length", SK_ARRAY_I32, 1, env->batch.episode_length, true,
                               0.0, MINATAR_MAX_EPISODE_STEPS - 1};
    arrays[4] = (sk_env_array){"episode_return", SK_ARRAY_F32, 1, env->batch.episode_return, true,
                               -1e9, 1e9};
    return 5;
}

/* The stream's position (the last 4 of its saved bytes) cannot be ranged by the array, nor a
 * game's bytes: each game validates its own (counts, positions, enums) before it is stepped. */
static sk_status env_check_state(const void *state, int num_envs) {
    const minatar_env *env = state;
    for (int i = 0; i < num_envs; i++) {
        char why[160];
        if (!env->ops->validate(game_of(env, i), why, sizeof why))
            return sk_fail(SK_ERR_CORRUPT, "%s: env.game of env %d: %s", env->id, i, why);
        int32_t position = env->batch.rng[i].position;
        if (position < 0 || position > MINATAR_MT_WORDS)
            return sk_fail(SK_ERR_CORRUPT, "MinAtar %s: rng of env %d has position %d (expected "
                                           "0..%d)", env->ops->name, i, (int)position,
                           MINATAR_MT_WORDS);
    }
    return SK_OK;
}

/* The observation's Box: every cell 0 or 1. */
#define ONES10 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f
#define ONES100 ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10, ONES10
static const float g_obs_low[MAX_OBS_SIZE] = {0.0f};
static const float g_obs_high[MAX_OBS_SIZE] = {ONES100, ONES100, ONES100, ONES100, ONES100,
                                               ONES100, ONES100, ONES100, ONES100, ONES100};

static const char *const g_action_names[] = {"noop", "left", "up", "right", "down", "fire", NULL};
static const char *const g_breakout_names[] = {"noop", "left", "right", NULL};
static const char *const g_asterix_names[] = {"noop", "left", "up", "right", "down", NULL};
static const char *const g_freeway_names[] = {"noop", "up", "down", NULL};
static const char *const g_space_invaders_names[] = {"noop", "left", "right", "fire", NULL};

/* ---- pictures (sk_env_extras.render): MinAtar's GUI draws the grid with each cell
 * coloured by the highest channel set in it, channel c of C taking colour c + 1 of C + 1
 * spread over cmocean's "thermal" map (0: empty); here a cell is RENDER_CELL pixels. ---- */
#define RENDER_CELL 16
#define RENDER_SIDE (MINATAR_SIDE * RENDER_CELL)
#define RENDER_MAX_CHANNELS 16

/* cmocean's thermal at 0, 0.1, ..., 1 (RGB), linearly interpolated between */
static const uint8_t g_thermal[11][3] = {
    {4, 35, 51},    {20, 43, 96},   {53, 50, 155},  {94, 63, 155},  {127, 81, 148}, {161, 96, 139},
    {198, 109, 123}, {232, 123, 97}, {249, 150, 73}, {251, 190, 73}, {232, 250, 91},
};

static void thermal(double t, uint8_t out[3]) {
    double at = t * 10.0;
    int k = at >= 10.0 ? 9 : (int)at;
    double f = at - k;
    for (int j = 0; j < 3; j++)
        out[j] = (uint8_t)lround(g_thermal[k][j] + f * (g_thermal[k + 1][j] - g_thermal[k][j]));
}

static void env_render(const void *state, int index, uint8_t *rgb) {
    const minatar_env *env = state;
    int channels = env->ops->channels;
    uint8_t obs[MINATAR_SIDE * MINATAR_SIDE * RENDER_MAX_CHANNELS];
    env->ops->observe(game_of(env, index), obs);
    for (int y = 0; y < MINATAR_SIDE; y++)
        for (int x = 0; x < MINATAR_SIDE; x++) {
            int top = 0; /* 0: empty, else the highest channel set + 1 */
            for (int c = 0; c < channels; c++)
                if (obs[(y * MINATAR_SIDE + x) * channels + c]) top = c + 1;
            uint8_t color[3];
            thermal((double)top / channels, color);
            for (int py = 0; py < RENDER_CELL; py++)
                for (int px = 0; px < RENDER_CELL; px++)
                    memcpy(rgb + 3 * ((size_t)(y * RENDER_CELL + py) * RENDER_SIDE +
                                      (size_t)(x * RENDER_CELL + px)),
                           color, 3);
        }
}

/* every id trains with configs/minatar.ini (a CNN policy: docs/minatar.md, Results), Seaquest
 * with its own keys over it */
#define MINATAR_EXTRAS(names, presets)                                                             \
    {.action_names = (names), .preset = (presets), .render_width = RENDER_SIDE,                    \
     .render_height = RENDER_SIDE, .render = env_render}
static const sk_env_extras g_extras_full = MINATAR_EXTRAS(g_action_names, "minatar");
static const sk_env_extras g_extras_breakout = MINATAR_EXTRAS(g_breakout_names, "minatar");
static const sk_env_extras g_extras_asterix = MINATAR_EXTRAS(g_asterix_names, "minatar");
static const sk_env_extras g_extras_freeway = MINATAR_EXTRAS(g_freeway_names, "minatar");
static const sk_env_extras g_extras_space_invaders =
    MINATAR_EXTRAS(g_space_invaders_names, "minatar");
/* Seaquest layers its own keys over the suite's (configs/minatar_seaquest.ini) */
static const sk_env_extras g_extras_seaquest =
    MINATAR_EXTRAS(g_action_names, "minatar minatar_seaquest");

/* One game's two tables: V0 and V1 the exported tables' names (MinAtar/NAME-v0, all six
 * actions; -v1, the minimal set), CREATE_V0 and CREATE_V1 their create functions, GAME the ops,
 * CHANNELS and MINIMAL the facts its header states (MINATAR_<GAME>_CHANNELS, _MINIMAL_ACTIONS),
 * FULL_EXTRAS and MINIMAL_EXTRAS its v0 and v1 extras (action names, preset). */
#define MINATAR_TABLE(channels)                                                                    \
    .obs_size = MINATAR_SIDE * MINATAR_SIDE * (channels), .obs_dtype = SK_OBS_U8,                  \
    .obs_shape = {MINATAR_SIDE, MINATAR_SIDE, (channels)}, .obs_low = g_obs_low,                   \
    .obs_high = g_obs_high, .mask_size = 0, .max_episode_steps = MINATAR_MAX_EPISODE_STEPS,        \
    .solved_threshold = NAN, .num_log_fields = 2,                                                  \
    .log_names = {"episode_return", "episode_length"}, .destroy = env_destroy,                     \
    .reset = env_reset, .step = env_step, .state_arrays = env_state_arrays,                        \
    .check_state = env_check_state

#define MINATAR_ENVS(V0, V1, CREATE_V0, CREATE_V1, Name, lower, game, channels, minimal,           \
                     full_extras, minimal_extras, text)                                            \
    static sk_status CREATE_V0(void **out, int num_envs, const sk_config *cfg) {                   \
        return env_create(out, num_envs, cfg, &game, false, "MinAtar/" Name "-v0");               \
    }                                                                                              \
    static sk_status CREATE_V1(void **out, int num_envs, const sk_config *cfg) {                   \
        return env_create(out, num_envs, cfg, &game, true, "MinAtar/" Name "-v1");                \
    }                                                                                              \
    const sk_env_def V0 = {                                                                        \
        .id = "MinAtar/" Name "-v0",                                                               \
        .alias = lower "-minatar-v0",                                                              \
        .summary = text " (MinAtar, all 6 actions)",                                               \
        .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1,                                \
                         .head_sizes = {MINATAR_NUM_ACTIONS}},                                     \
        .create = CREATE_V0,                                                                       \
        .extras = &full_extras,                                                                    \
        MINATAR_TABLE(channels),                                                                   \
    };                                                                                             \
    const sk_env_def V1 = {                                                                        \
        .id = "MinAtar/" Name "-v1",                                                               \
        .alias = lower "-minatar",                                                                 \
        .summary = text " (MinAtar, minimal actions)",                                             \
        .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {minimal}},      \
        .create = CREATE_V1,                                                                       \
        .extras = &minimal_extras,                                                                 \
        MINATAR_TABLE(channels),                                                                   \
    };

MINATAR_ENVS(sk_env_minatar_asterix_v0, sk_env_minatar_asterix_v1, create_asterix_v0,
             create_asterix_v1, "Asterix", "asterix", minatar_asterix, MINATAR_ASTERIX_CHANNELS,
             MINATAR_COUNT(MINATAR_ASTERIX_MINIMAL_ACTIONS), g_extras_full, g_extras_asterix,
             "collect gold and dodge enemies crossing the rows")
MINATAR_ENVS(sk_env_minatar_breakout_v0, sk_env_minatar_breakout_v1, create_breakout_v0,
             create_breakout_v1, "Breakout", "breakout", minatar_breakout,
             MINATAR_BREAKOUT_CHANNELS, MINATAR_COUNT(MINATAR_BREAKOUT_MINIMAL_ACTIONS),
             g_extras_full, g_extras_breakout, "bounce the ball off the paddle into three rows of bricks")
MINATAR_ENVS(sk_env_minatar_freeway_v0, sk_env_minatar_freeway_v1, create_freeway_v0,
             create_freeway_v1, "Freeway", "freeway", minatar_freeway, MINATAR_FREEWAY_CHANNELS,
             MINATAR_COUNT(MINATAR_FREEWAY_MINIMAL_ACTIONS), g_extras_full, g_extras_freeway,
             "walk the chicken across eight lanes of traffic")
MINATAR_ENVS(sk_env_minatar_seaquest_v0, sk_env_minatar_seaquest_v1, create_seaquest_v0,
             create_seaquest_v1, "Seaquest", "seaquest", minatar_seaquest,
             MINATAR_SEAQUEST_CHANNELS, MINATAR_COUNT(MINATAR_SEAQUEST_MINIMAL_ACTIONS),
             g_extras_seaquest, g_extras_seaquest,
             "shoot enemies, rescue divers and surface for oxygen")
MINATAR_ENVS(sk_env_minatar_space_invaders_v0, sk_env_minatar_space_invaders_v1,
             create_space_invaders_v0, create_space_invaders_v1, "SpaceInvaders", "space_invaders",
             minatar_space_invaders, MINATAR_SPACE_INVADERS_CHANNELS,
             MINATAR_COUNT(MINATAR_SPACE_INVADERS_MINIMAL_ACTIONS), g_extras_full,
             g_extras_space_invaders, "shoot the marching aliens before they reach the cannon")
