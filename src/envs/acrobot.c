/*
 * Acrobot-v1 (Sutton 1996; Sutton and Barto 1998) with Gymnasium 1.x's exact rules: the
 * "book" equations of motion, one classical Runge-Kutta step over dt = 0.2 per action, angles
 * wrapped to [-pi, pi] and velocities clipped to 4 pi and 9 pi after the step, termination when
 * the tip is more than one link length above the pivot, reward -1 per step and 0 on the
 * terminating one, reset state U(-0.1, 0.1) in each coordinate rounded to float32, truncation
 * after 500 steps.
 *
 * Agreement with Gymnasium to the last bits needs its floating-point operations in its order:
 * the expressions below keep Python's left-to-right association, and fused multiply-add is off
 * for the dynamics (NumPy rounds every product and every sum separately; gnu17 builds would
 * otherwise contract a * b + c into one FMA on CPUs that have it). What remains is libm: NumPy
 * on AVX-512 CPUs takes float64 sin and cos from Intel's SVML (a few ulp from glibc's), and
 * Gymnasium's `x**2` calls pow, which misrounds about one square in a thousand; skinner uses
 * libm's sin and cos and x * x (pow would double the cost of a step), so single steps agree to
 * ~1e-13 relative rather than bit for bit (tests/test_acrobot.c measures it).
 *
 * Two paths compute the step. sk_acrobot_step_reference is the readable one: libm, one env at a
 * time. The env's .step runs the same operations on SIMD lanes with sin and cos from
 * core/vmath.h (within 1 ulp of libm's, so within the agreement above), and falls back to the
 * reference for a range whose state could take them outside their range. That vector step is
 * compiled once per ISA level (src/envs/isa/acrobot_step.c, the dynamics shared with the
 * reference through acrobot_shared.h); create picks the level in use's, and every level's
 * results are bit for bit the same.
 */
#include "acrobot_shared.h"
#include "render.h"
#include "soa.h"

#include "../core/config.h"

/* The per-env arrays of the state, for allocation and checkpoints. */
static const sk_soa_field g_fields[] = {
    SK_SOA_FIELD(sk_acrobot_state, theta1, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_acrobot_state, theta2, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_acrobot_state, dtheta1, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_acrobot_state, dtheta2, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_acrobot_state, elapsed, SK_ARRAY_I32),
    SK_SOA_FIELD(sk_acrobot_state, episode_return, SK_ARRAY_F32),
    SK_SOA_FIELD(sk_acrobot_state, rng, SK_ARRAY_U64),
};
#define NUM_FIELDS ((int)(sizeof g_fields / sizeof g_fields[0]))

static sk_status acrobot_create(void **out, int num_envs, const sk_config *cfg) {
    (void)cfg;
    sk_acrobot_state *s = sk_soa_create(sizeof *s, g_fields, NUM_FIELDS, num_envs, "Acrobot");
    if (!s) return SK_ERR_NOMEM;
    s->num_envs = num_envs;
    s->step = sk_acrobot_step_at(sk_isa_level_used());
    if (!s->step) s->step = sk_acrobot_step_baseline;
    *out = s;
    return SK_OK;
}

static void acrobot_destroy(void *state) { sk_soa_destroy(state, g_fields, NUM_FIELDS); }

static void acrobot_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    sk_acrobot_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        acrobot_reset_one(s, i);
        acrobot_write_obs(s, io->obs + (size_t)i * ACROBOT_OBS_SIZE, i);
    }
}

/* The readable reference: libm's sin and cos, one env at a time. */
NO_FP_CONTRACT void sk_acrobot_step_reference(void *state, const sk_env_io *io, int lo, int hi) {
    sk_acrobot_state *s = state;
    for (int i = lo; i < hi; i++) {
        double torque = (double)(io->actions[i] - 1);
        acrobot_vec y = {s->theta1[i], s->theta2[i], s->dtheta1[i], s->dtheta2[i]};
        y = acrobot_rk4_step(y, torque, TRIG_LIBM);
        y.theta1 = wrap_angle(y.theta1);
        y.theta2 = wrap_angle(y.theta2);
        y.dtheta1 = clip_velocity(y.dtheta1, MAX_VEL_1);
        y.dtheta2 = clip_velocity(y.dtheta2, MAX_VEL_2);
        s->theta1[i] = y.theta1;
        s->theta2[i] = y.theta2;
        s->dtheta1[i] = y.dtheta1;
        s->dtheta2[i] = y.dtheta2;

        bool terminated = tip_above_line(cos(y.theta1), cos(y.theta2 + y.theta1));
        int32_t elapsed = ++s->elapsed[i];
        float reward = terminated ? 0.0f : -1.0f;
        io->rewards[i] = reward;
        s->episode_return[i] += reward;
        io->terminated[i] = terminated;
        io->truncated[i] = !terminated && elapsed >= ACROBOT_MAX_STEPS;
        acrobot_write_obs(s, io->obs + (size_t)i * ACROBOT_OBS_SIZE, i);
    }
    acrobot_finish_episodes(s, io, lo, hi);
}

/* The vector step of the level in use, picked once per env state at create. */
static void acrobot_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_acrobot_state *s = state;
    s->step(s, io, lo, hi);
}

sk_acrobot_step_fn sk_acrobot_step_at(sk_isa_level level) {
    switch (level) {
    case SK_ISA_BASELINE: return sk_acrobot_step_baseline;
#if defined(__x86_64__)
    case SK_ISA_AVX2: return sk_acrobot_step_avx2;
    case SK_ISA_AVX512: return sk_acrobot_step_avx512;
#endif
    default: return NULL;
    }
}

static int acrobot_state_arrays(void *state, sk_env_array *arrays) {
    return sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
}

/* Gymnasium's observation space: cos and sin of both joint angles, the clipped velocities. */
static const float acrobot_obs_low[ACROBOT_OBS_SIZE] = {-1.0f, -1.0f, -1.0f, -1.0f, (float)-MAX_VEL_1,
                                                (float)-MAX_VEL_2};
static const float acrobot_obs_high[ACROBOT_OBS_SIZE] = {1.0f, 1.0f, 1.0f, 1.0f, (float)MAX_VEL_1,
                                                 (float)MAX_VEL_2};

static const sk_env_extras acrobot_extras = {
    .preset = "acrobot",
    .render_width = SK_ACROBOT_RENDER_SIZE,
    .render_height = SK_ACROBOT_RENDER_SIZE,
    .render = sk_acrobot_render,
};

const sk_env_def sk_env_acrobot = {
    .id = "Acrobot-v1",
    .alias = "acrobot",
    .summary = "swing a two-link pendulum's tip above a line by torquing its middle joint",
    .obs_size = ACROBOT_OBS_SIZE,
    .obs_low = acrobot_obs_low,
    .obs_high = acrobot_obs_high,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {ACROBOT_NUM_ACTIONS}},
    .mask_size = 0,
    .max_episode_steps = ACROBOT_MAX_STEPS,
    .solved_threshold = -100.0,
    .num_log_fields = 2,
    .log_names = {"episode_return", "episode_length"},
    .create = acrobot_create,
    .state_arrays = acrobot_state_arrays,
    .destroy = acrobot_destroy,
    .reset = acrobot_reset,
    .step = acrobot_step,
    .extras = &acrobot_extras,
};
