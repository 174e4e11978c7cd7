/*
 * 2-d convolutions with any padding, stride and kernel, as torch.nn.Conv2d (groups 1,
 * dilation 1), over channels-last batches: im2col + CBLAS sgemm, batched over the whole
 * batch (one GEMM per layer and pass). Used by the policies' CNN encoder
 * (policy.encoder = cnn; src/policy/encoder.c).
 *
 * Why not conv.c (oneDNN): its layer fixes the padding at kernel / 2 with odd kernels and
 * keeps weights as (out, kh, kw, in); the encoder takes any padding and kernel from config
 * and keeps torch's (out, in, kh, kw) so a checkpoint's tensors load into torch.nn.Conv2d
 * as they are. oneDNN's speed on these shapes is not measured yet.
 *
 * Layouts: x (B, height, width, channels) row-major (NHWC: skinner's observations are
 * channels last; torch's NCHW input is x.permute(0, 3, 1, 2)); y (B, out_h, out_w,
 * out_channels); w (out_channels, channels, kernel_h, kernel_w) as torch; b (out_channels).
 * The im2col matrix is (B * out_h * out_w, channels * kernel_h * kernel_w), its columns in
 * torch's weight order, so the forward is cols @ w^T.
 */
#ifndef SK_NN_CONV2D_H
#define SK_NN_CONV2D_H

#include <stddef.h>

typedef struct sk_conv2d_shape {
    int height, width, channels; /* the input's */
    int out_channels, kernel_h, kernel_w, stride, padding;
} sk_conv2d_shape;

/* The output side for an input side; < 1 when the map is empty. */
int sk_conv2d_out_side(int side, int kernel, int stride, int padding);
/* Floats of one image's im2col rows: out_h * out_w * channels * kernel_h * kernel_w. */
size_t sk_conv2d_cols_floats(sk_conv2d_shape shape);
/* Floats of one output image: out_h * out_w * out_channels. */
size_t sk_conv2d_out_floats(sk_conv2d_shape shape);
/* Multiply-adds of one image's forward. */
double sk_conv2d_macs(sk_conv2d_shape shape);

/* y = conv(x, w) + b; cols is scratch of B * sk_conv2d_cols_floats floats. */
void sk_conv2d_forward(float *y, float *cols, const float *x, const float *w, const float *b,
                       sk_conv2d_shape shape, int B);
/* dx += d/dx (NULL: not wanted), dw += , db += , from dy; cols and dcols are scratch of
 * B * sk_conv2d_cols_floats floats each (cols is rebuilt from x). */
void sk_conv2d_backward(float *dx, float *dw, float *db, float *cols, float *dcols,
                        const float *dy, const float *x, const float *w, sk_conv2d_shape shape,
                        int B);

#endif
