/*
 * CartPole's vector step at one ISA level: #included by src/envs/isa/level_*.c, each compiled with
 * its level's -march and -ffp-contract=off (CMakeLists.txt), so the loops vectorise at the
 * level's width and every lane rounds as the portable loops do; src/envs/cartpole.c picks one per
 * env state at create (sk_cartpole_step_at). The float32 step has a hand-written AVX-512 kernel,
 * compiled in the avx512 level's object only.
 */
#include "../cartpole_shared.h"

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

static __attribute__((noinline)) void step32_kernels_full(sk_cartpole_state *s,
                                                          const sk_env_io *io, int lo, int hi) {
    step32(s, io, lo, hi, false, false);
}

static __attribute__((noinline)) void step32_kernels_positions(sk_cartpole_state *s,
                                                               const sk_env_io *io, int lo,
                                                               int hi) {
    step32(s, io, lo, hi, false, true);
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
 * resets while it is in L1; a chunk with some |theta| past the kernels' range takes libm (the
 * reference). The velocities observed as 0 when `positions`. */
static inline __attribute__((always_inline)) void step32_chunked(sk_cartpole_state *s,
                                                                 const sk_env_io *io, int lo,
                                                                 int hi, bool positions) {
    for (int c = lo; c < hi; c += CHUNK32) {
        int e = hi - c < CHUNK32 ? hi : c + CHUNK32;
        if (!sk_vrangef_ok(s->theta32, c, e, SK_VMATHF_KERNEL_BOUND)) {
            sk_cartpole_step_reference(s, io, c, e);
            continue;
        }
#if defined(__AVX512F__)
        int32_t ended[CHUNK32 + 16];
        int groups = (e - c) / 16;
        finish_listed32(s, io, ended, step32_avx512(s, io, c, groups, ended, positions));
        if (c + 16 * groups < e) step32_kernels(s, io, c + 16 * groups, e);
#else
        (void)positions;
        step32_kernels(s, io, c, e);
#endif
    }
}

static __attribute__((noinline)) void step32_chunked_full(sk_cartpole_state *s,
                                                          const sk_env_io *io, int lo, int hi) {
    step32_chunked(s, io, lo, hi, false);
}

static __attribute__((noinline)) void step32_chunked_positions(sk_cartpole_state *s,
                                                               const sk_env_io *io, int lo,
                                                               int hi) {
    step32_chunked(s, io, lo, hi, true);
}

#define SK_ISA_CAT2(a, b) a##b
#define SK_ISA_CAT(a, b) SK_ISA_CAT2(a, b)

void SK_ISA_CAT(sk_cartpole_step_, SK_ISA_SUFFIX)(sk_cartpole_state *s, const sk_env_io *io,
                                                  int lo, int hi) {
    if (s->precision == SK_CARTPOLE_FLOAT32) {
        if (s->observe_positions) step32_chunked_positions(s, io, lo, hi);
        else step32_chunked_full(s, io, lo, hi);
    } else if (thetas_in_vector_range(s->theta, lo, hi)) {
        if (s->observe_positions) step_vector_positions(s, io, lo, hi);
        else step_vector_full(s, io, lo, hi);
    } else {
        sk_cartpole_step_reference(s, io, lo, hi);
    }
}
