/* Morpho-v0's seed lifecycle: masks, actions and timed transitions (see lifecycle.h). */
#include "lifecycle.h"

#include <string.h>

const char *const morpho_stage_names[MORPHO_NUM_STAGES] = {
    "dormant", "germinated", "training", "blending", "holding",
    "fossilized", "pruned", "embargoed", "resetting"};
/* NULL-terminated: it is also the env's extras.action_names list */
const char *const morpho_op_names[MORPHO_NUM_OPS + 1] = {
    "wait", "germinate", "set_alpha_target", "prune", "fossilize", "advance", NULL};
const int morpho_head_sizes[MORPHO_HEADS] = {MORPHO_NUM_OPS, MORPHO_SLOTS, MORPHO_NUM_BLUEPRINTS,
                                             MORPHO_NUM_STYLES, 3, 3, 4, MORPHO_NUM_CURVES};
const int morpho_tempo_epochs[3] = {3, 5, 8};
const float morpho_alpha_targets[3] = {0.5f, 0.7f, 1.0f};
const int morpho_speed_epochs[4] = {0, 3, 5, 8};

bool morpho_stage_has_seed(morpho_stage stage) {
    return stage >= MORPHO_GERMINATED && stage <= MORPHO_FOSSILIZED;
}

bool morpho_stage_blends(morpho_stage stage) {
    return stage == MORPHO_BLENDING || stage == MORPHO_HOLDING || stage == MORPHO_FOSSILIZED;
}

int morpho_mask_size(void) {
    int size = MORPHO_NUM_OPS;
    for (int h = 1; h < MORPHO_HEADS; h++) size += MORPHO_NUM_OPS * morpho_head_sizes[h];
    return size;
}

/* A new seed may start: no slot is busy with one that is not yet blending or
 * with the aftermath of a prune. */
static bool germination_free(const morpho_slot slots[MORPHO_SLOTS]) {
    for (int s = 0; s < MORPHO_SLOTS; s++) {
        morpho_stage st = (morpho_stage)slots[s].stage;
        if (st == MORPHO_GERMINATED || st == MORPHO_TRAINING || st == MORPHO_PRUNED ||
            st == MORPHO_EMBARGOED || st == MORPHO_RESETTING)
            return false;
    }
    return true;
}

/* The gate of op on one slot (WAIT has no slot and is always allowed). */
static bool slot_allows(const morpho_slot slots[MORPHO_SLOTS], morpho_op op, int s) {
    const morpho_slot *slot = &slots[s];
    morpho_stage st = (morpho_stage)slot->stage;
    switch (op) {
    case MORPHO_WAIT: return true;
    case MORPHO_GERMINATE: return st == MORPHO_DORMANT && germination_free(slots);
    case MORPHO_SET_ALPHA_TARGET:
        return (st == MORPHO_BLENDING || st == MORPHO_HOLDING) && !slot->pruning;
    case MORPHO_PRUNE:
        return st >= MORPHO_GERMINATED && st <= MORPHO_HOLDING && !slot->pruning &&
               slot->age >= MORPHO_MIN_PRUNE_AGE;
    case MORPHO_FOSSILIZE: return st == MORPHO_HOLDING && slot->measured && !slot->pruning;
    case MORPHO_ADVANCE:
        if (st == MORPHO_TRAINING)
            return slot->epochs_in_stage >= MORPHO_MIN_TRAINING_EPOCHS && slot->healthy;
        return st == MORPHO_BLENDING && !slot->pruning && morpho_alpha_settled(&slot->alpha) &&
               slot->alpha.alpha == 1.0f;
    default: return false;
    }
}

static bool op_allowed(const morpho_slot slots[MORPHO_SLOTS], morpho_op op) {
    if (op == MORPHO_WAIT) return true;
    for (int s = 0; s < MORPHO_SLOTS; s++)
        if (slot_allows(slots, op, s)) return true;
    return false;
}

void morpho_masks(const morpho_slot slots[MORPHO_SLOTS], uint8_t *mask) {
    memset(mask, 1, (size_t)morpho_mask_size());
    for (int op = 0; op < MORPHO_NUM_OPS; op++) mask[op] = op_allowed(slots, (morpho_op)op);
    /* the slot head's block per op; the other heads allow every choice */
    uint8_t *slot_blocks = mask + MORPHO_NUM_OPS;
    for (int op = 0; op < MORPHO_NUM_OPS; op++)
        for (int s = 0; s < MORPHO_SLOTS; s++)
            slot_blocks[op * MORPHO_SLOTS + s] = op == MORPHO_WAIT || slot_allows(slots, (morpho_op)op, s);
}

bool morpho_allowed(const morpho_slot slots[MORPHO_SLOTS], const int32_t action[MORPHO_HEADS]) {
    for (int h = 0; h < MORPHO_HEADS; h++)
        if (action[h] < 0 || action[h] >= morpho_head_sizes[h]) return false;
    morpho_op op = (morpho_op)action[MORPHO_HEAD_OP];
    return op == MORPHO_WAIT || slot_allows(slots, op, action[MORPHO_HEAD_SLOT]);
}

static void enter(morpho_slot *slot, morpho_stage stage) {
    slot->stage = stage;
    slot->epochs_in_stage = 0;
    slot->measured = 0;
}

bool morpho_apply(morpho_slot slots[MORPHO_SLOTS], const int32_t action[MORPHO_HEADS],
                  morpho_effect effects[MORPHO_SLOTS]) {
    for (int s = 0; s < MORPHO_SLOTS; s++) effects[s] = MORPHO_EFFECT_NONE;
    if (!morpho_allowed(slots, action)) return false;
    morpho_op op = (morpho_op)action[MORPHO_HEAD_OP];
    if (op == MORPHO_WAIT) return true;
    int s = action[MORPHO_HEAD_SLOT];
    morpho_slot *slot = &slots[s];
    switch (op) {
    case MORPHO_GERMINATE:
        memset(slot, 0, sizeof *slot);
        slot->blueprint = action[MORPHO_HEAD_BLUEPRINT];
        slot->style = action[MORPHO_HEAD_STYLE];
        slot->tempo = morpho_tempo_epochs[action[MORPHO_HEAD_TEMPO]];
        slot->alpha = morpho_alpha_hold(0.0f);
        enter(slot, MORPHO_GERMINATED);
        effects[s] = MORPHO_EFFECT_CREATE;
        break;
    case MORPHO_SET_ALPHA_TARGET: {
        float target = morpho_alpha_targets[action[MORPHO_HEAD_TARGET]];
        morpho_alpha_retarget(&slot->alpha, target, morpho_speed_epochs[action[MORPHO_HEAD_SPEED]],
                              (morpho_curve)action[MORPHO_HEAD_CURVE]);
        if (slot->stage == MORPHO_HOLDING && target < 1.0f) enter(slot, MORPHO_BLENDING);
        break;
    }
    case MORPHO_PRUNE:
        if (slot->stage == MORPHO_GERMINATED || slot->stage == MORPHO_TRAINING) {
            enter(slot, MORPHO_PRUNED);
            effects[s] = MORPHO_EFFECT_REMOVE;
        } else {
            slot->pruning = 1;
            morpho_alpha_retarget(&slot->alpha, 0.0f, slot->tempo, MORPHO_CURVE_LINEAR);
            if (slot->stage == MORPHO_HOLDING) enter(slot, MORPHO_BLENDING);
        }
        break;
    case MORPHO_FOSSILIZE: enter(slot, MORPHO_FOSSILIZED); break;
    case MORPHO_ADVANCE:
        if (slot->stage == MORPHO_TRAINING) {
            enter(slot, MORPHO_BLENDING);
            morpho_alpha_retarget(&slot->alpha, 1.0f, slot->tempo, MORPHO_CURVE_COSINE);
        } else {
            enter(slot, MORPHO_HOLDING);
        }
        break;
    default: break;
    }
    return true;
}

void morpho_tick(morpho_slot slots[MORPHO_SLOTS], morpho_effect effects[MORPHO_SLOTS]) {
    for (int s = 0; s < MORPHO_SLOTS; s++) {
        morpho_slot *slot = &slots[s];
        effects[s] = MORPHO_EFFECT_NONE;
        if (slot->stage == MORPHO_DORMANT) continue;
        slot->epochs_in_stage++;
        if (morpho_stage_has_seed((morpho_stage)slot->stage)) slot->age++;
        if (slot->stage == MORPHO_BLENDING || slot->stage == MORPHO_HOLDING)
            morpho_alpha_tick(&slot->alpha);
        switch ((morpho_stage)slot->stage) {
        case MORPHO_GERMINATED: enter(slot, MORPHO_TRAINING); break;
        case MORPHO_BLENDING:
            if (slot->pruning && morpho_alpha_settled(&slot->alpha) && slot->alpha.alpha == 0.0f) {
                enter(slot, MORPHO_PRUNED);
                slot->pruning = 0;
                effects[s] = MORPHO_EFFECT_REMOVE;
            }
            break;
        case MORPHO_PRUNED: enter(slot, MORPHO_EMBARGOED); break;
        case MORPHO_EMBARGOED:
            if (slot->epochs_in_stage >= MORPHO_EMBARGO_EPOCHS) enter(slot, MORPHO_RESETTING);
            break;
        case MORPHO_RESETTING:
            if (slot->epochs_in_stage >= MORPHO_RESETTING_EPOCHS) {
                memset(slot, 0, sizeof *slot);
                slot->stage = MORPHO_DORMANT;
            }
            break;
        default: break;
        }
    }
}
