/* `skinner bench env`'s random actions at one ISA level: the baseline build (x86-64-v2 on
 * x86-64, the portable C elsewhere).
 * CMakeLists.txt compiles this file with the level's -march and -ffp-contract=off;
 * src/vec/random_actions.c picks the level in use. */
#define SK_ISA_SUFFIX baseline

#include "random_actions.c"
