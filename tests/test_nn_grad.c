/* Finite-difference checks of every layer's backward, the categorical head,
 * the whole MLP and the PPO loss; plus orthogonal init and GAE against their
 * definitions. */
#include "test_util.h"

#include "core/rng.h"
#include "nn/kernels.h"
#include "nn/nn.h"
#include "policy/policy.h"
#include "train/ppo.h"

#include <math.h>

#ifndef FD_EPS_PPO
#define FD_EPS_PPO 3e-3f /* the loss curves enough through exp(logratio) that 1e-2 truncates */
#endif

typedef test_loss_fn loss_fn;

static float g_fd_eps = 1e-2f; /* smaller where a ReLU kink could fall inside the step */

static int check_gradient(const char *what, float *x, const float *grad, size_t n, loss_fn loss,
                          void *ctx) {
    return test_check_gradient(what, x, grad, n, loss, ctx, g_fd_eps);
}

static void fill_normal(float *x, size_t n, uint64_t *rng, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(scale * sk_rng_normal(rng));
}

/* ---- linear ---- */
enum { LB = 3, LC = 4, LOC = 5 };
typedef struct linear_ctx {
    float inp[LB * LC], w[LOC * LC], b[LOC], g[LB * LOC], out[LB * LOC];
} linear_ctx;

static double linear_loss(void *p) {
    linear_ctx *c = p;
    sk_linear_forward(c->out, c->inp, c->w, c->b, LB, LC, LOC);
    double sum = 0.0;
    for (int i = 0; i < LB * LOC; i++) sum += (double)c->g[i] * c->out[i];
    return sum;
}

static void test_linear(void **state) {
    (void)state;
    uint64_t rng = 11;
    linear_ctx c;
    fill_normal(c.inp, LB * LC, &rng, 1.0);
    fill_normal(c.w, LOC * LC, &rng, 1.0);
    fill_normal(c.b, LOC, &rng, 1.0);
    fill_normal(c.g, LB * LOC, &rng, 1.0);
    float dinp[LB * LC] = {0}, dw[LOC * LC] = {0}, db[LOC] = {0};
    /* backward accumulates: start from 1 and subtract it after */
    for (int i = 0; i < LB * LC; i++) dinp[i] = 1.0f;
    sk_linear_backward(dinp, dw, db, c.g, c.inp, c.w, LB, LC, LOC);
    for (int i = 0; i < LB * LC; i++) dinp[i] -= 1.0f;
    int failures = check_gradient("linear dinp", c.inp, dinp, LB * LC, linear_loss, &c);
    failures += check_gradient("linear dw", c.w, dw, LOC * LC, linear_loss, &c);
    failures += check_gradient("linear db", c.b, db, LOC, linear_loss, &c);
    assert_int_equal(failures, 0);
}

/* ---- activations ---- */
typedef struct act_ctx {
    float x[16], g[16], y[16];
    int relu;
} act_ctx;

static double act_loss(void *p) {
    act_ctx *c = p;
    if (c->relu) sk_relu_forward(c->y, c->x, 16);
    else sk_tanh_forward(c->y, c->x, 16);
    double sum = 0.0;
    for (int i = 0; i < 16; i++) sum += (double)c->g[i] * c->y[i];
    return sum;
}

static void test_activations(void **state) {
    (void)state;
    for (int relu = 0; relu < 2; relu++) {
        uint64_t rng = 21;
        act_ctx c = {.relu = relu};
        fill_normal(c.x, 16, &rng, 1.0);
        for (int i = 0; i < 16; i++) /* keep relu's kink out of the difference */
            if (fabsf(c.x[i]) < 0.05f) c.x[i] = 0.5f;
        fill_normal(c.g, 16, &rng, 1.0);
        act_loss(&c);
        float dx[16] = {0};
        if (relu) sk_relu_backward(dx, c.g, c.y, 16);
        else sk_tanh_backward(dx, c.g, c.y, 16);
        assert_int_equal(check_gradient(relu ? "relu" : "tanh", c.x, dx, 16, act_loss, &c), 0);
    }
}

/* ---- the gradient norm against a long double sum, every tail length ---- */
static void test_grad_norm_matches_long_double(void **state) {
    (void)state;
    float g[1031];
    uint64_t rng = 5;
    for (size_t i = 0; i < 1031; i++) g[i] = (float)sk_rng_normal(&rng) * (i % 7 == 0 ? 1e3f : 1.0f);
    for (size_t n = 0; n <= 1031; n += n < 40 ? 1 : 97) {
        long double sum = 0.0L;
        for (size_t i = 0; i < n; i++) sum += (long double)g[i] * g[i];
        double want = (double)sqrtl(sum), got = sk_grad_norm(g, n);
        if (!(fabs(got - want) <= 1e-14 * want))
            fail_msg("n=%zu: norm %.17g, want %.17g", n, got, want);
    }
}

/* ---- the batch tanh against the one-value tanh: every length's tail, every lane ---- */
static void test_tanh_forward_matches_tanhf(void **state) {
    (void)state;
    float in[67], out[67];
    uint64_t rng = 11;
    for (int n = 0; n <= 67; n++) {
        for (int i = 0; i < n; i++) in[i] = (float)(3.0 * sk_rng_normal(&rng));
        if (n > 2) in[n / 2] = NAN, in[1] = 40.0f, in[0] = -0.3f;
        /* all of out, so that the guard past n is a known value: it was the stack's, and a NaN
         * left there by an earlier test failed `out[n] == guard` now and then (valgrind) */
        for (int i = 0; i < 67; i++) out[i] = -7.0f;
        float guard = -7.0f;
        sk_tanh_forward(out, in, (size_t)n);
        for (int i = 0; i < n; i++) {
            float want = sk_tanhf(in[i]);
            if (memcmp(&out[i], &want, sizeof want) != 0)
                fail_msg("n=%d [%d]: tanh(%.9g) %.9g in a batch, %.9g alone", n, i, (double)in[i],
                         (double)out[i], (double)want);
        }
        if (n < 67) assert_true(out[n] == guard); /* nothing written past n */
    }
}

/* ---- the vectorisable tanh against libm's double tanh ---- */
static void test_tanh_accuracy(void **state) {
    (void)state;
    double worst = 0.0;
    for (int k = -400000; k <= 400000; k++) {
        float x = (float)k * 5e-5f; /* [-20, 20] */
        if (x == 0.0f) continue;
        double want = tanh((double)x);
        worst = fmax(worst, fabs(sk_tanhf(x) - want) / fabs(want));
    }
    for (float x = 1e-30f; x < 1.0f; x *= 1.01f) {
        worst = fmax(worst, fabs(sk_tanhf(x) - tanh((double)x)) / tanh((double)x));
        worst = fmax(worst, fabs(sk_tanhf(-x) + tanh((double)x)) / tanh((double)x));
    }
    print_message("tanh: worst relative error %.2e (float epsilon 1.19e-07)\n", worst);
    assert_true(worst < 3e-7);
    assert_true(sk_tanhf(100.0f) == 1.0f && sk_tanhf(-100.0f) == -1.0f);
}

/* ---- the recurrent cells' sigmoid (the level's kernel) against libm's double, and a value's
 * result the same alone as at any place in a batch (a row's gates must not depend on the rows
 * beside it) ---- */
static void test_sigmoid_kernel(void **state) {
    (void)state;
    void (*sigmoid)(float *, const float *, size_t) = sk_nn_kernels_used()->sigmoid_forward;
    double worst = 0.0;
    for (int k = -870000; k <= 200000; k += 7) {
        float x = (float)k * 1e-4f, y; /* [-87, 20] */
        sigmoid(&y, &x, 1);
        double want = 1.0 / (1.0 + exp(-(double)x));
        worst = fmax(worst, fabs(y - want) / want);
    }
    print_message("sigmoid at %s: worst relative error %.2e (float epsilon 1.19e-07)\n",
                  sk_isa_level_name(sk_nn_kernels_used()->level), worst);
    assert_true(worst < 4e-7);
    float in[53], out[53], alone;
    uint64_t rng = 5;
    for (int n = 1; n <= 53; n++) {
        for (int i = 0; i < n; i++) in[i] = (float)(6.0 * sk_rng_normal(&rng));
        in[n - 1] = n % 3 == 0 ? NAN : n % 3 == 1 ? 100.0f : -100.0f;
        for (int i = 0; i < 53; i++) out[i] = -7.0f;
        sigmoid(out, in, (size_t)n);
        for (int i = 0; i < n; i++) {
            sigmoid(&alone, &in[i], 1);
            if (memcmp(&out[i], &alone, sizeof alone) != 0)
                fail_msg("n=%d [%d]: sigmoid(%.9g) %.9g in a batch, %.9g alone", n, i,
                         (double)in[i], (double)out[i], (double)alone);
        }
        if (n < 53) assert_true(out[n] == -7.0f); /* nothing written past n */
        float last = out[n - 1];
        if (n % 3 == 0) assert_true(isnan(last)); /* NaN stays NaN, for the governor */
        if (n % 3 == 1) assert_true(last == 1.0f);
        if (n % 3 == 2) assert_true(last >= 0.0f && last < 1e-37f);
    }
}

/* ---- factored masked categorical ---- */
enum { CB = 6, CL = 7 }; /* heads 3 and 4 */
enum { KM = 3 + 3 * 4 };  /* the masks_by_head0 layout of the same heads */
typedef struct cat_ctx {
    sk_action_space space;
    float logits[CB * CL], a[CB], e[CB], logp[CB], ent[CB];
    uint8_t mask[CB * KM]; /* rows of CL bytes, or of KM with masks_by_head0 */
    int32_t actions[CB * 2];
} cat_ctx;

static double cat_loss(void *p) {
    cat_ctx *c = p;
    sk_categorical_evaluate(&c->space, c->logits, c->mask, c->actions, CB, c->logp, c->ent);
    double sum = 0.0;
    for (int i = 0; i < CB; i++) sum += (double)c->a[i] * c->logp[i] + (double)c->e[i] * c->ent[i];
    return sum;
}

static void test_categorical(void **state) {
    (void)state;
    uint64_t rng = 31;
    cat_ctx c = {.space = {.kind = SK_SPACE_DISCRETE, .num_heads = 2, .head_sizes = {3, 4},
                           .relevant_when = {0, 0x6}}};
    fill_normal(c.logits, CB * CL, &rng, 1.0);
    fill_normal(c.a, CB, &rng, 1.0);
    fill_normal(c.e, CB, &rng, 1.0);
    for (int i = 0; i < CB * CL; i++) c.mask[i] = sk_rng_float(&rng) < 0.7f;
    for (int row = 0; row < CB; row++) {
        c.actions[2 * row] = row % 3;
        c.actions[2 * row + 1] = (row + 1) % 4;
        c.mask[row * CL + c.actions[2 * row]] = 1;
        c.mask[row * CL + 3 + c.actions[2 * row + 1]] = 1;
    }
    float dlogits[CB * CL];
    sk_categorical_backward(&c.space, c.logits, c.mask, c.actions, CB, c.a, c.e, dlogits);
    assert_int_equal(check_gradient("categorical", c.logits, dlogits, CB * CL, cat_loss, &c), 0);
    /* masked logits get no gradient and irrelevant heads none either */
    for (int row = 0; row < CB; row++) {
        bool head1 = c.actions[2 * row] == 1 || c.actions[2 * row] == 2;
        for (int j = 0; j < CL; j++) {
            if (!c.mask[row * CL + j] || (j >= 3 && !head1))
                assert_true(dlogits[row * CL + j] == 0.0f);
        }
    }
    /* a masked action is never sampled, and probabilities of a head sum to 1 */
    int32_t sampled[CB * 2];
    float logp[CB];
    for (int trial = 0; trial < 200; trial++) {
        sk_categorical_sample(&c.space, c.logits, c.mask, CB, &rng, false, sampled, logp);
        for (int row = 0; row < CB; row++) {
            assert_true(c.mask[row * CL + sampled[2 * row]]);
            assert_true(c.mask[row * CL + 3 + sampled[2 * row + 1]]);
        }
    }
}

/* Two actions, one head, no mask takes categorical.c's vectorised path (Cephes exp and log); an
 * all-ones mask takes the general path (libm) for the same distribution. They must agree to a
 * few ulp in log-probabilities, entropies and gradients (including logits far apart, where one
 * probability underflows), sample the same actions from the same stream and leave it in the
 * same place; and the fast backward must pass finite differences. */
enum { BB = 67 };
typedef struct bin_ctx {
    sk_action_space space;
    float logits[BB * 2], a[BB], e[BB], logp[BB], ent[BB];
    int32_t actions[BB];
} bin_ctx;

static double bin_loss(void *p) {
    bin_ctx *c = p;
    sk_categorical_evaluate(&c->space, c->logits, NULL, c->actions, BB, c->logp, c->ent);
    double sum = 0.0;
    for (int i = 0; i < BB; i++) sum += (double)c->a[i] * c->logp[i] + (double)c->e[i] * c->ent[i];
    return sum;
}

static void test_categorical_binary_fast(void **state) {
    (void)state;
    uint64_t rng = 77;
    bin_ctx c = {.space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}}};
    fill_normal(c.logits, BB * 2, &rng, 3.0);
    c.logits[0] = 60.0f, c.logits[1] = -45.0f; /* p1 = e^-105 underflows */
    c.logits[2] = -0.25f, c.logits[3] = -0.25f;
    fill_normal(c.a, BB, &rng, 1.0);
    fill_normal(c.e, BB, &rng, 1.0);
    for (int i = 0; i < BB; i++) c.actions[i] = (int32_t)(sk_rng_next(&rng) & 1);
    uint8_t ones[BB * 2];
    memset(ones, 1, sizeof ones);
    float logp_f[BB], ent_f[BB], logp_g[BB], ent_g[BB], d_f[BB * 2], d_g[BB * 2];
    sk_categorical_evaluate(&c.space, c.logits, NULL, c.actions, BB, logp_f, ent_f);
    sk_categorical_evaluate(&c.space, c.logits, ones, c.actions, BB, logp_g, ent_g);
    sk_categorical_backward(&c.space, c.logits, NULL, c.actions, BB, c.a, c.e, d_f);
    sk_categorical_backward(&c.space, c.logits, ones, c.actions, BB, c.a, c.e, d_g);
    double worst = 0.0;
    for (int i = 0; i < BB; i++) {
        double errs[] = {test_rel_err(logp_f[i], logp_g[i], 1e-6),
                         test_rel_err(ent_f[i], ent_g[i], 1e-6),
                         test_rel_err(d_f[2 * i], d_g[2 * i], 1e-6),
                         test_rel_err(d_f[2 * i + 1], d_g[2 * i + 1], 1e-6)};
        for (int k = 0; k < 4; k++) worst = errs[k] > worst ? errs[k] : worst;
    }
    print_message("binary fast path vs general: worst relative error %.3g\n", worst);
    assert_true(worst < 1e-5);
    assert_int_equal(check_gradient("binary categorical", c.logits, d_f, BB * 2, bin_loss, &c), 0);
    int32_t a_f[BB], a_g[BB];
    for (int trial = 0; trial < 50; trial++) {
        uint64_t rng_f = rng, rng_g = rng;
        sk_categorical_sample(&c.space, c.logits, NULL, BB, &rng_f, false, a_f, logp_f);
        sk_categorical_sample(&c.space, c.logits, ones, BB, &rng_g, false, a_g, logp_g);
        assert_memory_equal(a_f, a_g, sizeof a_f);
        assert_true(rng_f == rng_g);
        for (int i = 0; i < BB; i++) assert_true(test_rel_err(logp_f[i], logp_g[i], 1e-6) < 1e-5);
        rng = rng_f;
        sk_categorical_sample(&c.space, c.logits, NULL, BB, &rng_f, true, a_f, logp_f);
        sk_categorical_sample(&c.space, c.logits, ones, BB, &rng_g, true, a_g, logp_g);
        assert_memory_equal(a_f, a_g, sizeof a_f);
    }
}

/* Masks that depend on head 0 (masks_by_head0): head 1's allowed choices come
 * from the block of the row's head-0 choice. Checked against log-softmaxes
 * computed here over the allowed entries, by finite differences, and by
 * sampling frequencies. */
/* log-softmax of z[j] over the allowed entries of an n-choice head */
static double masked_log_softmax(const float *z, const uint8_t *m, int n, int j) {
    double norm = 0.0;
    for (int k = 0; k < n; k++)
        if (m[k]) norm += exp((double)z[k]);
    return (double)z[j] - log(norm);
}

static void test_categorical_masks_by_head0(void **state) {
    (void)state;
    uint64_t rng = 77;
    cat_ctx c = {.space = {.kind = SK_SPACE_DISCRETE, .num_heads = 2, .head_sizes = {3, 4},
                            .relevant_when = {0, 0x6}, .masks_by_head0 = true}};
    assert_int_equal(sk_action_mask_size(&c.space), KM);
    fill_normal(c.logits, CB * CL, &rng, 1.0);
    fill_normal(c.a, CB, &rng, 1.0);
    fill_normal(c.e, CB, &rng, 1.0);
    for (int row = 0; row < CB; row++) {
        uint8_t *m = c.mask + row * KM;
        m[0] = 1, m[1] = 1, m[2] = (uint8_t)(row % 2); /* head 0 */
        for (int a0 = 0; a0 < 3; a0++)      /* block of head-0 value a0 allows j == a0 and j == 3 */
            for (int j = 0; j < 4; j++) m[3 + a0 * 4 + j] = (uint8_t)(j == a0 || j == 3);
        c.actions[2 * row] = 1 + row % 2;
        c.actions[2 * row + 1] = row % 3 == 0 ? 3 : c.actions[2 * row];
    }
    sk_categorical_evaluate(&c.space, c.logits, c.mask, c.actions, CB, c.logp, c.ent);
    for (int row = 0; row < CB; row++) {
        const float *z = c.logits + row * CL;
        const uint8_t *m = c.mask + row * KM;
        int a0 = c.actions[2 * row], a1 = c.actions[2 * row + 1];
        double want = masked_log_softmax(z, m, 3, a0) +
                      masked_log_softmax(z + 3, m + 3 + a0 * 4, 4, a1);
        assert_true(fabs(c.logp[row] - want) < 1e-5);
    }
    float dlogits[CB * CL];
    sk_categorical_backward(&c.space, c.logits, c.mask, c.actions, CB, c.a, c.e, dlogits);
    assert_int_equal(check_gradient("categorical by head 0", c.logits, dlogits, CB * CL, cat_loss,
                                    &c), 0);
    /* sampling: head 1 follows its block; its frequencies match the masked softmax */
    int32_t sampled[CB * 2];
    float logp[CB];
    static int count[CB][3][4];
    int draws = 20000;
    for (int trial = 0; trial < draws; trial++) {
        sk_categorical_sample(&c.space, c.logits, c.mask, CB, &rng, false, sampled, logp);
        for (int row = 0; row < CB; row++) {
            int a0 = sampled[2 * row], a1 = sampled[2 * row + 1];
            assert_true(c.mask[row * KM + a0]);
            if (a0 == 0) continue; /* head 1 is relevant for head-0 values 1 and 2 only */
            assert_true(a1 == a0 || a1 == 3);
            count[row][a0][a1]++;
        }
    }
    for (int row = 0; row < CB; row++)
        for (int a0 = 1; a0 < 3; a0++) {
            int total = count[row][a0][a0] + count[row][a0][3];
            if (total < 1000) continue;
            double p = exp(masked_log_softmax(c.logits + row * CL + 3, c.mask + row * KM + 3 + a0 * 4,
                                              4, a0));
            double seen = (double)count[row][a0][a0] / total, sd = sqrt(p * (1 - p) / total);
            assert_true(fabs(seen - p) < 5 * sd);
        }
}

/* ---- diagonal Gaussian ---- */
enum { GB = 5, GD = 3 };
typedef struct gauss_ctx {
    float mean[GB * GD], log_std[GD], actions[GB * GD], a[GB], e[GB], logp[GB], ent[GB];
} gauss_ctx;

static double gauss_loss(void *p) {
    gauss_ctx *c = p;
    sk_gaussian_evaluate(GD, c->mean, c->log_std, c->actions, GB, c->logp, c->ent);
    double sum = 0.0;
    for (int i = 0; i < GB; i++) sum += (double)c->a[i] * c->logp[i] + (double)c->e[i] * c->ent[i];
    return sum;
}

static void test_gaussian(void **state) {
    (void)state;
    uint64_t rng = 33;
    gauss_ctx c;
    fill_normal(c.mean, GB * GD, &rng, 1.0);
    fill_normal(c.log_std, GD, &rng, 0.5);
    fill_normal(c.a, GB, &rng, 1.0);
    fill_normal(c.e, GB, &rng, 1.0);
    float sampled_logp[GB];
    sk_gaussian_sample(GD, c.mean, c.log_std, GB, &rng, false, c.actions, sampled_logp);
    gauss_loss(&c);
    for (int i = 0; i < GB; i++) /* the sample's log-prob is the density at the sample */
        assert_true(fabsf(sampled_logp[i] - c.logp[i]) < 1e-4f);
    /* closed form: entropy of N(mu, s^2) per dim is 0.5 + 0.5 ln(2 pi) + ln s */
    double want_entropy = 0.0;
    for (int d = 0; d < GD; d++) want_entropy += 0.5 + 0.5 * log(2.0 * M_PI) + c.log_std[d];
    assert_true(fabs(c.ent[0] - want_entropy) < 1e-5);
    float dmean[GB * GD], dlog_std[GD] = {0};
    sk_gaussian_backward(GD, c.mean, c.log_std, c.actions, GB, c.a, c.e, dmean, dlog_std);
    int failures = check_gradient("gaussian dmean", c.mean, dmean, GB * GD, gauss_loss, &c);
    failures += check_gradient("gaussian dlog_std", c.log_std, dlog_std, GD, gauss_loss, &c);
    assert_int_equal(failures, 0);
    /* greedy returns the mean */
    float greedy[GB * GD];
    sk_gaussian_sample(GD, c.mean, c.log_std, GB, &rng, true, greedy, sampled_logp);
    assert_memory_equal(greedy, c.mean, sizeof greedy);
}

/* ---- the whole MLP, both nets ---- */
typedef struct mlp_ctx {
    sk_policy policy;
    sk_policy_work work;
    float *params, *obs, *g[2];
    int B;
} mlp_ctx;

static double mlp_loss(void *p) {
    mlp_ctx *c = p;
    double sum = 0.0;
    for (int net = 0; net < 2; net++) {
        sk_policy_forward(&c->policy, net, c->params, c->obs, c->B, &c->work);
        int out = net == SK_NET_ACTOR ? c->policy.logits_size : 1;
        for (int i = 0; i < c->B * out; i++) sum += (double)c->g[net][i] * c->work.out[net][i];
    }
    return sum;
}

static void test_mlp(void **state) {
    (void)state;
    for (int activation = 0; activation < 2; activation++) {
        mlp_ctx c = {.B = 5};
        sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 2, .head_sizes = {2, 3}};
        assert_int_equal(sk_policy_init(&c.policy, 3, &space, 0, 6, 2, (sk_activation)activation), SK_OK);
        assert_int_equal(sk_policy_work_alloc(&c.work, &c.policy, c.B), SK_OK);
        uint64_t rng = 42; /* a seed with no ReLU pre-activation within a step of its kink */
        c.params = calloc(c.policy.num_params, sizeof(float));
        float *grads = calloc(c.policy.num_params, sizeof(float));
        c.obs = calloc((size_t)c.B * 3, sizeof(float));
        c.g[0] = calloc((size_t)c.B * 5, sizeof(float));
        c.g[1] = calloc((size_t)c.B, sizeof(float));
        fill_normal(c.params, c.policy.num_params, &rng, 0.5);
        fill_normal(c.obs, (size_t)c.B * 3, &rng, 1.0);
        fill_normal(c.g[0], (size_t)c.B * 5, &rng, 1.0);
        fill_normal(c.g[1], (size_t)c.B, &rng, 1.0);
        for (int net = 0; net < 2; net++) {
            sk_policy_forward(&c.policy, net, c.params, c.obs, c.B, &c.work);
            int out = net == SK_NET_ACTOR ? c.policy.logits_size : 1;
            memcpy(c.work.dout[net], c.g[net], (size_t)(c.B * out) * sizeof(float));
            sk_policy_backward(&c.policy, net, c.params, grads, c.obs, c.B, &c.work);
        }
        g_fd_eps = activation ? 1e-3f : 1e-2f;
        int failures = check_gradient(activation ? "mlp (relu)" : "mlp (tanh)", c.params, grads,
                                      c.policy.num_params, mlp_loss, &c);
        g_fd_eps = 1e-2f;
        assert_int_equal(failures, 0);
        sk_policy_work_free(&c.work);
        free(c.params);
        free(grads);
        free(c.obs);
        free(c.g[0]);
        free(c.g[1]);
    }
}

/* ---- the candidate-scoring policy: embeddings, mean pooling, residual
 * block, dot-product logits and value head, through both nets ---- */
enum { CA = 3, CS = 4, CP = 5, CR = 7, CD = 6, CBATCH = 3 };

static void random_atoms(float *atoms, int count, uint64_t *rng, bool allow_padding) {
    for (int a = 0; a < count; a++) {
        bool pad = allow_padding && sk_rng_float(rng) < 0.3f;
        atoms[3 * a] = pad ? 0.0f : (float)(1 + sk_rng_below(rng, CP - 1));
        atoms[3 * a + 1] = pad ? 0.0f : (float)sk_rng_below(rng, CR);
        atoms[3 * a + 2] = pad ? 0.0f : (float)sk_rng_below(rng, CR);
    }
}

static void test_candidates_policy(void **state) {
    (void)state;
    mlp_ctx c = {.B = CBATCH};
    sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {CS}};
    sk_obs_atoms atoms = {.atoms = CA, .candidates = CS, .num_preds = CP, .num_args = CR};
    assert_int_equal(sk_policy_init_candidates(&c.policy, &space, CS, &atoms, CD, (sk_core_spec){0}), SK_OK);
    assert_int_equal(c.policy.obs_size, 3 * CA * (1 + CS));
    assert_int_equal(sk_policy_work_alloc(&c.work, &c.policy, c.B), SK_OK);
    uint64_t rng = 43;
    c.params = calloc(c.policy.num_params, sizeof(float));
    float *grads = calloc(c.policy.num_params, sizeof(float));
    c.obs = calloc((size_t)c.B * (size_t)c.policy.obs_size, sizeof(float));
    c.g[0] = calloc((size_t)c.B * CS, sizeof(float));
    c.g[1] = calloc((size_t)c.B, sizeof(float));
    fill_normal(c.params, c.policy.num_params, &rng, 0.5);
    for (int b = 0; b < c.B; b++) {
        float *row = c.obs + (size_t)b * (size_t)c.policy.obs_size;
        random_atoms(row, CA * (1 + CS), &rng, true);
        row[0] = 1.0f; /* the current state has at least one atom */
    }
    /* one candidate made only of padding: its encoding is the block's bias path */
    memset(c.obs + 3 * CA * 2, 0, 3 * CA * sizeof(float));
    fill_normal(c.g[0], (size_t)c.B * CS, &rng, 1.0);
    fill_normal(c.g[1], (size_t)c.B, &rng, 1.0);
    for (int net = 0; net < 2; net++) {
        sk_policy_forward(&c.policy, net, c.params, c.obs, c.B, &c.work);
        int out = net == SK_NET_ACTOR ? CS : 1;
        memcpy(c.work.dout[net], c.g[net], (size_t)(c.B * out) * sizeof(float));
        sk_policy_backward(&c.policy, net, c.params, grads, c.obs, c.B, &c.work);
    }
    int failures = check_gradient("candidates policy", c.params, grads, c.policy.num_params,
                                  mlp_loss, &c);
    assert_int_equal(failures, 0);
    /* padding atoms and unused vocabulary rows get no gradient: predicate 0 */
    const sk_tensor_info *preds = &c.policy.tensors[SK_CAND_PREDS];
    for (int d = 0; d < CD; d++) assert_true(grads[preds->offset + (size_t)d] == 0.0f);
    /* a state's encoding does not depend on the order of its atoms */
    float logits_before[CBATCH * CS], swapped[3];
    sk_policy_forward(&c.policy, SK_NET_ACTOR, c.params, c.obs, c.B, &c.work);
    memcpy(logits_before, c.work.out[0], sizeof logits_before);
    float *row = c.obs;
    memcpy(swapped, row, sizeof swapped);
    memcpy(row, row + 3, sizeof swapped);
    memcpy(row + 3, swapped, sizeof swapped);
    sk_policy_forward(&c.policy, SK_NET_ACTOR, c.params, c.obs, c.B, &c.work);
    for (int i = 0; i < CBATCH * CS; i++)
        assert_true(fabsf(c.work.out[0][i] - logits_before[i]) <= 1e-5f * (1.0f + fabsf(logits_before[i])));
    sk_policy_work_free(&c.work);
    free(c.params);
    free(grads);
    free(c.obs);
    free(c.g[0]);
    free(c.g[1]);
}

/* ---- PPO loss ---- */
enum { PB = 12 };
typedef struct ppo_ctx {
    sk_policy policy;
    sk_policy_work work;
    float *params, *scratch_grads;
    float obs[PB * 4], old_logp[PB], adv[PB], returns[PB], old_values[PB], actions_f[PB * 2];
    int32_t actions[PB];
    bool continuous;
    sk_ppo_loss_config config;
} ppo_ctx;

static sk_ppo_rows ppo_rows(ppo_ctx *c) {
    return (sk_ppo_rows){.rows = PB, .obs = c->obs, .actions = c->continuous ? NULL : c->actions,
                         .actions_continuous = c->continuous ? c->actions_f : NULL,
                         .old_logp = c->old_logp,
                         .advantages = c->adv, .returns = c->returns, .old_values = c->old_values};
}

static double ppo_loss(void *p) {
    ppo_ctx *c = p;
    sk_ppo_loss_sums sums = {0};
    sk_ppo_rows rows = ppo_rows(c);
    sk_ppo_loss_grad(&c->policy, c->params, c->scratch_grads, &c->work, &rows, 1.0f / PB,
                     &c->config, &sums);
    return (sums.policy_loss - c->config.ent_coef * sums.entropy + c->config.vf_coef * sums.value_loss) / PB;
}

static void test_ppo_loss(void **state) {
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        int clip_vloss = variant == 1, continuous = variant == 2;
        ppo_ctx c = {.config = {.clip_coef = 0.2f, .ent_coef = 0.05f, .vf_coef = 0.5f,
                                .clip_vloss = clip_vloss},
                     .continuous = continuous};
        sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {3}};
        if (continuous)
            space = (sk_action_space){.kind = SK_SPACE_CONTINUOUS, .dim = 2, .low = {-1, -1},
                                      .high = {1, 1}};
        assert_int_equal(sk_policy_init(&c.policy, 4, &space, 0, 8, 2, SK_ACTIVATION_TANH), SK_OK);
        assert_int_equal(sk_policy_work_alloc(&c.work, &c.policy, PB), SK_OK);
        c.params = calloc(c.policy.num_params, sizeof(float));
        c.scratch_grads = calloc(c.policy.num_params, sizeof(float));
        float *grads = calloc(c.policy.num_params, sizeof(float));
        uint64_t rng = 51;
        fill_normal(c.params, c.policy.num_params, &rng, 0.5);
        fill_normal(c.obs, PB * 4, &rng, 1.0);
        fill_normal(c.adv, PB, &rng, 1.0);
        fill_normal(c.returns, PB, &rng, 1.0);
        for (int i = 0; i < PB; i++) c.actions[i] = (int32_t)sk_rng_below(&rng, 3);
        fill_normal(c.actions_f, PB * 2, &rng, 1.0);
        /* old log-probs and values away from the current ones, so that the
         * clipped branches are taken on some rows */
        sk_policy_forward(&c.policy, SK_NET_ACTOR, c.params, c.obs, PB, &c.work);
        float entropy[PB];
        sk_policy_evaluate(&c.policy, c.params, c.work.out[0], NULL, c.actions, c.actions_f, PB,
                           c.old_logp, entropy);
        sk_policy_forward(&c.policy, SK_NET_CRITIC, c.params, c.obs, PB, &c.work);
        for (int i = 0; i < PB; i++) {
            c.old_logp[i] += (float)(0.4 * sk_rng_normal(&rng));
            c.old_values[i] = c.work.out[1][i] + (float)(0.5 * sk_rng_normal(&rng));
        }
        sk_ppo_loss_sums sums = {0};
        sk_ppo_rows rows = ppo_rows(&c);
        sk_ppo_loss_grad(&c.policy, c.params, grads, &c.work, &rows, 1.0f / PB, &c.config, &sums);
        assert_true(sums.clip_fraction > 0 && sums.clip_fraction < PB);
        const char *names[3] = {"ppo loss", "ppo loss (clipped value)", "ppo loss (gaussian)"};
        g_fd_eps = FD_EPS_PPO;
        int failures = check_gradient(names[variant], c.params, grads, c.policy.num_params,
                                      ppo_loss, &c);
        g_fd_eps = 1e-2f;
        assert_int_equal(failures, 0);
        sk_policy_work_free(&c.work);
        free(c.params);
        free(c.scratch_grads);
        free(grads);
    }
}

/* ---- the PPO loss through a recurrent core: encoder, LSTM or GRU over
 * sequences with episode resets and given entering states, then the heads;
 * every parameter's gradient (backpropagation through time) against finite
 * differences of the loss, for both policy types and both distributions ---- */
enum { QT = 4, QS = 3, QB = QT * QS, QO = 4 };
typedef struct core_ctx {
    sk_policy policy;
    sk_policy_work work;
    float *params, *scratch_grads, *obs, *actions_f, h0[QS * CD], c0[QS * CD];
    float state0[QS * 2 * CD]; /* h0, c0 as the core takes them: each row's parts in turn */
    float old_logp[QB], adv[QB], returns[QB], old_values[QB];
    int32_t actions[QB];
    uint8_t resets[QB];
    bool continuous;
    sk_ppo_loss_config config;
} core_ctx;

/* c->state0 from h0 and c0 (an LSTM's rows: h, then c; a GRU's: h). */
static const float *core_state0(core_ctx *c) {
    int parts = c->policy.core->num_parts;
    for (int r = 0; r < QS; r++) {
        memcpy(c->state0 + (size_t)(r * parts) * CD, c->h0 + r * CD, CD * sizeof(float));
        if (parts == 2)
            memcpy(c->state0 + (size_t)(r * parts + 1) * CD, c->c0 + r * CD, CD * sizeof(float));
    }
    return c->state0;
}

static sk_ppo_rows core_rows(core_ctx *c) {
    return (sk_ppo_rows){.rows = QB, .seq_len = QT, .state0 = core_state0(c), .resets = c->resets,
                         .obs = c->obs, .actions = c->continuous ? NULL : c->actions,
                         .actions_continuous = c->continuous ? c->actions_f : NULL,
                         .old_logp = c->old_logp, .advantages = c->adv, .returns = c->returns,
                         .old_values = c->old_values};
}

static double core_loss(void *p) {
    core_ctx *c = p;
    sk_ppo_loss_sums sums = {0};
    sk_ppo_rows rows = core_rows(c);
    sk_ppo_loss_grad(&c->policy, c->params, c->scratch_grads, &c->work, &rows, 1.0f / QB,
                     &c->config, &sums);
    return (sums.policy_loss - c->config.ent_coef * sums.entropy + c->config.vf_coef * sums.value_loss) / QB;
}

static void test_ppo_loss_core(void **state) {
    (void)state;
    const char *names[4] = {"ppo loss, lstm core (categorical)", "ppo loss, gru core (gaussian)",
                            "ppo loss, lstm core, no head layers", "ppo loss, candidates, lstm core"};
    for (int variant = 0; variant < 4; variant++) {
        core_ctx c = {.config = {.clip_coef = 0.2f, .ent_coef = 0.05f, .vf_coef = 0.5f,
                                 .clip_vloss = true},
                      .continuous = variant == 1};
        sk_core_spec core = {variant == 1 ? &sk_core_gru : &sk_core_lstm, CD};
        sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {3}};
        if (c.continuous)
            space = (sk_action_space){.kind = SK_SPACE_CONTINUOUS, .dim = 2, .low = {-1, -1},
                                      .high = {1, 1}};
        uint64_t rng = 71 + (uint64_t)variant;
        if (variant < 3) {
            assert_int_equal(sk_policy_init_core(&c.policy, QO, &space, 0, 5, variant == 2 ? 0 : 1,
                                                 SK_ACTIVATION_TANH, core),
                             SK_OK);
        } else {
            space = (sk_action_space){.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {CS}};
            sk_obs_atoms atoms = {.atoms = CA, .candidates = CS, .num_preds = CP, .num_args = CR};
            assert_int_equal(sk_policy_init_candidates(&c.policy, &space, 0, &atoms, CD, core), SK_OK);
        }
        assert_true(c.policy.core != NULL);
        assert_int_equal(sk_policy_work_alloc(&c.work, &c.policy, QB), SK_OK);
        int O = c.policy.obs_size;
        c.params = calloc(c.policy.num_params, sizeof(float));
        c.scratch_grads = calloc(c.policy.num_params, sizeof(float));
        c.obs = calloc((size_t)QB * (size_t)O, sizeof(float));
        c.actions_f = calloc(QB * 2, sizeof(float));
        float *grads = calloc(c.policy.num_params, sizeof(float));
        fill_normal(c.params, c.policy.num_params, &rng, 0.5);
        if (variant < 3) fill_normal(c.obs, (size_t)QB * (size_t)O, &rng, 1.0);
        else
            for (int r = 0; r < QB; r++) {
                random_atoms(c.obs + (size_t)r * (size_t)O, CA * (1 + CS), &rng, true);
                c.obs[(size_t)r * (size_t)O] = 1.0f;
            }
        fill_normal(c.h0, QS * CD, &rng, 0.5);
        fill_normal(c.c0, QS * CD, &rng, 0.5);
        fill_normal(c.adv, QB, &rng, 1.0);
        fill_normal(c.returns, QB, &rng, 1.0);
        fill_normal(c.actions_f, QB * 2, &rng, 1.0);
        for (int i = 0; i < QB; i++) c.actions[i] = (int32_t)sk_rng_below(&rng, (uint32_t)space.head_sizes[0]);
        c.resets[2 * QS + 1] = 1; /* sequence 1 starts an episode at step 2 */
        c.resets[0 * QS + 2] = 1; /* sequence 2's entering state is cut */
        /* old log-probs and values near the current ones: some rows clip */
        sk_ppo_loss_sums sums = {0};
        sk_ppo_rows rows = core_rows(&c);
        sk_policy_core_forward(&c.policy, c.params, c.obs, core_state0(&c), c.resets, QT, QS,
                               &c.work);
        sk_policy_forward(&c.policy, SK_NET_ACTOR, c.params, c.obs, QB, &c.work);
        float entropy[QB];
        if (c.continuous) /* actions the policy would take: the ratio stays moderate */
            sk_policy_sample(&c.policy, c.params, c.work.out[0], NULL, QB, &rng, false, NULL,
                             c.actions_f, c.old_logp);
        sk_policy_evaluate(&c.policy, c.params, c.work.out[0], NULL, c.actions, c.actions_f, QB,
                           c.old_logp, entropy);
        sk_policy_forward(&c.policy, SK_NET_CRITIC, c.params, c.obs, QB, &c.work);
        for (int i = 0; i < QB; i++) {
            c.old_logp[i] += (float)(0.4 * sk_rng_normal(&rng));
            c.old_values[i] = c.work.out[1][i] + (float)(0.5 * sk_rng_normal(&rng));
        }
        sk_ppo_loss_grad(&c.policy, c.params, grads, &c.work, &rows, 1.0f / QB, &c.config, &sums);
        assert_true(sums.clip_fraction > 0 && sums.clip_fraction < QB);
        /* every core tensor gets a gradient: the heads' gradient reached the core */
        for (int k = 0; k < SK_RNN_NUM_TENSORS; k++) {
            const sk_tensor_info *t = &c.policy.tensors[c.policy.core_tensor + k];
            assert_true(sk_grad_norm(grads + t->offset, (size_t)t->rows * (size_t)t->cols) > 0.0);
        }
        g_fd_eps = FD_EPS_PPO;
        int failures = check_gradient(names[variant], c.params, grads, c.policy.num_params,
                                      core_loss, &c);
        g_fd_eps = 1e-2f;
        assert_int_equal(failures, 0);
        /* a reset row's output does not depend on the entering state */
        sk_policy_core_forward(&c.policy, c.params, c.obs, core_state0(&c), c.resets, QT, QS,
                               &c.work);
        float cut = c.work.features[(size_t)(0 * QS + 2) * CD];
        c.h0[2 * CD] += 1.0f;
        c.c0[2 * CD] += 1.0f;
        sk_policy_core_forward(&c.policy, c.params, c.obs, core_state0(&c), c.resets, QT, QS,
                               &c.work);
        assert_true(c.work.features[(size_t)(0 * QS + 2) * CD] == cut);
        sk_policy_work_free(&c.work);
        free(c.params);
        free(c.scratch_grads);
        free(c.obs);
        free(c.actions_f);
        free(grads);
    }
}

/* ---- orthogonal init ---- */
static void test_orthogonal(void **state) {
    (void)state;
    int shapes[3][2] = {{8, 3}, {3, 8}, {6, 6}};
    for (int s = 0; s < 3; s++) {
        int rows = shapes[s][0], cols = shapes[s][1];
        float w[64];
        uint64_t rng = 61;
        double gain = 1.7;
        sk_orthogonal_init(w, rows, cols, gain, &rng);
        /* the small side is orthonormal up to gain */
        int small = rows < cols ? rows : cols;
        for (int a = 0; a < small; a++) {
            for (int b = 0; b < small; b++) {
                double dot = 0.0;
                if (rows >= cols)
                    for (int r = 0; r < rows; r++) dot += (double)w[r * cols + a] * w[r * cols + b];
                else
                    for (int c2 = 0; c2 < cols; c2++) dot += (double)w[a * cols + c2] * w[b * cols + c2];
                double want = a == b ? gain * gain : 0.0;
                assert_true(fabs(dot - want) < 1e-5);
            }
        }
    }
}

/* ---- GAE against its definition: A_t = sum_k (gamma lambda)^k delta_{t+k} ---- */
static void test_gae(void **state) {
    (void)state;
    enum { T = 9, N = 3 };
    float rewards[T * N], values[(T + 1) * N], bootstrap[T * N], adv[T * N], ret[T * N];
    uint8_t term[T * N] = {0}, trunc[T * N] = {0};
    uint64_t rng = 71;
    fill_normal(rewards, T * N, &rng, 1.0);
    fill_normal(values, (T + 1) * N, &rng, 1.0);
    fill_normal(bootstrap, T * N, &rng, 1.0);
    term[2 * N + 0] = 1;  /* env 0 terminates at t = 2 */
    trunc[5 * N + 1] = 1; /* env 1 is truncated at t = 5 */
    term[4 * N + 2] = 1;  /* env 2: terminal at 4, truncated at 7 */
    trunc[7 * N + 2] = 1;
    float gamma = 0.9f, lambda = 0.8f;
    sk_gae(adv, ret, rewards, values, term, trunc, bootstrap, T, N, 0, N, gamma, lambda);
    for (int i = 0; i < N; i++) {
        for (int t = 0; t < T; t++) {
            double want = 0.0, weight = 1.0;
            for (int k = t; k < T; k++) {
                int idx = k * N + i;
                double next = term[idx] ? 0.0 : trunc[idx] ? bootstrap[idx] : values[idx + N];
                double delta = rewards[idx] + gamma * next - values[idx];
                want += weight * delta;
                if (term[idx] || trunc[idx]) break;
                weight *= gamma * lambda;
            }
            assert_true(fabs(adv[t * N + i] - want) < 1e-5);
            assert_true(fabs(ret[t * N + i] - (want + values[t * N + i])) < 1e-5);
        }
    }
    /* without bootstrap values a truncation is terminal: delta = r - V */
    sk_gae(adv, ret, rewards, values, term, trunc, NULL, T, N, 0, N, gamma, lambda);
    int k = 5 * N + 1;
    assert_true(fabs(adv[k] - (rewards[k] - values[k])) < 1e-6);
    k = 7 * N + 2;
    assert_true(fabs(adv[k] - (rewards[k] - values[k])) < 1e-6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear),      cmocka_unit_test(test_activations),
        cmocka_unit_test(test_tanh_accuracy),
        cmocka_unit_test(test_sigmoid_kernel),
        cmocka_unit_test(test_tanh_forward_matches_tanhf),
        cmocka_unit_test(test_grad_norm_matches_long_double),
        cmocka_unit_test(test_categorical),
        cmocka_unit_test(test_categorical_binary_fast),
        cmocka_unit_test(test_categorical_masks_by_head0), cmocka_unit_test(test_gaussian),
        cmocka_unit_test(test_mlp),
        cmocka_unit_test(test_candidates_policy),
        cmocka_unit_test(test_ppo_loss),    cmocka_unit_test(test_ppo_loss_core),
        cmocka_unit_test(test_orthogonal),
        cmocka_unit_test(test_gae),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
