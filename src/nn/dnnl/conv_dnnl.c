/*
 * Convolutions through oneDNN's C API: the backend of skinner/nn.h's sk_conv_*,
 * built as libskinner-dnnl.so and loaded by ../conv.c (which checks shapes and
 * words the errors; the table is in ../conv_backend.h). It calls nothing of
 * libskinner's: allocation and the abort come through the host table.
 *
 * Why oneDNN and not im2col + OpenBLAS: on Morpho's CNN host's shapes (256
 * images, 28x28 to 4x4, 1 to 32 channels) oneDNN's direct forward
 * convolutions ran 2.1-3.2x faster than im2col + OpenBLAS sgemm
 * (bench/conv.c; im2col's memory pass alone often costs as much as the GEMM),
 * and OpenBLAS in Debian 12 has no bf16 GEMM at all; docs/morpho.md has the
 * measurement.
 *
 * Activations go to oneDNN in the caller's nhwc, which its brgemm kernels
 * take directly on AVX-512; weights go through a reorder into the blocked
 * layout the chosen kernel wants (and to bf16), each call, since the caller's
 * SGD changes them every step: small next to the activations
 * (bench/conv.c prints the kernel each shape gets). Backward primitives
 * overwrite their outputs, so input and weight gradients go through scratch
 * and are added to the caller's (+=, as src/nn).
 */
#include "../bf16.h"
#include "../conv_backend.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static sk_conv_host g_host; /* set by the entry, before any convolution */

#define BACKEND_ASSERT(cond)                                                                       \
    do {                                                                                           \
        if (!(cond)) g_host.panic(__FILE__, __LINE__, #cond);                                      \
    } while (0)

/* Debian's oneDNN runs on OpenMP: each thread that calls it would start a team
 * of every core. libgomp's omp_set_num_threads(1) in the calling thread stops
 * that; it is looked up in the process (libdnnl loaded libgomp) rather than
 * linked, so the library does not depend on which OpenMP the compiler has. */
static void (*g_omp_set_num_threads)(int);

#define BATCH_CACHE 4 /* batch sizes with primitives at once: training, validation and test tails */

typedef struct conv_batch {
    int batch; /* 0: unused */
    uint64_t last_use;
    dnnl_primitive_t fwd, bwd_data, bwd_weights;
    /* the weights in each primitive's own (blocked) layout, and the reorders
     * between those and the caller's: forward's and backward data's inputs,
     * backward weights' output */
    dnnl_primitive_t to_fwd_weights, to_bwd_weights, from_d_weights;
    dnnl_memory_t user_weights, user_d_weights;          /* the caller's layout, f32 */
    dnnl_memory_t fwd_weights, bwd_weights_in, d_weights; /* allocated by oneDNN */
    dnnl_memory_t src, bias, dst;                        /* forward's */
    dnnl_memory_t d_dst, d_src;                          /* backward data's */
    dnnl_memory_t b_src, b_d_dst, b_d_bias;              /* backward weights' */
} conv_batch;

struct sk_conv {
    sk_conv_shape shape;
    bool torch_like; /* sk_conv_create_torch's: weights (out, in, kh, kw) */
    int pad;         /* zeros on the left and top; the right and bottom's follow from out_h */
    sk_precision precision;
    int out_h, out_w;
    dnnl_stream_t stream;
    conv_batch batches[BATCH_CACHE];
    uint64_t uses;
    /* scratch, grown to the largest batch seen */
    int scratch_batch;
    float *d_src_tmp, *d_weights_tmp, *d_bias_tmp;
    uint16_t *src_bf16, *d_dst_bf16;
};

static dnnl_engine_t g_engine;
static dnnl_status_t g_engine_status = dnnl_runtime_error;
static pthread_once_t g_engine_once = PTHREAD_ONCE_INIT;
static void engine_init(void) {
    g_engine_status = dnnl_engine_create(&g_engine, dnnl_cpu, 0);
    void *sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    memcpy(&g_omp_set_num_threads, &sym, sizeof sym); /* ISO C has no object-to-function cast */
}

/* ---- descriptors ---- */

static dnnl_data_type_t low_type(const sk_conv *c) {
    return c->precision == SK_PRECISION_BF16 ? dnnl_bf16 : dnnl_f32;
}

static void activation_md(dnnl_memory_desc_t *md, int B, int channels, int h, int w,
                          dnnl_data_type_t type) {
    dnnl_dims_t dims = {B, channels, h, w};
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(md, 4, dims, type, dnnl_nhwc);
    BACKEND_ASSERT(st == dnnl_success);
}

/* The caller's layout (ohwi, gohwi), or any (the primitive's choice). */
static void weights_md(dnnl_memory_desc_t *md, const sk_conv *c, dnnl_data_type_t type,
                       bool any) {
    const sk_conv_shape *s = &c->shape;
    dnnl_status_t st;
    if (s->groups == 1) {
        dnnl_dims_t dims = {s->out_channels, s->channels, s->kernel, s->kernel};
        dnnl_format_tag_t user = c->torch_like ? dnnl_oihw : dnnl_ohwi;
        st = dnnl_memory_desc_init_by_tag(md, 4, dims, type, any ? dnnl_format_tag_any : user);
    } else {
        dnnl_dims_t dims = {s->groups, s->out_channels / s->groups, s->channels / s->groups,
                            s->kernel, s->kernel};
        st = dnnl_memory_desc_init_by_tag(md, 5, dims, type, any ? dnnl_format_tag_any : dnnl_gohwi);
    }
    BACKEND_ASSERT(st == dnnl_success);
}

static void bias_md(dnnl_memory_desc_t *md, int out_channels) {
    dnnl_dims_t dims = {out_channels};
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(md, 1, dims, dnnl_f32, dnnl_a);
    BACKEND_ASSERT(st == dnnl_success);
}

static void batch_free(conv_batch *b) {
    dnnl_primitive_t prims[] = {b->fwd, b->bwd_data, b->bwd_weights, b->to_fwd_weights,
                                b->to_bwd_weights, b->from_d_weights};
    for (size_t k = 0; k < sizeof prims / sizeof prims[0]; k++)
        if (prims[k]) dnnl_primitive_destroy(prims[k]);
    dnnl_memory_t mems[] = {b->user_weights, b->user_d_weights, b->fwd_weights,
                            b->bwd_weights_in, b->d_weights, b->src, b->bias, b->dst,
                            b->d_dst, b->d_src, b->b_src, b->b_d_dst, b->b_d_bias};
    for (size_t k = 0; k < sizeof mems / sizeof mems[0]; k++)
        if (mems[k]) dnnl_memory_destroy(mems[k]);
    memset(b, 0, sizeof *b);
}

/* A memory object whose buffer the caller binds per call, or (owned) one oneDNN allocates. */
static dnnl_status_t make_memory(dnnl_memory_t *out, const dnnl_memory_desc_t *md, bool owned) {
    return dnnl_memory_create(out, md, g_engine, owned ? DNNL_MEMORY_ALLOCATE : DNNL_MEMORY_NONE);
}

static dnnl_status_t make_reorder(dnnl_primitive_t *out, const dnnl_memory_desc_t *from,
                                  const dnnl_memory_desc_t *to) {
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_reorder_primitive_desc_create(&pd, from, g_engine, to, g_engine, NULL);
    if (st != dnnl_success) return st;
    st = dnnl_primitive_create(out, pd);
    dnnl_primitive_desc_destroy(pd);
    return st;
}

/* The three primitives, the weight reorders and the memory objects for batch
 * size B. Activations keep the caller's nhwc; weights are given as "any", so
 * that oneDNN picks its fast kernels' layout (with the caller's plain layout
 * it fell back to its reference loops, 100x slower). */
static dnnl_status_t batch_create(const sk_conv *c, conv_batch *b, int B) {
    const sk_conv_shape *s = &c->shape;
    dnnl_data_type_t low = low_type(c);
    dnnl_memory_desc_t src, src_f32, weights_any, d_weights_any, user_weights, bias, dst, dst_low;
    activation_md(&src, B, s->channels, s->height, s->width, low);
    activation_md(&src_f32, B, s->channels, s->height, s->width, dnnl_f32);
    activation_md(&dst, B, s->out_channels, c->out_h, c->out_w, dnnl_f32);
    activation_md(&dst_low, B, s->out_channels, c->out_h, c->out_w, low);
    weights_md(&weights_any, c, low, true);
    weights_md(&d_weights_any, c, dnnl_f32, true);
    weights_md(&user_weights, c, dnnl_f32, false);
    bias_md(&bias, s->out_channels);
    dnnl_dims_t strides = {s->stride, s->stride}, pad_l = {c->pad, c->pad}, pad_r;
    /* the right padding that gives out_h: oneDNN checks (h - k + l + r) / stride + 1 == out */
    pad_r[0] = (c->out_h - 1) * s->stride + s->kernel - s->height - c->pad;
    pad_r[1] = (c->out_w - 1) * s->stride + s->kernel - s->width - c->pad;
    dnnl_convolution_desc_t fwd_d, bwd_data_d, bwd_weights_d;
    dnnl_primitive_desc_t fwd_pd = NULL, bwd_data_pd = NULL, bwd_weights_pd = NULL;
    dnnl_status_t st = dnnl_convolution_forward_desc_init(
        &fwd_d, dnnl_forward_training, dnnl_convolution_direct, &src, &weights_any, &bias, &dst,
        strides, pad_l, pad_r);
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&fwd_pd, &fwd_d, NULL, g_engine, NULL);
    if (st == dnnl_success)
        st = dnnl_convolution_backward_data_desc_init(&bwd_data_d, dnnl_convolution_direct,
                                                      &src_f32, &weights_any, &dst_low, strides,
                                                      pad_l, pad_r);
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(&bwd_data_pd, &bwd_data_d, NULL, g_engine, fwd_pd);
    if (st == dnnl_success)
        st = dnnl_convolution_backward_weights_desc_init(&bwd_weights_d, dnnl_convolution_direct,
                                                         &src, &d_weights_any, &bias, &dst_low,
                                                         strides, pad_l, pad_r);
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(&bwd_weights_pd, &bwd_weights_d, NULL, g_engine, fwd_pd);
    if (st == dnnl_success) st = dnnl_primitive_create(&b->fwd, fwd_pd);
    if (st == dnnl_success) st = dnnl_primitive_create(&b->bwd_data, bwd_data_pd);
    if (st == dnnl_success) st = dnnl_primitive_create(&b->bwd_weights, bwd_weights_pd);
    const dnnl_memory_desc_t *fwd_w = NULL, *bwd_w = NULL, *d_w = NULL;
    if (st == dnnl_success) {
        fwd_w = dnnl_primitive_desc_query_md(fwd_pd, dnnl_query_weights_md, 0);
        bwd_w = dnnl_primitive_desc_query_md(bwd_data_pd, dnnl_query_weights_md, 0);
        d_w = dnnl_primitive_desc_query_md(bwd_weights_pd, dnnl_query_diff_weights_md, 0);
        st = make_reorder(&b->to_fwd_weights, &user_weights, fwd_w);
    }
    if (st == dnnl_success) st = make_reorder(&b->to_bwd_weights, &user_weights, bwd_w);
    if (st == dnnl_success) st = make_reorder(&b->from_d_weights, d_w, &user_weights);
    const dnnl_memory_desc_t *mds[] = {&user_weights, &user_weights, fwd_w, bwd_w, d_w, &src,
                                       &bias, &dst, &dst_low, &src_f32, &src, &dst_low, &bias};
    dnnl_memory_t *mems[] = {&b->user_weights, &b->user_d_weights, &b->fwd_weights,
                             &b->bwd_weights_in, &b->d_weights, &b->src, &b->bias, &b->dst,
                             &b->d_dst, &b->d_src, &b->b_src, &b->b_d_dst, &b->b_d_bias};
    for (size_t k = 0; st == dnnl_success && k < sizeof mems / sizeof mems[0]; k++)
        st = make_memory(mems[k], mds[k], k >= 2 && k <= 4);
    if (fwd_pd) dnnl_primitive_desc_destroy(fwd_pd);
    if (bwd_data_pd) dnnl_primitive_desc_destroy(bwd_data_pd);
    if (bwd_weights_pd) dnnl_primitive_desc_destroy(bwd_weights_pd);
    if (st != dnnl_success) {
        batch_free(b);
        return st;
    }
    b->batch = B;
    return dnnl_success;
}

static void *grow(void *p, size_t bytes) {
    g_host.free(p);
    return g_host.alloc(bytes);
}

static bool scratch_reserve(sk_conv *c, int B) {
    if (B <= c->scratch_batch) return true;
    const sk_conv_shape *s = &c->shape;
    size_t in = (size_t)B * s->height * s->width * s->channels,
           out = (size_t)B * c->out_h * c->out_w * s->out_channels, w = sk_conv_weights(*s);
    c->d_src_tmp = grow(c->d_src_tmp, in * sizeof(float));
    if (!c->d_weights_tmp) c->d_weights_tmp = g_host.alloc(w * sizeof(float));
    if (!c->d_bias_tmp) c->d_bias_tmp = g_host.alloc((size_t)s->out_channels * sizeof(float));
    if (c->precision == SK_PRECISION_BF16) {
        c->src_bf16 = grow(c->src_bf16, in * sizeof(uint16_t));
        c->d_dst_bf16 = grow(c->d_dst_bf16, out * sizeof(uint16_t));
    }
    bool ok = c->d_src_tmp && c->d_weights_tmp && c->d_bias_tmp &&
              (c->precision == SK_PRECISION_F32 ||
               (c->src_bf16 && c->d_dst_bf16));
    c->scratch_batch = ok ? B : 0;
    return ok;
}

/* The cached primitives for B, created on first use (the least recently used
 * entry makes room); NULL with *status when oneDNN cannot make them. */
static conv_batch *batch_lookup(sk_conv *c, int B, dnnl_status_t *status) {
    BACKEND_ASSERT(B > 0);
    if (g_omp_set_num_threads) g_omp_set_num_threads(1);
    conv_batch *slot = &c->batches[0];
    for (int k = 0; k < BATCH_CACHE; k++) {
        conv_batch *b = &c->batches[k];
        if (b->batch == B) {
            b->last_use = ++c->uses;
            return b;
        }
        if (b->last_use < slot->last_use) slot = b;
    }
    batch_free(slot);
    *status = batch_create(c, slot, B);
    if (*status == dnnl_success && !scratch_reserve(c, B)) {
        batch_free(slot);
        *status = dnnl_out_of_memory;
    }
    if (*status != dnnl_success) return NULL;
    slot->last_use = ++c->uses;
    return slot;
}

/* In forward and backward: the shape was prepared at creation (sk_conv_prepare),
 * so a failure for another batch size is out of memory or a oneDNN bug. */
static conv_batch *batch_for(sk_conv *c, int B) {
    dnnl_status_t status = dnnl_success;
    conv_batch *b = batch_lookup(c, B, &status);
    if (!b) {
        char msg[160];
        snprintf(msg, sizeof msg, "oneDNN could not set up a convolution for %d images (status %d)",
                 B, (int)status);
        g_host.panic(__FILE__, __LINE__, msg);
    }
    return b;
}

static sk_status prepare(sk_conv *c, int B, char *message, size_t message_size) {
    dnnl_status_t status = dnnl_success;
    if (batch_lookup(c, B, &status)) return SK_OK;
    const sk_conv_shape *s = &c->shape;
    snprintf(message, message_size,
             "oneDNN cannot run a convolution %dx%dx%d -> %d channels, kernel %d, stride %d, "
             "groups %d on %d images (status %d)", s->height, s->width, s->channels,
             s->out_channels, s->kernel, s->stride, s->groups, B, (int)status);
    return status == dnnl_out_of_memory ? SK_ERR_NOMEM : SK_ERR_INVALID;
}

static sk_status create(sk_conv **out, sk_conv_shape shape, int pad, bool torch_like,
                        sk_precision precision, char *message, size_t message_size) {
    *out = NULL;
    pthread_once(&g_engine_once, engine_init);
    if (g_engine_status != dnnl_success) {
        snprintf(message, message_size, "oneDNN could not start its CPU engine (status %d)",
                 (int)g_engine_status);
        return SK_ERR_IO;
    }
    sk_conv *c = g_host.alloc(sizeof *c);
    if (!c) {
        snprintf(message, message_size, "out of memory");
        return SK_ERR_NOMEM;
    }
    memset(c, 0, sizeof *c);
    c->shape = shape;
    c->precision = precision;
    c->torch_like = torch_like;
    c->pad = pad;
    c->out_h = (shape.height + 2 * pad - shape.kernel) / shape.stride + 1;
    c->out_w = (shape.width + 2 * pad - shape.kernel) / shape.stride + 1;
    if (dnnl_stream_create(&c->stream, g_engine, dnnl_stream_default_flags) != dnnl_success) {
        g_host.free(c);
        snprintf(message, message_size, "oneDNN could not create a stream");
        return SK_ERR_IO;
    }
    *out = c;
    return SK_OK;
}

static void destroy(sk_conv *c) {
    if (!c) return;
    for (int k = 0; k < BATCH_CACHE; k++) batch_free(&c->batches[k]);
    dnnl_stream_destroy(c->stream);
    g_host.free(c->d_src_tmp);
    g_host.free(c->d_weights_tmp);
    g_host.free(c->d_bias_tmp);
    g_host.free(c->src_bf16);
    g_host.free(c->d_dst_bf16);
    g_host.free(c);
}

static void bind(dnnl_memory_t mem, const void *data) {
    dnnl_status_t st = dnnl_memory_set_data_handle(mem, (void *)(uintptr_t)data);
    BACKEND_ASSERT(st == dnnl_success);
}

static void run(sk_conv *c, dnnl_primitive_t prim, int nargs, const dnnl_exec_arg_t *args) {
    dnnl_status_t st = dnnl_primitive_execute(prim, c->stream, nargs, args);
    if (st == dnnl_success) st = dnnl_stream_wait(c->stream);
    BACKEND_ASSERT(st == dnnl_success);
}

static size_t in_floats(const sk_conv *c, int B) {
    return (size_t)B * c->shape.height * c->shape.width * c->shape.channels;
}

static size_t out_floats(const sk_conv *c, int B) {
    return (size_t)B * c->out_h * c->out_w * c->shape.out_channels;
}

/* x as the primitive takes it: itself, or rounded to bf16 in scratch. */
static const void *low_src(sk_conv *c, const float *x, int B) {
    if (c->precision == SK_PRECISION_F32) return x;
    sk_bf16_convert(c->src_bf16, x, in_floats(c, B));
    return c->src_bf16;
}

/* w (the caller's f32) into a primitive's weights (its layout and type). */
static void load_weights(sk_conv *c, conv_batch *cb, dnnl_primitive_t reorder,
                         dnnl_memory_t to, const float *w) {
    bind(cb->user_weights, w);
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, cb->user_weights}, {DNNL_ARG_TO, to}};
    run(c, reorder, 2, args);
}

static void forward(sk_conv *c, float *y, const float *x, const float *w, const float *b,
                     int B) {
    conv_batch *cb = batch_for(c, B);
    if (!b) { /* no bias: zeros (the primitive was made with one) */
        memset(c->d_bias_tmp, 0, (size_t)c->shape.out_channels * sizeof(float));
        b = c->d_bias_tmp;
    }
    load_weights(c, cb, cb->to_fwd_weights, cb->fwd_weights, w);
    bind(cb->src, low_src(c, x, B));
    bind(cb->bias, b);
    bind(cb->dst, y);
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, cb->src},
                              {DNNL_ARG_WEIGHTS, cb->fwd_weights},
                              {DNNL_ARG_BIAS, cb->bias},
                              {DNNL_ARG_DST, cb->dst}};
    run(c, cb->fwd, 4, args);
}

static void add_into(float *restrict out, const float *restrict v, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] += v[i];
}

static void backward(sk_conv *c, float *dx, float *dw, float *db, const float *dy,
                      const float *x, const float *w, int B) {
    conv_batch *cb = batch_for(c, B);
    const void *d_dst = dy;
    if (c->precision == SK_PRECISION_BF16) {
        sk_bf16_convert(c->d_dst_bf16, dy, out_floats(c, B));
        d_dst = c->d_dst_bf16;
    }
    if (dx) {
        load_weights(c, cb, cb->to_bwd_weights, cb->bwd_weights_in, w);
        bind(cb->d_dst, d_dst);
        bind(cb->d_src, c->d_src_tmp);
        dnnl_exec_arg_t args[] = {{DNNL_ARG_DIFF_DST, cb->d_dst},
                                  {DNNL_ARG_WEIGHTS, cb->bwd_weights_in},
                                  {DNNL_ARG_DIFF_SRC, cb->d_src}};
        run(c, cb->bwd_data, 3, args);
        add_into(dx, c->d_src_tmp, in_floats(c, B));
    }
    bind(cb->b_src, low_src(c, x, B));
    bind(cb->b_d_dst, d_dst);
    bind(cb->b_d_bias, c->d_bias_tmp);
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, cb->b_src},
                              {DNNL_ARG_DIFF_DST, cb->b_d_dst},
                              {DNNL_ARG_DIFF_WEIGHTS, cb->d_weights},
                              {DNNL_ARG_DIFF_BIAS, cb->b_d_bias}};
    run(c, cb->bwd_weights, 4, args);
    bind(cb->user_d_weights, c->d_weights_tmp);
    dnnl_exec_arg_t back[] = {{DNNL_ARG_FROM, cb->d_weights}, {DNNL_ARG_TO, cb->user_d_weights}};
    run(c, cb->from_d_weights, 2, back);
    add_into(dw, c->d_weights_tmp, sk_conv_weights(c->shape));
    if (db) add_into(db, c->d_bias_tmp, (size_t)c->shape.out_channels);
}

/* The one exported symbol (conv_backend.h). */
__attribute__((visibility("default"))) const sk_conv_backend *
sk_conv_backend_entry(const sk_conv_host *host) {
    static char name[48];
    static const sk_conv_backend backend = {
        .abi = SK_CONV_BACKEND_ABI,
        .name = name,
        .create = create,
        .destroy = destroy,
        .prepare = prepare,
        .forward = forward,
        .backward = backward,
    };
    if (!host || host->abi != SK_CONV_BACKEND_ABI) return NULL;
    g_host = *host;
    const dnnl_version_t *version = dnnl_version();
    snprintf(name, sizeof name, "oneDNN %d.%d.%d", version->major, version->minor, version->patch);
    return &backend;
}
