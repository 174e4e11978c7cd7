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
 * function of its own (the *_full and *_positions pairs below), chosen once per call: inlined
 * into one function, the two variants share their hoisted constants and the AVX-512 loop spills
 * some; apart, each loop compiles as it would alone.
 */
#include "cartpole.h"
#include "render.h"
#include "soa.h"

#include "../core/config.h"
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
static void finish_episodes(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi) {
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

static void cartpole_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    sk_cartpole_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        reset_env(s, i, io->obs + (size_t)i * OBS_SIZE);
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

static void step32_libm(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi);

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

/*
 * The vector path. sin and cos come from fdlibm's kernels (S. L. Moshier /
 * Sun, public-domain coefficients), polynomials accurate to under 1 ulp for
 * |theta| <= 0.3, where the simple form of the cosine kernel holds; CartPole
 * terminates at 0.21, so live states stay there and a range that strays
 * falls back to the reference. Written as one branch-free loop over
 * struct-of-arrays so the compiler runs it on 8 double lanes; episode ends,
 * rare, are handled after it.
 */
#define VECTOR_THETA_LIMIT 0.3

static inline double sin_kernel(double x) {
    double z = x * x, v = z * x;
    double r = 8.33333333332248946124e-03 +
               z * (-1.98412698298579493134e-04 +
                    z * (2.75573137070700676789e-06 +
                         z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
    return x + v * (-1.66666666666666324348e-01 + z * r);
}

static inline double cos_kernel(double x) {
    double z = x * x;
    double r = z * (4.16666666666666019037e-02 +
                    z * (-1.38888888888741095749e-03 +
                         z * (2.48015872894767294178e-05 +
                              z * (-2.75573143513906633035e-07 +
                                   z * (2.08757232129817482790e-09 +
                                        z * -1.13596475577881948265e-11)))));
    return 1.0 - (0.5 * z - z * r);
}

static bool thetas_in_vector_range(const double *theta, int lo, int hi) {
    int outside = 0;
    for (int i = lo; i < hi; i++) outside |= fabs(theta[i]) > VECTOR_THETA_LIMIT;
    return outside == 0;
}

/* The float64 vector step of envs lo..hi-1; the velocities observed as 0 when `positions`. */
static inline __attribute__((always_inline)) void step_vector(sk_cartpole_state *s,
                                                              const sk_env_io *io, int lo, int hi,
                                                              bool positions) {
    double *restrict xs = s->x, *restrict x_dots = s->x_dot;
    double *restrict thetas = s->theta, *restrict theta_dots = s->theta_dot;
    const int32_t *restrict actions = io->actions;
    /* GCC 12 vectorises each of these loops but not their fusion: mixing the
     * double arithmetic with 32-bit counters or byte flags in one loop leaves
     * it scalar. Three passes over L1/L2-resident arrays cost less than that. */
    for (int i = lo; i < hi; i++) {
        double force = actions[i] == 1 ? FORCE_MAG : -FORCE_MAG;
        double x = xs[i], x_dot = x_dots[i], theta = thetas[i], theta_dot = theta_dots[i];
        advance(force, sin_kernel(theta), cos_kernel(theta), &x, &x_dot, &theta, &theta_dot);
        xs[i] = x;
        x_dots[i] = x_dot;
        thetas[i] = theta;
        theta_dots[i] = theta_dot;
    }
    float *restrict obs = io->obs;
    for (int i = lo; i < hi; i++) {
        obs[(size_t)i * OBS_SIZE + 0] = (float)xs[i];
        obs[(size_t)i * OBS_SIZE + 1] = positions ? 0.0f : (float)x_dots[i];
        obs[(size_t)i * OBS_SIZE + 2] = (float)thetas[i];
        obs[(size_t)i * OBS_SIZE + 3] = positions ? 0.0f : (float)theta_dots[i];
    }
    int32_t *restrict elapsed = s->elapsed;
    float *restrict returns = s->episode_return, *restrict rewards = io->rewards;
    for (int i = lo; i < hi; i++) {
        elapsed[i] += 1;
        rewards[i] = 1.0f;
        returns[i] += 1.0f;
    }
    uint8_t *restrict terminated = io->terminated, *restrict truncated = io->truncated;
    for (int i = lo; i < hi; i++)
        terminated[i] = (uint8_t)((xs[i] < -X_THRESHOLD) | (xs[i] > X_THRESHOLD) |
                                  (thetas[i] < -THETA_THRESHOLD) | (thetas[i] > THETA_THRESHOLD));
    int ended = 0;
    for (int i = lo; i < hi; i++) {
        int trunc = !terminated[i] & (elapsed[i] >= MAX_EPISODE_STEPS);
        truncated[i] = (uint8_t)trunc;
        ended |= terminated[i] | trunc;
    }
    if (ended) finish_episodes(s, io, lo, hi);
}

static __attribute__((noinline)) void step_vector_full(sk_cartpole_state *s, const sk_env_io *io,
                                                       int lo, int hi) {
    step_vector(s, io, lo, hi, false);
}

static __attribute__((noinline)) void step_vector_positions(sk_cartpole_state *s,
                                                            const sk_env_io *io, int lo, int hi) {
    step_vector(s, io, lo, hi, true);
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

static __attribute__((noinline)) void step32_libm_full(sk_cartpole_state *s, const sk_env_io *io,
                                                       int lo, int hi) {
    step32(s, io, lo, hi, true, false);
}

static __attribute__((noinline)) void step32_libm_positions(sk_cartpole_state *s,
                                                            const sk_env_io *io, int lo, int hi) {
    step32(s, io, lo, hi, true, true);
}

static __attribute__((noinline)) void step32_kernels_full(sk_cartpole_state *s,
                                                          const sk_env_io *io, int lo, int hi) {
    step32(s, io, lo, hi, false, false);
}

static __attribute__((noinline)) void step32_kernels_positions(sk_cartpole_state *s,
                                                               const sk_env_io *io, int lo,
                                                               int hi) {
    step32(s, io, lo, hi, false, true);
}

static void step32_libm(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi) {
    if (s->observe_positions) step32_libm_positions(s, io, lo, hi);
    else step32_libm_full(s, io, lo, hi);
}

static void step32_kernels(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi) {
    if (s->observe_positions) step32_kernels_positions(s, io, lo, hi);
    else step32_kernels_full(s, io, lo, hi);
}

/* Envs per chunk: all of a chunk's arrays (~60 B an env) stay in L1 from its step to its resets. */
#define CHUNK32 512

#if defined(__AVX512F__)
#include <immintrin.h>

/* Logs and resets the float32 envs listed in ended[0..count-1]: a loop with a known trip count,
 * so no branch per env or per mask word; the chunk it works on is in L1. */
static void finish_listed32(sk_cartpole_state *s, const sk_env_io *io, const int32_t *ended,
                            int count) {
    for (int k = 0; k < count; k++) {
        int i = ended[k];
        float *obs = io->obs + (size_t)i * OBS_SIZE;
        memcpy(io->final_obs + (size_t)i * OBS_SIZE, obs, OBS_SIZE * sizeof(float));
        float length = (float)s->elapsed[i];
        io->episode_log[2 * i + 0] = length; /* every reward is 1: the return is the length */
        io->episode_log[2 * i + 1] = length;
        reset_one32(s, i);
        write_obs32(s, obs, i);
    }
}

/* The float32 step of envs lo..lo+16*groups-1 on 16 AVX-512 lanes, everything in one pass: the
 * physics in step32's operation order (no contraction, so every lane rounds as the portable
 * loops do and the results are bit-identical), the interleaved observations (velocities as 0
 * when `positions`), counters, rewards, flags, and the indices of the envs that ended,
 * compressed into `ended`. Returns their count. */
static inline __attribute__((always_inline)) int step32_avx512(sk_cartpole_state *s,
                                                               const sk_env_io *io, int lo,
                                                               int groups, int32_t *ended,
                                                               bool positions) {
    const __m512 pos_force = _mm512_set1_ps(FORCE_PER_MASS_F), neg_force = _mm512_set1_ps(-FORCE_PER_MASS_F);
    const __m512 s1 = _mm512_set1_ps(-1.6666654611e-1f), s2 = _mm512_set1_ps(8.3321608736e-3f),
                 s3 = _mm512_set1_ps(-1.9515295891e-4f);
    const __m512 c1 = _mm512_set1_ps(4.166664568298827e-2f),
                 c2 = _mm512_set1_ps(-1.388731625493765e-3f),
                 c3 = _mm512_set1_ps(2.443315711809948e-5f);
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    const __m512 temp_scale = _mm512_set1_ps(TEMP_SCALE_F), gravity = _mm512_set1_ps(GRAVITY_F);
    const __m512 denom_base = _mm512_set1_ps(DENOM_BASE_F), denom_scale = _mm512_set1_ps(DENOM_SCALE_F);
    const __m512 xacc_scale = _mm512_set1_ps(XACC_SCALE_F), tau = _mm512_set1_ps(TAU_F);
    const __m512 x_hi = _mm512_set1_ps(X_THRESHOLD_F), x_lo = _mm512_set1_ps(-X_THRESHOLD_F);
    const __m512 t_hi = _mm512_set1_ps(THETA_THRESHOLD_F), t_lo = _mm512_set1_ps(-THETA_THRESHOLD_F);
    const __m512i ones = _mm512_set1_epi32(1), max_steps = _mm512_set1_epi32(MAX_EPISODE_STEPS - 1);
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    /* the observation interleave: output vector j holds envs 4j..4j+3, four fields each; a
     * two-source permute puts (x, x_dot) and (theta, theta_dot) in place, a blend joins them */
    __m512i pair_idx[4];
    for (int j = 0; j < 4; j++) {
        int32_t idx[16];
        for (int e = 0; e < 4; e++) {
            idx[4 * e + 0] = 4 * j + e;
            idx[4 * e + 1] = 16 + 4 * j + e;
            idx[4 * e + 2] = 4 * j + e;
            idx[4 * e + 3] = 16 + 4 * j + e;
        }
        pair_idx[j] = _mm512_loadu_si512(idx);
    }
    /* two groups of 16 envs at a time, their statements interleaved: one group's chain through
     * the polynomials and the division is long enough that the scheduler would otherwise stall */
    int count = 0;
    for (int g = 0; g < groups; g += 2) {
        int i0 = lo + 16 * g, n = groups - g < 2 ? 1 : 2;
        __m512 force[2], x[2], x_dot[2], theta[2], theta_dot[2], z[2], sn[2], cs[2], temp[2],
            num[2], den[2], thetaacc[2], xacc[2];
#define EACH for (int u = 0; u < 2; u++)
        EACH {
            int i = i0 + 16 * (u < n ? u : 0);
            __mmask16 right = _mm512_cmpeq_epi32_mask(_mm512_loadu_si512(io->actions + i), ones);
            force[u] = _mm512_mask_blend_ps(right, neg_force, pos_force);
            x[u] = _mm512_loadu_ps(s->x32 + i);
            x_dot[u] = _mm512_loadu_ps(s->x_dot32 + i);
            theta[u] = _mm512_loadu_ps(s->theta32 + i);
            theta_dot[u] = _mm512_loadu_ps(s->theta_dot32 + i);
        }
        EACH z[u] = _mm512_mul_ps(theta[u], theta[u]);
        EACH sn[u] = _mm512_add_ps(_mm512_mul_ps(s3, z[u]), s2);
        EACH cs[u] = _mm512_add_ps(_mm512_mul_ps(c3, z[u]), c2);
        EACH sn[u] = _mm512_add_ps(_mm512_mul_ps(sn[u], z[u]), s1);
        EACH cs[u] = _mm512_add_ps(_mm512_mul_ps(cs[u], z[u]), c1);
        EACH sn[u] = _mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(sn[u], z[u]), theta[u]), theta[u]);
        EACH cs[u] = _mm512_sub_ps(_mm512_mul_ps(_mm512_mul_ps(cs[u], z[u]), z[u]),
                                   _mm512_mul_ps(half, z[u]));
        EACH cs[u] = _mm512_add_ps(cs[u], one);
        EACH den[u] = _mm512_sub_ps(denom_base,
                                    _mm512_mul_ps(denom_scale, _mm512_mul_ps(cs[u], cs[u])));
        EACH temp[u] = _mm512_add_ps(
            force[u], _mm512_mul_ps(temp_scale, _mm512_mul_ps(_mm512_mul_ps(theta_dot[u], theta_dot[u]), sn[u])));
        EACH num[u] = _mm512_sub_ps(_mm512_mul_ps(gravity, sn[u]), _mm512_mul_ps(cs[u], temp[u]));
        EACH thetaacc[u] = _mm512_div_ps(num[u], den[u]);
        EACH xacc[u] = _mm512_sub_ps(temp[u], _mm512_mul_ps(xacc_scale, _mm512_mul_ps(thetaacc[u], cs[u])));
        EACH {
            x[u] = _mm512_add_ps(x[u], _mm512_mul_ps(tau, x_dot[u]));
            x_dot[u] = _mm512_add_ps(x_dot[u], _mm512_mul_ps(tau, xacc[u]));
            theta[u] = _mm512_add_ps(theta[u], _mm512_mul_ps(tau, theta_dot[u]));
            theta_dot[u] = _mm512_add_ps(theta_dot[u], _mm512_mul_ps(tau, thetaacc[u]));
        }
#undef EACH
        for (int u = 0; u < n; u++) {
            int i = i0 + 16 * u;
            _mm512_storeu_ps(s->x32 + i, x[u]);
            _mm512_storeu_ps(s->x_dot32 + i, x_dot[u]);
            _mm512_storeu_ps(s->theta32 + i, theta[u]);
            _mm512_storeu_ps(s->theta_dot32 + i, theta_dot[u]);
            float *obs = io->obs + (size_t)i * OBS_SIZE;
            /* hidden velocities: the permute takes them from a zero vector */
            __m512 x_dot_obs = positions ? _mm512_setzero_ps() : x_dot[u];
            __m512 theta_dot_obs = positions ? _mm512_setzero_ps() : theta_dot[u];
            for (int j = 0; j < 4; j++) {
                __m512 xs = _mm512_permutex2var_ps(x[u], pair_idx[j], x_dot_obs);
                __m512 ts = _mm512_permutex2var_ps(theta[u], pair_idx[j], theta_dot_obs);
                _mm512_storeu_ps(obs + 16 * j, _mm512_mask_blend_ps(0xcccc, xs, ts));
            }
            __m512i elapsed = _mm512_add_epi32(_mm512_loadu_si512(s->elapsed + i), ones);
            _mm512_storeu_si512(s->elapsed + i, elapsed);
            _mm512_storeu_ps(io->rewards + i, one);
            __mmask16 term = _mm512_cmp_ps_mask(x[u], x_lo, _CMP_LT_OQ) |
                             _mm512_cmp_ps_mask(x[u], x_hi, _CMP_GT_OQ) |
                             _mm512_cmp_ps_mask(theta[u], t_lo, _CMP_LT_OQ) |
                             _mm512_cmp_ps_mask(theta[u], t_hi, _CMP_GT_OQ);
            __mmask16 trunc = (__mmask16)(~term & _mm512_cmpgt_epi32_mask(elapsed, max_steps));
            _mm_storeu_si128((__m128i *)(io->terminated + i),
                             _mm512_cvtepi32_epi8(_mm512_maskz_mov_epi32(term, ones)));
            _mm_storeu_si128((__m128i *)(io->truncated + i),
                             _mm512_cvtepi32_epi8(_mm512_maskz_mov_epi32(trunc, ones)));
            __mmask16 done = term | trunc;
            /* a register compress and a full store: Zen 4's compress to memory is slow */
            _mm512_storeu_si512(ended + count,
                                _mm512_maskz_compress_epi32(
                                    done, _mm512_add_epi32(lane, _mm512_set1_epi32(i))));
            count += __builtin_popcount(done);
        }
    }
    return count;
}
#endif

/* The float32 step at the kernels' range: chunk by chunk, each through the whole step and its
 * resets while it is in L1; a chunk with some |theta| past the kernels' range takes libm. The
 * velocities observed as 0 when `positions`. */
static inline __attribute__((always_inline)) void step32_chunked(sk_cartpole_state *s,
                                                                 const sk_env_io *io, int lo,
                                                                 int hi, bool simd,
                                                                 bool positions) {
    for (int c = lo; c < hi; c += CHUNK32) {
        int e = hi - c < CHUNK32 ? hi : c + CHUNK32;
        if (!sk_vrangef_ok(s->theta32, c, e, SK_VMATHF_KERNEL_BOUND)) {
            step32_libm(s, io, c, e);
            continue;
        }
#if defined(__AVX512F__)
        if (simd) {
            int32_t ended[CHUNK32 + 16];
            int groups = (e - c) / 16;
            finish_listed32(s, io, ended, step32_avx512(s, io, c, groups, ended, positions));
            if (c + 16 * groups < e) step32_kernels(s, io, c + 16 * groups, e);
            continue;
        }
#endif
        (void)simd;
        (void)positions;
        step32_kernels(s, io, c, e);
    }
}

static __attribute__((noinline)) void step32_chunked_full(sk_cartpole_state *s,
                                                          const sk_env_io *io, int lo, int hi,
                                                          bool simd) {
    step32_chunked(s, io, lo, hi, simd, false);
}

static __attribute__((noinline)) void step32_chunked_positions(sk_cartpole_state *s,
                                                               const sk_env_io *io, int lo,
                                                               int hi, bool simd) {
    step32_chunked(s, io, lo, hi, simd, true);
}

static void step32_chunked_observing(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi,
                                     bool simd) {
    if (s->observe_positions) step32_chunked_positions(s, io, lo, hi, simd);
    else step32_chunked_full(s, io, lo, hi, simd);
}

static void cartpole_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_cartpole_state *s = state;
    if (s->precision == SK_CARTPOLE_FLOAT32) {
        step32_chunked_observing(s, io, lo, hi, true);
    } else if (thetas_in_vector_range(s->theta, lo, hi)) {
        if (s->observe_positions) step_vector_positions(s, io, lo, hi);
        else step_vector_full(s, io, lo, hi);
    } else {
        sk_cartpole_step_reference(state, io, lo, hi);
    }
}

void sk_cartpole_step_portable(void *state, const sk_env_io *io, int lo, int hi) {
    sk_cartpole_state *s = state;
    if (s->precision == SK_CARTPOLE_FLOAT32) step32_chunked_observing(s, io, lo, hi, false);
    else cartpole_step(state, io, lo, hi);
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
