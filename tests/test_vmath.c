/*
 * core/vmath.h against libm: sk_vsin, sk_vcos and sk_vsincos within 1 ulp of glibc's sin and
 * cos for |x| <= SK_VMATH_BOUND, over dense and random sweeps of that range, every double within
 * 4 ulp of a multiple of pi/2 in it (where the reduction cancels most), tiny and subnormal
 * arguments, and the ends of the range; sk_vangle_normalize equal bit for bit to the fmod
 * formula it replaces; sk_vrange_ok's answers. Each sweep prints the largest distance it found
 * and how many results differ from libm's at all. The float kernels sk_vsinf_kernel and
 * sk_vcosf_kernel against glibc's sinf and cosf on |x| <= pi/4 (every float there was checked
 * once, 2.1e9 of them: at most 1 ulp, 0.04% of sines and 0.12% of cosines differ; the test
 * sweeps every 32nd), and sk_vrangef_ok.
 *
 * These run the scalar compilation of the header's functions; the env loops run the same
 * IEEE operations on SIMD lanes (no contraction, no reassociation), so their results are the
 * same bit for bit (tests/test_envs_simd.c).
 */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* vmath's error-free transformations need every product rounded, as in the env sources, which
 * build with -ffp-contract=off; a -march=native build of this test would otherwise fuse them. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "core/rng.h"
#include "gym_reference.h" /* ulp_distance */
#include "core/vmath.h"

#define BOUND SK_VMATH_BOUND
#define MAX_ULP 1

/* The distance between two doubles in representable doubles: 0 when equal (+0 and -0 are
 * equal here; sign-of-zero tests compare bits). */
static int64_t ulps(double a, double b) {
    if (a == b) return 0;
    if (isnan(a) || isnan(b)) return INT64_MAX;
    int64_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    if (ia < 0) ia = INT64_MIN - ia;
    if (ib < 0) ib = INT64_MIN - ib;
    return ia > ib ? ia - ib : ib - ia;
}

/* The largest distances from libm over one sweep. */
typedef struct sweep {
    const char *name;
    long points, sin_differ, cos_differ;
    int64_t sin_ulp, cos_ulp;
    double sin_worst_x, cos_worst_x;
} sweep;

static void check_point(sweep *w, double x) {
    double s, c;
    sk_vsincos(x, &s, &c);
    int64_t us = ulps(s, sin(x)), uc = ulps(c, cos(x));
    w->points++;
    w->sin_differ += us != 0;
    w->cos_differ += uc != 0;
    if (us > w->sin_ulp) {
        w->sin_ulp = us;
        w->sin_worst_x = x;
    }
    if (uc > w->cos_ulp) {
        w->cos_ulp = uc;
        w->cos_worst_x = x;
    }
    /* the single-result forms are the pair's halves */
    if (ulps(sk_vsin(x), s) != 0 || ulps(sk_vcos(x), c) != 0)
        fail_msg("sk_vsin/sk_vcos(%.17g) differ from sk_vsincos", x);
}

static void finish_sweep(const sweep *w) {
    print_message("%-34s %9ld points: sin max %lld ulp (at %.17g; %.2f%% differ), cos max %lld "
                  "ulp (at %.17g; %.2f%% differ)\n",
                  w->name, w->points, (long long)w->sin_ulp, w->sin_worst_x,
                  100.0 * (double)w->sin_differ / (double)w->points, (long long)w->cos_ulp,
                  w->cos_worst_x, 100.0 * (double)w->cos_differ / (double)w->points);
    if (w->sin_ulp > MAX_ULP || w->cos_ulp > MAX_ULP)
        fail_msg("%s: more than %d ulp from libm", w->name, MAX_ULP);
}

/* x moved by `steps` representable doubles (negative: downwards). */
static double step_ulps(double x, int steps) {
    for (; steps > 0; steps--) x = nextafter(x, INFINITY);
    for (; steps < 0; steps++) x = nextafter(x, -INFINITY);
    return x;
}

static void test_dense_sweep(void **unused) {
    (void)unused;
    enum { POINTS = 1 << 22 };
    sweep w = {.name = "dense over [-B, B]"};
    for (long k = 0; k <= POINTS; k++) check_point(&w, -BOUND + 2.0 * BOUND * (double)k / POINTS);
    finish_sweep(&w);
}

static void test_random_arguments(void **unused) {
    (void)unused;
    enum { POINTS = 1000000 };
    uint64_t rng = 1;
    sweep wide = {.name = "uniform in [-B, B]"};
    for (int k = 0; k < POINTS; k++) check_point(&wide, sk_rng_uniform(&rng, -BOUND, BOUND));
    finish_sweep(&wide);
    /* where the envs' angles live */
    sweep turns = {.name = "uniform in [-4 pi, 4 pi]"};
    for (int k = 0; k < POINTS; k++)
        check_point(&turns, sk_rng_uniform(&rng, -4.0 * M_PI, 4.0 * M_PI));
    finish_sweep(&turns);
    /* every binade from 2^-30 to B */
    sweep scales = {.name = "log-uniform |x| in [2^-30, B]"};
    for (int k = 0; k < POINTS; k++) {
        double magnitude = exp2(sk_rng_uniform(&rng, -30.0, log2(BOUND)));
        check_point(&scales, sk_rng_below(&rng, 2) ? magnitude : -magnitude);
    }
    finish_sweep(&scales);
}

/* The doubles nearest k pi/2 for every k in range, and 4 ulp either side: there x - n pi/2
 * cancels all but the last few bits of x, so the reduction must carry pi/2 to ~120 bits. Also
 * reports how close to a multiple the doubles come (the reduced argument's smallest size). */
static void test_near_multiples_of_half_pi(void **unused) {
    (void)unused;
    /* pi/2 to 64 bits; the nearest double to k pi/2 from long double is off by at most an ulp,
     * which the +-4 ulp neighbourhood covers */
    const long double half_pi = 1.570796326794896619231321691639751442L;
    long k_max = (long)(BOUND / (double)half_pi);
    sweep w = {.name = "within 4 ulp of k pi/2, |k| <= 63661"};
    double smallest_r = INFINITY, smallest_at = 0.0;
    for (long k = -k_max; k <= k_max; k++) {
        double nearest = (double)((long double)k * half_pi);
        for (int d = -4; d <= 4; d++) {
            double x = step_ulps(nearest, d);
            if (fabs(x) > BOUND) continue;
            check_point(&w, x);
            double hi, lo;
            sk_vmath_reduce(x, &hi, &lo);
            if (k != 0 && fabs(hi) < smallest_r) {
                smallest_r = fabs(hi);
                smallest_at = x;
            }
        }
    }
    finish_sweep(&w);
    print_message("closest to a multiple of pi/2: |x - n pi/2| = %.3g at x = %.17g\n", smallest_r,
                  smallest_at);
    assert_true(smallest_r > 1e-19); /* the reduction's documented accuracy assumes this */
}

static void test_tiny_and_extreme_arguments(void **unused) {
    (void)unused;
    sweep tiny = {.name = "|x| in [2^-1074, 1], x 1.0001"};
    for (double x = DBL_TRUE_MIN; x <= 1.0; x = fmax(x * 1.0001, nextafter(x, INFINITY))) {
        check_point(&tiny, x);
        check_point(&tiny, -x);
    }
    finish_sweep(&tiny);

    /* signed zeros, bit for bit */
    double s, c;
    sk_vsincos(-0.0, &s, &c);
    assert_true(s == 0.0 && signbit(s) && c == 1.0);
    sk_vsincos(0.0, &s, &c);
    assert_true(s == 0.0 && !signbit(s) && c == 1.0);

    sweep ends = {.name = "the last 10^5 doubles below +-B"};
    double x = BOUND;
    for (int k = 0; k < 100000; k++, x = nextafter(x, 0.0)) {
        check_point(&ends, x);
        check_point(&ends, -x);
    }
    finish_sweep(&ends);

    /* outside the contract, but never a trap or undefined behaviour: NaN in, NaN out */
    assert_true(isnan(sk_vsin(NAN)) && isnan(sk_vcos(NAN)));
    assert_true(isnan(sk_vsin(INFINITY)) && isnan(sk_vcos(-INFINITY)));
}

/* ---------------------------------------------------------- sk_vangle_normalize */

/* Pendulum's scalar angle_normalize: Python's floored (x + pi) % (2 pi) - pi through fmod. */
static double angle_normalize_fmod(double x) {
    double wrapped = fmod(x + M_PI, 2.0 * M_PI);
    wrapped = wrapped < 0.0 ? wrapped + 2.0 * M_PI : wrapped;
    return wrapped - M_PI;
}

static long g_angle_points;

static void check_angle(double x) {
    double got = sk_vangle_normalize(x), want = angle_normalize_fmod(x);
    g_angle_points++;
    if (memcmp(&got, &want, sizeof got) != 0)
        fail_msg("sk_vangle_normalize(%.17g) = %.17g (%a), fmod formula %.17g (%a)", x, got, got,
                 want, want);
}

static void test_angle_normalize_is_the_fmod_formula(void **unused) {
    (void)unused;
    g_angle_points = 0;
    enum { POINTS = 1 << 22 };
    for (long k = 0; k <= POINTS; k++) check_angle(-BOUND + 2.0 * BOUND * (double)k / POINTS);
    uint64_t rng = 3;
    for (int k = 0; k < 1000000; k++) check_angle(sk_rng_uniform(&rng, -BOUND, BOUND));
    for (int k = 0; k < 1000000; k++) check_angle(sk_rng_uniform(&rng, -20.0, 20.0));
    /* where x + pi lands on or next to a multiple of 2 pi (the wrap point: fmod's result near 0
     * or near 2 pi, and rounding in its + 2 pi), and next to odd multiples (results near 0) */
    const long double pi = 3.141592653589793238462643383279502884L;
    long k_max = (long)(BOUND / (double)pi) + 1;
    for (long k = -k_max; k <= k_max; k++) {
        double nearest = (double)((long double)k * pi);
        for (int d = -4; d <= 4; d++) {
            double x = step_ulps(nearest, d);
            if (fabs(x) <= BOUND) check_angle(x);
        }
    }
    const double specials[] = {0.0,        -0.0,        M_PI,        -M_PI,   2.0 * M_PI,
                               -2.0 * M_PI, 3.0 * M_PI, -3.0 * M_PI, 1e-300,  -1e-300,
                               DBL_TRUE_MIN, -DBL_TRUE_MIN, BOUND,   -BOUND,  M_PI / 2};
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++) check_angle(specials[k]);
    print_message("sk_vangle_normalize: %ld arguments, all equal to the fmod formula bit for "
                  "bit\n",
                  g_angle_points);
}

/* ---------------------------------------------------------------- constants */

static void test_constants(void **unused) {
    (void)unused;
    /* the leading parts of pi/2 have few enough bits that n * part is exact for |n| < 2^21 */
    const double parts[] = {SK_VMATH_PIO2_1, SK_VMATH_PIO2_2, SK_VMATH_PIO2_3};
    for (int k = 0; k < 3; k++) {
        int exponent;
        double mantissa = frexp(parts[k], &exponent);
        assert_true(ldexp(mantissa, 32) == trunc(ldexp(mantissa, 32))); /* <= 32 bits */
    }
    /* they sum to pi/2 (to long double's 64 bits; fdlibm's parts reach ~150 bits) */
    const long double half_pi = 1.570796326794896619231321691639751442L;
    long double sum = (long double)SK_VMATH_PIO2_1 + (long double)SK_VMATH_PIO2_2 +
                      (long double)SK_VMATH_PIO2_3 + (long double)SK_VMATH_PIO2_3T;
    assert_true(fabsl(sum - half_pi) <= 2.0L * LDBL_EPSILON);
    assert_true(fabsl((long double)SK_VMATH_INV_PIO2 - 1.0L / half_pi) <= 0x1p-54L); /* 2/pi */
    /* the split of numpy's 2 pi is exact, and its high part short */
    assert_true(SK_VMATH_TWO_PI_HI + SK_VMATH_TWO_PI_LO == 2.0 * M_PI);
    int exponent;
    double mantissa = frexp(SK_VMATH_TWO_PI_HI, &exponent);
    assert_true(ldexp(mantissa, 31) == trunc(ldexp(mantissa, 31)));
}

/* ------------------------------------------------------------- sk_vrange_ok */

static void test_range_check(void **unused) {
    (void)unused;
    double x[19];
    for (int i = 0; i < 19; i++) x[i] = -9.0 + i;
    assert_true(sk_vrange_ok(x, 0, 19, 9.0));   /* the bound itself is in range */
    assert_false(sk_vrange_ok(x, 0, 19, 8.5));
    assert_true(sk_vrange_ok(x, 1, 18, 8.0));   /* only lo..hi-1 is looked at */
    assert_true(sk_vrange_ok(x, 5, 5, 0.0));    /* an empty range */
    x[11] = NAN;
    assert_false(sk_vrange_ok(x, 0, 19, 1e300)); /* NaN is never in range */
    assert_true(sk_vrange_ok(x, 12, 19, 9.0));
    x[11] = -INFINITY;
    assert_false(sk_vrange_ok(x, 0, 19, DBL_MAX));
    x[11] = 0.0;
    assert_true(sk_vrange_ok(x, 0, 19, 9.0));
}

/* ------------------------------------------------------------ float kernels */

static void test_float_kernels(void **unused) {
    (void)unused;
    /* every 32nd float from 0 up to the bound, both signs, and the bound itself */
    int sin_ulp = 0, cos_ulp = 0;
    float sin_worst = 0.0f, cos_worst = 0.0f;
    long points = 0, sin_differ = 0, cos_differ = 0;
    uint32_t last;
    float bound = SK_VMATHF_KERNEL_BOUND;
    memcpy(&last, &bound, sizeof last);
    for (uint32_t bits = 0;; bits += 32) {
        if (bits > last) bits = last;
        float magnitude;
        memcpy(&magnitude, &bits, sizeof magnitude);
        for (int sign = 0; sign < 2; sign++) {
            float x = sign ? -magnitude : magnitude;
            int us = ulp_distance(sk_vsinf_kernel(x), sinf(x)), uc = ulp_distance(sk_vcosf_kernel(x), cosf(x));
            points++;
            sin_differ += us != 0;
            cos_differ += uc != 0;
            if (us > sin_ulp) sin_ulp = us, sin_worst = x;
            if (uc > cos_ulp) cos_ulp = uc, cos_worst = x;
        }
        if (bits == last) break;
    }
    print_message("float kernels, |x| <= pi/4 %9ld points: sinf max %d ulp (at %.9g; %.3f%% "
                  "differ), cosf max %d ulp (at %.9g; %.3f%% differ)\n",
                  points, sin_ulp, (double)sin_worst, 100.0 * (double)sin_differ / (double)points,
                  cos_ulp, (double)cos_worst, 100.0 * (double)cos_differ / (double)points);
    assert_true(sin_ulp <= SK_VMATHF_KERNEL_MAX_ULP);
    assert_true(cos_ulp <= SK_VMATHF_KERNEL_MAX_ULP);
    /* exact at 0 (the sign of a zero sine is not kept: -0 gives +0) */
    assert_true(sk_vsinf_kernel(0.0f) == 0.0f && sk_vcosf_kernel(0.0f) == 1.0f);
    /* the bound is below pi/4, and the next float is not */
    assert_true((double)bound < M_PI / 4 && (double)nextafterf(bound, 1.0f) > M_PI / 4);
}

static void test_float_range_check(void **unused) {
    (void)unused;
    float x[19];
    for (int i = 0; i < 19; i++) x[i] = -0.9f + 0.1f * (float)i;
    assert_false(sk_vrangef_ok(x, 0, 19, SK_VMATHF_KERNEL_BOUND));
    assert_true(sk_vrangef_ok(x, 2, 17, SK_VMATHF_KERNEL_BOUND)); /* -0.7 .. 0.7 */
    assert_true(sk_vrangef_ok(x, 5, 5, 0.0f));                    /* an empty range */
    x[9] = NAN;
    assert_false(sk_vrangef_ok(x, 2, 17, SK_VMATHF_KERNEL_BOUND)); /* NaN is never in range */
    x[9] = INFINITY;
    assert_false(sk_vrangef_ok(x, 2, 17, FLT_MAX));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_sweep),
        cmocka_unit_test(test_random_arguments),
        cmocka_unit_test(test_near_multiples_of_half_pi),
        cmocka_unit_test(test_tiny_and_extreme_arguments),
        cmocka_unit_test(test_angle_normalize_is_the_fmod_formula),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_range_check),
        cmocka_unit_test(test_float_kernels),
        cmocka_unit_test(test_float_range_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
