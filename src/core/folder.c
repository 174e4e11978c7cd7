#define _GNU_SOURCE /* dladdr, program_invocation_name */
#include "core.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool sk_code_folder(void (*code)(void), char *out, size_t size) {
    void *address;
    memcpy(&address, &code, sizeof address); /* ISO C has no function-to-object cast */
    Dl_info info;
    if (!dladdr(address, &info) || !info.dli_fname) return false;
    bool program = strcmp(info.dli_fname, program_invocation_name) == 0 ||
                   !strchr(info.dli_fname, '/');
    char *absolute = realpath(program ? "/proc/self/exe" : info.dli_fname, NULL);
    if (!absolute) return false;
    char *slash = strrchr(absolute, '/');
    if (slash == absolute) slash[1] = '\0'; /* a file in "/" */
    else if (slash) *slash = '\0';
    bool fits = (size_t)snprintf(out, size, "%s", absolute) < size;
    free(absolute);
    return fits;
}
