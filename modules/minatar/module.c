/* The MinAtar module's entry: the ten tables (env.c) that the registry finds in
 * skinner-minatar.so (cmake/SkinnerModule.cmake). Only the shared module holds
 * it; the tests link the same objects without it. */
#include "minatar_envs.h"

SK_PLUGIN_EXPORT(&sk_env_minatar_asterix_v0, &sk_env_minatar_asterix_v1,
                 &sk_env_minatar_breakout_v0, &sk_env_minatar_breakout_v1,
                 &sk_env_minatar_freeway_v0, &sk_env_minatar_freeway_v1,
                 &sk_env_minatar_seaquest_v0, &sk_env_minatar_seaquest_v1,
                 &sk_env_minatar_space_invaders_v0, &sk_env_minatar_space_invaders_v1)
