/*
 * Protocol Buffers' wire format, written: a field is a varint key (number << 3 | wire
 * type) then a varint, a little-endian fixed64 or fixed32, or a varint length and that
 * many bytes (a string or a nested message). ONNX models (src/export/onnx.c) and
 * TensorBoard's event files (src/io/tfevents.c) need a few message types of a few fields each;
 * these ~80 lines write them with no dependency and no .proto compiled at build time.
 *
 *   sk_pb value = {0}, summary = {0};
 *   sk_pb_string(&value, 1, "loss");      // Summary.Value.tag
 *   sk_pb_float(&value, 2, 0.5f);         // Summary.Value.simple_value
 *   sk_pb_message(&summary, 1, &value);   // Summary.value; frees value's bytes
 *   if (summary.failed) ... out of memory
 *   free(summary.data);
 *
 * A buffer grows as it is written. An allocation that fails sets `failed` and every later
 * write to that buffer does nothing, so a caller checks once, at the end.
 */
#ifndef SK_PROTOBUF_H
#define SK_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sk_pb {
    uint8_t *data; /* (len) bytes written, owned; free() it */
    size_t len, cap;
    bool failed;   /* an allocation failed: data holds what came before */
} sk_pb;

enum { SK_PB_VARINT = 0, SK_PB_FIXED64 = 1, SK_PB_LEN = 2, SK_PB_FIXED32 = 5 };

/* Raw bytes, appended as they are. */
void sk_pb_put(sk_pb *b, const void *bytes, size_t n);
void sk_pb_varint(sk_pb *b, uint64_t value);
/* A field's key: number << 3 | wire (SK_PB_VARINT, ...). */
void sk_pb_tag(sk_pb *b, int field, int wire);
/* int32, int64, uint64, enum and bool fields (a negative value takes ten bytes, as
 * protobuf writes an int64). */
void sk_pb_int(sk_pb *b, int field, int64_t value);
void sk_pb_float(sk_pb *b, int field, float value);
void sk_pb_double(sk_pb *b, int field, double value);
void sk_pb_bytes(sk_pb *b, int field, const void *bytes, size_t n);
void sk_pb_string(sk_pb *b, int field, const char *text);
/* A nested message: its bytes as a length-delimited field. message's bytes are freed and
 * it is left empty; its failure becomes b's. */
void sk_pb_message(sk_pb *b, int field, sk_pb *message);

/* One field read back from a message's bytes, for a writer that checks its own output.
 * A varint or fixed field's value is in `value` (a fixed32's or fixed64's bits), a
 * length-delimited one's bytes in `bytes` and `len` (pointing into the message). */
typedef struct sk_pb_field {
    int number, wire;
    uint64_t value;
    const uint8_t *bytes;
    size_t len;
} sk_pb_field;

/* Reads the field at *at (before end) into out and moves *at past it. False, with *at
 * unmoved, at the end or on bytes that are not a well-formed field (a varint running past
 * end or longer than ten bytes, a length past end, a group or unknown wire type). */
bool sk_pb_next(const uint8_t **at, const uint8_t *end, sk_pb_field *out);

#endif
