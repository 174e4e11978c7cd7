/* bfloat16 rounding, shared by conv.c (sk_bf16_round, sk_f32_to_bf16) and
 * the oneDNN backend, which calls nothing of libskinner's (conv_backend.h). */
#ifndef SK_NN_BF16_H
#define SK_NN_BF16_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Nearest, ties to even; inf stays inf and NaN stays a (quiet) NaN. */
static inline uint16_t sk_bf16_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return (uint16_t)((u >> 16) | ((u & 0xffffu) ? 0x40u : 0u));
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline void sk_bf16_convert(uint16_t *restrict out, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = sk_bf16_bits(x[i]);
}

#endif
