/*
 * The random stream of MinAtar's games: numpy's legacy RandomState, which is
 * Matsumoto and Nishimura's MT19937 (init_genrand seeding) with numpy's
 * formulas for rand() and randint() on top. MinAtar's sticky-action draw and
 * its games' draws share one stream, so a port that draws the same numbers in
 * the same order reproduces MinAtar's episodes bit for bit (the formulas are
 * restated in ../shared/reference/minatar/rules/00_common.md). The legacy
 * stream is frozen by numpy (NEP 19).
 *
 * Every env owns one stream: 624 words and a position, 2.5 KB per env.
 */
#ifndef SKINNER_MINATAR_RNG_H
#define SKINNER_MINATAR_RNG_H

#include <stdint.h>

#define MINATAR_MT_WORDS 624
#define MINATAR_MT_SHIFT 397 /* MT19937's middle word offset, m */

typedef struct minatar_rng {
    uint32_t words[MINATAR_MT_WORDS];
    int32_t position; /* the next word to temper; MINATAR_MT_WORDS: regenerate first */
} minatar_rng;

/* numpy.random.RandomState(seed): init_genrand, seed in [0, 2^32). */
static inline void minatar_rng_seed(minatar_rng *rng, uint32_t seed) {
    rng->words[0] = seed;
    for (uint32_t i = 1; i < MINATAR_MT_WORDS; i++) {
        uint32_t previous = rng->words[i - 1];
        rng->words[i] = 1812433253u * (previous ^ (previous >> 30)) + i;
    }
    rng->position = MINATAR_MT_WORDS;
}

/* One word of MT19937's twist: word k from words k, k + 1 and k + m. Branch-free, so the
 * loops below vectorise. */
static inline uint32_t minatar_rng_twist(uint32_t word, uint32_t next, uint32_t middle) {
    const uint32_t upper = 0x80000000u, lower = 0x7fffffffu, matrix = 0x9908b0dfu;
    uint32_t y = (word & upper) | (next & lower);
    return middle ^ (y >> 1) ^ ((0u - (next & 1u)) & matrix);
}

/* All 624 words anew (genrand_int32's refill), in three runs so that no index wraps: words
 * 0..226 read the old words 397.., words 227..622 the new words 0.., word 623 the new word 0. */
static inline void minatar_rng_regenerate(minatar_rng *rng) {
    enum { N = MINATAR_MT_WORDS, M = MINATAR_MT_SHIFT };
    uint32_t *w = rng->words;
    for (int k = 0; k < N - M; k++) w[k] = minatar_rng_twist(w[k], w[k + 1], w[k + M]);
    for (int k = N - M; k < N - 1; k++) w[k] = minatar_rng_twist(w[k], w[k + 1], w[k + M - N]);
    w[N - 1] = minatar_rng_twist(w[N - 1], w[0], w[M - 1]);
    rng->position = 0;
}

/* The next 32-bit output (genrand_int32). */
static inline uint32_t minatar_rng_u32(minatar_rng *rng) {
    if (rng->position >= MINATAR_MT_WORDS) minatar_rng_regenerate(rng);
    uint32_t y = rng->words[rng->position++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* rand()'s 53 bits as an integer k: rand() is k / 2^53 exactly. */
static inline uint64_t minatar_rng_bits53(minatar_rng *rng) {
    uint32_t high = minatar_rng_u32(rng) >> 5, low = minatar_rng_u32(rng) >> 6;
    return (uint64_t)high << 26 | low;
}

/* rand(): a double in [0, 1) from two outputs (53 bits). */
static inline double minatar_rng_rand(minatar_rng *rng) {
    return (double)minatar_rng_bits53(rng) / 9007199254740992.0;
}

/* The k of bits53 below which rand() < p: k / 2^53 < p exactly when k < ceil(p * 2^53) (the
 * product is exact: a power of two scales p). p in 0..1. */
static inline uint64_t minatar_rng_threshold53(double p) {
    double scaled = p * 9007199254740992.0;
    uint64_t threshold = (uint64_t)scaled;
    return threshold + ((double)threshold < scaled);
}

/* randint(low, high), high exclusive: masked rejection, one output per try,
 * no draw when high - low == 1. */
static inline int minatar_rng_randint(minatar_rng *rng, int low, int high) {
    uint32_t range = (uint32_t)(high - low - 1);
    if (range == 0) return low;
    uint32_t mask = range;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    uint32_t value;
    do value = minatar_rng_u32(rng) & mask;
    while (value > range);
    return low + (int)value;
}

#endif /* SKINNER_MINATAR_RNG_H */
