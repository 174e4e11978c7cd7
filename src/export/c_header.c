/*
 * `skinner export CHECKPOINT --c policy.h`: the policy as one C99 header that depends on
 * nothing beyond libm. Its weights are static const arrays (each float printed with 9
 * significant digits, which reads back as the same float), and its functions are static
 * inline, so a program may include it in several files and use any part of it without an
 * unused-function warning. The arithmetic is actor.c's acting path written out plainly:
 * normalise, encode, step the core, the nets, then the greedy action.
 */
#include "../core/core.h"
#include "export.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct writer {
    FILE *file;
} writer;

__attribute__((format(printf, 2, 3))) static void emit(writer *w, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vfprintf(w->file, fmt, args);
    va_end(args);
}

/* A float literal that reads back as the same float: 9 significant digits, with a point or
 * an exponent so that the f suffix is valid C. */
static void emit_float(writer *w, float value) {
    char text[40];
    snprintf(text, sizeof text, "%.9g", (double)value);
    bool has_point = strpbrk(text, ".e") != NULL;
    emit(w, "%s%sf", text, has_point ? "" : ".0");
}

static void emit_array(writer *w, const char *name, const float *values, size_t count) {
    emit(w, "static const float %s[%zu] = {", name, count);
    for (size_t k = 0; k < count; k++) {
        emit(w, k % 6 == 0 ? "\n    " : " ");
        emit_float(w, values[k]);
        emit(w, ",");
    }
    emit(w, "\n};\n");
}

/* The C name of a tensor's array: policy_ then its name with dots as underscores. */
static void array_name(char *out, size_t size, const char *tensor) {
    snprintf(out, size, "policy_%s", tensor);
    for (char *p = out; *p; p++)
        if (*p == '.') *p = '_';
}

sk_status sk_export_supported(const sk_loaded_policy *lp) {
    if (lp->policy.kind != &sk_kind_mlp)
        return sk_fail(SK_ERR_INVALID,
                       "policy.type = %s cannot be exported (expected mlp: a candidates "
                       "policy reads a symbolic layout of indices, not numbers)",
                       lp->policy.kind->name);
    if (sk_policy_roles(&lp->policy) > 1)
        return sk_fail(SK_ERR_INVALID,
                       "a policy.per_role checkpoint (%d policies, one per agent of %s) cannot "
                       "be exported yet (expected one policy: train with policy.per_role = false)",
                       lp->policy.roles, lp->env->id);
    return SK_OK;
}

static const char *const helpers =
    "/* out (out_size) = w (out_size, in_size) @ in + b, as torch.nn.Linear; four running\n"
    " * sums, so that the adds do not wait on each other (and the compiler may vectorise) */\n"
    "static inline void policy_linear(float *out, const float *in, const float *w,\n"
    "                                 const float *b, int in_size, int out_size) {\n"
    "    for (int o = 0; o < out_size; o++) {\n"
    "        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;\n"
    "        const float *row = w + (size_t)o * (size_t)in_size;\n"
    "        int i = 0;\n"
    "        for (; i + 4 <= in_size; i += 4) {\n"
    "            s0 += row[i] * in[i];\n"
    "            s1 += row[i + 1] * in[i + 1];\n"
    "            s2 += row[i + 2] * in[i + 2];\n"
    "            s3 += row[i + 3] * in[i + 3];\n"
    "        }\n"
    "        for (; i < in_size; i++) s0 += row[i] * in[i];\n"
    "        out[o] = (s0 + s1) + (s2 + s3) + b[o];\n"
    "    }\n"
    "}\n\n"
    "static inline void policy_relu(float *x, int n) {\n"
    "    for (int i = 0; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
    "}\n\n"
    "static inline void policy_tanh(float *x, int n) {\n"
    "    for (int i = 0; i < n; i++) x[i] = tanhf(x[i]);\n"
    "}\n\n"
    "static inline float policy_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }\n\n"
    "/* torch.nn.Conv2d over a channels-last image: in (height, width, channels), w (out, in,\n"
    " * kernel, kernel), padding zeros on every side; out (out_h, out_w, out_channels). */\n"
    "static inline void policy_conv(float *out, const float *in, const float *w,\n"
    "                               const float *b, int height, int width, int channels,\n"
    "                               int out_channels, int kernel, int stride, int padding) {\n"
    "    int out_h = (height + 2 * padding - kernel) / stride + 1;\n"
    "    int out_w = (width + 2 * padding - kernel) / stride + 1;\n"
    "    for (int oy = 0; oy < out_h; oy++)\n"
    "        for (int ox = 0; ox < out_w; ox++)\n"
    "            for (int oc = 0; oc < out_channels; oc++) {\n"
    "                float sum = b[oc];\n"
    "                for (int ic = 0; ic < channels; ic++)\n"
    "                    for (int ky = 0; ky < kernel; ky++) {\n"
    "                        int iy = oy * stride - padding + ky;\n"
    "                        if (iy < 0 || iy >= height) continue;\n"
    "                        for (int kx = 0; kx < kernel; kx++) {\n"
    "                            int ix = ox * stride - padding + kx;\n"
    "                            if (ix < 0 || ix >= width) continue;\n"
    "                            sum += w[((oc * channels + ic) * kernel + ky) * kernel + kx] *\n"
    "                                   in[(iy * width + ix) * channels + ic];\n"
    "                        }\n"
    "                    }\n"
    "                out[(oy * out_w + ox) * out_channels + oc] = sum;\n"
    "            }\n"
    "}\n\n"
    "/* One step of torch.nn.LSTM (gates i, f, g, o): h and c (hidden) advance in place. */\n"
    "static inline void policy_lstm(float *h, float *c, const float *x, const float *w_ih,\n"
    "                               const float *w_hh, const float *b_ih, const float *b_hh,\n"
    "                               int in_size, int hidden) {\n"
    "    float gates[4 * POLICY_CORE_SIZE], proj[4 * POLICY_CORE_SIZE];\n"
    "    policy_linear(gates, x, w_ih, b_ih, in_size, 4 * hidden);\n"
    "    policy_linear(proj, h, w_hh, b_hh, hidden, 4 * hidden);\n"
    "    for (int j = 0; j < hidden; j++) {\n"
    "        float i = policy_sigmoid(gates[j] + proj[j]);\n"
    "        float f = policy_sigmoid(gates[hidden + j] + proj[hidden + j]);\n"
    "        float g = tanhf(gates[2 * hidden + j] + proj[2 * hidden + j]);\n"
    "        float o = policy_sigmoid(gates[3 * hidden + j] + proj[3 * hidden + j]);\n"
    "        c[j] = f * c[j] + i * g;\n"
    "        h[j] = o * tanhf(c[j]);\n"
    "    }\n"
    "}\n\n"
    "/* One step of torch.nn.GRU (gates r, z, n): h (hidden) advances in place. */\n"
    "static inline void policy_gru(float *h, const float *x, const float *w_ih,\n"
    "                              const float *w_hh, const float *b_ih, const float *b_hh,\n"
    "                              int in_size, int hidden) {\n"
    "    float gates[3 * POLICY_CORE_SIZE], proj[3 * POLICY_CORE_SIZE];\n"
    "    policy_linear(gates, x, w_ih, b_ih, in_size, 3 * hidden);\n"
    "    policy_linear(proj, h, w_hh, b_hh, hidden, 3 * hidden);\n"
    "    for (int j = 0; j < hidden; j++) {\n"
    "        float r = policy_sigmoid(gates[j] + proj[j]);\n"
    "        float z = policy_sigmoid(gates[hidden + j] + proj[hidden + j]);\n"
    "        float n = tanhf(gates[2 * hidden + j] + r * proj[2 * hidden + j]);\n"
    "        h[j] = (h[j] - n) * z + n;\n"
    "    }\n"
    "}\n\n";

static const char *activation_call(sk_activation activation) {
    return activation == SK_ACTIVATION_TANH ? "policy_tanh" : "policy_relu";
}

/* One net's layers from `input` (its width in_size) into `out`; its value returned for the
 * critic. */
static void emit_net(writer *w, const sk_policy *policy, int net, const char *input,
                     const char *out) {
    const char *prefix = net == SK_NET_ACTOR ? "actor" : "critic";
    char prev[32];
    snprintf(prev, sizeof prev, "%s", input);
    for (int l = 0; l <= policy->layers; l++) {
        const sk_tensor_info *t = &policy->tensors[policy->weight_tensor[net][l]];
        char weight[48], bias[48], dest[32];
        array_name(weight, sizeof weight, t[0].name);
        array_name(bias, sizeof bias, t[1].name);
        if (l < policy->layers) {
            snprintf(dest, sizeof dest, "%s%d", prefix, l);
            emit(w, "    float %s[%d];\n", dest, t->rows);
        } else {
            snprintf(dest, sizeof dest, "%s", out);
        }
        emit(w, "    policy_linear(%s, %s, %s, %s, %d, %d);\n", dest, prev, weight, bias, t->cols,
             t->rows);
        if (l < policy->layers)
            emit(w, "    %s(%s, %d);\n", activation_call(policy->activation), dest, t->rows);
        snprintf(prev, sizeof prev, "%s", dest);
    }
}

/* policy_forward's body up to the features the nets read, whose array's name goes to code. */
static void emit_trunk(writer *w, const sk_policy *policy, const sk_loaded_policy *lp,
                       char code[32]) {
    emit(w, "    float x[POLICY_OBS_SIZE];\n");
    emit(w, "    for (int k = 0; k < POLICY_OBS_SIZE; k++) x[k] = (float)obs[k];\n");
    if (lp->obs_map.size) {
        emit(w, "    for (int k = 0; k < POLICY_OBS_SIZE; k++) { /* the frozen normaliser */\n"
                "        float v = (x[k] - policy_obs_shift[k]) * policy_obs_scale[k];\n"
                "        x[k] = v < -POLICY_OBS_CLIP ? -POLICY_OBS_CLIP\n"
                "                                    : (v > POLICY_OBS_CLIP ? POLICY_OBS_CLIP : v);\n"
                "    }\n");
    }
    snprintf(code, 32, "x");
    if (sk_policy_has_encoder(policy)) {
        for (int l = 0; l < policy->cnn.layers; l++) {
            const sk_conv_shape *s = &policy->conv[l];
            int pad = policy->cnn.padding[l];
            int out_h = sk_conv_torch_out_side(s->height, s->kernel, s->stride, pad);
            int out_w = sk_conv_torch_out_side(s->width, s->kernel, s->stride, pad);
            int size = out_h * out_w * s->out_channels;
            emit(w, "    float map%d[%d];\n", l, size);
            emit(w, "    policy_conv(map%d, %s, policy_encoder_conv%d_weight, "
                    "policy_encoder_conv%d_bias, %d, %d, %d, %d, %d, %d, %d);\n",
                 l, code, l, l, s->height, s->width, s->channels, s->out_channels, s->kernel,
                 s->stride, pad);
            emit(w, "    policy_relu(map%d, %d);\n", l, size);
            snprintf(code, 32, "map%d", l);
        }
        if (policy->cnn.dense) {
            int dense = policy->cnn.dense;
            emit(w, "    float dense[%d];\n", dense);
            emit(w, "    policy_linear(dense, %s, policy_encoder_dense_weight, "
                    "policy_encoder_dense_bias, %d, %d);\n", code,
                 policy->tensors[policy->conv_tensor + 2 * policy->cnn.layers].cols, dense);
            emit(w, "    policy_relu(dense, %d);\n", dense);
            snprintf(code, 32, "dense");
        }
    }
    if (!policy->core) return;
    const sk_tensor_info *enc = &policy->tensors[policy->encoder_tensor];
    emit(w, "    float enc[%d];\n", enc->rows);
    emit(w, "    policy_linear(enc, %s, policy_encoder_weight, policy_encoder_bias, %d, %d);\n",
         code, enc->cols, enc->rows);
    emit(w, "    %s(enc, %d);\n", activation_call(policy->activation), enc->rows);
    int H = policy->core_size;
    if (policy->rnn.cell == SK_RNN_LSTM)
        emit(w, "    policy_lstm(state->v, state->v + %d, enc, policy_core_weight_ih_l0, "
                "policy_core_weight_hh_l0,\n                policy_core_bias_ih_l0, "
                "policy_core_bias_hh_l0, %d, %d);\n", H, enc->rows, H);
    else
        emit(w, "    policy_gru(state->v, enc, policy_core_weight_ih_l0, policy_core_weight_hh_l0,\n"
                "               policy_core_bias_ih_l0, policy_core_bias_hh_l0, %d, %d);\n",
             enc->rows, H);
    snprintf(code, 32, "state->v");
}

static void emit_action_tables(writer *w, const sk_action_space *space) {
    emit(w, "static const int policy_head_sizes[%d] = {", space->num_heads);
    for (int h = 0; h < space->num_heads; h++) emit(w, "%s%d", h ? ", " : "", space->head_sizes[h]);
    emit(w, "};\n/* bit a set: head h matters when head 0 chose a (0: always) */\n");
    emit(w, "static const unsigned long long policy_relevant_when[%d] = {", space->num_heads);
    for (int h = 0; h < space->num_heads; h++)
        emit(w, "%s%lluULL", h ? ", " : "", (unsigned long long)space->relevant_when[h]);
    emit(w, "};\n\n");
}

static const char *const greedy_discrete =
    "    int offset = 0;\n"
    "    for (int h = 0; h < POLICY_ACTION_SIZE; h++) {\n"
    "        int n = policy_head_sizes[h];\n"
    "        const float *z = out + offset;\n"
    "        const uint8_t *m = mask ? mask + offset : NULL;\n"
    "        if (mask && POLICY_MASKS_BY_HEAD0 && h > 0) {\n"
    "            int a0 = (int)action[0], at = policy_head_sizes[0];\n"
    "            unsigned long long when = policy_relevant_when[h];\n"
    "            int relevant = when == 0 || (a0 < 64 && ((when >> a0) & 1ULL));\n"
    "            for (int k = 1; k < h; k++) at += policy_head_sizes[0] * policy_head_sizes[k];\n"
    "            m = relevant ? mask + at + a0 * n : NULL;\n"
    "        }\n"
    "        int best = -1;\n"
    "        for (int j = 0; j < n; j++)\n"
    "            if ((!m || m[j]) && (best < 0 || z[j] > z[best])) best = j;\n"
    "        action[h] = best;\n"
    "        offset += n;\n"
    "    }\n";

sk_status sk_export_c_header(const sk_loaded_policy *lp, const char *path, const char *source) {
    sk_status status = sk_export_supported(lp);
    if (status != SK_OK) return status;
    const sk_policy *policy = &lp->policy;
    const sk_action_space *space = &policy->space;
    bool discrete = space->kind == SK_SPACE_DISCRETE;
    bool bytes = lp->env->obs_dtype == SK_OBS_U8;
    writer w = {fopen(path, "w")};
    if (!w.file)
        return sk_fail(SK_ERR_IO, "cannot write the C header '%s': %s", path, strerror(errno));
    emit(&w, "/*\n * A skinner policy for %s as C99, written by `skinner export`%s%s.\n",
         lp->env->id, source ? " from " : "", source ? source : "");
    emit(&w, " * It needs libm only (cc ... -lm). Include it, then each step:\n"
             " *     policy_action_t action[POLICY_ACTION_SIZE];\n"
             " *     policy_act(obs, mask, &state, action);\n"
             " * obs: POLICY_OBS_SIZE values of policy_obs_t as the env writes them (%s);\n"
             " * mask: POLICY_MASK_SIZE bytes, 1 = allowed (NULL: all allowed; ignored when 0);\n"
             " * state: a recurrent core's memory, zeroed by policy_reset at each episode's start\n"
             " * (NULL for a feed-forward policy: POLICY_STATE_SIZE 0). The action is greedy: %s.\n"
             " * policy_forward gives the actor's output (%s) and returns the value.\n"
             " * Activations live on the stack: about POLICY_STACK_BYTES bytes a call.\n */\n",
         bytes ? "uint8, an image channels last" : "float32",
         discrete ? "each head's most likely allowed choice"
         : lp->squash       ? "tanh of the mean, scaled into the action bounds (SAC's)"
         : lp->clip_actions ? "the Gaussian's mean, clipped to the action bounds"
                            : "the Gaussian's mean",
         discrete ? "each head's logits, one after another" : "the means");
    emit(&w, "#ifndef SKINNER_POLICY_H\n#define SKINNER_POLICY_H\n\n"
             "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n");
    int state_size = sk_policy_state_size(policy);
    emit(&w, "#define POLICY_OBS_SIZE %d\n", policy->obs_size);
    emit(&w, "#define POLICY_OUT_SIZE %d /* the actor's output: %s */\n", policy->logits_size,
         discrete ? "logits" : "means");
    emit(&w, "#define POLICY_ACTION_SIZE %d /* %s */\n",
         discrete ? space->num_heads : space->dim, discrete ? "heads" : "dimensions");
    emit(&w, "#define POLICY_DISCRETE %d\n", discrete ? 1 : 0);
    emit(&w, "#define POLICY_MASK_SIZE %d\n", policy->mask_size);
    emit(&w, "#define POLICY_MASKS_BY_HEAD0 %d\n", discrete && space->masks_by_head0 ? 1 : 0);
    emit(&w, "#define POLICY_STATE_SIZE %d /* a core's h%s */\n", state_size,
         policy->core && policy->rnn.cell == SK_RNN_LSTM ? ", then c" : "");
    emit(&w, "#define POLICY_CORE_SIZE %d\n", policy->core ? policy->core_size : 1);
    size_t stack = (size_t)policy->obs_size + (size_t)policy->logits_size +
                   2 * (size_t)policy->hidden * (size_t)(policy->layers + 1);
    if (sk_policy_has_encoder(policy)) stack += (size_t)policy->encoded_size * 8;
    for (int l = 0; sk_policy_has_encoder(policy) && l < policy->cnn.layers; l++) {
        const sk_conv_shape *s = &policy->conv[l];
        int pad = policy->cnn.padding[l];
        stack += (size_t)sk_conv_torch_out_side(s->height, s->kernel, s->stride, pad) *
                 (size_t)sk_conv_torch_out_side(s->width, s->kernel, s->stride, pad) *
                 (size_t)s->out_channels;
    }
    if (policy->core) stack += (size_t)policy->hidden + 8 * (size_t)policy->core_size;
    emit(&w, "#define POLICY_STACK_BYTES %zu\n\n", stack * sizeof(float));
    emit(&w, "typedef %s policy_obs_t;\ntypedef %s policy_action_t;\n",
         bytes ? "uint8_t" : "float", discrete ? "int32_t" : "float");
    emit(&w, "/* a recurrent core's memory of one env; v unused without a core */\n"
             "typedef struct policy_state {\n    float v[POLICY_STATE_SIZE > 0 ? "
             "POLICY_STATE_SIZE : 1];\n} policy_state;\n\n");
    emit(&w, "static inline void policy_reset(policy_state *state) {\n"
             "    if (state) memset(state, 0, sizeof *state);\n}\n\n");

    if (lp->obs_map.size) {
        emit(&w, "#define POLICY_OBS_CLIP ");
        emit_float(&w, lp->obs_map.clip);
        emit(&w, "\n");
        emit_array(&w, "policy_obs_shift", lp->obs_map.shift, (size_t)lp->obs_map.size);
        emit_array(&w, "policy_obs_scale", lp->obs_map.scale, (size_t)lp->obs_map.size);
    }
    for (int i = 0; i < policy->num_tensors; i++) {
        const sk_tensor_info *t = &policy->tensors[i];
        if (lp->no_value && strncmp(t->name, "critic.", sizeof "critic." - 1) == 0) continue;
        char name[48];
        array_name(name, sizeof name, t->name);
        emit(&w, "/* %s (%d, %d) */\n", t->name, t->rows, t->cols);
        emit_array(&w, name, lp->params + t->offset, (size_t)t->rows * (size_t)t->cols);
    }
    if (discrete) emit_action_tables(&w, space);
    if (!discrete && lp->squash) { /* SAC's: tanh(mean) * scale + bias */
        float scale[SK_MAX_ACTION_DIM], bias[SK_MAX_ACTION_DIM];
        sk_loaded_policy_bounds(lp, scale, bias);
        emit_array(&w, "policy_action_scale", scale, (size_t)space->dim);
        emit_array(&w, "policy_action_bias", bias, (size_t)space->dim);
    }
    if (!discrete && !lp->squash && lp->clip_actions) { /* ppo.clip_actions */
        emit_array(&w, "policy_action_low", space->low, (size_t)space->dim);
        emit_array(&w, "policy_action_high", space->high, (size_t)space->dim);
    }
    emit(&w, "%s", helpers);

    emit(&w, "/* The actor's output into out and, with want_value, the critic's value (else 0). */\n"
             "static inline float policy_run(const policy_obs_t *obs, policy_state *state,\n"
             "                               float *out, int want_value) {\n");
    if (!policy->core) emit(&w, "    (void)state;\n");
    char features[32];
    emit_trunk(&w, policy, lp, features);
    emit_net(&w, policy, SK_NET_ACTOR, features, "out");
    emit(&w, "    float value[1] = {0.0f};\n    if (!want_value) return value[0];\n");
    if (lp->no_value) emit(&w, "    /* the run's learner has no state value: 0 */\n");
    else emit_net(&w, policy, SK_NET_CRITIC, features, "value");
    emit(&w, "    return value[0];\n}\n\n");
    emit(&w, "/* The actor's output into out (POLICY_OUT_SIZE); returns the critic's value. A\n"
             " * recurrent state advances. */\n"
             "static inline float policy_forward(const policy_obs_t *obs, policy_state *state,\n"
             "                                   float *out) {\n"
             "    return policy_run(obs, state, out, 1);\n}\n\n");

    emit(&w, "/* The greedy action (POLICY_ACTION_SIZE) for obs. */\n"
             "static inline void policy_act(const policy_obs_t *obs, const uint8_t *mask,\n"
             "                              policy_state *state, policy_action_t *action) {\n"
             "    float out[POLICY_OUT_SIZE];\n"
             "    (void)policy_run(obs, state, out, 0); /* the critic is left out */\n");
    if (discrete) {
        if (!policy->mask_size) emit(&w, "    mask = NULL; /* the policy takes no masks */\n");
        emit(&w, "%s", greedy_discrete);
    } else if (lp->squash) {
        emit(&w, "    (void)mask;\n"
                 "    for (int d = 0; d < POLICY_ACTION_SIZE; d++)\n"
                 "        action[d] = tanhf(out[d]) * policy_action_scale[d] + "
                 "policy_action_bias[d];\n");
    } else if (lp->clip_actions) {
        emit(&w, "    (void)mask;\n"
                 "    for (int d = 0; d < POLICY_ACTION_SIZE; d++)\n"
                 "        action[d] = out[d] < policy_action_low[d]    ? policy_action_low[d]\n"
                 "                    : out[d] > policy_action_high[d] ? policy_action_high[d]\n"
                 "                                                     : out[d];\n");
    } else {
        emit(&w, "    (void)mask;\n"
                 "    for (int d = 0; d < POLICY_ACTION_SIZE; d++) action[d] = out[d];\n");
    }
    emit(&w, "}\n\n#endif /* SKINNER_POLICY_H */\n");
    bool failed = ferror(w.file) != 0;
    if (fclose(w.file) != 0) failed = true;
    if (failed) return sk_fail(SK_ERR_IO, "writing the C header '%s' failed: %s", path, strerror(errno));
    return SK_OK;
}
