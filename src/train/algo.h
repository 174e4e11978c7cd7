/*
 * The learners (train.algo): one row of functions each, so that a new learner is one file
 * and one row in sk_algo_table (algo.c). The trainer owns what every learner shares (the
 * env batch, the policy's layout and parameters, Adam's moments, the workers and their
 * streams, the episode window, the run folder, checkpoints of all that); a row adds what
 * its learner alone needs and decides what an iteration does with the steps collected.
 *
 * An iteration of every learner: the rollout (rollout.c) steps each worker's envs
 * ppo.horizon steps (sk_trainer.s.horizon; a learner's `settings` may set it) with the
 * row's `act` choosing the actions, then the row's `learn` runs on what was collected.
 *
 *   ppo  learner.c: the rollout is the batch; epochs of minibatches over it (the default)
 *   dqn  dqn.c: the rollout's steps go into a replay buffer (replay.h), gradient steps
 *        sample it (offpolicy.c, shared with any other off-policy learner)
 *   sac  sac.c: sac_core.h's learner on the same off-policy iteration
 */
#ifndef SK_ALGO_H
#define SK_ALGO_H

#include "trainer_internal.h"
#include "skinner/safetensors.h"
#include "eval.h"

typedef struct sk_algo {
    const char *name; /* train.algo's value */
    /* The config sections of its own keys (NULL-terminated; "ppo" is read by every run): a
     * key of another learner's section is refused naming the learner it belongs to. */
    const char *const *sections;
    /* Reads the learner's own keys into its settings and may set the rollout's shape in
     * tr->s (horizon, minibatches), after sk_settings_resolve; refuses, naming the key and
     * the reason, what does not apply to it. NULL: nothing to read. */
    sk_status (*settings)(sk_trainer *tr);
    /* Refuses what the resolved run holds that the learner cannot train (an action space,
     * a recurrent core, self-play, several processes), with the reason; the policy, the
     * vec and self-play are configured. NULL: it takes everything the trainer does. */
    sk_status (*check)(sk_trainer *tr);
    /* Allocates the learner's own state once the trainer's table is (NULL: none); freed by
     * destroy, which must accept a partly created state. */
    sk_status (*create)(sk_trainer *tr);
    void (*destroy)(sk_trainer *tr);
    /* Chooses the actions of worker wk's rows for rollout step t from obs_t (B rows, as the
     * policy reads them) and masks_t (NULL without masks): writes the rollout's actions
     * (and whatever else of step t the learner needs) at row t. */
    void (*act)(sk_trainer *tr, sk_worker *wk, int t, const float *obs_t, const uint8_t *masks_t,
                int B);
    /* The rollout computes the critic's values and advantages (PPO) or not. */
    bool rollout_values;
    /* learn fills tr->learner.grad_norms, a norm per policy tensor, every
     * train.grad_stats_every updates (PPO); false: no grad_norms events, whose names and
     * zeros would describe a learner that did not run. */
    bool grad_norms;
    /* Its weights are tr->learner.params, which the governor checks before each rollout and
     * copies after each good update, to restore after an anomaly learn reports (PPO, DQN);
     * false: they live in the learner's own state, which does its own checks (SAC), so the
     * trainer's policy is neither checked nor copied each iteration. */
    bool governed;
    /* What eval, export and serve act with (sk_loaded_policy, eval.h). load_policy NULL: the
     * trainer's policy as sk_policy_configure lays it out, its tensors read by name; else the
     * learner's own networks (SAC's actor): it lays out lp->policy for lp->env, allocates
     * lp->params (sk_alloc) and reads them from the checkpoint, each tensor checked. */
    sk_status (*load_policy)(sk_loaded_policy *lp, const sk_st_file *file, const char *path);
    /* Its policy acts by its greedy action whatever it is asked (DQN's argmax Q: a softmax of
     * Q values is not its policy; SAC's tanh of the mean); no_value: the policy's critic is
     * no state value (export gives no "value"). */
    bool acts_greedily, no_value;
    /* After the vec stepped worker wk's rows for step t (the vec's buffers hold what the
     * step returned, final observations included): NULL, or the learner's copy of it. */
    void (*after_step)(sk_trainer *tr, sk_worker *wk, int t);
    /* Learns from the rollout just collected (progress.update and .steps already count it):
     * fills st's loss fields and learning_rate; a numerical anomaly in *anomaly (the
     * governor restores the last good state). A status other than SK_OK ends the run. */
    sk_status (*learn)(sk_trainer *tr, sk_update_stats *st, const char **anomaly);
    /* The learner's own checkpoint tensors: how many it adds to out (at most max), pointing
     * at its own arrays (they must stay valid until the file is written). NULL: none. */
    int (*save)(const sk_trainer *tr, sk_st_tensor *out, int max);
    /* Reads them back, each checked (sk_checkpoint_restore), into the learner's state. */
    sk_status (*restore)(sk_trainer *tr, const sk_st_file *file, const char *path);
    /* The most optimizer (Adam) steps one iteration takes, which bounds a checkpoint's
     * count; NULL: ppo.update_epochs x ppo.num_minibatches. */
    int64_t (*max_optimizer_steps)(const sk_trainer *tr);
    /* The floating-point work of learning per env step collected, for sk_trainer_flops_per_step. */
    double (*flops_per_step)(const sk_trainer *tr);
    /* The learner's own figures (SAC's temperature, DQN's epsilon, their mean Q), which
     * metrics.csv's shared columns do not hold: their names (NULL-terminated, at most
     * SK_ALGO_MAX_FIGURES; NULL: none), a row of them in RUN_DIR/learner.csv beside each
     * metrics.csv row (and TensorBoard's scalars, and skinner monitor's "learner" line). */
    const char *const *figures;
    /* Their values after the iteration just learned, values[k] for figures[k] (NaN: none). */
    void (*figure_values)(const sk_trainer *tr, double *values);
} sk_algo;

enum { SK_ALGO_MAX_FIGURES = 8 };

extern const sk_algo sk_algo_ppo, sk_algo_dqn, sk_algo_sac;
/* sk_algo_sac's load_policy (sac_policy.c): its actor as an MLP policy, squashed. */
sk_status sk_sac_load_policy(sk_loaded_policy *lp, const sk_st_file *file, const char *path);
extern const sk_algo *const sk_algo_table[]; /* NULL-terminated; the first is the default */

/* train.algo: the row the config names (the first, ppo, when it names none). */
sk_status sk_algo_resolve(const sk_config *cfg, const sk_algo **out);
/* A key of another learner's section in cfg (dqn.* or replay.* under PPO, sac.* under DQN)
 * is refused naming the learners it belongs to, not as an unknown key (which sends the user
 * looking for a typo in a key the docs list); a misspelt key of algo's own sections stays
 * for sk_cfg_check_unused, which names the nearest known key. */
sk_status sk_algo_check_sections(const sk_algo *algo, const sk_config *cfg);

/* Finds tensor `name` of a checkpoint, checks its dtype, element count and (has_range)
 * every element in [lo, hi], and copies it into dst; the message names the tensor. */
sk_status sk_checkpoint_restore(const sk_st_file *file, const char *path, const char *name,
                                sk_st_dtype dtype, void *dst, int64_t count, bool has_range, double lo,
                                double hi);

/* ---- what the learners share of the trainer's loop (trainer.c) ---- */

/* Where samples' inputs lie, a row each: the rollout's rows, the actions waiting across its
 * end (pending) or resolved in it (ready), a minibatch block's rows. obs_u8 NULL in a store
 * of a uint8 env: its rows are floats, widened when copied in. */
typedef struct sk_sample_store {
    float *obs;       /* (rows, obs_size) floats, or NULL in a uint8 env's store of bytes */
    uint8_t *obs_u8;  /* (rows, obs_size) a uint8 env's bytes, or NULL */
    uint8_t *masks;   /* (rows, mask_size) */
    int32_t *actions; /* (rows, num_heads) */
    float *actions_f; /* (rows, action_dim) */
    float *logp;      /* (rows) */
} sk_sample_store;

/* Row k of store `from` into row `at` of store `to`: observation, mask, actions and logp.
 * The one copy of a sample's fields: GAE's deferring and resolving, the minibatch gather.
 * (rollout.c) */
void sk_copy_sample(const sk_rollout *ro, sk_sample_store to, size_t at, sk_sample_store from,
                    size_t k);
/* The rollout's rows and the resolved waiting actions' (ro->ready_*) as stores. */
sk_sample_store sk_rollout_samples(const sk_rollout *ro);
sk_sample_store sk_ready_samples(const sk_rollout *ro);

/* The positions (0 for row wk->lo) of worker wk's rows the learner acts for at step t, into
 * rows (the slice's capacity: wk->role.rows exists with tr->hooks or a multi-agent env):
 * every row but those the rollout's hooks play (tr->hooks' is_other) and, in a multi-agent
 * env, those whose agent waits at t (ro->active 0: the env ignores their actions, GAE and
 * the learner read no value, logp or action of theirs). Their count. (rollout.c) */
int sk_rollout_learner_rows(const sk_trainer *tr, const sk_worker *wk, int t, int32_t *rows);

/* Whether flag holds on any rank (every rank gets the answer). */
bool sk_trainer_any_rank(sk_trainer *tr, bool flag);

#endif
