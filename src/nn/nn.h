/*
 * Layers as forward/backward pairs over float pointers: outputs first,
 * gradients d-prefixed, shapes last. Backward accumulates (+=) into parameter
 * and input gradients; zeroing is the caller's job. Row-major throughout:
 * a batch of B rows of C features is (B, C).
 */
#ifndef SK_NN_H
#define SK_NN_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* out (B, OC) = inp (B, C) @ w^T + b; w (OC, C) as torch.nn.Linear. */
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

void sk_linear_forward(float *out, const float *inp, const float *w, const float *b, int B, int C,
                       int OC);
/* dinp (B, C) += dout @ w; dw (OC, C) += dout^T @ inp; db (OC) += sum over rows.
 * dinp may be NULL (first layer). */
void sk_linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, int B, int C, int OC);

/* tanh in float with ~1 ulp of error, written so the compiler vectorises the
 * loop (libm's tanhf is a scalar call and took 3/4 of a training step). */
float sk_tanhf(float x);
void sk_tanh_forward(float *out, const float *inp, size_t n);
/* dinp += dout * (1 - out^2), from the forward output. */
void sk_tanh_backward(float *dinp, const float *dout, const float *out, size_t n);
void sk_relu_forward(float *out, const float *inp, size_t n);
/* dinp += dout where out > 0. */
void sk_relu_backward(float *dinp, const float *dout, const float *out, size_t n);

/* w (rows, cols) = gain * a (semi-)orthogonal matrix, as torch.nn.init.orthogonal_:
 * QR of a Gaussian matrix with the signs of R's diagonal folded into Q. */
void sk_orthogonal_init(float *w, int rows, int cols, double gain, uint64_t *rng);

/* Adam with PyTorch's update rule. step is the 1-based step count. */
typedef struct sk_adam {
    float beta1, beta2, eps;
} sk_adam;
void sk_adam_update(float *params, const float *grads, float *m, float *v, size_t n, float lr,
                    sk_adam adam, int64_t step);

/* Global L2 norm of grads (accumulated in double). */
double sk_grad_norm(const float *grads, size_t n);
/* Scales grads so their global norm is at most max_norm, as
 * torch.nn.utils.clip_grad_norm_ (coefficient max_norm / (norm + 1e-6)).
 * Returns the norm before clipping. */
double sk_clip_grad_norm(float *grads, size_t n, double max_norm);

#endif
