/* `skinner bench env`'s random actions at one ISA level: the AVX-512 build (x86-64-v4): the hash loops 16 lanes wide.
 * CMakeLists.txt compiles this file with the level's -march and -ffp-contract=off;
 * src/vec/random_actions.c picks the level in use. */
#define SK_ISA_SUFFIX avx512

#include "random_actions.c"
