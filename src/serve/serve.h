/*
 * skinner serve: a read-only HTTP server (libmicrohttpd) over run folders and a
 * single-page app (web/). Requests name a run as "ROOT/REL" (the index of a folder
 * given on the command line, then a path under it); every file served is resolved
 * under that folder with its symlinks followed and refused if it lands outside
 * (docs/dashboard.md, "Safety").
 */
#ifndef SK_SERVE_H
#define SK_SERVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SK_SERVE_MAX_ROOTS 64
#define SK_SERVE_MIN_LL(a, b) ((a) < (b) ? (a) : (b))

typedef struct sk_serve_options {
    const char *roots[SK_SERVE_MAX_ROOTS]; /* folders to serve; at least one */
    int num_roots;
    const char *bind;     /* an IPv4 address; "127.0.0.1" by default */
    int port;             /* 0: a free port, printed */
    const char *web_dir;  /* the app; NULL: found next to the program */
    const char *port_file; /* if set, the bound port is written there (tests) */
} sk_serve_options;

/* Runs the server until SIGINT or SIGTERM. Returns 0, or 1 after printing why. */
int sk_serve_run(const sk_serve_options *opt);

/* ---- shared between the server's files (src/serve/) */

/* The canonical path of root's REL (a request's '/'-separated path, decoded),
 * malloc'd, or NULL when REL is absolute, has a "." or ".." part, a backslash or
 * a control byte, does not exist, or resolves (through symlinks) outside root. */
char *serve_resolve(const char *root_real, const char *rel);
/* True for a file name the API hands out: [A-Za-z0-9_.-], no leading dot. */
bool serve_safe_name(const char *name);
/* True for a run's video or picture the app may ask for: a safe name ending in .gif,
 * .mp4, .mkv, .webm or .png, alone or under videos/ ("videos/episodes.gif"). */
bool serve_media_name(const char *name);

/* A growing text buffer (serve_buf_*); on allocation failure ok turns false. */
typedef struct serve_buf {
    char *data;
    size_t len, cap;
    bool ok;
} serve_buf;
void serve_buf_put(serve_buf *b, const char *text, size_t len);
/* A string literal's length, the compiler's count: never a hand-counted number (a 51 for a
 * 52-byte event cut the blank line that ends it). The "" on each side refuses a pointer. */
#define SERVE_LIT_LEN(lit) (sizeof("" lit "") - 1)
#define SERVE_PUT_LIT(b, lit) serve_buf_put((b), "" lit "", SERVE_LIT_LEN(lit))
/* True when text begins with the literal prefix. */
#define SERVE_STARTS_WITH(text, lit) (strncmp((text), "" lit "", SERVE_LIT_LEN(lit)) == 0)
void serve_buf_printf(serve_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* text as a JSON string (quoted, escaped; bytes that are not UTF-8 become U+FFFD). */
void serve_buf_json_string(serve_buf *b, const char *text);
/* A number as JSON: null for NaN and infinities. */
void serve_buf_json_number(serve_buf *b, double x);

/* The JSON list of the runs and sweeps under the roots (runs.c). */
/* stop (NULL: never) is looked at before each folder: a listing of thousands of runs takes
 * seconds, and a server stopping waits for every answer in progress, so a stopping server's
 * listing ends early (and is not sent). */
void serve_list_runs(serve_buf *out, const char *const *roots_real, int num_roots,
                     const atomic_bool *stop);
/* One run's live state as JSON (runs.c): status, steps, return, ... */
void serve_run_status(serve_buf *out, const char *run_dir);

#endif
