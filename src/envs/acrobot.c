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
 * reference for a range whose state could take them outside their range.
 */
#include "acrobot.h"
#include "render.h"
#include "soa.h"

#include "../core/config.h"
#include "../core/rng.h"
#include "../core/vmath.h"

#include <math.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#define NO_FP_CONTRACT
#elif defined(__GNUC__)
#define NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define NO_FP_CONTRACT
#endif

/* Gymnasium's constants (gymnasium/envs/classic_control/acrobot.py, AcrobotEnv). */
#define DT 0.2
#define LINK_LENGTH_1 1.0
#define LINK_MASS_1 1.0
#define LINK_MASS_2 1.0
#define LINK_COM_POS_1 0.5
#define LINK_COM_POS_2 0.5
#define LINK_MOI 1.0
#define GRAVITY 9.8 /* g in _dsdt */
#define MAX_VEL_1 (4.0 * M_PI)
#define MAX_VEL_2 (9.0 * M_PI)
#define RESET_BOUND 0.1
#define MAX_EPISODE_STEPS 500
#define OBS_SIZE 6
#define NUM_ACTIONS 3 /* torque AVAIL_TORQUE[a] = {-1, 0, +1}[a] = a - 1 */

/* The four state coordinates, or their time derivatives. */
typedef struct acrobot_vec {
    double theta1, theta2, dtheta1, dtheta2;
} acrobot_vec;

/* Where sin and cos come from: libm in the reference, vmath.h on vector lanes. Every call passes
 * a constant, so each path compiles to one of them. */
typedef enum trig_source { TRIG_LIBM, TRIG_VMATH } trig_source;

static inline double cos_from(trig_source source, double x) {
    return source == TRIG_VMATH ? sk_vcos(x) : cos(x);
}

static inline double sin_from(trig_source source, double x) {
    return source == TRIG_VMATH ? sk_vsin(x) : sin(x);
}

/* Gymnasium's _dsdt with book_or_nips = "book". Gymnasium carries the torque as a fifth state
 * coordinate whose derivative is 0, so every Runge-Kutta stage sees the torque unchanged
 * (torque + h * 0.0 == torque); passing it as a constant is the same arithmetic. Always
 * inlined: GCC would otherwise call it from the vector loop, which a call keeps scalar. */
NO_FP_CONTRACT __attribute__((always_inline)) static inline acrobot_vec
derivative(acrobot_vec s, double torque, trig_source trig) {
    const double m1 = LINK_MASS_1, m2 = LINK_MASS_2, l1 = LINK_LENGTH_1;
    const double lc1 = LINK_COM_POS_1, lc2 = LINK_COM_POS_2, I1 = LINK_MOI, I2 = LINK_MOI;
    const double g = GRAVITY;
    double cos2 = cos_from(trig, s.theta2), sin2 = sin_from(trig, s.theta2);
    double dtheta1_sq = s.dtheta1 * s.dtheta1, dtheta2_sq = s.dtheta2 * s.dtheta2;
    double d1 = m1 * (lc1 * lc1) + m2 * (l1 * l1 + lc2 * lc2 + 2.0 * l1 * lc2 * cos2) + I1 + I2;
    double d2 = m2 * (lc2 * lc2 + l1 * lc2 * cos2) + I2;
    double phi2 = m2 * lc2 * g * cos_from(trig, s.theta1 + s.theta2 - M_PI / 2.0);
    double phi1 = -m2 * l1 * lc2 * dtheta2_sq * sin2 -
                  2.0 * m2 * l1 * lc2 * s.dtheta2 * s.dtheta1 * sin2 +
                  (m1 * lc1 + m2 * l1) * g * cos_from(trig, s.theta1 - M_PI / 2.0) + phi2;
    double ddtheta2 = (torque + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1_sq * sin2 - phi2) /
                      (m2 * (lc2 * lc2) + I2 - d2 * d2 / d1);
    double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    return (acrobot_vec){s.dtheta1, s.dtheta2, ddtheta1, ddtheta2};
}

/* y + h * k, coordinate by coordinate, as NumPy evaluates `y0 + dt2 * k1`. */
NO_FP_CONTRACT static inline acrobot_vec add_scaled(acrobot_vec y, double h, acrobot_vec k) {
    return (acrobot_vec){y.theta1 + h * k.theta1, y.theta2 + h * k.theta2,
                         y.dtheta1 + h * k.dtheta1, y.dtheta2 + h * k.dtheta2};
}

/* Gymnasium's rk4(derivs, y0, [0, dt]): one step, combined as
 * y0 + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4), summed left to right. */
NO_FP_CONTRACT static inline acrobot_vec rk4_step(acrobot_vec y, double torque,
                                                  trig_source trig) {
    const double dt = DT, dt2 = DT / 2.0, dt6 = DT / 6.0;
    acrobot_vec k1 = derivative(y, torque, trig);
    acrobot_vec k2 = derivative(add_scaled(y, dt2, k1), torque, trig);
    acrobot_vec k3 = derivative(add_scaled(y, dt2, k2), torque, trig);
    acrobot_vec k4 = derivative(add_scaled(y, dt, k3), torque, trig);
    return (acrobot_vec){
        y.theta1 + dt6 * (k1.theta1 + 2.0 * k2.theta1 + 2.0 * k3.theta1 + k4.theta1),
        y.theta2 + dt6 * (k1.theta2 + 2.0 * k2.theta2 + 2.0 * k3.theta2 + k4.theta2),
        y.dtheta1 + dt6 * (k1.dtheta1 + 2.0 * k2.dtheta1 + 2.0 * k3.dtheta1 + k4.dtheta1),
        y.dtheta2 + dt6 * (k1.dtheta2 + 2.0 * k2.dtheta2 + 2.0 * k3.dtheta2 + k4.dtheta2),
    };
}

/* Gymnasium's wrap(x, -pi, pi): whole turns subtracted one at a time (not fmod or remainder),
 * which is what makes the rounding match. The loops run at most once or twice: one step moves
 * an angle by a few radians. */
#define TURN (M_PI - -M_PI)

static inline double wrap_angle(double x) {
    while (x > M_PI) x = x - TURN;
    while (x < -M_PI) x = x + TURN;
    return x;
}

/* The first pass of each of wrap_angle's loops, without branches: all that one step needs from
 * a wrapped state unless the Runge-Kutta stages ran away. A result still outside [-pi, pi] is
 * finished by wrap_angle, whose loops then continue exactly where these stopped. */
static inline double wrap_angle_once(double x) {
    x = x > M_PI ? x - TURN : x;
    return x < -M_PI ? x + TURN : x;
}

/* Gymnasium's bound(x, -limit, limit) = min(max(x, -limit), limit). */
static inline double clip_velocity(double x, double limit) {
    x = -limit > x ? -limit : x;
    return limit < x ? limit : x;
}

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
    *out = s;
    return SK_OK;
}

static void acrobot_destroy(void *state) { sk_soa_destroy(state, g_fields, NUM_FIELDS); }

/* Gymnasium's _get_ob: [cos t1, sin t1, cos t2, sin t2, dt1, dt2] in double, cast to float32.
 * (After reset Gymnasium takes cos and sin of its float32 state in float32 arithmetic; here
 * they are the double results rounded to float, within an ulp of NumPy's float32 ones.) */
static inline void write_obs(const sk_acrobot_state *s, float *obs, int i) {
    obs[0] = (float)cos(s->theta1[i]);
    obs[1] = (float)sin(s->theta1[i]);
    obs[2] = (float)cos(s->theta2[i]);
    obs[3] = (float)sin(s->theta2[i]);
    obs[4] = (float)s->dtheta1[i];
    obs[5] = (float)s->dtheta2[i];
}

/* Gymnasium draws U(-0.1, 0.1) in double and keeps it as float32 (.astype(np.float32)); the
 * first step then promotes the state to double. Rounding through float reproduces that. */
static inline void reset_one(sk_acrobot_state *s, int i) {
    s->theta1[i] = (double)(float)sk_rng_uniform(&s->rng[i], -RESET_BOUND, RESET_BOUND);
    s->theta2[i] = (double)(float)sk_rng_uniform(&s->rng[i], -RESET_BOUND, RESET_BOUND);
    s->dtheta1[i] = (double)(float)sk_rng_uniform(&s->rng[i], -RESET_BOUND, RESET_BOUND);
    s->dtheta2[i] = (double)(float)sk_rng_uniform(&s->rng[i], -RESET_BOUND, RESET_BOUND);
    s->elapsed[i] = 0;
    s->episode_return[i] = 0.0f;
}

static void acrobot_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    sk_acrobot_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        reset_one(s, i);
        write_obs(s, io->obs + (size_t)i * OBS_SIZE, i);
    }
}

/* The tip's height above the pivot, in link lengths, exceeds one link: Gymnasium's
 * _terminal, given cos(theta1) and cos(theta2 + theta1). */
static inline bool tip_above_line(double cos1, double cos12) { return -cos1 - cos12 > 1.0; }

/* Logs, resets and writes the first observation of the episodes that ended in lo..hi-1. */
static void finish_episodes(sk_acrobot_state *s, const sk_env_io *io, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (!io->terminated[i] && !io->truncated[i]) continue;
        float *obs = io->obs + (size_t)i * OBS_SIZE;
        for (int k = 0; k < OBS_SIZE; k++) io->final_obs[(size_t)i * OBS_SIZE + k] = obs[k];
        io->episode_log[2 * i + 0] = s->episode_return[i];
        io->episode_log[2 * i + 1] = (float)s->elapsed[i];
        reset_one(s, i);
        write_obs(s, obs, i);
    }
}

/* The readable reference: libm's sin and cos, one env at a time. */
NO_FP_CONTRACT void sk_acrobot_step_reference(void *state, const sk_env_io *io, int lo, int hi) {
    sk_acrobot_state *s = state;
    for (int i = lo; i < hi; i++) {
        double torque = (double)(io->actions[i] - 1);
        acrobot_vec y = {s->theta1[i], s->theta2[i], s->dtheta1[i], s->dtheta2[i]};
        y = rk4_step(y, torque, TRIG_LIBM);
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
        io->truncated[i] = !terminated && elapsed >= MAX_EPISODE_STEPS;
        write_obs(s, io->obs + (size_t)i * OBS_SIZE, i);
    }
    finish_episodes(s, io, lo, hi);
}

/*
 * The vector path. Every sin and cos argument must stay within vmath's SK_VMATH_BOUND. From a
 * state with |theta| <= VECTOR_ANGLE_LIMIT and |dtheta| <= VECTOR_SPEED_LIMIT (live states are
 * wrapped to pi and clipped to 4 pi and 9 pi) they stay below ~3e3: with these constants
 * d1 = 3.5 + cos(theta2) >= 2.5, the ddtheta2 denominator is >= 0.56 and |d2 / d1| <= 0.39, so
 * either acceleration is at most 1.93 V^2 + 24.4 where V bounds the speeds; the stages see
 * speeds V <= 30, 206 and 8230, and angles up to 4 + 0.2 * 8230 (twice that in theta1 + theta2).
 * A range with any state outside those limits (or NaN) falls back to the reference.
 */
#define VECTOR_ANGLE_LIMIT 4.0  /* > pi */
#define VECTOR_SPEED_LIMIT 30.0 /* > MAX_VEL_2 = 9 pi = 28.3 */

static bool in_vector_range(const sk_acrobot_state *s, int lo, int hi) {
    return sk_vrange_ok(s->theta1, lo, hi, VECTOR_ANGLE_LIMIT) &&
           sk_vrange_ok(s->theta2, lo, hi, VECTOR_ANGLE_LIMIT) &&
           sk_vrange_ok(s->dtheta1, lo, hi, VECTOR_SPEED_LIMIT) &&
           sk_vrange_ok(s->dtheta2, lo, hi, VECTOR_SPEED_LIMIT);
}

/* Branch-free loops of one element width each (GCC 12 leaves a loop scalar that mixes double
 * arithmetic with 32-bit counters or byte flags); episode ends are handled after them. */
NO_FP_CONTRACT static void step_vector(sk_acrobot_state *s, const sk_env_io *io, int lo,
                                       int hi) {
    double *restrict theta1 = s->theta1, *restrict theta2 = s->theta2;
    double *restrict dtheta1 = s->dtheta1, *restrict dtheta2 = s->dtheta2;
    const int32_t *restrict actions = io->actions;
    for (int i = lo; i < hi; i++) {
        double torque = (double)(actions[i] - 1);
        acrobot_vec y = {theta1[i], theta2[i], dtheta1[i], dtheta2[i]};
        y = rk4_step(y, torque, TRIG_VMATH);
        theta1[i] = wrap_angle_once(y.theta1);
        theta2[i] = wrap_angle_once(y.theta2);
        dtheta1[i] = clip_velocity(y.dtheta1, MAX_VEL_1);
        dtheta2[i] = clip_velocity(y.dtheta2, MAX_VEL_2);
    }
    if (!sk_vrange_ok(theta1, lo, hi, M_PI) || !sk_vrange_ok(theta2, lo, hi, M_PI)) {
        for (int i = lo; i < hi; i++) {
            theta1[i] = wrap_angle(theta1[i]);
            theta2[i] = wrap_angle(theta2[i]);
        }
    }
    float *restrict obs = io->obs, *restrict rewards = io->rewards;
    float *restrict returns = s->episode_return;
    for (int i = lo; i < hi; i++) {
        double sin1, cos1, sin2, cos2;
        sk_vsincos(theta1[i], &sin1, &cos1);
        sk_vsincos(theta2[i], &sin2, &cos2);
        float reward = tip_above_line(cos1, sk_vcos(theta2[i] + theta1[i])) ? 0.0f : -1.0f;
        rewards[i] = reward;
        returns[i] += reward;
        float *ob = obs + (size_t)i * OBS_SIZE;
        ob[0] = (float)cos1;
        ob[1] = (float)sin1;
        ob[2] = (float)cos2;
        ob[3] = (float)sin2;
        ob[4] = (float)dtheta1[i];
        ob[5] = (float)dtheta2[i];
    }
    /* the reward is 0 exactly on the terminating step */
    uint8_t *restrict terminated = io->terminated, *restrict truncated = io->truncated;
    for (int i = lo; i < hi; i++) terminated[i] = rewards[i] == 0.0f;
    int32_t *restrict elapsed = s->elapsed;
    for (int i = lo; i < hi; i++) elapsed[i] += 1;
    int ended = 0;
    for (int i = lo; i < hi; i++) {
        int trunc = !terminated[i] & (elapsed[i] >= MAX_EPISODE_STEPS);
        truncated[i] = (uint8_t)trunc;
        ended |= terminated[i] | trunc;
    }
    if (ended) finish_episodes(s, io, lo, hi);
}

static void acrobot_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_acrobot_state *s = state;
    if (in_vector_range(s, lo, hi)) step_vector(s, io, lo, hi);
    else sk_acrobot_step_reference(state, io, lo, hi);
}

static int acrobot_state_arrays(void *state, sk_env_array *arrays) {
    return sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
}

/* Gymnasium's observation space: cos and sin of both joint angles, the clipped velocities. */
static const float acrobot_obs_low[OBS_SIZE] = {-1.0f, -1.0f, -1.0f, -1.0f, (float)-MAX_VEL_1,
                                                (float)-MAX_VEL_2};
static const float acrobot_obs_high[OBS_SIZE] = {1.0f, 1.0f, 1.0f, 1.0f, (float)MAX_VEL_1,
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
    .obs_size = OBS_SIZE,
    .obs_low = acrobot_obs_low,
    .obs_high = acrobot_obs_high,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {NUM_ACTIONS}},
    .mask_size = 0,
    .max_episode_steps = MAX_EPISODE_STEPS,
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
