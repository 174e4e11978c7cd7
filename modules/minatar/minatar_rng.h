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

/* The next 32-bit output (genrand_int32). */
static inline uint32_t minatar_rng_u32(minatar_rng *rng) {
    const uint32_t upper = 0x80000000u, lower = 0x7fffffffu, matrix = 0x9908b0dfu;
    if (rng->position >= MINATAR_MT_WORDS) {
        uint32_t *w = rng->words;
        for (int k = 0; k < MINATAR_MT_WORDS; k++) {
            uint32_t y = (w[k] & upper) | (w[(k + 1) % MINATAR_MT_WORDS] & lower);
            w[k] = w[(k + MINATAR_MT_SHIFT) % MINATAR_MT_WORDS] ^ (y >> 1) ^ ((y & 1u) ? matrix : 0u);
        }
        rng->position = 0;
    }
    uint32_t y = rng->words[rng->position++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* rand(): a double in [0, 1) from two outputs (53 bits). */
static inline double minatar_rng_rand(minatar_rng *rng) {
    uint32_t high = minatar_rng_u32(rng) >> 5, low = minatar_rng_u32(rng) >> 6;
    return ((double)high * 67108864.0 + (double)low) / 9007199254740992.0;
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
