/* SAC's squashed Gaussian kernel (src/nn/isa/squash.c) at every ISA level this CPU has, against
 * the same formulas (src/train/sac_net.h) in double precision from libm, over many random rows:
 * dims 1, 3, 6, 17 and the widest (blocks of rows and their partial tails), means past tanh's
 * saturation (|x| > 9), raw log-stds at both clamps, with and without dactions.
 *
 * The bound. Each output is compared relative to its magnitude: the sum of the absolute values
 * of the parts the formula adds (|y scale| + |bias| for an action, a row's sum of |term parts|
 * for logp, |dlogp dcorrection| + |dactions scale slope| for dmean, ...), so that cancellation
 * in a sum is not charged to the kernel. Every float step (Cephes' exp and log, tanh within
 * 3e-7, a division or product) is within a few ulp; the float rounding of u = mean + std noise
 * itself (the formula's, not the kernel's: the old libm code had it too) moves sech2(u) by a
 * factor 2 |du|, du ~ (|u| + |std noise|) 2^-23, so the bound grows with them:
 *   |error| <= SQUASH_ULPS (1 + |u| + |std noise|) 2^-23 magnitude,
 * SQUASH_ULPS = 8: the worst measured is 4.4 (dmean at baseline; 2.6 at avx2 and avx512). Below
 * FLT_MIN an absolute floor, since a subnormal has no relative precision. */
#include "test_util.h"

#include "core/isa.h"
#include "core/rng.h"
#include "nn/kernels.h"
#include "train/sac_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define SQUASH_ULPS 8.0
#define FLOAT_EPS 1.1920928955078125e-7 /* 2^-23 */
#define SUBNORMAL_FLOOR 1e-38 /* < FLT_MIN = 1.18e-38 */
enum { ROWS = 301 };

typedef struct reference {
    double value, magnitude, u; /* u: the element's (or the row's largest) |u| */
} reference;

static double sech2(double x) {
    double e = exp(-2.0 * fabs(x));
    return 4.0 * e / ((1.0 + e) * (1.0 + e));
}

static double log_std_of(double tanh_raw) {
    return SK_SAC_LOG_STD_MIN + 0.5 * (SK_SAC_LOG_STD_MAX - SK_SAC_LOG_STD_MIN) * (tanh_raw + 1.0);
}

/* a mean or raw log-std: normal, or one in 8 far past tanh's saturation (|x| in [9, 30]) */
static float draw_head(uint64_t *rng) {
    double x = 2.0 * sk_rng_normal(rng);
    if (sk_rng_float(rng) < 0.125f) x = (x < 0 ? -1.0 : 1.0) * (9.0 + 21.0 * sk_rng_float(rng));
    return (float)x;
}

static int check(const char *what, const char *level, int dim, size_t i, double got,
                 reference want, double *worst) {
    /* below FLT_MIN float has no relative precision left: an absolute floor there */
    double err = fabs(got - want.value) /
                 ((1.0 + want.u) * FLOAT_EPS * want.magnitude + SUBNORMAL_FLOOR);
    if (err > *worst) *worst = err;
    if (err <= SQUASH_ULPS && got == got) return 0;
    printf("%s at %s dim %d [%zu]: %.9g, want %.9g (magnitude %.3g, |u| %.3g): %.2f ulps\n", what,
           level, dim, i, got, want.value, want.magnitude, want.u, err);
    return 1;
}

static int check_level(const sk_nn_kernels *kernels, int dim, bool with_dactions,
                       uint64_t seed, double worst[5]) {
    const char *level = sk_isa_level_name(kernels->level);
    size_t n = (size_t)ROWS * (size_t)dim;
    float *head = malloc(2 * n * sizeof(float)), *noise = malloc(n * sizeof(float));
    float *actions = malloc(n * sizeof(float)), *squashed = malloc(n * sizeof(float));
    float *tanh_raw = malloc(n * sizeof(float)), *dactions = malloc(n * sizeof(float));
    float *dhead = malloc(2 * n * sizeof(float)), logp[ROWS], dlogp[ROWS];
    float scale[SK_MAX_ACTION_DIM], bias[SK_MAX_ACTION_DIM];
    uint64_t rng = sk_rng_seed(seed, (uint64_t)dim);
    for (size_t i = 0; i < 2 * n; i++) head[i] = draw_head(&rng);
    for (size_t i = 0; i < n; i++) {
        noise[i] = (float)sk_rng_normal(&rng);
        dactions[i] = (float)sk_rng_normal(&rng);
    }
    for (int d = 0; d < dim; d++) {
        scale[d] = 0.05f + 3.0f * sk_rng_float(&rng);
        bias[d] = 2.0f * sk_rng_float(&rng) - 1.0f;
    }
    for (int row = 0; row < ROWS; row++) dlogp[row] = (float)sk_rng_normal(&rng);
    head[dim] = 40.0f, head[dim + 1 < 2 * dim ? dim + 1 : dim] = -40.0f; /* both clamps exactly */
    for (size_t i = 0; i < 2 * n; i++) dhead[i] = 0.0f;
    kernels->sac_squash_forward(head, noise, ROWS, dim, scale, bias, actions, logp, squashed,
                                tanh_raw);
    kernels->sac_squash_backward(head, noise, ROWS, dim, scale, squashed, tanh_raw,
                                 with_dactions ? dactions : NULL, dlogp, dhead);
    int failures = 0;
    const double half_range = 0.5 * (SK_SAC_LOG_STD_MAX - SK_SAC_LOG_STD_MIN);
    for (int row = 0; row < ROWS && failures < 10; row++) {
        reference row_logp = {0.0, 0.0, 0.0};
        for (int d = 0; d < dim; d++) {
            size_t at = (size_t)row * (size_t)dim + (size_t)d;
            double mean = head[(size_t)row * 2 * (size_t)dim + (size_t)d];
            double raw = head[(size_t)row * 2 * (size_t)dim + (size_t)(dim + d)];
            double eps = noise[at], t = tanh(raw), log_std = log_std_of(t);
            double std = exp(log_std), u = mean + std * eps, y = tanh(u);
            double log_term = log(scale[d] * sech2(u) + SK_SAC_LOG_EPS);
            double au = fabs(u) + fabs(std * eps);
            double u_size = sech2(u) * (fabs(mean) + fabs(std * eps)); /* tanh's condition */
            row_logp.value += -0.5 * eps * eps - log_std - 0.91893853320467274178 - log_term;
            row_logp.magnitude += 0.5 * eps * eps + fabs(log_std) + 0.92 + fabs(log_term);
            row_logp.u = au > row_logp.u ? au : row_logp.u;
            failures += check("log_std_tanh", level, dim, at, tanh_raw[at],
                              (reference){t, fabs(t), 0.0}, &worst[0]);
            failures += check("action", level, dim, at, actions[at],
                              (reference){y * scale[d] + bias[d],
                                          (fabs(y) + u_size) * scale[d] + fabs(bias[d]), au},
                              &worst[0]);
            failures += check("squashed", level, dim, at, squashed[at],
                              (reference){y, fabs(y) + u_size, au}, &worst[0]);
            /* the backward from the kernel's own squashed and log_std_tanh, its inputs */
            double fy = squashed[at], fstd = exp(log_std_of(tanh_raw[at]));
            double fu = mean + fstd * eps, slope = scale[d] * sech2(fu);
            double dcorrection = 2.0 * fy * slope / (slope + SK_SAC_LOG_EPS);
            double dact = with_dactions ? dactions[at] : 0.0;
            double du = dlogp[row] * dcorrection + dact * slope;
            double du_size = fabs(dlogp[row] * dcorrection) + fabs(dact * slope);
            double draw_scale = half_range * sech2(raw);
            reference dmean = {du, du_size, au};
            reference draw = {(du * fstd * eps - dlogp[row]) * draw_scale,
                              (du_size * fabs(fstd * eps) + fabs(dlogp[row])) * draw_scale,
                              au + fabs(raw)};
            size_t head_at = (size_t)row * 2 * (size_t)dim + (size_t)d;
            failures += check("dmean", level, dim, at, dhead[head_at], dmean, &worst[2]);
            failures += check("draw", level, dim, at, dhead[head_at + (size_t)dim], draw, &worst[3]);
        }
        failures += check("logp", level, dim, (size_t)row, logp[row], row_logp, &worst[1]);
    }
    free(head), free(noise), free(actions), free(squashed), free(tanh_raw), free(dactions);
    free(dhead);
    return failures;
}

static void test_levels_against_double(void **state) {
    (void)state;
    static const int dims[] = {1, 3, 6, 17, SK_MAX_ACTION_DIM};
    int failures = 0, levels = 0;
    /* every level the CPU has, or the one SKINNER_ISA forces (the @level copies in ctest) */
    bool forced = getenv("SKINNER_ISA") != NULL;
    for (int level = SK_ISA_BASELINE; level <= (int)sk_isa_level_detected(); level++) {
        const sk_nn_kernels *kernels = sk_nn_kernels_at((sk_isa_level)level);
        if (!kernels || (forced && kernels != sk_nn_kernels_used())) continue;
        double worst[5] = {0};
        levels++;
        for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++)
            for (int with_dactions = 0; with_dactions < 2; with_dactions++)
                failures += check_level(kernels, dims[k], with_dactions, 7 + k, worst);
        printf("%s: worst in ulps (1 + |u|) of magnitude: forward %.2f, logp %.2f, dmean %.2f, "
               "draw %.2f\n", sk_isa_level_name((sk_isa_level)level), worst[0], worst[1],
               worst[2], worst[3]);
    }
    assert_true(levels >= 1);
    assert_int_equal(failures, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels_against_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
