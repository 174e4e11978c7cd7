#include "rnn.h"

#include "../core/core.h"
#include "../core/rng.h"
#include "gemm_small.h"
#include "kernels.h"
#include "nn.h"

#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

const char *const sk_rnn_cell_names[] = {"lstm", "gru", NULL};

int sk_rnn_num_gates(sk_rnn_cell cell) {
    SK_ASSERT(cell == SK_RNN_LSTM || cell == SK_RNN_GRU);
    return cell == SK_RNN_LSTM ? 4 : 3;
}

sk_rnn_tensor sk_rnn_tensor_info(sk_rnn rnn, int index) {
    static const char *const names[SK_RNN_NUM_TENSORS] = {"weight_ih_l0", "weight_hh_l0",
                                                          "bias_ih_l0", "bias_hh_l0"};
    SK_ASSERT(index >= 0 && index < SK_RNN_NUM_TENSORS);
    int gate_rows = sk_rnn_num_gates(rnn.cell) * rnn.hidden_size;
    const int cols[SK_RNN_NUM_TENSORS] = {rnn.input_size, rnn.hidden_size, 1, 1};
    size_t offset = 0;
    for (int k = 0; k < index; k++) offset += (size_t)gate_rows * (size_t)cols[k];
    return (sk_rnn_tensor){names[index], offset, gate_rows, cols[index]};
}

size_t sk_rnn_num_params(sk_rnn rnn) {
    sk_rnn_tensor last = sk_rnn_tensor_info(rnn, SK_RNN_NUM_TENSORS - 1);
    return last.offset + (size_t)last.rows;
}

void sk_rnn_init_params(float *params, sk_rnn rnn, uint64_t *rng) {
    double bound = 1.0 / sqrt((double)rnn.hidden_size);
    size_t count = sk_rnn_num_params(rnn);
    for (size_t i = 0; i < count; i++) params[i] = (float)sk_rng_uniform(rng, -bound, bound);
}

/* The block's tensors as pointers; const or not, the offsets are the same. */
#define TENSOR(block, rnn, index) ((block) + sk_rnn_tensor_info(rnn, index).offset)

/* ---- the work buffer ---- */

/* The forward's cache (read by the backward), then the backward's scratch. An entry a cell
 * does not use is NULL and takes no room. */
typedef struct rnn_work {
    float *prev_h;      /* (T, B, H) the state entering each step, resets applied */
    float *prev_c;      /* (T, B, H) LSTM: the cell entering each step, resets applied */
    float *gates;       /* (T, B, G*H) the input projection, then the activated gates */
    float *cell_cache;  /* (T, B, H) LSTM: tanh(c'); GRU: W_hn h + b_hn, which r scales */
    float *hidden_proj; /* (B, G*H) one step's recurrent projection W_hh h + b_hh */
    float *dgates_ih;   /* (T, B, G*H) gradient of the input projections */
    float *dgates_hh;   /* (T, B, G*H) of the recurrent ones: a GRU's differ in n (r scales
                           W_hn h), an LSTM's are the input ones and alias them */
    float *dh_prev;     /* (B, H) gradient of the state entering the step */
    float *dc_prev;     /* (B, H) LSTM: of the cell entering the step */
} rnn_work;

/* Carves work out of base (NULL: only counts) and returns its size in floats. */
static size_t work_layout(rnn_work *work, float *base, sk_rnn rnn, int T, int B) {
    bool lstm = rnn.cell == SK_RNN_LSTM;
    size_t state = (size_t)B * (size_t)rnn.hidden_size;
    size_t step_gates = state * (size_t)sk_rnn_num_gates(rnn.cell), steps = (size_t)T;
    struct {
        float **slot;
        size_t size;
    } entries[] = {
        {&work->prev_h, steps * state},
        {&work->prev_c, lstm ? steps * state : 0},
        {&work->gates, steps * step_gates},
        {&work->cell_cache, steps * state},
        {&work->hidden_proj, step_gates},
        {&work->dgates_ih, steps * step_gates},
        {&work->dgates_hh, lstm ? 0 : steps * step_gates},
        {&work->dh_prev, state},
        {&work->dc_prev, lstm ? state : 0},
    };
    size_t used = 0;
    for (size_t k = 0; k < sizeof entries / sizeof entries[0]; k++) {
        *entries[k].slot = base && entries[k].size ? base + used : NULL;
        used += entries[k].size;
    }
    if (lstm) work->dgates_hh = work->dgates_ih;
    return used;
}

size_t sk_rnn_work_size(sk_rnn rnn, int T, int B) {
    rnn_work unused;
    return work_layout(&unused, NULL, rnn, T, B);
}

/* ---- the cells' elementwise math, one step of B rows ---- */

/* 1 / (1 + e^-x) through the vectorisable exp (libm's expf keeps a loop scalar); unlike
 * (1 + tanh(x/2)) / 2 it keeps its relative accuracy where the gate is nearly shut. */
/* The cells at the ISA level in use (src/nn/isa/cells.c). */
static void lstm_cell_forward(float *h, float *c, float *gates, float *tanh_c,
                              const float *hidden_proj, const float *prev_c, int B, int H) {
    sk_nn_kernels_used()->lstm_cell_forward(h, c, gates, tanh_c, hidden_proj, prev_c, B, H);
}

static void gru_cell_forward(float *h, float *gates, float *hidden_n, const float *hidden_proj,
                             const float *prev_h, int B, int H) {
    sk_nn_kernels_used()->gru_cell_forward(h, gates, hidden_n, hidden_proj, prev_h, B, H);
}

static void lstm_cell_backward(float *dgates, float *dh_prev, float *dc_prev, const float *dh,
                               const float *gates, const float *tanh_c, const float *prev_c,
                               int B, int H) {
    sk_nn_kernels_used()->lstm_cell_backward(dgates, dh_prev, dc_prev, dh, gates, tanh_c, prev_c,
                                             B, H);
}

static void gru_cell_backward(float *dgates_ih, float *dgates_hh, float *dh_prev, const float *dh,
                              const float *gates, const float *hidden_n, const float *prev_h,
                              int B, int H) {
    sk_nn_kernels_used()->gru_cell_backward(dgates_ih, dgates_hh, dh_prev, dh, gates, hidden_n,
                                            prev_h, B, H);
}

/* ---- the sequence ---- */

/* dst (B, H) = src, with the rows of a reset (and all rows when src is NULL) zero. */
static void enter_state(float *dst, const float *src, const uint8_t *reset, int B, int H) {
    size_t row_bytes = (size_t)H * sizeof(float);
    for (int row = 0; row < B; row++) {
        float *to = dst + (size_t)row * (size_t)H;
        if (!src || (reset && reset[row])) memset(to, 0, row_bytes);
        else memcpy(to, src + (size_t)row * (size_t)H, row_bytes);
    }
}

/* Zeroes the rows of grad (B, H) whose state was reset: no gradient flows through a reset. */
static void stop_at_resets(float *grad, const uint8_t *reset, int B, int H) {
    if (!grad || !reset) return;
    for (int row = 0; row < B; row++)
        if (reset[row]) memset(grad + (size_t)row * (size_t)H, 0, (size_t)H * sizeof(float));
}

static void add_into(float *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] += src[i];
}

void sk_rnn_forward(float *h, float *c, float *work, const float *x, const float *h0,
                    const float *c0, const uint8_t *resets, const float *params, sk_rnn rnn,
                    int T, int B) {
    sk_rnn_forward_pre(h, c, work, x, h0, c0, resets, params, NULL, rnn, T, B);
}

void sk_rnn_forward_pre(float *h, float *c, float *work, const float *x, const float *h0,
                        const float *c0, const uint8_t *resets, const float *params,
                        const float *params_t, sk_rnn rnn, int T, int B) {
    bool lstm = rnn.cell == SK_RNN_LSTM;
    SK_ASSERT(lstm ? c != NULL : (c == NULL && c0 == NULL));
    rnn_work cache;
    work_layout(&cache, work, rnn, T, B);
    int H = rnn.hidden_size, gate_width = sk_rnn_num_gates(rnn.cell) * H;
    size_t state = (size_t)B * (size_t)H, step_gates = (size_t)B * (size_t)gate_width;
    sk_linear_forward_pre(cache.gates, x, TENSOR(params, rnn, SK_RNN_WEIGHT_IH),
                          params_t ? TENSOR(params_t, rnn, SK_RNN_WEIGHT_IH) : NULL,
                          TENSOR(params, rnn, SK_RNN_BIAS_IH), T * B, rnn.input_size,
                          gate_width);
    /* W_hh transposed once for all T steps where the small kernels take it (a 64-wide LSTM's
     * is 64 KiB): per step it cost as much as the step's GEMM of B rows (bench/learner_gemm.c);
     * a rollout's steps read the copy kept since the weights last changed */
    const float *weight_hh = TENSOR(params, rnn, SK_RNN_WEIGHT_HH);
    const float *weight_hh_t = NULL;
    if (sk_gemm_small_forward_transposes(H, gate_width)) { /* not at baseline: cblas reads W */
        float *scratch = NULL;
        if (params_t) {
            weight_hh_t = TENSOR(params_t, rnn, SK_RNN_WEIGHT_HH);
        } else if ((size_t)gate_width * (size_t)H <= SK_GEMM_SMALL_MAX_WEIGHTS &&
                   (scratch = sk_gemm_small_scratch(SK_GEMM_SCRATCH_RECURRENT))) {
            sk_gemm_small_transpose(scratch, weight_hh, gate_width, H);
            sk_gemm_small_count_transpose();
            weight_hh_t = scratch;
        }
    }
    bool transposed = weight_hh_t != NULL;
    for (int t = 0; t < T; t++) {
        const uint8_t *reset = resets ? resets + (size_t)t * (size_t)B : NULL;
        float *prev_h = cache.prev_h + (size_t)t * state;
        enter_state(prev_h, t == 0 ? h0 : h + (size_t)(t - 1) * state, reset, B, H);
        const float *bias_hh = TENSOR(params, rnn, SK_RNN_BIAS_HH);
        if (!transposed || !sk_gemm_small_forward_t(cache.hidden_proj, prev_h, weight_hh_t,
                                                     bias_hh, B, H, gate_width))
            sk_linear_forward(cache.hidden_proj, prev_h, weight_hh, bias_hh, B, H, gate_width);
        float *gates = cache.gates + (size_t)t * step_gates;
        float *cell_cache = cache.cell_cache + (size_t)t * state;
        if (lstm) {
            float *prev_c = cache.prev_c + (size_t)t * state;
            enter_state(prev_c, t == 0 ? c0 : c + (size_t)(t - 1) * state, reset, B, H);
            lstm_cell_forward(h + (size_t)t * state, c + (size_t)t * state, gates, cell_cache,
                              cache.hidden_proj, prev_c, B, H);
        } else {
            gru_cell_forward(h + (size_t)t * state, gates, cell_cache, cache.hidden_proj, prev_h,
                             B, H);
        }
    }
}

void sk_rnn_backward(float *dx, float *dh0, float *dc0, float *dparams, float *work,
                     const float *dh, const float *x, const uint8_t *resets, const float *params,
                     sk_rnn rnn, int T, int B) {
    bool lstm = rnn.cell == SK_RNN_LSTM;
    SK_ASSERT(lstm || dc0 == NULL);
    rnn_work cache;
    work_layout(&cache, work, rnn, T, B);
    int H = rnn.hidden_size, gate_width = sk_rnn_num_gates(rnn.cell) * H;
    size_t state = (size_t)B * (size_t)H, step_gates = (size_t)B * (size_t)gate_width;
    const float *weight_hh = TENSOR(params, rnn, SK_RNN_WEIGHT_HH);
    /* nothing flows back from beyond the sequence */
    memset(cache.dh_prev, 0, state * sizeof(float));
    if (lstm) memset(cache.dc_prev, 0, state * sizeof(float));
    for (int t = T - 1; t >= 0; t--) {
        const float *gates = cache.gates + (size_t)t * step_gates;
        const float *cell_cache = cache.cell_cache + (size_t)t * state;
        float *dgates_hh = cache.dgates_hh + (size_t)t * step_gates;
        if (lstm)
            lstm_cell_backward(dgates_hh, cache.dh_prev, cache.dc_prev, dh + (size_t)t * state,
                               gates, cell_cache, cache.prev_c + (size_t)t * state, B, H);
        else
            gru_cell_backward(cache.dgates_ih + (size_t)t * step_gates, dgates_hh, cache.dh_prev,
                              dh + (size_t)t * state, gates, cell_cache,
                              cache.prev_h + (size_t)t * state, B, H);
        /* dh_prev (B, H) += dgates_hh (B, G*H) @ W_hh (G*H, H) */
        if (!sk_gemm_small_dinput(cache.dh_prev, dgates_hh, weight_hh, B, H, gate_width))
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, gate_width, 1.0f,
                        dgates_hh, gate_width, weight_hh, H, 1.0f, cache.dh_prev, H);
        const uint8_t *reset = resets ? resets + (size_t)t * (size_t)B : NULL;
        stop_at_resets(cache.dh_prev, reset, B, H);
        stop_at_resets(cache.dc_prev, reset, B, H);
    }
    if (dh0) add_into(dh0, cache.dh_prev, state);
    if (dc0) add_into(dc0, cache.dc_prev, state);
    /* The weight gradients of all T steps as one GEMM each, over T*B rows. A reset row's
     * entering state is zero in prev_h, so it adds nothing to dW_hh, but its bias still did. */
    sk_linear_backward(dx, TENSOR(dparams, rnn, SK_RNN_WEIGHT_IH),
                       TENSOR(dparams, rnn, SK_RNN_BIAS_IH), cache.dgates_ih, x,
                       TENSOR(params, rnn, SK_RNN_WEIGHT_IH), T * B, rnn.input_size, gate_width);
    sk_linear_backward(NULL, TENSOR(dparams, rnn, SK_RNN_WEIGHT_HH),
                       TENSOR(dparams, rnn, SK_RNN_BIAS_HH), cache.dgates_hh, cache.prev_h,
                       weight_hh, T * B, H, gate_width);
}

void sk_rnn_step(float *h, float *c, float *work, const float *x, const uint8_t *reset,
                 const float *params, sk_rnn rnn, int B) {
    sk_rnn_forward(h, c, work, x, h, c, reset, params, rnn, 1, B);
}

void sk_rnn_step_pre(float *h, float *c, float *work, const float *x, const uint8_t *reset,
                     const float *params, const float *params_t, sk_rnn rnn, int B) {
    sk_rnn_forward_pre(h, c, work, x, h, c, reset, params, params_t, rnn, 1, B);
}
