/*
 * Morpho-v0's seed modules, blend operators, alpha curves and alpha
 * controller (contracts and formulas in blocks.h).
 *
 * Speed: these run on every minibatch of every host epoch (512 rows of width
 * 32 by default), so the linear parts go through CBLAS (src/nn) and the
 * elementwise parts are plain loops over restrict pointers that GCC
 * vectorises. Row reductions (LN statistics, the gate's dot products) keep
 * LANES independent partial sums, which vectorise without reassociating
 * (a plain float sum loop stays scalar without -ffast-math).
 */
#include "blocks.h"

#include "skinner/module.h"
#include "skinner/nn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const morpho_blueprint_names[MORPHO_NUM_BLUEPRINTS] = {
    "norm", "lora4", "lora16", "mlp_small", "mlp_large", "gate"};
const char *const morpho_style_names[MORPHO_NUM_STYLES] = {"add", "multiply", "sigmoid_add",
                                                           "gated"};
const char *const morpho_curve_names[MORPHO_NUM_CURVES] = {"linear", "cosine", "sigmoid6",
                                                           "sigmoid12", "sigmoid24"};

#define LN_EPS 1e-5f            /* torch.nn.LayerNorm's default */
#define SIGMOID_ADD_STEEPNESS 12 /* the ramp r of SIGMOID_ADD (issue 7) */
#define LANES 16                /* partial sums per row reduction: one AVX-512 vector */
/* Backward's temporaries (dL/d hidden) live on the stack, SCRATCH_FLOATS at a
 * time: 32 KiB, the L1 of the machines we run on; rows are taken in chunks
 * that fit. */
#define SCRATCH_FLOATS 8192

/* ---- row reductions ---- */

static inline float lanes_total(float acc[LANES]) {
    for (int width = LANES / 2; width > 0; width /= 2)
        for (int k = 0; k < width; k++) acc[k] += acc[k + width];
    return acc[0];
}

static inline float row_sum(const float *restrict x, int n) {
    float acc[LANES] = {0};
    int j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int k = 0; k < LANES; k++) acc[k] += x[j + k];
    for (int k = 0; j < n; j++, k++) acc[k] += x[j];
    return lanes_total(acc);
}

static inline float row_dot(const float *restrict a, const float *restrict b, int n) {
    float acc[LANES] = {0};
    int j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int k = 0; k < LANES; k++) acc[k] += a[j + k] * b[j + k];
    for (int k = 0; j < n; j++, k++) acc[k] += a[j] * b[j];
    return lanes_total(acc);
}

/* v = sigmoid(v) = (1 + tanh(v / 2)) / 2 through the vectorised tanh (libm's
 * expf per element would keep the loop scalar). Saturates to exactly 0 and 1. */
static void sigmoid_inplace(float *restrict v, size_t n) {
    for (size_t i = 0; i < n; i++) v[i] *= 0.5f;
    sk_tanh_forward(v, v, n);
    for (size_t i = 0; i < n; i++) v[i] = 0.5f + 0.5f * v[i];
}

/* s += x, the residual of every seed. */
static void add_residual(float *restrict s, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) s[i] += x[i];
}

static int chunk_rows(int scratch_per_row, int B) {
    SK_ASSERT(scratch_per_row > 0 && scratch_per_row <= SCRATCH_FLOATS);
    return SK_MIN(SCRATCH_FLOATS / scratch_per_row, B);
}

/* ---- sizes ---- */

static int lora_rank(morpho_blueprint bp) { return bp == MORPHO_BP_LORA4 ? 4 : 16; }
static int mlp_hidden(morpho_blueprint bp, int H) { return bp == MORPHO_BP_MLP_LARGE ? 2 * H : H; }

size_t morpho_seed_num_params(morpho_blueprint bp, int H) {
    size_t h = (size_t)H;
    switch (bp) {
    case MORPHO_BP_NORM: return 1 + 2 * h;
    case MORPHO_BP_LORA4:
    case MORPHO_BP_LORA16: return 2 * (size_t)lora_rank(bp) * h;
    case MORPHO_BP_MLP_SMALL:
    case MORPHO_BP_MLP_LARGE: {
        size_t hidden = (size_t)mlp_hidden(bp, H);
        return hidden * h + hidden + h * hidden + h;
    }
    case MORPHO_BP_GATE: return 2 * (h * h + h);
    default: SK_ASSERT(false && "unknown blueprint");
    }
}

size_t morpho_seed_cache_floats(morpho_blueprint bp, int H) {
    switch (bp) {
    case MORPHO_BP_NORM: return (size_t)H + 1; /* xhat (H), 1 / std */
    case MORPHO_BP_LORA4:
    case MORPHO_BP_LORA16: return (size_t)lora_rank(bp); /* V x */
    case MORPHO_BP_MLP_SMALL:
    case MORPHO_BP_MLP_LARGE: return (size_t)mlp_hidden(bp, H); /* relu(W1 x + b1) */
    case MORPHO_BP_GATE: return 2 * (size_t)H; /* the gate, W x + b */
    default: SK_ASSERT(false && "unknown blueprint");
    }
}

size_t morpho_seed_max_params(int H) {
    size_t most = 0;
    for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS; bp++)
        most = SK_MAX(most, morpho_seed_num_params((morpho_blueprint)bp, H));
    return most;
}

size_t morpho_seed_max_cache_floats(int H) {
    size_t most = 0;
    for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS; bp++)
        most = SK_MAX(most, morpho_seed_cache_floats((morpho_blueprint)bp, H));
    return most;
}

/* ---- init ---- */

static void fill_normal(float *w, size_t n, double std, uint64_t *rng) {
    for (size_t i = 0; i < n; i++) w[i] = (float)(std * sk_rng_normal(rng));
}

void morpho_seed_init(morpho_blueprint bp, int H, float *params, uint64_t *rng) {
    SK_ASSERT(H > 0);
    size_t h = (size_t)H, n = morpho_seed_num_params(bp, H);
    memset(params, 0, n * sizeof(float));
    switch (bp) {
    case MORPHO_BP_NORM:
        for (size_t j = 0; j < h; j++) params[1 + j] = 1.0f; /* gamma; g and beta 0 */
        break;
    case MORPHO_BP_LORA4:
    case MORPHO_BP_LORA16: /* V ~ N(0, 1/H); U = 0 */
        fill_normal(params, (size_t)lora_rank(bp) * h, 1.0 / sqrt((double)H), rng);
        break;
    case MORPHO_BP_MLP_SMALL:
    case MORPHO_BP_MLP_LARGE: /* W1 orthogonal (ReLU gain); b1, W2, b2 = 0 */
        sk_orthogonal_init(params, mlp_hidden(bp, H), H, sqrt(2.0), rng);
        break;
    case MORPHO_BP_GATE: /* Wg ~ N(0, 1/H); bg, W, b = 0 */
        fill_normal(params, h * h, 1.0 / sqrt((double)H), rng);
        break;
    default: SK_ASSERT(false && "unknown blueprint");
    }
}

/* ---- NORM: s = x + tanh(g) (LN(x) - x). cache: xhat (B, H), then 1/std (B). ---- */

static void norm_forward(int H, const float *restrict params, const float *restrict x,
                         float *restrict s, float *restrict cache, int B) {
    float t = tanhf(params[0]);
    const float *restrict gamma = params + 1, *restrict beta = params + 1 + H;
    float *restrict rstd = cache + (size_t)B * H;
    for (int row = 0; row < B; row++) {
        const float *restrict xr = x + (size_t)row * H;
        float *restrict xhat = cache + (size_t)row * H, *restrict sr = s + (size_t)row * H;
        float mean = row_sum(xr, H) / (float)H;
        for (int j = 0; j < H; j++) xhat[j] = xr[j] - mean;
        float inv = 1.0f / sqrtf(row_dot(xhat, xhat, H) / (float)H + LN_EPS);
        rstd[row] = inv;
        for (int j = 0; j < H; j++) {
            xhat[j] *= inv;
            /* t = 0 (a new seed) gives s = x exactly */
            sr[j] = xr[j] + t * (gamma[j] * xhat[j] + beta[j] - xr[j]);
        }
    }
}

static void norm_backward(int H, const float *restrict params, const float *restrict x,
                          const float *restrict cache, const float *restrict ds,
                          float *restrict dx, float *restrict dparams, int B) {
    SK_ASSERT(2 * H <= SCRATCH_FLOATS);
    float t = tanhf(params[0]);
    const float *restrict gamma = params + 1, *restrict beta = params + 1 + H;
    const float *restrict rstd = cache + (size_t)B * H;
    float *restrict dgamma = dparams + 1, *restrict dbeta = dparams + 1 + H;
    float scratch[SCRATCH_FLOATS];
    float *restrict dnorm = scratch;         /* ds * gamma: dL/dxhat over t, one row */
    float *restrict dt_cols = scratch + H;   /* sum over rows of ds (LN(x) - x) */
    memset(dt_cols, 0, (size_t)H * sizeof(float));
    float inv_h = 1.0f / (float)H;
    for (int row = 0; row < B; row++) {
        const float *restrict xr = x + (size_t)row * H, *restrict xhat = cache + (size_t)row * H;
        const float *restrict dsr = ds + (size_t)row * H;
        for (int j = 0; j < H; j++) {
            dnorm[j] = dsr[j] * gamma[j];
            dt_cols[j] += dsr[j] * (gamma[j] * xhat[j] + beta[j] - xr[j]);
            dgamma[j] += t * dsr[j] * xhat[j];
            dbeta[j] += t * dsr[j];
        }
        if (!dx) continue;
        float mean_d = row_sum(dnorm, H) * inv_h, mean_dx = row_dot(dnorm, xhat, H) * inv_h;
        float scale = t * rstd[row];
        float *restrict dxr = dx + (size_t)row * H;
        for (int j = 0; j < H; j++)
            dxr[j] += (1.0f - t) * dsr[j] + scale * (dnorm[j] - mean_d - xhat[j] * mean_dx);
    }
    dparams[0] += (1.0f - t * t) * row_sum(dt_cols, H);
}

/* ---- LORA: s = x + U (V x). params V (r, H), U (H, r). cache: V x (B, r). ---- */

static void lora_forward(int H, int rank, const float *params, const float *x, float *s,
                         float *cache, int B) {
    const float *V = params, *U = params + (size_t)rank * H;
    sk_linear_forward(cache, x, V, NULL, B, H, rank);
    sk_linear_forward(s, cache, U, NULL, B, rank, H);
    add_residual(s, x, (size_t)B * H);
}

static void lora_backward(int H, int rank, const float *params, const float *x,
                          const float *cache, const float *ds, float *dx, float *dparams, int B) {
    const float *V = params, *U = params + (size_t)rank * H;
    float *dV = dparams, *dU = dparams + (size_t)rank * H;
    float scratch[SCRATCH_FLOATS]; /* dL/d(V x) */
    int chunk = chunk_rows(rank, B);
    for (int row0 = 0; row0 < B; row0 += chunk) {
        int rows = SK_MIN(chunk, B - row0);
        size_t at = (size_t)row0 * H;
        memset(scratch, 0, (size_t)rows * rank * sizeof(float));
        sk_linear_backward(scratch, dU, NULL, ds + at, cache + (size_t)row0 * rank, U, rows, rank,
                           H);
        sk_linear_backward(dx ? dx + at : NULL, dV, NULL, scratch, x + at, V, rows, H, rank);
    }
    if (dx) add_residual(dx, ds, (size_t)B * H);
}

/* ---- MLP: s = x + W2 relu(W1 x + b1) + b2. cache: the hidden activation (B, hidden). ---- */

static void mlp_forward(int H, int hidden, const float *params, const float *x, float *s,
                        float *cache, int B) {
    const float *W1 = params, *b1 = W1 + (size_t)hidden * H, *W2 = b1 + hidden,
                *b2 = W2 + (size_t)H * hidden;
    sk_linear_forward(cache, x, W1, b1, B, H, hidden);
    sk_relu_forward(cache, cache, (size_t)B * hidden);
    sk_linear_forward(s, cache, W2, b2, B, hidden, H);
    add_residual(s, x, (size_t)B * H);
}

static void mlp_backward(int H, int hidden, const float *params, const float *x,
                         const float *cache, const float *ds, float *dx, float *dparams, int B) {
    const float *W1 = params, *W2 = W1 + (size_t)hidden * H + hidden;
    float *dW1 = dparams, *db1 = dW1 + (size_t)hidden * H, *dW2 = db1 + hidden,
          *db2 = dW2 + (size_t)H * hidden;
    float scratch[SCRATCH_FLOATS]; /* dL/d hidden */
    int chunk = chunk_rows(hidden, B);
    for (int row0 = 0; row0 < B; row0 += chunk) {
        int rows = SK_MIN(chunk, B - row0);
        size_t at = (size_t)row0 * H, n_hidden = (size_t)rows * hidden;
        const float *restrict act = cache + (size_t)row0 * hidden;
        float *restrict dact = scratch;
        memset(dact, 0, n_hidden * sizeof(float));
        sk_linear_backward(dact, dW2, db2, ds + at, act, W2, rows, hidden, H);
        for (size_t i = 0; i < n_hidden; i++) dact[i] = act[i] > 0.0f ? dact[i] : 0.0f;
        sk_linear_backward(dx ? dx + at : NULL, dW1, db1, dact, x + at, W1, rows, H, hidden);
    }
    if (dx) add_residual(dx, ds, (size_t)B * H);
}

/* ---- GATE: s = x + sigmoid(Wg x + bg) * (W x + b). cache: the gate (B, H), then W x + b (B, H). ---- */

static void gate_forward(int H, const float *params, const float *x, float *s, float *cache,
                         int B) {
    size_t hh = (size_t)H * H, n = (size_t)B * H;
    const float *Wg = params, *bg = Wg + hh, *W = bg + H, *b = W + hh;
    float *gate = cache, *lin = cache + n;
    sk_linear_forward(gate, x, Wg, bg, B, H, H);
    sigmoid_inplace(gate, n);
    sk_linear_forward(lin, x, W, b, B, H, H);
    const float *restrict g = gate, *restrict v = lin, *restrict xr = x;
    float *restrict out = s;
    for (size_t i = 0; i < n; i++) out[i] = xr[i] + g[i] * v[i]; /* v = 0: s = x exactly */
}

static void gate_backward(int H, const float *params, const float *x, const float *cache,
                          const float *ds, float *dx, float *dparams, int B) {
    size_t hh = (size_t)H * H, n = (size_t)B * H;
    const float *Wg = params, *W = Wg + hh + H;
    float *dWg = dparams, *dbg = dWg + hh, *dW = dbg + H, *db = dW + hh;
    float scratch[SCRATCH_FLOATS]; /* dL/d(Wg x + bg), dL/d(W x + b) */
    int chunk = chunk_rows(2 * H, B);
    for (int row0 = 0; row0 < B; row0 += chunk) {
        int rows = SK_MIN(chunk, B - row0);
        size_t at = (size_t)row0 * H, m = (size_t)rows * H;
        const float *restrict g = cache + at, *restrict v = cache + n + at, *restrict d = ds + at;
        float *restrict dpre_gate = scratch, *restrict dlin = scratch + m;
        for (size_t i = 0; i < m; i++) {
            dlin[i] = d[i] * g[i];
            dpre_gate[i] = d[i] * v[i] * g[i] * (1.0f - g[i]);
        }
        float *dx_rows = dx ? dx + at : NULL;
        sk_linear_backward(dx_rows, dWg, dbg, dpre_gate, x + at, Wg, rows, H, H);
        sk_linear_backward(dx_rows, dW, db, dlin, x + at, W, rows, H, H);
    }
    if (dx) add_residual(dx, ds, n);
}

/* ---- dispatch ---- */

void morpho_seed_forward(morpho_blueprint bp, int H, const float *params, const float *x, float *s,
                         float *cache, int B) {
    switch (bp) {
    case MORPHO_BP_NORM: norm_forward(H, params, x, s, cache, B); break;
    case MORPHO_BP_LORA4:
    case MORPHO_BP_LORA16: lora_forward(H, lora_rank(bp), params, x, s, cache, B); break;
    case MORPHO_BP_MLP_SMALL:
    case MORPHO_BP_MLP_LARGE: mlp_forward(H, mlp_hidden(bp, H), params, x, s, cache, B); break;
    case MORPHO_BP_GATE: gate_forward(H, params, x, s, cache, B); break;
    default: SK_ASSERT(false && "unknown blueprint");
    }
}

void morpho_seed_backward(morpho_blueprint bp, int H, const float *params, const float *x,
                          const float *cache, const float *ds, float *dx, float *dparams, int B) {
    switch (bp) {
    case MORPHO_BP_NORM: norm_backward(H, params, x, cache, ds, dx, dparams, B); break;
    case MORPHO_BP_LORA4:
    case MORPHO_BP_LORA16:
        lora_backward(H, lora_rank(bp), params, x, cache, ds, dx, dparams, B);
        break;
    case MORPHO_BP_MLP_SMALL:
    case MORPHO_BP_MLP_LARGE:
        mlp_backward(H, mlp_hidden(bp, H), params, x, cache, ds, dx, dparams, B);
        break;
    case MORPHO_BP_GATE: gate_backward(H, params, x, cache, ds, dx, dparams, B); break;
    default: SK_ASSERT(false && "unknown blueprint");
    }
}

/* ---- blends ---- */

size_t morpho_blend_num_params(morpho_style style, int H) {
    return style == MORPHO_BLEND_GATED ? (size_t)H + 1 : 0;
}

size_t morpho_blend_cache_floats(morpho_style style, int H) {
    switch (style) {
    case MORPHO_BLEND_MULTIPLY: return (size_t)H; /* tanh(s - h) */
    case MORPHO_BLEND_GATED: return 1;            /* the gate g */
    default: return 0;
    }
}

void morpho_blend_init(morpho_style style, int H, float *params) {
    size_t n = morpho_blend_num_params(style, H);
    if (n) memset(params, 0, n * sizeof(float)); /* GATED: w = 0, c = 0, so g = 1/2 */
}

/* y = h + m (s - h) over one row or a whole batch; exactly h at m = 0 (and
 * wherever s == h, so a seed at its identity init changes nothing at any
 * alpha) and exactly s at m = 1. */
static void mix(float *restrict y, const float *restrict h, const float *restrict s, float m,
                size_t n) {
    if (m >= 1.0f) {
        memcpy(y, s, n * sizeof(float));
        return;
    }
    for (size_t i = 0; i < n; i++) y[i] = h[i] + m * (s[i] - h[i]);
}

/* dh += (1 - m) dy, ds += m dy; either may be NULL. */
static void mix_backward(float *restrict dh, float *restrict ds, const float *restrict dy, float m,
                         size_t n) {
    if (dh)
        for (size_t i = 0; i < n; i++) dh[i] += (1.0f - m) * dy[i];
    if (ds)
        for (size_t i = 0; i < n; i++) ds[i] += m * dy[i];
}

static float sigmoid_add_ramp(float alpha) {
    return (float)morpho_curve_value(MORPHO_CURVE_SIGMOID12, (double)alpha);
}
_Static_assert(SIGMOID_ADD_STEEPNESS == 12, "SIGMOID_ADD's ramp is MORPHO_CURVE_SIGMOID12");

/* The gate's weight in row b: clamp(alpha g, 0, 1); alpha, g >= 0. */
static inline float gated_weight(float alpha, float g) { return SK_MIN(alpha * g, 1.0f); }

void morpho_blend_forward(morpho_style style, int H, float alpha, const float *params,
                          const float *h, const float *s, float *y, float *cache, int B) {
    SK_ASSERT(alpha >= 0.0f && alpha <= 1.0f);
    size_t n = (size_t)B * H;
    switch (style) {
    case MORPHO_BLEND_ADD: mix(y, h, s, alpha, n); break;
    case MORPHO_BLEND_SIGMOID_ADD: mix(y, h, s, sigmoid_add_ramp(alpha), n); break;
    case MORPHO_BLEND_MULTIPLY: {
        float *restrict t = cache;
        const float *restrict hr = h, *restrict sr = s;
        float *restrict out = y;
        for (size_t i = 0; i < n; i++) t[i] = sr[i] - hr[i];
        sk_tanh_forward(t, t, n);
        for (size_t i = 0; i < n; i++) out[i] = hr[i] * (1.0f + alpha * t[i]);
        break;
    }
    case MORPHO_BLEND_GATED: {
        const float *w = params;
        float c = params[H];
        float *restrict g = cache;
        for (int row = 0; row < B; row++) g[row] = row_dot(w, h + (size_t)row * H, H) + c;
        sigmoid_inplace(g, (size_t)B);
        for (int row = 0; row < B; row++) {
            size_t at = (size_t)row * H;
            mix(y + at, h + at, s + at, gated_weight(alpha, g[row]), (size_t)H);
        }
        break;
    }
    default: SK_ASSERT(false && "unknown blend style");
    }
}

void morpho_blend_backward(morpho_style style, int H, float alpha, const float *params,
                           const float *h, const float *s, const float *cache, const float *dy,
                           float *dh, float *ds, float *dparams, int B) {
    SK_ASSERT(alpha >= 0.0f && alpha <= 1.0f);
    size_t n = (size_t)B * H;
    switch (style) {
    case MORPHO_BLEND_ADD: mix_backward(dh, ds, dy, alpha, n); break;
    case MORPHO_BLEND_SIGMOID_ADD: mix_backward(dh, ds, dy, sigmoid_add_ramp(alpha), n); break;
    case MORPHO_BLEND_MULTIPLY: {
        /* y = h (1 + a t), t = tanh(s - h): dy/ds = a h (1 - t^2), dy/dh = 1 + a t - dy/ds */
        const float *restrict t = cache, *restrict hr = h, *restrict d = dy;
        float *restrict dsr = ds, *restrict dhr = dh;
        if (ds)
            for (size_t i = 0; i < n; i++) dsr[i] += d[i] * alpha * hr[i] * (1.0f - t[i] * t[i]);
        if (dh)
            for (size_t i = 0; i < n; i++)
                dhr[i] += d[i] * (1.0f + alpha * t[i] - alpha * hr[i] * (1.0f - t[i] * t[i]));
        break;
    }
    case MORPHO_BLEND_GATED: {
        /* y = h + m (s - h), m = clamp(a g): the gate's pre-activation gets
         * sum_j dy_j (s_j - h_j) * a g (1 - g) while a g < 1, nothing once clamped */
        const float *restrict w = params, *restrict g = cache;
        float *restrict dw = dparams;
        float diff[SCRATCH_FLOATS]; /* s - h, one row */
        SK_ASSERT(H <= SCRATCH_FLOATS);
        for (int row = 0; row < B; row++) {
            size_t at = (size_t)row * H;
            float m = gated_weight(alpha, g[row]);
            mix_backward(dh ? dh + at : NULL, ds ? ds + at : NULL, dy + at, m, (size_t)H);
            if (!dh && !dparams) continue;
            if (alpha * g[row] >= 1.0f) continue;
            const float *restrict hr = h + at, *restrict sr = s + at;
            for (int j = 0; j < H; j++) diff[j] = sr[j] - hr[j];
            float dpre = row_dot(dy + at, diff, H) * alpha * g[row] * (1.0f - g[row]);
            if (dparams) {
                for (int j = 0; j < H; j++) dw[j] += dpre * hr[j];
                dparams[H] += dpre;
            }
            if (dh) {
                float *restrict dhr = dh + at;
                for (int j = 0; j < H; j++) dhr[j] += dpre * w[j];
            }
        }
        break;
    }
    default: SK_ASSERT(false && "unknown blend style");
    }
}

/* ---- alpha curves and controller ---- */

static double sigmoid(double z) { return 1.0 / (1.0 + exp(-z)); }

/* The normalised sigmoid ramp of steepness k: 0 at t = 0, 1 at t = 1, and
 * r(1 - t) = 1 - r(t). */
static double sigmoid_ramp(double k, double t) {
    double low = sigmoid(-k / 2.0), high = sigmoid(k / 2.0);
    return (sigmoid(k * (t - 0.5)) - low) / (high - low);
}

double morpho_curve_value(morpho_curve curve, double t) {
    if (!(t > 0.0)) return 0.0; /* NaN too */
    if (t >= 1.0) return 1.0;
    switch (curve) {
    case MORPHO_CURVE_LINEAR: return t;
    case MORPHO_CURVE_COSINE: return (1.0 - cos(M_PI * t)) / 2.0;
    case MORPHO_CURVE_SIGMOID6: return sigmoid_ramp(6.0, t);
    case MORPHO_CURVE_SIGMOID12: return sigmoid_ramp(12.0, t);
    case MORPHO_CURVE_SIGMOID24: return sigmoid_ramp(24.0, t);
    default: SK_ASSERT(false && "unknown alpha curve");
    }
}

morpho_alpha morpho_alpha_hold(float alpha) {
    return (morpho_alpha){.alpha = alpha, .start = alpha, .target = alpha, .epochs = 0, .tick = 0,
                          .curve = MORPHO_CURVE_LINEAR};
}

void morpho_alpha_retarget(morpho_alpha *a, float target, int epochs, morpho_curve curve) {
    SK_ASSERT(epochs >= 0 && (unsigned)curve < MORPHO_NUM_CURVES);
    a->start = a->alpha;
    a->target = target < 0.0f ? 0.0f : target > 1.0f ? 1.0f : target;
    a->epochs = epochs;
    a->tick = 0;
    a->curve = curve;
}

void morpho_alpha_tick(morpho_alpha *a) {
    if (a->tick + 1 >= a->epochs) { /* the last tick of a move, or holding */
        a->alpha = a->target;
        a->tick = a->epochs;
        return;
    }
    a->tick++;
    double f = morpho_curve_value(a->curve, (double)a->tick / (double)a->epochs);
    a->alpha = (float)((double)a->start + ((double)a->target - (double)a->start) * f);
}

bool morpho_alpha_settled(const morpho_alpha *a) { return a->alpha == a->target; }
