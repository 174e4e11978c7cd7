/*
 * The recurrent core of a policy (policy.core = lstm | gru): the encoder
 * (MLP: one Linear + activation; CANDIDATES: the state's encoding), then one
 * recurrent layer whose output h is what the heads read (work->features).
 * Sequences are time-major, (T, B, ...), the layout sk_rnn takes: every step
 * of the B rows is one GEMM for the recurrent term, never a loop over envs.
 */
#include "../core/core.h"
#include "../nn/nn.h"
#include "policy.h"

#include <string.h>

int sk_policy_state_size(const sk_policy *policy) {
    if (!policy->has_core) return 0;
    return (policy->rnn.cell == SK_RNN_LSTM ? 2 : 1) * policy->rnn.hidden_size;
}

double sk_policy_forward_flops(const sk_policy *policy) {
    double macs = 0.0;
    if (policy->type == SK_POLICY_CANDIDATES) {
        double D = policy->embed, S = policy->atoms.candidates;
        double encodings = policy->has_core ? 1.0 + S : 2.0 + S; /* state once with a core */
        macs += encodings * 2.0 * D * D + S * D + D;             /* residual blocks, dots, value */
    } else {
        for (int i = 0; i < policy->num_tensors; i++) {
            const sk_tensor_info *t = &policy->tensors[i];
            if (sk_policy_tensor_ndim(t) == 2) macs += (double)t->rows * (double)t->cols;
        }
        return 2.0 * macs;
    }
    if (policy->has_core) {
        double G = sk_rnn_num_gates(policy->rnn.cell), H = policy->rnn.hidden_size;
        macs += G * H * ((double)policy->rnn.input_size + H);
    }
    return 2.0 * macs;
}

static const float *core_params(const sk_policy *policy, const float *params) {
    return params + policy->tensors[policy->core_tensor].offset;
}

/* work->enc (rows, enc_size) from obs. */
static void encode(const sk_policy *policy, const float *params, const float *obs, int rows,
                   sk_policy_work *work) {
    if (policy->type == SK_POLICY_CANDIDATES) {
        sk_candidates_encode(policy, params, obs, rows, work);
        return;
    }
    const sk_tensor_info *w = &policy->tensors[policy->encoder_tensor];
    sk_linear_forward(work->enc, obs, params + w->offset, params + w[1].offset, rows, w->cols,
                      w->rows);
    size_t n = (size_t)rows * (size_t)w->rows;
    if (policy->activation == SK_ACTIVATION_TANH) sk_tanh_forward(work->enc, work->enc, n);
    else sk_relu_forward(work->enc, work->enc, n);
}

/* From work->denc back to the encoder's parameters. */
static void encode_backward(const sk_policy *policy, const float *params, float *grads,
                            const float *obs, int rows, sk_policy_work *work) {
    if (policy->type == SK_POLICY_CANDIDATES) {
        sk_candidates_encode_backward(policy, params, grads, obs, rows, work);
        return;
    }
    const sk_tensor_info *w = &policy->tensors[policy->encoder_tensor];
    size_t n = (size_t)rows * (size_t)w->rows;
    float *dpre = work->dhidden[0]; /* the heads' backward is done with it */
    memset(dpre, 0, n * sizeof(float));
    if (policy->activation == SK_ACTIVATION_TANH) sk_tanh_backward(dpre, work->denc, work->enc, n);
    else sk_relu_backward(dpre, work->denc, work->enc, n);
    sk_linear_backward(NULL, grads + w->offset, grads + w[1].offset, dpre, obs, params + w->offset,
                       rows, w->cols, w->rows);
}

void sk_policy_core_forward(const sk_policy *policy, const float *params, const float *obs,
                            const float *h0, const float *c0, const uint8_t *resets, int T, int B,
                            sk_policy_work *work) {
    SK_ASSERT(policy->has_core && T * B <= work->capacity);
    encode(policy, params, obs, T * B, work);
    bool lstm = policy->rnn.cell == SK_RNN_LSTM;
    sk_rnn_forward(work->features, lstm ? work->cells : NULL, work->rnn_work, work->enc, h0,
                   lstm ? c0 : NULL, resets, core_params(policy, params), policy->rnn, T, B);
}

void sk_policy_core_backward(const sk_policy *policy, const float *params, float *grads,
                             const float *obs, const uint8_t *resets, int T, int B,
                             sk_policy_work *work) {
    SK_ASSERT(policy->has_core);
    size_t rows = (size_t)T * (size_t)B;
    memset(work->denc, 0, rows * (size_t)policy->enc_size * sizeof(float));
    float *dcore = grads + policy->tensors[policy->core_tensor].offset;
    sk_rnn_backward(work->denc, NULL, NULL, dcore, work->rnn_work, work->dfeatures, work->enc,
                    resets, core_params(policy, params), policy->rnn, T, B);
    encode_backward(policy, params, grads, obs, T * B, work);
}

void sk_policy_core_step(const sk_policy *policy, const float *params, const float *obs, float *h,
                         float *c, int B, sk_policy_work *work) {
    SK_ASSERT(policy->has_core && B <= work->capacity);
    encode(policy, params, obs, B, work);
    bool lstm = policy->rnn.cell == SK_RNN_LSTM;
    sk_rnn_step(h, lstm ? c : NULL, work->rnn_work, work->enc, NULL, core_params(policy, params),
                policy->rnn, B);
    memcpy(work->features, h, (size_t)B * (size_t)policy->rnn.hidden_size * sizeof(float));
}
