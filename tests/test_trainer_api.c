/* The trainer as a library handle: it keeps its own copy of the config
 * (the caller's is neither changed nor needed afterwards) and its own last
 * error, readable from any thread after the thread-local one moved on. */
#include "test_util.h"

#include <pthread.h>

static sk_config *small(const char *steps) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "CartPole-v1");
    sk_config_set(cfg, "env.num_envs", "4");
    sk_config_set(cfg, "ppo.horizon", "32");
    sk_config_set(cfg, "train.total_steps", steps);
    sk_config_set(cfg, "train.threads", "1");
    return cfg;
}

static void test_config_is_copied(void **state) {
    (void)state;
    sk_config *cfg = small("256");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    /* the defaults the trainer used are in its copy, not in the caller's */
    assert_null(sk_config_get(cfg, "ppo.gamma"));
    assert_string_equal(sk_config_get(sk_trainer_config(tr), "ppo.gamma"), "0.99");
    assert_string_equal(sk_config_get(sk_trainer_config(tr), "ppo.horizon"), "32");
    sk_config_free(cfg); /* not needed any more */
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    assert_int_equal(sk_trainer_result(tr).total_steps, 256);
    sk_trainer_destroy(tr);
}

static void *fail_elsewhere(void *arg) {
    sk_trainer *tr = arg;
    /* a second run is refused, on this thread */
    return (void *)(intptr_t)sk_trainer_run(tr);
}

static void test_error_per_handle(void **state) {
    (void)state;
    sk_config *cfg = small("128");
    sk_trainer *a = NULL, *b = NULL;
    assert_int_equal(sk_trainer_create(&a, cfg), SK_OK);
    assert_int_equal(sk_trainer_create(&b, cfg), SK_OK);
    assert_string_equal(sk_trainer_last_error(a), "no error");
    assert_int_equal(sk_trainer_run(a), SK_OK);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, fail_elsewhere, a), 0);
    void *result;
    pthread_join(thread, &result);
    assert_int_equal((int)(intptr_t)result, SK_ERR_INVALID);
    /* this thread's error is untouched; a's failure is kept on a, b has none */
    assert_int_equal(sk_trainer_resume(b, "/nonexistent/policy.safetensors"), SK_ERR_IO);
    assert_non_null(strstr(sk_last_error(), "/nonexistent"));
    assert_non_null(strstr(sk_trainer_last_error(a), "already called"));
    assert_non_null(strstr(sk_trainer_last_error(b), "/nonexistent"));
    sk_trainer_destroy(a);
    sk_trainer_destroy(b);
    sk_config_free(cfg);
}

/* Recurrent settings that cannot work are refused at create, naming the key
 * and what was expected; the resolved config records the sequence length. */
static void test_recurrent_settings(void **state) {
    (void)state;
    struct {
        const char *key, *value, *needle;
    } bad[] = {
        {"ppo.bptt_horizon", "12", "must divide ppo.horizon = 32"},
        {"ppo.num_minibatches", "16", "must divide the 8 sequences"},
        {"policy.core", "rnn", "policy.core"},
        {"policy.core_size", "0", "policy.core_size"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sk_config *cfg = small("256");
        sk_config_set(cfg, "policy.core", "lstm");
        sk_config_set(cfg, "ppo.bptt_horizon", "16"); /* 4 envs x 32 / 16 = 8 sequences */
        sk_config_set(cfg, bad[i].key, bad[i].value);
        sk_trainer *tr = NULL;
        assert_int_not_equal(sk_trainer_create(&tr, cfg), SK_OK);
        if (!strstr(sk_last_error(), bad[i].needle))
            fail_msg("'%s' lacks '%s'", sk_last_error(), bad[i].needle);
        sk_config_free(cfg);
    }
    /* without a core (a recurrent preset with policy.core = none) the sequence
     * length is ignored, but still range-checked */
    sk_config *cfg = small("256");
    sk_config_set(cfg, "ppo.bptt_horizon", "16");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_trainer_destroy(tr);
    sk_config_set(cfg, "ppo.bptt_horizon", "0");
    assert_int_not_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_non_null(strstr(sk_last_error(), "ppo.bptt_horizon"));
    sk_config_free(cfg);
    /* the candidates policy scores against the core's output: equal widths */
    cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "Prover-v0");
    sk_config_set(cfg, "policy.type", "candidates");
    sk_config_set(cfg, "policy.core", "gru");
    sk_config_set(cfg, "policy.core_size", "16");
    assert_int_not_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_non_null(strstr(sk_last_error(), "must equal policy.embed = 32"));
    sk_config_free(cfg);
    /* the default: 16-step sequences when they divide the horizon, recorded */
    cfg = small("256");
    sk_config_set(cfg, "policy.core", "gru");
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_string_equal(sk_config_get(sk_trainer_config(tr), "ppo.bptt_horizon"), "16");
    assert_string_equal(sk_config_get(sk_trainer_config(tr), "policy.core_size"), "64");
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_is_copied),
        cmocka_unit_test(test_error_per_handle),
        cmocka_unit_test(test_recurrent_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
