/* Work done twice in the hot loops (issue 53 ask 7), counted: the draws a row's sample
 * takes (what lets the learner skip the rows another player acts for and keep its stream),
 * the rows a self-play rollout runs through an actor (each once: the learner's by the
 * learner, a pool member's by its snapshot), the convolution primitives the ConnectFour-v1
 * preset's rollout makes once warmed up (none), and the weights its forwards transpose (none:
 * they read copies made before the rollout). The runs stay bit-identical:
 * test_multiagent's test_identical_and_resumed and test_determinism hold that. */
#include "test_util.h"

#include "core/config.h"
#include "core/rng.h"
#include "nn/conv.h"
#include "nn/gemm_small.h"
#include "core/isa.h"
#include "policy/policy.h"
#include "train/trainer_internal.h"
#include "vec/vec_internal.h"

#include <stdlib.h>
#include <string.h>

/* splitmix64's state moves by SK_GOLDEN_GAMMA a draw: the draws between two states */
static uint64_t draws_between(uint64_t before, uint64_t after) {
    uint64_t inverse = SK_GOLDEN_GAMMA; /* Newton's iteration for the inverse mod 2^64 */
    for (int k = 0; k < 6; k++) inverse *= 2 - SK_GOLDEN_GAMMA * inverse;
    return (after - before) * inverse;
}

/* sk_policy_sample_draws against what the samplers take: several heads, the binary fast
 * path, a Gaussian; with a mask that forbids choices too. */
static void test_sample_draws(void **state) {
    (void)state;
    sk_action_space spaces[] = {
        {.kind = SK_SPACE_DISCRETE, .num_heads = 2, .head_sizes = {3, 4}},
        {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
        {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {7}},
        {.kind = SK_SPACE_CONTINUOUS, .dim = 3, .low = {-1, -1, -1}, .high = {1, 1, 1}},
    };
    enum { ROWS = 5, OBS = 4 };
    for (size_t s = 0; s < sizeof spaces / sizeof spaces[0]; s++) {
        int mask_size = s == 2 ? 7 : 0;
        sk_policy policy;
        sk_policy_work work;
        assert_int_equal(sk_policy_init(&policy, OBS, &spaces[s], mask_size, 8, 1,
                                        SK_ACTIVATION_TANH), SK_OK);
        assert_int_equal(sk_policy_work_alloc(&work, &policy, ROWS), SK_OK);
        float *params = calloc(policy.num_params, sizeof(float)), obs[ROWS * OBS];
        uint64_t rng = 3;
        sk_policy_init_params(&policy, params, &rng);
        for (int i = 0; i < ROWS * OBS; i++) obs[i] = (float)sk_rng_normal(&rng);
        uint8_t masks[ROWS * 7];
        for (int i = 0; i < ROWS * 7; i++) masks[i] = i % 3 != 0;
        int32_t actions[ROWS * 2];
        float actions_f[ROWS * 3], logp[ROWS];
        sk_policy_forward(&policy, SK_NET_ACTOR, params, obs, ROWS, &work);
        uint64_t before = rng;
        sk_policy_sample(&policy, params, work.out[SK_NET_ACTOR], mask_size ? masks : NULL, ROWS,
                         &rng, false, actions, actions_f, logp);
        assert_int_equal(draws_between(before, rng),
                         (uint64_t)ROWS * (uint64_t)sk_policy_sample_draws(&policy));
        sk_policy_work_free(&work);
        free(params);
    }
}

/* A trainer of cfg whose envs are reset and whose rollout has run once; the workers' actor
 * rows and the convolutions' primitives counted from there, over one more rollout. */
typedef struct rollout_counts {
    int64_t actor_rows, conv_misses, rows; /* rows: the rollout's, T x N */
    int64_t transposes; /* weights transposed by a forward's call (sk_gemm_small_transposes) */
} rollout_counts;

static int64_t conv_misses(const sk_trainer *tr) {
    int64_t misses = 0;
    for (int w = 0; w < tr->num_workers; w++)
        for (int l = 0; l < SK_MAX_CONV; l++)
            if (tr->workers[w].work.cnn_conv[l])
                misses += sk_conv_counts_of(tr->workers[w].work.cnn_conv[l]).batch_misses;
    return misses;
}

static int64_t actor_rows(const sk_trainer *tr) {
    int64_t rows = 0;
    for (int w = 0; w < tr->num_workers; w++) rows += tr->workers[w].work.actor_rows;
    return rows;
}

static rollout_counts second_rollout(const sk_config *cfg) {
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_trainer_run_workers(tr, sk_reset_job);
    sk_trainer_run_rollout(tr); /* the warm-up */
    tr->progress.update++; /* the next rollout starts from this one's last observations */
    rollout_counts before = {actor_rows(tr), conv_misses(tr), 0, sk_gemm_small_transposes()};
    sk_trainer_run_rollout(tr);
    assert_false(sk_vec_faulted(tr->vec));
    rollout_counts counts = {actor_rows(tr) - before.actor_rows,
                             conv_misses(tr) - before.conv_misses,
                             (int64_t)tr->rollout.horizon * tr->rollout.num_rows,
                             sk_gemm_small_transposes() - before.transposes};
    sk_trainer_destroy(tr);
    return counts;
}

/* Connect Four in self-play, every game against the pool (selfplay.pool_share 1): half the
 * rows are a pool member's. Each row goes through an actor once a step; before, the learner
 * ran every row and the pool its half again (1.5 x the rows). */
static void test_selfplay_rows_once(void **state) {
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        sk_config *cfg = sk_config_new();
        sk_config_set(cfg, "env.id", "ConnectFour-v0");
        sk_config_set(cfg, "env.num_envs", "16");
        sk_config_set(cfg, "ppo.horizon", "16");
        sk_config_set(cfg, "train.threads", threads == 1 ? "1" : "2");
        sk_config_set(cfg, "selfplay.enabled", "true");
        rollout_counts counts = second_rollout(cfg);
        print_message("%d thread(s): %lld actor rows for %lld rollout rows\n", threads,
                      (long long)counts.actor_rows, (long long)counts.rows);
        assert_int_equal(counts.actor_rows, counts.rows);
        sk_config_free(cfg);
    }
}

/* The config of configs/INI for env, run on 2 threads. */
static sk_config *preset_config(const char *ini, const char *env) {
    char path[4096];
    snprintf(path, sizeof path, "%s/configs/%s", SKINNER_SOURCE_DIR, ini);
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_load_file(cfg, path), SK_OK);
    sk_config_set(cfg, "env.id", env);
    sk_config_set(cfg, "train.threads", "2");
    return cfg;
}

/* The ConnectFour-v1 preset (configs/connect4_cnn.ini: a fifth of the games against a pool
 * of 16, whose rows' count changes step by step, so the learner's does too): once warmed up
 * by a rollout, a rollout makes no convolution primitive (before: 686 a worker in 10
 * updates) and transposes no weights, the pool's included (before: 384). */
static void test_connect4_rollout_no_misses(void **state) {
    (void)state;
    sk_config *cfg = preset_config("connect4_cnn.ini", "ConnectFour-v1");
    rollout_counts counts = second_rollout(cfg);
    print_message("%lld rollout rows: %lld convolution primitives made, %lld weights transposed "
                  "by forwards\n", (long long)counts.rows, (long long)counts.conv_misses,
                  (long long)counts.transposes);
    assert_int_equal(counts.conv_misses, 0);
    assert_int_equal(counts.transposes, 0); /* before: 384, the pool's */
    sk_config_free(cfg);
}

/* A rollout of each preset, once warmed up, transposes no weights on a forward's call: its
 * forwards read the copy made before it (issue 53 ask 7). Before, with 2 threads: 1028 in
 * CartPole-v1's (4 layers a step and worker, and the truncations' values), 774 in the LSTM
 * preset's, 1286 in MinAtar/Breakout-v1's. */
static void test_rollout_no_transposes(void **state) {
    (void)state;
    const struct {
        const char *env, *ini;
    } presets[] = {
        {"CartPole-v1", "cartpole.ini"},
        {"CartPole-v1", "cartpole_lstm.ini"},
        {"MinAtar/Breakout-v1", "minatar.ini"},
    };
    for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++) {
        sk_config *cfg = preset_config(presets[k].ini, presets[k].env);
        rollout_counts counts = second_rollout(cfg);
        print_message("%s (%s): %lld rollout rows, %lld weights transposed by forwards\n",
                      presets[k].env, presets[k].ini, (long long)counts.rows,
                      (long long)counts.transposes);
        assert_int_equal(counts.transposes, 0);
        sk_config_free(cfg);
    }
}

/* After the weights change (a restore, a load, an update), the copy the next rollout reads is
 * made anew: W^T of the new weights, and each forward from it equals, bit for bit, the forward
 * of a fresh work that transposes as it goes. */
static void test_transposed_copy_follows_params(void **state) {
    (void)state;
    sk_config *cfg = preset_config("cartpole_lstm.ini", "CartPole-v1");
    sk_config_set(cfg, "policy.layers", "1");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_trainer_run_workers(tr, sk_reset_job);
    sk_trainer_run_rollout(tr);
    sk_learner *ln = &tr->learner;
    const sk_policy *policy = &ln->policy;
    enum { ROWS = 8 };
    uint64_t rng = 11;
    float obs[ROWS * 4], *state_kept = calloc((size_t)ROWS * 2 * 64, sizeof(float));
    float *state_fresh = calloc((size_t)ROWS * 2 * 64, sizeof(float));
    for (int i = 0; i < ROWS * 4; i++) obs[i] = (float)sk_rng_normal(&rng);
    /* new weights, as a checkpoint's load or the governor's restore writes them; then a
     * rollout, which made its copy of them: each weight's W^T, element by element */
    for (size_t i = 0; i < policy->num_params; i++)
        ln->params[i] = (float)sk_rng_uniform(&rng, -0.5, 0.5);
    tr->progress.update++;
    sk_trainer_run_rollout(tr);
    int transposed = 0;
    for (int k = 0; k < policy->num_tensors; k++) {
        const sk_tensor_info *t = &policy->tensors[k];
        if (sk_policy_tensor_ndim(t) != 2 || !sk_gemm_small_forward_transposes(t->cols, t->rows))
            continue;
        transposed++;
        for (int r = 0; r < t->rows; r++)
            for (int c = 0; c < t->cols; c++)
                assert_true(ln->params_t[t->offset + (size_t)c * (size_t)t->rows + (size_t)r] ==
                            ln->params[t->offset + (size_t)r * (size_t)t->cols + (size_t)c]);
    }
    sk_policy_work kept, fresh;
    assert_int_equal(sk_policy_work_alloc(&kept, policy, ROWS), SK_OK);
    assert_int_equal(sk_policy_work_alloc(&fresh, policy, ROWS), SK_OK);
    sk_policy_work_use_transposed(&kept, 0, ln->params, ln->params_t, policy->num_params);
    long long transposes = sk_gemm_small_transposes();
    sk_policy_core_step(policy, ln->params, obs, state_kept, ROWS, &kept);
    sk_policy_forward_both(policy, ln->params, obs, ROWS, &kept);
    assert_int_equal(sk_gemm_small_transposes(), transposes); /* all from the copy */
    sk_policy_core_step(policy, ln->params, obs, state_fresh, ROWS, &fresh);
    sk_policy_forward_both(policy, ln->params, obs, ROWS, &fresh);
    /* the encoder, W_ih, W_hh and the two trunks' hidden layers (the heads read W) */
    bool kernels = sk_isa_level_used() != SK_ISA_BASELINE;
    assert_int_equal(transposed, kernels ? 5 : 0);
    if (kernels) assert_true(sk_gemm_small_transposes() > transposes);
    size_t logits = (size_t)ROWS * (size_t)policy->logits_size;
    assert_memory_equal(state_kept, state_fresh, (size_t)ROWS * 2 * 64 * sizeof(float));
    assert_memory_equal(kept.out[SK_NET_ACTOR], fresh.out[SK_NET_ACTOR], logits * sizeof(float));
    assert_memory_equal(kept.out[SK_NET_CRITIC], fresh.out[SK_NET_CRITIC], ROWS * sizeof(float));
    sk_policy_work_free(&kept);
    sk_policy_work_free(&fresh);
    free(state_kept);
    free(state_fresh);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_draws),
        cmocka_unit_test(test_selfplay_rows_once),
        cmocka_unit_test(test_connect4_rollout_no_misses),
        cmocka_unit_test(test_rollout_no_transposes),
        cmocka_unit_test(test_transposed_copy_follows_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
