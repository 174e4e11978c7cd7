/* PPO's pieces that do not depend on the trainer's buffers: the clipped loss
 * and its gradient on a block of rows, and GAE over a slice of envs. */
#ifndef SK_PPO_H
#define SK_PPO_H

#include "../policy/policy.h"

typedef struct sk_ppo_loss_config {
    float clip_coef, ent_coef, vf_coef;
    bool clip_vloss;
} sk_ppo_loss_config;

/* A block of rows of one minibatch, gathered contiguously. For a policy with
 * a core the rows are seq_len steps of rows / seq_len sequences, time-major
 * ((seq_len, sequences, ...)), entering with the states state0 (sequences,
 * the core's state floats) and cut where resets (rows) is 1. */
typedef struct sk_ppo_rows {
    int rows;
    int seq_len;             /* with a core: steps per sequence; rows is a multiple */
    const float *state0;     /* with a core: the state entering each sequence */
    const uint8_t *resets;   /* with a core: (rows) an episode starts at that step, or NULL */
    const float *obs;        /* (rows, obs_size) */
    const int32_t *actions;  /* (rows, num_heads) discrete actions, or NULL */
    const float *actions_continuous; /* (rows, dim) continuous actions, or NULL */
    const uint8_t *masks;    /* (rows, mask_size) or NULL */
    const float *old_logp;   /* (rows) */
    const float *advantages; /* (rows), already normalised if wanted */
    const float *returns;    /* (rows) */
    const float *old_values; /* (rows) */
} sk_ppo_rows;

/* Sums over the rows (divide by the minibatch size for means). */
typedef struct sk_ppo_loss_sums {
    double policy_loss, value_loss, entropy, approx_kl, clip_fraction;
} sk_ppo_loss_sums;

/*
 * Forward and backward of CleanRL's PPO loss
 *   pg - ent_coef * entropy + vf_coef * v
 * over `rows`, each row weighted by `scale` (1 / minibatch size), so the
 * gradients of the blocks of one minibatch add up to the minibatch gradient.
 * Accumulates into grads; adds the unscaled per-row terms into sums.
 */
void sk_ppo_loss_grad(const sk_policy *policy, const float *params, float *grads,
                      sk_policy_work *work, const sk_ppo_rows *rows, float scale,
                      const sk_ppo_loss_config *config, sk_ppo_loss_sums *sums);

/*
 * Generalised advantage estimation for envs lo..hi-1 of storage laid out
 * (T, N) (values (T + 1, N)). Flags are per transition: terminated[t] means
 * the step taken at t ended the episode in a terminal state (no bootstrap);
 * truncated[t] means it hit the time limit, and then the return is
 * bootstrapped from bootstrap[t], the value of the final observation, rather
 * than treated as terminal (bootstrap NULL: treated as terminal, CleanRL's
 * behaviour). Either flag cuts the lambda chain.
 */
void sk_gae(float *advantages, float *returns, const float *rewards, const float *values,
            const uint8_t *terminated, const uint8_t *truncated, const float *bootstrap, int T,
            int N, int lo, int hi, float gamma, float lambda);

/*
 * GAE for a multi-agent env's rows lo..hi-1, where active (T + 1, N) says
 * which steps are the row's agent's own: only those are samples (their
 * advantages and returns; the others' are set to 0). What happens while the
 * agent waits belongs to its last action: the rewards of the inactive steps
 * after an active step t (up to the agent's next active step, or up to an
 * inactive step that ends its episode) are added to step t's reward, and an
 * episode that ends on an inactive step ends step t's trajectory (terminal,
 * or truncated and bootstrapped from that step's bootstrap value). Rewards
 * before an agent's first action of an episode belong to no action and are
 * dropped. Undiscounted within the wait: the agent's clock is its own
 * actions. The last active step of a rollout bootstraps from values[T] when
 * the row is active at T, else from its own value (the critic has no value
 * for a waiting agent).
 */
void sk_gae_active(float *advantages, float *returns, const float *rewards, const float *values,
                   const uint8_t *terminated, const uint8_t *truncated, const float *bootstrap,
                   const uint8_t *active, int T, int N, int lo, int hi, float gamma, float lambda);

/*
 * What the trainer carries from one rollout to the next for each of N rows: an action
 * whose outcome was still to come when the rollout ended (its agent waiting, its episode
 * going on), and what it has earned since. sk_gae_active_pending, in place of bootstrapping
 * such an action from its own value, defers it: it is no sample of that rollout (the steps
 * before it bootstrap from its value, the lambda chain cut there), its value and reward so
 * far kept here; the next rollout adds the rewards that arrive while the agent still waits
 * and resolves it at the agent's next action (bootstrapped from that step's value, its
 * advantage carrying that step's, as if no rollout had ended between) or at its episode's
 * end on an inactive step (Connect Four's loser's -1 when the winning move opened the
 * rollout). Until then it stays waiting.
 */
typedef struct sk_gae_pending {
    uint8_t *waiting;  /* (N) in/out: 1 where the row has a deferred action */
    float *reward;     /* (N) in/out: its own reward and the wait's, so far */
    float *value;      /* (N) in/out: its value */
    int32_t *deferred; /* (N) out: the step of an action deferred at this rollout's end, or -1 */
    uint8_t *resolved; /* (N) out: 1 where an action waiting from before resolved here */
    float *resolved_value, *resolved_adv, *resolved_ret; /* (N) out: that action's */
} sk_gae_pending;

void sk_gae_active_pending(float *advantages, float *returns, const float *rewards,
                           const float *values, const uint8_t *terminated,
                           const uint8_t *truncated, const float *bootstrap,
                           const uint8_t *active, int T, int N, int lo, int hi, float gamma,
                           float lambda, const sk_gae_pending *pending);

/* Normalises x (n) to zero mean and unit (unbiased) std + 1e-8, as CleanRL. */
void sk_normalize(float *out, const float *x, int n);

#endif
