/* The policy's core seam (issue 31 ask 6): a core is one sk_core_ops row. A toy core
 * written here, in the test alone, trains through the PPO loss with the library's
 * encoder and heads, its gradient against finite differences; the LSTM's interleaved
 * per-env state (h, then c) steps as nn/rnn's layer does on separate blocks. */
#include "test_util.h"

#include "core/rng.h"
#include "nn/nn.h"
#include "nn/rnn.h"
#include "policy/policy.h"
#include "train/ppo.h"

#include <math.h>
#include <string.h>

/* ---- a toy core: h' = tanh(W x + h), one part, one tensor "core.weight" (C, I) ---- */
static void toy_layout(sk_policy *policy, size_t *offset, int input_size, int size) {
    policy->core_tensor = policy->num_tensors;
    sk_policy_add_tensor(policy, offset, "core.weight", size, input_size, SK_TENSOR_MATRIX);
}

static void toy_init(const sk_policy *policy, float *params, uint64_t *rng) {
    const sk_tensor_info *w = &policy->tensors[policy->core_tensor];
    sk_orthogonal_init(params + w->offset, w->rows, w->cols, 1.0, rng);
}

static size_t toy_work_floats(const sk_policy *policy, int capacity) {
    return (size_t)capacity * (size_t)policy->core_size; /* d(pre-activation) */
}

static const float *toy_weight(const sk_policy *policy, const float *params) {
    return params + policy->tensors[policy->core_tensor].offset;
}

static void toy_forward(const sk_policy *policy, const float *params, const float *state0,
                        const uint8_t *resets, int T, int B, sk_policy_work *work) {
    int C = policy->core_size, I = policy->enc_size;
    const float *w = toy_weight(policy, params);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++) {
            size_t r = (size_t)t * (size_t)B + (size_t)b;
            bool cut = resets && resets[r];
            const float *prev = t == 0 ? (state0 ? state0 + (size_t)b * C : NULL)
                                       : work->features + (r - (size_t)B) * (size_t)C;
            for (int k = 0; k < C; k++) {
                double sum = prev && !cut ? prev[k] : 0.0;
                for (int i = 0; i < I; i++)
                    sum += (double)w[(size_t)k * I + i] * work->enc[r * (size_t)I + (size_t)i];
                work->features[r * (size_t)C + (size_t)k] = (float)tanh(sum);
            }
        }
}

static void toy_backward(const sk_policy *policy, const float *params, float *grads,
                         const uint8_t *resets, int T, int B, sk_policy_work *work) {
    int C = policy->core_size, I = policy->enc_size;
    const float *w = toy_weight(policy, params);
    float *dw = grads + policy->tensors[policy->core_tensor].offset;
    float *dpre = work->core_work;
    memset(work->denc, 0, (size_t)T * (size_t)B * (size_t)I * sizeof(float));
    memset(dpre, 0, (size_t)B * (size_t)C * sizeof(float)); /* from step t + 1 through h */
    for (int t = T - 1; t >= 0; t--)
        for (int b = 0; b < B; b++) {
            size_t r = (size_t)t * (size_t)B + (size_t)b;
            for (int k = 0; k < C; k++) {
                float h = work->features[r * (size_t)C + (size_t)k];
                float dh = work->dfeatures[r * (size_t)C + (size_t)k] + dpre[(size_t)b * C + k];
                float d = dh * (1.0f - h * h);
                for (int i = 0; i < I; i++) {
                    dw[(size_t)k * I + i] += d * work->enc[r * (size_t)I + (size_t)i];
                    work->denc[r * (size_t)I + (size_t)i] += d * w[(size_t)k * I + i];
                }
                /* what flows to the state entering step t, unless it was cut */
                dpre[(size_t)b * C + k] = resets && resets[r] ? 0.0f : d;
            }
        }
}

static void toy_step(const sk_policy *policy, const float *params, float *state, int B,
                     sk_policy_work *work) {
    toy_forward(policy, params, state, NULL, 1, B, work);
    memcpy(state, work->features, (size_t)B * (size_t)policy->core_size * sizeof(float));
}

static double toy_macs(const sk_policy *policy) {
    return (double)policy->core_size * (double)policy->enc_size;
}

static const sk_core_ops g_toy = {
    .name = "toy", .num_parts = 1, .part_names = {"h"}, .part_limits = {1.0},
    .layout = toy_layout, .init_params = toy_init, .work_floats = toy_work_floats,
    .forward = toy_forward, .backward = toy_backward, .step = toy_step,
    .forward_macs = toy_macs,
};

enum { QT = 3, QS = 2, QB = QT * QS, QO = 3, QC = 4, QH = 5 };

typedef struct toy_ctx {
    sk_policy policy;
    sk_policy_work work;
    float *params, *scratch;
    float obs[QB * QO], state0[QS * QC], old_logp[QB], adv[QB], returns[QB], old_values[QB];
    int32_t actions[QB];
    uint8_t resets[QB];
    sk_ppo_loss_config config;
} toy_ctx;

static sk_ppo_rows toy_rows(toy_ctx *c) {
    return (sk_ppo_rows){.rows = QB, .seq_len = QT, .state0 = c->state0, .resets = c->resets,
                         .obs = c->obs, .actions = c->actions, .old_logp = c->old_logp,
                         .advantages = c->adv, .returns = c->returns,
                         .old_values = c->old_values};
}

static double toy_loss(void *p) {
    toy_ctx *c = p;
    sk_ppo_loss_sums sums = {0};
    sk_ppo_rows rows = toy_rows(c);
    sk_ppo_loss_grad(&c->policy, c->params, c->scratch, &c->work, &rows, 1.0f / QB, &c->config,
                     &sums);
    return (sums.policy_loss - c->config.ent_coef * sums.entropy +
            c->config.vf_coef * sums.value_loss) / QB;
}

static void fill_normal(float *x, size_t n, uint64_t *rng, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(scale * sk_rng_normal(rng));
}

/* A core the library has never seen, given as a spec: laid out, sized and trained
 * through the PPO loss by the library's own encoder and heads. */
static void test_toy_core_trains(void **state) {
    (void)state;
    toy_ctx c = {.config = {.clip_coef = 0.2f, .ent_coef = 0.05f, .vf_coef = 0.5f}};
    sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {3}};
    assert_int_equal(sk_policy_init_core(&c.policy, QO, &space, 0, QH, 0, SK_ACTIVATION_TANH,
                                         (sk_core_spec){&g_toy, QC}),
                     SK_OK);
    /* its tensor after the encoder's, the heads reading its QC outputs */
    assert_int_equal(c.policy.core_tensor, 2);
    assert_string_equal(c.policy.tensors[2].name, "core.weight");
    assert_int_equal(c.policy.num_params, (size_t)(QH * QO + QH + QC * QH + 3 * QC + 3 + QC + 1));
    assert_int_equal(sk_policy_state_size(&c.policy), QC);
    assert_true(sk_policy_forward_flops(&c.policy) ==
                2.0 * (QH * QO + QC * QH + 3 * QC + QC));
    assert_int_equal(sk_policy_work_alloc(&c.work, &c.policy, QB), SK_OK);
    uint64_t rng = 5;
    c.params = calloc(c.policy.num_params, sizeof(float));
    c.scratch = calloc(c.policy.num_params, sizeof(float));
    float *grads = calloc(c.policy.num_params, sizeof(float));
    sk_policy_init_params(&c.policy, c.params, &rng);
    fill_normal(c.params, c.policy.num_params, &rng, 0.5); /* nonzero heads and biases */
    fill_normal(c.obs, QB * QO, &rng, 1.0);
    for (int k = 0; k < QS * QC; k++) c.state0[k] = (float)(0.9 * tanh(sk_rng_normal(&rng)));
    fill_normal(c.adv, QB, &rng, 1.0);
    fill_normal(c.returns, QB, &rng, 1.0);
    fill_normal(c.old_logp, QB, &rng, 0.3);
    for (int i = 0; i < QB; i++) {
        c.old_logp[i] -= 1.1f;
        c.actions[i] = (int32_t)sk_rng_below(&rng, 3);
    }
    c.resets[2 * QS + 1] = 1;
    sk_ppo_loss_sums sums = {0};
    sk_ppo_rows rows = toy_rows(&c);
    sk_ppo_loss_grad(&c.policy, c.params, grads, &c.work, &rows, 1.0f / QB, &c.config, &sums);
    const sk_tensor_info *w = &c.policy.tensors[c.policy.core_tensor];
    assert_true(sk_grad_norm(grads + w->offset, (size_t)w->rows * (size_t)w->cols) > 0.0);
    assert_int_equal(test_check_gradient("ppo loss, toy core", c.params, grads,
                                         c.policy.num_params, toy_loss, &c, 1e-2f),
                     0);
    /* acting: one step from a state equals the sequence's first step from it */
    float acted[QS * QC];
    memcpy(acted, c.state0, sizeof acted);
    sk_policy_core_step(&c.policy, c.params, c.obs, acted, QS, &c.work);
    sk_policy_core_forward(&c.policy, c.params, c.obs, c.state0, NULL, 1, QS, &c.work);
    assert_memory_equal(acted, c.work.features, sizeof acted);
    sk_policy_work_free(&c.work);
    free(c.params);
    free(c.scratch);
    free(grads);
}

/* The LSTM's state per env is h then c, interleaved row by row; stepping it through the
 * policy equals nn/rnn's layer on separate h and c blocks (test_rnn checks the layer
 * against PyTorch). Out-of-range parts are found by part: h within 1, c within
 * SK_CORE_CELL_MAX. */
static void test_lstm_state_layout(void **state) {
    (void)state;
    enum { B = 3, O = 4, H = 6, C = 5 };
    sk_policy policy;
    sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}};
    assert_int_equal(sk_policy_init_core(&policy, O, &space, 0, H, 1, SK_ACTIVATION_TANH,
                                         (sk_core_spec){&sk_core_lstm, C}),
                     SK_OK);
    assert_int_equal(sk_policy_state_size(&policy), 2 * C);
    sk_policy_work work;
    assert_int_equal(sk_policy_work_alloc(&work, &policy, B), SK_OK);
    uint64_t rng = 9;
    float *params = calloc(policy.num_params, sizeof(float));
    fill_normal(params, policy.num_params, &rng, 0.5);
    float obs[B * O], rows[B * 2 * C], h[B * C], c[B * C];
    fill_normal(obs, B * O, &rng, 1.0);
    for (int k = 0; k < B * 2 * C; k++) rows[k] = (float)(0.9 * tanh(sk_rng_normal(&rng)));
    for (int b = 0; b < B; b++) {
        memcpy(h + b * C, rows + b * 2 * C, C * sizeof(float));
        memcpy(c + b * C, rows + b * 2 * C + C, C * sizeof(float));
    }
    sk_policy_core_step(&policy, params, obs, rows, B, &work);
    float *rnn_work = malloc(sk_rnn_work_size(policy.rnn, 1, B) * sizeof(float));
    sk_rnn_step(h, c, rnn_work, work.enc, NULL, params + policy.tensors[policy.core_tensor].offset,
                policy.rnn, B);
    for (int b = 0; b < B; b++) {
        assert_memory_equal(rows + b * 2 * C, h + b * C, C * sizeof(float));
        assert_memory_equal(rows + b * 2 * C + C, c + b * C, C * sizeof(float));
    }
    assert_memory_equal(work.features, h, sizeof h);
    assert_int_equal(sk_policy_state_invalid(&policy, rows), -1);
    rows[C + 2] = 5.0f; /* a cell may exceed 1 */
    assert_int_equal(sk_policy_state_invalid(&policy, rows), -1);
    rows[C + 2] = (float)(2 * SK_CORE_CELL_MAX);
    assert_int_equal(sk_policy_state_invalid(&policy, rows), C + 2);
    rows[C + 2] = 0.0f;
    rows[1] = 1.5f; /* h may not */
    assert_int_equal(sk_policy_state_invalid(&policy, rows), 1);
    free(rnn_work);
    free(params);
    sk_policy_work_free(&work);
}

/* What bench reports of a trainer (issue 31 ask 5: through the API, not its internals):
 * the model's size from the layout's arithmetic, an update's batch from the config. */
static void test_trainer_sizes(void **state) {
    (void)state;
    static const char *const settings[][2] = {
        {"env.id", "CartPole-v1"}, {"env.num_envs", "8"},     {"ppo.horizon", "32"},
        {"policy.core", "lstm"},   {"policy.hidden", "16"},   {"policy.core_size", "8"},
        {"policy.layers", "0"},
    };
    sk_config *cfg = sk_config_new();
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        sk_config_set(cfg, settings[i][0], settings[i][1]);
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    /* encoder (16 x 4 + 16), LSTM (4 x 8 x (16 + 8 + 2)), actor (2 x 8 + 2), critic (8 + 1) */
    assert_int_equal(sk_trainer_num_params(tr), 16 * 4 + 16 + 4 * 8 * (16 + 8 + 2) + 18 + 9);
    assert_int_equal(sk_trainer_batch_size(tr), 8 * 32);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

/* policy.log_std_init: a Gaussian policy's actor.log_std starts at the key's value in every
 * dimension (SB3's log_std_init), 0 without it; out of range is refused by name; a Discrete
 * policy does not read it, so the run's unused-key check names it. */
static void test_log_std_init(void **state) {
    (void)state;
    const sk_env_def *pendulum = sk_env_find("Pendulum-v1"), *cartpole = sk_env_find("CartPole-v1");
    assert_non_null(pendulum);
    assert_non_null(cartpole);
    const char *values[] = {NULL, "-2", "0.5"};
    const float want[] = {0.0f, -2.0f, 0.5f};
    for (int k = 0; k < 3; k++) {
        sk_config *cfg = sk_config_new();
        if (values[k]) sk_config_set(cfg, "policy.log_std_init", values[k]);
        sk_policy policy;
        assert_int_equal(sk_policy_configure(&policy, cfg, pendulum, NULL), SK_OK);
        assert_true(policy.log_std_tensor >= 0);
        float *params = calloc(policy.num_params, sizeof(float));
        uint64_t rng = 1;
        sk_policy_init_params(&policy, params, &rng);
        const sk_tensor_info *t = &policy.tensors[policy.log_std_tensor];
        for (int d = 0; d < t->rows * t->cols; d++) assert_float_equal(params[t->offset + d], want[k], 0.0);
        free(params);
        sk_config_free(cfg);
    }
    sk_config *bad = sk_config_new();
    sk_config_set(bad, "policy.log_std_init", "-30");
    sk_policy policy;
    assert_int_not_equal(sk_policy_configure(&policy, bad, pendulum, NULL), SK_OK);
    assert_non_null(strstr(sk_last_error(), "policy.log_std_init"));
    sk_config_free(bad);
    sk_config *discrete = sk_config_new();
    sk_config_set(discrete, "policy.log_std_init", "-1");
    assert_int_equal(sk_policy_configure(&policy, discrete, cartpole, NULL), SK_OK);
    assert_int_not_equal(sk_config_check_unused(discrete, "policy"), SK_OK);
    assert_non_null(strstr(sk_last_error(), "policy.log_std_init"));
    sk_config_free(discrete);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trainer_sizes),
        cmocka_unit_test(test_toy_core_trains),
        cmocka_unit_test(test_lstm_state_layout),
        cmocka_unit_test(test_log_std_init),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
