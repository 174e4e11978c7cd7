/* SAC's updates against an independent PyTorch implementation of CleanRL's
 * sac_continuous_action (tests/reference/sac_reference.py, float64): from the same weights,
 * batches and noise, the losses, gradients, new weights, targets and alpha of whole global
 * steps (critic, delayed actor and alpha steps, Polyak targets), and the actor's sampled and
 * deterministic actions with their log-probabilities. */
#include "test_util.h"
#include "torch_fixture.h"

#include "core/rng.h"
#include "nn/gemm_small.h"
#include "skinner/pool.h"
#include "train/sac_core.h"

#include <math.h>

enum { MAX_FLOATS = 4096 };

static float *floats(const fixture *f, const char *name, int expected_count) {
    const record *r = get(f, name);
    if (expected_count >= 0) assert_int_equal(r->count, expected_count);
    float *out = malloc((size_t)(r->count > 0 ? r->count : 1) * sizeof(float));
    for (int i = 0; i < r->count; i++) out[i] = (float)r->values[i];
    return out;
}

/* Compares n values with record name; prints the first mismatches and the worst error. */
static int compare(const fixture *f, const char *name, const float *got, int n, double tol,
                   double floor_abs, double *worst_out) {
    const record *r = get(f, name);
    assert_int_equal(r->count, n);
    int failures = 0;
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        double err = test_rel_err(got[i], r->values[i], floor_abs);
        if (!(err <= tol)) {
            if (failures++ < 5)
                print_error("%s[%d]: skinner %.9g, torch %.9g\n", name, i, (double)got[i],
                            r->values[i]);
            err = isnan(err) ? INFINITY : err;
        }
        if (err > worst) worst = err;
    }
    if (worst_out && worst > *worst_out) *worst_out = worst;
    return failures;
}

static sk_sac *build(const fixture *f, int row_blocks) {
    int act_dim = (int)scalar(f, "act_dim");
    float *low = floats(f, "act_low", act_dim), *high = floats(f, "act_high", act_dim);
    sk_sac_config config = sk_sac_defaults((int)scalar(f, "obs_size"), act_dim, low, high);
    free(low), free(high);
    config.hidden = (int)scalar(f, "hidden");
    config.layers = (int)scalar(f, "layers");
    config.max_rows = (int)scalar(f, "batch");
    config.row_blocks = row_blocks;
    config.policy_lr = (float)scalar(f, "policy_lr");
    config.q_lr = (float)scalar(f, "q_lr");
    config.alpha_lr = (float)scalar(f, "alpha_lr");
    config.gamma = (float)scalar(f, "gamma");
    config.tau = (float)scalar(f, "tau");
    config.policy_frequency = (int)scalar(f, "policy_frequency");
    config.target_frequency = (int)scalar(f, "target_frequency");
    config.autotune = scalar(f, "autotune") != 0.0;
    if (!config.autotune) config.alpha = (float)scalar(f, "alpha");
    config.log_alpha_init = (float)scalar(f, "log_alpha_init");
    config.target_entropy = (float)scalar(f, "target_entropy");
    sk_sac *sac;
    assert_int_equal(sk_sac_create(&sac, &config), SK_OK);
    /* every network from the fixture's initial weights (targets differ from the Q networks) */
    char name[96];
    for (int i = 0; i < sk_sac_num_arrays(sac); i++) {
        const sk_sac_array *a = &sk_sac_arrays(sac)[i];
        if (strncmp(a->name, "adam.", 5) == 0 || strncmp(a->name, "log_alpha", 9) == 0) continue;
        snprintf(name, sizeof name, "init.%s", a->name);
        float *values = floats(f, name, a->rows * a->cols);
        memcpy(a->data, values, (size_t)(a->rows * a->cols) * sizeof(float));
        free(values);
    }
    return sac;
}

static void check_act(const fixture *f, sk_sac *sac) {
    int B = (int)scalar(f, "batch"), A = sk_sac_get_config(sac)->act_dim;
    int O = sk_sac_get_config(sac)->obs_size;
    float *obs = floats(f, "act.obs", B * O), *noise = floats(f, "act.noise", B * A);
    float actions[MAX_FLOATS], logp[MAX_FLOATS];
    double worst = 0.0;
    sk_sac_act(sac, obs, B, noise, false, actions, logp);
    int failures = compare(f, "act.actions", actions, B * A, 1e-5, 1e-3, &worst);
    failures += compare(f, "act.logp", logp, B, 1e-5, 1e-3, &worst);
    sk_sac_act(sac, obs, B, NULL, true, actions, logp);
    failures += compare(f, "act.mean_actions", actions, B * A, 1e-5, 1e-3, &worst);
    failures += compare(f, "act.mean_logp", logp, B, 1e-5, 1e-3, &worst);
    print_message("act: worst relative error %.2e\n", worst);
    assert_int_equal(failures, 0);
    free(obs), free(noise);
}

static void run_case(const char *case_name, int row_blocks) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/%s.txt", SKINNER_SOURCE_DIR, case_name);
    fixture f;
    load_fixture(&f, path);
    sk_sac *sac = build(&f, row_blocks);
    print_message("%s with %d row blocks\n", case_name, row_blocks);
    check_act(&f, sac);
    const sk_sac_config *config = sk_sac_get_config(sac);
    int B = (int)scalar(&f, "batch"), A = config->act_dim, O = config->obs_size;
    int pf = config->policy_frequency;
    const record *steps = get(&f, "steps");
    for (int s = 0; s < steps->count; s++) {
        int64_t global_step = (int64_t)steps->values[s];
        char name[96];
#define FIELD(field, count) (snprintf(name, sizeof name, "s%d.%s", s, field), floats(&f, name, count))
        float *obs = FIELD("obs", B * O), *actions = FIELD("actions", B * A);
        float *rewards = FIELD("rewards", B), *terminated = FIELD("terminated", B);
        float *next_obs = FIELD("next_obs", B * O), *next_noise = FIELD("noise.next", B * A);
        float *actor_noise = FIELD("noise.actor", pf * B * A);
        float *alpha_noise = FIELD("noise.alpha", pf * B * A);
#undef FIELD
        sk_sac_batch batch = {B, obs, actions, rewards, terminated, next_obs};
        sk_sac_noise noise = {next_noise, actor_noise, config->autotune ? alpha_noise : NULL};
        sk_sac_losses losses = {0};
        sk_sac_update(sac, &batch, &noise, global_step, &losses);

        /* the losses, as the reference logged them */
        int failures = 0;
        double worst_loss = 0.0, worst_grad = 0.0, worst_param = 0.0;
        struct { const char *name; float got; bool actor; } scalars[] = {
            {"qf1_loss", losses.qf1_loss, false}, {"qf2_loss", losses.qf2_loss, false},
            {"qf_loss", losses.qf_loss, false},   {"qf1_value", losses.qf1_value, false},
            {"qf2_value", losses.qf2_value, false}, {"actor_loss", losses.actor_loss, true},
            {"entropy", losses.entropy, true},    {"alpha", losses.alpha, true},
            {"alpha_loss", losses.alpha_loss, true},
        };
        bool actor_due = global_step % pf == 0;
        assert_int_equal(losses.actor_updated, actor_due);
        for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
            if (scalars[i].actor && !actor_due) continue;
            if (strcmp(scalars[i].name, "alpha_loss") == 0 && !config->autotune) continue;
            snprintf(name, sizeof name, "s%d.%s", s, scalars[i].name);
            print_message("%s step %lld %s: skinner %.9g, torch %.9g\n", case_name,
                          (long long)global_step, scalars[i].name, (double)scalars[i].got,
                          scalar(&f, name));
            failures += compare(&f, name, &scalars[i].got, 1, 1e-5, 1e-3, &worst_loss);
        }
        /* gradients (the critic step's, the last actor step's) and every array after the step */
        for (int i = 0; i < sk_sac_num_arrays(sac); i++) {
            const sk_sac_array *a = &sk_sac_arrays(sac)[i];
            int n = a->rows * a->cols;
            bool actor = strncmp(a->name, "actor.", 6) == 0;
            if (strncmp(a->name, "adam.", 5) == 0 || strncmp(a->name, "log_alpha.", 10) == 0)
                continue;
            if (a->grad && (!actor || actor_due)) {
                snprintf(name, sizeof name, "s%d.grad.%s", s, a->name);
                failures += compare(&f, name, a->grad, n, 1e-4, 1e-3, &worst_grad);
            }
            snprintf(name, sizeof name, "s%d.%s", s, a->name);
            failures += compare(&f, name, a->data, n, 1e-5, 1e-3, &worst_param);
        }
        print_message("%s step %lld: worst relative errors: losses %.2e, gradients %.2e, "
                      "weights, targets and log_alpha %.2e\n",
                      case_name, (long long)global_step, worst_loss, worst_grad, worst_param);
        assert_int_equal(failures, 0);
        float *all[] = {obs, actions, rewards, terminated, next_obs, next_noise, actor_noise, alpha_noise};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
    }
    sk_sac_destroy(sac);
    free_fixture(&f);
}

static void test_learned_alpha(void **state) {
    (void)state;
    for (int blocks = 1; blocks <= 3; blocks++) run_case("sac_case1", blocks);
}

static void test_fixed_alpha_one_layer(void **state) {
    (void)state;
    run_case("sac_case2", 2);
}

static void pool_run(void *pool, sk_parallel_job job, void *ctx) { sk_pool_run(pool, job, ctx); }

/* The same updates on one thread and on two (sk_sac_set_parallel) leave the same bits: the
 * blocks' gradients are summed in block order whoever computed them. */
/* A batch of random transitions: normal observations, actions uniform in [-0.5, 0.5), normal
 * rewards, every `every`-th row terminal. */
typedef struct random_batch {
    float *obs, *next_obs, *actions, *rewards, *terminated;
    sk_sac_batch batch;
} random_batch;

static random_batch make_batch(uint64_t seed, int rows, int obs_size, int act_dim, int every) {
    random_batch b;
    uint64_t rng = sk_rng_seed(seed, 0);
    size_t O = (size_t)rows * (size_t)obs_size, A = (size_t)rows * (size_t)act_dim;
    b.obs = malloc(O * sizeof(float)), b.next_obs = malloc(O * sizeof(float));
    b.actions = malloc(A * sizeof(float));
    b.rewards = malloc((size_t)rows * sizeof(float)), b.terminated = malloc((size_t)rows * sizeof(float));
    assert_true(b.obs && b.next_obs && b.actions && b.rewards && b.terminated);
    for (size_t i = 0; i < O; i++) b.obs[i] = (float)sk_rng_normal(&rng);
    for (size_t i = 0; i < O; i++) b.next_obs[i] = (float)sk_rng_normal(&rng);
    for (size_t i = 0; i < A; i++) b.actions[i] = sk_rng_float(&rng) - 0.5f;
    for (int i = 0; i < rows; i++)
        b.rewards[i] = (float)sk_rng_normal(&rng), b.terminated[i] = (float)(i % every == 0);
    b.batch = (sk_sac_batch){rows, b.obs, b.actions, b.rewards, b.terminated, b.next_obs};
    return b;
}

static void free_batch(random_batch *b) {
    free(b->obs), free(b->next_obs), free(b->actions), free(b->rewards), free(b->terminated);
}

static void test_threads_bit_identical(void **state) {
    (void)state;
    enum { ROWS = 40, OBS = 5, ACT = 3 };
    float low[ACT] = {-1, -1, -2}, high[ACT] = {1, 2, 2};
    sk_sac_config config = sk_sac_defaults(OBS, ACT, low, high);
    config.hidden = 32, config.max_rows = ROWS, config.row_blocks = 4;
    sk_sac *sacs[2];
    sk_pool *pool;
    assert_int_equal(sk_pool_create(&pool, 2), SK_OK);
    sk_parallel parallel = {.ctx = pool, .run = pool_run};
    for (int i = 0; i < 2; i++) assert_int_equal(sk_sac_create(&sacs[i], &config), SK_OK);
    sk_sac_set_parallel(sacs[1], &parallel);
    random_batch data = make_batch(9, ROWS, OBS, ACT, 5);
    for (int i = 0; i < 2; i++) {
        uint64_t rng = sk_rng_seed(10, 0);
        sk_sac_losses losses;
        for (int64_t step = 1; step <= 4; step++) sk_sac_update_rng(sacs[i], &data.batch, step, &rng, &losses);
    }
    free_batch(&data);
    for (int a = 0; a < sk_sac_num_arrays(sacs[0]); a++) {
        const sk_sac_array *x = &sk_sac_arrays(sacs[0])[a], *y = &sk_sac_arrays(sacs[1])[a];
        size_t bytes = (size_t)(x->rows * x->cols) * sizeof(float);
        if (memcmp(x->data, y->data, bytes) != 0) fail_msg("%s differs between 1 and 2 threads", x->name);
    }
    for (int i = 0; i < 2; i++) sk_sac_destroy(sacs[i]);
    sk_pool_destroy(pool);
}

/* The forwards read W^T copies made once after the weights change (src/train/sac_internal.h).
 * Two learners at CleanRL's sizes take the same updates, acting between them as a rollout does;
 * one is made to copy every network again before each (sk_sac_arrays marks them all stale), the
 * other keeps its copies: every action and array must agree bit for bit, and where the level's
 * forward reads W^T the kept learner's forwards never transpose for themselves. A weight written
 * through sk_sac_arrays between updates is seen by the next act. */
static void test_weight_copies_follow_the_weights(void **state) {
    (void)state;
    enum { ROWS = 64, OBS = 17, ACT = 6, STEPS = 7 };
    float low[ACT], high[ACT];
    for (int d = 0; d < ACT; d++) low[d] = -1.0f, high[d] = 1.0f + (float)d;
    sk_sac_config config = sk_sac_defaults(OBS, ACT, low, high);
    config.max_rows = ROWS;
    sk_sac *sacs[2];
    sk_pool *pool;
    assert_int_equal(sk_pool_create(&pool, 2), SK_OK);
    sk_parallel parallel = sk_pool_parallel(pool);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sk_sac_create(&sacs[i], &config), SK_OK);
        sk_sac_set_parallel(sacs[i], &parallel);
    }
    random_batch data = make_batch(12, ROWS, OBS, ACT, 7);
    static float obs[ROWS * OBS], noise[ROWS * ACT];
    memcpy(obs, data.obs, sizeof obs);
    uint64_t noise_rng = sk_rng_seed(16, 0);
    for (int i = 0; i < ROWS * ACT; i++) noise[i] = (float)sk_rng_normal(&noise_rng);
    uint64_t rng[2] = {sk_rng_seed(13, 0), sk_rng_seed(13, 0)};
    bool copies = sk_gemm_small_forward_transposes(256, 256);
    long long transposes = 0;
    for (int64_t step = 1; step <= STEPS; step++) {
        static float acted[2][ROWS * ACT];
        for (int i = 0; i < 2; i++) {
            if (i == 0) (void)sk_sac_arrays(sacs[0]);
            long long before = sk_gemm_small_transposes();
            sk_sac_act(sacs[i], obs, 3, noise, false, acted[i], NULL);
            sk_sac_update_rng(sacs[i], &data.batch, step, &rng[i], NULL);
            if (i == 1) transposes += sk_gemm_small_transposes() - before;
        }
        if (memcmp(acted[0], acted[1], sizeof acted[0]) != 0)
            fail_msg("step %lld: the actions differ with the copies kept", (long long)step);
    }
    for (int a = 0; a < sk_sac_num_arrays(sacs[0]); a++) {
        const sk_sac_array *x = &sk_sac_arrays(sacs[0])[a], *y = &sk_sac_arrays(sacs[1])[a];
        size_t bytes = (size_t)(x->rows * x->cols) * sizeof(float);
        if (memcmp(x->data, y->data, bytes) != 0) fail_msg("%s differs with the copies kept", x->name);
    }
    print_message("W^T copies at this level: %s; forwards that transposed: %lld\n",
                  copies ? "yes" : "no", transposes);
    if (copies) assert_true(transposes == 0);
    /* the first layer's weights zeroed, its copy made before: every row's hidden state, so its
     * action, is the same, up to rounding: at the baseline level OpenBLAS may sum a block's
     * edge rows in another order (1 ulp on an AMD Zen 5), where a stale copy of the weights
     * would leave the rows' actions as far apart as their observations */
    float mean_actions[ROWS * ACT];
    sk_sac_act(sacs[1], obs, ROWS, NULL, true, mean_actions, NULL);
    const sk_sac_array *first = sk_sac_find_array(sacs[1], "actor.0.weight");
    assert_non_null(first);
    memset(first->data, 0, (size_t)(first->rows * first->cols) * sizeof(float));
    sk_sac_act(sacs[1], obs, ROWS, NULL, true, mean_actions, NULL);
    for (int i = 1; i < ROWS; i++)
        for (int d = 0; d < ACT; d++)
            if (fabsf(mean_actions[i * ACT + d] - mean_actions[d]) > 1e-5f * (1.0f + fabsf(mean_actions[d])))
                fail_msg("row %d's action %d is %g, row 0's %g: the zeroed weights were not read", i,
                         d, (double)mean_actions[i * ACT + d], (double)mean_actions[d]);
    free_batch(&data);
    for (int i = 0; i < 2; i++) sk_sac_destroy(sacs[i]);
    sk_pool_destroy(pool);
}

/* sk_sac_update_rng draws its noise in the critic's row blocks, each skipping to its own rows:
 * the same numbers as the documented serial order (next's values, then each actor step's
 * actor and alpha values, sk_rng_normal each), which sk_sac_update is handed here; the rng
 * ends where the serial draws leave it. Both update kinds (with and without actor steps). */
static void test_update_rng_draws_in_order(void **state) {
    (void)state;
    enum { ROWS = 37, OBS = 4, ACT = 3, STEPS = 4 };
    float low[ACT] = {-1, -2, -1}, high[ACT] = {1, 2, 3};
    sk_sac_config config = sk_sac_defaults(OBS, ACT, low, high);
    config.hidden = 16, config.max_rows = ROWS, config.row_blocks = 3;
    sk_sac *sacs[2];
    for (int i = 0; i < 2; i++) assert_int_equal(sk_sac_create(&sacs[i], &config), SK_OK);
    random_batch data = make_batch(14, ROWS, OBS, ACT, 4);
    enum { SLICE = ROWS * ACT };
    static float next[SLICE], actor[2][SLICE], alpha[2][SLICE];
    uint64_t drawn = sk_rng_seed(15, 0), serial = drawn;
    for (int64_t step = 1; step <= STEPS; step++) {
        sk_sac_update_rng(sacs[0], &data.batch, step, &drawn, NULL);
        for (int i = 0; i < SLICE; i++) next[i] = (float)sk_rng_normal(&serial);
        if (step % config.policy_frequency == 0)
            for (int k = 0; k < config.policy_frequency; k++) {
                for (int i = 0; i < SLICE; i++) actor[k][i] = (float)sk_rng_normal(&serial);
                for (int i = 0; i < SLICE; i++) alpha[k][i] = (float)sk_rng_normal(&serial);
            }
        sk_sac_noise noise = {next, actor[0], alpha[0]};
        sk_sac_update(sacs[1], &data.batch, &noise, step, NULL);
        assert_true(drawn == serial);
    }
    for (int a = 0; a < sk_sac_num_arrays(sacs[0]); a++) {
        const sk_sac_array *x = &sk_sac_arrays(sacs[0])[a], *y = &sk_sac_arrays(sacs[1])[a];
        size_t bytes = (size_t)(x->rows * x->cols) * sizeof(float);
        if (memcmp(x->data, y->data, bytes) != 0) fail_msg("%s differs from the serial draws'", x->name);
    }
    free_batch(&data);
    for (int i = 0; i < 2; i++) sk_sac_destroy(sacs[i]);
}

/* A config out of range is refused with a message naming the field. */
static void test_bad_config(void **state) {
    (void)state;
    float low[1] = {1.0f}, high[1] = {-1.0f};
    sk_sac_config config = sk_sac_defaults(3, 1, low, high);
    sk_sac *sac = (sk_sac *)1;
    assert_int_equal(sk_sac_create(&sac, &config), SK_ERR_INVALID);
    assert_null(sac);
    assert_non_null(strstr(sk_last_error(), "bounds"));
    high[0] = 2.0f;
    config = sk_sac_defaults(3, 1, low, high);
    config.tau = 0.0f;
    assert_int_equal(sk_sac_create(&sac, &config), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "tau"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_learned_alpha),
        cmocka_unit_test(test_fixed_alpha_one_layer),
        cmocka_unit_test(test_threads_bit_identical),
        cmocka_unit_test(test_weight_copies_follow_the_weights),
        cmocka_unit_test(test_update_rng_draws_in_order),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
