/* skinner kge train | eval: flags into a config for skinner/kge.h's drivers, and their reports. */
#include "cli.h"
#include "commands.h"

#include "skinner/kge.h"

#include <string.h>

static const char *g_kge_usage =
    "usage: skinner kge train --dataset DIR [options]\n"
    "       skinner kge eval --checkpoint RUN_OR_FILE [options]\n"
    "\n"
    "Trains a knowledge-graph embedding (TransE, ComplEx or RotatE) on a dataset in\n"
    "DeepProofLog's format by negative sampling, and ranks a split's queries with it.\n"
    "\n"
    "train options (each is also a config key kge.NAME, e.g. --kge.dim 500):\n"
    "  --dataset DIR        train.txt, valid.txt, test.txt, rules.txt, ... (kge.dataset)\n"
    "  --config FILE        INI with [kge] keys (e.g. configs/kge_family.ini)\n"
    "  --model NAME         rotate (default), complex or transe\n"
    "  --dim N              dimensions (complex ones for rotate and complex; default 200)\n"
    "  --gamma X            margin of transe and rotate (default 6)\n"
    "  --epochs N           passes over the train facts (default 100)\n"
    "  --batch-size N       positives per batch (default 512)\n"
    "  --negatives N        corruptions per batch, shared by its positives (default 256)\n"
    "  --lr X               AdamW learning rate (default 0.001)\n"
    "  --weight-decay X     AdamW decoupled weight decay (default 0)\n"
    "  --lr-schedule NAME   constant (default) or cosine: the rate falls as\n"
    "                       (1 + cos(pi t / T)) / 2 to 0 at the last of the T updates of\n"
    "                       --epochs (a --resume to more epochs stretches the curve)\n"
    "  --adversarial-temperature X\n"
    "                       0: DeepProofLog's loss, every negative weighs 1/N (default);\n"
    "                       X > 0: RotatE's self-adversarial sampling, each positive's\n"
    "                       negatives weighted by softmax(X * score)\n"
    "  --eval-every N       rank the valid split every N epochs (default 10; 0: never)\n"
    "  --seed N, --threads N (0: all cores), --run-dir DIR, --force, --quiet\n"
    "  --resume RUN         continue a run from its last checkpoint (written with every\n"
    "                       evaluation and at the end) up to --epochs\n"
    "\n"
    "eval options:\n"
    "  --checkpoint P       a kge run folder or its kge.safetensors\n"
    "  --dataset DIR        the data to rank on (default: the run's)\n"
    "  --split NAME         train, valid or test (default test)\n"
    "  --negatives N        N sampled corruptions per side (filtered, without\n"
    "                       replacement); 0 ranks all of them (default 0)\n"
    "  --corrupt SIDE       head, tail or both (default both)\n"
    "  --queries N          the first N queries of the split\n"
    "  --seed N             tie-breaking and sampling (default 1)\n"
    "  --threads N, --json\n";

/* --name value / --name=value into cfg as kge.name ('-' becomes '_'). */
static int read_flags(int argc, char **argv, sk_config *cfg, const char **config_path, bool *json,
                      bool *quiet, bool *force) {
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--json") == 0) { *json = true; continue; }
        if (strcmp(arg, "--quiet") == 0) { *quiet = true; continue; }
        if (strcmp(arg, "--force") == 0) { *force = true; continue; }
        if (strncmp(arg, "--", 2) != 0)
            return cli_error(SK_EXIT_USAGE, "unexpected argument '%s' (see 'skinner kge --help')", arg);
        const char *eq = strchr(arg, '=');
        char name[128];
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        if (len == 0 || len >= sizeof name - 8)
            return cli_error(SK_EXIT_USAGE, "bad option '%s'", arg);
        memcpy(name, arg + 2, len);
        name[len] = '\0';
        const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!value) return cli_error(SK_EXIT_USAGE, "option '%s' needs a value", arg);
        if (strcmp(name, "config") == 0) {
            *config_path = value;
            continue;
        }
        char key[160];
        if (strncmp(name, "kge.", 4) == 0) snprintf(key, sizeof key, "%s", name);
        else snprintf(key, sizeof key, "kge.%s", name);
        for (char *c = key; *c; c++)
            if (*c == '-') *c = '_';
        if (sk_config_set(cfg, key, value) != SK_OK) return cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    }
    return SK_EXIT_OK;
}

/* A failure of the library: a key to change is a usage error. */
static int kge_error(sk_status status) {
    return cli_error(status == SK_ERR_CONFIG ? SK_EXIT_USAGE : SK_EXIT_FAILURE, "%s",
                     sk_last_error());
}

static void train_started(const sk_kge_train_summary *sizes, void *user) {
    (void)user;
    fprintf(stderr, "kge: %s dim %d on %s: %d entities, %d relations, %d train facts\n",
            sizes->model, sizes->dim, sizes->dataset, sizes->entities,
            sizes->relations, sizes->train_facts);
}

static bool train_epoch(const sk_kge_epoch *epoch, void *user) {
    (void)user;
    if (epoch->ranked || epoch->epoch == 1)
        fprintf(stderr, "epoch %lld/%lld  loss %.4f  %.1fs\n", (long long)epoch->epoch,
                (long long)epoch->epochs, epoch->loss, epoch->seconds);
    if (epoch->ranked)
        fprintf(stderr, "  valid (100 negatives per side): MRR %.4f  hits@1 %.4f  hits@10 %.4f\n",
                epoch->valid.mrr, epoch->valid.hits1, epoch->valid.hits10);
    return true;
}

static int kge_train(int argc, char **argv) {
    sk_config *cfg = sk_config_new();
    const char *config_path = NULL;
    bool json = false, quiet = false, force = false;
    int rc = read_flags(argc, argv, cfg, &config_path, &json, &quiet, &force);
    if (rc == SK_EXIT_OK && force && sk_config_set(cfg, "kge.force", "true") != SK_OK)
        rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    sk_kge_train_summary summary;
    if (rc == SK_EXIT_OK) {
        sk_status status = sk_kge_train_run(cfg, config_path, quiet ? NULL : train_started,
                                            quiet ? NULL : train_epoch, NULL, &summary);
        if (status != SK_OK) rc = kge_error(status);
    }
    if (rc == SK_EXIT_OK) {
        printf("trained %s (dim %d) for %lld epochs in %.1f s; model: %s\n", summary.model,
               summary.dim, (long long)summary.epochs, summary.seconds, summary.model_path);
        printf("evaluate: skinner kge eval --checkpoint %s --negatives 100\n", summary.run_dir);
    }
    sk_config_free(cfg);
    return rc;
}

static void print_scores(const char *name, const sk_kge_scores *s) {
    printf("  %-8s MRR %.4f  hits@1 %.4f  hits@3 %.4f  hits@10 %.4f\n", name, s->mrr, s->hits1,
           s->hits3, s->hits10);
}

static void print_json_scores(const char *name, const sk_kge_scores *s) {
    printf(", \"%s\": {\"mrr\": %.6g, \"hits1\": %.6g, \"hits3\": %.6g, \"hits10\": %.6g}", name,
           s->mrr, s->hits1, s->hits3, s->hits10);
}

static int kge_eval(int argc, char **argv) {
    sk_config *cfg = sk_config_new();
    const char *config_path = NULL;
    bool json = false, quiet = false, force = false;
    int rc = read_flags(argc, argv, cfg, &config_path, &json, &quiet, &force);
    sk_kge_eval_summary r;
    if (rc == SK_EXIT_OK) {
        sk_status status = sk_kge_eval_run(cfg, &r);
        if (status != SK_OK) rc = kge_error(status);
    }
    sk_config_free(cfg);
    if (rc != SK_EXIT_OK) return rc;
    if (json) {
        printf("{\"model\": \"%s\", \"dim\": %d, \"split\": \"%s\", \"corrupt\": \"%s\", "
               "\"negatives\": %lld, \"queries\": %d, \"seconds\": %.3f, \"mrr\": %.6g, "
               "\"hits1\": %.6g, \"hits3\": %.6g, \"hits10\": %.6g",
               r.model, r.dim, r.split, r.corrupt, (long long)r.negatives, r.queries, r.seconds,
               r.overall.mrr, r.overall.hits1, r.overall.hits3, r.overall.hits10);
        if (r.head_ranked) print_json_scores("head", &r.head);
        if (r.tail_ranked) print_json_scores("tail", &r.tail);
        printf("}\n");
        return SK_EXIT_OK;
    }
    char protocol[64];
    if (r.negatives > 0)
        snprintf(protocol, sizeof protocol, "%lld sampled negatives", (long long)r.negatives);
    else snprintf(protocol, sizeof protocol, "all corruptions");
    printf("%s dim %d, %s split, %d queries, %s, filtered (%.2f s):\n", r.model, r.dim, r.split,
           r.queries, protocol, r.seconds);
    print_scores("mean", &r.overall);
    if (r.head_ranked && r.tail_ranked) {
        print_scores("head", &r.head);
        print_scores("tail", &r.tail);
    }
    return SK_EXIT_OK;
}

int cmd_kge(int argc, char **argv) {
    /* --help anywhere (`kge --help`, `kge train ... --help`) prints the usage */
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(g_kge_usage, stdout);
            return SK_EXIT_OK;
        }
    if (argc >= 1 && strcmp(argv[0], "train") == 0) return kge_train(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "eval") == 0) return kge_eval(argc - 1, argv + 1);
    fputs(g_kge_usage, stderr);
    return cli_error(SK_EXIT_USAGE, argc ? "unknown kge command '%s' (expected train or eval)"
                                          : "missing kge command%s (expected train or eval)",
                     argc ? argv[0] : "");
}
