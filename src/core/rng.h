/*
 * Random numbers: splitmix64 (Steele, Lea, Flood 2014). One 64-bit word of
 * state, passes BigCrush, and any (seed, stream) pair gives an independent
 * start by hashing, which is what per-env and per-worker streams need.
 */
#ifndef SK_RNG_H
#define SK_RNG_H

#include <math.h>
#include <stdint.h>

/* splitmix64 and its helpers (sk_rng_normal too) are public, in skinner/env.h:
 * env authors need them. */
#include "skinner/env.h"

/* The state after n draws of sk_rng_next: splitmix64's state moves by one constant a draw,
 * so a stream can pass over the draws of rows it does not sample. */
static inline void sk_rng_skip(uint64_t *state, uint64_t n) { *state += n * SK_GOLDEN_GAMMA; }

#endif
