/* The same seed and thread count give bit-identical runs; another seed does not; with
 * train.slices too, though which thread steps which slice changes from run to run. */
#include "test_util.h"

#include "io/safetensors.h"

#include <math.h>

#define MAX_UPDATES 64

typedef struct capture {
    sk_update_stats rows[MAX_UPDATES];
    int count;
} capture;

static bool record(const sk_update_stats *st, void *user) {
    capture *c = user;
    if (c->count < MAX_UPDATES) {
        sk_update_stats row = *st;
        row.wall_seconds = 0.0; /* wall-clock columns aside */
        row.sps = 0.0;
        c->rows[c->count++] = row;
    }
    return true;
}

static void train_sliced(const char *seed, const char *threads, const char *slices, capture *out,
                         const char *checkpoint) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "CartPole-v1");
    sk_config_set(cfg, "env.num_envs", "8");
    sk_config_set(cfg, "ppo.horizon", "64");
    sk_config_set(cfg, "ppo.learning_rate", "0.0025");
    sk_config_set(cfg, "train.total_steps", "12288");
    sk_config_set(cfg, "train.seed", seed);
    sk_config_set(cfg, "train.threads", threads);
    if (slices) sk_config_set(cfg, "train.slices", slices);
    sk_trainer *trainer = NULL;
    assert_int_equal(sk_trainer_create(&trainer, cfg), SK_OK);
    memset(out, 0, sizeof *out);
    sk_trainer_set_callback(trainer, record, out);
    assert_int_equal(sk_trainer_run(trainer), SK_OK);
    assert_int_equal(sk_trainer_save(trainer, checkpoint), SK_OK);
    sk_trainer_destroy(trainer);
    sk_config_free(cfg);
}

static void train(const char *seed, const char *threads, capture *out, const char *checkpoint) {
    train_sliced(seed, threads, NULL, out, checkpoint);
}

/* Checkpoints hold the same tensors, bit for bit, wall-clock seconds aside. */
static bool same_checkpoint(const char *a, const char *b) {
    sk_st_file *fa = NULL, *fb = NULL;
    assert_int_equal(sk_st_open(&fa, a), SK_OK);
    assert_int_equal(sk_st_open(&fb, b), SK_OK);
    bool same = true;
    int compared = 0;
    for (const char *const *name = (const char *const[]){"actor.0.weight", "critic.2.bias",
                                                          "state.adam_m", "state.rng",
                                                          "state.obs", "env.x", "env.rng", NULL};
         *name && same; name++) {
        const sk_st_tensor *x = sk_st_find(fa, *name), *y = sk_st_find(fb, *name);
        assert_non_null(x);
        assert_non_null(y);
        size_t bytes = sk_st_dtype_size(x->dtype);
        for (int d = 0; d < x->ndim; d++) bytes *= (size_t)x->shape[d];
        same = x->dtype == y->dtype && memcmp(x->data, y->data, bytes) == 0;
        compared++;
    }
    sk_st_close(fa);
    sk_st_close(fb);
    return same && compared > 0;
}

static int compare_rows(const capture *a, const capture *b) {
    if (a->count != b->count) return -1;
    for (int i = 0; i < a->count; i++)
        if (memcmp(&a->rows[i], &b->rows[i], sizeof a->rows[i]) != 0) return i + 1;
    return 0;
}

static void test_same_seed_same_run(void **state) {
    (void)state;
    static capture first, second, other;
    char dir[] = "/tmp/skinner-test-det-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p1[128], p2[128], p3[128];
    snprintf(p1, sizeof p1, "%s/a.safetensors", dir);
    snprintf(p2, sizeof p2, "%s/b.safetensors", dir);
    snprintf(p3, sizeof p3, "%s/c.safetensors", dir);
    for (int threads = 1; threads <= 2; threads++) {
        const char *t = threads == 1 ? "1" : "2";
        train("7", t, &first, p1);
        train("7", t, &second, p2);
        assert_int_equal(first.count, 24);
        assert_true(first.rows[first.count - 1].episodes > 0);
        int diff = compare_rows(&first, &second);
        if (diff != 0) print_error("threads %s: runs differ at update row %d\n", t, diff);
        assert_int_equal(diff, 0);
        assert_true(same_checkpoint(p1, p2));
        train("8", t, &other, p3);
        assert_true(compare_rows(&first, &other) != 0);
        assert_false(same_checkpoint(p1, p3));
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* train.slices = 5 over the 8 envs: on five threads the run is five threads' without slices
 * (a slice per thread); on two and on three threads, where the slices are taken in an order
 * that changes from run to run, the run repeats bit for bit (the rollout's slices keep their
 * streams; the learner's blocks are one per thread, so the thread count still matters); two
 * threads without slices (two slices, other streams) differ. */
static void test_slices_reproducible(void **state) {
    (void)state;
    static capture reference, run;
    char dir[] = "/tmp/skinner-test-slices-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p1[128], p2[128];
    snprintf(p1, sizeof p1, "%s/a.safetensors", dir);
    snprintf(p2, sizeof p2, "%s/b.safetensors", dir);
    train("7", "5", &reference, p1);
    train_sliced("7", "5", "5", &run, p2);
    assert_int_equal(compare_rows(&reference, &run), 0);
    assert_true(same_checkpoint(p1, p2));
    for (int threads = 2; threads <= 3; threads++) {
        const char *t = threads == 2 ? "2" : "3";
        train_sliced("7", t, "5", &reference, p1);
        assert_int_equal(reference.count, 24);
        for (int k = 0; k < 3; k++) {
            train_sliced("7", t, "5", &run, p2);
            int diff = compare_rows(&reference, &run);
            if (diff != 0) print_error("slices 5 on %s threads: differs at row %d\n", t, diff);
            assert_int_equal(diff, 0);
            assert_true(same_checkpoint(p1, p2));
        }
    }
    train("7", "2", &run, p2);
    assert_true(compare_rows(&reference, &run) != 0);
    assert_false(same_checkpoint(p1, p2));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* More slices than envs is refused, naming the key and the limit. */
static void test_slices_refused(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "CartPole-v1");
    sk_config_set(cfg, "env.num_envs", "8");
    sk_config_set(cfg, "train.slices", "9");
    sk_trainer *trainer = NULL;
    assert_int_equal(sk_trainer_create(&trainer, cfg), SK_ERR_CONFIG);
    const char *message = sk_last_error();
    assert_non_null(strstr(message, "train.slices = 9"));
    assert_non_null(strstr(message, "at most 8"));
    sk_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_same_seed_same_run),
                                       cmocka_unit_test(test_slices_reproducible),
                                       cmocka_unit_test(test_slices_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
