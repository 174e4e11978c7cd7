/*
 * Morpho-v0's building blocks on the host's hidden stream of width H: seed
 * modules, blend operators and the alpha controller. Row-major batches of B
 * rows, as src/nn: forward writes its output and a per-row cache, backward
 * accumulates (+=) into input and parameter gradients from that cache.
 * A cache is B * cache_floats floats in the block's own layout, valid for the
 * backward of the same params, inputs and B. Outputs and gradients must not
 * overlap the inputs. H <= 4096 (backward's temporaries live on the stack).
 * Reentrant: no allocation, no shared writes.
 *
 * Seeds (each residual and the identity at initialisation, so a new seed
 * changes nothing until it learns):
 *   NORM        s = x + tanh(g) (LN(x) - x); LN with affine gamma (1) and beta
 *               (0), eps 1e-5; g = 0 at init.        params: g, gamma[H], beta[H]
 *   LORA4/16    s = x + U (V x); V (r, H) ~ N(0, 1/H), U (H, r) = 0.
 *   MLP_SMALL   s = x + W2 relu(W1 x + b1) + b2, hidden H; W1 orthogonal
 *               (gain sqrt 2), b1 = 0, W2 = 0, b2 = 0.
 *   MLP_LARGE   as MLP_SMALL with hidden 2H.
 *   GATE        s = x + sigmoid(Wg x + bg) * (W x + b), elementwise over H;
 *               Wg ~ N(0, 1/H), bg = 0, W = 0, b = 0.
 * Parameters are packed in the order listed; weights (out, in) as
 * torch.nn.Linear.
 *
 * Blend of the host stream h and the seed output s at alpha in [0, 1]:
 *   ADD          y = h + a (s - h)
 *   MULTIPLY     y = h * (1 + a tanh(s - h))
 *   SIGMOID_ADD  y = h + r(a) (s - h), r the normalised sigmoid ramp
 *                r(a) = (sig(k (a - 1/2)) - sig(-k/2)) / (sig(k/2) - sig(-k/2)), k = 12,
 *                so r(0) = 0, r(1) = 1.
 *   GATED        y = h + clamp(a g, 0, 1) (s - h), g = sigmoid(w . h + c) one
 *                gate per row; params w[H], c (init: w = 0, c = 0, so g = 1/2).
 * alpha is a constant here (no gradient to it), asserted in [0, 1]. With m the
 * weight of s (a, r(a) or clamp(a g)): y == h exactly at m = 0 and wherever
 * s == h (so a seed at its identity init changes nothing at any alpha), and
 * y == s exactly at m = 1.
 *
 * Alpha curves: f(t) for progress t in [0, 1], f(0) = 0, f(1) = 1, monotone:
 *   LINEAR t; COSINE (1 - cos(pi t)) / 2; SIGMOID6/12/24 the normalised
 *   sigmoid ramp of steepness k = 6, 12, 24 (as r above).
 * The controller moves alpha from its value when retargeted to the target
 * over `epochs` ticks (one per host epoch) along the curve, then holds.
 * epochs = 0 jumps at the next tick.
 */
#ifndef SK_MORPHO_BLOCKS_H
#define SK_MORPHO_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "skinner/module.h" /* SK_MIN, SK_MAX, SK_ASSERT */

typedef enum morpho_blueprint {
    MORPHO_BP_NORM,
    MORPHO_BP_LORA4,
    MORPHO_BP_LORA16,
    MORPHO_BP_MLP_SMALL,
    MORPHO_BP_MLP_LARGE,
    MORPHO_BP_GATE,
    MORPHO_NUM_BLUEPRINTS
} morpho_blueprint;
extern const char *const morpho_blueprint_names[MORPHO_NUM_BLUEPRINTS]; /* "norm", "lora4", ... */

/* Parameter count, cache floats per row, and the largest of each over all
 * blueprints (for fixed-size per-slot arenas). */
size_t morpho_seed_num_params(morpho_blueprint bp, int H);
size_t morpho_seed_cache_floats(morpho_blueprint bp, int H);
size_t morpho_seed_max_params(int H);
size_t morpho_seed_max_cache_floats(int H);

/* Initialises params (morpho_seed_num_params floats) as above; rng is a
 * splitmix64 state (src/core/rng.h). */
void morpho_seed_init(morpho_blueprint bp, int H, float *params, uint64_t *rng);
/* s (B, H) = seed(x (B, H)); cache (B, cache_floats) for backward. */
void morpho_seed_forward(morpho_blueprint bp, int H, const float *params, const float *x, float *s,
                         float *cache, int B);
/* dx (B, H) += ds @ ds/dx (dx may be NULL: input detached); dparams += . */
void morpho_seed_backward(morpho_blueprint bp, int H, const float *params, const float *x,
                          const float *cache, const float *ds, float *dx, float *dparams, int B);

typedef enum morpho_style {
    MORPHO_BLEND_ADD,
    MORPHO_BLEND_MULTIPLY,
    MORPHO_BLEND_SIGMOID_ADD,
    MORPHO_BLEND_GATED,
    MORPHO_NUM_STYLES
} morpho_style;
extern const char *const morpho_style_names[MORPHO_NUM_STYLES]; /* "add", "multiply", ... */

size_t morpho_blend_num_params(morpho_style style, int H); /* GATED: H + 1, else 0 */
size_t morpho_blend_cache_floats(morpho_style style, int H);
void morpho_blend_init(morpho_style style, int H, float *params);
/* y (B, H) = blend(h, s) at alpha. */
void morpho_blend_forward(morpho_style style, int H, float alpha, const float *params,
                          const float *h, const float *s, float *y, float *cache, int B);
/* dh, ds (B, H) += ; dparams += (GATED only; may be NULL otherwise, or to
 * freeze the gate). dh or ds may be NULL when that input is detached. */
void morpho_blend_backward(morpho_style style, int H, float alpha, const float *params,
                           const float *h, const float *s, const float *cache, const float *dy,
                           float *dh, float *ds, float *dparams, int B);

typedef enum morpho_curve {
    MORPHO_CURVE_LINEAR,
    MORPHO_CURVE_COSINE,
    MORPHO_CURVE_SIGMOID6,
    MORPHO_CURVE_SIGMOID12,
    MORPHO_CURVE_SIGMOID24,
    MORPHO_NUM_CURVES
} morpho_curve;
extern const char *const morpho_curve_names[MORPHO_NUM_CURVES];

/* f(t), t clamped to [0, 1] (NaN gives 0). */
double morpho_curve_value(morpho_curve curve, double t);

typedef struct morpho_alpha {
    float alpha;  /* the current value */
    float start;  /* alpha when last retargeted */
    float target;
    int epochs;   /* ticks the move takes */
    int tick;     /* ticks done since the retarget */
    morpho_curve curve;
} morpho_alpha;

/* A controller holding `alpha`. */
morpho_alpha morpho_alpha_hold(float alpha);
/* Starts a move from the current alpha to target (clamped to [0, 1]). */
void morpho_alpha_retarget(morpho_alpha *a, float target, int epochs, morpho_curve curve);
/* One epoch: alpha = start + (target - start) f((tick+1)/epochs), or target
 * once tick + 1 >= epochs. */
void morpho_alpha_tick(morpho_alpha *a);
/* The move is over (alpha == target); a hold is settled. */
bool morpho_alpha_settled(const morpho_alpha *a);

#endif
