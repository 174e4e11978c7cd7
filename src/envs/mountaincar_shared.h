/*
 * What src/envs/mountaincar.c and its per-level vector step (src/envs/isa/mountaincar_step.c,
 * compiled once per ISA level) share: Gymnasium's constants, the observation, the resets and the
 * physics of both variants, written once. Everything here is static inline, so each object
 * compiles it at its own level; names carry mc_ or MC_ where another env's shared header would
 * clash, since the level files include every env's step in one translation unit.
 */
#ifndef SK_MOUNTAINCAR_SHARED_H
#define SK_MOUNTAINCAR_SHARED_H

#include "mountaincar.h"

#include "../core/rng.h"
#include "../core/vmath.h"

#include <math.h>

/* Gymnasium's constants (gymnasium/envs/classic_control/mountain_car.py and
 * continuous_mountain_car.py). */
#define MIN_POSITION -1.2
#define MAX_POSITION 0.6
#define MAX_SPEED 0.07
#define GOAL_VELOCITY 0.0
#define MC_GRAVITY 0.0025 /* the slope term: velocity -= MC_GRAVITY * cos(3 * position) */
#define HILL_FREQUENCY 3.0
#define RESET_LOW -0.6
#define RESET_HIGH -0.4
#define MC_OBS_SIZE 2

/* MountainCar-v0 */
#define DISCRETE_FORCE 0.001
#define DISCRETE_GOAL_POSITION 0.5
#define DISCRETE_STEP_REWARD -1.0
#define DISCRETE_MAX_EPISODE_STEPS 200

/* MountainCarContinuous-v0 */
#define CONTINUOUS_MAX_ACTION 1.0
#define CONTINUOUS_MIN_ACTION (-CONTINUOUS_MAX_ACTION) /* -1.0: continuous_velocity's clip
                                                         * relies on the symmetry */
#define CONTINUOUS_POWER 0.0015
#define CONTINUOUS_GOAL_POSITION 0.45
#define CONTINUOUS_GOAL_REWARD 100.0
#define CONTINUOUS_ACTION_COST 0.1
#define CONTINUOUS_MAX_EPISODE_STEPS 999

static inline void mc_write_obs(const sk_mountaincar_state *s, float *obs, int i) {
    obs[0] = (float)s->position[i];
    obs[1] = (float)s->velocity[i];
}

static inline void mc_reset_one(sk_mountaincar_state *s, int i) {
    s->position[i] = sk_rng_uniform(&s->rng[i], RESET_LOW, RESET_HIGH);
    s->velocity[i] = 0.0;
    s->elapsed[i] = 0;
    s->episode_return[i] = 0.0;
}

static inline double mc_clamp(double x, double lo, double hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

/* The velocity update of each variant, given cos(3 x); then, common to both, the speed limit,
 * the position clip and the left wall that stops a car still moving left. Shared by the
 * reference and the vector paths so the physics exists once. */
static inline double discrete_velocity(double velocity, int32_t action, double cos_hill) {
    double push = (double)(action - 1) * DISCRETE_FORCE;
    return velocity + (push + cos_hill * (-MC_GRAVITY));
}

/* The force is Python's min(max(a, -1), 1): a NaN action passes through as it does there
 * rather than being replaced by a bound. Written around fabs so the float-to-double conversion
 * of the action feeds every branch: GCC otherwise sinks it into one, where it may trap, and
 * leaves the vector loop scalar. */
static inline double continuous_velocity(double velocity, double action, double cos_hill) {
    double force = fabs(action) > CONTINUOUS_MAX_ACTION ? copysign(CONTINUOUS_MAX_ACTION, action)
                                                        : action;
    return velocity + (force * CONTINUOUS_POWER - MC_GRAVITY * cos_hill);
}

static inline void mc_move(double *position, double *velocity) {
    double new_velocity = mc_clamp(*velocity, -MAX_SPEED, MAX_SPEED);
    double new_position = mc_clamp(*position + new_velocity, MIN_POSITION, MAX_POSITION);
    *velocity = new_position == MIN_POSITION && new_velocity < 0.0 ? 0.0 : new_velocity;
    *position = new_position;
}

/* Reward +100 on reaching the goal, minus 0.1 * action^2 with the UNCLIPPED action. */
static inline double continuous_reward(bool terminated, double action) {
    double goal = terminated ? CONTINUOUS_GOAL_REWARD : 0.0;
    return goal - action * action * CONTINUOUS_ACTION_COST;
}

#endif
