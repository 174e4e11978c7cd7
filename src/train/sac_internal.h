/*
 * The sk_sac object, shared by src/train/sac_core.c (layout, creation, arrays, acting) and
 * src/train/sac_step.c (the critic, actor, alpha and target steps).
 *
 * Rows are split into row_blocks contiguous blocks, each with its own workspace and its own
 * gradient; a step computes the blocks (on the workers of sk_sac_set_parallel's threads, or
 * inline), then sums their gradients in block order into `grads` before Adam. The result
 * depends on the number of blocks, never on the number of threads.
 *
 * Forwards read each layer's W^T from a copy made once after its weights change (Adam, the
 * targets' step, and sk_sac_arrays, which hands out writable pointers, mark it stale), the
 * same bits as a forward that transposes for itself.
 */
#ifndef SK_SAC_INTERNAL_H
#define SK_SAC_INTERNAL_H

#include "sac_net.h"

enum {
    SK_SAC_MAX_ARRAYS = (2 * SK_SAC_MAX_LAYERS + 4) + 4 * 2 * (SK_SAC_MAX_LAYERS + 1) + 5,
};

/* A block's loss sums, added over the blocks in order. */
typedef enum {
    SK_SAC_SUM_QF1_LOSS, SK_SAC_SUM_QF2_LOSS, SK_SAC_SUM_QF1, SK_SAC_SUM_QF2,
    SK_SAC_SUM_ACTOR_LOSS, SK_SAC_SUM_LOGP, SK_SAC_SUM_ALPHA, SK_SAC_NUM_SUMS,
} sk_sac_sum;

typedef struct sk_sac_block {
    float *grads;                         /* (num_params): this block's gradient */
    float *actor_acts[SK_SAC_MAX_LAYERS]; /* (block_rows, hidden) each */
    float *head, *dhead;                  /* (block_rows, 2 act_dim) */
    float *actions, *squashed, *log_std_tanh, *daction; /* (block_rows, act_dim) */
    float *logp, *dlogp, *target_q;       /* (block_rows) */
    float *q_acts[2][SK_SAC_MAX_LAYERS];  /* (block_rows, hidden) each */
    float *q_out[2], *dq[2];              /* (block_rows) */
    float *q_in, *dq_in;                  /* (block_rows, obs_size + act_dim) */
    float *scratch;                       /* (2 block_rows, hidden) */
    double sums[SK_SAC_NUM_SUMS];
} sk_sac_block;

struct sk_sac {
    sk_sac_config config;
    sk_sac_net actor, qf[2];   /* offsets within each network's own block */
    size_t actor_base, q_base[2], target_base[2]; /* each network's start in params / targets */
    size_t num_params, q_floats;                  /* every parameter; both Q networks' */
    float *params, *grads, *adam_m, *adam_v;      /* (num_params): actor, qf1, qf2 */
    float *targets;                               /* (q_floats): qf1_target, qf2_target */
    float *alpha_state;                           /* log_alpha, its Adam m and v */
    float scale[SK_MAX_ACTION_DIM], bias[SK_MAX_ACTION_DIM];
    sk_sac_counters counters;
    sk_sac_array arrays[SK_SAC_MAX_ARRAYS];
    int num_arrays;
    int block_rows; /* each block's capacity: ceil(max_rows / row_blocks) */
    sk_sac_block blocks[SK_SAC_MAX_BLOCKS];
    float *noise; /* sk_sac_update_rng's: (1 + 2 policy_frequency) (max_rows, act_dim) */
    float *zeros; /* (block_rows, act_dim): the deterministic action's noise */
    sk_parallel parallel;
    bool has_parallel;
    /* W^T of the layers that read it (sk_sac_net's transposed), each network's block: made
     * again only when its weights changed (the SK_SAC_WT_* bits of stale), not on every
     * forward of every block */
    float *wt_actor, *wt_q[2], *wt_targets[2];
    unsigned stale;
    void *memory;
};

/* stale's bits: the networks whose W^T copies no longer match their weights */
enum { SK_SAC_WT_ACTOR = 1, SK_SAC_WT_Q = 2, SK_SAC_WT_TARGETS = 4, SK_SAC_WT_ALL = 7 };

/* The W^T copies of the networks in `need` (SK_SAC_WT_* bits) that are stale made again, on
 * the calling thread: about 5 matrices an update, where a sync of the workers to share them
 * cost more than the half it saved on a busy machine (bench/sac_update). */
void sk_sac_refresh_transposes(sk_sac *sac, unsigned need);

/* The actor on rows of obs with noise, into the block's head, actions, logp, squashed and
 * log_std_tanh. */
void sk_sac_actor_forward(sk_sac *sac, sk_sac_block *block, const float *obs, int rows,
                          const float *noise);

#endif
