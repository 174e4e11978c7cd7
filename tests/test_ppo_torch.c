/* PPO's loss, gradients, gradient clipping and Adam against an independent
 * PyTorch implementation (tests/reference/ppo_reference.py, float64), for a
 * CartPole-shaped policy and for a two-head masked policy with a head that is
 * relevant only for some values of the first. */
#include "test_util.h"
#include "torch_fixture.h"

#include "nn/nn.h"
#include "policy/policy.h"
#include "train/ppo.h"

#include <math.h>

static int compare_params(const fixture *f, const sk_policy *policy, const float *values,
                          const char *prefix, double tol, double floor_abs) {
    return fixture_compare_params(f, policy, values, prefix, NULL, tol, floor_abs);
}

typedef struct setup {
    sk_policy policy;
    sk_policy_work work;
    float *params, *grads, *m, *v, *obs, *logp, *values, *returns, *adv;
    int32_t *actions;
    uint8_t *masks;
    int B, heads, mask_size;
    sk_ppo_loss_config config;
    sk_adam adam;
    float lr, max_grad_norm;
    bool norm_adv;
} setup;

static void build(setup *s, const fixture *f) {
    memset(s, 0, sizeof *s);
    sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = (int)scalar(f, "num_heads")};
    const record *sizes = get(f, "head_sizes"), *relevance = get(f, "relevance");
    s->mask_size = 0;
    for (int h = 0; h < space.num_heads; h++) {
        space.head_sizes[h] = (int)sizes->values[h];
        space.relevant_when[h] = (uint64_t)relevance->values[h];
        s->mask_size += space.head_sizes[h];
    }
    s->heads = space.num_heads;
    s->B = (int)scalar(f, "batch");
    assert_int_equal(sk_policy_init(&s->policy, (int)scalar(f, "obs_size"), &space, s->mask_size,
                                    (int)scalar(f, "hidden"), 2, SK_ACTIVATION_TANH),
                     SK_OK);
    assert_int_equal(sk_policy_work_alloc(&s->work, &s->policy, s->B), SK_OK);
    size_t P = s->policy.num_params, B = (size_t)s->B;
    s->params = calloc(P, sizeof(float));
    s->grads = calloc(P, sizeof(float));
    s->m = calloc(P, sizeof(float));
    s->v = calloc(P, sizeof(float));
    for (int t = 0; t < s->policy.num_tensors; t++) {
        char name[96];
        snprintf(name, sizeof name, "init.%s", s->policy.tensors[t].name);
        const record *r = get(f, name);
        for (int i = 0; i < r->count; i++)
            s->params[s->policy.tensors[t].offset + (size_t)i] = (float)r->values[i];
    }
    int O = s->policy.obs_size;
    s->obs = calloc(B * (size_t)O, sizeof(float));
    s->logp = calloc(B, sizeof(float));
    s->values = calloc(B, sizeof(float));
    s->returns = calloc(B, sizeof(float));
    s->adv = calloc(B, sizeof(float));
    s->actions = calloc(B * (size_t)s->heads, sizeof(int32_t));
    s->masks = calloc(B * (size_t)s->mask_size, 1);
    for (size_t i = 0; i < B * (size_t)O; i++) s->obs[i] = (float)get(f, "obs")->values[i];
    for (size_t i = 0; i < B * (size_t)s->heads; i++) s->actions[i] = (int32_t)get(f, "actions")->values[i];
    for (size_t i = 0; i < B * (size_t)s->mask_size; i++) s->masks[i] = get(f, "masks")->values[i] != 0.0;
    for (size_t i = 0; i < B; i++) {
        s->logp[i] = (float)get(f, "logprobs")->values[i];
        s->values[i] = (float)get(f, "values")->values[i];
        s->returns[i] = (float)get(f, "returns")->values[i];
        s->adv[i] = (float)get(f, "advantages")->values[i];
    }
    s->config = (sk_ppo_loss_config){(float)scalar(f, "clip_coef"), (float)scalar(f, "ent_coef"),
                                     (float)scalar(f, "vf_coef"), scalar(f, "clip_vloss") != 0.0};
    s->adam = (sk_adam){0.9f, 0.999f, (float)scalar(f, "adam_eps")};
    s->lr = (float)scalar(f, "lr");
    s->max_grad_norm = (float)scalar(f, "max_grad_norm");
    s->norm_adv = scalar(f, "norm_adv") != 0.0;
}

static void teardown(setup *s) {
    sk_policy_work_free(&s->work);
    void *all[] = {s->params, s->grads, s->m, s->v, s->obs, s->logp, s->values, s->returns, s->adv,
                   s->actions, s->masks};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

/* Gradient of the minibatch `rows` (indices into the batch), split into
 * `blocks` contiguous blocks as the trainer's workers split it, summed. */
static sk_ppo_loss_sums minibatch_grad(setup *s, const int *rows, int count, int blocks) {
    size_t P = s->policy.num_params;
    int O = s->policy.obs_size, H = s->heads, M = s->mask_size;
    float adv[64], obs[64 * 8], logp[64], ret[64], val[64], *block_grads = calloc(P, sizeof(float));
    int32_t actions[64 * 4];
    uint8_t masks[64 * 16];
    assert_true(count <= 64 && O <= 8 && H <= 4 && M <= 16);
    for (int r = 0; r < count; r++) adv[r] = s->adv[rows[r]];
    if (s->norm_adv) sk_normalize(adv, adv, count);
    memset(s->grads, 0, P * sizeof(float));
    sk_ppo_loss_sums total = {0};
    for (int b = 0; b < blocks; b++) {
        int lo = count * b / blocks, hi = count * (b + 1) / blocks;
        for (int r = lo; r < hi; r++) {
            int k = rows[r];
            memcpy(obs + (r - lo) * O, s->obs + k * O, (size_t)O * sizeof(float));
            memcpy(actions + (r - lo) * H, s->actions + k * H, (size_t)H * sizeof(int32_t));
            memcpy(masks + (r - lo) * M, s->masks + k * M, (size_t)M);
            logp[r - lo] = s->logp[k];
            ret[r - lo] = s->returns[k];
            val[r - lo] = s->values[k];
        }
        sk_ppo_rows block = {.rows = hi - lo, .obs = obs, .actions = actions, .masks = masks,
                             .old_logp = logp, .advantages = adv + lo, .returns = ret,
                             .old_values = val};
        memset(block_grads, 0, P * sizeof(float));
        sk_ppo_loss_grad(&s->policy, s->params, block_grads, &s->work, &block, 1.0f / (float)count,
                         &s->config, &total);
        for (size_t p = 0; p < P; p++) s->grads[p] += block_grads[p];
    }
    free(block_grads);
    return total;
}

static void run_case(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/%s.txt", SKINNER_SOURCE_DIR, name);
    fixture f;
    load_fixture(&f, path);
    setup s;
    build(&s, &f);
    int rows[64];
    for (int i = 0; i < s.B; i++) rows[i] = i;

    /* A) one minibatch holding the whole batch */
    sk_ppo_loss_sums sums = minibatch_grad(&s, rows, s.B, 1);
    double B = s.B;
    double pg = sums.policy_loss / B, vl = sums.value_loss / B, ent = sums.entropy / B;
    double loss = pg - s.config.ent_coef * ent + s.config.vf_coef * vl;
    struct { const char *name; double got; } scalars[] = {
        {"pg_loss", pg}, {"v_loss", vl}, {"entropy", ent}, {"approx_kl", sums.approx_kl / B},
        {"clipfrac", sums.clip_fraction / B}, {"loss", loss},
    };
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        double want = scalar(&f, scalars[i].name);
        double err = test_rel_err(scalars[i].got, want, 1e-3);
        print_message("%s %s: skinner %.9g, torch %.9g\n", name, scalars[i].name, scalars[i].got, want);
        assert_true(err < 1e-4);
    }
    size_t P = s.policy.num_params;
    assert_int_equal(compare_params(&f, &s.policy, s.grads, "grad", 1e-3, 1e-4), 0);
    double norm = sk_clip_grad_norm(s.grads, P, s.max_grad_norm);
    assert_true(test_rel_err(norm, scalar(&f, "grad_norm"), 1e-6) < 1e-4);
    sk_adam_update(s.params, s.grads, s.m, s.v, P, s.lr, s.adam, 1);
    assert_int_equal(compare_params(&f, &s.policy, s.params, "step1", 1e-4, 1e-3), 0);

    /* B) a full update: 2 epochs x 2 minibatches in the recorded order, each
     * minibatch split in two blocks as two workers would */
    teardown(&s);
    build(&s, &f);
    int epochs = (int)scalar(&f, "update_epochs"), minibatches = (int)scalar(&f, "num_minibatches");
    int mb = s.B / minibatches;
    int64_t step = 0;
    for (int e = 0; e < epochs; e++) {
        char perm_name[16];
        snprintf(perm_name, sizeof perm_name, "perm.%d", e);
        const record *perm = get(&f, perm_name);
        for (int m = 0; m < minibatches; m++) {
            for (int r = 0; r < mb; r++) rows[r] = (int)perm->values[m * mb + r];
            minibatch_grad(&s, rows, mb, 2);
            sk_clip_grad_norm(s.grads, P, s.max_grad_norm);
            sk_adam_update(s.params, s.grads, s.m, s.v, P, s.lr, s.adam, ++step);
        }
    }
    assert_int_equal(compare_params(&f, &s.policy, s.params, "final", 1e-4, 1e-3), 0);
    teardown(&s);
    free_fixture(&f);
}

static void test_cartpole_shaped(void **state) {
    (void)state;
    run_case("ppo_case1");
}

static void test_factored_masked(void **state) {
    (void)state;
    run_case("ppo_case2");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cartpole_shaped),
        cmocka_unit_test(test_factored_masked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
