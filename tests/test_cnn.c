/* The CNN encoder (policy.encoder = cnn; issue 32 ask 3): nn/conv's sk_conv_create_torch
 * (oneDNN, fp32 and bf16, bf16 native and emulated: issue 48) against
 * torch.nn.Conv2d (tests/fixtures/make_cnn_fixtures.py: outputs and the input, weight and
 * bias gradients, a 0/1 image as uint8 observations give included) and finite differences;
 * a policy behind the encoder (with and without an LSTM core) against finite differences
 * of every parameter; the tensors' kinds, not their names, deciding what is transposed and
 * what is a vector; the settings that cannot run refused at creation naming the key. */
#include "test_util.h"
#include "torch_fixture.h"

#include "core/config.h"
#include "core/rng.h"
#include "nn/conv.h"
#include "nn/gemm_small.h"
#include "skinner.h"
#include "policy/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static float *to_floats(const record *r) {
    float *out = calloc((size_t)r->count, sizeof(float));
    for (int i = 0; i < r->count; i++) out[i] = (float)r->values[i];
    return out;
}

/* Relative errors, with a floor of `floor_share` of the record's largest |value| (bf16: a
 * value that cancels to near zero keeps the error of its terms). */
static int compare(const char *what, const float *got, const record *want, double tol,
                   double floor_share) {
    int failures = 0;
    double worst = 0.0, largest = 0.0;
    for (int i = 0; i < want->count; i++) largest = fmax(largest, fabs(want->values[i]));
    for (int i = 0; i < want->count; i++) {
        double err = test_rel_err(got[i], want->values[i], fmax(1e-4, floor_share * largest));
        if (err > worst) worst = err;
        if (err > tol && failures++ < 5)
            print_error("%s[%d]: skinner %.9g, torch %.9g\n", what, i, (double)got[i],
                        want->values[i]);
    }
    print_message("%s: %d values, worst relative error %.2e\n", what, want->count, worst);
    return failures;
}

/* Every case of the fixture: forward and the three gradients, in fp32, or in bf16 (inputs
 * rounded to 8 bits of mantissa, sums in float: a few 1e-3 of the largest value). */
static void check_conv_against_torch(sk_precision precision, double tol, double floor_share) {
    fixture f;
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/cnn_conv2d.txt", SKINNER_SOURCE_DIR);
    load_fixture(&f, path);
    const record *records = f.records;
    int count = f.num_records, cases = 0, failures = 0;
    for (int at = 0; at + 9 <= count; at += 9, cases++) {
        const record *c = &records[at];
        assert_string_equal(c->name, "case");
        int B = (int)c->values[0];
        assert_int_equal((int)c->values[5], (int)c->values[6]); /* square kernels */
        sk_conv_shape shape = {.height = (int)c->values[1], .width = (int)c->values[2],
                               .channels = (int)c->values[3], .out_channels = (int)c->values[4],
                               .kernel = (int)c->values[5], .stride = (int)c->values[7],
                               .groups = 1};
        int padding = (int)c->values[8];
        sk_conv *conv;
        assert_int_equal(sk_conv_create_torch(&conv, shape, padding, precision), SK_OK);
        float *x = to_floats(&records[at + 1]), *w = to_floats(&records[at + 2]),
              *b = to_floats(&records[at + 3]), *dy = to_floats(&records[at + 5]);
        size_t out = (size_t)records[at + 4].count;
        assert_int_equal((int)out,
                         B * sk_conv_torch_out_side(shape.height, shape.kernel, shape.stride, padding) *
                             sk_conv_torch_out_side(shape.width, shape.kernel, shape.stride, padding) *
                             shape.out_channels);
        float *y = calloc(out, sizeof(float));
        float *dx = calloc((size_t)records[at + 1].count, sizeof(float));
        float *dw = calloc((size_t)records[at + 2].count, sizeof(float));
        float *db = calloc((size_t)records[at + 3].count, sizeof(float));
        sk_conv_forward(conv, y, x, w, b, B);
        sk_conv_backward(conv, dx, dw, db, dy, x, w, B);
        failures += compare("y", y, &records[at + 4], tol, floor_share) +
                    compare("dx", dx, &records[at + 6], tol, floor_share) +
                    compare("dweight", dw, &records[at + 7], tol, floor_share) +
                    compare("dbias", db, &records[at + 8], tol, floor_share);
        sk_conv_destroy(conv);
        free(x), free(w), free(b), free(dy), free(y), free(dx), free(dw), free(db);
    }
    free_fixture(&f);
    assert_int_equal(cases, 3);
    assert_int_equal(failures, 0);
}

static void test_conv_matches_torch(void **state) {
    (void)state;
    check_conv_against_torch(SK_PRECISION_F32, 1e-4, 0.0);
}

static float *gaussian(size_t n, uint64_t *rng) {
    float *v = calloc(n, sizeof(float));
    for (size_t i = 0; i < n; i++) v[i] = (float)sk_rng_normal(rng);
    return v;
}

/* ---- the bf16 path (SKINNER_CONV_BF16; nn/conv_backend.h) ---- */

#define BF16_PATH_ENV "SKINNER_CONV_BF16"
#define BF16_PATH_LINE "bf16 convolutions: "

/* The backend's "bf16 convolutions: ..." log lines, counted (each path is said once
 * per process), and every line printed as the default logger would. */
static int g_path_lines;
static char g_path_line[512];
static void log_watch(int level, const char *message, void *user) {
    (void)user;
    if (strncmp(message, BF16_PATH_LINE, sizeof BF16_PATH_LINE - 1) == 0) {
        g_path_lines++;
        snprintf(g_path_line, sizeof g_path_line, "%s", message);
    }
    fprintf(stderr, "skinner: %s%s\n", level > 0 ? "warning: " : "", message);
}

/* Under SKINNER_CONV_BF16=emulate or a oneDNN capped below AVX-512 (ctest's
 * *_bf16_emulated and *_avx2 entries), auto must have chosen emulation by itself. */
static bool emulation_expected(void) {
    const char *path = getenv(BF16_PATH_ENV), *cap = getenv("ONEDNN_MAX_CPU_ISA");
    return (path && strcmp(path, "emulate") == 0) ||
           (cap && cap[0] && strncasecmp(cap, "AVX512", 6) != 0);
}

static void test_conv_bf16_near_torch(void **state) {
    (void)state;
    check_conv_against_torch(SK_PRECISION_BF16, 2e-2, 1.0);
    /* three convolutions created, one line saying the path (the first bf16 ones here) */
    assert_int_equal(g_path_lines, 1);
    if (emulation_expected()) assert_non_null(strstr(g_path_line, "emulated ("));
}

static void bf16_path_set(const char *value) {
    if (value) setenv(BF16_PATH_ENV, value, 1);
    else unsetenv(BF16_PATH_ENV);
}

/* Worst |a - b| over the largest |b|: both paths multiply the same bf16 values, exactly
 * in f32, so only the order of the f32 sums (and oneDNN's kernels) differs. */
static double apart(const float *a, const float *b, size_t n) {
    double worst = 0.0, largest = 1e-30;
    for (size_t i = 0; i < n; i++) largest = fmax(largest, fabs((double)b[i]));
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)a[i] - b[i]) / largest);
    return worst;
}

#define NATIVE_EMULATED_TOL 1e-4 /* of the largest value; against torch bf16 allows 2e-2 */

/* Native against emulated bf16 on the same data, forward and the three gradients, over
 * the shapes the encoder and Morpho's host and seeds use (strides, groups, 1x1). Where
 * oneDNN has no native bf16 the forced native must be refused in words (no status
 * number, the ISA named, what to do); under a deliberate cap (ONEDNN_MAX_CPU_ISA) that
 * refusal is the check, otherwise the comparison is skipped loudly. */
static void test_conv_bf16_native_vs_emulated(void **state) {
    (void)state;
    const sk_conv_shape shapes[] = {
        {.height = 28, .width = 28, .channels = 1, .out_channels = 8, .kernel = 3, .stride = 2, .groups = 1},
        {.height = 14, .width = 14, .channels = 8, .out_channels = 8, .kernel = 3, .stride = 1, .groups = 1},
        {.height = 9, .width = 7, .channels = 4, .out_channels = 6, .kernel = 3, .stride = 2, .groups = 2},
        {.height = 7, .width = 7, .channels = 16, .out_channels = 16, .kernel = 3, .stride = 1, .groups = 16},
        {.height = 4, .width = 4, .channels = 32, .out_channels = 8, .kernel = 1, .stride = 1, .groups = 1},
    };
    const char *saved = getenv(BF16_PATH_ENV);
    char saved_copy[64] = "";
    if (saved) snprintf(saved_copy, sizeof saved_copy, "%s", saved);
    enum { B = 4 };
    uint64_t rng = 48;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        sk_conv_shape s = shapes[k];
        sk_conv *native = NULL, *emulated = NULL;
        bf16_path_set("native");
        sk_status st = sk_conv_create(&native, s, SK_PRECISION_BF16);
        if (st != SK_OK) {
            const char *why = sk_last_error();
            print_message("native bf16 refused: %s\n", why);
            assert_null(strstr(why, "status"));
            assert_non_null(strstr(why, "CPU ISA"));
            assert_non_null(strstr(why, "unset " BF16_PATH_ENV));
            bf16_path_set(saved ? saved_copy : NULL);
            const char *cap = getenv("ONEDNN_MAX_CPU_ISA");
            if (cap && cap[0]) {
                print_message("native bf16 is capped away (ONEDNN_MAX_CPU_ISA=%s): its refusal "
                              "checked, nothing to compare\n", cap);
                return;
            }
            TEST_SKIP("oneDNN has no native bf16 convolution on this CPU (%s): emulated bf16 is "
                      "checked against torch only", why);
        }
        bf16_path_set("emulate");
        assert_int_equal(sk_conv_create(&emulated, s, SK_PRECISION_BF16), SK_OK);
        bf16_path_set(saved ? saved_copy : NULL);
        int oh = sk_conv_out_side(s.height, s.kernel, s.stride),
            ow = sk_conv_out_side(s.width, s.kernel, s.stride);
        size_t nx = (size_t)B * s.height * s.width * s.channels, nw = sk_conv_weight_floats(s),
               ny = (size_t)B * oh * ow * s.out_channels, nb = (size_t)s.out_channels;
        float *x = gaussian(nx, &rng), *w = gaussian(nw, &rng), *b = gaussian(nb, &rng),
              *dy = gaussian(ny, &rng);
        float *out[2][4]; /* per path: y, dx, dw, db */
        sk_conv *convs[2] = {native, emulated};
        for (int path = 0; path < 2; path++) {
            out[path][0] = calloc(ny, sizeof(float)), out[path][1] = calloc(nx, sizeof(float));
            out[path][2] = calloc(nw, sizeof(float)), out[path][3] = calloc(nb, sizeof(float));
            sk_conv_forward(convs[path], out[path][0], x, w, b, B);
            sk_conv_backward(convs[path], out[path][1], out[path][2], out[path][3], dy, x, w, B);
        }
        const size_t sizes[4] = {ny, nx, nw, nb};
        double worst[4];
        for (int t = 0; t < 4; t++) worst[t] = apart(out[1][t], out[0][t], sizes[t]);
        print_message("%dx%dx%d -> %d, kernel %d, stride %d, groups %d: emulated from native "
                      "y %.1e, dx %.1e, dw %.1e, db %.1e (of the largest)\n", s.height, s.width,
                      s.channels, s.out_channels, s.kernel, s.stride, s.groups, worst[0],
                      worst[1], worst[2], worst[3]);
        for (int t = 0; t < 4; t++) assert_true(worst[t] <= NATIVE_EMULATED_TOL);
        for (int path = 0; path < 2; path++)
            for (int t = 0; t < 4; t++) free(out[path][t]);
        sk_conv_destroy(native);
        sk_conv_destroy(emulated);
        free(x), free(w), free(b), free(dy);
    }
}

/* A value SKINNER_CONV_BF16 does not know is refused naming the variable and its values;
 * fp32 convolutions never read it. */
static void test_conv_bf16_path_refusals(void **state) {
    (void)state;
    const char *saved = getenv(BF16_PATH_ENV);
    char saved_copy[64] = "";
    if (saved) snprintf(saved_copy, sizeof saved_copy, "%s", saved);
    sk_conv_shape s = {.height = 5, .width = 5, .channels = 2, .out_channels = 3, .kernel = 3,
                       .stride = 1, .groups = 1};
    sk_conv *conv = NULL;
    bf16_path_set("fast");
    assert_int_equal(sk_conv_create(&conv, s, SK_PRECISION_BF16), SK_ERR_INVALID);
    assert_null(conv);
    print_message("refused: %s\n", sk_last_error());
    assert_non_null(strstr(sk_last_error(), BF16_PATH_ENV " = 'fast': expected auto, native or "
                                            "emulate"));
    assert_int_equal(sk_conv_create(&conv, s, SK_PRECISION_F32), SK_OK);
    sk_conv_destroy(conv);
    bf16_path_set(saved ? saved_copy : NULL);
}

/* ---- finite differences of one convolution ---- */

typedef struct conv_case {
    sk_conv *conv;
    size_t out;
    int B;
    float *x, *w, *b, *r, *y;
} conv_case;

static double conv_loss(void *ctx) {
    conv_case *c = ctx;
    sk_conv_forward(c->conv, c->y, c->x, c->w, c->b, c->B);
    double loss = 0.0;
    for (size_t i = 0; i < c->out; i++) loss += (double)c->y[i] * (double)c->r[i];
    return loss;
}

/* an even kernel, stride 2 and padding 1 over a 5x7 image: 3x4 maps */
static void test_conv_finite_differences(void **state) {
    (void)state;
    uint64_t rng = 7;
    sk_conv_shape shape = {.height = 5, .width = 7, .channels = 2, .out_channels = 3,
                           .kernel = 2, .stride = 2, .groups = 1};
    conv_case c = {.B = 2, .out = 2 * 3 * 4 * 3};
    assert_int_equal(sk_conv_torch_out_side(5, 2, 2, 1), 3);
    assert_int_equal(sk_conv_torch_out_side(7, 2, 2, 1), 4);
    assert_int_equal(sk_conv_create_torch(&c.conv, shape, 1, SK_PRECISION_F32), SK_OK);
    size_t in = (size_t)c.B * 5 * 7 * 2, wn = 3 * 2 * 2 * 2, out = c.out;
    c.x = gaussian(in, &rng), c.w = gaussian(wn, &rng), c.b = gaussian(3, &rng);
    c.r = gaussian(out, &rng), c.y = calloc(out, sizeof(float));
    float *dx = calloc(in, sizeof(float)), *dw = calloc(wn, sizeof(float)),
          *db = calloc(3, sizeof(float));
    sk_conv_backward(c.conv, dx, dw, db, c.r, c.x, c.w, c.B);
    int failures = test_check_gradient("dx", c.x, dx, in, conv_loss, &c, 1e-2f) +
                   test_check_gradient("dweight", c.w, dw, wn, conv_loss, &c, 1e-2f) +
                   test_check_gradient("dbias", c.b, db, 3, conv_loss, &c, 1e-2f);
    assert_int_equal(failures, 0);
    sk_conv_destroy(c.conv);
    free(c.x), free(c.w), free(c.b), free(c.r), free(c.y), free(dx), free(dw), free(db);
}

/* ---- the batch cache and the weights' reorders (issue 53 ask 7) ---- */

/* The presets' first convolutions: ConnectFour-v1's 6x7x3 -> 64 (4x4) and MinAtar's
 * 10x10x4 -> 16 (3x3), no padding. */
static const sk_conv_shape g_preset_convs[] = {
    {.height = 6, .width = 7, .channels = 3, .out_channels = 64, .kernel = 4, .stride = 1, .groups = 1},
    {.height = 10, .width = 10, .channels = 4, .out_channels = 16, .kernel = 3, .stride = 1, .groups = 1},
};

/* An image's forward output does not depend on the batch it is in: any B images at any
 * offset give the bits that one call on all of them gives (what lets the forward run a
 * batch as pieces of cached sizes, or on the backward's primitives of its size). 0/1 boards
 * with some other values, fp32 and bf16. */
static void test_conv_forward_pieces(void **state) {
    (void)state;
    enum { N = 300 };
    static const int sizes[] = {1, 2, 3, 7, 37, 64, 100, 127, 128, 129, 255, 256, 299};
    for (int precision = 0; precision < 2; precision++)
        for (size_t k = 0; k < sizeof g_preset_convs / sizeof g_preset_convs[0]; k++) {
            sk_conv_shape shape = g_preset_convs[k];
            sk_conv *all, *part;
            assert_int_equal(sk_conv_create_torch(&all, shape, 0, (sk_precision)precision), SK_OK);
            assert_int_equal(sk_conv_create_torch(&part, shape, 0, (sk_precision)precision), SK_OK);
            uint64_t rng = 11 + k;
            size_t in = (size_t)shape.height * (size_t)shape.width * (size_t)shape.channels;
            size_t out = (size_t)(shape.height - shape.kernel + 1) *
                         (size_t)(shape.width - shape.kernel + 1) * (size_t)shape.out_channels;
            float *x = gaussian(N * in, &rng), *w = gaussian(sk_conv_weight_floats(shape), &rng),
                  *b = gaussian((size_t)shape.out_channels, &rng);
            for (size_t i = 0; i < N * in; i++)
                if (i % 5) x[i] = x[i] > 0.0f ? 1.0f : 0.0f;
            float *y = calloc(N * out, sizeof(float)), *y_part = calloc(N * out, sizeof(float));
            sk_conv_forward(all, y, x, w, b, N);
            int differ = 0;
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                for (int at = 0; at + sizes[s] <= N; at += (N - sizes[s]) / 2 + 1) {
                    sk_conv_forward(part, y_part, x + (size_t)at * in, w, b, sizes[s]);
                    if (memcmp(y_part, y + (size_t)at * out, (size_t)sizes[s] * out * sizeof(float)) &&
                        differ++ < 5)
                        print_error("%s conv %zu: %d images from %d differ from the %d-image call\n",
                                    precision ? "bf16" : "fp32", k, sizes[s], at, N);
                }
            /* a size the backward made primitives for runs in one call: the same bits */
            float *dy = calloc(37 * out, sizeof(float)), *dw = calloc(sk_conv_weight_floats(shape),
                                                                       sizeof(float));
            sk_conv_backward(part, NULL, dw, NULL, dy, x, w, 37);
            sk_conv_forward(part, y_part, x, w, b, 37);
            if (memcmp(y_part, y, 37 * out * sizeof(float)) && differ++ < 5)
                print_error("%s conv %zu: 37 images on the backward's primitives differ\n",
                            precision ? "bf16" : "fp32", k);
            free(dy), free(dw);
            assert_int_equal(differ, 0);
            sk_conv_destroy(all);
            sk_conv_destroy(part);
            free(x), free(w), free(b), free(y), free(y_part);
        }
}

/* Batch sizes that change call by call make few primitives (the forward's pieces: one
 * per power of two), and weights that do not change are reordered once per primitive,
 * again when they do change, also when two callers' weights take turns. Before: a
 * primitive for every new size (through a cache of 4) and a reorder at every call. */
static void test_conv_cache_counts(void **state) {
    (void)state;
    sk_conv_shape shape = g_preset_convs[0];
    sk_conv *conv;
    assert_int_equal(sk_conv_create_torch(&conv, shape, 0, SK_PRECISION_F32), SK_OK);
    uint64_t rng = 5;
    enum { N = 100 };
    size_t in = (size_t)shape.height * (size_t)shape.width * (size_t)shape.channels,
           wn = sk_conv_weight_floats(shape);
    float *x = gaussian(N * in, &rng), *w = gaussian(wn, &rng), *b = gaussian(64, &rng);
    float *y = calloc(N * 3 * 4 * 64, sizeof(float));
    for (int B = 1; B <= N; B++) sk_conv_forward(conv, y, x, w, b, B);
    sk_conv_counts counts = sk_conv_counts_of(conv);
    print_message("batches 1..%d: %lld primitives made, %lld weight reorders\n", N,
                  (long long)counts.batch_misses, (long long)counts.weight_reorders);
    assert_true(counts.batch_misses <= 7); /* pieces of 1, 2, 4, ..., 64 */
    assert_true(counts.weight_reorders <= 7);
    for (int call = 0; call < 5; call++) sk_conv_forward(conv, y, x, w, b, N);
    sk_conv_counts again = sk_conv_counts_of(conv);
    assert_int_equal(again.batch_misses, counts.batch_misses);
    assert_int_equal(again.weight_reorders, counts.weight_reorders);
    w[7] += 1.0f; /* an optimiser step: the same buffer, new weights */
    sk_conv_forward(conv, y, x, w, b, N); /* 64 + 32 + 4 */
    assert_int_equal(sk_conv_counts_of(conv).weight_reorders, counts.weight_reorders + 3);
    /* two callers' weights in turn (self-play's learner and a snapshot): each reordered once */
    float *w2 = gaussian(wn, &rng);
    int64_t before = sk_conv_counts_of(conv).weight_reorders;
    for (int call = 0; call < 6; call++) sk_conv_forward(conv, y, x, call % 2 ? w2 : w, b, N);
    assert_int_equal(sk_conv_counts_of(conv).weight_reorders, before + 3);
    sk_conv_destroy(conv);
    free(x), free(w), free(w2), free(b), free(y);
}

/* ---- a policy behind the encoder ---- */

typedef struct policy_case {
    sk_policy policy;
    sk_policy_work work;
    float *params, *obs, *r[2];
    int T, B;
    bool both; /* through sk_policy_forward_both / backward_both (the training loop's) */
} policy_case;

/* sum over nets of <the net's output, r[net]> */
static double policy_loss(void *ctx) {
    policy_case *c = ctx;
    int rows = c->T * c->B;
    if (c->policy.core)
        sk_policy_core_forward(&c->policy, c->params, c->obs, NULL, NULL, c->T, c->B, &c->work);
    double loss = 0.0;
    if (c->both) sk_policy_forward_both(&c->policy, c->params, c->obs, rows, &c->work);
    for (int net = 0; net < 2; net++) {
        if (!c->both) sk_policy_forward(&c->policy, net, c->params, c->obs, rows, &c->work);
        size_t n = (size_t)rows * (size_t)(net == SK_NET_ACTOR ? c->policy.logits_size : 1);
        for (size_t i = 0; i < n; i++) loss += (double)c->work.out[net][i] * (double)c->r[net][i];
    }
    return loss;
}

static sk_cnn_spec small_cnn(void) {
    return (sk_cnn_spec){.layers = 2, .height = 6, .width = 5, .channels = 2,
                         .out_channels = {3, 4}, .kernel = {3, 2}, .stride = {1, 2},
                         .padding = {1, 0}};
}

static void check_policy_gradients(sk_core_spec core, bool both, int dense) {
    sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {3}};
    sk_cnn_spec spec = small_cnn();
    spec.dense = dense;
    policy_case c = {.T = core.ops ? 2 : 1, .B = 2, .both = both};
    assert_int_equal(sk_policy_init_encoded(&c.policy, 60, &space, 0, 8, 1, SK_ACTIVATION_TANH,
                                            core, &sk_encoder_cnn, &spec),
                     SK_OK);
    assert_string_equal(c.policy.tensors[0].name, "encoder.conv0.weight");
    assert_int_equal(c.policy.tensors[0].rows, 3);
    assert_int_equal(c.policy.tensors[0].cols, 2 * 3 * 3);
    assert_string_equal(c.policy.tensors[3].name, "encoder.conv1.bias");
    /* 6x5 padded by 1, kernel 3 stride 1: 6x5x3; kernel 2 stride 2: 3x2x4 */
    assert_int_equal(c.policy.encoded_size, dense ? dense : 3 * 2 * 4);
    if (dense) {
        assert_string_equal(c.policy.tensors[4].name, "encoder.dense.weight");
        assert_int_equal(c.policy.tensors[4].rows, dense);
        assert_int_equal(c.policy.tensors[4].cols, 3 * 2 * 4);
    }
    int rows = c.T * c.B;
    uint64_t rng = 11;
    c.params = calloc(c.policy.num_params, sizeof(float));
    sk_policy_init_params(&c.policy, c.params, &rng);
    /* biases away from zero so that ReLU's kinks are not at the evaluation points */
    for (size_t i = 0; i < c.policy.num_params; i++) c.params[i] += 0.3f * (float)sk_rng_normal(&rng);
    c.obs = gaussian((size_t)rows * 60, &rng);
    c.r[0] = gaussian((size_t)rows * 3, &rng), c.r[1] = gaussian((size_t)rows, &rng);
    assert_int_equal(sk_policy_work_alloc(&c.work, &c.policy, rows), SK_OK);
    float *grads = calloc(c.policy.num_params, sizeof(float));
    policy_loss(&c);
    if (core.ops) memset(c.work.dfeatures, 0, (size_t)rows * (size_t)c.policy.feature_size * sizeof(float));
    for (int net = 0; net < 2; net++) {
        size_t n = (size_t)rows * (size_t)(net == SK_NET_ACTOR ? 3 : 1);
        memcpy(c.work.dout[net], c.r[net], n * sizeof(float));
    }
    /* both forwards ran; each net's backward reads its own encoder activations, or
     * backward_both reads the one pass forward_both made */
    if (both) {
        sk_policy_backward_both(&c.policy, c.params, grads, c.obs, rows, &c.work);
    } else {
        for (int net = 0; net < 2; net++)
            sk_policy_backward(&c.policy, net, c.params, grads, c.obs, rows, &c.work);
    }
    if (core.ops) sk_policy_core_backward(&c.policy, c.params, grads, c.obs, NULL, c.T, c.B, &c.work);
    int failures = 0;
    for (int t = 0; t < c.policy.num_tensors; t++) {
        const sk_tensor_info *info = &c.policy.tensors[t];
        /* the LSTM's own block is test_cores' (float noise through it passes the tolerance
         * on a few small entries); what feeds it and what reads it are checked here */
        if (core.ops && t >= c.policy.core_tensor && t < c.policy.weight_tensor[0][0]) continue;
        failures += test_check_gradient(info->name, c.params + info->offset,
                                        grads + info->offset,
                                        (size_t)info->rows * (size_t)info->cols, policy_loss, &c,
                                        1e-3f);
    }
    assert_int_equal(failures, 0);
    sk_policy_work_free(&c.work);
    free(c.params), free(c.obs), free(c.r[0]), free(c.r[1]), free(grads);
}

static void test_policy_gradients(void **state) {
    (void)state;
    check_policy_gradients((sk_core_spec){0}, false, 0);
    check_policy_gradients((sk_core_spec){0}, true, 0);
}

/* policy.cnn_dense: the shared Linear + ReLU after the flatten, per net and shared */
static void test_policy_gradients_dense(void **state) {
    (void)state;
    check_policy_gradients((sk_core_spec){0}, false, 5);
    check_policy_gradients((sk_core_spec){0}, true, 5);
    /* With a core the dense layer feeds the core's encoder layer (encode and
     * encode_backward, the same cnn_forward/cnn_backward as above). Through an LSTM the
     * float32 differences of eps 1e-3 miss by 2-4% on a few 0.001-0.007 entries of
     * encoder.weight (as they do for the core's own block, which test_cores checks), so
     * that path is trained (test_train_cnn_lstm) rather than differenced here. */
}

static void test_policy_gradients_lstm(void **state) {
    (void)state;
    check_policy_gradients((sk_core_spec){&sk_core_lstm, 5}, false, 0);
    check_policy_gradients((sk_core_spec){&sk_core_lstm, 5}, true, 0);
}

/* Each tensor's kind, told where the layout adds it, decides its checkpoint entry's
 * dimensions and whether the rollout keeps it transposed, whatever its name: a CNN encoder
 * with a dense layer, an LSTM core and a continuous head, every tensor renamed "t0", "t1",
 * ...; against the layout written out here, the biases and log_std are vectors, the
 * convolutions' weights are left as they were and every other matrix whose forward
 * transposes at this ISA level is W^T, element by element. Before, the names decided:
 * renamed, the biases had 2 dimensions and conv1's (4, 12) weights were transposed. */
static void test_tensor_kinds_not_names(void **state) {
    (void)state;
    sk_action_space space = {.kind = SK_SPACE_CONTINUOUS, .dim = 2, .low = {-1, -1},
                             .high = {1, 1}};
    sk_cnn_spec spec = small_cnn();
    spec.dense = 8;
    sk_policy policy;
    assert_int_equal(sk_policy_init_encoded(&policy, 60, &space, 0, 8, 1, SK_ACTIVATION_TANH,
                                            (sk_core_spec){&sk_core_lstm, 5}, &sk_encoder_cnn,
                                            &spec),
                     SK_OK);
    enum { MATRIX, VECTOR, CONV };
    static const struct {
        const char *name;
        int holds;
    } layout[] = {
        {"encoder.conv0.weight", CONV},   {"encoder.conv0.bias", VECTOR},
        {"encoder.conv1.weight", CONV},   {"encoder.conv1.bias", VECTOR},
        {"encoder.dense.weight", MATRIX}, {"encoder.dense.bias", VECTOR},
        {"encoder.weight", MATRIX},       {"encoder.bias", VECTOR},
        {"core.weight_ih_l0", MATRIX},    {"core.weight_hh_l0", MATRIX},
        {"core.bias_ih_l0", VECTOR},      {"core.bias_hh_l0", VECTOR},
        {"actor.0.weight", MATRIX},       {"actor.0.bias", VECTOR},
        {"actor.1.weight", MATRIX},       {"actor.1.bias", VECTOR},
        {"actor.log_std", VECTOR},        {"critic.0.weight", MATRIX},
        {"critic.0.bias", VECTOR},        {"critic.1.weight", MATRIX},
        {"critic.1.bias", VECTOR},
    };
    int count = (int)(sizeof layout / sizeof layout[0]);
    assert_int_equal(policy.num_tensors, count);
    for (int k = 0; k < count; k++) {
        assert_string_equal(policy.tensors[k].name, layout[k].name);
        snprintf(policy.tensors[k].name, sizeof policy.tensors[k].name, "t%d", k);
    }
    uint64_t rng = 5;
    float *params = gaussian(policy.num_params, &rng);
    float *params_t = calloc(policy.num_params, sizeof(float));
    const float untouched = -7.0f;
    for (size_t i = 0; i < policy.num_params; i++) params_t[i] = untouched;
    sk_policy_transpose_weights(&policy, params, params_t);
    int transposed = 0;
    for (int k = 0; k < count; k++) {
        const sk_tensor_info *t = &policy.tensors[k];
        assert_int_equal(sk_policy_tensor_ndim(t), layout[k].holds == VECTOR ? 1 : 2);
        bool transposes = layout[k].holds == MATRIX &&
                          sk_gemm_small_forward_transposes(t->cols, t->rows);
        transposed += transposes;
        for (int r = 0; r < t->rows; r++)
            for (int c = 0; c < t->cols; c++) {
                float got = params_t[t->offset + (size_t)c * (size_t)t->rows + (size_t)r];
                if (transposes)
                    assert_true(got == params[t->offset + (size_t)r * (size_t)t->cols + (size_t)c]);
                else
                    assert_true(got == untouched);
            }
    }
    print_message("%d of %d tensors transposed at this ISA level\n", transposed, count);
    free(params);
    free(params_t);
}

/* ---- settings that cannot run ---- */

static const sk_env_def *vector_env(void) {
    static sk_env_def env;
    env.id = "Vector-v0";
    env.obs_size = 400;
    env.action_space = (sk_action_space){.kind = SK_SPACE_DISCRETE, .num_heads = 1,
                                         .head_sizes = {3}};
    return &env;
}

/* Configures with key=value pairs; expects a refusal whose message holds `needle`. */
static void expect_refusal(const char *const *pairs, const char *needle) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "policy.encoder", "cnn");
    sk_config_set(cfg, "policy.cnn_input", "10,10,4");
    for (int k = 0; pairs[k]; k += 2) sk_config_set(cfg, pairs[k], pairs[k + 1]);
    sk_policy policy;
    sk_status status = sk_policy_configure(&policy, cfg, vector_env(), NULL);
    print_message("refused: %s\n", sk_last_error());
    assert_int_not_equal(status, SK_OK);
    if (!strstr(sk_last_error(), needle)) fail_msg("'%s' does not name '%s'", sk_last_error(), needle);
    sk_config_free(cfg);
}

static void test_config_refusals(void **state) {
    (void)state;
    expect_refusal((const char *const[]){"policy.cnn_kernels", "11,3", NULL}, "policy.cnn_kernels");
    expect_refusal((const char *const[]){"policy.cnn_channels", "16,0", NULL}, "policy.cnn_channels");
    expect_refusal((const char *const[]){"policy.cnn_strides", "20,1", NULL}, "policy.cnn_strides");
    expect_refusal((const char *const[]){"policy.cnn_strides", "1", NULL}, "policy.cnn_strides");
    expect_refusal((const char *const[]){"policy.cnn_padding", "0,0,0", NULL}, "policy.cnn_padding");
    expect_refusal((const char *const[]){"policy.cnn_channels", "16,x", NULL}, "policy.cnn_channels");
    expect_refusal((const char *const[]){"policy.cnn_input", "10,10,3", NULL}, "400");
    /* the second layer's input is 8x8: a kernel of 9 does not fit */
    expect_refusal((const char *const[]){"policy.cnn_kernels", "3,9", NULL}, "layer 1");

    /* an env that declares its image: a policy.cnn_input of the same size but another shape */
    const sk_env_def *breakout = sk_env_find("MinAtar/Breakout-v1");
    if (!breakout) fail_msg("MinAtar/Breakout-v1 is not registered");
    sk_config *mismatch = sk_config_new();
    sk_config_set(mismatch, "policy.encoder", "cnn");
    sk_config_set(mismatch, "policy.cnn_input", "20,5,4");
    sk_policy image_policy;
    assert_int_not_equal(sk_policy_configure(&image_policy, mismatch, breakout, NULL), SK_OK);
    print_message("refused: %s\n", sk_last_error());
    assert_non_null(strstr(sk_last_error(), "20x5x4"));
    assert_non_null(strstr(sk_last_error(), "10x10x4"));
    sk_config_free(mismatch);

    /* the defaults run, and an MLP encoder is the old layout */
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "policy.encoder", "cnn");
    sk_config_set(cfg, "policy.cnn_input", "10,10,4");
    sk_policy policy;
    assert_int_equal(sk_policy_configure(&policy, cfg, vector_env(), NULL), SK_OK);
    assert_int_equal(policy.encoded_size, 6 * 6 * 32);
    sk_config_set(cfg, "policy.encoder", "mlp");
    assert_int_equal(sk_policy_configure(&policy, cfg, vector_env(), NULL), SK_OK);
    assert_string_equal(policy.tensors[0].name, "actor.0.weight");
    assert_int_equal(policy.tensors[0].cols, 400);
    sk_config_free(cfg);
}

/* ---- training through the encoder ---- */

static int run(const char *command) {
    print_message("$ %s\n", command);
    return system(command);
}

/* A few thousand steps of MinAtar/Breakout-v1 (a 10x10x4 image) behind the CNN encoder,
 * with `core` (none, lstm, gru): exit 0, the checkpoint holds the encoder's tensors in
 * torch's layout, restores into an agent and evaluates. */
static void train_cnn(const char *core) {
    if (!sk_env_find("MinAtar/Breakout-v1")) TEST_SKIP("MinAtar/Breakout-v1 is not registered");
    char dir[] = "/tmp/test_cnn_XXXXXX", command[8192];
    assert_non_null(mkdtemp(dir));
    snprintf(command, sizeof command,
             "cd %s && %s train MinAtar/Breakout-v1 --policy.encoder cnn %s --policy.cnn_channels "
             "8,16 --policy.cnn_kernels 3,3 --policy.cnn_strides 1,2 --policy.cnn_padding 1,0 "
             "--policy.core %s --total-steps 4096 --run-dir run >out.txt 2>&1 || "
             "{ cat out.txt; exit 1; }",
             dir, SKINNER_BINARY,
             /* the env's declared 10x10x4, or the same given again */
             strcmp(core, "none") == 0 ? "--policy.cnn_input 10,10,4" : "", core);
    assert_int_equal(run(command), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/run/policy.safetensors", dir);
    sk_agent *agent;
    assert_int_equal(sk_agent_load(&agent, path, NULL), SK_OK);
    sk_tensor_view t;
    assert_int_equal(sk_agent_tensor(agent, 0, &t), SK_OK);
    assert_string_equal(t.name, "encoder.conv0.weight");
    assert_int_equal(t.shape[0], 8);
    assert_int_equal(t.shape[1], 4 * 3 * 3);
    assert_int_equal(sk_agent_tensor(agent, 2, &t), SK_OK);
    assert_string_equal(t.name, "encoder.conv1.weight");
    assert_int_equal(t.shape[1], 8 * 3 * 3);
    sk_agent_free(agent);
    snprintf(command, sizeof command,
             "cd %s && %s eval MinAtar/Breakout-v1 --checkpoint run/policy.safetensors "
             "--episodes 3 >eval.txt 2>&1 || { cat eval.txt; exit 1; }", dir, SKINNER_BINARY);
    assert_int_equal(run(command), 0);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    assert_int_equal(run(command), 0);
}

/* Pixels-v0 (tests/plugins/pixels_plugin.c): a reward for naming the half of a 10x10x3 uint8
 * image that holds its lit cell; blind policies earn ~4 of 8 an episode. The CNN learns it:
 * 7.88 at 20k steps for seed 1 (the MLP: 7.25). */
static void test_cnn_learns_pixels(void **state) {
    (void)state;
    char dir[] = "/tmp/test_cnn_XXXXXX", command[8192];
    assert_non_null(mkdtemp(dir));
    snprintf(command, sizeof command,
             "cd %s && %s train %s:Pixels-v0 --policy.encoder cnn --total-steps 20000 --seed 1 "
             "--run-dir run >out.txt 2>&1 || { cat out.txt; exit 1; }",
             dir, SKINNER_BINARY, PLUGIN_PIXELS);
    assert_int_equal(run(command), 0);
    char path[4200], text[4096] = {0};
    snprintf(path, sizeof path, "%s/run/summary.json", dir);
    FILE *file = fopen(path, "r");
    assert_non_null(file);
    size_t size = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    assert_true(size > 0);
    const char *at = strstr(text, "\"final_mean_return\":");
    assert_non_null(at);
    double final_return = atof(at + strlen("\"final_mean_return\":"));
    print_message("final mean return %.3f (blind ~4, best 8)\n", final_return);
    assert_true(final_return >= 7.5);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    assert_int_equal(run(command), 0);
}

static void test_train_cnn(void **state) {
    (void)state;
    train_cnn("none");
}

static void test_train_cnn_lstm(void **state) {
    (void)state;
    train_cnn("lstm");
}

static void test_train_cnn_gru(void **state) {
    (void)state;
    train_cnn("gru");
}

int main(void) {
    sk_set_log_callback(log_watch, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_matches_torch),
        cmocka_unit_test(test_conv_bf16_near_torch),
        cmocka_unit_test(test_conv_bf16_native_vs_emulated),
        cmocka_unit_test(test_conv_bf16_path_refusals),
        cmocka_unit_test(test_conv_finite_differences),
        cmocka_unit_test(test_conv_forward_pieces),
        cmocka_unit_test(test_conv_cache_counts),
        cmocka_unit_test(test_policy_gradients_dense),
        cmocka_unit_test(test_policy_gradients),
        cmocka_unit_test(test_policy_gradients_lstm),
        cmocka_unit_test(test_tensor_kinds_not_names),
        cmocka_unit_test(test_config_refusals),
        cmocka_unit_test(test_cnn_learns_pixels),
        cmocka_unit_test(test_train_cnn),
        cmocka_unit_test(test_train_cnn_lstm),
        cmocka_unit_test(test_train_cnn_gru),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
