/* The envs' vector steps at one ISA level: the AVX-512 build (x86-64-v4): the hand-written
 * 16-lane float32 CartPole kernel, the loops 8 doubles wide.
 * CMakeLists.txt compiles this file with the level's -march and -ffp-contract=off; each env state
 * calls its level's step, picked at create. */
#define SK_ISA_SUFFIX avx512

#include "cartpole_step.c"
#include "mountaincar_step.c"
