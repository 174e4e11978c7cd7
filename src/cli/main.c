/* skinner: the command-line front end. It only dispatches: one table of commands gives the
 * usage text, the dispatch and the message for an unknown command; the commands' helpers are
 * in cli.c, below the commands, and nothing includes what this file defines (the layering
 * test holds both: docs/architecture.md, the layers block's `entry` and `base` lines). */
#include "cli.h"
#include "commands.h"
#include "comm_cli.h"

#include "core/core.h"
#include "core/isa.h"
#include "skinner/module.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A command of `skinner COMMAND [ARGS]`, as git's cmd_struct: its word, what follows it in
 * the usage line, the usage line's description, and the function that runs it (given the
 * arguments after the command word). */
typedef struct cli_command {
    const char *name;
    const char *args;
    const char *summary;
    int (*run)(int argc, char **argv);
} cli_command;

static const cli_command g_commands[] = {
    {"train", "ENV", "train an agent on ENV (PPO, SAC or DQN) and write a run folder", cmd_train},
    {"eval", "ENV", "evaluate a saved policy on ENV", cmd_eval},
    {"envs", "", "list the environments", cmd_envs},
    {"config", "ENV", "print the resolved config a training run of ENV would use", cmd_config},
    {"bench", "", "measure env stepping (bench env) or training (bench train) speed", cmd_bench},
    {"monitor", "DIR", "watch a run live: progress, returns, losses, the return curve",
     cmd_monitor},
    {"plot", "RUN_DIR [RUN_DIR ...]", "draw learning curves of run folders (PNG or SVG)",
     cmd_plot},
    {"kge", "", "train and rank knowledge-graph embeddings (TransE, ComplEx, RotatE)", cmd_kge},
    {"check", "ENV", "check an env (buffers, spaces, determinism, state) before training it",
     cmd_check},
    {"sweep", "", "search hyperparameters over training runs (resumable; sweep report DIR)",
     cmd_sweep},
    {"export", "CHECKPOINT", "write a saved policy as an ONNX model or a C header", cmd_export},
    {"serve", "[DIR ...]", "a web dashboard of the runs under DIR, live (read-only, loopback)",
     cmd_serve},
};
#define COMMAND_COUNT (sizeof g_commands / sizeof *g_commands)

/* A usage line's "NAME ARGS" is padded to this width when it fits with a space to spare, and
 * is followed by two spaces when it does not. */
#define USAGE_WIDTH 12

static void print_usage_line(FILE *out, const char *what, const char *summary) {
    if (strlen(what) < USAGE_WIDTH) fprintf(out, "  %-*s%s\n", USAGE_WIDTH, what, summary);
    else fprintf(out, "  %s  %s\n", what, summary);
}

/* The usage text: the commands' lines come from g_commands. */
static void print_usage(FILE *out) {
    fputs("usage: skinner COMMAND [ARGS]\n"
          "\n"
          "Train reinforcement-learning agents at hardware speed.\n"
          "\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < COMMAND_COUNT; i++) {
        char what[64];
        snprintf(what, sizeof what, "%s%s%s", g_commands[i].name, *g_commands[i].args ? " " : "",
                 g_commands[i].args);
        print_usage_line(out, what, g_commands[i].summary);
    }
    print_usage_line(out, "NAME ...", "a command a loaded module adds (docs/architecture.md: "
                                      "module commands)");
    fputs("\n"
          "global options (before or after COMMAND):\n"
          "  --env-lib FILE  load an env plugin (a .so built against <skinner/env.h>) and\n"
          "                  register its envs; repeatable\n"
          "\n"
          "'skinner COMMAND --help' describes each. ENV is an id (Gymnasium's, where the env\n"
          "has one) or a short alias as 'skinner envs' lists them, or FILE.so:ID for an env of\n"
          "a plugin. A run or a checkpoint of a plugin env needs the plugin again (--env-lib\n"
          "or FILE.so:ID).\n",
          out);
}

/* The refusal of an unknown command: the usage, then an error naming the known commands
 * (from g_commands) and the module commands' place. */
static int refuse_command(const char *command) {
    print_usage(stderr);
    char known[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < COMMAND_COUNT && used < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
                                 g_commands[i].name);
    return cli_error(SK_EXIT_USAGE,
                     "unknown command '%s' (expected %s, or a command a loaded module adds)",
                     command, known);
}

/* Removes every --env-lib FILE / --env-lib=FILE from argv (whichever command
 * follows) and loads each plugin, so that every command sees its envs.
 * SK_EXIT_USAGE for a missing FILE, SK_EXIT_FAILURE for a refused plugin. */
static int load_env_libs(int *argc, char **argv) {
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        const char *path = NULL;
        if (strcmp(argv[i], "--env-lib") == 0) {
            if (i + 1 >= *argc)
                return cli_error(SK_EXIT_USAGE, "option '--env-lib' needs a value (a plugin .so)");
            path = argv[++i];
        } else if (strncmp(argv[i], "--env-lib=", 10) == 0) {
            path = argv[i] + 10;
        } else {
            argv[kept++] = argv[i];
            continue;
        }
        if (sk_env_load_plugin(path) != SK_OK)
            return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    }
    argv[kept] = NULL;
    *argc = kept;
    return SK_EXIT_OK;
}

static int run_command(int argc, char **argv);

/* The command word: the first argument that is not an --env-lib option (which may come
 * before it), or NULL. */
static const char *command_word(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--env-lib") == 0)
            i++;
        else if (strncmp(argv[i], "--env-lib=", 10) != 0)
            return argv[i];
    }
    return NULL;
}

int main(int argc, char **argv) {
    /* Into a file or a pipe, stdout is fully buffered by default: a command's lines (a sweep's
     * header before its first trial, bench's per-env results) reached a log in bursts, or at
     * exit after stderr's later lines. Each line goes out as written, as on a terminal. */
    if (!isatty(STDOUT_FILENO)) setvbuf(stdout, NULL, _IOLBF, 0);
    /* under mpirun (or srun) this process is one rank of a distributed run;
     * `train` and `bench train` split their envs over the ranks (docs/distributed.md) */
    /* a sweep's ranks share its folder, not MPI (docs/sweeps.md): it starts no MPI */
    const char *command = command_word(argc, argv);
    bool sweep = command && strcmp(command, "sweep") == 0;
    int rc = sweep ? SK_EXIT_OK : cli_comm_init(&argc, &argv);
    if (rc != SK_EXIT_OK) return rc;
    rc = run_command(argc, argv);
    if (!sweep) cli_comm_finalize();
    return rc;
}

/* `skinner NAME ...` for a command a module adds (skinner/module.h): the
 * modules' sk_module_command_NAME, or -1 when none exports it. */
static int module_command(const char *command, int argc, char **argv) {
    size_t len = strlen(command);
    if (len == 0 || len > 64 || strspn(command, "abcdefghijklmnopqrstuvwxyz0123456789_") != len)
        return -1;
    char symbol[96];
    snprintf(symbol, sizeof symbol, "%s%s", SK_MODULE_COMMAND_PREFIX, command);
    void *found = sk_module_symbol(symbol);
    if (!found) return -1;
    sk_module_command_fn fn;
    memcpy(&fn, &found, sizeof fn); /* a data pointer to a function pointer, as dlsym's */
    return fn(argc, argv);
}

static int run_command(int argc, char **argv) {
    /* SKINNER_ISA naming a level this CPU lacks, or no level, is refused before anything runs */
    if (sk_isa_check() != SK_OK) return cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    int rc = load_env_libs(&argc, argv);
    if (rc != SK_EXIT_OK) return rc;
    if (argc < 2) {
        print_usage(stderr);
        return SK_EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        print_usage(stdout);
        return SK_EXIT_OK;
    }
    if (strcmp(command, "--version") == 0) {
        char isa[160];
        sk_isa_describe(isa, sizeof isa);
        printf("skinner %s\nkernels: %s\n", SK_VERSION, isa);
        return SK_EXIT_OK;
    }
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(command, g_commands[i].name) == 0) return g_commands[i].run(argc - 2, argv + 2);
    int module_rc = module_command(command, argc - 1, argv + 1);
    if (module_rc >= 0) return module_rc;
    return refuse_command(command);
}
