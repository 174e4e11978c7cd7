/*
 * Uniformly random actions for a slice of an env batch, as `skinner bench env` writes them before
 * each step: once per ISA level (src/vec/isa/level_*.c), since at a billion CartPole steps per
 * second writing the actions costs as much as the step, and compiled at x86-64-v2 it ran at half
 * the speed of a -march=native build (issue 48). Every level writes the same bits from the same
 * key: tests/test_random_actions.c checks so.
 */
#ifndef SK_RANDOM_ACTIONS_H
#define SK_RANDOM_ACTIONS_H

#include "skinner/env.h"
#include "skinner/module.h"

#include <stdint.h>

typedef struct sk_random_actions {
    /* actions[i * num_heads + h] for rows lo..hi-1: each head uniform over its size (< 2^16), from
     * a 32-bit hash of key and the action's index (counter-based, so the loop runs on every
     * lane). */
    void (*discrete)(int32_t *actions, const sk_action_space *space, int lo, int hi, uint32_t key);
    /* out[i * dim + d] for rows lo..hi-1: uniform within [low[d], high[d]), 24 random bits each
     * from the same hash. */
    void (*continuous)(float *out, const sk_action_space *space, int lo, int hi, uint32_t key);
    /* actions[i * num_heads + h] for rows lo..hi-1: uniform among the choices masks allows
     * (mask_size bytes per row; heads after 0 in the block of head 0's choice), drawn in order
     * from the sequential stream *rng; 0 when a head allows none. */
    void (*masked)(int32_t *actions, const sk_action_space *space, const uint8_t *masks,
                   int mask_size, int lo, int hi, uint64_t *rng);
} sk_random_actions;

/* The functions compiled for level, or NULL for a level this build lacks (the AVX levels off
 * x86-64). */
const sk_random_actions *sk_random_actions_at(sk_isa_level level);

/* The functions of the level in use (sk_isa_level_used). */
const sk_random_actions *sk_random_actions_used(void);

extern const sk_random_actions sk_random_actions_baseline;
#if defined(__x86_64__)
extern const sk_random_actions sk_random_actions_avx2;
extern const sk_random_actions sk_random_actions_avx512;
#endif

#endif
