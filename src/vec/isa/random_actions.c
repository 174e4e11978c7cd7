/*
 * Random actions at one ISA level: #included by src/vec/isa/level_*.c, each compiled with its
 * level's -march and -ffp-contract=off (CMakeLists.txt), so the hash loops vectorise at the
 * level's width and the continuous actions round as at every other level (no fused low + span *
 * u). src/vec/random_actions.c picks a level's table.
 */
#include "../random_actions.h"

#define SK_ISA_CAT2(a, b) a##b
#define SK_ISA_CAT(a, b) SK_ISA_CAT2(a, b)
#define SK_ISA_NAME(name) SK_ISA_CAT(name, SK_ISA_SUFFIX)

/* Chris Wellons' lowbias32 (hash-prospector): a 32-bit bijection whose output bits each
 * depend on every input bit with a bias of 1.7e-4. */
static inline uint32_t mix32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* 16 random bits per action (sizes are < 2^16); one head gets a contiguous loop, since GCC
 * scatters the stores of the strided one lane by lane. At ~1e9 env steps/s a 64-bit hash here
 * took a quarter of the time. */
static void SK_ISA_NAME(discrete_)(int32_t *restrict actions, const sk_action_space *space,
                                   int lo, int hi, uint32_t key) {
    int num_heads = space->num_heads;
    if (num_heads == 1) {
        uint32_t size = (uint32_t)space->head_sizes[0];
        for (int i = lo; i < hi; i++)
            actions[i] = (int32_t)(((mix32(key + (uint32_t)i) >> 16) * size) >> 16);
        return;
    }
    for (int h = 0; h < num_heads; h++) {
        uint32_t size = (uint32_t)space->head_sizes[h];
        for (int i = lo; i < hi; i++)
            actions[(size_t)i * (size_t)num_heads + (size_t)h] = (int32_t)(
                ((mix32(key + (uint32_t)(i * num_heads + h)) >> 16) * size) >> 16);
    }
}

/* A sequential stream per action made the bench measure the generator: a third of Pendulum's
 * time, and 5-9% lower after an unrelated change moved code. */
static void SK_ISA_NAME(continuous_)(float *restrict out, const sk_action_space *space, int lo,
                                     int hi, uint32_t key) {
    int dim = space->dim;
    for (int d = 0; d < dim; d++) {
        float low = space->low[d], span = space->high[d] - space->low[d];
        for (int i = lo; i < hi; i++) {
            uint32_t bits = mix32(key + (uint32_t)(i * dim + d)) >> 8;
            out[(size_t)i * (size_t)dim + (size_t)d] = low + span * ((float)bits * 0x1.0p-24f);
        }
    }
}

static void SK_ISA_NAME(masked_)(int32_t *restrict actions, const sk_action_space *space,
                                 const uint8_t *masks, int mask_size, int lo, int hi,
                                 uint64_t *rng) {
    int num_heads = space->num_heads;
    for (int i = lo; i < hi; i++) {
        const uint8_t *mask = masks + (size_t)i * (size_t)mask_size;
        int32_t *a = actions + (size_t)i * (size_t)num_heads;
        int at = 0;
        for (int h = 0; h < num_heads; h++) {
            int size = space->head_sizes[h];
            const uint8_t *m = mask + at;
            if (h > 0) m += (size_t)a[0] * (size_t)size; /* the block of head 0's choice */
            int allowed = 0;
            for (int j = 0; j < size; j++) allowed += m[j] != 0;
            int pick = allowed ? (int)sk_rng_below(rng, (uint32_t)allowed) : 0;
            a[h] = 0;
            for (int j = 0; j < size; j++)
                if (m[j] && pick-- == 0) {
                    a[h] = j;
                    break;
                }
            at += h == 0 ? size : space->head_sizes[0] * size;
        }
    }
}

const sk_random_actions SK_ISA_NAME(sk_random_actions_) = {
    .discrete = SK_ISA_NAME(discrete_),
    .continuous = SK_ISA_NAME(continuous_),
    .masked = SK_ISA_NAME(masked_),
};
