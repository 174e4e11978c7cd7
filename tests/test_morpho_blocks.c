/* Morpho-v0's building blocks (src/envs/morpho/blocks.h): every seed blueprint
 * and blend style by finite differences, their exact identities, parameter
 * counts against the header's formulas, the alpha curves and the alpha
 * controller. */
#include "test_util.h"

#include "core/rng.h"
#include "morpho/blocks.h"

#include <math.h>

#define FD_EPS 1e-2f  /* float32 central differences, as test_nn_grad.c */
#define KINK_MARGIN 0.05 /* no ReLU pre-activation closer to 0: a step of FD_EPS moves it < 0.03 */

typedef test_loss_fn loss_fn;

static int check_gradient(const char *what, float *x, const float *grad, size_t n, loss_fn loss,
                          void *ctx) {
    return test_check_gradient(what, x, grad, n, loss, ctx, FD_EPS);
}

static void fill_normal(float *x, size_t n, uint64_t *rng, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(scale * sk_rng_normal(rng));
}

static double weighted_sum(const float *g, const float *y, size_t n) {
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += (double)g[i] * y[i];
    return sum;
}

/* ---- parameter counts, from the header's formulas ---- */

static size_t expected_params(morpho_blueprint bp, size_t H) {
    switch (bp) {
    case MORPHO_BP_NORM: return 1 + H + H;                   /* g, gamma, beta */
    case MORPHO_BP_LORA4: return 4 * H + H * 4;              /* V (4, H), U (H, 4) */
    case MORPHO_BP_LORA16: return 16 * H + H * 16;
    case MORPHO_BP_MLP_SMALL: return H * H + H + H * H + H;  /* W1, b1, W2, b2 */
    case MORPHO_BP_MLP_LARGE: return H * 2 * H + 2 * H + 2 * H * H + H;
    case MORPHO_BP_GATE: return H * H + H + H * H + H;       /* Wg, bg, W, b */
    default: return 0;
    }
}

static void test_param_counts(void **state) {
    (void)state;
    assert_int_equal(morpho_seed_num_params(MORPHO_BP_LORA16, 32), 1024);
    assert_int_equal(morpho_seed_num_params(MORPHO_BP_MLP_LARGE, 32), 32 * 64 + 64 + 64 * 32 + 32);
    int widths[] = {1, 3, 7, 32, 100};
    for (int w = 0; w < 5; w++) {
        int H = widths[w];
        size_t most = 0;
        for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS; bp++) {
            size_t want = expected_params((morpho_blueprint)bp, (size_t)H);
            assert_int_equal(morpho_seed_num_params((morpho_blueprint)bp, H), want);
            most = want > most ? want : most;
        }
        assert_int_equal(morpho_seed_max_params(H), most);
        assert_true(morpho_seed_max_cache_floats(H) >= (size_t)2 * H);
        assert_int_equal(morpho_blend_num_params(MORPHO_BLEND_GATED, H), H + 1);
        assert_int_equal(morpho_blend_num_params(MORPHO_BLEND_ADD, H), 0);
        assert_int_equal(morpho_blend_num_params(MORPHO_BLEND_MULTIPLY, H), 0);
        assert_int_equal(morpho_blend_num_params(MORPHO_BLEND_SIGMOID_ADD, H), 0);
    }
    assert_string_equal(morpho_blueprint_names[MORPHO_BP_MLP_LARGE], "mlp_large");
    assert_string_equal(morpho_style_names[MORPHO_BLEND_SIGMOID_ADD], "sigmoid_add");
    assert_string_equal(morpho_curve_names[MORPHO_CURVE_SIGMOID24], "sigmoid24");
}

/* ---- seeds ---- */

typedef struct seed_ctx {
    morpho_blueprint bp;
    int H, B;
    float *params, *x, *s, *cache, *g;
} seed_ctx;

static seed_ctx seed_ctx_new(morpho_blueprint bp, int H, int B) {
    seed_ctx c = {.bp = bp, .H = H, .B = B};
    size_t n = (size_t)B * H;
    c.params = calloc(morpho_seed_num_params(bp, H), sizeof(float));
    c.x = calloc(n, sizeof(float));
    c.s = calloc(n, sizeof(float));
    c.g = calloc(n, sizeof(float));
    c.cache = calloc((size_t)B * morpho_seed_max_cache_floats(H), sizeof(float));
    return c;
}

static void seed_ctx_free(seed_ctx *c) {
    free(c->params);
    free(c->x);
    free(c->s);
    free(c->g);
    free(c->cache);
}

static double seed_loss(void *p) {
    seed_ctx *c = p;
    morpho_seed_forward(c->bp, c->H, c->params, c->x, c->s, c->cache, c->B);
    return weighted_sum(c->g, c->s, (size_t)c->B * c->H);
}

/* Every seed is the identity at init, bit for bit, at any width. */
static void test_seed_identity_at_init(void **state) {
    (void)state;
    int widths[] = {5, 32, 37};
    for (int w = 0; w < 3; w++) {
        for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS; bp++) {
            seed_ctx c = seed_ctx_new((morpho_blueprint)bp, widths[w], 33);
            uint64_t rng = sk_rng_seed(7, (uint64_t)bp);
            morpho_seed_init(c.bp, c.H, c.params, &rng);
            fill_normal(c.x, (size_t)c.B * c.H, &rng, 3.0);
            morpho_seed_forward(c.bp, c.H, c.params, c.x, c.s, c.cache, c.B);
            assert_memory_equal(c.s, c.x, (size_t)c.B * c.H * sizeof(float));
            seed_ctx_free(&c);
        }
    }
}

/* The smallest |pre-activation| of the MLP seed's hidden layer, in double. */
static double mlp_kink_distance(const seed_ctx *c) {
    int H = c->H, hidden = c->bp == MORPHO_BP_MLP_LARGE ? 2 * H : H;
    const float *W1 = c->params, *b1 = W1 + (size_t)hidden * H;
    double nearest = INFINITY;
    for (int row = 0; row < c->B; row++)
        for (int k = 0; k < hidden; k++) {
            double z = b1[k];
            for (int j = 0; j < H; j++) z += (double)W1[(size_t)k * H + j] * c->x[(size_t)row * H + j];
            nearest = fmin(nearest, fabs(z));
        }
    return nearest;
}

static void test_seed_gradients(void **state) {
    (void)state;
    enum { H = 18, B = 3 }; /* 18: one full LANES block of the row sums and a tail */
    for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS; bp++) {
        seed_ctx c = seed_ctx_new((morpho_blueprint)bp, H, B);
        size_t np = morpho_seed_num_params(c.bp, H), n = (size_t)B * H;
        uint64_t rng = sk_rng_seed(11, (uint64_t)bp);
        morpho_seed_init(c.bp, H, c.params, &rng);
        /* away from init so that the zero-initialised parts carry gradient */
        int draws = 0;
        do {
            fill_normal(c.params, np, &rng, 0.3); /* pre-activations of order 1 at H = 18 */
            fill_normal(c.x, n, &rng, 1.0);
            draws++;
        } while ((c.bp == MORPHO_BP_MLP_SMALL || c.bp == MORPHO_BP_MLP_LARGE) &&
                 mlp_kink_distance(&c) < KINK_MARGIN && draws < 1000);
        assert_true(draws < 1000);
        fill_normal(c.g, n, &rng, 1.0);
        seed_loss(&c);
        float *dx = calloc(n, sizeof(float)), *dparams = calloc(np, sizeof(float));
        float *dparams_detached = calloc(np, sizeof(float));
        for (size_t i = 0; i < n; i++) dx[i] = 1.0f; /* backward accumulates */
        for (size_t i = 0; i < np; i++) dparams[i] = dparams_detached[i] = 0.5f;
        morpho_seed_backward(c.bp, H, c.params, c.x, c.cache, c.g, dx, dparams, B);
        morpho_seed_backward(c.bp, H, c.params, c.x, c.cache, c.g, NULL, dparams_detached, B);
        assert_memory_equal(dparams, dparams_detached, np * sizeof(float));
        for (size_t i = 0; i < n; i++) dx[i] -= 1.0f;
        for (size_t i = 0; i < np; i++) dparams[i] -= 0.5f;
        char what[64];
        snprintf(what, sizeof what, "%s dx", morpho_blueprint_names[bp]);
        int failures = check_gradient(what, c.x, dx, n, seed_loss, &c);
        snprintf(what, sizeof what, "%s dparams", morpho_blueprint_names[bp]);
        failures += check_gradient(what, c.params, dparams, np, seed_loss, &c);
        assert_int_equal(failures, 0);
        free(dx);
        free(dparams);
        free(dparams_detached);
        seed_ctx_free(&c);
    }
}

/* Backward takes rows in chunks that fit its scratch: a batch of several
 * chunks gives the gradients of its rows taken apart. */
static void test_seed_chunked_backward(void **state) {
    (void)state;
    enum { H = 32, B = 600, SPLIT = 217 };
    for (int bp = 0; bp < MORPHO_NUM_BLUEPRINTS; bp++) {
        seed_ctx c = seed_ctx_new((morpho_blueprint)bp, H, B);
        size_t np = morpho_seed_num_params(c.bp, H), n = (size_t)B * H;
        size_t cache_floats = morpho_seed_cache_floats(c.bp, H);
        uint64_t rng = sk_rng_seed(13, (uint64_t)bp);
        fill_normal(c.params, np, &rng, 0.3);
        fill_normal(c.x, n, &rng, 1.0);
        fill_normal(c.g, n, &rng, 1.0);
        float *dx = calloc(n, sizeof(float)), *dx_parts = calloc(n, sizeof(float));
        float *dparams = calloc(np, sizeof(float)), *dparams_parts = calloc(np, sizeof(float));
        float *cache_part = calloc((size_t)B * cache_floats, sizeof(float));
        morpho_seed_forward(c.bp, H, c.params, c.x, c.s, c.cache, B);
        morpho_seed_backward(c.bp, H, c.params, c.x, c.cache, c.g, dx, dparams, B);
        int starts[2] = {0, SPLIT}, counts[2] = {SPLIT, B - SPLIT};
        for (int part = 0; part < 2; part++) {
            size_t at = (size_t)starts[part] * H;
            morpho_seed_forward(c.bp, H, c.params, c.x + at, c.s, cache_part, counts[part]);
            morpho_seed_backward(c.bp, H, c.params, c.x + at, cache_part, c.g + at, dx_parts + at,
                                 dparams_parts, counts[part]);
        }
        for (size_t i = 0; i < n; i++) assert_true(fabsf(dx[i] - dx_parts[i]) < 1e-5f);
        double worst = 0.0;
        for (size_t i = 0; i < np; i++)
            worst = fmax(worst, test_rel_err(dparams_parts[i], dparams[i], 1.0));
        print_message("%s: dparams in two calls vs one, worst difference %.2e\n",
                      morpho_blueprint_names[bp], worst);
        assert_true(worst < 1e-4);
        free(dx);
        free(dx_parts);
        free(dparams);
        free(dparams_parts);
        free(cache_part);
        seed_ctx_free(&c);
    }
}

/* ---- blends ---- */

enum { BH = 18, BB = 3 }; /* as the seeds: a full LANES block and a tail */
typedef struct blend_ctx {
    morpho_style style;
    float alpha;
    float params[BH + 1], h[BB * BH], s[BB * BH], y[BB * BH], g[BB * BH], cache[BB * BH];
} blend_ctx;

static double blend_loss(void *p) {
    blend_ctx *c = p;
    morpho_blend_forward(c->style, BH, c->alpha, c->params, c->h, c->s, c->y, c->cache, BB);
    return weighted_sum(c->g, c->y, BB * BH);
}

static void test_blend_gradients(void **state) {
    (void)state;
    float alphas[] = {0.0f, 0.3f, 0.8f, 1.0f};
    for (int style = 0; style < MORPHO_NUM_STYLES; style++) {
        for (int a = 0; a < 4; a++) {
            blend_ctx c = {.style = (morpho_style)style, .alpha = alphas[a]};
            uint64_t rng = sk_rng_seed(17, (uint64_t)(style * 4 + a));
            fill_normal(c.params, BH + 1, &rng, 0.5);
            fill_normal(c.h, BB * BH, &rng, 1.0);
            fill_normal(c.s, BB * BH, &rng, 1.0);
            fill_normal(c.g, BB * BH, &rng, 1.0);
            blend_loss(&c);
            float dh[BB * BH] = {0}, ds[BB * BH] = {0}, dparams[BH + 1] = {0};
            float dh_only[BB * BH] = {0}, ds_only[BB * BH] = {0};
            bool gated = style == MORPHO_BLEND_GATED;
            morpho_blend_backward(c.style, BH, c.alpha, c.params, c.h, c.s, c.cache, c.g, dh, ds,
                                  gated ? dparams : NULL, BB);
            /* a detached input changes nothing for the other */
            morpho_blend_backward(c.style, BH, c.alpha, c.params, c.h, c.s, c.cache, c.g, dh_only,
                                  NULL, NULL, BB);
            morpho_blend_backward(c.style, BH, c.alpha, c.params, c.h, c.s, c.cache, c.g, NULL,
                                  ds_only, NULL, BB);
            assert_memory_equal(dh, dh_only, sizeof dh);
            assert_memory_equal(ds, ds_only, sizeof ds);
            char what[64];
            snprintf(what, sizeof what, "%s at %.1f dh", morpho_style_names[style],
                     (double)c.alpha);
            int failures = check_gradient(what, c.h, dh, BB * BH, blend_loss, &c);
            snprintf(what, sizeof what, "%s at %.1f ds", morpho_style_names[style],
                     (double)c.alpha);
            failures += check_gradient(what, c.s, ds, BB * BH, blend_loss, &c);
            if (gated) {
                snprintf(what, sizeof what, "gated at %.1f dparams", (double)c.alpha);
                failures += check_gradient(what, c.params, dparams, BH + 1, blend_loss, &c);
            }
            assert_int_equal(failures, 0);
        }
    }
}

static void test_blend_exact(void **state) {
    (void)state;
    blend_ctx c = {0};
    uint64_t rng = 19;
    fill_normal(c.h, BB * BH, &rng, 2.0);
    fill_normal(c.s, BB * BH, &rng, 2.0);
    for (int style = 0; style < MORPHO_NUM_STYLES; style++) {
        c.style = (morpho_style)style;
        fill_normal(c.params, BH + 1, &rng, 1.0);
        /* alpha 0 leaves the host stream untouched */
        morpho_blend_forward(c.style, BH, 0.0f, c.params, c.h, c.s, c.y, c.cache, BB);
        assert_memory_equal(c.y, c.h, sizeof c.y);
        /* a seed at its identity (s == h) changes nothing at any alpha */
        for (float alpha = 0.0f; alpha <= 1.0f; alpha += 0.25f) {
            morpho_blend_forward(c.style, BH, alpha, c.params, c.h, c.h, c.y, c.cache, BB);
            assert_memory_equal(c.y, c.h, sizeof c.y);
        }
    }
    /* ADD at alpha 1 is the seed; at 1/2 the midpoint */
    morpho_blend_forward(MORPHO_BLEND_ADD, BH, 1.0f, NULL, c.h, c.s, c.y, NULL, BB);
    assert_memory_equal(c.y, c.s, sizeof c.y);
    morpho_blend_forward(MORPHO_BLEND_ADD, BH, 0.5f, NULL, c.h, c.s, c.y, NULL, BB);
    for (int i = 0; i < BB * BH; i++)
        assert_true(fabs(c.y[i] - 0.5 * ((double)c.h[i] + c.s[i])) < 1e-6);
    /* SIGMOID_ADD blends at r(alpha), the k = 12 ramp */
    float alpha = 0.3f;
    double r = morpho_curve_value(MORPHO_CURVE_SIGMOID12, alpha);
    morpho_blend_forward(MORPHO_BLEND_SIGMOID_ADD, BH, alpha, NULL, c.h, c.s, c.y, NULL, BB);
    for (int i = 0; i < BB * BH; i++)
        assert_true(fabs(c.y[i] - (c.h[i] + r * ((double)c.s[i] - c.h[i]))) < 1e-5);
    /* MULTIPLY: y = h (1 + a tanh(s - h)) */
    morpho_blend_forward(MORPHO_BLEND_MULTIPLY, BH, alpha, NULL, c.h, c.s, c.y, c.cache, BB);
    for (int i = 0; i < BB * BH; i++) {
        double want = c.h[i] * (1.0 + alpha * tanh((double)c.s[i] - c.h[i]));
        assert_true(fabs(c.y[i] - want) < 1e-5);
    }
    /* GATED at init: g = 1/2, so y = h + a/2 (s - h) */
    morpho_blend_init(MORPHO_BLEND_GATED, BH, c.params);
    morpho_blend_forward(MORPHO_BLEND_GATED, BH, 0.8f, c.params, c.h, c.s, c.y, c.cache, BB);
    for (int i = 0; i < BB * BH; i++)
        assert_true(fabs(c.y[i] - (c.h[i] + 0.4 * ((double)c.s[i] - c.h[i]))) < 1e-5);
}

/* With the gate saturated (g = 1), GATED is ADD with alpha clamped: the same
 * output and input gradients, no gradient to the gate. */
static void test_gated_saturated_is_add(void **state) {
    (void)state;
    blend_ctx c = {.style = MORPHO_BLEND_GATED};
    uint64_t rng = 23;
    fill_normal(c.params, BH, &rng, 0.1);
    c.params[BH] = 60.0f; /* c */
    fill_normal(c.h, BB * BH, &rng, 1.0);
    fill_normal(c.s, BB * BH, &rng, 1.0);
    fill_normal(c.g, BB * BH, &rng, 1.0);
    float alphas[] = {0.0f, 0.4f, 1.0f};
    for (int a = 0; a < 3; a++) {
        float y_add[BB * BH], cache_add[1];
        float dh[BB * BH] = {0}, ds[BB * BH] = {0}, dh_add[BB * BH] = {0}, ds_add[BB * BH] = {0};
        float dparams[BH + 1] = {0}, zero[BH + 1] = {0};
        morpho_blend_forward(MORPHO_BLEND_GATED, BH, alphas[a], c.params, c.h, c.s, c.y, c.cache,
                             BB);
        morpho_blend_forward(MORPHO_BLEND_ADD, BH, alphas[a], NULL, c.h, c.s, y_add, cache_add, BB);
        assert_memory_equal(c.y, y_add, sizeof y_add);
        morpho_blend_backward(MORPHO_BLEND_GATED, BH, alphas[a], c.params, c.h, c.s, c.cache, c.g,
                              dh, ds, dparams, BB);
        morpho_blend_backward(MORPHO_BLEND_ADD, BH, alphas[a], NULL, c.h, c.s, NULL, c.g, dh_add,
                              ds_add, NULL, BB);
        assert_memory_equal(dh, dh_add, sizeof dh);
        assert_memory_equal(ds, ds_add, sizeof ds);
        assert_memory_equal(dparams, zero, sizeof zero);
    }
}

/* ---- alpha curves ---- */

static void test_curves(void **state) {
    (void)state;
    for (int curve = 0; curve < MORPHO_NUM_CURVES; curve++) {
        morpho_curve k = (morpho_curve)curve;
        assert_true(morpho_curve_value(k, 0.0) == 0.0);
        assert_true(morpho_curve_value(k, 1.0) == 1.0);
        assert_true(morpho_curve_value(k, -0.5) == 0.0); /* clamped */
        assert_true(morpho_curve_value(k, 7.0) == 1.0);
        assert_true(morpho_curve_value(k, NAN) == 0.0);
        double previous = 0.0;
        for (int i = 1; i <= 1000; i++) {
            double t = i / 1000.0, f = morpho_curve_value(k, t);
            assert_true(f > previous); /* strictly increasing */
            previous = f;
            if (k >= MORPHO_CURVE_SIGMOID6 || k == MORPHO_CURVE_COSINE) /* symmetric ramps */
                assert_true(fabs(morpho_curve_value(k, 1.0 - t) - (1.0 - f)) < 1e-12);
        }
    }
    assert_true(fabs(morpho_curve_value(MORPHO_CURVE_COSINE, 0.5) - 0.5) < 1e-15);
    assert_true(fabs(morpho_curve_value(MORPHO_CURVE_COSINE, 0.25) - (1 - sqrt(0.5)) / 2) < 1e-15);
    assert_true(morpho_curve_value(MORPHO_CURVE_LINEAR, 0.3) == 0.3);
    for (int curve = MORPHO_CURVE_SIGMOID6; curve <= MORPHO_CURVE_SIGMOID24; curve++)
        assert_true(fabs(morpho_curve_value((morpho_curve)curve, 0.5) - 0.5) < 1e-15);
    /* steeper ramps start slower: k = 6 < 12 < 24 at t = 1/4 */
    double f6 = morpho_curve_value(MORPHO_CURVE_SIGMOID6, 0.25);
    double f12 = morpho_curve_value(MORPHO_CURVE_SIGMOID12, 0.25);
    double f24 = morpho_curve_value(MORPHO_CURVE_SIGMOID24, 0.25);
    assert_true(f24 < f12 && f12 < f6);
    /* the closed form: (sig(12 (t - 1/2)) - sig(-6)) / (sig(6) - sig(-6)) */
    double lo = 1 / (1 + exp(6.0)), hi = 1 / (1 + exp(-6.0));
    assert_true(fabs(f12 - (1 / (1 + exp(3.0)) - lo) / (hi - lo)) < 1e-14);
}

/* ---- alpha controller ---- */

static void test_alpha_controller(void **state) {
    (void)state;
    morpho_alpha a = morpho_alpha_hold(0.2f);
    assert_true(a.alpha == 0.2f && morpho_alpha_settled(&a));
    morpho_alpha_tick(&a); /* holding */
    assert_true(a.alpha == 0.2f && morpho_alpha_settled(&a));

    morpho_alpha_retarget(&a, 1.0f, 5, MORPHO_CURVE_LINEAR);
    assert_false(morpho_alpha_settled(&a));
    double want[5] = {0.36, 0.52, 0.68, 0.84, 1.0};
    for (int epoch = 0; epoch < 5; epoch++) {
        assert_false(morpho_alpha_settled(&a));
        morpho_alpha_tick(&a);
        assert_true(fabs(a.alpha - want[epoch]) < 1e-6);
    }
    assert_true(a.alpha == 1.0f && morpho_alpha_settled(&a));
    for (int epoch = 0; epoch < 10; epoch++) morpho_alpha_tick(&a); /* then holds */
    assert_true(a.alpha == 1.0f && morpho_alpha_settled(&a));

    /* epochs 0 jumps at the next tick */
    morpho_alpha_retarget(&a, 0.5f, 0, MORPHO_CURVE_COSINE);
    assert_true(a.alpha == 1.0f && !morpho_alpha_settled(&a));
    morpho_alpha_tick(&a);
    assert_true(a.alpha == 0.5f && morpho_alpha_settled(&a));

    /* retargeting mid-move starts from the current value */
    a = morpho_alpha_hold(0.0f);
    morpho_alpha_retarget(&a, 1.0f, 8, MORPHO_CURVE_SIGMOID12);
    for (int epoch = 0; epoch < 3; epoch++) morpho_alpha_tick(&a);
    float midway = a.alpha;
    assert_true(midway > 0.0f && midway < 1.0f);
    morpho_alpha_retarget(&a, 0.0f, 4, MORPHO_CURVE_LINEAR);
    assert_true(a.alpha == midway && a.start == midway && a.tick == 0);
    morpho_alpha_tick(&a);
    assert_true(fabs(a.alpha - 0.75 * midway) < 1e-6);
    for (int epoch = 0; epoch < 3; epoch++) morpho_alpha_tick(&a);
    assert_true(a.alpha == 0.0f && morpho_alpha_settled(&a));

    /* targets are clamped to [0, 1]; a cosine move passes its middle at t = 1/2 */
    morpho_alpha_retarget(&a, 1.7f, 4, MORPHO_CURVE_COSINE);
    assert_true(a.target == 1.0f);
    morpho_alpha_tick(&a);
    morpho_alpha_tick(&a);
    assert_true(fabs(a.alpha - 0.5) < 1e-6);
    morpho_alpha_retarget(&a, -1.0f, 3, MORPHO_CURVE_LINEAR);
    assert_true(a.target == 0.0f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_param_counts),
        cmocka_unit_test(test_seed_identity_at_init),
        cmocka_unit_test(test_seed_gradients),
        cmocka_unit_test(test_seed_chunked_backward),
        cmocka_unit_test(test_blend_gradients),
        cmocka_unit_test(test_blend_exact),
        cmocka_unit_test(test_gated_saturated_is_add),
        cmocka_unit_test(test_curves),
        cmocka_unit_test(test_alpha_controller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
