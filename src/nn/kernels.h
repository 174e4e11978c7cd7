/*
 * The hot kernels, one table of functions per ISA level (src/core/isa.h): the learner's small
 * GEMMs, tanh, sigmoid, ReLU, the recurrent cells, the bias gradient, Adam, a two-action categorical's rows and SAC's squashed Gaussian. Each level's table is the same sources compiled
 * with that level's flags (src/nn/isa/level_*.c); sk_nn_kernels() returns the table of the
 * level in use, chosen once per process. The public functions (sk_linear_*, sk_tanh_forward,
 * sk_adam_update, sk_gemm_small_*) call through it, so a caller never picks a level.
 */
#ifndef SK_NN_KERNELS_H
#define SK_NN_KERNELS_H

#include "../core/isa.h"
#include "skinner/nn.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SAC's squashed Gaussian (the sac_squash_* kernels; src/train/sac_core.h's networks) */
#define SK_SAC_LOG_STD_MIN (-5.0f) /* CleanRL's LOG_STD_MIN and LOG_STD_MAX */
#define SK_SAC_LOG_STD_MAX 2.0f
#define SK_SAC_LOG_EPS 1e-6f       /* inside the tanh correction's log, as CleanRL */

typedef struct sk_nn_kernels {
    sk_isa_level level;
    /* src/nn/gemm_small.h: false, touching nothing, for a shape they are not for */
    bool (*gemm_forward)(float *out, const float *inp, const float *w, const float *wt,
                         const float *b, int B, int C, int OC);
    bool (*gemm_forward_transposes)(int C, int OC);
    bool (*gemm_forward_t)(float *out, const float *inp, const float *wt, const float *b, int B,
                           int C, int OC);
    bool (*gemm_dinput)(float *dinp, const float *dout, const float *w, int B, int C, int OC);
    bool (*gemm_dweight)(float *dw, const float *dout, const float *inp, int B, int C, int OC);
    void (*transpose)(float *dst, const float *src, int rows, int cols);
    float (*tanhf)(float x);
    void (*tanh_forward)(float *out, const float *inp, size_t n);
    void (*tanh_backward)(float *dinp, const float *dout, const float *out, size_t n);
    void (*bias_grad)(float *db, const float *dout, int B, int OC);
    void (*adam_update)(float *params, const float *grads, float *m, float *v, size_t n, float lr,
                        sk_adam adam, int64_t step);
    void (*relu_forward)(float *out, const float *inp, size_t n);
    void (*relu_backward)(float *dinp, const float *dout, const float *out, size_t n);
    void (*sigmoid_forward)(float *out, const float *inp, size_t n); /* the recurrent cells' */
    /* the recurrent cells' elementwise steps, B rows of H (src/nn/rnn.c's contracts); no two
     * of a call's arrays overlap */
    void (*lstm_cell_forward)(float *h, float *c, float *gates, float *tanh_c,
                              const float *hidden_proj, const float *prev_c, int B, int H);
    void (*gru_cell_forward)(float *h, float *gates, float *hidden_n, const float *hidden_proj,
                             const float *prev_h, int B, int H);
    void (*lstm_cell_backward)(float *dgates, float *dh_prev, float *dc_prev, const float *dh,
                               const float *gates, const float *tanh_c, const float *prev_c,
                               int B, int H);
    void (*gru_cell_backward)(float *dgates_ih, float *dgates_hh, float *dh_prev,
                              const float *dh, const float *gates, const float *hidden_n,
                              const float *prev_h, int B, int H);
    /* a two-action categorical's rows (src/policy/categorical.c's contracts for one head of
     * two and no mask): sample draws as sk_rng_float would, row by row, and advances *rng */
    void (*binary_sample)(const float *logits, int B, uint64_t *rng, bool greedy,
                          int32_t *actions, float *logp);
    void (*binary_evaluate)(const float *logits, const int32_t *actions, int B, float *logp,
                            float *entropy);
    void (*binary_backward)(const float *logits, const int32_t *actions, int B,
                            const float *dlogp, const float *dentropy, float *dlogits);
    /* SAC's tanh-squashed Gaussian (src/train/sac_net.h's sk_sac_squash_forward and
     * sk_sac_squash_backward, the same contracts) */
    void (*sac_squash_forward)(const float *head, const float *noise, int rows, int dim,
                               const float *scale, const float *bias, float *actions,
                               float *logp, float *squashed, float *log_std_tanh);
    void (*sac_squash_backward)(const float *head, const float *noise, int rows, int dim,
                                const float *scale, const float *squashed,
                                const float *log_std_tanh, const float *dactions,
                                const float *dlogp, float *dhead);
} sk_nn_kernels;

/* The table of the level in use (sk_isa_level_used). */
const sk_nn_kernels *sk_nn_kernels_used(void);

/* The table of a given level, or NULL where this build has none (an AVX level off x86-64).
 * For tests and benchmarks that compare levels in one process; the caller checks that the CPU
 * has the level (sk_isa_level_detected) before calling through it. */
const sk_nn_kernels *sk_nn_kernels_at(sk_isa_level level);

#endif
