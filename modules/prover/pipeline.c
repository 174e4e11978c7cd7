/*
 * `skinner prover run --dataset DIR --run-dir OUT` (issue 38 ask 4): from a
 * knowledge base to a ranked, tuned result in one command, the Prover
 * module's command (skinner/module.h: module commands). Its stages, each a
 * run of the skinner program itself so that each keeps its own progress,
 * lock and files:
 *
 *   settings  the KB's statistics and the settings derived from them
 *             (derive.h), or --preset/--kge-preset files: OUT/settings.ini,
 *             OUT/settings_kge.ini
 *   kge       skinner kge train --config OUT/settings_kge.ini --run-dir OUT/kge
 *   policy    skinner train Prover-v0 --config OUT/settings.ini --run-dir OUT/policy
 *   rank      skinner eval Prover-v0 ... --tune-on valid --tune-out OUT/tuned.ini --json
 *             (the weights and search chosen on valid, then the test split ranked)
 *   report    OUT/report.md and OUT/report.json from the ranking and the stage times
 *
 * A stage that finished wrote OUT/stages/NAME.done (its wall seconds); a
 * rerun skips it, so an interrupted run resumes at the stage it was in (that
 * stage starts over: a half-trained model is not continued).
 */
#include "pipeline.h"

#include "derive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ARGS 96
#define PATH_SIZE 4200

static const char *const g_usage =
    "usage: skinner prover run --dataset DIR --run-dir OUT [options]\n"
    "\n"
    "From a knowledge base in DeepProofLog's format to a tuned ranking, resumable stage by\n"
    "stage (a finished stage is not redone; OUT/stages/ records them):\n"
    "  settings  derived from the KB's statistics (OUT/settings.ini, settings_kge.ini)\n"
    "  kge       skinner kge train            -> OUT/kge\n"
    "  policy    skinner train Prover-v0      -> OUT/policy\n"
    "  rank      skinner eval Prover-v0 --tune-on valid: the hybrid's weights and proof\n"
    "            search chosen on valid (OUT/tuned.ini), the split ranked with them\n"
    "  report    OUT/report.md, OUT/report.json: RL-only, KGE-only, hybrid, Hits@1/3/10,\n"
    "            proof rate by depth, the time of each stage\n"
    "\n"
    "options:\n"
    "  --seed N            training seed of the KGE and the policy (default 1)\n"
    "  --threads N         threads of every stage (default 0: all cores)\n"
    "  --negatives N       sampled corruptions per side when ranking (default 100; 0: all)\n"
    "  --split NAME        the split ranked after tuning on valid (default test)\n"
    "  --queries N         rank only the first N queries of valid and of the split\n"
    "  --steps N           the policy's env steps (default: derived)\n"
    "  --kge-epochs N, --kge-dim N   the KGE's (default: derived)\n"
    "  --preset FILE       the policy's settings instead of the derived ones\n"
    "  --kge-preset FILE   the KGE's settings instead of the derived ones\n"
    "  --stop-after STAGE  stop after settings, kge, policy or rank\n";

typedef struct pipeline {
    const char *dataset, *out, *preset, *kge_preset, *stop_after, *split;
    const char *seed, *threads, *negatives, *queries, *steps, *kge_epochs, *kge_dim;
    char program[PATH_SIZE];
    double seconds[5];
} pipeline;

static const char *const g_stages[] = {"settings", "kge", "policy", "rank", "report"};
enum { STAGE_SETTINGS, STAGE_KGE, STAGE_POLICY, STAGE_RANK, STAGE_REPORT, NUM_STAGES };

static void path_in(const pipeline *p, const char *name, char *buf) {
    snprintf(buf, PATH_SIZE, "%s/%s", p->out, name);
}

/* Whether stage finished before, with its seconds. */
static bool stage_done(pipeline *p, int stage) {
    char path[PATH_SIZE];
    snprintf(path, sizeof path, "%s/stages/%s.done", p->out, g_stages[stage]);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool read = fscanf(f, "%lf", &p->seconds[stage]) == 1;
    fclose(f);
    return read;
}

static sk_status mark_done(pipeline *p, int stage, double seconds) {
    p->seconds[stage] = seconds;
    char path[PATH_SIZE];
    snprintf(path, sizeof path, "%s/stages", p->out);
    sk_status status = sk_mkdirs(path);
    if (status != SK_OK) return status;
    snprintf(path, sizeof path, "%s/stages/%s.done", p->out, g_stages[stage]);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%.3f\n", seconds) < 0 || fclose(f) != 0)
        return sk_fail(SK_ERR_IO, "cannot write '%s'", path);
    return SK_OK;
}

/* Runs the skinner program with args (NULL-terminated after argv[0]), its
 * stdout into stdout_path when given; SK_OK when it exits 0. */
static sk_status run_program(const pipeline *p, const char *stage, char **args,
                             const char *stdout_path) {
    printf("skinner prover run: [%s]", stage);
    for (int k = 0; args[k]; k++) printf(" %s", args[k]);
    printf("\n");
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child < 0) return sk_fail(SK_ERR_IO, "cannot start the %s stage: %s", stage, strerror(errno));
    if (child == 0) {
        if (stdout_path) {
            int fd = open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || dup2(fd, 1) < 0) _exit(127);
            close(fd);
        }
        execv(p->program, args);
        _exit(127);
    }
    int wstatus = 0;
    while (waitpid(child, &wstatus, 0) < 0)
        if (errno != EINTR) return sk_fail(SK_ERR_IO, "waiting for the %s stage: %s", stage,
                                           strerror(errno));
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return SK_OK;
    if (WIFSIGNALED(wstatus))
        return sk_fail(SK_ERR_INTERRUPTED, "the %s stage was stopped by signal %d; rerun the "
                                           "same command to resume it",
                       stage, WTERMSIG(wstatus));
    return sk_fail(SK_ERR_INVALID, "the %s stage failed (exit %d; its message is above)", stage,
                   WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
}

/* args[count++] = value, for a command line being built. */
static void push(char **args, int *count, const char *value) {
    SK_ASSERT(*count < MAX_ARGS - 1);
    args[(*count)++] = (char *)value;
    args[*count] = NULL;
}

static void push_option(char **args, int *count, const char *flag, const char *value) {
    if (!value) return;
    push(args, count, flag);
    push(args, count, value);
}

static sk_status copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "r");
    if (!in) return sk_fail(SK_ERR_IO, "cannot read '%s'", from);
    FILE *out = fopen(to, "w");
    if (!out) {
        fclose(in);
        return sk_fail(SK_ERR_IO, "cannot write '%s'", to);
    }
    char buf[8192];
    size_t n;
    bool ok = true;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) ok = ok && fwrite(buf, 1, n, out) == n;
    fclose(in);
    if (fclose(out) != 0 || !ok) return sk_fail(SK_ERR_IO, "cannot write '%s'", to);
    return SK_OK;
}

static sk_status stage_settings(pipeline *p) {
    sk_kb *kb = NULL;
    sk_status status = sk_kb_load(&kb, p->dataset);
    if (status != SK_OK) return status;
    sk_prover_derived d;
    status = sk_prover_settings_derive(kb, &d);
    sk_kb_free(kb);
    if (status != SK_OK) return status;
    char policy[PATH_SIZE], kge[PATH_SIZE];
    path_in(p, "settings.ini", policy);
    path_in(p, "settings_kge.ini", kge);
    status = p->preset ? copy_file(p->preset, policy)
                       : sk_prover_derived_write(&d, p->dataset, policy);
    if (status == SK_OK)
        status = p->kge_preset ? copy_file(p->kge_preset, kge)
                               : sk_prover_derived_write_kge(&d, p->dataset, kge);
    if (status != SK_OK) return status;
    const sk_prover_kb_stats *st = &d.stats;
    printf("skinner prover run: [settings] %s: %d constants, %d predicates, %d train facts, %d "
           "rules (bodies up to %d atoms); train queries of recorded depth 1+: %d (median %d, "
           "max %d)\n",
           p->dataset, st->constants, st->predicates, st->train_facts, st->rules, st->max_body,
           st->provable_queries, st->median_depth, st->max_depth);
    printf("skinner prover run: [settings] derived: env.max_atoms %d, env.max_successors %d, "
           "env.max_depth %d, env.corrupt %s, policy.embed %d, train.total_steps %lld; kge: "
           "rotate, dim %d, %d epochs, %s%s%s\n",
           d.max_atoms, d.max_successors, d.max_depth, d.corrupt_tail ? "tail" : "both", d.embed,
           (long long)d.total_steps, d.kge_dim, d.kge_epochs,
           d.kge_sparse ? "margin 4, self-adversarial, cosine" : "margin 6",
           p->preset ? "; the policy's from " : "", p->preset ? p->preset : "");
    if (p->kge_preset) printf("skinner prover run: [settings] the KGE's from %s\n", p->kge_preset);
    return SK_OK;
}

/* The start of a training stage's command: skinner WORDS --config OUT/settings
 * DATASET_FLAG dataset --run-dir OUT/dir --seed --threads (paths holds the two paths). */
static int training_command(const pipeline *p, const char *const words[3], const char *settings,
                            const char *dataset_flag, const char *dir, char **args,
                            char paths[2][PATH_SIZE]) {
    path_in(p, settings, paths[0]);
    path_in(p, dir, paths[1]);
    int count = 0;
    push(args, &count, "skinner");
    for (int k = 0; k < 3 && words[k]; k++) push(args, &count, words[k]);
    push_option(args, &count, "--config", paths[0]);
    push_option(args, &count, dataset_flag, p->dataset);
    push_option(args, &count, "--run-dir", paths[1]);
    push_option(args, &count, "--seed", p->seed);
    push_option(args, &count, "--threads", p->threads);
    push(args, &count, "--force"); /* over an interrupted attempt's files */
    return count;
}

static sk_status stage_kge(pipeline *p) {
    static const char *const words[3] = {"kge", "train", NULL};
    char *args[MAX_ARGS], paths[2][PATH_SIZE];
    int count = training_command(p, words, "settings_kge.ini", "--dataset", "kge", args, paths);
    push_option(args, &count, "--epochs", p->kge_epochs);
    push_option(args, &count, "--dim", p->kge_dim);
    return run_program(p, "kge", args, NULL);
}

static sk_status stage_policy(pipeline *p) {
    static const char *const words[3] = {"train", "Prover-v0", NULL};
    char *args[MAX_ARGS], paths[2][PATH_SIZE];
    int count =
        training_command(p, words, "settings.ini", "--env.dataset", "policy", args, paths);
    push_option(args, &count, "--train.total_steps", p->steps);
    return run_program(p, "policy", args, NULL);
}

static sk_status stage_rank(pipeline *p) {
    char policy[PATH_SIZE], kge[PATH_SIZE], tuned[PATH_SIZE], json[PATH_SIZE];
    path_in(p, "policy", policy);
    path_in(p, "kge", kge);
    path_in(p, "tuned.ini", tuned);
    path_in(p, "ranking.json", json);
    char *args[MAX_ARGS];
    int count = 0;
    push(args, &count, "skinner");
    push(args, &count, "eval");
    push(args, &count, "Prover-v0");
    push_option(args, &count, "--checkpoint", policy);
    push_option(args, &count, "--kge", kge);
    push_option(args, &count, "--env.dataset", p->dataset);
    push_option(args, &count, "--split", p->split);
    push_option(args, &count, "--negatives", p->negatives);
    push_option(args, &count, "--queries", p->queries);
    push_option(args, &count, "--threads", p->threads);
    push_option(args, &count, "--tune-on", "valid");
    push_option(args, &count, "--tune-out", tuned);
    push(args, &count, "--json");
    sk_status status = run_program(p, "rank", args, json);
    if (status != SK_OK) unlink(json);
    return status;
}

/* ------------------------------------------------------------- the report */

/* The number after "key": in text (from *from on); NAN when absent. */
static double json_number(const char *text, const char *key) {
    char pattern[96];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *at = text ? strstr(text, pattern) : NULL;
    return at ? strtod(at + strlen(pattern), NULL) : NAN;
}

/* The text of the object after "key": (its braces included), or NULL. */
static const char *json_object(const char *text, const char *key) {
    char pattern[96];
    snprintf(pattern, sizeof pattern, "\"%s\": {", key);
    const char *at = strstr(text, pattern);
    return at ? strchr(at, '{') : NULL;
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (text) text[fread(text, 1, (size_t)size, f)] = '\0';
    fclose(f);
    return text;
}

/* A scorer's row of report.md from its object in the ranking's JSON. */
static void scorer_row(FILE *md, const char *name, const char *object) {
    fprintf(md, "| %s | %.4f | %.4f | %.4f | %.4f |\n", name, json_number(object, "mrr"),
            json_number(object, "hits1"), json_number(object, "hits3"),
            json_number(object, "hits10"));
}

static sk_status stage_report(pipeline *p) {
    char path[PATH_SIZE];
    path_in(p, "ranking.json", path);
    char *ranking = read_text(path);
    if (!ranking) return sk_fail(SK_ERR_IO, "cannot read '%s' (rerun to redo the rank stage)", path);
    /* the ranking's top level: RL-only's figures come before the nested objects */
    const char *kge = json_object(ranking, "kge"), *hybrid = json_object(ranking, "hybrid");
    const char *tuned = json_object(ranking, "tuned"), *depth = json_object(ranking, "proved_by_depth");
    if (!kge || !hybrid || !tuned) {
        free(ranking);
        return sk_fail(SK_ERR_CORRUPT, "'%s' lacks the KGE, hybrid or tuned figures", path);
    }
    path_in(p, "report.md", path);
    FILE *md = fopen(path, "w");
    if (!md) {
        free(ranking);
        return sk_fail(SK_ERR_IO, "cannot write '%s'", path);
    }
    char choice[160] = "?";
    const char *at = strstr(tuned, "\"choice\": \"");
    if (at) sscanf(at + strlen("\"choice\": \""), "%159[^\"]", choice);
    fprintf(md, "# skinner prover run: %s\n\n", p->dataset);
    fprintf(md, "Seed %s, %s split, %s sampled negatives per side (0: all); the hybrid's weights "
                "and proof search chosen on valid: **%s** (valid MRR %.4f, KGE-only %.4f; every "
                "choice in tuned.ini).\n\n",
            p->seed, p->split, p->negatives, choice, json_number(tuned, "chosen_valid_mrr"),
            json_number(tuned, "kge_valid_mrr"));
    fprintf(md, "| scorer | MRR | Hits@1 | Hits@3 | Hits@10 |\n| --- | --- | --- | --- | --- |\n");
    scorer_row(md, "RL-only", ranking);
    scorer_row(md, "KGE-only", kge);
    scorer_row(md, "hybrid (tuned)", hybrid);
    fprintf(md, "\nTrue queries proved: %.1f%%; by recorded depth (proved / queries):",
            100.0 * json_number(ranking, "proved_rate"));
    for (const char *d = depth ? strchr(depth, '"') : NULL; d && *d != '}';) {
        char name[32];
        int proved = 0, total = 0;
        if (sscanf(d, "\"%31[^\"]\": [%d, %d]", name, &proved, &total) != 3) break;
        fprintf(md, " %s %d/%d (%.1f%%)", name, proved, total, total ? 100.0 * proved / total : 0.0);
        d = strchr(d, ']');
        d = d ? d + 1 + strspn(d + 1, ", ") : NULL;
    }
    fprintf(md, "\n\n| stage | seconds |\n| --- | --- |\n");
    for (int s = 0; s < STAGE_REPORT; s++) fprintf(md, "| %s | %.1f |\n", g_stages[s], p->seconds[s]);
    bool md_ok = fclose(md) == 0;
    path_in(p, "report.json", path);
    FILE *js = fopen(path, "w");
    bool js_ok = js != NULL;
    if (js) {
        fprintf(js, "{\"dataset\": \"%s\", \"seed\": %s, \"stage_seconds\": {", p->dataset,
                p->seed);
        for (int s = 0; s < STAGE_REPORT; s++)
            fprintf(js, "%s\"%s\": %.3f", s ? ", " : "", g_stages[s], p->seconds[s]);
        /* the ranking's own object: RL-only at its top level, "kge", "hybrid", "tuned",
         * "proved_by_depth" inside */
        fprintf(js, "}, \"ranking\": %s}\n", ranking);
        js_ok = fclose(js) == 0;
    }
    free(ranking);
    if (!md_ok || !js_ok) return sk_fail(SK_ERR_IO, "cannot write the report in '%s'", p->out);
    printf("skinner prover run: [report] %s/report.md, %s/report.json\n", p->out, p->out);
    return SK_OK;
}

/* ------------------------------------------------------------ the command */

static bool value_flag(int argc, char **argv, int *k, const char *flag, const char **out) {
    if (strcmp(argv[*k], flag) != 0) return false;
    if (*k + 1 >= argc) {
        *out = NULL;
        return true;
    }
    *out = argv[++*k];
    return true;
}

static int run(int argc, char **argv) {
    pipeline p = {.seed = "1", .negatives = "100", .split = "test"};
    for (int k = 0; k < argc; k++) {
        const char *flag = argv[k];
        const char **slots[] = {&p.dataset,    &p.out,       &p.seed,      &p.threads,
                                &p.negatives,  &p.split,     &p.queries,   &p.steps,
                                &p.kge_epochs, &p.kge_dim,   &p.preset,    &p.kge_preset,
                                &p.stop_after};
        const char *flags[] = {"--dataset",    "--run-dir",   "--seed",     "--threads",
                               "--negatives",  "--split",     "--queries",  "--steps",
                               "--kge-epochs", "--kge-dim",   "--preset",   "--kge-preset",
                               "--stop-after"};
        bool known = false;
        for (size_t f = 0; f < sizeof flags / sizeof flags[0] && !known; f++)
            if (value_flag(argc, argv, &k, flags[f], slots[f])) {
                known = true;
                if (!*slots[f]) {
                    fprintf(stderr, "skinner: error: %s needs a value\n", flag);
                    return 2;
                }
            }
        if (known) continue;
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
            fputs(g_usage, stdout);
            return 0;
        }
        fprintf(stderr, "%sskinner: error: unknown option '%s' of skinner prover run\n", g_usage,
                flag);
        return 2;
    }
    if (!p.dataset || !p.out) {
        fprintf(stderr, "%sskinner: error: skinner prover run needs --dataset DIR and --run-dir "
                        "OUT\n",
                g_usage);
        return 2;
    }
    int stop = NUM_STAGES - 1;
    if (p.stop_after) {
        for (stop = 0; stop < STAGE_REPORT && strcmp(g_stages[stop], p.stop_after) != 0; stop++) {}
        if (stop == STAGE_REPORT) {
            fprintf(stderr, "skinner: error: --stop-after '%s' (expected settings, kge, policy "
                            "or rank)\n",
                    p.stop_after);
            return 2;
        }
    }
    ssize_t n = readlink("/proc/self/exe", p.program, sizeof p.program - 1);
    if (n <= 0) {
        fprintf(stderr, "skinner: error: cannot find the skinner program (/proc/self/exe)\n");
        return 1;
    }
    p.program[n] = '\0';
    sk_status status = sk_mkdirs(p.out);
    typedef sk_status (*stage_fn)(pipeline *);
    static const stage_fn stages[NUM_STAGES] = {stage_settings, stage_kge, stage_policy,
                                                stage_rank, stage_report};
    double total = sk_now();
    for (int s = 0; s <= stop && status == SK_OK; s++) {
        if (s != STAGE_REPORT && stage_done(&p, s)) {
            printf("skinner prover run: [%s] done already (%.1f s; %s/stages/%s.done)\n",
                   g_stages[s], p.seconds[s], p.out, g_stages[s]);
            continue;
        }
        /* a redone stage invalidates the ones after it */
        for (int later = s + 1; later < NUM_STAGES; later++) {
            char path[PATH_SIZE];
            snprintf(path, sizeof path, "%s/stages/%s.done", p.out, g_stages[later]);
            unlink(path);
        }
        double started = sk_now();
        status = stages[s](&p);
        if (status == SK_OK && s != STAGE_REPORT) status = mark_done(&p, s, sk_now() - started);
    }
    if (status != SK_OK) {
        fprintf(stderr, "skinner: error: %s\n", sk_last_error());
        return 1;
    }
    printf("skinner prover run: %s in %.1f s\n", stop == STAGE_REPORT ? "done" : "stopped as asked",
           sk_now() - total);
    return 0;
}

int sk_prover_command(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "run") == 0) return run(argc - 2, argv + 2);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(g_usage, stdout);
        return 0;
    }
    fprintf(stderr, "%sskinner: error: skinner prover takes one command, run\n", g_usage);
    return 2;
}
