/*
 * Morpho-v0's data: the IDX reader on good and damaged files written here
 * (raw and gzip), pooling and standardisation against values computed here
 * from hand-made images, the real Fashion-MNIST when its package is
 * installed, the synthetic task's difficulty, and the shared copy's
 * reference counting.
 */
#include "test_util.h"

#include "core/core.h"
#include "envs/morpho/data.h"

#include <math.h>
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

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner-test-morpho-data-XXXXXX");
    if (!mkdtemp(g_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idx_good_files),
        cmocka_unit_test(test_idx_damaged_files),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0) return 1;
    return rc;
}
