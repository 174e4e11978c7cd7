/* A loaded policy as an sk_actor: what an env's own evaluation (and the
 * episode runner of eval.c) calls to pick actions. Each worker has its own
 * scratch activations, normalised observations and sampling stream, so
 * workers act at the same time without locks. */
#ifndef SK_ACTOR_H
#define SK_ACTOR_H

#include "../vec/pool.h"
#include "eval.h"

/* Rows an evaluation's actor takes per call unless told otherwise. */
#define SK_ACTOR_DEFAULT_ROWS 256

typedef struct sk_policy_actor {
    sk_actor actor;              /* the table to lend; its ctx is this struct */
    const sk_loaded_policy *lp;  /* borrowed */
    int num_workers, max_rows;
    sk_policy_work *work;        /* (num_workers) */
    float *policy_obs;           /* (num_workers, max_rows, obs_size) when obs are normalised */
    uint64_t *rng;               /* (num_workers) each worker's sampling stream */
    float *state;                /* with a core: (num_workers, max_rows, state_size), each row's
                                    h then (LSTM) c; zero at the start */
    sk_role_scratch *role;       /* policy.per_role: (num_workers) rows gathered by role */
} sk_policy_actor;

/*
 * Prepares num_workers workers of up to max_rows rows each over lp (borrowed:
 * it must outlive the actor). Worker w samples from the stream
 * sk_rng_seed(seed, SK_ACTOR_STREAM + w). SK_ERR_INVALID for a count below 1;
 * on failure nothing is left to free.
 */
#define SK_ACTOR_STREAM 0xe7a1ULL
sk_status sk_policy_actor_init(sk_policy_actor *pa, const sk_loaded_policy *lp, int num_workers,
                               int max_rows, uint64_t seed);
void sk_policy_actor_free(sk_policy_actor *pa);

/* Worker w's actions for rows observations (rows <= max_rows): discrete into
 * actions (rows, num_heads), continuous into actions_continuous (rows, dim);
 * logp (rows) of what was taken, or NULL. masks (rows, mask_size) or NULL. With
 * policy.per_role, row r is agent r % roles of its env: the rows start at an env's
 * first agent. */
void sk_policy_actor_act(sk_policy_actor *pa, int worker, const float *obs, const uint8_t *masks,
                         int rows, bool greedy, int32_t *actions, float *actions_continuous,
                         float *logp);
/* The same for a uint8 env's observations (obs_dtype SK_OBS_U8), widened to
 * floats in the worker's scratch. */
void sk_policy_actor_act_u8(sk_policy_actor *pa, int worker, const uint8_t *obs,
                            const uint8_t *masks, int rows, bool greedy, int32_t *actions,
                            float *actions_continuous, float *logp);
/* The same for worker rows at..at+rows-1: with a core, their recurrent states
 * are read and advanced (sk_policy_actor_act is at = 0). */
void sk_policy_actor_act_at(sk_policy_actor *pa, int worker, int at, const float *obs,
                            const uint8_t *masks, int rows, bool greedy, int32_t *actions,
                            float *actions_continuous, float *logp);
/* With a core: zeroes the state of worker rows r < rows where ended[r] (or,
 * with ended NULL, of every row): their next act starts an episode. */
void sk_policy_actor_episode_start(sk_policy_actor *pa, int worker, const uint8_t *ended,
                                   const uint8_t *also_ended, int rows);
/* The state of worker row `row` (state_size floats: h, then c), or NULL without a core. */
float *sk_policy_actor_state(sk_policy_actor *pa, int worker, int row);

/* The loaded policy behind a public sk_agent (agent.c): what src/export/ writes out. */
const sk_loaded_policy *sk_agent_loaded(const sk_agent *agent);

/* What an env's own evaluation borrows from its host: workers (a pool of
 * threads) and the loaded policy acting on each of them. */
typedef struct sk_eval_host {
    sk_pool *pool;
    sk_policy_actor policy; /* policy.actor: the sk_actor to lend */
    sk_parallel parallel;   /* runs a job on every worker of pool */
} sk_eval_host;

/* threads workers (0: one per core), each acting on up to
 * SK_ACTOR_DEFAULT_ROWS rows. Sets OpenBLAS to one thread, as the trainer
 * does: the workers are the parallelism. */
sk_status sk_eval_host_init(sk_eval_host *host, const sk_loaded_policy *lp, int threads);
void sk_eval_host_free(sk_eval_host *host);

#endif
