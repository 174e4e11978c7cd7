/* ppo.ema_decay: the checkpoints hold the exponential moving average of the weights as the
 * policy, the learner trains on its own weights exactly as without it, and a resume continues
 * both. The average is checked against its definition, recomputed here in double from the
 * weights the learner had after each update. */
#include "test_recorder.h"

#include "skinner/safetensors.h"
#include "train/eval.h"
#include "train/trainer_internal.h"

#include <math.h>
#include <unistd.h>

#define UPDATES 6
#define DECAY 0.75

static char g_dir[64];

static sk_config *config(const char *decay, const char *steps) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "CartPole-v1");
    sk_config_set(cfg, "env.num_envs", "4");
    sk_config_set(cfg, "ppo.horizon", "32");
    sk_config_set(cfg, "ppo.learning_rate", "0.01"); /* large steps: the average lags visibly */
    sk_config_set(cfg, "ppo.ema_decay", decay);
    sk_config_set(cfg, "train.total_steps", steps);
    sk_config_set(cfg, "train.threads", "1");
    sk_config_set(cfg, "train.checkpoint_every", "0");
    return cfg;
}

static const char *path_of(const char *name) {
    static char path[8][128];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, 128, "%s/%s", g_dir, name);
    return p;
}

/* The weights after each update, kept by the callback. */
typedef struct weights {
    sk_trainer *tr;
    double *after; /* (UPDATES + 1) x P: the initial ones, then each update's */
    size_t P;
    int count;
} weights;

static bool keep_weights(const sk_update_stats *st, void *user) {
    (void)st;
    weights *w = user;
    const float *params = w->tr->learner.params;
    for (size_t i = 0; i < w->P; i++) w->after[(size_t)w->count * w->P + i] = params[i];
    w->count++;
    return true;
}

static void test_the_checkpoint_holds_the_average(void **state) {
    (void)state;
    sk_config *cfg = config("0.75", "768"); /* 6 updates of 4 x 32 */
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    weights w = {.tr = tr, .P = tr->learner.policy.num_params, .count = 1};
    w.after = malloc((UPDATES + 1) * w.P * sizeof(double));
    assert_non_null(w.after);
    for (size_t i = 0; i < w.P; i++) w.after[i] = tr->learner.params[i];
    sk_trainer_set_callback(tr, keep_weights, &w);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    assert_int_equal(w.count, UPDATES + 1);
    assert_int_equal(sk_trainer_save(tr, path_of("ema.safetensors")), SK_OK);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);

    /* the bias-corrected average of the weights after updates 1..U, as a weighted sum:
     * sum_u (1 - DECAY) DECAY^(U - u) w_u / (1 - DECAY^U); the initial weights take no part */
    double *expected = calloc(w.P, sizeof(double));
    assert_non_null(expected);
    double norm = 1.0 - pow(DECAY, UPDATES);
    for (int u = 1; u <= UPDATES; u++)
        for (size_t i = 0; i < w.P; i++)
            expected[i] += (1.0 - DECAY) * pow(DECAY, UPDATES - u) * w.after[(size_t)u * w.P + i] / norm;
    sk_loaded_policy lp; /* what eval, export, Python and opponents load */
    assert_int_equal(sk_policy_load(&lp, path_of("ema.safetensors"), NULL), SK_OK);
    double worst = 0.0, moved = 0.0;
    for (size_t i = 0; i < w.P; i++) {
        double last = w.after[(size_t)UPDATES * w.P + i];
        worst = fmax(worst, fabs(lp.params[i] - expected[i]) / (1e-3 + fabs(expected[i])));
        moved = fmax(moved, fabs(expected[i] - last));
    }
    sk_loaded_policy_free(&lp);
    print_message("worst relative error %.3g; the average is up to %.3g from the weights\n",
                  worst, moved);
    if (worst > 1e-5) fail_msg("the saved policy is not the weights' average: %.3g", worst);
    if (moved < 1e-3) fail_msg("the average equals the last weights: nothing was averaged");

    /* the weights themselves, for a resume */
    sk_st_file *file = NULL;
    assert_int_equal(sk_st_open(&file, path_of("ema.safetensors")), SK_OK);
    const sk_st_tensor *raw = sk_st_find(file, "state.raw_params");
    assert_non_null(raw);
    const float *data = raw->data;
    for (size_t i = 0; i < w.P; i++)
        if (data[i] != (float)w.after[(size_t)UPDATES * w.P + i])
            fail_msg("state.raw_params[%zu] is not the learner's weight", i);
    sk_st_close(file);
    free(expected);
    free(w.after);
}

/* The average is a read-out: every update's figures are those of a run without it. */
static void test_training_is_unchanged(void **state) {
    (void)state;
    static recorder plain, averaged;
    sk_config *cfg = config("0", "1024");
    train_recorded(cfg, &plain, NULL, NULL, NULL);
    sk_config_free(cfg);
    cfg = config("0.9", "1024");
    train_recorded(cfg, &averaged, NULL, NULL, NULL);
    sk_config_free(cfg);
    assert_int_equal(plain.count, averaged.count);
    for (int i = 0; i < plain.count; i++)
        if (memcmp(&plain.rows[i], &averaged.rows[i], sizeof plain.rows[i]) != 0)
            fail_msg("update %d differs with ppo.ema_decay = 0.9", i + 1);
}

/* Stopped after 4 updates and resumed to 8, the run saves what the unbroken one does:
 * the average and the weights, bit for bit. */
static void test_resume_continues_the_average(void **state) {
    (void)state;
    static recorder straight, first, second;
    first.count = 0;
    sk_config *cfg = config("0.8", "1024");
    train_recorded(cfg, &straight, NULL, path_of("straight.safetensors"), NULL);
    sk_config_free(cfg);
    cfg = config("0.8", "1024"); /* stopped by its callback: the same learning-rate schedule */
    first.stop_after = 4;
    train_recorded(cfg, &first, NULL, path_of("half.safetensors"), NULL);
    assert_int_equal(first.count, 4);
    sk_config_free(cfg);
    cfg = config("0.8", "1024");
    train_recorded(cfg, &second, path_of("half.safetensors"), path_of("joined.safetensors"), NULL);
    sk_config_free(cfg);
    sk_st_file *a = NULL, *b = NULL;
    assert_int_equal(sk_st_open(&a, path_of("straight.safetensors")), SK_OK);
    assert_int_equal(sk_st_open(&b, path_of("joined.safetensors")), SK_OK);
    static const char *const names[] = {"state.raw_params", "actor.0.weight", "critic.2.bias"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const sk_st_tensor *x = sk_st_find(a, names[k]), *y = sk_st_find(b, names[k]);
        if (!x || !y) fail_msg("no tensor %s", names[k]);
        size_t bytes = sk_st_dtype_size(x->dtype);
        for (int d = 0; d < x->ndim; d++) bytes *= (size_t)x->shape[d];
        assert_int_equal(x->ndim, y->ndim);
        assert_memory_equal(x->shape, y->shape, sizeof x->shape);
        if (memcmp(x->data, y->data, bytes) != 0)
            fail_msg("%s differs between the unbroken and the resumed run", names[k]);
    }
    sk_st_close(a);
    sk_st_close(b);
    /* with another ppo.ema_decay setting, the checkpoint is refused by name */
    expect_resume_refused(config("0", "1024"), path_of("half.safetensors"),
                          "written with a moving average of the weights", "ppo.ema_decay = 0",
                          SK_ERR_INVALID);
    first.count = 0;
    cfg = config("0", "512");
    train_recorded(cfg, &first, NULL, path_of("plain.safetensors"), NULL);
    sk_config_free(cfg);
    expect_resume_refused(config("0.5", "1024"), path_of("plain.safetensors"),
                          "written without a moving average", "ppo.ema_decay = 0.5",
                          SK_ERR_INVALID);
}

static void test_refused_where_it_does_not_apply(void **state) {
    (void)state;
    sk_config *cfg = config("0.9", "1024");
    sk_config_set(cfg, "train.algo", "dqn");
    sk_trainer *tr = NULL;
    assert_int_not_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_non_null(strstr(sk_last_error(), "ppo.ema_decay = 0.9 averages PPO's weights"));
    sk_config_set(cfg, "train.algo", "ppo");
    sk_config_set(cfg, "ppo.ema_decay", "1");
    assert_int_not_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_non_null(strstr(sk_last_error(), "ppo.ema_decay"));
    sk_config_free(cfg);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner_ema_XXXXXX");
    if (!mkdtemp(g_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_checkpoint_holds_the_average),
        cmocka_unit_test(test_training_is_unchanged),
        cmocka_unit_test(test_resume_continues_the_average),
        cmocka_unit_test(test_refused_where_it_does_not_apply),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char command[128];
    snprintf(command, sizeof command, "rm -rf %s", g_dir);
    if (system(command) != 0) return 1;
    return failed;
}
