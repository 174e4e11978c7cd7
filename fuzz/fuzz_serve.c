/* skinner serve's readers of run files and request paths (src/serve/): the input is cut at
 * its first two NUL bytes into a request path, a config.ini and a live.bin; the path must
 * resolve under the root or be refused, and the run's status must come out as JSON with no
 * raw control byte and only well-formed UTF-8, whatever the files hold. The path is also a
 * video's name for /api/media: one it accepts is a safe name with a media extension, alone or
 * under videos/, and resolves under the root. */
#include "fuzz_util.h"

#include "serve/serve.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static char g_root[64];

static void write_file(const char *name, const uint8_t *data, size_t size) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", g_root, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) abort();
    close(fd);
}

/* True when text is well-formed UTF-8 with no byte below 0x20. */
static bool clean_utf8(const unsigned char *s, size_t len) {
    for (size_t k = 0; k < len;) {
        unsigned char c = s[k];
        size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c < 0xE0) ? 2 : (c >= 0xE0 && c < 0xF0) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
        if (n == 0 || k + n > len || c < 0x20) return false;
        for (size_t j = 1; j < n; j++)
            if ((s[k + j] & 0xC0) != 0x80) return false;
        k += n;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_root[0]) {
        snprintf(g_root, sizeof g_root, "/tmp/skinner-fuzz-serve-XXXXXX");
        if (!mkdtemp(g_root)) abort();
    }
    const uint8_t *end = data + size;
    const uint8_t *cut1 = memchr(data, 0, size);
    const uint8_t *config = cut1 ? cut1 + 1 : end;
    const uint8_t *cut2 = cut1 ? memchr(config, 0, (size_t)(end - config)) : NULL;
    const uint8_t *live = cut2 ? cut2 + 1 : end;
    char rel[512];
    size_t rel_len = (size_t)((cut1 ? cut1 : end) - data);
    if (rel_len >= sizeof rel) rel_len = sizeof rel - 1;
    memcpy(rel, data, rel_len);
    rel[rel_len] = '\0';
    write_file("config.ini", config, (size_t)((cut2 ? cut2 : end) - config));
    write_file("live.bin", live, (size_t)(end - live));

    char *real = serve_resolve(g_root, rel);
    if (real && (strncmp(real, g_root, strlen(g_root)) != 0 ||
                 (real[strlen(g_root)] != '\0' && real[strlen(g_root)] != '/')))
        abort(); /* a path out of the root was let through */
    free(real);

    if (serve_media_name(rel)) { /* /api/media's names: [videos/]NAME.EXT, nothing else */
        const char *name = strncmp(rel, "videos/", 7) == 0 ? rel + 7 : rel;
        const char *dot = strrchr(name, '.');
        if (strchr(name, '/') || name[0] == '.' || !dot || dot == name ||
            !(strcmp(dot, ".gif") == 0 || strcmp(dot, ".mp4") == 0 || strcmp(dot, ".mkv") == 0 ||
              strcmp(dot, ".webm") == 0 || strcmp(dot, ".png") == 0))
            abort();
        char *media = serve_resolve(g_root, rel);
        if (media && strncmp(media, g_root, strlen(g_root)) != 0) abort();
        free(media);
    }

    serve_buf out = {.ok = true};
    serve_run_status(&out, g_root);
    if (out.ok && !clean_utf8((const unsigned char *)out.data, out.len)) abort();
    free(out.data);
    out = (serve_buf){.ok = true};
    serve_buf_json_string(&out, rel);
    if (out.ok && !clean_utf8((const unsigned char *)out.data, out.len)) abort();
    free(out.data);
    return 0;
}
