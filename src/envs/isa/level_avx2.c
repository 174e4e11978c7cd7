/* The envs' vector steps at one ISA level: the AVX2 build (x86-64-v3): the loops vectorised
 * 8 floats or 4 doubles wide.
 * CMakeLists.txt compiles this file with the level's -march and -ffp-contract=off; each env state
 * calls its level's step, picked at create. */
#define SK_ISA_SUFFIX avx2

#include "cartpole_step.c"
#include "mountaincar_step.c"
