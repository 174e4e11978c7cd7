/*
 * The KGE drivers behind `skinner kge train|eval` and skinner.kge_train
 * (include/skinner/kge.h): config, resume rules, run folder, metrics and
 * checkpoint cadence around kge_train.c's trainer and ranking.
 */
#include "skinner/kge.h"

#include "kge_train.h"

#include "skinner.h"

#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Valid-split rankings during training: 100 sampled negatives per side, both sides. */
#define KGE_VALID_NEGATIVES 100

static const char *const g_schedule_names[] = {"constant", "cosine", NULL};
static const char *const g_split_names[] = {"train", "valid", "test", NULL};
static const char *const g_side_names[] = {"head", "tail", "both", NULL};

/* A failure the caller fixes by changing a key: SK_ERR_CONFIG, whatever the read said. */
static sk_status usage(sk_status status) {
    if (status == SK_OK || status == SK_ERR_CONFIG) return status;
    char message[1024];
    snprintf(message, sizeof message, "%s", sk_last_error());
    return sk_fail(SK_ERR_CONFIG, "%s", message);
}

/* A failure of a file or the data, never SK_ERR_CONFIG (a malformed file is not a bad key). */
static sk_status not_usage(sk_status status, const char *prefix) {
    if (status == SK_OK) return status;
    char message[8192];
    snprintf(message, sizeof message, "%.4200s%.3900s", prefix, sk_last_error());
    return sk_fail(status == SK_ERR_CONFIG ? SK_ERR_INVALID : status, "%s", message);
}

static void copy_scores(sk_kge_scores *out, const sk_rank_metrics *in) {
    *out = (sk_kge_scores){in->mrr, in->hits1, in->hits3, in->hits10};
}

/* The run's config.ini under cfg (cfg's keys win), refusing a change to any
 * key but the epochs, threads and evaluation cadence. */
static sk_status layer_resumed(sk_config *cfg, const char *resume_dir) {
    char run_config[4200];
    snprintf(run_config, sizeof run_config, "%s/config.ini", resume_dir);
    sk_config *run = sk_config_new();
    if (!run) return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_status loaded = sk_config_load_file(run, run_config);
    const char *key, *value;
    for (int k = 0; loaded == SK_OK && sk_config_entry_at(run, k, &key, &value); k++) {
        if (strcmp(key, "kge.resume") == 0 || strcmp(key, "kge.run_dir") == 0) continue;
        const char *given = sk_config_get(cfg, key);
        bool changeable = strcmp(key, "kge.epochs") == 0 || strcmp(key, "kge.threads") == 0 ||
                          strcmp(key, "kge.eval_every") == 0;
        if (given && !changeable && strcmp(given, value) != 0) {
            sk_status refused = sk_fail(SK_ERR_CONFIG,
                                        "%s = %s cannot change when resuming (the run has %s); "
                                        "only kge.epochs, kge.threads and kge.eval_every can",
                                        key, given, value);
            sk_config_free(run);
            return refused;
        }
        if (!given) sk_config_set(cfg, key, value);
    }
    sk_config_free(run);
    if (loaded != SK_OK) {
        char prefix[4200];
        snprintf(prefix, sizeof prefix, "cannot resume '%s': ", resume_dir);
        return not_usage(loaded, prefix);
    }
    return sk_config_set(cfg, "kge.run_dir", resume_dir);
}

/* config_path's keys under cfg's. */
static sk_status layer_file(sk_config *cfg, const char *config_path) {
    sk_config *file = sk_config_new();
    if (!file) return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_status loaded = sk_config_load_file(file, config_path);
    const char *key, *value;
    for (int k = 0; loaded == SK_OK && sk_config_entry_at(file, k, &key, &value); k++)
        if (!sk_config_get(cfg, key)) sk_config_set(cfg, key, value);
    sk_config_free(file);
    return not_usage(loaded, "");
}

typedef struct kge_train_settings {
    const char *dataset, *run_dir;
    int model, schedule;
    int64_t dim, epochs, batch, negatives, seed, threads, eval_every;
    double gamma, lr, weight_decay, temperature;
    bool force;
} kge_train_settings;

/* Every kge.* key of a training, checked; an unknown key is refused. */
static sk_status read_settings(const sk_config *cfg, kge_train_settings *s) {
    sk_status st = sk_cfg_path(cfg, "kge.dataset", NULL, &s->dataset);
    if (st == SK_OK && (!s->dataset || !s->dataset[0]))
        st = sk_fail(SK_ERR_CONFIG, "kge train needs kge.dataset (--dataset DIR: a folder in "
                                    "DeepProofLog's format)");
    if (st == SK_OK) st = sk_cfg_choice(cfg, "kge.model", "rotate", sk_kge_model_names, &s->model);
    if (st == SK_OK) st = sk_cfg_int(cfg, "kge.dim", 200, 1, SK_KGE_MAX_DIM, &s->dim);
    if (st == SK_OK) st = sk_cfg_double(cfg, "kge.gamma", 6.0, 0.0, SK_KGE_MAX_GAMMA, &s->gamma);
    if (st == SK_OK) st = sk_cfg_int(cfg, "kge.epochs", 100, 1, 1000000, &s->epochs);
    if (st == SK_OK) st = sk_cfg_int(cfg, "kge.batch_size", 512, 1, 1 << 20, &s->batch);
    if (st == SK_OK) st = sk_cfg_int(cfg, "kge.negatives", 256, 1, 1 << 20, &s->negatives);
    if (st == SK_OK) st = sk_cfg_double(cfg, "kge.lr", 1e-3, 0.0, 10.0, &s->lr);
    if (st == SK_OK) st = sk_cfg_double(cfg, "kge.weight_decay", 0.0, 0.0, 10.0, &s->weight_decay);
    if (st == SK_OK)
        st = sk_cfg_choice(cfg, "kge.lr_schedule", "constant", g_schedule_names, &s->schedule);
    if (st == SK_OK)
        st = sk_cfg_double(cfg, "kge.adversarial_temperature", 0.0, 0.0, 100.0, &s->temperature);
    if (st == SK_OK) st = sk_cfg_int(cfg, "kge.eval_every", 10, 0, 1000000, &s->eval_every);
    if (st == SK_OK) st = sk_cfg_int(cfg, "kge.seed", 1, 0, INT64_MAX, &s->seed);
    if (st == SK_OK) st = sk_cfg_int(cfg, "kge.threads", 0, 0, 1024, &s->threads);
    if (st == SK_OK) st = sk_cfg_bool(cfg, "kge.force", false, &s->force);
    (void)sk_cfg_string(cfg, "kge.resume", NULL); /* read: not an unknown key */
    s->run_dir = sk_cfg_string(cfg, "kge.run_dir", NULL);
    if (st == SK_OK) st = sk_cfg_check_unused(cfg, "kge");
    return usage(st);
}

/* Writes cfg, less kge.force (a choice of this call, not of the run), as dir/config.ini. */
static sk_status write_run_config(const sk_config *cfg, const char *dir) {
    sk_config *kept = sk_config_new();
    const char *key, *value;
    for (int k = 0; kept && sk_config_entry_at(cfg, k, &key, &value); k++)
        if (strcmp(key, "kge.force") != 0) sk_config_set(kept, key, value);
    char *text = kept ? sk_config_to_string(kept) : NULL;
    sk_config_free(kept);
    char path[4200];
    snprintf(path, sizeof path, "%s/config.ini", dir);
    FILE *f = text ? fopen(path, "w") : NULL;
    bool written = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0) written = false;
    free(text);
    return written ? SK_OK : sk_fail(SK_ERR_IO, "cannot write '%s'", path);
}

sk_status sk_kge_module_train(const sk_config *given, const char *config_path,
                              void (*start)(const sk_kge_train_summary *sizes, void *user),
                              sk_kge_epoch_fn on_epoch, void *user, sk_kge_train_summary *out) {
    memset(out, 0, sizeof *out);
    sk_config *cfg = sk_config_copy(given);
    if (!cfg) return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_kb *kb = NULL;
    sk_kge kge = {0};
    sk_kge_trainer *trainer = NULL;
    FILE *metrics = NULL;
    int run_lock = -1;
    sk_status status = SK_OK;
    /* kge.resume RUN: the run's config, with only the epochs, threads and evaluation changeable */
    char resume_dir[4096] = "";
    const char *resume = sk_config_get(cfg, "kge.resume");
    if (resume) {
        snprintf(resume_dir, sizeof resume_dir, "%s", resume);
        status = config_path ? sk_fail(SK_ERR_CONFIG, "kge.resume (--resume) continues a run with "
                                                      "its own config.ini; drop --config")
                             : layer_resumed(cfg, resume_dir);
    }
    if (status == SK_OK && config_path) status = layer_file(cfg, config_path);
    kge_train_settings s = {0};
    if (status == SK_OK) status = read_settings(cfg, &s);
    if (status != SK_OK) goto done;
    bool force = s.force || resume_dir[0];
    char default_dir[256];
    if (!s.run_dir) {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(default_dir, sizeof default_dir, "runs/kge-%s-%s-s%lld",
                 sk_kge_model_names[s.model], stamp, (long long)s.seed);
        s.run_dir = default_dir;
    }
    snprintf(out->run_dir, sizeof out->run_dir, "%s", s.run_dir);
    snprintf(out->model_path, sizeof out->model_path, "%s/kge.safetensors", s.run_dir);
    snprintf(out->model, sizeof out->model, "%s", sk_kge_model_names[s.model]);
    out->dim = (int)s.dim;
    struct stat st;
    if (!force && stat(out->model_path, &st) == 0) {
        status = sk_fail(SK_ERR_IO, "%s already holds a model; give another --run-dir, or --force",
                         s.run_dir);
        goto done;
    }
    /* one writer per run folder: a second kge train into it (or a resume of it) is refused */
    status = not_usage(sk_kb_load(&kb, s.dataset), "");
    if (status == SK_OK) status = not_usage(sk_mkdirs(s.run_dir), "");
    if (status == SK_OK) status = not_usage(sk_run_lock(s.run_dir, &run_lock), "");
    if (status == SK_OK)
        status = not_usage(sk_kge_init(&kge, (sk_kge_model)s.model, kb->num_consts,
                                       kb->num_preds - SK_KB_FIRST_PRED, (int)s.dim,
                                       (float)s.gamma, (uint64_t)s.seed), "");
    if (status != SK_OK) goto done;
    sk_kge_train_config tc = {.batch_size = (int)s.batch, .negatives = (int)s.negatives,
                              .threads = (int)s.threads, .learning_rate = s.lr,
                              .weight_decay = s.weight_decay, .adam_eps = 1e-8,
                              .adversarial_temperature = s.temperature, .seed = (uint64_t)s.seed};
    if (s.schedule == 1) /* cosine over every update of the run: ceil(facts / batch) an epoch */
        tc.lr_decay_steps =
            s.epochs * sk_kge_batches_per_epoch(kb->facts[SK_KB_TRAIN].count, (int)s.batch);
    status = not_usage(sk_kge_trainer_create(&trainer, &kge, kb, &tc), "");
    if (status != SK_OK) goto done;
    int64_t done_epochs = 0;
    if (resume_dir[0]) {
        int restored = 0;
        char prefix[4200];
        snprintf(prefix, sizeof prefix, "cannot resume '%s': ", resume_dir);
        status = not_usage(sk_kge_trainer_restore(trainer, out->model_path, &restored), prefix);
        if (status != SK_OK) goto done;
        done_epochs = restored;
        if (done_epochs >= s.epochs) {
            status = sk_fail(SK_ERR_CONFIG, "'%s' has trained %lld epochs already; give --epochs "
                                            "above that to continue it",
                             resume_dir, (long long)done_epochs);
            goto done;
        }
    }
    status = write_run_config(cfg, s.run_dir);
    if (status != SK_OK) goto done;
    char path[4200];
    snprintf(path, sizeof path, "%s/metrics.csv", s.run_dir);
    metrics = fopen(path, done_epochs ? "a" : "w");
    if (!metrics) {
        status = sk_fail(SK_ERR_IO, "cannot write '%s'", path);
        goto done;
    }
    if (!done_epochs)
        fprintf(metrics, "epoch,steps,wall_seconds,loss,valid_mrr,valid_hits1,valid_hits10\n");
    snprintf(out->dataset, sizeof out->dataset, "%s", s.dataset);
    out->entities = kb->num_consts;
    out->relations = kb->num_preds - SK_KB_FIRST_PRED;
    out->train_facts = kb->facts[SK_KB_TRAIN].count;
    out->first_epoch = done_epochs + 1;
    if (start) start(out, user);
    double started = sk_now();
    for (int64_t epoch = done_epochs + 1; epoch <= s.epochs; epoch++) {
        sk_kge_epoch report = {.epoch = epoch, .epochs = s.epochs};
        report.loss = sk_kge_train_epoch(trainer);
        report.ranked = s.eval_every > 0 && (epoch % s.eval_every == 0 || epoch == s.epochs) &&
                        kb->queries[SK_KB_VALID].count > 0;
        if (report.ranked) {
            sk_kge_rank_options ro = {.split = SK_KB_VALID, .sides = SK_PROVER_CORRUPT_BOTH,
                                      .negatives = KGE_VALID_NEGATIVES, .seed = 1,
                                      .threads = (int)s.threads};
            sk_rank_result valid;
            status = not_usage(sk_kge_rank(&kge, kb, &ro, &valid), "");
            if (status != SK_OK) goto done;
            copy_scores(&report.valid, &valid.overall);
        }
        report.steps = sk_kge_trainer_steps(trainer);
        report.seconds = sk_now() - started;
        if (report.ranked)
            fprintf(metrics, "%lld,%lld,%.3f,%.6g,%.6g,%.6g,%.6g\n", (long long)epoch,
                    (long long)report.steps, report.seconds, report.loss, report.valid.mrr,
                    report.valid.hits1, report.valid.hits10);
        else
            fprintf(metrics, "%lld,%lld,%.3f,%.6g,,,\n", (long long)epoch, (long long)report.steps,
                    report.seconds, report.loss);
        fflush(metrics);
        out->epochs = epoch;
        out->loss = report.loss;
        out->seconds = report.seconds;
        if (report.ranked) {
            out->ranked = true;
            out->valid = report.valid;
        }
        bool go_on = !on_epoch || on_epoch(&report, user);
        if (!isfinite(report.loss)) {
            status = sk_fail(SK_ERR_NUMERIC, "the loss is not finite at epoch %lld; lower --lr",
                             (long long)epoch);
            goto done;
        }
        /* a resumable checkpoint with every evaluation, and at the end */
        if (report.ranked || epoch == s.epochs) {
            status = sk_kge_trainer_save(trainer, out->model_path, s.dataset, (int)epoch, cfg);
            if ((status = not_usage(status, "")) != SK_OK) goto done;
        }
        if (!go_on) {
            status = sk_fail(SK_ERR_INTERRUPTED, "kge training stopped by its caller after epoch "
                                                 "%lld", (long long)epoch);
            goto done;
        }
    }
    out->seconds = sk_now() - started;
done:
    if (metrics) fclose(metrics);
    sk_run_unlock(run_lock);
    sk_kge_trainer_destroy(trainer);
    sk_kge_free(&kge);
    sk_kb_free(kb);
    sk_config_free(cfg);
    return status;
}

sk_status sk_kge_module_eval(const sk_config *given, sk_kge_eval_summary *out) {
    memset(out, 0, sizeof *out);
    sk_config *cfg = sk_config_copy(given);
    if (!cfg) return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_kb *kb = NULL;
    sk_kge kge = {0};
    bool loaded = false;
    sk_status status = SK_OK;
    const char *checkpoint = sk_cfg_string(cfg, "kge.checkpoint", NULL), *dataset = NULL;
    if (!checkpoint) {
        status = sk_fail(SK_ERR_CONFIG, "kge eval needs kge.checkpoint (--checkpoint: a kge run "
                                        "folder or its kge.safetensors)");
        goto done;
    }
    char path[4300], saved_dataset[4096];
    struct stat st;
    if (stat(checkpoint, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(path, sizeof path, "%s/kge.safetensors", checkpoint);
    else snprintf(path, sizeof path, "%s", checkpoint);
    status = not_usage(sk_kge_load(&kge, path, saved_dataset, sizeof saved_dataset), "");
    if (status != SK_OK) goto done;
    loaded = true;
    int split = 2, side = 2;
    int64_t negatives = 0, queries = 0, seed = 1, threads = 0;
    status = sk_cfg_path(cfg, "kge.dataset", saved_dataset[0] ? saved_dataset : NULL, &dataset);
    if (status == SK_OK) status = sk_cfg_choice(cfg, "kge.split", "test", g_split_names, &split);
    if (status == SK_OK) status = sk_cfg_choice(cfg, "kge.corrupt", "both", g_side_names, &side);
    if (status == SK_OK) status = sk_cfg_int(cfg, "kge.negatives", 0, 0, INT32_MAX, &negatives);
    if (status == SK_OK) status = sk_cfg_int(cfg, "kge.queries", 0, 0, INT32_MAX, &queries);
    if (status == SK_OK) status = sk_cfg_int(cfg, "kge.seed", 1, 0, INT64_MAX, &seed);
    if (status == SK_OK) status = sk_cfg_int(cfg, "kge.threads", 0, 0, 1024, &threads);
    if (status == SK_OK) status = sk_cfg_check_unused(cfg, "kge");
    if (status == SK_OK && !dataset)
        status = sk_fail(SK_ERR_CONFIG, "the model names no dataset; give --dataset DIR");
    if ((status = usage(status)) != SK_OK) goto done;
    status = not_usage(sk_kb_load(&kb, dataset), "");
    if (status != SK_OK) goto done;
    static const int sides[] = {SK_PROVER_CORRUPT_HEAD, SK_PROVER_CORRUPT_TAIL,
                                SK_PROVER_CORRUPT_BOTH};
    sk_kge_rank_options ro = {.split = (sk_kb_split)split, .max_queries = (int)queries,
                              .sides = sides[side], .negatives = (int)negatives,
                              .seed = (uint64_t)seed, .threads = (int)threads};
    sk_rank_result r;
    status = not_usage(sk_kge_rank(&kge, kb, &ro, &r), "");
    if (status != SK_OK) goto done;
    snprintf(out->model, sizeof out->model, "%s", sk_kge_model_names[kge.model]);
    snprintf(out->split, sizeof out->split, "%s", g_split_names[split]);
    snprintf(out->corrupt, sizeof out->corrupt, "%s", g_side_names[side]);
    out->dim = kge.dim;
    out->head_ranked = (ro.sides & SK_PROVER_CORRUPT_HEAD) != 0;
    out->tail_ranked = (ro.sides & SK_PROVER_CORRUPT_TAIL) != 0;
    out->negatives = negatives;
    out->queries = r.queries;
    out->seconds = r.seconds;
    copy_scores(&out->overall, &r.overall);
    copy_scores(&out->head, &r.head);
    copy_scores(&out->tail, &r.tail);
done:
    if (loaded) sk_kge_free(&kge);
    sk_kb_free(kb);
    sk_config_free(cfg);
    return status;
}
