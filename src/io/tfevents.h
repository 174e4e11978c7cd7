/*
 * TensorBoard's event files, written without TensorFlow: a file of records, each a
 * serialized tensorflow.Event in TFRecord framing,
 *
 *   uint64 length | uint32 masked CRC32C of the length | data | uint32 masked CRC32C of data
 *
 * little-endian, where mask(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8. The first
 * record carries file_version "brain.Event:2"; the others a Summary of scalars
 * (simple_value) or of one text (a string tensor under the "text" plugin). Field numbers
 * are those of tensorboard/compat/proto/event.proto, summary.proto and tensor.proto.
 *
 *   sk_tfevents *tb = NULL;
 *   if (sk_tfevents_open(&tb, "runs/x", false, 0) != SK_OK) ...
 *   sk_tfevents_text(tb, 0, "config", "[env]\nid = CartPole-v1\n");
 *   const char *tags[] = {"loss", "mean_return"};
 *   float values[] = {0.5f, 21.0f};
 *   sk_tfevents_scalars(tb, 2048, tags, values, 2);
 *   sk_status status = sk_tfevents_close(tb);
 *
 * Every record is flushed to the kernel when written, so TensorBoard reading the file
 * while the run goes on sees whole records (and skips a torn last one until it is whole).
 */
#ifndef SK_TFEVENTS_H
#define SK_TFEVENTS_H

#include "skinner.h"

/* The file name's start; TensorBoard finds event files by "tfevents" in their names. */
#define SK_TFEVENTS_PREFIX "events.out.tfevents."

typedef struct sk_tfevents sk_tfevents;

/* CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), as TFRecord frames use it
 * before masking: sk_crc32c("123456789", 9) == 0xe3069283. */
uint32_t sk_crc32c(const void *data, size_t size);

/* Opens dir's event file for writing.
 *
 * resume false: removes every SK_TFEVENTS_PREFIX file in dir (a new run in a reused folder
 * starts a new log) and creates SK_TFEVENTS_PREFIX<unix time>.<host> holding the
 * file_version record.
 *
 * resume true: continues the file of dir whose name sorts last (the newest), keeping its
 * records up to the first that is torn, fails its CRC, has a step after keep_step, or is a
 * text at keep_step (the resumed run writes its own there); the rest is cut off, so the
 * curves go on from keep_step as if the run had never stopped. Without such a file, as
 * resume false.
 *
 * SK_ERR_IO naming the file if it cannot be read, cut, created or written, SK_ERR_NOMEM;
 * on failure *out is left untouched and nothing leaks. */
sk_status sk_tfevents_open(sk_tfevents **out, const char *dir, bool resume, int64_t keep_step);

/* One event at step holding count scalars, tags[k] with values[k]. */
void sk_tfevents_scalars(sk_tfevents *tb, int64_t step, const char *const *tags,
                         const float *values, int count);

/* One event at step holding text as TensorBoard's text plugin stores it (a scalar string
 * tensor, rendered as Markdown). */
void sk_tfevents_text(sk_tfevents *tb, int64_t step, const char *tag, const char *text);

/* The file's path (valid until close). */
const char *sk_tfevents_path(const sk_tfevents *tb);

/* Closes the file and frees tb. SK_ERR_IO naming the file if a write, a flush or the close
 * failed since open (the records before the failure are in the file). NULL-safe. */
sk_status sk_tfevents_close(sk_tfevents *tb);

#endif
