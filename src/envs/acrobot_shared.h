/*
 * What src/envs/acrobot.c and its per-level vector step (src/envs/isa/acrobot_step.c, compiled
 * once per ISA level) share: Gymnasium's constants, the dynamics, the observation, the resets and
 * the episode ends, written once. Everything here is static inline, so each object compiles it at
 * its own level; names carry acrobot_ or ACROBOT_ because the level files include every env's
 * step in one translation unit.
 */
#ifndef SK_ACROBOT_SHARED_H
#define SK_ACROBOT_SHARED_H

#include "acrobot.h"

#include "../core/rng.h"
#include "../core/vmath.h"

#include <math.h>

/* Gymnasium's operations in its order, products and sums rounded separately (acrobot.c says
 * why); the level files and the env sources also compile with -ffp-contract=off. */
#ifndef NO_FP_CONTRACT
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#define NO_FP_CONTRACT
#elif defined(__GNUC__)
#define NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define NO_FP_CONTRACT
#endif
#endif

/* Gymnasium's constants (gymnasium/envs/classic_control/acrobot.py, AcrobotEnv). */
#define DT 0.2
#define LINK_LENGTH_1 1.0
#define LINK_MASS_1 1.0
#define LINK_MASS_2 1.0
#define LINK_COM_POS_1 0.5
#define LINK_COM_POS_2 0.5
#define LINK_MOI 1.0
#define ACROBOT_GRAVITY 9.8 /* g in _dsdt */
#define MAX_VEL_1 (4.0 * M_PI)
#define MAX_VEL_2 (9.0 * M_PI)
#define ACROBOT_RESET_BOUND 0.1
#define ACROBOT_MAX_STEPS 500
#define ACROBOT_OBS_SIZE 6
#define ACROBOT_NUM_ACTIONS 3 /* torque AVAIL_TORQUE[a] = {-1, 0, +1}[a] = a - 1 */

/* The four state coordinates, or their time derivatives. */
typedef struct acrobot_vec {
    double theta1, theta2, dtheta1, dtheta2;
} acrobot_vec;

/* Where sin and cos come from: libm in the reference, vmath.h on vector lanes. Every call passes
 * a constant, so each path compiles to one of them. */
typedef enum trig_source { TRIG_LIBM, TRIG_VMATH } trig_source;

__attribute__((always_inline)) static inline double cos_from(trig_source source, double x) {
    return source == TRIG_VMATH ? sk_vcos(x) : cos(x);
}

__attribute__((always_inline)) static inline double sin_from(trig_source source, double x) {
    return source == TRIG_VMATH ? sk_vsin(x) : sin(x);
}

/* Gymnasium's _dsdt with book_or_nips = "book". Gymnasium carries the torque as a fifth state
 * coordinate whose acrobot_derivative is 0, so every Runge-Kutta stage sees the torque unchanged
 * (torque + h * 0.0 == torque); passing it as a constant is the same arithmetic. Always
 * inlined: GCC would otherwise call it from the vector loop, which a call keeps scalar. */
NO_FP_CONTRACT __attribute__((always_inline)) static inline acrobot_vec
acrobot_derivative(acrobot_vec s, double torque, trig_source trig) {
    const double m1 = LINK_MASS_1, m2 = LINK_MASS_2, l1 = LINK_LENGTH_1;
    const double lc1 = LINK_COM_POS_1, lc2 = LINK_COM_POS_2, I1 = LINK_MOI, I2 = LINK_MOI;
    const double g = ACROBOT_GRAVITY;
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
NO_FP_CONTRACT __attribute__((always_inline)) static inline acrobot_vec
acrobot_add_scaled(acrobot_vec y, double h, acrobot_vec k) {
    return (acrobot_vec){y.theta1 + h * k.theta1, y.theta2 + h * k.theta2,
                         y.dtheta1 + h * k.dtheta1, y.dtheta2 + h * k.dtheta2};
}

/* Gymnasium's rk4(derivs, y0, [0, dt]): one step, combined as
 * y0 + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4), summed left to right. */
NO_FP_CONTRACT __attribute__((always_inline)) static inline acrobot_vec
acrobot_rk4_step(acrobot_vec y, double torque, trig_source trig) {
    const double dt = DT, dt2 = DT / 2.0, dt6 = DT / 6.0;
    acrobot_vec k1 = acrobot_derivative(y, torque, trig);
    acrobot_vec k2 = acrobot_derivative(acrobot_add_scaled(y, dt2, k1), torque, trig);
    acrobot_vec k3 = acrobot_derivative(acrobot_add_scaled(y, dt2, k2), torque, trig);
    acrobot_vec k4 = acrobot_derivative(acrobot_add_scaled(y, dt, k3), torque, trig);
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
__attribute__((always_inline)) static inline double wrap_angle_once(double x) {
    x = x > M_PI ? x - TURN : x;
    return x < -M_PI ? x + TURN : x;
}

/* Gymnasium's bound(x, -limit, limit) = min(max(x, -limit), limit). */
__attribute__((always_inline)) static inline double clip_velocity(double x, double limit) {
    x = -limit > x ? -limit : x;
    return limit < x ? limit : x;
}

/* Gymnasium's _get_ob: [cos t1, sin t1, cos t2, sin t2, dt1, dt2] in double, cast to float32.
 * (After reset Gymnasium takes cos and sin of its float32 state in float32 arithmetic; here
 * they are the double results rounded to float, within an ulp of NumPy's float32 ones.) */
static inline void acrobot_write_obs(const sk_acrobot_state *s, float *obs, int i) {
    obs[0] = (float)cos(s->theta1[i]);
    obs[1] = (float)sin(s->theta1[i]);
    obs[2] = (float)cos(s->theta2[i]);
    obs[3] = (float)sin(s->theta2[i]);
    obs[4] = (float)s->dtheta1[i];
    obs[5] = (float)s->dtheta2[i];
}

/* Gymnasium draws U(-0.1, 0.1) in double and keeps it as float32 (.astype(np.float32)); the
 * first step then promotes the state to double. Rounding through float reproduces that. */
static inline void acrobot_reset_one(sk_acrobot_state *s, int i) {
    s->theta1[i] =
        (double)(float)sk_rng_uniform(&s->rng[i], -ACROBOT_RESET_BOUND, ACROBOT_RESET_BOUND);
    s->theta2[i] =
        (double)(float)sk_rng_uniform(&s->rng[i], -ACROBOT_RESET_BOUND, ACROBOT_RESET_BOUND);
    s->dtheta1[i] =
        (double)(float)sk_rng_uniform(&s->rng[i], -ACROBOT_RESET_BOUND, ACROBOT_RESET_BOUND);
    s->dtheta2[i] =
        (double)(float)sk_rng_uniform(&s->rng[i], -ACROBOT_RESET_BOUND, ACROBOT_RESET_BOUND);
    s->elapsed[i] = 0;
    s->episode_return[i] = 0.0f;
}

/* The tip's height above the pivot, in link lengths, exceeds one link: Gymnasium's
 * _terminal, given cos(theta1) and cos(theta2 + theta1). */
static inline bool tip_above_line(double cos1, double cos12) { return -cos1 - cos12 > 1.0; }

/* Logs, resets and writes the first observation of the episodes that ended in lo..hi-1. */
static inline void acrobot_finish_episodes(sk_acrobot_state *s, const sk_env_io *io, int lo,
                                           int hi) {
    for (int i = lo; i < hi; i++) {
        if (!io->terminated[i] && !io->truncated[i]) continue;
        float *obs = io->obs + (size_t)i * ACROBOT_OBS_SIZE;
        for (int k = 0; k < ACROBOT_OBS_SIZE; k++)
            io->final_obs[(size_t)i * ACROBOT_OBS_SIZE + k] = obs[k];
        io->episode_log[2 * i + 0] = s->episode_return[i];
        io->episode_log[2 * i + 1] = (float)s->elapsed[i];
        acrobot_reset_one(s, i);
        acrobot_write_obs(s, obs, i);
    }
}

#endif
