/*
 * Acrobot's vector step at one ISA level: #included by src/envs/isa/level_*.c, each compiled with
 * its level's -march and -ffp-contract=off (CMakeLists.txt), so the loops run at the level's
 * width (2, 4 or 8 doubles) and every lane rounds as the baseline's do: the results are bit for
 * bit the same at every level. src/envs/acrobot.c picks one per env state at create
 * (sk_acrobot_step_at).
 */
#include "../acrobot_shared.h"

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

static bool acrobot_in_vector_range(const sk_acrobot_state *s, int lo, int hi) {
    return sk_vrange_ok(s->theta1, lo, hi, VECTOR_ANGLE_LIMIT) &&
           sk_vrange_ok(s->theta2, lo, hi, VECTOR_ANGLE_LIMIT) &&
           sk_vrange_ok(s->dtheta1, lo, hi, VECTOR_SPEED_LIMIT) &&
           sk_vrange_ok(s->dtheta2, lo, hi, VECTOR_SPEED_LIMIT);
}

/* Branch-free loops of one element width each (GCC 12 leaves a loop scalar that mixes double
 * arithmetic with 32-bit counters or byte flags); episode ends are handled after them. */
NO_FP_CONTRACT static void acrobot_step_vector(sk_acrobot_state *s, const sk_env_io *io, int lo,
                                       int hi) {
    double *restrict theta1 = s->theta1, *restrict theta2 = s->theta2;
    double *restrict dtheta1 = s->dtheta1, *restrict dtheta2 = s->dtheta2;
    const int32_t *restrict actions = io->actions;
    for (int i = lo; i < hi; i++) {
        double torque = (double)(actions[i] - 1);
        acrobot_vec y = {theta1[i], theta2[i], dtheta1[i], dtheta2[i]};
        y = acrobot_rk4_step(y, torque, TRIG_VMATH);
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
        float *ob = obs + (size_t)i * ACROBOT_OBS_SIZE;
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
        int trunc = !terminated[i] & (elapsed[i] >= ACROBOT_MAX_STEPS);
        truncated[i] = (uint8_t)trunc;
        ended |= terminated[i] | trunc;
    }
    if (ended) acrobot_finish_episodes(s, io, lo, hi);
}

#ifndef SK_ISA_CAT
#define SK_ISA_CAT2(a, b) a##b
#define SK_ISA_CAT(a, b) SK_ISA_CAT2(a, b)
#endif

void SK_ISA_CAT(sk_acrobot_step_, SK_ISA_SUFFIX)(sk_acrobot_state *s, const sk_env_io *io, int lo,
                                                 int hi) {
    if (acrobot_in_vector_range(s, lo, hi)) acrobot_step_vector(s, io, lo, hi);
    else sk_acrobot_step_reference(s, io, lo, hi);
}
