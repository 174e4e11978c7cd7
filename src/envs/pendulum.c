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
 */
#include "pendulum.h"
#include "render.h"
#include "soa.h"

#include "../core/config.h"
#include "../core/rng.h"
#include "../core/vmath.h"

#include <math.h>
#include <string.h>

/* Gymnasium's constants (gymnasium/envs/classic_control/pendulum.py). */
#define DEFAULT_GRAVITY 10.0
#define MASS 1.0
#define LENGTH 1.0
#define DT 0.05
#define MAX_SPEED 8.0
#define MAX_TORQUE 2.0
#define RESET_THETA M_PI  /* DEFAULT_X */
#define RESET_THETA_DOT 1.0 /* DEFAULT_Y */
#define TWO_PI (2.0 * M_PI) /* exact doubling, as numpy's 2 * np.pi */
#define MAX_EPISODE_STEPS 200
#define OBS_SIZE 3
#define TORQUE_COEF (3.0 / (MASS * (LENGTH * LENGTH))) /* 3.0 / (m * l**2), left to right */

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
    sk_status status = sk_cfg_double(cfg, "env.g", DEFAULT_GRAVITY, 0.0, 1000.0, &gravity);
    if (status != SK_OK) return status;
    status = sk_cfg_choice(cfg, "env.observe", observe_choices[0], observe_choices, &observe);
    if (status != SK_OK) return status;
    sk_pendulum_state *s = sk_soa_create(sizeof *s, g_fields, NUM_FIELDS, num_envs, "Pendulum");
    if (!s) return SK_ERR_NOMEM;
    s->num_envs = num_envs;
    s->gravity = gravity;
    s->observe_positions = strcmp(observe_choices[observe], "positions") == 0;
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

static inline void write_obs(const sk_pendulum_state *s, float *obs, int i) {
    obs[0] = (float)cos(s->theta[i]);
    obs[1] = (float)sin(s->theta[i]);
    obs[2] = s->observe_positions ? 0.0f : (float)s->theta_dot[i];
}

/* Gymnasium draws uniform(low=[-pi, -1], high=[pi, 1]): theta first, then theta_dot. */
static inline void reset_one(sk_pendulum_state *s, int i) {
    s->theta[i] = sk_rng_uniform(&s->rng[i], -RESET_THETA, RESET_THETA);
    s->theta_dot[i] = sk_rng_uniform(&s->rng[i], -RESET_THETA_DOT, RESET_THETA_DOT);
    s->elapsed[i] = 0;
    s->episode_return[i] = 0.0;
}

static void pendulum_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    sk_pendulum_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        reset_one(s, i);
        write_obs(s, io->obs + (size_t)i * OBS_SIZE, i);
    }
}

static inline double clip(double value, double lo, double hi) {
    return value < lo ? lo : value > hi ? hi : value;
}

/* np.clip(action, -MAX_TORQUE, MAX_TORQUE), NaN passing through, written around fabs so that
 * the float-to-double conversion feeds every branch: GCC otherwise sinks it into one branch,
 * where it may trap, and the loop stays scalar. */
static inline double clip_torque(float action) {
    double u = (double)action;
    return fabs(u) > MAX_TORQUE ? copysign(MAX_TORQUE, u) : u;
}

/* Gymnasium's step given sin(theta) and angle_normalize(theta), shared by the reference and the
 * vector paths so the physics exists once: the cost of the state before the step and the
 * clipped torque, then semi-implicit Euler with the new speed clipped before it moves the
 * angle. Returns the cost. gravity_coef is 3 * g / (2 * l), evaluated left to right as Python
 * does. */
static inline double advance(double gravity_coef, double u, double sin_theta, double angle,
                             double *theta, double *theta_dot) {
    double cost = angle * angle + 0.1 * (*theta_dot * *theta_dot) + 0.001 * (u * u);
    double new_theta_dot = *theta_dot + (gravity_coef * sin_theta + TORQUE_COEF * u) * DT;
    new_theta_dot = clip(new_theta_dot, -MAX_SPEED, MAX_SPEED);
    *theta = *theta + new_theta_dot * DT;
    *theta_dot = new_theta_dot;
    return cost;
}

/* Logs, resets and writes the first observation of the episodes that ended (every 200 steps;
 * Pendulum never terminates). */
static void finish_episodes(sk_pendulum_state *s, const sk_env_io *io, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (!io->truncated[i]) continue;
        float *obs = io->obs + (size_t)i * OBS_SIZE;
        float *final_obs = io->final_obs + (size_t)i * OBS_SIZE;
        for (int k = 0; k < OBS_SIZE; k++) final_obs[k] = obs[k];
        io->episode_log[2 * i + 0] = (float)s->episode_return[i];
        io->episode_log[2 * i + 1] = (float)s->elapsed[i];
        reset_one(s, i);
        write_obs(s, obs, i);
    }
}

/* The readable reference: libm's sin, cos and fmod, one env at a time. */
void sk_pendulum_step_reference(void *state, const sk_env_io *io, int lo, int hi) {
    sk_pendulum_state *s = state;
    const double gravity_coef = 3.0 * s->gravity / (2.0 * LENGTH);
    for (int i = lo; i < hi; i++) {
        double u = clip_torque(io->actions_continuous[i]);
        double theta = s->theta[i], theta_dot = s->theta_dot[i];
        /* angle_normalize: Python's floored (x + pi) % (2 pi), i.e. fmod shifted into
         * [0, 2 pi), then - pi */
        double wrapped = fmod(theta + M_PI, TWO_PI);
        wrapped = wrapped < 0.0 ? wrapped + TWO_PI : wrapped;
        double cost = advance(gravity_coef, u, sin(theta), wrapped - M_PI, &theta, &theta_dot);
        s->theta[i] = theta;
        s->theta_dot[i] = theta_dot;
        double reward = -cost;
        io->rewards[i] = (float)reward;
        s->episode_return[i] += reward;
        int32_t elapsed = ++s->elapsed[i];
        io->terminated[i] = 0;
        io->truncated[i] = elapsed >= MAX_EPISODE_STEPS;
        write_obs(s, io->obs + (size_t)i * OBS_SIZE, i);
    }
    finish_episodes(s, io, lo, hi);
}

/*
 * The vector path: the same operations, with sin, cos and angle_normalize from vmath.h, as
 * branch-free loops over struct-of-arrays that GCC runs on SIMD lanes. Each loop keeps to one
 * element width (GCC 12 leaves a loop scalar that mixes double arithmetic with 32-bit counters
 * or byte flags); the episode ends, one per env every 200 steps, are handled after them. theta
 * is unwrapped and moves at most MAX_SPEED * DT a step, so the check of the old angles covers
 * the new ones too.
 */
#define VECTOR_THETA_LIMIT (SK_VMATH_BOUND - MAX_SPEED * DT)

/* The vector step of envs lo..hi-1; theta_dot observed as 0 when `positions`. Compiled once
 * per value, each a function of its own (below), so the full observation's loops compile as
 * they would alone. */
static inline __attribute__((always_inline)) void step_vector(sk_pendulum_state *s,
                                                              const sk_env_io *io, int lo, int hi,
                                                              bool positions) {
    const double gravity_coef = 3.0 * s->gravity / (2.0 * LENGTH);
    double *restrict thetas = s->theta, *restrict theta_dots = s->theta_dot;
    double *restrict returns = s->episode_return;
    const float *restrict actions = io->actions_continuous;
    float *restrict rewards = io->rewards, *restrict obs = io->obs;
    for (int i = lo; i < hi; i++) {
        double u = clip_torque(actions[i]);
        double theta = thetas[i], theta_dot = theta_dots[i];
        double cost = advance(gravity_coef, u, sk_vsin(theta), sk_vangle_normalize(theta),
                              &theta, &theta_dot);
        thetas[i] = theta;
        theta_dots[i] = theta_dot;
        double reward = -cost;
        rewards[i] = (float)reward;
        returns[i] += reward;
    }
    for (int i = lo; i < hi; i++) {
        double sin_theta, cos_theta;
        sk_vsincos(thetas[i], &sin_theta, &cos_theta);
        obs[(size_t)i * OBS_SIZE + 0] = (float)cos_theta;
        obs[(size_t)i * OBS_SIZE + 1] = (float)sin_theta;
        obs[(size_t)i * OBS_SIZE + 2] = positions ? 0.0f : (float)theta_dots[i];
    }
    int32_t *restrict elapsed = s->elapsed;
    for (int i = lo; i < hi; i++) elapsed[i] += 1;
    uint8_t *restrict terminated = io->terminated, *restrict truncated = io->truncated;
    int ended = 0;
    for (int i = lo; i < hi; i++) {
        int trunc = elapsed[i] >= MAX_EPISODE_STEPS;
        terminated[i] = 0;
        truncated[i] = (uint8_t)trunc;
        ended |= trunc;
    }
    if (ended) finish_episodes(s, io, lo, hi);
}

static __attribute__((noinline)) void step_vector_full(sk_pendulum_state *s, const sk_env_io *io,
                                                       int lo, int hi) {
    step_vector(s, io, lo, hi, false);
}

static __attribute__((noinline)) void step_vector_positions(sk_pendulum_state *s,
                                                            const sk_env_io *io, int lo, int hi) {
    step_vector(s, io, lo, hi, true);
}

static void pendulum_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_pendulum_state *s = state;
    if (!sk_vrange_ok(s->theta, lo, hi, VECTOR_THETA_LIMIT))
        sk_pendulum_step_reference(state, io, lo, hi);
    else if (s->observe_positions)
        step_vector_positions(s, io, lo, hi);
    else
        step_vector_full(s, io, lo, hi);
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
static const float pendulum_obs_low[OBS_SIZE] = {-1.0f, -1.0f, (float)-MAX_SPEED};
static const float pendulum_obs_high[OBS_SIZE] = {1.0f, 1.0f, (float)MAX_SPEED};

/* What Pendulum-v1 and Pendulum-P-v1 share: spaces, limits, threshold, log and functions. */
#define PENDULUM_TABLE                                                                             \
    .obs_size = OBS_SIZE, .obs_low = pendulum_obs_low, .obs_high = pendulum_obs_high,             \
    .action_space = {.kind = SK_SPACE_CONTINUOUS, .dim = 1, .low = {(float)-MAX_TORQUE},           \
                     .high = {(float)MAX_TORQUE}},                                                 \
    .mask_size = 0, .max_episode_steps = MAX_EPISODE_STEPS, .solved_threshold = -200.0,           \
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
