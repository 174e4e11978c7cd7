/* The envs' vector steps at one ISA level: the baseline build (x86-64-v2 on x86-64, the portable C
 * elsewhere): the loops vectorised for SSE4.2.
 * CMakeLists.txt compiles this file with the level's -march and -ffp-contract=off; each env state
 * calls its level's step, picked at create. */
#define SK_ISA_SUFFIX baseline

#include "cartpole_step.c"
#include "mountaincar_step.c"
