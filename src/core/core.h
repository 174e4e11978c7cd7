/* Internal helpers shared by every module: errors, asserts, allocation, time. */
#ifndef SK_CORE_H
#define SK_CORE_H

#include "skinner.h"

#include <stdio.h>
#include <stdlib.h>

/* Public, for env authors: sk_fail, sk_log, sk_alloc, sk_free, sk_open_regular and
 * SK_DATA_FILE_MAX_BYTES in skinner/env.h; sk_fail_at, sk_panic, SK_ASSERT, sk_now,
 * sk_parse_i64/f64, sk_mkdirs and SK_MIN/SK_MAX in skinner/module.h. */

/* Marks the error message unset, before calling code (an env's function) that
 * should report its failures with sk_fail. sk_fail_if_silent then returns
 * status unchanged if it is SK_OK or a message was set since, else records
 * "WHO returned 'STATUS' without a message ..." with WHO formatted from fmt
 * (e.g. "CartPole-v1's create"). */
void sk_error_clear(void);
sk_status sk_fail_if_silent(sk_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses a whole string as true/false; false if it is neither. */
bool sk_parse_bool(const char *text, bool *out);

/* Writes all of data to fd, retrying short writes and EINTR; false with errno
 * set on failure. */
bool sk_write_all(int fd, const void *data, size_t size);

/* The folder of the program or shared library that holds `code` (a function of it), with every
 * symlink resolved, into out: what skinner searches beside for its modules, conv backend and
 * presets (issue 53 ask 5). The program itself is found through /proc/self/exe, as glibc names
 * it by its argv[0] (a bare name found on PATH, or a path relative to a folder it may have left);
 * a library by the path it was loaded from. False if unknown or longer than size. */
bool sk_code_folder(void (*code)(void), char *out, size_t size);

/* Size limits of what skinner reads: configs are small text. */
#define SK_CONFIG_MAX_BYTES ((int64_t)16 << 20)

#endif
