/*
 * `skinner export CHECKPOINT --onnx FILE`: the policy as an ONNX model, its protobuf
 * written here. ONNX's wire format is protobuf's: a field is a varint tag (number << 3 |
 * wire type) then a varint, a fixed32 or a length-prefixed body, and a model needs a
 * dozen message types of a few fields each (onnx/onnx.proto). src/io/protobuf.h writes
 * them with no dependency; Debian's libprotobuf-c-dev would need onnx.proto compiled at
 * build time (protoc-c) for the same bytes.
 *
 * The graph is the acting path of actor.c on a batch of rows: Cast (uint8 images), Sub,
 * Mul and Clip (the frozen normaliser folded in), Reshape/Transpose around Conv + Relu
 * (NCHW inside, channels last outside, as skinner's maps), Gemm layers, the recurrent cell
 * unrolled into its gates (Gemm, Split, Sigmoid, Tanh, Mul, Add: PyTorch's gate order and
 * arithmetic, which ONNX's own LSTM op orders differently), then each head's logits, the
 * mask applied with Where and the greedy action by ArgMax (its first maximum, as skinner
 * breaks ties).
 */
#include "../core/core.h"
#include "../io/protobuf.h"
#include "export.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ONNX_IR_VERSION 8
#define ONNX_OPSET 17

/* onnx.proto's TensorProto.DataType and AttributeProto.AttributeType values */
enum { ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT64 = 7, ONNX_BOOL = 9 };
enum { ATTR_FLOAT = 1, ATTR_INT = 2, ATTR_INTS = 7 };
/* ---- the graph being built ---- */

typedef struct graph {
    sk_pb nodes, initializers, inputs, outputs;
    int next_name;
} graph;

/* A fresh value name ("t7"), in a ring of buffers long enough for one node's use. */
static const char *fresh(graph *g) {
    static _Thread_local char names[16][16];
    char *name = names[g->next_name % 16];
    snprintf(name, 16, "t%d", g->next_name++);
    return name;
}

/* TensorProto: dims, data type, name and raw little-endian data. */
static void tensor_proto(sk_pb *t, const char *name, int type, const int64_t *dims, int ndim,
                         const void *data, size_t bytes) {
    for (int d = 0; d < ndim; d++) sk_pb_int(t, 1, dims[d]);
    sk_pb_int(t, 2, type);
    sk_pb_string(t, 8, name);
    sk_pb_bytes(t, 9, data, bytes);
}

static void initializer(graph *g, const char *name, int type, const int64_t *dims, int ndim,
                        const void *data, size_t bytes) {
    sk_pb t = {0};
    tensor_proto(&t, name, type, dims, ndim, data, bytes);
    sk_pb_message(&g->initializers, 5, &t);
}

/* A float tensor initializer under a fresh name (copied into out_name). */
static void const_floats(graph *g, char out_name[16], const float *values, const int64_t *dims,
                         int ndim) {
    size_t count = 1;
    for (int d = 0; d < ndim; d++) count *= (size_t)dims[d];
    snprintf(out_name, 16, "%s", fresh(g));
    initializer(g, out_name, ONNX_FLOAT, dims, ndim, values, count * sizeof(float));
}

static void const_ints(graph *g, char out_name[16], const int64_t *values, int count) {
    int64_t dims[1] = {count};
    snprintf(out_name, 16, "%s", fresh(g));
    initializer(g, out_name, ONNX_INT64, dims, 1, values, (size_t)count * sizeof(int64_t));
}

/* A scalar int64 initializer under a fresh name. */
static void const_ints_scalar(graph *g, char out_name[16], int64_t value) {
    snprintf(out_name, 16, "%s", fresh(g));
    initializer(g, out_name, ONNX_INT64, NULL, 0, &value, sizeof value);
}

typedef struct attr {
    const char *name;
    int type;        /* ATTR_INT, ATTR_FLOAT, ATTR_INTS */
    int64_t i;
    float f;
    const int64_t *ints;
    int count;
} attr;

/* A node of op_type from inputs to outputs (NULL-terminated lists) with attributes. */
static void node(graph *g, const char *op_type, const char *const *inputs,
                 const char *const *outputs, const attr *attrs, int num_attrs) {
    sk_pb n = {0};
    for (int k = 0; inputs[k]; k++) sk_pb_string(&n, 1, inputs[k]);
    for (int k = 0; outputs[k]; k++) sk_pb_string(&n, 2, outputs[k]);
    sk_pb_string(&n, 4, op_type);
    for (int k = 0; k < num_attrs; k++) {
        sk_pb a = {0};
        sk_pb_string(&a, 1, attrs[k].name);
        if (attrs[k].type == ATTR_FLOAT) {
            sk_pb_float(&a, 2, attrs[k].f);
        } else if (attrs[k].type == ATTR_INT) {
            sk_pb_int(&a, 3, attrs[k].i);
        } else {
            for (int j = 0; j < attrs[k].count; j++) sk_pb_int(&a, 8, attrs[k].ints[j]);
        }
        sk_pb_int(&a, 20, attrs[k].type);
        sk_pb_message(&n, 5, &a);
    }
    sk_pb_message(&g->nodes, 1, &n);
}

/* One-input, one-output node into a fresh name (copied to out). */
static void unary(graph *g, const char *op, const char *in, char out[16]) {
    char result[16];
    snprintf(result, sizeof result, "%s", fresh(g));
    node(g, op, (const char *[]){in, NULL}, (const char *[]){result, NULL}, NULL, 0);
    snprintf(out, 16, "%s", result);
}

static void binary(graph *g, const char *op, const char *a, const char *b, char out[16]) {
    char result[16];
    snprintf(result, sizeof result, "%s", fresh(g));
    node(g, op, (const char *[]){a, b, NULL}, (const char *[]){result, NULL}, NULL, 0);
    snprintf(out, 16, "%s", result);
}

/* ValueInfoProto of a tensor (rows: a symbolic first dimension, then cols). */
static void value_info(sk_pb *list, int field, const char *name, int type, const char *rows,
                       int64_t cols) {
    sk_pb dim_rows = {0}, dim_cols = {0}, shape = {0}, tensor = {0}, type_proto = {0}, info = {0};
    sk_pb_string(&dim_rows, 2, rows);
    sk_pb_int(&dim_cols, 1, cols);
    sk_pb_message(&shape, 1, &dim_rows);
    sk_pb_message(&shape, 1, &dim_cols);
    sk_pb_int(&tensor, 1, type);
    sk_pb_message(&tensor, 2, &shape);
    sk_pb_message(&type_proto, 1, &tensor);
    sk_pb_string(&info, 1, name);
    sk_pb_message(&info, 2, &type_proto);
    sk_pb_message(list, field, &info);
}

/* Gemm with a transposed weight: out = in @ W^T + b, W and b policy tensors. */
static void gemm_with(graph *g, const sk_loaded_policy *lp, int weight_tensor, int bias_tensor,
                      const char *in, char out[16]) {
    const sk_tensor_info *w = &lp->policy.tensors[weight_tensor];
    const sk_tensor_info *b = &lp->policy.tensors[bias_tensor];
    char weight[16], bias[16], result[16];
    int64_t wdims[2] = {w->rows, w->cols}, bdims[1] = {b->rows};
    const_floats(g, weight, lp->params + w->offset, wdims, 2);
    const_floats(g, bias, lp->params + b->offset, bdims, 1);
    snprintf(result, sizeof result, "%s", fresh(g));
    attr trans = {.name = "transB", .type = ATTR_INT, .i = 1};
    node(g, "Gemm", (const char *[]){in, weight, bias, NULL}, (const char *[]){result, NULL},
         &trans, 1);
    snprintf(out, 16, "%s", result);
}

/* A layer whose bias follows its weight in the tensor table. */
static void gemm(graph *g, const sk_loaded_policy *lp, int tensor, const char *in, char out[16]) {
    gemm_with(g, lp, tensor, tensor + 1, in, out);
}

static void activation(graph *g, sk_activation act, const char *in, char out[16]) {
    unary(g, act == SK_ACTIVATION_TANH ? "Tanh" : "Relu", in, out);
}

/* Columns lo..hi-1 of a (rows, n) value. */
static void slice_cols(graph *g, const char *in, int64_t lo, int64_t hi, char out[16]) {
    char starts[16], ends[16], axes[16], result[16];
    const_ints(g, starts, &lo, 1);
    const_ints(g, ends, &hi, 1);
    const_ints(g, axes, (const int64_t[]){1}, 1);
    snprintf(result, sizeof result, "%s", fresh(g));
    node(g, "Slice", (const char *[]){in, starts, ends, axes, NULL},
         (const char *[]){result, NULL}, NULL, 0);
    snprintf(out, 16, "%s", result);
}

/* The observation into the features the trunk reads (the name into out). */
static void encode(graph *g, const sk_loaded_policy *lp, char x[16]) {
    const sk_policy *policy = &lp->policy;
    snprintf(x, 16, "obs");
    if (lp->env->obs_dtype == SK_OBS_U8) {
        char result[16];
        snprintf(result, sizeof result, "%s", fresh(g));
        attr to = {.name = "to", .type = ATTR_INT, .i = ONNX_FLOAT};
        node(g, "Cast", (const char *[]){x, NULL}, (const char *[]){result, NULL}, &to, 1);
        snprintf(x, 16, "%s", result);
    }
    if (lp->obs_map.size) {
        char shift[16], scale[16], low[16], high[16], result[16];
        int64_t dims[2] = {1, lp->obs_map.size};
        const_floats(g, shift, lp->obs_map.shift, dims, 2);
        const_floats(g, scale, lp->obs_map.scale, dims, 2);
        float clip_low = -lp->obs_map.clip, clip_high = lp->obs_map.clip;
        const_floats(g, low, &clip_low, NULL, 0);
        const_floats(g, high, &clip_high, NULL, 0);
        binary(g, "Sub", x, shift, x);
        binary(g, "Mul", x, scale, x);
        snprintf(result, sizeof result, "%s", fresh(g));
        node(g, "Clip", (const char *[]){x, low, high, NULL}, (const char *[]){result, NULL},
             NULL, 0);
        snprintf(x, 16, "%s", result);
    }
    if (sk_policy_has_encoder(policy)) {
        char shape[16];
        const_ints(g, shape,
                   (const int64_t[]){-1, policy->cnn.height, policy->cnn.width,
                                     policy->cnn.channels}, 4);
        binary(g, "Reshape", x, shape, x);
        attr to_nchw = {.name = "perm", .type = ATTR_INTS, .ints = (const int64_t[]){0, 3, 1, 2},
                        .count = 4};
        char result[16];
        snprintf(result, sizeof result, "%s", fresh(g));
        node(g, "Transpose", (const char *[]){x, NULL}, (const char *[]){result, NULL},
             &to_nchw, 1);
        snprintf(x, 16, "%s", result);
        for (int l = 0; l < policy->cnn.layers; l++) {
            const sk_conv_shape *s = &policy->conv[l];
            const sk_tensor_info *t = &policy->tensors[policy->conv_tensor + 2 * l];
            char weight[16], bias[16];
            int64_t wdims[4] = {s->out_channels, s->channels, s->kernel, s->kernel};
            int64_t bdims[1] = {s->out_channels};
            const_floats(g, weight, lp->params + t[0].offset, wdims, 4);
            const_floats(g, bias, lp->params + t[1].offset, bdims, 1);
            int64_t pad = policy->cnn.padding[l];
            attr attrs[3] = {
                {.name = "kernel_shape", .type = ATTR_INTS,
                 .ints = (const int64_t[]){s->kernel, s->kernel}, .count = 2},
                {.name = "strides", .type = ATTR_INTS,
                 .ints = (const int64_t[]){s->stride, s->stride}, .count = 2},
                {.name = "pads", .type = ATTR_INTS,
                 .ints = (const int64_t[]){pad, pad, pad, pad}, .count = 4},
            };
            snprintf(result, sizeof result, "%s", fresh(g));
            node(g, "Conv", (const char *[]){x, weight, bias, NULL},
                 (const char *[]){result, NULL}, attrs, 3);
            unary(g, "Relu", result, x);
        }
        attr to_nhwc = {.name = "perm", .type = ATTR_INTS, .ints = (const int64_t[]){0, 2, 3, 1},
                        .count = 4};
        snprintf(result, sizeof result, "%s", fresh(g));
        node(g, "Transpose", (const char *[]){x, NULL}, (const char *[]){result, NULL},
             &to_nhwc, 1);
        attr axis = {.name = "axis", .type = ATTR_INT, .i = 1};
        snprintf(x, 16, "%s", fresh(g));
        node(g, "Flatten", (const char *[]){result, NULL}, (const char *[]){x, NULL}, &axis, 1);
        if (policy->cnn.dense) {
            gemm(g, lp, policy->conv_tensor + 2 * policy->cnn.layers, x, x);
            unary(g, "Relu", x, x);
        }
    }
    if (!policy->core) return;
    gemm(g, lp, policy->encoder_tensor, x, x);
    activation(g, policy->activation, x, x);
}

/* The core's step from the encoding x and "state_in" to "state_out"; its h into x. */
static void core_step(graph *g, const sk_loaded_policy *lp, char x[16]) {
    const sk_policy *policy = &lp->policy;
    int64_t H = policy->core_size;
    bool lstm = policy->rnn.cell == SK_RNN_LSTM;
    int gates = lstm ? 4 : 3;
    char h[16], c[16], gi[16], gh[16];
    slice_cols(g, "state_in", 0, H, h);
    if (lstm) slice_cols(g, "state_in", H, 2 * H, c);
    /* weight_ih, weight_hh, bias_ih, bias_hh: each weight's bias is two tensors on */
    gemm_with(g, lp, policy->core_tensor + SK_RNN_WEIGHT_IH, policy->core_tensor + SK_RNN_BIAS_IH,
              x, gi);
    gemm_with(g, lp, policy->core_tensor + SK_RNN_WEIGHT_HH, policy->core_tensor + SK_RNN_BIAS_HH,
              h, gh);
    char split[16], pi[4][16], ph[4][16];
    int64_t sizes[4] = {H, H, H, H};
    const_ints(g, split, sizes, gates);
    attr axis = {.name = "axis", .type = ATTR_INT, .i = 1};
    for (int k = 0; k < gates; k++) {
        snprintf(pi[k], 16, "%s", fresh(g));
        snprintf(ph[k], 16, "%s", fresh(g));
    }
    const char *outs_i[5] = {pi[0], pi[1], pi[2], gates == 4 ? pi[3] : NULL, NULL};
    const char *outs_h[5] = {ph[0], ph[1], ph[2], gates == 4 ? ph[3] : NULL, NULL};
    node(g, "Split", (const char *[]){gi, split, NULL}, outs_i, &axis, 1);
    node(g, "Split", (const char *[]){gh, split, NULL}, outs_h, &axis, 1);
    if (lstm) {
        char gate[4][16], c_new[16], fc[16], ig[16], tc[16];
        for (int k = 0; k < 4; k++) {
            binary(g, "Add", pi[k], ph[k], gate[k]);
            unary(g, k == 2 ? "Tanh" : "Sigmoid", gate[k], gate[k]);
        }
        binary(g, "Mul", gate[1], c, fc);
        binary(g, "Mul", gate[0], gate[2], ig);
        binary(g, "Add", fc, ig, c_new);
        unary(g, "Tanh", c_new, tc);
        binary(g, "Mul", gate[3], tc, x);
        node(g, "Concat", (const char *[]){x, c_new, NULL}, (const char *[]){"state_out", NULL},
             &axis, 1);
    } else {
        char r[16], z[16], n[16], rn[16], diff[16];
        binary(g, "Add", pi[0], ph[0], r);
        unary(g, "Sigmoid", r, r);
        binary(g, "Add", pi[1], ph[1], z);
        unary(g, "Sigmoid", z, z);
        binary(g, "Mul", r, ph[2], rn);
        binary(g, "Add", pi[2], rn, n);
        unary(g, "Tanh", n, n);
        binary(g, "Sub", h, n, diff); /* (h - n) z + n: skinner's order */
        binary(g, "Mul", diff, z, diff);
        binary(g, "Add", diff, n, x);
        node(g, "Identity", (const char *[]){x, NULL}, (const char *[]){"state_out", NULL},
             NULL, 0);
    }
}

/* One net from the features into out (its last Gemm's output). */
static void net(graph *g, const sk_loaded_policy *lp, int which, const char *features,
                char out[16]) {
    const sk_policy *policy = &lp->policy;
    char x[16];
    snprintf(x, sizeof x, "%s", features);
    for (int l = 0; l <= policy->layers; l++) {
        gemm(g, lp, policy->weight_tensor[which][l], x, x);
        if (l < policy->layers) activation(g, policy->activation, x, x);
    }
    snprintf(out, 16, "%s", x);
}

/* Head h's mask (bool, rows x n) from the "mask" input, given a0 (rows, 1) int64. */
static void head_mask(graph *g, const sk_action_space *space, int h, int offset,
                      const char *a0, char out[16]) {
    char m[16], zero[16];
    int n = space->head_sizes[h], n0 = space->head_sizes[0];
    if (!space->masks_by_head0 || h == 0) {
        uint8_t zero_byte = 0;
        snprintf(zero, sizeof zero, "%s", fresh(g));
        initializer(g, zero, ONNX_UINT8, NULL, 0, &zero_byte, 1);
        slice_cols(g, "mask", offset, offset + n, m);
        binary(g, "Greater", m, zero, out);
        return;
    }
    int at = n0;
    for (int k = 1; k < h; k++) at += n0 * space->head_sizes[k];
    char block[16], shape[16], range[16], onehot[16], axes[16], picked[16], flat[16];
    slice_cols(g, "mask", at, at + (int64_t)n0 * n, block);
    node(g, "Cast", (const char *[]){block, NULL}, (const char *[]){fresh(g), NULL},
         &(attr){.name = "to", .type = ATTR_INT, .i = ONNX_FLOAT}, 1);
    snprintf(block, sizeof block, "t%d", g->next_name - 1);
    const_ints(g, shape, (const int64_t[]){-1, n0, n}, 3);
    binary(g, "Reshape", block, shape, block);
    int64_t zero_start = 0, limit = n0, delta = 1;
    char start_name[16], limit_name[16], delta_name[16];
    const_ints_scalar(g, start_name, zero_start);
    const_ints_scalar(g, limit_name, limit);
    const_ints_scalar(g, delta_name, delta);
    snprintf(range, sizeof range, "%s", fresh(g));
    node(g, "Range", (const char *[]){start_name, limit_name, delta_name, NULL},
         (const char *[]){range, NULL}, NULL, 0); /* 0 .. n0 - 1 */
    binary(g, "Equal", a0, range, onehot); /* (rows, n0) */
    node(g, "Cast", (const char *[]){onehot, NULL}, (const char *[]){fresh(g), NULL},
         &(attr){.name = "to", .type = ATTR_INT, .i = ONNX_FLOAT}, 1);
    snprintf(onehot, sizeof onehot, "t%d", g->next_name - 1);
    const_ints(g, axes, (const int64_t[]){1}, 1);
    binary(g, "Unsqueeze", onehot, axes, onehot);        /* (rows, 1, n0) */
    binary(g, "MatMul", onehot, block, picked);          /* (rows, 1, n) */
    const_ints(g, shape, (const int64_t[]){-1, n}, 2);
    binary(g, "Reshape", picked, shape, flat);
    char half[16];
    float half_value = 0.5f;
    const_floats(g, half, &half_value, NULL, 0);
    binary(g, "Greater", flat, half, out);
    uint64_t when = space->relevant_when[h];
    if (!when) return;
    /* an irrelevant head is not masked: allowed where Not(relevant[a0]) */
    uint8_t *relevant = calloc((size_t)n0, 1); /* choices past 64 are never relevant */
    if (!relevant) {
        g->nodes.failed = true;
        return;
    }
    for (int a = 0; a < n0 && a < 64; a++) relevant[a] = (uint8_t)((when >> a) & 1u);
    char table[16], rel[16], not_rel[16];
    snprintf(table, sizeof table, "%s", fresh(g));
    int64_t dims[1] = {n0};
    initializer(g, table, ONNX_BOOL, dims, 1, relevant, (size_t)n0);
    free(relevant);
    binary(g, "Gather", table, a0, rel); /* (rows, 1) */
    unary(g, "Not", rel, not_rel);
    binary(g, "Or", out, not_rel, out);
}

/* The discrete heads' outputs "logits_H" and the greedy "action" (rows, heads) int64. */
static void discrete_outputs(graph *g, const sk_loaded_policy *lp, const char *logits) {
    const sk_policy *policy = &lp->policy;
    const sk_action_space *space = &policy->space;
    char actions[SK_MAX_HEADS][16];
    const char *concat_inputs[SK_MAX_HEADS + 1] = {0};
    float neg_inf = -INFINITY;
    char minus[16] = "";
    if (policy->mask_size) const_floats(g, minus, &neg_inf, NULL, 0);
    for (int h = 0, offset = 0; h < space->num_heads; offset += space->head_sizes[h], h++) {
        char name[16], z[16];
        snprintf(name, sizeof name, "logits_%d", h);
        slice_cols(g, logits, offset, offset + space->head_sizes[h], z);
        node(g, "Identity", (const char *[]){z, NULL}, (const char *[]){name, NULL}, NULL, 0);
        value_info(&g->outputs, 12, name, ONNX_FLOAT, "batch", space->head_sizes[h]);
        if (policy->mask_size) {
            char m[16], masked[16];
            head_mask(g, space, h, offset, actions[0], m);
            snprintf(masked, sizeof masked, "%s", fresh(g));
            node(g, "Where", (const char *[]){m, z, minus, NULL},
                 (const char *[]){masked, NULL}, NULL, 0);
            snprintf(z, sizeof z, "%s", masked);
        }
        attr attrs[2] = {{.name = "axis", .type = ATTR_INT, .i = 1},
                         {.name = "keepdims", .type = ATTR_INT, .i = 1}};
        snprintf(actions[h], 16, "%s", fresh(g));
        node(g, "ArgMax", (const char *[]){z, NULL}, (const char *[]){actions[h], NULL}, attrs, 2);
        concat_inputs[h] = actions[h];
    }
    attr axis = {.name = "axis", .type = ATTR_INT, .i = 1};
    node(g, "Concat", concat_inputs, (const char *[]){"action", NULL}, &axis, 1);
    value_info(&g->outputs, 12, "action", ONNX_INT64, "batch", space->num_heads);
}

/* "mean", the state-independent "log_std" and the greedy "action" (the mean, clipped to the
 * bounds when the run clipped its actions); a squashed policy (SAC's) has no such log-std, and
 * its action is tanh(mean) scaled into the bounds. */
static void continuous_outputs(graph *g, const sk_loaded_policy *lp, const char *means) {
    const sk_policy *policy = &lp->policy;
    int dim = policy->space.dim;
    node(g, "Identity", (const char *[]){means, NULL}, (const char *[]){"mean", NULL}, NULL, 0);
    value_info(&g->outputs, 12, "mean", ONNX_FLOAT, "batch", dim);
    int64_t dims[2] = {1, dim};
    char action[16];
    snprintf(action, sizeof action, "%s", means);
    if (lp->squash) {
        float scale[SK_MAX_ACTION_DIM], bias[SK_MAX_ACTION_DIM];
        sk_loaded_policy_bounds(lp, scale, bias);
        char scale_name[16], bias_name[16], squashed[16], scaled[16];
        const_floats(g, scale_name, scale, dims, 2);
        const_floats(g, bias_name, bias, dims, 2);
        unary(g, "Tanh", means, squashed);
        binary(g, "Mul", squashed, scale_name, scaled);
        binary(g, "Add", scaled, bias_name, action);
    } else {
        const sk_tensor_info *t = &policy->tensors[policy->log_std_tensor];
        char log_std[16];
        const_floats(g, log_std, lp->params + t->offset, dims, 2);
        node(g, "Identity", (const char *[]){log_std, NULL}, (const char *[]){"log_std", NULL},
             NULL, 0);
        value_info(&g->outputs, 12, "log_std", ONNX_FLOAT, "one", dim);
        if (lp->clip_actions) { /* ppo.clip_actions: the mean clipped to the bounds */
            char low[16], high[16], raised[16];
            const_floats(g, low, policy->space.low, dims, 2);
            const_floats(g, high, policy->space.high, dims, 2);
            binary(g, "Max", means, low, raised);
            binary(g, "Min", raised, high, action);
        }
    }
    node(g, "Identity", (const char *[]){action, NULL}, (const char *[]){"action", NULL}, NULL, 0);
    value_info(&g->outputs, 12, "action", ONNX_FLOAT, "batch", dim);
}

static void graph_free(graph *g) {
    free(g->nodes.data);
    free(g->initializers.data);
    free(g->inputs.data);
    free(g->outputs.data);
}

sk_status sk_export_onnx(const sk_loaded_policy *lp, const char *path) {
    sk_status status = sk_export_supported(lp);
    if (status != SK_OK) return status;
    const sk_policy *policy = &lp->policy;
    graph g = {0};
    int obs_type = lp->env->obs_dtype == SK_OBS_U8 ? ONNX_UINT8 : ONNX_FLOAT;
    value_info(&g.inputs, 11, "obs", obs_type, "batch", policy->obs_size);
    int state_size = sk_policy_state_size(policy);
    if (state_size) value_info(&g.inputs, 11, "state_in", ONNX_FLOAT, "batch", state_size);
    /* The mask is a plain input: one row of ones (which broadcasts over the batch) allows
     * every action. ONNX's way of an optional input, an initializer of the same name as its
     * default, is not an input to a runtime: Python's onnxruntime 1.31 leaves it out of
     * get_inputs() (it is among get_overridable_initializers()), and warns that it keeps
     * the graph from constant folding (measured). */
    if (policy->mask_size)
        value_info(&g.inputs, 11, "mask", ONNX_UINT8, "mask_rows", policy->mask_size);
    char x[16], out[16], value[16];
    encode(&g, lp, x);
    if (policy->core) {
        core_step(&g, lp, x);
        value_info(&g.outputs, 12, "state_out", ONNX_FLOAT, "batch", state_size);
    }
    net(&g, lp, SK_NET_ACTOR, x, out);
    if (!lp->no_value) { /* DQN's and SAC's critics are no state value */
        net(&g, lp, SK_NET_CRITIC, x, value);
        node(&g, "Identity", (const char *[]){value, NULL}, (const char *[]){"value", NULL}, NULL, 0);
        value_info(&g.outputs, 12, "value", ONNX_FLOAT, "batch", 1);
    }
    if (policy->space.kind == SK_SPACE_DISCRETE) discrete_outputs(&g, lp, out);
    else continuous_outputs(&g, lp, out);

    /* GraphProto: node 1, name 2, initializer 5, input 11, output 12 (in field order is not
     * required; these are the lists as built) */
    sk_pb graph_msg = {0}, model = {0}, opset = {0};
    sk_pb_put(&graph_msg, g.nodes.data, g.nodes.len);
    sk_pb_string(&graph_msg, 2, "skinner_policy");
    sk_pb_put(&graph_msg, g.initializers.data, g.initializers.len);
    sk_pb_put(&graph_msg, g.inputs.data, g.inputs.len);
    sk_pb_put(&graph_msg, g.outputs.data, g.outputs.len);
    bool failed = g.nodes.failed || g.initializers.failed || g.inputs.failed || g.outputs.failed;
    graph_free(&g);
    sk_pb_int(&model, 1, ONNX_IR_VERSION);
    sk_pb_string(&model, 2, "skinner");
    sk_pb_string(&model, 3, SK_VERSION);
    sk_pb_message(&model, 7, &graph_msg);
    sk_pb_string(&opset, 1, "");
    sk_pb_int(&opset, 2, ONNX_OPSET);
    sk_pb_message(&model, 8, &opset);
    if (failed || model.failed) {
        free(model.data);
        return sk_fail(SK_ERR_NOMEM, "out of memory for the ONNX model");
    }
    FILE *file = fopen(path, "wb");
    if (!file) {
        free(model.data);
        return sk_fail(SK_ERR_IO, "cannot write the ONNX model '%s': %s", path, strerror(errno));
    }
    bool written = fwrite(model.data, 1, model.len, file) == model.len;
    written = fclose(file) == 0 && written;
    free(model.data);
    return written ? SK_OK
                   : sk_fail(SK_ERR_IO, "writing the ONNX model '%s' failed: %s", path,
                             strerror(errno));
}
