/*
 * Public calls that a module implements (skinner/module.h): libskinner holds
 * no code of theirs, only the way to them. Each finds its function by the
 * name its header gives (sk_module_symbol, among the loaded modules) and
 * calls it; without the module it fails saying which module to install.
 */
#include "registry.h"

#include "skinner/kge.h"

#define KGE_MODULE "the Prover module (skinner-prover.so)"

/* The module's function called symbol, or NULL with why. */
static void *module_function(const char *symbol, const char *module) {
    void *function = sk_module_symbol(symbol);
    if (!function)
        sk_fail(SK_ERR_INVALID, "%s is a call of %s, which is not loaded: %s", symbol,
                module, sk_last_error());
    return function;
}

sk_status sk_kge_train_run(const sk_config *cfg, const char *config_path,
                           void (*start)(const sk_kge_train_summary *sizes, void *user),
                           sk_kge_epoch_fn on_epoch, void *user, sk_kge_train_summary *out) {
    sk_kge_train_run_fn train = (sk_kge_train_run_fn)module_function(SK_KGE_TRAIN_SYMBOL,
                                                                     KGE_MODULE);
    return train ? train(cfg, config_path, start, on_epoch, user, out) : SK_ERR_INVALID;
}

sk_status sk_kge_eval_run(const sk_config *cfg, sk_kge_eval_summary *out) {
    sk_kge_eval_run_fn eval = (sk_kge_eval_run_fn)module_function(SK_KGE_EVAL_SYMBOL, KGE_MODULE);
    return eval ? eval(cfg, out) : SK_ERR_INVALID;
}
