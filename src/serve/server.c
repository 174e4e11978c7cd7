/* skinner serve's HTTP side (libmicrohttpd, a thread per connection): the app's static
 * files, the JSON and file endpoints, and the Server-Sent Events stream of a run's
 * appended metrics rows. Read-only: GET and HEAD only, nothing under a root is written. */
#define _GNU_SOURCE
#include "serve.h"

#include <microhttpd.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FILE_CHUNK_MAX (4u << 20)     /* bytes of a csv/jsonl file per request */
#define STREAM_POLL_NS 100000000L     /* 100 ms between looks at a streamed file */
#define STREAM_STATUS_EVERY 10        /* polls between status events (1 s) */
#define STREAM_CHUNK_MAX (1u << 20)   /* bytes of rows read per poll */
#define MEDIA_MAX (256ll << 20)       /* bytes of a video or picture served whole */

typedef struct server {
    char *roots[SK_SERVE_MAX_ROOTS]; /* canonical */
    int num_roots;
    char *web_dir, *vendor_dir;      /* canonical */
    bool loopback;
} server;

static atomic_bool g_stopping;

static void on_signal(int sig) {
    (void)sig;
    atomic_store(&g_stopping, true);
}

static enum MHD_Result send_response(struct MHD_Connection *c, unsigned code,
                                     struct MHD_Response *r, const char *type) {
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; style-src 'self' 'unsafe-inline'");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned code, const char *type,
                                 const char *text, size_t len) {
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
    return send_response(c, code, r, type);
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned code, const char *message) {
    serve_buf b = {.ok = true};
    SERVE_PUT_LIT(&b, "{\"error\":");
    serve_buf_json_string(&b, message);
    SERVE_PUT_LIT(&b, "}");
    enum MHD_Result ret = b.ok ? send_text(c, code, "application/json", b.data, b.len) : MHD_NO;
    free(b.data);
    return ret;
}

static enum MHD_Result send_buf(struct MHD_Connection *c, serve_buf *b, const char *type) {
    enum MHD_Result ret = b->ok ? send_text(c, MHD_HTTP_OK, type, b->data ? b->data : "", b->len)
                                : send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    free(b->data);
    return ret;
}

static const char *content_type(const char *path) {
    const char *dot = strrchr(path, '.');
    if (!dot) return "application/octet-stream";
    if (strcmp(dot, ".html") == 0) return "text/html; charset=utf-8";
    if (strcmp(dot, ".js") == 0) return "text/javascript; charset=utf-8";
    if (strcmp(dot, ".css") == 0) return "text/css; charset=utf-8";
    if (strcmp(dot, ".png") == 0) return "image/png";
    if (strcmp(dot, ".svg") == 0) return "image/svg+xml";
    if (strcmp(dot, ".gif") == 0) return "image/gif";
    if (strcmp(dot, ".mp4") == 0) return "video/mp4";
    if (strcmp(dot, ".mkv") == 0) return "video/x-matroska";
    if (strcmp(dot, ".webm") == 0) return "video/webm";
    if (strcmp(dot, ".json") == 0 || strcmp(dot, ".jsonl") == 0) return "text/plain; charset=utf-8";
    return "text/plain; charset=utf-8";
}

/* A run id "R" or "R/REL" to its canonical folder (malloc'd) and root, or NULL. */
static char *run_folder(const server *s, const char *id, int *root) {
    if (!id) return NULL;
    char *end = NULL;
    errno = 0;
    long r = strtol(id, &end, 10);
    if (errno || end == id || r < 0 || r >= s->num_roots || (*end != '\0' && *end != '/'))
        return NULL;
    if (root) *root = (int)r;
    return serve_resolve(s->roots[r], *end == '/' ? end + 1 : "");
}

/* The canonical path of NAME in run ID, checked against the run's root again (NAME
 * itself may be a symlink out). NAME is a safe name, or with media a video's name
 * (serve_media_name: "NAME.gif" or "videos/NAME.mp4"). */
static char *run_file(const server *s, const char *id, const char *name, bool media) {
    if (!name || !(media ? serve_media_name(name) : serve_safe_name(name))) return NULL;
    int root = 0;
    char *dir = run_folder(s, id, &root);
    if (!dir) return NULL;
    char *rel = NULL;
    char *path = NULL;
    size_t root_len = strlen(s->roots[root]);
    const char *dir_rel = dir[root_len] == '/' ? dir + root_len + 1 : "";
    if (asprintf(&rel, "%s%s%s", dir_rel, dir_rel[0] ? "/" : "", name) >= 0) {
        path = serve_resolve(s->roots[root], rel);
        free(rel);
    }
    free(dir);
    return path;
}

/* Opens path (freed here) for reading if it is a regular file: its descriptor, or -1. */
static int open_regular(char *path, struct stat *st) {
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    free(path);
    if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static bool parse_offset(const char *text, long long *out) {
    *out = 0;
    if (!text) return true;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < 0) return false;
    *out = v;
    return true;
}

/* /api/file?run=ID&name=NAME[&from=OFFSET]: a whole file, or for .csv and .jsonl the
 * complete lines from OFFSET (at most FILE_CHUNK_MAX bytes; X-Next-Offset says where
 * to go on; a line longer than that is skipped, X-Skipped-Bytes says how long). */
static enum MHD_Result api_file(const server *s, struct MHD_Connection *c) {
    const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "name");
    char *path =
        run_file(s, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "run"), name, false);
    if (!path) return send_error(c, MHD_HTTP_NOT_FOUND, "no such run file (or refused)");
    long long from;
    if (!parse_offset(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "from"), &from)) {
        free(path);
        return send_error(c, MHD_HTTP_BAD_REQUEST, "from must be a byte offset >= 0");
    }
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd < 0) return send_error(c, MHD_HTTP_NOT_FOUND, "cannot read the run file");
    const char *dot = strrchr(name, '.');
    bool lines = dot && (strcmp(dot, ".csv") == 0 || strcmp(dot, ".jsonl") == 0);
    if (!lines) {
        if (st.st_size > (off_t)FILE_CHUNK_MAX) {
            close(fd);
            return send_error(c, 413u, "file larger than 4 MiB");
        }
        struct MHD_Response *r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
        return send_response(c, MHD_HTTP_OK, r, content_type(name));
    }
    long long size = (long long)st.st_size;
    if (from > size) from = size; /* a file cut short (a resumed run): the client starts over */
    size_t want = (size_t)SK_SERVE_MIN_LL(size - from, (long long)FILE_CHUNK_MAX);
    char *data = malloc(want + 1);
    ssize_t got = data ? pread(fd, data, want, (off_t)from) : -1;
    if (got < 0) {
        close(fd);
        free(data);
        return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the run file");
    }
    size_t keep = (size_t)got;
    while (keep > 0 && data[keep - 1] != '\n') keep--;
    long long next = from + (long long)keep, skipped = 0;
    if (keep == 0 && (size_t)got == FILE_CHUNK_MAX) { /* one line longer than a chunk */
        long long at = from + got;
        char scan[65536];
        ssize_t n;
        while ((n = pread(fd, scan, sizeof scan, (off_t)at)) > 0) {
            char *nl = memchr(scan, '\n', (size_t)n);
            if (nl) {
                at += nl - scan + 1;
                skipped = at - from;
                break;
            }
            at += n;
        }
        if (skipped) next = at;
    }
    close(fd);
    struct MHD_Response *r = MHD_create_response_from_buffer(keep, data, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    char number[32];
    snprintf(number, sizeof number, "%lld", next);
    MHD_add_response_header(r, "X-Next-Offset", number);
    snprintf(number, sizeof number, "%lld", size);
    MHD_add_response_header(r, "X-File-Size", number);
    snprintf(number, sizeof number, "%lld", skipped);
    MHD_add_response_header(r, "X-Skipped-Bytes", number);
    MHD_add_response_header(r, "Access-Control-Expose-Headers", "X-Next-Offset");
    return send_response(c, MHD_HTTP_OK, r, "text/plain; charset=utf-8");
}

/* /api/media?run=ID&name=NAME: a run's video or picture whole (NAME as serve_media_name
 * takes it, e.g. videos/episodes.gif), with its Content-Type; at most MEDIA_MAX bytes. */
static enum MHD_Result api_media(const server *s, struct MHD_Connection *c) {
    const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "name");
    char *path =
        run_file(s, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "run"), name, true);
    if (!path) return send_error(c, MHD_HTTP_NOT_FOUND, "no such video (or refused)");
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd < 0) return send_error(c, MHD_HTTP_NOT_FOUND, "cannot read the video");
    if ((long long)st.st_size > MEDIA_MAX) {
        close(fd);
        return send_error(c, 413u, "video larger than 256 MiB");
    }
    struct MHD_Response *r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
    return send_response(c, MHD_HTTP_OK, r, content_type(name));
}

/* Appends the safe names of dir to b as JSON strings, each after prefix. */
static void list_names(serve_buf *b, const char *dir, const char *prefix, bool *first) {
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort);
    for (int k = 0; k < n; k++) {
        char entry[300];
        snprintf(entry, sizeof entry, "%s%s", prefix, names[k]->d_name);
        if (serve_safe_name(names[k]->d_name) && (!prefix[0] || serve_media_name(entry))) {
            if (!*first) SERVE_PUT_LIT(b, ",");
            *first = false;
            serve_buf_json_string(b, entry);
        }
        free(names[k]);
    }
    free(names);
}

/* /api/files?run=ID: the names in a run folder the app may ask for, and the videos in
 * its videos/ folder as "videos/NAME" (a videos/ that is a symlink is not looked in). */
static enum MHD_Result api_files(const server *s, struct MHD_Connection *c) {
    char *dir = run_folder(s, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "run"), NULL);
    if (!dir) return send_error(c, MHD_HTTP_NOT_FOUND, "no such run (or refused)");
    serve_buf b = {.ok = true};
    SERVE_PUT_LIT(&b, "[");
    bool first = true;
    list_names(&b, dir, "", &first);
    char videos[4200];
    snprintf(videos, sizeof videos, "%s/videos", dir);
    struct stat st;
    if (lstat(videos, &st) == 0 && S_ISDIR(st.st_mode)) list_names(&b, videos, "videos/", &first);
    free(dir);
    SERVE_PUT_LIT(&b, "]");
    return send_buf(c, &b, "application/json");
}

/* ---- the live stream: GET /api/stream?run=ID&from=OFFSET */

typedef struct stream {
    char *dir, *metrics;
    long long offset;
    int polls;
    bool told_missing;
    serve_buf pending; /* the next events, sent as the socket takes them */
    size_t sent;
} stream;

static void stream_free(void *cls) {
    stream *st = cls;
    free(st->dir);
    free(st->metrics);
    free(st->pending.data);
    free(st);
}

/* Appends the rows written since st->offset (complete lines) as one event. */
static void stream_rows(stream *st) {
    int fd = open(st->metrics, O_RDONLY | O_CLOEXEC);
    struct stat info;
    if (fd < 0 || fstat(fd, &info) != 0) {
        if (fd >= 0) close(fd);
        if (!st->told_missing)
            SERVE_PUT_LIT(&st->pending,
                          "event: failure\ndata: the run's metrics.csv is gone\n\n");
        st->told_missing = true;
        return;
    }
    st->told_missing = false;
    if ((long long)info.st_size < st->offset) { /* rewritten: a resumed or restarted run */
        SERVE_PUT_LIT(&st->pending, "event: reset\ndata: 0\n\n");
        st->offset = 0;
    }
    size_t want = (size_t)SK_SERVE_MIN_LL((long long)info.st_size - st->offset, STREAM_CHUNK_MAX);
    if (want == 0) {
        close(fd);
        return;
    }
    char *data = malloc(want);
    ssize_t got = data ? pread(fd, data, want, (off_t)st->offset) : -1;
    close(fd);
    size_t keep = got > 0 ? (size_t)got : 0;
    while (keep > 0 && data[keep - 1] != '\n') keep--;
    if (keep == 0 && got == (ssize_t)STREAM_CHUNK_MAX) keep = (size_t)got; /* a giant line */
    if (keep > 0) {
        serve_buf_printf(&st->pending, "id: %lld\n", st->offset + (long long)keep);
        for (size_t at = 0; at < keep;) {
            const char *line = data + at;
            const char *nl = memchr(line, '\n', keep - at);
            size_t len = nl ? (size_t)(nl - line) : keep - at;
            SERVE_PUT_LIT(&st->pending, "data: ");
            serve_buf_put(&st->pending, line, len && line[len - 1] == '\r' ? len - 1 : len);
            SERVE_PUT_LIT(&st->pending, "\n");
            at += len + 1;
        }
        SERVE_PUT_LIT(&st->pending, "\n");
        st->offset += (long long)keep;
    }
    free(data);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    stream *st = cls;
    for (;;) {
        if (atomic_load(&g_stopping)) return MHD_CONTENT_READER_END_OF_STREAM;
        if (!st->pending.ok) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (st->sent < st->pending.len) {
            size_t n = SK_SERVE_MIN_LL(st->pending.len - st->sent, max);
            memcpy(buf, st->pending.data + st->sent, n);
            st->sent += n;
            if (st->sent == st->pending.len) st->sent = st->pending.len = 0;
            return (ssize_t)n;
        }
        if (st->polls > 0) nanosleep(&(struct timespec){0, STREAM_POLL_NS}, NULL);
        if (st->polls++ % STREAM_STATUS_EVERY == 0) {
            SERVE_PUT_LIT(&st->pending, "event: status\ndata: ");
            serve_run_status(&st->pending, st->dir);
            SERVE_PUT_LIT(&st->pending, "\n\n");
        }
        stream_rows(st);
    }
}

static enum MHD_Result api_stream(const server *s, struct MHD_Connection *c) {
    const char *id = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "run");
    char *dir = run_folder(s, id, NULL);
    if (!dir) return send_error(c, MHD_HTTP_NOT_FOUND, "no such run (or refused)");
    long long from;
    const char *resume = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
    if (!parse_offset(resume ? resume : MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
                                                                   "from"),
                      &from)) {
        free(dir);
        return send_error(c, MHD_HTTP_BAD_REQUEST, "from must be a byte offset >= 0");
    }
    stream *st = calloc(1, sizeof *st);
    if (!st || asprintf(&st->metrics, "%s/metrics.csv", dir) < 0) {
        free(st);
        free(dir);
        return MHD_NO;
    }
    st->dir = dir;
    st->offset = from;
    st->pending.ok = true;
    SERVE_PUT_LIT(&st->pending, "retry: 1000\n\n");
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read, st, stream_free);
    if (!r) {
        stream_free(st);
        return MHD_NO;
    }
    return send_response(c, MHD_HTTP_OK, r, "text/event-stream");
}

/* ---- static files of the app */

static enum MHD_Result static_file(const server *s, struct MHD_Connection *c, const char *url) {
    const char *rel = url[0] == '/' ? url + 1 : url;
    if (!rel[0]) rel = "index.html";
    const char *base = s->web_dir;
    if (SERVE_STARTS_WITH(rel, "vendor/") && s->vendor_dir) {
        base = s->vendor_dir;
        rel += SERVE_LIT_LEN("vendor/");
    }
    char *path = serve_resolve(base, rel);
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0) close(fd);
        free(path);
        return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
    }
    const char *type = content_type(path);
    free(path);
    return send_response(c, MHD_HTTP_OK, MHD_create_response_from_fd((uint64_t)st.st_size, fd),
                         type);
}

/* A page on loopback answers only to a loopback Host: another site's page that has its
 * name resolved to 127.0.0.1 (DNS rebinding) gets nothing. */
static bool host_allowed(const server *s, struct MHD_Connection *c) {
    if (!s->loopback) return true;
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (!host) return true;
    const char *allowed[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t k = 0; k < sizeof allowed / sizeof *allowed; k++) {
        size_t len = strlen(allowed[k]);
        if (strncmp(host, allowed[k], len) == 0 && (host[len] == '\0' || host[len] == ':'))
            return true;
    }
    return false;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls) {
    (void)version;
    (void)upload_data;
    const server *s = cls;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET and HEAD only");
    if (*req_cls == NULL) { /* first call: headers only */
        *req_cls = (void *)1;
        return MHD_YES;
    }
    if (*upload_data_size) return send_error(c, MHD_HTTP_BAD_REQUEST, "no request bodies");
    if (!host_allowed(s, c)) return send_error(c, MHD_HTTP_FORBIDDEN, "Host not loopback");
    if (strcmp(url, "/api/runs") == 0) {
        serve_buf b = {.ok = true};
        serve_list_runs(&b, (const char *const *)s->roots, s->num_roots, &g_stopping);
        return send_buf(c, &b, "application/json");
    }
    if (strcmp(url, "/api/status") == 0) {
        char *dir =
            run_folder(s, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "run"), NULL);
        if (!dir) return send_error(c, MHD_HTTP_NOT_FOUND, "no such run (or refused)");
        serve_buf b = {.ok = true};
        serve_run_status(&b, dir);
        free(dir);
        return send_buf(c, &b, "application/json");
    }
    if (strcmp(url, "/api/file") == 0) return api_file(s, c);
    if (strcmp(url, "/api/files") == 0) return api_files(s, c);
    if (strcmp(url, "/api/media") == 0) return api_media(s, c);
    if (strcmp(url, "/api/stream") == 0) return api_stream(s, c);
    if (SERVE_STARTS_WITH(url, "/api/")) return send_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
    return static_file(s, c, url);
}

static int fail(const char *fmt, const char *what, const char *why) {
    fputs("skinner: error: ", stderr);
    fprintf(stderr, fmt, what, why);
    fputc('\n', stderr);
    return 1;
}

int sk_serve_run(const sk_serve_options *opt) {
    server s = {0};
    int rc = 0;
    for (int r = 0; r < opt->num_roots && rc == 0; r++) {
        s.roots[r] = realpath(opt->roots[r], NULL);
        struct stat st;
        if (!s.roots[r] || stat(s.roots[r], &st) != 0 || !S_ISDIR(st.st_mode))
            rc = fail("cannot serve '%s': %s (expected a folder of runs)", opt->roots[r],
                      s.roots[r] ? "not a folder" : strerror(errno));
        s.num_roots = r + 1;
    }
    if (rc == 0) {
        s.web_dir = opt->web_dir ? realpath(opt->web_dir, NULL) : NULL;
        if (!s.web_dir)
            rc = fail("no web app at '%s' (%s; expected index.html there: --web DIR)",
                      opt->web_dir ? opt->web_dir : "(none)", strerror(errno));
    }
    if (rc == 0) {
        char vendor[4200];
        snprintf(vendor, sizeof vendor, "%s/vendor", s.web_dir);
        s.vendor_dir = realpath(vendor, NULL);
#ifdef SKINNER_VENDOR_DIR /* the build tree's program: Chart.js where Debian puts it */
        if (!s.vendor_dir) s.vendor_dir = realpath(SKINNER_VENDOR_DIR, NULL);
#endif
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt->port)};
    const char *bind = opt->bind ? opt->bind : "127.0.0.1";
    if (rc == 0 && inet_pton(AF_INET, bind, &addr.sin_addr) != 1)
        rc = fail("--bind '%s' is not an IPv4 address (%s, e.g. 127.0.0.1)", bind, "expected one");
    s.loopback = (ntohl(addr.sin_addr.s_addr) >> 24) == 127;
    struct MHD_Daemon *daemon = NULL;
    if (rc == 0) {
        signal(SIGPIPE, SIG_IGN);
        daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
                                  0, NULL, NULL, handle, &s, MHD_OPTION_SOCK_ADDR, &addr,
                                  MHD_OPTION_CONNECTION_LIMIT, 256u,
                                  MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
        if (!daemon)
            rc = fail("cannot listen on %s (%s: another server on that port?)", bind,
                      strerror(errno));
    }
    if (rc == 0) {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
        unsigned port = info ? info->port : (unsigned)opt->port;
        printf("skinner serve: http://%s:%u/ (%d folder%s; Ctrl-C stops)\n", bind, port,
               s.num_roots, s.num_roots == 1 ? "" : "s");
        fflush(stdout);
        if (opt->port_file) {
            char tmp[4200];
            snprintf(tmp, sizeof tmp, "%s.tmp", opt->port_file);
            FILE *f = fopen(tmp, "w");
            if (f) {
                fprintf(f, "%u\n", port);
                fclose(f);
                rename(tmp, opt->port_file);
            }
        }
        struct sigaction sa = {.sa_handler = on_signal};
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        while (!atomic_load(&g_stopping)) nanosleep(&(struct timespec){0, 50000000L}, NULL);
        MHD_stop_daemon(daemon);
    }
    for (int r = 0; r < s.num_roots; r++) free(s.roots[r]);
    free(s.web_dir);
    free(s.vendor_dir);
    return rc;
}
