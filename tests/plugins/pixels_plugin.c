/*
 * An env that observes a uint8 image (issue 32 ask 1), for the tests of the
 * kit's observation dtype and shape (tests/test_obs_dtype.c, test_python):
 *   Pixels-v0   a 10x10x3 uint8 image of 0/1 cells (Box 0..1): channel 0
 *               holds one lit cell at a random place, channels 1 and 2 are
 *               dark but for the cell of the column's half the agent must
 *               name (channel 1: left, channel 2: right) in row 0. Action 1
 *               earns 1 when the lit cell is in the right half (columns
 *               5..9), action 0 when in the left; an episode is
 *               EPISODE_STEPS steps, so a policy that reads the image
 *               returns EPISODE_STEPS and a blind one about half of it.
 * env.unwritten_byte = K (default -1: none) leaves byte K of every
 * observation unwritten: `skinner check` and training must name it.
 */
#include <skinner/env.h>

#include <math.h>
#include <string.h>

#define SIDE 10
#define CHANNELS 3
#define OBS_SIZE (SIDE * SIDE * CHANNELS)
#define EPISODE_STEPS 8
#define NUM_LOG_FIELDS 2

typedef struct pixels_state {
    int32_t *elapsed;
    int32_t *cell; /* the lit cell: row * SIDE + column */
    float *episode_return;
    uint64_t *rng;
    int unwritten_byte; /* -1: every byte written */
} pixels_state;

static const sk_soa_field g_fields[] = {
    SK_SOA_FIELD_RANGE(pixels_state, elapsed, SK_ARRAY_I32, 0, EPISODE_STEPS),
    SK_SOA_FIELD_RANGE(pixels_state, cell, SK_ARRAY_I32, 0, SIDE * SIDE - 1),
    SK_SOA_FIELD_RANGE(pixels_state, episode_return, SK_ARRAY_F32, 0, EPISODE_STEPS),
    SK_SOA_FIELD(pixels_state, rng, SK_ARRAY_U64),
};
#define NUM_FIELDS ((int)(sizeof g_fields / sizeof g_fields[0]))

static float g_low[OBS_SIZE], g_high[OBS_SIZE];

static sk_status pixels_create(void **out, int num_envs, const sk_config *cfg) {
    int64_t unwritten;
    sk_status status = sk_cfg_int(cfg, "env.unwritten_byte", -1, -1, OBS_SIZE - 1, &unwritten);
    if (status != SK_OK) return status;
    pixels_state *s = sk_soa_create(sizeof(pixels_state), g_fields, NUM_FIELDS, num_envs,
                                    "Pixels-v0");
    if (!s) return SK_ERR_NOMEM;
    s->unwritten_byte = (int)unwritten;
    *out = s;
    return SK_OK;
}

static void pixels_destroy(void *state) { sk_soa_destroy(state, g_fields, NUM_FIELDS); }

/* Channels last: byte (row, column, channel) at (row * SIDE + column) * CHANNELS + channel. */
static void observe(const pixels_state *s, uint8_t *obs, int i) {
    uint8_t *row = obs + (size_t)i * OBS_SIZE;
    uint8_t kept = s->unwritten_byte >= 0 ? row[s->unwritten_byte] : 0;
    memset(row, 0, OBS_SIZE);
    int cell = s->cell[i];
    row[cell * CHANNELS + 0] = 1;
    row[(cell % SIDE) * CHANNELS + (cell % SIDE < SIDE / 2 ? 1 : 2)] = 1;
    if (s->unwritten_byte >= 0) row[s->unwritten_byte] = kept; /* the fault under test */
}

static void start_episode(pixels_state *s, const sk_env_io *io, int i) {
    s->elapsed[i] = 0;
    s->episode_return[i] = 0.0f;
    s->cell[i] = (int32_t)sk_rng_below(&s->rng[i], SIDE * SIDE);
    observe(s, io->obs_u8, i);
}

static void pixels_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    pixels_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        start_episode(s, io, i);
    }
}

static void pixels_step(void *state, const sk_env_io *io, int lo, int hi) {
    pixels_state *s = state;
    for (int i = lo; i < hi; i++) {
        int right = s->cell[i] % SIDE >= SIDE / 2;
        io->rewards[i] = io->actions[i] == right ? 1.0f : 0.0f;
        io->terminated[i] = 0;
        io->truncated[i] = 0;
        s->episode_return[i] += io->rewards[i];
        s->cell[i] = (int32_t)sk_rng_below(&s->rng[i], SIDE * SIDE);
        observe(s, io->obs_u8, i);
        if (++s->elapsed[i] < EPISODE_STEPS) continue;
        io->truncated[i] = 1;
        memcpy(io->final_obs_u8 + (size_t)i * OBS_SIZE, io->obs_u8 + (size_t)i * OBS_SIZE,
               OBS_SIZE);
        io->episode_log[(size_t)i * NUM_LOG_FIELDS] = s->episode_return[i];
        io->episode_log[(size_t)i * NUM_LOG_FIELDS + 1] = (float)s->elapsed[i];
        start_episode(s, io, i);
    }
}

static int pixels_arrays(void *state, sk_env_array *arrays) {
    return sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
}

/* The Box 0..1 of every byte (a constructor: the table points at them). */
__attribute__((constructor)) static void init_bounds(void) {
    for (int k = 0; k < OBS_SIZE; k++) g_high[k] = 1.0f;
}

static const sk_env_def g_pixels = {
    .id = "Pixels-v0",
    .alias = "pixels",
    .summary = "name the half of a 10x10x3 uint8 image its lit cell is in (tests)",
    .obs_size = OBS_SIZE,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
    .max_episode_steps = EPISODE_STEPS,
    .solved_threshold = NAN,
    .num_log_fields = NUM_LOG_FIELDS,
    .log_names = {"episode_return", "episode_length"},
    .create = pixels_create,
    .destroy = pixels_destroy,
    .reset = pixels_reset,
    .step = pixels_step,
    .state_arrays = pixels_arrays,
    .obs_low = g_low,
    .obs_high = g_high,
    .obs_dtype = SK_OBS_U8,
    .obs_shape = {SIDE, SIDE, CHANNELS},
};

SK_PLUGIN_EXPORT(&g_pixels)
