/* skinner eval and skinner envs. */
#include "cli.h"
#include "comm_cli.h"

#include "core/config.h"
#include "core/core.h"
#include "train/eval.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *g_eval_usage =
    "usage: skinner eval ENV --checkpoint FILE|RUN_DIR [--env.KEY VALUE ...] [options]\n"
    "       skinner eval ENV --policy random|zero|heuristic [--config FILE] [--env.KEY VALUE ...]\n"
    "                        [options]\n"
    "\n"
    "Runs a saved policy, or a baseline controller, for N whole episodes and\n"
    "prints the mean and standard deviation of the return and of the env's other\n"
    "episode scores (Morpho-v0: test accuracy, extra parameters, fossils,\n"
    "Shapley values), and how often each head-0 action was taken.\n"
    "Baselines: 'random' takes uniform random actions (each head's allowed choices,\n"
    "continuous values within their bounds; --seed sets them); 'zero' takes action\n"
    "0 on every head (Morpho-v0: WAIT, the host alone); 'heuristic' is the env's\n"
    "hand-written controller (Morpho-v0 has one).\n"
    "They create the env from its preset (or --config) and --env.KEY overrides.\n"
    "A checkpoint carries its run's config; --env.KEY may only point its data\n"
    "locations elsewhere (keys the env reads as paths, such as env.dataset).\n"
    "\n"
    "Prover-v0 is ranked instead, unless --episodes is given: each query of a\n"
    "split and its head and/or tail corruptions (filtered: known true facts left\n"
    "out) are proved with greedy actions and scored by the log-probability of\n"
    "the proof found, a failed proof below any success, ties broken at random;\n"
    "prints MRR and Hits@1/3/10 of the true query for each ranked side and\n"
    "overall (their mean). Progress goes to stderr.\n"
    "\n"
    "options:\n"
    "  --checkpoint FILE   a policy.safetensors written by 'skinner train', or the run\n"
    "                      folder that holds it\n"
    "  --policy NAME       checkpoint (default, needs --checkpoint), random, zero or\n"
    "                      heuristic\n"
    "  --config FILE       baselines: INI layered on the env's preset to create it\n"
    "  --episodes N        episodes to run (default 100); for Prover-v0, run N\n"
    "                      episodes and report returns instead of ranking\n"
    "  --greedy            take the most likely action instead of sampling\n"
    "                      (ranking always does)\n"
    "  --seed N            seed of the env resets and action sampling, or of the\n"
    "                      ranking's tie-breaking (default 1)\n"
    "  --json              print one JSON object\n"
    "  --trace FILE        write every evaluated step (actions, op name, reward) and\n"
    "                      every episode's scores to FILE as JSON lines\n"
    "  --split NAME        Prover-v0 ranking: train, valid or test (default test)\n"
    "  --queries N         Prover-v0 ranking: the first N queries of the split\n"
    "                      (default: all)\n"
    "  --threads N         Prover-v0 ranking: worker threads (default 0: all cores)\n"
    "  --corrupt SIDE      Prover-v0 ranking: head, tail or both (default: the\n"
    "                      run's env.corrupt; Countries' protocol is tail)\n"
    "  --negatives N       Prover-v0 ranking: N sampled corruptions per side\n"
    "                      (filtered, without replacement); default 0: all of them\n"
    "  --kge RUN_OR_FILE   Prover-v0 ranking: a 'skinner kge train' model; reports\n"
    "                      RL-only, KGE-only and hybrid figures of the same candidates\n"
    "  --kge-weight W      hybrid = W log sigmoid(kge) + proof term (default 1)\n"
    "  --proof MODE        fixed: + --proof-bonus for a proof (default 1), or\n"
    "                      logprob: + --rl-weight x its log-probability (default 1);\n"
    "                      a failed proof: - --fail-penalty (default 0)\n"
    "  --branches N        Prover-v0 ranking: after the greedy proof, also try other\n"
    "                      actions at each of its first N steps (then greedy again);\n"
    "                      a candidate scores its best proof (default 0: the greedy\n"
    "                      proof only)\n"
    "  --alternatives K    with --branches: the 2nd to (K+1)th most likely actions at\n"
    "                      each such step (default 1)\n"
    "  --no-prune          Prover-v0 ranking: run the policy on every candidate, also\n"
    "                      those the kb's least model shows unprovable (by default\n"
    "                      they fail without a step; the figures are the same)\n";

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

/* The env's own evaluation (as Prover-v0's ranking) of a checkpoint. */
static int eval_own(const sk_env_def *env, const char *checkpoint, const sk_config *overrides,
                    const sk_config *options, int threads, bool json) {
    const sk_env_evaluation *evaluation = sk_env_extras_of(env)->evaluation;
    /* under mpirun the evaluation's units (Prover-v0's queries) are split over
     * the ranks and merged; rank 0 reports */
    const sk_comm *comm = cli_comm();
    bool root = comm->rank == 0;
    own_progress progress = {.name = evaluation->name, .tty = isatty(STDERR_FILENO), .started = sk_now()};
    progress.last_print = progress.started;
    sk_loaded_policy lp;
    sk_status loaded = sk_policy_load_with(&lp, checkpoint, env->id, overrides);
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
    printf("%s: %d episodes, return %s +- %s (min %s, max %s), length %.1f\n", env->id,
           r->episodes, format_score(mean, sizeof mean, r->mean_return),
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

/* Sets eval.NAME for the flag --NAME (an option of the env's own evaluation). */
static int set_option(sk_config *options, const char *flag, const char *value) {
    char key[64];
    size_t name = strcspn(flag + 2, "="); /* --NAME or --NAME=VALUE */
    snprintf(key, sizeof key, "eval.%.*s", (int)name, flag + 2);
    for (char *c = key; *c; c++) /* --kge-weight: eval.kge_weight */
        if (*c == '-') *c = '_';
    if (sk_config_set(options, key, value) != SK_OK)
        return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    return SK_EXIT_OK;
}

/* cfg collects --env.KEY overrides, options the eval.* options of the env's
 * own evaluation; the caller frees both. */
static int eval_with(int argc, char **argv, sk_config *cfg, sk_config *options) {
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        fputs(g_eval_usage, stdout);
        return SK_EXIT_OK;
    }
    if (argc < 1 || argv[0][0] == '-') {
        fputs(g_eval_usage, stderr);
        return cli_error(SK_EXIT_USAGE, "missing ENV (see 'skinner envs')");
    }
    const char *checkpoint = NULL, *policy = "checkpoint", *config_path = NULL, *trace = NULL;
    long long episodes = 100, seed = 1, threads = -1;
    bool greedy = false, json = false, explicit_episodes = false, explicit_seed = false;
    const char *own_flag = NULL; /* the first flag given for the env's own evaluation */
    int rc = SK_EXIT_OK;
    cli_args args = {argc, 1, argv};
    while (args.index < argc) {
        const char *value = NULL, *arg = argv[args.index];
        bool missing = false;
        if (cli_env_flag(&args, cfg, &rc)) {
            if (rc != SK_EXIT_OK) return rc;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(g_eval_usage, stdout);
            return SK_EXIT_OK;
        } else if (cli_flag(&args, "--checkpoint", &value, &missing)) {
            checkpoint = value;
        } else if (cli_flag(&args, "--policy", &value, &missing)) {
            if (!missing) policy = value;
        } else if (cli_flag(&args, "--config", &value, &missing)) {
            config_path = value;
        } else if (cli_flag(&args, "--episodes", &value, &missing)) {
            if (!missing && !cli_parse_int("--episodes", value, 1, 10000000, &episodes, &rc))
                return rc;
            explicit_episodes = true;
        } else if (cli_flag(&args, "--split", &value, &missing) ||
                   cli_flag(&args, "--corrupt", &value, &missing) ||
                   cli_flag(&args, "--kge", &value, &missing) ||
                   cli_flag(&args, "--negatives", &value, &missing) ||
                   cli_flag(&args, "--branches", &value, &missing) ||
                   cli_flag(&args, "--alternatives", &value, &missing) ||
                   cli_flag(&args, "--kge-weight", &value, &missing) ||
                   cli_flag(&args, "--rl-weight", &value, &missing) ||
                   cli_flag(&args, "--proof", &value, &missing) ||
                   cli_flag(&args, "--proof-bonus", &value, &missing) ||
                   cli_flag(&args, "--fail-penalty", &value, &missing)) {
            /* eval.split, eval.corrupt: the evaluation checks the value */
            if (!missing && (rc = set_option(options, arg, value)) != SK_EXIT_OK) return rc;
            own_flag = own_flag ? own_flag : arg;
        } else if (cli_flag(&args, "--queries", &value, &missing)) {
            long long queries;
            if (!missing && !cli_parse_int("--queries", value, 1, INT32_MAX, &queries, &rc))
                return rc;
            if (!missing && (rc = set_option(options, arg, value)) != SK_EXIT_OK) return rc;
            own_flag = own_flag ? own_flag : arg;
        } else if (cli_flag(&args, "--threads", &value, &missing)) {
            if (!missing && !cli_parse_int("--threads", value, 0, 4096, &threads, &rc)) return rc;
            own_flag = own_flag ? own_flag : arg;
        } else if (cli_flag(&args, "--seed", &value, &missing)) {
            if (!missing && !cli_parse_int("--seed", value, 0, INT64_MAX, &seed, &rc)) return rc;
            explicit_seed = true;
        } else if (cli_flag(&args, "--no-prune", NULL, NULL)) {
            if ((rc = set_option(options, "--prune", "false")) != SK_EXIT_OK) return rc;
            own_flag = own_flag ? own_flag : arg;
        } else if (cli_flag(&args, "--greedy", NULL, NULL)) {
            greedy = true;
        } else if (cli_flag(&args, "--json", NULL, NULL)) {
            json = true;
        } else if (cli_flag(&args, "--trace", &value, &missing)) {
            trace = value;
        } else {
            return cli_error(SK_EXIT_USAGE, "unknown option '%s' (see 'skinner eval --help')", arg);
        }
        if (missing) return cli_error(SK_EXIT_USAGE, "option '%s' needs a value", arg);
    }
    char checkpoint_in_dir[4200];
    struct stat checkpoint_info;
    if (checkpoint && stat(checkpoint, &checkpoint_info) == 0 && S_ISDIR(checkpoint_info.st_mode)) {
        /* a run folder: its checkpoint */
        snprintf(checkpoint_in_dir, sizeof checkpoint_in_dir, "%s/policy.safetensors", checkpoint);
        if (access(checkpoint_in_dir, F_OK) != 0)
            return cli_error(SK_EXIT_FAILURE,
                             "--checkpoint %s is a directory without policy.safetensors (expected a "
                             "run folder written by 'skinner train', or the checkpoint file)",
                             checkpoint);
        checkpoint = checkpoint_in_dir;
    }
    const sk_env_def *env = sk_env_find(argv[0]);
    if (!env && checkpoint) { /* a plugin env: its checkpoint's run names the plugin */
        char message[1024];
        snprintf(message, sizeof message, "%s", sk_last_error());
        if (sk_checkpoint_load_plugin(checkpoint) != SK_OK)
            return cli_error(SK_EXIT_USAGE, "%s; nor could the plugin its checkpoint names be "
                                            "loaded: %s",
                             message, sk_last_error());
        env = sk_env_find(argv[0]);
    }
    if (!env) return cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
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
    const char *key, *value;
    if (!baseline && config_path)
        return cli_error(SK_EXIT_USAGE,
                         "--config is for baselines; a checkpoint carries its config (--env.KEY "
                         "may point its data locations elsewhere)");
    const sk_env_evaluation *evaluation = sk_env_extras_of(env)->evaluation;
    bool own = evaluation && !explicit_episodes && !baseline;
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
        if (explicit_seed && (rc = set_option(options, "--seed", seed_text)) != SK_EXIT_OK) return rc;
        return eval_own(env, checkpoint, cfg, options, threads < 0 ? 0 : (int)threads, json);
    }
    /* under mpirun each rank runs a slice of the evaluation envs; rank 0 reports */
    const sk_comm *comm = cli_comm();
    sk_eval_result result;
    sk_status status;
    if (baseline) {
        sk_config *base = sk_config_new();
        if ((rc = cli_load_config(base, env, config_path, NULL)) != SK_EXIT_OK) {
            sk_config_free(base);
            return rc;
        }
        for (int k = 0; sk_config_entry_at(cfg, k, &key, &value); k++) sk_config_set(base, key, value);
        int64_t training_envs; /* the preset's, for training: eval runs one env per episode */
        sk_cfg_int(base, "env.num_envs", 1, 1, INT32_MAX, &training_envs);
        status = sk_evaluate_controller_comm(env->id, base, controller, (int)episodes,
                                             (uint64_t)seed, trace, comm, &result);
        if (status == SK_OK) status = sk_cfg_check_unused(base, "env");
        sk_config_free(base);
    } else {
        status = sk_evaluate_with_comm(checkpoint, env->id, cfg, (int)episodes, greedy,
                                       (uint64_t)seed, trace, comm, &result);
    }
    if (comm->rank != 0) return status == SK_OK ? SK_EXIT_OK : SK_EXIT_FAILURE;
    if (status != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    print_eval(env, baseline ? policy : checkpoint, greedy, &result, json);
    return SK_EXIT_OK;
}

int cmd_eval(int argc, char **argv) {
    sk_config *cfg = sk_config_new(), *options = sk_config_new();
    int rc = cfg && options ? eval_with(argc, argv, cfg, options)
                            : cli_error(SK_EXIT_FAILURE, "out of memory");
    sk_config_free(cfg);
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
static void print_json_text(const char *text) {
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
    enum { ACTIONS_SIZE = 256 };
    /* columns as wide as their widest entry */
    int id_width = (int)strlen("id"), alias_width = (int)strlen("alias");
    int actions_width = (int)strlen("actions");
    for (int i = 0; envs[i]; i++) {
        char actions[ACTIONS_SIZE];
        describe_actions(actions, sizeof actions, &envs[i]->action_space);
        id_width = SK_MAX(id_width, (int)strlen(envs[i]->id));
        alias_width = SK_MAX(alias_width, (int)strlen(or_dash(envs[i]->alias)));
        actions_width = SK_MAX(actions_width, (int)strlen(actions));
    }
    bool any_configurable = false;
    if (!json)
        printf("%-*s  %-*s  %5s  %-*s  %9s  %9s  %s\n", id_width, "id", alias_width, "alias", "obs",
               actions_width, "actions", "max steps", "solved at", "summary");
    for (int i = 0; envs[i]; i++) {
        const sk_env_def *env = envs[i];
        char actions[ACTIONS_SIZE], threshold[32] = "null";
        describe_actions(actions, sizeof actions, &env->action_space);
        if (isfinite(env->solved_threshold))
            snprintf(threshold, sizeof threshold, "%g", env->solved_threshold);
        bool configurable = env->configure != NULL;
        any_configurable |= configurable;
        if (json) {
            fputs("{\"id\": ", stdout);
            print_json_text(env->id);
            fputs(", \"alias\": ", stdout);
            print_json_text(env->alias);
            fputs(", \"summary\": ", stdout);
            print_json_text(env->summary);
            printf(", \"obs_size\": %d, \"actions\": \"%s\", \"max_episode_steps\": %d, "
                   "\"solved_threshold\": %s, \"bench_num_envs\": %d, \"configurable\": %s}\n",
                   env->obs_size, actions, env->max_episode_steps, threshold,
                   sk_env_extras_of(env)->bench_num_envs ? sk_env_extras_of(env)->bench_num_envs : 4096,
                   configurable ? "true" : "false");
        } else {
            printf("%-*s  %-*s  %4d%s  %-*s  %9d  %9s  %s\n", id_width, env->id, alias_width,
                   or_dash(env->alias), env->obs_size, configurable ? "*" : " ", actions_width,
                   actions, env->max_episode_steps,
                   isfinite(env->solved_threshold) ? threshold : "-",
                   env->summary ? env->summary : "");
        }
    }
    if (!json && any_configurable)
        printf("* the defaults: these sizes follow the env's config keys (e.g. Prover-v0's "
               "env.max_atoms, env.max_successors, env.max_depth)\n");
    return SK_EXIT_OK;
}
