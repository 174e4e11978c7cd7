/*
 * Issue 33 ask 1: the learner's GEMMs at their own shapes, by each candidate, in one process:
 * OpenBLAS (as src/nn/nn.c calls it: bias copied into the output, then sgemm with beta 1),
 * skinner's kernels at each ISA level the CPU has (AVX-512 and AVX2 + FMA: src/nn/isa/gemm.c,
 * called through their tables, whatever level the process would pick), and libxsmm's JIT
 * kernels (where the build found libxsmm: SKINNER_LIBXSMM). Rounds alternate the candidates; each figure is the median
 * of the rounds. Run it once plain and once with OPENBLAS_CORETYPE=Haswell to see OpenBLAS
 * pinned (bench/learner.sh does both). Prints the core's measured FMA peak per vector width,
 * and what storing 64 and 256 KiB costs (in order, and a column block of every row at a time),
 * then one JSON object per shape and candidate.
 * usage: learner_gemm [ROUNDS=15]
 */
#include "nn/gemm_small.h"
#include "nn/kernels.h"
#include "fma_peak.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef SKINNER_LIBXSMM
#include <libxsmm.h>
#endif

/* FORWARD_T: the forward with W^T given (sk_gemm_small_forward_t), as a recurrent layer runs
 * each step after transposing W_hh once for the sequence (src/nn/rnn.c) */
typedef enum { FORWARD, DINPUT, DWEIGHT, FORWARD_T } pass;
static const char *const pass_names[] = {"forward", "dinput", "dweight", "forward_t"};

typedef struct shape {
    const char *what;
    pass pass;
    int B, C, OC; /* rows, layer input width, layer output width */
} shape;

/* Per thread of two: a minibatch of 512 rows is 256 rows each. */
static const shape shapes[] = {
    {"cartpole layer 0 (4 -> 64)", FORWARD, 256, 4, 64},
    {"cartpole layer 1 (64 -> 64)", FORWARD, 256, 64, 64},
    {"cartpole actor head (64 -> 2)", FORWARD, 256, 64, 2},
    {"cartpole critic head (64 -> 1)", FORWARD, 256, 64, 1},
    /* the heads' forwards read each input once: 256 rows of 64 (64 KiB) pass through L2 on a
     * core whose L1 holds 32-48 KiB; 128 rows (32 KiB) stay in L1 between rounds, the kernel's
     * rate with its input at hand */
    {"actor head, input in L1 (128, 64 -> 2)", FORWARD, 128, 64, 2},
    {"critic head, input in L1 (128, 64 -> 1)", FORWARD, 128, 64, 1},
    {"cartpole layer 1 (64 -> 64)", DINPUT, 256, 64, 64},
    {"cartpole actor head (64 -> 2)", DINPUT, 256, 64, 2},
    {"cartpole critic head (64 -> 1)", DINPUT, 256, 64, 1},
    {"cartpole layer 0 (4 -> 64)", DWEIGHT, 256, 4, 64},
    {"cartpole layer 1 (64 -> 64)", DWEIGHT, 256, 64, 64},
    {"cartpole actor head (64 -> 2)", DWEIGHT, 256, 64, 2},
    {"cartpole critic head (64 -> 1)", DWEIGHT, 256, 64, 1},
    {"one thread: layer 1 (64 -> 64)", FORWARD, 512, 64, 64},
    {"lstm input gates (T*B 256, 4 -> 256)", FORWARD, 256, 4, 256},
    {"lstm hidden gates, one step (16, 64 -> 256)", FORWARD, 16, 64, 256},
    {"lstm hidden gates, one step (16, 64 -> 256)", FORWARD_T, 16, 64, 256},
    {"lstm hidden gates, one step (16, 64 -> 256)", DINPUT, 16, 64, 256},
    {"lstm hidden gates (T*B 256, 64 -> 256)", DWEIGHT, 256, 64, 256},
    {"lstm input gates (T*B 256, 4 -> 256)", DWEIGHT, 256, 4, 256},
    /* configs/cartpole_lstm.ini's core reads its 64-wide encoder, not the 4 observations */
    {"lstm preset input gates (T*B 256, 64 -> 256)", FORWARD, 256, 64, 256},
    {"lstm preset input gates (T*B 256, 64 -> 256)", DINPUT, 256, 64, 256},
    /* its rollout's step: 16 envs on 2 threads, the input and the recurrent gates from W^T */
    {"lstm rollout step (8, 64 -> 256)", FORWARD_T, 8, 64, 256},
    {"256 wide (256 -> 256)", FORWARD, 256, 256, 256},
    {"256 wide (256 -> 256)", DWEIGHT, 256, 256, 256},
    {"minatar dense (1024 -> 64)", FORWARD, 256, 1024, 64},
    {"minatar dense (1024 -> 64)", DINPUT, 256, 1024, 64},
    {"minatar dense (1024 -> 64)", DWEIGHT, 256, 1024, 64},
};

enum { CAND_OPENBLAS, CAND_AVX512, CAND_AVX2, CAND_LIBXSMM, NUM_CANDIDATES };
static const char *const candidate_names[] = {"openblas", "skinner_avx512", "skinner_avx2",
                                              "libxsmm"};

/* The kernels of a candidate's level, or NULL when the CPU lacks it. */
static const sk_nn_kernels *candidate_kernels(int candidate) {
    sk_isa_level level = candidate == CAND_AVX512 ? SK_ISA_AVX512 : SK_ISA_AVX2;
    return level <= sk_isa_level_detected() ? sk_nn_kernels_at(level) : NULL;
}

typedef struct buffers {
    float *inp, *w, *wt, *b, *out, *dout, *dinp, *dw;
} buffers;

static void openblas_call(const shape *s, buffers *m) {
    int B = s->B, C = s->C, OC = s->OC;
    if (s->pass == FORWARD) {
        for (int r = 0; r < B; r++) memcpy(m->out + (size_t)r * OC, m->b, (size_t)OC * sizeof(float));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, OC, C, 1.0f, m->inp, C, m->w, C,
                    1.0f, m->out, OC);
    } else if (s->pass == FORWARD_T) {
        for (int r = 0; r < B; r++) memcpy(m->out + (size_t)r * OC, m->b, (size_t)OC * sizeof(float));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, OC, C, 1.0f, m->inp, C, m->wt,
                    OC, 1.0f, m->out, OC);
    } else if (s->pass == DINPUT) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, C, OC, 1.0f, m->dout, OC, m->w,
                    C, 1.0f, m->dinp, C);
    } else {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, B, 1.0f, m->dout, OC, m->inp,
                    C, 1.0f, m->dw, C);
    }
}

static int small_call(const sk_nn_kernels *k, const shape *s, buffers *m) {
    if (!k) return 0;
    if (s->pass == FORWARD)
        return k->gemm_forward(m->out, m->inp, m->w, NULL, m->b, s->B, s->C, s->OC);
    if (s->pass == FORWARD_T)
        return k->gemm_forward_t(m->out, m->inp, m->wt, m->b, s->B, s->C, s->OC);
    if (s->pass == DINPUT) return k->gemm_dinput(m->dinp, m->dout, m->w, s->B, s->C, s->OC);
    return k->gemm_dweight(m->dw, m->dout, m->inp, s->B, s->C, s->OC);
}

#ifdef SKINNER_LIBXSMM
/* libxsmm is column-major: a row-major (R, K) array is its (K, R). out^T = W inp^T needs W
 * transposed (as the AVX-512 forward does, timed here too); dW = inp^T dout needs dout
 * transposed, which libxsmm's flag does (where its JIT supports it). */
static libxsmm_smmfunction xsmm_kernel(const shape *s) {
    int B = s->B, C = s->C, OC = s->OC;
    float alpha = 1.0f, beta = 1.0f;
    int flags = LIBXSMM_GEMM_FLAG_NONE;
    libxsmm_blasint lda, ldb, ldc;
    if (s->pass == FORWARD || s->pass == FORWARD_T) {
        lda = OC, ldb = C, ldc = OC;
        return libxsmm_smmdispatch(OC, B, C, &lda, &ldb, &ldc, &alpha, &beta, &flags, NULL);
    }
    if (s->pass == DINPUT) {
        lda = C, ldb = OC, ldc = C;
        return libxsmm_smmdispatch(C, B, OC, &lda, &ldb, &ldc, &alpha, &beta, &flags, NULL);
    }
    flags = LIBXSMM_GEMM_FLAG_TRANS_B;
    lda = C, ldb = OC, ldc = C;
    return libxsmm_smmdispatch(C, OC, B, &lda, &ldb, &ldc, &alpha, &beta, &flags, NULL);
}

static int xsmm_call(const shape *s, libxsmm_smmfunction kernel, buffers *m) {
    if (!kernel) return 0;
    int B = s->B, C = s->C, OC = s->OC;
    if (s->pass == FORWARD || s->pass == FORWARD_T) {
        if (s->pass == FORWARD) sk_gemm_small_transpose(m->wt, m->w, OC, C);
        for (int r = 0; r < B; r++) memcpy(m->out + (size_t)r * OC, m->b, (size_t)OC * sizeof(float));
        kernel(m->wt, m->inp, m->out);
    } else if (s->pass == DINPUT) {
        kernel(m->w, m->dout, m->dinp);
    } else {
        kernel(m->inp, m->dout, m->dw);
    }
    return 1;
}
#endif

/* The core's FMA peak at each vector width the CPU has (bench/fma_peak.h) */
static void print_peaks(int rounds) {
    sk_isa_level detected = sk_isa_level_detected();
    for (int level = SK_ISA_AVX2; level <= (int)detected; level++)
        printf("{\"peak\": \"%s\", \"gflops\": %.1f}\n", sk_isa_level_name((sk_isa_level)level),
               fma_peak_gflops((sk_isa_level)level, rounds));
}

/* What storing an output of `bytes` costs, the bound of the narrow shapes whose output leaves L1:
 * GB/s of 64-byte stores over rows of row_bytes, all rows' first 64 bytes, then their next
 * (a kernel's column blocks; row_bytes 64: the buffer in order). Best of 25 runs. */
static double store_gbps(size_t bytes, size_t row_bytes) {
    unsigned char *buf = aligned_alloc(64, bytes);
    double best = 1e30;
    for (int run = 0; run < 25; run++) {
        double start = now();
        for (int rep = 0; rep < 100; rep++)
            for (size_t block = 0; block < row_bytes; block += 64)
                for (size_t row = 0; row < bytes; row += row_bytes)
                    memset(buf + row + block, rep, 64);
        double t = (now() - start) / 100;
        if (t < best) best = t;
    }
    free(buf);
    return (double)bytes / best / 1e9;
}

static void print_store_bandwidth(void) {
    static const size_t cases[][2] = {{65536, 64}, {65536, 256}, {262144, 64}, {262144, 1024}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        printf("{\"store_bytes\": %zu, \"row_bytes\": %zu, \"gbps\": %.1f}\n", cases[i][0],
               cases[i][1], store_gbps(cases[i][0], cases[i][1]));
}

static int compare_floats(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static float *filled(size_t n, unsigned seed) {
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = (float)((i * 2654435761u + seed) % 1000) / 1000.0f - 0.5f;
    return x;
}

static void run_shape(const shape *s, int rounds) {
    size_t B = (size_t)s->B, C = (size_t)s->C, OC = (size_t)s->OC;
    buffers m = {filled(B * C, 1), filled(OC * C, 2), filled(OC * C, 3), filled(OC, 4),
                 filled(B * OC, 5), filled(B * OC, 6), filled(B * C, 7), filled(OC * C, 8)};
    double flops = 2.0 * (double)B * (double)C * (double)OC;
    /* enough calls per timing that each lasts ~1 ms */
    int calls = (int)(2e6 / flops) + 1;
    double *times[NUM_CANDIDATES];
    int ok[NUM_CANDIDATES] = {1, 0, 0, 0};
#ifdef SKINNER_LIBXSMM
    libxsmm_smmfunction kernel = xsmm_kernel(s);
    ok[CAND_LIBXSMM] = kernel != NULL;
#endif
    ok[CAND_AVX512] = small_call(candidate_kernels(CAND_AVX512), s, &m);
    ok[CAND_AVX2] = small_call(candidate_kernels(CAND_AVX2), s, &m);
    for (int c = 0; c < NUM_CANDIDATES; c++) times[c] = calloc((size_t)rounds, sizeof(double));
    for (int round = 0; round < rounds; round++) {
        for (int c = 0; c < NUM_CANDIDATES; c++) {
            if (!ok[c]) continue;
            double start = now();
            for (int call = 0; call < calls; call++) {
                if (c == CAND_OPENBLAS) openblas_call(s, &m);
                else if (c == CAND_AVX512 || c == CAND_AVX2) small_call(candidate_kernels(c), s, &m);
#ifdef SKINNER_LIBXSMM
                else xsmm_call(s, kernel, &m);
#endif
            }
            times[c][round] = (now() - start) / calls;
            /* the accumulating passes grow their outputs: keep them bounded */
            memset(m.dinp, 0, B * C * sizeof(float));
            memset(m.dw, 0, OC * C * sizeof(float));
        }
    }
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    for (int c = 0; c < NUM_CANDIDATES; c++) {
        if (!ok[c]) {
            printf("{\"shape\": \"%s\", \"pass\": \"%s\", \"candidate\": \"%s\", \"available\": false}\n",
                   s->what, pass_names[s->pass], candidate_names[c]);
            continue;
        }
        qsort(times[c], (size_t)rounds, sizeof(double), compare_floats);
        double median = times[c][rounds / 2];
        printf("{\"shape\": \"%s\", \"pass\": \"%s\", \"B\": %d, \"C\": %d, \"OC\": %d, "
               "\"candidate\": \"%s\", \"openblas_coretype\": \"%s\", \"us\": %.2f, \"gflops\": %.1f}\n",
               s->what, pass_names[s->pass], s->B, s->C, s->OC, candidate_names[c],
               coretype ? coretype : "", median * 1e6, flops / median / 1e9);
        free(times[c]);
    }
    fflush(stdout);
    free(m.inp), free(m.w), free(m.wt), free(m.b), free(m.out), free(m.dout), free(m.dinp), free(m.dw);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    if (rounds < 1) rounds = 1;
    openblas_set_num_threads(1);
#ifdef SKINNER_LIBXSMM
    libxsmm_init();
#endif
    /* the peaks before and after the shapes, each the best of 25 runs of ~10 ms: on a shared
     * machine a run that lost the core reads low, never high (readers take the larger) */
    print_peaks(25);
    print_store_bandwidth();
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) run_shape(&shapes[i], rounds);
    print_peaks(25);
    return 0;
}
