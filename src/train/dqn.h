/* DQN's update over one batch (dqn.c), apart from the loop so that a test can give it a
 * batch and weights and compare with a reference. */
#ifndef SK_DQN_H
#define SK_DQN_H

#include "../policy/policy.h"

/* One sampled batch: B rows of observations, the action taken, the (n-step) return and
 * the discount of the bootstrap (gamma^n, 0 where the episode terminated), the next
 * observations and their masks (NULL: every action legal). */
typedef struct sk_dqn_batch {
    int rows;
    const float *obs, *next_obs;    /* (rows, obs_size) */
    const int32_t *actions;         /* (rows) */
    const float *returns, *discounts; /* (rows) */
    const uint8_t *next_masks;      /* (rows, num_actions) or NULL */
} sk_dqn_batch;

/* The loss mean((Q(s, a) - y)^2), y = return + discount x max over legal a' of
 * Q_target(s', a') (double_q: Q_target(s', argmax over legal a' of Q(s', a'))), and its
 * gradient with respect to the online parameters accumulated into grads (the Q values are
 * the policy's actor outputs). work holds `rows` rows at least; q_next (rows, num_actions)
 * is scratch. Returns the loss; *q_taken (if not NULL) gets the mean Q(s, a) of the batch. */
double sk_dqn_loss_grad(const sk_policy *policy, const float *params, const float *target,
                        float *grads, const sk_dqn_batch *batch, bool double_q, float *q_next,
                        sk_policy_work *work, double *q_taken);
/* The masked greedy action of a row of Q values. */
int sk_dqn_argmax(const float *q, const uint8_t *mask, int num_actions);
/* A uniform legal action (mask NULL: any of num_actions; none legal: 0), one draw of *rng:
 * epsilon-greedy's exploring choice, in training and in eval (actor.c). */
int sk_dqn_explore(const uint8_t *mask, int num_actions, uint64_t *rng);

#endif
