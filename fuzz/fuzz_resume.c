/* The resume path (checkpoints are input): a fuzzed checkpoint, its
 * checksums resealed so that the mutation reaches the validation behind them,
 * is restored into a fresh trainer of CartPole-v1 or Prover-v0 (the first
 * byte picks which), and a resumed trainer then runs one update, stepping
 * its envs from the restored state. Whatever resume accepts must be safe to
 * step. */
#include "fuzz_util.h"

#include "io/safetensors.h"
#include "skinner.h"

#include <string.h>

/* The runs the seeds were written by (fuzz/README.md says how). */
static const char *const g_configs[2] = {
    "[env]\nid = CartPole-v1\nnum_envs = 4\n[ppo]\nhorizon = 8\nnum_minibatches = 2\n"
    "[policy]\nhidden = 8\n[train]\nthreads = 1\ntotal_steps = 64\ncheckpoint_every = 0\n",
    "[env]\nid = Prover-v0\nnum_envs = 4\n[ppo]\nhorizon = 8\nnum_minibatches = 2\n"
    "[policy]\ntype = candidates\nembed = 8\n[train]\nthreads = 1\ntotal_steps = 64\n"
    "checkpoint_every = 0\n",
};

static bool one_update(const sk_update_stats *stats, void *user) {
    (void)stats;
    (void)user;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > (1 << 20)) return 0;
    int which = data[0] & 1;
    char *bytes = malloc(size - 1 + 1);
    if (!bytes) abort();
    memcpy(bytes, data + 1, size - 1);
    sk_st_reseal(bytes, size - 1);
    const char *path = fuzz_as_file((const uint8_t *)bytes, size - 1);
    free(bytes);
    sk_config *cfg = sk_config_new();
    if (!cfg) abort();
    char ini[] = "/tmp/skinner-fuzz-resume-XXXXXX";
    int fd = mkstemp(ini);
    if (fd < 0) abort();
    size_t len = strlen(g_configs[which]);
    if (write(fd, g_configs[which], len) != (ssize_t)len) abort();
    close(fd);
    sk_status status = sk_config_load_file(cfg, ini);
    unlink(ini);
    if (status != SK_OK) abort();
    /* a budget past any update the checkpoint may claim; the callback stops after one */
    sk_config_set(cfg, "train.total_steps", "4611686018427387903");
    sk_trainer *trainer = NULL;
    if (sk_trainer_create(&trainer, cfg) != SK_OK) abort();
    if (sk_trainer_resume(trainer, path) == SK_OK) {
        sk_trainer_set_callback(trainer, one_update, NULL);
        sk_trainer_run(trainer);
    }
    sk_trainer_destroy(trainer);
    sk_config_free(cfg);
    return 0;
}
