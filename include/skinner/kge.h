/*
 * skinner/kge.h: training and ranking knowledge-graph embeddings (TransE,
 * ComplEx, RotatE) on a dataset in DeepProofLog's format, as `skinner kge
 * train|eval` and skinner.kge_train do (docs/prover.md):
 *
 *     sk_config *cfg = sk_config_new();
 *     sk_config_set(cfg, "kge.dataset", "../shared/data/countries_s3");
 *     sk_config_set(cfg, "kge.epochs", "20");
 *     sk_config_set(cfg, "kge.run_dir", "runs/kge-demo");
 *     sk_kge_train_summary summary;
 *     if (sk_kge_train_run(cfg, NULL, NULL, NULL, &summary) == SK_OK)
 *         printf("valid MRR %.3f, model %s\n", summary.valid.mrr, summary.model_path);
 *     sk_config_free(cfg);
 *
 * The keys are kge.NAME (the flags of `skinner kge train`): dataset, model,
 * dim, gamma, epochs, batch_size, negatives, lr, weight_decay, lr_schedule,
 * adversarial_temperature, eval_every, seed, threads, run_dir, resume, force.
 */
#ifndef SKINNER_KGE_H
#define SKINNER_KGE_H

#include "module.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Filtered ranking figures of the true answers. */
typedef struct sk_kge_scores {
    double mrr, hits1, hits3, hits10;
} sk_kge_scores;

/* One epoch done: its loss and, when it ranked the valid split (100 sampled
 * negatives per side, both sides), the figures. */
typedef struct sk_kge_epoch {
    int64_t epoch, epochs, steps;
    double seconds, loss;
    bool ranked;
    sk_kge_scores valid;
} sk_kge_epoch;

/* Returns false to stop the training after that epoch (its checkpoint, if
 * it writes one, first): the run ends with SK_ERR_INTERRUPTED and resumes
 * from its last checkpoint. */
typedef bool (*sk_kge_epoch_fn)(const sk_kge_epoch *epoch, void *user);

typedef struct sk_kge_train_summary {
    char model[16];       /* "rotate", "complex" or "transe" */
    int dim;
    int entities, relations, train_facts;
    int64_t first_epoch;  /* 1, or the epoch a resumed run starts from */
    int64_t epochs;       /* the last epoch trained */
    double seconds, loss; /* of this call; the last epoch's loss */
    bool ranked;          /* whether valid holds a ranking (the last one) */
    sk_kge_scores valid;
    char dataset[4096];    /* the one trained on (a resumed run's own) */
    char run_dir[4096];
    char model_path[4200]; /* RUN_DIR/kge.safetensors */
} sk_kge_train_summary;

/*
 * Trains a model as cfg's kge.* keys say, over config_path's [kge] keys
 * (NULL: none; cfg's keys win), into the run folder kge.run_dir
 * (default runs/kge-MODEL-STAMP-sSEED): config.ini, metrics.csv (a row an
 * epoch) and kge.safetensors, a resumable checkpoint written with every
 * valid ranking and at the end. The folder is locked while it trains; one
 * that holds a model is refused unless kge.force is true. kge.resume = RUN
 * continues that run up to kge.epochs with its own config.ini (only
 * kge.epochs, kge.threads and kge.eval_every may change; config_path must
 * be NULL). start (may be NULL) is called once the data is loaded, with
 * out's sizes filled; on_epoch (may be NULL) after every epoch. cfg is not
 * changed. SK_ERR_CONFIG: a key or combination the caller must change;
 * SK_ERR_NUMERIC: the loss stopped being finite (a checkpoint of the last
 * good ranking stays); other statuses name the file or data at fault.
 */
SK_API sk_status sk_kge_train_run(const sk_config *cfg, const char *config_path,
                                  void (*start)(const sk_kge_train_summary *sizes, void *user),
                                  sk_kge_epoch_fn on_epoch, void *user,
                                  sk_kge_train_summary *out);

typedef struct sk_kge_eval_summary {
    char model[16];
    int dim;
    char split[8];   /* "train", "valid" or "test" */
    char corrupt[8]; /* "head", "tail" or "both" */
    bool head_ranked, tail_ranked;
    int64_t negatives; /* 0: all corruptions */
    int queries;
    double seconds;
    sk_kge_scores overall, head, tail;
} sk_kge_eval_summary;

/*
 * Ranks a split with a trained model, as cfg's kge.* keys say: checkpoint (a
 * run folder or its kge.safetensors; required), dataset (default: the
 * model's), split (test), corrupt (both), negatives (0: all), queries (0:
 * all), seed (1), threads (0: all cores). SK_ERR_CONFIG as above.
 */
SK_API sk_status sk_kge_eval_run(const sk_config *cfg, sk_kge_eval_summary *out);

/*
 * Who implements them: the Prover module (skinner-prover.so, skinner/module.h),
 * not libskinner. The two calls above find, with sk_module_symbol, the
 * functions the module exports under these names, of these types, and call
 * them; without the module they fail with SK_ERR_INVALID saying so.
 */
#define SK_KGE_TRAIN_SYMBOL "sk_module_kge_train_run"
#define SK_KGE_EVAL_SYMBOL "sk_module_kge_eval_run"
typedef sk_status (*sk_kge_train_run_fn)(const sk_config *cfg, const char *config_path,
                                         void (*start)(const sk_kge_train_summary *sizes,
                                                       void *user),
                                         sk_kge_epoch_fn on_epoch, void *user,
                                         sk_kge_train_summary *out);
typedef sk_status (*sk_kge_eval_run_fn)(const sk_config *cfg, sk_kge_eval_summary *out);

#ifdef __cplusplus
}
#endif

#endif
