#include "config.h"

#include <ini.h>
#include <math.h>
#include <string.h>

typedef struct sk_config_entry {
    char *key; /* "section.key" */
    char *value;
    bool used;
} sk_config_entry;

struct sk_config {
    sk_config_entry *entries;
    int count, capacity;
};

sk_config *sk_config_new(void) { return calloc(1, sizeof(sk_config)); }

void sk_config_free(sk_config *cfg) {
    if (!cfg) return;
    for (int i = 0; i < cfg->count; i++) {
        free(cfg->entries[i].key);
        free(cfg->entries[i].value);
    }
    free(cfg->entries);
    free(cfg);
}

static sk_config_entry *find_entry(const sk_config *cfg, const char *key) {
    for (int i = 0; i < cfg->count; i++)
        if (strcmp(cfg->entries[i].key, key) == 0) return &cfg->entries[i];
    return NULL;
}

static bool valid_key(const char *key) {
    const char *dot = strchr(key, '.');
    return dot && dot != key && dot[1] != '\0' && !strchr(dot + 1, '.');
}

sk_status sk_config_set(sk_config *cfg, const char *key, const char *value) {
    if (!key || !valid_key(key))
        return sk_fail(SK_ERR_CONFIG, "config key '%s' is not of the form section.key",
                       key ? key : "(null)");
    if (!value) return sk_fail(SK_ERR_CONFIG, "config key '%s' has no value", key);
    sk_config_entry *entry = find_entry(cfg, key);
    char *copy = strdup(value);
    if (!copy) return sk_fail(SK_ERR_NOMEM, "out of memory");
    if (entry) {
        free(entry->value);
        entry->value = copy;
        return SK_OK;
    }
    if (cfg->count == cfg->capacity) {
        int capacity = cfg->capacity ? 2 * cfg->capacity : 32;
        sk_config_entry *grown = realloc(cfg->entries, (size_t)capacity * sizeof *grown);
        if (!grown) {
            free(copy);
            return sk_fail(SK_ERR_NOMEM, "out of memory");
        }
        cfg->entries = grown;
        cfg->capacity = capacity;
    }
    char *key_copy = strdup(key);
    if (!key_copy) {
        free(copy);
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    }
    cfg->entries[cfg->count++] = (sk_config_entry){key_copy, copy, false};
    return SK_OK;
}

const char *sk_config_get(const sk_config *cfg, const char *key) {
    const sk_config_entry *entry = find_entry(cfg, key);
    return entry ? entry->value : NULL;
}

typedef struct ini_context {
    sk_config *cfg;
    const char *source;
    sk_status status;  /* of the handler's first failure */
    char message[512]; /* its message; inih supplies the line number */
} ini_context;

/* Debian's inih is built without line numbers in the handler; a handler
 * failure makes ini_parse return the line, which ini_result adds. */
static int on_ini_entry(void *user, const char *section, const char *name, const char *value) {
    ini_context *ctx = user;
    char key[256];
    if (!section || !*section) {
        ctx->status = SK_ERR_CONFIG;
        snprintf(ctx->message, sizeof ctx->message, "key '%s' is outside any [section]", name);
    } else if (snprintf(key, sizeof key, "%s.%s", section, name) >= (int)sizeof key ||
               !valid_key(key)) {
        ctx->status = SK_ERR_CONFIG;
        snprintf(ctx->message, sizeof ctx->message, "bad key '%s' in section [%s]", name, section);
    } else if ((ctx->status = sk_config_set(ctx->cfg, key, value ? value : "")) != SK_OK) {
        snprintf(ctx->message, sizeof ctx->message, "%s", sk_last_error());
    }
    return ctx->status == SK_OK;
}

static sk_status ini_result(ini_context *ctx, int rc) {
    if (rc == 0) return SK_OK;
    if (rc == -1) return sk_fail(SK_ERR_IO, "cannot open config file '%s'", ctx->source);
    if (rc == -2) return sk_fail(SK_ERR_NOMEM, "out of memory reading '%s'", ctx->source);
    if (ctx->status != SK_OK) return sk_fail(ctx->status, "%s:%d: %s", ctx->source, rc, ctx->message);
    return sk_fail(SK_ERR_CONFIG,
                   "%s:%d: syntax error (expected '[section]', 'key = value' or a comment)",
                   ctx->source, rc);
}

sk_status sk_config_load_file(sk_config *cfg, const char *path) {
    ini_context ctx = {.cfg = cfg, .source = path};
    return ini_result(&ctx, ini_parse(path, on_ini_entry, &ctx));
}

sk_status sk_config_load_string(sk_config *cfg, const char *text) {
    ini_context ctx = {.cfg = cfg, .source = "(config text)"};
    return ini_result(&ctx, ini_parse_string(text, on_ini_entry, &ctx));
}

bool sk_config_entry_at(const sk_config *cfg, int index, const char **key, const char **value) {
    if (index < 0 || index >= cfg->count) return false;
    *key = cfg->entries[index].key;
    *value = cfg->entries[index].value;
    return true;
}

static int compare_entries(const void *a, const void *b) {
    return strcmp(((const sk_config_entry *)a)->key, ((const sk_config_entry *)b)->key);
}

char *sk_config_to_string(const sk_config *cfg) {
    sk_config_entry *sorted = malloc((size_t)(cfg->count ? cfg->count : 1) * sizeof *sorted);
    if (!sorted) return NULL;
    memcpy(sorted, cfg->entries, (size_t)cfg->count * sizeof *sorted);
    qsort(sorted, (size_t)cfg->count, sizeof *sorted, compare_entries);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out) {
        free(sorted);
        return NULL;
    }
    char section[256] = "";
    for (int i = 0; i < cfg->count; i++) {
        const char *dot = strchr(sorted[i].key, '.');
        size_t len = (size_t)(dot - sorted[i].key);
        if (len >= sizeof section) len = sizeof section - 1;
        if (strncmp(section, sorted[i].key, len) != 0 || section[len] != '\0') {
            memcpy(section, sorted[i].key, len);
            section[len] = '\0';
            fprintf(out, "%s[%s]\n", i ? "\n" : "", section);
        }
        fprintf(out, "%s = %s\n", dot + 1, sorted[i].value);
    }
    fclose(out);
    free(sorted);
    return text;
}

sk_status sk_config_write(const sk_config *cfg, const char *path) {
    char *text = sk_config_to_string(cfg);
    if (!text) return sk_fail(SK_ERR_NOMEM, "out of memory");
    FILE *file = fopen(path, "w");
    if (!file) {
        free(text);
        return sk_fail(SK_ERR_IO, "cannot write '%s'", path);
    }
    bool ok = fputs(text, file) >= 0;
    ok = (fclose(file) == 0) && ok;
    free(text);
    return ok ? SK_OK : sk_fail(SK_ERR_IO, "cannot write '%s'", path);
}

/* Reads key, marking it used; records def (formatted) when absent. */
static const char *take(const sk_config *cfg, const char *key, const char *def_text) {
    sk_config *mutable_cfg = (sk_config *)cfg; /* used flags are bookkeeping, not content */
    sk_config_entry *entry = find_entry(mutable_cfg, key);
    if (!entry && def_text) {
        if (sk_config_set(mutable_cfg, key, def_text) != SK_OK) return NULL;
        entry = find_entry(mutable_cfg, key);
    }
    if (entry) entry->used = true;
    return entry ? entry->value : NULL;
}

sk_status sk_cfg_int(const sk_config *cfg, const char *key, int64_t def, int64_t lo, int64_t hi,
                     int64_t *out) {
    char def_text[32];
    snprintf(def_text, sizeof def_text, "%lld", (long long)def);
    const char *text = take(cfg, key, def_text);
    int64_t value;
    if (!sk_parse_i64(text, &value))
        return sk_fail(SK_ERR_INVALID, "%s = '%s' is not an integer", key, text ? text : "");
    if (value < lo || value > hi)
        return sk_fail(SK_ERR_INVALID, "%s = %lld is out of range (expected %lld..%lld)", key,
                       (long long)value, (long long)lo, (long long)hi);
    *out = value;
    return SK_OK;
}

sk_status sk_cfg_double(const sk_config *cfg, const char *key, double def, double lo, double hi,
                        double *out) {
    char def_text[48];
    snprintf(def_text, sizeof def_text, "%.9g", def);
    const char *text = take(cfg, key, def_text);
    double value;
    if (!sk_parse_f64(text, &value) || !isfinite(value))
        return sk_fail(SK_ERR_INVALID, "%s = '%s' is not a number", key, text ? text : "");
    if (value < lo || value > hi)
        return sk_fail(SK_ERR_INVALID, "%s = %g is out of range (expected %g..%g)", key, value,
                       lo, hi);
    *out = value;
    return SK_OK;
}

sk_status sk_cfg_bool(const sk_config *cfg, const char *key, bool def, bool *out) {
    const char *text = take(cfg, key, def ? "true" : "false");
    if (!sk_parse_bool(text, out))
        return sk_fail(SK_ERR_INVALID, "%s = '%s' is not a boolean (expected true or false)", key,
                       text ? text : "");
    return SK_OK;
}

sk_status sk_cfg_choice(const sk_config *cfg, const char *key, const char *def,
                        const char *const *choices, int *out) {
    const char *text = take(cfg, key, def);
    for (int i = 0; choices[i]; i++) {
        if (text && strcmp(text, choices[i]) == 0) {
            *out = i;
            return SK_OK;
        }
    }
    char expected[256] = "";
    for (int i = 0; choices[i]; i++) {
        strncat(expected, i ? ", " : "", sizeof expected - strlen(expected) - 1);
        strncat(expected, choices[i], sizeof expected - strlen(expected) - 1);
    }
    return sk_fail(SK_ERR_INVALID, "%s = '%s' is not one of: %s", key, text ? text : "",
                   expected);
}

const char *sk_cfg_string(const sk_config *cfg, const char *key, const char *def) {
    return take(cfg, key, def);
}

sk_status sk_cfg_check_unused(const sk_config *cfg, const char *section) {
    size_t len = strlen(section);
    for (int i = 0; i < cfg->count; i++) {
        const sk_config_entry *entry = &cfg->entries[i];
        if (!entry->used && strncmp(entry->key, section, len) == 0 && entry->key[len] == '.')
            return sk_fail(SK_ERR_CONFIG, "unknown config key '%s'", entry->key);
    }
    return SK_OK;
}

sk_status sk_cfg_check_sections(const sk_config *cfg, const char *const *sections) {
    for (int i = 0; i < cfg->count; i++) {
        const char *key = cfg->entries[i].key;
        size_t len = (size_t)(strchr(key, '.') - key);
        bool known = false;
        for (int s = 0; sections[s] && !known; s++)
            known = strlen(sections[s]) == len && strncmp(sections[s], key, len) == 0;
        if (!known) {
            char expected[256] = "";
            for (int s = 0; sections[s]; s++) {
                strncat(expected, s ? ", " : "", sizeof expected - strlen(expected) - 1);
                strncat(expected, sections[s], sizeof expected - strlen(expected) - 1);
            }
            return sk_fail(SK_ERR_CONFIG, "unknown config section in '%s' (expected one of: %s)",
                           key, expected);
        }
    }
    return SK_OK;
}

sk_config *sk_config_copy(const sk_config *cfg) {
    sk_config *copy = sk_config_new();
    const char *key, *value;
    for (int i = 0; copy && sk_config_entry_at(cfg, i, &key, &value); i++) {
        if (sk_config_set(copy, key, value) != SK_OK) {
            sk_config_free(copy);
            return NULL;
        }
    }
    return copy;
}
