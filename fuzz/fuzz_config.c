/* The INI reader, and the round trip: whatever it accepts, sk_config_to_string
 * writes so that reading it back gives the same table. */
#include "fuzz_util.h"

#include "core/config.h"

#include <string.h>

static int entry_count(const sk_config *cfg) {
    const char *key, *value;
    int count = 0;
    while (sk_config_entry_at(cfg, count, &key, &value)) count++;
    return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sk_config *cfg = sk_config_new();
    if (sk_config_load_buffer(cfg, (const char *)data, size, "fuzz") == SK_OK) {
        char *text = sk_config_to_string(cfg);
        if (!text) abort();
        sk_config *back = sk_config_new();
        if (sk_config_load_string(back, text) != SK_OK) {
            fprintf(stderr, "written config does not read back: %s\n%s", sk_last_error(), text);
            abort();
        }
        const char *key, *value;
        for (int i = 0; sk_config_entry_at(cfg, i, &key, &value); i++) {
            const char *got = sk_config_get(back, key);
            if (!got || strcmp(got, value) != 0) {
                fprintf(stderr, "%s: wrote '%s', read back '%s'\n", key, value,
                        got ? got : "(absent)");
                abort();
            }
        }
        if (entry_count(back) != entry_count(cfg)) abort();
        free(text);
        sk_config_free(back);
    }
    /* the file path: the same reader behind the regular-file check */
    sk_config_free(cfg);
    cfg = sk_config_new();
    sk_config_load_file(cfg, fuzz_as_file(data, size));
    sk_config_free(cfg);
    return 0;
}
