#include "isa.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

static const char *const g_level_names[SK_ISA_LEVELS] = {"baseline", "avx2", "avx512"};

const char *sk_isa_level_name(sk_isa_level level) {
    return level >= 0 && level < SK_ISA_LEVELS ? g_level_names[level] : "?";
}

#if defined(__x86_64__)
/* CPUID leaf 1 ECX, leaf 7 EBX, leaf 0x80000001 ECX bits (Intel SDM vol. 2A, CPUID) */
enum {
    L1_FMA = 1u << 12, L1_MOVBE = 1u << 22, L1_OSXSAVE = 1u << 27, L1_AVX = 1u << 28,
    L1_F16C = 1u << 29,
    L7_BMI1 = 1u << 3, L7_AVX2 = 1u << 5, L7_BMI2 = 1u << 8, L7_AVX512F = 1u << 16,
    L7_AVX512DQ = 1u << 17, L7_AVX512CD = 1u << 28, L7_AVX512BW = 1u << 30,
    L7_AVX512VL = 1u << 31,
    L7C_AVX512VBMI = 1u << 1, /* leaf 7 ECX */
    LX_LZCNT = 1u << 5,
    /* XCR0: the OS saves SSE and AVX state (bits 1, 2), and the AVX-512 opmask and zmm state
     * (bits 5, 6, 7); without them the instructions fault even where CPUID lists them */
    XCR0_YMM = 0x6u, XCR0_ZMM = 0xE6u,
};

static unsigned read_xcr0(void) {
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return eax;
}

static bool all(unsigned bits, unsigned wanted) { return (bits & wanted) == wanted; }

static bool g_vbmi; /* the CPU has AVX-512 VBMI, with AVX-512 usable (detect sets it) */

static sk_isa_level detect(void) {
    unsigned eax, ebx, ecx1, edx, ecx7 = 0, ebx7 = 0, ecxx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx1, &edx)) return SK_ISA_BASELINE;
    if (!all(ecx1, L1_OSXSAVE | L1_AVX)) return SK_ISA_BASELINE;
    unsigned xcr0 = read_xcr0();
    if (__get_cpuid_max(0, NULL) >= 7) __cpuid_count(7, 0, eax, ebx7, ecx7, edx);
    if (__get_cpuid_max(0x80000000u, NULL) >= 0x80000001u)
        __cpuid(0x80000001u, eax, ebx, ecxx, edx);
    bool v3 = all(xcr0, XCR0_YMM) && all(ecx1, L1_FMA | L1_MOVBE | L1_F16C) &&
              all(ebx7, L7_BMI1 | L7_AVX2 | L7_BMI2) && all(ecxx, LX_LZCNT);
    if (!v3) return SK_ISA_BASELINE;
    bool v4 = all(xcr0, XCR0_ZMM) &&
              all(ebx7, L7_AVX512F | L7_AVX512DQ | L7_AVX512CD | L7_AVX512BW | L7_AVX512VL);
    g_vbmi = v4 && all(ecx7, L7C_AVX512VBMI);
    return v4 ? SK_ISA_AVX512 : SK_ISA_AVX2;
}
#else
/* other architectures run the portable C (aarch64: docs/install.md) */
static bool g_vbmi;
static sk_isa_level detect(void) { return SK_ISA_BASELINE; }
#endif

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static sk_isa_level g_detected, g_used;
static char g_refusal[256]; /* why SKINNER_ISA was not followed, or empty */

/* OpenBLAS's core types (OPENBLAS_CORETYPE, matched as its DYNAMIC_ARCH build matches them:
 * whole name, any case) whose sgemm kernels need more than x86-64-v2. OpenBLAS follows the pin
 * without asking the CPU, and its first GEMM then dies of an illegal instruction (seen under
 * qemu's Nehalem with Haswell pinned). The AVX-only and AMD FMA4 core types are not listed:
 * skinner's levels cannot tell whether a baseline CPU has AVX. */
static const struct {
    const char *name;
    sk_isa_level needs;
} g_blas_cores[] = {
    {"haswell", SK_ISA_AVX2},       {"zen", SK_ISA_AVX2},           {"skylakex", SK_ISA_AVX512},
    {"cooperlake", SK_ISA_AVX512},  {"sapphirerapids", SK_ISA_AVX512},
};

static char g_blas_refusal[320]; /* why OPENBLAS_CORETYPE cannot run here, or empty */

static void check_blas_core(void) {
    const char *core = getenv("OPENBLAS_CORETYPE");
    if (!core || !*core) return;
    for (size_t i = 0; i < sizeof g_blas_cores / sizeof g_blas_cores[0]; i++) {
        if (strcasecmp(core, g_blas_cores[i].name) != 0 || g_blas_cores[i].needs <= g_detected)
            continue;
        snprintf(g_blas_refusal, sizeof g_blas_refusal,
                 "OPENBLAS_CORETYPE=%.40s pins OpenBLAS to kernels that need %s, which this CPU "
                 "(%s) lacks: its first matrix product would die of an illegal instruction. "
                 "Unset OPENBLAS_CORETYPE (OpenBLAS then picks this CPU's own kernels)",
                 core, sk_isa_level_name(g_blas_cores[i].needs), sk_cpu_model());
        return;
    }
}

static void choose(void) {
    g_detected = detect();
    g_used = g_detected;
    check_blas_core();
    const char *forced = getenv("SKINNER_ISA");
    if (!forced || !*forced) return;
    for (int level = 0; level < SK_ISA_LEVELS; level++) {
        if (strcmp(forced, g_level_names[level]) != 0) continue;
        if ((sk_isa_level)level <= g_detected) {
            g_used = (sk_isa_level)level;
        } else {
            snprintf(g_refusal, sizeof g_refusal,
                     "SKINNER_ISA=%s: this CPU (%s) lacks %s; it runs baseline%s%s", forced,
                     sk_cpu_model(), forced, g_detected >= SK_ISA_AVX2 ? ", avx2" : "",
                     g_detected >= SK_ISA_AVX512 ? ", avx512" : "");
        }
        return;
    }
    snprintf(g_refusal, sizeof g_refusal,
             "SKINNER_ISA=%.60s is not a level (expected baseline, avx2 or avx512)", forced);
}

sk_isa_level sk_isa_level_used(void) {
    pthread_once(&g_once, choose);
    return g_used;
}

bool sk_isa_has_avx512vbmi(void) {
    pthread_once(&g_once, choose);
    return g_vbmi;
}

sk_isa_level sk_isa_level_detected(void) {
    pthread_once(&g_once, choose);
    return g_detected;
}

sk_status sk_isa_check(void) {
    pthread_once(&g_once, choose);
    if (g_refusal[0]) return sk_fail(SK_ERR_CONFIG, "%s", g_refusal);
    if (g_blas_refusal[0]) return sk_fail(SK_ERR_CONFIG, "%s", g_blas_refusal);
    return SK_OK;
}

static void trim_into(char *out, size_t size, const char *text) {
    while (isspace((unsigned char)*text)) text++;
    snprintf(out, size, "%s", text);
    size_t n = strlen(out);
    while (n > 0 && isspace((unsigned char)out[n - 1])) out[--n] = '\0';
    /* runs of spaces (Intel pads its brand strings) to one */
    char *write = out;
    for (const char *read = out; *read; read++)
        if (!(*read == ' ' && write > out && write[-1] == ' ')) *write++ = *read;
    *write = '\0';
}

static pthread_once_t g_model_once = PTHREAD_ONCE_INIT;
static char g_model[64];

static void read_model(void) {
#if defined(__x86_64__)
    unsigned words[12] = {0};
    if (__get_cpuid_max(0x80000000u, NULL) >= 0x80000004u) {
        for (unsigned leaf = 0; leaf < 3; leaf++)
            __cpuid(0x80000002u + leaf, words[4 * leaf], words[4 * leaf + 1],
                    words[4 * leaf + 2], words[4 * leaf + 3]);
        char brand[49] = {0};
        memcpy(brand, words, 48);
        trim_into(g_model, sizeof g_model, brand);
        if (g_model[0]) return;
    }
#endif
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        /* x86's "model name", some arm64 kernels' "Processor" / "CPU part" lines */
        if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Processor", 9) != 0) continue;
        const char *colon = strchr(line, ':');
        if (colon) trim_into(g_model, sizeof g_model, colon + 1);
        break;
    }
    if (f) fclose(f);
    if (g_model[0]) return;
#if defined(__aarch64__)
    snprintf(g_model, sizeof g_model, "an aarch64 CPU");
#elif defined(__x86_64__)
    snprintf(g_model, sizeof g_model, "an x86-64 CPU");
#else
    snprintf(g_model, sizeof g_model, "an unknown CPU");
#endif
}

const char *sk_cpu_model(void) {
    pthread_once(&g_model_once, read_model);
    return g_model;
}

void sk_isa_describe(char *out, size_t size) {
    sk_isa_level used = sk_isa_level_used(), detected = sk_isa_level_detected();
    if (used == detected)
        snprintf(out, size, "%s on %s", sk_isa_level_name(used), sk_cpu_model());
    else
        snprintf(out, size, "%s (forced by SKINNER_ISA; the CPU has %s) on %s",
                 sk_isa_level_name(used), sk_isa_level_name(detected), sk_cpu_model());
}
