/*
 * One recurrent layer, LSTM or GRU, as a forward/backward pair in the style of nn.h: outputs
 * first, gradients d-prefixed, shapes last, backward accumulates (+=), row-major.
 *
 * Parameters are one flat block in PyTorch's order and layout for a single layer, so that
 * torch.cat([p.flatten() for p in module.parameters()]) of a torch.nn.LSTM / torch.nn.GRU
 * (num_layers=1, bias=True, batch_first=False) is exactly the block:
 *     weight_ih_l0 (G*H, I), weight_hh_l0 (G*H, H), bias_ih_l0 (G*H), bias_hh_l0 (G*H)
 * with the gates stacked in PyTorch's order, G of them:
 *     LSTM (G = 4): i, f, g, o      c' = f c + i g,  h' = o tanh(c')
 *     GRU  (G = 3): r, z, n         n = tanh(W_in x + b_in + r (W_hn h + b_hn)),
 *                                   h' = (1 - z) n + z h
 *
 * A sequence is T steps of B rows (the envs of one worker): x (T, B, I), h (T, B, H). Where
 * resets[t][b] is 1 an episode started at step t in row b: the state entering step t is zero
 * for that row, and no gradient flows back through it. One sequence may so span episodes.
 *
 * Training, sketched (error handling left out):
 *     sk_rnn rnn = {SK_RNN_LSTM, obs_size, hidden};
 *     float *work = malloc(sk_rnn_work_size(rnn, T, B) * sizeof(float));
 *     sk_rnn_forward(h, c, work, x, h0, c0, resets, params, rnn, T, B);
 *     ... the loss gives dh (T, B, H) ...
 *     sk_rnn_backward(NULL, NULL, NULL, grads, work, dh, x, resets, params, rnn, T, B);
 * Acting: sk_rnn_step(state_h, state_c, work, obs, dones, params, rnn, B) once per env step.
 */
#ifndef SK_RNN_H
#define SK_RNN_H

#include <stddef.h>
#include <stdint.h>

typedef enum sk_rnn_cell { SK_RNN_LSTM, SK_RNN_GRU } sk_rnn_cell;
extern const char *const sk_rnn_cell_names[]; /* "lstm", "gru"; NULL-terminated, by enum value */

/* What the caller fills in, passed by value. */
typedef struct sk_rnn {
    sk_rnn_cell cell;
    int input_size;  /* I */
    int hidden_size; /* H */
} sk_rnn;

/* The gates stacked in the weights: 4 for an LSTM, 3 for a GRU. */
int sk_rnn_num_gates(sk_rnn_cell cell);

/* The four tensors of the parameter block, in block order. */
enum { SK_RNN_WEIGHT_IH, SK_RNN_WEIGHT_HH, SK_RNN_BIAS_IH, SK_RNN_BIAS_HH, SK_RNN_NUM_TENSORS };

typedef struct sk_rnn_tensor {
    const char *name; /* PyTorch's state-dict name: "weight_ih_l0", ... */
    size_t offset;    /* into the parameter block, in floats */
    int rows, cols;   /* cols is 1 for a bias */
} sk_rnn_tensor;

/* Tensor `index` (SK_RNN_WEIGHT_IH ... SK_RNN_BIAS_HH) of rnn's parameter block. */
sk_rnn_tensor sk_rnn_tensor_info(sk_rnn rnn, int index);
/* Floats in the parameter block: G*H * (I + H + 2). */
size_t sk_rnn_num_params(sk_rnn rnn);

/* PyTorch's default for its RNN modules (RNNBase.reset_parameters): every weight and bias
 * uniform in [-1/sqrt(H), 1/sqrt(H)), drawn from rng in block order. The same distribution,
 * not the same numbers: torch's generator is not skinner's. */
void sk_rnn_init_params(float *params, sk_rnn rnn, uint64_t *rng);

/* Floats of the work buffer of a sequence of T steps of B rows: the forward's cache for the
 * backward (per step and row, 7 H floats for an LSTM, 5 H for a GRU), then the backward's
 * scratch (4 H, 6 H). */
size_t sk_rnn_work_size(sk_rnn rnn, int T, int B);

/* Runs T steps from the state h0 (B, H) (LSTM: and c0 (B, H)); either may be NULL for a zero
 * state. Writes every step's output h (T, B, H) (LSTM: and cell state c (T, B, H); a GRU takes
 * c = c0 = NULL), and fills work (sk_rnn_work_size(rnn, T, B) floats) for sk_rnn_backward.
 * resets (T, B) may be NULL for no resets. The input projection of all T steps is one GEMM,
 * the recurrent projection one GEMM over the B rows a step. h0 and c0 are read before h and c
 * are written, so they may alias h and c when T = 1 (which is what sk_rnn_step does). */
void sk_rnn_forward(float *h, float *c, float *work, const float *x, const float *h0,
                    const float *c0, const uint8_t *resets, const float *params, sk_rnn rnn,
                    int T, int B);

/* The same with params_t: the block's layout, holding W^T (sk_gemm_small_transpose) of each
 * weight the forward transposes (sk_gemm_small_forward_transposes), made since the weights last
 * changed; NULL: transposed here. The same bits. */
void sk_rnn_forward_pre(float *h, float *c, float *work, const float *x, const float *h0,
                        const float *c0, const uint8_t *resets, const float *params,
                        const float *params_t, sk_rnn rnn, int T, int B);

/* Backpropagation through the T steps of the last sk_rnn_forward into work, given dh (T, B, H),
 * the loss's gradient with respect to each step's output h (the state after step T-1 gets none:
 * truncated BPTT). Accumulates into dparams (sk_rnn_num_params floats, the block's layout),
 * dx (T, B, I), dh0 (B, H) and dc0 (B, H, LSTM only); dx, dh0 and dc0 may be NULL. x, resets
 * and params must be those of the forward. The forward's part of work is left as it was, so
 * backward may run again on it. */
void sk_rnn_backward(float *dx, float *dh0, float *dc0, float *dparams, float *work,
                     const float *dh, const float *x, const uint8_t *resets, const float *params,
                     sk_rnn rnn, int T, int B);

/* One step for acting: the state h (B, H) (LSTM: and cell c (B, H); a GRU takes c = NULL) is
 * advanced in place from x (B, I). reset (B) may be NULL; where reset[b] is 1 row b's state is
 * zeroed before the step (its episode starts with this x). work: sk_rnn_work_size(rnn, 1, B)
 * floats. The same arithmetic as sk_rnn_forward with T = 1. */
void sk_rnn_step(float *h, float *c, float *work, const float *x, const uint8_t *reset,
                 const float *params, sk_rnn rnn, int B);
/* The same from params_t (as sk_rnn_forward_pre). */
void sk_rnn_step_pre(float *h, float *c, float *work, const float *x, const uint8_t *reset,
                     const float *params, const float *params_t, sk_rnn rnn, int B);

#endif
