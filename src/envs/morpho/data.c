/*
 * Morpho-v0's data: the IDX reader, the Fashion-MNIST loader, the synthetic
 * task and the process-wide shared copy. See data.h for the contracts.
 */
#include "data.h"

#include "../../core/core.h"

#include <errno.h>
#include <string.h>
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

static sk_status idx_read_open(gzFile file, const char *path, uint8_t **data, int *ndim,
                               int dims[3]) {
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
    gzFile file = gzopen(path, "rb");
    if (!file) {
        int err = errno;
        return sk_fail(SK_ERR_IO, "cannot open IDX file '%s': %s", path,
                       err ? strerror(err) : "out of memory");
    }
    gzbuffer(file, IDX_GZ_BUFFER);
    sk_status status = idx_read_open(file, path, data, ndim, dims);
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
