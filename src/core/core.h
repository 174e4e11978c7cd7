/* Internal helpers shared by every module: errors, asserts, allocation, time. */
#ifndef SK_CORE_H
#define SK_CORE_H

#include "skinner.h"

#include <stdio.h>
#include <stdlib.h>

/* sk_fail, sk_log, sk_alloc and sk_free are public, in skinner/env.h. */

/* sk_fail with the message located: "source:line: message". */
sk_status sk_fail_at(sk_status status, const char *source, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Marks the error message unset, before calling code (an env's function) that
 * should report its failures with sk_fail. sk_fail_if_silent then returns
 * status unchanged if it is SK_OK or a message was set since, else records
 * "WHO returned 'STATUS' without a message ..." with WHO formatted from fmt
 * (e.g. "CartPole-v1's create"). */
void sk_error_clear(void);
sk_status sk_fail_if_silent(sk_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* sk_panic and SK_ASSERT (a broken contract) are public, in skinner/module.h. */


/* Monotonic seconds. */
double sk_now(void);

/* Parses a whole string as a number; false if it is not one or has trailing
 * characters. */
bool sk_parse_i64(const char *text, int64_t *out);
bool sk_parse_f64(const char *text, double *out);
bool sk_parse_bool(const char *text, bool *out);

/* Writes all of data to fd, retrying short writes and EINTR; false with errno
 * set on failure. */
bool sk_write_all(int fd, const void *data, size_t size);

/* mkdir -p; SK_ERR_IO naming the path on failure. */
sk_status sk_mkdirs(const char *path);

/* sk_open_regular and SK_DATA_FILE_MAX_BYTES are public, in skinner/env.h. */

/* Size limits of what skinner reads: configs are small text. */
#define SK_CONFIG_MAX_BYTES ((int64_t)16 << 20)

#define SK_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SK_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
