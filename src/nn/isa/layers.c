/* tanh, Adam and the bias gradient at one ISA level (included by level_*.c; their contracts are
 * in include/skinner/nn.h and src/nn/nn.h). The portable loops below are written so that the
 * compiler vectorises them at each level's width (the level files are compiled without errno
 * for sqrt, so Adam's loop vectorises too); AVX-512 has hand-written versions of the two that
 * perf showed the compiler's code was slow for. */

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Cephes' single-precision tanhf and expf (S. L. Moshier): an odd polynomial
 * below |x| = 0.625, 1 - 2 / (exp(2|x|) + 1) above, with exp by range
 * reduction to [-ln2/2, ln2/2] and a degree-6 polynomial. */
#define TANH_SMALL 0.625f
/* 1 / (1 + exp(-x)), exp by sk_exp_poly (its argument kept <= 88, where 2^n stays finite). */
#define SIGMOID_EXP_ARG_MAX 88.0f
static inline float sigmoid_inline(float x) {
    float neg = -x;
    neg = neg > SIGMOID_EXP_ARG_MAX ? SIGMOID_EXP_ARG_MAX : neg; /* NaN passes, so stays NaN */
    return 1.0f / (1.0f + sk_exp_poly(neg));
}
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

/* tanh_inline a vector at a time, with one change: 2 / (e + 1) as a reciprocal estimate refined
 * by a Newton step instead of a division. vdivps took 40% of the activation's time on AVX-512,
 * the activation 17% of the CartPole preset's training step (perf); on AVX2 the compiler left
 * tanh_inline scalar and branchy, 45% of that step (perf, SKINNER_ISA=avx2). The estimate is
 * AVX-512's 14-bit rcp14 (~2^-28 after the step) or AVX2's and SSE's 12-bit rcp (~2^-23): each
 * level rounds its own way, as docs/performance.md says levels may; test_nn_grad's accuracy case
 * holds every level within 3e-7 of libm's double tanh. */
#if defined(__AVX512F__)
#include <immintrin.h>
enum { TANH_LANES = 16 };
typedef __m512 tanh_vec;
#define V_SET(c) _mm512_set1_ps(c)
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_STORE(p, v) _mm512_storeu_ps((p), (v))
#define V_MUL(a, b) _mm512_mul_ps((a), (b))
#define V_ADD(a, b) _mm512_add_ps((a), (b))
#define V_SUB(a, b) _mm512_sub_ps((a), (b))
#define V_MIN(a, b) _mm512_min_ps((a), (b))
#define V_MAX(a, b) _mm512_max_ps((a), (b))
#define V_DIV(a, b) _mm512_div_ps((a), (b))
#define V_FMADD(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define V_FNMADD(a, b, c) _mm512_fnmadd_ps((a), (b), (c))
#define V_ROUND(v) _mm512_roundscale_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define V_RCP(v) _mm512_rcp14_ps(v)
#define V_ABS(v) _mm512_abs_ps(v)
#define V_AND(a, b) _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)))
#define V_OR(a, b) _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)))
/* a positive float's biased exponent field, as a float */
#define V_EXPONENT_FIELD(v) _mm512_cvtepi32_ps(_mm512_srli_epi32(_mm512_castps_si512(v), 23))
/* 2^n, n a whole number in a float */
#define V_EXP2_INT(n) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23))
/* lt ? a_lt : a_ge, where lt is a < b */
#define V_SELECT_LT(a, b, if_lt, if_ge) _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_LT_OQ), (if_ge), (if_lt))
#define V_SELECT_NAN(x, if_nan, other) _mm512_mask_blend_ps(_mm512_cmp_ps_mask((x), (x), _CMP_UNORD_Q), (other), (if_nan))
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
enum { TANH_LANES = 8 };
typedef __m256 tanh_vec;
#define V_SET(c) _mm256_set1_ps(c)
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_storeu_ps((p), (v))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#define V_ADD(a, b) _mm256_add_ps((a), (b))
#define V_SUB(a, b) _mm256_sub_ps((a), (b))
#define V_MIN(a, b) _mm256_min_ps((a), (b))
#define V_MAX(a, b) _mm256_max_ps((a), (b))
#define V_DIV(a, b) _mm256_div_ps((a), (b))
#define V_FMADD(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define V_FNMADD(a, b, c) _mm256_fnmadd_ps((a), (b), (c))
#define V_ROUND(v) _mm256_round_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define V_RCP(v) _mm256_rcp_ps(v)
#define V_AND(a, b) _mm256_and_ps((a), (b))
#define V_OR(a, b) _mm256_or_ps((a), (b))
#define V_ABS(v) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (v))
#define V_EXPONENT_FIELD(v) _mm256_cvtepi32_ps(_mm256_srli_epi32(_mm256_castps_si256(v), 23))
#define V_EXP2_INT(n) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23))
#define V_SELECT_LT(a, b, if_lt, if_ge) _mm256_blendv_ps((if_ge), (if_lt), _mm256_cmp_ps((a), (b), _CMP_LT_OQ))
#define V_SELECT_NAN(x, if_nan, other) _mm256_blendv_ps((other), (if_nan), _mm256_cmp_ps((x), (x), _CMP_UNORD_Q))
#elif defined(__SSE4_1__)
#include <smmintrin.h>
enum { TANH_LANES = 4 };
typedef __m128 tanh_vec;
#define V_SET(c) _mm_set1_ps(c)
#define V_LOAD(p) _mm_loadu_ps(p)
#define V_STORE(p, v) _mm_storeu_ps((p), (v))
#define V_MUL(a, b) _mm_mul_ps((a), (b))
#define V_ADD(a, b) _mm_add_ps((a), (b))
#define V_SUB(a, b) _mm_sub_ps((a), (b))
#define V_MIN(a, b) _mm_min_ps((a), (b))
#define V_MAX(a, b) _mm_max_ps((a), (b))
#define V_DIV(a, b) _mm_div_ps((a), (b))
#define V_FMADD(a, b, c) _mm_add_ps(_mm_mul_ps((a), (b)), (c)) /* no FMA below x86-64-v3 */
#define V_FNMADD(a, b, c) _mm_sub_ps((c), _mm_mul_ps((a), (b)))
#define V_ROUND(v) _mm_round_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define V_RCP(v) _mm_rcp_ps(v)
#define V_AND(a, b) _mm_and_ps((a), (b))
#define V_OR(a, b) _mm_or_ps((a), (b))
#define V_ABS(v) _mm_andnot_ps(_mm_set1_ps(-0.0f), (v))
#define V_EXPONENT_FIELD(v) _mm_cvtepi32_ps(_mm_srli_epi32(_mm_castps_si128(v), 23))
#define V_EXP2_INT(n) _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(_mm_cvtps_epi32(n), _mm_set1_epi32(127)), 23))
#define V_SELECT_LT(a, b, if_lt, if_ge) _mm_blendv_ps((if_ge), (if_lt), _mm_cmplt_ps((a), (b)))
#define V_SELECT_NAN(x, if_nan, other) _mm_blendv_ps((other), (if_nan), _mm_cmpunord_ps((x), (x)))
#endif

#if defined(V_SET)
/* sk_exp_poly(x) = this x 2^n, n its rounded x / ln 2: the polynomial of the reduced argument. */
static inline tanh_vec exp_poly_vector(tanh_vec x, tanh_vec n) {
    tanh_vec r = V_FNMADD(n, V_SET(0.693359375f), x);
    r = V_FNMADD(n, V_SET(-2.12194440e-4f), r);
    tanh_vec p = V_FMADD(V_SET(1.9875691500e-4f), r, V_SET(1.3981999507e-3f));
    p = V_FMADD(p, r, V_SET(8.3334519073e-3f));
    p = V_FMADD(p, r, V_SET(4.1665795894e-2f));
    p = V_FMADD(p, r, V_SET(1.6666665459e-1f));
    p = V_FMADD(p, r, V_SET(5.0000001201e-1f));
    return V_ADD(V_FMADD(V_MUL(p, r), r, r), V_SET(1.0f));
}

static inline tanh_vec tanh_vector(tanh_vec x) {
    tanh_vec ax = V_ABS(x);
    tanh_vec z = V_MUL(x, x);
    tanh_vec poly = V_FMADD(V_SET(-5.70498872745e-3f), z, V_SET(2.06390887954e-2f));
    poly = V_FMADD(poly, z, V_SET(-5.37397155531e-2f));
    poly = V_FMADD(poly, z, V_SET(1.33314422036e-1f));
    poly = V_FMADD(poly, z, V_SET(-3.33332819422e-1f));
    tanh_vec small = V_FMADD(V_MUL(poly, z), x, x);
    /* exp(2 |x|) as sk_exp_poly: |x| <= TANH_SATURATE keeps n in [0, 29] */
    tanh_vec two_ax = V_ADD(V_MIN(ax, V_SET(TANH_SATURATE)), V_MIN(ax, V_SET(TANH_SATURATE)));
    tanh_vec n = V_ROUND(V_MUL(two_ax, V_SET(1.44269504088896341f)));
    tanh_vec denom = V_FMADD(exp_poly_vector(two_ax, n), V_EXP2_INT(n), V_SET(1.0f));
    tanh_vec inv = V_RCP(denom);
    inv = V_FMADD(inv, V_FNMADD(denom, inv, V_SET(1.0f)), inv);
    tanh_vec large = V_FNMADD(V_SET(2.0f), inv, V_SET(1.0f));
    large = V_OR(large, V_AND(x, V_SET(-0.0f))); /* the sign of x on |large| */
    tanh_vec result = V_SELECT_LT(ax, V_SET(TANH_SMALL), small, large);
    return V_SELECT_NAN(x, x, result); /* NaN stays NaN, so the governor sees it */
}

/* sigmoid_inline (above) a vector at a time, the same operations in the same order (the level's
 * FMAs where the compiler contracted the scalar's), so the same bits: the compiler left that
 * loop scalar (vdivss, vroundss), 18% of the LSTM preset's training step at avx2 (perf). */
static inline tanh_vec sigmoid_vector(tanh_vec x) {
    tanh_vec neg = V_MIN(V_SET(SIGMOID_EXP_ARG_MAX), V_MUL(x, V_SET(-1.0f))); /* NaN passes */
    tanh_vec n = V_MAX(V_ROUND(V_MUL(neg, V_SET(1.44269504088896341f))), V_SET(SK_EXP_POLY_N_MIN));
    /* 1 + p 2^n: the product is exact (2^n a power of two) or far below 1's last bit, so fused or
     * not the same sum */
    return V_DIV(V_SET(1.0f), V_FMADD(exp_poly_vector(neg, n), V_EXP2_INT(n), V_SET(1.0f)));
}

static void kernel_sigmoid_forward(float *out, const float *inp, size_t n) {
    size_t i = 0;
    for (; i + TANH_LANES <= n; i += TANH_LANES) V_STORE(out + i, sigmoid_vector(V_LOAD(inp + i)));
    if (i < n) { /* the tail through a whole vector on the stack, as tanh's */
        float lanes[TANH_LANES] = {0};
        memcpy(lanes, inp + i, (n - i) * sizeof(float));
        V_STORE(lanes, sigmoid_vector(V_LOAD(lanes)));
        memcpy(out + i, lanes, (n - i) * sizeof(float));
    }
}

static float kernel_tanhf(float x) {
    float lanes[TANH_LANES] = {x};
    V_STORE(lanes, tanh_vector(V_LOAD(lanes)));
    return lanes[0];
}

static void kernel_tanh_forward(float *out, const float *inp, size_t n) {
    size_t i = 0;
    for (; i + TANH_LANES <= n; i += TANH_LANES) V_STORE(out + i, tanh_vector(V_LOAD(inp + i)));
    if (i < n) { /* the tail through a whole vector on the stack: no masked access at any level */
        float lanes[TANH_LANES] = {0};
        memcpy(lanes, inp + i, (n - i) * sizeof(float));
        V_STORE(lanes, tanh_vector(V_LOAD(lanes)));
        memcpy(out + i, lanes, (n - i) * sizeof(float));
    }
}
#else /* no vector level (the portable C of a non-x86 build) */
static float kernel_tanhf(float x) { return tanh_inline(x); }

static void kernel_sigmoid_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = sigmoid_inline(inp[i]);
}

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

#if defined(V_SET)
enum { BIAS_VECTORS = 4 }; /* 4 even and 4 odd sums: 8 chains of adds keep the adders busy */

/* The column sums of columns [o0, o0 + vectors * TANH_LANES) of dout (B, OC) into db, as the
 * portable loop below sums each column (even rows, odd rows, then the two): the same bits. */
static inline void bias_grad_columns(float *db, const float *dout, int B, int OC, int o0,
                                     int vectors) {
    tanh_vec even[BIAS_VECTORS], odd[BIAS_VECTORS];
    for (int v = 0; v < vectors; v++) even[v] = odd[v] = V_SET(0.0f);
    const float *at = dout + o0;
    size_t stride = (size_t)OC;
    int row = 0;
    for (; row + 2 <= B; row += 2, at += 2 * stride)
        for (int v = 0; v < vectors; v++) {
            even[v] = V_ADD(even[v], V_LOAD(at + v * TANH_LANES));
            odd[v] = V_ADD(odd[v], V_LOAD(at + stride + (size_t)(v * TANH_LANES)));
        }
    if (row < B)
        for (int v = 0; v < vectors; v++) even[v] = V_ADD(even[v], V_LOAD(at + v * TANH_LANES));
    for (int v = 0; v < vectors; v++) {
        float *sum = db + o0 + v * TANH_LANES;
        V_STORE(sum, V_ADD(V_LOAD(sum), V_ADD(even[v], odd[v])));
    }
}
#endif

/* db (OC) += the column sums of dout (B, OC). Summing straight into db makes each row's add wait
 * on the previous row's store (db may alias dout as far as the compiler knows): that took a tenth
 * of a small network's training step. Local accumulators, two rows apart, keep the sums in
 * registers; a narrow layer (a 1- or 2-wide head) gets eight independent sums per column. */
static void kernel_bias_grad(float *db, const float *dout, int B, int OC) {
    enum { W = 16 };
#if defined(V_SET)
    /* The loop below at 16 columns stayed scalar, its sums spilled to the stack (4% of the LSTM
     * preset's step at avx2, perf): the same sums in vectors. OC % 16 == 0 keeps the columns
     * that take the 8-part sums below the same at every level. */
    if (OC % W == 0) {
        int o0 = 0;
        for (; o0 + BIAS_VECTORS * TANH_LANES <= OC; o0 += BIAS_VECTORS * TANH_LANES)
            bias_grad_columns(db, dout, B, OC, o0, BIAS_VECTORS);
        for (; o0 < OC; o0 += TANH_LANES) bias_grad_columns(db, dout, B, OC, o0, 1);
        return;
    }
#else
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
#endif
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


