/* Reading the reference fixtures of tests/fixtures (the scripts in tests/reference write
  * them): one record per line, `NAME COUNT v1 ... vCOUNT`, '#' comments. */
#ifndef SK_TEST_FIXTURE_H
#define SK_TEST_FIXTURE_H

#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_text(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) fail_msg("cannot open fixture %s", path);
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    rewind(file);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
    text[size] = '\0';
    fclose(file);
    return text;
}

/* Record `name` of a fixture (lines `NAME COUNT v1 ... vCOUNT`), which must hold count values. */
static void read_record(const char *text, const char *name, double *values, size_t count) {
    size_t length = strlen(name);
    for (const char *line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, name, length) != 0 || line[length] != ' ') continue;
        char *end;
        long found = strtol(line + length, &end, 10);
        if (found != (long)count) fail_msg("record %s has %ld values, not %zu", name, found, count);
        for (size_t i = 0; i < count; i++) {
            const char *from = end;
            values[i] = strtod(from, &end);
            if (end == from) fail_msg("record %s: value %zu is not a number", name, i);
        }
        return;
    }
    fail_msg("fixture has no record '%s'", name);
}

#endif
