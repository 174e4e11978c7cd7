/*
 * A plugin built for env ABI version 7: its tables are laid out as now, but its extras end
 * before opponents (ABI 8). The word after its extras is not NULL here, as anything may
 * follow a plugin's extras in its memory: the loader must read the extras as version 7's and
 * leave opponents NULL (tests/test_versus.c, test_abi_v7_plugin), and must call its configure
 * with the table as it is, not in ABI 6's layout (its 20th action bound survives).
 */
#define SK_ENV_LAYOUT_ABI7
#include "old_abi_stubs.h"

_Static_assert(SK_MAX_ACTION_DIM == 64 && SK_ENV_ABI_VERSION == 7, "built in ABI 7's layout");

/* configure: env.steps sets max_episode_steps and the 20th high bound becomes 3.5 */
static sk_status configure(sk_env_def *def, const sk_config *cfg) {
    def->action_space.high[19] = 3.5f; /* past ABI 6's 16 bounds */
    int64_t steps = 10;
    sk_status status = sk_cfg_int(cfg, "env.steps", steps, 1, 1000, &steps);
    def->max_episode_steps = (int)steps;
    return status;
}

/* the extras, then a word that a reader of ABI 8's extras would take for opponents */
static const struct {
    sk_env_extras extras;
    const void *after;
} g_extras_then = {{.preset = "none"}, &g_extras_then};

static const sk_env_def old_env = {
    .id = "OldAbi7-v0",
    .obs_size = 3,
    .action_space = {.kind = SK_SPACE_CONTINUOUS, .dim = 20,
                     .low = {[0 ... 19] = -1.0f}, .high = {[0 ... 19] = 1.0f}},
    .max_episode_steps = 10,
    .solved_threshold = NAN,
    .extras = &g_extras_then.extras,
    .configure = configure,
    OLD_ABI_CALLS,
};

SK_API const int sk_plugin_abi_version = 7;
static const sk_env_def *const envs_list[] = {&old_env, NULL};
SK_API const sk_env_def *const *const sk_plugin_envs = envs_list;
