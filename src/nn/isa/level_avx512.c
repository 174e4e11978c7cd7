/* The hot kernels at one ISA level: the AVX-512 build (x86-64-v4): 16-lane GEMM kernels, tanh and Adam by hand.
 * CMakeLists.txt compiles this file with the level's -march; src/nn/kernels.c picks the table. */
#define SK_ISA_SUFFIX avx512
#define SK_ISA_LEVEL SK_ISA_AVX512

#include "../kernels.h"
#include "../nn.h"

#include "gemm.c"
#include "layers.c"
#include "cells.c"
#include "softmax2.c"
#include "squash.c"
#include "table.c"
