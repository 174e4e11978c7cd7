/*
 * Every array the trainer owns, each described once: where it lives (in the
 * trainer, or in each worker for the per-worker size kinds), its element
 * type, its size (from the settings), and, for what a checkpoint carries,
 * its tensor name and the range every restored element must lie in. Alloc,
 * free, save, restore and validation all read this table (checkpoint.c
 * walks the rows with a name).
 */
#include "trainer_state.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define NO_RANGE false, 0.0, 0.0, false, false
#define RANGE(lo, hi) true, (double)(lo), (double)(hi), false, false
#define CORE_PARTS false, 0.0, 0.0, true, false /* each part in its core's range */
/* in range when present; absent (a checkpoint of an older skinner): zeros */
#define OPTIONAL_RANGE(lo, hi) true, (double)(lo), (double)(hi), false, true
#define AT(member) offsetof(sk_trainer, member)
#define WORKER(member) offsetof(sk_worker, member) /* one array per worker */

_Static_assert(sizeof(size_t) == sizeof(uint64_t), "rank_floats is held as SK_ARRAY_U64");

/* Elements per row kind; see sk_trainer_array_count. */
const sk_trainer_array sk_trainer_arrays[] = {
    /* learner: parameters (saved under the policy's tensor names, not here) and Adam */
    {NULL, SK_ARRAY_F32, AT(learner.params), SK_SIZE_PARAMS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(learner.grads), SK_SIZE_PARAMS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(learner.params_t), SK_SIZE_PARAMS, NO_RANGE},
    /* saved under the policy's tensor names, the weights as state.raw_params (checkpoint.c) */
    {NULL, SK_ARRAY_F32, AT(learner.ema), SK_SIZE_EMA, NO_RANGE},
    {"state.adam_m", SK_ARRAY_F32, AT(learner.adam_m), SK_SIZE_PARAMS, RANGE(-INFINITY, INFINITY)},
    {"state.adam_v", SK_ARRAY_F32, AT(learner.adam_v), SK_SIZE_PARAMS, RANGE(0.0, INFINITY)},
    {NULL, SK_ARRAY_F32, AT(learner.governor.params), SK_SIZE_PARAMS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(learner.governor.adam_m), SK_SIZE_PARAMS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(learner.governor.adam_v), SK_SIZE_PARAMS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(learner.mb_adv_norm), SK_SIZE_MINIBATCH, NO_RANGE},
    {NULL, SK_ARRAY_I32, AT(learner.perm), SK_SIZE_BATCH, NO_RANGE},
    {NULL, SK_ARRAY_F64, AT(learner.moments), SK_SIZE_MOMENTS, NO_RANGE},
    {NULL, SK_ARRAY_F64, AT(learner.moments_all), SK_SIZE_MOMENTS_ALL, NO_RANGE},
    /* rollout storage */
    {"state.obs", SK_ARRAY_F32, AT(rollout.obs), SK_SIZE_ROWS1_OBS, RANGE(-INFINITY, INFINITY)},
    {"state.obs_u8", SK_ARRAY_U8, AT(rollout.obs_u8), SK_SIZE_ROWS1_OBS_U8, RANGE(0, 255)},
    {NULL, SK_ARRAY_F32, AT(rollout.logp), SK_SIZE_ROWS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.values), SK_SIZE_ROWS1, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.rewards), SK_SIZE_ROWS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.bootstrap), SK_SIZE_ROWS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.advantages), SK_SIZE_ROWS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.returns), SK_SIZE_ROWS, NO_RANGE},
    {NULL, SK_ARRAY_I32, AT(rollout.actions), SK_SIZE_ROWS_HEADS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.actions_f), SK_SIZE_ROWS_DIM, NO_RANGE},
    {"state.masks", SK_ARRAY_U8, AT(rollout.masks), SK_SIZE_ROWS1_MASK, RANGE(0, 1)},
    {NULL, SK_ARRAY_U8, AT(rollout.terminated), SK_SIZE_ROWS, NO_RANGE},
    {NULL, SK_ARRAY_U8, AT(rollout.truncated), SK_SIZE_ROWS, NO_RANGE},
    {"state.active", SK_ARRAY_U8, AT(rollout.active), SK_SIZE_ROWS1_ACTIVE, RANGE(0, 1)},
    /* the episode merge's gathering */
    {NULL, SK_ARRAY_F32, AT(layout.episodes_local), SK_SIZE_EPISODES, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(layout.episodes_all), SK_SIZE_EPISODES_ALL, NO_RANGE},
    {NULL, SK_ARRAY_F64, AT(layout.episode_counts), SK_SIZE_WORKERS, NO_RANGE},
    {NULL, SK_ARRAY_F64, AT(layout.episode_counts_all), SK_SIZE_WORKERS_ALL, NO_RANGE},
    {"state.discounted_return", SK_ARRAY_F64, AT(rollout.discounted_return), SK_SIZE_ENVS,
     RANGE(-INFINITY, INFINITY)},
    /* the core's state per env: "state.core_h", "state.core_c" (LSTM), each part in the
     * range its core declares */
    {"state.core", SK_ARRAY_F32, AT(rollout.state), SK_SIZE_ENVS_STATE, CORE_PARTS},
    {NULL, SK_ARRAY_F32, AT(rollout.chunk_state), SK_SIZE_CHUNKS_STATE, NO_RANGE},
    /* the distributed layout: each rank's workers, the run's streams, the episode merge's
     * parts and the rollout's exchange (sk_comm) */
    {NULL, SK_ARRAY_I32, AT(layout.rank_workers), SK_SIZE_RANKS, NO_RANGE},
    {NULL, SK_ARRAY_U64, AT(layout.rank_floats), SK_SIZE_RANKS, NO_RANGE},
    {NULL, SK_ARRAY_U64, AT(layout.rngs_all), SK_SIZE_RNGS, NO_RANGE},
    {NULL, SK_ARRAY_I64, AT(layout.part_start), SK_SIZE_PARTS, NO_RANGE},
    {NULL, SK_ARRAY_I32, AT(layout.part_count), SK_SIZE_PARTS, NO_RANGE},
    {NULL, SK_ARRAY_I32, AT(layout.part_cursor), SK_SIZE_PARTS, NO_RANGE},
    {NULL, SK_ARRAY_U8, AT(layout.columns_scratch), SK_SIZE_EXCHANGE, NO_RANGE},
    /* a multi-agent env's actions waiting across a rollout's end, and those resolved */
    {"state.pending_waiting", SK_ARRAY_U8, AT(rollout.pending.waiting), SK_SIZE_PEND, OPTIONAL_RANGE(0, 1)},
    {"state.pending_reward", SK_ARRAY_F32, AT(rollout.pending.reward), SK_SIZE_PEND,
     OPTIONAL_RANGE(-INFINITY, INFINITY)},
    {"state.pending_value", SK_ARRAY_F32, AT(rollout.pending.value), SK_SIZE_PEND,
     OPTIONAL_RANGE(-INFINITY, INFINITY)},
    {"state.pending_obs", SK_ARRAY_F32, AT(rollout.pending_obs), SK_SIZE_PEND_OBS,
     OPTIONAL_RANGE(-INFINITY, INFINITY)},
    {"state.pending_obs_u8", SK_ARRAY_U8, AT(rollout.pending_obs_u8), SK_SIZE_PEND_OBS_U8,
     OPTIONAL_RANGE(0, 255)},
    {"state.pending_masks", SK_ARRAY_U8, AT(rollout.pending_masks), SK_SIZE_PEND_MASK, OPTIONAL_RANGE(0, 1)},
    {"state.pending_actions", SK_ARRAY_I32, AT(rollout.pending_actions), SK_SIZE_PEND_HEADS,
     OPTIONAL_RANGE(0, INT32_MAX)}, /* each below its head's size: checkpoint.c */
    {"state.pending_actions_f", SK_ARRAY_F32, AT(rollout.pending_actions_f), SK_SIZE_PEND_DIM,
     OPTIONAL_RANGE(-INFINITY, INFINITY)},
    {"state.pending_logp", SK_ARRAY_F32, AT(rollout.pending_logp), SK_SIZE_PEND,
     OPTIONAL_RANGE(-INFINITY, INFINITY)},
    {NULL, SK_ARRAY_I32, AT(rollout.pending.deferred), SK_SIZE_PEND, NO_RANGE},
    {NULL, SK_ARRAY_U8, AT(rollout.pending.resolved), SK_SIZE_PEND, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.pending.resolved_value), SK_SIZE_PEND, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.pending.resolved_adv), SK_SIZE_PEND, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.pending.resolved_ret), SK_SIZE_PEND, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.ready_obs), SK_SIZE_PEND_OBS, NO_RANGE},
    {NULL, SK_ARRAY_U8, AT(rollout.ready_obs_u8), SK_SIZE_PEND_OBS_U8, NO_RANGE},
    {NULL, SK_ARRAY_U8, AT(rollout.ready_masks), SK_SIZE_PEND_MASK, NO_RANGE},
    {NULL, SK_ARRAY_I32, AT(rollout.ready_actions), SK_SIZE_PEND_HEADS, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.ready_actions_f), SK_SIZE_PEND_DIM, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(rollout.ready_logp), SK_SIZE_PEND, NO_RANGE},
    /* self-play: the pool, the ratings, and each env's opponent, role, stream, whether its
     * game is unrated and whether its listed player waits */
    {"selfplay.pool", SK_ARRAY_F32, AT(sp.pool), SK_SIZE_SP_POOL, RANGE(-INFINITY, INFINITY)},
    {NULL, SK_ARRAY_F32, AT(sp.pool_t), SK_SIZE_SP_POOL, NO_RANGE},
    {"selfplay.ratings", SK_ARRAY_F64, AT(sp.ratings), SK_SIZE_SP_RATINGS, RANGE(-1e9, 1e9)},
    {"selfplay.counters", SK_ARRAY_I64, AT(sp.counters), SK_SIZE_SP_COUNTERS, RANGE(0, 1e18)},
    {"selfplay.opponent", SK_ARRAY_I32, AT(sp.opponent), SK_SIZE_SP_ENVS,
     /* -1: itself (selfplay.pool_share < 1); -2 - k: a listed opponent (sk_selfplay_check) */
     RANGE(-1 - SK_SELFPLAY_MAX_OPPONENTS, SK_SELFPLAY_MAX_POOL - 1)},
    {"selfplay.role", SK_ARRAY_I32, AT(sp.role), SK_SIZE_SP_ENVS, RANGE(0, 1)},
    {"selfplay.rng", SK_ARRAY_U64, AT(sp.rng), SK_SIZE_SP_ENVS, NO_RANGE},
    {"selfplay.unrated", SK_ARRAY_U8, AT(sp.unrated), SK_SIZE_SP_ENVS, OPTIONAL_RANGE(0, 1)},
    {"selfplay.listed_waits", SK_ARRAY_U8, AT(sp.listed_waits), SK_SIZE_SP_ENVS,
     OPTIONAL_RANGE(0, 1)}, /* an older checkpoint's: 0, every env searches */
    {NULL, SK_ARRAY_I32, AT(sp.game_opponent), SK_SIZE_SP_GAMES, NO_RANGE},
    {NULL, SK_ARRAY_F32, AT(sp.game_score), SK_SIZE_SP_GAMES, NO_RANGE},
    {NULL, SK_ARRAY_I32, AT(sp.opponent_actions), SK_SIZE_SP_OPPONENT_ACTIONS, NO_RANGE},
    /* each worker's: its gradient share, its gathered minibatch block, the truncation
     * bootstrap's copies and its episodes of a rollout */
    {NULL, SK_ARRAY_F32, WORKER(grads), SK_SIZE_W_PARAMS, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(mb_obs), SK_SIZE_W_BLOCK_OBS, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(mb_logp), SK_SIZE_W_BLOCK, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(mb_adv), SK_SIZE_W_BLOCK, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(mb_returns), SK_SIZE_W_BLOCK, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(mb_values), SK_SIZE_W_BLOCK, NO_RANGE},
    {NULL, SK_ARRAY_I32, WORKER(mb_actions), SK_SIZE_W_BLOCK_HEADS, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(mb_actions_f), SK_SIZE_W_BLOCK_DIM, NO_RANGE},
    {NULL, SK_ARRAY_U8, WORKER(mb_masks), SK_SIZE_W_BLOCK_MASK, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(mb_state0), SK_SIZE_W_BLOCK_STATES, NO_RANGE},
    {NULL, SK_ARRAY_U8, WORKER(mb_resets), SK_SIZE_W_BLOCK, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(trunc_obs), SK_SIZE_W_SLICE_OBS, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(obs_wide), SK_SIZE_W_SLICE_OBS_U8, NO_RANGE},
    {NULL, SK_ARRAY_I32, WORKER(trunc_index), SK_SIZE_W_SLICE, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(trunc_state), SK_SIZE_W_SLICE_STATE, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(episodes), SK_SIZE_W_EPISODES, NO_RANGE},
    {NULL, SK_ARRAY_I32, WORKER(role.rows), SK_SIZE_W_ROLE, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(role.obs), SK_SIZE_W_ROLE_OBS, NO_RANGE},
    {NULL, SK_ARRAY_U8, WORKER(role.masks), SK_SIZE_W_ROLE_MASK, NO_RANGE},
    {NULL, SK_ARRAY_I32, WORKER(role.actions), SK_SIZE_W_ROLE_HEADS, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(role.actions_f), SK_SIZE_W_ROLE_DIM, NO_RANGE},
    {NULL, SK_ARRAY_F32, WORKER(role.logp), SK_SIZE_W_ROLE, NO_RANGE},
};
const int sk_trainer_num_arrays = (int)(sizeof sk_trainer_arrays / sizeof sk_trainer_arrays[0]);

static const size_t g_type_sizes[] = {
    [SK_ARRAY_F32] = 4, [SK_ARRAY_F64] = 8, [SK_ARRAY_I32] = 4,
    [SK_ARRAY_I64] = 8, [SK_ARRAY_U8] = 1,  [SK_ARRAY_U64] = 8,
};

size_t sk_array_type_size(sk_array_type type) { return g_type_sizes[type]; }

static bool per_worker(sk_size_kind kind) { return kind >= SK_SIZE_W_PARAMS; }

/* Elements of an array of that kind; wk: the worker of a per-worker kind. */
static size_t array_count(const sk_trainer *tr, const sk_worker *wk, sk_size_kind kind) {
    SK_ASSERT(!per_worker(kind) || wk);
    if (!per_worker(kind)) return sk_trainer_array_count(tr, kind);
    size_t slice = (size_t)(wk->hi - wk->lo);
    size_t L = (size_t)tr->rollout.bptt_horizon;
    size_t parts = (size_t)tr->layout.minibatch_parts;
    size_t block_sequences = ((size_t)tr->learner.minibatch_capacity + parts - 1) / parts;
    size_t block = block_sequences * L, S = (size_t)tr->rollout.state_size;
    /* rows gathered to act: by role (policy.per_role), the learner's or a pool member's, a
     * multi-agent env's active ones */
    size_t by_role =
        sk_policy_roles(&tr->learner.policy) > 1 || tr->sp.on || tr->rollout.num_agents > 1
            ? slice : 0;
    switch (kind) {
    case SK_SIZE_W_PARAMS: /* a gradient block: the learner runs one a thread (train.slices) */
        return wk - tr->workers < tr->num_threads ? tr->learner.policy.num_params : 0;
    case SK_SIZE_W_SLICE: return slice;
    case SK_SIZE_W_SLICE_OBS: return slice * (size_t)tr->obs_size;
    case SK_SIZE_W_SLICE_OBS_U8: return tr->rollout.obs_u8_dtype ? slice * (size_t)tr->obs_size : 0;
    case SK_SIZE_W_SLICE_STATE: return slice * S;
    case SK_SIZE_W_BLOCK: return block;
    case SK_SIZE_W_BLOCK_OBS: return block * (size_t)tr->obs_size;
    case SK_SIZE_W_BLOCK_HEADS: return block * (size_t)tr->num_heads;
    case SK_SIZE_W_BLOCK_DIM: return block * (size_t)tr->action_dim;
    case SK_SIZE_W_BLOCK_MASK: return block * (size_t)tr->mask_size;
    case SK_SIZE_W_BLOCK_STATES: return block_sequences * S;
    case SK_SIZE_W_EPISODES:
        return SK_EPISODE_RECORD(tr->env->num_log_fields) * ((size_t)tr->s.horizon * slice + 1);
    case SK_SIZE_W_ROLE_OBS: return by_role * (size_t)tr->obs_size;
    case SK_SIZE_W_ROLE_MASK: return by_role * (size_t)tr->mask_size;
    case SK_SIZE_W_ROLE_HEADS: return by_role * (size_t)tr->num_heads;
    case SK_SIZE_W_ROLE_DIM: return by_role * (size_t)tr->action_dim;
    case SK_SIZE_W_ROLE: return by_role;
    default: SK_ASSERT(false && "unknown size kind"); return 0;
    }
}

size_t sk_trainer_array_count(const sk_trainer *tr, sk_size_kind kind) {
    SK_ASSERT(!per_worker(kind));
    /* the rows (envs x agents) this rank holds: all of the run's, or its own in scale mode */
    size_t num_rows = (size_t)tr->rollout.num_rows, rows = num_rows * (size_t)tr->s.horizon, rows1 = rows + num_rows;
    const sk_rollout *ro = &tr->rollout;
    size_t state = (size_t)ro->state_size;
    size_t chunks = (size_t)tr->s.horizon / (size_t)ro->bptt_horizon;
    switch (kind) {
    case SK_SIZE_ENVS_STATE: return num_rows * state;
    case SK_SIZE_CHUNKS_STATE: return chunks * num_rows * state;
    case SK_SIZE_PARAMS: return tr->learner.policy.num_params;
    case SK_SIZE_EMA: return tr->s.ema_decay > 0.0 ? tr->learner.policy.num_params : 0;
    case SK_SIZE_ENVS: return num_rows;
    case SK_SIZE_ROWS: return rows;
    case SK_SIZE_ROWS1: return rows1;
    case SK_SIZE_ROWS1_OBS: return ro->obs_u8_dtype ? 0 : rows1 * (size_t)tr->obs_size;
    case SK_SIZE_ROWS1_OBS_U8: return ro->obs_u8_dtype ? rows1 * (size_t)tr->obs_size : 0;
    case SK_SIZE_ROWS_HEADS: return rows * (size_t)tr->num_heads;
    case SK_SIZE_ROWS_DIM: return rows * (size_t)tr->action_dim;
    case SK_SIZE_ROWS1_MASK: return rows1 * (size_t)tr->mask_size;
    case SK_SIZE_ROWS1_ACTIVE: return ro->num_agents > 1 ? rows1 : 0;
    case SK_SIZE_BATCH: return rows + (ro->num_agents > 1 ? num_rows : 0); /* + resolved waits */
    case SK_SIZE_MINIBATCH: /* this rank's: the run's minibatch in exact mode */
        return (size_t)tr->learner.minibatch_capacity * (size_t)ro->bptt_horizon;
    case SK_SIZE_MOMENTS: return (size_t)tr->layout.max_workers * (1 + 2 * (size_t)tr->obs_size);
    case SK_SIZE_EPISODES: return rows * SK_EPISODE_RECORD(tr->env->num_log_fields);
    case SK_SIZE_EPISODES_ALL: /* every rank's episodes: at most one per row of the run and step */
        return (size_t)tr->s.num_envs * (size_t)sk_env_agents(tr->env) * (size_t)tr->s.horizon *
               SK_EPISODE_RECORD(tr->env->num_log_fields);
    case SK_SIZE_WORKERS: return (size_t)tr->layout.max_workers;
    case SK_SIZE_WORKERS_ALL: return (size_t)tr->comm.size * (size_t)tr->layout.max_workers;
    case SK_SIZE_MOMENTS_ALL:
        return (size_t)tr->comm.size * sk_trainer_array_count(tr, SK_SIZE_MOMENTS);
    case SK_SIZE_RANKS: return (size_t)tr->comm.size;
    case SK_SIZE_RNGS: return 1 + (size_t)tr->layout.total_workers;
    case SK_SIZE_PARTS: return (size_t)tr->comm.size * (size_t)tr->layout.max_workers;
    case SK_SIZE_EXCHANGE: return sk_trainer_exchange_bytes((sk_trainer *)tr);
    case SK_SIZE_PEND: return ro->num_agents > 1 ? num_rows : 0;
    case SK_SIZE_PEND_OBS: return ro->num_agents > 1 && !ro->obs_u8_dtype ? num_rows * (size_t)tr->obs_size : 0;
    case SK_SIZE_PEND_OBS_U8: return ro->num_agents > 1 && ro->obs_u8_dtype ? num_rows * (size_t)tr->obs_size : 0;
    case SK_SIZE_PEND_MASK: return ro->num_agents > 1 ? num_rows * (size_t)tr->mask_size : 0;
    case SK_SIZE_PEND_HEADS: return ro->num_agents > 1 ? num_rows * (size_t)tr->num_heads : 0;
    case SK_SIZE_PEND_DIM: return ro->num_agents > 1 ? num_rows * (size_t)tr->action_dim : 0;
    case SK_SIZE_SP_POOL:
        return tr->sp.on ? (size_t)tr->sp.pool_size * tr->learner.policy.num_params : 0;
    case SK_SIZE_SP_RATINGS: return tr->sp.on ? (size_t)tr->sp.pool_size + 1 : 0;
    case SK_SIZE_SP_COUNTERS: return tr->sp.on ? SK_SELFPLAY_COUNTERS : 0;
    case SK_SIZE_SP_ENVS: return tr->sp.on ? num_rows / 2 : 0;
    case SK_SIZE_SP_GAMES: return tr->sp.on ? (size_t)tr->s.horizon * num_rows / 2 : 0;
    case SK_SIZE_SP_OPPONENT_ACTIONS:
        return tr->sp.on && tr->sp.opponent_share > 0 ? num_rows * (size_t)tr->num_heads : 0;
    default: break; /* per worker: array_count */
    }
    SK_ASSERT(false && "unknown size kind");
    return 0;
}

void **sk_trainer_array_slot(sk_trainer *tr, const sk_trainer_array *row) {
    SK_ASSERT(!per_worker(row->size));
    return (void **)((char *)tr + row->offset);
}

/* The slot of a row in the trainer, or in worker wk for a per-worker row. */
static void **slot_of(sk_trainer *tr, sk_worker *wk, const sk_trainer_array *row) {
    return (void **)((char *)(per_worker(row->size) ? (void *)wk : (void *)tr) + row->offset);
}

/* Runs fn on every (row, worker) pair: a trainer row once (wk NULL), a per-worker row for
 * each worker. */
static sk_status each_array(sk_trainer *tr, bool ranks_only,
                            sk_status (*fn)(sk_trainer *tr, sk_worker *wk,
                                            const sk_trainer_array *row)) {
    for (int i = 0; i < sk_trainer_num_arrays; i++) {
        const sk_trainer_array *row = &sk_trainer_arrays[i];
        if ((row->size == SK_SIZE_RANKS) != ranks_only) continue;
        int count = per_worker(row->size) ? (tr->workers ? tr->num_workers : 0) : 1;
        for (int w = 0; w < count; w++) {
            sk_status status = fn(tr, per_worker(row->size) ? &tr->workers[w] : NULL, row);
            if (status != SK_OK) return status;
        }
    }
    return SK_OK;
}

static sk_status alloc_array(sk_trainer *tr, sk_worker *wk, const sk_trainer_array *row) {
    size_t bytes = array_count(tr, wk, row->size) * g_type_sizes[row->type];
    void *data = sk_alloc(bytes + 1); /* + 1: empty arrays (no masks) are still distinct */
    if (!data) return sk_fail(SK_ERR_NOMEM, "out of memory (%zu bytes for the trainer)", bytes);
    *slot_of(tr, wk, row) = data;
    return SK_OK;
}

static sk_status free_array(sk_trainer *tr, sk_worker *wk, const sk_trainer_array *row) {
    void **slot = slot_of(tr, wk, row);
    sk_free(*slot);
    *slot = NULL;
    return SK_OK;
}

sk_status sk_trainer_state_alloc(sk_trainer *tr, bool ranks_only) {
    return each_array(tr, ranks_only, alloc_array);
}

void sk_trainer_state_free(sk_trainer *tr) {
    each_array(tr, true, free_array);
    each_array(tr, false, free_array);
}

size_t sk_trainer_rollout_bytes(const sk_trainer *tr) {
    size_t bytes = 0;
    for (int i = 0; i < sk_trainer_num_arrays; i++) {
        sk_size_kind kind = sk_trainer_arrays[i].size;
        bool rollout = kind == SK_SIZE_ROWS || kind == SK_SIZE_ROWS1 || kind == SK_SIZE_ROWS1_OBS ||
                       kind == SK_SIZE_ROWS1_OBS_U8 || kind == SK_SIZE_ROWS_HEADS ||
                       kind == SK_SIZE_ROWS_DIM || kind == SK_SIZE_ROWS1_MASK ||
                       kind == SK_SIZE_CHUNKS_STATE;
        if (rollout) bytes += sk_trainer_array_count(tr, kind) * g_type_sizes[sk_trainer_arrays[i].type];
    }
    return bytes;
}

size_t sk_trainer_current_row(const sk_trainer *tr) {
    return tr->progress.update > 0 ? (size_t)tr->s.horizon * (size_t)tr->rollout.num_rows : 0;
}
