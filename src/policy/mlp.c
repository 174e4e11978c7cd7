/*
 * The MLP kind (policy.type = mlp): separate actor and critic MLPs over a numeric
 * observation; with a core, one shared encoder layer (Linear + activation) feeds the core
 * and both nets read its output.
 */
#include "../core/config.h"
#include "../core/core.h"
#include "../nn/nn.h"
#include "policy.h"

#include <math.h>
#include <string.h>

static const char *const net_names[2] = {"actor", "critic"};

sk_status sk_policy_init(sk_policy *policy, int obs_size, const sk_action_space *space,
                         int mask_size, int hidden, int layers, sk_activation activation) {
    return sk_policy_init_core(policy, obs_size, space, mask_size, hidden, layers, activation,
                               (sk_core_spec){0});
}

sk_status sk_policy_init_core(sk_policy *policy, int obs_size, const sk_action_space *space,
                              int mask_size, int hidden, int layers, sk_activation activation,
                              sk_core_spec core) {
    return sk_policy_init_encoded(policy, obs_size, space, mask_size, hidden, layers, activation,
                                  core, NULL, NULL);
}

sk_status sk_policy_init_encoded(sk_policy *policy, int obs_size, const sk_action_space *space,
                                 int mask_size, int hidden, int layers, sk_activation activation,
                                 sk_core_spec core, const sk_encoder_ops *encoder,
                                 const sk_cnn_spec *spec) {
    memset(policy, 0, sizeof *policy);
    policy->kind = &sk_kind_mlp;
    policy->encoder_tensor = policy->core_tensor = policy->conv_tensor = -1;
    int min_layers = core.ops ? 0 : 1;
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
    policy->encoder = encoder ? encoder : &sk_encoder_mlp;
    if (spec) policy->cnn = *spec;
    sk_status encoded = policy->encoder->layout(policy, &offset); /* its tensors first */
    if (encoded != SK_OK) return encoded;
    policy->feature_size = policy->encoded_size;
    if (core.ops) { /* encoder and core first: the trunk both nets read */
        policy->encoder_tensor = policy->num_tensors;
        sk_policy_add_tensor(policy, &offset, "encoder.weight", hidden, policy->encoded_size,
                             SK_TENSOR_MATRIX);
        sk_policy_add_tensor(policy, &offset, "encoder.bias", hidden, 1, SK_TENSOR_VECTOR);
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
            char name[32];
            snprintf(name, sizeof name, "%s.%d.weight", net_names[net], l);
            sk_policy_add_tensor(policy, &offset, name, out, in, SK_TENSOR_MATRIX);
            snprintf(name, sizeof name, "%s.%d.bias", net_names[net], l);
            sk_policy_add_tensor(policy, &offset, name, out, 1, SK_TENSOR_VECTOR);
        }
        if (net == SK_NET_ACTOR && continuous) {
            policy->log_std_tensor = policy->num_tensors;
            sk_policy_add_tensor(policy, &offset, "actor.log_std", space->dim, 1, SK_TENSOR_VECTOR);
        }
    }
    policy->num_params = offset;
    return SK_OK;
}

/* Orthogonal init with gain sqrt(2) for hidden layers (and the encoder), 0.01 for the
 * logits or means and 1 for the value head; zero biases and log-std (CleanRL's
 * layer_init); the core's own init between the encoder and the nets. */
static void init_params(const sk_policy *policy, float *params, uint64_t *rng) {
    memset(params, 0, policy->num_params * sizeof(float));
    if (sk_policy_has_encoder(policy)) policy->encoder->init_params(policy, params, rng);
    if (policy->core) {
        const sk_tensor_info *w = &policy->tensors[policy->encoder_tensor];
        sk_orthogonal_init(params + w->offset, w->rows, w->cols, sqrt(2.0), rng);
        policy->core->init_params(policy, params, rng);
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
    if (policy->log_std_tensor >= 0) {
        const sk_tensor_info *log_std = &policy->tensors[policy->log_std_tensor];
        for (int d = 0; d < log_std->rows * log_std->cols; d++)
            params[log_std->offset + d] = policy->log_std_init;
    }
}

static sk_status work_alloc(sk_policy_work *work, const sk_policy *policy, int capacity) {
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
    return ok ? SK_OK : SK_ERR_NOMEM;
}

static void activate(sk_activation activation, float *x, size_t n) {
    if (activation == SK_ACTIVATION_TANH) sk_tanh_forward(x, x, n);
    else sk_relu_forward(x, x, n);
}

/* What the trunk reads of obs: the encoder's code (slot's activations kept), or obs. */
static const float *encoded(const sk_policy *policy, int slot, const float *params,
                            const float *obs, int B, sk_policy_work *work) {
    if (!sk_policy_has_encoder(policy)) return obs;
    return policy->encoder->forward(policy, slot, params, obs, B, work);
}

/* The code's gradient buffer, zeroed, or NULL without an encoder stage. */
static float *dcode_zeroed(const sk_policy *policy, int B, sk_policy_work *work) {
    if (!sk_policy_has_encoder(policy)) return NULL;
    memset(work->cnn_dcode, 0, (size_t)B * (size_t)policy->encoded_size * sizeof(float));
    return work->cnn_dcode;
}

/* One net's layers over inp (B rows of feature_size): its hidden activations and out. */
static void trunk_forward(const sk_policy *policy, int net, const float *params,
                          const float *inp, int B, sk_policy_work *work) {
    int in = policy->feature_size;
    for (int l = 0; l <= policy->layers; l++) {
        const sk_tensor_info *w = &policy->tensors[policy->weight_tensor[net][l]];
        const sk_tensor_info *b = w + 1;
        float *out = l < policy->layers ? work->hidden[net][l] : work->out[net];
        sk_linear_forward_pre(out, inp, params + w->offset,
                              sk_policy_weight_t(work, params, w->offset), params + b->offset, B,
                              in, w->rows);
        if (l < policy->layers) activate(policy->activation, out, (size_t)B * (size_t)w->rows);
        inp = out;
        in = w->rows;
    }
}

static void forward(const sk_policy *policy, int net, const float *params, const float *obs,
                    int B, sk_policy_work *work) {
    const float *inp = policy->core ? work->features : encoded(policy, net, params, obs, B, work);
    trunk_forward(policy, net, params, inp, B, work);
}

/* Both nets on one pass of the encoder stage (slot 0): the convolutions run once. */
static void forward_both(const sk_policy *policy, const float *params, const float *obs, int B,
                         sk_policy_work *work) {
    const float *inp = policy->core ? work->features : encoded(policy, 0, params, obs, B, work);
    trunk_forward(policy, SK_NET_ACTOR, params, inp, B, work);
    trunk_forward(policy, SK_NET_CRITIC, params, inp, B, work);
}

/* One net's layers back from work->dout[net], given what its first layer read (first):
 * its parameters' gradients, and first's gradient accumulated into dfirst (if not NULL). */
static void trunk_backward(const sk_policy *policy, int net, const float *params, float *grads,
                           const float *first, float *dfirst, int B, sk_policy_work *work) {
    size_t hidden_n = (size_t)B * (size_t)policy->hidden;
    float *dpost = work->dhidden[net];           /* d(activation output) */
    float *dpre = work->dhidden[net] + hidden_n; /* d(pre-activation) */
    const float *dcur = work->dout[net];
    for (int l = policy->layers; l >= 0; l--) {
        const sk_tensor_info *w = &policy->tensors[policy->weight_tensor[net][l]];
        const float *inp = l == 0 ? first : work->hidden[net][l - 1];
        if (l > 0) memset(dpost, 0, hidden_n * sizeof(float));
        float *dinp = l > 0 ? dpost : dfirst;
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

/* The nets read (first) after slot's encoder pass, and where their input gradient goes:
 * the core's dfeatures (the caller zeroed it), the encoder's code gradient (zeroed
 * here), or nowhere (the trunk reads obs). */
static const float *trunk_input(const sk_policy *policy, int slot, const float *obs,
                                sk_policy_work *work) {
    if (policy->core) return work->features;
    return sk_policy_has_encoder(policy) ? work->cnn_code[slot] : obs;
}

static float *trunk_dinput(const sk_policy *policy, int B, sk_policy_work *work) {
    return policy->core ? work->dfeatures : dcode_zeroed(policy, B, work);
}

static void backward(const sk_policy *policy, int net, const float *params, float *grads,
                     const float *obs, int B, sk_policy_work *work) {
    float *dfirst = trunk_dinput(policy, B, work);
    trunk_backward(policy, net, params, grads, trunk_input(policy, net, obs, work), dfirst, B,
                   work);
    if (dfirst && !policy->core)
        policy->encoder->backward(policy, net, params, grads, dfirst, obs, B, work);
}

/* After forward_both: both nets back into one code gradient, then the encoder once. */
static void backward_both(const sk_policy *policy, const float *params, float *grads,
                          const float *obs, int B, sk_policy_work *work) {
    float *dfirst = trunk_dinput(policy, B, work);
    const float *first = trunk_input(policy, 0, obs, work);
    trunk_backward(policy, SK_NET_ACTOR, params, grads, first, dfirst, B, work);
    trunk_backward(policy, SK_NET_CRITIC, params, grads, first, dfirst, B, work);
    if (dfirst && !policy->core)
        policy->encoder->backward(policy, 0, params, grads, dfirst, obs, B, work);
}

/* work->enc (rows, enc_size) from obs: the encoder layer. */
static void encode(const sk_policy *policy, const float *params, const float *obs, int rows,
                   sk_policy_work *work) {
    const sk_tensor_info *w = &policy->tensors[policy->encoder_tensor];
    sk_linear_forward_pre(work->enc, encoded(policy, 0, params, obs, rows, work),
                          params + w->offset, sk_policy_weight_t(work, params, w->offset),
                          params + w[1].offset, rows, w->cols, w->rows);
    activate(policy->activation, work->enc, (size_t)rows * (size_t)w->rows);
}

/* From work->denc back to the encoder's parameters. */
static void encode_backward(const sk_policy *policy, const float *params, float *grads,
                            const float *obs, int rows, sk_policy_work *work) {
    const sk_tensor_info *w = &policy->tensors[policy->encoder_tensor];
    size_t n = (size_t)rows * (size_t)w->rows;
    float *dpre = work->dhidden[0]; /* the heads' backward is done with it */
    memset(dpre, 0, n * sizeof(float));
    if (policy->activation == SK_ACTIVATION_TANH) sk_tanh_backward(dpre, work->denc, work->enc, n);
    else sk_relu_backward(dpre, work->denc, work->enc, n);
    float *dcode = dcode_zeroed(policy, rows, work);
    const float *code = dcode ? work->cnn_code[0] : obs;
    sk_linear_backward(dcode, grads + w->offset, grads + w[1].offset, dpre, code,
                       params + w->offset, rows, w->cols, w->rows);
    if (dcode) policy->encoder->backward(policy, 0, params, grads, dcode, obs, rows, work);
}

static int obs_invalid(const sk_policy *policy, const float *obs_row) {
    for (int k = 0; k < policy->obs_size; k++)
        if (!isfinite(obs_row[k])) return k;
    return -1;
}

/* every matrix but the core's block and the convolutions: the encoder and the nets, and
 * the convolutions once (forward_both and the core's encode share one pass) */
static double forward_macs(const sk_policy *policy) {
    double macs = 0.0;
    if (sk_policy_has_encoder(policy))
        macs += policy->encoder->forward_macs(policy);
    int conv_end = policy->conv_tensor + 2 * policy->cnn.layers;
    int core_end = policy->core ? policy->weight_tensor[SK_NET_ACTOR][0] : -1; /* nets follow */
    for (int i = 0; i < policy->num_tensors; i++) {
        const sk_tensor_info *t = &policy->tensors[i];
        bool in_core = policy->core && i >= policy->core_tensor && i < core_end;
        if (policy->conv_tensor >= 0 && i >= policy->conv_tensor && i < conv_end) continue;
        if (!in_core && sk_policy_tensor_ndim(t) == 2) macs += (double)t->rows * (double)t->cols;
    }
    return macs;
}

static sk_status configure(sk_policy *policy, const sk_config *cfg, const sk_env_def *env,
                           const void *env_state) {
    (void)env_state;
    int64_t hidden, layers;
    int activation;
    sk_core_spec core;
    const sk_encoder_ops *encoder;
    sk_cnn_spec spec;
    sk_status status;
    if ((status = sk_cfg_int(cfg, "policy.hidden", 64, 1, 1 << 16, &hidden)) != SK_OK ||
        (status = sk_policy_configure_core(cfg, (int)hidden, &core)) != SK_OK ||
        (status = sk_cfg_int(cfg, "policy.layers", 2, core.ops ? 0 : 1, SK_MAX_LAYERS,
                             &layers)) != SK_OK ||
        (status = sk_cfg_choice(cfg, "policy.activation", "tanh", sk_activation_names,
                                &activation)) != SK_OK ||
        (status = sk_policy_configure_encoder(cfg, env, &encoder, &spec)) != SK_OK)
        return status;
    if ((status = sk_policy_init_encoded(policy, env->obs_size, &env->action_space, env->mask_size,
                                         (int)hidden, (int)layers, (sk_activation)activation, core,
                                         encoder, &spec)) != SK_OK)
        return status;
    /* a Gaussian policy's starting spread (SB3's log_std_init); read only for continuous
     * actions, so a Discrete run that sets it is refused as an unused key */
    double log_std_init = 0.0;
    if (policy->log_std_tensor >= 0 &&
        (status = sk_cfg_double(cfg, "policy.log_std_init", 0.0, -20.0, 2.0, &log_std_init)) != SK_OK)
        return status;
    policy->log_std_init = (float)log_std_init;
    return SK_OK;
}

const sk_kind_ops sk_kind_mlp = {
    .name = "mlp", .configure = configure, .init_params = init_params,
    .work_alloc = work_alloc, .forward = forward, .backward = backward,
    .forward_both = forward_both, .backward_both = backward_both, .encode = encode,
    .encode_backward = encode_backward, .obs_invalid = obs_invalid, .forward_macs = forward_macs,
};
