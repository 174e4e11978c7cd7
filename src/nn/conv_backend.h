/*
 * The table between libskinner's convolutions (conv.c: the public sk_conv_*,
 * their checks and messages, the loader) and the backend that runs them
 * (dnnl/conv_dnnl.c, built as libskinner-dnnl.so and linked to oneDNN). The
 * backend is a separate shared object so that libskinner, the program and the
 * classic envs never need libdnnl (issue 31 ask 2); conv.c dlopens it at the
 * first convolution created.
 *
 * The backend calls nothing of libskinner's: it may be loaded under a
 * libskinner.so that was itself dlopened RTLD_LOCAL (Python's extension), where
 * its undefined sk_* symbols would not resolve. What it needs from the host
 * (aligned allocation, the abort on a broken contract, the log) comes in
 * sk_conv_host; what it reports goes back as a status and a message in a
 * buffer, which conv.c records with sk_fail, or as a log line (which bf16 path
 * a process runs), which conv.c passes to sk_log.
 */
#ifndef SK_NN_CONV_BACKEND_H
#define SK_NN_CONV_BACKEND_H

#include "conv.h"

#include <stdbool.h>
#include <stddef.h>

/* Bumped whenever a member of either table changes meaning or place
 * (2: the host's log, create's bf16 path; 3: counts). */
#define SK_CONV_BACKEND_ABI 3
/* The one symbol the backend exports: const sk_conv_backend *(sk_conv_host *). */
#define SK_CONV_BACKEND_ENTRY "sk_conv_backend_entry"
#define SK_CONV_BACKEND_FILE "libskinner-dnnl.so"

/*
 * How a bf16 convolution runs. Native: oneDNN's bf16 primitives. Emulated:
 * the same tensors rounded to bf16 (sk_bf16_value) but held in floats, through
 * oneDNN's f32 primitives: the products are exact in f32 either way, so only
 * the order of the f32 sums differs. oneDNN 2.6 has bf16 convolutions only
 * from AVX-512 up. Auto tries native at creation and emulates when oneDNN
 * answers that it has no kernel. The environment variable SK_CONV_BF16_ENV
 * chooses (conv.c reads it at each sk_conv_create*), so that a machine with
 * native bf16 can test the emulation; its values are sk_conv_bf16_names, in
 * the enum's order.
 */
typedef enum sk_conv_bf16_path {
    SK_CONV_BF16_AUTO,
    SK_CONV_BF16_NATIVE,
    SK_CONV_BF16_EMULATE,
} sk_conv_bf16_path;
#define SK_CONV_BF16_ENV "SKINNER_CONV_BF16"
static const char *const sk_conv_bf16_names[] = {"auto", "native", "emulate", NULL};

typedef struct sk_conv_host {
    int abi;
    void *(*alloc)(size_t bytes); /* sk_alloc: 64-byte aligned, zeroed; NULL on failure */
    void (*free)(void *ptr);
    void (*panic)(const char *file, int line, const char *msg); /* sk_panic: does not return */
    void (*log)(int level, const char *msg); /* sk_log: 0 info, 1 warning */
} sk_conv_host;

/*
 * The shape and padding come checked by conv.c (sides, kernel, groups;
 * torch_like: padding 0..kernel/2 and a kernel that fits). Every call that can
 * fail returns a status and, unless SK_OK, writes a one-line message into
 * message (message_size bytes, NUL-terminated) that conv.c records with
 * sk_fail. pad_left is the zeros on the left and top (kernel / 2, or
 * torch_like's padding). bf16_path (ignored for f32) is decided in create, once
 * for the convolution's life, and logged once per process and path; native
 * where oneDNN has no bf16 kernel is refused there. forward and backward cannot fail: a batch size they were
 * not prepared for is made on the spot, and a failure there panics.
 */
typedef struct sk_conv_backend {
    int abi;           /* SK_CONV_BACKEND_ABI */
    const char *name;  /* "oneDNN 2.7.3" */
    sk_status (*create)(sk_conv **out, sk_conv_shape shape, int pad_left, bool torch_like,
                        sk_precision precision, sk_conv_bf16_path bf16_path, char *message,
                        size_t message_size);
    void (*destroy)(sk_conv *conv);
    sk_status (*prepare)(sk_conv *conv, int B, char *message, size_t message_size);
    void (*forward)(sk_conv *conv, float *y, const float *x, const float *w, const float *b,
                    int B);
    void (*backward)(sk_conv *conv, float *dx, float *dw, float *db, const float *dy,
                     const float *x, const float *w, int B);
    sk_conv_counts (*counts)(const sk_conv *conv); /* conv.h's sk_conv_counts_of */
} sk_conv_backend;

/* Weight floats: out * kernel^2 * in / groups (sk_conv_weight_floats). */
static inline size_t sk_conv_weights(sk_conv_shape s) {
    return (size_t)s.out_channels * (size_t)s.kernel * (size_t)s.kernel *
           (size_t)(s.channels / s.groups);
}

typedef const sk_conv_backend *(*sk_conv_backend_entry_fn)(const sk_conv_host *host);

#endif
