/*
 * Morpho-v0's host at work: the arena's layout, a fresh host and seed, the
 * forward and backward through host, seeds and blends, one epoch of SGD
 * under the governor, and the counterfactual validation (every subset of
 * the blending seeds) with the Shapley values it gives. What the agent sees
 * and is paid, and the env interface, are morpho.c. See morpho.h.
 */
#include "morpho_internal.h"

#include "skinner/module.h"
#include "skinner/nn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLASSES MORPHO_CLASSES
#define SUBSETS MORPHO_SUBSETS

/* governor: an epoch loss above this multiple of the last one (and above 1) */
#define EXPLOSION_FACTOR 3.0
/* seed gradients are healthy when finite with a mean norm in this range */
#define HEALTHY_MIN 1e-7
#define HEALTHY_MAX 1e3

/* ------------------------------------------------------------------ layout */

size_t morpho_host_params(int D, int H) {
    return (size_t)H * D + H + 2 * ((size_t)H * H + H) + (size_t)CLASSES * H + CLASSES;
}

static float *env_arena(const morpho_state *m, int i) {
    return m->arena_all + (size_t)i * m->arena;
}
/* Slot s's group: seed params, blend params (contiguous, one clipping group), then momentum. */
static float *slot_params(const morpho_state *m, float *arena, int s) {
    return arena + m->off_slot[s];
}
static float *slot_momentum(const morpho_state *m, float *arena, int s) {
    return arena + m->off_slot[s] + m->seed_params + m->blend_params;
}
static size_t slot_group(const morpho_state *m) { return m->seed_params + m->blend_params; }
float *morpho_slot_params(const morpho_state *m, int i, int k) {
    return slot_params(m, env_arena(m, i), k);
}

void morpho_layout(morpho_state *m) {
    m->off_host = 0;
    m->off_host_mom = m->host_params;
    size_t off = 2 * m->host_params;
    for (int k = 0; k < MORPHO_SLOTS; k++) {
        m->off_slot[k] = off;
        off += 2 * slot_group(m);
    }
    m->arena = off;
}

/* ------------------------------------------------------------------ init */

void morpho_host_reset(const morpho_state *m, int i, uint64_t *rng) {
    float *arena = env_arena(m, i);
    morpho_host_init(m, arena + m->off_host, rng);
    memset(arena + m->off_host_mom, 0, m->host_params * sizeof(float));
}

void morpho_seed_create(const morpho_state *m, int i, int s, const morpho_slot *slot,
                        uint64_t *rng) {
    float *p = slot_params(m, env_arena(m, i), s);
    memset(p, 0, 2 * slot_group(m) * sizeof(float)); /* params and momentum */
    morpho_slot_seed_init(m, s, slot->blueprint, p, rng);
    morpho_blend_init((morpho_style)slot->style, (int)m->dim[s], p + m->seed_params);
}

/* ------------------------------------------------------------------ forward / backward */

/* Which slots take part in the forward: blending seeds in `on`; a TRAINING
 * seed in `on` replaces the slot's output (its prospect, as if blended at
 * alpha 1); TRAINING seeds also compute their output when training (for
 * their own update; `on` then holds blending seeds only). */
static const float *forward(const morpho_state *m, int i, const float *x, int B, unsigned on,
                            bool train) {
    morpho_work *w = &m->work[i];
    const morpho_meta *meta = &m->meta[i];
    float *arena = env_arena(m, i);
    morpho_host_view v = morpho_host_at(m, arena + m->off_host);
    const float *in = x;
    for (int k = 0; k < MORPHO_SLOTS; k++) {
        morpho_stage_forward(m, w, &v, k, in, w->h[k], B);
        const morpho_slot *slot = &meta->slots[k];
        morpho_stage st = (morpho_stage)slot->stage;
        const float *p = slot_params(m, arena, k);
        in = w->h[k];
        if (morpho_stage_blends(st) && ((on >> k) & 1u)) {
            morpho_slot_seed_forward(m, w, k, slot->blueprint, p, B);
            morpho_blend_forward((morpho_style)slot->style, (int)m->dim[k], slot->alpha.alpha,
                                 p + m->seed_params, w->h[k], w->s[k], w->y[k], w->blend_cache[k],
                                 B);
            in = w->y[k];
        } else if (st == MORPHO_TRAINING && (train || ((on >> k) & 1u))) {
            morpho_slot_seed_forward(m, w, k, slot->blueprint, p, B);
            if (!train) in = w->s[k];
        }
    }
    morpho_head_forward(m, w, &v, in, B);
    return in;
}

/* Mean cross-entropy of logits (B, C) and the count of rows whose largest
 * logit is the label; dlogits (the loss's gradient) if asked. With want_loss
 * false (accuracy only) no exponentials are taken. */
static double cross_entropy(const float *logits, const uint8_t *labels, int B, float *dlogits,
                            bool want_loss, int *correct) {
    double loss = 0.0;
    int hits = 0;
    for (int r = 0; r < B; r++) {
        const float *z = logits + (size_t)r * CLASSES;
        float max = z[0];
        int arg = 0;
        for (int c = 1; c < CLASSES; c++)
            if (z[c] > max) max = z[c], arg = c;
        hits += arg == labels[r];
        if (!want_loss && !dlogits) continue;
        float e[CLASSES], sum = 0.0f;
        for (int c = 0; c < CLASSES; c++) sum += e[c] = expf(z[c] - max);
        loss += (double)(max + logf(sum) - z[labels[r]]);
        if (dlogits) {
            float scale = 1.0f / (sum * (float)B);
            for (int c = 0; c < CLASSES; c++)
                dlogits[(size_t)r * CLASSES + c] =
                    e[c] * scale - (c == labels[r] ? 1.0f / (float)B : 0.0f);
        }
    }
    if (correct) *correct = hits;
    return loss / B;
}

/* Gradients into w->grads (host group, then one group per slot), from the
 * forward's activations. */
static void backward(const morpho_state *m, int i, const float *x, const float *last, int B) {
    morpho_work *w = &m->work[i];
    const morpho_meta *meta = &m->meta[i];
    float *arena = env_arena(m, i);
    morpho_host_view v = morpho_host_at(m, arena + m->off_host);
    morpho_host_view g = morpho_host_at(m, w->grads);
    /* dy: the gradient at a slot's output; dh: at its input. An empty or
     * TRAINING slot passes the gradient through, so the two swap instead of
     * copying. */
    float *dy = w->dy, *dh = w->dh;
    size_t n_last = (size_t)B * m->dim[MORPHO_SLOTS - 1];
    memset(dy, 0, n_last * sizeof(float));
    morpho_head_backward(m, w, &v, &g, last, dy, B);
    for (int k = MORPHO_SLOTS - 1; k >= 0; k--) {
        const morpho_slot *slot = &meta->slots[k];
        morpho_stage st = (morpho_stage)slot->stage;
        const float *p = slot_params(m, arena, k);
        float *gp = w->grads + m->host_params + (size_t)k * slot_group(m);
        size_t n = (size_t)B * m->dim[k];
        if (morpho_stage_blends(st)) {
            memset(dh, 0, n * sizeof(float));
            memset(w->ds, 0, n * sizeof(float));
            morpho_blend_backward((morpho_style)slot->style, (int)m->dim[k], slot->alpha.alpha,
                                  p + m->seed_params, w->h[k], w->s[k], w->blend_cache[k], dy, dh,
                                  w->ds, gp + m->seed_params, B);
            morpho_slot_seed_backward(m, w, k, slot->blueprint, p, w->ds, dh, gp, B);
        } else {
            /* identity for the host; a TRAINING seed learns from the slot's
             * output gradient on the detached input (straight-through) */
            if (st == MORPHO_TRAINING)
                morpho_slot_seed_backward(m, w, k, slot->blueprint, p, dy, NULL, gp, B);
            float *t = dh;
            dh = dy;
            dy = t;
        }
        if (k > 0) {
            const float *prev = morpho_stage_blends((morpho_stage)meta->slots[k - 1].stage)
                                    ? w->y[k - 1]
                                    : w->h[k - 1];
            memset(dy, 0, (size_t)B * m->dim[k - 1] * sizeof(float));
            morpho_stage_backward(m, w, &v, &g, k, prev, w->h[k], dh, dy, B);
        } else {
            morpho_stage_backward(m, w, &v, &g, 0, x, w->h[0], dh, NULL, B);
        }
    }
}

/* SGD with momentum 0.9 (torch.optim.SGD: buf = 0.9 buf + g; p -= lr buf). */
static void sgd(float *params, float *momentum, const float *grads, size_t n, float lr) {
    for (size_t k = 0; k < n; k++) {
        momentum[k] = 0.9f * momentum[k] + grads[k];
        params[k] -= lr * momentum[k];
    }
}

unsigned morpho_blending_mask(const morpho_meta *meta) {
    unsigned mask = 0;
    for (int k = 0; k < MORPHO_SLOTS; k++)
        if (morpho_stage_blends((morpho_stage)meta->slots[k].stage)) mask |= 1u << k;
    return mask;
}

double morpho_loss_grad(morpho_state *m, int i, const float *x, const uint8_t *labels, int B,
                        float *grads) {
    morpho_work *w = &m->work[i];
    const float *last = forward(m, i, x, B, morpho_blending_mask(&m->meta[i]), true);
    double loss = cross_entropy(w->logits, labels, B, w->dlogits, true, NULL);
    size_t n = morpho_grad_floats(m);
    memset(w->grads, 0, n * sizeof(float));
    backward(m, i, x, last, B);
    memcpy(grads, w->grads, n * sizeof(float));
    return loss;
}

size_t morpho_grad_floats(const morpho_state *m) {
    return m->host_params + MORPHO_SLOTS * slot_group(m);
}

bool morpho_train_epoch(morpho_state *m, int i) {
    morpho_work *w = &m->work[i];
    morpho_meta *meta = &m->meta[i];
    float *arena = env_arena(m, i);
    const morpho_data *d = m->data;
    int B = m->cfg.batch_size, D = m->D;
    int32_t *perm = m->perm + (size_t)i * d->n_train;
    unsigned on = morpho_blending_mask(meta);
    double loss_sum = 0.0, norm_sum[MORPHO_SLOTS] = {0};
    bool finite = true;
    memcpy(m->snapshot_all + (size_t)i * m->arena, arena, m->arena * sizeof(float));
    for (int b = 0; b < m->cfg.batches && finite; b++) {
        for (int r = 0; r < B; r++) {
            if (meta->perm_pos >= d->n_train) { /* a fresh pass: reshuffle (Fisher-Yates) */
                for (int k = d->n_train - 1; k > 0; k--) {
                    int j = (int)sk_rng_below(&meta->rng, (uint32_t)(k + 1));
                    int32_t t = perm[k];
                    perm[k] = perm[j], perm[j] = t;
                }
                meta->perm_pos = 0;
            }
            int32_t idx = perm[meta->perm_pos++];
            memcpy(w->x + (size_t)r * D, d->train_x + (size_t)idx * D, (size_t)D * sizeof(float));
            w->labels[r] = d->train_y[idx];
        }
        const float *last = forward(m, i, w->x, B, on, true);
        double loss = cross_entropy(w->logits, w->labels, B, w->dlogits, true, NULL);
        if (!isfinite(loss)) {
            finite = false;
            break;
        }
        loss_sum += loss;
        memset(w->grads, 0, morpho_grad_floats(m) * sizeof(float));
        backward(m, i, w->x, last, B);
        sk_clip_grad_norm(w->grads, m->host_params, m->cfg.clip);
        sgd(arena + m->off_host, arena + m->off_host_mom, w->grads, m->host_params, m->cfg.lr);
        for (int k = 0; k < MORPHO_SLOTS; k++) {
            morpho_stage st = (morpho_stage)meta->slots[k].stage;
            if (st != MORPHO_TRAINING && !morpho_stage_blends(st)) continue;
            float *g = w->grads + m->host_params + (size_t)k * slot_group(m);
            double norm = sk_clip_grad_norm(g, slot_group(m), m->cfg.clip);
            norm_sum[k] += norm;
            if (!isfinite(norm)) finite = false;
            sgd(slot_params(m, arena, k), slot_momentum(m, arena, k), g, slot_group(m),
                m->cfg.seed_lr);
        }
    }
    double epoch_loss = finite ? loss_sum / m->cfg.batches : INFINITY;
    bool exploded = !finite || (meta->epoch > 0 && epoch_loss > 1.0 &&
                                epoch_loss > EXPLOSION_FACTOR * meta->train_loss);
    for (int k = 0; k < MORPHO_SLOTS; k++) {
        morpho_slot *slot = &meta->slots[k];
        double mean = norm_sum[k] / m->cfg.batches;
        slot->grad_norm = (float)mean;
        slot->healthy = finite && isfinite(mean) && mean >= HEALTHY_MIN && mean <= HEALTHY_MAX;
    }
    if (exploded) {
        memcpy(arena, m->snapshot_all + (size_t)i * m->arena, m->arena * sizeof(float));
        return false;
    }
    meta->train_loss = (float)epoch_loss;
    return true;
}

double morpho_evaluate(const morpho_state *m, int i, const float *xs, const uint8_t *ys, int n,
                       unsigned on, double *loss_out) {
    const morpho_work *w = &m->work[i];
    int B = m->cfg.batch_size, correct = 0;
    double loss = 0.0;
    for (int lo = 0; lo < n; lo += B) {
        int rows = SK_MIN(B, n - lo), hits;
        forward(m, i, xs + (size_t)lo * m->D, rows, on, false);
        loss += cross_entropy(w->logits, ys + lo, rows, NULL, loss_out != NULL, &hits) * rows;
        correct += hits;
    }
    if (loss_out) *loss_out = loss / n;
    return (double)correct / n;
}

/* One chunk of rows through every subset of the blending seeds `blend` at
 * once, depth first: slot k's stage runs once per subset of the slots before
 * it, and the subtrees with the seed off and on share it (the naive way,
 * one full forward per subset, repeats the early stages 2^(slots) times).
 * The rows of each subset go through exactly the operations forward() does,
 * so the counts are the same. */
typedef struct subset_pass {
    const morpho_state *m;
    morpho_work *w;
    const morpho_host_view *v;
    const morpho_meta *meta;
    float *arena;
    const uint8_t *ys;
    int rows;
    unsigned blend;
    int hits[SUBSETS];
    double main_loss;
} subset_pass;

static void subsets_from(subset_pass *pass, int k, const float *in, unsigned sub) {
    const morpho_state *m = pass->m;
    morpho_work *w = pass->w;
    if (k == MORPHO_SLOTS) {
        morpho_head_forward(m, w, pass->v, in, pass->rows);
        bool main = sub == pass->blend;
        int hits;
        double loss = cross_entropy(w->logits, pass->ys, pass->rows, NULL, main, &hits);
        pass->hits[sub] += hits;
        if (main) pass->main_loss += loss * pass->rows;
        return;
    }
    morpho_stage_forward(m, w, pass->v, k, in, w->h[k], pass->rows);
    subsets_from(pass, k + 1, w->h[k], sub); /* slot k off (or empty) */
    if (!((pass->blend >> k) & 1u)) return;
    const morpho_slot *slot = &pass->meta->slots[k];
    const float *p = slot_params(m, pass->arena, k);
    morpho_slot_seed_forward(m, w, k, slot->blueprint, p, pass->rows);
    morpho_blend_forward((morpho_style)slot->style, (int)m->dim[k], slot->alpha.alpha,
                         p + m->seed_params, w->h[k], w->s[k], w->y[k], w->blend_cache[k],
                         pass->rows);
    subsets_from(pass, k + 1, w->y[k], sub | (1u << k));
}

/* Every subset of the blending seeds on the validation shard; the main one
 * gives val_acc and val_loss; contributions follow. */
void morpho_validate(morpho_state *m, int i) {
    morpho_meta *meta = &m->meta[i];
    const morpho_data *d = m->data;
    unsigned main_on = morpho_blending_mask(meta);
    morpho_host_view v = morpho_host_at(m, env_arena(m, i) + m->off_host);
    subset_pass pass = {.m = m, .w = &m->work[i], .v = &v, .meta = meta, .arena = env_arena(m, i),
                        .blend = main_on};
    int n = m->cfg.val_size, B = m->cfg.batch_size;
    for (int lo = 0; lo < n; lo += B) {
        pass.ys = d->val_y + lo;
        pass.rows = SK_MIN(B, n - lo);
        subsets_from(&pass, 0, d->val_x + (size_t)lo * m->D, 0);
    }
    for (unsigned sub = 0; sub < SUBSETS; sub++)
        meta->subset_acc[sub] = (sub & ~main_on) ? NAN : (float)((double)pass.hits[sub] / n);
    meta->val_loss = (float)(pass.main_loss / n);
    meta->val_acc = meta->subset_acc[main_on];
    for (int k = 0; k < MORPHO_SLOTS; k++) {
        morpho_slot *slot = &meta->slots[k];
        slot->prospect = 0.0f;
        if (slot->stage == MORPHO_TRAINING)
            slot->prospect = (float)morpho_evaluate(m, i, d->val_x, d->val_y, m->cfg.val_size,
                                                    main_on | (1u << k), NULL) -
                             meta->val_acc;
        slot->contribution_prev = slot->contribution;
        if ((main_on >> k) & 1u) {
            slot->contribution = meta->val_acc - meta->subset_acc[main_on & ~(1u << k)];
            if (slot->stage == MORPHO_HOLDING) slot->measured = 1;
        } else {
            slot->contribution = 0.0f;
        }
    }
}

void morpho_shapley(const float subset_acc[SUBSETS], unsigned present, float out[MORPHO_SLOTS]) {
    int n = __builtin_popcount(present);
    static const double fact[MORPHO_SLOTS + 1] = {1, 1, 2, 6};
    for (int k = 0; k < MORPHO_SLOTS; k++) {
        out[k] = 0.0f;
        if (!((present >> k) & 1u)) continue;
        double value = 0.0;
        for (unsigned sub = 0; sub < SUBSETS; sub++) {
            if ((sub & ~present) || ((sub >> k) & 1u)) continue;
            int size = __builtin_popcount(sub);
            double weight = fact[size] * fact[n - size - 1] / fact[n];
            value += weight * ((double)subset_acc[sub | (1u << k)] - (double)subset_acc[sub]);
        }
        out[k] = (float)value;
    }
}
