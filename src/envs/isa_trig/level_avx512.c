/* Acrobot's and Pendulum's vector steps at one ISA level: the AVX-512 build (x86-64-v4).
 * Apart from src/envs/isa/ because CMakeLists.txt compiles these with -fno-trapping-math too:
 * without it GCC will not if-convert their loops' conversions and compares at x86-64-v3, which
 * has no masked operations, and leaves them scalar; MountainCar's loop, in src/envs/isa/, ran
 * 10x slower with it. No floating-point flag is read, and tests/gym_levels.c holds every level
 * to the baseline's bits. */
#define SK_ISA_SUFFIX avx512

#include "../isa/acrobot_step.c"
#include "../isa/pendulum_step.c"
