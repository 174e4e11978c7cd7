/* sk_vec: stepping over worker slices gives bit for bit what one thread and
 * what the env table called directly over the whole range give, final
 * observations and episode logs included; bad sizes and out-of-range state
 * arrays are refused with messages that say what was expected. */
#include "test_util.h"

#include "skinner/vec.h"

#define NUM_ENVS 37 /* odd: the slices of 2 workers differ in size */
#define STEPS 1200  /* past CartPole's 500-step limit: truncations as well as terminations */
#define SEED 5

/* The reference: the env table on buffers of its own, one range, one thread. */
typedef struct reference {
    const sk_env_def *env;
    void *state;
    sk_env_io io;
    float *obs, *final_obs, *rewards, *episode_log;
    int32_t *actions;
    uint8_t *terminated, *truncated;
} reference;

static void reference_open(reference *r, const sk_env_def *env) {
    memset(r, 0, sizeof *r);
    r->env = env;
    size_t n = NUM_ENVS, obs = (size_t)env->obs_size;
    r->obs = sk_alloc(n * obs * sizeof(float));
    r->final_obs = sk_alloc(n * obs * sizeof(float));
    r->rewards = sk_alloc(n * sizeof(float));
    r->episode_log = sk_alloc(n * (size_t)env->num_log_fields * sizeof(float));
    r->actions = sk_alloc(n * sizeof(int32_t));
    r->terminated = sk_alloc(n);
    r->truncated = sk_alloc(n);
    assert_true(r->obs && r->final_obs && r->rewards && r->episode_log && r->actions &&
                r->terminated && r->truncated);
    r->io = (sk_env_io){.obs = r->obs, .final_obs = r->final_obs, .actions = r->actions,
                        .rewards = r->rewards, .terminated = r->terminated,
                        .truncated = r->truncated, .episode_log = r->episode_log};
    sk_config *defaults = sk_config_new();
    assert_non_null(defaults);
    assert_int_equal(env->create(&r->state, NUM_ENVS, defaults), SK_OK);
    sk_config_free(defaults);
    env->reset(r->state, &r->io, 0, NUM_ENVS, SEED);
}

static void reference_close(reference *r) {
    r->env->destroy(r->state);
    void *all[] = {r->obs, r->final_obs, r->rewards, r->episode_log, r->actions, r->terminated,
                   r->truncated};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) sk_free(all[k]);
}

static void expect_same_rows(const char *what, int step, const void *got, const void *want,
                             size_t row_bytes, size_t rows) {
    for (size_t i = 0; i < rows; i++)
        if (memcmp((const char *)got + i * row_bytes, (const char *)want + i * row_bytes,
                   row_bytes) != 0)
            fail_msg("step %d: %s of env %zu differs from the reference", step, what, i);
}

static void test_slices_match_the_env_table(void **st) {
    (void)st;
    const sk_env_def *env = sk_env_find("CartPole-v1");
    assert_non_null(env);
    sk_config *cfg = NULL; /* defaults */
    sk_vec *one = NULL, *two = NULL;
    assert_int_equal(sk_vec_create(&one, env, NUM_ENVS, 1, cfg), SK_OK);
    assert_int_equal(sk_vec_create(&two, env, NUM_ENVS, 2, cfg), SK_OK);
    assert_int_equal(sk_vec_num_workers(one), 1);
    assert_int_equal(sk_vec_num_workers(two), 2);
    int lo, hi;
    sk_vec_slice(two, 1, &lo, &hi);
    assert_true(lo > 0 && hi == NUM_ENVS);
    reference ref;
    reference_open(&ref, env);
    sk_vec_reset(one, SEED);
    sk_vec_reset(two, SEED);
    const sk_vec_buffers *a = sk_vec_buffers_of(one), *b = sk_vec_buffers_of(two);
    size_t obs_row = (size_t)env->obs_size * sizeof(float);
    size_t log_row = (size_t)env->num_log_fields * sizeof(float);
    expect_same_rows("first obs (1 thread)", 0, a->obs, ref.obs, obs_row, NUM_ENVS);
    expect_same_rows("first obs (2 threads)", 0, b->obs, ref.obs, obs_row, NUM_ENVS);
    uint64_t rng = sk_rng_seed(SEED, 99);
    int ended = 0, truncated = 0;
    for (int t = 1; t <= STEPS; t++) {
        /* odd envs random, even ones balanced (a PD rule on the pole and the
         * cart) so that they also reach the 500-step limit */
        for (int i = 0; i < NUM_ENVS; i++) {
            const float *o = ref.obs + (size_t)i * 4;
            int32_t balanced = o[2] + 0.5f * o[3] + 0.05f * o[0] + 0.1f * o[1] > 0.0f;
            int32_t random = (int32_t)sk_rng_below(&rng, 2);
            a->actions[i] = b->actions[i] = ref.actions[i] = i % 2 ? random : balanced;
        }
        sk_vec_step(one);
        sk_vec_step(two);
        env->step(ref.state, &ref.io, 0, NUM_ENVS);
        const sk_vec_buffers *vecs[2] = {a, b};
        for (int v = 0; v < 2; v++) {
            const sk_vec_buffers *got = vecs[v];
            expect_same_rows("obs", t, got->obs, ref.obs, obs_row, NUM_ENVS);
            expect_same_rows("reward", t, got->rewards, ref.rewards, sizeof(float), NUM_ENVS);
            expect_same_rows("terminated", t, got->terminated, ref.terminated, 1, NUM_ENVS);
            expect_same_rows("truncated", t, got->truncated, ref.truncated, 1, NUM_ENVS);
            for (int i = 0; i < NUM_ENVS; i++) {
                if (!ref.terminated[i] && !ref.truncated[i]) continue;
                expect_same_rows("final obs", t, got->final_obs + (size_t)i * env->obs_size,
                                 ref.final_obs + (size_t)i * env->obs_size, obs_row, 1);
                expect_same_rows("episode log", t,
                                 got->episode_log + (size_t)i * env->num_log_fields,
                                 ref.episode_log + (size_t)i * env->num_log_fields, log_row, 1);
                /* the log holds the episode that just ended: its length counts this step */
                assert_true(got->episode_log[(size_t)i * env->num_log_fields + 1] >= 1.0f);
            }
        }
        for (int i = 0; i < NUM_ENVS; i++) {
            ended += ref.terminated[i] || ref.truncated[i];
            truncated += ref.truncated[i];
        }
    }
    print_message("%d episodes ended, %d of them truncated\n", ended, truncated);
    assert_true(ended > NUM_ENVS);
    assert_true(truncated > 0);
    reference_close(&ref);
    sk_vec_destroy(one);
    sk_vec_destroy(two);
}

static void test_create_refuses_bad_sizes(void **st) {
    (void)st;
    const sk_env_def *env = sk_env_find("CartPole-v1");
    sk_vec *vec = (sk_vec *)1;
    assert_int_equal(sk_vec_create(&vec, env, 0, 1, NULL), SK_ERR_INVALID);
    assert_null(vec);
    assert_non_null(strstr(sk_last_error(), "num_envs = 0 (expected at least 1)"));
    assert_int_equal(sk_vec_create(&vec, env, 4, -1, NULL), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "threads = -1 (expected 0 for one per core"));
    assert_int_equal(sk_vec_create(&vec, NULL, 4, 1, NULL), SK_ERR_INVALID);
    /* more threads than envs: one worker per env */
    assert_int_equal(sk_vec_create(&vec, env, 3, 8, NULL), SK_OK);
    assert_int_equal(sk_vec_num_workers(vec), 3);
    sk_vec_destroy(vec);
}

static void test_check_state_names_the_bad_element(void **st) {
    (void)st;
    sk_vec *vec = NULL;
    assert_int_equal(sk_vec_create(&vec, sk_env_find("CartPole-v1"), 8, 1, NULL), SK_OK);
    sk_vec_reset(vec, SEED);
    assert_int_equal(sk_vec_check_state(vec, "test.safetensors"), SK_OK);
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    int count = sk_vec_state_arrays(vec, arrays);
    int32_t *elapsed = NULL;
    for (int k = 0; k < count; k++)
        if (strcmp(arrays[k].name, "elapsed") == 0) {
            assert_true(arrays[k].has_range && arrays[k].lo == 0 && arrays[k].hi == 500);
            elapsed = arrays[k].data;
        }
    assert_non_null(elapsed);
    elapsed[3] = 500; /* the limit itself is allowed */
    assert_int_equal(sk_vec_check_state(vec, "test.safetensors"), SK_OK);
    elapsed[3] = 501;
    assert_int_equal(sk_vec_check_state(vec, "test.safetensors"), SK_ERR_CORRUPT);
    const char *message = sk_last_error();
    print_message("%s\n", message);
    assert_non_null(strstr(message, "test.safetensors"));
    assert_non_null(strstr(message, "env.elapsed[3]"));
    assert_non_null(strstr(message, "501"));
    assert_non_null(strstr(message, "[0, 500]"));
    elapsed[3] = -1;
    assert_int_equal(sk_vec_check_state(vec, "test.safetensors"), SK_ERR_CORRUPT);
    sk_vec_destroy(vec);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slices_match_the_env_table),
        cmocka_unit_test(test_create_refuses_bad_sizes),
        cmocka_unit_test(test_check_state_names_the_bad_element),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
