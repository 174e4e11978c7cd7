#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static _Thread_local char g_error[1024] = "no error";
/* Whether sk_fail wrote g_error since the last sk_error_clear: a callee (an
 * env's create, say) may fail without a message, and its caller must then say
 * who failed rather than print a stale or empty one. */
static _Thread_local bool g_error_set;

static sk_log_fn g_log_fn;
static void *g_log_user;

const char *sk_last_error(void) { return g_error; }

const char *sk_status_name(sk_status status) {
    switch (status) {
    case SK_OK: return "ok";
    case SK_ERR_INVALID: return "invalid value";
    case SK_ERR_CONFIG: return "config error";
    case SK_ERR_UNKNOWN_ENV: return "unknown environment";
    case SK_ERR_IO: return "i/o error";
    case SK_ERR_CORRUPT: return "corrupt data";
    case SK_ERR_NOMEM: return "out of memory";
    case SK_ERR_NUMERIC: return "numerical failure";
    case SK_ERR_INTERRUPTED: return "interrupted";
    case SK_ERR_ENV: return "env fault";
    }
    return "unknown status";
}

sk_status sk_fail(sk_status status, const char *fmt, ...) {
    /* formatted aside first: an argument may be sk_last_error() itself, which
     * vsnprintf into the same buffer would overwrite while reading it */
    char message[sizeof g_error];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    memcpy(g_error, message, sizeof g_error);
    g_error_set = true;
    return status;
}

void sk_error_clear(void) {
    snprintf(g_error, sizeof g_error, "no error");
    g_error_set = false;
}

sk_status sk_fail_if_silent(sk_status status, const char *fmt, ...) {
    if (status == SK_OK || g_error_set) return status;
    char message[sizeof g_error];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    return sk_fail(status, "%s returned '%s' without a message (an env reports its errors with "
                           "sk_fail)",
                   message, sk_status_name(status));
}

sk_status sk_fail_at(sk_status status, const char *source, int line, const char *fmt, ...) {
    char message[768];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    return sk_fail(status, "%s:%d: %s", source, line, message);
}

void sk_set_log_callback(sk_log_fn fn, void *user) {
    g_log_fn = fn;
    g_log_user = user;
}

void sk_log(int level, const char *fmt, ...) {
    char message[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    if (g_log_fn) {
        g_log_fn(level, message, g_log_user);
    } else {
        fprintf(stderr, "skinner: %s%s\n", level > 0 ? "warning: " : "", message);
    }
}

_Noreturn void sk_panic(const char *file, int line, const char *msg) {
    fprintf(stderr, "skinner: internal error at %s:%d: %s\n", file, line, msg);
    abort();
}

void *sk_alloc(size_t bytes) {
    size_t rounded = (bytes + 63) & ~(size_t)63;
    void *ptr = aligned_alloc(64, rounded ? rounded : 64);
    if (ptr) memset(ptr, 0, rounded ? rounded : 64);
    return ptr;
}

void sk_free(void *ptr) { free(ptr); }

double sk_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

bool sk_parse_i64(const char *text, int64_t *out) {
    if (!text || !*text) return false;
    char *end = NULL;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (*end != '\0') {
        /* accept integral floats such as 1e6 for step counts; range-check
         * before converting, which is undefined out of range */
        double as_double;
        if (!sk_parse_f64(text, &as_double) || !(fabs(as_double) < 9.2e18) ||
            as_double != floor(as_double))
            return false;
        value = (long long)as_double;
    } else if (errno == ERANGE) {
        return false;
    }
    *out = value;
    return true;
}

bool sk_parse_f64(const char *text, double *out) {
    if (!text || !*text) return false;
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || *end != '\0' || value != value) return false;
    *out = value;
    return true;
}

bool sk_parse_bool(const char *text, bool *out) {
    if (!text) return false;
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0) return (*out = true), true;
        if (strcasecmp(text, no[i]) == 0) return (*out = false), true;
    }
    return false;
}

bool sk_write_all(int fd, const void *data, size_t size) {
    const char *p = data;
    while (size > 0) {
        ssize_t n = write(fd, p, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        size -= (size_t)n;
    }
    return true;
}

sk_status sk_mkdirs(const char *path) {
    char buf[4096];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf) return sk_fail(SK_ERR_IO, "bad directory path '%s'", path);
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char saved = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return sk_fail(SK_ERR_IO, "cannot create directory '%s': %s", buf, strerror(errno));
            buf[i] = saved;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return sk_fail(SK_ERR_IO, "'%s' exists and is not a directory", path);
    return SK_OK;
}

sk_status sk_open_regular(const char *path, int64_t max_bytes, const char *what, int *fd_out,
                          int64_t *size_out) {
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return sk_fail(SK_ERR_IO, "cannot open %s '%s': %s", what, path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return sk_fail(SK_ERR_IO, "cannot read %s '%s': %s", what, path, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        const char *kind = S_ISDIR(st.st_mode)    ? "a directory"
                           : S_ISFIFO(st.st_mode) ? "a FIFO"
                           : S_ISCHR(st.st_mode)  ? "a character device"
                           : S_ISBLK(st.st_mode)  ? "a block device"
                           : S_ISSOCK(st.st_mode) ? "a socket"
                                                  : "not a regular file";
        close(fd);
        return sk_fail(SK_ERR_IO, "%s '%s' is %s (expected a regular file)", what, path, kind);
    }
    if ((int64_t)st.st_size > max_bytes) {
        close(fd);
        return sk_fail(SK_ERR_CORRUPT, "%s '%s' is %lld bytes (expected at most %lld)", what, path,
                       (long long)st.st_size, (long long)max_bytes);
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    if (size_out) *size_out = (int64_t)st.st_size;
    *fd_out = fd;
    return SK_OK;
}
