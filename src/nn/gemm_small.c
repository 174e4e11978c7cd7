#include "gemm_small.h"

#include "kernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

static pthread_key_t g_scratch_key;
static pthread_once_t g_scratch_once = PTHREAD_ONCE_INIT;
static bool g_scratch_key_made;

static void scratch_free(void *buffers) {
    float **slots = buffers;
    for (int k = 0; k < SK_GEMM_SCRATCH_COUNT; k++) free(slots[k]);
    free(slots);
}

static void scratch_key_make(void) {
    g_scratch_key_made = pthread_key_create(&g_scratch_key, scratch_free) == 0;
}

float *sk_gemm_small_scratch(sk_gemm_scratch which) {
    static _Thread_local float *slots[SK_GEMM_SCRATCH_COUNT];
    if (slots[which]) return slots[which];
    pthread_once(&g_scratch_once, scratch_key_make);
    if (!g_scratch_key_made) return NULL;
    float **owned = pthread_getspecific(g_scratch_key);
    if (!owned) {
        owned = calloc(SK_GEMM_SCRATCH_COUNT, sizeof *owned);
        if (!owned || pthread_setspecific(g_scratch_key, owned) != 0) {
            free(owned);
            return NULL;
        }
    }
    owned[which] = aligned_alloc(64, SK_GEMM_SMALL_MAX_WEIGHTS * sizeof(float));
    slots[which] = owned[which];
    return slots[which];
}

/* Each call goes to the kernels of the ISA level in use (src/nn/isa/gemm.c, src/nn/kernels.h). */

bool sk_gemm_small_forward(float *out, const float *inp, const float *w, const float *b, int B,
                           int C, int OC) {
    return sk_nn_kernels_used()->gemm_forward(out, inp, w, NULL, b, B, C, OC);
}

bool sk_gemm_small_forward_pre(float *out, const float *inp, const float *w, const float *wt,
                               const float *b, int B, int C, int OC) {
    return sk_nn_kernels_used()->gemm_forward(out, inp, w, wt, b, B, C, OC);
}

bool sk_gemm_small_forward_transposes(int C, int OC) {
    return sk_nn_kernels_used()->gemm_forward_transposes(C, OC);
}

/* relaxed: a count, ordering nothing; one add a forward that transposes, against the
 * transpose's own thousands of loads and stores */
static atomic_llong g_transposes;

void sk_gemm_small_count_transpose(void) {
    atomic_fetch_add_explicit(&g_transposes, 1, memory_order_relaxed);
}

long long sk_gemm_small_transposes(void) {
    return atomic_load_explicit(&g_transposes, memory_order_relaxed);
}

bool sk_gemm_small_forward_t(float *out, const float *inp, const float *wt, const float *b,
                             int B, int C, int OC) {
    return sk_nn_kernels_used()->gemm_forward_t(out, inp, wt, b, B, C, OC);
}

void sk_gemm_small_transpose(float *dst, const float *src, int rows, int cols) {
    sk_nn_kernels_used()->transpose(dst, src, rows, cols);
}

bool sk_gemm_small_dinput(float *dinp, const float *dout, const float *w, int B, int C, int OC) {
    return sk_nn_kernels_used()->gemm_dinput(dinp, dout, w, B, C, OC);
}

bool sk_gemm_small_dweight(float *dw, const float *dout, const float *inp, int B, int C, int OC) {
    return sk_nn_kernels_used()->gemm_dweight(dw, dout, inp, B, C, OC);
}
