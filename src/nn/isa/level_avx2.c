/* The hot kernels at one ISA level: the AVX2 + FMA build (x86-64-v3): 8-lane GEMM kernels.
 * CMakeLists.txt compiles this file with the level's -march; src/nn/kernels.c picks the table. */
#define SK_ISA_SUFFIX avx2
#define SK_ISA_LEVEL SK_ISA_AVX2

#include "../kernels.h"
#include "../nn.h"

#include "gemm.c"
#include "layers.c"
#include "cells.c"
#include "softmax2.c"
#include "squash.c"
#include "table.c"
