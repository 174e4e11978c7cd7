#define _GNU_SOURCE /* memmem */
#include "safetensors.h"

#include "../core/core.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_HEADER_BYTES (100u << 20) /* the format's own limit */

/* Env state arrays are written with their sk_array_type cast to the dtype
 * (src/train/checkpoint.c), so the two enums must agree value for value. */
_Static_assert((int)SK_ARRAY_F32 == (int)SK_ST_F32, "sk_array_type F32 != sk_st_dtype F32");
_Static_assert((int)SK_ARRAY_F64 == (int)SK_ST_F64, "sk_array_type F64 != sk_st_dtype F64");
_Static_assert((int)SK_ARRAY_I32 == (int)SK_ST_I32, "sk_array_type I32 != sk_st_dtype I32");
_Static_assert((int)SK_ARRAY_I64 == (int)SK_ST_I64, "sk_array_type I64 != sk_st_dtype I64");
_Static_assert((int)SK_ARRAY_U8 == (int)SK_ST_U8, "sk_array_type U8 != sk_st_dtype U8");
_Static_assert((int)SK_ARRAY_U64 == (int)SK_ST_U64, "sk_array_type U64 != sk_st_dtype U64");

struct sk_st_file {
    char *bytes;
    size_t size;
    cJSON *header;
    int num_tensors;
    sk_st_tensor *tensors;
};

static const char *const g_dtype_names[] = {"F32", "F64", "I32", "I64", "U8", "U64"};
static const size_t g_dtype_sizes[] = {4, 8, 4, 8, 1, 8};
#define NUM_DTYPES (sizeof g_dtype_sizes / sizeof g_dtype_sizes[0])

static bool dtype_known(sk_st_dtype dtype) { return (unsigned)dtype < NUM_DTYPES; }

/* 0 and "unknown" for a dtype outside the table (a caller's bad value, e.g. an
 * env's state array type): never a read past it. */
size_t sk_st_dtype_size(sk_st_dtype dtype) { return dtype_known(dtype) ? g_dtype_sizes[dtype] : 0; }
const char *sk_st_dtype_name(sk_st_dtype dtype) {
    return dtype_known(dtype) ? g_dtype_names[dtype] : "unknown";
}

static size_t tensor_bytes(const sk_st_tensor *t) {
    size_t count = 1;
    for (int d = 0; d < t->ndim; d++) count *= (size_t)t->shape[d];
    return count * sk_st_dtype_size(t->dtype);
}

/* The whole-file checksum covers the length, the header (with its own value
 * read as CHECKSUM_PLACEHOLDER) and the data, so an edited header is caught
 * as surely as a flipped data bit. */
#define CHECKSUM_PLACEHOLDER "00000000"

/* Where the 8 hex digits of the checksum entry `"KEY":"value"` start in the
 * header text, or NULL if it does not hold that entry exactly once. */
static char *find_checksum(char *header, size_t size, const char *value) {
    char needle[64];
    int n = snprintf(needle, sizeof needle, "\"%s\":\"%s\"", SK_ST_CHECKSUM_KEY, value);
    if (n < 0 || (size_t)n >= sizeof needle || strlen(value) != 8) return NULL;
    char *found = memmem(header, size, needle, (size_t)n);
    if (!found) return NULL;
    size_t rest = size - (size_t)(found - header) - 1;
    if (memmem(found + 1, rest, needle, (size_t)n)) return NULL;
    return found + n - 9;
}

static sk_status write_sorted(const char *path, const sk_st_tensor *tensors, int num_tensors,
                              const sk_st_meta *meta, int num_meta);

/* Wider elements first: with the header padded to 8 bytes, every tensor then
 * starts aligned to its element size (the format itself has no padding). */
static int compare_width(const void *a, const void *b) {
    const sk_st_tensor *x = *(const sk_st_tensor *const *)a, *y = *(const sk_st_tensor *const *)b;
    size_t wx = sk_st_dtype_size(x->dtype), wy = sk_st_dtype_size(y->dtype);
    if (wx != wy) return wx > wy ? -1 : 1;
    return x < y ? -1 : (x > y); /* stable: keep the caller's order within a width */
}

sk_status sk_st_write(const char *path, const sk_st_tensor *tensors_in, int num_tensors,
                      const sk_st_meta *meta, int num_meta) {
    for (int i = 0; i < num_tensors; i++)
        if (!dtype_known(tensors_in[i].dtype))
            return sk_fail(SK_ERR_INVALID, "cannot write '%s': tensor '%s' has dtype %d (expected "
                                           "one of F32, F64, I32, I64, U8, U64)",
                           path, tensors_in[i].name ? tensors_in[i].name : "(no name)",
                           (int)tensors_in[i].dtype);
    const sk_st_tensor **order = malloc((size_t)(num_tensors ? num_tensors : 1) * sizeof *order);
    sk_st_tensor *tensors = malloc((size_t)(num_tensors ? num_tensors : 1) * sizeof *tensors);
    if (!order || !tensors) {
        free(order);
        free(tensors);
        return sk_fail(SK_ERR_NOMEM, "out of memory writing '%s'", path);
    }
    for (int i = 0; i < num_tensors; i++) order[i] = &tensors_in[i];
    qsort(order, (size_t)num_tensors, sizeof *order, compare_width);
    for (int i = 0; i < num_tensors; i++) tensors[i] = *order[i];
    free(order);
    sk_status status = write_sorted(path, tensors, num_tensors, meta, num_meta);
    free(tensors);
    return status;
}

static sk_status write_sorted(const char *path, const sk_st_tensor *tensors, int num_tensors,
                              const sk_st_meta *meta, int num_meta) {
    cJSON *header = cJSON_CreateObject();
    cJSON *metadata = cJSON_AddObjectToObject(header, "__metadata__");
    for (int i = 0; i < num_meta; i++) cJSON_AddStringToObject(metadata, meta[i].key, meta[i].value);
    /* A checksum of the data section, so a flipped bit is caught on load;
     * other safetensors readers ignore unknown metadata. */
    uLong crc = crc32(0L, Z_NULL, 0);
    for (int i = 0; i < num_tensors; i++)
        crc = crc32_z(crc, (const Bytef *)tensors[i].data, tensor_bytes(&tensors[i]));
    char crc_text[16];
    snprintf(crc_text, sizeof crc_text, "%08lx", (unsigned long)crc);
    cJSON_AddStringToObject(metadata, SK_ST_CRC_KEY, crc_text);
    /* the whole file's checksum: filled in below, once the header is text */
    cJSON_AddStringToObject(metadata, SK_ST_CHECKSUM_KEY, CHECKSUM_PLACEHOLDER);
    size_t offset = 0;
    for (int i = 0; i < num_tensors; i++) {
        cJSON *entry = cJSON_AddObjectToObject(header, tensors[i].name);
        cJSON_AddStringToObject(entry, "dtype", sk_st_dtype_name(tensors[i].dtype));
        cJSON *shape = cJSON_AddArrayToObject(entry, "shape");
        for (int d = 0; d < tensors[i].ndim; d++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)tensors[i].shape[d]));
        cJSON *offsets = cJSON_AddArrayToObject(entry, "data_offsets");
        cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)offset));
        offset += tensor_bytes(&tensors[i]);
        cJSON_AddItemToArray(offsets, cJSON_CreateNumber((double)offset));
    }
    char *json = cJSON_PrintUnformatted(header);
    cJSON_Delete(header);
    if (!json) return sk_fail(SK_ERR_NOMEM, "out of memory writing '%s'", path);
    /* pad the header with spaces to 8 bytes so the data is aligned */
    size_t json_len = strlen(json);
    size_t padded = (json_len + 7) & ~(size_t)7;
    char *header_bytes = malloc(padded);
    if (!header_bytes) {
        free(json);
        return sk_fail(SK_ERR_NOMEM, "out of memory writing '%s'", path);
    }
    memcpy(header_bytes, json, json_len);
    memset(header_bytes + json_len, ' ', padded - json_len);
    free(json);
    uint8_t len_bytes[8];
    for (int b = 0; b < 8; b++) len_bytes[b] = (uint8_t)((uint64_t)padded >> (8 * b));
    char *checksum_value = find_checksum(header_bytes, padded, CHECKSUM_PLACEHOLDER);
    SK_ASSERT(checksum_value);
    uLong whole = crc32_z(crc32(0L, Z_NULL, 0), len_bytes, 8);
    whole = crc32_z(whole, (const Bytef *)header_bytes, padded);
    for (int i = 0; i < num_tensors; i++)
        whole = crc32_z(whole, (const Bytef *)tensors[i].data, tensor_bytes(&tensors[i]));
    char whole_text[16];
    snprintf(whole_text, sizeof whole_text, "%08lx", (unsigned long)whole);
    memcpy(checksum_value, whole_text, 8);

    char tmp_path[4096];
    snprintf(tmp_path, sizeof tmp_path, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        free(header_bytes);
        return sk_fail(SK_ERR_IO, "cannot create '%s': %s", tmp_path, strerror(errno));
    }
    bool ok = sk_write_all(fd, len_bytes, 8) && sk_write_all(fd, header_bytes, padded);
    free(header_bytes);
    for (int i = 0; ok && i < num_tensors; i++) /* x86-64 is little-endian, as the format */
        ok = sk_write_all(fd, tensors[i].data, tensor_bytes(&tensors[i]));
    ok = ok && fsync(fd) == 0;
    int saved_errno = ok ? 0 : errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        saved_errno = errno;
    }
    if (ok && rename(tmp_path, path) != 0) {
        ok = false;
        saved_errno = errno;
    }
    if (!ok) {
        unlink(tmp_path);
        return sk_fail(SK_ERR_IO, "cannot write '%s': %s", path, strerror(saved_errno));
    }
    /* make the rename itself durable */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    int dir_fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY);
    if (dir_fd >= 0) {
        fsync(dir_fd);
        close(dir_fd);
    }
    return SK_OK;
}

void sk_st_close(sk_st_file *file) {
    if (!file) return;
    cJSON_Delete(file->header);
    free(file->tensors);
    free(file->bytes);
    free(file);
}

static sk_status corrupt(sk_st_file *file, const char *path, const char *what) {
    sk_st_close(file);
    return sk_fail(SK_ERR_CORRUPT, "checkpoint '%s' is corrupt: %s", path, what);
}

static sk_status read_whole(const char *path, char **bytes, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return sk_fail(SK_ERR_IO, "cannot open checkpoint '%s': %s", path, strerror(errno));
    struct stat st;
    bool stat_ok = fstat(fileno(f), &st) == 0;
    if (!stat_ok || !S_ISREG(st.st_mode)) {
        fclose(f);
        return sk_fail(SK_ERR_IO, "cannot read checkpoint '%s': %s", path,
                       stat_ok && S_ISDIR(st.st_mode)
                           ? "it is a directory (expected a .safetensors file)"
                           : "not a regular file");
    }
    size_t length = (size_t)st.st_size;
    *bytes = malloc(length ? length : 1);
    if (!*bytes) {
        fclose(f);
        return sk_fail(SK_ERR_NOMEM, "out of memory reading '%s' (%zu bytes)", path, length);
    }
    *size = fread(*bytes, 1, length, f);
    fclose(f);
    if (*size != length) {
        free(*bytes);
        return sk_fail(SK_ERR_IO, "cannot read checkpoint '%s': short read", path);
    }
    return SK_OK;
}

static int compare_offset(const void *a, const void *b) {
    size_t x = ((const sk_st_tensor *)a)->offset, y = ((const sk_st_tensor *)b)->offset;
    return x < y ? -1 : (x > y);
}

/* Checks whichever checksums the file carries (the whole-file one, the
 * data's); sk_st_require_checksum says whether it must carry one. */
static sk_status check_checksums(const sk_st_file *file, const char *path, size_t data_start,
                                 size_t data_size) {
    const Bytef *data = (const Bytef *)file->bytes + data_start;
    const char *whole = sk_st_meta_get(file, SK_ST_CHECKSUM_KEY);
    if (whole) {
        size_t header_size = data_start - 8;
        char *copy = malloc(header_size + 1);
        if (!copy) return sk_fail(SK_ERR_NOMEM, "out of memory");
        memcpy(copy, file->bytes + 8, header_size);
        char *value = find_checksum(copy, header_size, whole);
        bool ok = value != NULL;
        if (ok) {
            memcpy(value, CHECKSUM_PLACEHOLDER, 8);
            uLong crc = crc32_z(crc32(0L, Z_NULL, 0), (const Bytef *)file->bytes, 8);
            crc = crc32_z(crc, (const Bytef *)copy, header_size);
            crc = crc32_z(crc, data, data_size);
            char text[16];
            snprintf(text, sizeof text, "%08lx", (unsigned long)crc);
            ok = strcmp(text, whole) == 0;
        }
        free(copy);
        if (!ok)
            return sk_fail(SK_ERR_CORRUPT,
                           "checkpoint '%s' is corrupt: checksum mismatch over its header and data "
                           "(the file was altered or damaged)",
                           path);
    }
    const char *stored_crc = sk_st_meta_get(file, SK_ST_CRC_KEY);
    if (stored_crc) {
        uLong crc = crc32_z(crc32(0L, Z_NULL, 0), data, data_size);
        char text[16];
        snprintf(text, sizeof text, "%08lx", (unsigned long)crc);
        if (strcmp(text, stored_crc) != 0)
            return sk_fail(SK_ERR_CORRUPT,
                           "checkpoint '%s' is corrupt: data checksum mismatch (the file was "
                           "altered or damaged)",
                           path);
    }
    return SK_OK;
}

sk_status sk_st_require_checksum(const sk_st_file *file, const char *path) {
    if (sk_st_meta_get(file, SK_ST_CHECKSUM_KEY)) return SK_OK;
    if (!sk_st_meta_get(file, SK_ST_CRC_KEY))
        return sk_fail(SK_ERR_CORRUPT,
                       "checkpoint '%s' has no checksum (metadata %s or %s): skinner writes one "
                       "into every checkpoint, so the file was edited or not written by skinner",
                       path, SK_ST_CHECKSUM_KEY, SK_ST_CRC_KEY);
    sk_log(1, "checkpoint '%s' was written before skinner checked whole files: its data "
              "checksum matches, its header is not verified",
           path);
    return SK_OK;
}

sk_status sk_st_open(sk_st_file **out, const char *path) {
    sk_st_file *file = calloc(1, sizeof *file);
    if (!file) return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_status status = read_whole(path, &file->bytes, &file->size);
    if (status != SK_OK) {
        free(file);
        return status;
    }
    if (file->size < 8) return corrupt(file, path, "shorter than its 8-byte header length");
    uint64_t header_len = 0;
    for (int b = 0; b < 8; b++) header_len |= (uint64_t)(uint8_t)file->bytes[b] << (8 * b);
    if (header_len > MAX_HEADER_BYTES || header_len > file->size - 8)
        return corrupt(file, path, "header length runs past the end of the file (truncated?)");
    file->header = cJSON_ParseWithLength(file->bytes + 8, (size_t)header_len);
    if (!cJSON_IsObject(file->header)) return corrupt(file, path, "header is not valid JSON");
    size_t data_start = 8 + (size_t)header_len;
    size_t data_size = file->size - data_start;

    int count = 0;
    for (cJSON *item = file->header->child; item; item = item->next)
        if (strcmp(item->string, "__metadata__") != 0) count++;
    file->tensors = calloc((size_t)(count ? count : 1), sizeof(sk_st_tensor));
    if (!file->tensors) return corrupt(file, path, "out of memory");
    size_t expected_offset = 0;
    char what[512];
    for (cJSON *item = file->header->child; item; item = item->next) {
        if (strcmp(item->string, "__metadata__") == 0) continue;
        sk_st_tensor *t = &file->tensors[file->num_tensors];
        t->name = item->string;
        cJSON *dtype = cJSON_GetObjectItemCaseSensitive(item, "dtype");
        cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
        cJSON *offsets = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
        int dtype_index = -1;
        for (size_t k = 0; cJSON_IsString(dtype) && k < NUM_DTYPES; k++)
            if (strcmp(dtype->valuestring, g_dtype_names[k]) == 0) dtype_index = (int)k;
        if (dtype_index < 0) {
            snprintf(what, sizeof what, "tensor '%s' has an unsupported dtype", t->name);
            return corrupt(file, path, what);
        }
        t->dtype = (sk_st_dtype)dtype_index;
        if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > SK_ST_MAX_DIMS ||
            !cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2) {
            snprintf(what, sizeof what, "tensor '%s' has a bad shape or data_offsets", t->name);
            return corrupt(file, path, what);
        }
        size_t elements = 1;
        t->ndim = cJSON_GetArraySize(shape);
        bool shape_ok = true;
        for (int d = 0; d < t->ndim && shape_ok; d++) {
            cJSON *dim_item = cJSON_GetArrayItem(shape, d);
            double dim = cJSON_IsNumber(dim_item) ? dim_item->valuedouble : -1.0;
            shape_ok = dim >= 0 && dim <= (double)data_size && dim == (double)(int64_t)dim &&
                       !__builtin_mul_overflow(elements, (size_t)dim, &elements);
            if (shape_ok) t->shape[d] = (int64_t)dim;
        }
        size_t element = sk_st_dtype_size(t->dtype), bytes = 0;
        if (!shape_ok || __builtin_mul_overflow(elements, element, &bytes) || bytes > data_size) {
            snprintf(what, sizeof what, "tensor '%s' has a bad shape", t->name);
            return corrupt(file, path, what);
        }
        cJSON *begin_item = cJSON_GetArrayItem(offsets, 0), *end_item = cJSON_GetArrayItem(offsets, 1);
        double begin = cJSON_IsNumber(begin_item) ? begin_item->valuedouble : -1.0;
        double end = cJSON_IsNumber(end_item) ? end_item->valuedouble : -1.0;
        if (begin < 0 || end < begin || end > (double)data_size || begin != (double)(size_t)begin ||
            end != (double)(size_t)end || (size_t)(end - begin) != bytes) {
            snprintf(what, sizeof what,
                     "tensor '%s' byte range [%.0f, %.0f) does not fit its shape or the file "
                     "(%zu data bytes)",
                     t->name, begin, end, data_size);
            return corrupt(file, path, what);
        }
        t->offset = (size_t)begin;
        t->data = file->bytes + data_start + (size_t)begin;
        expected_offset += bytes;
        file->num_tensors++;
    }
    /* the ranges must tile the data section: sorted, each starts where the last ended */
    qsort(file->tensors, (size_t)file->num_tensors, sizeof *file->tensors, compare_offset);
    size_t cursor = 0;
    for (int i = 0; i < file->num_tensors; i++) {
        if (file->tensors[i].offset != cursor) {
            snprintf(what, sizeof what, "tensor '%s' starts at byte %zu where %zu was expected "
                     "(overlapping or missing data)", file->tensors[i].name, file->tensors[i].offset, cursor);
            return corrupt(file, path, what);
        }
        size_t tensor_elements = 1;
        for (int d = 0; d < file->tensors[i].ndim; d++)
            tensor_elements *= (size_t)file->tensors[i].shape[d];
        cursor += tensor_elements * sk_st_dtype_size(file->tensors[i].dtype);
    }
    if (expected_offset != data_size) {
        snprintf(what, sizeof what, "tensors cover %zu bytes but the file holds %zu data bytes",
                 expected_offset, data_size);
        return corrupt(file, path, what);
    }
    status = check_checksums(file, path, data_start, data_size);
    if (status != SK_OK) {
        sk_st_close(file);
        return status;
    }
    *out = file;
    return SK_OK;
}

const sk_st_tensor *sk_st_find(const sk_st_file *file, const char *name) {
    for (int i = 0; i < file->num_tensors; i++)
        if (strcmp(file->tensors[i].name, name) == 0) return &file->tensors[i];
    return NULL;
}

const char *sk_st_meta_get(const sk_st_file *file, const char *key) {
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(file->header, "__metadata__");
    cJSON *value = cJSON_GetObjectItemCaseSensitive(meta, key);
    return cJSON_IsString(value) ? value->valuestring : NULL;
}

/* Where the 8 hex digits of the value of KEY ("KEY":"0123abcd") start in
 * the header, or NULL. */
static char *checksum_value(char *header, size_t size, const char *key) {
    char needle[64];
    int n = snprintf(needle, sizeof needle, "\"%s\":\"", key);
    char *found = memmem(header, size, needle, (size_t)n);
    if (!found || (size_t)(found - header) + (size_t)n + 8 > size) return NULL;
    return found + n;
}

bool sk_st_reseal(char *bytes, size_t size) {
    if (size < 8) return false;
    uint64_t header_len = 0;
    for (int b = 0; b < 8; b++) header_len |= (uint64_t)(uint8_t)bytes[b] << (8 * b);
    if (header_len > size - 8) return false;
    char *header = bytes + 8;
    const Bytef *data = (const Bytef *)header + header_len;
    size_t data_size = size - 8 - (size_t)header_len;
    char *crc = checksum_value(header, (size_t)header_len, SK_ST_CRC_KEY);
    char *whole = checksum_value(header, (size_t)header_len, SK_ST_CHECKSUM_KEY);
    char text[16];
    if (crc) {
        snprintf(text, sizeof text, "%08lx", (unsigned long)crc32_z(crc32(0L, Z_NULL, 0), data, data_size));
        memcpy(crc, text, 8);
    }
    if (whole) {
        memcpy(whole, CHECKSUM_PLACEHOLDER, 8);
        snprintf(text, sizeof text, "%08lx",
                 (unsigned long)crc32_z(crc32(0L, Z_NULL, 0), (const Bytef *)bytes, size));
        memcpy(whole, text, 8);
    }
    return crc || whole;
}
