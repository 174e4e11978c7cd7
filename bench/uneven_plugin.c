/*
 * Uneven-v0, a bench plugin for issue 33 ask 6 (bench/balance.sh): an env whose steps cost
 * uneven time, as envs of different levels, maps or knowledge bases do. Each step of env i
 * burns env.work iterations of arithmetic, times env.skew for the first quarter of the envs
 * (the slow ones sit together, as a level or a map would give a contiguous block), times 1 to
 * 4 drawn per step from the env's stream (uneven steps within one env, as a proof search's).
 * The task itself is trivial (say the bit of the observation: +1 when the action matches it,
 * 64 steps an episode), so the time measured is the stepping's and the acting's.
 */
#include <skinner/env.h>

#include <string.h>

#define OBS_SIZE 2
#define EPISODE_STEPS 64
#define NUM_LOG_FIELDS 2

typedef struct uneven_state {
    int num_envs;
    int64_t work, skew;
    int32_t *elapsed;
    float *bit, *episode_return;
    uint64_t *rng;
} uneven_state;

static const sk_soa_field g_fields[] = {
    SK_SOA_FIELD_RANGE(uneven_state, elapsed, SK_ARRAY_I32, 0, EPISODE_STEPS),
    SK_SOA_FIELD_RANGE(uneven_state, bit, SK_ARRAY_F32, 0, 1),
    SK_SOA_FIELD_RANGE(uneven_state, episode_return, SK_ARRAY_F32, 0, EPISODE_STEPS),
    SK_SOA_FIELD(uneven_state, rng, SK_ARRAY_U64),
};
#define NUM_FIELDS ((int)(sizeof g_fields / sizeof g_fields[0]))

static sk_status uneven_create(void **out, int num_envs, const sk_config *cfg) {
    int64_t work, skew;
    sk_status status = sk_cfg_int(cfg, "env.work", 2000, 0, 100000000, &work);
    if (status == SK_OK) status = sk_cfg_int(cfg, "env.skew", 8, 1, 1000, &skew);
    if (status != SK_OK) return status;
    uneven_state *s = sk_soa_create(sizeof *s, g_fields, NUM_FIELDS, num_envs, "Uneven-v0");
    if (!s) return SK_ERR_NOMEM;
    s->num_envs = num_envs;
    s->work = work;
    s->skew = skew;
    *out = s;
    return SK_OK;
}

static void uneven_destroy(void *state) { sk_soa_destroy(state, g_fields, NUM_FIELDS); }

static int uneven_state_arrays(void *state, sk_env_array *arrays) {
    return sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
}

static void observe(const uneven_state *s, const sk_env_io *io, int i) {
    io->obs[(size_t)i * OBS_SIZE] = s->bit[i];
    io->obs[(size_t)i * OBS_SIZE + 1] = (float)s->elapsed[i] / EPISODE_STEPS;
}

static void new_bit(uneven_state *s, int i) { s->bit[i] = (float)sk_rng_below(&s->rng[i], 2); }

static void uneven_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    uneven_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        s->elapsed[i] = 0;
        s->episode_return[i] = 0.0f;
        new_bit(s, i);
        observe(s, io, i);
    }
}

/* The step's cost: iterations of a dependent multiply-add the compiler cannot drop. */
static float burn(int64_t iterations, float x) {
    volatile float sink = x;
    float a = sink;
    for (int64_t k = 0; k < iterations; k++) a = a * 0.999999f + 1e-6f;
    sink = a;
    return sink;
}

static void uneven_step(void *state, const sk_env_io *io, int lo, int hi) {
    uneven_state *s = state;
    for (int i = lo; i < hi; i++) {
        int64_t work = s->work * (i < s->num_envs / 4 ? s->skew : 1);
        work *= 1 + (int64_t)sk_rng_below(&s->rng[i], 4);
        (void)burn(work, s->bit[i]);
        float reward = (float)io->actions[i] == s->bit[i] ? 1.0f : 0.0f;
        s->episode_return[i] += reward;
        s->elapsed[i]++;
        io->rewards[i] = reward;
        io->terminated[i] = 0;
        io->truncated[i] = s->elapsed[i] >= EPISODE_STEPS;
        new_bit(s, i);
        observe(s, io, i);
        if (io->truncated[i]) {
            memcpy(io->final_obs + (size_t)i * OBS_SIZE, io->obs + (size_t)i * OBS_SIZE,
                   OBS_SIZE * sizeof(float));
            float *log = io->episode_log + (size_t)i * NUM_LOG_FIELDS;
            log[0] = s->episode_return[i];
            log[1] = (float)s->elapsed[i];
            s->elapsed[i] = 0;
            s->episode_return[i] = 0.0f;
            observe(s, io, i);
        }
    }
}

static const float g_low[OBS_SIZE] = {0, 0}, g_high[OBS_SIZE] = {1, 1};

static const sk_env_def uneven_env = {
    .id = "Uneven-v0",
    .summary = "a trivial task whose steps cost uneven time (bench/balance.sh)",
    .obs_size = OBS_SIZE,
    .obs_low = g_low,
    .obs_high = g_high,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
    .max_episode_steps = EPISODE_STEPS,
    .solved_threshold = EPISODE_STEPS - 1,
    .num_log_fields = NUM_LOG_FIELDS,
    .log_names = {"episode_return", "episode_length"},
    .create = uneven_create,
    .destroy = uneven_destroy,
    .reset = uneven_reset,
    .step = uneven_step,
    .state_arrays = uneven_state_arrays,
};

SK_PLUGIN_EXPORT(&uneven_env)
