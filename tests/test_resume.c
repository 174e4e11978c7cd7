/* Resuming: a run stopped and resumed from its checkpoint continues exactly
 * as the run that never stopped; checkpoints of another env or thread count
 * are refused; a process killed while writing a checkpoint leaves the
 * previous one loadable. */
#include "test_util.h"

#include <signal.h>
#include <sys/wait.h>

#define MAX_ROWS 128

typedef struct recorder {
    sk_update_stats rows[MAX_ROWS];
    int count;
    int64_t stop_after; /* return false after this update (0: never) */
} recorder;

static bool record(const sk_update_stats *st, void *user) {
    recorder *r = user;
    if (r->count < MAX_ROWS) {
        sk_update_stats row = *st;
        row.wall_seconds = row.sps = 0.0;
        r->rows[r->count++] = row;
    }
    return r->stop_after == 0 || st->update < r->stop_after;
}

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
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    if (resume) assert_int_equal(sk_trainer_resume(tr, resume), SK_OK);
    sk_trainer_set_callback(tr, record, rec);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    if (save) assert_int_equal(sk_trainer_save(tr, save), SK_OK);
    sk_trainer_destroy(tr);
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

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner-test-resume-XXXXXX");
    if (!mkdtemp(g_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_to_a_longer_budget),
        cmocka_unit_test(test_interrupt_and_resume),
        cmocka_unit_test(test_mismatches_refused),
        cmocka_unit_test(test_sigkill_during_write_keeps_previous),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0) return 1;
    return rc;
}
