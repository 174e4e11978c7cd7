/* sk_vec's internal entry points (not part of the public API). */
#ifndef SK_VEC_INTERNAL_H
#define SK_VEC_INTERNAL_H

#include "skinner/vec.h"

/* A vec of num_envs envs of which this process steps only lo..hi-1 (one rank's
 * part of a distributed run): every env exists and keeps its global index, so
 * buffers, seeds and saved states are laid out as in one process, but the
 * workers (min(threads, hi - lo) of them) slice lo..hi-1 only. */
sk_status sk_vec_create_range(sk_vec **out, const sk_env_def *env, int num_envs, int lo, int hi,
                              int threads, const sk_config *cfg);

#endif
