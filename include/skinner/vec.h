/*
 * skinner/vec.h: N envs of one kind, stepped over worker slices.
 *
 * sk_vec owns everything a batch of envs reads and writes: the env state,
 * the struct-of-arrays I/O buffers (observations, actions, rewards, flags,
 * masks), the final observations of ended episodes and the episode logs. The
 * N envs are split into contiguous slices, one per worker thread; a worker
 * steps only its slice, so a step needs no lock. Autoreset happens inside the
 * step (Gymnasium's same-step mode): where an episode ended, final_obs holds
 * its last observation, episode_log its statistics, obs the next episode's
 * first observation.
 *
 *     sk_vec *vec;
 *     sk_vec_create(&vec, sk_env_find("CartPole-v1"), 4096, 2, NULL);
 *     sk_vec_reset(vec, 1);
 *     const sk_vec_buffers *b = sk_vec_buffers_of(vec);
 *     for (int t = 0; t < 1000; t++) {
 *         ... write b->actions ...
 *         sk_vec_step(vec);
 *         ... read b->obs, b->rewards, b->terminated, b->truncated ...
 *     }
 *     sk_vec_destroy(vec);
 */
#ifndef SKINNER_VEC_H
#define SKINNER_VEC_H

#include "env.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sk_vec sk_vec;

/* The buffers, valid for the vec's lifetime; their addresses never change.
 * For a multi-agent env (sk_env_def.num_agents > 1) every "num_envs" below
 * reads num_rows = num_envs x num_agents: row env * num_agents + agent. */
typedef struct sk_vec_buffers {
    float *obs;                /* (num_envs, obs_size) */
    float *final_obs;          /* (num_envs, obs_size) where an episode ended this step */
    int32_t *actions;          /* (num_envs, num_heads) discrete envs; else NULL */
    float *actions_continuous; /* (num_envs, dim) continuous envs; else NULL */
    float *rewards;            /* (num_envs) */
    uint8_t *terminated;       /* (num_envs) */
    uint8_t *truncated;        /* (num_envs) */
    uint8_t *masks;            /* (num_envs, mask_size); NULL if the env has none */
    float *episode_log;        /* (num_envs, num_log_fields) where an episode ended this step */
    /* A uint8 env's observations (sk_env_def.obs_dtype SK_OBS_U8) in place of
     * obs and final_obs, which are then NULL; NULL for a float env. */
    uint8_t *obs_u8;           /* (num_envs, obs_size) */
    uint8_t *final_obs_u8;     /* (num_envs, obs_size) */
    /* 1 where the row's agent acts at the next step (env.h, sk_env_io.active);
     * all 1 for a single-agent env. */
    uint8_t *active;           /* (num_rows) */
} sk_vec_buffers;

/*
 * Creates num_envs envs of env (env.* keys read from cfg, which may be NULL
 * for defaults; cfg is only read during the call) and `threads` workers (0:
 * one per core), capped at num_envs. The calling thread is worker 0.
 */
SK_API sk_status sk_vec_create(sk_vec **out, const sk_env_def *env, int num_envs, int threads,
                               const sk_config *cfg);
SK_API void sk_vec_destroy(sk_vec *vec);

/* The env as its config shaped it (sk_env_configure): use its sizes. */
SK_API const sk_env_def *sk_vec_env(const sk_vec *vec);
SK_API int sk_vec_num_envs(const sk_vec *vec);
/* Agents per env (1 for a single-agent env) and rows of the buffers
 * (num_envs x num_agents). */
SK_API int sk_vec_num_agents(const sk_vec *vec);
SK_API int sk_vec_num_rows(const sk_vec *vec);
SK_API int sk_vec_num_workers(const sk_vec *vec);
SK_API const sk_vec_buffers *sk_vec_buffers_of(const sk_vec *vec);
/* The env state, for an env's extras (heuristic, obs_atoms). */
SK_API void *sk_vec_state(const sk_vec *vec);
/* The I/O table an env's step reads and writes (the buffers above). */
SK_API const sk_env_io *sk_vec_io(const sk_vec *vec);

/* Worker w's slice [lo, hi) of the envs. */
SK_API void sk_vec_slice(const sk_vec *vec, int worker, int *lo, int *hi);

/* Seeds env i's stream from (seed, i), resets every env and writes the first
 * observations and masks; all workers. */
SK_API void sk_vec_reset(sk_vec *vec, uint64_t seed);
/* Steps every env with the actions in the buffers; all workers. */
SK_API void sk_vec_step(sk_vec *vec);
/* The same for envs lo..hi-1 only, on the calling thread: for a caller that
 * interleaves its own work (a policy) with the step, inside sk_vec_parallel. */
SK_API void sk_vec_reset_range(sk_vec *vec, int lo, int hi, uint64_t seed);
SK_API void sk_vec_step_range(sk_vec *vec, int lo, int hi);

/* Runs job(ctx, w, num_workers) on every worker w at once; returns when all
 * are done. Worker w should touch only its slice's envs. */
SK_API void sk_vec_parallel(sk_vec *vec, sk_parallel_job job, void *ctx);
/* The same pool as a sk_parallel for an env's own evaluation. */
SK_API sk_parallel sk_vec_parallel_of(sk_vec *vec);

/* The env state's arrays (see sk_env_def.state_arrays); -1 with SK_ERR_ENV
 * naming the env when it lists a bad count, type or array. */
SK_API int sk_vec_state_arrays(sk_vec *vec, sk_env_array *arrays);

/*
 * Checks restored state arrays: each array's declared range (sk_env_array
 * has_range) over all num_envs x count elements. SK_ERR_CORRUPT naming the
 * array, the first bad index, its value and the allowed range.
 */
SK_API sk_status sk_vec_check_state(sk_vec *vec, const char *source);

/*
 * A physics env's positions and velocities (MuJoCo's qpos and qvel; the env's
 * sk_env_extras physics calls, docs/mujoco.md). sk_vec_physics_sizes gives
 * their counts. sk_vec_get_physics copies env `index`'s into qpos (qpos_size
 * values) and qvel (qvel_size). sk_vec_set_physics sets them, as Gymnasium's
 * set_state does, and writes the env's new observation into the obs buffer:
 * call it between steps, never during one. SK_ERR_INVALID naming the problem
 * for an env without physics calls, an index outside the envs this process
 * steps, sizes other than the env's, or values the physics refuses.
 */
SK_API sk_status sk_vec_physics_sizes(const sk_vec *vec, int *qpos_size, int *qvel_size);
SK_API sk_status sk_vec_get_physics(const sk_vec *vec, int index, double *qpos, int qpos_size,
                                    double *qvel, int qvel_size);
SK_API sk_status sk_vec_set_physics(sk_vec *vec, int index, const double *qpos, int qpos_size,
                                    const double *qvel, int qvel_size);

#ifdef __cplusplus
}
#endif
#endif /* SKINNER_VEC_H */
