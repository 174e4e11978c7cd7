/*
 * The replay buffer of the off-policy learners (offpolicy.c): a ring of `capacity`
 * transitions (replay.size), each an observation at the env's dtype (a uint8 image stays
 * bytes: MinAtar's 10x10xC frames cost C x 100 bytes, not four times that), its action
 * (discrete heads or continuous), reward, terminated and truncated flags, and the next
 * observation with its action mask. For a step that ended an episode the next
 * observation is the episode's FINAL one (sk_vec_buffers.final_obs), not the autoreset's
 * first, so a truncated step bootstraps from where the episode was cut.
 *
 * Transitions arrive `streams` at a time (one per env row, in row order, step after
 * step), so row i's next transition sits `streams` slots further on (modulo the
 * capacity, a multiple of streams): what n-step returns walk.
 *
 *   sk_replay rb;
 *   sk_replay_spec spec = {.capacity = 10000, .streams = 1, .obs_size = 4, .num_heads = 1};
 *   if (sk_replay_create(&rb, &spec) != SK_OK) ...;     // refuses what will not fit
 *   int64_t slot = sk_replay_next_slot(&rb, 0);           // write the row's fields there
 *   sk_replay_advance(&rb, 1);                            // one step of every stream
 *   sk_replay_sample(&rb, &rng, 128, 1, slots);           // uniform over what it holds
 *   sk_replay_free(&rb);
 */
#ifndef SK_REPLAY_H
#define SK_REPLAY_H

#include "skinner/safetensors.h"
#include "../core/core.h"

typedef struct sk_replay_spec {
    int64_t capacity; /* transitions; a multiple of streams */
    int streams;      /* transitions added per step (the env rows) */
    int obs_size;
    bool obs_u8;      /* observations are bytes (uint8 envs) */
    int num_heads;    /* discrete action heads (0: continuous) */
    int action_dim;   /* continuous action size (0: discrete) */
    int mask_size;    /* the next observation's action mask (0: none) */
} sk_replay_spec;

typedef struct sk_replay {
    sk_replay_spec spec;
    int64_t pos;   /* the slot the next step's first transition goes to */
    int64_t count; /* transitions held, at most capacity */
    float *obs, *next_obs;          /* (capacity, obs_size) float envs, else NULL */
    uint8_t *obs_u8, *next_obs_u8;  /* (capacity, obs_size) uint8 envs, else NULL */
    int32_t *actions;               /* (capacity, num_heads) */
    float *actions_f;               /* (capacity, action_dim) */
    float *rewards;                 /* (capacity) */
    uint8_t *terminated, *truncated; /* (capacity) */
    uint8_t *next_masks;            /* (capacity, mask_size) */
} sk_replay;

/* Bytes the buffer's arrays take. */
size_t sk_replay_bytes(const sk_replay_spec *spec);
/* The memory this machine can give a new allocation: /proc/meminfo's MemAvailable, or
 * the free physical pages (sysconf) where that file is absent; 0 if neither is known. */
size_t sk_machine_available_bytes(void);
/* SK_ERR_CONFIG naming replay.size, the bytes needed and the bytes available when
 * `bytes` (with what the run needs besides, `other_bytes`) exceeds `available`. */
sk_status sk_replay_check_fits(const sk_replay_spec *spec, size_t other_bytes, size_t available);
/* Checks the spec (capacity a multiple of streams, sizes in range) and that it fits in
 * the machine's available memory, then allocates the arrays (zeroed). *rb is zeroed
 * first, so sk_replay_free may be called after a failure. */
sk_status sk_replay_create(sk_replay *rb, const sk_replay_spec *spec);
void sk_replay_free(sk_replay *rb);

/* The slot of stream `stream`'s transition of the next step. */
static inline int64_t sk_replay_next_slot(const sk_replay *rb, int stream) {
    return (rb->pos + stream) % rb->spec.capacity;
}
/* Counts `steps` steps of every stream as written (the oldest are overwritten). */
void sk_replay_advance(sk_replay *rb, int steps);
/* The slot `ahead` steps after slot in the same stream. */
static inline int64_t sk_replay_ahead(const sk_replay *rb, int64_t slot, int ahead) {
    return (slot + (int64_t)ahead * rb->spec.streams) % rb->spec.capacity;
}
/* Transitions a sample may start at: those with n_step - 1 later ones of their stream
 * held (0 when none). */
int64_t sk_replay_sampleable(const sk_replay *rb, int n_step);
/* `batch` slots drawn uniformly, with replacement, from the sampleable transitions (the
 * oldest first: j in [0, sampleable) is slot (oldest + j) % capacity), with rng. The
 * buffer must hold a sampleable transition. */
void sk_replay_sample(const sk_replay *rb, uint64_t *rng, int batch, int n_step, int64_t *slots);
/* The n-step return from slot: r_0 + gamma r_1 + ... over the stream's next transitions,
 * stopping after the first that ended its episode (terminated or truncated) or after
 * n_step; *last is the slot whose next observation the target reads, *discount the
 * factor of its bootstrap (gamma^k, 0 if it terminated). */
float sk_replay_nstep(const sk_replay *rb, int64_t slot, int n_step, float gamma, int64_t *last,
                      float *discount);

/* The buffer's checkpoint tensors ("replay.*": the counters and the rows held, oldest
 * slots as stored), pointing at its arrays: how many were added (at most max). */
int sk_replay_save(const sk_replay *rb, sk_st_tensor *out, int max);
/* Reads them back from a checkpoint, refusing (naming the tensor, the value and the
 * expected range) counters that do not fit this buffer's spec and flags, actions or
 * masks out of range. */
sk_status sk_replay_restore(sk_replay *rb, const sk_st_file *file, const char *path,
                            const int *head_sizes);
/* Whether the checkpoint holds a replay buffer. */
bool sk_replay_in_checkpoint(const sk_st_file *file);

#endif
