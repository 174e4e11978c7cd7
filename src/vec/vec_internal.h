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

/* Slice `slice` of num_slices even slices of the envs this process steps (sk_vec_slice is
 * this with one slice per worker thread): the trainer's train.slices. */
void sk_vec_slices(const sk_vec *vec, int slice, int num_slices, int *lo, int *hi);

/*
 * Checked stepping, for the trainer: before the env writes, the observation
 * rows of envs lo..hi-1 are filled with a NaN canary; after, every
 * observation must be finite and inside the env's declared Box (obs_low,
 * obs_high), every reward finite, every final_obs of an ended episode too,
 * and every mask row must allow a choice per head. The first fault is kept
 * (any thread may find one) with the env's id, index, step and value, and
 * the call returns false. step: the env's step count, for the message (the
 * reset is step 0). A few compares per value: the env's output is read once.
 */
bool sk_vec_reset_checked(sk_vec *vec, int lo, int hi, uint64_t seed);
bool sk_vec_step_checked(sk_vec *vec, int lo, int hi, int64_t step);
/* Whether a checked call found a fault (cheap: one atomic load). */
bool sk_vec_faulted(const sk_vec *vec);
/* SK_OK, or SK_ERR_ENV with the first fault's message set on this thread. */
sk_status sk_vec_fault(sk_vec *vec);

/* SK_ERR_ENV naming the env, the index and the head when an action of envs
 * lo..hi-1 is out of its head's range or masked (source: who wrote them, e.g.
 * "its heuristic"); continuous actions pass. */
sk_status sk_vec_check_actions(const sk_vec *vec, int lo, int hi, const char *source);

#endif
