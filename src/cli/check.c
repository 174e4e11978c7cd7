/* skinner check ENV: the env checker (sk_check_env) on the command line. */
#include "../core/config.h"
#include "cli.h"
#include "commands.h"

#include <stdlib.h>
#include <string.h>

static const char *g_check_usage =
    "usage: skinner check ENV [--num-envs N] [--steps N] [--seed N] [--threads N]\n"
    "                         [--env.KEY VALUE ...] [--json]\n"
    "\n"
    "Checks an env before a long training trusts it (docs/check.md): canaries and\n"
    "guard zones around every buffer (slots never written, writes past a row's end\n"
    "or into rows outside the range stepped), observations inside the declared space,\n"
    "finite rewards, masks with a legal action, 0/1 flags, the time limit,\n"
    "final_obs and episode statistics, the same trajectory for the same seed (on 1\n"
    "and on several threads) and another for another seed, state arrays saved and\n"
    "restored bit for bit, a corrupted state refused, and the speed.\n"
    "Prints one line per check (pass, FAIL with the env index and step, skip, info)\n"
    "and a summary; exit 0 when every check passes, 1 when one fails, 2 on a usage\n"
    "error.\n"
    "\n"
    "  --num-envs N  envs per instance (default 16; 2 for a slow env, one that declares\n"
    "                a bench size of its own)\n"
    "  --steps N     steps per run (default max_episode_steps + 8, within 64..1024;\n"
    "                8 for a slow env)\n"
    "  --seed N      the envs' seed (default 1); seed N+1 is the 'different seed'\n"
    "  --threads N   workers of the thread check (default one per core, at least 2)\n"
    "  --env.KEY V   the env's config (e.g. --env.dataset DIR)\n"
    "  --env-lib P   load a plugin first (or name the env as P.so:ID)\n"
    "  --json        one JSON object: env, options, checks (name, status, detail,\n"
    "                env, step), passed, failed\n";

int cmd_check(int argc, char **argv) {
    if (argc < 1 || argv[0][0] == '-') {
        bool help = argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0);
        fputs(g_check_usage, help ? stdout : stderr);
        return help ? SK_EXIT_OK : cli_error(SK_EXIT_USAGE, "missing ENV (see 'skinner envs')");
    }
    const char *env_name = argv[0];
    long long num_envs = 0, steps = 0, seed = 1, threads = 0;
    bool json = false;
    int rc = SK_EXIT_OK;
    sk_config *cfg = sk_config_new();
    if (!cfg) return cli_error(SK_EXIT_FAILURE, "out of memory");
    cli_args args = {argc, 1, argv};
    while (args.index < argc && rc == SK_EXIT_OK) {
        const char *value = NULL, *arg = argv[args.index];
        bool missing = false;
        if (cli_env_flag(&args, cfg, &rc)) continue;
        if (cli_flag(&args, "--num-envs", &value, &missing)) {
            if (!missing) cli_parse_int("--num-envs", value, 1, 1 << 16, &num_envs, &rc);
        } else if (cli_flag(&args, "--steps", &value, &missing)) {
            if (!missing) cli_parse_int("--steps", value, 1, 1 << 24, &steps, &rc);
        } else if (cli_flag(&args, "--seed", &value, &missing)) {
            if (!missing) cli_parse_int("--seed", value, 0, 0x7fffffffffffffffLL, &seed, &rc);
        } else if (cli_flag(&args, "--threads", &value, &missing)) {
            if (!missing) cli_parse_int("--threads", value, 1, 1024, &threads, &rc);
        } else if (cli_flag(&args, "--json", NULL, NULL)) {
            json = true;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(g_check_usage, stdout);
            sk_config_free(cfg);
            return SK_EXIT_OK;
        } else {
            rc = cli_error(SK_EXIT_USAGE, "unknown option '%s' (see 'skinner check --help')", arg);
        }
        if (missing) rc = cli_error(SK_EXIT_USAGE, "option '%s' needs a value", arg);
    }
    const sk_env_def *env = rc == SK_EXIT_OK ? sk_env_find(env_name) : NULL;
    if (rc == SK_EXIT_OK && !env) rc = cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    if (rc != SK_EXIT_OK) {
        sk_config_free(cfg);
        return rc;
    }
    sk_check_options options = {.num_envs = (int)num_envs, .steps = (int)steps,
                                .seed = (uint64_t)seed, .threads = (int)threads};
    sk_check_report *report = malloc(sizeof *report);
    sk_status status = report ? sk_check_env(env, cfg, &options, report)
                              : sk_fail(SK_ERR_NOMEM, "out of memory");
    /* an env.* key that the env never read is a typo, as in every command */
    if (status == SK_OK && sk_cfg_check_unused(cfg, "env") != SK_OK) {
        rc = cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    } else if (status != SK_OK) {
        rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    } else if (json) {
        char *text = sk_check_json(report);
        if (text) puts(text);
        else rc = cli_error(SK_EXIT_FAILURE, "out of memory");
        free(text);
    } else {
        sk_check_print(report, stdout);
    }
    if (rc == SK_EXIT_OK && report->num_failed > 0) rc = SK_EXIT_FAILURE;
    free(report);
    sk_config_free(cfg);
    return rc;
}
