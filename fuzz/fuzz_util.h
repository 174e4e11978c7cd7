/* Shared by the libFuzzer harnesses: the input as a file the loaders can open. */
#ifndef SK_FUZZ_UTIL_H
#define SK_FUZZ_UTIL_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Replaces the contents of one memfd with data and returns its /proc path: a
 * regular file, so the loaders' regular-file checks accept it. */
static inline const char *fuzz_as_file(const uint8_t *data, size_t size) {
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("skinner-fuzz", 0);
        if (fd < 0) abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
    return path;
}

#endif
