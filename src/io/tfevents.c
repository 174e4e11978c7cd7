#include "tfevents.h"

#include "protobuf.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CRC32C_POLY 0x82f63b78u     /* Castagnoli's polynomial, bit-reversed */
#define TFRECORD_MASK_DELTA 0xa282ead8u /* TFRecord's masked_crc32c */
#define FILE_VERSION "brain.Event:2"
#define TEXT_PLUGIN "text"
#define DT_STRING 7 /* tensorflow DataType (types.proto) */
#define RECORD_MAX ((uint64_t)1 << 30) /* a longer length is a corrupt frame, not a record */

/* Field numbers (event.proto, summary.proto, tensor.proto) */
enum { EVENT_WALL_TIME = 1, EVENT_STEP = 2, EVENT_FILE_VERSION = 3, EVENT_SUMMARY = 5 };
enum { SUMMARY_VALUE = 1 };
enum { VALUE_TAG = 1, VALUE_SIMPLE = 2, VALUE_TENSOR = 8, VALUE_METADATA = 9 };
enum { METADATA_PLUGIN_DATA = 1, PLUGIN_NAME = 1 };
enum { TENSOR_DTYPE = 1, TENSOR_SHAPE = 2, TENSOR_STRING_VAL = 8 };

struct sk_tfevents {
    FILE *file;
    bool failed;
    char path[4200];
};

static uint32_t g_crc_table[256];
static pthread_once_t g_crc_once = PTHREAD_ONCE_INIT;

static void crc_table_fill(void) {
    for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t crc = byte;
        for (int bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >> 1) ^ CRC32C_POLY : crc >> 1;
        g_crc_table[byte] = crc;
    }
}

uint32_t sk_crc32c(const void *data, size_t size) {
    pthread_once(&g_crc_once, crc_table_fill);
    const uint8_t *bytes = data;
    uint32_t crc = 0xffffffffu;
    for (size_t k = 0; k < size; k++) crc = g_crc_table[(crc ^ bytes[k]) & 0xff] ^ (crc >> 8);
    return crc ^ 0xffffffffu;
}

static uint32_t masked_crc(const void *data, size_t size) {
    uint32_t crc = sk_crc32c(data, size);
    return ((crc >> 15) | (crc << 17)) + TFRECORD_MASK_DELTA;
}

static void little_endian(uint8_t *out, uint64_t value, size_t size) {
    for (size_t k = 0; k < size; k++) out[k] = (uint8_t)(value >> (8 * k));
}

static uint64_t read_little_endian(const uint8_t *in, size_t size) {
    uint64_t value = 0;
    for (size_t k = 0; k < size; k++) value |= (uint64_t)in[k] << (8 * k);
    return value;
}

/* Frames event (freeing its bytes) and writes it whole, or marks tb failed. */
static void write_record(sk_tfevents *tb, sk_pb *event) {
    uint8_t head[12], foot[4];
    little_endian(head, event->len, 8);
    little_endian(head + 8, masked_crc(head, 8), 4);
    little_endian(foot, masked_crc(event->data, event->len), 4);
    if (event->failed) tb->failed = true;
    if (!tb->failed)
        tb->failed = fwrite(head, 1, sizeof head, tb->file) != sizeof head ||
                     fwrite(event->data, 1, event->len, tb->file) != event->len ||
                     fwrite(foot, 1, sizeof foot, tb->file) != sizeof foot ||
                     fflush(tb->file) != 0;
    free(event->data);
    *event = (sk_pb){0};
}

static void event_start(sk_pb *event, int64_t step) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    sk_pb_double(event, EVENT_WALL_TIME, (double)now.tv_sec + 1e-9 * (double)now.tv_nsec);
    if (step != 0) sk_pb_int(event, EVENT_STEP, step);
}

void sk_tfevents_scalars(sk_tfevents *tb, int64_t step, const char *const *tags,
                         const float *values, int count) {
    sk_pb event = {0}, summary = {0}, value = {0};
    event_start(&event, step);
    for (int k = 0; k < count; k++) {
        sk_pb_string(&value, VALUE_TAG, tags[k]);
        sk_pb_float(&value, VALUE_SIMPLE, values[k]);
        sk_pb_message(&summary, SUMMARY_VALUE, &value);
    }
    sk_pb_message(&event, EVENT_SUMMARY, &summary);
    write_record(tb, &event);
}

void sk_tfevents_text(sk_tfevents *tb, int64_t step, const char *tag, const char *text) {
    sk_pb event = {0}, summary = {0}, value = {0}, metadata = {0}, plugin = {0}, tensor = {0},
          shape = {0};
    event_start(&event, step);
    sk_pb_string(&value, VALUE_TAG, tag);
    sk_pb_string(&plugin, PLUGIN_NAME, TEXT_PLUGIN); /* content: TextPluginData{}, empty */
    sk_pb_message(&metadata, METADATA_PLUGIN_DATA, &plugin);
    sk_pb_message(&value, VALUE_METADATA, &metadata);
    sk_pb_int(&tensor, TENSOR_DTYPE, DT_STRING);
    sk_pb_message(&tensor, TENSOR_SHAPE, &shape); /* no dims: a scalar */
    sk_pb_string(&tensor, TENSOR_STRING_VAL, text);
    sk_pb_message(&value, VALUE_TENSOR, &tensor);
    sk_pb_message(&summary, SUMMARY_VALUE, &value);
    sk_pb_message(&event, EVENT_SUMMARY, &summary);
    write_record(tb, &event);
}

/* A record's step, and whether it holds a text (a value with plugin metadata). */
static bool parse_event(const uint8_t *data, size_t len, int64_t *step, bool *text) {
    *step = 0;
    *text = false;
    sk_pb_field field, inner, value_field;
    const uint8_t *at = data, *end = data + len;
    while (at < end) {
        if (!sk_pb_next(&at, end, &field)) return false;
        if (field.number == EVENT_STEP && field.wire == SK_PB_VARINT) *step = (int64_t)field.value;
        if (field.number != EVENT_SUMMARY || field.wire != SK_PB_LEN) continue;
        for (const uint8_t *s = field.bytes; s < field.bytes + field.len;) {
            if (!sk_pb_next(&s, field.bytes + field.len, &inner)) return false;
            if (inner.number != SUMMARY_VALUE || inner.wire != SK_PB_LEN) continue;
            for (const uint8_t *v = inner.bytes; v < inner.bytes + inner.len;) {
                if (!sk_pb_next(&v, inner.bytes + inner.len, &value_field)) return false;
                if (value_field.number == VALUE_METADATA) *text = true;
            }
        }
    }
    return true;
}

/* Cuts path after its last record to keep (sk_tfevents_open). */
static sk_status keep_records(const char *path, int64_t keep_step) {
    FILE *file = fopen(path, "r+b");
    if (!file)
        return sk_fail(SK_ERR_IO, "cannot read '%s' to resume it: %s", path, strerror(errno));
    uint8_t *data = NULL, head[12], foot[4];
    size_t capacity = 0;
    long kept = 0;
    while (fread(head, 1, sizeof head, file) == sizeof head) {
        uint64_t len = read_little_endian(head, 8);
        if (read_little_endian(head + 8, 4) != masked_crc(head, 8) || len > RECORD_MAX) break;
        if (len > capacity) {
            uint8_t *grown = realloc(data, (size_t)len);
            if (!grown) break; /* cut here: a record this large is not one of ours */
            data = grown;
            capacity = (size_t)len;
        }
        if (fread(data, 1, (size_t)len, file) != len ||
            fread(foot, 1, sizeof foot, file) != sizeof foot ||
            read_little_endian(foot, 4) != masked_crc(data, (size_t)len))
            break;
        int64_t step;
        bool text;
        if (!parse_event(data, (size_t)len, &step, &text) || step > keep_step ||
            (text && step == keep_step))
            break;
        kept = ftell(file);
    }
    free(data);
    bool ok = ftruncate(fileno(file), kept) == 0;
    int error = errno;
    ok = fclose(file) == 0 && ok;
    return ok ? SK_OK
              : sk_fail(SK_ERR_IO, "cannot cut '%s' to resume it: %s", path, strerror(error));
}

/* dir's event files: removes them all (newest NULL), or puts the newest's name in newest
 * ("" if none). */
static void scan_dir(const char *dir, char *newest, size_t size) {
    if (newest) newest[0] = '\0';
    DIR *folder = opendir(dir);
    if (!folder) return;
    for (struct dirent *entry; (entry = readdir(folder));) {
        const char *name = entry->d_name;
        if (strncmp(name, SK_TFEVENTS_PREFIX, sizeof SK_TFEVENTS_PREFIX - 1) != 0) continue;
        if (newest && strcmp(name, newest) > 0) snprintf(newest, size, "%s", name);
        if (!newest) {
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", dir, name);
            unlink(path);
        }
    }
    closedir(folder);
}

sk_status sk_tfevents_open(sk_tfevents **out, const char *dir, bool resume, int64_t keep_step) {
    sk_tfevents *tb = calloc(1, sizeof *tb);
    if (!tb) return sk_fail(SK_ERR_NOMEM, "out of memory for the TensorBoard event file");
    char newest[256];
    scan_dir(dir, resume ? newest : NULL, sizeof newest);
    sk_status status = SK_OK;
    if (resume && newest[0]) {
        snprintf(tb->path, sizeof tb->path, "%s/%s", dir, newest);
        status = keep_records(tb->path, keep_step);
        tb->file = status == SK_OK ? fopen(tb->path, "ab") : NULL;
    } else {
        char host[256] = "localhost";
        if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
        host[sizeof host - 1] = '\0';
        snprintf(tb->path, sizeof tb->path, "%s/" SK_TFEVENTS_PREFIX "%lld.%s", dir,
                 (long long)time(NULL), host);
        tb->file = fopen(tb->path, "wb");
        if (tb->file) {
            sk_pb event = {0};
            event_start(&event, 0);
            sk_pb_string(&event, EVENT_FILE_VERSION, FILE_VERSION);
            write_record(tb, &event);
        }
    }
    if (status == SK_OK && (!tb->file || tb->failed))
        status = sk_fail(SK_ERR_IO, "cannot write '%s'", tb->path);
    if (status != SK_OK) {
        if (tb->file) fclose(tb->file);
        free(tb);
        return status;
    }
    *out = tb;
    return SK_OK;
}

const char *sk_tfevents_path(const sk_tfevents *tb) { return tb->path; }

sk_status sk_tfevents_close(sk_tfevents *tb) {
    if (!tb) return SK_OK;
    bool ok = !tb->failed;
    ok = fclose(tb->file) == 0 && ok;
    sk_status status = ok ? SK_OK : sk_fail(SK_ERR_IO, "writing '%s' failed", tb->path);
    free(tb);
    return status;
}
