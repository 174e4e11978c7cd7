/* skinner train: config assembly, live progress, the run folder. */
#include "train.h"
#include "commands.h"

#include "comm_cli.h"

#include "core/config.h"
#include "envs/registry.h"
#include "train/algo.h"
#include "train/trainer_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *g_train_usage =
    "usage: skinner train ENV [options]\n"
    "\n"
    "Trains an agent on ENV (PPO, or the learner --train.algo names: dqn, sac) and writes a\n"
    "run folder (config.ini, metrics.csv, policy.safetensors, summary.json).\n"
    "\n"
    "options:\n"
    "  --config FILE          INI file layered on the env's preset (configs/PRESET.ini):\n"
    "                         its keys override the preset's, the others keep the preset's\n"
    "                         values; 'skinner config ENV' prints the preset\n"
    "  --SECTION.KEY VALUE    override one config value, e.g. --ppo.learning_rate 0.001\n"
    "  --seed N               random seed (train.seed)\n"
    "  --threads N            worker threads, 0 = all cores (train.threads)\n"
    "  --total-steps N        env steps to train for (train.total_steps)\n"
    "  --stop-when-solved     stop once the mean return over 100 episodes reaches the\n"
    "                         env's threshold (train.stop_when_solved)\n"
    "  --run-dir DIR          where to write the run (default runs/ENV-DATE-TIME-sSEED, with\n"
    "                         any character of ENV but letters, digits, '.', '-', '_' as '_');\n"
    "                         a folder that exists and is not empty is refused (see --force)\n"
    "  --force                write into an existing, non-empty --run-dir, replacing its\n"
    "                         checkpoint and summary\n"
    "  --resume RUN_DIR       continue a run from its checkpoint, in its own folder, up to\n"
    "                         --total-steps counted from the run's start (same --threads)\n"
    "  --quiet                no progress output\n";

static volatile sig_atomic_t g_interrupted;

static void on_signal(int signo) {
    (void)signo;
    g_interrupted = 1;
}

/* Whether usage lists flag as an option ("  --total-steps N ..."). */
static bool usage_lists(const char *usage, const char *flag) {
    size_t len = strlen(flag);
    for (const char *at = strstr(usage, flag); at; at = strstr(at + 1, flag))
        if (at >= usage + 2 && at[-1] == ' ' && at[-2] == ' ' && (at[len] == ' ' || at[len] == '\n'))
            return true;
    return false;
}

/* cli_train_config, which holds `given`: the keys of the user's --config file and flags. */
static int train_config(int argc, char **argv, sk_run_plan *plan, cli_train_extra *extra,
                        const char *usage, sk_config *given) {
    sk_config *cfg = plan->cfg;
    /* --help anywhere, before anything is loaded (a missing preset would warn) */
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            extra->help = true;
            return SK_EXIT_OK;
        }
    if (argc < 1 || argv[0][0] == '-') {
        fputs(usage, stderr);
        return cli_error(SK_EXIT_USAGE, "missing ENV (see 'skinner envs')");
    }
    /* first pass: --config or --resume, which the overrides apply on top of */
    const char *config_path = NULL, *resume_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) config_path = argv[i + 1];
        else if (strncmp(argv[i], "--config=", 9) == 0) config_path = argv[i] + 9;
        else if (extra->allow_run_flags && strcmp(argv[i], "--resume") == 0 && i + 1 < argc)
            resume_dir = argv[i + 1];
        else if (extra->allow_run_flags && strncmp(argv[i], "--resume=", 9) == 0)
            resume_dir = argv[i] + 9;
    }
    int rc;
    if (resume_dir) {
        if (config_path)
            return cli_error(SK_EXIT_USAGE, "--resume continues a run with its own config.ini; "
                                            "drop --config");
        char resume_config[4200];
        snprintf(resume_config, sizeof resume_config, "%s/config.ini", resume_dir);
        if (sk_config_load_file(cfg, resume_config) != SK_OK)
            return cli_error(SK_EXIT_FAILURE, "cannot resume '%s': %s", resume_dir,
                             sk_last_error());
        /* a resume is asked to train: a run that stopped when solved would stop again after
         * one update, so stopping when solved holds only if this command asks for it again */
        sk_config_set(cfg, "train.stop_when_solved", "false");
        /* a run of a plugin env names its plugin: load it before finding ENV */
        if (sk_run_plan_load_plugin(sk_config_get(cfg, "env.plugin")) != SK_OK)
            return cli_error(SK_EXIT_FAILURE, "cannot resume '%s': %s", resume_dir,
                             sk_last_error());
    }
    /* the one lookup of the env by name: everything after reads the plan */
    if (sk_run_plan_resolve_env(plan, argv[0]) != SK_OK)
        return cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    const sk_env_def *env = plan->env;
    if (resume_dir) {
        const char *run_env = sk_config_get(cfg, "env.id");
        if (!sk_run_plan_names(env, run_env))
            return cli_error(SK_EXIT_FAILURE, "cannot resume '%s': it is a run of %s, not of %s",
                             resume_dir, run_env ? run_env : "(no env.id)", env->id);
        extra->resume_dir = resume_dir;
    } else {
        rc = cli_load_config(cfg, env, config_path, config_path ? given : NULL);
        extra->total_steps_given = sk_config_get(given, "train.total_steps") != NULL;
        if (rc != SK_EXIT_OK) return rc;
    }
    /* the plugin goes with the config (to the other ranks of a distributed run) */
    if (sk_env_record_plugin(cfg, env) != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    sk_config_set(cfg, "env.id", env->id);

    cli_args args = {argc, 1, argv};
    while (args.index < argc) {
        const char *value = NULL, *arg = argv[args.index];
        bool missing = false;
        long long number;
        char key[256];
        if (cli_flag(&args, "--config", &value, &missing)) {
        } else if (cli_flag(&args, "--seed", &value, &missing)) {
            if (!missing && !cli_parse_int("--seed", value, 0, INT64_MAX, &number, &rc)) return rc;
            if (!missing) sk_config_set(cfg, "train.seed", value);
        } else if (cli_flag(&args, "--threads", &value, &missing)) {
            if (!missing && !cli_parse_int("--threads", value, 0, 1024, &number, &rc)) return rc;
            if (!missing) sk_config_set(cfg, "train.threads", value);
        } else if (cli_flag(&args, "--total-steps", &value, &missing)) {
            if (!missing && !cli_parse_int("--total-steps", value, 1, INT64_MAX / 2, &number, &rc))
                return rc;
            if (!missing) sk_config_set(cfg, "train.total_steps", value);
            extra->total_steps_given = true;
        } else if (extra->allow_run_flags && cli_flag(&args, "--stop-when-solved", NULL, NULL)) {
            sk_config_set(cfg, "train.stop_when_solved", "true");
        } else if (extra->allow_run_flags && cli_flag(&args, "--run-dir", &value, &missing)) {
            extra->run_dir = value;
        } else if (extra->allow_run_flags && cli_flag(&args, "--force", NULL, NULL)) {
            extra->force = true;
        } else if (extra->allow_run_flags && cli_flag(&args, "--resume", &value, &missing)) {
            /* handled in the first pass */
        } else if (cli_flag(&args, "--quiet", NULL, NULL)) {
            extra->quiet = true;
        } else if (extra->allow_bench_flags && cli_flag(&args, "--seconds", &value, &missing)) {
            if (!missing && !cli_parse_double("--seconds", value, 0.01, 1e6, &extra->seconds, &rc))
                return rc;
        } else if (extra->allow_bench_flags && cli_flag(&args, "--json", NULL, NULL)) {
            extra->json = true;
        } else if (cli_key_flag(&args, NULL, key, sizeof key, &value, &rc)) {
            /* --section.key value or --section.key=value */
            if (rc != SK_EXIT_OK) return rc;
            if (strcmp(key, "env.id") == 0 && !sk_run_plan_names(env, value))
                return cli_error(SK_EXIT_USAGE,
                                 "--env.id %s conflicts with ENV %s: the env is the first argument "
                                 "(skinner %s %s ...)",
                                 value, env->id, extra->allow_bench_flags ? "bench train" : "train",
                                 value);
            if (sk_config_set(cfg, key, value) != SK_OK || sk_config_set(given, key, value) != SK_OK)
                return cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
            if (strcmp(key, "train.total_steps") == 0) extra->total_steps_given = true;
        } else {
            /* --total_steps: the flags spell their words with '-' (config keys with '_') */
            const char *command = extra->allow_bench_flags ? "bench train" : "train";
            char dashed[64];
            if (strncmp(arg, "--", 2) == 0 && strchr(arg, '_') && !strchr(arg, '.') &&
                strlen(arg) < sizeof dashed) {
                snprintf(dashed, sizeof dashed, "%s", arg);
                for (char *c = dashed; *c; c++) *c = *c == '_' ? '-' : *c;
                if (usage_lists(usage, dashed))
                    return cli_error(SK_EXIT_USAGE, "unknown option '%s' (did you mean '%s'? "
                                     "see 'skinner %s --help')", arg, dashed, command);
            }
            return cli_error(SK_EXIT_USAGE, "unknown option '%s' (see 'skinner %s --help')", arg,
                             command);
        }
        if (missing) return cli_error(SK_EXIT_USAGE, "option '%s' needs a value", arg);
    }
    /* a ppo.* key given to SAC or DQN would be read and ignored (the presets set ppo.*) */
    if (sk_config_check_learner_keys(given, cfg) != SK_OK)
        return cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    return SK_EXIT_OK;
}

int cli_train_config(int argc, char **argv, sk_run_plan *plan, cli_train_extra *extra,
                     const char *usage) {
    sk_config *given = sk_config_new();
    if (!given) return cli_error(SK_EXIT_FAILURE, "out of memory");
    int rc = train_config(argc, argv, plan, extra, usage, given);
    sk_config_free(given);
    return rc;
}

static void format_count(char *buf, size_t size, double value) {
    if (value >= 1e9) snprintf(buf, size, "%.2fG", value / 1e9);
    else if (value >= 1e6) snprintf(buf, size, "%.2fM", value / 1e6);
    else if (value >= 1e3) snprintf(buf, size, "%.1fk", value / 1e3);
    else snprintf(buf, size, "%.0f", value);
}

bool cli_progress_update(const sk_update_stats *st, void *user) {
    cli_progress *p = user;
    if (!p->quiet) {
        double now = st->wall_seconds;
        double interval = p->tty ? 0.1 : 2.0;
        if (now - p->last_print >= interval || st->update == 1) {
            p->last_print = now;
            char steps[32], total[34] = "", sps[32];
            format_count(steps, sizeof steps, (double)st->steps);
            if (p->total_steps > 0) {
                total[0] = '/';
                format_count(total + 1, sizeof total - 1, (double)p->total_steps);
            }
            if (now - p->mark_seconds[1] >= 5.0) { /* the newer mark becomes the older */
                p->mark_seconds[0] = p->mark_seconds[1], p->mark_steps[0] = p->mark_steps[1];
                p->mark_seconds[1] = now, p->mark_steps[1] = st->steps;
            }
            double span = now - p->mark_seconds[0];
            double rate = p->mark_seconds[0] > 0 && span > 0
                              ? (double)(st->steps - p->mark_steps[0]) / span
                              : st->sps; /* the first 5 s: the run's own */
            format_count(sps, sizeof sps, rate);
            double eta = p->seconds_budget > 0 ? p->seconds_budget - st->wall_seconds
                         : rate > 0 ? (double)(p->total_steps - st->steps) / rate
                                    : 0.0;
            if (eta < 0) eta = 0;
            char ret[32];
            if (isnan(st->mean_return)) snprintf(ret, sizeof ret, "-");
            else snprintf(ret, sizeof ret, "%.1f", st->mean_return);
            char anomalies[48] = "";
            if (st->anomalies > 0)
                snprintf(anomalies, sizeof anomalies, "  anomalies %lld (restored)",
                         (long long)st->anomalies);
            fprintf(stderr, "%s%s%s steps  %s steps/s  return %s  episodes %lld  %.1fs  eta %.0fs%s%s",
                    p->tty ? "\r" : "", steps, total, sps, ret, (long long)st->episodes,
                    st->wall_seconds, eta, anomalies, p->tty ? "\033[K" : "\n");
            fflush(stderr);
        }
    }
    return !g_interrupted;
}

/* runs/ID-DATE-TIME-sSEED, one folder inside runs/ whatever the env's id holds:
 * a plugin's id may contain '/' or "..", which would put the run elsewhere, so
 * every character but letters, digits, '.', '-' and '_' becomes '_', and a
 * leading '.' too (no hidden folder). */
static void default_run_dir(char *buf, size_t size, const sk_env_def *env, const char *seed) {
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32], name[256];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(name, sizeof name, "%s-%s-s%s", env->id, stamp, seed ? seed : "1");
    for (char *c = name; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '-' || *c == '_' || (*c == '.' && c > name)))
            *c = '_';
    snprintf(buf, size, "runs/%s", name);
    struct stat st;
    for (int k = 2; stat(buf, &st) == 0 && k < 1000; k++) snprintf(buf, size, "runs/%s-%d", name, k);
}

/* True if dir is a directory that holds anything (a file or an unreadable path
 * is left to sk_trainer_set_run_dir to report). */
static bool dir_has_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return false;
    bool any = false;
    for (struct dirent *e; !any && (e = readdir(d));)
        any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return any;
}

/* Removes RUN/NAME.tmp.PID files (a checkpoint write cut short by a kill) whose
 * writer is no longer alive; a live writer's file is left alone. */
static void remove_stale_temp_files(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        const char *tmp = strstr(e->d_name, ".tmp.");
        if (!tmp) continue;
        char *end = NULL;
        long pid = strtol(tmp + 5, &end, 10);
        if (end == tmp + 5 || *end != '\0' || pid <= 0) continue;
        if (pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) continue;
        char path[4608];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
        if (unlink(path) == 0)
            fprintf(stderr, "skinner: removed %s, left by an interrupted checkpoint write\n", path);
    }
    closedir(d);
}

/* The steps the trainer will run: whole updates of its batch, env.num_envs x
 * ppo.horizon (x the agents of a multi-agent env, whose rows are its steps).
 * The trainer's config holds every key it read (an env without a preset has
 * no env.num_envs in the user's config). */
static void notice_rounded_steps(const sk_trainer *trainer) {
    const sk_config *resolved = sk_trainer_config(trainer);
    int64_t total, num_envs, horizon, batch = sk_trainer_batch_size(trainer);
    if (!sk_parse_i64(sk_config_get(resolved, "train.total_steps"), &total) ||
        !sk_parse_i64(sk_config_get(resolved, "env.num_envs"), &num_envs) ||
        !sk_parse_i64(sk_config_get(resolved, "ppo.horizon"), &horizon) || batch < 1)
        return;
    int64_t updates = total / batch, agents = batch / (num_envs * horizon);
    if (updates < 1) updates = 1;
    if (updates * batch == total) return;
    const char *algo = sk_config_get(resolved, "train.algo");
    if (algo && strcmp(algo, "ppo") != 0) { /* an iteration's steps come from its own keys */
        fprintf(stderr,
                "skinner: note: --total-steps %lld is not a multiple of an iteration (env.num_envs "
                "%lld x %lld steps = %lld, from %s.train_frequency): training runs %lld "
                "iteration%s, %lld steps\n",
                (long long)total, (long long)num_envs, (long long)(batch / num_envs),
                (long long)batch, algo, (long long)updates, updates == 1 ? "" : "s",
                (long long)(updates * batch));
        return;
    }
    char agents_text[64] = "";
    if (agents > 1) snprintf(agents_text, sizeof agents_text, " x %lld agents", (long long)agents);
    fprintf(stderr,
            "skinner: note: --total-steps %lld is not a multiple of the batch (env.num_envs %lld"
            "%s x ppo.horizon %lld = %lld): training runs %lld update%s, %lld steps\n",
            (long long)total, (long long)num_envs, agents_text, (long long)horizon,
            (long long)batch, (long long)updates, updates == 1 ? "" : "s",
            (long long)(updates * batch));
}

/* An off-policy run whose learning starts at or after its last step acts at random and never
 * learns: said before it starts, with what to change. */
static void notice_no_learning(const sk_trainer *trainer) {
    const sk_config *resolved = sk_trainer_config(trainer);
    const char *algo = trainer->algo->name;
    char key[64];
    int64_t starts, total, batch = sk_trainer_batch_size(trainer);
    if (strcmp(algo, "ppo") == 0) return;
    snprintf(key, sizeof key, "%s.learning_starts", algo);
    if (!sk_parse_i64(sk_config_get(resolved, key), &starts) ||
        !sk_parse_i64(sk_config_get(resolved, "train.total_steps"), &total) || batch < 1)
        return;
    int64_t steps = total / batch > 0 ? total / batch * batch : batch; /* whole iterations */
    if (starts < steps) return;
    fprintf(stderr,
            "skinner: note: %s = %lld is not below the run's %lld steps: it fills its replay "
            "buffer with random actions and takes no gradient step (lower --%s or raise "
            "--total-steps)\n",
            key, (long long)starts, (long long)steps, key);
}

/* The learner's name as users write it: "PPO", "SAC", "DQN". */
static void learner_name(const sk_trainer *trainer, char *out, size_t size) {
    snprintf(out, size, "%s", trainer->algo->name);
    for (char *c = out; *c; c++) *c = (char)toupper((unsigned char)*c);
}

/* Rank 0's exit code to every rank of a distributed run (the others' own
 * codes are theirs when they are not OK). */
static int root_rc(int rc) {
    const sk_comm *comm = cli_comm();
    if (comm->size == 1) return rc;
    double value = rc;
    sk_comm_bcast_f64(comm, &value, 1, 0);
    return rc != SK_EXIT_OK ? rc : (int)value;
}

/* Every rank's status agreed (the lowest failing rank's message, reported by rank 0). */
static int agreed_rc(sk_status status, const char *what) {
    status = sk_comm_agree(cli_comm(), status);
    if (status == SK_OK) return SK_EXIT_OK;
    if (cli_comm()->rank != 0) return SK_EXIT_FAILURE;
    return cli_error(SK_EXIT_FAILURE, "%s%s", what, sk_last_error());
}

/* A distributed run reads its command line on rank 0 alone, which hands the
 * resolved config (and the run to resume) to the others: the ranks cannot
 * differ. Returns an exit code; *stop is set when rank 0 is done (--help). */
static int share_config(sk_run_plan *plan, cli_train_extra *extra, int rc, bool *stop,
                        char **resume_copy) {
    const sk_comm *comm = cli_comm();
    sk_config *cfg = plan->cfg;
    double head[2] = {rc, extra->help};
    sk_comm_bcast_f64(comm, head, 2, 0);
    if (head[0] != SK_EXIT_OK || head[1] != 0.0) {
        *stop = true;
        return (int)head[0];
    }
    char *text = comm->rank == 0 ? sk_config_to_string(cfg) : NULL;
    if (comm->rank == 0 && !text) return cli_error(SK_EXIT_FAILURE, "out of memory");
    rc = cli_comm_share_text(&text);
    /* a rank's own failure keeps its message (sk_last_error) for the agreement below */
    sk_status mine = SK_OK;
    if (rc == SK_EXIT_OK && comm->rank != 0) mine = sk_config_load_string(cfg, text);
    free(text);
    char *resume = comm->rank == 0 ? strdup(extra->resume_dir ? extra->resume_dir : "") : NULL;
    if (rc == SK_EXIT_OK) rc = cli_comm_share_text(&resume);
    if (rc == SK_EXIT_OK && resume && resume[0]) *resume_copy = resume;
    else free(resume);
    if (comm->rank != 0) {
        extra->resume_dir = *resume_copy;
        extra->quiet = true; /* rank 0 reports for all */
        /* this rank's one lookup: the shared config's env, with its plugin */
        if (rc == SK_EXIT_OK && mine == SK_OK &&
            (mine = sk_run_plan_load_plugin(sk_config_get(cfg, "env.plugin"))) == SK_OK)
            mine = sk_run_plan_resolve_env(plan, sk_config_get(cfg, "env.id"));
    }
    /* every rank goes on, or none: a plugin or env another node lacks stops them all,
     * with that rank's message from rank 0, instead of leaving rank 0 waiting in the
     * trainer's first collective */
    int agreed = agreed_rc(mine, "");
    return rc != SK_EXIT_OK ? rc : agreed;
}

int cli_train_config_shared(int argc, char **argv, sk_run_plan *plan, cli_train_extra *extra,
                            const char *usage, char **resume_copy) {
    const sk_comm *comm = cli_comm();
    int rc = comm->rank == 0 ? cli_train_config(argc, argv, plan, extra, usage) : SK_EXIT_OK;
    if (comm->size == 1) return rc;
    bool stop = false;
    rc = share_config(plan, extra, rc, &stop, resume_copy);
    if (stop && comm->rank != 0) extra->help = true; /* nothing more to do here either */
    return rc;
}

int cmd_train(int argc, char **argv) {
    const sk_comm *comm = cli_comm();
    bool root = comm->rank == 0;
    sk_run_plan plan;
    if (sk_run_plan_init(&plan) != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    cli_train_extra extra = {.allow_run_flags = true};
    char *resume_copy = NULL;
    int rc = cli_train_config_shared(argc, argv, &plan, &extra, g_train_usage, &resume_copy);
    if (rc != SK_EXIT_OK || extra.help) {
        sk_run_plan_free(&plan);
        free(resume_copy);
        return rc;
    }
    const sk_env_def *env = plan.env;
    sk_trainer *trainer = NULL;
    if (sk_trainer_create_plan(&trainer, &plan, comm) != SK_OK) {
        rc = root ? cli_error(SK_EXIT_FAILURE, "%s", sk_last_error()) : SK_EXIT_FAILURE;
        sk_run_plan_free(&plan);
        free(resume_copy);
        return rc;
    }
    char run_dir[4096] = "";
    if (root) {
        if (extra.force && !extra.run_dir)
            rc = cli_error(SK_EXIT_USAGE, "--force allows writing into an existing --run-dir; give "
                                          "--run-dir DIR (or drop --force)");
        else if (extra.resume_dir && extra.run_dir && strcmp(extra.resume_dir, extra.run_dir) != 0)
            rc = cli_error(SK_EXIT_USAGE,
                           "--resume continues the run in its own folder; drop --run-dir");
        else if (!extra.resume_dir && extra.run_dir && dir_has_entries(extra.run_dir) && !extra.force)
            rc = cli_error(SK_EXIT_FAILURE,
                           "--run-dir %s exists and is not empty: continue that run with "
                           "'skinner train %s --resume %s', or overwrite it with --force",
                           extra.run_dir, env->id, extra.run_dir);
    }
    if ((rc = root_rc(rc)) != SK_EXIT_OK) goto done;
    if (extra.resume_dir) {
        if (root) remove_stale_temp_files(extra.resume_dir);
        /* every rank reads the checkpoint (a folder every rank sees), once */
        sk_status status = sk_run_plan_set_checkpoint(&plan, extra.resume_dir);
        if (status == SK_OK) status = sk_trainer_resume_plan(trainer, &plan);
        sk_run_plan_close_checkpoint(&plan); /* read: its memory is not kept while training */
        rc = agreed_rc(status, "cannot resume: ");
        if (rc != SK_EXIT_OK) goto done;
        snprintf(run_dir, sizeof run_dir, "%s", extra.resume_dir);
    } else if (extra.run_dir) {
        snprintf(run_dir, sizeof run_dir, "%s", extra.run_dir);
    } else if (root) {
        default_run_dir(run_dir, sizeof run_dir, env,
                        sk_config_get(sk_trainer_config(trainer), "train.seed"));
    }
    rc = agreed_rc(root ? sk_trainer_set_run_dir(trainer, run_dir) : SK_OK, "");
    if (rc != SK_EXIT_OK) goto done;
    long long total = 0;
    int ignored;
    cli_parse_int("train.total_steps", sk_config_get(sk_trainer_config(trainer), "train.total_steps"),
                  1, INT64_MAX,
                  &total, &ignored);
    cli_progress p = {.tty = isatty(STDERR_FILENO), .quiet = extra.quiet, .total_steps = total};
    sk_trainer_set_callback(trainer, cli_progress_update, &p);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* a resumed run's result says where it stood: the last line reports this command's part */
    const int64_t start_steps = sk_trainer_result(trainer).total_steps;
    if (!extra.quiet) {
        if (!extra.resume_dir && extra.total_steps_given)
            notice_rounded_steps(trainer);
        notice_no_learning(trainer);
        int threads = sk_trainer_threads(trainer), learner = sk_trainer_learner_threads(trainer);
        char learning[48] = "", algo[16], resumed[64] = "";
        if (learner != threads)
            snprintf(learning, sizeof learning, " (its updates on %d)", learner);
        if (extra.resume_dir)
            snprintf(resumed, sizeof resumed, ", resumed at %lld steps", (long long)start_steps);
        learner_name(trainer, algo, sizeof algo);
        if (comm->size > 1)
            fprintf(stderr, "training %s with %s on %d processes x %d thread%s%s, run folder %s%s\n",
                    env->id, algo, comm->size, threads, threads == 1 ? "" : "s", learning, run_dir,
                    resumed);
        else
            fprintf(stderr, "training %s with %s on %d thread%s%s, run folder %s%s\n", env->id,
                    algo, threads, threads == 1 ? "" : "s", learning, run_dir, resumed);
    }
    sk_status status = sk_trainer_run(trainer);
    if (p.tty && !extra.quiet) fputc('\n', stderr);
    sk_train_result r = sk_trainer_result(trainer);
    if (status != SK_OK) {
        rc = root ? cli_error(SK_EXIT_FAILURE, "%s", sk_last_error()) : SK_EXIT_FAILURE;
        goto done;
    }
    if (!root) goto done;
    char earlier[96] = "";
    if (r.solved && r.solved_at_steps <= start_steps)
        snprintf(earlier, sizeof earlier, " (solved at %lld steps, before this resume)",
                 (long long)r.solved_at_steps);
    if (extra.resume_dir && r.total_steps == start_steps)
        printf("nothing to train: the run is at %lld steps, its train.total_steps; resume with a "
               "larger --total-steps to continue it%s\n",
               (long long)r.total_steps, earlier);
    else if (r.solved && !earlier[0]) {
        printf("solved %s: mean return over 100 episodes reached %g after %lld steps, %.2f s",
               env->id, env->solved_threshold, (long long)r.solved_at_steps,
               r.solved_at_seconds);
        if (r.total_steps != r.solved_at_steps) /* solved on the way: and where it ended */
            printf("; final mean return %.1f after %lld steps, %.2f s", r.final_mean_return,
                   (long long)r.total_steps, r.wall_seconds);
        putchar('\n');
    }
    else if (isnan(r.final_mean_return))
        printf("finished: no episode finished in %lld steps, %.2f s (no mean return yet; train "
               "longer)\n",
               (long long)r.total_steps, r.wall_seconds);
    else if (!isfinite(env->solved_threshold))
        printf("finished: final mean return %.3f after %lld steps, %.2f s\n", r.final_mean_return,
               (long long)r.total_steps, r.wall_seconds);
    else if (earlier[0])
        printf("finished: final mean return %.1f (threshold %g) after %lld steps, %.2f s%s\n",
               r.final_mean_return, env->solved_threshold, (long long)r.total_steps,
               r.wall_seconds, earlier);
    else
        printf("not solved: final mean return %.1f (threshold %g) after %lld steps, %.2f s\n",
               r.final_mean_return, env->solved_threshold, (long long)r.total_steps,
               r.wall_seconds);
    char env_name[4200];
    if (r.interrupted)
    {
        char launcher[64] = "";
        if (comm->size > 1) snprintf(launcher, sizeof launcher, "mpirun -np %d ", comm->size);
        printf("interrupted: the run so far is saved; continue it with\n  %sskinner train %s --resume %s\n",
               launcher, cli_env_name(env, env_name, sizeof env_name), run_dir);
    }
    printf("run folder: %s\n", run_dir);
    /* a multi-agent env's policy against itself says nothing: against a random player */
    printf("evaluate: skinner eval %s --checkpoint %s/policy.safetensors%s\n",
           cli_env_name(env, env_name, sizeof env_name), run_dir,
           sk_env_agents(env) > 1 ? " --opponent random" : "");
done:
    sk_trainer_destroy(trainer);
    sk_run_plan_free(&plan);
    free(resume_copy);
    return rc;
}

static const char *g_config_usage =
    "usage: skinner config ENV [--config FILE] [--SECTION.KEY VALUE ...]\n"
    "\n"
    "Prints the config a 'skinner train ENV' with the same options would run with, as\n"
    "INI: the env's preset (configs/PRESET.ini), --config FILE layered on it, the\n"
    "overrides, and every other key the trainer and the env read, at its default. Save\n"
    "it, edit it and pass it back with --config. An out-of-range value is reported as\n"
    "train would report it.\n";

int cmd_config(int argc, char **argv) {
    sk_run_plan plan;
    if (sk_run_plan_init(&plan) != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    cli_train_extra extra = {0};
    int rc = cli_train_config(argc, argv, &plan, &extra, g_config_usage);
    if (rc == SK_EXIT_OK && !extra.help) {
        /* building a trainer reads (and so records) every key with its default */
        sk_trainer *trainer = NULL;
        sk_comm single = sk_comm_single();
        if (sk_trainer_create_plan(&trainer, &plan, &single) != SK_OK) {
            rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
        } else {
            /* the trainer's own copy holds every key it read, defaults included */
            char *text = sk_config_to_annotated_string(sk_trainer_config(trainer));
            if (!text) rc = cli_error(SK_EXIT_FAILURE, "out of memory");
            else fputs(text, stdout);
            free(text);
        }
        sk_trainer_destroy(trainer);
    }
    sk_run_plan_free(&plan);
    return rc;
}
