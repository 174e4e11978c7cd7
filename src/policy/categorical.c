/* Factored masked categorical distributions: one softmax per head over its
 * allowed actions; heads irrelevant to a row's head-0 action add nothing to
 * that row's log-probability or entropy (see sk_action_space). */
#include "../core/core.h"
#include "../core/rng.h"
#include "policy.h"
#include "../nn/kernels.h"
#include "../nn/nn.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* Two actions, one head, no mask (CartPole): the kernels' branch-free rows (src/nn/isa/softmax2.c)
 * at the ISA level in use. */
static inline bool binary_fast(const sk_action_space *space, const uint8_t *mask) {
    return mask == NULL && space->num_heads == 1 && space->head_sizes[0] == 2;
}

static inline bool head_relevant(const sk_action_space *space, int head, int32_t action0) {
    uint64_t when = space->relevant_when[head];
    return head == 0 || when == 0 || (action0 >= 0 && action0 < 64 && ((when >> action0) & 1u));
}

static inline bool allowed(const uint8_t *mask, int j) { return mask == NULL || mask[j] != 0; }

int sk_action_mask_size(const sk_action_space *space) {
    if (space->kind != SK_SPACE_DISCRETE) return 0;
    if (space->num_heads < 1 || space->num_heads > SK_MAX_HEADS) return -1;
    int64_t n0 = space->head_sizes[0], size = n0; /* a term is below 2^62: stops past INT_MAX */
    for (int h = 1; h < space->num_heads && size >= 0 && size <= INT_MAX; h++)
        size += space->masks_by_head0 ? n0 * space->head_sizes[h] : space->head_sizes[h];
    return size >= 0 && size <= INT_MAX ? (int)size : -1;
}

/* Head h's mask within a row's mask m_row (NULL: unmasked), given the row's
 * head-0 choice a0 (ignored for h = 0). `offset` is the head's logit offset,
 * which is also its mask offset in the plain layout. */
static inline const uint8_t *head_mask(const sk_action_space *space, const uint8_t *m_row, int h,
                                       int32_t a0, int offset) {
    if (!m_row) return NULL;
    if (!space->masks_by_head0 || h == 0) return m_row + offset;
    if (!head_relevant(space, h, a0)) return NULL;
    int n0 = space->head_sizes[0], at = n0;
    for (int k = 1; k < h; k++) at += n0 * space->head_sizes[k];
    return m_row + at + (size_t)a0 * space->head_sizes[h];
}

int sk_action_check(const sk_action_space *space, const uint8_t *mask_row,
                    const int32_t *action_row) {
    if (space->kind != SK_SPACE_DISCRETE) return -1;
    int32_t a0 = action_row[0];
    for (int h = 0, offset = 0; h < space->num_heads; offset += space->head_sizes[h], h++) {
        int32_t a = action_row[h];
        if (a < 0 || a >= space->head_sizes[h]) return h;
        if (h > 0 && !head_relevant(space, h, a0)) continue;
        const uint8_t *m = head_mask(space, mask_row, h, a0, offset);
        if (m && !m[a]) return h;
    }
    return -1;
}

static bool any_allowed(const uint8_t *mask, int n) {
    for (int j = 0; j < n; j++)
        if (mask[j]) return true;
    return false;
}

int sk_action_mask_unusable(const sk_action_space *space, const uint8_t *mask) {
    if (!any_allowed(mask, space->head_sizes[0])) return 0;
    int offset = space->head_sizes[0];
    for (int h = 1; h < space->num_heads; h++) {
        if (!space->masks_by_head0) {
            if (!any_allowed(mask + offset, space->head_sizes[h])) return h;
        } else {
            for (int32_t a0 = 0; a0 < space->head_sizes[0]; a0++)
                if (mask[a0] && head_relevant(space, h, a0) &&
                    !any_allowed(head_mask(space, mask, h, a0, 0), space->head_sizes[h]))
                    return h;
        }
        offset += space->head_sizes[h];
    }
    return -1;
}

/* Log of the normaliser over the allowed logits of one head. NaN when no
 * allowed logit is a number above -inf: weights that overflow are numerical
 * trouble for the governor to roll back, not a crash. A mask that allows
 * nothing is the env's fault, which the trainer's checked step reports
 * (sk_vec_step_checked) before any sampling; here it gives NaN too. */
static inline float head_log_normaliser(const float *z, const uint8_t *mask, int n) {
    float max = -INFINITY;
    for (int j = 0; j < n; j++)
        if (allowed(mask, j) && z[j] > max) max = z[j];
    if (max == -INFINITY) return NAN;
    float sum = 0.0f;
    for (int j = 0; j < n; j++)
        if (allowed(mask, j)) sum += expf(z[j] - max);
    return max + logf(sum);
}

void sk_categorical_sample(const sk_action_space *space, const float *logits, const uint8_t *mask,
                           int B, uint64_t *rng, bool greedy, int32_t *actions, float *logp) {
    if (binary_fast(space, mask)) {
        sk_nn_kernels_used()->binary_sample(logits, B, rng, greedy, actions, logp);
        return;
    }
    int logits_size = 0, mask_size = sk_action_mask_size(space);
    for (int h = 0; h < space->num_heads; h++) logits_size += space->head_sizes[h];
    for (int row = 0; row < B; row++) {
        const float *z_row = logits + (size_t)row * logits_size;
        const uint8_t *m_row = mask ? mask + (size_t)row * mask_size : NULL;
        int32_t *a_row = actions + (size_t)row * space->num_heads;
        float row_logp = 0.0f;
        int offset = 0;
        for (int h = 0; h < space->num_heads; h++) {
            int n = space->head_sizes[h];
            const float *z = z_row + offset;
            const uint8_t *m = head_mask(space, m_row, h, h ? a_row[0] : 0, offset);
            float lse = head_log_normaliser(z, m, n);
            int chosen = -1;
            if (greedy) {
                for (int j = 0; j < n; j++)
                    if (allowed(m, j) && (chosen < 0 || z[j] > z[chosen])) chosen = j;
            } else {
                float u = sk_rng_float(rng), cumulative = 0.0f;
                for (int j = 0; j < n; j++) {
                    if (!allowed(m, j)) continue;
                    chosen = j; /* the last allowed action absorbs rounding */
                    cumulative += expf(z[j] - lse);
                    if (u < cumulative) break;
                }
            }
            if (chosen < 0) { /* nothing allowed: a valid index, and a NaN log-probability */
                chosen = 0;
                lse = NAN;
            }
            a_row[h] = chosen;
            if (head_relevant(space, h, a_row[0])) row_logp += z[chosen] - lse;
            offset += n;
        }
        logp[row] = row_logp;
    }
}

void sk_categorical_evaluate(const sk_action_space *space, const float *logits,
                             const uint8_t *mask, const int32_t *actions, int B, float *logp,
                             float *entropy) {
    if (binary_fast(space, mask)) {
        sk_nn_kernels_used()->binary_evaluate(logits, actions, B, logp, entropy);
        return;
    }
    int logits_size = 0, mask_size = sk_action_mask_size(space);
    for (int h = 0; h < space->num_heads; h++) logits_size += space->head_sizes[h];
    for (int row = 0; row < B; row++) {
        const float *z_row = logits + (size_t)row * logits_size;
        const uint8_t *m_row = mask ? mask + (size_t)row * mask_size : NULL;
        const int32_t *a_row = actions + (size_t)row * space->num_heads;
        float row_logp = 0.0f, row_entropy = 0.0f;
        int offset = 0;
        for (int h = 0; h < space->num_heads; h++) {
            int n = space->head_sizes[h];
            const float *z = z_row + offset;
            const uint8_t *m = head_mask(space, m_row, h, a_row[0], offset);
            offset += n;
            if (!head_relevant(space, h, a_row[0])) continue;
            float lse = head_log_normaliser(z, m, n);
            row_logp += z[a_row[h]] - lse;
            for (int j = 0; j < n; j++) {
                if (!allowed(m, j)) continue;
                float lp = z[j] - lse;
                row_entropy -= expf(lp) * lp;
            }
        }
        logp[row] = row_logp;
        entropy[row] = row_entropy;
    }
}

void sk_categorical_backward(const sk_action_space *space, const float *logits,
                             const uint8_t *mask, const int32_t *actions, int B,
                             const float *dlogp, const float *dentropy, float *dlogits) {
    if (binary_fast(space, mask)) {
        sk_nn_kernels_used()->binary_backward(logits, actions, B, dlogp, dentropy, dlogits);
        return;
    }
    int logits_size = 0, mask_size = sk_action_mask_size(space);
    for (int h = 0; h < space->num_heads; h++) logits_size += space->head_sizes[h];
    for (int row = 0; row < B; row++) {
        const float *z_row = logits + (size_t)row * logits_size;
        const uint8_t *m_row = mask ? mask + (size_t)row * mask_size : NULL;
        const int32_t *a_row = actions + (size_t)row * space->num_heads;
        float *d_row = dlogits + (size_t)row * logits_size;
        int offset = 0;
        for (int h = 0; h < space->num_heads; h++) {
            int n = space->head_sizes[h];
            const float *z = z_row + offset;
            const uint8_t *m = head_mask(space, m_row, h, a_row[0], offset);
            float *d = d_row + offset;
            offset += n;
            if (!head_relevant(space, h, a_row[0])) {
                for (int j = 0; j < n; j++) d[j] = 0.0f;
                continue;
            }
            float lse = head_log_normaliser(z, m, n);
            float head_entropy = 0.0f;
            for (int j = 0; j < n; j++) {
                if (!allowed(m, j)) continue;
                float lp = z[j] - lse;
                head_entropy -= expf(lp) * lp;
            }
            for (int j = 0; j < n; j++) {
                if (!allowed(m, j)) {
                    d[j] = 0.0f;
                    continue;
                }
                float lp = z[j] - lse, p = expf(lp);
                float dlp = (j == a_row[h] ? 1.0f : 0.0f) - p;
                float dent = -p * (lp + head_entropy);
                d[j] = dlogp[row] * dlp + dentropy[row] * dent;
            }
        }
    }
}
