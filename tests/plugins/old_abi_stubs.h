/* The do-nothing functions of the old-ABI plugins (v1_plugin.c, v3_plugin.c): what they test
 * is the loader's reading of their tables, not an env. */
#ifndef OLD_ABI_STUBS_H
#define OLD_ABI_STUBS_H

/* laid out as tables were before env ABI 7 (16 action bounds): what these plugins were
 * built with, unless one asks for ABI 7's layout (v7_plugin.c) */
#ifndef SK_ENV_LAYOUT_ABI7
#define SK_ENV_LAYOUT_ABI6
#endif
#include <skinner/env.h>

/* a state of one byte: create must give one (a NULL state with SK_OK is refused) */
static char g_old_state;
static sk_status old_create(void **state, int num_envs, const sk_config *cfg) {
    (void)num_envs, (void)cfg;
    *state = &g_old_state;
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

/* The stubs as table members, and the log every old-ABI table has. */
#define OLD_ABI_CALLS                                                                              \
    .num_log_fields = 2, .log_names = {"episode_return", "episode_length"}, .create = old_create,  \
    .destroy = old_destroy, .reset = old_reset, .step = old_step, .state_arrays = old_state_arrays

/* The members every old-ABI table shares (a 3-float observation, two actions). */
#define OLD_ABI_ENV_MEMBERS                                                                        \
    .obs_size = 3, .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}}, \
    .max_episode_steps = 10, OLD_ABI_CALLS

#endif
