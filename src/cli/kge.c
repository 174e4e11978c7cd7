/* skinner kge train | eval: knowledge-graph embeddings (src/kge, docs/prover.md). */
#include "cli.h"

#include "core/config.h"
#include "core/core.h"
#include "io/safetensors.h"
#include "kge/kge_train.h"
#include "train/run_files.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

static const char *const g_schedule_names[] = {"constant", "cosine", NULL};
static const char *const g_split_names[] = {"train", "valid", "test", NULL};
static const char *const g_side_names[] = {"head", "tail", "both", NULL};

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

#define TRY_CFG(expr)                                                                              \
    do {                                                                                           \
        if ((expr) != SK_OK) {                                                                     \
            rc = cli_error(SK_EXIT_USAGE, "%s", sk_last_error());                                  \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

static int kge_train(int argc, char **argv) {
    sk_config *cfg = sk_config_new();
    const char *config_path = NULL;
    bool json = false, quiet = false, force = false;
    int rc = read_flags(argc, argv, cfg, &config_path, &json, &quiet, &force);
    sk_kb *kb = NULL;
    sk_kge kge = {0};
    sk_kge_trainer *trainer = NULL;
    FILE *metrics = NULL;
    int run_lock = -1;
    if (rc != SK_EXIT_OK) goto done;
    /* --resume RUN: the run's config, with only the epochs, threads and evaluation changeable */
    char resume_dir[4096] = "";
    const char *resume = sk_config_get(cfg, "kge.resume");
    if (resume) {
        snprintf(resume_dir, sizeof resume_dir, "%s", resume);
        if (config_path) {
            rc = cli_error(SK_EXIT_USAGE, "--resume continues a run with its own config.ini; drop --config");
            goto done;
        }
        char run_config[4200];
        snprintf(run_config, sizeof run_config, "%s/config.ini", resume_dir);
        sk_config *run = sk_config_new();
        sk_status loaded = sk_config_load_file(run, run_config);
        const char *key, *value;
        for (int k = 0; loaded == SK_OK && sk_config_entry_at(run, k, &key, &value); k++) {
            if (strcmp(key, "kge.resume") == 0 || strcmp(key, "kge.run_dir") == 0) continue;
            const char *given = sk_config_get(cfg, key);
            bool changeable = strcmp(key, "kge.epochs") == 0 || strcmp(key, "kge.threads") == 0 ||
                              strcmp(key, "kge.eval_every") == 0 || strcmp(key, "kge.run_dir") == 0;
            if (given && !changeable && strcmp(given, value) != 0) {
                rc = cli_error(SK_EXIT_USAGE,
                               "%s = %s cannot change when resuming (the run has %s); only "
                               "kge.epochs, kge.threads and kge.eval_every can",
                               key, given, value);
                sk_config_free(run);
                goto done;
            }
            if (!given) sk_config_set(cfg, key, value);
        }
        sk_config_free(run);
        if (loaded != SK_OK) {
            rc = cli_error(SK_EXIT_FAILURE, "cannot resume '%s': %s", resume_dir, sk_last_error());
            goto done;
        }
        sk_config_set(cfg, "kge.run_dir", resume_dir);
        (void)sk_cfg_string(cfg, "kge.resume", NULL); /* read: not an unknown key */
        force = true;
    }
    if (config_path) {
        sk_config *file = sk_config_new();
        sk_status loaded = sk_config_load_file(file, config_path);
        const char *key, *value;
        /* the command line's keys win over the file's */
        for (int k = 0; loaded == SK_OK && sk_config_entry_at(file, k, &key, &value); k++)
            if (!sk_config_get(cfg, key)) sk_config_set(cfg, key, value);
        sk_config_free(file);
        if (loaded != SK_OK) {
            rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
            goto done;
        }
    }
    const char *dataset = NULL, *run_dir = NULL;
    int model = 0, schedule = 0;
    int64_t dim, epochs, batch, negatives, seed, threads, eval_every;
    double gamma, lr, weight_decay, temperature;
    TRY_CFG(sk_cfg_path(cfg, "kge.dataset", NULL, &dataset));
    if (!dataset || !dataset[0]) {
        rc = cli_error(SK_EXIT_USAGE, "kge train needs --dataset DIR (a folder in DeepProofLog's format)");
        goto done;
    }
    TRY_CFG(sk_cfg_choice(cfg, "kge.model", "rotate", sk_kge_model_names, &model));
    TRY_CFG(sk_cfg_int(cfg, "kge.dim", 200, 1, SK_KGE_MAX_DIM, &dim));
    TRY_CFG(sk_cfg_double(cfg, "kge.gamma", 6.0, 0.0, SK_KGE_MAX_GAMMA, &gamma));
    TRY_CFG(sk_cfg_int(cfg, "kge.epochs", 100, 1, 1000000, &epochs));
    TRY_CFG(sk_cfg_int(cfg, "kge.batch_size", 512, 1, 1 << 20, &batch));
    TRY_CFG(sk_cfg_int(cfg, "kge.negatives", 256, 1, 1 << 20, &negatives));
    TRY_CFG(sk_cfg_double(cfg, "kge.lr", 1e-3, 0.0, 10.0, &lr));
    TRY_CFG(sk_cfg_double(cfg, "kge.weight_decay", 0.0, 0.0, 10.0, &weight_decay));
    TRY_CFG(sk_cfg_choice(cfg, "kge.lr_schedule", "constant", g_schedule_names, &schedule));
    TRY_CFG(sk_cfg_double(cfg, "kge.adversarial_temperature", 0.0, 0.0, 100.0, &temperature));
    TRY_CFG(sk_cfg_int(cfg, "kge.eval_every", 10, 0, 1000000, &eval_every));
    TRY_CFG(sk_cfg_int(cfg, "kge.seed", 1, 0, INT64_MAX, &seed));
    TRY_CFG(sk_cfg_int(cfg, "kge.threads", 0, 0, 1024, &threads));
    run_dir = sk_cfg_string(cfg, "kge.run_dir", NULL);
    TRY_CFG(sk_cfg_check_unused(cfg, "kge"));
    char default_dir[256];
    if (!run_dir) {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(default_dir, sizeof default_dir, "runs/kge-%s-%s-s%lld",
                 sk_kge_model_names[model], stamp, (long long)seed);
        run_dir = default_dir;
    }
    char path[4300];
    snprintf(path, sizeof path, "%s/kge.safetensors", run_dir);
    struct stat st;
    if (!force && stat(path, &st) == 0) {
        rc = cli_error(SK_EXIT_FAILURE, "%s already holds a model; give another --run-dir, or --force",
                       run_dir);
        goto done;
    }
    /* one writer per run folder: a second kge train into it (or a --resume of it) is refused */
    if (sk_kb_load(&kb, dataset) != SK_OK || sk_mkdirs(run_dir) != SK_OK ||
        sk_run_lock(run_dir, &run_lock) != SK_OK) {
        rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
        goto done;
    }
    if (sk_kge_init(&kge, (sk_kge_model)model, kb->num_consts, kb->num_preds - SK_KB_FIRST_PRED,
                    (int)dim, (float)gamma, (uint64_t)seed) != SK_OK) {
        rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
        goto done;
    }
    sk_kge_train_config tc = {.batch_size = (int)batch, .negatives = (int)negatives,
                              .threads = (int)threads, .learning_rate = lr,
                              .weight_decay = weight_decay, .adam_eps = 1e-8,
                              .adversarial_temperature = temperature, .seed = (uint64_t)seed};
    if (schedule == 1) /* cosine over every update of the run: ceil(facts / batch) an epoch */
        tc.lr_decay_steps = epochs * sk_kge_batches_per_epoch(kb->facts[SK_KB_TRAIN].count, (int)batch);
    if (sk_kge_trainer_create(&trainer, &kge, kb, &tc) != SK_OK) {
        rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
        goto done;
    }
    int64_t done_epochs = 0;
    char model_path[4300];
    snprintf(model_path, sizeof model_path, "%s/kge.safetensors", run_dir);
    if (resume_dir[0]) {
        int restored = 0;
        if (sk_kge_trainer_restore(trainer, model_path, &restored) != SK_OK) {
            rc = cli_error(SK_EXIT_FAILURE, "cannot resume '%s': %s", resume_dir, sk_last_error());
            goto done;
        }
        done_epochs = restored;
        if (done_epochs >= epochs) {
            rc = cli_error(SK_EXIT_USAGE,
                           "'%s' has trained %lld epochs already; give --epochs above that to "
                           "continue it",
                           resume_dir, (long long)done_epochs);
            goto done;
        }
    }
    char *config_text = sk_config_to_string(cfg);
    snprintf(path, sizeof path, "%s/config.ini", run_dir);
    FILE *f = fopen(path, "w");
    if (f && config_text) fputs(config_text, f);
    if (f) fclose(f);
    free(config_text);
    snprintf(path, sizeof path, "%s/metrics.csv", run_dir);
    metrics = fopen(path, done_epochs ? "a" : "w");
    if (!metrics) {
        rc = cli_error(SK_EXIT_FAILURE, "cannot write '%s'", path);
        goto done;
    }
    if (!done_epochs)
        fprintf(metrics, "epoch,steps,wall_seconds,loss,valid_mrr,valid_hits1,valid_hits10\n");
    if (!quiet)
        fprintf(stderr, "kge: %s dim %lld on %s: %d entities, %d relations, %d train facts\n",
                sk_kge_model_names[model], (long long)dim, dataset, kb->num_consts,
                kb->num_preds - SK_KB_FIRST_PRED, kb->facts[SK_KB_TRAIN].count);
    double started = sk_now();
    sk_rank_result valid = {0};
    for (int64_t epoch = done_epochs + 1; epoch <= epochs; epoch++) {
        double loss = sk_kge_train_epoch(trainer);
        bool ranked = eval_every > 0 && (epoch % eval_every == 0 || epoch == epochs) &&
                      kb->queries[SK_KB_VALID].count > 0;
        if (ranked) {
            sk_kge_rank_options ro = {.split = SK_KB_VALID, .sides = SK_PROVER_CORRUPT_BOTH,
                                      .negatives = 100, .seed = 1, .threads = (int)threads};
            if (sk_kge_rank(&kge, kb, &ro, &valid) != SK_OK) {
                rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
                goto done;
            }
        }
        double seconds = sk_now() - started;
        if (ranked)
            fprintf(metrics, "%lld,%lld,%.3f,%.6g,%.6g,%.6g,%.6g\n", (long long)epoch,
                    (long long)sk_kge_trainer_steps(trainer), seconds, loss, valid.overall.mrr,
                    valid.overall.hits1, valid.overall.hits10);
        else
            fprintf(metrics, "%lld,%lld,%.3f,%.6g,,,\n", (long long)epoch,
                    (long long)sk_kge_trainer_steps(trainer), seconds, loss);
        fflush(metrics);
        if (!quiet && (ranked || epoch == 1))
            fprintf(stderr, "epoch %lld/%lld  loss %.4f  %s%.1fs\n", (long long)epoch,
                    (long long)epochs, loss, "", seconds);
        if (!quiet && ranked)
            fprintf(stderr, "  valid (100 negatives per side): MRR %.4f  hits@1 %.4f  hits@10 %.4f\n",
                    valid.overall.mrr, valid.overall.hits1, valid.overall.hits10);
        if (!isfinite(loss)) {
            rc = cli_error(SK_EXIT_FAILURE, "the loss is not finite at epoch %lld; lower --lr",
                           (long long)epoch);
            goto done;
        }
        /* a resumable checkpoint with every evaluation, and at the end */
        if ((ranked || epoch == epochs) &&
            sk_kge_trainer_save(trainer, model_path, dataset, (int)epoch, cfg) != SK_OK) {
            rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
            goto done;
        }
    }
    snprintf(path, sizeof path, "%s", model_path);
    printf("trained %s (dim %lld) for %lld epochs in %.1f s; model: %s\n", sk_kge_model_names[model],
           (long long)dim, (long long)epochs, sk_now() - started, path);
    printf("evaluate: skinner kge eval --checkpoint %s --negatives 100\n", run_dir);
done:
    if (metrics) fclose(metrics);
    sk_run_unlock(run_lock);
    sk_kge_trainer_destroy(trainer);
    sk_kge_free(&kge);
    sk_kb_free(kb);
    sk_config_free(cfg);
    return rc;
}

static int kge_eval(int argc, char **argv) {
    sk_config *cfg = sk_config_new();
    const char *config_path = NULL;
    bool json = false, quiet = false, force = false;
    int rc = read_flags(argc, argv, cfg, &config_path, &json, &quiet, &force);
    sk_kb *kb = NULL;
    sk_kge kge = {0};
    bool loaded = false;
    if (rc != SK_EXIT_OK) goto done;
    const char *checkpoint = sk_cfg_string(cfg, "kge.checkpoint", NULL), *dataset = NULL;
    if (!checkpoint) {
        rc = cli_error(SK_EXIT_USAGE, "kge eval needs --checkpoint (a kge run folder or its kge.safetensors)");
        goto done;
    }
    char path[4300], saved_dataset[4096];
    struct stat st;
    if (stat(checkpoint, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(path, sizeof path, "%s/kge.safetensors", checkpoint);
    else snprintf(path, sizeof path, "%s", checkpoint);
    if (sk_kge_load(&kge, path, saved_dataset, sizeof saved_dataset) != SK_OK) {
        rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
        goto done;
    }
    loaded = true;
    int split = 2, side = 2;
    int64_t negatives, queries, seed, threads;
    TRY_CFG(sk_cfg_path(cfg, "kge.dataset", saved_dataset[0] ? saved_dataset : NULL, &dataset));
    TRY_CFG(sk_cfg_choice(cfg, "kge.split", "test", g_split_names, &split));
    TRY_CFG(sk_cfg_choice(cfg, "kge.corrupt", "both", g_side_names, &side));
    TRY_CFG(sk_cfg_int(cfg, "kge.negatives", 0, 0, INT32_MAX, &negatives));
    TRY_CFG(sk_cfg_int(cfg, "kge.queries", 0, 0, INT32_MAX, &queries));
    TRY_CFG(sk_cfg_int(cfg, "kge.seed", 1, 0, INT64_MAX, &seed));
    TRY_CFG(sk_cfg_int(cfg, "kge.threads", 0, 0, 1024, &threads));
    TRY_CFG(sk_cfg_check_unused(cfg, "kge"));
    if (!dataset) {
        rc = cli_error(SK_EXIT_USAGE, "the model names no dataset; give --dataset DIR");
        goto done;
    }
    if (sk_kb_load(&kb, dataset) != SK_OK) {
        rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
        goto done;
    }
    static const int sides[] = {SK_PROVER_CORRUPT_HEAD, SK_PROVER_CORRUPT_TAIL, SK_PROVER_CORRUPT_BOTH};
    sk_kge_rank_options ro = {.split = (sk_kb_split)split, .max_queries = (int)queries,
                              .sides = sides[side], .negatives = (int)negatives,
                              .seed = (uint64_t)seed, .threads = (int)threads};
    sk_rank_result r;
    if (sk_kge_rank(&kge, kb, &ro, &r) != SK_OK) {
        rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
        goto done;
    }
    char protocol[64];
    if (negatives > 0) snprintf(protocol, sizeof protocol, "%lld sampled negatives", (long long)negatives);
    else snprintf(protocol, sizeof protocol, "all corruptions");
    if (json) {
        printf("{\"model\": \"%s\", \"dim\": %d, \"split\": \"%s\", \"corrupt\": \"%s\", "
               "\"negatives\": %lld, \"queries\": %d, \"seconds\": %.3f, \"mrr\": %.6g, "
               "\"hits1\": %.6g, \"hits3\": %.6g, \"hits10\": %.6g",
               sk_kge_model_names[kge.model], kge.dim, g_split_names[split], g_side_names[side],
               (long long)negatives, r.queries, r.seconds, r.overall.mrr, r.overall.hits1,
               r.overall.hits3, r.overall.hits10);
        if (ro.sides & SK_PROVER_CORRUPT_HEAD)
            printf(", \"head\": {\"mrr\": %.6g, \"hits1\": %.6g, \"hits3\": %.6g, \"hits10\": %.6g}",
                   r.head.mrr, r.head.hits1, r.head.hits3, r.head.hits10);
        if (ro.sides & SK_PROVER_CORRUPT_TAIL)
            printf(", \"tail\": {\"mrr\": %.6g, \"hits1\": %.6g, \"hits3\": %.6g, \"hits10\": %.6g}",
                   r.tail.mrr, r.tail.hits1, r.tail.hits3, r.tail.hits10);
        printf("}\n");
    } else {
        printf("%s dim %d, %s split, %d queries, %s, filtered (%.2f s):\n",
               sk_kge_model_names[kge.model], kge.dim, g_split_names[split], r.queries, protocol,
               r.seconds);
        printf("  %-8s MRR %.4f  hits@1 %.4f  hits@3 %.4f  hits@10 %.4f\n", "mean", r.overall.mrr,
               r.overall.hits1, r.overall.hits3, r.overall.hits10);
        if (ro.sides == SK_PROVER_CORRUPT_BOTH) {
            printf("  %-8s MRR %.4f  hits@1 %.4f  hits@3 %.4f  hits@10 %.4f\n", "head", r.head.mrr,
                   r.head.hits1, r.head.hits3, r.head.hits10);
            printf("  %-8s MRR %.4f  hits@1 %.4f  hits@3 %.4f  hits@10 %.4f\n", "tail", r.tail.mrr,
                   r.tail.hits1, r.tail.hits3, r.tail.hits10);
        }
    }
done:
    if (loaded) sk_kge_free(&kge);
    sk_kb_free(kb);
    sk_config_free(cfg);
    return rc;
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
