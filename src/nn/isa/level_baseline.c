/* The hot kernels at one ISA level: the baseline build (x86-64-v2 on x86-64, the portable C elsewhere): no GEMM kernels, the loops vectorised for SSE4.2.
 * CMakeLists.txt compiles this file with the level's -march; src/nn/kernels.c picks the table. */
#define SK_ISA_SUFFIX baseline
#define SK_ISA_LEVEL SK_ISA_BASELINE

#include "../kernels.h"
#include "../nn.h"

#include "gemm.c"
#include "layers.c"
#include "cells.c"
#include "softmax2.c"
#include "squash.c"
#include "table.c"
