/* A categorical distribution over two actions (one head, no mask: CartPole's), row by row, at one
 * ISA level (included by level_*.c; src/policy/categorical.c calls these through the table for
 * that case and keeps the general path). Branch-free, so that each loop vectorises over rows at
 * the level's width: at x86-64-v2's four lanes they took 37% of the fast CartPole preset's
 * training step where AVX-512's sixteen took 3% (perf, same run). */

#include "../../core/rng.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The general path (categorical.c) calls libm's expf and logf a row at a time; that took a fifth
 * of a small network's training step. Cephes' single-precision expf and logf (S. L. Moshier), the
 * same reduction and polynomials as nn.c's tanh, within a few ulp of libm. */
#define CAT_LN2_HI 0.693359375f
#define CAT_LN2_LO (-2.12194440e-4f)
#define CAT_EXP_MIN (-87.0f) /* 2^n stays a normal float */

static inline float cat_exp(float x) { /* x <= 0 */
    return sk_exp_poly(x < CAT_EXP_MIN ? CAT_EXP_MIN : x);
}

static inline float cat_log(float v) { /* v in [1, 2] */
    int32_t bits;
    memcpy(&bits, &v, sizeof bits);
    int32_t e = ((bits >> 23) & 0xff) - 126;
    bits = (bits & 0x807fffff) | 0x3f000000; /* mantissa in [0.5, 1) */
    float m;
    memcpy(&m, &bits, sizeof m);
    /* both arms computed, then selected: a conditional float operation could trap, which keeps
     * GCC from if-converting it, and then the loop stays scalar */
    int32_t low = m < 0.707106781186547524f;
    float twice = m + m - 1.0f, once = m - 1.0f;
    float x = low ? twice : once;
    float fe = (float)(e - low);
    float z = x * x;
    float y = 7.0376836292e-2f;
    y = y * x - 1.1514610310e-1f;
    y = y * x + 1.1676998740e-1f;
    y = y * x - 1.2420140846e-1f;
    y = y * x + 1.4249322787e-1f;
    y = y * x - 1.6668057665e-1f;
    y = y * x + 2.0000714765e-1f;
    y = y * x - 2.4999993993e-1f;
    y = y * x + 3.3333331174e-1f;
    y = y * x * z;
    y += CAT_LN2_LO * fe;
    y += -0.5f * z;
    return x + y + CAT_LN2_HI * fe;
}

/* log-probabilities and probabilities of a row's two actions */
static inline void binary_row(const float *z, float *lp0, float *lp1, float *p0, float *p1) {
    float max = z[0] > z[1] ? z[0] : z[1];
    float gap = -fabsf(z[0] - z[1]); /* NaN passes */
    float lse = max + cat_log(1.0f + cat_exp(gap));
    *lp0 = z[0] - lse;
    *lp1 = z[1] - lse;
    *p0 = cat_exp(*lp0);
    *p1 = cat_exp(*lp1);
}

static void kernel_binary_sample(const float *logits, int B, uint64_t *rng, bool greedy,
                                 int32_t *actions, float *logp) {
    uint64_t state = *rng;
    if (greedy) {
        for (int row = 0; row < B; row++) {
            float lp0, lp1, p0, p1;
            binary_row(logits + 2 * row, &lp0, &lp1, &p0, &p1);
            int32_t a = logits[2 * row + 1] > logits[2 * row];
            actions[row] = a;
            logp[row] = a ? lp1 : lp0;
        }
        return;
    }
    for (int row = 0; row < B; row++) {
        float lp0, lp1, p0, p1;
        binary_row(logits + 2 * row, &lp0, &lp1, &p0, &p1);
        /* sk_rng_float's draws, in the same order */
        float u = (float)(sk_mix64(state + (uint64_t)(row + 1) * SK_GOLDEN_GAMMA) >> 40) *
                  0x1.0p-24f;
        int32_t a = !(u < p0);
        actions[row] = a;
        logp[row] = a ? lp1 : lp0;
    }
    *rng = state + (uint64_t)B * SK_GOLDEN_GAMMA;
}

static void kernel_binary_evaluate(const float *logits, const int32_t *actions, int B,
                                   float *logp, float *entropy) {
    for (int row = 0; row < B; row++) {
        float lp0, lp1, p0, p1;
        binary_row(logits + 2 * row, &lp0, &lp1, &p0, &p1);
        logp[row] = actions[row] ? lp1 : lp0;
        entropy[row] = -(p0 * lp0 + p1 * lp1);
    }
}

static void kernel_binary_backward(const float *logits, const int32_t *actions, int B,
                                   const float *dlogp, const float *dentropy, float *dlogits) {
    for (int row = 0; row < B; row++) {
        float lp0, lp1, p0, p1;
        binary_row(logits + 2 * row, &lp0, &lp1, &p0, &p1);
        float entropy = -(p0 * lp0 + p1 * lp1);
        float a1 = actions[row] ? 1.0f : 0.0f;
        dlogits[2 * row + 0] = dlogp[row] * ((1.0f - a1) - p0) + dentropy[row] * (-p0 * (lp0 + entropy));
        dlogits[2 * row + 1] = dlogp[row] * (a1 - p1) + dentropy[row] * (-p1 * (lp1 + entropy));
    }
}
