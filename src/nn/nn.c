#include "nn.h"

#include "../core/core.h"
#include "gemm_small.h"
#include "kernels.h"
#include "../core/rng.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

void sk_linear_forward(float *out, const float *inp, const float *w, const float *b, int B, int C,
                       int OC) {
    sk_linear_forward_pre(out, inp, w, NULL, b, B, C, OC);
}

void sk_linear_forward_pre(float *out, const float *inp, const float *w, const float *wt,
                           const float *b, int B, int C, int OC) {
    if (sk_gemm_small_forward_pre(out, inp, w, wt, b, B, C, OC)) return;
    for (int row = 0; row < B; row++)
        for (int o = 0; o < OC; o++) out[(size_t)row * OC + o] = b ? b[o] : 0.0f;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, OC, C, 1.0f, inp, C, w, C, 1.0f, out,
                OC);
}

void sk_linear_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, int B, int C, int OC) {
    if (dinp && !sk_gemm_small_dinput(dinp, dout, w, B, C, OC))
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, C, OC, 1.0f, dout, OC, w, C,
                    1.0f, dinp, C);
    if (dw && !sk_gemm_small_dweight(dw, dout, inp, B, C, OC))
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, B, 1.0f, dout, OC, inp, C,
                    1.0f, dw, C);
    if (db) sk_nn_kernels_used()->bias_grad(db, dout, B, OC);
}

/* tanh and Adam run at the ISA level in use (src/nn/isa/layers.c). */
float sk_tanhf(float x) { return sk_nn_kernels_used()->tanhf(x); }

void sk_tanh_forward(float *out, const float *inp, size_t n) {
    sk_nn_kernels_used()->tanh_forward(out, inp, n);
}

void sk_tanh_backward(float *dinp, const float *dout, const float *out, size_t n) {
    sk_nn_kernels_used()->tanh_backward(dinp, dout, out, n);
}

void sk_relu_forward(float *out, const float *inp, size_t n) {
    sk_nn_kernels_used()->relu_forward(out, inp, n);
}

void sk_relu_backward(float *dinp, const float *dout, const float *out, size_t n) {
    sk_nn_kernels_used()->relu_backward(dinp, dout, out, n);
}

void sk_orthogonal_init(float *w, int rows, int cols, double gain, uint64_t *rng) {
    /* Work on the tall orientation (big x small) and transpose back if needed. */
    int tall = rows >= cols ? rows : cols;
    int small = rows >= cols ? cols : rows;
    double *q = malloc((size_t)tall * (size_t)small * sizeof(double)); /* column-major (tall, small) */
    SK_ASSERT(q != NULL);
    for (size_t i = 0; i < (size_t)tall * (size_t)small; i++) q[i] = sk_rng_normal(rng);
    /* Modified Gram-Schmidt: Q with R's diagonal positive, which is exactly the
     * sign-corrected Householder Q that torch produces. */
    for (int j = 0; j < small; j++) {
        double *col = q + (size_t)j * tall;
        for (int k = 0; k < j; k++) {
            const double *prev = q + (size_t)k * tall;
            double dot = 0.0;
            for (int i = 0; i < tall; i++) dot += prev[i] * col[i];
            for (int i = 0; i < tall; i++) col[i] -= dot * prev[i];
        }
        double norm = 0.0;
        for (int i = 0; i < tall; i++) norm += col[i] * col[i];
        norm = sqrt(norm);
        SK_ASSERT(norm > 1e-12);
        for (int i = 0; i < tall; i++) col[i] /= norm;
    }
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) {
            /* rows >= cols: w[r][c] = Q[r][c]; else w = Q^T, w[r][c] = Q[c][r] */
            double value = rows >= cols ? q[(size_t)c * tall + r] : q[(size_t)r * tall + c];
            w[(size_t)r * cols + c] = (float)(gain * value);
        }
    }
    free(q);
}

void sk_adam_update(float *params, const float *grads, float *m, float *v, size_t n, float lr,
                    sk_adam adam, int64_t step) {
    sk_nn_kernels_used()->adam_update(params, grads, m, v, n, lr, adam, step);
}

/* Eight running sums, element i into sum i % 8, added in a fixed tree at the end: one sum waited
 * on the previous add every element, 14% of the Pendulum preset's training step (perf); eight
 * chains vectorise at every level. A float's square is exact in double, so the sums are the same
 * at every ISA level whether or not the compiler fuses them. */
enum { GRAD_NORM_CHAINS = 8 };
double sk_grad_norm(const float *grads, size_t n) {
    double part[GRAD_NORM_CHAINS] = {0};
    size_t i = 0;
    for (; i + GRAD_NORM_CHAINS <= n; i += GRAD_NORM_CHAINS)
        for (int k = 0; k < GRAD_NORM_CHAINS; k++)
            part[k] += (double)grads[i + (size_t)k] * grads[i + (size_t)k];
    for (int k = 0; i < n; i++, k++) part[k] += (double)grads[i] * grads[i];
    double sum =
        ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    return sqrt(sum);
}

float sk_clip_grad_scale(double norm, double max_norm) {
    double coef = max_norm / (norm + 1e-6);
    return coef < 1.0 ? (float)coef : 1.0f;
}

void sk_scale_grads(float *grads, size_t n, float scale) {
    if (scale != 1.0f)
        for (size_t i = 0; i < n; i++) grads[i] *= scale;
}

double sk_clip_grad_norm(float *grads, size_t n, double max_norm) {
    double norm = sk_grad_norm(grads, n);
    sk_scale_grads(grads, n, sk_clip_grad_scale(norm, max_norm));
    return norm;
}
