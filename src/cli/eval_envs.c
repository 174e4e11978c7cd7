/* skinner eval and skinner envs. */
#include "cli.h"
#include "commands.h"
#ifdef SKINNER_VIDEO
#include "../export/video/video.h"
#endif
#include "comm_cli.h"
#include "eval_versus.h"

#include "core/config.h"
#include "core/core.h"
#include "envs/registry.h"
#include "train/eval.h"
#include "train/plan.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *g_eval_usage =
    "usage: skinner eval ENV --checkpoint FILE|RUN_DIR [--env.KEY VALUE ...] [options]\n"
    "       skinner eval ENV --policy random|zero|heuristic [--config FILE] [--env.KEY VALUE ...]\n"
    "                        [options]\n"
    "       skinner eval ENV --help    (also lists ENV's evaluation options)\n"
    "\n"
    "Runs a saved policy, or a baseline controller, for N whole episodes and\n"
    "prints the mean and standard deviation of the return and of the env's other\n"
    "episode scores, and how often each head-0 action was taken.\n"
    "Baselines: 'random' takes uniform random actions (each head's allowed choices,\n"
    "continuous values within their bounds; --seed sets them); 'zero' takes action\n"
    "0 on every head; 'heuristic' is the env's hand-written controller, if it has one.\n"
    "They create the env from its preset (or --config) and --env.KEY overrides.\n"
    "A checkpoint carries its run's config; --env.KEY may only point its data\n"
    "locations elsewhere (keys the env reads as paths, such as env.dataset).\n"
    "\n"
    "An env may have an evaluation of its own (a ranking, say), which runs on a\n"
    "checkpoint in place of episodes unless --episodes is given. Its options are\n"
    "--eval.KEY VALUE, and the aliases the env declares for them; 'skinner eval\n"
    "ENV --help' lists them. Progress goes to stderr.\n"
    "\n"
    "options:\n"
    "  --checkpoint FILE   a policy.safetensors written by 'skinner train', or the run\n"
    "                      folder that holds it\n"
    "  --policy NAME       checkpoint (default, needs --checkpoint), random, zero or\n"
    "                      heuristic\n"
    "  --config FILE       baselines: INI layered on the env's preset to create it\n"
    "  --episodes N        episodes to run (default 100); with an env's own\n"
    "                      evaluation, run N episodes and report returns instead\n"
    "  --greedy            take the most likely action instead of sampling (DQN and SAC\n"
    "                      runs always do: argmax Q, tanh of the actor's mean)\n"
    "  --epsilon E         a DQN run: with chance E a uniform allowed action (default 0)\n"
    "  --seed N            seed of the env resets and action sampling, or the env's\n"
    "                      own evaluation's eval.seed (default 1)\n"
    "  --threads N         an env's own evaluation: worker threads (default 0: all\n"
    "                      cores)\n"
    "  --eval.KEY VALUE    an option of the env's own evaluation (see ENV --help)\n"
    "  --json              print one JSON object\n"
    "  --trace FILE        write every evaluated step (actions, op name, reward) and\n"
    "                      every episode's scores to FILE as JSON lines\n"
    "  --video FILE        record the episodes (one env, one after another) as FILE.mp4,\n"
    "                      .mkv, .webm or .gif, a frame a step from the env's render\n"
    "  --fps N             the video's frames a second (default 30)\n"
    "  --opponent NAME     a multi-agent env: the checkpoint (or --policy random or\n"
    "                      heuristic) plays one agent, NAME every other, the first move\n"
    "                      alternating; prints win, draw and loss rates with 95% Wilson\n"
    "                      intervals. NAME: random, heuristic, one of the env's own (ENV\n"
    "                      --help lists them), or a checkpoint\n";

typedef struct own_progress {
    const char *name; /* the evaluation's */
    bool tty;
    double started, last_print;
    bool printed;
} own_progress;

/* On a terminal an updating line, otherwise a line every 2 seconds. */
static void own_progress_update(int done, int total, const char *unit, void *user) {
    own_progress *p = user;
    double now = sk_now();
    if (now - p->last_print < (p->tty ? 0.1 : 2.0) && done < total) return;
    if (!p->tty && done == total && !p->printed) return; /* short runs stay quiet */
    p->last_print = now;
    p->printed = true;
    fprintf(stderr, "%s%s: %d/%d %s  %.1fs%s", p->tty ? "\r" : "", p->name, done, total, unit,
            now - p->started, p->tty ? "\033[K" : "\n");
    if (p->tty && done == total) fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* A failure of the evaluation: a bad or unknown eval.* option is a usage
 * error, named by its flag (eval.KEY was given as --KEY). */
static int own_error(sk_status status) {
    const char *message = sk_last_error();
    bool option = status == SK_ERR_CONFIG || (status == SK_ERR_INVALID && strncmp(message, "eval.", 5) == 0);
    if (!option) return cli_error(SK_EXIT_FAILURE, "%s", message);
    if (strncmp(message, "eval.", 5) == 0) return cli_error(SK_EXIT_USAGE, "--%s", message + 5);
    return cli_error(SK_EXIT_USAGE, "%s", message);
}

/* The env's own evaluation (a ranking, say) of a checkpoint. */
static int eval_own(sk_run_plan *plan, const sk_config *overrides, const sk_config *options,
                    int threads, bool json) {
    const sk_env_def *env = plan->env;
    const sk_env_evaluation *evaluation = sk_env_extras_of(env)->evaluation;
    /* under mpirun the evaluation's units (a ranking's queries) are split over
     * the ranks and merged; rank 0 reports */
    const sk_comm *comm = cli_comm();
    bool root = comm->rank == 0;
    own_progress progress = {.name = evaluation->name, .tty = isatty(STDERR_FILENO), .started = sk_now()};
    progress.last_print = progress.started;
    sk_loaded_policy lp;
    sk_status loaded = sk_policy_load_plan(&lp, plan, overrides);
    sk_status status = sk_comm_agree(comm, loaded);
    if (status != SK_OK) {
        if (loaded == SK_OK) sk_loaded_policy_free(&lp);
        return root ? cli_error(SK_EXIT_FAILURE, "%s", sk_last_error()) : SK_EXIT_FAILURE;
    }
    sk_env_report report;
    status = sk_evaluate_env_comm(&lp, options, threads, comm, root ? own_progress_update : NULL,
                                  &progress, &report);
    sk_loaded_policy_free(&lp);
    status = sk_comm_agree(comm, status);
    if (!root) return status == SK_OK ? SK_EXIT_OK : SK_EXIT_FAILURE;
    if (status != SK_OK) return own_error(status);
    if (!json) {
        fputs(report.text, stdout);
        return SK_EXIT_OK;
    }
    printf("{\"env\": \"%s\"", env->id);
    if (report.json[0]) printf(", %s", report.json);
    else
        for (int k = 0; k < report.num_metrics; k++)
            printf(", \"%s\": %.6g", report.metrics[k].name, report.metrics[k].value);
    printf("}\n");
    return SK_EXIT_OK;
}

static const char *action_name(const sk_env_def *env, int a, char *buf, size_t size) {
    for (int k = 0; sk_env_extras_of(env)->action_names && sk_env_extras_of(env)->action_names[k]; k++)
        if (k == a) return sk_env_extras_of(env)->action_names[k];
    snprintf(buf, size, "%d", a);
    return buf;
}

/* A score with at least 3 significant digits and at least 2 decimals, never
 * in exponent form: 0.957, 0.0312, 21.50, 500.00 (a fixed %.2f showed a small
 * return as 0.96 +- 0.03). */
static const char *format_score(char *buf, size_t size, double value) {
    enum { MIN_DIGITS = 3, MIN_DECIMALS = 2, MAX_DECIMALS = 8 };
    int decimals = MIN_DECIMALS;
    if (isfinite(value) && value != 0.0)
        decimals = (int)SK_MAX(MIN_DECIMALS, SK_MIN(MAX_DECIMALS, MIN_DIGITS - 1 -
                                                    (int)floor(log10(fabs(value)))));
    snprintf(buf, size, "%.*f", decimals, value);
    return buf;
}

/* The return, the env's other episode scores, and the head-0 actions taken. */
static void print_eval(const sk_env_def *env, const char *who, bool greedy,
                       const sk_eval_result *r, bool json) {
    int64_t steps = 0;
    for (int a = 0; a < r->num_ops; a++) steps += r->op_counts[a];
    char buf[32];
    if (json) {
        printf("{\"env\": \"%s\", \"policy\": \"%s\", \"episodes\": %d, \"mean_return\": %.6g, "
               "\"std_return\": %.6g, \"min_return\": %.6g, \"max_return\": %.6g, "
               "\"mean_length\": %.6g, \"greedy\": %s",
               env->id, who, r->episodes, r->mean_return, r->std_return, r->min_return,
               r->max_return, r->mean_length, greedy ? "true" : "false");
        for (int f = 2; f < r->num_log_fields; f++)
            printf(", \"%s\": %.6g, \"%s_std\": %.6g", env->log_names[f], r->log_mean[f],
                   env->log_names[f], r->log_std[f]);
        if (r->num_ops) {
            printf(", \"actions\": {");
            for (int a = 0; a < r->num_ops; a++)
                printf("%s\"%s\": %lld", a ? ", " : "", action_name(env, a, buf, sizeof buf),
                       (long long)r->op_counts[a]);
            printf("}");
        }
        printf("}\n");
        return;
    }
    char mean[32], std[32], min[32], max[32];
    printf("%s: %d episode%s, return %s +- %s (min %s, max %s), length %.1f\n", env->id,
           r->episodes, r->episodes == 1 ? "" : "s", format_score(mean, sizeof mean, r->mean_return),
           format_score(std, sizeof std, r->std_return),
           format_score(min, sizeof min, r->min_return),
           format_score(max, sizeof max, r->max_return), r->mean_length);
    for (int f = 2; f < r->num_log_fields; f++)
        printf("  %-14s %10s +- %s\n", env->log_names[f],
               format_score(mean, sizeof mean, r->log_mean[f]),
               format_score(std, sizeof std, r->log_std[f]));
    if (r->num_ops && steps > 0 && sk_env_extras_of(env)->action_names) {
        printf("  actions:");
        for (int a = 0; a < r->num_ops; a++)
            printf(" %s %.1f%%", action_name(env, a, buf, sizeof buf),
                   100.0 * (double)r->op_counts[a] / (double)steps);
        printf("\n");
    }
}

static const char *const g_kind_values[] = {"N", "X", "true|false", "NAME", "TEXT", "PATH"};

/* env's evaluation options, as `skinner eval ENV --help` prints them. */
static void print_env_options(const sk_env_def *env) {
    const sk_env_evaluation *evaluation = sk_env_extras_of(env)->evaluation;
    const sk_env_option *table = sk_env_extras_of(env)->eval_options;
    if (!evaluation) {
        printf("\n%s has no evaluation of its own: it is evaluated by return over --episodes.\n",
               env->id);
        return;
    }
    printf("\n%s has an evaluation of its own, its %s, run on a checkpoint without\n"
           "--episodes: %s.\nIts options:\n", env->id, evaluation->name,
           evaluation->description ? evaluation->description : "");
    if (!table || !table[0].name) {
        printf("  (none declared: --eval.KEY VALUE goes to it unchecked)\n");
        return;
    }
    for (const sk_env_option *option = table; option->name; option++) {
        unsigned kind = (unsigned)option->kind;
        const char *value = kind < sizeof g_kind_values / sizeof *g_kind_values
                                ? g_kind_values[kind] : "VALUE";
        printf("  --eval.%s %s", option->name, value);
        if (option->alias)
            printf(option->alias_value ? " (%s: %s)" : " (or %s)", option->alias,
                   option->alias_value ? option->alias_value : "");
        printf("\n      %s", option->help ? option->help : "");
        if (option->kind == SK_OPTION_CHOICE && option->choices) {
            printf("; one of ");
            for (int c = 0; option->choices[c]; c++)
                printf("%s%s", c ? ", " : "", option->choices[c]);
        } else if (option->kind == SK_OPTION_INT && option->high >= 0x1p63) {
            printf("; at least %.0f", option->low);
        } else if (option->kind == SK_OPTION_INT || option->kind == SK_OPTION_DOUBLE) {
            printf("; %.10g to %.10g", option->low, option->high);
        }
        if (option->default_text) printf("; default %s", option->default_text);
        printf("\n");
    }
}

/* The option of env's table that the flag names (--eval.NAME, '-' read as
 * '_', or a declared alias); NULL if none. *by_alias says which. */
static const sk_env_option *find_option(const sk_env_def *env, const char *flag, size_t length,
                                        bool *by_alias) {
    const sk_env_option *table = sk_env_extras_of(env)->eval_options;
    for (const sk_env_option *option = table; option && option->name; option++) {
        *by_alias = option->alias && strlen(option->alias) == length &&
                    strncmp(option->alias, flag, length) == 0;
        if (*by_alias) return option;
        const char *name = flag + strlen("--eval.");
        size_t name_length = length - strlen("--eval.");
        if (length <= strlen("--eval.") || strncmp(flag, "--eval.", strlen("--eval.")) != 0 ||
            strlen(option->name) != name_length)
            continue;
        bool same = true;
        for (size_t k = 0; k < name_length && same; k++)
            same = option->name[k] == (name[k] == '-' ? '_' : name[k]);
        if (same) return option;
    }
    return NULL;
}

/* Whether value suits option (a usage error naming flag in *exit_code if not). */
static bool check_option(const sk_env_option *option, const char *flag, const char *value,
                         int *exit_code) {
    long long whole;
    double number;
    bool truth;
    switch (option->kind) {
    case SK_OPTION_INT: {
        /* a double of INT64_MAX rounds to 2^63, past long long */
        long long high = option->high >= 0x1p63 ? INT64_MAX : (long long)option->high;
        return cli_parse_int(flag, value, (long long)option->low, high, &whole, exit_code);
    }
    case SK_OPTION_DOUBLE:
        return cli_parse_double(flag, value, option->low, option->high, &number, exit_code);
    case SK_OPTION_BOOL:
        if (sk_parse_bool(value, &truth)) return true;
        *exit_code = cli_error(SK_EXIT_USAGE, "%s '%s' (expected true or false)", flag, value);
        return false;
    case SK_OPTION_CHOICE: {
        char expected[256] = "";
        for (int c = 0; option->choices && option->choices[c]; c++) {
            if (strcmp(option->choices[c], value) == 0) return true;
            size_t used = strlen(expected);
            snprintf(expected + used, sizeof expected - used, "%s%s", c ? ", " : "",
                     option->choices[c]);
        }
        *exit_code = cli_error(SK_EXIT_USAGE, "%s '%s' (expected one of: %s)", flag, value, expected);
        return false;
    }
    default:
        return true;
    }
}

/* An unknown flag: refused naming the env's evaluation options. */
static int unknown_flag(const sk_env_def *env, const char *arg) {
    const sk_env_option *table = sk_env_extras_of(env)->eval_options;
    if (!table || !table[0].name)
        return cli_error(SK_EXIT_USAGE, "unknown option '%s' (see 'skinner eval --help'; %s declares "
                                        "no evaluation options)",
                         arg, env->id);
    char names[1024] = "";
    for (const sk_env_option *option = table; option->name; option++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s--eval.%s", option == table ? "" : ", ",
                 option->name);
    }
    return cli_error(SK_EXIT_USAGE, "unknown option '%s' (see 'skinner eval %s --help'; %s's "
                                    "evaluation options: %s)",
                     arg, env->id, env->id, names);
}

/* Reads argv[args->index] if it is one of env's evaluation options (or any
 * --eval.KEY when the env has an evaluation but declares no table) into
 * options as eval.NAME; false if it is not. *exit_code says whether it was
 * refused. */
static bool eval_option_flag(cli_args *args, const sk_env_def *env, sk_config *options,
                             int *exit_code) {
    const char *arg = args->argv[args->index];
    size_t length = strcspn(arg, "=");
    bool by_alias = false;
    const sk_env_option *option = find_option(env, arg, length, &by_alias);
    const sk_env_option *table = sk_env_extras_of(env)->eval_options;
    bool unchecked = !option && sk_env_extras_of(env)->evaluation && (!table || !table[0].name) &&
                     length > strlen("--eval.") && strncmp(arg, "--eval.", strlen("--eval.")) == 0;
    if (!option && !unchecked) return false;
    *exit_code = SK_EXIT_OK;
    const char *value = NULL;
    args->index++;
    if (by_alias && option->alias_value) {
        if (arg[length] == '=') {
            *exit_code = cli_error(SK_EXIT_USAGE, "%.*s takes no value", (int)length, arg);
            return true;
        }
        value = option->alias_value;
    } else if (arg[length] == '=') {
        value = arg + length + 1;
    } else if (args->index < args->argc) {
        value = args->argv[args->index++];
    } else {
        *exit_code = cli_error(SK_EXIT_USAGE, "option '%s' needs a value", arg);
        return true;
    }
    char flag[128], key[160];
    snprintf(flag, sizeof flag, "%.*s", (int)length, arg);
    if (option && !check_option(option, flag, value, exit_code)) return true;
    if (option) snprintf(key, sizeof key, "eval.%s", option->name);
    else snprintf(key, sizeof key, "%s", flag + 2);
    for (char *c = key; *c; c++)
        if (*c == '-') *c = '_';
    if (sk_config_set(options, key, value) != SK_OK)
        *exit_code = cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    return true;
}

/* The command's plan: the checkpoint --checkpoint names (a run folder read as
 * its policy.safetensors) opened once and the plugin it records loaded once,
 * then the env argv[0] names, found once. A baseline (--policy other than
 * checkpoint) reads no checkpoint: its refusal comes with the other flags'. */
static int resolve_plan(int argc, char **argv, sk_run_plan *plan) {
    const char *checkpoint = NULL, *policy = "checkpoint";
    cli_args args = {argc, 1, argv};
    while (args.index < argc) {
        const char *value = NULL;
        bool missing = false;
        if (cli_flag(&args, "--checkpoint", &value, &missing)) {
            if (!missing) checkpoint = value;
        } else if (cli_flag(&args, "--policy", &value, &missing)) {
            if (!missing) policy = value;
        } else {
            args.index++;
        }
    }
    struct stat info;
    if (checkpoint && strcmp(policy, "checkpoint") == 0) {
        char in_dir[4200];
        snprintf(in_dir, sizeof in_dir, "%s/policy.safetensors", checkpoint);
        if (stat(checkpoint, &info) == 0 && S_ISDIR(info.st_mode) && access(in_dir, F_OK) != 0)
            return cli_error(SK_EXIT_FAILURE,
                             "--checkpoint %s is a directory without policy.safetensors (expected a "
                             "run folder written by 'skinner train', or the checkpoint file)",
                             checkpoint);
        if (sk_run_plan_set_checkpoint(plan, checkpoint) != SK_OK)
            return cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    }
    sk_status status = sk_run_plan_resolve_env(plan, argv[0]);
    if (status == SK_ERR_UNKNOWN_ENV) return cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    if (status != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    return SK_EXIT_OK;
}

/* --video FILE: the episodes recorded one after another (src/export/video/), in place of
 * the evaluation's batch of envs, so that nothing is drawn unless a video is asked for. */
static int eval_video(sk_run_plan *plan, sk_config *cfg, const char *path, int episodes,
                      bool greedy, long long seed, int fps, bool baseline) {
    if (baseline) return cli_error(SK_EXIT_USAGE, "--video records a checkpoint's episodes");
#ifdef SKINNER_VIDEO
    sk_loaded_policy lp;
    sk_status status = sk_policy_load_plan(&lp, plan, cfg);
    if (status != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    char parent[4096]; /* RUN/videos/NAME.gif: the folder is made, as a run's is */
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        status = sk_mkdirs(parent);
    }
    sk_video_summary summary;
    greedy = greedy || lp.greedy_only; /* dqn, sac: as it acts */
    if (status == SK_OK)
        status = sk_video_record(&lp, path, episodes, greedy, (uint64_t)seed, fps, &summary);
    sk_loaded_policy_free(&lp);
    if (status != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    printf("%s: %d episode%s, %d frame%s to %s, mean return %.2f%s\n", plan->env->id,
           summary.episodes, summary.episodes == 1 ? "" : "s", summary.frames,
           summary.frames == 1 ? "" : "s", path, summary.mean_return, greedy ? " (greedy)" : "");
    return SK_EXIT_OK;
#else
    (void)plan, (void)cfg, (void)path, (void)episodes, (void)greedy, (void)seed, (void)fps;
    return cli_error(SK_EXIT_FAILURE, "this skinner was built without FFmpeg's libraries "
                                      "(libavcodec-dev, libavformat-dev, libswscale-dev): no --video");
#endif
}

/* cfg collects --env.KEY overrides, options the eval.* options of the env's
 * own evaluation; the caller frees both. */
static int eval_with(int argc, char **argv, sk_run_plan *plan, sk_config *options) {
    sk_config *cfg = plan->cfg;
    bool help = false;
    for (int i = 0; i < argc; i++)
        help |= strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
    if (help) {
        fputs(g_eval_usage, stdout);
        const sk_env_def *named = argc >= 1 && argv[0][0] != '-' ? sk_env_find(argv[0]) : NULL;
        if (named) print_env_options(named);
        if (named) cli_print_opponents(named);
        return SK_EXIT_OK;
    }
    if (argc < 1 || argv[0][0] == '-') {
        fputs(g_eval_usage, stderr);
        return cli_error(SK_EXIT_USAGE, "missing ENV (see 'skinner envs')");
    }
    const char *checkpoint = NULL, *policy = "checkpoint", *config_path = NULL, *trace = NULL;
    const char *video = NULL, *opponent = NULL;
    long long fps = 30;
    int rc = resolve_plan(argc, argv, plan);
    if (rc != SK_EXIT_OK) return rc;
    const sk_env_def *env = plan->env;
    long long episodes = 100, seed = 1, threads = -1;
    bool greedy = false, json = false, explicit_episodes = false, explicit_seed = false;
    double epsilon = 0.0;
    const char *own_flag = NULL; /* the first flag given for the env's own evaluation */
    cli_args args = {argc, 1, argv};
    while (args.index < argc) {
        const char *value = NULL, *arg = argv[args.index];
        bool missing = false;
        if (cli_env_flag(&args, cfg, &rc) || eval_option_flag(&args, env, options, &rc)) {
            if (rc != SK_EXIT_OK) return rc;
            if (strncmp(arg, "--env.", strlen("--env.")) != 0) own_flag = own_flag ? own_flag : arg;
            continue;
        }
        if (cli_flag(&args, "--checkpoint", &value, &missing)) {
            if (!missing) checkpoint = value; /* resolve_plan set the plan's */
        } else if (cli_flag(&args, "--policy", &value, &missing)) {
            if (!missing) policy = value;
        } else if (cli_flag(&args, "--config", &value, &missing)) {
            config_path = value;
        } else if (cli_flag(&args, "--episodes", &value, &missing)) {
            if (!missing && !cli_parse_int("--episodes", value, 1, 10000000, &episodes, &rc))
                return rc;
            explicit_episodes = true;
        } else if (cli_flag(&args, "--threads", &value, &missing)) {
            if (!missing && !cli_parse_int("--threads", value, 0, 4096, &threads, &rc)) return rc;
            own_flag = own_flag ? own_flag : arg;
        } else if (cli_flag(&args, "--seed", &value, &missing)) {
            if (!missing && !cli_parse_int("--seed", value, 0, INT64_MAX, &seed, &rc)) return rc;
            explicit_seed = true;
        } else if (cli_flag(&args, "--greedy", NULL, NULL)) {
            greedy = true;
        } else if (cli_flag(&args, "--epsilon", &value, &missing)) { /* DQN's exploration */
            if (!missing && !cli_parse_double("--epsilon", value, 0.0, 1.0, &epsilon, &rc))
                return rc;
        } else if (cli_flag(&args, "--json", NULL, NULL)) {
            json = true;
        } else if (cli_flag(&args, "--trace", &value, &missing)) {
            trace = value;
        } else if (cli_flag(&args, "--video", &value, &missing)) {
            video = value;
        } else if (cli_flag(&args, "--opponent", &value, &missing)) {
            opponent = value;
        } else if (cli_flag(&args, "--fps", &value, &missing)) {
            if (!missing && !cli_parse_int("--fps", value, 1, 240, &fps, &rc)) return rc;
        } else {
            return unknown_flag(env, arg);
        }
        if (missing) return cli_error(SK_EXIT_USAGE, "option '%s' needs a value", arg);
    }
    bool baseline = strcmp(policy, "checkpoint") != 0;
    sk_controller controller = SK_CONTROLLER_ZERO;
    if (strcmp(policy, "heuristic") == 0) controller = SK_CONTROLLER_HEURISTIC;
    else if (strcmp(policy, "random") == 0) controller = SK_CONTROLLER_RANDOM;
    else if (baseline && strcmp(policy, "zero") != 0)
        return cli_error(SK_EXIT_USAGE,
                         "--policy '%s' (expected checkpoint, random, zero or heuristic)", policy);
    if (baseline && checkpoint)
        return cli_error(SK_EXIT_USAGE, "--policy %s runs without a checkpoint; drop --checkpoint",
                         policy);
    if (!baseline && !checkpoint)
        return cli_error(SK_EXIT_USAGE,
                         "eval needs --checkpoint FILE (or --policy random|zero|heuristic)");
    if (!baseline && config_path)
        return cli_error(SK_EXIT_USAGE,
                         "--config is for baselines; a checkpoint carries its config (--env.KEY "
                         "may point its data locations elsewhere)");
    const sk_env_evaluation *evaluation = sk_env_extras_of(env)->evaluation;
    bool own = evaluation && !explicit_episodes && !baseline;
    if (epsilon > 0.0 && (baseline || own || video || opponent))
        return cli_error(SK_EXIT_USAGE, "--epsilon acts with a DQN checkpoint over --episodes, "
                         "not with %s", baseline ? "--policy" : own ? "an env's own evaluation"
                                                    : video ? "--video" : "--opponent");
    if (!own && own_flag) {
        if (!evaluation)
            return cli_error(SK_EXIT_USAGE,
                             "%s is an option of an env's own evaluation; %s has none and is "
                             "evaluated by return over --episodes",
                             own_flag, env->id);
        return cli_error(SK_EXIT_USAGE,
                         "%s is an option of %s %s, which runs on a checkpoint without "
                         "--episodes; drop one of them",
                         own_flag, env->id, evaluation->name);
    }
    if (own && trace)
        return cli_error(SK_EXIT_USAGE, "--trace follows episodes; %s %s runs none (add --episodes N)",
                         env->id, evaluation->name);
    if (own) {
        char seed_text[24];
        snprintf(seed_text, sizeof seed_text, "%lld", seed);
        if (explicit_seed && sk_config_set(options, "eval.seed", seed_text) != SK_OK)
            return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
        return eval_own(plan, cfg, options, threads < 0 ? 0 : (int)threads, json);
    }
    if (opponent)
        return cli_eval_versus(plan, cfg, opponent, baseline ? policy : NULL, config_path,
                               trace || video, (int)episodes, greedy, (uint64_t)seed, json);
    if (video) return eval_video(plan, cfg, video, (int)episodes, greedy, seed, (int)fps, baseline);
    /* under mpirun each rank runs a slice of the evaluation envs; rank 0 reports */
    const sk_comm *comm = cli_comm();
    sk_eval_result result;
    sk_status status;
    if (baseline) {
        sk_config *base = NULL;
        if ((rc = cli_baseline_config(env, config_path, cfg, &base)) != SK_EXIT_OK) return rc;
        status = sk_evaluate_controller_env_comm(env, base, controller, (int)episodes,
                                                 (uint64_t)seed, trace, comm, &result);
        if (status == SK_OK) status = sk_cfg_check_unused(base, "env");
        sk_config_free(base);
    } else {
        sk_loaded_policy lp;
        status = sk_policy_load_plan(&lp, plan, cfg);
        bool loaded = status == SK_OK;
        status = sk_comm_agree(comm, status); /* every rank evaluates, or none does */
        /* sk_evaluate_with_options' path from here on, with the checkpoint the plan opened */
        sk_eval_options how = {.greedy = greedy, .epsilon = epsilon, .trace_path = trace};
        if (status == SK_OK)
            status = sk_evaluate_loaded_comm(&lp, (int)episodes, (uint64_t)seed, &how, comm,
                                             &result);
        greedy = greedy || (loaded && lp.greedy_only); /* dqn, sac: as it acted */
        if (loaded) sk_loaded_policy_free(&lp);
    }
    if (comm->rank != 0) return status == SK_OK ? SK_EXIT_OK : SK_EXIT_FAILURE;
    if (status != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    print_eval(env, baseline ? policy : plan->checkpoint_path, greedy, &result, json);
    return SK_EXIT_OK;
}

int cli_baseline_config(const sk_env_def *env, const char *config_path,
                        const sk_config *overrides, sk_config **out) {
    sk_config *base = sk_config_new();
    if (!base) return cli_error(SK_EXIT_FAILURE, "out of memory");
    int rc = cli_load_config(base, env, config_path, NULL);
    if (rc != SK_EXIT_OK) {
        sk_config_free(base);
        return rc;
    }
    const char *key, *value;
    for (int k = 0; sk_config_entry_at(overrides, k, &key, &value); k++) sk_config_set(base, key, value);
    int64_t training_envs; /* the preset's, for training: an evaluation sizes its own */
    sk_cfg_int(base, "env.num_envs", 1, 1, INT32_MAX, &training_envs);
    *out = base;
    return SK_EXIT_OK;
}

int cmd_eval(int argc, char **argv) {
    sk_run_plan plan;
    sk_status status = sk_run_plan_init(&plan);
    sk_config *options = sk_config_new();
    int rc = status == SK_OK && options ? eval_with(argc, argv, &plan, options)
                                        : cli_error(SK_EXIT_FAILURE, "out of memory");
    sk_run_plan_free(&plan);
    sk_config_free(options);
    return rc;
}

/* An optional name (an env's alias may be NULL) for a table cell. */
static const char *or_dash(const char *text) { return text ? text : "-"; }

/* Gymnasium's names: Discrete(n) for one head, MultiDiscrete([n1 n2 ...]) for
 * several, Box(shape) with its bounds for continuous actions. */
static void describe_actions(char *buf, size_t size, const sk_action_space *space) {
    if (space->kind == SK_SPACE_CONTINUOUS) {
        snprintf(buf, size, "Box(%d) [%g, %g]", space->dim, space->low[0], space->high[0]);
        return;
    }
    if (space->num_heads == 1) {
        snprintf(buf, size, "Discrete(%d)", space->head_sizes[0]);
        return;
    }
    size_t used = (size_t)snprintf(buf, size, "MultiDiscrete([");
    for (int h = 0; h < space->num_heads && used < size; h++)
        used += (size_t)snprintf(buf + used, size - used, "%s%d", h ? " " : "", space->head_sizes[h]);
    if (used < size) snprintf(buf + used, size - used, "])");
}

/* text as a JSON string on stdout, or null for NULL (an env's alias and
 * summary may be NULL; a plugin's strings may hold quotes). */
void cli_print_json_text(const char *text) {
    if (!text) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') printf("\\%c", *c);
        else if (*c < 0x20) printf("\\u%04x", *c);
        else putchar(*c);
    }
    putchar('"');
}

/* The observation column: a float vector's size as before ("4"), else its
 * dtype and shape ("uint8 10x10x3"). */
static void describe_obs(char *buf, size_t size, const sk_env_def *env) {
    int dims[SK_MAX_OBS_DIMS];
    if (env->obs_dtype == SK_OBS_F32 && sk_obs_dims(env, dims) == 1)
        snprintf(buf, size, "%d", env->obs_size);
    else
        sk_env_obs_type(env, buf, size);
}

int cmd_envs(int argc, char **argv) {
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            puts("usage: skinner envs [--json]\n\nLists the environments: id, alias, observation "
                 "size,\naction space, episode limit and the return that counts as solved.");
            return SK_EXIT_OK;
        }
        if (strcmp(argv[i], "--json") == 0) json = true;
        else return cli_error(SK_EXIT_USAGE, "unknown option '%s' (see 'skinner envs --help')", argv[i]);
    }
    const sk_env_def *const *envs = sk_env_list();
    enum { ACTIONS_SIZE = 256, OBS_TYPE_SIZE = 96 };
    /* columns as wide as their widest entry */
    int id_width = (int)strlen("id"), alias_width = (int)strlen("alias");
    int actions_width = (int)strlen("actions"), obs_width = 4;
    for (int i = 0; envs[i]; i++) {
        char actions[ACTIONS_SIZE], obs[OBS_TYPE_SIZE];
        describe_actions(actions, sizeof actions, &envs[i]->action_space);
        describe_obs(obs, sizeof obs, envs[i]);
        obs_width = SK_MAX(obs_width, (int)strlen(obs));
        id_width = SK_MAX(id_width, (int)strlen(envs[i]->id));
        alias_width = SK_MAX(alias_width, (int)strlen(or_dash(envs[i]->alias)));
        actions_width = SK_MAX(actions_width, (int)strlen(actions));
    }
    bool any_configurable = false;
    if (!json)
        printf("%-*s  %-*s  %*s  %-*s  %9s  %9s  %s\n", id_width, "id", alias_width, "alias",
               obs_width + 1, "obs", actions_width, "actions", "max steps", "solved at", "summary");
    for (int i = 0; envs[i]; i++) {
        const sk_env_def *env = envs[i];
        char actions[ACTIONS_SIZE], threshold[32] = "null", obs[OBS_TYPE_SIZE];
        describe_actions(actions, sizeof actions, &env->action_space);
        describe_obs(obs, sizeof obs, env);
        if (isfinite(env->solved_threshold))
            snprintf(threshold, sizeof threshold, "%g", env->solved_threshold);
        bool configurable = env->configure != NULL;
        any_configurable |= configurable;
        if (json) {
            fputs("{\"id\": ", stdout);
            cli_print_json_text(env->id);
            fputs(", \"alias\": ", stdout);
            cli_print_json_text(env->alias);
            fputs(", \"summary\": ", stdout);
            cli_print_json_text(env->summary);
            int dims[SK_MAX_OBS_DIMS], num_dims = sk_obs_dims(env, dims);
            printf(", \"obs_size\": %d, \"obs_dtype\": \"%s\", \"obs_shape\": [", env->obs_size,
                   sk_obs_dtype_name(env->obs_dtype));
            for (int d = 0; d < num_dims; d++) printf("%s%d", d ? ", " : "", dims[d]);
            printf("], \"actions\": \"%s\", \"max_episode_steps\": %d, "
                   "\"solved_threshold\": %s, \"bench_num_envs\": %d, \"configurable\": %s}\n",
                   actions, env->max_episode_steps, threshold,
                   sk_env_extras_of(env)->bench_num_envs ? sk_env_extras_of(env)->bench_num_envs : 4096,
                   configurable ? "true" : "false");
        } else {
            printf("%-*s  %-*s  %*s%s  %-*s  %9d  %9s  %s\n", id_width, env->id, alias_width,
                   or_dash(env->alias), obs_width, obs, configurable ? "*" : " ", actions_width,
                   actions, env->max_episode_steps,
                   isfinite(env->solved_threshold) ? threshold : "-",
                   env->summary ? env->summary : "");
        }
    }
    if (!json && any_configurable)
        printf("* the defaults: these sizes follow the env's config keys (--env.KEY; see the "
               "env's docs)\n");
    return SK_EXIT_OK;
}
