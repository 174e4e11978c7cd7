/*
 * What src/envs/cartpole.c and its per-level step (src/envs/isa/cartpole_step.c, compiled once per
 * ISA level) share: Gymnasium's constants, the resets, the episode ends and the physics written
 * once. Everything here is static inline, so each object compiles it at its own level.
 */
#ifndef SK_CARTPOLE_SHARED_H
#define SK_CARTPOLE_SHARED_H

#include "cartpole.h"

#include "../core/rng.h"
#include "../core/vmath.h"

#include <math.h>
#include <string.h>

/* Gymnasium's constants (gymnasium/envs/classic_control/cartpole.py). */
#define GRAVITY 9.8
#define MASS_CART 1.0
#define MASS_POLE 0.1
#define TOTAL_MASS (MASS_POLE + MASS_CART)
#define HALF_POLE_LENGTH 0.5
#define POLE_MASS_LENGTH (MASS_POLE * HALF_POLE_LENGTH)
#define FORCE_MAG 10.0
#define TAU 0.02
#define THETA_THRESHOLD (12.0 * 2.0 * M_PI / 360.0)
#define X_THRESHOLD 2.4
#define RESET_BOUND 0.05
#define MAX_EPISODE_STEPS 500
#define OBS_SIZE 4

/* The float32 step's constants: Gymnasium's equations with the constant factors folded, each
 * product rounded once to float, which takes 27 multiplications a step down to 23 (the vector
 * loop leans on its multiplications: one 512-bit multiply a cycle on Zen 4):
 *   temp     = F/M + (ml/M) thetadot^2 sin
 *   thetaacc = (g sin - cos temp) / (4l/3 - (l m/M) cos^2)
 *   xacc     = temp - (ml/M) thetaacc cos                          (m pole mass, l half length) */
#define FORCE_PER_MASS_F ((float)(FORCE_MAG / TOTAL_MASS))
#define TEMP_SCALE_F ((float)(POLE_MASS_LENGTH / TOTAL_MASS))
#define XACC_SCALE_F TEMP_SCALE_F
#define GRAVITY_F ((float)GRAVITY)
#define DENOM_BASE_F ((float)(HALF_POLE_LENGTH * 4.0 / 3.0))
#define DENOM_SCALE_F ((float)(HALF_POLE_LENGTH * MASS_POLE / TOTAL_MASS))
#define TAU_F ((float)TAU)
#define THETA_THRESHOLD_F ((float)THETA_THRESHOLD)
#define X_THRESHOLD_F ((float)X_THRESHOLD)
/* A uniform 24-bit integer k, centred, times this is in [-0.05, 0.05) with one rounding. */
#define RESET_SCALE_F ((float)(2.0 * RESET_BOUND) * 0x1.0p-24f)

static inline void write_obs(const sk_cartpole_state *s, float *obs, int i) {
    obs[0] = (float)s->x[i];
    obs[1] = s->observe_positions ? 0.0f : (float)s->x_dot[i];
    obs[2] = (float)s->theta[i];
    obs[3] = s->observe_positions ? 0.0f : (float)s->theta_dot[i];
}

static inline void reset_one(sk_cartpole_state *s, int i) {
    s->x[i] = sk_rng_uniform(&s->rng[i], -RESET_BOUND, RESET_BOUND);
    s->x_dot[i] = sk_rng_uniform(&s->rng[i], -RESET_BOUND, RESET_BOUND);
    s->theta[i] = sk_rng_uniform(&s->rng[i], -RESET_BOUND, RESET_BOUND);
    s->theta_dot[i] = sk_rng_uniform(&s->rng[i], -RESET_BOUND, RESET_BOUND);
    s->elapsed[i] = 0;
    s->episode_return[i] = 0.0f;
}

static inline void write_obs32(const sk_cartpole_state *s, float *obs, int i) {
    obs[0] = s->x32[i];
    obs[1] = s->observe_positions ? 0.0f : s->x_dot32[i];
    obs[2] = s->theta32[i];
    obs[3] = s->observe_positions ? 0.0f : s->theta_dot32[i];
}

/* Two draws of the env's splitmix64 stream give four 24-bit uniforms, one per coordinate. */
static inline float reset_coordinate(uint64_t bits) {
    return (float)((int32_t)(bits & 0xffffff) - (1 << 23)) * RESET_SCALE_F;
}

static inline void reset_one32(sk_cartpole_state *s, int i) {
    uint64_t a = sk_rng_next(&s->rng[i]), b = sk_rng_next(&s->rng[i]);
    s->x32[i] = reset_coordinate(a);
    s->x_dot32[i] = reset_coordinate(a >> 32);
    s->theta32[i] = reset_coordinate(b);
    s->theta_dot32[i] = reset_coordinate(b >> 32);
    s->elapsed[i] = 0;
}

/* Starts env i's next episode from its own stream and writes its first observation. */
static inline void reset_env(sk_cartpole_state *s, int i, float *obs) {
    if (s->precision == SK_CARTPOLE_FLOAT32) {
        reset_one32(s, i);
        write_obs32(s, obs, i);
    } else {
        reset_one(s, i);
        write_obs(s, obs, i);
    }
}

/* Bit k set where env base + k (k < count <= 64) ended its episode this step. Eight flags at a
 * time: a u64 of 0/1 bytes times 0x0102040810204080 gathers byte k's bit at bit 56 + k. */
static inline uint64_t ended_mask(const sk_env_io *io, int base, int count) {
    uint64_t mask = 0;
    int k = 0;
    for (; k + 8 <= count; k += 8) {
        uint64_t term8, trunc8;
        memcpy(&term8, io->terminated + base + k, 8);
        memcpy(&trunc8, io->truncated + base + k, 8);
        mask |= (((term8 | trunc8) * 0x0102040810204080ULL) >> 56) << k;
    }
    for (; k < count; k++)
        mask |= (uint64_t)(io->terminated[base + k] | io->truncated[base + k]) << k;
    return mask;
}

/* Logs and resets the envs that ended, visiting only them: a branch per 64 envs and one per
 * ended env, where testing each env's flags mispredicts on every end. */
static inline void finish_episodes(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi) {
    bool f32 = s->precision == SK_CARTPOLE_FLOAT32;
    for (int base = lo; base < hi; base += 64) {
        uint64_t ended = ended_mask(io, base, hi - base < 64 ? hi - base : 64);
        while (ended) {
            int i = base + __builtin_ctzll(ended);
            ended &= ended - 1;
            float *obs = io->obs + (size_t)i * OBS_SIZE;
            memcpy(io->final_obs + (size_t)i * OBS_SIZE, obs, OBS_SIZE * sizeof(float));
            /* float32 keeps no return: every reward is 1, so it is the length */
            io->episode_log[2 * i + 0] = f32 ? (float)s->elapsed[i] : s->episode_return[i];
            io->episode_log[2 * i + 1] = (float)s->elapsed[i];
            reset_env(s, i, obs);
        }
    }
}

/* One explicit-Euler step of Gymnasium's equations, given sin and cos of theta;
 * shared by the reference and the vector paths so the physics exists once. */
static inline void advance(double force, double sintheta, double costheta, double *x,
                           double *x_dot, double *theta, double *theta_dot) {
    double temp = (force + POLE_MASS_LENGTH * *theta_dot * *theta_dot * sintheta) / TOTAL_MASS;
    double thetaacc =
        (GRAVITY * sintheta - costheta * temp) /
        (HALF_POLE_LENGTH * (4.0 / 3.0 - MASS_POLE * costheta * costheta / TOTAL_MASS));
    double xacc = temp - POLE_MASS_LENGTH * thetaacc * costheta / TOTAL_MASS;
    *x = *x + TAU * *x_dot;
    *x_dot = *x_dot + TAU * xacc;
    *theta = *theta + TAU * *theta_dot;
    *theta_dot = *theta_dot + TAU * thetaacc;
}

/*
 * float32 precision (env.precision = float32): the same equations in float, 16 envs to an
 * AVX-512 vector, with the constant factors folded (see FORCE_PER_MASS_F), and sin and cos from
 * Cephes' float polynomials (core/vmath.h, within 1 ulp of libm's sinf and cosf for
 * |theta| <= pi/4). The step is branch-free passes over the lanes (physics and observations,
 * counters, flags); the few envs whose episode ended are then found through a bitmask and
 * reset. tests/test_cartpole_f32.c bounds the difference from Gymnasium's float64 transitions.
 */
/* One float32 step of envs lo..hi-1; libm's sinf and cosf when `libm`, else the kernels; the
 * velocities observed as 0 when `positions`. Inlined into its callers, with constant flags, so
 * that each kernel variant is a single vector loop. */
static inline __attribute__((always_inline)) void step32(sk_cartpole_state *s,
                                                         const sk_env_io *io, int lo, int hi,
                                                         bool libm, bool positions) {
    float *restrict xs = s->x32, *restrict x_dots = s->x_dot32;
    float *restrict thetas = s->theta32, *restrict theta_dots = s->theta_dot32;
    int32_t *restrict elapsed = s->elapsed;
    const int32_t *restrict actions = io->actions;
    float *restrict obs = io->obs, *restrict rewards = io->rewards;
    uint8_t *restrict terminated = io->terminated, *restrict truncated = io->truncated;
    for (int i = lo; i < hi; i++) {
        float force = actions[i] == 1 ? FORCE_PER_MASS_F : -FORCE_PER_MASS_F;
        float x = xs[i], x_dot = x_dots[i], theta = thetas[i], theta_dot = theta_dots[i];
        float sintheta = libm ? sinf(theta) : sk_vsinf_kernel(theta);
        float costheta = libm ? cosf(theta) : sk_vcosf_kernel(theta);
        float temp = force + TEMP_SCALE_F * (theta_dot * theta_dot * sintheta);
        float thetaacc = (GRAVITY_F * sintheta - costheta * temp) /
                         (DENOM_BASE_F - DENOM_SCALE_F * (costheta * costheta));
        float xacc = temp - XACC_SCALE_F * (thetaacc * costheta);
        x = x + TAU_F * x_dot;
        x_dot = x_dot + TAU_F * xacc;
        theta = theta + TAU_F * theta_dot;
        theta_dot = theta_dot + TAU_F * thetaacc;
        xs[i] = x;
        x_dots[i] = x_dot;
        thetas[i] = theta;
        theta_dots[i] = theta_dot;
        obs[(size_t)i * OBS_SIZE + 0] = x;
        obs[(size_t)i * OBS_SIZE + 1] = positions ? 0.0f : x_dot;
        obs[(size_t)i * OBS_SIZE + 2] = theta;
        obs[(size_t)i * OBS_SIZE + 3] = positions ? 0.0f : theta_dot;
    }
    /* GCC 12 leaves the step loop scalar ("no vectype for stmt") if it also stores the
     * counters, rewards or byte flags, so those are passes of their own over cached arrays. */
    for (int i = lo; i < hi; i++) {
        elapsed[i] += 1;
        rewards[i] = 1.0f;
    }
    for (int i = lo; i < hi; i++) {
        float x = xs[i], theta = thetas[i];
        int term = (x < -X_THRESHOLD_F) | (x > X_THRESHOLD_F) | (theta < -THETA_THRESHOLD_F) |
                   (theta > THETA_THRESHOLD_F);
        terminated[i] = (uint8_t)term;
        truncated[i] = (uint8_t)(!term & (elapsed[i] >= MAX_EPISODE_STEPS));
    }
    finish_episodes(s, io, lo, hi);
}

#endif
