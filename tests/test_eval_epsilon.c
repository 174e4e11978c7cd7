/* The public evaluation with options (sk_evaluate_with_options, include/skinner.h) on a short
 * CartPole-v1 DQN run, through the public calls only:
 *   - no options, all-zero options and sk_evaluate give the same figures;
 *   - epsilon 1 never reads Q: two runs of other seeds (whose greedy figures differ) give the
 *     same figures, and their episodes' lengths are those of the random controller's uniform
 *     actions (another sampler, another stream) within four standard errors;
 *   - epsilon outside [0, 1] and epsilon with a PPO run are refused, naming the value and the
 *     learner; epsilon 0 with a PPO run is its plain evaluation. */
#include "test_util.h"

#include <math.h>

#define EPISODES 256 /* the random comparison's: CartPole's random episodes last 22 +- 12 */
#define SEED 7

static char g_dir[64];
static char g_dqn[2][128], g_ppo[128];

/* A run of cfg (freed here) saved to path. */
static void train_to(sk_config *cfg, const char *path) {
    sk_trainer *trainer = NULL;
    if (sk_trainer_create(&trainer, cfg) != SK_OK || sk_trainer_run(trainer) != SK_OK ||
        sk_trainer_save(trainer, path) != SK_OK)
        fail_msg("training %s: %s", path, sk_last_error());
    sk_trainer_destroy(trainer);
    sk_config_free(cfg);
}

static sk_config *cartpole(const char *algo, const char *seed, const char *steps) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "CartPole-v1");
    sk_config_set(cfg, "env.num_envs", "4");
    sk_config_set(cfg, "train.algo", algo);
    sk_config_set(cfg, "train.seed", seed);
    sk_config_set(cfg, "train.total_steps", steps);
    sk_config_set(cfg, "train.threads", "1");
    sk_config_set(cfg, "train.checkpoint_every", "0");
    return cfg;
}

static int setup(void **state) {
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner-eval-epsilon-XXXXXX");
    if (!mkdtemp(g_dir)) return -1;
    for (int k = 0; k < 2; k++) {
        snprintf(g_dqn[k], sizeof g_dqn[k], "%s/dqn%d.safetensors", g_dir, k);
        sk_config *cfg = cartpole("dqn", k ? "2" : "1", "4000");
        sk_config_set(cfg, "dqn.learning_starts", "500");
        sk_config_set(cfg, "replay.size", "4000");
        sk_config_set(cfg, "policy.hidden", "32");
        train_to(cfg, g_dqn[k]);
    }
    snprintf(g_ppo, sizeof g_ppo, "%s/ppo.safetensors", g_dir);
    train_to(cartpole("ppo", "1", "2048"), g_ppo);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    remove(g_dqn[0]);
    remove(g_dqn[1]);
    remove(g_ppo);
    rmdir(g_dir);
    return 0;
}

/* Results are compared byte for byte: each is written into place (the library zeroes it
 * whole first), never copied by value, which may leave the padding out. */
static void evaluate_into(sk_eval_result *out, const char *path, int episodes,
                          const sk_eval_options *options) {
    if (sk_evaluate_with_options(path, episodes, SEED, options, out) != SK_OK)
        fail_msg("evaluating %s: %s", path, sk_last_error());
}

static void test_defaults_are_sk_evaluate(void **state) {
    (void)state;
    sk_eval_options zero = {0}, named = {.env_name = "CartPole-v1", .epsilon = 0.0};
    static sk_eval_result plain, none, zeros, by_name;
    assert_int_equal(sk_evaluate(g_dqn[0], NULL, 16, false, SEED, NULL, &plain), SK_OK);
    evaluate_into(&none, g_dqn[0], 16, NULL);
    evaluate_into(&zeros, g_dqn[0], 16, &zero);
    evaluate_into(&by_name, g_dqn[0], 16, &named);
    assert_memory_equal(&none, &plain, sizeof plain);
    assert_memory_equal(&zeros, &plain, sizeof plain);
    assert_memory_equal(&by_name, &plain, sizeof plain);
}

static void test_epsilon_one_is_uniform_play(void **state) {
    (void)state;
    sk_eval_options greedy = {0}, random = {.epsilon = 1.0};
    static sk_eval_result greedy0, greedy1, random0, random1, uniform;
    evaluate_into(&greedy0, g_dqn[0], EPISODES, &greedy);
    evaluate_into(&greedy1, g_dqn[1], EPISODES, &greedy);
    print_message("greedy: mean length %.2f (seed 1's run), %.2f (seed 2's)\n",
                  greedy0.mean_length, greedy1.mean_length);
    /* else the next check could not tell a Q that is read from one that is not */
    assert_true(greedy0.mean_length != greedy1.mean_length);
    evaluate_into(&random0, g_dqn[0], EPISODES, &random);
    evaluate_into(&random1, g_dqn[1], EPISODES, &random);
    assert_memory_equal(&random0, &random1, sizeof random0);

    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_evaluate_controller("CartPole-v1", cfg, SK_CONTROLLER_RANDOM, EPISODES,
                                            SEED + 1, NULL, &uniform),
                     SK_OK);
    sk_config_free(cfg);
    /* lengths are returns on CartPole; std_return is the episodes' spread */
    double se = sqrt((random0.std_return * random0.std_return +
                      uniform.std_return * uniform.std_return) / EPISODES);
    print_message("epsilon 1: mean length %.2f +- %.2f; random controller %.2f +- %.2f "
                  "(%d episodes each)\n", random0.mean_length, random0.std_return,
                  uniform.mean_length, uniform.std_return, EPISODES);
    assert_true(fabs(random0.mean_length - uniform.mean_length) <= 4.0 * se);
}

/* path's evaluation with options is refused with SK_ERR_INVALID, the message holding both. */
static void refused(const char *path, double epsilon, const char *want, const char *also) {
    sk_eval_options options = {.epsilon = epsilon};
    sk_eval_result result;
    assert_int_equal(sk_evaluate_with_options(path, 4, SEED, &options, &result), SK_ERR_INVALID);
    print_message("refused: %s\n", sk_last_error());
    assert_non_null(strstr(sk_last_error(), want));
    assert_non_null(strstr(sk_last_error(), also));
}

static void test_bad_epsilon_is_refused(void **state) {
    (void)state;
    refused(g_dqn[0], 1.5, "epsilon = 1.5", "expected a chance in [0, 1]");
    refused(g_dqn[0], -0.25, "epsilon = -0.25", "expected a chance in [0, 1]");
    refused(g_dqn[0], NAN, "epsilon = nan", "expected a chance in [0, 1]");
    refused(g_ppo, 0.05, "epsilon-greedy evaluation is for a DQN run", "learner is ppo");
    sk_eval_options none = {.epsilon = 0.0};
    static sk_eval_result plain, reference;
    evaluate_into(&plain, g_ppo, 4, &none);
    assert_int_equal(sk_evaluate(g_ppo, NULL, 4, false, SEED, NULL, &reference), SK_OK);
    assert_memory_equal(&plain, &reference, sizeof plain);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_sk_evaluate),
        cmocka_unit_test(test_epsilon_one_is_uniform_play),
        cmocka_unit_test(test_bad_epsilon_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
