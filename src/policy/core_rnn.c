/*
 * The recurrent cores (policy.core = lstm | gru): one recurrent layer (nn/rnn.h) whose
 * output h is what the heads read. Sequences are time-major, (T, B, ...), the layout sk_rnn
 * takes: every step of the B rows is one GEMM for the recurrent term, never a loop over
 * envs. An env's state is h (GRU), or h then c (LSTM), core_size floats each; the rows'
 * parts are split into (B, core_size) blocks for sk_rnn and joined back after a step.
 */
#include "../core/core.h"
#include "../nn/nn.h"
#include "policy.h"

#include <string.h>

static bool has_cell(const sk_policy *policy) { return policy->rnn.cell == SK_RNN_LSTM; }

/* Copies part `part` (size floats) of B rows of states (B, parts * size) to or from a block
 * (B, size). */
static void part_copy(float *block, float *rows, int part, int parts, int size, int B,
                      bool to_block) {
    size_t C = (size_t)size, S = (size_t)parts * C;
    if (parts == 1) { /* the rows are the block */
        if (to_block) memcpy(block, rows, (size_t)B * C * sizeof(float));
        else memcpy(rows, block, (size_t)B * C * sizeof(float));
        return;
    }
    for (int b = 0; b < B; b++) {
        float *row = rows + (size_t)b * S + (size_t)part * C, *out = block + (size_t)b * C;
        if (to_block) memcpy(out, row, C * sizeof(float));
        else memcpy(row, out, C * sizeof(float));
    }
}

static void layout(sk_policy *policy, size_t *offset, int input_size, int size, sk_rnn_cell cell) {
    policy->rnn = (sk_rnn){cell, input_size, size};
    policy->core_tensor = policy->num_tensors;
    char name[32];
    for (int k = 0; k < SK_RNN_NUM_TENSORS; k++) {
        sk_rnn_tensor info = sk_rnn_tensor_info(policy->rnn, k);
        snprintf(name, sizeof name, "core.%s", info.name);
        sk_tensor_kind kind = k >= SK_RNN_BIAS_IH ? SK_TENSOR_VECTOR : SK_TENSOR_MATRIX;
        sk_tensor_info *t = sk_policy_add_tensor(policy, offset, name, info.rows, info.cols, kind);
        SK_ASSERT(t->offset == policy->tensors[policy->core_tensor].offset + info.offset);
    }
}

static void lstm_layout(sk_policy *policy, size_t *offset, int input_size, int size) {
    layout(policy, offset, input_size, size, SK_RNN_LSTM);
}

static void gru_layout(sk_policy *policy, size_t *offset, int input_size, int size) {
    layout(policy, offset, input_size, size, SK_RNN_GRU);
}

/* CleanRL's recurrent init: orthogonal weights (gain 1) and zero biases. */
static void init_params(const sk_policy *policy, float *params, uint64_t *rng) {
    const sk_tensor_info *t = &policy->tensors[policy->core_tensor];
    sk_orthogonal_init(params + t[SK_RNN_WEIGHT_IH].offset, t[SK_RNN_WEIGHT_IH].rows,
                       t[SK_RNN_WEIGHT_IH].cols, 1.0, rng);
    sk_orthogonal_init(params + t[SK_RNN_WEIGHT_HH].offset, t[SK_RNN_WEIGHT_HH].rows,
                       t[SK_RNN_WEIGHT_HH].cols, 1.0, rng);
    for (int k = SK_RNN_BIAS_IH; k <= SK_RNN_BIAS_HH; k++)
        memset(params + t[k].offset, 0, (size_t)t[k].rows * sizeof(float));
}

/* one step of all rows bounds any T x B = rows */
static size_t work_floats(const sk_policy *policy, int capacity) {
    return sk_rnn_work_size(policy->rnn, 1, capacity);
}

static const float *block_params(const sk_policy *policy, const float *params) {
    return params + policy->tensors[policy->core_tensor].offset;
}

/* the block's weights transposed beforehand, or NULL (sk_policy_weight_t) */
static const float *block_params_t(const sk_policy *policy, const float *params,
                                   const sk_policy_work *work) {
    return sk_policy_weight_t(work, params, policy->tensors[policy->core_tensor].offset);
}

static void forward(const sk_policy *policy, const float *params, const float *state0,
                    const uint8_t *resets, int T, int B, sk_policy_work *work) {
    bool cell = has_cell(policy);
    int C = policy->core_size, parts = cell ? 2 : 1;
    float *h0 = NULL, *c0 = NULL;
    if (state0) { /* the entering states' parts as blocks */
        h0 = work->core_state;
        c0 = work->core_state + (size_t)B * (size_t)C;
        part_copy(h0, (float *)state0, 0, parts, C, B, true);
        if (cell) part_copy(c0, (float *)state0, 1, parts, C, B, true);
    }
    sk_rnn_forward_pre(work->features, cell ? work->cells : NULL, work->core_work, work->enc, h0,
                       cell ? c0 : NULL, resets, block_params(policy, params),
                       block_params_t(policy, params, work), policy->rnn, T, B);
}

static void backward(const sk_policy *policy, const float *params, float *grads,
                     const uint8_t *resets, int T, int B, sk_policy_work *work) {
    size_t rows = (size_t)T * (size_t)B;
    memset(work->denc, 0, rows * (size_t)policy->enc_size * sizeof(float));
    float *dblock = grads + policy->tensors[policy->core_tensor].offset;
    sk_rnn_backward(work->denc, NULL, NULL, dblock, work->core_work, work->dfeatures, work->enc,
                    resets, block_params(policy, params), policy->rnn, T, B);
}

static void step(const sk_policy *policy, const float *params, float *state, int B,
                 sk_policy_work *work) {
    bool cell = has_cell(policy);
    int C = policy->core_size, parts = cell ? 2 : 1;
    /* h advances in work->features, which the heads read; c in work->cells */
    part_copy(work->features, state, 0, parts, C, B, true);
    if (cell) part_copy(work->cells, state, 1, parts, C, B, true);
    sk_rnn_step_pre(work->features, cell ? work->cells : NULL, work->core_work, work->enc, NULL,
                    block_params(policy, params), block_params_t(policy, params, work),
                    policy->rnn, B);
    part_copy(work->features, state, 0, parts, C, B, false);
    if (cell) part_copy(work->cells, state, 1, parts, C, B, false);
}

static double forward_macs(const sk_policy *policy) {
    double G = sk_rnn_num_gates(policy->rnn.cell), H = policy->rnn.hidden_size;
    return G * H * ((double)policy->rnn.input_size + H);
}

/* h = o tanh(c) for an LSTM, a blend of tanh outputs for a GRU: within [-1, 1] either way;
 * an LSTM's cell moves by at most 1 a step from 0 at an episode's start (SK_CORE_CELL_MAX) */
const sk_core_ops sk_core_lstm = {
    .name = "lstm", .num_parts = 2, .part_names = {"h", "c"},
    .part_limits = {1.0, SK_CORE_CELL_MAX}, .layout = lstm_layout, .init_params = init_params,
    .work_floats = work_floats, .forward = forward, .backward = backward, .step = step,
    .forward_macs = forward_macs,
};

const sk_core_ops sk_core_gru = {
    .name = "gru", .num_parts = 1, .part_names = {"h"}, .part_limits = {1.0},
    .layout = gru_layout, .init_params = init_params, .work_floats = work_floats,
    .forward = forward, .backward = backward, .step = step, .forward_macs = forward_macs,
};
