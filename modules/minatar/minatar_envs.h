/* The MinAtar envs' tables (env.c), ten envs of the MinAtar module: MinAtar/<Game>-v0 (all six actions) and
 * MinAtar/<Game>-v1 (MinAtar's minimal action set). */
#ifndef SKINNER_MINATAR_ENVS_H
#define SKINNER_MINATAR_ENVS_H

#include <skinner/env.h>

extern const sk_env_def sk_env_minatar_asterix_v0, sk_env_minatar_asterix_v1;
extern const sk_env_def sk_env_minatar_breakout_v0, sk_env_minatar_breakout_v1;
extern const sk_env_def sk_env_minatar_freeway_v0, sk_env_minatar_freeway_v1;
extern const sk_env_def sk_env_minatar_seaquest_v0, sk_env_minatar_seaquest_v1;
extern const sk_env_def sk_env_minatar_space_invaders_v0, sk_env_minatar_space_invaders_v1;

#endif /* SKINNER_MINATAR_ENVS_H */
