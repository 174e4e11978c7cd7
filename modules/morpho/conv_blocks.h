/*
 * Morpho-v0's convolutional seeds, for the CNN host (env.host = cnn): blocks
 * on a slot's activation of shape (B, height, width, channels), NHWC, after
 * the blueprints of the system Morpho-v0 replaces. Each is residual and the
 * identity at initialisation (its last layer starts at zero), so grafting one
 * changes nothing until it learns. C is the slot's channels, r = max(C / 4, 2).
 *
 *   NORM        per pixel, a LayerNorm over the channels: blocks.h's NORM with
 *               H = C applied to every pixel (tanh(g) gate, g = 0 at init).
 *   SE          squeeze-excitation: s = x * 2 sigmoid(W2 relu(W1 m + b1) + b2),
 *               m the per-channel mean over the image; W1 (r, C) orthogonal
 *               (gain sqrt 2), W2 (C, r) = 0, b = 0, so the scale starts at 1.
 *   DEPTHWISE   depthwise-separable: s = x + P relu(D x + d) + p, D a 3x3
 *               depthwise convolution, P a 1x1 convolution C -> C (P = 0, p = 0).
 *   CONV_LIGHT  s = x + P relu(K x + k) + p, K 3x3 C -> max(C/2, 1), P 1x1 back to C (0).
 *   CONV_HEAVY  s = x + K2 relu(K1 x + k1) + k2, K1 and K2 3x3 C -> C (K2 = 0).
 *   BOTTLENECK  s = x + U relu(M relu(V x + v) + m) + u: V 1x1 C -> r, M 3x3
 *               r -> r, U 1x1 r -> C (U = 0).
 * Convolution weights are laid out as src/nn/conv.h says (out, k, k, in) and
 * start as PyTorch's Conv2d default (uniform within 1/sqrt(fan in)) unless
 * said otherwise; the index of each blueprint is the blueprint head's value
 * (the linear host's blueprint with the same index plays the same part:
 * index 4 is the largest, which the heuristic grows).
 *
 * Parameters per slot are packed layer by layer, weights then bias. A
 * seed's convolutions run at the context's precision (conv.h); SE's two
 * small matrices, LayerNorm and the elementwise parts stay float.
 *
 * A morpho_conv_ctx holds one slot's convolution primitives and scratch for
 * batches up to max_batch; one thread uses it at a time.
 */
#ifndef SK_MORPHO_CONV_BLOCKS_H
#define SK_MORPHO_CONV_BLOCKS_H

#include "skinner/nn.h"
#include "blocks.h"

typedef enum morpho_conv_blueprint {
    MORPHO_CBP_NORM,
    MORPHO_CBP_SE,
    MORPHO_CBP_DEPTHWISE,
    MORPHO_CBP_CONV_LIGHT,
    MORPHO_CBP_CONV_HEAVY,
    MORPHO_CBP_BOTTLENECK,
} morpho_conv_blueprint;
_Static_assert(MORPHO_CBP_BOTTLENECK + 1 == MORPHO_NUM_BLUEPRINTS,
               "the blueprint head has one value per convolutional blueprint too");
extern const char *const morpho_conv_blueprint_names[MORPHO_NUM_BLUEPRINTS];

typedef struct morpho_geom {
    int height, width, channels;
} morpho_geom;

typedef struct morpho_conv_ctx morpho_conv_ctx;

size_t morpho_cseed_num_params(morpho_conv_blueprint bp, morpho_geom g);
/* Cache floats per image. */
size_t morpho_cseed_cache_floats(morpho_conv_blueprint bp, morpho_geom g);
size_t morpho_cseed_max_params(morpho_geom g);
size_t morpho_cseed_max_cache_floats(morpho_geom g);
/* mean (B, C) = x (B, pixels, C) averaged over the pixels (SE's squeeze, the
 * CNN head's pool); backward: dx += dmean / pixels at every pixel. */
void morpho_channel_mean(float *mean, const float *x, int B, size_t pixels, int C);
void morpho_channel_mean_backward(float *dx, const float *dmean, int B, size_t pixels, int C);

/* Multiply-adds per image of the forward. */
double morpho_cseed_macs(morpho_conv_blueprint bp, morpho_geom g);

sk_status morpho_conv_ctx_create(morpho_conv_ctx **out, morpho_geom g, int max_batch,
                                 sk_precision precision);
void morpho_conv_ctx_destroy(morpho_conv_ctx *ctx);

void morpho_cseed_init(morpho_conv_blueprint bp, morpho_geom g, float *params, uint64_t *rng);
/* s (B, h, w, C) = seed(x); cache (B, cache floats). B <= max_batch. */
void morpho_cseed_forward(morpho_conv_ctx *ctx, morpho_conv_blueprint bp, const float *params,
                          const float *x, float *s, float *cache, int B);
/* dx += (NULL: detached); dparams += . */
void morpho_cseed_backward(morpho_conv_ctx *ctx, morpho_conv_blueprint bp, const float *params,
                           const float *x, const float *cache, const float *ds, float *dx,
                           float *dparams, int B);

#endif
