/* The resume path (checkpoints are input): a fuzzed checkpoint, its
 * checksums resealed so that the mutation reaches the validation behind them,
 * is restored into a fresh trainer of CartPole-v1, Prover-v0 or
 * MinAtar/Breakout-v1 with a CNN policy (the first byte picks which: bit 2
 * MinAtar, else bit 0 Prover), and a resumed trainer then runs one update,
 * stepping its envs from the restored state. Whatever resume accepts must be
 * safe to step. MinAtar's checkpoint carries uint8 image observations (its
 * `observation` metadata says "uint8 10x10x4"), the game states (env.game)
 * that each game validates, and convolution weights. Bit 3 (with neither) is CartPole-v1
 * with ppo.ema_decay: the checkpoint's policy tensors are the weights' average, restored into
 * the average, and state.raw_params the weights.
 *
 * A directed mutation (bit 1 of the first byte) sets one element of one of
 * the env's ranged integer state arrays to a value inside that array's
 * declared range: the input then reaches the env's check_state with values
 * each in range but maybe inconsistent with another field. Its 4 directive
 * bytes (which array, element and value) are the 4 after the first, XORed
 * with a hash of the checkpoint, so that a mutation anywhere in the file
 * draws a new directive (libFuzzer seldom mutates 4 given bytes of 93 KB: a
 * 10-minute run with plain directive bytes never changed them to the one
 * below), while a seed can still name its directive exactly.
 *
 * Issue 30 item 10 was such a value (a Prover env.num_visited of 20 at depth
 * 0 passed and then asserted in the step), and byte mutations could not
 * reach it: a count's 4 bytes in a 93 KB checkpoint, hit with one of the 2 of
 * 2^32 values that overflow within the update (19 or 20, and in env 1 only:
 * the synthetic knowledge base's other seed episodes end before), while the
 * range check's comparison is of doubles, which libFuzzer's value hints do not
 * trace. A directed Prover input draws it with odds near 1/650 (the array
 * 1/7, the env 1/4, the value 11/256).
 */
#include "fuzz_util.h"

#include "io/safetensors.h"
#include "skinner.h"
#include "train/trainer_internal.h"

#include <math.h>
#include <string.h>

/* The runs the seeds were written by (fuzz/README.md says how). */
static const char *const g_configs[4] = {
    "[env]\nid = CartPole-v1\nnum_envs = 4\n[ppo]\nhorizon = 8\nnum_minibatches = 2\n"
    "[policy]\nhidden = 8\n[train]\nthreads = 1\ntotal_steps = 64\ncheckpoint_every = 0\n",
    "[env]\nid = Prover-v0\nnum_envs = 4\n[ppo]\nhorizon = 8\nnum_minibatches = 2\n"
    "[policy]\ntype = candidates\nembed = 8\n[train]\nthreads = 1\ntotal_steps = 64\n"
    "checkpoint_every = 0\n",
    "[env]\nid = MinAtar/Breakout-v1\nnum_envs = 4\n[ppo]\nhorizon = 8\nnum_minibatches = 2\n"
    "[policy]\nencoder = cnn\ncnn_channels = 4\ncnn_kernels = 3\ncnn_strides = 1\n"
    "cnn_padding = 0\ncnn_dense = 8\nhidden = 8\n[train]\nthreads = 1\ntotal_steps = 64\n"
    "checkpoint_every = 0\n",
    "[env]\nid = CartPole-v1\nnum_envs = 4\n[ppo]\nhorizon = 8\nnum_minibatches = 2\n"
    "ema_decay = 0.9\n[policy]\nhidden = 8\n[train]\nthreads = 1\ntotal_steps = 64\n"
    "checkpoint_every = 0\n",
};
enum { ENV_PROVER = 1, DIRECTED = 2, ENV_MINATAR = 4, EMA = 8, DIRECTIVE_BYTES = 4 };

/* FNV-1a, 32 bits: the directive's mask from the checkpoint's bytes. */
static uint32_t fnv1a(const uint8_t *data, size_t size) {
    uint32_t hash = 2166136261u;
    for (size_t k = 0; k < size; k++) hash = (hash ^ data[k]) * 16777619u;
    return hash;
}

static bool one_update(const sk_update_stats *stats, void *user) {
    (void)stats;
    (void)user;
    return false;
}

static sk_config *config_of(int which) {
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
    return cfg;
}

/* Sets one element of one ranged env state array in the checkpoint bytes to a
 * value in its range, as directive[0..3] say (array, element low and high
 * byte, value). False if the checkpoint does not parse or lacks the array. */
static bool direct(sk_trainer *tr, char *bytes, size_t size, const uint8_t *directive) {
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    int ranged[SK_MAX_ENV_ARRAYS], num_ranged = 0;
    int num_arrays = sk_vec_state_arrays(tr->vec, arrays);
    for (int a = 0; a < num_arrays; a++)
        if (arrays[a].has_range && arrays[a].type != SK_ARRAY_F32 &&
            arrays[a].type != SK_ARRAY_F64 && isfinite(arrays[a].lo) && isfinite(arrays[a].hi))
            ranged[num_ranged++] = a;
    if (num_ranged == 0) return false;
    const sk_env_array *array = &arrays[ranged[directive[0] % num_ranged]];
    char name[80];
    snprintf(name, sizeof name, "env.%s", array->name);
    sk_st_file *file = NULL;
    if (sk_st_open(&file, fuzz_as_file((const uint8_t *)bytes, size)) != SK_OK) return false;
    const sk_st_tensor *t = sk_st_find(file, name);
    int64_t elements = 1;
    for (int d = 0; t && d < t->ndim; d++) elements *= t->shape[d];
    bool found = t && elements > 0 && (int)t->dtype == (int)array->type;
    if (found) {
        int64_t k = (directive[1] | directive[2] << 8) % elements;
        /* a value from the low end of the range, the high end, or its middle */
        double lo = array->lo, hi = array->hi, span = hi - lo + 1.0;
        double offset = (double)(directive[3] % 64);
        double value = directive[3] < 64    ? lo + (offset < span ? offset : 0.0)
                       : directive[3] < 128 ? hi - (offset < span ? offset : 0.0)
                                            : lo + (double)(directive[3] - 128) / 127.0 * (hi - lo);
        value = (double)(int64_t)value;
        size_t width = sk_st_dtype_size(t->dtype);
        uint64_t header_len = 0;
        for (int b = 0; b < 8; b++) header_len |= (uint64_t)(uint8_t)bytes[b] << (8 * b);
        char *at = bytes + 8 + header_len + t->offset + width * (size_t)k;
        union { int64_t i64; int32_t i32; uint8_t u8; uint64_t u64; } v;
        switch (t->dtype) {
        case SK_ST_I64: v.i64 = (int64_t)value; break;
        case SK_ST_I32: v.i32 = (int32_t)value; break;
        case SK_ST_U8: v.u8 = (uint8_t)value; break;
        case SK_ST_U64: v.u64 = (uint64_t)value; break;
        default: found = false;
        }
        if (found) memcpy(at, &v, width);
    }
    sk_st_close(file);
    if (found) sk_st_reseal(bytes, size);
    return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > (1 << 20)) return 0;
    int which = data[0] & ENV_MINATAR ? 2 : data[0] & ENV_PROVER ? 1 : data[0] & EMA ? 3 : 0;
    uint8_t directive[DIRECTIVE_BYTES];
    bool directed = data[0] & DIRECTED;
    size_t skip = 1;
    if (directed) {
        if (size < 1 + DIRECTIVE_BYTES) return 0;
        skip += DIRECTIVE_BYTES;
        uint32_t mask = fnv1a(data + skip, size - skip);
        for (int k = 0; k < DIRECTIVE_BYTES; k++)
            directive[k] = (uint8_t)(data[1 + k] ^ (mask >> (8 * k)));
    }
    size_t checkpoint_size = size - skip;
    char *bytes = malloc(checkpoint_size + 1);
    if (!bytes) abort();
    memcpy(bytes, data + skip, checkpoint_size);
    sk_st_reseal(bytes, checkpoint_size);
    sk_config *cfg = config_of(which);
    sk_trainer *trainer = NULL;
    if (sk_trainer_create(&trainer, cfg) != SK_OK) abort();
    if (directed && !direct(trainer, bytes, checkpoint_size, directive)) {
        sk_trainer_destroy(trainer);
        sk_config_free(cfg);
        free(bytes);
        return 0;
    }
    const char *path = fuzz_as_file((const uint8_t *)bytes, checkpoint_size);
    if (sk_trainer_resume(trainer, path) == SK_OK) {
        sk_trainer_set_callback(trainer, one_update, NULL);
        sk_trainer_run(trainer);
    }
    sk_trainer_destroy(trainer);
    sk_config_free(cfg);
    free(bytes);
    return 0;
}
