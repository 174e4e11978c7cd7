/*
 * skinner/nn.h's convolutions on libskinner's side: the shape checks, the
 * geometry, bfloat16 rounding, and the loader of the backend that runs them
 * (conv_backend.h): libskinner-dnnl.so, linked to oneDNN and dlopened at the
 * first convolution created, so that libskinner, the program and the classic
 * envs never need libdnnl (issue 31 ask 2). A program that never convolves
 * never looks for it.
 */
#include "conv.h"

#include "../core/core.h"
#include "bf16.h"
#include "conv_backend.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Set by CMake: the prefix relative to the program's folder ("..", or a wheel's
 * ../lib/pythonX.Y/site-packages), the library folder relative to the prefix, and, except
 * in a wheel, the installed library folder (absolute) and the build folder, where the tests
 * and tools of that build tree find the backend (only code running from inside that tree
 * looks there: an installed library never loads a build tree's backend). */
#ifndef SKINNER_BIN_TO_PREFIX
#define SKINNER_BIN_TO_PREFIX ".."
#endif
#ifndef SKINNER_CONV_LIBDIR_REL
#define SKINNER_CONV_LIBDIR_REL "lib"
#endif

#define BACKEND_ENV "SKINNER_CONV_BACKEND"
#define MAX_CANDIDATES 4
#define CANDIDATE_MAX (2 * PATH_MAX) /* a folder of up to PATH_MAX and a file name */

static const sk_conv_backend *g_backend;
static char g_backend_error[MAX_CANDIDATES * CANDIDATE_MAX + 512]; /* why it could not be loaded */
static pthread_once_t g_backend_once = PTHREAD_ONCE_INIT;

static void host_panic(const char *file, int line, const char *msg) { sk_panic(file, line, msg); }
static void host_log(int level, const char *msg) { sk_log(level, "%s", msg); }

/* Tries path: 1 loaded, 0 no such file, -1 there but unusable (message written). */
static int try_backend(const char *path) {
    if (access(path, F_OK) != 0) return 0;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(g_backend_error, sizeof g_backend_error,
                 "convolutions need skinner's oneDNN backend %s, which could not be loaded: %s; "
                 "install oneDNN (Debian: apt-get install libdnnl-dev)", path, dlerror());
        return -1;
    }
    void *sym = dlsym(handle, SK_CONV_BACKEND_ENTRY);
    sk_conv_backend_entry_fn entry = NULL;
    memcpy(&entry, &sym, sizeof entry);
    sk_conv_host host = {SK_CONV_BACKEND_ABI, sk_alloc, sk_free, host_panic, host_log};
    const sk_conv_backend *backend = entry ? entry(&host) : NULL;
    if (!backend || backend->abi != SK_CONV_BACKEND_ABI) {
        snprintf(g_backend_error, sizeof g_backend_error,
                 "%s is not a convolution backend of this skinner (no %s of ABI %d): rebuild "
                 "and reinstall skinner", path, SK_CONV_BACKEND_ENTRY, SK_CONV_BACKEND_ABI);
        dlclose(handle);
        return -1;
    }
    g_backend = backend; /* the handle stays open for the process */
    return 1;
}

static void backend_load(void) {
    const char *forced = getenv(BACKEND_ENV);
    /* static, not 40 KiB of the caller's stack (issue 53 ask 4): this runs once (pthread_once) */
    static char candidates[MAX_CANDIDATES][CANDIDATE_MAX];
    int count = 0;
    static char folder[PATH_MAX];
    if (forced && forced[0]) {
        /* a bare file name is the one in the working folder, as access() sees it, not
         * one dlopen would look for on the library path */
        snprintf(candidates[count++], CANDIDATE_MAX, "%s%s", strchr(forced, '/') ? "" : "./",
                 forced);
    } else {
        /* the library or program this code was linked into (libskinner.so, the skinner
         * program, a test, Python's extension) */
        if (!sk_code_folder((void (*)(void))sk_conv_create, folder, sizeof folder))
            folder[0] = '\0';
        if (folder[0]) {
            snprintf(candidates[count++], CANDIDATE_MAX, "%s/%s", folder, SK_CONV_BACKEND_FILE);
            snprintf(candidates[count++], CANDIDATE_MAX, "%s/" SKINNER_BIN_TO_PREFIX "/%s/%s",
                     folder, SKINNER_CONV_LIBDIR_REL, SK_CONV_BACKEND_FILE);
        }
#ifdef SKINNER_CONV_INSTALL_LIBDIR
        snprintf(candidates[count++], CANDIDATE_MAX, "%s/%s", SKINNER_CONV_INSTALL_LIBDIR,
                 SK_CONV_BACKEND_FILE);
#endif
#ifdef SKINNER_CONV_BUILD_DIR
        size_t tree = strlen(SKINNER_CONV_BUILD_DIR);
        if (strncmp(folder, SKINNER_CONV_BUILD_DIR, tree) == 0 &&
            (folder[tree] == '/' || folder[tree] == '\0'))
            snprintf(candidates[count++], CANDIDATE_MAX, "%s/%s", SKINNER_CONV_BUILD_DIR,
                     SK_CONV_BACKEND_FILE);
#endif
    }
    for (int k = 0; k < count; k++) {
        int found = try_backend(candidates[k]);
        if (found != 0) return;
    }
    int used = snprintf(g_backend_error, sizeof g_backend_error,
                        "convolutions need skinner's oneDNN backend %s, which was not found (%s",
                        SK_CONV_BACKEND_FILE, forced && forced[0] ? BACKEND_ENV " names" : "tried");
    for (int k = 0; k < count && used > 0 && (size_t)used < sizeof g_backend_error; k++)
        used += snprintf(g_backend_error + used, sizeof g_backend_error - (size_t)used, "%s%s",
                         k ? ", " : " ", candidates[k]);
    if (used > 0 && (size_t)used < sizeof g_backend_error)
        snprintf(g_backend_error + used, sizeof g_backend_error - (size_t)used,
                 "): install oneDNN (Debian: apt-get install libdnnl-dev) and rebuild skinner, "
                 "whose build then makes the backend, or set " BACKEND_ENV " to its path");
}

/* The backend, or SK_ERR_IO with why it is not there. */
static sk_status backend_get(const sk_conv_backend **out) {
    pthread_once(&g_backend_once, backend_load);
    *out = g_backend;
    return g_backend ? SK_OK : sk_fail(SK_ERR_IO, "%s", g_backend_error);
}

int sk_conv_out_side(int side, int kernel, int stride) {
    return (side + 2 * (kernel / 2) - kernel) / stride + 1;
}

int sk_conv_torch_out_side(int side, int kernel, int stride, int padding) {
    return (side + 2 * padding - kernel) / stride + 1;
}

size_t sk_conv_weight_floats(sk_conv_shape shape) { return sk_conv_weights(shape); }

double sk_conv_macs(sk_conv_shape s) {
    double oh = sk_conv_out_side(s.height, s.kernel, s.stride),
           ow = sk_conv_out_side(s.width, s.kernel, s.stride);
    return oh * ow * (double)sk_conv_weight_floats(s);
}

float sk_bf16_round(float x) { return sk_bf16_value(x); }

void sk_f32_to_bf16(uint16_t *out, const float *x, size_t n) { sk_bf16_convert(out, x, n); }

/* SK_CONV_BF16_ENV's choice (conv_backend.h): unset or empty is auto. */
static sk_status bf16_path_get(sk_conv_bf16_path *out) {
    const char *value = getenv(SK_CONV_BF16_ENV);
    *out = SK_CONV_BF16_AUTO;
    if (!value || !value[0]) return SK_OK;
    for (int k = 0; sk_conv_bf16_names[k]; k++)
        if (strcmp(value, sk_conv_bf16_names[k]) == 0) {
            *out = (sk_conv_bf16_path)k;
            return SK_OK;
        }
    char expected[64] = "";
    for (int k = 0; sk_conv_bf16_names[k]; k++)
        snprintf(expected + strlen(expected), sizeof expected - strlen(expected), "%s%s",
                 k ? (sk_conv_bf16_names[k + 1] ? ", " : " or ") : "", sk_conv_bf16_names[k]);
    return sk_fail(SK_ERR_INVALID, SK_CONV_BF16_ENV " = '%s': expected %s (how bf16 "
                   "convolutions run; unset: auto)", value, expected);
}

/* torch_like: sk_conv_create_torch's conventions, with padding (checked by the caller). */
static sk_status create(sk_conv **out, sk_conv_shape shape, sk_precision precision,
                        bool torch_like, int padding) {
    *out = NULL;
    if (shape.height < 1 || shape.width < 1 || shape.channels < 1 || shape.out_channels < 1 ||
        shape.kernel < 1 || (shape.kernel % 2 == 0 && !torch_like) || shape.stride < 1 ||
        shape.groups < 1 || shape.channels % shape.groups || shape.out_channels % shape.groups)
        return sk_fail(SK_ERR_INVALID, "convolution %dx%dx%d -> %d channels, kernel %d, stride %d, "
                       "groups %d: expected positive sides, an odd kernel and channel counts "
                       "divisible by groups", shape.height, shape.width, shape.channels,
                       shape.out_channels, shape.kernel, shape.stride, shape.groups);
    sk_conv_bf16_path bf16_path = SK_CONV_BF16_AUTO;
    sk_status status = precision == SK_PRECISION_BF16 ? bf16_path_get(&bf16_path) : SK_OK;
    if (status != SK_OK) return status;
    const sk_conv_backend *backend;
    if ((status = backend_get(&backend)) != SK_OK) return status;
    char message[512] = "";
    status = backend->create(out, shape, torch_like ? padding : shape.kernel / 2, torch_like,
                             precision, bf16_path, message, sizeof message);
    return status == SK_OK ? SK_OK : sk_fail(status, "%s", message);
}

sk_status sk_conv_create(sk_conv **out, sk_conv_shape shape, sk_precision precision) {
    return create(out, shape, precision, false, 0);
}

sk_status sk_conv_create_torch(sk_conv **out, sk_conv_shape shape, int padding,
                               sk_precision precision) {
    *out = NULL;
    if (shape.groups != 1 || padding < 0 || 2 * padding > shape.kernel ||
        shape.kernel > SK_MIN(shape.height, shape.width) + 2 * padding)
        return sk_fail(SK_ERR_INVALID, "convolution %dx%dx%d -> %d channels, kernel %d, padding "
                       "%d, groups %d: expected groups 1, padding 0..kernel/2 and a kernel that "
                       "fits the padded input", shape.height, shape.width, shape.channels,
                       shape.out_channels, shape.kernel, padding, shape.groups);
    return create(out, shape, precision, true, padding);
}

/* A convolution exists only once the backend is loaded, so g_backend is set below. */
void sk_conv_destroy(sk_conv *conv) {
    if (conv) g_backend->destroy(conv);
}

sk_status sk_conv_prepare(sk_conv *conv, int B) {
    if (B < 1) return sk_fail(SK_ERR_INVALID, "a convolution batch of %d images (expected >= 1)", B);
    char message[512] = "";
    sk_status status = g_backend->prepare(conv, B, message, sizeof message);
    return status == SK_OK ? SK_OK : sk_fail(status, "%s", message);
}

sk_conv_counts sk_conv_counts_of(const sk_conv *conv) { return g_backend->counts(conv); }

void sk_conv_forward(sk_conv *conv, float *y, const float *x, const float *w, const float *b,
                     int B) {
    g_backend->forward(conv, y, x, w, b, B);
}

void sk_conv_backward(sk_conv *conv, float *dx, float *dw, float *db, const float *dy,
                      const float *x, const float *w, int B) {
    g_backend->backward(conv, dx, dw, db, dy, x, w, B);
}
