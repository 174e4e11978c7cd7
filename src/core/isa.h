/*
 * Which of the hot code's builds runs on this CPU: its ISA level, chosen once per process.
 *
 * skinner ships one binary for every x86-64 CPU since 2009 (x86-64-v2: SSE4.2, POPCNT). The
 * hot code (src/nn/isa/: the learner's small GEMMs, tanh, Adam; src/envs/isa/: the envs' vector
 * steps; src/vec/isa/: `skinner bench env`'s random actions; a module's own, such as MinAtar's
 * frame packing) is compiled once per level into its own objects, and the level picked here
 * from CPUID selects which functions the callers use (a table per level, src/nn/kernels.h; a step
 * per env state, picked at create), the way OpenBLAS's DYNAMIC_ARCH and ggml's CPU variants do.
 * docs/architecture.md says why objects per level rather than target attributes.
 *
 *   baseline  x86-64-v2, or the portable C of any other architecture (aarch64)
 *   avx2      x86-64-v3: AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE, with the OS saving ymm state
 *   avx512    x86-64-v4: AVX-512 F, BW, CD, DQ, VL, with the OS saving zmm state
 *
 * SKINNER_ISA=baseline|avx2|avx512 in the environment forces a level the CPU has (so one
 * machine tests every level it can run); one the CPU lacks, or an unknown name, is refused by
 * sk_isa_check and the level detected is used meanwhile.
 */
#ifndef SK_ISA_H
#define SK_ISA_H

#include "core.h"

#include "skinner/module.h"

/* sk_isa_level, sk_isa_level_used, sk_isa_has_avx512vbmi and sk_isa_check are public, for
 * modules and hosts: skinner/module.h. */

/* The highest level the CPU (and the OS's saved register state) supports. */
sk_isa_level sk_isa_level_detected(void);

/* "baseline", "avx2", "avx512". */
const char *sk_isa_level_name(sk_isa_level level);

/* The CPU's model name (CPUID's brand string, else /proc/cpuinfo's, else the architecture),
 * trimmed; a static string. */
const char *sk_cpu_model(void);

/* A line for --version and the run's machine record: "avx512 (detected avx512) on AMD EPYC". */
void sk_isa_describe(char *out, size_t size);

#endif
