/*
 * What src/envs/pendulum.c and its per-level vector step (src/envs/isa/pendulum_step.c, compiled
 * once per ISA level) share: Gymnasium's constants, the observation, the resets, the physics and
 * the episode ends, written once. Everything here is static inline, so each object compiles it
 * at its own level; names carry pd_ or PD_ since the level files include every env's step in one
 * translation unit.
 */
#ifndef SK_PENDULUM_SHARED_H
#define SK_PENDULUM_SHARED_H

#include "pendulum.h"

#include "../core/rng.h"
#include "../core/vmath.h"

#include <math.h>

/* Gymnasium's constants (gymnasium/envs/classic_control/pendulum.py). */
#define PD_DEFAULT_GRAVITY 10.0
#define PD_MASS 1.0
#define PD_LENGTH 1.0
#define PD_DT 0.05
#define PD_MAX_SPEED 8.0
#define PD_MAX_TORQUE 2.0
#define PD_RESET_THETA M_PI  /* DEFAULT_X */
#define PD_RESET_THETA_DOT 1.0 /* DEFAULT_Y */
#define PD_TWO_PI (2.0 * M_PI) /* exact doubling, as numpy's 2 * np.pi */
#define PD_MAX_EPISODE_STEPS 200
#define PD_OBS_SIZE 3
/* 3.0 / (m * l**2), left to right */
#define PD_TORQUE_COEF (3.0 / (PD_MASS * (PD_LENGTH * PD_LENGTH)))

static inline void pd_write_obs(const sk_pendulum_state *s, float *obs, int i) {
    obs[0] = (float)cos(s->theta[i]);
    obs[1] = (float)sin(s->theta[i]);
    obs[2] = s->observe_positions ? 0.0f : (float)s->theta_dot[i];
}

/* Gymnasium draws uniform(low=[-pi, -1], high=[pi, 1]): theta first, then theta_dot. */
static inline void pd_reset_one(sk_pendulum_state *s, int i) {
    s->theta[i] = sk_rng_uniform(&s->rng[i], -PD_RESET_THETA, PD_RESET_THETA);
    s->theta_dot[i] = sk_rng_uniform(&s->rng[i], -PD_RESET_THETA_DOT, PD_RESET_THETA_DOT);
    s->elapsed[i] = 0;
    s->episode_return[i] = 0.0;
}

__attribute__((always_inline)) static inline double pd_clip(double value, double lo, double hi) {
    return value < lo ? lo : value > hi ? hi : value;
}

/* np.clip(action, -max_torque, max_torque), NaN passing through, written around fabs so that
 * the float-to-double conversion feeds every branch: GCC otherwise sinks it into one branch,
 * where it may trap, and the loop stays scalar. */
__attribute__((always_inline)) static inline double pd_clip_torque(float action) {
    double u = (double)action;
    return fabs(u) > PD_MAX_TORQUE ? copysign(PD_MAX_TORQUE, u) : u;
}

/* Gymnasium's step given sin(theta) and angle_normalize(theta), shared by the reference and the
 * vector paths so the physics exists once: the cost of the state before the step and the
 * clipped torque, then semi-implicit Euler with the new speed clipped before it moves the
 * angle. Returns the cost. gravity_coef is 3 * g / (2 * l), evaluated left to right as Python
 * does. */
__attribute__((always_inline)) static inline double
pd_advance(double gravity_coef, double u, double sin_theta, double angle, double *theta,
           double *theta_dot) {
    double cost = angle * angle + 0.1 * (*theta_dot * *theta_dot) + 0.001 * (u * u);
    double new_theta_dot = *theta_dot + (gravity_coef * sin_theta + PD_TORQUE_COEF * u) * PD_DT;
    new_theta_dot = pd_clip(new_theta_dot, -PD_MAX_SPEED, PD_MAX_SPEED);
    *theta = *theta + new_theta_dot * PD_DT;
    *theta_dot = new_theta_dot;
    return cost;
}

/* Logs, resets and writes the first observation of the episodes that ended (every 200 steps;
 * Pendulum never terminates). */
static inline void pd_finish_episodes(sk_pendulum_state *s, const sk_env_io *io, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (!io->truncated[i]) continue;
        float *obs = io->obs + (size_t)i * PD_OBS_SIZE;
        float *final_obs = io->final_obs + (size_t)i * PD_OBS_SIZE;
        for (int k = 0; k < PD_OBS_SIZE; k++) final_obs[k] = obs[k];
        io->episode_log[2 * i + 0] = (float)s->episode_return[i];
        io->episode_log[2 * i + 1] = (float)s->elapsed[i];
        pd_reset_one(s, i);
        pd_write_obs(s, obs, i);
    }
}

#endif
