/* KGE models and training checkpoints are input: a fuzzed kge.safetensors, its
 * checksums resealed so that the mutation reaches the validation behind them,
 * is read as a model (sk_kge_load) and restored into a trainer on a small
 * knowledge base (sk_kge_trainer_restore); whatever restore accepts then
 * trains one epoch and ranks the test split, so it must be safe to use.
 * What the load accepts must also be what the file says (check_accepted). */
#include "fuzz_util.h"

#include "io/safetensors.h"
#include "prover/kge_train.h"

#include <string.h>

/* The knowledge base the seed (fuzz/corpus/kge) was trained on; fuzz/README.md
 * says how to write it again. */
static const char *const g_facts[3] = {
    "locatedIn(c1,e).\nlocatedIn(c3,f).\nneighborOf(c2,c1).\nneighborOf(c4,c3).\n",
    "locatedIn(c4,f).\n",
    "locatedIn(c2,e).\n",
};
static const char g_rules[] = "r1:1:neighborOf(X,Y), locatedIn(Y,Z) -> locatedIn(X,Z)\n";

static sk_kb *kb_once(void) {
    static sk_kb *kb;
    if (kb) return kb;
    kb = sk_kb_new();
    if (!kb) abort();
    for (int s = 0; s < SK_KB_NUM_SPLITS; s++)
        if (sk_kb_parse_facts(kb, (sk_kb_split)s, g_facts[s], "fuzz") != SK_OK) abort();
    if (sk_kb_parse_rules(kb, g_rules, "fuzz") != SK_OK || sk_kb_finalize(kb) != SK_OK) abort();
    return kb;
}

/* A model sk_kge_load accepted carried a checksum (one without loaded, while a
 * policy without one is refused), and its dim and gamma metadata read to the
 * end as the model's numbers ("16abc" loaded as 16 and "abc" as 0 before). */
static void check_accepted(const char *path, const sk_kge *model, bool sealed) {
    if (!sealed) abort();
    sk_st_file *file = NULL;
    if (sk_st_open(&file, path) != SK_OK) abort();
    const char *dim = sk_st_meta_get(file, "dim"), *gamma = sk_st_meta_get(file, "gamma");
    char *end = NULL;
    if (!dim || strtod(dim, &end) != (double)model->dim || *end) abort();
    if (!gamma || (float)strtod(gamma, &end) != model->gamma || *end) abort();
    sk_st_close(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > (1 << 20)) return 0;
    char *bytes = malloc(size + 1);
    if (!bytes) abort();
    memcpy(bytes, data, size);
    bool sealed = sk_st_reseal(bytes, size);
    const char *path = fuzz_as_file((const uint8_t *)bytes, size);
    free(bytes);
    sk_kge model;
    char dataset[256];
    if (sk_kge_load(&model, path, dataset, sizeof dataset) != SK_OK) return 0;
    check_accepted(path, &model, sealed);
    sk_kb *kb = kb_once();
    bool fits = model.num_entities == kb->num_consts &&
                model.num_relations == kb->num_preds - SK_KB_FIRST_PRED && model.dim <= 64;
    if (fits) {
        sk_kge_train_config config = {.batch_size = 2, .negatives = 2, .threads = 1,
                                      .learning_rate = 0.01, .adam_eps = 1e-8, .seed = 1};
        sk_kge_trainer *tr = NULL;
        if (sk_kge_trainer_create(&tr, &model, kb, &config) != SK_OK) abort();
        int epochs = 0;
        if (sk_kge_trainer_restore(tr, path, &epochs) == SK_OK) {
            (void)sk_kge_train_epoch(tr);
            sk_kge_rank_options options = {.split = SK_KB_TEST, .sides = SK_PROVER_CORRUPT_BOTH,
                                           .seed = 1, .threads = 1};
            sk_rank_result result;
            if (sk_kge_rank(&model, kb, &options, &result) != SK_OK) abort();
        }
        sk_kge_trainer_destroy(tr);
    }
    sk_kge_free(&model);
    return 0;
}
