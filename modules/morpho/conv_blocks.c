/*
 * Morpho-v0's convolutional seeds (contracts in conv_blocks.h).
 *
 * Four of the six blueprints are chains of convolutions with ReLUs between
 * them and a residual around them (depthwise, light, heavy, bottleneck); one
 * forward and one backward walk every chain. SE and NORM have their own.
 */
#include "conv_blocks.h"

#include "skinner/module.h"
#include "skinner/nn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const morpho_conv_blueprint_names[MORPHO_NUM_BLUEPRINTS] = {
    "norm", "se", "depthwise", "conv_light", "conv_heavy", "bottleneck"};

#define MAX_CHAIN 3

typedef struct chain {
    int layers;
    sk_conv_shape layer[MAX_CHAIN];
} chain;

struct morpho_conv_ctx {
    morpho_geom geom;
    int max_batch;
    sk_conv *conv[MORPHO_NUM_BLUEPRINTS][MAX_CHAIN];
    /* ping-pong gradients between a chain's layers, (max_batch, h, w, widest
     * layer input) each; SE's scratch too */
    float *grad[2];
};

static int reduced(int channels) { return SK_MAX(channels / 4, 2); }
static size_t pixels(morpho_geom g) { return (size_t)g.height * (size_t)g.width; }

static sk_conv_shape conv_shape(morpho_geom g, int in, int out, int kernel, int groups) {
    return (sk_conv_shape){.height = g.height, .width = g.width, .channels = in,
                           .out_channels = out, .kernel = kernel, .stride = 1, .groups = groups};
}

/* The chain of a chain blueprint; layers 0 for SE and NORM. */
static chain chain_of(morpho_conv_blueprint bp, morpho_geom g) {
    int c = g.channels, half = SK_MAX(c / 2, 1), r = reduced(c);
    chain ch = {0};
    switch (bp) {
    case MORPHO_CBP_DEPTHWISE:
        ch.layers = 2;
        ch.layer[0] = conv_shape(g, c, c, 3, c);
        ch.layer[1] = conv_shape(g, c, c, 1, 1);
        break;
    case MORPHO_CBP_CONV_LIGHT:
        ch.layers = 2;
        ch.layer[0] = conv_shape(g, c, half, 3, 1);
        ch.layer[1] = conv_shape(g, half, c, 1, 1);
        break;
    case MORPHO_CBP_CONV_HEAVY:
        ch.layers = 2;
        ch.layer[0] = conv_shape(g, c, c, 3, 1);
        ch.layer[1] = conv_shape(g, c, c, 3, 1);
        break;
    case MORPHO_CBP_BOTTLENECK:
        ch.layers = 3;
        ch.layer[0] = conv_shape(g, c, r, 1, 1);
        ch.layer[1] = conv_shape(g, r, r, 3, 1);
        ch.layer[2] = conv_shape(g, r, c, 1, 1);
        break;
    default: break;
    }
    return ch;
}

size_t morpho_cseed_num_params(morpho_conv_blueprint bp, morpho_geom g) {
    size_t c = (size_t)g.channels, r = (size_t)reduced(g.channels);
    if (bp == MORPHO_CBP_NORM) return 1 + 2 * c;
    if (bp == MORPHO_CBP_SE) return r * c + r + c * r + c;
    SK_ASSERT((unsigned)bp < MORPHO_NUM_BLUEPRINTS);
    chain ch = chain_of(bp, g);
    size_t n = 0;
    for (int l = 0; l < ch.layers; l++)
        n += sk_conv_weight_floats(ch.layer[l]) + (size_t)ch.layer[l].out_channels;
    return n;
}

size_t morpho_cseed_cache_floats(morpho_conv_blueprint bp, morpho_geom g) {
    size_t c = (size_t)g.channels;
    if (bp == MORPHO_CBP_NORM) return pixels(g) * (c + 1); /* xhat, 1/std per pixel */
    if (bp == MORPHO_CBP_SE) return 2 * c + (size_t)reduced(g.channels); /* m, hidden, scale */
    chain ch = chain_of(bp, g);
    size_t n = 0; /* every layer's output but the last, after its ReLU */
    for (int l = 0; l + 1 < ch.layers; l++) n += pixels(g) * (size_t)ch.layer[l].out_channels;
    return n;
}

size_t morpho_cseed_max_params(morpho_geom g) {
    size_t most = 0;
    for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS; bp++)
        most = SK_MAX(most, morpho_cseed_num_params((morpho_conv_blueprint)bp, g));
    return most;
}

size_t morpho_cseed_max_cache_floats(morpho_geom g) {
    size_t most = 0;
    for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS; bp++)
        most = SK_MAX(most, morpho_cseed_cache_floats((morpho_conv_blueprint)bp, g));
    return most;
}

double morpho_cseed_macs(morpho_conv_blueprint bp, morpho_geom g) {
    double c = g.channels, r = reduced(g.channels);
    if (bp == MORPHO_CBP_NORM) return 0.0; /* elementwise only */
    if (bp == MORPHO_CBP_SE) return 2.0 * c * r;
    chain ch = chain_of(bp, g);
    double macs = 0.0;
    for (int l = 0; l < ch.layers; l++) macs += sk_conv_macs(ch.layer[l]);
    return macs;
}

/* ---- context ---- */

void morpho_conv_ctx_destroy(morpho_conv_ctx *ctx) {
    if (!ctx) return;
    for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS; bp++)
        for (int l = 0; l < MAX_CHAIN; l++) sk_conv_destroy(ctx->conv[bp][l]);
    sk_free(ctx->grad[0]);
    sk_free(ctx->grad[1]);
    sk_free(ctx);
}

sk_status morpho_conv_ctx_create(morpho_conv_ctx **out, morpho_geom g, int max_batch,
                                 sk_precision precision) {
    *out = NULL;
    SK_ASSERT(g.height > 0 && g.width > 0 && g.channels > 0 && max_batch > 0);
    morpho_conv_ctx *ctx = sk_alloc(sizeof *ctx);
    if (!ctx) return sk_fail(SK_ERR_NOMEM, "out of memory");
    memset(ctx, 0, sizeof *ctx);
    ctx->geom = g;
    ctx->max_batch = max_batch;
    sk_status st = SK_OK;
    for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS && st == SK_OK; bp++) {
        chain ch = chain_of((morpho_conv_blueprint)bp, g);
        for (int l = 0; l < ch.layers && st == SK_OK; l++) {
            st = sk_conv_create(&ctx->conv[bp][l], ch.layer[l], precision);
            if (st == SK_OK) st = sk_conv_prepare(ctx->conv[bp][l], max_batch);
        }
    }
    /* a chain layer's input is C or r channels (r > C for C < 8); SE needs C + r per image */
    size_t widest = (size_t)SK_MAX(g.channels, reduced(g.channels));
    size_t floats = (size_t)max_batch * SK_MAX(pixels(g) * widest, (size_t)(g.channels + reduced(g.channels)));
    for (int k = 0; k < 2 && st == SK_OK; k++)
        if (!(ctx->grad[k] = sk_alloc(floats * sizeof(float))))
            st = sk_fail(SK_ERR_NOMEM, "out of memory");
    if (st != SK_OK) {
        morpho_conv_ctx_destroy(ctx);
        return st;
    }
    *out = ctx;
    return SK_OK;
}

/* ---- init ---- */

/* PyTorch's Conv2d default: weights and bias uniform within 1/sqrt(fan in). */
static void conv_default_init(float *params, sk_conv_shape s, uint64_t *rng) {
    size_t nw = sk_conv_weight_floats(s);
    double bound = 1.0 / sqrt((double)(s.kernel * s.kernel * (s.channels / s.groups)));
    for (size_t k = 0; k < nw + (size_t)s.out_channels; k++)
        params[k] = (float)sk_rng_uniform(rng, -bound, bound);
}

void morpho_cseed_init(morpho_conv_blueprint bp, morpho_geom g, float *params, uint64_t *rng) {
    size_t n = morpho_cseed_num_params(bp, g);
    memset(params, 0, n * sizeof(float));
    if (bp == MORPHO_CBP_NORM) {
        morpho_seed_init(MORPHO_BP_NORM, g.channels, params, rng);
        return;
    }
    if (bp == MORPHO_CBP_SE) { /* W1 orthogonal (ReLU gain); b1, W2, b2 = 0 */
        sk_orthogonal_init(params, reduced(g.channels), g.channels, sqrt(2.0), rng);
        return;
    }
    chain ch = chain_of(bp, g);
    float *p = params;
    for (int l = 0; l + 1 < ch.layers; l++) { /* the last layer stays 0 */
        conv_default_init(p, ch.layer[l], rng);
        p += sk_conv_weight_floats(ch.layer[l]) + (size_t)ch.layer[l].out_channels;
    }
}

/* ---- chains ---- */

static void add_residual(float *restrict s, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) s[i] += x[i];
}

void morpho_channel_mean(float *restrict mean, const float *restrict x, int B, size_t pixels,
                         int C) {
    for (int b = 0; b < B; b++) {
        float *restrict mb = mean + (size_t)b * C;
        const float *restrict xb = x + (size_t)b * pixels * C;
        memset(mb, 0, (size_t)C * sizeof(float));
        for (size_t q = 0; q < pixels; q++)
            for (int ch = 0; ch < C; ch++) mb[ch] += xb[q * C + ch];
        for (int ch = 0; ch < C; ch++) mb[ch] /= (float)pixels;
    }
}

void morpho_channel_mean_backward(float *restrict dx, const float *restrict dmean, int B,
                                  size_t pixels, int C) {
    for (int b = 0; b < B; b++) {
        const float *restrict db = dmean + (size_t)b * C;
        float *restrict dxb = dx + (size_t)b * pixels * C;
        for (size_t q = 0; q < pixels; q++)
            for (int ch = 0; ch < C; ch++) dxb[q * C + ch] += db[ch] / (float)pixels;
    }
}

static void chain_forward(morpho_conv_ctx *ctx, morpho_conv_blueprint bp, const float *params,
                          const float *x, float *s, float *cache, int B) {
    chain ch = chain_of(bp, ctx->geom);
    const float *in = x, *p = params;
    float *c = cache;
    for (int l = 0; l < ch.layers; l++) {
        sk_conv_shape sh = ch.layer[l];
        size_t nw = sk_conv_weight_floats(sh), out_n = (size_t)B * pixels(ctx->geom) * sh.out_channels;
        bool last = l + 1 == ch.layers;
        float *out = last ? s : c;
        sk_conv_forward(ctx->conv[bp][l], out, in, p, p + nw, B);
        p += nw + (size_t)sh.out_channels;
        if (!last) {
            sk_relu_forward(out, out, out_n);
            in = out;
            c += out_n;
        }
    }
    add_residual(s, x, (size_t)B * pixels(ctx->geom) * ctx->geom.channels);
}

static void chain_backward(morpho_conv_ctx *ctx, morpho_conv_blueprint bp, const float *params,
                           const float *x, const float *cache, const float *ds, float *dx,
                           float *dparams, int B) {
    chain ch = chain_of(bp, ctx->geom);
    size_t hw = pixels(ctx->geom);
    /* where each layer's input, parameters and gradients start */
    const float *inputs[MAX_CHAIN], *weights[MAX_CHAIN];
    float *dweights[MAX_CHAIN];
    const float *c = cache, *p = params;
    float *dp = dparams;
    for (int l = 0; l < ch.layers; l++) {
        inputs[l] = l == 0 ? x : c;
        if (l > 0) c += (size_t)B * hw * ch.layer[l - 1].out_channels;
        weights[l] = p;
        dweights[l] = dp;
        size_t n = sk_conv_weight_floats(ch.layer[l]) + (size_t)ch.layer[l].out_channels;
        p += n;
        dp += n;
    }
    const float *g = ds;
    for (int l = ch.layers - 1; l >= 0; l--) {
        sk_conv_shape sh = ch.layer[l];
        size_t nw = sk_conv_weight_floats(sh);
        float *dprev = dx;
        size_t in_n = (size_t)B * hw * sh.channels;
        if (l > 0) {
            dprev = ctx->grad[l % 2];
            memset(dprev, 0, in_n * sizeof(float));
        }
        sk_conv_backward(ctx->conv[bp][l], dprev, dweights[l], dweights[l] + nw, g, inputs[l],
                         weights[l], B);
        if (l > 0) { /* through the ReLU that made layer l's input */
            const float *restrict act = inputs[l];
            float *restrict d = dprev;
            for (size_t i = 0; i < in_n; i++) d[i] = act[i] > 0.0f ? d[i] : 0.0f;
            g = dprev;
        }
    }
    if (dx) add_residual(dx, ds, (size_t)B * hw * ctx->geom.channels);
}

/* ---- SE: s = x * 2 sigmoid(W2 relu(W1 m + b1) + b2). cache: m (B, C), hidden (B, r), scale (B, C) ---- */

static void se_forward(morpho_conv_ctx *ctx, const float *params, const float *x, float *s,
                       float *cache, int B) {
    int C = ctx->geom.channels, r = reduced(C);
    size_t hw = pixels(ctx->geom);
    const float *W1 = params, *b1 = W1 + (size_t)r * C, *W2 = b1 + r, *b2 = W2 + (size_t)C * r;
    float *m = cache, *hidden = m + (size_t)B * C, *scale = hidden + (size_t)B * r;
    morpho_channel_mean(m, x, B, hw, C);
    sk_linear_forward(hidden, m, W1, b1, B, C, r);
    sk_relu_forward(hidden, hidden, (size_t)B * r);
    sk_linear_forward(scale, hidden, W2, b2, B, r, C);
    for (size_t k = 0; k < (size_t)B * C; k++) scale[k] = 2.0f / (1.0f + expf(-scale[k]));
    for (int b = 0; b < B; b++) {
        const float *xb = x + (size_t)b * hw * C, *sc = scale + (size_t)b * C;
        float *sb = s + (size_t)b * hw * C;
        for (size_t q = 0; q < hw; q++)
            for (int ch = 0; ch < C; ch++) sb[q * C + ch] = xb[q * C + ch] * sc[ch];
    }
}

static void se_backward(morpho_conv_ctx *ctx, const float *params, const float *x,
                        const float *cache, const float *ds, float *dx, float *dparams, int B) {
    int C = ctx->geom.channels, r = reduced(C);
    size_t hw = pixels(ctx->geom);
    const float *W1 = params, *W2 = W1 + (size_t)r * C + r;
    float *dW1 = dparams, *db1 = dW1 + (size_t)r * C, *dW2 = db1 + r, *db2 = dW2 + (size_t)C * r;
    const float *m = cache, *hidden = m + (size_t)B * C, *scale = hidden + (size_t)B * r;
    /* scratch from the ping-pong buffers (each holds at least B * (C + r)) */
    float *dpre = ctx->grad[0], *dhidden = dpre + (size_t)B * C;
    float *dm = ctx->grad[1];
    memset(dhidden, 0, (size_t)B * r * sizeof(float));
    memset(dm, 0, (size_t)B * C * sizeof(float));
    for (int b = 0; b < B; b++) {
        const float *xb = x + (size_t)b * hw * C, *dsb = ds + (size_t)b * hw * C;
        float *d = dpre + (size_t)b * C;
        memset(d, 0, (size_t)C * sizeof(float));
        for (size_t q = 0; q < hw; q++)
            for (int ch = 0; ch < C; ch++) d[ch] += dsb[q * C + ch] * xb[q * C + ch];
        const float *sc = scale + (size_t)b * C;
        for (int ch = 0; ch < C; ch++) d[ch] *= sc[ch] * (1.0f - 0.5f * sc[ch]); /* d(2 sigmoid) */
    }
    sk_linear_backward(dhidden, dW2, db2, dpre, hidden, W2, B, r, C);
    for (size_t k = 0; k < (size_t)B * r; k++) dhidden[k] = hidden[k] > 0.0f ? dhidden[k] : 0.0f;
    sk_linear_backward(dx ? dm : NULL, dW1, db1, dhidden, m, W1, B, C, r);
    if (!dx) return;
    for (int b = 0; b < B; b++) {
        const float *dsb = ds + (size_t)b * hw * C, *sc = scale + (size_t)b * C;
        float *dxb = dx + (size_t)b * hw * C;
        for (size_t q = 0; q < hw; q++)
            for (int ch = 0; ch < C; ch++) dxb[q * C + ch] += dsb[q * C + ch] * sc[ch];
    }
    morpho_channel_mean_backward(dx, dm, B, hw, C);
}

/* ---- dispatch ---- */

void morpho_cseed_forward(morpho_conv_ctx *ctx, morpho_conv_blueprint bp, const float *params,
                          const float *x, float *s, float *cache, int B) {
    SK_ASSERT(B > 0 && B <= ctx->max_batch);
    switch (bp) {
    case MORPHO_CBP_NORM:
        morpho_seed_forward(MORPHO_BP_NORM, ctx->geom.channels, params, x, s, cache,
                            B * (int)pixels(ctx->geom));
        break;
    case MORPHO_CBP_SE: se_forward(ctx, params, x, s, cache, B); break;
    default: chain_forward(ctx, bp, params, x, s, cache, B);
    }
}

void morpho_cseed_backward(morpho_conv_ctx *ctx, morpho_conv_blueprint bp, const float *params,
                           const float *x, const float *cache, const float *ds, float *dx,
                           float *dparams, int B) {
    SK_ASSERT(B > 0 && B <= ctx->max_batch);
    switch (bp) {
    case MORPHO_CBP_NORM:
        morpho_seed_backward(MORPHO_BP_NORM, ctx->geom.channels, params, x, cache, ds, dx,
                             dparams, B * (int)pixels(ctx->geom));
        break;
    case MORPHO_CBP_SE: se_backward(ctx, params, x, cache, ds, dx, dparams, B); break;
    default: chain_backward(ctx, bp, params, x, cache, ds, dx, dparams, B);
    }
}
