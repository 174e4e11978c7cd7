/* skinner serve [DIR ...]: the web dashboard over run folders (src/serve/, docs/dashboard.md). */
#include "cli.h"
#include "commands.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SKINNER_SERVE
#include "serve/serve.h"
#endif

static const char *g_serve_usage =
    "usage: skinner serve [DIR ...] [--port N] [--bind ADDR] [--web DIR]\n"
    "\n"
    "Serves a web dashboard of the runs and sweeps found under each DIR (default: runs),\n"
    "read-only, with live charts of running runs. Open the printed address in a browser.\n"
    "\n"
    "  --port N      TCP port (default 8080; 0 picks a free one)\n"
    "  --bind ADDR   IPv4 address to listen on (default 127.0.0.1, this machine only)\n"
    "  --web DIR     the app's files (default: installed with skinner)\n"
    "  --port-file F write the port bound to F once listening (for scripts)\n";

#ifdef SKINNER_SERVE
/* The app next to the program (a build tree) or where it was installed. */
static const char *find_web_dir(char *buf, size_t size) {
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        snprintf(buf, size, "%s/" SKINNER_BIN_TO_PREFIX "/" SKINNER_DATADIR_REL
                            "/skinner/web/index.html", exe);
        if (access(buf, R_OK) == 0) {
            buf[strlen(buf) - strlen("/index.html")] = '\0';
            return buf;
        }
    }
    snprintf(buf, size, "%s", SKINNER_WEB_SOURCE_DIR);
    return buf;
}
#endif

int cmd_serve(int argc, char **argv) {
    cli_args args = {.argc = argc, .argv = argv};
    const char *roots[64];
    int num_roots = 0;
    const char *port_text = "8080", *bind = "127.0.0.1", *web = NULL, *port_file = NULL;
    while (args.index < argc) {
        bool missing = false;
        const char *arg = argv[args.index];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(g_serve_usage, stdout);
            return SK_EXIT_OK;
        }
        if (cli_flag(&args, "--port", &port_text, &missing) ||
            cli_flag(&args, "--bind", &bind, &missing) || cli_flag(&args, "--web", &web, &missing) ||
            cli_flag(&args, "--port-file", &port_file, &missing)) {
            if (missing) return cli_error(SK_EXIT_USAGE, "%s needs a value", arg);
            continue;
        }
        if (arg[0] == '-') return cli_error(SK_EXIT_USAGE, "serve: unknown option '%s'", arg);
        if (num_roots == 64) return cli_error(SK_EXIT_USAGE, "serve: at most 64 folders");
        roots[num_roots++] = arg;
        args.index++;
    }
    long long port = 0;
    int exit_code = SK_EXIT_OK;
    if (!cli_parse_int("--port", port_text, 0, 65535, &port, &exit_code)) return exit_code;
#ifdef SKINNER_SERVE
    sk_serve_options opt = {.bind = bind, .port = (int)port, .port_file = port_file};
    if (num_roots == 0) roots[num_roots++] = "runs";
    for (int k = 0; k < num_roots; k++) opt.roots[k] = roots[k];
    opt.num_roots = num_roots;
    char web_buf[4200];
    opt.web_dir = web ? web : find_web_dir(web_buf, sizeof web_buf);
    return sk_serve_run(&opt) == 0 ? SK_EXIT_OK : SK_EXIT_FAILURE;
#else
    (void)web;
    (void)port_file;
    return cli_error(SK_EXIT_FAILURE, "serve: this skinner was built without libmicrohttpd "
                                      "(scripts/setup.sh installs libmicrohttpd-dev; rebuild)");
#endif
}
