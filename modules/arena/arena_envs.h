/* The Arena module's table (env.c), for module.c and the tests. */
#ifndef SKINNER_ARENA_ENVS_H
#define SKINNER_ARENA_ENVS_H

#include <skinner/env.h>

extern const sk_env_def sk_env_arena_v0;

#endif /* SKINNER_ARENA_ENVS_H */
