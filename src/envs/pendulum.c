/*
 * Pendulum-v1 (the classic inverted-pendulum swing-up) with Gymnasium 1.x's exact rules:
 * torque clipped to [-2, 2]; cost = angle_normalize(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2
 * from the state before the step and the clipped torque; semi-implicit Euler with dt = 0.05,
 * the new speed clipped to [-8, 8] before it moves the angle; reward = -cost; never
 * terminates; truncation after 200 steps; reset theta ~ U(-pi, pi), theta_dot ~ U(-1, 1).
 * The observation is (cos theta, sin theta, theta_dot) rounded to float32.
 *
 * env.observe = positions (and Pendulum-P-v1, which fixes it) hides the angular velocity, a
 * task that needs memory: the observation is written as (cos theta, sin theta, 0), final_obs
 * too, while the state, dynamics and rewards stay the full env's. The velocity is zeroed rather
 * than dropped so that obs_size stays 3 and a policy keeps its shape across the two envs.
 *
 * The vector step is compiled once per ISA level (src/envs/isa/pendulum_step.c, the physics
 * shared with the reference through pendulum_shared.h); create picks the level in use's, and
 * every level's results are bit for bit the same.
 */
#include "pendulum_shared.h"
#include "render.h"
#include "soa.h"

#include "../core/config.h"
#include <string.h>

/* The per-env arrays of the state, for allocation and checkpoints. */
static const sk_soa_field g_fields[] = {
    SK_SOA_FIELD(sk_pendulum_state, theta, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_pendulum_state, theta_dot, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_pendulum_state, elapsed, SK_ARRAY_I32),
    SK_SOA_FIELD(sk_pendulum_state, episode_return, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_pendulum_state, rng, SK_ARRAY_U64),
};
#define NUM_FIELDS ((int)(sizeof g_fields / sizeof g_fields[0]))

/* env.observe's values on Pendulum-v1, and the only one Pendulum-P-v1 accepts. */
static const char *const g_observe_names[] = {"full", "positions", NULL};
static const char *const g_observe_positions[] = {"positions", NULL};

/* observe_choices: env.observe's accepted values, the first the default. */
static sk_status create_observing(void **out, int num_envs, const sk_config *cfg,
                                  const char *const *observe_choices) {
    double gravity;
    int observe;
    /* Gymnasium's make("Pendulum-v1", g=...); any positive gravity is a valid pendulum */
    sk_status status = sk_cfg_double(cfg, "env.g", PD_DEFAULT_GRAVITY, 0.0, 1000.0, &gravity);
    if (status != SK_OK) return status;
    status = sk_cfg_choice(cfg, "env.observe", observe_choices[0], observe_choices, &observe);
    if (status != SK_OK) return status;
    sk_pendulum_state *s = sk_soa_create(sizeof *s, g_fields, NUM_FIELDS, num_envs, "Pendulum");
    if (!s) return SK_ERR_NOMEM;
    s->num_envs = num_envs;
    s->gravity = gravity;
    s->observe_positions = strcmp(observe_choices[observe], "positions") == 0;
    s->step = sk_pendulum_step_at(sk_isa_level_used());
    if (!s->step) s->step = sk_pendulum_step_baseline;
    *out = s;
    return SK_OK;
}

static sk_status pendulum_create(void **out, int num_envs, const sk_config *cfg) {
    return create_observing(out, num_envs, cfg, g_observe_names);
}

static sk_status pendulum_p_create(void **out, int num_envs, const sk_config *cfg) {
    return create_observing(out, num_envs, cfg, g_observe_positions);
}

static void pendulum_destroy(void *state) { sk_soa_destroy(state, g_fields, NUM_FIELDS); }

static void pendulum_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    sk_pendulum_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        pd_reset_one(s, i);
        pd_write_obs(s, io->obs + (size_t)i * PD_OBS_SIZE, i);
    }
}

/* The readable reference: libm's sin, cos and fmod, one env at a time. */
void sk_pendulum_step_reference(void *state, const sk_env_io *io, int lo, int hi) {
    sk_pendulum_state *s = state;
    const double gravity_coef = 3.0 * s->gravity / (2.0 * PD_LENGTH);
    for (int i = lo; i < hi; i++) {
        double u = pd_clip_torque(io->actions_continuous[i]);
        double theta = s->theta[i], theta_dot = s->theta_dot[i];
        /* angle_normalize: Python's floored (x + pi) % (2 pi), i.e. fmod shifted into
         * [0, 2 pi), then - pi */
        double wrapped = fmod(theta + M_PI, PD_TWO_PI);
        wrapped = wrapped < 0.0 ? wrapped + PD_TWO_PI : wrapped;
        double cost = pd_advance(gravity_coef, u, sin(theta), wrapped - M_PI, &theta, &theta_dot);
        s->theta[i] = theta;
        s->theta_dot[i] = theta_dot;
        double reward = -cost;
        io->rewards[i] = (float)reward;
        s->episode_return[i] += reward;
        int32_t elapsed = ++s->elapsed[i];
        io->terminated[i] = 0;
        io->truncated[i] = elapsed >= PD_MAX_EPISODE_STEPS;
        pd_write_obs(s, io->obs + (size_t)i * PD_OBS_SIZE, i);
    }
    pd_finish_episodes(s, io, lo, hi);
}

/* The vector step of the level in use, picked once per env state at create. */
static void pendulum_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_pendulum_state *s = state;
    s->step(s, io, lo, hi);
}

sk_pendulum_step_fn sk_pendulum_step_at(sk_isa_level level) {
    switch (level) {
    case SK_ISA_BASELINE: return sk_pendulum_step_baseline;
#if defined(__x86_64__)
    case SK_ISA_AVX2: return sk_pendulum_step_avx2;
    case SK_ISA_AVX512: return sk_pendulum_step_avx512;
#endif
    default: return NULL;
    }
}

static int pendulum_state_arrays(void *state, sk_env_array *arrays) {
    return sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
}

static const sk_env_extras pendulum_extras = {
    .preset = "pendulum",
    .render_width = SK_PENDULUM_RENDER_SIZE,
    .render_height = SK_PENDULUM_RENDER_SIZE,
    .render = sk_pendulum_render,
};

static const sk_env_extras pendulum_p_extras = {
    .preset = "pendulum_p",
    .render_width = SK_PENDULUM_RENDER_SIZE,
    .render_height = SK_PENDULUM_RENDER_SIZE,
    .render = sk_pendulum_render,
};

/* Gymnasium's observation space: cos and sin of the angle, the clipped angular velocity. */
static const float pendulum_obs_low[PD_OBS_SIZE] = {-1.0f, -1.0f, (float)-PD_MAX_SPEED};
static const float pendulum_obs_high[PD_OBS_SIZE] = {1.0f, 1.0f, (float)PD_MAX_SPEED};

/* What Pendulum-v1 and Pendulum-P-v1 share: spaces, limits, threshold, log and functions. */
#define PENDULUM_TABLE                                                                             \
    .obs_size = PD_OBS_SIZE, .obs_low = pendulum_obs_low, .obs_high = pendulum_obs_high,             \
    .action_space = {.kind = SK_SPACE_CONTINUOUS, .dim = 1, .low = {(float)-PD_MAX_TORQUE},           \
                     .high = {(float)PD_MAX_TORQUE}},                                                 \
    .mask_size = 0, .max_episode_steps = PD_MAX_EPISODE_STEPS, .solved_threshold = -200.0,           \
    .num_log_fields = 2, .log_names = {"episode_return", "episode_length"},                        \
    .state_arrays = pendulum_state_arrays, .destroy = pendulum_destroy, .reset = pendulum_reset,  \
    .step = pendulum_step

const sk_env_def sk_env_pendulum = {
    .id = "Pendulum-v1",
    .alias = "pendulum",
    .summary = "swing a torque-limited pendulum upright and hold it there",
    .create = pendulum_create,
    .extras = &pendulum_extras,
    PENDULUM_TABLE,
};

/* Pendulum-v1 with env.observe = positions fixed: only create (and the preset) differ. */
const sk_env_def sk_env_pendulum_p = {
    .id = "Pendulum-P-v1",
    .alias = "pendulum-p",
    .summary = "Pendulum-v1 with the angular velocity observed as 0: needs memory",
    .create = pendulum_p_create,
    .extras = &pendulum_p_extras,
    PENDULUM_TABLE,
};
