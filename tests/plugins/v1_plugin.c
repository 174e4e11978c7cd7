/*
 * A plugin built for env ABI version 1, whose tables end before
 * sk_env_def.configure. The loader must not read that member: here it holds
 * a function that fails, which a loader that read it would call from
 * sk_env_configure (tests/test_plugin.c, test_abi_v1_table).
 */
#include <skinner/env.h>

static sk_status old_create(void **state, int num_envs, const sk_config *cfg) {
    (void)num_envs, (void)cfg;
    *state = NULL;
    return SK_OK;
}
static void old_destroy(void *state) { (void)state; }
static void old_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)state, (void)io, (void)lo, (void)hi, (void)seed;
}
static void old_step(void *state, const sk_env_io *io, int lo, int hi) {
    (void)state, (void)io, (void)lo, (void)hi;
}
static int old_state_arrays(void *state, sk_env_array *arrays) {
    (void)state, (void)arrays;
    return 0;
}
/* past the end of a version 1 table */
static sk_status past_the_end(sk_env_def *def, const sk_config *cfg) {
    (void)def, (void)cfg;
    return sk_fail(SK_ERR_INVALID, "read past the end of a version 1 table");
}

static const sk_env_def old_env = {
    .id = "OldAbi-v0",
    .obs_size = 3,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
    .max_episode_steps = 10,
    .num_log_fields = 2,
    .log_names = {"episode_return", "episode_length"},
    .create = old_create,
    .destroy = old_destroy,
    .reset = old_reset,
    .step = old_step,
    .state_arrays = old_state_arrays,
    .configure = past_the_end,
};

SK_API const int sk_plugin_abi_version = 1;
static const sk_env_def *const envs_list[] = {&old_env, NULL};
SK_API const sk_env_def *const *const sk_plugin_envs = envs_list;
