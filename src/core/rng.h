/*
 * Random numbers: splitmix64 (Steele, Lea, Flood 2014). One 64-bit word of
 * state, passes BigCrush, and any (seed, stream) pair gives an independent
 * start by hashing, which is what per-env and per-worker streams need.
 */
#ifndef SK_RNG_H
#define SK_RNG_H

#include <math.h>
#include <stdint.h>

/* splitmix64 and its helpers are public, in skinner/env.h (env authors need
 * them); what only skinner itself uses is here. */
#include "skinner/env.h"

/* Standard normal by Box-Muller (one of the pair). */
static inline double sk_rng_normal(uint64_t *state) {
    double u1 = 1.0 - sk_rng_double(state); /* (0, 1] so log is finite */
    double u2 = sk_rng_double(state);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
