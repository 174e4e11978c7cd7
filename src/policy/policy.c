#include "policy.h"

#include "../core/config.h"
#include "../core/core.h"
#include "../nn/nn.h"

#include <math.h>
#include <string.h>

const char *const sk_activation_names[] = {"tanh", "relu", NULL};
const char *const sk_policy_type_names[] = {"mlp", "candidates", NULL};

static const char *const net_names[2] = {"actor", "critic"};

int sk_policy_tensor_ndim(const sk_tensor_info *info) {
    /* the last part of the name: "bias", "bias_ih_l0", "log_std" are vectors */
    const char *last = strrchr(info->name, '.');
    last = last ? last + 1 : info->name;
    bool vector = strncmp(last, "bias", 4) == 0 || strcmp(last, "log_std") == 0;
    return vector ? 1 : 2;
}

/* Appends a tensor to the layout at *offset. */
static sk_tensor_info *add_tensor(sk_policy *policy, size_t *offset, const char *name, int rows,
                                  int cols) {
    SK_ASSERT(policy->num_tensors < SK_MAX_TENSORS);
    sk_tensor_info *t = &policy->tensors[policy->num_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->offset = *offset;
    t->rows = rows;
    t->cols = cols;
    *offset += (size_t)rows * (size_t)cols;
    return t;
}

sk_status sk_policy_add_core(sk_policy *policy, size_t *offset, int input_size, sk_core_spec core) {
    if (core.size < 1 || core.size > (1 << 14))
        return sk_fail(SK_ERR_INVALID, "policy.core_size = %d is out of range (expected 1..%d)",
                       core.size, 1 << 14);
    policy->has_core = true;
    policy->rnn = (sk_rnn){core.cell, input_size, core.size};
    policy->enc_size = input_size;
    policy->core_tensor = policy->num_tensors;
    char name[32];
    for (int k = 0; k < SK_RNN_NUM_TENSORS; k++) {
        sk_rnn_tensor info = sk_rnn_tensor_info(policy->rnn, k);
        snprintf(name, sizeof name, "core.%s", info.name);
        sk_tensor_info *t = add_tensor(policy, offset, name, info.rows, info.cols);
        SK_ASSERT(t->offset == policy->tensors[policy->core_tensor].offset + info.offset);
    }
    return SK_OK;
}

sk_status sk_policy_init(sk_policy *policy, int obs_size, const sk_action_space *space,
                         int mask_size, int hidden, int layers, sk_activation activation) {
    return sk_policy_init_core(policy, obs_size, space, mask_size, hidden, layers, activation,
                               (sk_core_spec){0});
}

sk_status sk_policy_init_core(sk_policy *policy, int obs_size, const sk_action_space *space,
                              int mask_size, int hidden, int layers, sk_activation activation,
                              sk_core_spec core) {
    memset(policy, 0, sizeof *policy);
    policy->encoder_tensor = policy->core_tensor = -1;
    int min_layers = core.enabled ? 0 : 1;
    if (layers < min_layers || layers > SK_MAX_LAYERS)
        return sk_fail(SK_ERR_INVALID, "policy.layers = %d is out of range (expected %d..%d)",
                       layers, min_layers, SK_MAX_LAYERS);
    bool continuous = space->kind == SK_SPACE_CONTINUOUS;
    if (continuous && (space->dim < 1 || space->dim > SK_MAX_ACTION_DIM))
        return sk_fail(SK_ERR_INVALID, "action space has dimension %d (expected 1..%d)",
                       space->dim, SK_MAX_ACTION_DIM);
    if (!continuous && (space->num_heads < 1 || space->num_heads > SK_MAX_HEADS))
        return sk_fail(SK_ERR_INVALID, "action space has %d heads (expected 1..%d)",
                       space->num_heads, SK_MAX_HEADS);
    policy->obs_size = obs_size;
    policy->hidden = hidden;
    policy->layers = layers;
    policy->activation = activation;
    policy->space = *space;
    if (continuous) policy->logits_size = space->dim;
    else
        for (int h = 0; h < space->num_heads; h++) policy->logits_size += space->head_sizes[h];
    policy->log_std_tensor = -1;
    if (mask_size != 0 && mask_size != sk_action_mask_size(space))
        return sk_fail(SK_ERR_INVALID, "mask size %d must be 0 or %d, as the action space's layout needs",
                       mask_size, sk_action_mask_size(space));
    policy->mask_size = mask_size;

    size_t offset = 0;
    policy->feature_size = obs_size;
    if (core.enabled) { /* encoder and core first: the trunk both nets read */
        policy->encoder_tensor = policy->num_tensors;
        add_tensor(policy, &offset, "encoder.weight", hidden, obs_size);
        add_tensor(policy, &offset, "encoder.bias", hidden, 1);
        sk_status status = sk_policy_add_core(policy, &offset, hidden, core);
        if (status != SK_OK) return status;
        policy->feature_size = core.size;
    }
    for (int net = 0; net < 2; net++) {
        int out_size = net == SK_NET_ACTOR ? policy->logits_size : 1;
        for (int l = 0; l <= layers; l++) {
            int in = l == 0 ? policy->feature_size : hidden;
            int out = l == layers ? out_size : hidden;
            policy->weight_tensor[net][l] = policy->num_tensors;
            for (int part = 0; part < 2; part++) {
                sk_tensor_info *t = &policy->tensors[policy->num_tensors++];
                snprintf(t->name, sizeof t->name, "%s.%d.%s", net_names[net], l,
                         part == 0 ? "weight" : "bias");
                t->offset = offset;
                t->rows = out;
                t->cols = part == 0 ? in : 1;
                offset += (size_t)t->rows * (size_t)t->cols;
            }
        }
        if (net == SK_NET_ACTOR && continuous) {
            policy->log_std_tensor = policy->num_tensors;
            sk_tensor_info *t = &policy->tensors[policy->num_tensors++];
            snprintf(t->name, sizeof t->name, "actor.log_std");
            t->offset = offset;
            t->rows = space->dim;
            t->cols = 1;
            offset += (size_t)space->dim;
        }
    }
    policy->num_params = offset;
    return SK_OK;
}

static const char *const g_core_names[] = {"none", "lstm", "gru", NULL};

/* policy.core and policy.core_size (default: default_size). */
static sk_status configure_core(const sk_config *cfg, int default_size, sk_core_spec *core) {
    int choice;
    int64_t size;
    sk_status status = sk_cfg_choice(cfg, "policy.core", "none", g_core_names, &choice);
    if (status != SK_OK) return status;
    *core = (sk_core_spec){0};
    /* policy.core = none over a recurrent preset: its core_size is checked, then unused */
    if (choice == 0 && !sk_config_get(cfg, "policy.core_size")) return SK_OK;
    if ((status = sk_cfg_int(cfg, "policy.core_size", default_size, 1, 1 << 14, &size)) != SK_OK)
        return status;
    if (choice == 0) return SK_OK;
    *core = (sk_core_spec){true, choice == 1 ? SK_RNN_LSTM : SK_RNN_GRU, (int)size};
    return SK_OK;
}

sk_status sk_policy_configure(sk_policy *policy, const sk_config *cfg, const sk_env_def *env,
                              const void *env_state) {
    int64_t hidden, layers;
    int activation, type;
    sk_core_spec core;
    sk_status status;
    if ((status = sk_cfg_choice(cfg, "policy.type", "mlp", sk_policy_type_names, &type)) != SK_OK)
        return status;
    if (type == SK_POLICY_CANDIDATES) {
        int64_t embed;
        if ((status = sk_cfg_int(cfg, "policy.embed", 32, 1, 4096, &embed)) != SK_OK) return status;
        if ((status = configure_core(cfg, (int)embed, &core)) != SK_OK) return status;
        if (core.enabled && core.size != embed)
            return sk_fail(SK_ERR_CONFIG,
                           "policy.core_size = %d must equal policy.embed = %d for the candidates "
                           "policy (candidates are scored against the core's output)",
                           core.size, (int)embed);
        if (!sk_env_extras_of(env)->obs_atoms)
            return sk_fail(SK_ERR_CONFIG,
                           "policy.type = candidates needs symbolic observations; %s has numeric ones "
                           "(use policy.type = mlp)",
                           env->id);
        sk_obs_atoms atoms;
        sk_env_extras_of(env)->obs_atoms(env_state, &atoms);
        return sk_policy_init_candidates(policy, &env->action_space, env->mask_size, &atoms,
                                         (int)embed, core);
    }
    if ((status = sk_cfg_int(cfg, "policy.hidden", 64, 1, 1 << 16, &hidden)) != SK_OK ||
        (status = configure_core(cfg, (int)hidden, &core)) != SK_OK ||
        (status = sk_cfg_int(cfg, "policy.layers", 2, core.enabled ? 0 : 1, SK_MAX_LAYERS,
                             &layers)) != SK_OK ||
        (status = sk_cfg_choice(cfg, "policy.activation", "tanh", sk_activation_names,
                                &activation)) != SK_OK)
        return status;
    return sk_policy_init_core(policy, env->obs_size, &env->action_space, env->mask_size,
                               (int)hidden, (int)layers, (sk_activation)activation, core);
}

/* CleanRL's LSTM init: orthogonal weights (gain 1) and zero biases. */
void sk_policy_init_core_params(const sk_policy *policy, float *params, uint64_t *rng) {
    const sk_tensor_info *t = &policy->tensors[policy->core_tensor];
    sk_orthogonal_init(params + t[SK_RNN_WEIGHT_IH].offset, t[SK_RNN_WEIGHT_IH].rows,
                       t[SK_RNN_WEIGHT_IH].cols, 1.0, rng);
    sk_orthogonal_init(params + t[SK_RNN_WEIGHT_HH].offset, t[SK_RNN_WEIGHT_HH].rows,
                       t[SK_RNN_WEIGHT_HH].cols, 1.0, rng);
    for (int k = SK_RNN_BIAS_IH; k <= SK_RNN_BIAS_HH; k++)
        memset(params + t[k].offset, 0, (size_t)t[k].rows * sizeof(float));
}

void sk_policy_init_params(const sk_policy *policy, float *params, uint64_t *rng) {
    if (policy->type == SK_POLICY_CANDIDATES) {
        sk_candidates_init_params(policy, params, rng);
        return;
    }
    memset(params, 0, policy->num_params * sizeof(float));
    if (policy->has_core) {
        const sk_tensor_info *w = &policy->tensors[policy->encoder_tensor];
        sk_orthogonal_init(params + w->offset, w->rows, w->cols, sqrt(2.0), rng);
        sk_policy_init_core_params(policy, params, rng);
    }
    for (int net = 0; net < 2; net++) {
        for (int l = 0; l <= policy->layers; l++) {
            const sk_tensor_info *w = &policy->tensors[policy->weight_tensor[net][l]];
            double gain = l < policy->layers ? sqrt(2.0) : (net == SK_NET_ACTOR ? 0.01 : 1.0);
            sk_orthogonal_init(params + w->offset, w->rows, w->cols, gain, rng);
        }
    }
    if (policy->space.kind == SK_SPACE_DISCRETE) {
        /* the output bias follows the last weight */
        const sk_tensor_info *bias =
            &policy->tensors[policy->weight_tensor[SK_NET_ACTOR][policy->layers] + 1];
        int n = SK_MIN(policy->space.head_sizes[0], SK_MAX_HEAD0_PRIOR);
        for (int j = 0; j < n; j++) params[bias->offset + j] += policy->space.head0_prior[j];
    }
}

sk_status sk_policy_work_alloc(sk_policy_work *work, const sk_policy *policy, int capacity) {
    memset(work, 0, sizeof *work);
    if (policy->type == SK_POLICY_CANDIDATES) return sk_candidates_work_alloc(work, policy, capacity);
    work->capacity = capacity;
    size_t rows = (size_t)capacity;
    size_t hidden = rows * (size_t)policy->hidden;
    bool ok = true;
    for (int net = 0; net < 2; net++) {
        for (int l = 0; l < policy->layers; l++) ok = ok && (work->hidden[net][l] = sk_alloc(hidden * sizeof(float)));
        size_t out = rows * (size_t)(net == SK_NET_ACTOR ? policy->logits_size : 1);
        ok = ok && (work->out[net] = sk_alloc(out * sizeof(float)));
        ok = ok && (work->dout[net] = sk_alloc(out * sizeof(float)));
        ok = ok && (work->dhidden[net] = sk_alloc(2 * hidden * sizeof(float)));
    }
    ok = ok && (work->logp = sk_alloc(rows * sizeof(float)));
    ok = ok && (work->entropy = sk_alloc(rows * sizeof(float)));
    if (!ok || sk_policy_core_work_alloc(work, policy, capacity) != SK_OK) {
        sk_policy_work_free(work);
        return sk_fail(SK_ERR_NOMEM, "out of memory for policy activations (%d rows)", capacity);
    }
    return SK_OK;
}

sk_status sk_policy_core_work_alloc(sk_policy_work *work, const sk_policy *policy, int capacity) {
    if (!policy->has_core) return SK_OK;
    size_t rows = (size_t)capacity, E = (size_t)policy->enc_size, C = (size_t)policy->rnn.hidden_size;
    bool ok = (work->enc = sk_alloc(rows * E * sizeof(float))) &&
              (work->denc = sk_alloc(rows * E * sizeof(float))) &&
              (work->features = sk_alloc(rows * C * sizeof(float))) &&
              (work->cells = sk_alloc(rows * C * sizeof(float))) &&
              (work->dfeatures = sk_alloc(rows * C * sizeof(float))) &&
              /* one step of all rows bounds any T x B = rows */
              (work->rnn_work = sk_alloc(sk_rnn_work_size(policy->rnn, 1, capacity) * sizeof(float)));
    if (ok && policy->type == SK_POLICY_CANDIDATES)
        ok = (work->state_in = sk_alloc(rows * E * sizeof(float))) &&
             (work->state_hidden = sk_alloc(rows * E * sizeof(float))) &&
             (work->state_atoms = sk_alloc(rows * sizeof(float))) &&
             (work->state_d[0] = sk_alloc(rows * E * sizeof(float))) &&
             (work->state_d[1] = sk_alloc(rows * E * sizeof(float)));
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
    float *core[] = {work->enc,      work->denc,         work->features,    work->cells,
                     work->dfeatures, work->rnn_work,     work->state_in,    work->state_hidden,
                     work->state_atoms, work->state_d[0], work->state_d[1]};
    for (size_t k = 0; k < sizeof core / sizeof core[0]; k++) sk_free(core[k]);
    memset(work, 0, sizeof *work);
}

static void activate(sk_activation activation, float *x, size_t n) {
    if (activation == SK_ACTIVATION_TANH) sk_tanh_forward(x, x, n);
    else sk_relu_forward(x, x, n);
}

void sk_policy_forward(const sk_policy *policy, int net, const float *params, const float *obs,
                       int B, sk_policy_work *work) {
    SK_ASSERT(B <= work->capacity);
    if (policy->type == SK_POLICY_CANDIDATES) {
        sk_candidates_forward(policy, net, params, obs, B, work);
        return;
    }
    const float *inp = policy->has_core ? work->features : obs;
    int in = policy->feature_size;
    for (int l = 0; l <= policy->layers; l++) {
        const sk_tensor_info *w = &policy->tensors[policy->weight_tensor[net][l]];
        const sk_tensor_info *b = w + 1;
        float *out = l < policy->layers ? work->hidden[net][l] : work->out[net];
        sk_linear_forward(out, inp, params + w->offset, params + b->offset, B, in, w->rows);
        if (l < policy->layers) activate(policy->activation, out, (size_t)B * (size_t)w->rows);
        inp = out;
        in = w->rows;
    }
}

void sk_policy_backward(const sk_policy *policy, int net, const float *params, float *grads,
                        const float *obs, int B, sk_policy_work *work) {
    if (policy->type == SK_POLICY_CANDIDATES) {
        sk_candidates_backward(policy, net, params, grads, obs, B, work);
        return;
    }
    size_t hidden_n = (size_t)B * (size_t)policy->hidden;
    float *dpost = work->dhidden[net];           /* d(activation output) */
    float *dpre = work->dhidden[net] + hidden_n; /* d(pre-activation) */
    const float *dcur = work->dout[net];
    for (int l = policy->layers; l >= 0; l--) {
        const sk_tensor_info *w = &policy->tensors[policy->weight_tensor[net][l]];
        const float *first = policy->has_core ? work->features : obs;
        const float *inp = l == 0 ? first : work->hidden[net][l - 1];
        if (l > 0) memset(dpost, 0, hidden_n * sizeof(float));
        float *dinp = l > 0 ? dpost : (policy->has_core ? work->dfeatures : NULL);
        sk_linear_backward(dinp, grads + w->offset, grads + w[1].offset, dcur, inp,
                           params + w->offset, B, w->cols, w->rows);
        if (l == 0) break;
        memset(dpre, 0, hidden_n * sizeof(float));
        if (policy->activation == SK_ACTIVATION_TANH)
            sk_tanh_backward(dpre, dpost, work->hidden[net][l - 1], hidden_n);
        else
            sk_relu_backward(dpre, dpost, work->hidden[net][l - 1], hidden_n);
        dcur = dpre;
    }
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
    if (policy->type == SK_POLICY_CANDIDATES) return sk_candidates_obs_invalid(policy, obs_row);
    for (int k = 0; k < policy->obs_size; k++)
        if (!isfinite(obs_row[k])) return k;
    return -1;
}
