/* Resuming: a run stopped and resumed from its checkpoint continues exactly
 * as the run that never stopped; checkpoints of another env or thread count
 * are refused; a process killed while writing a checkpoint leaves the
 * previous one loadable. */
#include "test_recorder.h"

#include "io/safetensors.h"

#include <math.h>
#include <signal.h>
#include <sys/wait.h>


static sk_config *config(const char *env, const char *steps, const char *threads, bool anneal) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", env);
    sk_config_set(cfg, "env.num_envs", "8");
    sk_config_set(cfg, "ppo.horizon", "64");
    sk_config_set(cfg, "ppo.learning_rate", "0.0025");
    sk_config_set(cfg, "ppo.norm_obs", "true");
    sk_config_set(cfg, "ppo.norm_reward", "true");
    sk_config_set(cfg, "ppo.anneal_lr", anneal ? "true" : "false");
    sk_config_set(cfg, "train.total_steps", steps);
    sk_config_set(cfg, "train.threads", threads);
    sk_config_set(cfg, "train.checkpoint_every", "0");
    return cfg;
}

/* Trains (resuming from `resume` if given) and saves to `save`. */
static void train(sk_config *cfg, recorder *rec, const char *resume, const char *save) {
    train_recorded(cfg, rec, resume, save, NULL);
}

static void assert_same_rows(const recorder *a, const recorder *b) {
    assert_int_equal(a->count, b->count);
    for (int i = 0; i < a->count; i++) {
        if (memcmp(&a->rows[i], &b->rows[i], sizeof a->rows[i]) != 0)
            fail_msg("update row %d differs after resuming", i + 1);
    }
}

static char g_dir[64];

static void test_resume_to_a_longer_budget(void **state) {
    (void)state;
    /* N + M straight vs N then resumed to N + M (no annealing, which follows
     * the budget of each invocation) */
    static recorder straight, first, second, joined;
    char path[128];
    snprintf(path, sizeof path, "%s/a.safetensors", g_dir);
    for (int t = 1; t <= 2; t++) {
        const char *threads = t == 1 ? "1" : "2";
        memset(&straight, 0, sizeof straight);
        memset(&first, 0, sizeof first);
        memset(&second, 0, sizeof second);
        sk_config *a = config("CartPole-v1", "16384", threads, false);
        sk_config *b = config("CartPole-v1", "8192", threads, false);
        sk_config *c = config("CartPole-v1", "16384", threads, false);
        train(a, &straight, NULL, NULL);
        train(b, &first, NULL, path);
        train(c, &second, path, NULL);
        joined = first;
        for (int i = 0; i < second.count; i++) joined.rows[joined.count++] = second.rows[i];
        assert_int_equal(straight.count, 32);
        assert_same_rows(&straight, &joined);
        sk_config_free(a);
        sk_config_free(b);
        sk_config_free(c);
    }
}

static void test_interrupt_and_resume(void **state) {
    (void)state;
    /* an interrupted run (annealing on) resumed to its own budget */
    static recorder straight, first, second, joined;
    char path[128];
    snprintf(path, sizeof path, "%s/b.safetensors", g_dir);
    memset(&first, 0, sizeof first);
    sk_config *a = config("Acrobot-v1", "16384", "2", true);
    sk_config *b = config("Acrobot-v1", "16384", "2", true);
    train(a, &straight, NULL, NULL);
    first.stop_after = 11;
    train(b, &first, NULL, path);
    assert_int_equal(first.count, 11);
    train(b, &second, path, NULL);
    joined = first;
    for (int i = 0; i < second.count; i++) joined.rows[joined.count++] = second.rows[i];
    assert_same_rows(&straight, &joined);
    sk_config_free(a);
    sk_config_free(b);
}

/* metrics.csv without its wall-clock columns (2: wall_seconds, 3: sps). */
static void read_rows(const char *run_dir, char *out, size_t size) {
    char path[256], line[1024];
    snprintf(path, sizeof path, "%s/metrics.csv", run_dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    out[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        char *second = strchr(line, ',');
        char *third = second ? strchr(second + 1, ',') : NULL;
        char *fourth = third ? strchr(third + 1, ',') : NULL;
        char *fifth = fourth ? strchr(fourth + 1, ',') : NULL;
        assert_non_null(fifth);
        strncat(out, line, (size_t)(third - line));
        strncat(out, fifth, size - strlen(out) - 1);
    }
    fclose(f);
}

/* train.log_every thins the run folder's rows to every k-th update, the last
 * update kept, and a run stopped and resumed writes the same rows. */
static void test_log_every_thins_and_resumes(void **state) {
    (void)state;
    char straight_dir[128], split_dir[128], path[200];
    snprintf(straight_dir, sizeof straight_dir, "%s/thin-straight", g_dir);
    snprintf(split_dir, sizeof split_dir, "%s/thin-split", g_dir);
    sk_config *cfg = config("CartPole-v1", "4096", "2", true); /* 8 updates of 512 */
    sk_config_set(cfg, "train.log_every", "3");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_set_run_dir(tr, straight_dir), SK_OK);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    sk_trainer_destroy(tr);
    static char straight[8192], split[8192];
    read_rows(straight_dir, straight, sizeof straight);
    int rows = 0;
    long long updates[8];
    for (const char *line = strchr(straight, '\n'); line && line[1]; line = strchr(line + 1, '\n'))
        updates[rows++] = atoll(line + 1);
    assert_int_equal(rows, 3);
    assert_true(updates[0] == 3 && updates[1] == 6 && updates[2] == 8);

    recorder first = {.stop_after = 4};
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_set_run_dir(tr, split_dir), SK_OK);
    sk_trainer_set_callback(tr, record, &first);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    sk_trainer_destroy(tr);
    snprintf(path, sizeof path, "%s/policy.safetensors", split_dir);
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_resume(tr, path), SK_OK);
    assert_int_equal(sk_trainer_set_run_dir(tr, split_dir), SK_OK);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    sk_trainer_destroy(tr);
    read_rows(split_dir, split, sizeof split);
    assert_string_equal(split, straight);
    sk_config_free(cfg);
}

static void test_mismatches_refused(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/c.safetensors", g_dir);
    static recorder rec;
    sk_config *cart = config("CartPole-v1", "1024", "2", true);
    train(cart, &rec, NULL, path);
    sk_trainer *tr = NULL;
    /* another env */
    sk_config *acro = config("Acrobot-v1", "1024", "2", true);
    assert_int_equal(sk_trainer_create(&tr, acro), SK_OK);
    assert_int_equal(sk_trainer_resume(tr, path), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "CartPole-v1"));
    sk_trainer_destroy(tr);
    /* another thread count */
    sk_config *one = config("CartPole-v1", "1024", "1", true);
    assert_int_equal(sk_trainer_create(&tr, one), SK_OK);
    assert_int_equal(sk_trainer_resume(tr, path), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "--threads 2"));
    sk_trainer_destroy(tr);
    /* another network shape */
    sk_config *wide = config("CartPole-v1", "1024", "2", true);
    sk_config_set(wide, "policy.hidden", "32");
    assert_int_equal(sk_trainer_create(&tr, wide), SK_OK);
    assert_int_equal(sk_trainer_resume(tr, path), SK_ERR_CORRUPT);
    assert_non_null(strstr(sk_last_error(), "actor.0.weight"));
    sk_trainer_destroy(tr);
    /* a truncated file */
    char cut[160], cmd[400];
    snprintf(cut, sizeof cut, "%s/cut.safetensors", g_dir);
    snprintf(cmd, sizeof cmd, "head -c 5000 %s > %s", path, cut);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(sk_trainer_create(&tr, cart), SK_OK);
    assert_int_equal(sk_trainer_resume(tr, cut), SK_ERR_CORRUPT);
    sk_trainer_destroy(tr);
    sk_config_free(cart);
    sk_config_free(acro);
    sk_config_free(one);
    sk_config_free(wide);
}

static void test_sigkill_during_write_keeps_previous(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/kill.safetensors", g_dir);
    /* a big network so that each write takes a while */
    sk_config *cfg = config("CartPole-v1", "1024", "1", true);
    sk_config_set(cfg, "policy.hidden", "1024");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_save(tr, path), SK_OK);
    for (int round = 0; round < 6; round++) {
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) { /* keep rewriting the checkpoint until killed */
            for (;;) sk_trainer_save(tr, path);
        }
        usleep((useconds_t)(20000 + 17000 * round));
        kill(child, SIGKILL);
        int status;
        waitpid(child, &status, 0);
        assert_true(WIFSIGNALED(status));
        sk_eval_result eval;
        if (sk_evaluate(path, "CartPole-v1", 1, true, 1, NULL, &eval) != SK_OK)
            fail_msg("round %d: checkpoint unreadable after SIGKILL: %s", round, sk_last_error());
    }
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}


#define FIXTURES SKINNER_SOURCE_DIR "/tests/fixtures/checkpoint_v0.1"

/* A checkpoint written before the trainer was split into its parts (commit
 * f4c4021) resumes, and continues with the rows that commit wrote when it
 * resumed the same file. Counts and returns must agree exactly (the envs'
 * arithmetic is exact); the losses to 1e-4 relative, since the fixture came
 * from a Release build on one CPU and BLAS kernels and FMA contraction differ
 * in the last bits between builds and machines. */
static void test_old_checkpoint_resumes(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_load_file(cfg, FIXTURES "/cartpole_config.ini"), SK_OK);
    sk_config_set(cfg, "train.total_steps", "512");
    recorder rec = {0};
    train(cfg, &rec, FIXTURES "/cartpole_v0.1.safetensors", NULL);
    FILE *f = fopen(FIXTURES "/cartpole_resumed_metrics.csv", "r");
    assert_non_null(f);
    char line[512];
    assert_non_null(fgets(line, sizeof line, f)); /* the header */
    int compared = 0;
    while (fgets(line, sizeof line, f)) {
        /* update, steps, mean_return, mean_length, episodes, then 7 losses and rates */
        double want[12];
        int fields = 0;
        for (char *cursor = line, *end; fields < 12; cursor = end + 1) {
            want[fields++] = strtod(cursor, &end);
            if (*end != ',') break;
        }
        assert_int_equal(fields, 12);
        if (want[0] <= 2) continue; /* before the checkpoint */
        assert_true(compared < rec.count);
        const sk_update_stats *st = &rec.rows[compared++];
        double exact[5] = {(double)st->update, (double)st->steps, st->mean_return, st->mean_length,
                           (double)st->episodes};
        double close[7] = {st->policy_loss,   st->value_loss,         st->entropy,
                           st->approx_kl,     st->clip_fraction,      st->explained_variance,
                           st->learning_rate};
        for (int k = 0; k < 5; k++)
            if (fabs(exact[k] - want[k]) > 1e-4 * fabs(want[k])) /* the file's 6 digits */
                fail_msg("update %g: field %d is %.9g, want %.9g", want[0], k, exact[k], want[k]);
        for (int k = 0; k < 7; k++)
            if (test_rel_err(close[k], want[5 + k], 1e-6) > 1e-4)
                fail_msg("update %g: field %d is %.9g, want %.9g", want[0], 5 + k, close[k],
                         want[5 + k]);
    }
    fclose(f);
    assert_int_equal(compared, 2);
    assert_int_equal(rec.count, 2);
    sk_config_free(cfg);
}

/* ---- tampered checkpoints: each is refused before any of it is used ---- */

static char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *bytes = malloc(*size);
    assert_non_null(bytes);
    assert_int_equal(fread(bytes, 1, *size, f), *size);
    fclose(f);
    return bytes;
}

static void write_file(const char *path, const char *bytes, size_t size) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    fclose(f);
}

/* Sets elements index..index+count-1 of tensor `name` (whatever its dtype)
 * to value in a copy of src written to dst, resealed. */
static void tamper_range(const char *src, const char *dst, const char *name, int64_t index,
                         int64_t count, double value) {
    sk_st_file *file = NULL;
    assert_int_equal(sk_st_open(&file, src), SK_OK);
    const sk_st_tensor *t = sk_st_find(file, name);
    assert_non_null(t);
    size_t size;
    char *bytes = read_file(src, &size);
    uint64_t header_len = 0;
    for (int b = 0; b < 8; b++) header_len |= (uint64_t)(uint8_t)bytes[b] << (8 * b);
    size_t width = sk_st_dtype_size(t->dtype);
    for (int64_t k = index; k < index + count; k++) {
        char *at = bytes + 8 + header_len + t->offset + width * (size_t)k;
        union { int64_t i64; int32_t i32; float f32; double f64; uint8_t u8; uint64_t u64; } v;
        switch (t->dtype) {
        case SK_ST_I64: v.i64 = (int64_t)value; break;
        case SK_ST_I32: v.i32 = (int32_t)value; break;
        case SK_ST_F32: v.f32 = (float)value; break;
        case SK_ST_F64: v.f64 = value; break;
        case SK_ST_U8: v.u8 = (uint8_t)value; break;
        case SK_ST_U64: v.u64 = (uint64_t)value; break;
        }
        memcpy(at, &v, width);
    }
    sk_st_close(file);
    assert_true(sk_st_reseal(bytes, size)); /* as a deliberate tamperer would */
    write_file(dst, bytes, size);
    free(bytes);
}

static void tamper(const char *src, const char *dst, const char *name, int64_t index, double value) {
    tamper_range(src, dst, name, index, 1, value);
}

/* Resume and eval of path fail with SK_ERR_CORRUPT (resume) and a message
 * holding every needle. */
static void expect_refused(sk_config *cfg, const char *path, const char *needle1,
                           const char *needle2) {
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_status status = sk_trainer_resume(tr, path);
    if (status == SK_OK) fail_msg("a tampered checkpoint resumed: %s", path);
    const char *message = sk_trainer_last_error(tr);
    print_message("refused: %s\n", message);
    if (!strstr(message, needle1) || (needle2 && !strstr(message, needle2)))
        fail_msg("message lacks '%s'/'%s': %s", needle1, needle2 ? needle2 : "", message);
    sk_trainer_destroy(tr);
}

static void test_tampered_checkpoints_refused(void **state) {
    (void)state;
    char good[128], bad[128];
    snprintf(good, sizeof good, "%s/good.safetensors", g_dir);
    snprintf(bad, sizeof bad, "%s/bad.safetensors", g_dir);
    sk_config *cfg = config("CartPole-v1", "1024", "2", true);
    recorder rec = {0};
    train(cfg, &rec, NULL, good);
    /* counters: the return window position, its count, the anomaly count */
    tamper(good, bad, "state.counters", 5, 100000);
    expect_refused(cfg, bad, "state.counters[5] (window_pos)", "[0, 99]");
    tamper(good, bad, "state.counters", 4, -7);
    expect_refused(cfg, bad, "window_count", "[0, 100]");
    tamper(good, bad, "state.counters", 6, -3);
    expect_refused(cfg, bad, "anomalies", "outside its allowed range");
    tamper(good, bad, "state.counters", 1, 12345);
    expect_refused(cfg, bad, "(steps)", NULL);
    /* the governor's ring of anomaly updates */
    tamper(good, bad, "state.governor_recent", 0, -1);
    expect_refused(cfg, bad, "state.governor_recent[0]", NULL);
    /* env state: CartPole's step counter past its limit */
    tamper(good, bad, "env.elapsed", 3, 501);
    expect_refused(cfg, bad, "env.elapsed[3]", "[0, 500]");
    /* a non-finite weight and a negative second moment */
    tamper(good, bad, "actor.0.weight", 0, NAN);
    expect_refused(cfg, bad, "actor.0.weight[0]", NULL);
    tamper(good, bad, "state.adam_v", 2, -1.0);
    expect_refused(cfg, bad, "state.adam_v[2]", NULL);

    /* a flipped header byte, checksums left as they were */
    size_t size;
    char *bytes = read_file(good, &size);
    char *steps = strstr(bytes + 8, "\"steps\":\"");
    assert_non_null(steps);
    steps[9] = steps[9] == '9' ? '8' : '9';
    write_file(bad, bytes, size);
    expect_refused(cfg, bad, "checksum mismatch over its header", NULL);
    sk_eval_result eval;
    assert_int_equal(sk_evaluate(bad, "CartPole-v1", 1, true, 1, NULL, &eval), SK_ERR_CORRUPT);
    assert_non_null(strstr(sk_last_error(), "checksum"));
    /* both checksum keys renamed away: refused, not silently unchecked */
    char *fresh = read_file(good, &size);
    memcpy(bytes, fresh, size);
    free(fresh);
    char *key = strstr(bytes + 8, "skinner.crc32");
    key[0] = 'x';
    key = strstr(bytes + 8, "skinner.checksum");
    key[0] = 'x';
    write_file(bad, bytes, size);
    expect_refused(cfg, bad, "has no checksum", NULL);
    free(bytes);
    sk_config_free(cfg);
}

/* Prover-v0's state: a successor length past the atoms it holds (a 12 MB
 * memcpy before), a goal atom whose predicate is not in the knowledge base. */
static void test_tampered_prover_state_refused(void **state) {
    (void)state;
    char good[128], bad[128];
    snprintf(good, sizeof good, "%s/prover.safetensors", g_dir);
    snprintf(bad, sizeof bad, "%s/prover-bad.safetensors", g_dir);
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "Prover-v0"); /* the built-in synthetic knowledge base */
    sk_config_set(cfg, "env.num_envs", "8");
    sk_config_set(cfg, "ppo.horizon", "16");
    sk_config_set(cfg, "policy.type", "candidates");
    sk_config_set(cfg, "train.total_steps", "128");
    sk_config_set(cfg, "train.threads", "1");
    recorder rec = {0};
    train(cfg, &rec, NULL, good);
    tamper(good, bad, "env.successor_len", 0, 3000000);
    expect_refused(cfg, bad, "env.successor_len[0]", "outside its allowed range");
    tamper(good, bad, "env.num_successors", 2, 0);
    expect_refused(cfg, bad, "env.num_successors[2]", NULL);
    /* a successor of no atoms (found by a 10-minute fuzz_resume run: the prover's
     * resolution asserted on an empty goal list) */
    tamper(good, bad, "env.successor_len", 0, 0);
    expect_refused(cfg, bad, "successor 0 has 0 atoms", NULL);
    tamper(good, bad, "env.goals", 0, 1 << 20);
    expect_refused(cfg, bad, "env.goals of env 0", "outside the knowledge base");
    /* env 1's current mask allows nothing (found by fuzz_resume: sampling aborted) */
    tamper_range(good, bad, "state.masks", 20, 20, 0);
    expect_refused(cfg, bad, "state.masks of env 1 allows no choice of head 0", NULL);
    /* a current observation naming a predicate past the policy's table (fuzz_resume) */
    tamper(good, bad, "state.obs", 3 * 600, 1e6);
    expect_refused(cfg, bad, "state.obs of env 2", "cannot read");
    /* env 3 at depth 0 claiming 20 visited states: each inside its declared
     * range (0..20, 0..20), but the episode would visit a 22nd state before its
     * truncation at depth 20 (issue 30 item 10: the step asserted, exit 134) */
    tamper(good, bad, "env.depth", 3, 0);
    char twice[160];
    snprintf(twice, sizeof twice, "%s/prover-bad2.safetensors", g_dir);
    tamper(bad, twice, "env.num_visited", 3, 20);
    expect_refused(cfg, twice, "env.num_visited of env 3 = 20", "expected 1");
    sk_config_free(cfg);
}

/* A recurrent policy: its per-env states (state.core_h, state.core_c) are
 * part of the checkpoint, so an interrupted run resumes exactly, for an LSTM
 * and a GRU core; states a core cannot hold are refused. */
static void test_recurrent_resume(void **state) {
    (void)state;
    static recorder straight, first, second, joined;
    char path[128], bad[128];
    snprintf(path, sizeof path, "%s/rnn.safetensors", g_dir);
    snprintf(bad, sizeof bad, "%s/rnn-bad.safetensors", g_dir);
    for (int cell = 0; cell < 2; cell++) {
        memset(&straight, 0, sizeof straight);
        memset(&first, 0, sizeof first);
        memset(&second, 0, sizeof second);
        sk_config *cfg = config("CartPole-P-v1", "8192", "2", true);
        sk_config_set(cfg, "policy.core", cell == 0 ? "lstm" : "gru");
        sk_config_set(cfg, "policy.core_size", "16");
        sk_config_set(cfg, "policy.hidden", "16");
        sk_config_set(cfg, "policy.layers", "0");
        sk_config_set(cfg, "ppo.bptt_horizon", "8");
        train(cfg, &straight, NULL, NULL);
        first.stop_after = 7;
        train(cfg, &first, NULL, path);
        train(cfg, &second, path, NULL);
        joined = first;
        for (int i = 0; i < second.count; i++) joined.rows[joined.count++] = second.rows[i];
        assert_int_equal(straight.count, 16);
        assert_same_rows(&straight, &joined);
        /* the resumed run depends on the saved states: zeroing one changes it */
        tamper(path, bad, "state.core_h", 5, 0.0);
        memset(&second, 0, sizeof second);
        train(cfg, &second, bad, NULL);
        assert_true(memcmp(&second.rows[0], &straight.rows[7], sizeof second.rows[0]) != 0);
        tamper(path, bad, "state.core_h", 3, 1.5);
        expect_refused(cfg, bad, "state.core_h[3]", "outside its allowed range");
        if (cell == 0) {
            tamper(path, bad, "state.core_c", 0, NAN);
            expect_refused(cfg, bad, "state.core_c[0]", NULL);
            tamper(path, bad, "state.core_c", 1, 1e30); /* finite, but overflows within steps */
            expect_refused(cfg, bad, "state.core_c[1]", "outside its allowed range");
        } else { /* a GRU has no cell: a checkpoint of it has no state.core_c */
            sk_st_file *file = NULL;
            assert_int_equal(sk_st_open(&file, path), SK_OK);
            assert_null(sk_st_find(file, "state.core_c"));
            assert_non_null(sk_st_find(file, "core.weight_hh_l0"));
            sk_st_close(file);
        }
        sk_config_free(cfg);
    }
}

/* ---- env state arrays need names of their own (issue 30 item 14) ---- */

/* Named-v0: an env of nothing whose two state arrays take the names in g_array_names. */
static const char *g_array_names[2] = {"flip", "count"};
static int g_named_envs;

static sk_status named_create(void **state, int num_envs, const sk_config *cfg) {
    (void)cfg;
    g_named_envs = num_envs;
    *state = sk_alloc(2 * (size_t)num_envs);
    return *state ? SK_OK : SK_ERR_NOMEM;
}
static void named_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)state, (void)seed;
    for (int i = lo; i < hi; i++) io->obs[i] = 0.0f;
}
/* an episode that never ends, of observation 0 and reward 0 */
static void named_step(void *state, const sk_env_io *io, int lo, int hi) {
    (void)state;
    memset(io->obs + lo, 0, (size_t)(hi - lo) * sizeof *io->obs);
    memset(io->rewards + lo, 0, (size_t)(hi - lo) * sizeof *io->rewards);
    memset(io->terminated + lo, 0, (size_t)(hi - lo));
    memset(io->truncated + lo, 0, (size_t)(hi - lo));
}
static int named_state_arrays(void *state, sk_env_array *arrays) {
    uint8_t *bytes = state;
    for (int a = 0; a < 2; a++)
        arrays[a] = (sk_env_array){.name = g_array_names[a], .type = SK_ARRAY_U8, .count = 1,
                                   .data = bytes + a * g_named_envs};
    return 2;
}
static const sk_env_def g_named_env = {
    .id = "Named-v0",
    .obs_size = 1,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
    .max_episode_steps = 1000000, /* never reached here */
    .solved_threshold = NAN,
    .num_log_fields = 2,
    .log_names = {"episode_return", "episode_length"},
    .create = named_create,
    .destroy = sk_free,
    .reset = named_reset,
    .step = named_step,
    .state_arrays = named_state_arrays,
};

static void test_state_array_names_checked(void **state) {
    (void)state;
    if (sk_env_register(&g_named_env) != SK_OK) fail_msg("%s", sk_last_error());
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "Named-v0");
    sk_config_set(cfg, "env.num_envs", "2");
    sk_config_set(cfg, "ppo.horizon", "4");
    sk_config_set(cfg, "train.total_steps", "8");
    sk_config_set(cfg, "train.threads", "1");
    char good[128], bad[128];
    snprintf(good, sizeof good, "%s/named.safetensors", g_dir);
    snprintf(bad, sizeof bad, "%s/named-bad.safetensors", g_dir);
    recorder rec = {0};
    train(cfg, &rec, NULL, good); /* the control: its own names save and resume */
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_resume(tr, good), SK_OK);
    sk_trainer_destroy(tr);
    static const char long_name[] = "a_name_of_sixty_characters_is_one_past_the_room_of_a_tensor_";
    const struct { const char *first, *second, *needle; } cases[] = {
        {NULL, "count", "env Named-v0: state array 0 has a NULL name"},
        {"flip", "", "env Named-v0: state array 1 has an empty name"},
        {"flip", "flip", "env Named-v0: state arrays 0 and 1 are both named 'flip'"},
        {"flip", long_name, "env Named-v0: state array 1's name 'a_name_of_sixty"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        g_array_names[0] = cases[k].first;
        g_array_names[1] = cases[k].second;
        assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
        /* writing: refused, and no file */
        unlink(bad);
        sk_status saved = sk_trainer_save(tr, bad);
        if (saved != SK_ERR_ENV || !strstr(sk_trainer_last_error(tr), cases[k].needle))
            fail_msg("save with names '%s', '%s': status %d, '%s' (wanted '%s')",
                     cases[k].first ? cases[k].first : "(NULL)", cases[k].second, (int)saved,
                     sk_trainer_last_error(tr), cases[k].needle);
        assert_int_equal(access(bad, F_OK), -1);
        /* loading the good checkpoint into such an env: refused too */
        assert_int_equal(sk_trainer_resume(tr, good), SK_ERR_ENV);
        if (!strstr(sk_trainer_last_error(tr), cases[k].needle))
            fail_msg("resume: '%s' (wanted '%s')", sk_trainer_last_error(tr), cases[k].needle);
        sk_trainer_destroy(tr);
    }
    g_array_names[0] = "flip";
    g_array_names[1] = "count";
    sk_config_free(cfg);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner-test-resume-XXXXXX");
    if (!mkdtemp(g_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_to_a_longer_budget),
        cmocka_unit_test(test_interrupt_and_resume),
        cmocka_unit_test(test_mismatches_refused),
        cmocka_unit_test(test_sigkill_during_write_keeps_previous),
        cmocka_unit_test(test_old_checkpoint_resumes),
        cmocka_unit_test(test_log_every_thins_and_resumes),
        cmocka_unit_test(test_tampered_checkpoints_refused),
        cmocka_unit_test(test_tampered_prover_state_refused),
        cmocka_unit_test(test_recurrent_resume),
        cmocka_unit_test(test_state_array_names_checked),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0) return 1;
    return rc;
}
