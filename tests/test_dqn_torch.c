/* One DQN update against an independent PyTorch implementation
 * (tests/reference/dqn_reference.py, float64): the batch drawn from a full replay ring,
 * one-step and 3-step returns (ending at terminations, bootstrapping truncations from
 * their final observations), masked max and double DQN targets, the MSE loss, its
 * gradients and the weights after one Adam step. Also the target network's update (hard
 * copy, Polyak), when the off-policy loop's gradient steps and target updates fall, and
 * the linear epsilon schedule against CleanRL's formula worked by hand. */
#include "test_util.h"
#include "torch_fixture.h"

#include "nn/nn.h"
#include "policy/policy.h"
#include "train/dqn.h"
#include "train/offpolicy.h"
#include "train/replay.h"

#include <math.h>

static int compare(const fixture *f, const sk_policy *policy, const float *values,
                   const char *prefix, double tol, double floor_abs) {
    return fixture_compare_params(f, policy, values, prefix, "actor.", tol, floor_abs); /* the Q net */
}

static void load_params(const fixture *f, const sk_policy *policy, float *params,
                        const char *prefix) {
    for (int t = 0; t < policy->num_tensors; t++) {
        if (strncmp(policy->tensors[t].name, "actor.", 6) != 0) continue;
        char name[96];
        snprintf(name, sizeof name, "%s.%s", prefix, policy->tensors[t].name);
        const record *r = get(f, name);
        for (int i = 0; i < r->count; i++)
            params[policy->tensors[t].offset + (size_t)i] = (float)r->values[i];
    }
}

static void run_case(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/%s.txt", SKINNER_SOURCE_DIR, name);
    fixture f;
    load_fixture(&f, path);
    int O = (int)scalar(&f, "obs_size"), A = (int)scalar(&f, "actions"), B = (int)scalar(&f, "batch");
    int n_step = (int)scalar(&f, "n_step");
    float gamma = (float)scalar(&f, "gamma");
    sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {A}};
    sk_policy policy;
    assert_int_equal(sk_policy_init(&policy, O, &space, A, (int)scalar(&f, "hidden"), 2,
                                    SK_ACTIVATION_RELU),
                     SK_OK);
    sk_policy_work work;
    assert_int_equal(sk_policy_work_alloc(&work, &policy, B), SK_OK);
    size_t P = policy.num_params;
    float *params = calloc(P, sizeof(float)), *target = calloc(P, sizeof(float));
    float *grads = calloc(P, sizeof(float)), *m = calloc(P, sizeof(float));
    float *v = calloc(P, sizeof(float));
    load_params(&f, &policy, params, "init");
    load_params(&f, &policy, target, "target");

    /* the replay ring as the reference holds it */
    sk_replay rb;
    sk_replay_spec spec = {.capacity = (int64_t)scalar(&f, "capacity"),
                           .streams = (int)scalar(&f, "streams"), .obs_size = O,
                           .num_heads = 1, .mask_size = A};
    assert_int_equal(sk_replay_create(&rb, &spec), SK_OK);
    size_t C = (size_t)spec.capacity;
    const record *obs = get(&f, "replay.obs"), *next_obs = get(&f, "replay.next_obs");
    for (size_t k = 0; k < C * (size_t)O; k++) {
        rb.obs[k] = (float)obs->values[k];
        rb.next_obs[k] = (float)next_obs->values[k];
    }
    for (size_t k = 0; k < C; k++) {
        rb.actions[k] = (int32_t)get(&f, "replay.actions")->values[k];
        rb.rewards[k] = (float)get(&f, "replay.rewards")->values[k];
        rb.terminated[k] = (uint8_t)get(&f, "replay.terminated")->values[k];
        rb.truncated[k] = (uint8_t)get(&f, "replay.truncated")->values[k];
    }
    for (size_t k = 0; k < C * (size_t)A; k++)
        rb.next_masks[k] = (uint8_t)get(&f, "replay.next_masks")->values[k];
    rb.count = spec.capacity;
    rb.pos = (int64_t)scalar(&f, "pos");

    /* the batch of the reference's slots, gathered as dqn.c's sample_batch does */
    const record *slots = get(&f, "slots");
    assert_int_equal(slots->count, B);
    float *batch_obs = calloc((size_t)B * (size_t)O, sizeof(float));
    float *batch_next = calloc((size_t)B * (size_t)O, sizeof(float));
    float *returns = calloc((size_t)B, sizeof(float)), *discounts = calloc((size_t)B, sizeof(float));
    int32_t *actions = calloc((size_t)B, sizeof(int32_t));
    uint8_t *masks = calloc((size_t)B * (size_t)A, 1);
    float *q_next = calloc((size_t)B * (size_t)A, sizeof(float));
    int cut = 0;
    for (int b = 0; b < B; b++) {
        int64_t slot = (int64_t)slots->values[b], last;
        returns[b] = sk_replay_nstep(&rb, slot, n_step, gamma, &last, &discounts[b]);
        cut += discounts[b] < powf(gamma, (float)n_step) - 1e-6f; /* ended early */
        memcpy(batch_obs + (size_t)b * O, rb.obs + (size_t)slot * O, (size_t)O * sizeof(float));
        memcpy(batch_next + (size_t)b * O, rb.next_obs + (size_t)last * O, (size_t)O * sizeof(float));
        memcpy(masks + (size_t)b * A, rb.next_masks + (size_t)last * A, (size_t)A);
        actions[b] = rb.actions[slot];
    }
    print_message("%s: %d of %d returns ended before %d steps\n", name, cut, B, n_step);
    sk_dqn_batch batch = {B, batch_obs, batch_next, actions, returns, discounts, masks};
    double q_taken = NAN;
    double loss = sk_dqn_loss_grad(&policy, params, target, grads, &batch,
                                   scalar(&f, "double") != 0.0, q_next, &work, &q_taken);
    print_message("%s loss: skinner %.9g, torch %.9g\n", name, loss, scalar(&f, "loss"));
    assert_true(test_rel_err(loss, scalar(&f, "loss"), 1e-6) < 1e-5);
    print_message("%s mean Q(s, a): skinner %.9g, torch %.9g\n", name, q_taken, scalar(&f, "q_taken"));
    assert_true(test_rel_err(q_taken, scalar(&f, "q_taken"), 1e-6) < 1e-5);
    assert_int_equal(compare(&f, &policy, grads, "grad", 1e-4, 1e-5), 0);
    sk_adam adam = {0.9f, 0.999f, (float)scalar(&f, "adam_eps")};
    sk_adam_update(params, grads, m, v, P, (float)scalar(&f, "lr"), adam, 1);
    /* new weights within 1e-5 (absolute below 1, relative above) */
    assert_int_equal(compare(&f, &policy, params, "new", 1e-5, 1.0), 0);
    sk_replay_free(&rb);
    sk_policy_work_free(&work);
    free(params), free(target), free(grads), free(m), free(v);
    free(batch_obs), free(batch_next), free(returns), free(discounts), free(actions);
    free(masks), free(q_next);
    free_fixture(&f);
}

static void test_plain_update(void **state) {
    (void)state;
    run_case("dqn_plain");
}
static void test_double_update(void **state) {
    (void)state;
    run_case("dqn_double");
}
static void test_nstep_update(void **state) {
    (void)state;
    run_case("dqn_nstep");
}

static void test_target_update(void **state) {
    (void)state;
    float online[3] = {1.0f, -2.0f, 4.0f}, target[3] = {0.0f, 0.0f, 8.0f};
    sk_target_update(target, online, 3, 0.25); /* 0.25 x online + 0.75 x target */
    assert_float_equal(target[0], 0.25f, 1e-7);
    assert_float_equal(target[1], -0.5f, 1e-7);
    assert_float_equal(target[2], 7.0f, 1e-6);
    sk_target_update(target, online, 3, 1.0); /* a copy */
    assert_memory_equal(target, online, sizeof online);

    /* CleanRL's counting: with 16 envs and a step every 10, an iteration of T = 5 steps a
     * env is 80 env steps, 8 gradient steps at env steps 10, 20, .., 80 of it; learning
     * from past step 100, a target update where a multiple of 500 falls */
    sk_trainer *tr = calloc(1, sizeof *tr); /* only progress.steps is read */
    sk_offpolicy op = {.learning_starts = 100, .train_frequency = 10, .target_frequency = 500,
                       .steps_per_iteration = 8, .gradient_steps_per_round = 1};
    assert_int_equal(sk_offpolicy_horizon(10, 16), 5);
    assert_int_equal(sk_offpolicy_horizon(10, 1), 10);
    assert_int_equal(sk_offpolicy_horizon(1, 1), 2);
    int learned = 0, targets = 0;
    int64_t target_steps[8], n_targets = 0;
    for (int64_t end = 80; end <= 1040; end += 80) {
        tr->progress.steps = end;
        for (int u = 0; u < 8; u++) {
            bool learn, update_target;
            int64_t env_step;
            sk_offpolicy_when(tr, &op, u, &learn, &update_target, &env_step);
            int64_t step = end - 80 + 10 * (u + 1);
            assert_int_equal(env_step, step);
            assert_int_equal(learn, step > 100);
            learned += learn;
            if (update_target) target_steps[n_targets++] = step;
            targets += update_target;
        }
    }
    assert_int_equal(learned, (1040 - 100) / 10);
    assert_int_equal(targets, 2);
    assert_int_equal(target_steps[0], 500);
    assert_int_equal(target_steps[1], 1000);
    free(tr);
}

static void test_epsilon_schedule(void **state) {
    (void)state;
    /* CleanRL dqn.py: from 1 to 0.05 over half of 500k steps */
    double duration = 0.5 * 500000;
    assert_float_equal(sk_linear_schedule(1.0, 0.05, duration, 0), 1.0, 1e-12);
    assert_float_equal(sk_linear_schedule(1.0, 0.05, duration, 125000), 0.525, 1e-12);
    assert_float_equal(sk_linear_schedule(1.0, 0.05, duration, 250000), 0.05, 1e-12);
    assert_float_equal(sk_linear_schedule(1.0, 0.05, duration, 400000), 0.05, 1e-12);
}

static void test_masked_argmax(void **state) {
    (void)state;
    float q[4] = {3.0f, 1.0f, 2.0f, 5.0f};
    uint8_t mask[4] = {0, 1, 1, 0};
    assert_int_equal(sk_dqn_argmax(q, NULL, 4), 3);
    assert_int_equal(sk_dqn_argmax(q, mask, 4), 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_update),   cmocka_unit_test(test_double_update),
        cmocka_unit_test(test_nstep_update),   cmocka_unit_test(test_target_update),
        cmocka_unit_test(test_epsilon_schedule), cmocka_unit_test(test_masked_argmax),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
