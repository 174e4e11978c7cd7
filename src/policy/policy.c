#include "policy.h"

#include "../core/config.h"
#include "../core/core.h"
#include "../nn/gemm_small.h"
#include "../nn/nn.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

const char *const sk_activation_names[] = {"tanh", "relu", NULL};
/* The policy kinds, by policy.type; a new kind is one file and one row here. */
const sk_kind_ops *const sk_kind_table[] = {&sk_kind_mlp, &sk_kind_candidates, NULL};

int sk_policy_tensor_ndim(const sk_tensor_info *info) {
    return info->kind == SK_TENSOR_VECTOR ? 1 : 2;
}

void sk_policy_transpose_weights(const sk_policy *policy, const float *params, float *params_t) {
    for (int k = 0; k < policy->num_tensors; k++) {
        const sk_tensor_info *t = &policy->tensors[k];
        /* a convolution's weights go to oneDNN, which keeps its own reorder (src/nn/conv.h) */
        if (t->kind != SK_TENSOR_MATRIX || !sk_gemm_small_forward_transposes(t->cols, t->rows))
            continue;
        sk_gemm_small_transpose(params_t + t->offset, params + t->offset, t->rows, t->cols);
    }
}

void sk_policy_work_use_transposed(sk_policy_work *work, int slot, const float *params,
                                   const float *params_t, size_t count) {
    SK_ASSERT(slot >= 0 && slot < SK_POLICY_TRANSPOSED);
    work->transposed[slot].of = params;
    work->transposed[slot].t = params ? params_t : NULL;
    work->transposed[slot].count = params ? count : 0;
}

const float *sk_policy_weight_t(const sk_policy_work *work, const float *params, size_t offset) {
    /* by address: a role's parameters, a pool member's, lie inside the whole array's */
    uintptr_t at = (uintptr_t)params;
    for (int k = 0; k < SK_POLICY_TRANSPOSED; k++) {
        uintptr_t of = (uintptr_t)work->transposed[k].of;
        if (of && at >= of && at < of + work->transposed[k].count * sizeof(float))
            return work->transposed[k].t + (at - of) / sizeof(float) + offset;
    }
    return NULL;
}

sk_tensor_info *sk_policy_add_tensor(sk_policy *policy, size_t *offset, const char *name, int rows,
                                     int cols, sk_tensor_kind kind) {
    SK_ASSERT(policy->num_tensors < SK_MAX_POLICY_TENSORS);
    sk_tensor_info *t = &policy->tensors[policy->num_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->offset = *offset;
    t->rows = rows;
    t->cols = cols;
    t->kind = kind;
    *offset += (size_t)rows * (size_t)cols;
    return t;
}

sk_status sk_policy_add_core(sk_policy *policy, size_t *offset, int input_size, sk_core_spec core) {
    if (core.size < 1 || core.size > (1 << 14))
        return sk_fail(SK_ERR_INVALID, "policy.core_size = %d is out of range (expected 1..%d)",
                       core.size, 1 << 14);
    policy->core = core.ops;
    policy->core_size = core.size;
    policy->enc_size = input_size;
    core.ops->layout(policy, offset, input_size, core.size);
    return SK_OK;
}

enum { MAX_CHOICES = 16 };

sk_status sk_policy_configure_core(const sk_config *cfg, int default_size, sk_core_spec *core) {
    const char *names[MAX_CHOICES] = {"none"};
    int count = 1;
    for (; sk_core_table[count - 1]; count++) {
        SK_ASSERT(count + 1 < MAX_CHOICES);
        names[count] = sk_core_table[count - 1]->name;
    }
    names[count] = NULL;
    int choice;
    int64_t size;
    sk_status status = sk_cfg_choice(cfg, "policy.core", "none", names, &choice);
    if (status != SK_OK) return status;
    *core = (sk_core_spec){0};
    /* policy.core = none over a recurrent preset: its core_size is checked, then unused */
    if (choice == 0 && !sk_config_get(cfg, "policy.core_size")) return SK_OK;
    if ((status = sk_cfg_int(cfg, "policy.core_size", default_size, 1, 1 << 14, &size)) != SK_OK)
        return status;
    if (choice == 0) return SK_OK;
    *core = (sk_core_spec){sk_core_table[choice - 1], (int)size};
    return SK_OK;
}

sk_status sk_policy_configure(sk_policy *policy, const sk_config *cfg, const sk_env_def *env,
                              const void *env_state) {
    const char *names[MAX_CHOICES];
    int count = 0;
    for (; sk_kind_table[count]; count++) {
        SK_ASSERT(count + 1 < MAX_CHOICES);
        names[count] = sk_kind_table[count]->name;
    }
    names[count] = NULL;
    int kind;
    sk_status status = sk_cfg_choice(cfg, "policy.type", names[0], names, &kind);
    if (status != SK_OK) return status;
    status = sk_kind_table[kind]->configure(policy, cfg, env, env_state);
    return status == SK_OK ? sk_policy_configure_roles(policy, cfg, env) : status;
}

sk_status sk_policy_work_alloc(sk_policy_work *work, const sk_policy *policy, int capacity) {
    memset(work, 0, sizeof *work);
    work->capacity = capacity;
    bool encoder = sk_policy_has_encoder(policy);
    sk_status status = SK_OK;
    if (policy->kind->work_alloc(work, policy, capacity) != SK_OK ||
        (encoder && (status = policy->encoder->work_alloc(work, policy, capacity)) != SK_OK) ||
        sk_policy_core_work_alloc(work, policy, capacity) != SK_OK) {
        sk_policy_work_free(work);
        if (status != SK_OK && status != SK_ERR_NOMEM) return status; /* the encoder's message */
        return sk_fail(SK_ERR_NOMEM, "out of memory for policy activations (%d rows)", capacity);
    }
    return SK_OK;
}

void sk_policy_init_params(const sk_policy *policy, float *params, uint64_t *rng) {
    if (sk_policy_roles(policy) == 1) {
        policy->kind->init_params(policy, params, rng);
        return;
    }
    sk_policy one = sk_policy_one_role(policy); /* each role drawn in turn from rng */
    for (int r = 0; r < policy->roles; r++)
        policy->kind->init_params(&one, params + (size_t)r * policy->role_params, rng);
}

void sk_policy_forward(const sk_policy *policy, int net, const float *params, const float *obs,
                       int B, sk_policy_work *work) {
    SK_ASSERT(B <= work->capacity);
    if (net == SK_NET_ACTOR) work->actor_rows += B;
    policy->kind->forward(policy, net, params, obs, B, work);
}

void sk_policy_backward(const sk_policy *policy, int net, const float *params, float *grads,
                        const float *obs, int B, sk_policy_work *work) {
    policy->kind->backward(policy, net, params, grads, obs, B, work);
}

void sk_policy_forward_both(const sk_policy *policy, const float *params, const float *obs,
                            int B, sk_policy_work *work) {
    SK_ASSERT(B <= work->capacity);
    work->actor_rows += B;
    if (policy->kind->forward_both) {
        policy->kind->forward_both(policy, params, obs, B, work);
        return;
    }
    policy->kind->forward(policy, SK_NET_ACTOR, params, obs, B, work);
    policy->kind->forward(policy, SK_NET_CRITIC, params, obs, B, work);
}

void sk_policy_backward_both(const sk_policy *policy, const float *params, float *grads,
                             const float *obs, int B, sk_policy_work *work) {
    if (policy->kind->backward_both) {
        policy->kind->backward_both(policy, params, grads, obs, B, work);
        return;
    }
    policy->kind->backward(policy, SK_NET_ACTOR, params, grads, obs, B, work);
    policy->kind->backward(policy, SK_NET_CRITIC, params, grads, obs, B, work);
}

sk_status sk_policy_core_work_alloc(sk_policy_work *work, const sk_policy *policy, int capacity) {
    if (!policy->core) return SK_OK;
    size_t rows = (size_t)capacity, E = (size_t)policy->enc_size, C = (size_t)policy->core_size;
    size_t S = (size_t)sk_policy_state_size(policy);
    bool ok = (work->enc = sk_alloc(rows * E * sizeof(float))) &&
              (work->denc = sk_alloc(rows * E * sizeof(float))) &&
              (work->features = sk_alloc(rows * C * sizeof(float))) &&
              (work->cells = sk_alloc(rows * C * sizeof(float))) &&
              (work->dfeatures = sk_alloc(rows * C * sizeof(float))) &&
              /* one step of all rows bounds any T x B = rows */
              (work->core_state = sk_alloc(rows * S * sizeof(float))) &&
              (work->core_work = sk_alloc(policy->core->work_floats(policy, capacity) * sizeof(float)));
    return ok ? SK_OK : SK_ERR_NOMEM;
}

void sk_policy_work_free(sk_policy_work *work) {
    for (int net = 0; net < 2; net++) {
        for (int l = 0; l < SK_MAX_LAYERS; l++) sk_free(work->hidden[net][l]);
        sk_free(work->out[net]);
        sk_free(work->dout[net]);
        sk_free(work->dhidden[net]);
    }
    sk_free(work->logp);
    sk_free(work->entropy);
    for (int net = 0; net < 2; net++) {
        sk_free(work->enc_in[net]);
        sk_free(work->enc_hidden[net]);
        sk_free(work->enc_out[net]);
        sk_free(work->d_enc[net][0]);
        sk_free(work->d_enc[net][1]);
        sk_free(work->atom_count[net]);
        sk_free(work->enc_pad[net]);
    }
    float *core[] = {work->enc,        work->denc,         work->features,   work->cells,
                     work->dfeatures,  work->core_work,    work->core_state, work->state_in,
                     work->state_hidden, work->state_atoms, work->state_d[0], work->state_d[1]};
    for (size_t k = 0; k < sizeof core / sizeof core[0]; k++) sk_free(core[k]);
    for (int l = 0; l < SK_MAX_CONV; l++) sk_free(work->cnn_out[0][l]), sk_free(work->cnn_out[1][l]);
    float *cnn[] = {work->cnn_d[0], work->cnn_d[1], work->cnn_dcode, work->cnn_dense_out[0],
                    work->cnn_dense_out[1]};
    for (size_t k = 0; k < sizeof cnn / sizeof cnn[0]; k++) sk_free(cnn[k]);
    for (int l = 0; l < SK_MAX_CONV; l++)
        if (work->cnn_conv[l]) sk_conv_destroy(work->cnn_conv[l]);
    memset(work, 0, sizeof *work);
}

void sk_policy_sample(const sk_policy *policy, const float *params, const float *head,
                      const uint8_t *mask, int B, uint64_t *rng, bool greedy,
                      int32_t *actions_discrete, float *actions_continuous, float *logp) {
    if (policy->log_std_tensor >= 0) {
        const float *log_std = params + policy->tensors[policy->log_std_tensor].offset;
        sk_gaussian_sample(policy->space.dim, head, log_std, B, rng, greedy, actions_continuous,
                           logp);
    } else {
        sk_categorical_sample(&policy->space, head, mask, B, rng, greedy, actions_discrete, logp);
    }
}

int sk_policy_sample_draws(const sk_policy *policy) {
    /* a Gaussian's noise is one sk_rng_normal (two draws) a dimension; a categorical
     * head's choice one sk_rng_float (the binary kernel's too) */
    return policy->log_std_tensor >= 0 ? 2 * policy->space.dim : policy->space.num_heads;
}

void sk_policy_evaluate(const sk_policy *policy, const float *params, const float *head,
                        const uint8_t *mask, const int32_t *actions_discrete,
                        const float *actions_continuous, int B, float *logp, float *entropy) {
    if (policy->log_std_tensor >= 0) {
        const float *log_std = params + policy->tensors[policy->log_std_tensor].offset;
        sk_gaussian_evaluate(policy->space.dim, head, log_std, actions_continuous, B, logp,
                             entropy);
    } else {
        sk_categorical_evaluate(&policy->space, head, mask, actions_discrete, B, logp, entropy);
    }
}

void sk_policy_dist_backward(const sk_policy *policy, const float *params, float *grads,
                             const float *head, const uint8_t *mask,
                             const int32_t *actions_discrete, const float *actions_continuous,
                             int B, const float *dlogp, const float *dentropy, float *dhead) {
    if (policy->log_std_tensor >= 0) {
        size_t offset = policy->tensors[policy->log_std_tensor].offset;
        sk_gaussian_backward(policy->space.dim, head, params + offset, actions_continuous, B,
                             dlogp, dentropy, dhead, grads + offset);
    } else {
        sk_categorical_backward(&policy->space, head, mask, actions_discrete, B, dlogp, dentropy,
                                dhead);
    }
}

int sk_policy_obs_invalid(const sk_policy *policy, const float *obs_row) {
    return policy->kind->obs_invalid(policy, obs_row);
}

void sk_obs_widen(float *out, const uint8_t *in, size_t count) {
    for (size_t k = 0; k < count; k++) out[k] = (float)in[k];
}
