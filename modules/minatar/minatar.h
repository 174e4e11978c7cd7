/*
 * MinAtar's games (Young & Tian 2019; rules restated from MinAtar 1.0.15 in
 * ../shared/reference/minatar/rules): each game is one file with a plain-data
 * state of one game (no pointers, so a checkpoint saves it as bytes) and the
 * functions below, in one table per game. The env that batches them (sticky
 * actions, autoreset, observations) is written once over these tables.
 *
 * A game's random draws come from the env's stream (minatar_rng.h), shared
 * with the sticky-action draw, in MinAtar's order, so that an episode is
 * MinAtar's bit for bit (tests/test_minatar_*.c replay its recorded traces).
 */
#ifndef SKINNER_MINATAR_H
#define SKINNER_MINATAR_H

#include "minatar_rng.h"

#include <skinner/module.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MINATAR_SIDE 10
#define MINATAR_NUM_ACTIONS 6 /* 0 no-op, 1 left, 2 up, 3 right, 4 down, 5 fire */

typedef struct minatar_batch minatar_batch; /* minatar_batch.h */
struct sk_env_io;

enum { MINATAR_NOOP, MINATAR_LEFT, MINATAR_UP, MINATAR_RIGHT, MINATAR_DOWN, MINATAR_FIRE };

/* The number of actions in a list such as MINATAR_BREAKOUT_MINIMAL_ACTIONS: a constant. */
#define MINATAR_COUNT(...) ((int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)))

typedef struct minatar_game_ops {
    const char *name;    /* MinAtar's name: "breakout" */
    int channels;        /* C of the 10x10xC observation */
    size_t state_size;   /* bytes of one game's state */
    /* Construction: settings that reset keeps (difficulty ramping). No draw. */
    void (*init)(void *game, bool ramping);
    /* A new game, drawing from rng as MinAtar's reset() does. */
    void (*reset)(void *game, minatar_rng *rng);
    /* One act() with an action in 0..5 (after the sticky rule): returns the
     * reward and sets *terminal. On a game already over: 0, terminal, no change. */
    float (*act)(void *game, minatar_rng *rng, int action, bool *terminal);
    /* The state as MinAtar's state(): obs (10, 10, channels) [y][x][c], 0 or 1. */
    void (*observe)(const void *game, uint8_t *obs);
    /* MinAtar's minimal action set, ascending (the -v1 ids' actions). */
    int num_minimal_actions;
    int minimal_actions[MINATAR_NUM_ACTIONS];
    /* Whether a restored state is one the game can step: every count within its capacity, every
     * position and index within its array or board, every enum in range; false with what and
     * the value in why. */
    bool (*validate)(const void *game, char *why, size_t why_size);
    /* One step of envs lo..hi-1 of a batch: the functions above inlined into
     * minatar_batch_step (minatar_batch.h, MINATAR_BATCH_STEP). */
    void (*step)(const minatar_batch *batch, const struct sk_env_io *io, int lo, int hi);
    /* The same game with observe and step compiled for AVX-512 VBMI, or NULL: what
     * minatar_ops_for_cpu picks where the CPU runs it. */
    const struct minatar_game_ops *vbmi;
} minatar_game_ops;

/* The table of ops's game this process runs, picked once per env state at create: ops->vbmi
 * where the level in use is avx512 and the CPU has AVX-512 VBMI (skinner/module.h), else ops. */
static inline const minatar_game_ops *minatar_ops_for_cpu(const minatar_game_ops *ops) {
    if (ops->vbmi && sk_isa_level_used() == SK_ISA_AVX512 && sk_isa_has_avx512vbmi())
        return ops->vbmi;
    return ops;
}

/* The validators' checks: true when value is in lo..hi, else false with "what is value
 * (expected lo..hi)" in why. */
static inline bool minatar_check_range(const char *what, long value, long lo, long hi, char *why,
                                       size_t why_size) {
    if (value >= lo && value <= hi) return true;
    snprintf(why, why_size, "%s is %ld (expected %ld..%ld)", what, value, lo, hi);
    return false;
}

/* A restored bool is a byte that may hold anything: read as a byte, it must be 0 or 1. */
static inline bool minatar_check_flag(const char *what, const bool *flag, char *why,
                                      size_t why_size) {
    unsigned char byte;
    memcpy(&byte, flag, 1);
    return minatar_check_range(what, byte, 0, 1, why, why_size);
}

/* MinAtar's sticky-action rule, applied before every act(), even on a game that
 * is over: one rand() always; below p the previous applied action repeats.
 * last_action starts at 0 and survives resets. Returns the action to apply. */
static inline int minatar_sticky(minatar_rng *rng, double sticky_prob, int *last_action,
                                 int action) {
    if (minatar_rng_rand(rng) < sticky_prob) action = *last_action;
    *last_action = action;
    return action;
}

extern const minatar_game_ops minatar_freeway;
extern const minatar_game_ops minatar_asterix;
extern const minatar_game_ops minatar_breakout;
extern const minatar_game_ops minatar_space_invaders;
extern const minatar_game_ops minatar_seaquest;

#endif /* SKINNER_MINATAR_H */
