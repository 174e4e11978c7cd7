/*
 * The MinAtar envs' step over a batch (issue 32 ask 2), written once and compiled into each
 * game's file with that game's act(), observe() and reset() inlined (MINATAR_BATCH_STEP), so
 * that a step of 4096 envs makes no indirect call per env: at 20M env steps/s a step has ~150
 * cycles, and three calls through the ops table, with the spills around them, cost a tenth.
 *
 * A step is MinAtar's Environment.act() for each env: the sticky draw, the game's act(), and
 * on a terminal state the episode log and reset() from the same stream (Gymnasium's same-step
 * autoreset). It writes each env's observation once: an ended episode's last state into
 * final_obs, the next episode's first into obs (no copy between them).
 */
#ifndef SKINNER_MINATAR_BATCH_H
#define SKINNER_MINATAR_BATCH_H

#include "minatar.h"

#include <skinner/env.h>

/* MinAtar has no time limit but Freeway's own; a batch env needs one (a Breakout agent that
 * never misses plays forever): gymnax caps at 1,000. */
#define MINATAR_MAX_EPISODE_STEPS 10000

/* Envs ahead of the one stepped whose stream and game are fetched: each env's 2.5 KB stream
 * and its game sit in separate cache lines, missed at every step of a large batch (4096 envs
 * hold 10 MB of streams). Fetching the game's other lines and the observation row too, or
 * the stream's position twice as far ahead, measured 5-20% slower: the hardware prefetcher
 * follows the sequential arrays by itself. */
#define MINATAR_PREFETCH_AHEAD 8

/* The per-env arrays a step reads and writes, and the settings it needs. */
struct minatar_batch {
    minatar_rng *rng;           /* (num_envs) */
    uint8_t *games;             /* (num_envs, state_size) */
    int32_t *last_action;       /* (num_envs) 0..5, the sticky rule's memory */
    int32_t *episode_length;    /* (num_envs) */
    float *episode_return;      /* (num_envs) */
    const int *action_map;      /* the -v1 ids' minimal set; NULL: the six actions as they are */
    uint64_t sticky_threshold;  /* minatar_rng_threshold53 of env.sticky_action_prob */
    size_t obs_size;            /* 10 * 10 * channels */
};

static inline __attribute__((always_inline)) void
minatar_batch_prefetch(const minatar_batch *batch, size_t state_size, int i, int hi) {
    if (i >= hi) return;
    const minatar_rng *rng = &batch->rng[i];
    __builtin_prefetch(&rng->position);
    int32_t position = rng->position;
    if (position >= 0 && position < MINATAR_MT_WORDS) __builtin_prefetch(&rng->words[position]);
    __builtin_prefetch(batch->games + (size_t)i * state_size);
}

/* Steps envs lo..hi-1 of batch with the game's functions (constants at every call site, so
 * always_inline makes them direct, inlined calls). */
static inline __attribute__((always_inline)) void minatar_batch_step(
    const minatar_batch *batch, const sk_env_io *io, int lo, int hi, size_t state_size,
    float (*act)(void *, minatar_rng *, int, bool *), void (*observe)(const void *, uint8_t *),
    void (*reset)(void *, minatar_rng *)) {
    size_t obs_size = batch->obs_size;
    uint64_t sticky_threshold = batch->sticky_threshold;
    for (int i = lo; i < hi; i++) {
        minatar_batch_prefetch(batch, state_size, i + MINATAR_PREFETCH_AHEAD, hi);
        minatar_rng *rng = &batch->rng[i];
        void *game = batch->games + (size_t)i * state_size;
        int action = io->actions[i];
        if (batch->action_map) action = batch->action_map[action];
        /* MinAtar's sticky rule (minatar_sticky), its rand() < p compared as integers */
        if (minatar_rng_bits53(rng) < sticky_threshold) action = batch->last_action[i];
        batch->last_action[i] = action;
        bool terminal = false;
        float reward = act(game, rng, action, &terminal);
        int32_t length = ++batch->episode_length[i];
        float episode_return = batch->episode_return[i] += reward;
        bool truncated = !terminal && length >= MINATAR_MAX_EPISODE_STEPS;
        io->rewards[i] = reward;
        io->terminated[i] = (uint8_t)terminal;
        io->truncated[i] = (uint8_t)truncated;
        uint8_t *obs = io->obs_u8 + (size_t)i * obs_size;
        if (!terminal && !truncated) {
            observe(game, obs);
            continue;
        }
        observe(game, io->final_obs_u8 + (size_t)i * obs_size);
        io->episode_log[2 * i + 0] = episode_return;
        io->episode_log[2 * i + 1] = (float)length;
        reset(game, rng);
        batch->episode_length[i] = 0;
        batch->episode_return[i] = 0.0f;
        observe(game, obs);
    }
}

/* Defines the game's ops->step: static void NAME(batch, io, lo, hi). */
#define MINATAR_BATCH_STEP(name, state_type, act, observe, reset)                                  \
    static void name(const minatar_batch *batch, const sk_env_io *io, int lo, int hi) {            \
        minatar_batch_step(batch, io, lo, hi, sizeof(state_type), act, observe, reset);            \
    }

#endif /* SKINNER_MINATAR_BATCH_H */
