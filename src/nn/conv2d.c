/* im2col + CBLAS sgemm convolutions (contract and the reason for not using conv.c in
 * conv2d.h). */
#include "conv2d.h"

#include <cblas.h>
#include <stdbool.h>
#include <string.h>

int sk_conv2d_out_side(int side, int kernel, int stride, int padding) {
    int span = side + 2 * padding - kernel;
    return span < 0 ? 0 : span / stride + 1;
}

static int out_h(sk_conv2d_shape s) { return sk_conv2d_out_side(s.height, s.kernel_h, s.stride, s.padding); }
static int out_w(sk_conv2d_shape s) { return sk_conv2d_out_side(s.width, s.kernel_w, s.stride, s.padding); }
static size_t patch(sk_conv2d_shape s) { return (size_t)s.channels * (size_t)s.kernel_h * (size_t)s.kernel_w; }

size_t sk_conv2d_cols_floats(sk_conv2d_shape s) { return (size_t)out_h(s) * (size_t)out_w(s) * patch(s); }
size_t sk_conv2d_out_floats(sk_conv2d_shape s) {
    return (size_t)out_h(s) * (size_t)out_w(s) * (size_t)s.out_channels;
}
double sk_conv2d_macs(sk_conv2d_shape s) {
    return (double)out_h(s) * (double)out_w(s) * (double)patch(s) * (double)s.out_channels;
}

/* The patch of every output position, zeros where it reaches into the padding. With
 * scatter, the other way: dx += each patch's values at the positions they came from. */
static void im2col(float *cols, float *x_mut, const float *x, sk_conv2d_shape s, int B,
                   int scatter) {
    int OH = out_h(s), OW = out_w(s), C = s.channels, KH = s.kernel_h, KW = s.kernel_w;
    size_t K = patch(s), kk = (size_t)KH * (size_t)KW;
    for (int b = 0; b < B; b++)
        for (int oy = 0; oy < OH; oy++)
            for (int ox = 0; ox < OW; ox++) {
                float *row = cols + (((size_t)b * (size_t)OH + (size_t)oy) * (size_t)OW + (size_t)ox) * K;
                for (int kh = 0; kh < KH; kh++) {
                    int iy = oy * s.stride - s.padding + kh;
                    for (int kw = 0; kw < KW; kw++) {
                        int ix = ox * s.stride - s.padding + kw;
                        float *col = row + (size_t)kh * (size_t)KW + (size_t)kw;
                        bool inside = iy >= 0 && iy < s.height && ix >= 0 && ix < s.width;
                        size_t at = inside ? (((size_t)b * (size_t)s.height + (size_t)iy) * (size_t)s.width +
                                              (size_t)ix) * (size_t)C
                                           : 0;
                        for (int c = 0; c < C; c++) {
                            if (scatter) {
                                if (inside) x_mut[at + (size_t)c] += col[(size_t)c * kk];
                            } else {
                                col[(size_t)c * kk] = inside ? x[at + (size_t)c] : 0.0f;
                            }
                        }
                    }
                }
            }
}

void sk_conv2d_forward(float *y, float *cols, const float *x, const float *w, const float *b,
                       sk_conv2d_shape s, int B) {
    int rows = B * out_h(s) * out_w(s), K = (int)patch(s), OC = s.out_channels;
    im2col(cols, NULL, x, s, B, 0);
    for (int r = 0; r < rows; r++) memcpy(y + (size_t)r * (size_t)OC, b, (size_t)OC * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, OC, K, 1.0f, cols, K, w, K, 1.0f,
                y, OC);
}

void sk_conv2d_backward(float *dx, float *dw, float *db, float *cols, float *dcols,
                        const float *dy, const float *x, const float *w, sk_conv2d_shape s,
                        int B) {
    int rows = B * out_h(s) * out_w(s), K = (int)patch(s), OC = s.out_channels;
    im2col(cols, NULL, x, s, B, 0);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, K, rows, 1.0f, dy, OC, cols, K, 1.0f,
                dw, K);
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < OC; o++) db[o] += dy[(size_t)r * (size_t)OC + (size_t)o];
    if (!dx) return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, K, OC, 1.0f, dy, OC, w, K, 0.0f,
                dcols, K);
    im2col(dcols, dx, NULL, s, B, 1);
}
