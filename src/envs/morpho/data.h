/*
 * Morpho-v0's data: Fashion-MNIST read from Debian's dataset-fashion-mnist
 * package (IDX files, gzip through zlib), or a small synthetic task when the
 * package is absent or asked for.
 *
 * Images are average-pooled pool x pool (pool 1, 2, 4 or 7; 28 must divide by
 * it) to (28/pool)^2 features, then standardised with the mean and standard
 * deviation of all training pixels (one scalar pair, as torchvision's
 * Normalize). The 60,000 training images are split in order: the first
 * 60,000 - n_val train the host, the last n_val are the validation pool; the
 * 10,000 test images are the test split.
 *
 * One copy is shared by every env of the process: morpho_data_acquire loads
 * on the first call for a given (source, pool, n_val) and counts references;
 * morpho_data_release frees on the last. Thread-safe.
 */
#ifndef SK_MORPHO_DATA_H
#define SK_MORPHO_DATA_H

#include "skinner.h"

#include <stdint.h>

typedef struct morpho_data {
    int dim;     /* features per example */
    int classes; /* 10 */
    int n_train, n_val, n_test;
    const float *train_x, *val_x, *test_x;       /* (n, dim), standardised */
    const uint8_t *train_y, *val_y, *test_y;     /* labels in 0..classes-1 */
    char source[320]; /* "fashion-mnist (DIR)" or "synthetic (...)" for messages and summaries */
} morpho_data;

/* The Debian package's folder. */
#define MORPHO_FASHION_DIR "/usr/share/datasets/fashion-mnist"

/*
 * Reads an IDX file (gzip-compressed or raw; zlib's gzread reads both): the
 * magic 0x00 0x00 type ndim, big-endian dimensions, then the data. Only type
 * 0x08 (unsigned byte) is accepted. On success *data (sk_alloc'd, sk_free it)
 * holds dims[0] * ... * dims[ndim-1] bytes, *ndim is 1..3. Errors
 * (SK_ERR_IO, SK_ERR_CORRUPT) name the file and what was wrong: missing
 * file, bad magic, unsupported type, a dimension of 0 or too large, a file
 * shorter than its header says, trailing bytes.
 */
sk_status morpho_idx_read(const char *path, uint8_t **data, int *ndim, int dims[3]);

/*
 * Loads DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz, checks that the
 * images are 28x28, that image and label counts agree and that labels are
 * < 10, then pools, splits and standardises as above. n_val in 1..59,999.
 */
sk_status morpho_data_load_fashion(morpho_data *out, const char *dir, int pool, int n_val);

/*
 * A synthetic 10-class task with the same shapes (dim = (28/pool)^2):
 * class-conditional Gaussian clusters whose labels depend non-linearly on a
 * low-dimensional latent (e.g. the class is the sector of the angle of a 2-d
 * latent, embedded in dim features by a fixed random projection plus noise),
 * so a linear classifier plateaus clearly below an MLP. Deterministic in
 * seed. n_train, n_val, n_test >= 1.
 */
sk_status morpho_data_synthetic(morpho_data *out, int pool, int n_train, int n_val, int n_test,
                                uint64_t seed);

void morpho_data_free(morpho_data *d);

/*
 * The shared copy. source is "fashion" (MORPHO_FASHION_DIR, an error naming
 * the package if it is absent), "synthetic", "auto" (fashion when the
 * package is installed, else synthetic, with a warning through sk_log that
 * says so and how to install it), or a folder holding the four IDX files.
 */
sk_status morpho_data_acquire(const morpho_data **out, const char *source, int pool, int n_val);
void morpho_data_release(const morpho_data *d);

#endif
