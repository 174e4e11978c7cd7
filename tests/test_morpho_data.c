/*
 * Morpho-v0's data: the IDX reader on good and damaged files written here
 * (raw and gzip), pooling and standardisation against values computed here
 * from hand-made images, the real Fashion-MNIST when its package is
 * installed, the synthetic task's difficulty, and the shared copy's
 * reference counting.
 */
#include "test_util.h"

#include "core/core.h"
#include "core/rng.h"
#include "morpho/data.h"

#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <zlib.h>

static char g_dir[64]; /* this run's temp folder, removed at the end */

static void path_of(char *buf, size_t size, const char *name) {
    int n = snprintf(buf, size, "%s/%s", g_dir, name);
    if (n < 0 || (size_t)n >= size) fail_msg("temp path too long: %s/%s", g_dir, name);
}

/* Writes head then body to path, through zlib when gzip is set. */
static void write_file(const char *path, bool gzip, const uint8_t *head, size_t head_size,
                       const uint8_t *body, size_t body_size) {
    if (gzip) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        if (head_size) assert_int_equal(gzwrite(f, head, (unsigned)head_size), (int)head_size);
        if (body_size) assert_int_equal(gzwrite(f, body, (unsigned)body_size), (int)body_size);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        if (head_size) assert_int_equal(fwrite(head, 1, head_size, f), head_size);
        if (body_size) assert_int_equal(fwrite(body, 1, body_size, f), body_size);
        assert_int_equal(fclose(f), 0);
    }
}

/* An IDX header of type 0x08 with the given dimensions; returns its size. */
static size_t idx_header(uint8_t *out, int ndim, const uint32_t *dims) {
    out[0] = 0, out[1] = 0, out[2] = 0x08, out[3] = (uint8_t)ndim;
    for (int k = 0; k < ndim; k++) {
        out[4 + 4 * k] = (uint8_t)(dims[k] >> 24);
        out[5 + 4 * k] = (uint8_t)(dims[k] >> 16);
        out[6 + 4 * k] = (uint8_t)(dims[k] >> 8);
        out[7 + 4 * k] = (uint8_t)dims[k];
    }
    return 4 + 4 * (size_t)ndim;
}

static void write_idx(const char *path, bool gzip, int ndim, const uint32_t *dims,
                      const uint8_t *body, size_t body_size) {
    uint8_t head[4 + 4 * 4];
    size_t head_size = idx_header(head, ndim, dims);
    write_file(path, gzip, head, head_size, body, body_size);
}

/* The read fails with status, and the message names the file and says needle. */
static void expect_idx_error(const char *path, sk_status status, const char *needle) {
    uint8_t *data = (uint8_t *)&data; /* must be reset to NULL */
    int ndim = -1, dims[3];
    sk_status got = morpho_idx_read(path, &data, &ndim, dims);
    const char *msg = sk_last_error();
    if (got != status || !strstr(msg, path) || !strstr(msg, needle))
        fail_msg("%s: got %s '%s', expected %s naming the file and saying '%s'", path,
                 sk_status_name(got), msg, sk_status_name(status), needle);
    assert_null(data);
}

/* ------------------------------------------------------------- IDX reader */

static void test_idx_good_files(void **unused) {
    (void)unused;
    uint8_t body[2 * 3 * 4];
    for (size_t i = 0; i < sizeof body; i++) body[i] = (uint8_t)(7 * i + 3);
    struct {
        const char *name;
        bool gzip;
        int ndim;
        uint32_t dims[3];
    } cases[] = {
        {"vec.idx", false, 1, {24}},
        {"mat.idx.gz", true, 2, {6, 4}},
        {"cube.idx", false, 3, {2, 3, 4}},
        {"cube.idx.gz", true, 3, {2, 3, 4}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char path[128];
        path_of(path, sizeof path, cases[c].name);
        write_idx(path, cases[c].gzip, cases[c].ndim, cases[c].dims, body, sizeof body);
        uint8_t *data = NULL;
        int ndim = 0, dims[3] = {0};
        if (morpho_idx_read(path, &data, &ndim, dims) != SK_OK)
            fail_msg("%s: %s", path, sk_last_error());
        assert_int_equal(ndim, cases[c].ndim);
        for (int k = 0; k < ndim; k++) assert_int_equal(dims[k], (int)cases[c].dims[k]);
        assert_memory_equal(data, body, sizeof body);
        sk_free(data);
    }
}


/* Only regular files: a FIFO named like an IDX file used to block the reader. */
static void test_idx_regular_files_only(void **unused) {
    (void)unused;
    char path[128];
    path_of(path, sizeof path, "fifo-idx");
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(20); /* a hang fails the test instead of the suite's timeout */
    expect_idx_error(path, SK_ERR_IO, "FIFO");
    alarm(0);
    unlink(path);
    expect_idx_error("/dev/zero", SK_ERR_IO, "regular file");
}

static void test_idx_damaged_files(void **unused) {
    (void)unused;
    uint8_t body[2 * 3 * 4] = {0};
    const uint32_t dims[3] = {2, 3, 4};
    char path[128];
    for (int gzip = 0; gzip <= 1; gzip++) {
        uint8_t head[16];
        size_t head_size = idx_header(head, 3, dims);

        path_of(path, sizeof path, gzip ? "magic.gz" : "magic");
        head[1] = 0x01;
        write_file(path, gzip, head, head_size, body, sizeof body);
        expect_idx_error(path, SK_ERR_CORRUPT, "bad magic");
        head[1] = 0;

        path_of(path, sizeof path, gzip ? "type.gz" : "type");
        head[2] = 0x0D; /* float */
        write_file(path, gzip, head, head_size, body, sizeof body);
        expect_idx_error(path, SK_ERR_CORRUPT, "element type 0x0d");
        head[2] = 0x08;

        path_of(path, sizeof path, gzip ? "ndim0.gz" : "ndim0");
        write_idx(path, gzip, 0, dims, body, sizeof body);
        expect_idx_error(path, SK_ERR_CORRUPT, "has 0 dimensions (expected 1 to 3)");

        path_of(path, sizeof path, gzip ? "ndim4.gz" : "ndim4");
        const uint32_t dims4[4] = {1, 2, 3, 4};
        write_idx(path, gzip, 4, dims4, body, sizeof body);
        expect_idx_error(path, SK_ERR_CORRUPT, "has 4 dimensions (expected 1 to 3)");

        path_of(path, sizeof path, gzip ? "short.gz" : "short");
        write_file(path, gzip, head, head_size, body, sizeof body - 1);
        expect_idx_error(path, SK_ERR_CORRUPT, "truncated: 23 of the 24 data bytes");

        path_of(path, sizeof path, gzip ? "header.gz" : "header");
        write_file(path, gzip, head, 10, NULL, 0);
        expect_idx_error(path, SK_ERR_CORRUPT, "ends inside its header");

        path_of(path, sizeof path, gzip ? "empty.gz" : "empty");
        write_file(path, gzip, NULL, 0, NULL, 0);
        expect_idx_error(path, SK_ERR_CORRUPT, "shorter than the 4-byte IDX magic");

        path_of(path, sizeof path, gzip ? "trailing.gz" : "trailing");
        uint8_t longer[sizeof body + 1] = {0};
        write_file(path, gzip, head, head_size, longer, sizeof longer);
        expect_idx_error(path, SK_ERR_CORRUPT, "trailing bytes after the 24 data bytes");

        path_of(path, sizeof path, gzip ? "zero.gz" : "zero");
        const uint32_t zero[3] = {2, 0, 4};
        write_idx(path, gzip, 3, zero, NULL, 0);
        expect_idx_error(path, SK_ERR_CORRUPT, "dimension 1 is 0");

        path_of(path, sizeof path, gzip ? "huge.gz" : "huge");
        const uint32_t huge[3] = {60000, 65536, 65536};
        write_idx(path, gzip, 3, huge, body, sizeof body);
        expect_idx_error(path, SK_ERR_CORRUPT, "dimension 1 is 65536");

        /* a tiny file claiming a gigabyte is refused before a byte is allocated
         * (found by fuzz_idx: each such input allocated and zeroed 1 GB) */
        path_of(path, sizeof path, gzip ? "claims.gz" : "claims");
        const uint32_t claims[3] = {1000, 1000, 1000};
        write_idx(path, gzip, 3, claims, body, sizeof body);
        expect_idx_error(path, SK_ERR_CORRUPT, "claims 1000000000 bytes of data");
    }

    /* a gzip stream cut in the middle: the data or its CRC trailer missing */
    path_of(path, sizeof path, "good.gz");
    write_idx(path, true, 3, dims, body, sizeof body);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t gz[256];
    size_t gz_size = fread(gz, 1, sizeof gz, f);
    fclose(f);
    assert_true(gz_size > 8 && gz_size < sizeof gz);
    path_of(path, sizeof path, "cut.gz");
    write_file(path, false, gz, gz_size - 4, NULL, 0); /* no length field */
    expect_idx_error(path, SK_ERR_CORRUPT, "gzip stream");

    path_of(path, sizeof path, "no-such-file.gz");
    expect_idx_error(path, SK_ERR_IO, "No such file");
}

/* ------------------------------------------------- Fashion-MNIST loader */

#define SIDE 28
#define TINY_TRAIN 3
#define TINY_TEST 2
static const uint8_t k_tiny_train_labels[TINY_TRAIN] = {3, 0, 9};
static const uint8_t k_tiny_test_labels[TINY_TEST] = {1, 7};

/* Image i's pixel (row, col): a pattern that differs across rows, columns and
 * images, so a pooling that mixes up any of them shows. */
static uint8_t tiny_pixel(int i, int row, int col) {
    return (uint8_t)((row * col + 37 * i + 5 * col + 3 * row * row) % 251);
}

typedef struct tiny_faults {
    int cols;              /* image width written (28 when sound) */
    int train_labels;      /* labels written for the 3 training images */
    uint8_t bad_label;     /* written as the last test label when non-zero */
    bool constant;         /* every pixel 17 */
} tiny_faults;

static const tiny_faults k_sound = {SIDE, TINY_TRAIN, 0, false};

/* Writes the four gzip'd IDX files of a tiny Fashion-MNIST into g_dir/name
 * and puts that folder's path in dir. */
static void write_tiny_set(char *dir, size_t size, const char *name, tiny_faults faults) {
    path_of(dir, size, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    const int counts[2] = {TINY_TRAIN, TINY_TEST};
    const char *prefixes[2] = {"train", "t10k"};
    for (int split = 0; split < 2; split++) {
        int n = counts[split];
        uint8_t images[TINY_TRAIN * SIDE * SIDE];
        for (int i = 0; i < n; i++)
            for (int r = 0; r < SIDE; r++)
                for (int c = 0; c < faults.cols; c++)
                    images[(i * SIDE + r) * faults.cols + c] =
                        faults.constant ? 17 : tiny_pixel(i + split * TINY_TRAIN, r, c);
        char path[512];
        snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, prefixes[split]);
        const uint32_t image_dims[3] = {(uint32_t)n, SIDE, (uint32_t)faults.cols};
        write_idx(path, true, 3, image_dims, images, (size_t)(n * SIDE * faults.cols));

        uint8_t labels[TINY_TRAIN + 1];
        memcpy(labels, split == 0 ? k_tiny_train_labels : k_tiny_test_labels, (size_t)n);
        if (split == 1 && faults.bad_label) labels[n - 1] = faults.bad_label;
        uint32_t num_labels = split == 0 ? (uint32_t)faults.train_labels : (uint32_t)n;
        if (num_labels > TINY_TRAIN) labels[TINY_TRAIN] = 0;
        snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, prefixes[split]);
        write_idx(path, true, 1, &num_labels, labels, num_labels);
    }
}

/* The pooled (mean of the pool x pool square, / 255) features of the tiny
 * set's image i (0..4: train then test), computed pixel by pixel. */
static void tiny_pooled(double *out, int i, int pool) {
    int side = SIDE / pool;
    for (int oy = 0; oy < side; oy++)
        for (int ox = 0; ox < side; ox++) {
            double sum = 0;
            for (int dy = 0; dy < pool; dy++)
                for (int dx = 0; dx < pool; dx++)
                    sum += tiny_pixel(i, oy * pool + dy, ox * pool + dx);
            out[oy * side + ox] = sum / (255.0 * pool * pool);
        }
}

static void expect_close(const float *got, const double *want, int count, const char *what) {
    double max_diff = 0;
    int first_bad = -1;
    for (int k = 0; k < count; k++) {
        double diff = fabs(got[k] - want[k]);
        if (diff > max_diff) max_diff = diff;
        if (diff > 1e-5 && first_bad < 0) first_bad = k;
    }
    if (first_bad >= 0)
        fail_msg("%s: feature %d is %.7f, expected %.7f (max difference %.3g)", what, first_bad,
                 got[first_bad], want[first_bad], max_diff);
}

static void test_fashion_pooling_and_standardisation(void **unused) {
    (void)unused;
    char dir[256];
    write_tiny_set(dir, sizeof dir, "tiny", k_sound);
    const int pools[] = {1, 2, 4, 7};
    for (size_t p = 0; p < sizeof pools / sizeof pools[0]; p++) {
        int pool = pools[p], side = SIDE / pool, dim = side * side;
        morpho_data d;
        if (morpho_data_load_fashion(&d, dir, pool, 1) != SK_OK)
            fail_msg("pool %d: %s", pool, sk_last_error());
        assert_int_equal(d.dim, dim);
        assert_int_equal(d.classes, 10);
        assert_int_equal(d.n_train, 2);
        assert_int_equal(d.n_val, 1);
        assert_int_equal(d.n_test, 2);
        assert_non_null(strstr(d.source, dir));
        assert_int_equal((uintptr_t)d.val_x % 64, 0);
        assert_int_equal((uintptr_t)d.test_x % 64, 0);

        /* pooled images 0..4; the mean and std are of the 2 training images' */
        double want[5][SIDE * SIDE];
        for (int i = 0; i < 5; i++) tiny_pooled(want[i], i, pool);
        double sum = 0, sq = 0;
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < dim; k++) sum += want[i][k];
        double mean = sum / (2.0 * dim);
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < dim; k++) sq += (want[i][k] - mean) * (want[i][k] - mean);
        double std = sqrt(sq / (2.0 * dim));
        for (int i = 0; i < 5; i++)
            for (int k = 0; k < dim; k++) want[i][k] = (want[i][k] - mean) / std;

        char what[64];
        for (int i = 0; i < 2; i++) {
            snprintf(what, sizeof what, "pool %d, train image %d", pool, i);
            expect_close(d.train_x + i * dim, want[i], dim, what);
        }
        snprintf(what, sizeof what, "pool %d, validation image", pool);
        expect_close(d.val_x, want[2], dim, what);
        for (int i = 0; i < 2; i++) {
            snprintf(what, sizeof what, "pool %d, test image %d", pool, i);
            expect_close(d.test_x + i * dim, want[3 + i], dim, what);
        }
        assert_memory_equal(d.train_y, k_tiny_train_labels, 2);
        assert_int_equal(d.val_y[0], k_tiny_train_labels[2]);
        assert_memory_equal(d.test_y, k_tiny_test_labels, 2);
        morpho_data_free(&d);
        assert_null(d.train_x);
    }
}

/* load_fashion fails with status and a message saying each needle. */
static void expect_load_error(const char *dir, int pool, int n_val, sk_status status,
                              const char *needle, const char *needle2) {
    morpho_data d;
    sk_status got = morpho_data_load_fashion(&d, dir, pool, n_val);
    const char *msg = sk_last_error();
    if (got != status || !strstr(msg, needle) || !strstr(msg, needle2))
        fail_msg("%s pool %d n_val %d: got %s '%s', expected %s saying '%s' and '%s'", dir, pool,
                 n_val, sk_status_name(got), msg, sk_status_name(status), needle, needle2);
    assert_null(d.train_x);
}

static void test_fashion_refused(void **unused) {
    (void)unused;
    char dir[256];
    write_tiny_set(dir, sizeof dir, "sound", k_sound);
    const int bad_pools[] = {0, 3, 14, 28, -4};
    for (size_t p = 0; p < sizeof bad_pools / sizeof bad_pools[0]; p++) {
        char needle[32];
        snprintf(needle, sizeof needle, "pool %d is not accepted", bad_pools[p]);
        expect_load_error(dir, bad_pools[p], 1, SK_ERR_INVALID, needle, "expected 1, 2, 4 or 7");
    }
    expect_load_error(dir, 4, 0, SK_ERR_INVALID, "n_val 0 is out of range", "expected 1 to 2");
    expect_load_error(dir, 4, 3, SK_ERR_INVALID, "n_val 3 is out of range", "train-images");

    char missing[256];
    path_of(missing, sizeof missing, "no-such-folder");
    expect_load_error(missing, 4, 1, SK_ERR_IO, missing, "train-images-idx3-ubyte.gz");

    write_tiny_set(dir, sizeof dir, "narrow", (tiny_faults){27, TINY_TRAIN, 0, false});
    expect_load_error(dir, 4, 1, SK_ERR_CORRUPT, "train-images-idx3-ubyte.gz' holds 3 x 28 x 27",
                      "expected images: count x 28 x 28");
    write_tiny_set(dir, sizeof dir, "few-labels", (tiny_faults){SIDE, 2, 0, false});
    expect_load_error(dir, 4, 1, SK_ERR_CORRUPT, "train-labels-idx1-ubyte.gz' holds 2 labels",
                      "one per image");
    write_tiny_set(dir, sizeof dir, "bad-label", (tiny_faults){SIDE, TINY_TRAIN, 10, false});
    expect_load_error(dir, 4, 1, SK_ERR_CORRUPT, "t10k-labels-idx1-ubyte.gz': label 10 of example 1",
                      "expected 0 to 9");
    write_tiny_set(dir, sizeof dir, "constant", (tiny_faults){SIDE, TINY_TRAIN, 0, true});
    expect_load_error(dir, 4, 1, SK_ERR_CORRUPT, "train-images-idx3-ubyte.gz", "cannot be standardised");
}

/* Mean and standard deviation of count floats. */
static void mean_std(const float *x, size_t count, double *mean, double *std) {
    double sum = 0, sq = 0;
    for (size_t i = 0; i < count; i++) sum += x[i];
    *mean = sum / (double)count;
    for (size_t i = 0; i < count; i++) sq += (x[i] - *mean) * (x[i] - *mean);
    *std = sqrt(sq / (double)count);
}

static bool fashion_installed(void) {
    return access(MORPHO_FASHION_DIR "/train-images-idx3-ubyte.gz", R_OK) == 0;
}

static void test_fashion_real(void **unused) {
    (void)unused;
    if (!fashion_installed())
        TEST_SKIP("%s is absent (apt-get install dataset-fashion-mnist)", MORPHO_FASHION_DIR);
    const int n_val = 5000;
    morpho_data d;
    double start = sk_now();
    if (morpho_data_load_fashion(&d, MORPHO_FASHION_DIR, 4, n_val) != SK_OK)
        fail_msg("%s", sk_last_error());
    print_message("loaded %s at pool 4 in %.3f s\n", d.source, sk_now() - start);
    assert_int_equal(d.dim, 49);
    assert_int_equal(d.n_train, 60000 - n_val);
    assert_int_equal(d.n_val, n_val);
    assert_int_equal(d.n_test, 10000);
    int test_counts[10] = {0};
    for (int i = 0; i < d.n_train; i++) assert_true(d.train_y[i] < 10);
    for (int i = 0; i < d.n_val; i++) assert_true(d.val_y[i] < 10);
    for (int i = 0; i < d.n_test; i++) test_counts[d.test_y[i]]++;
    for (int c = 0; c < 10; c++) assert_int_equal(test_counts[c], 1000); /* balanced by design */

    double mean, std;
    mean_std(d.train_x, (size_t)d.n_train * 49, &mean, &std);
    if (fabs(mean) > 1e-4 || fabs(std - 1) > 1e-4)
        fail_msg("training features: mean %.6f std %.6f, expected 0 and 1", mean, std);
    /* the other splits share the training pair, so are only close to 0 and 1 */
    mean_std(d.test_x, (size_t)d.n_test * 49, &mean, &std);
    if (fabs(mean) > 0.05 || fabs(std - 1) > 0.05)
        fail_msg("test features: mean %.6f std %.6f, expected near 0 and 1", mean, std);
    morpho_data_free(&d);
}

/* ------------------------------------------------------- synthetic task */

/* A classifier trained here by plain SGD on softmax cross-entropy: linear
 * when hidden is 0, else one ReLU layer of hidden units. Returns its
 * accuracy on the test split. Written out in full so that the check does not
 * lean on the library it tests. */
#define MAX_HIDDEN 64
static double fit_and_score(const morpho_data *d, int hidden, int epochs, uint64_t seed) {
    const int dim = d->dim, classes = d->classes, in = hidden ? hidden : dim;
    float *w1 = calloc((size_t)(dim * MAX_HIDDEN), sizeof(float)); /* (hidden, dim) */
    float *b1 = calloc(MAX_HIDDEN, sizeof(float));
    float *w2 = calloc((size_t)(in * classes), sizeof(float)); /* (classes, in) */
    float b2[10] = {0};
    assert_true(w1 && b1 && w2 && hidden <= MAX_HIDDEN && classes == 10);
    uint64_t rng = seed;
    for (int k = 0; k < dim * hidden; k++)
        w1[k] = (float)((sk_rng_double(&rng) * 2 - 1) * sqrt(6.0 / dim));
    const float lr = 0.02f;
    float h[MAX_HIDDEN], dh[MAX_HIDDEN], logits[10];
    for (int epoch = 0; epoch <= epochs; epoch++) {
        bool scoring = epoch == epochs;
        const float *xs = scoring ? d->test_x : d->train_x;
        const uint8_t *ys = scoring ? d->test_y : d->train_y;
        int n = scoring ? d->n_test : d->n_train, correct = 0;
        for (int step = 0; step < n; step++) {
            int i = scoring ? step : (int)sk_rng_below(&rng, (uint32_t)n);
            const float *x = xs + (size_t)i * dim;
            const float *a = x; /* the output layer's input */
            if (hidden) {
                for (int j = 0; j < hidden; j++) {
                    float z = b1[j];
                    for (int k = 0; k < dim; k++) z += w1[j * dim + k] * x[k];
                    h[j] = z > 0 ? z : 0;
                }
                a = h;
            }
            float max = -1e30f;
            for (int c = 0; c < classes; c++) {
                logits[c] = b2[c];
                for (int k = 0; k < in; k++) logits[c] += w2[c * in + k] * a[k];
                if (logits[c] > max) max = logits[c];
            }
            int best = 0;
            for (int c = 1; c < classes; c++)
                if (logits[c] > logits[best]) best = c;
            correct += best == ys[i];
            if (scoring) continue;
            float total = 0;
            for (int c = 0; c < classes; c++) total += logits[c] = expf(logits[c] - max);
            for (int j = 0; j < hidden; j++) dh[j] = 0;
            for (int c = 0; c < classes; c++) {
                float g = logits[c] / total - (c == ys[i]); /* dloss/dlogit */
                for (int k = 0; k < hidden; k++) dh[k] += g * w2[c * in + k];
                for (int k = 0; k < in; k++) w2[c * in + k] -= lr * g * a[k];
                b2[c] -= lr * g;
            }
            for (int j = 0; j < hidden; j++) {
                if (h[j] <= 0) continue;
                for (int k = 0; k < dim; k++) w1[j * dim + k] -= lr * dh[j] * x[k];
                b1[j] -= lr * dh[j];
            }
        }
        if (scoring) {
            free(w1), free(b1), free(w2);
            return (double)correct / n;
        }
    }
    return 0;
}

/* A linear classifier plateaus far below an MLP (the task's reason to be). */
static void test_synthetic_needs_a_hidden_layer(void **unused) {
    (void)unused;
    morpho_data d;
    if (morpho_data_synthetic(&d, 7, 4000, 100, 2000, 11) != SK_OK) fail_msg("%s", sk_last_error());
    double linear = fit_and_score(&d, 0, 20, 1), mlp = fit_and_score(&d, 32, 20, 1);
    print_message("synthetic task, test accuracy after 20 epochs: linear %.3f, MLP (32 ReLU) "
                  "%.3f\n",
                  linear, mlp);
    if (linear > 0.4 || mlp < 0.95)
        fail_msg("linear %.3f (expected at most 0.4), MLP %.3f (expected at least 0.95)", linear,
                 mlp);
    morpho_data_free(&d);
}

static void test_synthetic_shapes_and_determinism(void **unused) {
    (void)unused;
    morpho_data a, b, c;
    assert_int_equal(morpho_data_synthetic(&a, 4, 3000, 500, 1000, 5), SK_OK);
    assert_int_equal(morpho_data_synthetic(&b, 4, 3000, 500, 1000, 5), SK_OK);
    assert_int_equal(morpho_data_synthetic(&c, 4, 2000, 500, 1000, 6), SK_OK);
    assert_int_equal(a.dim, 49);
    assert_int_equal(a.classes, 10);
    assert_int_equal(a.n_train, 3000);
    assert_int_equal(a.n_val, 500);
    assert_int_equal(a.n_test, 1000);
    assert_non_null(strstr(a.source, "synthetic"));
    /* the same seed, the same bytes; another seed, other data */
    assert_memory_equal(a.train_x, b.train_x, sizeof(float) * 3000 * 49);
    assert_memory_equal(a.test_x, b.test_x, sizeof(float) * 1000 * 49);
    assert_memory_equal(a.val_y, b.val_y, 500);
    assert_true(memcmp(a.test_y, c.test_y, 1000) != 0);

    int counts[10] = {0};
    for (int i = 0; i < a.n_train; i++) {
        assert_true(a.train_y[i] < 10);
        counts[a.train_y[i]]++;
    }
    for (int k = 0; k < 10; k++) assert_in_range(counts[k], 240, 360); /* 300 expected */
    double mean, std;
    mean_std(a.train_x, (size_t)a.n_train * 49, &mean, &std);
    if (fabs(mean) > 1e-4 || fabs(std - 1) > 1e-4)
        fail_msg("training features: mean %.6f std %.6f, expected 0 and 1", mean, std);
    morpho_data_free(&a);
    morpho_data_free(&b);
    morpho_data_free(&c);

    /* changing n_train leaves the validation and test examples alone */
    morpho_data d, e;
    assert_int_equal(morpho_data_synthetic(&d, 7, 100, 50, 50, 9), SK_OK);
    assert_int_equal(morpho_data_synthetic(&e, 7, 200, 50, 50, 9), SK_OK);
    assert_memory_equal(d.val_y, e.val_y, 50);
    assert_memory_equal(d.test_y, e.test_y, 50);
    morpho_data_free(&d);
    morpho_data_free(&e);

    assert_int_equal(morpho_data_synthetic(&d, 3, 100, 50, 50, 9), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "pool 3"));
    assert_int_equal(morpho_data_synthetic(&d, 4, 100, 0, 50, 9), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "100, 0, 50"));
}

/* ------------------------------------------------------- the shared copy */

/* Whether the last release really freed the copy: ASan poisons freed memory;
 * elsewhere glibc's count of bytes in use drops by the copy's size. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
static size_t heap_in_use(void) { return 0; }
static void expect_freed(const morpho_data *d, size_t before, size_t bytes) {
    (void)before, (void)bytes;
    assert_true(__asan_address_is_poisoned(d));
}
#else
#include <malloc.h>
static size_t heap_in_use(void) {
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}
static void expect_freed(const morpho_data *d, size_t before, size_t bytes) {
    (void)d;
    size_t after = heap_in_use();
    if (after > before || before - after < bytes)
        fail_msg("the last release freed %zd bytes, expected at least %zu", (ssize_t)(before - after),
                 bytes);
}
#endif

static int g_warnings;
static char g_warning[1024];

static void catch_log(int level, const char *message, void *user) {
    (void)user;
    if (level < 1) return;
    g_warnings++;
    snprintf(g_warning, sizeof g_warning, "%s", message);
}

static void test_shared_copy_counted(void **unused) {
    (void)unused;
    const morpho_data *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(morpho_data_acquire(&a, "synthetic", 7, 1000), SK_OK);
    assert_int_equal(morpho_data_acquire(&b, "synthetic", 7, 1000), SK_OK);
    assert_ptr_equal(a, b);
    assert_int_equal(morpho_data_acquire(&c, "synthetic", 7, 2000), SK_OK); /* another key */
    assert_ptr_not_equal(a, c);
    /* Fashion-MNIST's shapes, and the documented seed */
    assert_int_equal(a->n_train, 59000);
    assert_int_equal(a->n_val, 1000);
    assert_int_equal(a->n_test, 10000);
    assert_int_equal(a->dim, 16);
    morpho_data direct;
    assert_int_equal(morpho_data_synthetic(&direct, 7, 59000, 1000, 10000, MORPHO_SYNTHETIC_SEED),
                     SK_OK);
    assert_memory_equal(direct.test_x, a->test_x, sizeof(float) * 10000 * 16);
    morpho_data_free(&direct);
    morpho_data_release(a);
    assert_int_equal(b->n_val, 1000); /* still held once */
    size_t before = heap_in_use();
    morpho_data_release(b);
    expect_freed(b, before, sizeof(float) * 70000 * 16 + 70000);
    morpho_data_release(c);
    morpho_data_release(NULL);

    /* a folder of IDX files */
    char dir[256];
    write_tiny_set(dir, sizeof dir, "shared", k_sound);
    assert_int_equal(morpho_data_acquire(&a, dir, 2, 1), SK_OK);
    assert_int_equal(a->n_train, 2);
    assert_int_equal(a->dim, 196);
    assert_non_null(strstr(a->source, dir));
    morpho_data_release(a);

    /* refusals leave nothing held */
    assert_int_equal(morpho_data_acquire(&a, "synthetic", 5, 1000), SK_ERR_INVALID);
    assert_null(a);
    assert_non_null(strstr(sk_last_error(), "pool 5"));
    assert_int_equal(morpho_data_acquire(&a, "synthetic", 7, 60000), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "n_val 60000"));
    assert_int_equal(morpho_data_acquire(&a, "mnist-digits", 4, 1000), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "'mnist-digits' is not 'fashion', 'synthetic', 'auto'"));
    assert_int_equal(morpho_data_acquire(&a, "", 4, 1000), SK_ERR_INVALID);
    path_of(dir, sizeof dir, "empty-folder");
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(morpho_data_acquire(&a, dir, 4, 1), SK_ERR_IO);
    assert_non_null(strstr(sk_last_error(), "train-images-idx3-ubyte.gz"));
}

/* "auto" is the package when installed, else the synthetic task and a warning
 * saying how to install it; "fashion" without the package is an error naming it. */
static void test_shared_auto_and_fashion(void **unused) {
    (void)unused;
    bool installed = access(MORPHO_FASHION_DIR "/train-images-idx3-ubyte.gz", R_OK) == 0;
    const morpho_data *a = NULL, *f = NULL;
    g_warnings = 0;
    sk_set_log_callback(catch_log, NULL);
    sk_status auto_status = morpho_data_acquire(&a, "auto", 4, 5000);
    sk_status fashion_status = morpho_data_acquire(&f, "fashion", 4, 5000);
    sk_set_log_callback(NULL, NULL);
    assert_int_equal(auto_status, SK_OK);
    if (installed) {
        assert_int_equal(fashion_status, SK_OK);
        assert_ptr_equal(a, f);
        assert_non_null(strstr(a->source, "fashion-mnist"));
        assert_int_equal(g_warnings, 0);
        morpho_data_release(f);
    } else {
        print_message("dataset-fashion-mnist is absent: checking the fallback\n");
        assert_non_null(strstr(a->source, "synthetic"));
        assert_int_equal(g_warnings, 1);
        assert_non_null(strstr(g_warning, "apt-get install dataset-fashion-mnist"));
        assert_int_equal(fashion_status, SK_ERR_IO);
        assert_null(f);
        assert_non_null(strstr(sk_last_error(), "dataset-fashion-mnist"));
    }
    morpho_data_release(a);
}

typedef struct racer {
    pthread_t thread;
    const morpho_data *data;
    sk_status status;
} racer;

static void *race_acquire(void *arg) {
    racer *r = arg;
    r->status = morpho_data_acquire(&r->data, "synthetic", 4, 500);
    return NULL;
}

static void test_shared_copy_across_threads(void **unused) {
    (void)unused;
    racer racers[4];
    for (int t = 0; t < 4; t++) assert_int_equal(pthread_create(&racers[t].thread, NULL, race_acquire, &racers[t]), 0);
    for (int t = 0; t < 4; t++) assert_int_equal(pthread_join(racers[t].thread, NULL), 0);
    for (int t = 0; t < 4; t++) {
        assert_int_equal(racers[t].status, SK_OK);
        assert_ptr_equal(racers[t].data, racers[0].data);
    }
    for (int t = 0; t < 4; t++) morpho_data_release(racers[t].data);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner-test-morpho-data-XXXXXX");
    if (!mkdtemp(g_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idx_good_files),
        cmocka_unit_test(test_idx_damaged_files),
        cmocka_unit_test(test_fashion_pooling_and_standardisation),
        cmocka_unit_test(test_fashion_refused),
        cmocka_unit_test(test_fashion_real),
        cmocka_unit_test(test_synthetic_needs_a_hidden_layer),
        cmocka_unit_test(test_synthetic_shapes_and_determinism),
        cmocka_unit_test(test_shared_copy_counted),
        cmocka_unit_test(test_idx_regular_files_only),
        cmocka_unit_test(test_shared_auto_and_fashion),
        cmocka_unit_test(test_shared_copy_across_threads),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0) return 1;
    return rc;
}
