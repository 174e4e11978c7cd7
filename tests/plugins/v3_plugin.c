/*
 * A plugin built for env ABI version 3, whose extras end before render_width. The loader
 * must not read the members past that end: here they hold a size and a render that would
 * abort, which a loader that read them would hand to `skinner eval --video`
 * (tests/test_export_video.c, test_abi_v3_extras).
 */
#include "old_abi_stubs.h"

#include <stdlib.h>

/* past the end of version 3 extras */
static void past_the_end(const void *state, int index, uint8_t *rgb) {
    (void)state, (void)index, (void)rgb;
    abort();
}

static const sk_env_extras old_extras = {
    .preset = "none",
    .render_width = 12345,
    .render_height = 12345,
    .render = past_the_end,
};

static const sk_env_def old_env = {
    .id = "OldAbi3-v0",
    OLD_ABI_ENV_MEMBERS,
    .extras = &old_extras,
};

SK_API const int sk_plugin_abi_version = 3;
static const sk_env_def *const envs_list[] = {&old_env, NULL};
SK_API const sk_env_def *const *const sk_plugin_envs = envs_list;
