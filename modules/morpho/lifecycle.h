/*
 * Morpho-v0's seed lifecycle: the stages of a slot, the eight-head action
 * and its masks, and the transitions, without any numerics (morpho.c trains
 * and measures; this file decides what is allowed and what happens).
 *
 * Stages of a slot:
 *   DORMANT     empty; the slot is the identity.
 *   GERMINATED  a seed was just created (identity at init); one epoch, then TRAINING.
 *   TRAINING    the seed learns on the detached host activation with its own
 *               optimiser; the forward output is the host's exactly.
 *   BLENDING    alpha moves toward its target; host and seed learn together.
 *   HOLDING     alpha held at 1.
 *   FOSSILIZED  kept for good at alpha 1; pays parameter rent.
 *   PRUNED      the seed was removed this epoch; then
 *   EMBARGOED   5 epochs, then RESETTING 1 epoch, then DORMANT.
 *
 * Ops (head 0): WAIT, GERMINATE, SET_ALPHA_TARGET, PRUNE, FOSSILIZE, ADVANCE.
 * Heads: op (6), slot (3), blueprint (6), style (4), tempo (3: 3, 5, 8
 * epochs), alpha target (3: 0.5, 0.7, 1.0), alpha speed (4: 0, 3, 5, 8
 * epochs), alpha curve (5). slot is relevant to every op but WAIT;
 * blueprint, style and tempo to GERMINATE; the alpha heads to
 * SET_ALPHA_TARGET.
 *
 * Gates (an op is allowed on a slot when):
 *   GERMINATE         the slot is DORMANT and no slot is GERMINATED, TRAINING,
 *                     PRUNED, EMBARGOED or RESETTING (one new seed at a time).
 *   SET_ALPHA_TARGET  BLENDING or HOLDING, not being pruned. From HOLDING a
 *                     target below 1 returns the slot to BLENDING.
 *   PRUNE             GERMINATED, TRAINING, BLENDING or HOLDING, age >= 5, not
 *                     already being pruned. Before blending (GERMINATED,
 *                     TRAINING) the seed goes at once (PRUNED); otherwise alpha
 *                     ramps to 0 over the seed's tempo (linear) and the seed
 *                     is removed when it gets there.
 *   FOSSILIZE         HOLDING with a contribution measured in HOLDING.
 *   ADVANCE           TRAINING for >= 10 epochs with healthy seed gradients
 *                     (-> BLENDING: alpha 0 -> 1 over the tempo, cosine), or
 *                     BLENDING with alpha settled at 1 (-> HOLDING).
 * The mask says exactly this (masks_by_head0: the slot head's mask depends
 * on the op); an action outside it fails and changes nothing.
 */
#ifndef SK_MORPHO_LIFECYCLE_H
#define SK_MORPHO_LIFECYCLE_H

#include "blocks.h"

#include <stdbool.h>
#include <stdint.h>

#define MORPHO_SLOTS 3
#define MORPHO_HEADS 8

typedef enum morpho_stage {
    MORPHO_DORMANT,
    MORPHO_GERMINATED,
    MORPHO_TRAINING,
    MORPHO_BLENDING,
    MORPHO_HOLDING,
    MORPHO_FOSSILIZED,
    MORPHO_PRUNED,
    MORPHO_EMBARGOED,
    MORPHO_RESETTING,
    MORPHO_NUM_STAGES
} morpho_stage;
extern const char *const morpho_stage_names[MORPHO_NUM_STAGES];

typedef enum morpho_op {
    MORPHO_WAIT,
    MORPHO_GERMINATE,
    MORPHO_SET_ALPHA_TARGET,
    MORPHO_PRUNE,
    MORPHO_FOSSILIZE,
    MORPHO_ADVANCE,
    MORPHO_NUM_OPS
} morpho_op;
/* the ops' names, then NULL (the env's extras.action_names) */
extern const char *const morpho_op_names[MORPHO_NUM_OPS + 1];

enum morpho_head {
    MORPHO_HEAD_OP, MORPHO_HEAD_SLOT, MORPHO_HEAD_BLUEPRINT, MORPHO_HEAD_STYLE,
    MORPHO_HEAD_TEMPO, MORPHO_HEAD_TARGET, MORPHO_HEAD_SPEED, MORPHO_HEAD_CURVE
};
extern const int morpho_head_sizes[MORPHO_HEADS];
extern const int morpho_tempo_epochs[3];
extern const float morpho_alpha_targets[3];
extern const int morpho_speed_epochs[4];

/* The rule constants, from the issue. */
#define MORPHO_MIN_TRAINING_EPOCHS 10
#define MORPHO_MIN_PRUNE_AGE 5
#define MORPHO_EMBARGO_EPOCHS 5
#define MORPHO_RESETTING_EPOCHS 1

typedef struct morpho_slot {
    int32_t stage;           /* morpho_stage */
    int32_t blueprint;       /* morpho_blueprint, while a seed exists */
    int32_t style;           /* morpho_style */
    int32_t tempo;           /* epochs */
    int32_t epochs_in_stage; /* ticks since the slot entered its stage */
    int32_t age;             /* ticks since germination */
    int32_t pruning;         /* alpha ramps to 0, then the seed goes */
    int32_t healthy;         /* seed gradients finite and in range last epoch */
    int32_t measured;        /* a contribution was measured in the current stage */
    float grad_norm;         /* mean seed gradient norm over the last epoch */
    float contribution;      /* acc(all) - acc(without this seed), last epoch */
    float contribution_prev;
    float prospect;          /* TRAINING: acc(with the seed as the slot's output) - acc(main) */
    morpho_alpha alpha;
} morpho_slot;

/* What an applied action or a tick did to a slot's seed, for the numerics. */
typedef enum morpho_effect {
    MORPHO_EFFECT_NONE,
    MORPHO_EFFECT_CREATE, /* initialise a seed of slot.blueprint / style */
    MORPHO_EFFECT_REMOVE, /* drop the seed's parameters */
} morpho_effect;

/* The seed of a slot in this stage exists / shapes the forward output. */
bool morpho_stage_has_seed(morpho_stage stage);
bool morpho_stage_blends(morpho_stage stage);

/* The mask size of the action space (masks_by_head0 layout). */
int morpho_mask_size(void);
/* Writes the mask for the slots' state. */
void morpho_masks(const morpho_slot slots[MORPHO_SLOTS], uint8_t *mask);
/* Whether action[0..7] is allowed (the mask's rule, computed directly). */
bool morpho_allowed(const morpho_slot slots[MORPHO_SLOTS], const int32_t action[MORPHO_HEADS]);
/* Applies an action at the start of an epoch: false (and no change) if it is
 * not allowed. effects[slot] says what the numerics must do. */
bool morpho_apply(morpho_slot slots[MORPHO_SLOTS], const int32_t action[MORPHO_HEADS],
                  morpho_effect effects[MORPHO_SLOTS]);
/* The end of an epoch: alpha moves one tick, timers advance, and the timed
 * transitions happen (GERMINATED -> TRAINING, a pruned seed at alpha 0 ->
 * PRUNED (REMOVE), PRUNED -> EMBARGOED -> RESETTING -> DORMANT). */
void morpho_tick(morpho_slot slots[MORPHO_SLOTS], morpho_effect effects[MORPHO_SLOTS]);

#endif
