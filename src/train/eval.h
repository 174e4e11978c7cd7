/* Loading a saved policy for evaluation: the network rebuilt from the
 * checkpoint's config, its weights checked tensor by tensor, and its frozen
 * observation normaliser. */
#ifndef SK_EVAL_H
#define SK_EVAL_H

#include "../policy/policy.h"
#include "normalize.h"

typedef struct sk_loaded_policy {
    const sk_env_def *env; /* the env it was trained on */
    sk_config *cfg;        /* the run's resolved config (env.* keys create the env) */
    sk_policy policy;
    float *params;         /* (policy.num_params) */
    sk_norm_map obs_map;   /* size 0 when observations were not normalised */
    /* What the run's learner (train.algo; sk_algo's load_policy) makes of the policy: */
    bool greedy_only; /* it acts by its greedy action whatever it is asked (dqn, sac) */
    bool squash;      /* continuous: action = tanh(mean) scaled into the bounds (sac) */
    bool no_value;    /* the critic is no state value (dqn, sac): export leaves it out */
    double epsilon;   /* dqn: epsilon-greedy acting (sk_loaded_policy_set_epsilon); else 0 */
    bool clip_actions; /* ppo.clip_actions: continuous actions clipped to the bounds, as in training */
} sk_loaded_policy;

/* Epsilon-greedy evaluation of a DQN run, as its training explored: each row takes, with
 * chance epsilon, a uniform allowed action in place of its argmax of Q (sk_dqn_explore), from
 * the acting worker's stream (the eval seed's). SK_ERR_INVALID naming the value for epsilon
 * outside [0, 1], or naming the learner for a run other than DQN (PPO samples its own policy
 * unless asked for greedy actions; SAC's eval is its deterministic action). */
sk_status sk_loaded_policy_set_epsilon(sk_loaded_policy *lp, double epsilon);

/* actions (rows, space.dim), as the policy gave them, made what the env gets, in place: when
 * lp->squash, tanh(a) scale + bias per dimension, as SAC's actor (CleanRL's); when
 * lp->clip_actions, clipped to the bounds (sk_space_clip), as the run's rollouts did. */
void sk_loaded_policy_env_actions(const sk_loaded_policy *lp, float *actions, int rows);
/* The squash's scale (high - low) / 2 and bias (high + low) / 2 of each dimension (space.dim
 * floats each), for what writes it out (src/export/). */
void sk_loaded_policy_bounds(const sk_loaded_policy *lp, float *scale, float *bias);

/* The checkpoint's env is found from its metadata, the plugin its run
 * recorded (env.plugin) loaded first; env_name, if given, must name that env.
 * SK_ERR_CORRUPT/IO/INVALID name the problem; on failure nothing is left to
 * free. */
sk_status sk_policy_load(sk_loaded_policy *out, const char *checkpoint, const char *env_name);
/* The same with overrides of the run's data locations (see sk_evaluate_with). */
sk_status sk_policy_load_with(sk_loaded_policy *out, const char *checkpoint, const char *env_name,
                              const sk_config *overrides);
void sk_loaded_policy_free(sk_loaded_policy *lp);

/*
 * Runs the env's own evaluation (sk_env_extras.evaluation, e.g. Prover-v0's
 * ranking) with lp as its actor on `threads` workers (0: one per core).
 * options holds eval.* keys for it; a key it did not read fails as unknown
 * (SK_ERR_CONFIG), a bad value as the evaluation says (SK_ERR_INVALID naming
 * the key). SK_ERR_INVALID for an env without an evaluation. Borrows lp.
 */
sk_status sk_evaluate_env(const sk_loaded_policy *lp, const sk_config *options, int threads,
                          sk_progress_fn progress, void *progress_user, sk_env_report *out);
/* sk_evaluate_with_options and sk_evaluate_controller as one rank of a distributed
 * evaluation (every rank calls them): each rank runs its contiguous slice of
 * the evaluation envs, and the counted episodes of all are summed in the order
 * one process counts them, so greedy policies and controllers give one
 * process's figures; sampled actions (and epsilon's draws) take a stream per
 * rank (rank 0's is one process's). A trace is refused under more than one rank. */
struct sk_comm;
sk_status sk_evaluate_options_comm(const char *checkpoint, int episodes, uint64_t seed,
                                   const sk_eval_options *options, const struct sk_comm *comm,
                                   sk_eval_result *out);
sk_status sk_evaluate_controller_comm(const char *env_name, const sk_config *cfg,
                                      sk_controller controller, int episodes, uint64_t seed,
                                      const char *trace_path, const struct sk_comm *comm,
                                      sk_eval_result *out);
/* The same for a policy already loaded (borrowed; what a command's plan hands down,
 * plan.h), and the one path of every evaluation of a checkpoint by episodes: the public
 * calls load and come here, `skinner eval` loads through its plan and comes here. It sets
 * options' epsilon on lp (sk_loaded_policy_set_epsilon, with its refusals) and reads its
 * greedy and trace_path; options' env_name and overrides were the load's and are not read.
 * options NULL: the defaults. */
sk_status sk_evaluate_loaded_comm(sk_loaded_policy *lp, int episodes, uint64_t seed,
                                  const sk_eval_options *options, const struct sk_comm *comm,
                                  sk_eval_result *out);
/* sk_evaluate_controller_comm with the env already found (NULL: SK_ERR_UNKNOWN_ENV with
 * the lookup's message). */
sk_status sk_evaluate_controller_env_comm(const sk_env_def *env, const sk_config *cfg,
                                          sk_controller controller, int episodes, uint64_t seed,
                                          const char *trace_path, const struct sk_comm *comm,
                                          sk_eval_result *out);
/* The same as one rank of a distributed evaluation (every rank calls it): the
 * evaluation splits its units over comm's ranks and gathers their results, so
 * every rank gets the whole report. */
sk_status sk_evaluate_env_comm(const sk_loaded_policy *lp, const sk_config *options, int threads,
                               const struct sk_comm *comm, sk_progress_fn progress,
                               void *progress_user, sk_env_report *out);

/* Pieces of the episode runner that sk_evaluate_versus (versus.c) shares. */
struct sk_policy_actor;
/* The policy's actions (worker 0) for the vec's rows lo..hi-1, from their
 * observations and masks, into the vec's action buffers. */
void sk_eval_policy_act(sk_vec *vec, struct sk_policy_actor *policy, int lo, int hi,
                        bool greedy);
/* Uniform random actions for row i: each head's allowed choices (its mask
 * block, relevance to head 0 as the policy's sampler has it) drawn from rng
 * with zero_logits (all-zero, one per choice of every head), or each
 * continuous value within [low, high]. SK_ERR_INVALID for a mask row that
 * leaves a head nothing to choose (step names when). */
sk_status sk_eval_random_row(sk_vec *vec, uint64_t *rng, const float *zero_logits, int i,
                             int64_t step);

#endif
