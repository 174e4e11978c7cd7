/*
 * Morpho-v0's internals, shared by morpho.c and its tests: the per-env state
 * and the measurements a test can check by hand.
 */
#ifndef SK_MORPHO_INTERNAL_H
#define SK_MORPHO_INTERNAL_H

#include "conv_blocks.h"
#include "data.h"
#include "morpho.h"

#define MORPHO_CLASSES 10
#define MORPHO_HISTORY 5
#define MORPHO_SUBSETS (1 << MORPHO_SLOTS)

enum { MORPHO_HOST_LINEAR, MORPHO_HOST_CNN };

typedef struct morpho_cfg {
    int epochs, batches, batch_size, val_size, hidden;
    int host;      /* MORPHO_HOST_* (env.host) */
    int precision; /* sk_precision (env.precision; bf16 needs the CNN host) */
    int channels;  /* the CNN host's first stage width (env.channels) */
    bool host_relu; /* the CNN host's stages end in a ReLU (env.host_relu) */
    /* env.fixed_seeds: slots 0..fixed_seeds-1 hold a seed of fixed_blueprint
     * (ADD, alpha 1) from the first epoch and the controller's actions are
     * ignored: the ceiling of early growth, and the speed benchmark's load */
    int fixed_seeds, fixed_blueprint;
    float lr, seed_lr, clip;
    /* shaped-reward weights (env.w_*), defaults and meaning in morpho.c */
    float w_accuracy, w_attr, w_rent, w_fossil, w_prune, w_terminal;
    bool sparse;
} morpho_cfg;

/* Everything about an env but its parameters, checkpointed as bytes (the
 * env.meta array): no implicit padding (the reserved words are where the
 * compiler padded before they were named, so older checkpoints read the
 * same), and morpho_check_state validates every field before a restored
 * env steps. */
typedef struct morpho_meta {
    morpho_slot slots[MORPHO_SLOTS];
    int32_t reserved0; /* 0; aligns rng */
    uint64_t rng;      /* data order, host init */
    uint64_t seed_rng; /* seed init: its own stream, so a seed leaves the host's draws alone */
    int32_t epoch, perm_pos, last_op, last_success;
    float loss_hist[MORPHO_HISTORY], acc_hist[MORPHO_HISTORY]; /* most recent last */
    float train_loss, val_loss, val_acc;
    float subset_acc[MORPHO_SUBSETS]; /* validation accuracy with exactly these blending seeds on */
    float potential;
    float episode_return;
    int32_t reserved1; /* 0; rounds the size to rng's alignment */
} morpho_meta;

_Static_assert(sizeof(morpho_meta) ==
                   MORPHO_SLOTS * sizeof(morpho_slot) + 2 * sizeof(int32_t) + 2 * sizeof(uint64_t) +
                       4 * sizeof(int32_t) + (2 * MORPHO_HISTORY + 3 + MORPHO_SUBSETS + 2) * sizeof(float),
               "morpho_meta is written as bytes: every byte must be a named field");
_Static_assert(sizeof(morpho_slot) == 13 * 4 + sizeof(morpho_alpha) && sizeof(morpho_alpha) == 6 * 4,
               "morpho_slot is written as bytes: every byte must be a named field");

/* Scratch of one env's epoch (not state). */
typedef struct morpho_work {
    float *x, *h[MORPHO_SLOTS], *s[MORPHO_SLOTS], *y[MORPHO_SLOTS], *seed_cache[MORPHO_SLOTS];
    float *blend_cache[MORPHO_SLOTS], *logits, *dlogits, *dy, *dh, *ds, *grads;
    float *pooled, *dpooled; /* the CNN head's input and its gradient, (B, channels) */
    uint8_t *labels;
    sk_conv *host_conv[MORPHO_SLOTS];         /* the CNN host's stages; NULL for the linear host */
    morpho_conv_ctx *seed_ctx[MORPHO_SLOTS]; /* the CNN slots' seed convolutions */
} morpho_work;

typedef struct morpho_state {
    morpho_cfg cfg;
    const morpho_data *data;
    int num_envs, D, H;
    /* each slot's activation: (height, width, channels), dim = their product
     * (the linear host: (1, 1, H)) */
    morpho_geom geom[MORPHO_SLOTS];
    size_t dim[MORPHO_SLOTS], max_dim;
    /* per image: the largest seed cache and blend cache over slots and kinds */
    size_t seed_cache, blend_cache;
    /* arena layout, in floats */
    size_t host_params, seed_params, blend_params, slot_stride, arena;
    size_t off_host, off_host_mom, off_slot[MORPHO_SLOTS];
    float *arena_all, *snapshot_all;
    morpho_meta *meta;
    int32_t *perm; /* (num_envs, n_train) */
    morpho_work *work;
} morpho_state;

/* ---- morpho_train.c: the host at work ---- */

/* The arena's offsets (off_host, off_host_mom, off_slot, arena) from
 * host_params, seed_params and blend_params. */
void morpho_layout(morpho_state *m);
/* Env i's host freshly initialised from rng, its momentum zero. */
void morpho_host_reset(const morpho_state *m, int i, uint64_t *rng);
/* A new seed of slot's blueprint and blend in env i's slot s (momentum zero). */
void morpho_seed_create(const morpho_state *m, int i, int s, const morpho_slot *slot,
                        uint64_t *rng);
/* The slots whose seeds blend into the host (bit k = slot k). */
unsigned morpho_blending_mask(const morpho_meta *meta);
/* One epoch of env i's training. Returns false when the governor rolled it back. */
bool morpho_train_epoch(morpho_state *m, int i);
/* Accuracy (and the mean loss into loss_out, unless NULL) of env i over n
 * examples with the blending seeds in `on`. */
double morpho_evaluate(const morpho_state *m, int i, const float *xs, const uint8_t *ys, int n,
                       unsigned on, double *loss_out);
/* Validation accuracy of every subset of env i's blending seeds, contributions. */
void morpho_validate(morpho_state *m, int i);
/* Exact Shapley values of the seeds in `present` (bit k = slot k) from the
 * accuracy of every subset of them (subset_acc[subset]); 0 for the others. */
void morpho_shapley(const float subset_acc[MORPHO_SUBSETS], unsigned present,
                    float out[MORPHO_SLOTS]);
/* Host parameter count: W0 (H, D), b0, W1 (H, H), b1, W2, b2, Wout (10, H), bout,
 * at the start of each env's arena; momentum follows. */
size_t morpho_host_params(int D, int H);
/* The training loss of env i on (x, labels) and its gradient (host, then each
 * slot's seed and blend parameters, morpho_grad_floats in all) as one
 * minibatch of the epoch computes them; B <= env.batch_size. */
double morpho_loss_grad(morpho_state *m, int i, const float *x, const uint8_t *labels, int B,
                        float *grads);
size_t morpho_grad_floats(const morpho_state *m);
/* ---- host.c: the host's layers and the seeds of its slots ---- */

/* Host tensors: stage weights and biases w[k], b[k], then the head's w[3], b[3]. */
typedef struct morpho_host_view {
    float *w[MORPHO_SLOTS + 1], *b[MORPHO_SLOTS + 1];
} morpho_host_view;
morpho_host_view morpho_host_at(const morpho_state *m, float *base);
/* From cfg, D and H: geom, dim, host_params, seed_params, blend_params and the caches. */
sk_status morpho_host_setup(morpho_state *m);
void morpho_host_init(const morpho_state *m, float *host, uint64_t *rng);
/* The host's forward multiply-adds per image. */
double morpho_host_macs(const morpho_state *m);
sk_status morpho_work_host_create(const morpho_state *m, morpho_work *w);
void morpho_work_host_free(morpho_work *w);
/* Stage k: out (B, dim[k]) = act(layer_k(in)). */
void morpho_stage_forward(const morpho_state *m, morpho_work *w, const morpho_host_view *v, int k,
                          const float *in, float *out, int B);
/* From dout at the stage's output (overwritten), g's stage k +=, din += (NULL: none). */
void morpho_stage_backward(const morpho_state *m, morpho_work *w, const morpho_host_view *v,
                           const morpho_host_view *g, int k, const float *in, const float *out,
                           float *dout, float *din, int B);
/* w->logits from the last slot's output; backward from w->dlogits into din (+=). */
void morpho_head_forward(const morpho_state *m, morpho_work *w, const morpho_host_view *v,
                         const float *in, int B);
void morpho_head_backward(const morpho_state *m, morpho_work *w, const morpho_host_view *v,
                          const morpho_host_view *g, const float *in, float *din, int B);
/* Slot k's seed of a blueprint (the head's index) on this host. */
size_t morpho_slot_seed_params(const morpho_state *m, int k, int blueprint);
double morpho_slot_seed_macs(const morpho_state *m, int k, int blueprint);
const char *morpho_slot_blueprint_name(const morpho_state *m, int blueprint);
void morpho_slot_seed_init(const morpho_state *m, int k, int blueprint, float *params,
                           uint64_t *rng);
/* w->s[k] = seed(w->h[k]) with w->seed_cache[k]; backward: dx, dparams += . */
void morpho_slot_seed_forward(const morpho_state *m, morpho_work *w, int k, int blueprint,
                              const float *params, int B);
void morpho_slot_seed_backward(const morpho_state *m, morpho_work *w, int k, int blueprint,
                               const float *params, const float *ds, float *dx, float *dparams,
                               int B);

/* Slot k's seed parameters (then its blend's) in env i's arena. */
float *morpho_slot_params(const morpho_state *m, int i, int k);

#endif
