/*
 * Self-play for two-player zero-sum envs (num_agents = 2), selfplay.* keys:
 * in each env the learning policy plays one agent (its role, swapped after
 * every game, so it moves first every other game) and a snapshot from a pool
 * of its past weights plays the other, picked for each game by rating. Only
 * the learner's rows are samples; the opponent's act with the snapshot's
 * weights. Every finished game updates both Elo ratings; every
 * selfplay.snapshot_every updates the learner's weights join the pool (the
 * oldest leaves when it is full) with the learner's rating; a game under way
 * against the member that left is finished against the new one and rates no
 * one. The pool, the ratings and each env's role, opponent and stream are in
 * checkpoints.
 *
 * selfplay.pool_share (default 1) mixes the two ways of playing, as OpenAI
 * Five's 80% of games against the current weights and 20% against past ones:
 * each game is against a pool member with that probability (drawn from the
 * env's stream), else the learning policy plays both sides, both agents' rows
 * are samples, and the game rates no one (opponent -1).
 *
 * selfplay.opponents (a comma-separated list of the env's built-in opponents,
 * sk_env_extras.opponents: "alphabeta:2, alphabeta:4") and
 * selfplay.opponent_share (default 0) add a third kind of game: with that
 * probability the learner plays one of the list, drawn uniformly (opponent
 * -2 - k for the list's k-th), whose moves come from the env's own player
 * (a search of the whole state, never part of a policy). Such games rate no
 * one; their scores go to opponents.csv beside elo.csv, one column per
 * listed opponent, the mean score of the games that ended since the last row.
 */
#ifndef SK_SELFPLAY_H
#define SK_SELFPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "skinner/env.h"

#define SK_SELFPLAY_MAX_POOL 64
#define SK_SELFPLAY_MAX_OPPONENTS 8 /* selfplay.opponents' entries */

/* The expected score of a player rated ra against one rated rb:
 * 1 / (1 + 10^((rb - ra) / 400)). */
double sk_elo_expected(double ra, double rb);
/* After a game the first player scored `score` in (1 win, 0.5 draw, 0 loss):
 * ra += k (score - E), rb -= the same. */
void sk_elo_update(double *ra, double *rb, double score, double k);
/* A pool member among the first `count`: by rating, member j with
 * probability 10^(r_j / 400) / sum (its Bradley-Terry strength: stronger
 * snapshots are met more), else uniformly. One draw of rng. */
int sk_selfplay_pick(const double *ratings, int count, bool by_rating, uint64_t *rng);

typedef struct sk_selfplay {
    bool on;
    int pool_size, snapshot_every;
    bool by_rating;
    double elo_k, initial_rating, pool_share;
    double opponent_share;      /* selfplay.opponent_share: games against a listed opponent */
    int num_opponents;          /* selfplay.opponents' entries */
    const sk_env_opponent *opponents[SK_SELFPLAY_MAX_OPPONENTS]; /* the env's entries */
    int opponent_args[SK_SELFPLAY_MAX_OPPONENTS];                /* NAME:ARG's values */
    void *env_state;            /* what the listed opponents read (sk_vec_state) */
    int32_t *opponent_actions;  /* (rows, heads) their actions, each env's rows written alone */
    double vs_score[SK_SELFPLAY_MAX_OPPONENTS]; /* since opponents.csv's last row */
    int64_t vs_games[SK_SELFPLAY_MAX_OPPONENTS];
    FILE *opponents_csv;
    float *pool;            /* (pool_size, num_params) snapshots */
    float *pool_t;          /* (pool_size, num_params) their weights transposed for the
                               rollout, made where a member is written */
    int64_t members_transposed; /* the members' transpositions so far (test_hotloop counts
                                   them: one a write, none a rollout) */
    double *ratings;        /* (pool_size + 1) the pool's, then the learner's */
    int64_t *counters;      /* (SK_SELFPLAY_COUNTERS) */
    int32_t *opponent;      /* (envs) the snapshot each env's learner plays; -1: itself;
                               -2 - k: selfplay.opponents' k-th */
    int32_t *role;          /* (envs) the learner's agent in each env */
    uint64_t *rng;          /* (envs) each env's stream: picking opponents, and a listed
                               one's tie-breaks */
    uint8_t *listed_waits;  /* (envs) 1: a listed opponent's row waits at the next step (the
                               env's flag, kept before the row is marked not a sample): its
                               search would be thrown away, so it is skipped */
    uint8_t *unrated;       /* (envs) 1: the game under way began against a pool member a
                               snapshot has since replaced; its result rates no one */
    int32_t *game_opponent; /* (T, envs) the snapshot of a game that ended there (-2 - k: a
                               listed opponent), or -1 */
    float *game_score;      /* (T, envs) the learner's score of that game */
    FILE *elo_csv;
} sk_selfplay;

enum { SK_SELFPLAY_MEMBERS, SK_SELFPLAY_NEXT, SK_SELFPLAY_GAMES, SK_SELFPLAY_COUNTERS };

struct sk_trainer;
struct sk_rollout_hooks;
/* pool_t = every member's weights transposed (sk_policy_transpose_weights), after a
 * checkpoint's restore wrote the pool; the initial member (sk_selfplay_start) and each
 * snapshot (sk_selfplay_after_update) transpose their own as they write it. Nothing when
 * self-play is off. */
void sk_selfplay_transpose_pool(struct sk_trainer *tr);
/* The floats of the pool's members, which the rollout reads through pool_t (0: no self-play). */
size_t sk_selfplay_pool_floats(const struct sk_trainer *tr);
/* Reads selfplay.* (before the trainer's arrays are sized). */
sk_status sk_selfplay_configure(struct sk_trainer *tr);
/* The first snapshot (the initial weights), the ratings and each env's role and opponent. */
void sk_selfplay_start(struct sk_trainer *tr);
/* After a checkpoint's restore (path: for the message): SK_ERR_CORRUPT unless the pool's
 * member count is 1..pool_size, its next slot 0..pool_size - 1 and every env's opponent a
 * member (they index the pool and the ratings), or -1 when selfplay.pool_share < 1, or
 * -2 - k for a listed opponent k while selfplay.opponent_share > 0. */
sk_status sk_selfplay_check(const struct sk_trainer *tr, const char *path);
/* selfplay.opponents as played, each NAME:ARG (NAME alone without an argument) joined with
 * ", " into out ("" without any): a checkpoint's metadata names them (a resume with another
 * list is refused), and opponents.csv's columns. */
void sk_selfplay_opponents_text(const sk_selfplay *sp, char *out, size_t size);
/* A checkpoint's list (its metadata; NULL: written before the list was kept) against this
 * run's: another list is refused, naming both. */
sk_status sk_selfplay_check_opponents(const struct sk_trainer *tr, const char *saved,
                                      const char *path);
/* Self-play's row of the rollout's hooks (trainer_internal.h), with sp as their context:
 * the opponents' actions, each finished game recorded (roles swapped, the next opponent
 * picked), the opponents' rows kept out of the samples and the episodes, and after the
 * rollout the games' Elo updates in (step, env) order. NULL when self-play is off. */
const struct sk_rollout_hooks *sk_selfplay_hooks(const sk_selfplay *sp);
/* After update u: the snapshot, and (rank 0) a row of RUN_DIR/elo.csv. SK_ERR_IO naming the
 * file when it cannot be opened or written (the caller ends the run, as for metrics.csv). */
sk_status sk_selfplay_after_update(struct sk_trainer *tr);
/* summary.json's "selfplay" member (nothing when off). */
void sk_selfplay_summary(const struct sk_trainer *tr, FILE *f);
void sk_selfplay_close(struct sk_trainer *tr);

#endif
