/* The config table and its INI reader and writer.
 *
 * The reader is skinner's own rather than inih's: Debian's libinih is built with
 * INI_MAX_LINE 200 and no realloc, so a long value (a dataset path) did not read
 * back; its inline comments cut a value at " ;"; and its handler gets no line
 * numbers, so a duplicate key could not be reported where it is. The syntax read
 * is inih's (as the presets use it) plus quoted values:
 *
 *   ; comment            # comment          (whole lines, after optional blanks)
 *   [section]            [section] ; comment
 *   key = plain value ; an inline comment starts at ';' after a blank
 *   key = "quoted: \\ \" \n \t \r \xHH; nothing is a comment in here"
 *
 * The writer quotes exactly the values that would not read back plain, so every
 * value round-trips byte for byte (NUL aside: values are C strings). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct sk_config_entry {
    char *key; /* "section.key" */
    char *value;
    bool used;
    bool path; /* read with sk_cfg_path: a data location, not a shape of the run */
    char *accepts; /* what the typed read that took it accepts ("integer 1..8"), or NULL */
    unsigned load_id; /* the sk_config_load_* that last set it (0: sk_config_set) */
    int line;         /* its line in that load */
} sk_config_entry;

/* Open addressing over borrowed names: slot holds index + 1, 0 is empty. */
typedef struct name_index {
    int *slots;
    size_t capacity; /* a power of two, or 0 */
} name_index;

struct sk_config {
    sk_config_entry *entries;
    int count, capacity;
    name_index index; /* key -> entry: loading n keys is O(n), not O(n^2) */
    unsigned loads;   /* loads so far, to tell this file's keys from earlier layers' */
};

static uint64_t hash_name(const char *name) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return h;
}

/* The slot holding name or the empty slot where it would go; names(i) gives the
 * name of index i. capacity must be non-zero. */
static size_t index_slot(const name_index *ix, const char *name, const char *(*name_of)(const void *, int),
                         const void *owner) {
    size_t mask = ix->capacity - 1, slot = (size_t)hash_name(name) & mask;
    while (ix->slots[slot] && strcmp(name_of(owner, ix->slots[slot] - 1), name) != 0)
        slot = (slot + 1) & mask;
    return slot;
}

/* Adds index i (whose name is not present); grows to keep the load below 1/2. */
static bool index_add(name_index *ix, int i, int count, const char *(*name_of)(const void *, int),
                      const void *owner) {
    if (2 * ((size_t)count + 1) > ix->capacity) {
        name_index grown = {calloc(ix->capacity ? 2 * ix->capacity : 64, sizeof(int)),
                            ix->capacity ? 2 * ix->capacity : 64};
        if (!grown.slots) return false;
        for (size_t s = 0; s < ix->capacity; s++)
            if (ix->slots[s])
                grown.slots[index_slot(&grown, name_of(owner, ix->slots[s] - 1), name_of, owner)] =
                    ix->slots[s];
        free(ix->slots);
        *ix = grown;
    }
    ix->slots[index_slot(ix, name_of(owner, i), name_of, owner)] = i + 1;
    return true;
}

static const char *entry_key(const void *cfg, int i) {
    return ((const sk_config *)cfg)->entries[i].key;
}

sk_config *sk_config_new(void) { return calloc(1, sizeof(sk_config)); }

void sk_config_free(sk_config *cfg) {
    if (!cfg) return;
    for (int i = 0; i < cfg->count; i++) {
        free(cfg->entries[i].key);
        free(cfg->entries[i].value);
        free(cfg->entries[i].accepts);
    }
    free(cfg->entries);
    free(cfg->index.slots);
    free(cfg);
}

static sk_config_entry *find_entry(const sk_config *cfg, const char *key) {
    if (!cfg->index.capacity) return NULL;
    int i = cfg->index.slots[index_slot(&cfg->index, key, entry_key, cfg)];
    return i ? &cfg->entries[i - 1] : NULL;
}

/* What makes one part of a key ("section" or "name") unusable in an INI file,
 * or NULL if nothing does. */
static const char *name_problem(const char *name, size_t len) {
    if (len == 0) return "is empty";
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch == ' ') return "contains a space";
        if (ch == '\t') return "contains a tab";
        if (ch < 0x20 || ch == 0x7f) return "contains a control character";
        if (ch == '=' || ch == ':') return "contains '=' or ':' (the INI key/value separators)";
        if (ch == '[' || ch == ']') return "contains '[' or ']' (INI section brackets)";
        if (ch == ';' || ch == '#') return "contains ';' or '#' (INI comment markers)";
        if (ch == '"' || ch == '\\') return "contains a quote or a backslash";
    }
    return NULL;
}

/* NULL if key is "section.name" with usable parts, else what is wrong. */
static const char *key_problem(const char *key) {
    const char *dot = strchr(key, '.');
    if (!dot || strchr(dot + 1, '.')) return "is not of the form section.key";
    const char *problem = name_problem(key, (size_t)(dot - key));
    if (!problem) problem = name_problem(dot + 1, strlen(dot + 1));
    return problem;
}

static sk_status config_put(sk_config *cfg, const char *key, const char *value,
                            sk_config_entry **out) {
    if (!key) return sk_fail(SK_ERR_CONFIG, "config key (null) is not of the form section.key");
    const char *problem = key_problem(key);
    if (problem) {
        if (strcmp(problem, "is not of the form section.key") == 0)
            return sk_fail(SK_ERR_CONFIG, "config key '%s' is not of the form section.key", key);
        return sk_fail(SK_ERR_CONFIG,
                       "config key '%s' %s (expected section.key, each part printable without "
                       "blanks, '=', ':', '[', ']', ';', '#', quotes or backslashes)",
                       key, problem);
    }
    if (!value) return sk_fail(SK_ERR_CONFIG, "config key '%s' has no value", key);
    sk_config_entry *entry = find_entry(cfg, key);
    char *copy = strdup(value);
    if (!copy) return sk_fail(SK_ERR_NOMEM, "out of memory");
    if (entry) {
        free(entry->value);
        entry->value = copy;
        *out = entry;
        return SK_OK;
    }
    if (cfg->count == INT_MAX) {
        free(copy);
        return sk_fail(SK_ERR_CONFIG, "config holds too many keys (%d)", cfg->count);
    }
    if (cfg->count == cfg->capacity) {
        int capacity = cfg->capacity ? (cfg->capacity > INT_MAX / 2 ? INT_MAX : 2 * cfg->capacity) : 32;
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
    cfg->entries[cfg->count] = (sk_config_entry){.key = key_copy, .value = copy};
    if (!index_add(&cfg->index, cfg->count, cfg->count, entry_key, cfg)) {
        free(key_copy);
        free(copy);
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    }
    *out = &cfg->entries[cfg->count++];
    return SK_OK;
}

sk_status sk_config_set(sk_config *cfg, const char *key, const char *value) {
    sk_config_entry *entry;
    sk_status status = config_put(cfg, key, value, &entry);
    if (status == SK_OK) entry->load_id = 0;
    return status;
}

const char *sk_config_get(const sk_config *cfg, const char *key) {
    const sk_config_entry *entry = find_entry(cfg, key);
    return entry ? entry->value : NULL;
}

/* ------------------------------------------------------------------ reading */

/* The sections seen in one load, for duplicate detection. */
typedef struct section_seen {
    char **names;
    int *lines;
    int count, capacity;
    name_index index;
} section_seen;

static const char *section_name(const void *seen, int i) {
    return ((const section_seen *)seen)->names[i];
}

static void sections_free(section_seen *seen) {
    for (int i = 0; i < seen->count; i++) free(seen->names[i]);
    free(seen->names);
    free(seen->lines);
    free(seen->index.slots);
}

/* 0 when added, else the line that first opened name; -1 out of memory. */
static int sections_add(section_seen *seen, const char *name, int line) {
    if (seen->index.capacity) {
        int i = seen->index.slots[index_slot(&seen->index, name, section_name, seen)];
        if (i) return seen->lines[i - 1];
    }
    if (seen->count == seen->capacity) {
        int capacity = seen->capacity ? 2 * seen->capacity : 16;
        char **names = realloc(seen->names, (size_t)capacity * sizeof *names);
        if (!names) return -1;
        seen->names = names;
        int *lines = realloc(seen->lines, (size_t)capacity * sizeof *lines);
        if (!lines) return -1;
        seen->lines = lines;
        seen->capacity = capacity;
    }
    char *copy = strdup(name);
    if (!copy) return -1;
    seen->names[seen->count] = copy;
    seen->lines[seen->count] = line;
    if (!index_add(&seen->index, seen->count, seen->count, section_name, seen)) {
        free(copy);
        return -1;
    }
    seen->count++;
    return 0;
}

typedef struct parser {
    sk_config *cfg;
    const char *source;
    int line;
    char *section; /* current [section], malloc'd; NULL before the first */
    section_seen seen;
    unsigned load_id;
    char *value;          /* the value being decoded, grown as needed */
    size_t value_capacity;
} parser;

static bool is_blank(char ch) { return ch == ' ' || ch == '\t'; }

/* A syntax error at the parser's line. */
#define parse_error(p, ...) sk_fail_at(SK_ERR_CONFIG, (p)->source, (p)->line, __VA_ARGS__)

static bool value_reserve(parser *p, size_t size) {
    if (size <= p->value_capacity) return true;
    size_t capacity = p->value_capacity ? p->value_capacity : 256;
    while (capacity < size) capacity *= 2;
    char *grown = realloc(p->value, capacity);
    if (!grown) return false;
    p->value = grown;
    p->value_capacity = capacity;
    return true;
}

static int hex_digit(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* Decodes the value in [start, end) of one line into p->value. */
static sk_status decode_value(parser *p, const char *start, const char *end, const char *key) {
    if (!value_reserve(p, (size_t)(end - start) + 1))
        return sk_fail(SK_ERR_NOMEM, "out of memory reading '%s'", p->source);
    size_t len = 0;
    if (start < end && *start == '"') {
        const char *c = start + 1;
        for (;; c++) {
            if (c == end)
                return parse_error(p, "value of '%s' has no closing '\"'", key);
            if (*c == '"') break;
            if (*c != '\\') {
                p->value[len++] = *c;
                continue;
            }
            if (++c == end) return parse_error(p, "value of '%s' ends in a lone '\\'", key);
            switch (*c) {
            case '\\': p->value[len++] = '\\'; break;
            case '"': p->value[len++] = '"'; break;
            case 'n': p->value[len++] = '\n'; break;
            case 't': p->value[len++] = '\t'; break;
            case 'r': p->value[len++] = '\r'; break;
            case 'x': {
                int hi = c + 1 < end ? hex_digit(c[1]) : -1;
                int lo = c + 2 < end ? hex_digit(c[2]) : -1;
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                    return parse_error(p, "value of '%s' has a bad \\x escape (expected two hex "
                                          "digits, not 00)", key);
                p->value[len++] = (char)(hi * 16 + lo);
                c += 2;
                break;
            }
            default:
                return parse_error(p, "value of '%s' has an unknown escape '\\%c' (expected \\\\, "
                                      "\\\", \\n, \\t, \\r or \\xHH)", key, *c);
            }
        }
        for (c++; c < end && is_blank(*c); c++) {}
        if (c < end && *c != ';' && *c != '#')
            return parse_error(p, "unexpected text after the quoted value of '%s' (expected a "
                                  "comment or the end of the line)", key);
    } else {
        /* inih's rule: an inline comment starts at ';' preceded by a blank */
        const char *stop = end;
        for (const char *c = start; c < end; c++)
            if (*c == ';' && c > start && is_blank(c[-1])) {
                stop = c;
                break;
            }
        while (stop > start && is_blank(stop[-1])) stop--;
        len = (size_t)(stop - start);
        memcpy(p->value, start, len);
    }
    p->value[len] = '\0';
    return SK_OK;
}

static sk_status parse_section(parser *p, const char *c, const char *end) {
    const char *close = memchr(c, ']', (size_t)(end - c));
    if (!close) return parse_error(p, "section header has no closing ']'");
    const char *name = c + 1, *name_end = close;
    while (name < name_end && is_blank(*name)) name++;
    while (name_end > name && is_blank(name_end[-1])) name_end--;
    const char *after = close + 1;
    while (after < end && is_blank(*after)) after++;
    if (after < end && *after != ';' && *after != '#')
        return parse_error(p, "unexpected text after [section] (expected a comment or the end "
                              "of the line)");
    size_t len = (size_t)(name_end - name);
    const char *problem = name_problem(name, len);
    if (problem) return parse_error(p, "section name '%.*s' %s", (int)len, name, problem);
    char *copy = strndup(name, len);
    if (!copy) return sk_fail(SK_ERR_NOMEM, "out of memory reading '%s'", p->source);
    int first = sections_add(&p->seen, copy, p->line);
    if (first != 0) {
        free(copy);
        if (first < 0) return sk_fail(SK_ERR_NOMEM, "out of memory reading '%s'", p->source);
        return parse_error(p, "duplicate section [%.*s] (first opened on line %d)", (int)len,
                           name, first);
    }
    free(p->section);
    p->section = copy;
    return SK_OK;
}

static sk_status parse_pair(parser *p, const char *c, const char *end) {
    const char *sep = c;
    while (sep < end && *sep != '=' && *sep != ':') sep++;
    if (sep == end)
        return parse_error(p, "syntax error (expected '[section]', 'key = value' or a comment)");
    const char *name_end = sep;
    while (name_end > c && is_blank(name_end[-1])) name_end--;
    int name_len = (int)(name_end - c);
    if (!p->section) return parse_error(p, "key '%.*s' is outside any [section]", name_len, c);
    const char *problem = name_problem(c, (size_t)name_len);
    if (problem)
        return parse_error(p, "bad key '%.*s' in section [%s]: it %s", name_len, c, p->section,
                           problem);
    size_t key_size = strlen(p->section) + (size_t)name_len + 2;
    char *key = malloc(key_size);
    if (!key) return sk_fail(SK_ERR_NOMEM, "out of memory reading '%s'", p->source);
    snprintf(key, key_size, "%s.%.*s", p->section, name_len, c);
    const char *value = sep + 1;
    while (value < end && is_blank(*value)) value++;
    sk_status status = decode_value(p, value, end, key);
    sk_config_entry *entry = find_entry(p->cfg, key);
    if (status == SK_OK && entry && entry->load_id == p->load_id)
        status = parse_error(p, "duplicate key '%s' (first set on line %d)", key, entry->line);
    if (status == SK_OK && (status = config_put(p->cfg, key, p->value, &entry)) == SK_OK) {
        entry->load_id = p->load_id;
        entry->line = p->line;
    }
    free(key);
    return status;
}

static sk_status parse_text(sk_config *cfg, const char *text, size_t size, const char *source) {
    parser p = {.cfg = cfg, .source = source, .load_id = ++cfg->loads};
    if (p.load_id == 0) p.load_id = ++cfg->loads; /* 0 marks sk_config_set */
    const char *c = text, *end = text + size;
    if (size >= 3 && memcmp(c, "\xEF\xBB\xBF", 3) == 0) c += 3; /* a UTF-8 byte-order mark */
    sk_status status = SK_OK;
    while (c < end && status == SK_OK) {
        p.line++;
        const char *line_end = memchr(c, '\n', (size_t)(end - c));
        if (!line_end) line_end = end;
        const char *next = line_end < end ? line_end + 1 : end;
        if (memchr(c, '\0', (size_t)(line_end - c))) {
            status = parse_error(&p, "NUL byte (expected a text file)");
            break;
        }
        if (line_end > c && line_end[-1] == '\r') line_end--;
        while (c < line_end && is_blank(*c)) c++;
        if (c == line_end || *c == ';' || *c == '#') {
        } else if (*c == '[') {
            status = parse_section(&p, c, line_end);
        } else {
            status = parse_pair(&p, c, line_end);
        }
        c = next;
    }
    free(p.section);
    free(p.value);
    sections_free(&p.seen);
    return status;
}

sk_status sk_config_load_file(sk_config *cfg, const char *path) {
    int64_t size;
    int fd;
    sk_status opened = sk_open_regular(path, SK_CONFIG_MAX_BYTES, "config file", &fd, &size);
    if (opened != SK_OK) return opened;
    char *text = malloc((size_t)size + 1);
    if (!text) {
        close(fd);
        return sk_fail(SK_ERR_NOMEM, "out of memory reading '%s'", path);
    }
    size_t len = 0;
    while (len < (size_t)size) {
        ssize_t n = read(fd, text + len, (size_t)size - len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            close(fd);
            free(text);
            return sk_fail(SK_ERR_IO, "cannot read config file '%s': %s", path, strerror(err));
        }
        if (n == 0) break; /* the file shrank while being read: parse what is there */
        len += (size_t)n;
    }
    close(fd);
    sk_status status = parse_text(cfg, text, len, path);
    free(text);
    return status;
}

sk_status sk_config_load_string(sk_config *cfg, const char *text) {
    return parse_text(cfg, text, strlen(text), "(config text)");
}

sk_status sk_config_load_buffer(sk_config *cfg, const char *data, size_t size, const char *source) {
    return parse_text(cfg, data, size, source);
}

bool sk_config_entry_at(const sk_config *cfg, int index, const char **key, const char **value) {
    if (index < 0 || index >= cfg->count) return false;
    *key = cfg->entries[index].key;
    *value = cfg->entries[index].value;
    return true;
}

/* ------------------------------------------------------------------ writing */

/* True if value would not read back as itself when written plain. */
static bool needs_quotes(const char *value) {
    size_t len = strlen(value);
    if (len == 0) return false;
    if (is_blank(value[0]) || is_blank(value[len - 1]) || value[0] == '"') return true;
    for (const unsigned char *c = (const unsigned char *)value; *c; c++)
        if (*c < 0x20 || *c == 0x7f || *c == ';' || *c == '#' || *c == '\\' || *c == '"')
            return true;
    return false;
}

static void write_value(FILE *out, const char *value) {
    if (!needs_quotes(value)) {
        fputs(value, out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
        switch (*c) {
        case '\\': fputs("\\\\", out); break;
        case '"': fputs("\\\"", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            if (*c < 0x20 || *c == 0x7f) fprintf(out, "\\x%02x", *c);
            else fputc(*c, out);
        }
    }
    fputc('"', out);
}

static int compare_entries(const void *a, const void *b) {
    return strcmp((*(const sk_config_entry *const *)a)->key, (*(const sk_config_entry *const *)b)->key);
}

static char *to_string(const sk_config *cfg, bool annotated) {
    const sk_config_entry **sorted = malloc((size_t)(cfg->count ? cfg->count : 1) * sizeof *sorted);
    if (!sorted) return NULL;
    for (int i = 0; i < cfg->count; i++) sorted[i] = &cfg->entries[i];
    if (cfg->count) qsort(sorted, (size_t)cfg->count, sizeof *sorted, compare_entries);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out) {
        free(sorted);
        return NULL;
    }
    const char *section = NULL; /* the key whose section is open */
    size_t section_len = 0;
    for (int i = 0; i < cfg->count; i++) {
        const char *key = sorted[i]->key, *dot = strchr(key, '.');
        size_t len = (size_t)(dot - key);
        if (!section || len != section_len || strncmp(section, key, len) != 0) {
            section = key;
            section_len = len;
            fprintf(out, "%s[%.*s]\n", i ? "\n" : "", (int)len, key);
        }
        if (annotated && sorted[i]->accepts) fprintf(out, "; %s\n", sorted[i]->accepts);
        fprintf(out, "%s = ", dot + 1);
        write_value(out, sorted[i]->value);
        fputc('\n', out);
    }
    bool failed = ferror(out) != 0;
    fclose(out);
    free(sorted);
    if (failed) {
        free(text);
        return NULL;
    }
    return text;
}

char *sk_config_to_string(const sk_config *cfg) { return to_string(cfg, false); }

char *sk_config_to_annotated_string(const sk_config *cfg) { return to_string(cfg, true); }

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

/* ------------------------------------------------------------------ typed reads */

/* Reads key, marking it used; records def (formatted) when absent. */
/* Records what the key's typed read accepts, for `skinner config`. */
static void note_accepts(const sk_config *cfg, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_accepts(const sk_config *cfg, const char *key, const char *fmt, ...) {
    sk_config_entry *entry = find_entry((sk_config *)cfg, key);
    if (!entry) return;
    char text[320];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    char *copy = strdup(text);
    if (!copy) return; /* only a help text is lost */
    free(entry->accepts);
    entry->accepts = copy;
}

const char *sk_config_accepts(const sk_config *cfg, const char *key) {
    const sk_config_entry *entry = find_entry((sk_config *)cfg, key);
    return entry ? entry->accepts : NULL;
}

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
    note_accepts(cfg, key, "an integer in %lld..%lld", (long long)lo, (long long)hi);
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
    note_accepts(cfg, key, "a number in %g..%g", lo, hi);
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
    note_accepts(cfg, key, "true or false");
    if (!sk_parse_bool(text, out))
        return sk_fail(SK_ERR_INVALID, "%s = '%s' is not a boolean (expected true or false)", key,
                       text ? text : "");
    return SK_OK;
}

sk_status sk_cfg_choice(const sk_config *cfg, const char *key, const char *def,
                        const char *const *choices, int *out) {
    const char *text = take(cfg, key, def);
    *out = -1;
    for (int i = 0; choices[i] && *out < 0; i++)
        if (text && strcmp(text, choices[i]) == 0) *out = i;
    char expected[256] = "";
    for (int i = 0; choices[i]; i++) {
        strncat(expected, i ? ", " : "", sizeof expected - strlen(expected) - 1);
        strncat(expected, choices[i], sizeof expected - strlen(expected) - 1);
    }
    note_accepts(cfg, key, "one of: %s", expected);
    if (*out >= 0) return SK_OK;
    /* names are lower case: 'SAC' is a spelling, not another choice */
    for (int i = 0; choices[i] && text; i++)
        if (strcasecmp(text, choices[i]) == 0)
            return sk_fail(SK_ERR_INVALID, "%s = '%s' is not one of: %s (did you mean '%s'? "
                           "the names are case-sensitive)", key, text, expected, choices[i]);
    return sk_fail(SK_ERR_INVALID, "%s = '%s' is not one of: %s", key, text ? text : "",
                   expected);
}

const char *sk_cfg_string(const sk_config *cfg, const char *key, const char *def) {
    return take(cfg, key, def);
}

sk_status sk_config_check_unused(const sk_config *cfg, const char *section) {
    return sk_cfg_check_unused(cfg, section);
}

const char *sk_cfg_first_unused(const sk_config *cfg, const char *section) {
    size_t len = strlen(section);
    for (int i = 0; i < cfg->count; i++) {
        const sk_config_entry *entry = &cfg->entries[i];
        if (!entry->used && strncmp(entry->key, section, len) == 0 && entry->key[len] == '.')
            return entry->key;
    }
    return NULL;
}

/* Levenshtein's distance between a and b (each at most 63 bytes; longer: far apart). */
static int edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63) return 64;
    int row[64];
    for (size_t j = 0; j <= m; j++) row[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        int diagonal = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int above = row[j];
            int best = diagonal + (a[i - 1] != b[j - 1]);
            if (above + 1 < best) best = above + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[m];
}

sk_status sk_cfg_check_unused(const sk_config *cfg, const char *section) {
    const char *key = sk_cfg_first_unused(cfg, section);
    if (!key) return SK_OK;
    /* the read keys hold every one this part knows, defaults included: the nearest of its
     * section, within a typo's reach of the name after the dot (1 edit for 4 letters or
     * fewer, else 2, or 1 in 4 of its letters), is the likely one */
    const char *nearest = NULL, *name = key + strlen(section) + 1; /* after "section." */
    int len = (int)strlen(name), best = (len <= 4 ? 1 : len / 4 > 2 ? len / 4 : 2) + 1;
    for (int i = 0; i < cfg->count; i++) {
        const sk_config_entry *entry = &cfg->entries[i];
        bool same_section = strncmp(entry->key, key, (size_t)(name - key)) == 0;
        int d = entry->used && same_section ? edit_distance(name, entry->key + (name - key)) : best;
        if (d < best) best = d, nearest = entry->key; /* the first of the nearest */
    }
    if (nearest) return sk_fail(SK_ERR_CONFIG, "unknown config key '%s' (did you mean '%s'?)", key, nearest);
    return sk_fail(SK_ERR_CONFIG, "unknown config key '%s'", key);
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

bool sk_config_read_as_path(const sk_config *cfg, const char *key) {
    const sk_config_entry *entry = find_entry((sk_config *)cfg, key);
    return entry && entry->path;
}

sk_status sk_cfg_path(const sk_config *cfg, const char *key, const char *def, const char **out) {
    const char *text = take(cfg, key, def);
    sk_config_entry *entry = find_entry((sk_config *)cfg, key);
    if (entry) entry->path = true;
    note_accepts(cfg, key, "a path (stored absolute)");
    *out = text;
    if (!text || !text[0] || text[0] == '/') return SK_OK;
    char *absolute = realpath(text, NULL);
    if (!absolute) {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            return sk_fail(SK_ERR_IO, "%s = '%s': cannot read the current directory to make it "
                                      "absolute: %s", key, text, strerror(errno));
        const char *rest = strncmp(text, "./", 2) == 0 ? text + 2 : text;
        size_t size = strlen(cwd) + strlen(rest) + 2;
        absolute = malloc(size);
        if (!absolute) return sk_fail(SK_ERR_NOMEM, "out of memory");
        snprintf(absolute, size, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", rest);
    }
    sk_status status = sk_config_set((sk_config *)cfg, key, absolute);
    free(absolute);
    if (status == SK_OK) *out = sk_config_get(cfg, key);
    return status;
}
