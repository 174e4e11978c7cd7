#include "kernels.h"

#include <stdatomic.h>

extern const sk_nn_kernels sk_nn_kernels_baseline;
#if defined(__x86_64__)
extern const sk_nn_kernels sk_nn_kernels_avx2, sk_nn_kernels_avx512;
#endif

const sk_nn_kernels *sk_nn_kernels_at(sk_isa_level level) {
    switch (level) {
    case SK_ISA_BASELINE: return &sk_nn_kernels_baseline;
#if defined(__x86_64__)
    case SK_ISA_AVX2: return &sk_nn_kernels_avx2;
    case SK_ISA_AVX512: return &sk_nn_kernels_avx512;
#endif
    default: return NULL;
    }
}

/* The table in use, set at the first call: every thread computes the same pointer, so the race
 * to store it is benign, and the atomic keeps it defined. */
static _Atomic(const sk_nn_kernels *) g_used;

const sk_nn_kernels *sk_nn_kernels_used(void) {
    const sk_nn_kernels *table = atomic_load_explicit(&g_used, memory_order_acquire);
    if (table) return table;
    table = sk_nn_kernels_at(sk_isa_level_used());
    if (!table) table = &sk_nn_kernels_baseline;
    atomic_store_explicit(&g_used, table, memory_order_release);
    return table;
}
