/*
 * skinner/safetensors.h: safetensors files (huggingface/safetensors), as
 * skinner writes its checkpoints and a module its own models (the Prover
 * module's KGE checkpoints): an 8-byte little-endian header length, a JSON
 * header naming each tensor's dtype, shape and byte range, then the raw
 * data, little-endian. F32, F64, I32, I64, U8 and U64 tensors. Writes go to
 * a temporary file that is fsynced and renamed, so a crash never leaves a
 * torn file in place of a good one; reads validate the whole layout and the
 * checksums skinner's writer adds.
 *
 *     sk_st_tensor t = {.name = "w", .ndim = 1, .shape = {3}, .data = weights};
 *     if (sk_st_write("model.safetensors", &t, 1, NULL, 0) != SK_OK) ...;
 *     sk_st_file *file;
 *     if (sk_st_open(&file, "model.safetensors") == SK_OK) {
 *         const sk_st_tensor *w = sk_st_find(file, "w"); // w->data until sk_st_close
 *         sk_st_close(file);
 *     }
 */
#ifndef SKINNER_SAFETENSORS_H
#define SKINNER_SAFETENSORS_H

#include "env.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SK_ST_MAX_DIMS 4
#define SK_ST_CRC_KEY "skinner.crc32" /* metadata: CRC-32 of the data section, hex */
/* metadata: CRC-32 of the whole file (length, header with this value read as
 * "00000000", data), hex; required with SK_ST_CRC_KEY on load (see sk_st_open) */
#define SK_ST_CHECKSUM_KEY "skinner.checksum"

typedef enum sk_st_dtype {
    SK_ST_F32 = 0, /* the default of a zero-initialised tensor */
    SK_ST_F64,
    SK_ST_I32,
    SK_ST_I64,
    SK_ST_U8,
    SK_ST_U64,
} sk_st_dtype;

/* Bytes per element, and the format's name for it ("F32", ...). */
SK_API size_t sk_st_dtype_size(sk_st_dtype dtype);
SK_API const char *sk_st_dtype_name(sk_st_dtype dtype);

typedef struct sk_st_tensor {
    const char *name;
    int ndim;
    int64_t shape[SK_ST_MAX_DIMS];
    const void *data; /* on write: the caller's; on read: inside the loaded file, and
                       * aligned to the element only if the writer ordered it so
                       * (skinner's does): copy with memcpy */
    sk_st_dtype dtype;
    size_t offset; /* on read: where the data starts in the data section */
} sk_st_tensor;

typedef struct sk_st_meta {
    const char *key, *value;
} sk_st_meta;

/* Writes the tensors (names unique, data the caller's) and metadata to path
 * atomically (a temporary file, fsynced and renamed), with the checksums
 * sk_st_open verifies. SK_ERR_IO names the path on failure. */
SK_API sk_status sk_st_write(const char *path, const sk_st_tensor *tensors, int num_tensors,
                             const sk_st_meta *meta, int num_meta);

/* A loaded file: tensors and metadata point into it until sk_st_close. */
typedef struct sk_st_file sk_st_file;

/* Validates the whole layout (header JSON, dtypes, shapes against byte ranges,
 * ranges inside the file, no overlap) and the checksums it carries.
 * SK_ERR_CORRUPT names the problem. */
SK_API sk_status sk_st_open(sk_st_file **out, const char *path);
SK_API void sk_st_close(sk_st_file *file);
/* A skinner checkpoint must carry a checksum, or deleting the key would
 * switch the check off: SK_OK with the whole-file one; SK_OK with a warning
 * for a file written before it (the data's only: its header is unverified);
 * SK_ERR_CORRUPT with neither. */
SK_API sk_status sk_st_require_checksum(const sk_st_file *file, const char *path);
/* The tensor called name, or NULL. */
SK_API const sk_st_tensor *sk_st_find(const sk_st_file *file, const char *name);
/* A metadata value, or NULL. */
SK_API const char *sk_st_meta_get(const sk_st_file *file, const char *key);

#ifdef __cplusplus
}
#endif
#endif /* SKINNER_SAFETENSORS_H */
