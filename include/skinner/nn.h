/*
 * skinner/nn.h: the layers skinner's policies are made of, for env authors
 * whose envs hold networks of their own (Morpho's hosts do).
 *
 * Layers are forward/backward pairs over float pointers: outputs first,
 * gradients d-prefixed, sizes last. Row-major throughout: a batch of B rows
 * of C features is (B, C). Backward ADDS (+=) into every gradient it is given
 * (input and parameters), so gradients of several uses of one layer sum;
 * zeroing them is the caller's job (memset). Nothing here allocates except
 * sk_conv_create*, and nothing keeps a pointer it was given past the call.
 *
 * One dense layer fitted by Adam to y = 1 + x0 + 2 x1 (link with -lskinner):
 *
 *     #include <skinner/nn.h>
 *     #include <stdio.h>
 *     #include <string.h>
 *
 *     enum { B = 4, IN = 2, OUT = 1, NUM_PARAMS = OUT * IN + OUT }; // w (OUT, IN), then b (OUT)
 *
 *     int main(void) {
 *         float params[NUM_PARAMS], grads[NUM_PARAMS], m[NUM_PARAMS] = {0}, v[NUM_PARAMS] = {0};
 *         float x[B * IN] = {0, 0, 0, 1, 1, 0, 1, 1}, target[B] = {1, 3, 2, 4}, y[B], dy[B];
 *         float *w = params, *b = params + OUT * IN;
 *         uint64_t rng = sk_rng_seed(1, 0);
 *         sk_orthogonal_init(w, OUT, IN, 1.0, &rng);
 *         b[0] = 0.0f;
 *         for (int64_t step = 1; step <= 3000; step++) {
 *             sk_linear_forward(y, x, w, b, B, IN, OUT);
 *             for (int i = 0; i < B; i++) dy[i] = 2.0f * (y[i] - target[i]) / B; // d MSE / dy
 *             memset(grads, 0, sizeof grads); // backward adds into the gradients
 *             sk_linear_backward(NULL, grads, grads + OUT * IN, dy, x, w, B, IN, OUT);
 *             sk_adam_update(params, grads, m, v, NUM_PARAMS, 0.01f,
 *                            (sk_adam){0.9f, 0.999f, 1e-8f}, step);
 *         }
 *         printf("w = (%.2f, %.2f), b = %.2f\n", w[0], w[1], b[0]); // (1.00, 2.00), 1.00
 *         return 0;
 *     }
 *
 * As there, parameters, gradients and Adam's moments are best one block each,
 * carved with a size table, so that sk_adam_update and sk_clip_grad_norm take
 * them whole. A hidden layer adds sk_tanh_forward after its sk_linear_forward
 * and, going back, sk_tanh_backward into a gradient buffer of its own (the
 * backward pairs add, so dinp and dout are never the same buffer).
 *
 * Dense layers run on OpenBLAS's sgemm; convolutions on oneDNN, which
 * libskinner loads only when the first convolution is created (below), so a
 * program that never convolves needs no oneDNN installed.
 */
#ifndef SKINNER_NN_H
#define SKINNER_NN_H

#include "env.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ dense layers */

/* out (B, OC) = inp (B, C) @ w^T + b: w (OC, C) as torch.nn.Linear's weight,
 * b (OC) or NULL (no bias). out must not overlap inp. */
SK_API void sk_linear_forward(float *out, const float *inp, const float *w, const float *b,
                              int B, int C, int OC);
/* dinp (B, C) += dout @ w; dw (OC, C) += dout^T @ inp; db (OC) += dout's
 * column sums. dinp may be NULL (the input needs no gradient: a first layer),
 * dw NULL (the weights need none: a gradient through a fixed layer), db NULL
 * (no bias, or none wanted). */
SK_API void sk_linear_backward(float *dinp, float *dw, float *db, const float *dout,
                               const float *inp, const float *w, int B, int C, int OC);

/* ------------------------------------------------------------- activations */

/* Elementwise over n floats; out may be inp. tanh is Cephes' (~1 ulp),
 * vectorised; NaN stays NaN in both. */
SK_API void sk_tanh_forward(float *out, const float *inp, size_t n);
/* dinp += dout * (1 - out^2), from the forward's OUTPUT. */
SK_API void sk_tanh_backward(float *dinp, const float *dout, const float *out, size_t n);
SK_API void sk_relu_forward(float *out, const float *inp, size_t n);
/* dinp += dout where out > 0, from the forward's OUTPUT. */
SK_API void sk_relu_backward(float *dinp, const float *dout, const float *out, size_t n);

/* ---------------------------------------------------- init and optimisation */

/* w (rows, cols) = gain * a (semi-)orthogonal matrix, as
 * torch.nn.init.orthogonal_: QR of a Gaussian matrix drawn from *rng (an
 * sk_rng_seed stream, advanced), with the signs of R's diagonal folded into Q.
 * Usual gains: sqrt(2) before a ReLU or tanh, 0.01 for a policy head. */
SK_API void sk_orthogonal_init(float *w, int rows, int cols, double gain, uint64_t *rng);

/* Adam's constants; PyTorch's defaults are {0.9f, 0.999f, 1e-8f}. */
typedef struct sk_adam {
    float beta1, beta2, eps;
} sk_adam;
/* One Adam step over n parameters with PyTorch's update rule (bias-corrected,
 * eps added to the corrected sqrt(v)). m and v are the moments, zeroed before
 * the first step and kept by the caller; step is the 1-based step count. */
SK_API void sk_adam_update(float *params, const float *grads, float *m, float *v, size_t n,
                           float lr, sk_adam adam, int64_t step);

/* The global L2 norm of n gradients (summed in double). */
SK_API double sk_grad_norm(const float *grads, size_t n);
/* Scales grads so that their global norm is at most max_norm, as
 * torch.nn.utils.clip_grad_norm_ (by max_norm / (norm + 1e-6) when below 1).
 * Returns the norm before clipping. */
SK_API double sk_clip_grad_norm(float *grads, size_t n, double max_norm);
/* The factor sk_clip_grad_norm scales by for a norm: max_norm / (norm + 1e-6) as a float when
 * below 1, else 1 (no scaling), for a caller that scales its gradients in pieces. */
SK_API float sk_clip_grad_scale(double norm, double max_norm);
/* grads *= scale, elementwise (none at 1): sk_clip_grad_norm's scaling, for one piece. */
SK_API void sk_scale_grads(float *grads, size_t n, float scale);

/* ------------------------------------------------------------ convolutions */

/*
 * 2-d convolutions over NHWC batches, forward and backward, through oneDNN.
 *
 * Layouts: activations (B, height, width, channels), row-major. Weights
 * (out, k, k, in / groups) for groups = 1 ("ohwi": a k = 1 convolution's
 * weights are torch.nn.Linear's (out, in)); with groups G, G blocks of
 * (out / G, k, k, in / G) ("gohwi"), so a depthwise convolution (G = in =
 * out) is (channels, k, k). Bias (out). Padding is k / 2 on every side
 * (k odd), so a stride-1 convolution keeps the size and stride 2 halves it
 * (rounding up). sk_conv_create_torch takes torch.nn.Conv2d's conventions
 * instead: a padding of its own, any kernel, weights (out, in, kh, kw).
 *
 * Precision: SK_PRECISION_F32 computes in float. SK_PRECISION_BF16 rounds
 * the input, the weights and the output gradient to bfloat16 (nearest, ties
 * to even) before each primitive and accumulates in float: outputs, input
 * gradients and weight gradients are float, the master weights stay float
 * (the caller's), as PyTorch's bf16 autocast does for a convolution. Where
 * oneDNN has no bf16 kernel (below AVX-512), the same tensors are rounded to
 * bf16 values held in floats and run through its f32 kernels; each convolution
 * chooses at creation, and the environment variable SKINNER_CONV_BF16 (auto,
 * native, emulate) forces the choice (docs/reference.md).
 *
 * An sk_conv holds the primitives for one layer shape and is used by one
 * thread at a time (one sk_conv per worker). The forward runs a batch as
 * pieces of 1, 2, 4, ... images, each size's primitives made on first use and
 * kept (an image's output does not depend on its batch), so batch sizes that
 * change call by call cost no new primitives; the backward makes them for
 * its exact batch size (a few sizes are cached). Weights are reordered into
 * oneDNN's layout only when their values changed since the last call. oneDNN runs single-threaded
 * inside it: skinner parallelises over envs, not inside a layer.
 *
 * The backend: oneDNN is not linked into libskinner. The first
 * sk_conv_create* loads libskinner-dnnl.so (built and installed beside
 * libskinner when oneDNN, Debian's libdnnl-dev, was found), from the
 * environment variable SKINNER_CONV_BACKEND when set (a path to that file),
 * else from the folder of the library or program holding skinner, its
 * ../LIBDIR (lib, or lib/x86_64-linux-gnu as installed), the installed
 * library folder, and, for code running inside a build tree, that tree's
 * folder (docs/install.md). When it cannot be loaded, every
 * sk_conv_create* fails with SK_ERR_IO naming the files tried, why, and what
 * to install; the dense layers above never need it.
 */
typedef enum sk_precision { SK_PRECISION_F32, SK_PRECISION_BF16 } sk_precision;

typedef struct sk_conv_shape {
    int height, width, channels; /* the input's */
    int out_channels, kernel, stride, groups;
} sk_conv_shape;

/* Opaque: primitives and scratch for one shape. */
typedef struct sk_conv sk_conv;

/* The output side for an input side (padding kernel / 2). */
SK_API int sk_conv_out_side(int side, int kernel, int stride);
/* The output side as torch.nn.Conv2d's: (side + 2 * padding - kernel) / stride + 1. */
SK_API int sk_conv_torch_out_side(int side, int kernel, int stride, int padding);
/* Weight floats: out * kernel^2 * in / groups. */
SK_API size_t sk_conv_weight_floats(sk_conv_shape shape);
/* Multiply-adds per image of the forward. */
SK_API double sk_conv_macs(sk_conv_shape shape);

/* *out = a convolution of that shape (NULL on failure). SK_ERR_INVALID for a
 * shape oneDNN cannot run (channels not divisible by groups, an even kernel,
 * a side < 1) or, in bf16, a SKINNER_CONV_BF16 that is unknown or native
 * where oneDNN has no bf16 kernel, SK_ERR_NOMEM, SK_ERR_IO when the backend
 * cannot be loaded (above) or oneDNN fails to start. Free with sk_conv_destroy. */
SK_API sk_status sk_conv_create(sk_conv **out, sk_conv_shape shape, sk_precision precision);
/* As sk_conv_create with torch.nn.Conv2d's conventions: `padding` rows and
 * columns of zeros on every side (0..kernel / 2), any kernel that fits the
 * padded input, groups 1, weights (out, in, kh, kw) (and their gradient) as
 * torch's. */
SK_API sk_status sk_conv_create_torch(sk_conv **out, sk_conv_shape shape, int padding,
                                      sk_precision precision);
/* NULL-safe. */
SK_API void sk_conv_destroy(sk_conv *conv);
/* Makes the primitives for batch size B now (they are otherwise made on first
 * use), so that a shape oneDNN cannot run fails here, with a status naming
 * it, rather than at the first step (forward and backward treat a failure as
 * a bug and abort). SK_ERR_INVALID or SK_ERR_NOMEM. */
SK_API sk_status sk_conv_prepare(sk_conv *conv, int B);

/* y (B, oh, ow, out) = conv(x (B, h, w, in), w) + b; b may be NULL (no bias).
 * y is overwritten. */
SK_API void sk_conv_forward(sk_conv *conv, float *y, const float *x, const float *w,
                            const float *b, int B);
/* dx (B, h, w, in) += dy @ d conv / dx (dx may be NULL: x needs no gradient);
 * dw += d conv / dw; db += dy summed over B, oh, ow (NULL: no bias). x and w
 * are the forward's. */
SK_API void sk_conv_backward(sk_conv *conv, float *dx, float *dw, float *db, const float *dy,
                             const float *x, const float *w, int B);

/* bfloat16 rounding as the convolutions do it (nearest, ties to even; NaN
 * stays NaN, inf stays inf), as a float and as bits. */
SK_API float sk_bf16_round(float x);
SK_API void sk_f32_to_bf16(uint16_t *out, const float *x, size_t n);

#ifdef __cplusplus
}
#endif

#endif
