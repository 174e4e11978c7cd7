/* bfloat16 rounding, shared by conv.c (sk_bf16_round, sk_f32_to_bf16) and
 * the oneDNN backend, which calls nothing of libskinner's (conv_backend.h):
 * its native bf16 path converts to these bits, its emulated path keeps the
 * same values in floats (sk_bf16_value), so both round alike. */
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

/* The float whose bits are sk_bf16_bits(x) followed by 16 zeros: x rounded to
 * bf16 and held exactly in f32 (a product of two such values is exact in f32). */
static inline float sk_bf16_value(float x) {
    uint32_t u = (uint32_t)sk_bf16_bits(x) << 16;
    float out;
    memcpy(&out, &u, sizeof out);
    return out;
}

static inline void sk_bf16_round_floats(float *restrict out, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = sk_bf16_value(x[i]);
}

#endif
