/* skinner serve's text helpers: a growing buffer, JSON strings and numbers, and the
 * path checks every file request goes through. */
#define _GNU_SOURCE
#include "serve.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void serve_buf_put(serve_buf *b, const char *text, size_t len) {
    if (!b->ok) return;
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len + 1) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->ok = false;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, text, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void serve_buf_printf(serve_buf *b, const char *fmt, ...) {
    char small[512];
    va_list args;
    va_start(args, fmt);
    int len = vsnprintf(small, sizeof small, fmt, args);
    va_end(args);
    if (len < 0) return;
    if ((size_t)len < sizeof small) {
        serve_buf_put(b, small, (size_t)len);
        return;
    }
    char *big = malloc((size_t)len + 1);
    if (!big) {
        b->ok = false;
        return;
    }
    va_start(args, fmt);
    vsnprintf(big, (size_t)len + 1, fmt, args);
    va_end(args);
    serve_buf_put(b, big, (size_t)len);
    free(big);
}

/* The length of the well-formed UTF-8 sequence at s (1-4), or 0 if it is not one (Unicode's
 * table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF). */
static size_t utf8_length(const unsigned char *s) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    for (size_t k = 1; k < n; k++)
        if ((s[k] & 0xC0) != 0x80) return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) || (c == 0xF0 && s[1] < 0x90) ||
        (c == 0xF4 && s[1] > 0x8F))
        return 0;
    return n;
}

void serve_buf_json_string(serve_buf *b, const char *text) {
    SERVE_PUT_LIT(b, "\"");
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        size_t n = utf8_length(s);
        if (n == 0) {
            SERVE_PUT_LIT(b, "\\ufffd");
            s++;
        } else if (*s == '"' || *s == '\\') {
            char esc[2] = {'\\', (char)*s};
            serve_buf_put(b, esc, sizeof esc);
            s++;
        } else if (*s < 0x20) {
            serve_buf_printf(b, "\\u%04x", *s);
            s++;
        } else {
            serve_buf_put(b, (const char *)s, n);
            s += n;
        }
    }
    SERVE_PUT_LIT(b, "\"");
}

void serve_buf_json_number(serve_buf *b, double x) {
    if (isfinite(x)) serve_buf_printf(b, "%.10g", x);
    else SERVE_PUT_LIT(b, "null");
}

bool serve_safe_name(const char *name) {
    if (!name[0] || name[0] == '.' || strlen(name) > 200) return false;
    for (const char *c = name; *c; c++)
        if (!(( *c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '.' || *c == '-'))
            return false;
    return true;
}

bool serve_media_name(const char *name) {
    if (SERVE_STARTS_WITH(name, "videos/")) name += SERVE_LIT_LEN("videos/");
    if (!serve_safe_name(name)) return false;
    const char *dot = strrchr(name, '.');
    const char *kinds[] = {".gif", ".mp4", ".mkv", ".webm", ".png"};
    for (size_t k = 0; dot && k < sizeof kinds / sizeof *kinds; k++)
        if (strcmp(dot, kinds[k]) == 0) return true;
    return false;
}

char *serve_resolve(const char *root_real, const char *rel) {
    if (rel[0] == '/' || strlen(rel) > 3000) return NULL;
    /* each part: not empty twice over, not "." or "..", no backslash, no control byte */
    const char *part = rel;
    while (*part) {
        size_t len = strcspn(part, "/");
        if ((len == 1 && part[0] == '.') || (len == 2 && part[0] == '.' && part[1] == '.'))
            return NULL;
        for (size_t k = 0; k < len; k++)
            if (part[k] == '\\' || (unsigned char)part[k] < 0x20) return NULL;
        part += len;
        if (*part == '/') part++;
    }
    char joined[4200];
    snprintf(joined, sizeof joined, "%s/%s", root_real, rel);
    char *real = realpath(joined, NULL);
    if (!real) return NULL;
    size_t root_len = strlen(root_real);
    bool inside = strncmp(real, root_real, root_len) == 0 &&
                  (real[root_len] == '\0' || real[root_len] == '/' ||
                   (root_len == 1 && root_real[0] == '/'));
    if (!inside) {
        free(real);
        return NULL;
    }
    return real;
}
