/*
 * Training and ranking KGE models on a knowledge base (Prover-v0's sk_kb):
 * entity e is constant e + 1, relation r is predicate r + SK_KB_FIRST_PRED.
 *
 * Training: epochs over the shuffled train facts in batches of batch_size
 * positives. A batch corrupts one side (tails on even batches, heads on odd
 * ones) with `negatives` entities drawn uniformly, shared by its positives.
 * The workers split a batch's positives, each accumulating into its own
 * gradient arena; the arenas are added in worker order over the rows the
 * batch touched (no locks, and the same result whatever the timing), and
 * AdamW updates those rows (lazily: untouched rows keep their moments, as
 * PyTorch's SparseAdam does).
 */
#ifndef SK_KGE_TRAIN_H
#define SK_KGE_TRAIN_H

#include "kge.h"
#include "skinner/kge.h"

#include "kb.h"
#include "rank.h"

typedef struct sk_kge_train_config {
    int batch_size, negatives, threads;
    double learning_rate, weight_decay, adam_eps;
    double adversarial_temperature; /* 0: DeepProofLog's loss; > 0: self-adversarial (kge.h) */
    int64_t lr_decay_steps;         /* 0: a constant learning rate; > 0: cosine decay (below) */
    uint64_t seed;
} sk_kge_train_config;

typedef struct sk_kge_trainer sk_kge_trainer;

/* A trainer of kge (borrowed) on kb's train facts. */
sk_status sk_kge_trainer_create(sk_kge_trainer **out, sk_kge *kge, const sk_kb *kb,
                                const sk_kge_train_config *config);
void sk_kge_trainer_destroy(sk_kge_trainer *tr);
/* One epoch; returns the mean batch loss. */
double sk_kge_train_epoch(sk_kge_trainer *tr);
int64_t sk_kge_trainer_steps(const sk_kge_trainer *tr);
/* Updates an epoch makes: one per batch, the last one possibly short. */
static inline int64_t sk_kge_batches_per_epoch(int64_t train_facts, int batch_size) {
    return (train_facts + batch_size - 1) / batch_size;
}
/* The learning rate of update `step` (1 for the first): learning_rate, or with
 * lr_decay_steps = T > 0, learning_rate * (1 + cos(pi * min(step, T) / T)) / 2,
 * which falls to 0 at update T and stays there. */
double sk_kge_learning_rate(const sk_kge_train_config *config, int64_t step);
/* One step on the given batch and negatives (for tests and the PyTorch comparison). */
double sk_kge_train_step(sk_kge_trainer *tr, const int32_t (*triples)[3], int batch,
                         sk_kge_side side, const int32_t *negatives, int num_negatives);

/* Everything a resumed run needs: the model, Adam's moments and step, the
 * sampling stream, the train facts in their current order, and the epochs
 * done; written atomically to path (format "skinner-kge-1", which
 * sk_kge_load reads as a model). */
sk_status sk_kge_trainer_save(const sk_kge_trainer *tr, const char *path, const char *dataset,
                              int epochs_done, const sk_config *cfg);
/* Restores a trainer created on the same model size and kb from such a file
 * (the model too); every value is checked (SK_ERR_CORRUPT names it). Returns
 * the epochs done in *epochs_done. */
sk_status sk_kge_trainer_restore(sk_kge_trainer *tr, const char *path, int *epochs_done);

/* Ranking protocol: each query of the split against its corruptions on the
 * ranked sides (those kb gives for its predicate and position: every
 * constant, or the type's), filtered against every known fact; negatives > 0
 * samples that many of them per side (without replacement, seeded by the
 * query's index), 0 ranks all. Ties are broken at random. */
typedef struct sk_kge_rank_options {
    sk_kb_split split;
    int max_queries; /* 0: all */
    int sides;       /* SK_PROVER_CORRUPT_HEAD, _TAIL or _BOTH */
    int negatives;   /* 0: all corruptions */
    uint64_t seed;
    int threads;
} sk_kge_rank_options;

sk_status sk_kge_rank(const sk_kge *kge, const sk_kb *kb, const sk_kge_rank_options *options,
                      sk_rank_result *out);

/* The entity and relation of kb's ids. */
/* skinner/kge.h's sk_kge_train_run and sk_kge_eval_run, as this module
 * implements them (kge_run.c); module.c exports them to libskinner. */
sk_status sk_kge_module_train(const sk_config *cfg, const char *config_path,
                              void (*start)(const sk_kge_train_summary *sizes, void *user),
                              sk_kge_epoch_fn on_epoch, void *user, sk_kge_train_summary *out);
sk_status sk_kge_module_eval(const sk_config *cfg, sk_kge_eval_summary *out);

static inline int sk_kge_entity_of(int32_t constant) { return constant - 1; }
static inline int sk_kge_relation_of(int32_t pred) { return pred - SK_KB_FIRST_PRED; }

#endif
