/* The safetensors loader (checkpoints are input): open, then read every
 * tensor's bytes and the metadata it advertises. */
#include "fuzz_util.h"

#include "io/safetensors.h"

/* where the bytes read go, so that the reads are not optimised away */
volatile uint8_t g_fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sk_st_file *file = NULL;
    if (sk_st_open(&file, fuzz_as_file(data, size)) != SK_OK) return 0;
    /* names in skinner's checkpoints and in the seeds */
    static const char *const names[] = {"actor.0.weight", "state.counters", "obs_norm.mean",
                                        "env.rng", "x", NULL};
    for (int i = 0; names[i]; i++) {
        const sk_st_tensor *t = sk_st_find(file, names[i]);
        if (!t) continue;
        size_t nbytes = sk_st_dtype_size(t->dtype);
        for (int d = 0; d < t->ndim; d++) nbytes *= (size_t)t->shape[d];
        const uint8_t *bytes = t->data;
        for (size_t b = 0; b < nbytes; b++) g_fuzz_sink ^= bytes[b];
    }
    const char *meta = sk_st_meta_get(file, "skinner.config");
    if (meta) g_fuzz_sink ^= (uint8_t)meta[0];
    sk_st_close(file);
    return 0;
}
