/* SAC's tanh-squashed Gaussian (src/train/sac_net.h's contracts for sk_sac_squash_forward and
 * sk_sac_squash_backward) at one ISA level (included by level_*.c after layers.c and softmax2.c,
 * whose tanh, exp and log it uses). libm's tanhf, expf and logf, one element at a time, were
 * about 7% of a SAC update (perf: __expm1f 3%, __expf 1%, __tanhf 1%, logf 0.7%, the loops
 * 1.2%). dim is small (6 for HalfCheetah), so the elements are vectorised across rows: a block
 * of rows is gathered into contiguous arrays on the stack, computed a vector at a time, and
 * scattered back. logp sums a row's terms in d order at every level. */

#include <math.h>
#include <stdint.h>
#include <string.h>

#define SQUASH_HALF_LOG_2PI 0.91893853320467274178f /* 0.5 * ln(2 pi) */
#define SQUASH_LOG_STD_HALF_RANGE (0.5f * (SK_SAC_LOG_STD_MAX - SK_SAC_LOG_STD_MIN))
#define SQUASH_EXP_MIN (-87.0f) /* exp's argument kept where 2^n is a normal float */
/* elements per block: whole rows of any dim (<= SK_MAX_ACTION_DIM), a whole number of vectors;
 * the backward's 8 arrays of it are 12 KiB of stack */
enum { SQUASH_BLOCK = 384 };
_Static_assert(SQUASH_BLOCK >= SK_MAX_ACTION_DIM && SQUASH_BLOCK % 16 == 0,
               "a block holds a row of the widest action in whole vectors");

/* count floats of src into dst, zeros after them up to padded (src NULL: all zeros) */
static void squash_copy_padded(float *dst, const float *src, size_t count, size_t padded) {
    if (src) memcpy(dst, src, count * sizeof(float));
    else count = 0;
    memset(dst + count, 0, (padded - count) * sizeof(float));
}

#if defined(V_SET)
enum { SQUASH_LANES = TANH_LANES };
#else
enum { SQUASH_LANES = 1 };
#endif

/* rows [row0, row0 + rows) of a call: elements [at, at + count), padded to whole vectors */
typedef struct squash_block {
    int row0, rows;
    size_t at, count, padded;
} squash_block;

static squash_block squash_block_at(int row0, int rows, int dim) {
    squash_block block = {.row0 = row0, .rows = rows - row0};
    if (block.rows > SQUASH_BLOCK / dim) block.rows = SQUASH_BLOCK / dim;
    block.at = (size_t)row0 * (size_t)dim;
    block.count = (size_t)block.rows * (size_t)dim;
    block.padded = (block.count + SQUASH_LANES - 1) / SQUASH_LANES * SQUASH_LANES;
    return block;
}

/* What both directions read, contiguous: the block's rows of head (rows, 2 dim) as mean and raw,
 * its noise and scale per element; the pad lanes compute on zeros and scale 1. */
static void squash_gather(const float *head, const float *noise, const float *scale, int dim,
                          squash_block block, float *mean, float *raw, float *eps,
                          float *scales) {
    for (int row = 0; row < block.rows; row++) {
        const float *at = head + (size_t)(block.row0 + row) * 2 * (size_t)dim;
        memcpy(mean + (size_t)row * (size_t)dim, at, (size_t)dim * sizeof(float));
        memcpy(raw + (size_t)row * (size_t)dim, at + dim, (size_t)dim * sizeof(float));
    }
    size_t pad = block.padded - block.count;
    memset(mean + block.count, 0, pad * sizeof(float));
    memset(raw + block.count, 0, pad * sizeof(float));
    squash_copy_padded(eps, noise + block.at, block.count, block.padded);
    for (size_t i = 0; i < block.padded; i++)
        scales[i] = i < block.count ? scale[i % (size_t)dim] : 1.0f;
}

#if defined(V_SET)
/* exp(x) for x in [SQUASH_EXP_MIN, 88]: sk_exp_poly's polynomial and 2^n (the vector form of
 * sigmoid_vector's) */
static inline tanh_vec squash_exp_vector(tanh_vec x) {
    tanh_vec n = V_ROUND(V_MUL(x, V_SET(1.44269504088896341f)));
    return V_MUL(exp_poly_vector(x, n), V_EXP2_INT(n));
}

/* 1 - tanh(x)^2 = 4 e / (1 + e)^2, e = exp(-2 |x|), exact to a few ulp where tanh(x) rounds to
 * +-1 (libm's tanh would give 0). e as exp(-|x|)^2: past |x| = 43.5 it falls into the subnormals
 * and to 0 as libm's exp(-2 |x|) does, where exp(max(-2 |x|, -87)) stopped at 1.6e-38. */
static inline tanh_vec squash_sech2_vector(tanh_vec x) {
    tanh_vec half = squash_exp_vector(V_MAX(V_SUB(V_SET(0.0f), V_ABS(x)), V_SET(SQUASH_EXP_MIN)));
    tanh_vec e = V_MUL(half, half);
    tanh_vec denominator = V_ADD(V_SET(1.0f), e);
    return V_DIV(V_MUL(V_SET(4.0f), e), V_MUL(denominator, denominator));
}

static inline float squash_float_bits(uint32_t bits) {
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* softmax2.c's cat_log a vector at a time, for v a positive normal float */
static inline tanh_vec squash_log_vector(tanh_vec v) {
    tanh_vec exponent = V_SUB(V_EXPONENT_FIELD(v), V_SET(126.0f));
    tanh_vec m = V_OR(V_AND(v, V_SET(squash_float_bits(0x007fffffu))), V_SET(0.5f)); /* [0.5, 1) */
    tanh_vec once = V_SUB(m, V_SET(1.0f));
    tanh_vec x = V_SELECT_LT(m, V_SET(0.707106781186547524f), V_ADD(once, m), once);
    tanh_vec fe = V_SELECT_LT(m, V_SET(0.707106781186547524f), V_SUB(exponent, V_SET(1.0f)),
                              exponent);
    tanh_vec z = V_MUL(x, x);
    tanh_vec y = V_FMADD(V_SET(7.0376836292e-2f), x, V_SET(-1.1514610310e-1f));
    y = V_FMADD(y, x, V_SET(1.1676998740e-1f));
    y = V_FMADD(y, x, V_SET(-1.2420140846e-1f));
    y = V_FMADD(y, x, V_SET(1.4249322787e-1f));
    y = V_FMADD(y, x, V_SET(-1.6668057665e-1f));
    y = V_FMADD(y, x, V_SET(2.0000714765e-1f));
    y = V_FMADD(y, x, V_SET(-2.4999993993e-1f));
    y = V_FMADD(y, x, V_SET(3.3333331174e-1f));
    y = V_MUL(V_MUL(y, x), z);
    y = V_FMADD(fe, V_SET(CAT_LN2_LO), y);
    y = V_FNMADD(V_SET(0.5f), z, y);
    return V_FMADD(fe, V_SET(CAT_LN2_HI), V_ADD(x, y));
}

/* The forward of n (a whole number of vectors) elements, in place: raw becomes tanh(raw), mean
 * tanh(u), bias the actions and noise logp's terms. */
static void squash_forward_elements(float *mean, float *raw, float *noise, const float *scale,
                                    float *bias, size_t n) {
    for (size_t i = 0; i < n; i += TANH_LANES) {
        tanh_vec t = tanh_vector(V_LOAD(raw + i)), eps = V_LOAD(noise + i);
        tanh_vec scale_i = V_LOAD(scale + i);
        tanh_vec log_std = V_FMADD(V_SET(SQUASH_LOG_STD_HALF_RANGE), V_ADD(t, V_SET(1.0f)),
                                   V_SET(SK_SAC_LOG_STD_MIN));
        tanh_vec u = V_FMADD(squash_exp_vector(log_std), eps, V_LOAD(mean + i));
        tanh_vec y = tanh_vector(u);
        tanh_vec correction = squash_log_vector(
            V_FMADD(scale_i, squash_sech2_vector(u), V_SET(SK_SAC_LOG_EPS)));
        tanh_vec rest = V_ADD(V_ADD(log_std, V_SET(SQUASH_HALF_LOG_2PI)), correction);
        V_STORE(raw + i, t);
        V_STORE(mean + i, y);
        V_STORE(bias + i, V_FMADD(y, scale_i, V_LOAD(bias + i)));
        V_STORE(noise + i, V_FNMADD(V_MUL(V_SET(0.5f), eps), eps, V_SUB(V_SET(0.0f), rest)));
    }
}

/* The backward of n elements, in place: mean becomes dmean and raw draw. */
static void squash_backward_elements(float *mean, float *raw, const float *noise,
                                     const float *scale, const float *squashed,
                                     const float *log_std_tanh, const float *dactions,
                                     const float *dlogp, size_t n) {
    for (size_t i = 0; i < n; i += TANH_LANES) {
        tanh_vec log_std = V_FMADD(V_SET(SQUASH_LOG_STD_HALF_RANGE),
                                   V_ADD(V_LOAD(log_std_tanh + i), V_SET(1.0f)),
                                   V_SET(SK_SAC_LOG_STD_MIN));
        tanh_vec std = squash_exp_vector(log_std), eps = V_LOAD(noise + i);
        tanh_vec scale_i = V_LOAD(scale + i), dlogp_i = V_LOAD(dlogp + i);
        tanh_vec slope = squash_sech2_vector(V_FMADD(std, eps, V_LOAD(mean + i)));
        tanh_vec scaled = V_MUL(scale_i, slope);
        /* d/du of -log(scale (1 - y^2) + 1e-6) = 2 y scale (1 - y^2) / (scale (1 - y^2) + 1e-6) */
        tanh_vec dcorrection = V_DIV(V_MUL(V_MUL(V_SET(2.0f), V_LOAD(squashed + i)), scaled),
                                     V_ADD(scaled, V_SET(SK_SAC_LOG_EPS)));
        tanh_vec du = V_FMADD(V_LOAD(dactions + i), scaled, V_MUL(dlogp_i, dcorrection));
        tanh_vec dlog_std = V_SUB(V_MUL(V_MUL(du, std), eps), dlogp_i);
        V_STORE(mean + i, du);
        V_STORE(raw + i, V_MUL(V_MUL(dlog_std, V_SET(SQUASH_LOG_STD_HALF_RANGE)),
                               squash_sech2_vector(V_LOAD(raw + i))));
    }
}
#else /* no vector level (the portable C of a non-x86 build): the same formulas, one at a time */
static inline float squash_sech2(float x) {
    float arg = -fabsf(x), half = sk_exp_poly(arg > SQUASH_EXP_MIN ? arg : SQUASH_EXP_MIN);
    float e = half * half; /* as squash_sech2_vector's */
    float denominator = 1.0f + e;
    return 4.0f * e / (denominator * denominator);
}

static void squash_forward_elements(float *mean, float *raw, float *noise, const float *scale,
                                    float *bias, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float t = tanh_inline(raw[i]), eps = noise[i];
        float log_std = SQUASH_LOG_STD_HALF_RANGE * (t + 1.0f) + SK_SAC_LOG_STD_MIN;
        float u = sk_exp_poly(log_std) * eps + mean[i];
        float y = tanh_inline(u);
        float rest = log_std + SQUASH_HALF_LOG_2PI +
                     cat_log(scale[i] * squash_sech2(u) + SK_SAC_LOG_EPS);
        raw[i] = t;
        mean[i] = y;
        bias[i] += y * scale[i];
        noise[i] = -rest - 0.5f * eps * eps;
    }
}

static void squash_backward_elements(float *mean, float *raw, const float *noise,
                                     const float *scale, const float *squashed,
                                     const float *log_std_tanh, const float *dactions,
                                     const float *dlogp, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float log_std = SQUASH_LOG_STD_HALF_RANGE * (log_std_tanh[i] + 1.0f) + SK_SAC_LOG_STD_MIN;
        float std = sk_exp_poly(log_std);
        float scaled = scale[i] * squash_sech2(std * noise[i] + mean[i]);
        float dcorrection = 2.0f * squashed[i] * scaled / (scaled + SK_SAC_LOG_EPS);
        float du = dactions[i] * scaled + dlogp[i] * dcorrection;
        mean[i] = du;
        raw[i] = (du * std * noise[i] - dlogp[i]) * SQUASH_LOG_STD_HALF_RANGE * squash_sech2(raw[i]);
    }
}
#endif

static void kernel_sac_squash_forward(const float *head, const float *noise, int rows, int dim,
                                      const float *scale, const float *bias, float *actions,
                                      float *logp, float *squashed, float *log_std_tanh) {
    float mean[SQUASH_BLOCK], raw[SQUASH_BLOCK], terms[SQUASH_BLOCK];
    float scales[SQUASH_BLOCK], biased[SQUASH_BLOCK];
    for (int row0 = 0; row0 < rows; row0 += SQUASH_BLOCK / dim) {
        squash_block block = squash_block_at(row0, rows, dim);
        squash_gather(head, noise, scale, dim, block, mean, raw, terms, scales);
        for (size_t i = 0; i < block.padded; i++)
            biased[i] = i < block.count ? bias[i % (size_t)dim] : 0.0f;
        squash_forward_elements(mean, raw, terms, scales, biased, block.padded);
        memcpy(actions + block.at, biased, block.count * sizeof(float));
        memcpy(squashed + block.at, mean, block.count * sizeof(float));
        memcpy(log_std_tanh + block.at, raw, block.count * sizeof(float));
        if (!logp) continue;
        for (int row = 0; row < block.rows; row++) { /* in d order at every level */
            float sum = 0.0f;
            for (int d = 0; d < dim; d++) sum += terms[(size_t)row * (size_t)dim + (size_t)d];
            logp[row0 + row] = sum;
        }
    }
}

static void kernel_sac_squash_backward(const float *head, const float *noise, int rows, int dim,
                                       const float *scale, const float *squashed,
                                       const float *log_std_tanh, const float *dactions,
                                       const float *dlogp, float *dhead) {
    float mean[SQUASH_BLOCK], raw[SQUASH_BLOCK], eps[SQUASH_BLOCK], scales[SQUASH_BLOCK];
    float tanh_u[SQUASH_BLOCK], tanh_raw[SQUASH_BLOCK], dact[SQUASH_BLOCK], dlogps[SQUASH_BLOCK];
    for (int row0 = 0; row0 < rows; row0 += SQUASH_BLOCK / dim) {
        squash_block block = squash_block_at(row0, rows, dim);
        size_t count = block.count, padded = block.padded;
        squash_gather(head, noise, scale, dim, block, mean, raw, eps, scales);
        squash_copy_padded(tanh_u, squashed + block.at, count, padded);
        squash_copy_padded(tanh_raw, log_std_tanh + block.at, count, padded);
        squash_copy_padded(dact, dactions ? dactions + block.at : NULL, count, padded);
        for (size_t i = 0; i < padded; i++)
            dlogps[i] = i < count ? dlogp[row0 + (int)(i / (size_t)dim)] : 0.0f;
        squash_backward_elements(mean, raw, eps, scales, tanh_u, tanh_raw, dact, dlogps, padded);
        for (int row = 0; row < block.rows; row++) { /* dhead adds */
            float *dmean = dhead + (size_t)(row0 + row) * 2 * (size_t)dim, *draw = dmean + dim;
            const float *from = mean + (size_t)row * (size_t)dim;
            const float *from_raw = raw + (size_t)row * (size_t)dim;
            for (int d = 0; d < dim; d++) {
                dmean[d] += from[d];
                draw[d] += from_raw[d];
            }
        }
    }
}
