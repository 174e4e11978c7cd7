/*
 * SAC's layers (src/train/sac_core.h): a ReLU MLP over the nn layers, and the tanh-squashed
 * Gaussian that turns the actor's head into actions and their log-probabilities. Forward and
 * backward pairs in llm.c's manner; backward adds into every gradient it is given.
 */
#ifndef SK_SAC_NET_H
#define SK_SAC_NET_H

#include "sac_core.h"

#include <stddef.h>

/* Linear layers with ReLU between them (none after the last), offsets into the net's own
 * block of parameters: weight (out, in) then bias (out). */
typedef struct sk_sac_net {
    int num_linear; /* hidden layers + 1 */
    int in[SK_SAC_MAX_LAYERS + 1], out[SK_SAC_MAX_LAYERS + 1];
    size_t weight[SK_SAC_MAX_LAYERS + 1], bias[SK_SAC_MAX_LAYERS + 1];
    /* the layers whose forward reads W^T at the ISA level in use (sk_gemm_small_forward_
     * transposes): their W^T at wt[l] in a block of wt_floats kept beside the weights */
    bool transposed[SK_SAC_MAX_LAYERS + 1];
    size_t wt[SK_SAC_MAX_LAYERS + 1], wt_floats;
} sk_sac_net;

/* out (rows, last out) from inp (rows, in[0]); acts[l] (rows, out[l]) keeps each hidden layer's
 * ReLU output for the backward. wt: the net's W^T copies of these params (sk_sac_net_transpose),
 * or NULL (each forward transposes its own). The same bits either way. */
void sk_sac_net_forward(const sk_sac_net *net, const float *params, const float *wt,
                        const float *inp, int rows, float *const *acts, float *out);
/* Layer l's W^T into wt (the net's block of wt_floats), where the layer has a copy. */
void sk_sac_net_transpose(const sk_sac_net *net, const float *params, float *wt, int l);
/* From dout (rows, last out) back through the forward's acts: the parameters' gradients into
 * grads (NULL: none wanted, the weight GEMMs are skipped) and inp's into dinp (NULL: none).
 * scratch holds 2 * rows * the widest hidden layer. */
void sk_sac_net_backward(const sk_sac_net *net, const float *params, float *grads,
                         const float *inp, float *const *acts, const float *dout, float *dinp,
                         int rows, float *scratch);
/* Multiply-adds of one row's forward, and of its first layer alone. */
double sk_sac_net_macs(const sk_sac_net *net);
double sk_sac_net_first_macs(const sk_sac_net *net);

/* The squashed Gaussian over head (rows, 2 dim) = [mean | raw log-std] per row:
 *   log_std = MIN + (MAX - MIN) (tanh(raw) + 1) / 2, u = mean + exp(log_std) noise,
 *   actions = tanh(u) scale + bias,
 *   logp = sum_d [-noise^2 / 2 - log_std - log(2 pi) / 2 - log(scale (1 - tanh(u)^2) + 1e-6)].
 * squashed (rows, dim) and log_std_tanh (rows, dim) keep tanh(u) and tanh(raw) for the
 * backward; 1 - tanh^2 is taken from exp(-2 |x|), not from tanh, so that it keeps its
 * precision where tanh is near +-1. */
void sk_sac_squash_forward(const float *head, const float *noise, int rows, int dim,
                           const float *scale, const float *bias, float *actions, float *logp,
                           float *squashed, float *log_std_tanh);
/* dhead (rows, 2 dim) += the gradient of sum(dactions * actions) + sum(dlogp * logp), from the
 * forward's noise, squashed and log_std_tanh. dactions (rows, dim) may be NULL. */
void sk_sac_squash_backward(const float *head, const float *noise, int rows, int dim,
                            const float *scale, const float *squashed,
                            const float *log_std_tanh, const float *dactions,
                            const float *dlogp, float *dhead);

#endif
