/*
 * The encoder stage of a policy (policy.encoder), one row per encoder:
 *   mlp: the identity (the trunk reads the observation; today's behaviour, the default).
 *   cnn: convolutions over the observation as an image (height, width, channels: channels
 *        last, from the env's declared shape or policy.cnn_input), ReLU after each, then
 *        flattened channels last (h, w, c), then optionally (policy.cnn_dense = N) one
 *        Linear + ReLU of N units that actor and critic share (the Nature/CleanRL Atari
 *        network's shared layer), for the trunk. The convolutions are nn/conv.h's
 *        oneDNN layers (sk_conv_create_torch), batched over all rows, fp32 or bf16. Why oneDNN:
 *        on MinAtar's shapes (1024 images of 10x10x4 -> 16 and 10x10x16 -> 32, kernel 3)
 *        it ran forward 2.7-4.2x and backward 2.4-2.8x faster than im2col + OpenBLAS sgemm
 *        on one core (one measurement on the shared machine, 2026-11-27), and OpenBLAS has
 *        no bf16 GEMM.
 * Torch equivalence: the weights are torch.nn.Conv2d's (out, in, kh, kw); torch reads the
 * image as x.permute(0, 3, 1, 2) (NCHW) and flattens the last map as
 * y.permute(0, 2, 3, 1).flatten(1), which is the order the trunk's first layer reads.
 */
#include "../core/core.h"
#include "../nn/nn.h"
#include "policy.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const sk_encoder_ops *const sk_encoder_table[] = {&sk_encoder_mlp, &sk_encoder_cnn, NULL};

bool sk_policy_has_encoder(const sk_policy *policy) {
    return policy->encoder && policy->encoder->forward;
}

/* ---- mlp: the identity ---- */

/* the cnn row's keys: a CNN preset (configs/minatar.ini) run with policy.encoder = mlp
 * sets them, known and unused */
static const char *const g_cnn_keys[] = {"policy.cnn_input",    "policy.cnn_channels",
                                         "policy.cnn_kernels",  "policy.cnn_strides",
                                         "policy.cnn_padding",  "policy.cnn_precision",
                                         "policy.cnn_dense",    NULL};

static sk_status identity_configure(sk_cnn_spec *spec, const sk_config *cfg,
                                    const sk_env_def *env, int obs_size) {
    (void)env, (void)obs_size;
    memset(spec, 0, sizeof *spec);
    for (int k = 0; g_cnn_keys[k]; k++)
        if (sk_config_get(cfg, g_cnn_keys[k])) (void)sk_cfg_string(cfg, g_cnn_keys[k], "");
    return SK_OK;
}

static sk_status identity_layout(sk_policy *policy, size_t *offset) {
    (void)offset;
    policy->encoded_size = policy->obs_size;
    return SK_OK;
}

const sk_encoder_ops sk_encoder_mlp = {.name = "mlp", .configure = identity_configure,
                                       .layout = identity_layout};

/* ---- cnn ---- */

enum { CNN_MAX_CHANNELS = 1024, CNN_MAX_SIDE = 4096 };

/* A comma-separated list of at most SK_MAX_CONV integers in lo..hi; its length in *count. */
static sk_status read_list(const sk_config *cfg, const char *key, const char *def, int lo,
                           int hi, int *values, int *count) {
    const char *text = sk_cfg_string(cfg, key, def);
    *count = 0;
    const char *at = text;
    while (*at) {
        char *end;
        errno = 0;
        long value = strtol(at, &end, 10);
        if (end == at || errno || (*end && *end != ',') || *count == SK_MAX_CONV)
            return sk_fail(SK_ERR_INVALID,
                           "%s = '%s' (expected a comma-separated list of 1 to %d integers)",
                           key, text, SK_MAX_CONV);
        if (value < lo || value > hi)
            return sk_fail(SK_ERR_INVALID, "%s = '%s': value %d is %ld (expected %d..%d)", key,
                           text, *count, value, lo, hi);
        values[(*count)++] = (int)value;
        at = *end ? end + 1 : end;
    }
    if (*count == 0)
        return sk_fail(SK_ERR_INVALID, "%s is empty (expected 1 to %d integers)", key,
                       SK_MAX_CONV);
    return SK_OK;
}

static sk_status cnn_input(sk_cnn_spec *spec, const sk_config *cfg, const sk_env_def *env,
                           int obs_size) {
    int dims[SK_MAX_OBS_DIMS], shape[SK_MAX_CONV], count;
    int env_dims = sk_obs_dims(env, dims);
    bool env_image = env_dims == 3;
    sk_status status;
    if (!env_image || sk_config_get(cfg, "policy.cnn_input")) {
        if (!env_image && !sk_config_get(cfg, "policy.cnn_input"))
            return sk_fail(SK_ERR_INVALID,
                           "policy.encoder = cnn: %s observes a vector of %d values, not an "
                           "image; set policy.cnn_input = H,W,C (channels last)",
                           env->id, obs_size);
        if ((status = read_list(cfg, "policy.cnn_input", "", 1, CNN_MAX_SIDE, shape, &count)) !=
            SK_OK)
            return status;
        if (count != 3)
            return sk_fail(SK_ERR_INVALID,
                           "policy.cnn_input has %d values (expected 3: height,width,channels)",
                           count);
        if (env_image && (shape[0] != dims[0] || shape[1] != dims[1] || shape[2] != dims[2]))
            return sk_fail(SK_ERR_INVALID,
                           "policy.cnn_input = %dx%dx%d but %s observes %dx%dx%d", shape[0],
                           shape[1], shape[2], env->id, dims[0], dims[1], dims[2]);
    } else {
        memcpy(shape, dims, 3 * sizeof(int));
    }
    spec->height = shape[0], spec->width = shape[1], spec->channels = shape[2];
    long long size = (long long)spec->height * spec->width * spec->channels;
    if (size != obs_size)
        return sk_fail(SK_ERR_INVALID,
                       "policy.cnn_input = %dx%dx%d (%lld values) but %s observes %d values",
                       spec->height, spec->width, spec->channels, size, env->id, obs_size);
    return SK_OK;
}

/* Each layer's output map from its input, refusing one that cannot run. */
static sk_status cnn_shapes(const sk_cnn_spec *spec, sk_conv_shape *conv) {
    int height = spec->height, width = spec->width, channels = spec->channels;
    for (int l = 0; l < spec->layers; l++) {
        int kernel = spec->kernel[l], stride = spec->stride[l], padding = spec->padding[l];
        if (spec->out_channels[l] < 1)
            return sk_fail(SK_ERR_INVALID, "policy.cnn_channels: layer %d has %d channels "
                           "(expected 1..%d)", l, spec->out_channels[l], CNN_MAX_CHANNELS);
        if (kernel > height + 2 * padding || kernel > width + 2 * padding)
            return sk_fail(SK_ERR_INVALID,
                           "policy.cnn_kernels: layer %d's kernel %d is larger than its input "
                           "%dx%d padded by %d", l, kernel, height, width, padding);
        if (2 * padding > kernel)
            return sk_fail(SK_ERR_INVALID, "policy.cnn_padding: layer %d pads %d (expected at "
                           "most half its kernel %d, as torch)", l, padding, kernel);
        conv[l] = (sk_conv_shape){.height = height, .width = width, .channels = channels,
                                  .out_channels = spec->out_channels[l], .kernel = kernel,
                                  .stride = stride, .groups = 1};
        int out_h = sk_conv_torch_out_side(height, kernel, stride, padding);
        int out_w = sk_conv_torch_out_side(width, kernel, stride, padding);
        if (stride > height + 2 * padding - kernel + 1 && stride > 1)
            return sk_fail(SK_ERR_INVALID,
                           "policy.cnn_strides: layer %d's stride %d skips past its %dx%d input "
                           "(kernel %d, padding %d) to a map of %dx%d", l, stride, height,
                           width, kernel, padding, out_h, out_w);
        height = out_h, width = out_w, channels = spec->out_channels[l];
    }
    return SK_OK;
}

static sk_status cnn_configure(sk_cnn_spec *spec, const sk_config *cfg, const sk_env_def *env,
                               int obs_size) {
    memset(spec, 0, sizeof *spec);
    static const char *const keys[] = {"policy.cnn_channels", "policy.cnn_kernels",
                                       "policy.cnn_strides", "policy.cnn_padding"};
    static const char *const defaults[] = {"16,32", "3,3", "1,1", "0,0"};
    int *lists[] = {spec->out_channels, spec->kernel, spec->stride, spec->padding};
    const int lows[] = {0, 1, 1, 0}, highs[] = {CNN_MAX_CHANNELS, CNN_MAX_SIDE, CNN_MAX_SIDE,
                                                CNN_MAX_SIDE};
    sk_status status = cnn_input(spec, cfg, env, obs_size);
    if (status != SK_OK) return status;
    for (int k = 0; k < 4; k++) {
        int count;
        if ((status = read_list(cfg, keys[k], defaults[k], lows[k], highs[k], lists[k],
                                &count)) != SK_OK)
            return status;
        if (k == 0) spec->layers = count;
        else if (count != spec->layers)
            return sk_fail(SK_ERR_INVALID, "%s has %d values but policy.cnn_channels has %d "
                           "(expected one per layer)", keys[k], count, spec->layers);
    }
    int precision;
    static const char *const precisions[] = {"fp32", "bf16", NULL};
    if ((status = sk_cfg_choice(cfg, "policy.cnn_precision", "fp32", precisions, &precision)) !=
        SK_OK)
        return status;
    spec->precision = precision == 1 ? SK_PRECISION_BF16 : SK_PRECISION_F32;
    int64_t dense;
    if ((status = sk_cfg_int(cfg, "policy.cnn_dense", 0, 0, 65536, &dense)) != SK_OK)
        return status;
    spec->dense = (int)dense;
    sk_conv_shape conv[SK_MAX_CONV];
    return cnn_shapes(spec, conv);
}

/* Floats of layer l's output map for one image. */
static int map_floats(const sk_policy *policy, int l) {
    const sk_conv_shape *s = &policy->conv[l];
    int padding = policy->cnn.padding[l];
    return sk_conv_torch_out_side(s->height, s->kernel, s->stride, padding) *
           sk_conv_torch_out_side(s->width, s->kernel, s->stride, padding) * s->out_channels;
}

static sk_status cnn_layout(sk_policy *policy, size_t *offset) {
    sk_status status = cnn_shapes(&policy->cnn, policy->conv);
    if (status != SK_OK) return status;
    if ((long long)policy->cnn.height * policy->cnn.width * policy->cnn.channels !=
        policy->obs_size)
        return sk_fail(SK_ERR_INVALID, "a CNN encoder over %dx%dx%d images cannot read %d "
                       "observation values", policy->cnn.height, policy->cnn.width,
                       policy->cnn.channels, policy->obs_size);
    policy->conv_tensor = policy->num_tensors;
    for (int l = 0; l < policy->cnn.layers; l++) {
        const sk_conv_shape *s = &policy->conv[l];
        char name[32];
        snprintf(name, sizeof name, "encoder.conv%d.weight", l);
        sk_policy_add_tensor(policy, offset, name, s->out_channels,
                             s->channels * s->kernel * s->kernel, SK_TENSOR_CONV);
        snprintf(name, sizeof name, "encoder.conv%d.bias", l);
        sk_policy_add_tensor(policy, offset, name, s->out_channels, 1, SK_TENSOR_VECTOR);
    }
    policy->encoded_size = map_floats(policy, policy->cnn.layers - 1);
    if (policy->cnn.dense) {
        sk_policy_add_tensor(policy, offset, "encoder.dense.weight", policy->cnn.dense,
                             policy->encoded_size, SK_TENSOR_MATRIX);
        sk_policy_add_tensor(policy, offset, "encoder.dense.bias", policy->cnn.dense, 1,
                             SK_TENSOR_VECTOR);
        policy->encoded_size = policy->cnn.dense;
    }
    return SK_OK;
}

/* encoder.dense.weight (its bias follows), after the convolutions' tensors */
static const sk_tensor_info *dense_tensor(const sk_policy *policy) {
    return &policy->tensors[policy->conv_tensor + 2 * policy->cnn.layers];
}

/* CleanRL's layer_init on each Conv2d (orthogonal, gain sqrt(2), over (out, in*kh*kw))
 * and on the dense layer; biases 0. */
static void cnn_init_params(const sk_policy *policy, float *params, uint64_t *rng) {
    for (int l = 0; l < policy->cnn.layers; l++) {
        const sk_tensor_info *w = &policy->tensors[policy->conv_tensor + 2 * l];
        sk_orthogonal_init(params + w->offset, w->rows, w->cols, sqrt(2.0), rng);
    }
    if (policy->cnn.dense) {
        const sk_tensor_info *w = dense_tensor(policy);
        sk_orthogonal_init(params + w->offset, w->rows, w->cols, sqrt(2.0), rng);
    }
}

static sk_status cnn_work_alloc(sk_policy_work *work, const sk_policy *policy, int capacity) {
    size_t rows = (size_t)capacity, maps = (size_t)policy->obs_size;
    bool ok = true;
    for (int l = 0; l < policy->cnn.layers; l++) {
        size_t out = (size_t)map_floats(policy, l);
        for (int slot = 0; slot < 2; slot++)
            ok = ok && (work->cnn_out[slot][l] = sk_alloc(rows * out * sizeof(float)));
        sk_status conv = ok ? sk_conv_create_torch(&work->cnn_conv[l], policy->conv[l],
                                                   policy->cnn.padding[l], policy->cnn.precision)
                            : SK_OK;
        if (conv != SK_OK) return conv; /* its message: a backend missing, a shape refused */
        maps = SK_MAX(maps, out);
    }
    for (int slot = 0; slot < 2 && policy->cnn.dense; slot++)
        ok = ok && (work->cnn_dense_out[slot] = sk_alloc(rows * (size_t)policy->cnn.dense *
                                                         sizeof(float)));
    ok = ok && (work->cnn_d[0] = sk_alloc(rows * maps * sizeof(float))) &&
         (work->cnn_d[1] = sk_alloc(rows * maps * sizeof(float))) &&
         (work->cnn_dcode = sk_alloc(rows * (size_t)policy->encoded_size * sizeof(float)));
    return ok ? SK_OK : SK_ERR_NOMEM;
}

static const float *cnn_forward(const sk_policy *policy, int slot, const float *params,
                                const float *obs, int B, sk_policy_work *work) {
    const float *x = obs;
    for (int l = 0; l < policy->cnn.layers && B > 0; l++) {
        const sk_tensor_info *w = &policy->tensors[policy->conv_tensor + 2 * l];
        float *y = work->cnn_out[slot][l];
        sk_conv_forward(work->cnn_conv[l], y, x, params + w->offset, params + w[1].offset, B);
        sk_relu_forward(y, y, (size_t)B * (size_t)map_floats(policy, l));
        x = y;
    }
    const float *code = work->cnn_out[slot][policy->cnn.layers - 1];
    if (policy->cnn.dense) {
        const sk_tensor_info *w = dense_tensor(policy);
        float *y = work->cnn_dense_out[slot];
        sk_linear_forward_pre(y, code, params + w->offset,
                              sk_policy_weight_t(work, params, w->offset), params + w[1].offset,
                              B, w->cols, w->rows);
        sk_relu_forward(y, y, (size_t)B * (size_t)w->rows);
        code = y;
    }
    return work->cnn_code[slot] = code;
}

static void cnn_backward(const sk_policy *policy, int slot, const float *params, float *grads,
                         float *dcode, const float *obs, int B, sk_policy_work *work) {
    const float *dpost = dcode; /* d(the layer's ReLU output) */
    float *dpre = work->cnn_d[0], *dinput = work->cnn_d[1];
    if (policy->cnn.dense && B > 0) {
        /* through the dense layer's ReLU (in place: dcode may be clobbered), then its
         * Linear into the flattened last map's gradient (cnn_d[1], as wide as any map) */
        const sk_tensor_info *w = dense_tensor(policy);
        const float *y = work->cnn_dense_out[slot];
        size_t n = (size_t)B * (size_t)w->rows;
        for (size_t i = 0; i < n; i++)
            if (!(y[i] > 0.0f)) dcode[i] = 0.0f;
        memset(dinput, 0, (size_t)B * (size_t)w->cols * sizeof(float));
        sk_linear_backward(dinput, grads + w->offset, grads + w[1].offset, dcode,
                           work->cnn_out[slot][policy->cnn.layers - 1], params + w->offset, B,
                           w->cols, w->rows);
        dpost = dinput; /* consumed into dpre before the loop overwrites dinput */
    }
    for (int l = policy->cnn.layers - 1; l >= 0 && B > 0; l--) {
        const sk_conv_shape *s = &policy->conv[l];
        const sk_tensor_info *w = &policy->tensors[policy->conv_tensor + 2 * l];
        size_t out = (size_t)B * (size_t)map_floats(policy, l);
        memset(dpre, 0, out * sizeof(float));
        sk_relu_backward(dpre, dpost, work->cnn_out[slot][l], out);
        const float *x = l == 0 ? obs : work->cnn_out[slot][l - 1];
        if (l > 0)
            memset(dinput, 0, (size_t)B * (size_t)s->height * (size_t)s->width *
                                  (size_t)s->channels * sizeof(float));
        sk_conv_backward(work->cnn_conv[l], l > 0 ? dinput : NULL, grads + w->offset,
                         grads + w[1].offset, dpre, x, params + w->offset, B);
        dpost = dinput;
    }
}

static double cnn_forward_macs(const sk_policy *policy) {
    double macs = 0.0;
    for (int l = 0; l < policy->cnn.layers; l++) {
        const sk_conv_shape *s = &policy->conv[l];
        macs += (double)map_floats(policy, l) * s->channels * s->kernel * s->kernel;
    }
    return macs;
}

const sk_encoder_ops sk_encoder_cnn = {
    .name = "cnn", .configure = cnn_configure, .layout = cnn_layout,
    .init_params = cnn_init_params, .work_alloc = cnn_work_alloc, .forward = cnn_forward,
    .backward = cnn_backward, .forward_macs = cnn_forward_macs,
};

sk_status sk_policy_configure_encoder(const sk_config *cfg, const sk_env_def *env,
                                      const sk_encoder_ops **encoder, sk_cnn_spec *spec) {
    const char *names[SK_MAX_CONV + 4];
    int count = 0;
    for (; sk_encoder_table[count]; count++) names[count] = sk_encoder_table[count]->name;
    names[count] = NULL;
    int choice;
    sk_status status = sk_cfg_choice(cfg, "policy.encoder", names[0], names, &choice);
    if (status != SK_OK) return status;
    *encoder = sk_encoder_table[choice];
    return (*encoder)->configure(spec, cfg, env, env->obs_size);
}
