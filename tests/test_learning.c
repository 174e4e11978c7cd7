/* Learning: the CartPole-v1 preset solves the task (mean return >= 475 over
 * the last 100 episodes) for three seeds, and with env.precision = float32 for
 * one, and the saved policy scores as solved when evaluated on fresh
 * (float64) episodes. So does CartPole-P-v1's preset, whose LSTM core must
 * remember the velocities the env hides, evaluated with its memory carried. */
#include "test_util.h"

static void solve_preset(const char *preset_name, const char *env, const char *seed,
                         const char *precision, bool greedy) {
    char preset[4096];
    snprintf(preset, sizeof preset, "%s/configs/%s.ini", SKINNER_SOURCE_DIR, preset_name);
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_load_file(cfg, preset), SK_OK);
    sk_config_set(cfg, "env.id", env);
    sk_config_set(cfg, "train.seed", seed);
    sk_config_set(cfg, "train.stop_when_solved", "true");
    sk_config_set(cfg, "env.precision", precision);
    sk_trainer *trainer = NULL;
    assert_int_equal(sk_trainer_create(&trainer, cfg), SK_OK);
    assert_int_equal(sk_trainer_run(trainer), SK_OK);
    sk_train_result r = sk_trainer_result(trainer);
    print_message("seed %s, %s: solved=%d at %lld steps, %.2f s (final mean return %.1f)\n",
                  seed, precision, r.solved, (long long)r.solved_at_steps, r.solved_at_seconds, r.final_mean_return);
    assert_true(r.solved);
    assert_true(r.final_mean_return >= 475.0);

    char dir[] = "/tmp/skinner-test-learn-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/policy.safetensors", dir);
    assert_int_equal(sk_trainer_save(trainer, path), SK_OK);
    sk_eval_result eval;
    assert_int_equal(sk_evaluate(path, env, 20, greedy, 99, NULL, &eval), SK_OK);
    print_message("seed %s: evaluation over 20 episodes %.1f +- %.1f\n", seed, eval.mean_return,
                  eval.std_return);
    assert_true(eval.mean_return >= 400.0);
    unlink(path);
    rmdir(dir);
    sk_trainer_destroy(trainer);
    sk_config_free(cfg);
}

static void solve(const char *seed, const char *precision) {
    solve_preset("cartpole", "CartPole-v1", seed, precision, false);
}

static void test_seed_1(void **state) { (void)state; solve("1", "float64"); }
static void test_seed_2(void **state) { (void)state; solve("2", "float64"); }
static void test_seed_3(void **state) { (void)state; solve("3", "float64"); }
static void test_seed_1_float32(void **state) { (void)state; solve("1", "float32"); }
static void test_velocity_hidden_lstm(void **state) {
    (void)state;
    solve_preset("cartpole_p", "CartPole-P-v1", "1", "float64", true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_1),
        cmocka_unit_test(test_seed_2),
        cmocka_unit_test(test_seed_3),
        cmocka_unit_test(test_seed_1_float32),
        cmocka_unit_test(test_velocity_hidden_lstm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
