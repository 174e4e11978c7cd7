/*
 * A plugin built for env ABI version 4, whose table ends before num_agents (env ABI 5). The
 * loader must read it as a single-agent env: here the members past its end say 2 agents,
 * which a loader that read them would lay out as rows (tests/test_multiagent.c,
 * test_abi_v4_plugin). Its extras are whole in version 4: the render members are kept.
 */
#include "old_abi_stubs.h"

static void draw(const void *state, int index, uint8_t *rgb) {
    (void)state, (void)index;
    rgb[0] = rgb[1] = rgb[2] = 0;
}

static const sk_env_extras old_extras = {
    .preset = "none",
    .render_width = 1,
    .render_height = 1,
    .render = draw,
};

static const char *const past_the_end_names[] = {"a", "b"};

static const sk_env_def old_env = {
    .id = "OldAbi4-v0",
    OLD_ABI_ENV_MEMBERS,
    .extras = &old_extras,
    .num_agents = 2, /* past the end of a version 4 table */
    .agent_names = past_the_end_names,
};

SK_API const int sk_plugin_abi_version = 4;
static const sk_env_def *const envs_list[] = {&old_env, NULL};
SK_API const sk_env_def *const *const sk_plugin_envs = envs_list;
