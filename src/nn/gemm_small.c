#include "gemm_small.h"

#include "kernels.h"

/* Each call goes to the kernels of the ISA level in use (src/nn/isa/gemm.c, src/nn/kernels.h). */

bool sk_gemm_small_forward(float *out, const float *inp, const float *w, const float *b, int B,
                           int C, int OC) {
    return sk_nn_kernels_used()->gemm_forward(out, inp, w, b, B, C, OC);
}

bool sk_gemm_small_forward_t(float *out, const float *inp, const float *wt, const float *b,
                             int B, int C, int OC) {
    return sk_nn_kernels_used()->gemm_forward_t(out, inp, wt, b, B, C, OC);
}

void sk_gemm_small_transpose(float *dst, const float *src, int rows, int cols) {
    sk_nn_kernels_used()->transpose(dst, src, rows, cols);
}

bool sk_gemm_small_dinput(float *dinp, const float *dout, const float *w, int B, int C, int OC) {
    return sk_nn_kernels_used()->gemm_dinput(dinp, dout, w, B, C, OC);
}

bool sk_gemm_small_dweight(float *dw, const float *dout, const float *inp, int B, int C, int OC) {
    return sk_nn_kernels_used()->gemm_dweight(dw, dout, inp, B, C, OC);
}
