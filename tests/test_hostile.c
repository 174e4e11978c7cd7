/* Hostile plugins (tests/plugins/hostile_plugin.c, issue 30 items 5, 6, 12,
 * 13, 14): each is trained, evaluated or loaded, and must end in an error
 * that names the env and the fault (status and message), never in a signal,
 * an assert or a "training diverged" that blames the learner. */
#include "test_util.h"

#include "io/safetensors.h"
#include "policy/policy.h"
#include "vec/vec_internal.h"

#include <math.h>
#include <sys/stat.h>

/* message contains each of parts (NULL-terminated). */
static void assert_has(const char *message, const char *const *parts) {
    for (; *parts; parts++)
        if (!strstr(message, *parts)) fail_msg("\"%s\" does not contain \"%s\"", message, *parts);
}
#define ASSERT_HAS(message, ...) assert_has(message, (const char *const[]){__VA_ARGS__, NULL})

/* Trains plugin:id (4 envs, 16-step rollouts) on `threads` workers and returns
 * the status; the trainer's message in message, its steps in *steps. */
static sk_status train_on(const char *plugin, const char *id, const char *threads, char *message,
                          size_t size, int64_t *steps) {
    char name[4200];
    snprintf(name, sizeof name, "%s:%s", plugin, id);
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", name);
    sk_config_set(cfg, "env.num_envs", "4");
    sk_config_set(cfg, "ppo.horizon", "16");
    sk_config_set(cfg, "train.total_steps", "6400");
    sk_config_set(cfg, "train.threads", threads);
    sk_trainer *trainer = NULL;
    sk_status status = sk_trainer_create(&trainer, cfg);
    if (status == SK_OK) status = sk_trainer_run(trainer);
    snprintf(message, size, "%s", trainer ? sk_trainer_last_error(trainer) : sk_last_error());
    *steps = trainer ? sk_trainer_result(trainer).total_steps : 0;
    sk_trainer_destroy(trainer);
    sk_config_free(cfg);
    return status;
}

static sk_status train(const char *plugin, const char *id, char *message, size_t size) {
    int64_t steps;
    return train_on(plugin, id, "1", message, size, &steps);
}

/* Env 1 writes a fault at its step 3: training stops there with SK_ERR_ENV
 * naming the env, the index, the step and the value, and no learner advice. */
static void expect_env_fault(const char *plugin, const char *id, const char *where,
                             const char *what) {
    char message[1024];
    sk_status status = train(plugin, id, message, sizeof message);
    print_message("%s: %s\n", id, message);
    assert_int_equal(status, SK_ERR_ENV);
    ASSERT_HAS(message, id, where, what, "the env's fault");
    assert_null(strstr(message, "learning_rate"));
    assert_null(strstr(message, "diverged"));
}

static void test_nan_reward(void **unused) {
    (void)unused;
    expect_env_fault(PLUGIN_NAN_REWARD, "NanReward-v0", "env index 1, step 3",
                     "reward = nan is not finite");
}

static void test_nan_observation(void **unused) {
    (void)unused;
    expect_env_fault(PLUGIN_NAN_OBS, "NanObs-v0", "env index 1, step 3",
                     "observation value 1 = nan is not finite");
}

static void test_observation_outside_box(void **unused) {
    (void)unused;
    expect_env_fault(PLUGIN_OUT_OF_BOX, "OutOfBox-v0", "env index 1, step 3",
                     "observation value 1 = 2 is outside the declared Box [-1, 1]");
}

/* obs_size 5, four values written: the canary is found at the reset */
static void test_short_observation(void **unused) {
    (void)unused;
    expect_env_fault(PLUGIN_SHORT_OBS, "ShortObs-v0", "env index 0, reset",
                     "observation value 4 of env 0 was never written (obs_size = 5");
}

/* a mask row with nothing allowed: reported, not an assert in the sampler */
static void test_mask_without_legal_action(void **unused) {
    (void)unused;
    expect_env_fault(PLUGIN_NO_LEGAL, "NoLegal-v0", "env index 1, step 3",
                     "its mask row allows no action of head 0");
}

/* The same with two workers: whichever finds it, the run stops with it. */
static void test_fault_found_by_another_worker(void **unused) {
    (void)unused;
    char message[1024];
    int64_t steps = -1;
    assert_int_equal(train_on(PLUGIN_NAN_REWARD, "NanReward-v0", "2", message, sizeof message,
                              &steps),
                     SK_ERR_ENV);
    ASSERT_HAS(message, "NanReward-v0", "env index 1, step 3");
    assert_int_equal(steps, 0); /* nothing learned from that rollout */
}

/* Tables the loader refuses, naming the env and the field. */
static void expect_refused(const char *plugin, const char *id, const char *what) {
    assert_int_equal(sk_env_load_plugin(plugin), SK_ERR_INVALID);
    print_message("%s: %s\n", id, sk_last_error());
    ASSERT_HAS(sk_last_error(), plugin, id, what);
}

static void test_refused_tables(void **unused) {
    (void)unused;
    expect_refused(PLUGIN_BIG_MASK, "BigMask-v0", "mask layout needs more than 2147483647 bytes");
    expect_refused(PLUGIN_NULL_EVAL, "NullEval-v0", "extras.evaluation->run is NULL");
    expect_refused(PLUGIN_NAN_PRIOR, "NanPrior-v0", "action_space.head0_prior[0] = nan");
}

/* state_arrays' output is checked when the envs are created. */
static void test_bad_state_arrays(void **unused) {
    (void)unused;
    char message[1024];
    assert_int_equal(train(PLUGIN_MANY_ARRAYS, "ManyArrays-v0", message, sizeof message),
                     SK_ERR_ENV);
    ASSERT_HAS(message, "ManyArrays-v0", "state_arrays returned 17 arrays (expected 0..16");
    assert_int_equal(train(PLUGIN_NEGATIVE_ARRAYS, "NegativeArrays-v0", message, sizeof message),
                     SK_ERR_ENV);
    ASSERT_HAS(message, "NegativeArrays-v0", "state_arrays returned -1 arrays");
    assert_int_equal(train(PLUGIN_BAD_DTYPE, "BadDtype-v0", message, sizeof message), SK_ERR_ENV);
    ASSERT_HAS(message, "BadDtype-v0", "state array 0 ('elapsed') has type 9");
}

/* create() that returns SK_OK and no state: refused by name, not a crash in
 * sk_soa_arrays (issue 53 ask 3); and the kit's state functions refuse NULL. */
static void test_create_without_state(void **unused) {
    (void)unused;
    char message[1024];
    assert_int_equal(train(PLUGIN_NULL_STATE, "NullState-v0", message, sizeof message), SK_ERR_ENV);
    ASSERT_HAS(message, "NullState-v0", "create returned SK_OK but set no state");
    static const sk_soa_field field = {"x", SK_ARRAY_I32, 0, false, 0.0, 0.0};
    sk_env_array arrays[1];
    assert_int_equal(sk_soa_arrays(NULL, &field, 1, arrays), -1);
    ASSERT_HAS(sk_last_error(), "sk_soa_arrays was given no state");
    sk_soa_destroy(NULL, &field, 1); /* NULL-safe */
}

/* A checkpoint writer handed an unknown dtype refuses it (no read past the
 * dtype table). */
static void test_unknown_dtype_not_written(void **unused) {
    (void)unused;
    int32_t value = 1;
    sk_st_tensor tensor = {.name = "env.x", .dtype = (sk_st_dtype)9, .ndim = 1, .shape = {1},
                           .data = &value};
    char path[] = "/tmp/skinner_hostile_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(sk_st_write(path, &tensor, 1, NULL, 0), SK_ERR_INVALID);
    ASSERT_HAS(sk_last_error(), "tensor 'env.x' has dtype 9");
    assert_int_equal((int)sk_st_dtype_size((sk_st_dtype)9), 0);
    unlink(path);
}

/* The largest obs_size a table may have, 2^20 envs of it: 64 TB of buffers cannot be
 * allocated; SK_ERR_NOMEM naming the env and the sizes, not an assert (refused at
 * once, never touched). */
static void test_huge_observation(void **unused) {
    (void)unused;
    char name[4200];
    snprintf(name, sizeof name, "%s:%s", PLUGIN_HUGE_OBS, "HugeObs-v0");
    const sk_env_def *env = sk_env_find(name);
    assert_non_null(env);
    sk_vec *vec = NULL;
    assert_int_equal(sk_vec_create(&vec, env, 1 << 20, 1, NULL), SK_ERR_NOMEM);
    assert_null(vec);
    print_message("%s\n", sk_last_error());
    ASSERT_HAS(sk_last_error(), "HugeObs-v0", "out of memory for its observations",
               "1048576 envs x 16777216 values x 4 bytes");
}

/* `skinner eval --policy heuristic`: actions out of range are the env's fault. */
static void test_heuristic_actions_checked(void **unused) {
    (void)unused;
    char name[4200];
    snprintf(name, sizeof name, "%s:%s", PLUGIN_BAD_HEURISTIC, "BadHeuristic-v0");
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.num_envs", "4");
    sk_eval_result result;
    sk_status status = sk_evaluate_controller(name, cfg, SK_CONTROLLER_HEURISTIC, 4, 1, NULL,
                                              &result);
    print_message("%s\n", sk_last_error());
    assert_int_equal(status, SK_ERR_ENV);
    ASSERT_HAS(sk_last_error(), "BadHeuristic-v0", "its heuristic wrote action 7 for head 0",
               "env index 1");
    sk_config_free(cfg);
}

/* A sampler handed a mask that allows nothing returns a valid index and a NaN
 * log-probability (it asserted). */
static void test_sampler_with_empty_mask(void **unused) {
    (void)unused;
    sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {3}};
    float logits[3] = {0.1f, 0.2f, 0.3f};
    uint8_t mask[3] = {0, 0, 0};
    int32_t action = -5;
    float logp = 0.0f;
    uint64_t rng = 1;
    for (int greedy = 0; greedy < 2; greedy++) {
        sk_categorical_sample(&space, logits, mask, 1, &rng, greedy, &action, &logp);
        assert_true(action >= 0 && action < 3);
        assert_true(isnan(logp));
    }
}

/* A copy of a plugin cut at `bytes`: refused before dlopen maps past its end. */
static void expect_truncated_refused(size_t bytes) {
    FILE *in = fopen(PLUGIN_NAN_REWARD, "rb");
    assert_non_null(in);
    char *data = malloc(bytes);
    assert_int_equal(fread(data, 1, bytes, in), bytes);
    fclose(in);
    char path[64];
    snprintf(path, sizeof path, "/tmp/skinner_truncated_%d_%zu.so", (int)getpid(), bytes);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(data, 1, bytes, out), bytes);
    fclose(out);
    free(data);
    assert_int_equal(sk_env_load_plugin(path), SK_ERR_INVALID);
    print_message("%zu bytes: %s\n", bytes, sk_last_error());
    ASSERT_HAS(sk_last_error(), path, "is not a loadable shared object");
    unlink(path);
}

static void test_truncated_plugin(void **unused) {
    (void)unused;
    struct stat info;
    assert_int_equal(stat(PLUGIN_NAN_REWARD, &info), 0);
    size_t size = (size_t)info.st_size;
    size_t cuts[] = {16, 64, 200, 4096, size / 2, size - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++)
        if (cuts[c] < size) expect_truncated_refused(cuts[c]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nan_reward),
        cmocka_unit_test(test_nan_observation),
        cmocka_unit_test(test_observation_outside_box),
        cmocka_unit_test(test_short_observation),
        cmocka_unit_test(test_mask_without_legal_action),
        cmocka_unit_test(test_fault_found_by_another_worker),
        cmocka_unit_test(test_refused_tables),
        cmocka_unit_test(test_bad_state_arrays),
        cmocka_unit_test(test_create_without_state),
        cmocka_unit_test(test_unknown_dtype_not_written),
        cmocka_unit_test(test_huge_observation),
        cmocka_unit_test(test_heuristic_actions_checked),
        cmocka_unit_test(test_sampler_with_empty_mask),
        cmocka_unit_test(test_truncated_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
