/* The Prover module's entry (skinner-prover.so, cmake/SkinnerModule.cmake):
 * Prover-v0's table, and the KGE calls of skinner/kge.h that libskinner
 * forwards here by name. Only the shared module holds this file; the tests
 * link the other objects without it. */
#include "kge_train.h"
#include "pipeline.h"
#include "prover.h"

SK_API sk_status sk_module_kge_train_run(const sk_config *cfg, const char *config_path,
                                         void (*start)(const sk_kge_train_summary *sizes,
                                                       void *user),
                                         sk_kge_epoch_fn on_epoch, void *user,
                                         sk_kge_train_summary *out);
SK_API sk_status sk_module_kge_eval_run(const sk_config *cfg, sk_kge_eval_summary *out);

sk_status sk_module_kge_train_run(const sk_config *cfg, const char *config_path,
                                  void (*start)(const sk_kge_train_summary *sizes, void *user),
                                  sk_kge_epoch_fn on_epoch, void *user,
                                  sk_kge_train_summary *out) {
    return sk_kge_module_train(cfg, config_path, start, on_epoch, user, out);
}

sk_status sk_module_kge_eval_run(const sk_config *cfg, sk_kge_eval_summary *out) {
    return sk_kge_module_eval(cfg, out);
}

/* the types skinner/kge.h promises libskinner */
static const sk_kge_train_run_fn train_entry __attribute__((unused)) = sk_module_kge_train_run;
static const sk_kge_eval_run_fn eval_entry __attribute__((unused)) = sk_module_kge_eval_run;

/* `skinner prover run ...` (pipeline.c; skinner/module.h: module commands) */
SK_API int sk_module_command_prover(int argc, char **argv);
int sk_module_command_prover(int argc, char **argv) { return sk_prover_command(argc, argv); }
static const sk_module_command_fn command_entry __attribute__((unused)) = sk_module_command_prover;

SK_PLUGIN_EXPORT(&sk_env_prover)
