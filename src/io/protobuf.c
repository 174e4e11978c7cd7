#include "protobuf.h"

#include <stdlib.h>
#include <string.h>

void sk_pb_put(sk_pb *b, const void *bytes, size_t n) {
    if (b->failed || n == 0) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
}

void sk_pb_varint(sk_pb *b, uint64_t value) {
    uint8_t bytes[10];
    size_t n = 0;
    do {
        bytes[n] = (uint8_t)(value & 0x7f);
        value >>= 7;
        if (value) bytes[n] |= 0x80;
        n++;
    } while (value);
    sk_pb_put(b, bytes, n);
}

void sk_pb_tag(sk_pb *b, int field, int wire) {
    sk_pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

void sk_pb_int(sk_pb *b, int field, int64_t value) {
    sk_pb_tag(b, field, SK_PB_VARINT);
    sk_pb_varint(b, (uint64_t)value);
}

/* The low `size` bytes of bits, least significant first, whatever the host's order. */
static void put_little_endian(sk_pb *b, uint64_t bits, size_t size) {
    uint8_t bytes[8];
    for (size_t k = 0; k < size; k++) bytes[k] = (uint8_t)(bits >> (8 * k));
    sk_pb_put(b, bytes, size);
}

void sk_pb_float(sk_pb *b, int field, float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    sk_pb_tag(b, field, SK_PB_FIXED32);
    put_little_endian(b, bits, sizeof bits);
}

void sk_pb_double(sk_pb *b, int field, double value) {
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    sk_pb_tag(b, field, SK_PB_FIXED64);
    put_little_endian(b, bits, sizeof bits);
}

void sk_pb_bytes(sk_pb *b, int field, const void *bytes, size_t n) {
    sk_pb_tag(b, field, SK_PB_LEN);
    sk_pb_varint(b, n);
    sk_pb_put(b, bytes, n);
}

void sk_pb_string(sk_pb *b, int field, const char *text) {
    sk_pb_bytes(b, field, text, strlen(text));
}

void sk_pb_message(sk_pb *b, int field, sk_pb *message) {
    if (message->failed) b->failed = true;
    sk_pb_bytes(b, field, message->data, message->len);
    free(message->data);
    *message = (sk_pb){0};
}

static bool read_varint(const uint8_t **at, const uint8_t *end, uint64_t *out) {
    uint64_t value = 0;
    for (int shift = 0; shift < 70 && *at < end; shift += 7) {
        uint8_t byte = *(*at)++;
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = value;
            return true;
        }
    }
    return false;
}

bool sk_pb_next(const uint8_t **at, const uint8_t *end, sk_pb_field *out) {
    const uint8_t *p = *at;
    uint64_t key;
    if (!read_varint(&p, end, &key) || key >> 3 == 0 || key >> 3 > INT32_MAX) return false;
    *out = (sk_pb_field){.number = (int)(key >> 3), .wire = (int)(key & 7)};
    size_t fixed = out->wire == SK_PB_FIXED64 ? 8 : out->wire == SK_PB_FIXED32 ? 4 : 0;
    if (out->wire == SK_PB_VARINT) {
        if (!read_varint(&p, end, &out->value)) return false;
    } else if (fixed) {
        if ((size_t)(end - p) < fixed) return false;
        for (size_t k = 0; k < fixed; k++) out->value |= (uint64_t)p[k] << (8 * k);
        p += fixed;
    } else if (out->wire == SK_PB_LEN) {
        uint64_t len;
        if (!read_varint(&p, end, &len) || len > (uint64_t)(end - p)) return false;
        out->bytes = p;
        out->len = (size_t)len;
        p += len;
    } else {
        return false;
    }
    *at = p;
    return true;
}
