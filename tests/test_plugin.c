/* Envs from outside the tree: sk_env_register and sk_env_load_plugin refuse a
 * missing file, a file that is not a shared object, a plugin without the
 * symbols, of another ABI version or with a bad table or a taken id, each
 * with a message naming the file and the problem; a good table registers and
 * is found; the example plugin (examples/plugin) loads once, steps within its
 * masks and trains to solved. */
#include "test_util.h"

#include "envs/registry.h"

#include <math.h>

/* The message of the last failure contains each of the NULL-terminated parts. */
static void assert_message_has(const char *first, ...) {
    const char *message = sk_last_error();
    va_list parts;
    va_start(parts, first);
    for (const char *part = first; part; part = va_arg(parts, const char *)) {
        if (!strstr(message, part)) {
            print_error("message \"%s\" does not contain \"%s\"\n", message, part);
            va_end(parts);
            fail();
        }
    }
    va_end(parts);
}

static int count_envs(void) {
    int count = 0;
    for (const sk_env_def *const *env = sk_env_list(); *env; env++) count++;
    return count;
}

static void test_builtins_are_valid(void **unused) {
    (void)unused;
    char why[256];
    for (const sk_env_def *const *env = sk_env_list(); *env; env++)
        if (!sk_env_validate(*env, why, sizeof why)) fail_msg("%s: %s", (*env)->id, why);
}

static void test_missing_file(void **unused) {
    (void)unused;
    int before = count_envs();
    assert_int_equal(sk_env_load_plugin("/nonexistent/libnothing.so"), SK_ERR_INVALID);
    assert_message_has("/nonexistent/libnothing.so", "No such file", NULL);
    assert_int_equal(count_envs(), before);
}

static void test_not_a_shared_object(void **unused) {
    (void)unused;
    char path[] = "/tmp/skinner_test_plugin_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "this is a text file, not an ELF shared object\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    assert_int_equal(sk_env_load_plugin(path), SK_ERR_INVALID);
    assert_message_has(path, "not a loadable shared object", NULL);
    /* a directory is not a plugin either */
    assert_int_equal(sk_env_load_plugin("/tmp"), SK_ERR_INVALID);
    assert_message_has("'/tmp'", "not a regular file", NULL);
    unlink(path);
}

static void test_missing_symbols(void **unused) {
    (void)unused;
    assert_int_equal(sk_env_load_plugin(PLUGIN_NO_SYMBOLS), SK_ERR_INVALID);
    assert_message_has(PLUGIN_NO_SYMBOLS, "does not export 'sk_plugin_abi_version'",
                       "SK_PLUGIN_EXPORT", NULL);
}

/* A version 1 plugin loads; its tables end before sk_env_def.configure,
 * which the loader must treat as absent rather than read. */
static void test_abi_v1_table(void **unused) {
    (void)unused;
    assert_int_equal(sk_env_load_plugin(PLUGIN_V1), SK_OK);
    const sk_env_def *env = sk_env_find("OldAbi-v0");
    assert_non_null(env);
    assert_null(env->configure);
    assert_int_equal(env->obs_size, 3);
    const sk_env_def *configured = NULL;
    if (sk_env_configure(env, NULL, &configured) != SK_OK) fail_msg("%s", sk_last_error());
    assert_ptr_equal(configured, env);
    assert_string_equal(sk_env_plugin_path(env), sk_env_plugin_path(sk_env_find("OldAbi-v0")));
    assert_non_null(strstr(sk_env_plugin_path(env), "v1_plugin"));
}

static void test_abi_version(void **unused) {
    (void)unused;
    char ours[64];
    snprintf(ours, sizeof ours, "version %d", SK_ENV_ABI_VERSION);
    assert_int_equal(sk_env_load_plugin(PLUGIN_ABI_VERSION), SK_ERR_INVALID);
    assert_message_has(PLUGIN_ABI_VERSION, "ABI version 999", ours, "loads 1..", NULL);
    assert_null(sk_env_find("BadAbi-v0"));
}

static void test_bad_tables(void **unused) {
    (void)unused;
    int before = count_envs();
    assert_int_equal(sk_env_load_plugin(PLUGIN_ZERO_OBS), SK_ERR_INVALID);
    assert_message_has(PLUGIN_ZERO_OBS, "env table 0", "BadObs-v0", "obs_size = 0",
                       "expected 1..16777216", NULL);
    assert_int_equal(sk_env_load_plugin(PLUGIN_NULL_STEP), SK_ERR_INVALID);
    assert_message_has(PLUGIN_NULL_STEP, "env table 0", "BadStep-v0", "step is NULL", NULL);
    assert_int_equal(sk_env_load_plugin(PLUGIN_DUPLICATE_ID), SK_ERR_INVALID);
    assert_message_has(PLUGIN_DUPLICATE_ID, "CARTPOLE-V1", "already taken by CartPole-v1", NULL);
    assert_int_equal(count_envs(), before);
    assert_null(sk_env_find("BadObs-v0"));
}

/* A table that passes, for sk_env_register, and its functions (never stepped). */
static sk_status coin_create(void **state, int num_envs, const sk_config *cfg) {
    (void)cfg;
    *state = sk_alloc((size_t)num_envs);
    return *state ? SK_OK : SK_ERR_NOMEM;
}
static void coin_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)state, (void)seed;
    for (int i = lo; i < hi; i++) io->obs[i] = 0.0f;
}
static int coin_state_arrays(void *state, sk_env_array *arrays) {
    arrays[0] = (sk_env_array){.name = "flip", .type = SK_ARRAY_U8, .count = 1, .data = state};
    return 1;
}
static void coin_step(void *state, const sk_env_io *io, int lo, int hi) {
    uint8_t *flips = state;
    for (int i = lo; i < hi; i++) {
        io->rewards[i] = (float)(io->actions[i] == flips[i]);
        io->terminated[i] = 1;
        io->truncated[i] = 0;
        io->final_obs[i] = io->obs[i];
        io->episode_log[2 * i] = io->rewards[i];
        io->episode_log[2 * i + 1] = 1.0f;
    }
}

static sk_env_def coin_table(const char *id) {
    return (sk_env_def){
        .id = id,
        .alias = NULL,
        .obs_size = 1,
        .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
        .max_episode_steps = 1,
        .solved_threshold = NAN,
        .num_log_fields = 2,
        .log_names = {"episode_return", "episode_length"},
        .create = coin_create,
        .destroy = sk_free,
        .reset = coin_reset,
        .step = coin_step,
        .state_arrays = coin_state_arrays,
    };
}

static void test_register(void **unused) {
    (void)unused;
    static sk_env_def coin;
    coin = coin_table("Coin-v0");
    coin.alias = "coin";
    int before = count_envs();
    assert_int_equal(sk_env_register(&coin), SK_OK);
    assert_int_equal(count_envs(), before + 1);
    assert_ptr_equal(sk_env_list()[before], &coin); /* after the built-ins */
    assert_ptr_equal(sk_env_find("Coin-v0"), &coin);
    assert_ptr_equal(sk_env_find("COIN"), &coin);
    /* taken: the same table, its id in other case, its alias as an id, a built-in's alias */
    static sk_env_def again, alias_clash, builtin_clash;
    again = coin_table("coin-V0");
    alias_clash = coin_table("coin");
    builtin_clash = coin_table("Coin-v1");
    builtin_clash.alias = "CartPole";
    assert_int_equal(sk_env_register(&coin), SK_ERR_INVALID);
    assert_message_has("cannot register env \"Coin-v0\"", "already taken by Coin-v0", NULL);
    assert_int_equal(sk_env_register(&again), SK_ERR_INVALID);
    assert_message_has("id \"coin-V0\" is already taken by Coin-v0", NULL);
    assert_int_equal(sk_env_register(&alias_clash), SK_ERR_INVALID);
    assert_message_has("id \"coin\" is already taken by Coin-v0", NULL);
    assert_int_equal(sk_env_register(&builtin_clash), SK_ERR_INVALID);
    assert_message_has("alias \"CartPole\" is already taken by CartPole-v1", NULL);
    assert_int_equal(count_envs(), before + 1);
}

/* Each broken field of a table is refused with its name, value and expectation. */
static void test_validation(void **unused) {
    (void)unused;
    static sk_env_def table;
    char why[256];
    sk_env_def good = coin_table("Valid-v0");
    assert_true(sk_env_validate(&good, why, sizeof why));

#define REFUSED(field_change, expected)                                                            \
    do {                                                                                           \
        table = coin_table("Broken-v0");                                                           \
        field_change;                                                                              \
        assert_false(sk_env_validate(&table, why, sizeof why));                                    \
        if (!strstr(why, expected)) fail_msg("\"%s\" does not contain \"%s\"", why, expected);     \
        assert_int_equal(sk_env_register(&table), SK_ERR_INVALID);                                 \
        assert_message_has(expected, NULL);                                                        \
    } while (0)
    REFUSED(table.id = "", "id is empty");
    REFUSED(table.id = NULL, "id is empty");
    REFUSED(table.id = "a.so:b", "contains ':'");
    REFUSED(table.obs_size = 0, "obs_size = 0 (expected 1..16777216");
    REFUSED(table.obs_size = INT32_MAX, "obs_size = 2147483647 (expected 1..16777216");
    REFUSED(table.max_episode_steps = 0, "max_episode_steps = 0 (expected >= 1)");
    REFUSED(table.num_log_fields = 1, "num_log_fields = 1 (expected 2..8");
    REFUSED(table.num_log_fields = SK_MAX_LOG_FIELDS + 1, "num_log_fields = 9");
    REFUSED(table.num_log_fields = 3, "log_names[2] is empty");
    REFUSED(table.solved_threshold = INFINITY, "solved_threshold = inf");
    REFUSED(table.create = NULL, "create is NULL");
    REFUSED(table.destroy = NULL, "destroy is NULL");
    REFUSED(table.reset = NULL, "reset is NULL");
    REFUSED(table.step = NULL, "step is NULL");
    REFUSED(table.state_arrays = NULL, "state_arrays is NULL");
    REFUSED(table.action_space.num_heads = 0, "action_space.num_heads = 0 (expected 1..8)");
    REFUSED(table.action_space.num_heads = SK_MAX_HEADS + 1, "action_space.num_heads = 9");
    REFUSED(table.action_space.head_sizes[0] = 0, "action_space.head_sizes[0] = 0 (expected >= 1)");
    REFUSED(table.mask_size = 3, "mask_size = 3 (expected 0 for no masks, or 2");
    REFUSED(table.action_space.kind = (sk_space_kind)7, "action_space.kind = 7");
    REFUSED((table.action_space = (sk_action_space){.kind = SK_SPACE_CONTINUOUS, .dim = 0}),
            "action_space.dim = 0 (expected 1..64)");
    REFUSED((table.action_space = (sk_action_space){.kind = SK_SPACE_CONTINUOUS, .dim = 1,
                                                    .low = {1.0f}, .high = {1.0f}}),
            "action_space.low[0] = 1, high[0] = 1 (expected finite bounds with low < high)");
    REFUSED((table.action_space = (sk_action_space){.kind = SK_SPACE_CONTINUOUS, .dim = 1,
                                                    .low = {-INFINITY}, .high = {1.0f}}),
            "action_space.low[0] = -inf");
    REFUSED((table.action_space = (sk_action_space){.kind = SK_SPACE_CONTINUOUS, .dim = 1,
                                                    .low = {-1.0f}, .high = {1.0f}},
             table.mask_size = 2),
            "mask_size = 2 (expected 0: a continuous action space has no masks)");
    /* ABI 3's observation Box: both bounds or neither, low <= high */
    static const float low[1] = {-1.0f}, high[1] = {1.0f}, above_high[1] = {2.0f};
    REFUSED(table.obs_low = low, "obs_low is set but obs_high is NULL");
    REFUSED(table.obs_high = high, "obs_low is NULL but obs_high is set");
    REFUSED((table.obs_low = above_high, table.obs_high = high),
            "obs_low[0] = 2, obs_high[0] = 1 (expected low <= high");
    table = coin_table("Boxed-v0");
    table.obs_low = low;
    table.obs_high = high;
    assert_true(sk_env_validate(&table, why, sizeof why));
    /* issue 30, item 12: size products in 64 bits (65536 x 65536 wrapped to 65536 in an int) */
    REFUSED((table.action_space.num_heads = 2, table.action_space.head_sizes[0] = 65536,
             table.action_space.head_sizes[1] = 65536, table.action_space.masks_by_head0 = true,
             table.mask_size = 65536),
            "mask layout needs more than 2147483647 bytes per env");
    REFUSED((table.action_space.num_heads = 2, table.action_space.head_sizes[0] = INT32_MAX,
             table.action_space.head_sizes[1] = 2),
            "action_space.head_sizes add up to 2147483649 choices");
    /* item 14: a prior that is no number */
    REFUSED(table.action_space.head0_prior[1] = NAN, "action_space.head0_prior[1] = nan");
    REFUSED(table.action_space.head0_prior[0] = INFINITY, "action_space.head0_prior[0] = inf");
    /* item 13: the extras, as strictly as the functions */
    static sk_env_evaluation evaluation;
    static sk_env_extras extras;
    evaluation = (sk_env_evaluation){.name = "ranking"};
    extras = (sk_env_extras){.evaluation = &evaluation};
    REFUSED(table.extras = &extras, "extras.evaluation->run is NULL");
    evaluation.name = "";
    REFUSED(table.extras = &extras, "extras.evaluation->name is empty");
    extras = (sk_env_extras){.bench_num_envs = -1};
    REFUSED(table.extras = &extras, "extras.bench_num_envs = -1");
    extras = (sk_env_extras){.preset = "../etc/passwd"};
    REFUSED(table.extras = &extras, "extras.preset \"../etc/passwd\" is empty or contains '/'");
    extras = (sk_env_extras){.preset = "  "}; /* names separated by spaces, but none */
    REFUSED(table.extras = &extras, "extras.preset \"  \" is empty");
    static const char *const one_name[] = {"left", NULL};
    static const char *const three_names[] = {"left", "right", "up", NULL};
    static const char *const empty_name[] = {"left", "", NULL};
    extras = (sk_env_extras){.action_names = one_name};
    REFUSED(table.extras = &extras, "extras.action_names lists 1 names (expected NULL, or one "
                                    "name for each of head 0's 2 choices");
    extras.action_names = three_names;
    REFUSED(table.extras = &extras, "extras.action_names lists more than 2 names");
    extras.action_names = empty_name;
    REFUSED(table.extras = &extras, "extras.action_names[1] is empty");
#undef REFUSED
    assert_null(sk_env_find("Broken-v0"));
}

static void test_gridworld_loads_once(void **unused) {
    (void)unused;
    int before = count_envs();
    assert_null(sk_env_find("GridWorld-v0"));
    assert_message_has("unknown environment 'GridWorld-v0'", "--env-lib", NULL);
    assert_int_equal(sk_env_load_plugin(PLUGIN_GRIDWORLD), SK_OK);
    assert_int_equal(count_envs(), before + 1);
    const sk_env_def *grid = sk_env_find("gridworld");
    assert_non_null(grid);
    assert_string_equal(grid->id, "GridWorld-v0");
    /* again, directly and through FILE.so:ID: no-ops */
    assert_int_equal(sk_env_load_plugin(PLUGIN_GRIDWORLD), SK_OK);
    assert_ptr_equal(sk_env_find(PLUGIN_GRIDWORLD ":GridWorld-v0"), grid);
    assert_int_equal(count_envs(), before + 1);
    assert_null(sk_env_find(PLUGIN_GRIDWORLD ":NoSuchEnv-v0"));
    assert_message_has("unknown environment 'NoSuchEnv-v0'", "GridWorld-v0", NULL);
    assert_null(sk_env_find("/nonexistent/libx.so:GridWorld-v0"));
    assert_message_has("/nonexistent/libx.so", "No such file", NULL);
}

/* The plugin's env stepped through its table: moves stay within the masks,
 * rewards and episode logs add up, ended episodes leave final observations. */
static void test_gridworld_steps(void **unused) {
    (void)unused;
    const sk_env_def *grid = sk_env_find(PLUGIN_GRIDWORLD ":GridWorld-v0");
    assert_non_null(grid);
    enum { NUM_ENVS = 16, STEPS = 2000, OBS = 4, MOVES = 4, LOGS = 3 };
    assert_int_equal(grid->obs_size, OBS);
    assert_int_equal(grid->mask_size, MOVES);
    assert_int_equal(grid->num_log_fields, LOGS);
    static float obs[NUM_ENVS * OBS], final_obs[NUM_ENVS * OBS], rewards[NUM_ENVS];
    static float episode_log[NUM_ENVS * LOGS], returns[NUM_ENVS];
    static int32_t actions[NUM_ENVS], lengths[NUM_ENVS];
    static uint8_t terminated[NUM_ENVS], truncated[NUM_ENVS], masks[NUM_ENVS * MOVES];
    sk_env_io io = {obs, final_obs, actions, NULL, rewards, terminated, truncated, masks,
                    episode_log, NULL, NULL, NULL};
    sk_config *cfg = sk_config_new();
    void *state = NULL;
    assert_int_equal(grid->create(&state, NUM_ENVS, cfg), SK_OK);
    grid->reset(state, &io, 0, NUM_ENVS, 7);
    uint64_t rng = sk_rng_seed(7, 1000);
    int episodes = 0, reached = 0;
    for (int t = 0; t < STEPS; t++) {
        float before[NUM_ENVS * OBS];
        memcpy(before, obs, sizeof before);
        for (int i = 0; i < NUM_ENVS; i++) {
            uint8_t *mask = masks + i * MOVES;
            /* a border cell masks the moves off the grid (obs: x, y scaled to [0, 1]) */
            assert_int_equal(mask[0], obs[i * OBS + 1] > 0.0f);
            assert_int_equal(mask[1], obs[i * OBS + 1] < 1.0f);
            assert_int_equal(mask[2], obs[i * OBS + 0] > 0.0f);
            assert_int_equal(mask[3], obs[i * OBS + 0] < 1.0f);
            do actions[i] = (int32_t)sk_rng_below(&rng, MOVES);
            while (!mask[actions[i]]);
        }
        grid->step(state, &io, 0, NUM_ENVS);
        for (int i = 0; i < NUM_ENVS; i++) {
            returns[i] += rewards[i];
            lengths[i]++;
            assert_false(terminated[i] && truncated[i]);
            if (!terminated[i] && !truncated[i]) continue;
            const float *end = final_obs + i * OBS;
            /* one move from where it was */
            float moved = fabsf(end[0] - before[i * OBS]) + fabsf(end[1] - before[i * OBS + 1]);
            assert_float_equal(moved, 0.25f, 1e-6f);
            if (terminated[i]) {
                assert_float_equal(end[0], end[2], 0.0f);
                assert_float_equal(end[1], end[3], 0.0f);
                assert_float_equal(rewards[i], 1.0f, 0.0f);
                reached++;
            } else {
                assert_int_equal(lengths[i], 50);
            }
            assert_float_equal(episode_log[i * LOGS + 0], returns[i], 1e-4f);
            assert_float_equal(episode_log[i * LOGS + 1], (float)lengths[i], 0.0f);
            assert_float_equal(episode_log[i * LOGS + 2], terminated[i] ? 1.0f : 0.0f, 0.0f);
            returns[i] = 0.0f;
            lengths[i] = 0;
            episodes++;
        }
    }
    assert_true(episodes > 100);
    assert_true(reached > 0 && reached < episodes);
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    assert_int_equal(grid->state_arrays(state, arrays), 7);
    assert_true(arrays[0].has_range);
    grid->destroy(state);
    /* its config key is read and checked */
    sk_config_set(cfg, "env.size", "2");
    assert_int_equal(grid->create(&state, NUM_ENVS, cfg), SK_ERR_INVALID);
    assert_message_has("env.size", "3", "16", NULL);
    sk_config_free(cfg);
}

/* The trainer finds the plugin's env through env.id = FILE.so:ID and solves it. */
static void test_gridworld_trains(void **unused) {
    (void)unused;
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", PLUGIN_GRIDWORLD ":GridWorld-v0");
    sk_config_set(cfg, "env.num_envs", "16");
    sk_config_set(cfg, "train.total_steps", "200000");
    sk_config_set(cfg, "train.stop_when_solved", "true");
    sk_config_set(cfg, "train.threads", "2");
    sk_trainer *trainer = NULL;
    if (sk_trainer_create(&trainer, cfg) != SK_OK || sk_trainer_run(trainer) != SK_OK)
        fail_msg("%s", sk_last_error());
    sk_train_result result = sk_trainer_result(trainer);
    print_message("GridWorld-v0 solved=%d after %lld steps, %.2f s\n", result.solved,
                  (long long)result.solved_at_steps, result.solved_at_seconds);
    assert_true(result.solved);
    sk_trainer_destroy(trainer);
    sk_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_are_valid),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_not_a_shared_object),
        cmocka_unit_test(test_missing_symbols),
        cmocka_unit_test(test_abi_version),
        cmocka_unit_test(test_abi_v1_table),
        cmocka_unit_test(test_bad_tables),
        cmocka_unit_test(test_register),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_gridworld_loads_once),
        cmocka_unit_test(test_gridworld_steps),
        cmocka_unit_test(test_gridworld_trains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
