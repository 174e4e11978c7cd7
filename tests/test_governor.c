/* The governor: a numerical anomaly rolls back to the last good weights and
 * optimiser state, is counted, and repeated trouble stops the run with the
 * last good policy saved. */
#include "test_util.h"

#include "train/trainer_internal.h"

#include <math.h>

#define MAX_ROWS 64

typedef struct probe {
    sk_trainer *trainer;
    int64_t poison_from, poison_until; /* updates after which weights are set to NaN */
    sk_update_stats rows[MAX_ROWS];
    int count;
} probe;

static bool poison(const sk_update_stats *st, void *user) {
    probe *p = user;
    if (p->count < MAX_ROWS) p->rows[p->count++] = *st;
    if (st->update >= p->poison_from && st->update <= p->poison_until)
        p->trainer->learner.params[3] = NAN;
    return true;
}

static sk_config *small_config(const char *steps) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "CartPole-v1");
    sk_config_set(cfg, "env.num_envs", "8");
    sk_config_set(cfg, "ppo.horizon", "64");
    sk_config_set(cfg, "train.total_steps", steps);
    sk_config_set(cfg, "train.threads", "2");
    return cfg;
}

static void run(probe *p, sk_config *cfg, sk_status expect) {
    assert_int_equal(sk_trainer_create(&p->trainer, cfg), SK_OK);
    sk_trainer_set_callback(p->trainer, poison, p);
    sk_status status = sk_trainer_run(p->trainer);
    if (status != SK_OK) print_message("run stopped: %s\n", sk_last_error());
    assert_int_equal(status, expect);
}

static void test_nan_restores_last_good_weights(void **state) {
    (void)state;
    static probe clean = {.poison_from = 1000, .poison_until = 0};
    static probe hit = {.poison_from = 3, .poison_until = 3};
    sk_config *a = small_config("10240"), *b = small_config("10240");
    run(&clean, a, SK_OK);
    run(&hit, b, SK_OK);
    sk_train_result r = sk_trainer_result(hit.trainer);
    assert_int_equal(r.anomalies, 1);
    assert_int_equal(clean.count, hit.count);
    /* the weights of update 3 were restored before its poison could act, so
     * the run is exactly the clean one, apart from the anomaly count */
    for (int i = 0; i < clean.count; i++) {
        sk_update_stats x = clean.rows[i], y = hit.rows[i];
        x.wall_seconds = y.wall_seconds = x.sps = y.sps = 0.0;
        assert_int_equal(y.anomalies, i >= 3 ? 1 : 0);
        x.anomalies = y.anomalies = 0;
        assert_memory_equal(&x, &y, sizeof x);
    }
    for (size_t k = 0; k < hit.trainer->learner.policy.num_params; k++)
        assert_true(isfinite(hit.trainer->learner.params[k]));
    sk_trainer_destroy(clean.trainer);
    sk_trainer_destroy(hit.trainer);
    sk_config_free(a);
    sk_config_free(b);
}

static void test_repeated_trouble_stops_with_a_usable_checkpoint(void **state) {
    (void)state;
    static probe p = {.poison_from = 2, .poison_until = 1000};
    char dir[] = "/tmp/skinner-test-gov-XXXXXX";
    assert_non_null(mkdtemp(dir));
    sk_config *cfg = small_config("20480");
    sk_config_set(cfg, "governor.max_anomalies", "2");
    assert_int_equal(sk_trainer_create(&p.trainer, cfg), SK_OK);
    assert_int_equal(sk_trainer_set_run_dir(p.trainer, dir), SK_OK);
    sk_trainer_set_callback(p.trainer, poison, &p);
    assert_int_equal(sk_trainer_run(p.trainer), SK_ERR_NUMERIC);
    assert_non_null(strstr(sk_last_error(), "diverged"));
    assert_non_null(strstr(sk_last_error(), "3 anomalies within 20 updates"));
    assert_int_equal(sk_trainer_result(p.trainer).anomalies, 3);
    char path[128];
    snprintf(path, sizeof path, "%s/policy.safetensors", dir);
    sk_eval_result eval;
    assert_int_equal(sk_evaluate(path, NULL, 3, true, 1, NULL, &eval), SK_OK); /* finite, loadable */
    /* the event log tells the same story, one JSON object a line */
    snprintf(path, sizeof path, "%s/events.jsonl", dir);
    FILE *events = fopen(path, "r");
    assert_non_null(events);
    char line[2048];
    int anomalies = 0, finished = 0, updates = 0;
    while (fgets(line, sizeof line, events)) {
        assert_true(line[0] == '{' && strchr(line, '\n'));
        anomalies += strstr(line, "\"type\": \"anomaly\"") != NULL;
        updates += strstr(line, "\"type\": \"update\"") != NULL;
        if (strstr(line, "\"type\": \"run_finished\"")) {
            finished++;
            assert_non_null(strstr(line, "\"status\": \"numerical failure\""));
            assert_non_null(strstr(line, "diverged"));
        }
    }
    fclose(events);
    assert_int_equal(anomalies, 3);
    assert_int_equal(finished, 1);
    assert_true(updates >= 3);
    sk_trainer_destroy(p.trainer);
    sk_config_free(cfg);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_kl_explosion_rolls_back(void **state) {
    (void)state;
    static probe p = {.poison_from = 1000, .poison_until = 0};
    sk_config *cfg = small_config("20480");
    sk_config_set(cfg, "governor.max_kl", "1e-6"); /* every real update exceeds it */
    sk_config_set(cfg, "governor.max_anomalies", "4");
    run(&p, cfg, SK_ERR_NUMERIC);
    assert_non_null(strstr(sk_last_error(), "approx KL"));
    /* every update was rolled back: the weights are still the initial ones */
    assert_memory_equal(p.trainer->learner.params, p.trainer->learner.governor.params,
                        p.trainer->learner.policy.num_params * sizeof(float));
    assert_int_equal(p.trainer->learner.adam_step, 0);
    assert_true(p.rows[0].restored);
    sk_trainer_destroy(p.trainer);
    sk_config_free(cfg);
}

/* Weights that are finite but overflow the logits of a masked head (inf -
 * inf is NaN) are numerical trouble too: sampling must not abort, the
 * governor rolls the update back (found by fuzzing resume). */
static bool overflow_weights(const sk_update_stats *st, void *user) {
    probe *p = user;
    if (p->count < MAX_ROWS) p->rows[p->count++] = *st;
    if (st->update == 2) {
        const sk_learner *ln = &p->trainer->learner;
        for (size_t k = 0; k < ln->policy.num_params; k++)
            ln->params[k] = k % 2 ? 3e38f : -3e38f;
    }
    return true;
}

static void test_overflowing_logits_roll_back(void **state) {
    (void)state;
    static probe p;
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "Prover-v0"); /* masked candidates, the synthetic knowledge base */
    sk_config_set(cfg, "env.num_envs", "8");
    sk_config_set(cfg, "ppo.horizon", "16");
    sk_config_set(cfg, "policy.type", "candidates");
    sk_config_set(cfg, "train.total_steps", "1024");
    sk_config_set(cfg, "train.threads", "1");
    assert_int_equal(sk_trainer_create(&p.trainer, cfg), SK_OK);
    sk_trainer_set_callback(p.trainer, overflow_weights, &p);
    sk_status status = sk_trainer_run(p.trainer);
    assert_true(sk_trainer_result(p.trainer).anomalies >= 1);
    assert_true(p.rows[2].restored);
    if (status == SK_OK) {
        for (size_t k = 0; k < p.trainer->learner.policy.num_params; k++)
            assert_true(fabsf(p.trainer->learner.params[k]) < 1e30f);
    } else {
        assert_int_equal(status, SK_ERR_NUMERIC);
    }
    sk_trainer_destroy(p.trainer);
    sk_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nan_restores_last_good_weights),
        cmocka_unit_test(test_repeated_trouble_stops_with_a_usable_checkpoint),
        cmocka_unit_test(test_kl_explosion_rolls_back),
        cmocka_unit_test(test_overflowing_logits_roll_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
