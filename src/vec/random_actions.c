/* Which level's random actions a caller uses (random_actions.h). */
#include "random_actions.h"

const sk_random_actions *sk_random_actions_at(sk_isa_level level) {
    switch (level) {
    case SK_ISA_BASELINE: return &sk_random_actions_baseline;
#if defined(__x86_64__)
    case SK_ISA_AVX2: return &sk_random_actions_avx2;
    case SK_ISA_AVX512: return &sk_random_actions_avx512;
#endif
    default: return NULL;
    }
}

const sk_random_actions *sk_random_actions_used(void) {
    const sk_random_actions *used = sk_random_actions_at(sk_isa_level_used());
    return used ? used : &sk_random_actions_baseline;
}
