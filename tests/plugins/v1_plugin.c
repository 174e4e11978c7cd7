/*
 * A plugin built for env ABI version 1, whose tables end before
 * sk_env_def.configure. The loader must not read that member: here it holds
 * a function that fails, which a loader that read it would call from
 * sk_env_configure (tests/test_plugin.c, test_abi_v1_table).
 */
#include "old_abi_stubs.h"

/* past the end of a version 1 table */
static sk_status past_the_end(sk_env_def *def, const sk_config *cfg) {
    (void)def, (void)cfg;
    return sk_fail(SK_ERR_INVALID, "read past the end of a version 1 table");
}

static const sk_env_def old_env = {
    .id = "OldAbi-v0",
    OLD_ABI_ENV_MEMBERS,
    .configure = past_the_end,
};

SK_API const int sk_plugin_abi_version = 1;
static const sk_env_def *const envs_list[] = {&old_env, NULL};
SK_API const sk_env_def *const *const sk_plugin_envs = envs_list;
