/* The IDX reader of Morpho's Fashion-MNIST files, plain or gzip'd. */
#include "fuzz_util.h"

#include "morpho/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *out = NULL;
    int ndim = 0, dims[3];
    if (morpho_idx_read(fuzz_as_file(data, size), &out, &ndim, dims) == SK_OK) sk_free(out);
    return 0;
}
