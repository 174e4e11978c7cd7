/*
 * Morpho-v0's host network, linear or convolutional (env.host), and the
 * seeds of its slots: the layers morpho.c's epoch calls. Everything else
 * (lifecycle, blends, alpha, counterfactuals, Shapley values, rewards) is one
 * code path for both hosts; only what a layer computes differs.
 *
 * Linear host: x (D) -> L0 -> [slot 0] -> L1 -> [slot 1] -> L2 -> [slot 2] ->
 * Lout, width H, no non-linearity (docs/morpho.md says why).
 * CNN host: x (28, 28, 1) -> conv 3x3 stride 2 + ReLU -> [slot 0] -> conv 3x3
 * stride 2 + ReLU -> [slot 1] -> conv 3x3 stride 2 + ReLU -> [slot 2] ->
 * global mean pool -> Lout, with channels c, 2c, 4c (env.channels = c), on
 * 14x14, 7x7 and 4x4 grids. The convolutions run at env.precision; the pool
 * and the 10-way head stay float (the head is 4c x 10 multiply-adds).
 */
#include "skinner/module.h"
#include "skinner/nn.h"
#include "morpho_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_SIDE 28

static bool is_cnn(const morpho_state *m) { return m->cfg.host == MORPHO_HOST_CNN; }

static int layer_in(const morpho_state *m, int l) {
    if (is_cnn(m)) return l == 0 ? 1 : m->geom[l - 1].channels;
    return l == 0 ? m->D : m->H;
}

static int layer_out(const morpho_state *m, int l) {
    if (l == MORPHO_SLOTS) return MORPHO_CLASSES;
    return is_cnn(m) ? m->geom[l].channels : m->H;
}

static sk_conv_shape stage_shape(const morpho_state *m, int k) {
    int side = k == 0 ? IMAGE_SIDE : m->geom[k - 1].height;
    return (sk_conv_shape){.height = side, .width = side, .channels = layer_in(m, k),
                           .out_channels = layer_out(m, k), .kernel = 3, .stride = 2,
                           .groups = 1};
}

/* Weight floats of layer l (the head is l = MORPHO_SLOTS). */
static size_t layer_weights(const morpho_state *m, int l) {
    if (is_cnn(m) && l < MORPHO_SLOTS) return sk_conv_weight_floats(stage_shape(m, l));
    return (size_t)layer_in(m, l) * (size_t)layer_out(m, l);
}

static double layer_fan_in(const morpho_state *m, int l) {
    if (is_cnn(m) && l < MORPHO_SLOTS) return 9.0 * layer_in(m, l);
    return layer_in(m, l);
}

morpho_host_view morpho_host_at(const morpho_state *m, float *base) {
    morpho_host_view v;
    float *p = base;
    for (int l = 0; l <= MORPHO_SLOTS; l++) {
        v.w[l] = p;
        p += layer_weights(m, l);
        v.b[l] = p;
        p += layer_out(m, l);
    }
    return v;
}

sk_status morpho_host_setup(morpho_state *m) {
    if (is_cnn(m)) {
        if (m->D != IMAGE_SIDE * IMAGE_SIDE)
            return sk_fail(SK_ERR_INVALID, "env.host = cnn needs 28x28 images, got %d features",
                           m->D);
        int side = IMAGE_SIDE, channels = m->cfg.channels;
        for (int k = 0; k < MORPHO_SLOTS; k++) {
            side = sk_conv_out_side(side, 3, 2);
            m->geom[k] = (morpho_geom){side, side, channels << k};
        }
    } else {
        for (int k = 0; k < MORPHO_SLOTS; k++) m->geom[k] = (morpho_geom){1, 1, m->H};
    }
    m->host_params = 0;
    m->seed_params = 0;
    m->blend_params = 0;
    m->max_dim = 0;
    for (int l = 0; l <= MORPHO_SLOTS; l++) m->host_params += layer_weights(m, l) + layer_out(m, l);
    for (int k = 0; k < MORPHO_SLOTS; k++) {
        morpho_geom g = m->geom[k];
        m->dim[k] = (size_t)g.height * g.width * g.channels;
        m->max_dim = SK_MAX(m->max_dim, m->dim[k]);
        for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS; bp++)
            m->seed_params = SK_MAX(m->seed_params, morpho_slot_seed_params(m, k, bp));
        for (int s = 0; s < MORPHO_NUM_STYLES; s++)
            m->blend_params = SK_MAX(m->blend_params,
                                     morpho_blend_num_params((morpho_style)s, (int)m->dim[k]));
        m->seed_cache = SK_MAX(m->seed_cache, is_cnn(m) ? morpho_cseed_max_cache_floats(g)
                                                        : morpho_seed_max_cache_floats(m->H));
        for (int s = 0; s < MORPHO_NUM_STYLES; s++)
            m->blend_cache = SK_MAX(m->blend_cache,
                                    morpho_blend_cache_floats((morpho_style)s, (int)m->dim[k]));
    }
    return SK_OK;
}

void morpho_host_init(const morpho_state *m, float *host, uint64_t *rng) {
    morpho_host_view v = morpho_host_at(m, host);
    for (int l = 0; l <= MORPHO_SLOTS; l++) {
        double bound = 1.0 / sqrt(layer_fan_in(m, l)); /* torch.nn.Linear's and Conv2d's default */
        for (size_t k = 0; k < layer_weights(m, l); k++)
            v.w[l][k] = (float)sk_rng_uniform(rng, -bound, bound);
        for (int k = 0; k < layer_out(m, l); k++) v.b[l][k] = (float)sk_rng_uniform(rng, -bound, bound);
    }
}

double morpho_host_macs(const morpho_state *m) {
    double macs = 0.0;
    for (int l = 0; l <= MORPHO_SLOTS; l++) {
        double per = (double)layer_weights(m, l);
        if (is_cnn(m) && l < MORPHO_SLOTS) per = sk_conv_macs(stage_shape(m, l));
        macs += per;
    }
    return macs;
}

/* ---- per-env layers ---- */

sk_status morpho_work_host_create(const morpho_state *m, morpho_work *w) {
    if (!is_cnn(m)) return SK_OK;
    sk_precision precision = (sk_precision)m->cfg.precision;
    sk_status st = SK_OK;
    for (int k = 0; k < MORPHO_SLOTS && st == SK_OK; k++) {
        st = sk_conv_create(&w->host_conv[k], stage_shape(m, k), precision);
        if (st == SK_OK) st = sk_conv_prepare(w->host_conv[k], m->cfg.batch_size);
        if (st == SK_OK)
            st = morpho_conv_ctx_create(&w->seed_ctx[k], m->geom[k], m->cfg.batch_size, precision);
    }
    return st;
}

void morpho_work_host_free(morpho_work *w) {
    for (int k = 0; k < MORPHO_SLOTS; k++) {
        sk_conv_destroy(w->host_conv[k]);
        morpho_conv_ctx_destroy(w->seed_ctx[k]);
        w->host_conv[k] = NULL;
        w->seed_ctx[k] = NULL;
    }
}

void morpho_stage_forward(const morpho_state *m, morpho_work *w, const morpho_host_view *v, int k,
                          const float *in, float *out, int B) {
    if (is_cnn(m)) {
        sk_conv_forward(w->host_conv[k], out, in, v->w[k], v->b[k], B);
        if (m->cfg.host_relu) sk_relu_forward(out, out, (size_t)B * m->dim[k]);
    } else {
        sk_linear_forward(out, in, v->w[k], v->b[k], B, layer_in(m, k), m->H);
    }
}

void morpho_stage_backward(const morpho_state *m, morpho_work *w, const morpho_host_view *v,
                           const morpho_host_view *g, int k, const float *in, const float *out,
                           float *dout, float *din, int B) {
    if (is_cnn(m)) {
        size_t n = (size_t)B * m->dim[k];
        if (m->cfg.host_relu)
            for (size_t i = 0; i < n; i++) dout[i] = out[i] > 0.0f ? dout[i] : 0.0f;
        sk_conv_backward(w->host_conv[k], din, g->w[k], g->b[k], dout, in, v->w[k], B);
    } else {
        sk_linear_backward(din, g->w[k], g->b[k], dout, in, v->w[k], B, layer_in(m, k), m->H);
    }
}

void morpho_head_forward(const morpho_state *m, morpho_work *w, const morpho_host_view *v,
                         const float *in, int B) {
    const float *features = in;
    if (is_cnn(m)) { /* the mean over the last grid, (B, channels) */
        morpho_geom g = m->geom[MORPHO_SLOTS - 1];
        morpho_channel_mean(w->pooled, in, B, (size_t)g.height * g.width, g.channels);
        features = w->pooled;
    }
    int L = MORPHO_SLOTS;
    sk_linear_forward(w->logits, features, v->w[L], v->b[L], B, layer_in(m, L), MORPHO_CLASSES);
}

void morpho_head_backward(const morpho_state *m, morpho_work *w, const morpho_host_view *v,
                          const morpho_host_view *g, const float *in, float *din, int B) {
    int L = MORPHO_SLOTS;
    if (!is_cnn(m)) {
        sk_linear_backward(din, g->w[L], g->b[L], w->dlogits, in, v->w[L], B, m->H, MORPHO_CLASSES);
        return;
    }
    morpho_geom geom = m->geom[L - 1];
    size_t hw = (size_t)geom.height * geom.width;
    int C = geom.channels;
    /* the pooled features of this batch are still in w->pooled (the forward's) */
    memset(w->dpooled, 0, (size_t)B * C * sizeof(float));
    sk_linear_backward(w->dpooled, g->w[L], g->b[L], w->dlogits, w->pooled, v->w[L], B, C,
                       MORPHO_CLASSES);
    morpho_channel_mean_backward(din, w->dpooled, B, hw, C);
}

/* ---- seeds ---- */

size_t morpho_slot_seed_params(const morpho_state *m, int k, int blueprint) {
    if (is_cnn(m)) return morpho_cseed_num_params((morpho_conv_blueprint)blueprint, m->geom[k]);
    return morpho_seed_num_params((morpho_blueprint)blueprint, m->H);
}

double morpho_slot_seed_macs(const morpho_state *m, int k, int blueprint) {
    if (is_cnn(m)) return morpho_cseed_macs((morpho_conv_blueprint)blueprint, m->geom[k]);
    return (double)morpho_seed_num_params((morpho_blueprint)blueprint, m->H);
}

const char *morpho_slot_blueprint_name(const morpho_state *m, int blueprint) {
    return is_cnn(m) ? morpho_conv_blueprint_names[blueprint] : morpho_blueprint_names[blueprint];
}

void morpho_slot_seed_init(const morpho_state *m, int k, int blueprint, float *params,
                           uint64_t *rng) {
    if (is_cnn(m))
        morpho_cseed_init((morpho_conv_blueprint)blueprint, m->geom[k], params, rng);
    else
        morpho_seed_init((morpho_blueprint)blueprint, m->H, params, rng);
}

void morpho_slot_seed_forward(const morpho_state *m, morpho_work *w, int k, int blueprint,
                              const float *params, int B) {
    if (is_cnn(m))
        morpho_cseed_forward(w->seed_ctx[k], (morpho_conv_blueprint)blueprint, params, w->h[k],
                             w->s[k], w->seed_cache[k], B);
    else
        morpho_seed_forward((morpho_blueprint)blueprint, m->H, params, w->h[k], w->s[k],
                            w->seed_cache[k], B);
}

void morpho_slot_seed_backward(const morpho_state *m, morpho_work *w, int k, int blueprint,
                               const float *params, const float *ds, float *dx, float *dparams,
                               int B) {
    if (is_cnn(m))
        morpho_cseed_backward(w->seed_ctx[k], (morpho_conv_blueprint)blueprint, params, w->h[k],
                              w->seed_cache[k], ds, dx, dparams, B);
    else
        morpho_seed_backward((morpho_blueprint)blueprint, m->H, params, w->h[k], w->seed_cache[k],
                             ds, dx, dparams, B);
}
