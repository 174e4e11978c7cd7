/*
 * What the off-policy learners (dqn.c; SAC to come) share of a training iteration: the
 * rollout's steps into the replay buffer (final observations where episodes ended), when
 * the gradient steps and target updates of an iteration fall (CleanRL's counting in env
 * steps: a gradient step every `train_frequency` env steps once past `learning_starts`,
 * a target update every `target_frequency`), the linear exploration schedule and the
 * target networks' update.
 *
 * An iteration collects ppo.horizon = T steps of the N env rows (T x N env steps, T
 * chosen by sk_offpolicy_horizon so that they are a whole number R of train_frequency),
 * stores them, then runs its R rounds of gradient_steps gradient steps in order, each
 * round at the env step it would have fallen on in an unbatched loop.
 */
#ifndef SK_OFFPOLICY_H
#define SK_OFFPOLICY_H

#include "replay.h"
#include "trainer_internal.h"

typedef struct sk_offpolicy {
    sk_replay replay;
    bool save_replay;          /* replay.save: the buffer goes into checkpoints */
    int64_t learning_starts;   /* env steps before the first gradient step */
    int train_frequency;       /* env steps per round of gradient steps */
    int gradient_steps_per_round; /* gradient steps a round: the update-to-data ratio is
                                   * this / train_frequency */
    int64_t target_frequency;  /* env steps per target update */
    double tau;                /* target update: target = tau x online + (1 - tau) x target */
    int steps_per_iteration;   /* gradient steps of an iteration: T x N / train_frequency */
    int64_t gradient_steps;    /* taken so far */
    /* each rollout step's final observations where an episode ended, (T, N, obs_size) */
    float *final_obs;
    uint8_t *final_obs_u8;
} sk_offpolicy;

/* The steps per env T of an iteration: the fewest (at least 2 env steps in all) that make
 * T x rows a multiple of train_frequency. */
int sk_offpolicy_horizon(int train_frequency, int rows);
/* Reads replay.size (default replay_default) and replay.save, and the shared keys of
 * `section` (learning_starts, train_frequency, gradient_steps, target_network_frequency,
 * tau) with the defaults given in op; sets tr->s.horizon and a single minibatch. */
sk_status sk_offpolicy_settings(sk_trainer *tr, sk_offpolicy *op, const char *section,
                                int64_t replay_default);
/* Allocates the buffer (memory checked) and the final-observation rows. */
sk_status sk_offpolicy_create(sk_trainer *tr, sk_offpolicy *op);
void sk_offpolicy_free(sk_offpolicy *op);
/* The rollout hook (sk_algo.after_step): keeps step t's final observations of worker
 * wk's rows whose episode ended. */
void sk_offpolicy_after_step(sk_trainer *tr, sk_offpolicy *op, sk_worker *wk, int t);
/* The rollout just collected into the buffer, in (step, row) order. */
void sk_offpolicy_store(sk_trainer *tr, sk_offpolicy *op);
/* Whether gradient step u of the iteration (progress.steps counts the iteration's env
 * steps) falls past learning_starts, and whether a target update follows it (after a
 * round's last step); *env_step: the env steps taken by then (CleanRL's global_step). */
void sk_offpolicy_when(const sk_trainer *tr, const sk_offpolicy *op, int u, bool *learn,
                       bool *update_target, int64_t *env_step);
/* CleanRL's linear_schedule: from start to end over `duration` steps, then end. */
double sk_linear_schedule(double start, double end, double duration, double step);
/* target = tau x online + (1 - tau) x target over n parameters (tau = 1: a copy). */
void sk_target_update(float *target, const float *online, size_t n, double tau);

/* Checkpoint tensors of the shared state (the counters, the buffer if replay.save). */
int sk_offpolicy_save(const sk_trainer *tr, const sk_offpolicy *op, sk_st_tensor *out, int max);
/* Reads them back; a checkpoint without the buffer resumes with an empty one and says the
 * resumed run is not the one that never stopped. */
sk_status sk_offpolicy_restore(sk_trainer *tr, sk_offpolicy *op, const sk_st_file *file,
                               const char *path);

#endif
