/*
 * Small row-major GEMMs for the learner's layer shapes (a few hundred rows by 1-256 columns),
 * written for AVX-512 and AVX2 + FMA (src/nn/isa/gemm.c) and read straight from the layers' own
 * arrays: no packing copies, no dependence on how OpenBLAS was built or pinned
 * (OPENBLAS_CORETYPE). docs/performance.md and bench/learner_gemm.c give the measurements that
 * chose them over OpenBLAS and libxsmm. Each call runs the kernels of the ISA level in use
 * (src/core/isa.h).
 *
 * Each call returns false, and touches nothing, where the shape is not one they are for (or
 * the level in use has no kernels: baseline): the caller then uses cblas_sgemm. Results are the
 * same bit for bit for the same inputs, shapes and level; a row's forward output does not
 * depend on the other rows.
 */
#ifndef SK_GEMM_SMALL_H
#define SK_GEMM_SMALL_H

#include <stdbool.h>

/* The most weights a caller transposes for sk_gemm_small_forward_t (64 KiB: the recurrent
 * step, src/nn/rnn.c), in its thread's scratch (sk_gemm_small_scratch). */
#define SK_GEMM_SMALL_MAX_WEIGHTS 16384

/* The scratch buffers of a thread: one per use, so that uses that nest (a recurrent step's
 * transposed weights, then a layer's forward inside it) never share one. */
typedef enum sk_gemm_scratch {
    SK_GEMM_SCRATCH_TRANSPOSE, /* the forward's W^T chunks, the narrow dweight's dw^T */
    SK_GEMM_SCRATCH_RECURRENT, /* a recurrent layer's W_hh^T for all its steps */
    SK_GEMM_SCRATCH_PACK,      /* a GEMM's column block of B, copied contiguous (src/nn/isa/gemm.c) */
    SK_GEMM_SCRATCH_COUNT,
} sk_gemm_scratch;

/* This thread's scratch buffer `which`, 64-byte aligned and at least SK_GEMM_SMALL_MAX_WEIGHTS
 * floats, or NULL if it could not be allocated (the caller then takes its fallback: cblas or
 * untransposed weights). Allocated at a thread's first use and freed when the thread ends;
 * the kernels keep under 16 KiB of stack a call, so they run on threads with small stacks
 * (Python's, an embedding host's; issue 53 ask 4). */
float *sk_gemm_small_scratch(sk_gemm_scratch which);

/* out (B, OC) = b (OC, or zeros if NULL) + inp (B, C) w^T, w (OC, C): a linear layer's
 * forward. Overwrites out. */
bool sk_gemm_small_forward(float *out, const float *inp, const float *w, const float *b, int B,
                           int C, int OC);

/* The same from wt, W^T (C, OC) made beforehand by sk_gemm_small_transpose (NULL: W^T made
 * here, as sk_gemm_small_forward does), where the level's forward reads W^T
 * (sk_gemm_small_forward_transposes); w itself elsewhere. The same bits as
 * sk_gemm_small_forward. */
bool sk_gemm_small_forward_pre(float *out, const float *inp, const float *w, const float *wt,
                               const float *b, int B, int C, int OC);

/* Whether the forward of a layer of C inputs and OC outputs reads W^T at the level in use: the
 * layers worth a transposed copy kept while their weights stay (issue 53 ask 7). */
bool sk_gemm_small_forward_transposes(int C, int OC);

/* W^T made on a forward's call (not from a copy kept): counted, process-wide, for the tests of
 * work done twice (tests/test_hotloop.c). */
void sk_gemm_small_count_transpose(void);
long long sk_gemm_small_transposes(void);

/* The same with the weights already transposed: wt (C, OC), C <= 256. A caller that applies
 * one weight many times (a recurrent step) transposes once with sk_gemm_small_transpose. */
bool sk_gemm_small_forward_t(float *out, const float *inp, const float *wt, const float *b,
                             int B, int C, int OC);

/* dst (cols, rows) = src (rows, cols)^T. */
void sk_gemm_small_transpose(float *dst, const float *src, int rows, int cols);

/* dinp (B, C) += dout (B, OC) w (OC, C): a linear layer's input gradient. */
bool sk_gemm_small_dinput(float *dinp, const float *dout, const float *w, int B, int C, int OC);

/* dw (OC, C) += dout (B, OC)^T inp (B, C): a linear layer's weight gradient. */
bool sk_gemm_small_dweight(float *dw, const float *dout, const float *inp, int B, int C, int OC);

#endif
