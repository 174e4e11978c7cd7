/* The Arena module's entry: its table (env.c) that the registry finds in skinner-arena.so
 * (cmake/SkinnerModule.cmake). Only the shared module holds it; the tests link the same
 * objects without it. */
#include "arena_envs.h"

SK_PLUGIN_EXPORT(&sk_env_arena_v0)
