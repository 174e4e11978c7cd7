/*
 * The layers, activations, init and Adam are public (include/skinner/nn.h:
 * contracts and an example); what only skinner's own policies use is here.
 */
#ifndef SK_NN_H
#define SK_NN_H

#include "skinner/nn.h"

#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* sk_linear_forward with wt, W^T (C, OC) kept from the last change of w, or NULL
 * (sk_gemm_small_forward_pre): the same bits. */
void sk_linear_forward_pre(float *out, const float *inp, const float *w, const float *wt,
                           const float *b, int B, int C, int OC);

/* Cephes' single-precision expf (S. L. Moshier): range reduction by ln 2 to [-ln2/2, ln2/2] and a
 * degree-6 polynomial, within a few ulp of libm for x in [-87, 88] (2^n stays a normal float),
 * branch-free so that loops over it vectorise. The caller keeps x in that range; a NaN x is
 * defined behaviour and gives NaN. */
#define SK_EXP_POLY_N_MIN (-127.0f) /* 2^n as a float's exponent bits: n >= -127 */
static inline float sk_exp_poly(float x) {
    float n = rintf(x * 1.44269504088896341f); /* nearest, ties to even: one vroundps */
    /* A NaN x fails the comparison and becomes N_MIN, so the conversion below
     * is defined (a NaN converted to int32 is undefined); r and so the result
     * stay NaN. Only the low side is clamped (-inf is defined too): the
     * callers keep x <= 88, and a second clamp cost 5% of the fast CartPole
     * preset's training (bench/compare.sh, same run). */
    n = n > SK_EXP_POLY_N_MIN ? n : SK_EXP_POLY_N_MIN;
    float r = x - n * 0.693359375f - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23; /* 2^n */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* tanh in float with ~1 ulp of error, written so the compiler vectorises the
 * loop (libm's tanhf is a scalar call and took 3/4 of a training step). */
float sk_tanhf(float x);

#endif
