/*
 * Morpho-v0's data: the IDX reader, the Fashion-MNIST loader, the synthetic
 * task and the process-wide shared copy. See data.h for the contracts.
 */
#include "data.h"

#include "skinner/module.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* IDX (LeCun's MNIST format): 0x00 0x00, a type byte, the number of
 * dimensions, then each dimension as a big-endian uint32. */
#define IDX_TYPE_UBYTE 0x08
#define IDX_MAX_NDIM 3
/* Refuses headers that would make us allocate absurd amounts (Fashion-MNIST's
 * largest file is 47 MB); also keeps every count within gzread's int. */
#define IDX_MAX_BYTES ((uint64_t)1 << 30)
/* zlib's default 8 KB buffer costs ~20% on the 26 MB training images. */
#define IDX_GZ_BUFFER (1u << 17)

/* Deflate expands at most 1032:1 (zlib's technical details), so a file of
 * `size` bytes holds at most this many bytes of data: its own size when it is
 * not gzip'd. A header claiming more is refused before anything is allocated
 * (a 20-byte file once made the reader allocate and zero a gigabyte). */
#define DEFLATE_MAX_RATIO 1032

static sk_status idx_read_open(gzFile file, const char *path, int64_t file_size, uint8_t **data,
                               int *ndim, int dims[3]) {
    uint8_t header[4];
    int got = gzread(file, header, sizeof header);
    if (got < 0) return sk_fail(SK_ERR_CORRUPT, "IDX file '%s': %s", path, gzerror(file, NULL));
    if (got < (int)sizeof header)
        return sk_fail(SK_ERR_CORRUPT,
                       "IDX file '%s' is %d bytes long, shorter than the 4-byte IDX magic", path,
                       got);
    if (header[0] != 0 || header[1] != 0)
        return sk_fail(SK_ERR_CORRUPT,
                       "IDX file '%s' has bad magic 0x%02x 0x%02x (expected 0x00 0x00 then the "
                       "type byte and the number of dimensions)",
                       path, header[0], header[1]);
    if (header[2] != IDX_TYPE_UBYTE)
        return sk_fail(SK_ERR_CORRUPT,
                       "IDX file '%s' has element type 0x%02x; only 0x08 (unsigned byte) is "
                       "supported",
                       path, header[2]);
    int num_dims = header[3];
    if (num_dims < 1 || num_dims > IDX_MAX_NDIM)
        return sk_fail(SK_ERR_CORRUPT, "IDX file '%s' has %d dimensions (expected 1 to %d)",
                       path, num_dims, IDX_MAX_NDIM);

    uint8_t raw_dims[4 * IDX_MAX_NDIM];
    got = gzread(file, raw_dims, (unsigned)(4 * num_dims));
    if (got < 0) return sk_fail(SK_ERR_CORRUPT, "IDX file '%s': %s", path, gzerror(file, NULL));
    if (got < 4 * num_dims)
        return sk_fail(SK_ERR_CORRUPT,
                       "IDX file '%s' ends inside its header (%d of %d dimension bytes)", path, got,
                       4 * num_dims);
    uint64_t total = 1;
    for (int k = 0; k < num_dims; k++) {
        const uint8_t *b = raw_dims + 4 * k;
        uint64_t dim = (uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 | (uint64_t)b[2] << 8 | b[3];
        if (dim == 0 || dim > IDX_MAX_BYTES || total * dim > IDX_MAX_BYTES)
            return sk_fail(SK_ERR_CORRUPT,
                           "IDX file '%s': dimension %d is %llu (expected 1 or more, with at most "
                           "%llu bytes in all)",
                           path, k, (unsigned long long)dim, (unsigned long long)IDX_MAX_BYTES);
        total *= dim;
        dims[k] = (int)dim;
    }
    uint64_t most = (uint64_t)file_size * (gzdirect(file) ? 1 : DEFLATE_MAX_RATIO);
    if (total > most)
        return sk_fail(SK_ERR_CORRUPT,
                       "IDX file '%s' claims %llu bytes of data but, at %lld bytes%s, can hold at "
                       "most %llu",
                       path, (unsigned long long)total, (long long)file_size,
                       gzdirect(file) ? "" : " gzip'd", (unsigned long long)most);

    uint8_t *bytes = sk_alloc((size_t)total);
    if (!bytes) return sk_fail(SK_ERR_NOMEM, "out of memory reading IDX file '%s'", path);
    /* gzread fills the whole request unless the file ends or is damaged */
    got = gzread(file, bytes, (unsigned)total);
    if (got < 0) {
        sk_free(bytes);
        return sk_fail(SK_ERR_CORRUPT, "IDX file '%s': %s", path, gzerror(file, NULL));
    }
    uint64_t done = (uint64_t)got;
    if (done < total) {
        sk_free(bytes);
        return sk_fail(SK_ERR_CORRUPT,
                       "IDX file '%s' is truncated: %llu of the %llu data bytes its header "
                       "announces",
                       path, (unsigned long long)done, (unsigned long long)total);
    }
    uint8_t extra;
    got = gzread(file, &extra, 1);
    if (got != 0) {
        sk_free(bytes);
        if (got < 0) return sk_fail(SK_ERR_CORRUPT, "IDX file '%s': %s", path, gzerror(file, NULL));
        return sk_fail(SK_ERR_CORRUPT,
                       "IDX file '%s' has trailing bytes after the %llu data bytes its header "
                       "announces",
                       path, (unsigned long long)total);
    }
    *data = bytes;
    *ndim = num_dims;
    return SK_OK;
}

sk_status morpho_idx_read(const char *path, uint8_t **data, int *ndim, int dims[3]) {
    *data = NULL;
    *ndim = 0;
    int fd;
    int64_t file_size = 0;
    sk_status opened = sk_open_regular(path, SK_DATA_FILE_MAX_BYTES, "IDX file", &fd, &file_size);
    if (opened != SK_OK) return opened;
    gzFile file = gzdopen(fd, "rb");
    if (!file) {
        int err = errno;
        close(fd);
        return sk_fail(SK_ERR_IO, "cannot open IDX file '%s': %s", path,
                       err ? strerror(err) : "out of memory");
    }
    gzbuffer(file, IDX_GZ_BUFFER);
    sk_status status = idx_read_open(file, path, file_size, data, ndim, dims);
    /* gzclose reports a gzip stream cut short only here (Z_BUF_ERROR) */
    int rc = gzclose(file);
    if (status == SK_OK && rc != Z_OK) {
        sk_free(*data);
        *data = NULL;
        *ndim = 0;
        return sk_fail(SK_ERR_CORRUPT, "IDX file '%s': the gzip stream is cut short or damaged",
                       path);
    }
    return status;
}

/* ------------------------------------------------------------- the splits */

#define MORPHO_SIDE 28 /* Fashion-MNIST images are 28 x 28 */
#define MORPHO_CLASSES 10
/* The shapes the synthetic task copies when it stands in for Fashion-MNIST. */
#define MORPHO_FASHION_TRAIN 60000
#define MORPHO_FASHION_TEST 10000
/* Each split's features start on a 64-byte boundary (16 floats) for SIMD. */
#define SPLIT_ALIGN_FLOATS 16

static size_t padded_floats(int n, int dim) {
    size_t floats = (size_t)n * (size_t)dim;
    return (floats + SPLIT_ALIGN_FLOATS - 1) / SPLIT_ALIGN_FLOATS * SPLIT_ALIGN_FLOATS;
}

static sk_status check_pool(int pool) {
    if (pool == 1 || pool == 2 || pool == 4 || pool == 7) return SK_OK;
    return sk_fail(SK_ERR_INVALID,
                   "morpho pool %d is not accepted (expected 1, 2, 4 or 7: the side of the square "
                   "averaged into one feature, which must divide the 28-pixel side)",
                   pool);
}

/* One allocation holds the three splits' features and one their labels:
 * train_x and train_y own them, which is what morpho_data_free frees. */
static sk_status data_alloc(morpho_data *d, int dim, int n_train, int n_val, int n_test) {
    memset(d, 0, sizeof *d);
    size_t train_floats = padded_floats(n_train, dim), val_floats = padded_floats(n_val, dim);
    float *x = sk_alloc(sizeof(float) * (train_floats + val_floats + padded_floats(n_test, dim)));
    uint8_t *y = sk_alloc((size_t)n_train + (size_t)n_val + (size_t)n_test);
    if (!x || !y) {
        sk_free(x);
        sk_free(y);
        return sk_fail(SK_ERR_NOMEM, "out of memory for Morpho's data (%d + %d + %d examples of %d "
                                     "features)",
                       n_train, n_val, n_test, dim);
    }
    d->dim = dim;
    d->classes = MORPHO_CLASSES;
    d->n_train = n_train, d->n_val = n_val, d->n_test = n_test;
    d->train_x = x;
    d->val_x = x + train_floats;
    d->test_x = x + train_floats + val_floats;
    d->train_y = y;
    d->val_y = y + n_train;
    d->test_y = y + n_train + n_val;
    return SK_OK;
}

void morpho_data_free(morpho_data *d) {
    if (!d) return;
    sk_free((void *)d->train_x);
    sk_free((void *)d->train_y);
    memset(d, 0, sizeof *d);
}

/* Standardises every split with the mean and (population) standard deviation
 * of all the training split's features: one scalar pair, as torchvision's
 * Normalize((mean,), (std,)). Two passes in double: one-pass sums of squares
 * lose digits on 47 M values. */
static sk_status standardise(morpho_data *d, const char *what) {
    float *x = (float *)d->train_x;
    size_t train_count = (size_t)d->n_train * (size_t)d->dim;
    double sum = 0;
    for (size_t i = 0; i < train_count; i++) sum += x[i];
    double mean = sum / (double)train_count, sq = 0;
    for (size_t i = 0; i < train_count; i++) sq += ((double)x[i] - mean) * ((double)x[i] - mean);
    double std = sqrt(sq / (double)train_count);
    if (!(std > 1e-12))
        return sk_fail(SK_ERR_CORRUPT,
                       "%s: every training feature is %g, so they cannot be standardised "
                       "(expected images that vary)",
                       what, mean);
    float mean_f = (float)mean, inv_std = (float)(1.0 / std);
    struct {
        float *x;
        int n;
    } splits[3] = {{x, d->n_train}, {(float *)d->val_x, d->n_val}, {(float *)d->test_x, d->n_test}};
    for (int s = 0; s < 3; s++) {
        size_t count = (size_t)splits[s].n * (size_t)d->dim;
        for (size_t i = 0; i < count; i++) splits[s].x[i] = (splits[s].x[i] - mean_f) * inv_std;
    }
    return SK_OK;
}

/* --------------------------------------------------------- Fashion-MNIST */

/* Averages each pool x pool square of count 28x28 images into out (count,
 * (28/pool)^2), scaled to [0, 1] (pixel / 255, as torchvision's ToTensor). */
static void pool_images(float *out, const uint8_t *images, int count, int pool) {
    int side = MORPHO_SIDE / pool;
    float scale = 1.0f / (255.0f * (float)(pool * pool));
    for (int n = 0; n < count; n++) {
        const uint8_t *image = images + (size_t)n * MORPHO_SIDE * MORPHO_SIDE;
        float *features = out + (size_t)n * (size_t)(side * side);
        for (int out_row = 0; out_row < side; out_row++) {
            uint32_t sums[MORPHO_SIDE] = {0};
            for (int row = out_row * pool; row < (out_row + 1) * pool; row++) {
                const uint8_t *pixels = image + row * MORPHO_SIDE;
                for (int col = 0; col < MORPHO_SIDE; col++) sums[col / pool] += pixels[col];
            }
            for (int out_col = 0; out_col < side; out_col++)
                features[out_row * side + out_col] = (float)sums[out_col] * scale;
        }
    }
}

enum { FILE_TRAIN_IMAGES, FILE_TRAIN_LABELS, FILE_TEST_IMAGES, FILE_TEST_LABELS, NUM_FILES };
static const char *const k_fashion_files[NUM_FILES] = {
    "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz"};

typedef struct idx_file {
    char path[4096];
    uint8_t *data;
    int ndim, dims[3];
} idx_file;

/* "60000 x 28 x 28" */
static const char *shape_text(char *buf, size_t size, const idx_file *file) {
    int used = snprintf(buf, size, "%d", file->dims[0]);
    for (int k = 1; k < file->ndim && used > 0 && (size_t)used < size; k++)
        used += snprintf(buf + used, size - (size_t)used, " x %d", file->dims[k]);
    return buf;
}

/* Checks that an images file and its labels file agree. */
static sk_status check_pair(const idx_file *images, const idx_file *labels) {
    char shape[64];
    if (images->ndim != 3 || images->dims[1] != MORPHO_SIDE || images->dims[2] != MORPHO_SIDE)
        return sk_fail(SK_ERR_CORRUPT,
                       "IDX file '%s' holds %s bytes, expected images: count x 28 x 28",
                       images->path, shape_text(shape, sizeof shape, images));
    if (labels->ndim != 1 || labels->dims[0] != images->dims[0])
        return sk_fail(SK_ERR_CORRUPT,
                       "IDX file '%s' holds %s labels, expected one per image of '%s': %d",
                       labels->path, shape_text(shape, sizeof shape, labels), images->path,
                       images->dims[0]);
    for (int i = 0; i < labels->dims[0]; i++)
        if (labels->data[i] >= MORPHO_CLASSES)
            return sk_fail(SK_ERR_CORRUPT, "IDX file '%s': label %d of example %d (expected 0 to %d)",
                           labels->path, labels->data[i], i, MORPHO_CLASSES - 1);
    return SK_OK;
}

static sk_status load_fashion(morpho_data *out, const char *dir, int pool, int n_val,
                              idx_file files[NUM_FILES]) {
    sk_status status = check_pool(pool);
    if (status != SK_OK) return status;
    for (int f = 0; f < NUM_FILES; f++) {
        int n = snprintf(files[f].path, sizeof files[f].path, "%s/%s", dir, k_fashion_files[f]);
        if (n < 0 || (size_t)n >= sizeof files[f].path)
            return sk_fail(SK_ERR_IO, "Fashion-MNIST folder path too long: '%s'", dir);
        status = morpho_idx_read(files[f].path, &files[f].data, &files[f].ndim, files[f].dims);
        if (status != SK_OK) return status;
    }
    status = check_pair(&files[FILE_TRAIN_IMAGES], &files[FILE_TRAIN_LABELS]);
    if (status == SK_OK) status = check_pair(&files[FILE_TEST_IMAGES], &files[FILE_TEST_LABELS]);
    if (status != SK_OK) return status;

    int num_train_images = files[FILE_TRAIN_IMAGES].dims[0];
    if (n_val < 1 || n_val >= num_train_images)
        return sk_fail(SK_ERR_INVALID,
                       "morpho n_val %d is out of range (expected 1 to %d: '%s' holds %d training "
                       "images and at least one must train the host)",
                       n_val, num_train_images - 1, files[FILE_TRAIN_IMAGES].path,
                       num_train_images);
    int side = MORPHO_SIDE / pool, n_train = num_train_images - n_val;
    status = data_alloc(out, side * side, n_train, n_val, files[FILE_TEST_IMAGES].dims[0]);
    if (status != SK_OK) return status;

    const uint8_t *train_images = files[FILE_TRAIN_IMAGES].data;
    const size_t image_bytes = MORPHO_SIDE * MORPHO_SIDE;
    pool_images((float *)out->train_x, train_images, n_train, pool);
    pool_images((float *)out->val_x, train_images + (size_t)n_train * image_bytes, n_val, pool);
    pool_images((float *)out->test_x, files[FILE_TEST_IMAGES].data, out->n_test, pool);
    memcpy((uint8_t *)out->train_y, files[FILE_TRAIN_LABELS].data, (size_t)n_train);
    memcpy((uint8_t *)out->val_y, files[FILE_TRAIN_LABELS].data + n_train, (size_t)n_val);
    memcpy((uint8_t *)out->test_y, files[FILE_TEST_LABELS].data, (size_t)out->n_test);
    snprintf(out->source, sizeof out->source, "fashion-mnist (%s)", dir);
    status = standardise(out, files[FILE_TRAIN_IMAGES].path);
    if (status != SK_OK) morpho_data_free(out);
    return status;
}

sk_status morpho_data_load_fashion(morpho_data *out, const char *dir, int pool, int n_val) {
    memset(out, 0, sizeof *out);
    idx_file files[NUM_FILES];
    memset(files, 0, sizeof files);
    sk_status status = load_fashion(out, dir, pool, n_val, files);
    for (int f = 0; f < NUM_FILES; f++) sk_free(files[f].data);
    return status;
}

/* ------------------------------------------------------- synthetic task */

/*
 * Ten classes in a 2-d latent: 20 Gaussian clusters, one at each of 10 angles
 * on each of 2 rings (radii 1 and 2). Class c owns the inner cluster at angle
 * c and the outer one at the opposite angle c + 5, so each class is two blobs
 * on either side of the origin: no convex region holds a class, which caps a
 * linear classifier (about 20% test accuracy in test_morpho_data) while an
 * MLP separates the clusters, capacity permitting (one ReLU layer of 4, 8,
 * 16, 32 units: about 74, 97, 99.6, 99.6% after 20 epochs of SGD). The latent point is spread into dim features by a
 * fixed random projection P (dim, 2) with N(0, 1) entries, plus N(0, s^2)
 * noise per feature with s = SYNTH_NOISE * sqrt(dim): P'P ~ dim I, so the
 * noise left in the latent after the best linear read-out is ~SYNTH_NOISE
 * whatever the pool, and the task is equally hard at every pool.
 */
#define SYNTH_ANGLES 10
#define SYNTH_RINGS 2
#define SYNTH_CLUSTER_STD 0.1 /* the clusters' spread in the latent */
#define SYNTH_NOISE 0.06      /* the features' noise, in latent units */
#define SYNTH_TWO_PI 6.283185307179586
/* rng streams of the seed: the projection, then one per split, so that the
 * validation and test sets do not move when n_train changes */
enum { STREAM_PROJECTION, STREAM_TRAIN, STREAM_VAL, STREAM_TEST };

static void synth_split(float *x, uint8_t *y, int n, int dim, const double *projection,
                        uint64_t seed, uint64_t stream) {
    uint64_t rng = sk_rng_seed(seed, stream);
    double noise = SYNTH_NOISE * sqrt((double)dim);
    for (int i = 0; i < n; i++) {
        int label = (int)sk_rng_below(&rng, SYNTH_ANGLES);
        int ring = (int)sk_rng_below(&rng, SYNTH_RINGS);
        int angle = (label + ring * SYNTH_ANGLES / 2) % SYNTH_ANGLES;
        double theta = SYNTH_TWO_PI * angle / SYNTH_ANGLES, radius = 1.0 + ring;
        double z0 = radius * cos(theta) + SYNTH_CLUSTER_STD * sk_rng_normal(&rng);
        double z1 = radius * sin(theta) + SYNTH_CLUSTER_STD * sk_rng_normal(&rng);
        float *features = x + (size_t)i * (size_t)dim;
        for (int k = 0; k < dim; k++)
            features[k] = (float)(projection[2 * k] * z0 + projection[2 * k + 1] * z1 +
                                  noise * sk_rng_normal(&rng));
        y[i] = (uint8_t)label;
    }
}

sk_status morpho_data_synthetic(morpho_data *out, int pool, int n_train, int n_val, int n_test,
                                uint64_t seed) {
    memset(out, 0, sizeof *out);
    sk_status status = check_pool(pool);
    if (status != SK_OK) return status;
    if (n_train < 1 || n_val < 1 || n_test < 1)
        return sk_fail(SK_ERR_INVALID,
                       "morpho synthetic split sizes %d, %d, %d (train, validation, test): each "
                       "must be at least 1",
                       n_train, n_val, n_test);
    int side = MORPHO_SIDE / pool, dim = side * side;
    double projection[2 * MORPHO_SIDE * MORPHO_SIDE]; /* (dim, 2) */
    uint64_t rng = sk_rng_seed(seed, STREAM_PROJECTION);
    for (int k = 0; k < 2 * dim; k++) projection[k] = sk_rng_normal(&rng);
    status = data_alloc(out, dim, n_train, n_val, n_test);
    if (status != SK_OK) return status;
    synth_split((float *)out->train_x, (uint8_t *)out->train_y, n_train, dim, projection, seed,
                STREAM_TRAIN);
    synth_split((float *)out->val_x, (uint8_t *)out->val_y, n_val, dim, projection, seed,
                STREAM_VAL);
    synth_split((float *)out->test_x, (uint8_t *)out->test_y, n_test, dim, projection, seed,
                STREAM_TEST);
    snprintf(out->source, sizeof out->source,
             "synthetic (seed %llu: 10 classes of 2 clusters on 2 rings in a 2-d latent, "
             "projected to %d features)",
             (unsigned long long)seed, dim);
    status = standardise(out, "morpho synthetic data");
    if (status != SK_OK) morpho_data_free(out);
    return status;
}

/* --------------------------------------------------------- the shared copy */

/* One loaded copy per (resolved source, pool, n_val), counted. Loading holds
 * the lock: an env that asks for data being loaded waits for it anyway. */
typedef struct shared_copy {
    struct shared_copy *next;
    char dir[4096]; /* the Fashion-MNIST folder, or "" for the synthetic task */
    int pool, n_val, refs;
    morpho_data data;
} shared_copy;

static pthread_mutex_t g_shared_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_copy *g_shared;

/* The first of the four files missing from dir, or NULL if all are there. */
static const char *fashion_missing(const char *dir) {
    for (int f = 0; f < NUM_FILES; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, k_fashion_files[f]);
        if (access(path, R_OK) != 0) return k_fashion_files[f];
    }
    return NULL;
}

/* Turns source into a folder (dir) or the synthetic task (dir ""); when
 * "auto" falls back to it, *fallback_why names the package file missing. */
static sk_status resolve_source(const char *source, char dir[4096], const char **fallback_why) {
    *fallback_why = NULL;
    dir[0] = '\0';
    if (!source || !*source)
        return sk_fail(SK_ERR_INVALID, "morpho data source is empty (expected 'fashion', "
                                       "'synthetic', 'auto' or a folder of Fashion-MNIST IDX "
                                       "files)");
    if (strcmp(source, "synthetic") == 0) return SK_OK;
    if (strcmp(source, "fashion") == 0 || strcmp(source, "auto") == 0) {
        const char *missing = fashion_missing(MORPHO_FASHION_DIR);
        if (!missing) {
            snprintf(dir, 4096, "%s", MORPHO_FASHION_DIR);
            return SK_OK;
        }
        if (strcmp(source, "auto") == 0) {
            *fallback_why = missing;
            return SK_OK;
        }
        return sk_fail(SK_ERR_IO,
                       "morpho data source 'fashion': %s/%s is missing; install Debian's "
                       "dataset-fashion-mnist package (apt-get install dataset-fashion-mnist), "
                       "or use source 'synthetic'",
                       MORPHO_FASHION_DIR, missing);
    }
    if (strlen(source) >= 4096)
        return sk_fail(SK_ERR_INVALID, "morpho data folder path too long: '%.64s...'", source);
    struct stat info;
    if (stat(source, &info) != 0 || !S_ISDIR(info.st_mode))
        return sk_fail(SK_ERR_INVALID,
                       "morpho data source '%s' is not 'fashion', 'synthetic', 'auto' or a folder "
                       "(expected one of those; a folder must hold %s and the three other "
                       "Fashion-MNIST IDX files)",
                       source, k_fashion_files[FILE_TRAIN_IMAGES]);
    snprintf(dir, 4096, "%s", source);
    return SK_OK;
}

static sk_status load_copy(shared_copy *copy, const char *fallback_why) {
    if (copy->dir[0]) return morpho_data_load_fashion(&copy->data, copy->dir, copy->pool, copy->n_val);
    if (fallback_why)
        sk_log(1,
               "Morpho-v0: Fashion-MNIST is not installed (no %s/%s, which Debian's package "
               "dataset-fashion-mnist provides), so it trains on its synthetic task instead; for "
               "the real data: apt-get install dataset-fashion-mnist",
               MORPHO_FASHION_DIR, fallback_why);
    if (copy->n_val < 1 || copy->n_val >= MORPHO_FASHION_TRAIN)
        return sk_fail(SK_ERR_INVALID, "morpho n_val %d is out of range (expected 1 to %d)",
                       copy->n_val, MORPHO_FASHION_TRAIN - 1);
    return morpho_data_synthetic(&copy->data, copy->pool, MORPHO_FASHION_TRAIN - copy->n_val,
                                 copy->n_val, MORPHO_FASHION_TEST, MORPHO_SYNTHETIC_SEED);
}

sk_status morpho_data_acquire(const morpho_data **out, const char *source, int pool, int n_val) {
    *out = NULL;
    char dir[4096];
    const char *fallback_why;
    sk_status status = resolve_source(source, dir, &fallback_why);
    if (status != SK_OK) return status;
    pthread_mutex_lock(&g_shared_lock);
    shared_copy *copy = g_shared;
    while (copy && (strcmp(copy->dir, dir) != 0 || copy->pool != pool || copy->n_val != n_val))
        copy = copy->next;
    if (!copy) {
        copy = calloc(1, sizeof *copy);
        if (!copy) {
            status = sk_fail(SK_ERR_NOMEM, "out of memory for Morpho's data");
        } else {
            snprintf(copy->dir, sizeof copy->dir, "%s", dir);
            copy->pool = pool;
            copy->n_val = n_val;
            status = load_copy(copy, fallback_why);
            if (status == SK_OK) {
                copy->next = g_shared;
                g_shared = copy;
            } else {
                free(copy);
                copy = NULL;
            }
        }
    }
    if (copy) {
        copy->refs++;
        *out = &copy->data;
    }
    pthread_mutex_unlock(&g_shared_lock);
    return status;
}

void morpho_data_release(const morpho_data *d) {
    if (!d) return;
    pthread_mutex_lock(&g_shared_lock);
    shared_copy **link = &g_shared;
    while (*link && &(*link)->data != d) link = &(*link)->next;
    SK_ASSERT(*link); /* d came from morpho_data_acquire and is still held */
    shared_copy *copy = *link;
    if (--copy->refs == 0) {
        *link = copy->next;
        morpho_data_free(&copy->data);
        free(copy);
    }
    pthread_mutex_unlock(&g_shared_lock);
}
