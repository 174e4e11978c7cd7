/*
 * The measurement behind docs/morpho.md's convolution claims: (1) why Morpho's
 * convolutional host uses oneDNN convolutions (src/nn/conv.h) rather than
 * im2col + OpenBLAS sgemm; (2) the machine's single-threaded GEMM peak (oneDNN
 * matmul f32 and bf16, OpenBLAS sgemm) that host epochs are compared against.
 * One JSON object per line:
 *   "peak"  GFLOP/s of an M x N x K GEMM (oneDNN: B packed once, untimed;
 *           bf16: bf16 A and B, f32 C);
 *   "check" im2col + sgemm against sk_conv_forward f32 (no bias) once per
 *           groups-1 shape, before timing; exits 1 above 1e-3 relative;
 *   "conv"  ms per call at batch 256 of each CNN-host convolution: im2col and
 *           sgemm (forward without bias; null for groups > 1), sk_conv_forward,
 *           and forward + sk_conv_backward (dx, dw, db), f32 and bf16; train
 *           GFLOP/s = 3 x 2 x macs x batch / time; impl_*: oneDNN's forward.
 * Times are medians of repeated calls (after a warm-up) within the figure's
 * budget, on one thread, as skinner runs its layers.
 *
 * usage: conv_bench [SECONDS_PER_FIGURE=0.5]     (14 figures: ~8 s at 0.5)
 *   cmake --build build --target conv_bench && build/bench/conv_bench
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "nn/conv.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 256
#define MAX_SAMPLES 1001
#define CHECK_TOLERANCE 1e-3

#define DNNL_CHECK(call) dnnl_check((call), #call)
static void dnnl_check(dnnl_status_t st, const char *what) {
    if (st == dnnl_success) return;
    fprintf(stderr, "conv_bench: %s failed (oneDNN status %d)\n", what, (int)st);
    exit(1);
}

static dnnl_engine_t g_engine;
static dnnl_stream_t g_stream;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median seconds per call of fn(ctx): one warm-up call, then calls until
 * budget seconds have passed (at least 3, at most MAX_SAMPLES). */
static double median_time(void (*fn)(void *), void *ctx, double budget) {
    static double samples[MAX_SAMPLES];
    fn(ctx);
    int n = 0;
    double start = now();
    while (n < MAX_SAMPLES && (n < 3 || now() - start < budget)) {
        double t = now();
        fn(ctx);
        samples[n++] = now() - t;
    }
    qsort(samples, (size_t)n, sizeof samples[0], cmp_double);
    return samples[n / 2];
}

static void *xmalloc(size_t bytes) {
    void *p = calloc(1, bytes);
    if (!p) fprintf(stderr, "conv_bench: out of memory (%zu bytes)\n", bytes), exit(1);
    return p;
}

/* A deterministic pattern in [-0.5, 0.5), exact in bf16. */
static void fill(float *p, size_t n, size_t seed) {
    for (size_t i = 0; i < n; i++) p[i] = (float)((int)((i * 7 + seed) % 17) - 8) / 16.0f;
}

typedef struct gemm_run {
    dnnl_primitive_t prim; /* oneDNN's */
    dnnl_exec_arg_t args[3];
    CBLAS_TRANSPOSE trans_b; /* OpenBLAS's: C (M, N) = A (M, K) B (K, N) or B^T (N, K) */
    int M, N, K;
    const float *a, *b;
    float *c;
} gemm_run;

static void run_matmul(void *ctx) {
    gemm_run *r = ctx;
    DNNL_CHECK(dnnl_primitive_execute(r->prim, g_stream, 3, r->args));
    DNNL_CHECK(dnnl_stream_wait(g_stream));
}

static void run_sgemm(void *ctx) {
    gemm_run *r = ctx;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, r->trans_b, r->M, r->N, r->K, 1.0f, r->a, r->K, r->b,
                r->trans_b == CblasTrans ? r->K : r->N, 0.0f, r->c, r->N);
}

static void print_peak(const char *library, const char *type, int M, int N, int K, double sec,
                       const char *impl) {
    printf("{\"figure\": \"peak\", \"library\": \"%s\", \"type\": \"%s\", \"M\": %d, \"N\": %d, "
           "\"K\": %d, \"gflops\": %.2f, \"impl\": \"%s\"}\n",
           library, type, M, N, K, 2.0 * M * N * K / sec / 1e9, impl);
}

static void peak_onednn(int M, int N, int K, dnnl_data_type_t type, double budget) {
    dnnl_memory_desc_t a_md, b_md, b_user_md, c_md;
    dnnl_dims_t a_dims = {M, K}, b_dims = {K, N}, c_dims = {M, N};
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&a_md, 2, a_dims, type, dnnl_ab));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&b_md, 2, b_dims, type, dnnl_format_tag_any));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&b_user_md, 2, b_dims, dnnl_f32, dnnl_ab));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&c_md, 2, c_dims, dnnl_f32, dnnl_ab));
    dnnl_matmul_desc_t desc;
    DNNL_CHECK(dnnl_matmul_desc_init(&desc, &a_md, &b_md, NULL, &c_md));
    dnnl_primitive_desc_t pd, reorder_pd;
    DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, g_engine, NULL));
    const dnnl_memory_desc_t *b_packed = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *mds[4] = {&a_md, &b_user_md, b_packed, &c_md};
    dnnl_memory_t m[4];
    for (int k = 0; k < 4; k++)
        DNNL_CHECK(dnnl_memory_create(&m[k], mds[k], g_engine, DNNL_MEMORY_ALLOCATE));
    dnnl_memory_t a = m[0], b_user = m[1], b = m[2], c = m[3];
    size_t na = (size_t)M * (size_t)K;
    void *pa, *pb;
    float *tmp = xmalloc(na * sizeof(float));
    DNNL_CHECK(dnnl_memory_get_data_handle(a, &pa));
    DNNL_CHECK(dnnl_memory_get_data_handle(b_user, &pb));
    fill(tmp, na, 1), fill(pb, (size_t)K * (size_t)N, 2);
    if (type == dnnl_f32) memcpy(pa, tmp, na * sizeof(float));
    else sk_f32_to_bf16(pa, tmp, na);
    free(tmp);
    gemm_run r = {.args = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}}};
    dnnl_exec_arg_t pack[] = {{DNNL_ARG_FROM, b_user}, {DNNL_ARG_TO, b}};
    DNNL_CHECK(dnnl_reorder_primitive_desc_create(&reorder_pd, &b_user_md, g_engine, b_packed,
                                                  g_engine, NULL));
    DNNL_CHECK(dnnl_primitive_create(&r.prim, reorder_pd));
    DNNL_CHECK(dnnl_primitive_execute(r.prim, g_stream, 2, pack));
    DNNL_CHECK(dnnl_stream_wait(g_stream));
    dnnl_primitive_destroy(r.prim), dnnl_primitive_desc_destroy(reorder_pd);
    DNNL_CHECK(dnnl_primitive_create(&r.prim, pd));
    double sec = median_time(run_matmul, &r, budget);
    const char *impl = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    print_peak("onednn", type == dnnl_f32 ? "f32" : "bf16", M, N, K, sec, impl);
    dnnl_primitive_destroy(r.prim), dnnl_primitive_desc_destroy(pd);
    for (int k = 0; k < 4; k++) dnnl_memory_destroy(m[k]);
}

static void peak_openblas(int M, int N, int K, double budget) {
    float *a = xmalloc(sizeof(float) * (size_t)M * (size_t)K),
          *b = xmalloc(sizeof(float) * (size_t)K * (size_t)N),
          *c = xmalloc(sizeof(float) * (size_t)M * (size_t)N);
    fill(a, (size_t)M * (size_t)K, 1);
    fill(b, (size_t)K * (size_t)N, 2);
    gemm_run r = {.trans_b = CblasNoTrans, .M = M, .N = N, .K = K, .a = a, .b = b, .c = c};
    print_peak("openblas", "f32", M, N, K, median_time(run_sgemm, &r, budget), "cblas_sgemm");
    free(a), free(b), free(c);
}

typedef struct conv_run {
    sk_conv_shape s;
    int oh, ow;
    sk_conv *conv;
    float *x, *w, *b, *y, *dy, *dx, *dw, *db, *cols; /* cols (B oh ow, k k in) */
} conv_run;

/* Rows (n, oy, ox) of the receptive field (ky, kx, ci), zero outside: the
 * order of a weight row (out, k, k, in), so that y = cols w^T. */
static void run_im2col(void *ctx) {
    conv_run *r = ctx;
    const sk_conv_shape *s = &r->s;
    int k = s->kernel, pad = k / 2, c = s->channels;
    size_t bytes = (size_t)c * sizeof(float);
    float *col = r->cols;
    for (int n = 0; n < BATCH; n++)
        for (int oy = 0; oy < r->oh; oy++)
            for (int ox = 0; ox < r->ow; ox++)
                for (int ky = 0; ky < k; ky++) {
                    int iy = oy * s->stride + ky - pad;
                    for (int kx = 0; kx < k; kx++, col += c) {
                        int ix = ox * s->stride + kx - pad;
                        if (iy < 0 || iy >= s->height || ix < 0 || ix >= s->width)
                            memset(col, 0, bytes);
                        else
                            memcpy(col, r->x + (size_t)(((n * s->height + iy) * s->width + ix) * c),
                                   bytes);
                    }
                }
}

static void run_conv_sgemm(void *ctx) {
    conv_run *r = ctx;
    gemm_run g = {.trans_b = CblasTrans, .M = BATCH * r->oh * r->ow, .N = r->s.out_channels,
                  .K = r->s.kernel * r->s.kernel * r->s.channels, .a = r->cols, .b = r->w, .c = r->y};
    run_sgemm(&g);
}

static void run_forward(void *ctx) {
    conv_run *r = ctx;
    sk_conv_forward(r->conv, r->y, r->x, r->w, r->b, BATCH);
}

static void run_train(void *ctx) {
    conv_run *r = ctx;
    sk_conv_forward(r->conv, r->y, r->x, r->w, r->b, BATCH);
    sk_conv_backward(r->conv, r->dx, r->dw, r->db, r->dy, r->x, r->w, BATCH);
}

/* oneDNN's pick for sk_conv's forward descriptor (built as src/nn/conv.c's batch_create does). */
static void conv_impl(const conv_run *r, dnnl_data_type_t type, char *buf, size_t size) {
    const sk_conv_shape *s = &r->s;
    int g = s->groups, k = s->kernel, st = s->stride;
    dnnl_memory_desc_t src, w, bias, dst;
    dnnl_dims_t src_d = {BATCH, s->channels, s->height, s->width}, bias_d = {s->out_channels},
                dst_d = {BATCH, s->out_channels, r->oh, r->ow},
                w4 = {s->out_channels, s->channels, k, k},
                w5 = {g, s->out_channels / g, s->channels / g, k, k}, strides = {st, st},
                pad_l = {k / 2, k / 2}, pad_r = {(r->oh - 1) * st + k - s->height - k / 2,
                                                 (r->ow - 1) * st + k - s->width - k / 2};
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&src, 4, src_d, type, dnnl_nhwc));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&dst, 4, dst_d, dnnl_f32, dnnl_nhwc));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&bias, 1, bias_d, dnnl_f32, dnnl_a));
    DNNL_CHECK(dnnl_memory_desc_init_by_tag(&w, g == 1 ? 4 : 5, g == 1 ? w4 : w5, type,
                                            dnnl_format_tag_any));
    dnnl_convolution_desc_t desc;
    dnnl_primitive_desc_t pd;
    DNNL_CHECK(dnnl_convolution_forward_desc_init(&desc, dnnl_forward_training,
                                                  dnnl_convolution_direct, &src, &w, &bias, &dst,
                                                  strides, pad_l, pad_r));
    DNNL_CHECK(dnnl_primitive_desc_create(&pd, &desc, NULL, g_engine, NULL));
    const char *impl = "?";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(buf, size, "%s", impl);
    dnnl_primitive_desc_destroy(pd);
}

static void conv_figure(sk_conv_shape s, double budget) {
    char name[64], impl_f32[128], impl_bf16[128];
    snprintf(name, sizeof name, "%dx%dx%d->%d k%d s%d g%d", s.height, s.width, s.channels,
             s.out_channels, s.kernel, s.stride, s.groups);
    conv_run r = {.s = s, .oh = sk_conv_out_side(s.height, s.kernel, s.stride),
                  .ow = sk_conv_out_side(s.width, s.kernel, s.stride)};
    size_t nx = (size_t)(BATCH * s.height * s.width * s.channels),
           rows = (size_t)(BATCH * r.oh * r.ow), ny = rows * (size_t)s.out_channels,
           nw = sk_conv_weight_floats(s), kk = (size_t)(s.kernel * s.kernel * s.channels),
           nb = (size_t)s.out_channels;
    r.x = xmalloc(nx * sizeof(float)), r.dx = xmalloc(nx * sizeof(float));
    r.y = xmalloc(ny * sizeof(float)), r.dy = xmalloc(ny * sizeof(float));
    r.w = xmalloc(nw * sizeof(float)), r.dw = xmalloc(nw * sizeof(float));
    r.b = xmalloc(nb * sizeof(float)), r.db = xmalloc(nb * sizeof(float));
    fill(r.x, nx, 1), fill(r.w, nw, 2), fill(r.b, nb, 3), fill(r.dy, ny, 4);
    sk_conv *f32, *bf16;
    if (sk_conv_create(&f32, s, SK_PRECISION_F32) != SK_OK ||
        sk_conv_create(&bf16, s, SK_PRECISION_BF16) != SK_OK) {
        fprintf(stderr, "conv_bench: sk_conv_create failed for %s\n", name);
        exit(1);
    }
    conv_impl(&r, dnnl_f32, impl_f32, sizeof impl_f32);
    conv_impl(&r, dnnl_bf16, impl_bf16, sizeof impl_bf16);
    double t_im2col = NAN, t_sgemm = NAN, each = budget / 6;
    if (s.groups == 1) {
        r.cols = xmalloc(rows * kk * sizeof(float));
        float *ref = xmalloc(ny * sizeof(float));
        sk_conv_forward(f32, ref, r.x, r.w, NULL, BATCH);
        run_im2col(&r);
        run_conv_sgemm(&r);
        double diff = 0, scale = 0;
        for (size_t i = 0; i < ny; i++) {
            diff = fmax(diff, fabs((double)r.y[i] - (double)ref[i]));
            scale = fmax(scale, fabs((double)ref[i]));
        }
        double err = diff / fmax(scale, 1e-30);
        printf("{\"figure\": \"check\", \"shape\": \"%s\", \"max_abs_diff\": %.3g, "
               "\"max_abs_output\": %.3g, \"relative\": %.3g, \"ok\": %s}\n",
               name, diff, scale, err, err <= CHECK_TOLERANCE ? "true" : "false");
            if (!(err <= CHECK_TOLERANCE)) exit(1);
        free(ref);
        t_im2col = median_time(run_im2col, &r, each);
        t_sgemm = median_time(run_conv_sgemm, &r, each);
    }
    r.conv = f32;
    double f32_fwd = median_time(run_forward, &r, each), f32_train = median_time(run_train, &r, each);
    r.conv = bf16;
    double bf16_fwd = median_time(run_forward, &r, each),
           bf16_train = median_time(run_train, &r, each);
    double macs = sk_conv_macs(s);
    printf("{\"figure\": \"conv\", \"shape\": \"%s\", \"batch\": %d, \"macs\": %.0f", name, BATCH,
           macs);
    const char *keys[] = {"im2col_ms", "sgemm_ms", "im2col_sgemm_ms", "onednn_f32_fwd_ms",
                          "onednn_bf16_fwd_ms", "onednn_f32_train_ms", "onednn_bf16_train_ms"};
    double secs[] = {t_im2col, t_sgemm, t_im2col + t_sgemm, f32_fwd, bf16_fwd, f32_train, bf16_train};
    for (int k = 0; k < 7; k++)
        printf(isnan(secs[k]) ? ", \"%s\": null" : ", \"%s\": %.4f", keys[k], secs[k] * 1e3);
    printf(", \"onednn_bf16_train_gflops\": %.2f, \"impl_f32\": \"%s\", \"impl_bf16\": \"%s\"}\n",
           3.0 * 2.0 * macs * BATCH / bf16_train / 1e9, impl_f32, impl_bf16);
    sk_conv_destroy(f32), sk_conv_destroy(bf16);
    float *bufs[] = {r.x, r.dx, r.y, r.dy, r.w, r.dw, r.b, r.db, r.cols};
    for (int k = 0; k < 9; k++) free(bufs[k]);
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    if (argc > 2 || !(seconds > 0)) {
        fprintf(stderr, "usage: conv_bench [SECONDS_PER_FIGURE=0.5]\n");
        return 2;
    }
    /* one thread: libgomp's (libdnnl loaded it; looked up as src/nn/conv.c does) and OpenBLAS's */
    void (*set_omp_threads)(int) = NULL;
    void *sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    memcpy(&set_omp_threads, &sym, sizeof sym); /* ISO C has no object-to-function cast */
    if (set_omp_threads) set_omp_threads(1);
    else fprintf(stderr, "conv_bench: no omp_set_num_threads in the process\n");
    openblas_set_num_threads(1);
    setvbuf(stdout, NULL, _IOLBF, 0); /* a line per figure as it completes */
    DNNL_CHECK(dnnl_engine_create(&g_engine, dnnl_cpu, 0));
    DNNL_CHECK(dnnl_stream_create(&g_stream, g_engine, dnnl_stream_default_flags));

    static const int gemms[][3] = {{1024, 1024, 1024}, {8192, 64, 576}};
    for (int i = 0; i < 2; i++) {
        peak_onednn(gemms[i][0], gemms[i][1], gemms[i][2], dnnl_f32, seconds);
        peak_onednn(gemms[i][0], gemms[i][1], gemms[i][2], dnnl_bf16, seconds);
        peak_openblas(gemms[i][0], gemms[i][1], gemms[i][2], seconds);
    }
    /* Morpho's CNN host (c = 8): three stride-2 stages, then the seed convolutions */
    static const sk_conv_shape shapes[] = {
        {28, 28, 1, 8, 3, 2, 1},   {14, 14, 8, 16, 3, 2, 1}, {7, 7, 16, 32, 3, 2, 1},
        {14, 14, 8, 8, 3, 1, 1},   {7, 7, 16, 16, 3, 1, 1},  {4, 4, 32, 32, 3, 1, 1},
        {14, 14, 8, 8, 1, 1, 1},   {14, 14, 8, 8, 3, 1, 8},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) conv_figure(shapes[i], seconds);
    dnnl_stream_destroy(g_stream), dnnl_engine_destroy(g_engine);
    return 0;
}
