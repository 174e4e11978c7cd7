/* tanh, Adam and the bias gradient at one ISA level (included by level_*.c; their contracts are
 * in include/skinner/nn.h and src/nn/nn.h). The portable loops below are written so that the
 * compiler vectorises them at each level's width (the level files are compiled without errno
 * for sqrt, so Adam's loop vectorises too); AVX-512 has hand-written versions of the two that
 * perf showed the compiler's code was slow for. */

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Cephes' single-precision tanhf and expf (S. L. Moshier): an odd polynomial
 * below |x| = 0.625, 1 - 2 / (exp(2|x|) + 1) above, with exp by range
 * reduction to [-ln2/2, ln2/2] and a degree-6 polynomial. */
#define TANH_SMALL 0.625f
#define TANH_SATURATE 10.0f /* tanh(x) rounds to 1 in float from x = 9.01 */
static inline float tanh_inline(float x) {
    float ax = fabsf(x);
    float z = x * x;
    float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
                    1.33314422036e-1f) * z - 3.33332819422e-1f) * z * x + x;
    float clamped = ax < TANH_SATURATE ? ax : TANH_SATURATE; /* fminf would not vectorise */
    float large = 1.0f - 2.0f / (sk_exp_poly(2.0f * clamped) + 1.0f);
    large = copysignf(large, x);
    float result = ax < TANH_SMALL ? small : large;
    return x != x ? x : result; /* NaN stays NaN, so the governor sees it */
}

#if defined(__AVX512F__)
#include <immintrin.h>

/* tanh_inline on 16 lanes, with one change: 2 / (e + 1) as a 14-bit reciprocal estimate and a
 * Newton step (~2^-28 relative, then rounded) instead of a division. vdivps took 40% of the
 * activation's time, the activation 17% of the CartPole preset's training step (perf). */
static inline __m512 tanh16(__m512 x) {
    __m512 ax = _mm512_abs_ps(x);
    __m512 z = _mm512_mul_ps(x, x);
    __m512 poly = _mm512_fmadd_ps(_mm512_set1_ps(-5.70498872745e-3f), z, _mm512_set1_ps(2.06390887954e-2f));
    poly = _mm512_fmadd_ps(poly, z, _mm512_set1_ps(-5.37397155531e-2f));
    poly = _mm512_fmadd_ps(poly, z, _mm512_set1_ps(1.33314422036e-1f));
    poly = _mm512_fmadd_ps(poly, z, _mm512_set1_ps(-3.33332819422e-1f));
    __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(poly, z), x, x);
    /* exp(2 |x|) as sk_exp_poly: |x| <= TANH_SATURATE keeps n in [0, 29] */
    __m512 two_ax = _mm512_add_ps(_mm512_min_ps(ax, _mm512_set1_ps(TANH_SATURATE)),
                                  _mm512_min_ps(ax, _mm512_set1_ps(TANH_SATURATE)));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(two_ax, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), two_ax);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(1.9875691500e-4f), r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
    __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    __m512 denom = _mm512_fmadd_ps(p, _mm512_castsi512_ps(bits), _mm512_set1_ps(1.0f));
    __m512 inv = _mm512_rcp14_ps(denom);
    inv = _mm512_fmadd_ps(inv, _mm512_fnmadd_ps(denom, inv, _mm512_set1_ps(1.0f)), inv);
    __m512 large = _mm512_fnmadd_ps(_mm512_set1_ps(2.0f), inv, _mm512_set1_ps(1.0f));
    /* the sign of x on |large| */
    large = _mm512_castsi512_ps(_mm512_or_si512(
        _mm512_castps_si512(large),
        _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u))));
    __m512 result = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, _mm512_set1_ps(TANH_SMALL), _CMP_LT_OQ),
                                         large, small);
    /* NaN stays NaN, so the governor sees it */
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), result, x);
}

static float kernel_tanhf(float x) { return _mm512_cvtss_f32(tanh16(_mm512_set1_ps(x))); }

static void kernel_tanh_forward(float *out, const float *inp, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, tanh16(_mm512_loadu_ps(inp + i)));
    if (i < n) {
        __mmask16 tail = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(out + i, tail, tanh16(_mm512_maskz_loadu_ps(tail, inp + i)));
    }
}
#else
static float kernel_tanhf(float x) { return tanh_inline(x); }

static void kernel_tanh_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = tanh_inline(inp[i]);
}
#endif

static void kernel_adam_update(float *params, const float *grads, float *m, float *v, size_t n,
                               float lr, sk_adam adam, int64_t step) {
    double bias1 = 1.0 - pow(adam.beta1, (double)step);
    double bias2 = 1.0 - pow(adam.beta2, (double)step);
    float step_size = (float)(lr / bias1);
    float bias2_sqrt = (float)sqrt(bias2);
    size_t i = 0;
#if defined(__AVX512F__)
    /* Adam was 6% of the CartPole preset's training step once the GEMMs moved to the kernels
     * (perf), when this loop stayed scalar; the same operations 16 at a time, as written before
     * the level files dropped errno. sqrt and division are IEEE's in both. */
    const __m512 beta1 = _mm512_set1_ps(adam.beta1), rest1 = _mm512_set1_ps(1.0f - adam.beta1);
    const __m512 beta2 = _mm512_set1_ps(adam.beta2), rest2 = _mm512_set1_ps(1.0f - adam.beta2);
    const __m512 bias2_root = _mm512_set1_ps(bias2_sqrt), eps = _mm512_set1_ps(adam.eps);
    const __m512 step_v = _mm512_set1_ps(step_size);
    for (; i + 16 <= n; i += 16) {
        __m512 grad = _mm512_loadu_ps(grads + i);
        __m512 m_i = _mm512_fmadd_ps(beta1, _mm512_loadu_ps(m + i), _mm512_mul_ps(rest1, grad));
        __m512 v_i = _mm512_fmadd_ps(beta2, _mm512_loadu_ps(v + i),
                                     _mm512_mul_ps(_mm512_mul_ps(rest2, grad), grad));
        __m512 denom = _mm512_add_ps(_mm512_div_ps(_mm512_sqrt_ps(v_i), bias2_root), eps);
        __m512 update = _mm512_div_ps(_mm512_mul_ps(step_v, m_i), denom);
        _mm512_storeu_ps(m + i, m_i);
        _mm512_storeu_ps(v + i, v_i);
        _mm512_storeu_ps(params + i, _mm512_sub_ps(_mm512_loadu_ps(params + i), update));
    }
#endif
    for (; i < n; i++) {
        m[i] = adam.beta1 * m[i] + (1.0f - adam.beta1) * grads[i];
        v[i] = adam.beta2 * v[i] + (1.0f - adam.beta2) * grads[i] * grads[i];
        float denom = sqrtf(v[i]) / bias2_sqrt + adam.eps;
        params[i] -= step_size * m[i] / denom;
    }
}

/* db (OC) += the column sums of dout (B, OC). Summing straight into db makes each row's add wait
 * on the previous row's store (db may alias dout as far as the compiler knows): that took a tenth
 * of a small network's training step. Local accumulators, two rows apart, keep the sums in
 * registers; a narrow layer (a 1- or 2-wide head) gets eight independent sums per column. */
static void kernel_bias_grad(float *db, const float *dout, int B, int OC) {
    enum { W = 16 };
    if (OC % W == 0) {
        for (int o0 = 0; o0 < OC; o0 += W) {
            float even[W] = {0}, odd[W] = {0};
            int row = 0;
            for (; row + 2 <= B; row += 2)
                for (int k = 0; k < W; k++) {
                    even[k] += dout[(size_t)row * OC + o0 + k];
                    odd[k] += dout[(size_t)(row + 1) * OC + o0 + k];
                }
            for (; row < B; row++)
                for (int k = 0; k < W; k++) even[k] += dout[(size_t)row * OC + o0 + k];
            for (int k = 0; k < W; k++) db[o0 + k] += even[k] + odd[k];
        }
        return;
    }
    for (int o = 0; o < OC; o++) {
        float part[8] = {0};
        int row = 0;
        for (; row + 8 <= B; row += 8)
            for (int k = 0; k < 8; k++) part[k] += dout[(size_t)(row + k) * OC + o];
        for (; row < B; row++) part[0] += dout[(size_t)row * OC + o];
        db[o] += ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    }
}

static void kernel_tanh_backward(float *dinp, const float *dout, const float *out, size_t n) {
    for (size_t i = 0; i < n; i++) dinp[i] += dout[i] * (1.0f - out[i] * out[i]);
}

static void kernel_relu_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = inp[i] <= 0.0f ? 0.0f : inp[i]; /* NaN passes */
}

static void kernel_relu_backward(float *dinp, const float *dout, const float *out, size_t n) {
    for (size_t i = 0; i < n; i++) dinp[i] += out[i] > 0.0f ? dout[i] : 0.0f;
}

/* 1 / (1 + exp(-x)), exp by sk_exp_poly (its argument kept <= 88, where 2^n stays finite). */
#define SIGMOID_EXP_ARG_MAX 88.0f
static void kernel_sigmoid_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float neg = -inp[i];
        neg = neg > SIGMOID_EXP_ARG_MAX ? SIGMOID_EXP_ARG_MAX : neg; /* NaN passes, so stays NaN */
        out[i] = 1.0f / (1.0f + sk_exp_poly(neg));
    }
}
