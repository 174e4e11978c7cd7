/*
 * Morpho-v0's data: Fashion-MNIST read from Debian's dataset-fashion-mnist
 * package (IDX files, gzip through zlib), or a small synthetic task when the
 * package is absent or asked for.
 *
 * Images are average-pooled pool x pool (pool 1, 2, 4 or 7, the sides that
 * divide 28 into a useful grid; anything else is SK_ERR_INVALID) to
 * (28/pool)^2 features in [0, 1] (pixel / 255), then standardised with the
 * mean and (population) standard deviation of every feature of the training
 * split after pooling: one scalar pair, as torchvision's Normalize, taken from
 * the host's training images only (not validation, not test) and applied to
 * all three splits. The 60,000 training images are split in order: the first
 * 60,000 - n_val train the host, the last n_val are the validation pool; the
 * 10,000 test images are the test split. Each split's features start on a
 * 64-byte boundary.
 *
 * One copy is shared by every env of the process: morpho_data_acquire loads
 * on the first call for a given (source, pool, n_val) and counts references;
 * morpho_data_release frees on the last. Thread-safe.
 */
#ifndef SK_MORPHO_DATA_H
#define SK_MORPHO_DATA_H

#include "skinner/env.h"

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
/* The seed of the synthetic task morpho_data_acquire shares: fixed, so every
 * env and every run sees the same task. */
#define MORPHO_SYNTHETIC_SEED 7

/*
 * Reads an IDX file (gzip-compressed or raw; zlib's gzread reads both): the
 * magic 0x00 0x00 type ndim, big-endian dimensions, then the data. Only type
 * 0x08 (unsigned byte) is accepted. On success *data (sk_alloc'd, sk_free it)
 * holds dims[0] * ... * dims[ndim-1] bytes, *ndim is 1..3. Errors
 * (SK_ERR_IO, SK_ERR_CORRUPT) name the file and what was wrong: missing
 * file, bad magic, unsupported type, a dimension of 0 or too large (more
 * than 1 GiB in all), a file shorter than its header says, a damaged gzip
 * stream, trailing bytes. On failure *data is NULL.
 */
sk_status morpho_idx_read(const char *path, uint8_t **data, int *ndim, int dims[3]);

/*
 * Loads DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz, checks that the
 * images are 28x28, that image and label counts agree and that labels are
 * < 10, then pools, splits and standardises as above. n_val in 1..59,999
 * (1 to the number of training images - 1), else SK_ERR_INVALID. On failure
 * *out is zeroed (morpho_data_free on it is harmless).
 */
sk_status morpho_data_load_fashion(morpho_data *out, const char *dir, int pool, int n_val);

/*
 * A synthetic 10-class task with the same shapes (dim = (28/pool)^2):
 * Gaussian clusters in a 2-d latent, 10 angles on each of 2 rings, class c
 * owning the inner cluster at angle c and the outer one opposite it, spread
 * into dim features by a fixed random projection plus noise (data.c gives the
 * constants). No class fills a convex region, so a linear classifier
 * plateaus near 20% while an MLP reaches 97-99% (with 8-32 hidden ReLUs; 74%
 * with 4), as test_morpho_data measures. Standardised as the images are.
 * Deterministic in seed; the validation and test examples do not depend on
 * n_train. n_train, n_val, n_test >= 1, else SK_ERR_INVALID.
 */
sk_status morpho_data_synthetic(morpho_data *out, int pool, int n_train, int n_val, int n_test,
                                uint64_t seed);

void morpho_data_free(morpho_data *d);

/*
 * The shared copy. source is "fashion" (MORPHO_FASHION_DIR, SK_ERR_IO naming
 * the package if it is absent), "synthetic", "auto" (fashion when the
 * package is installed, else synthetic, with a warning through sk_log, once
 * per loaded copy, that says so and how to install it), or a folder holding
 * the four IDX files; anything else is SK_ERR_INVALID. The synthetic task
 * takes Fashion-MNIST's shapes (60,000 - n_val, n_val, 10,000) and
 * MORPHO_SYNTHETIC_SEED. The first call for a key loads while holding the
 * cache's lock (others wait). *out stays valid until the matching
 * morpho_data_release; releasing a pointer not acquired is a bug (assert).
 * release(NULL) does nothing.
 */
sk_status morpho_data_acquire(const morpho_data **out, const char *source, int pool, int n_val);
void morpho_data_release(const morpho_data *d);

#endif
