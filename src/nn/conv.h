/*
 * 2-d convolutions over NHWC batches, forward and backward, through oneDNN
 * (Debian's libdnnl-dev). Why oneDNN and not im2col + OpenBLAS: on the CNN
 * host's shapes (256 images, 28x28 to 4x4, 1 to 32 channels) oneDNN's direct
 * forward convolutions ran 2.1-3.2x faster than im2col + OpenBLAS sgemm
 * (bench/conv.c; im2col's memory pass alone often costs as much as the GEMM),
 * and OpenBLAS in Debian 12 has no bf16 GEMM at all; docs/morpho.md has the
 * measurement.
 *
 * Layouts: activations (B, height, width, channels), row-major. Weights
 * (out, k, k, in / groups) for groups = 1 ("ohwi": a k = 1 convolution's
 * weights are torch.nn.Linear's (out, in)); with groups G, G blocks of
 * (out / G, k, k, in / G) ("gohwi"), so a depthwise convolution (G = in =
 * out) is (channels, k, k). Bias (out). Padding is k / 2 on every side
 * (k odd), so a stride-1 convolution keeps the size and stride 2 halves it
 * (rounding up). sk_conv_create_torch (the policies' CNN encoder) takes torch.nn.Conv2d's
 * conventions instead: a padding of its own, any kernel, weights (out, in, kh, kw).
 *
 * Precision: SK_PRECISION_F32 computes in float. SK_PRECISION_BF16 rounds
 * the input, the weights and the output gradient to bfloat16 (nearest, ties
 * to even) before each primitive and accumulates in float: outputs, input
 * gradients and weight gradients are float, the master weights stay float
 * (the caller's), as PyTorch's bf16 autocast does for a convolution.
 *
 * An sk_conv holds the primitives for one layer shape; it creates them for a
 * batch size on first use (a few batch sizes are cached) and is used by one
 * thread at a time. oneDNN runs single-threaded inside it: skinner
 * parallelises over envs, not inside a layer.
 */
#ifndef SK_NN_CONV_H
#define SK_NN_CONV_H

#include "skinner.h"

#include <stddef.h>
#include <stdint.h>

typedef enum sk_precision { SK_PRECISION_F32, SK_PRECISION_BF16 } sk_precision;

typedef struct sk_conv_shape {
    int height, width, channels; /* the input's */
    int out_channels, kernel, stride, groups;
} sk_conv_shape;

typedef struct sk_conv sk_conv;

/* The output side for an input side (padding kernel / 2). */
int sk_conv_out_side(int side, int kernel, int stride);
/* The output side as torch.nn.Conv2d's: (side + 2 * padding - kernel) / stride + 1. */
int sk_conv_torch_out_side(int side, int kernel, int stride, int padding);
/* Weight floats: out * kernel^2 * in / groups. */
size_t sk_conv_weight_floats(sk_conv_shape shape);
/* Multiply-adds per image of the forward. */
double sk_conv_macs(sk_conv_shape shape);

/* SK_ERR_INVALID for a shape oneDNN cannot run (channels not divisible by
 * groups, an even kernel, a side < 1), SK_ERR_NOMEM, SK_ERR_IO when oneDNN
 * fails to start. */
sk_status sk_conv_create(sk_conv **out, sk_conv_shape shape, sk_precision precision);
/* As sk_conv_create with torch.nn.Conv2d's conventions: `padding` rows and columns of zeros
 * on every side (0..kernel / 2), any kernel that fits the padded input, groups 1, weights
 * (out, in, kh, kw) (and their gradient) as torch's. */
sk_status sk_conv_create_torch(sk_conv **out, sk_conv_shape shape, int padding,
                               sk_precision precision);
void sk_conv_destroy(sk_conv *conv);
/* Makes the primitives for batch size B now (they are otherwise made on first
 * use), so that a shape oneDNN cannot run fails here, with a status naming
 * it, rather than at the first step (forward and backward treat a failure as
 * a bug). SK_ERR_INVALID or SK_ERR_NOMEM. */
sk_status sk_conv_prepare(sk_conv *conv, int B);

/* y (B, oh, ow, out) = conv(x (B, h, w, in), w) + b; b may be NULL (no bias). */
void sk_conv_forward(sk_conv *conv, float *y, const float *x, const float *w, const float *b,
                     int B);
/* dx (B, h, w, in) += dy @ d conv / dx (dx may be NULL: x is detached);
 * dw += ; db += (NULL: no bias). */
void sk_conv_backward(sk_conv *conv, float *dx, float *dw, float *db, const float *dy,
                      const float *x, const float *w, int B);

/* bfloat16 rounding (nearest, ties to even; NaN stays NaN), as a float and as bits. */
float sk_bf16_round(float x);
void sk_f32_to_bf16(uint16_t *out, const float *x, size_t n);

#endif
