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
 * layout the chosen kernel wants (and to bf16) when their bits changed since
 * the last call (the caller's SGD changes them every minibatch, a rollout not
 * at all): small next to the activations (bench/conv.c prints the kernel each
 * shape gets). Backward primitives
 * overwrite their outputs, so input and weight gradients go through scratch
 * and are added to the caller's (+=, as src/nn).
 *
 * bf16 runs one of two ways, chosen once per convolution at creation
 * (path_choose; conv_backend.h has why): oneDNN's bf16 primitives, or, where
 * oneDNN has none (below AVX-512) or SKINNER_CONV_BF16=emulate, its f32
 * primitives on the same tensors rounded to bf16 values. Either way the
 * rounded tensors are the input and the weights (forward, backward weights'
 * input, backward data's weights) and the output gradient (both backward
 * primitives); the bias, the outputs and both gradients stay f32.
 *
 * No oneDNN status number reaches a user: each failure names the
 * convolution, its precision and path, the CPU's ISA as oneDNN sees it, and
 * what to do (failure_say).
 */
#include "../bf16.h"
#include "../conv_backend.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
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
/* The forward runs a batch as pieces of 1, 2, 4, ... 2^(PIECE_LEVELS - 1) images, largest
 * first, each with primitives made once for the convolution's life: a caller whose batch
 * size changes call by call (self-play's opponents, a multi-agent env's minibatch blocks)
 * made new primitives at nearly every call through the 4-entry cache (686 misses a worker in
 * 10 updates of the ConnectFour-v1 preset; issue 53 ask 7). An image's output does not depend
 * on the batch it is in (test_cnn's test_conv_forward_pieces holds it), so the pieces give
 * the bits one primitive of B would; the backward keeps one primitive of the exact size,
 * since its weight gradient sums over the batch, and a forward of a size the backward has
 * made (a minibatch block's) runs on it in one call. */
#define PIECE_LEVELS 16
/* Weights kept reordered for the forward, per primitive: a self-play rollout alternates the
 * learner's weights and its pool's snapshots' (up to 16 at the ConnectFour-v1 preset) step
 * by step, and reordered each at every switch (3583 reorders a worker in 10 updates, where a
 * reorder a call made 2852). Each caller's weights (by their address, checked by their bits)
 * keep their own reordered copy; the least recently used makes room. */
#define WEIGHT_VERSIONS 24

/* One caller's weights in a forward primitive's layout. */
typedef struct weights_version {
    const float *from;     /* the caller's address: which version to look at, not to read later */
    float *bits;           /* a copy of the weights reordered into memory; NULL: none yet */
    dnnl_memory_t memory;  /* allocated by oneDNN in the primitive's weights layout */
    uint64_t last_use;
} weights_version;

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
    /* the caller's weights (f32, its layout) last reordered into bwd_weights_in, and the
     * forward's versions: a reorder of the same bits is skipped (the weights do not change
     * during a rollout); NULL until the first */
    float *bwd_weights_of;
    weights_version fwd_versions[WEIGHT_VERSIONS];
} conv_batch;

struct sk_conv {
    sk_conv_shape shape;
    bool torch_like; /* sk_conv_create_torch's: weights (out, in, kh, kw) */
    int pad;         /* zeros on the left and top; the right and bottom's follow from out_h */
    sk_precision precision;
    bool emulated; /* bf16 as rounded floats through f32 primitives (path_choose) */
    int out_h, out_w;
    dnnl_stream_t stream;
    conv_batch batches[BATCH_CACHE];
    conv_batch pieces[PIECE_LEVELS]; /* the forward's pieces, 2^level images each */
    uint64_t uses;
    sk_conv_counts counts;
    /* scratch, grown to the largest batch seen */
    int scratch_batch;
    float *d_src_tmp, *d_weights_tmp, *d_bias_tmp;
    /* bf16's rounded copies: bf16 bits (native) or bf16 values as floats (emulated) */
    void *src_low, *d_dst_low;
    float *weights_low; /* emulated only: native's weight reorder rounds by itself */
};

static dnnl_engine_t g_engine;
static dnnl_status_t g_engine_status = dnnl_runtime_error;
static pthread_once_t g_engine_once = PTHREAD_ONCE_INIT;
static void engine_init(void) {
    g_engine_status = dnnl_engine_create(&g_engine, dnnl_cpu, 0);
    void *sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    memcpy(&g_omp_set_num_threads, &sym, sizeof sym); /* ISO C has no object-to-function cast */
}

/* ---- what a message says ---- */

static const char *isa_name(dnnl_cpu_isa_t isa) {
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "SSE4.1";
    case dnnl_cpu_isa_avx: return "AVX";
    case dnnl_cpu_isa_avx2: return "AVX2";
    case dnnl_cpu_isa_avx2_vnni: return "AVX2 with VNNI";
    case dnnl_cpu_isa_avx512_mic: return "AVX-512 (Xeon Phi)";
    case dnnl_cpu_isa_avx512_mic_4ops: return "AVX-512 (Xeon Phi, 4OPS)";
    case dnnl_cpu_isa_avx512_core: return "AVX-512";
    case dnnl_cpu_isa_avx512_core_vnni: return "AVX-512 with VNNI";
    case dnnl_cpu_isa_avx512_core_bf16: return "AVX-512 with BF16";
    case dnnl_cpu_isa_avx512_core_amx: return "AVX-512 with AMX";
    default: return "unknown to this skinner";
    }
}

/* oneDNN 2.6's bf16 convolutions (its jit kernels and its gemm one) need AVX-512's core. */
static bool isa_has_avx512_core(dnnl_cpu_isa_t isa) {
    return ((unsigned)isa & (unsigned)dnnl_cpu_isa_avx512_core) == (unsigned)dnnl_cpu_isa_avx512_core;
}

/* "ISA AVX2 (capped by ONEDNN_MAX_CPU_ISA=AVX2)": the ISA oneDNN runs at, and why. */
static void isa_say(char *out, size_t size) {
    const char *cap = getenv("ONEDNN_MAX_CPU_ISA");
    if (!cap || !cap[0]) cap = getenv("DNNL_MAX_CPU_ISA"); /* oneDNN's older name */
    int used = snprintf(out, size, "CPU ISA %s", isa_name(dnnl_get_effective_cpu_isa()));
    if (cap && cap[0] && used > 0 && (size_t)used < size)
        snprintf(out + used, size - (size_t)used, " (capped by ONEDNN_MAX_CPU_ISA=%s)", cap);
}

static const char *precision_say(const sk_conv *c) {
    if (c->precision == SK_PRECISION_F32) return "fp32";
    return c->emulated ? "bf16 (emulated in fp32)" : "bf16 (oneDNN's bf16 kernels)";
}

/* The convolution, B images (0: none said), its precision and the ISA. */
static void conv_say(const sk_conv *c, int B, char *out, size_t size) {
    const sk_conv_shape *s = &c->shape;
    char isa[96], images[32] = "";
    isa_say(isa, sizeof isa);
    if (B > 0) snprintf(images, sizeof images, " on %d images", B);
    snprintf(out, size, "a convolution %dx%dx%d -> %d channels, kernel %d, stride %d, groups %d%s "
             "in %s, %s", s->height, s->width, s->channels, s->out_channels, s->kernel, s->stride,
             s->groups, images, precision_say(c), isa);
}

/* Why oneDNN failed and what to do, in words. */
static void failure_say(dnnl_status_t status, char *out, size_t size) {
    switch (status) {
    case dnnl_out_of_memory:
        snprintf(out, size, "out of memory: free memory, or run fewer envs or smaller batches");
        break;
    case dnnl_unimplemented:
        snprintf(out, size, "oneDNN has no kernel for it: report this message as a skinner bug "
                 "(or run fp32 meanwhile)");
        break;
    default:
        snprintf(out, size, "oneDNN failed (%s): report this message as a skinner bug",
                 status == dnnl_invalid_arguments ? "invalid arguments" : "a runtime error");
        break;
    }
}

/* ---- descriptors ---- */

static dnnl_data_type_t low_type(const sk_conv *c) {
    return c->precision == SK_PRECISION_BF16 && !c->emulated ? dnnl_bf16 : dnnl_f32;
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
    for (int k = 0; k < WEIGHT_VERSIONS; k++) {
        g_host.free(b->fwd_versions[k].bits);
        if (b->fwd_versions[k].memory) dnnl_memory_destroy(b->fwd_versions[k].memory);
    }
    g_host.free(b->bwd_weights_of);
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

/* The memory descriptors of batch size B, activations in the caller's nhwc:
 * low is the type of the tensors bf16 rounds (f32 otherwise, or emulated). */
typedef struct conv_mds {
    dnnl_memory_desc_t src, src_f32, weights_any, d_weights_any, user_weights, bias, dst, dst_low;
} conv_mds;

/* The three primitive descriptors of one batch size. */
typedef struct conv_pds {
    dnnl_primitive_desc_t fwd, bwd_data, bwd_weights;
} conv_pds;

static void conv_mds_init(const sk_conv *c, int B, dnnl_data_type_t low, conv_mds *m) {
    const sk_conv_shape *s = &c->shape;
    activation_md(&m->src, B, s->channels, s->height, s->width, low);
    activation_md(&m->src_f32, B, s->channels, s->height, s->width, dnnl_f32);
    activation_md(&m->dst, B, s->out_channels, c->out_h, c->out_w, dnnl_f32);
    activation_md(&m->dst_low, B, s->out_channels, c->out_h, c->out_w, low);
    weights_md(&m->weights_any, c, low, true);
    weights_md(&m->d_weights_any, c, dnnl_f32, true);
    weights_md(&m->user_weights, c, dnnl_f32, false);
    bias_md(&m->bias, s->out_channels);
}

static void conv_pds_destroy(conv_pds *pds) {
    if (pds->fwd) dnnl_primitive_desc_destroy(pds->fwd);
    if (pds->bwd_data) dnnl_primitive_desc_destroy(pds->bwd_data);
    if (pds->bwd_weights) dnnl_primitive_desc_destroy(pds->bwd_weights);
    memset(pds, 0, sizeof *pds);
}

/* Forward's, backward data's and backward weights' descriptors over m: the
 * kernels oneDNN picks. dnnl_unimplemented when it has none (bf16 below
 * AVX-512); nothing to free on failure. */
static dnnl_status_t conv_pds_create(const sk_conv *c, const conv_mds *m, conv_pds *pds) {
    const sk_conv_shape *s = &c->shape;
    memset(pds, 0, sizeof *pds);
    dnnl_dims_t strides = {s->stride, s->stride}, pad_l = {c->pad, c->pad}, pad_r;
    /* the right padding that gives out_h: oneDNN checks (h - k + l + r) / stride + 1 == out */
    pad_r[0] = (c->out_h - 1) * s->stride + s->kernel - s->height - c->pad;
    pad_r[1] = (c->out_w - 1) * s->stride + s->kernel - s->width - c->pad;
    dnnl_convolution_desc_t fwd_d, bwd_data_d, bwd_weights_d;
    dnnl_status_t st = dnnl_convolution_forward_desc_init(
        &fwd_d, dnnl_forward_training, dnnl_convolution_direct, &m->src, &m->weights_any,
        &m->bias, &m->dst, strides, pad_l, pad_r);
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(&pds->fwd, &fwd_d, NULL, g_engine, NULL);
    if (st == dnnl_success)
        st = dnnl_convolution_backward_data_desc_init(&bwd_data_d, dnnl_convolution_direct,
                                                      &m->src_f32, &m->weights_any, &m->dst_low,
                                                      strides, pad_l, pad_r);
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(&pds->bwd_data, &bwd_data_d, NULL, g_engine, pds->fwd);
    if (st == dnnl_success)
        st = dnnl_convolution_backward_weights_desc_init(
            &bwd_weights_d, dnnl_convolution_direct, &m->src, &m->d_weights_any, &m->bias,
            &m->dst_low, strides, pad_l, pad_r);
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(&pds->bwd_weights, &bwd_weights_d, NULL, g_engine,
                                        pds->fwd);
    if (st != dnnl_success) conv_pds_destroy(pds);
    return st;
}

/* The three primitives, the weight reorders and the memory objects for batch
 * size B. Weights are given as "any", so that oneDNN picks its fast kernels'
 * layout (with the caller's plain layout it fell back to its reference loops,
 * 100x slower). */
static dnnl_status_t batch_create(const sk_conv *c, conv_batch *b, int B) {
    conv_mds m;
    conv_pds pds;
    conv_mds_init(c, B, low_type(c), &m);
    dnnl_status_t st = conv_pds_create(c, &m, &pds);
    if (st != dnnl_success) return st;
    st = dnnl_primitive_create(&b->fwd, pds.fwd);
    if (st == dnnl_success) st = dnnl_primitive_create(&b->bwd_data, pds.bwd_data);
    if (st == dnnl_success) st = dnnl_primitive_create(&b->bwd_weights, pds.bwd_weights);
    const dnnl_memory_desc_t *fwd_w = NULL, *bwd_w = NULL, *d_w = NULL;
    if (st == dnnl_success) {
        fwd_w = dnnl_primitive_desc_query_md(pds.fwd, dnnl_query_weights_md, 0);
        bwd_w = dnnl_primitive_desc_query_md(pds.bwd_data, dnnl_query_weights_md, 0);
        d_w = dnnl_primitive_desc_query_md(pds.bwd_weights, dnnl_query_diff_weights_md, 0);
        st = make_reorder(&b->to_fwd_weights, &m.user_weights, fwd_w);
    }
    if (st == dnnl_success) st = make_reorder(&b->to_bwd_weights, &m.user_weights, bwd_w);
    if (st == dnnl_success) st = make_reorder(&b->from_d_weights, d_w, &m.user_weights);
    const dnnl_memory_desc_t *mds[] = {&m.user_weights, &m.user_weights, fwd_w, bwd_w,
                                       d_w, &m.src, &m.bias, &m.dst,
                                       &m.dst_low, &m.src_f32, &m.src, &m.dst_low,
                                       &m.bias};
    dnnl_memory_t *mems[] = {&b->user_weights, &b->user_d_weights, &b->fwd_weights,
                             &b->bwd_weights_in, &b->d_weights, &b->src, &b->bias, &b->dst,
                             &b->d_dst, &b->d_src, &b->b_src, &b->b_d_dst, &b->b_d_bias};
    for (size_t k = 0; st == dnnl_success && k < sizeof mems / sizeof mems[0]; k++)
        st = make_memory(mems[k], mds[k], k >= 2 && k <= 4);
    conv_pds_destroy(&pds);
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
    bool ok = c->d_src_tmp && c->d_weights_tmp && c->d_bias_tmp;
    if (c->precision == SK_PRECISION_BF16) {
        size_t low = c->emulated ? sizeof(float) : sizeof(uint16_t);
        c->src_low = grow(c->src_low, in * low);
        c->d_dst_low = grow(c->d_dst_low, out * low);
        if (c->emulated && !c->weights_low) c->weights_low = g_host.alloc(w * sizeof(float));
        ok = ok && c->src_low && c->d_dst_low && (!c->emulated || c->weights_low);
    }
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
    c->counts.batch_misses++;
    *status = batch_create(c, slot, B);
    if (*status == dnnl_success && !scratch_reserve(c, B)) {
        batch_free(slot);
        *status = dnnl_out_of_memory;
    }
    if (*status != dnnl_success) return NULL;
    slot->last_use = ++c->uses;
    return slot;
}

/* "oneDNN cannot run <the convolution>: <why and what to do>" */
static void cannot_run_say(const sk_conv *c, int B, dnnl_status_t status, char *out,
                           size_t size) {
    char conv[320], why[160];
    conv_say(c, B, conv, sizeof conv);
    failure_say(status, why, sizeof why);
    snprintf(out, size, "oneDNN cannot run %s: %s", conv, why);
}

/* In forward and backward. The path was chosen at creation against oneDNN's
 * kernels, and the caller may have prepared this batch size (sk_conv_prepare),
 * so a failure here is out of memory or a oneDNN bug: no status is left to
 * return, so it aborts, saying which. */
static void cannot_run_panic(const sk_conv *c, int B, dnnl_status_t status) {
    char msg[512];
    cannot_run_say(c, B, status, msg, sizeof msg);
    g_host.panic(__FILE__, __LINE__, msg);
}

static conv_batch *batch_for(sk_conv *c, int B) {
    dnnl_status_t status = dnnl_success;
    conv_batch *b = batch_lookup(c, B, &status);
    if (!b) cannot_run_panic(c, B, status);
    return b;
}

/* The forward's piece of 2^level images, made on its first use. */
static conv_batch *piece_for(sk_conv *c, int level) {
    conv_batch *b = &c->pieces[level];
    if (b->batch) return b;
    c->counts.batch_misses++;
    dnnl_status_t status = batch_create(c, b, 1 << level);
    if (status != dnnl_success) cannot_run_panic(c, 1 << level, status);
    return b;
}

static sk_status prepare(sk_conv *c, int B, char *message, size_t message_size) {
    dnnl_status_t status = dnnl_success;
    if (batch_lookup(c, B, &status)) return SK_OK;
    cannot_run_say(c, B, status, message, message_size);
    return status == dnnl_out_of_memory ? SK_ERR_NOMEM : SK_ERR_INVALID;
}

/* ---- the bf16 path, once per convolution ---- */

/* Says a path the first time a process takes it (the run's log has it once,
 * however many layers and workers create convolutions). */
static atomic_flag g_path_said[2] = {ATOMIC_FLAG_INIT, ATOMIC_FLAG_INIT};

static void path_log(bool emulated, const char *why) {
    if (atomic_flag_test_and_set(&g_path_said[emulated])) return;
    char line[512];
    snprintf(line, sizeof line, "bf16 convolutions: %s (%s)", emulated ? "emulated" : "native",
             why);
    g_host.log(0, line);
}

/* Native when asked and oneDNN has bf16 kernels for the shape (tried on one
 * image: kernels are chosen by ISA and shape, not batch size), emulated when
 * asked or when it has none. SK_OK, or a message: native asked for and not
 * there, or oneDNN failing for another reason. */
static sk_status path_choose(sk_conv *c, sk_conv_bf16_path asked, char *message,
                             size_t message_size) {
    static const char how[] = "inputs, weights and output gradients rounded to bf16, "
                              "accumulated in f32";
    char isa[96], why[320];
    isa_say(isa, sizeof isa);
    if (asked == SK_CONV_BF16_EMULATE) {
        c->emulated = true;
        snprintf(why, sizeof why, SK_CONV_BF16_ENV "=%s; %s through oneDNN's f32 kernels",
                 sk_conv_bf16_names[SK_CONV_BF16_EMULATE], how);
        path_log(true, why);
        return SK_OK;
    }
    conv_mds m;
    conv_pds pds;
    conv_mds_init(c, 1, dnnl_bf16, &m);
    dnnl_status_t status = conv_pds_create(c, &m, &pds);
    conv_pds_destroy(&pds);
    if (status == dnnl_success) {
        snprintf(why, sizeof why, "oneDNN's bf16 kernels, %s; %s", isa, how);
        path_log(false, why);
        return SK_OK;
    }
    bool below = !isa_has_avx512_core(dnnl_get_effective_cpu_isa());
    if (status == dnnl_unimplemented && asked == SK_CONV_BF16_AUTO) {
        c->emulated = true;
        snprintf(why, sizeof why, "oneDNN has no bf16 kernel for this convolution on this CPU, "
                 "%s%s; %s, through its f32 kernels", isa,
                 below ? ": its bf16 convolutions need AVX-512" : "", how);
        path_log(true, why);
        return SK_OK;
    }
    char conv[320], todo[160];
    conv_say(c, 0, conv, sizeof conv);
    if (status == dnnl_unimplemented)
        snprintf(todo, sizeof todo, "oneDNN has no bf16 kernel for it%s, and " SK_CONV_BF16_ENV
                 "=%s forbids emulating it: unset " SK_CONV_BF16_ENV " (or set it to %s)",
                 below ? " below AVX-512" : "", sk_conv_bf16_names[SK_CONV_BF16_NATIVE],
                 sk_conv_bf16_names[SK_CONV_BF16_EMULATE]);
    else
        failure_say(status, todo, sizeof todo);
    snprintf(message, message_size, "oneDNN cannot run %s: %s", conv, todo);
    return status == dnnl_out_of_memory ? SK_ERR_NOMEM : SK_ERR_INVALID;
}

static sk_status create(sk_conv **out, sk_conv_shape shape, int pad, bool torch_like,
                        sk_precision precision, sk_conv_bf16_path bf16_path, char *message,
                        size_t message_size) {
    *out = NULL;
    pthread_once(&g_engine_once, engine_init);
    char isa[96];
    if (g_engine_status != dnnl_success) {
        isa_say(isa, sizeof isa);
        snprintf(message, message_size, "oneDNN could not start its CPU engine (%s, %s): check "
                 "oneDNN's install (Debian: libdnnl2) and that ONEDNN_MAX_CPU_ISA, if set, names "
                 "an ISA this CPU has", g_engine_status == dnnl_out_of_memory ? "out of memory"
                 : "a runtime error", isa);
        return g_engine_status == dnnl_out_of_memory ? SK_ERR_NOMEM : SK_ERR_IO;
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
        isa_say(isa, sizeof isa);
        snprintf(message, message_size, "oneDNN could not create a stream (%s): out of memory "
                 "or a broken oneDNN install (Debian: libdnnl2)", isa);
        return SK_ERR_IO;
    }
    if (precision == SK_PRECISION_BF16) {
        sk_status status = path_choose(c, bf16_path, message, message_size);
        if (status != SK_OK) {
            dnnl_stream_destroy(c->stream);
            g_host.free(c);
            return status;
        }
    }
    *out = c;
    return SK_OK;
}

static void destroy(sk_conv *c) {
    if (!c) return;
    for (int k = 0; k < BATCH_CACHE; k++) batch_free(&c->batches[k]);
    for (int k = 0; k < PIECE_LEVELS; k++) batch_free(&c->pieces[k]);
    dnnl_stream_destroy(c->stream);
    g_host.free(c->d_src_tmp);
    g_host.free(c->d_weights_tmp);
    g_host.free(c->d_bias_tmp);
    g_host.free(c->src_low);
    g_host.free(c->d_dst_low);
    g_host.free(c->weights_low);
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

/* v (n floats) as a primitive takes a tensor bf16 rounds: itself in fp32, else
 * rounded into scratch, as bf16 bits (native) or as bf16 values in floats
 * (emulated). */
static const void *low_copy(const sk_conv *c, void *scratch, const float *v, size_t n) {
    if (c->precision == SK_PRECISION_F32) return v;
    if (c->emulated) sk_bf16_round_floats(scratch, v, n);
    else sk_bf16_convert(scratch, v, n);
    return scratch;
}

/* w (the caller's f32) into a primitive's weights (its layout and type): the
 * native path's reorder to bf16 rounds them (nearest, ties to even, as
 * sk_bf16_bits); the emulated path rounds them first and reorders floats.
 * Nothing to do when *loaded holds w's bits: `to` has them already (a copy of
 * the values, not the caller's pointer, is kept: the same buffer holds new
 * weights after an optimiser step). */
static void load_weights(sk_conv *c, conv_batch *cb, dnnl_primitive_t reorder,
                         dnnl_memory_t to, const float *w, float **loaded) {
    size_t bytes = sk_conv_weights(c->shape) * sizeof(float);
    if (*loaded && memcmp(*loaded, w, bytes) == 0) return;
    if (!*loaded) *loaded = g_host.alloc(bytes); /* NULL: no copy, reordered every call */
    if (*loaded) memcpy(*loaded, w, bytes);
    if (c->emulated) {
        sk_bf16_round_floats(c->weights_low, w, sk_conv_weights(c->shape));
        w = c->weights_low;
    }
    bind(cb->user_weights, w);
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, cb->user_weights}, {DNNL_ARG_TO, to}};
    run(c, reorder, 2, args);
    c->counts.weight_reorders++;
}

/* w in cb's forward layout: the version of w's address, reordered again only when its bits
 * changed (an optimiser step, a new snapshot in a pool slot). */
static dnnl_memory_t forward_weights(sk_conv *c, conv_batch *cb, const float *w) {
    weights_version *v = &cb->fwd_versions[0];
    for (int k = 0; k < WEIGHT_VERSIONS && v->from != w; k++) {
        weights_version *other = &cb->fwd_versions[k];
        if (other->from == w || other->last_use < v->last_use) v = other;
    }
    if (v->from != w) { /* the least recently used makes room */
        g_host.free(v->bits);
        v->bits = NULL;
        v->from = w;
    }
    v->last_use = ++c->uses;
    if (!v->memory) {
        const dnnl_memory_desc_t *md;
        dnnl_status_t st = dnnl_memory_get_memory_desc(cb->fwd_weights, &md);
        if (st == dnnl_success) st = make_memory(&v->memory, md, true);
        if (st != dnnl_success) cannot_run_panic(c, cb->batch, st);
    }
    load_weights(c, cb, cb->to_fwd_weights, v->memory, w, &v->bits);
    return v->memory;
}

static void forward(sk_conv *c, float *y, const float *x, const float *w, const float *b,
                     int B) {
    BACKEND_ASSERT(B > 0);
    if (g_omp_set_num_threads) g_omp_set_num_threads(1);
    if (!scratch_reserve(c, B)) cannot_run_panic(c, B, dnnl_out_of_memory);
    if (!b) { /* no bias: zeros (the primitive was made with one) */
        memset(c->d_bias_tmp, 0, (size_t)c->shape.out_channels * sizeof(float));
        b = c->d_bias_tmp;
    }
    const char *src = low_copy(c, c->src_low, x, in_floats(c, B)); /* bytes of an image: */
    size_t src_image = in_floats(c, 1) * (low_type(c) == dnnl_bf16 ? sizeof(uint16_t) : sizeof(float));
    conv_batch *exact = NULL; /* the backward's primitives of B, when made: one call */
    for (int k = 0; k < BATCH_CACHE && !exact; k++)
        if (c->batches[k].batch == B) exact = &c->batches[k];
    for (int done = 0; done < B;) { /* else the largest piece that fits what is left */
        int level = 0;
        while (!exact && level + 1 < PIECE_LEVELS && (2 << level) <= B - done) level++;
        conv_batch *cb = exact ? exact : piece_for(c, level);
        dnnl_memory_t weights = forward_weights(c, cb, w);
        bind(cb->src, src + (size_t)done * src_image);
        bind(cb->bias, b);
        bind(cb->dst, y + (size_t)done * out_floats(c, 1));
        dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, cb->src},
                                  {DNNL_ARG_WEIGHTS, weights},
                                  {DNNL_ARG_BIAS, cb->bias},
                                  {DNNL_ARG_DST, cb->dst}};
        run(c, cb->fwd, 4, args);
        done += exact ? B : 1 << level;
    }
}

static void add_into(float *restrict out, const float *restrict v, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] += v[i];
}

static void backward(sk_conv *c, float *dx, float *dw, float *db, const float *dy,
                      const float *x, const float *w, int B) {
    conv_batch *cb = batch_for(c, B);
    const void *d_dst = low_copy(c, c->d_dst_low, dy, out_floats(c, B));
    if (dx) {
        load_weights(c, cb, cb->to_bwd_weights, cb->bwd_weights_in, w, &cb->bwd_weights_of);
        bind(cb->d_dst, d_dst);
        bind(cb->d_src, c->d_src_tmp);
        dnnl_exec_arg_t args[] = {{DNNL_ARG_DIFF_DST, cb->d_dst},
                                  {DNNL_ARG_WEIGHTS, cb->bwd_weights_in},
                                  {DNNL_ARG_DIFF_SRC, cb->d_src}};
        run(c, cb->bwd_data, 3, args);
        add_into(dx, c->d_src_tmp, in_floats(c, B));
    }
    bind(cb->b_src, low_copy(c, c->src_low, x, in_floats(c, B)));
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

static sk_conv_counts counts(const sk_conv *c) { return c->counts; }

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
        .counts = counts,
    };
    if (!host || host->abi != SK_CONV_BACKEND_ABI) return NULL;
    g_host = *host;
    const dnnl_version_t *version = dnnl_version();
    snprintf(name, sizeof name, "oneDNN %d.%d.%d", version->major, version->minor, version->patch);
    return &backend;
}
