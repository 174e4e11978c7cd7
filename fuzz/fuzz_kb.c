/* The knowledge-base loader: the input is split at lines "%%" into train.txt,
 * rules.txt, test.txt, test_depths.txt and domain2constants.txt of a temporary
 * folder, which sk_kb_load reads, parses and indexes. */
#include "fuzz_util.h"

#include "envs/prover/kb.h"

#include <string.h>

static const char *const g_files[] = {"train.txt", "rules.txt", "test.txt", "test_depths.txt",
                                      "domain2constants.txt"};
enum { NUM_FILES = sizeof g_files / sizeof *g_files };

static void write_part(const char *dir, const char *name, const uint8_t *data, size_t size) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/skinner-fuzz-kb-XXXXXX");
        if (!mkdtemp(dir)) abort();
    }
    const uint8_t *part = data, *end = data + size;
    for (int f = 0; f < NUM_FILES; f++) {
        const uint8_t *stop = end;
        for (const uint8_t *c = part; c + 3 <= end; c++)
            if (memcmp(c, "%%\n", 3) == 0 && (c == data || c[-1] == '\n')) {
                stop = c;
                break;
            }
        write_part(dir, g_files[f], part, (size_t)(stop - part));
        part = stop < end ? stop + 3 : end;
    }
    sk_kb *kb = NULL;
    if (sk_kb_load(&kb, dir) == SK_OK) sk_kb_free(kb);
    return 0;
}
