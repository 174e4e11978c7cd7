/*
 * CartPole-v1 (Barto, Sutton, Anderson 1983) with Gymnasium 1.x's exact rules:
 * explicit Euler with tau = 0.02, termination at |x| > 2.4 or |theta| > 12
 * degrees, reward +1 on every step including the terminating one, reset state
 * U(-0.05, 0.05) in each coordinate, truncation after 500 steps.
 *
 * env.observe = positions (and CartPole-P-v1, which fixes it) hides the velocities, a task that
 * needs memory: the observation (x, x_dot, theta, theta_dot) is written as (x, 0, theta, 0),
 * final_obs too, while the state, dynamics, rewards and termination stay the full env's. The
 * velocities are zeroed rather than dropped so that obs_size stays 4 and a policy keeps its
 * shape across the two envs. Every path that writes observations zeroes them there: reset and
 * the scalar reference test the flag per env; each vector loop is compiled once per value, as a
 * function of its own (the *_full and *_positions pairs), chosen once per call: inlined into one
 * function, the two variants share their hoisted constants and the AVX-512 loop spills some;
 * apart, each loop compiles as it would alone.
 *
 * The vector steps are compiled once per ISA level (src/envs/isa/cartpole_step.c, the AVX-512
 * float32 kernel included) and each env state calls the one of the level in use, picked at
 * create (docs/architecture.md, "One binary, every CPU"). This file keeps what runs at one
 * level: the config, the resets and the scalar reference.
 */
#include "cartpole_shared.h"
#include "render.h"
#include "soa.h"

#include "../core/config.h"
#include "../core/isa.h"

/* The per-env arrays of the state, for allocation and checkpoints: one table per precision.
 * Both name the coordinates x, x_dot, theta, theta_dot, so resuming a checkpoint at the other
 * precision fails on the arrays' dtype. */
static const sk_soa_field g_fields[] = {
    SK_SOA_FIELD(sk_cartpole_state, x, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_cartpole_state, x_dot, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_cartpole_state, theta, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_cartpole_state, theta_dot, SK_ARRAY_F64),
    SK_SOA_FIELD_RANGE(sk_cartpole_state, elapsed, SK_ARRAY_I32, 0, MAX_EPISODE_STEPS),
    SK_SOA_FIELD(sk_cartpole_state, episode_return, SK_ARRAY_F32),
    SK_SOA_FIELD(sk_cartpole_state, rng, SK_ARRAY_U64),
};
#define NUM_FIELDS ((int)(sizeof g_fields / sizeof g_fields[0]))

/* float32 has no episode_return: every reward is 1, so the return is the step count. */
static const sk_soa_field g_fields32[] = {
    SK_SOA_FIELD_NAMED("x", sk_cartpole_state, x32, SK_ARRAY_F32),
    SK_SOA_FIELD_NAMED("x_dot", sk_cartpole_state, x_dot32, SK_ARRAY_F32),
    SK_SOA_FIELD_NAMED("theta", sk_cartpole_state, theta32, SK_ARRAY_F32),
    SK_SOA_FIELD_NAMED("theta_dot", sk_cartpole_state, theta_dot32, SK_ARRAY_F32),
    SK_SOA_FIELD_RANGE(sk_cartpole_state, elapsed, SK_ARRAY_I32, 0, MAX_EPISODE_STEPS),
    SK_SOA_FIELD(sk_cartpole_state, rng, SK_ARRAY_U64),
};
#define NUM_FIELDS32 ((int)(sizeof g_fields32 / sizeof g_fields32[0]))

static const char *const g_precision_names[] = {"float64", "float32", NULL};
/* env.observe's values on CartPole-v1, and the only one CartPole-P-v1 accepts. */
static const char *const g_observe_names[] = {"full", "positions", NULL};
static const char *const g_observe_positions[] = {"positions", NULL};

static const sk_soa_field *fields_of(sk_cartpole_precision precision, int *num_fields) {
    *num_fields = precision == SK_CARTPOLE_FLOAT32 ? NUM_FIELDS32 : NUM_FIELDS;
    return precision == SK_CARTPOLE_FLOAT32 ? g_fields32 : g_fields;
}

/* observe_choices: env.observe's accepted values, the first the default. */
static sk_status create_observing(void **out, int num_envs, const sk_config *cfg,
                                  const char *const *observe_choices) {
    int precision, observe;
    sk_status status = sk_cfg_choice(cfg, "env.precision", "float64", g_precision_names, &precision);
    if (status != SK_OK) return status;
    status = sk_cfg_choice(cfg, "env.observe", observe_choices[0], observe_choices, &observe);
    if (status != SK_OK) return status;
    int num_fields;
    const sk_soa_field *fields = fields_of((sk_cartpole_precision)precision, &num_fields);
    sk_cartpole_state *s = sk_soa_create(sizeof *s, fields, num_fields, num_envs, "CartPole");
    if (!s) return SK_ERR_NOMEM;
    s->num_envs = num_envs;
    s->precision = (sk_cartpole_precision)precision;
    s->observe_positions = strcmp(observe_choices[observe], "positions") == 0;
    s->step = sk_cartpole_step_at(sk_isa_level_used());
    if (!s->step) s->step = sk_cartpole_step_baseline;
    *out = s;
    return SK_OK;
}

static sk_status cartpole_create(void **out, int num_envs, const sk_config *cfg) {
    return create_observing(out, num_envs, cfg, g_observe_names);
}

static sk_status cartpole_p_create(void **out, int num_envs, const sk_config *cfg) {
    return create_observing(out, num_envs, cfg, g_observe_positions);
}

static void cartpole_destroy(void *state) {
    if (!state) return;
    int num_fields;
    const sk_soa_field *fields = fields_of(((sk_cartpole_state *)state)->precision, &num_fields);
    sk_soa_destroy(state, fields, num_fields);
}

static void cartpole_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    sk_cartpole_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        reset_env(s, i, io->obs + (size_t)i * OBS_SIZE);
    }
}

static __attribute__((noinline)) void step32_libm_full(sk_cartpole_state *s, const sk_env_io *io,
                                                       int lo, int hi) {
    step32(s, io, lo, hi, true, false);
}

static __attribute__((noinline)) void step32_libm_positions(sk_cartpole_state *s,
                                                            const sk_env_io *io, int lo, int hi) {
    step32(s, io, lo, hi, true, true);
}

static void step32_libm(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi) {
    if (s->observe_positions) step32_libm_positions(s, io, lo, hi);
    else step32_libm_full(s, io, lo, hi);
}

/* The readable reference: libm's sin and cos, one env at a time. */
void sk_cartpole_step_reference(void *state, const sk_env_io *io, int lo, int hi) {
    sk_cartpole_state *s = state;
    if (s->precision == SK_CARTPOLE_FLOAT32) {
        step32_libm(s, io, lo, hi);
        return;
    }
    for (int i = lo; i < hi; i++) {
        double force = io->actions[i] == 1 ? FORCE_MAG : -FORCE_MAG;
        double x = s->x[i], x_dot = s->x_dot[i], theta = s->theta[i], theta_dot = s->theta_dot[i];
        advance(force, sin(theta), cos(theta), &x, &x_dot, &theta, &theta_dot);
        s->x[i] = x;
        s->x_dot[i] = x_dot;
        s->theta[i] = theta;
        s->theta_dot[i] = theta_dot;
        bool terminated = x < -X_THRESHOLD || x > X_THRESHOLD || theta < -THETA_THRESHOLD ||
                          theta > THETA_THRESHOLD;
        int32_t elapsed = ++s->elapsed[i];
        io->rewards[i] = 1.0f;
        s->episode_return[i] += 1.0f;
        io->terminated[i] = terminated;
        io->truncated[i] = !terminated && elapsed >= MAX_EPISODE_STEPS;
        write_obs(s, io->obs + (size_t)i * OBS_SIZE, i);
    }
    finish_episodes(s, io, lo, hi);
}

/* The vector step of the level in use, picked once per env state at create. */
static void cartpole_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_cartpole_state *s = state;
    s->step(s, io, lo, hi);
}

void sk_cartpole_step_portable(void *state, const sk_env_io *io, int lo, int hi) {
    sk_cartpole_step_baseline(state, io, lo, hi);
}

sk_cartpole_step_fn sk_cartpole_step_at(sk_isa_level level) {
    switch (level) {
    case SK_ISA_BASELINE: return sk_cartpole_step_baseline;
#if defined(__x86_64__)
    case SK_ISA_AVX2: return sk_cartpole_step_avx2;
    case SK_ISA_AVX512: return sk_cartpole_step_avx512;
#endif
    default: return NULL;
    }
}

static int cartpole_state_arrays(void *state, sk_env_array *arrays) {
    int num_fields;
    const sk_soa_field *fields = fields_of(((sk_cartpole_state *)state)->precision, &num_fields);
    return sk_soa_arrays(state, fields, num_fields, arrays);
}

static const sk_env_extras cartpole_extras = {
    .preset = "cartpole",
    .render_width = SK_CARTPOLE_RENDER_WIDTH,
    .render_height = SK_CARTPOLE_RENDER_HEIGHT,
    .render = sk_cartpole_render,
};

static const sk_env_extras cartpole_p_extras = {
    .preset = "cartpole_p",
    .render_width = SK_CARTPOLE_RENDER_WIDTH,
    .render_height = SK_CARTPOLE_RENDER_HEIGHT,
    .render = sk_cartpole_render,
};

/* Gymnasium's observation space: x within twice its threshold, theta within twice its
 * threshold (an episode ends past the threshold, so an observation stays well inside), the
 * velocities unbounded. */
static const float cartpole_obs_high[OBS_SIZE] = {(float)(2 * X_THRESHOLD), INFINITY,
                                                  (float)(2 * THETA_THRESHOLD), INFINITY};
static const float cartpole_obs_low[OBS_SIZE] = {(float)(-2 * X_THRESHOLD), -INFINITY,
                                                 (float)(-2 * THETA_THRESHOLD), -INFINITY};

/* What CartPole-v1 and CartPole-P-v1 share: spaces, limits, threshold, log and functions. */
#define CARTPOLE_TABLE                                                                             \
    .obs_size = OBS_SIZE, .obs_low = cartpole_obs_low, .obs_high = cartpole_obs_high,             \
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},                \
    .mask_size = 0, .max_episode_steps = MAX_EPISODE_STEPS, .solved_threshold = 475.0,            \
    .num_log_fields = 2, .log_names = {"episode_return", "episode_length"},                        \
    .state_arrays = cartpole_state_arrays, .destroy = cartpole_destroy, .reset = cartpole_reset,  \
    .step = cartpole_step

const sk_env_def sk_env_cartpole = {
    .id = "CartPole-v1",
    .alias = "cartpole",
    .summary = "balance a pole on a cart by pushing it left or right",
    .create = cartpole_create,
    .extras = &cartpole_extras,
    CARTPOLE_TABLE,
};

/* CartPole-v1 with env.observe = positions fixed: only create (and the preset) differ. */
const sk_env_def sk_env_cartpole_p = {
    .id = "CartPole-P-v1",
    .alias = "cartpole-p",
    .summary = "CartPole-v1 with the velocities observed as 0: balancing needs memory",
    .create = cartpole_p_create,
    .extras = &cartpole_p_extras,
    CARTPOLE_TABLE,
};
