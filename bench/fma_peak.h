/*
 * The core's FMA peak at a vector width, measured, for the benchmarks that report a fraction of
 * it (bench/learner_gemm.c, bench/sac_update.c): 12 independent chains of fused multiply-adds
 * (more than latency x throughput on the cores we know: 4 cycles x 2 pipes), each step
 * 2 x LANES flops. Their figures are then fractions of what this core does, not of a
 * datasheet's clock. One thread: a machine's peak is this times its cores.
 */
#ifndef SK_BENCH_FMA_PEAK_H
#define SK_BENCH_FMA_PEAK_H

#include "core/isa.h"

#include <stdio.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#if defined(__x86_64__)
#include <immintrin.h>
enum { PEAK_CHAINS = 12, PEAK_STEPS = 1 << 22 };
__attribute__((target("avx2,fma"))) static double peak_avx2(void) {
    __m256 acc[PEAK_CHAINS], mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-7f);
    for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = _mm256_set1_ps((float)c);
    double start = now();
    for (int step = 0; step < PEAK_STEPS; step++)
        for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = _mm256_fmadd_ps(acc[c], mul, add);
    double elapsed = now() - start;
    float sink = 0.0f;
    for (int c = 0; c < PEAK_CHAINS; c++) sink += _mm256_cvtss_f32(acc[c]);
    if (sink == 42.0f) puts("");
    return 2.0 * 8 * PEAK_CHAINS * (double)PEAK_STEPS / elapsed / 1e9;
}
__attribute__((target("avx512f"))) static double peak_avx512(void) {
    __m512 acc[PEAK_CHAINS], mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-7f);
    for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = _mm512_set1_ps((float)c);
    double start = now();
    for (int step = 0; step < PEAK_STEPS; step++)
        for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = _mm512_fmadd_ps(acc[c], mul, add);
    double elapsed = now() - start;
    float sink = 0.0f;
    for (int c = 0; c < PEAK_CHAINS; c++) sink += _mm512_cvtss_f32(acc[c]);
    if (sink == 42.0f) puts("");
    return 2.0 * 16 * PEAK_CHAINS * (double)PEAK_STEPS / elapsed / 1e9;
}
#endif

/* The best of `rounds` runs of ~10 ms at a level (AVX2 or AVX-512; 0 for another level or
 * off x86-64): on a shared machine a run that lost the core reads low, never high. The caller
 * checks that the CPU has the level (sk_isa_level_detected). */
static inline double fma_peak_gflops(sk_isa_level level, int rounds) {
    double best = 0.0;
#if defined(__x86_64__)
    for (int round = 0; round < rounds; round++) {
        double rate = level == SK_ISA_AVX2 ? peak_avx2() : level == SK_ISA_AVX512 ? peak_avx512() : 0.0;
        best = rate > best ? rate : best;
    }
#else
    (void)level, (void)rounds;
#endif
    return best;
}

#endif
