/* ppo.clip_actions: a Gaussian policy's samples clipped to the action space's bounds on their way
 * to the env, as CleanRL's ClipAction wrapper and SB3's rollout clip them, while the learner keeps
 * the unclipped sample's log-probability.
 *
 * MountainCarContinuous-v0 charges 0.1 * action^2 on the UNCLIPPED action (Gymnasium's rule), so
 * what the env was handed shows in its rewards: a policy with log_std 1.5 (std 4.5) samples far
 * outside [-1, 1]. Checked, on short runs through the public calls:
 *   - training with the key: every episode costs at most 0.1 a step (return >= -99.9, the goal's
 *     +100 only adds); without it, about 2 a step (the same seed);
 *   - the learner's log-probabilities are the unclipped samples': with one epoch of one
 *     minibatch each update's ratio is 1 (no clip fraction, no KL), where the clipped actions'
 *     would differ from the samples' by a spread of 4.5;
 *   - the run's evaluation clips as its training did (the trace's actions within [-1, 1], some at
 *     the bounds, no step costing more than 0.1), and a run without the key does not;
 *   - sk_space_clip itself: per-dimension bounds, values inside untouched, NaN passed on;
 *   - SAC (whose actions are squashed into the bounds) leaves the key false in its config; a
 *     Discrete env refuses it. */
#include "test_util.h"
#include "policy/policy.h"

#include <math.h>
#include <string.h>

#define ENV "MountainCarContinuous-v0"
#define MAX_STEP_COST 0.1 /* 0.1 * action^2 at |action| = 1 */

static char g_dir[64];
static char g_run[2][128]; /* 0: unclipped, 1: clipped */
static sk_train_result g_result[2];
static double g_max_clip_fraction[2], g_max_kl[2];

static bool record(const sk_update_stats *st, void *user) {
    int k = *(const int *)user;
    if (st->clip_fraction > g_max_clip_fraction[k]) g_max_clip_fraction[k] = st->clip_fraction;
    if (fabs(st->approx_kl) > g_max_kl[k]) g_max_kl[k] = fabs(st->approx_kl);
    return true;
}

static sk_config *mountaincar(const char *clip) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", ENV);
    sk_config_set(cfg, "env.num_envs", "4");
    sk_config_set(cfg, "ppo.horizon", "256");
    sk_config_set(cfg, "ppo.num_minibatches", "1"); /* one step an update, at the sampling weights */
    sk_config_set(cfg, "ppo.update_epochs", "1");
    sk_config_set(cfg, "ppo.clip_actions", clip);
    sk_config_set(cfg, "policy.log_std_init", "1.5");
    sk_config_set(cfg, "train.seed", "3");
    sk_config_set(cfg, "train.total_steps", "4096"); /* each env 1024 steps: an episode of 999 */
    sk_config_set(cfg, "train.threads", "1");
    sk_config_set(cfg, "train.checkpoint_every", "0");
    return cfg;
}

static int setup(void **state) {
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner-clip-actions-XXXXXX");
    if (!mkdtemp(g_dir)) return -1;
    static int runs[2] = {0, 1};
    for (int k = 0; k < 2; k++) {
        snprintf(g_run[k], sizeof g_run[k], "%s/run%d.safetensors", g_dir, k);
        sk_config *cfg = mountaincar(k ? "true" : "false");
        sk_trainer *trainer = NULL;
        if (sk_trainer_create(&trainer, cfg) == SK_OK)
            sk_trainer_set_callback(trainer, record, &runs[k]);
        if (!trainer || sk_trainer_run(trainer) != SK_OK ||
            sk_trainer_save(trainer, g_run[k]) != SK_OK) {
            print_error("training %s: %s\n", g_run[k], sk_last_error());
            return -1;
        }
        g_result[k] = sk_trainer_result(trainer);
        sk_trainer_destroy(trainer);
        sk_config_free(cfg);
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char trace[160];
    for (int k = 0; k < 2; k++) {
        remove(g_run[k]);
        snprintf(trace, sizeof trace, "%s/trace%d.jsonl", g_dir, k);
        remove(trace);
    }
    rmdir(g_dir);
    return 0;
}

static void test_training_hands_the_env_clipped_actions(void **state) {
    (void)state;
    print_message("mean return: unclipped %.1f, clipped %.1f\n", g_result[0].final_mean_return,
                  g_result[1].final_mean_return);
    assert_true(isfinite(g_result[1].final_mean_return));
    assert_true(g_result[1].final_mean_return >= -MAX_STEP_COST * 999 - 1e-3);
    /* std 4.5: 0.1 * E[a^2] is about 2 a step unclipped */
    assert_true(g_result[0].final_mean_return < -500.0);
}

static void test_learner_keeps_the_samples_log_probability(void **state) {
    (void)state;
    for (int k = 0; k < 2; k++) {
        print_message("run %d: largest clip fraction %g, |approx_kl| %g\n", k,
                      g_max_clip_fraction[k], g_max_kl[k]);
        assert_true(g_max_clip_fraction[k] == 0.0);
        assert_true(g_max_kl[k] < 1e-6);
    }
}

/* Evaluates run k (sampled) with a trace; returns the steps' largest |action| and reports how
 * many were exactly at a bound and the largest cost of a step that did not reach the goal. */
static double evaluate_traced(int k, int *at_bound, double *max_cost) {
    char trace[160];
    snprintf(trace, sizeof trace, "%s/trace%d.jsonl", g_dir, k);
    sk_eval_result result;
    if (sk_evaluate(g_run[k], NULL, 4, false, 11, trace, &result) != SK_OK)
        fail_msg("evaluating %s: %s", g_run[k], sk_last_error());
    FILE *f = fopen(trace, "r");
    assert_non_null(f);
    char line[512];
    double largest = 0.0;
    int steps = 0;
    *at_bound = 0;
    *max_cost = 0.0;
    while (fgets(line, sizeof line, f)) {
        const char *a = strstr(line, "\"action\": [");
        const char *r = strstr(line, "\"reward\": ");
        if (!a || !r) continue; /* an episode's end */
        double action = strtod(a + strlen("\"action\": ["), NULL);
        double reward = strtod(r + strlen("\"reward\": "), NULL);
        steps++;
        if (fabs(action) > largest) largest = fabs(action);
        if (fabs(action) == 1.0) (*at_bound)++;
        if (reward < 50.0 && -reward > *max_cost) *max_cost = -reward; /* +100 at the goal */
    }
    fclose(f);
    print_message("run %d: %d steps, largest |action| %.3f, %d at a bound, costliest step %.4f\n",
                  k, steps, largest, *at_bound, *max_cost);
    assert_true(steps >= 4 * 100);
    return largest;
}

static void test_evaluation_clips_as_training_did(void **state) {
    (void)state;
    int at_bound;
    double max_cost;
    assert_true(evaluate_traced(1, &at_bound, &max_cost) <= 1.0);
    assert_true(at_bound > 0); /* the clip did something: std 4.5 lands outside most often */
    assert_true(max_cost <= MAX_STEP_COST * (1.0 + 1e-6));
    assert_true(evaluate_traced(0, &at_bound, &max_cost) > 1.0);
    assert_true(max_cost > MAX_STEP_COST);
}

static void test_space_clip(void **state) {
    (void)state;
    sk_action_space space = {.kind = SK_SPACE_CONTINUOUS, .dim = 3,
                             .low = {-1.0f, -0.4f, 0.0f}, .high = {1.0f, 0.4f, 2.0f}};
    float actions[2][3] = {{-3.0f, 0.25f, 5.0f}, {NAN, -0.5f, 1.5f}};
    sk_space_clip(&space, &actions[0][0], 2);
    assert_true(actions[0][0] == -1.0f && actions[0][1] == 0.25f && actions[0][2] == 2.0f);
    assert_true(isnan(actions[1][0]) && actions[1][1] == -0.4f && actions[1][2] == 1.5f);
}

static void test_sac_leaves_it_off_discrete_refuses_it(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", ENV);
    sk_config_set(cfg, "train.algo", "sac");
    sk_config_set(cfg, "ppo.clip_actions", "true");
    sk_trainer *trainer = NULL;
    if (sk_trainer_create(&trainer, cfg) != SK_OK) fail_msg("sac: %s", sk_last_error());
    const char *value = sk_config_get(sk_trainer_config(trainer), "ppo.clip_actions");
    assert_non_null(value);
    assert_string_equal(value, "false");
    sk_trainer_destroy(trainer);
    sk_config_free(cfg);
    cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "CartPole-v1");
    sk_config_set(cfg, "ppo.clip_actions", "true");
    trainer = NULL;
    assert_int_equal(sk_trainer_create(&trainer, cfg), SK_ERR_CONFIG);
    print_message("refused: %s\n", sk_last_error());
    assert_non_null(strstr(sk_last_error(), "ppo.clip_actions = true, but CartPole-v1"));
    sk_trainer_destroy(trainer);
    sk_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_training_hands_the_env_clipped_actions),
        cmocka_unit_test(test_learner_keeps_the_samples_log_probability),
        cmocka_unit_test(test_evaluation_clips_as_training_did),
        cmocka_unit_test(test_space_clip),
        cmocka_unit_test(test_sac_leaves_it_off_discrete_refuses_it),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
