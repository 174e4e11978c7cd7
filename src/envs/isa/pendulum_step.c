/*
 * Pendulum's vector step at one ISA level: #included by src/envs/isa/level_*.c, each compiled
 * with its level's -march and -ffp-contract=off (CMakeLists.txt), so the loops run at the
 * level's width and every lane rounds as the baseline's do: the results are bit for bit the same
 * at every level. src/envs/pendulum.c picks one per env state at create (sk_pendulum_step_at).
 */
#include "../pendulum_shared.h"

/*
 * The vector path: the same operations, with sin, cos and angle_normalize from vmath.h, as
 * branch-free loops over struct-of-arrays that GCC runs on SIMD lanes. Each loop keeps to one
 * element width (GCC 12 leaves a loop scalar that mixes double arithmetic with 32-bit counters
 * or byte flags); the episode ends, one per env every 200 steps, are handled after them. theta
 * is unwrapped and moves at most PD_MAX_SPEED * PD_DT a step, so the check of the old angles covers
 * the new ones too.
 */
#define PD_VECTOR_THETA_LIMIT (SK_VMATH_BOUND - PD_MAX_SPEED * PD_DT)

/* The vector step of envs lo..hi-1; theta_dot observed as 0 when `positions`. Compiled once
 * per value, each a function of its own (below), so the full observation's loops compile as
 * they would alone. */
static inline __attribute__((always_inline)) void pd_step_vector(sk_pendulum_state *s,
                                                              const sk_env_io *io, int lo, int hi,
                                                              bool positions) {
    const double gravity_coef = 3.0 * s->gravity / (2.0 * PD_LENGTH);
    double *restrict thetas = s->theta, *restrict theta_dots = s->theta_dot;
    double *restrict returns = s->episode_return;
    const float *restrict actions = io->actions_continuous;
    float *restrict rewards = io->rewards, *restrict obs = io->obs;
    for (int i = lo; i < hi; i++) {
        double u = pd_clip_torque(actions[i]);
        double theta = thetas[i], theta_dot = theta_dots[i];
        double cost = pd_advance(gravity_coef, u, sk_vsin(theta), sk_vangle_normalize(theta),
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
        obs[(size_t)i * PD_OBS_SIZE + 0] = (float)cos_theta;
        obs[(size_t)i * PD_OBS_SIZE + 1] = (float)sin_theta;
        obs[(size_t)i * PD_OBS_SIZE + 2] = positions ? 0.0f : (float)theta_dots[i];
    }
    int32_t *restrict elapsed = s->elapsed;
    for (int i = lo; i < hi; i++) elapsed[i] += 1;
    uint8_t *restrict terminated = io->terminated, *restrict truncated = io->truncated;
    int ended = 0;
    for (int i = lo; i < hi; i++) {
        int trunc = elapsed[i] >= PD_MAX_EPISODE_STEPS;
        terminated[i] = 0;
        truncated[i] = (uint8_t)trunc;
        ended |= trunc;
    }
    if (ended) pd_finish_episodes(s, io, lo, hi);
}

static __attribute__((noinline)) void pd_step_vector_full(sk_pendulum_state *s, const sk_env_io *io,
                                                       int lo, int hi) {
    pd_step_vector(s, io, lo, hi, false);
}

static __attribute__((noinline)) void pd_step_vector_positions(sk_pendulum_state *s,
                                                            const sk_env_io *io, int lo, int hi) {
    pd_step_vector(s, io, lo, hi, true);
}

#ifndef SK_ISA_CAT
#define SK_ISA_CAT2(a, b) a##b
#define SK_ISA_CAT(a, b) SK_ISA_CAT2(a, b)
#endif

void SK_ISA_CAT(sk_pendulum_step_, SK_ISA_SUFFIX)(sk_pendulum_state *s, const sk_env_io *io,
                                                  int lo, int hi) {
    if (!sk_vrange_ok(s->theta, lo, hi, PD_VECTOR_THETA_LIMIT))
        sk_pendulum_step_reference(s, io, lo, hi);
    else if (s->observe_positions)
        pd_step_vector_positions(s, io, lo, hi);
    else
        pd_step_vector_full(s, io, lo, hi);
}
