/*
 * A plugin built for env ABI version 6: laid out as tables were before version 7, whose
 * action bounds hold 16 values each (SK_ENV_LAYOUT_ABI6 in old_abi_stubs.h), so every member
 * after them sits where version 6 put it. The loader must convert the table
 * (tests/test_multiagent.c, test_abi_v6_plugin): a continuous space of 3 with its bounds,
 * the members after the bounds, its extras' physics calls, and its configure and
 * evaluation, which read and write tables in this layout.
 */
#include "old_abi_stubs.h"

#include <stdio.h>

_Static_assert(SK_MAX_ACTION_DIM == 16 && SK_ENV_ABI_VERSION == 6, "built in ABI 6's layout");

static void sizes(const void *state, int *qpos_size, int *qvel_size) {
    (void)state;
    *qpos_size = 5;
    *qvel_size = 4;
}

/* configure: env.steps sets max_episode_steps, and the third action's high bound is
 * written as 2.5 (members after the bounds and a bound, in this layout) */
static sk_status configure(sk_env_def *def, const sk_config *cfg) {
    int64_t steps;
    sk_status status = sk_cfg_int(cfg, "env.steps", def->max_episode_steps, 1, 1000, &steps);
    if (status != SK_OK) return status;
    def->max_episode_steps = (int)steps;
    def->action_space.high[2] = 2.5f;
    return SK_OK;
}

/* reports what it reads of the table it is given: its step limit, the third high bound
 * and its log names */
static sk_status evaluate(const sk_env_def *env, const sk_config *env_cfg,
                          const sk_config *options, const sk_actor *actor,
                          const sk_parallel *parallel, sk_progress_fn progress,
                          void *progress_user, sk_env_report *out) {
    (void)env_cfg, (void)options, (void)actor, (void)parallel, (void)progress,
        (void)progress_user;
    out->num_metrics = 2;
    snprintf(out->metrics[0].name, sizeof out->metrics[0].name, "max_episode_steps");
    out->metrics[0].value = env->max_episode_steps;
    snprintf(out->metrics[1].name, sizeof out->metrics[1].name, "high2");
    out->metrics[1].value = env->action_space.high[2];
    snprintf(out->text, sizeof out->text, "%s %s\n", env->log_names[0], env->log_names[1]);
    return SK_OK;
}

static const sk_env_evaluation evaluation = {
    .name = "layout", .description = "reports the table it is given", .run = evaluate};

static const sk_env_extras old_extras = {
    .preset = "none", .evaluation = &evaluation, .physics_sizes = sizes};

static const sk_env_def old_env = {
    .id = "OldAbi6-v0",
    .obs_size = 3,
    .action_space = {.kind = SK_SPACE_CONTINUOUS, .dim = 3, .low = {-1.0f, -2.0f, -0.5f},
                     .high = {1.0f, 0.25f, 0.75f}},
    .max_episode_steps = 10,
    .solved_threshold = 7.5,
    .num_log_fields = 2,
    .log_names = {"episode_return", "episode_length"},
    .create = old_create,
    .destroy = old_destroy,
    .reset = old_reset,
    .step = old_step,
    .state_arrays = old_state_arrays,
    .extras = &old_extras,
    .configure = configure,
    .obs_shape = {3},
};

SK_API const int sk_plugin_abi_version = 6;
static const sk_env_def *const envs_list[] = {&old_env, NULL};
SK_API const sk_env_def *const *const sk_plugin_envs = envs_list;
