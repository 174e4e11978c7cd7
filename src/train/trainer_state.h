/* The table of the trainer's arrays (trainer_state.c). */
#ifndef SK_TRAINER_STATE_H
#define SK_TRAINER_STATE_H

#include "trainer_internal.h"

/* How many elements an array has, from the settings. */
typedef enum sk_size_kind {
    SK_SIZE_PARAMS,     /* the policy's parameters */
    SK_SIZE_EMA,        /* the same with ppo.ema_decay > 0, else 0 */
    SK_SIZE_ENVS,       /* N */
    SK_SIZE_ROWS,       /* T x N */
    SK_SIZE_ROWS1,      /* (T + 1) x N */
    SK_SIZE_ROWS1_OBS,  /* (T + 1) x N x obs_size: float observations (0 for uint8) */
    SK_SIZE_ROWS1_OBS_U8, /* (T + 1) x N x obs_size: uint8 observations (0 for float) */
    SK_SIZE_ROWS_HEADS, /* T x N x num_heads */
    SK_SIZE_ROWS_DIM,   /* T x N x action_dim */
    SK_SIZE_ROWS1_MASK, /* (T + 1) x N x mask_size */
    SK_SIZE_ROWS1_ACTIVE, /* (T + 1) x N for a multi-agent env, else 0 */
    SK_SIZE_BATCH,      /* T x N (+ N for a multi-agent env: actions resolved after a wait) */
    SK_SIZE_MINIBATCH,
    SK_SIZE_MOMENTS,     /* max_workers x (1 + 2 obs_size): packed running-statistics accumulations */
    SK_SIZE_MOMENTS_ALL, /* ranks x the above */
    SK_SIZE_EPISODES,    /* T x N x SK_EPISODE_RECORD: every row's episodes of a rollout */
    SK_SIZE_EPISODES_ALL,
    SK_SIZE_WORKERS,     /* max_workers (a rank's workers, padded to the largest count) */
    SK_SIZE_WORKERS_ALL, /* ranks x max_workers */
    SK_SIZE_ENVS_STATE,   /* N x the core's state floats (0 without a core) */
    SK_SIZE_CHUNKS_STATE, /* T / L x N x the core's state floats */
    /* the distributed layout */
    SK_SIZE_RANKS,        /* ranks: sized by the communicator alone, allocated before the
                           * workers are counted (sk_trainer_state_alloc's ranks_only) */
    SK_SIZE_RNGS,         /* 1 + the run's workers: the shuffle stream, then each worker's */
    SK_SIZE_PARTS,        /* ranks x max_workers */
    SK_SIZE_EXCHANGE,     /* bytes of the rollout's exchange between ranks (0 in one process) */
    /* a multi-agent env's deferred actions (sk_gae_pending), each 0 for a single agent */
    SK_SIZE_PEND,       /* N */
    SK_SIZE_PEND_OBS,   /* N x obs_size, a float env's */
    SK_SIZE_PEND_OBS_U8, /* N x obs_size, a uint8 env's */
    SK_SIZE_PEND_MASK,
    SK_SIZE_PEND_HEADS,
    SK_SIZE_PEND_DIM,
    /* self-play (selfplay.h), each 0 when it is off */
    SK_SIZE_SP_POOL,      /* pool_size x the policy's parameters */
    SK_SIZE_SP_RATINGS,   /* pool_size + 1 */
    SK_SIZE_SP_COUNTERS,  /* SK_SELFPLAY_COUNTERS */
    SK_SIZE_SP_ENVS,      /* the envs (rows / 2) */
    SK_SIZE_SP_GAMES,     /* T x the envs */
    SK_SIZE_SP_OPPONENT_ACTIONS, /* rows x heads, with selfplay.opponent_share > 0 */
    /* per worker (the row's offset is into sk_worker); slice: its envs, block: its share of
     * a minibatch, block_sequences x L rows */
    SK_SIZE_W_PARAMS,
    SK_SIZE_W_SLICE,
    SK_SIZE_W_SLICE_OBS,
    SK_SIZE_W_SLICE_OBS_U8, /* slice x obs_size for a uint8 env's widened rows (0 for float) */
    SK_SIZE_W_SLICE_STATE,
    SK_SIZE_W_BLOCK,
    SK_SIZE_W_BLOCK_OBS,
    SK_SIZE_W_BLOCK_HEADS,
    SK_SIZE_W_BLOCK_DIM,
    SK_SIZE_W_BLOCK_MASK,
    SK_SIZE_W_BLOCK_STATES, /* block_sequences x the core's state floats */
    SK_SIZE_W_EPISODES,     /* (T x slice + 1) episode records */
    /* rows gathered to act (sk_role_scratch: policy.per_role, self-play), else 0: slice x ... */
    SK_SIZE_W_ROLE_OBS,
    SK_SIZE_W_ROLE_MASK,
    SK_SIZE_W_ROLE_HEADS,
    SK_SIZE_W_ROLE_DIM,
    SK_SIZE_W_ROLE,
} sk_size_kind;

typedef struct sk_trainer_array {
    const char *checkpoint_name; /* NULL: scratch, not saved */
    sk_array_type type;
    size_t offset;               /* offsetof the pointer in sk_trainer */
    sk_size_kind size;
    bool has_range;              /* a restored element must lie in [lo, hi] (floats: and be finite) */
    double lo, hi;
    /* (N, S) states of the policy's core: saved as one tensor per part of the core's
     * state, checkpoint_name + "_" + the part's name, (N x core_size) each, in the part's
     * range (sk_core_ops) */
    bool core_parts;
    /* a checkpoint without it (of an older skinner) restores zeros */
    bool optional;
} sk_trainer_array;

extern const sk_trainer_array sk_trainer_arrays[];
extern const int sk_trainer_num_arrays;

/* Elements of a trainer array of that kind (not a per-worker kind). */
size_t sk_trainer_array_count(const sk_trainer *tr, sk_size_kind kind);
/* The trainer's slot of a row (not a per-worker row). */
void **sk_trainer_array_slot(sk_trainer *tr, const sk_trainer_array *row);
size_t sk_array_type_size(sk_array_type type);

#endif
