/*
 * Vectorisable double sin and cos for the env step loops: every function here is branch-free
 * straight-line arithmetic on doubles and 64-bit integers, so a loop that calls it over
 * struct-of-arrays runs on SIMD lanes (GCC 12 -O3 -march=native: 8 lanes with AVX-512).
 *
 * Accuracy: within 1 ulp of glibc's sin and cos for |x| <= SK_VMATH_BOUND (tests/test_vmath.c
 * sweeps that range, every double nearest a multiple of pi/2 in it, and tiny arguments, and
 * prints the worst distance it finds); callers check their arguments with sk_vrange_ok and use
 * libm for a range with any argument outside. Beyond the bound the results are untested, and
 * past |x| ~ 3e6 the reduction's products stop being exact and the results go wrong.
 *
 * How:
 *  1. n = x * 2/pi rounded to an integer by the 1.5 * 2^52 shift, whose low bits are also the
 *     quadrant n mod 4 (no float-to-integer conversion, so no undefined behaviour on any input).
 *  2. Cody-Waite reduction r = x - n pi/2 with pi/2 split as fdlibm's e_rem_pio2.c does into
 *     P1 + P2 + P3 + P3T, where P1, P2 and P3 have at most 32 significant bits so that n * Pk is
 *     exact for |n| < 2^21. x - n P1 is exact (Sterbenz), the next two subtractions keep their
 *     rounding errors (Fast2Sum; where a subtraction cancels it is itself exact), and r is
 *     returned as an unevaluated sum hi + lo with an error below 2^-140 + 2^-105 |r|: better
 *     than 2^-80 relative even for the double closest to a multiple of pi/2 in the range
 *     (|r| = 6.2e-19 at x = -45.553093477052002, found by tests/test_vmath.c).
 *  3. fdlibm's polynomial kernels __kernel_sin(hi, lo) and __kernel_cos(hi, lo) on
 *     |r| <= pi/4 (coefficients from fdlibm, Sun Microsystems 1993, public; the cosine in Bruce
 *     Evans' form from FreeBSD's msun, which needs no branch for |r| > 0.3). Both kernels are
 *     computed, and the quadrant selects between them and sets the sign with bit operations.
 *
 * Include this header only where floating-point contraction is off: the env sources build with
 * -ffp-contract=off, and a test sets #pragma GCC optimize("fp-contract=off") before including
 * it. The error-free transformations in the reduction and the kernels' compensated sums assume
 * that every product and sum is rounded as written.
 */
#ifndef SK_VMATH_H
#define SK_VMATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The largest |x| for which sk_vsin, sk_vcos and sk_vsincos are within 1 ulp of libm, and
 * sk_vangle_normalize equals its fmod formula bit for bit. The exact products hold while
 * |n| < 2^21 (|x| < 3e6); the bound is the range tests/test_vmath.c sweeps, including every
 * double within 4 ulp of a multiple of pi/2 in it. */
#define SK_VMATH_BOUND 1e5

/* Inlined even into big loop bodies (Acrobot's calls these a dozen times an iteration): a call
 * left in a loop keeps it scalar. */
#define SK_VMATH_INLINE static inline __attribute__((always_inline))

/* fdlibm's reduction constants (e_rem_pio2.c): 2/pi, and pi/2 = P1 + P2 + P3 + P3T. */
#define SK_VMATH_INV_PIO2 0x1.45f306dc9c883p-1 /* 6.36619772367581382433e-01 */
#define SK_VMATH_PIO2_1 0x1.921fb544p+0        /* 1.57079632673412561417e+00, 31 bits */
#define SK_VMATH_PIO2_2 0x1.0b4611a6p-34       /* 6.07710050630396597660e-11, 32 bits */
#define SK_VMATH_PIO2_3 0x1.3198a2ep-69        /* 2.02226624871116645580e-21, 28 bits */
#define SK_VMATH_PIO2_3T 0x1.b839a252049c1p-104 /* 8.47842766036889956997e-32 */
/* Adding then subtracting 1.5 * 2^52 rounds a double of magnitude < 2^51 to an integer (to
 * nearest, ties to even), and leaves that integer in the low bits of the sum's encoding. */
#define SK_VMATH_ROUND_SHIFT 0x1.8p52

/* The integer nearest value (|value| < 2^51) as a double, and its low bits as *low_bits. */
SK_VMATH_INLINE double sk_vmath_round(double value, uint64_t *low_bits) {
    double shifted = value + SK_VMATH_ROUND_SHIFT;
    memcpy(low_bits, &shifted, sizeof shifted);
    return shifted - SK_VMATH_ROUND_SHIFT;
}

/* x = quadrant * pi/2 + (hi + lo) with |hi + lo| <= ~pi/4 and |lo| <= ulp(hi) / 2, for
 * |x| <= SK_VMATH_BOUND. Returns the quadrant mod 4. */
SK_VMATH_INLINE uint64_t sk_vmath_reduce(double x, double *hi, double *lo) {
    uint64_t bits;
    double n = sk_vmath_round(x * SK_VMATH_INV_PIO2, &bits);
    double a = x - n * SK_VMATH_PIO2_1; /* exact: n P1 is exact and within a factor 2 of x */
    double p2 = n * SK_VMATH_PIO2_2, p3 = n * SK_VMATH_PIO2_3; /* exact */
    double b = a - p2;
    double b_err = (a - b) - p2;
    double c = b - p3;
    double c_err = (b - c) - p3;
    /* -(n P3T - errors) rather than errors - n P3T: the same value, but -0 for x = -0, so
     * that r keeps the sign of a zero x and sin(-0) is -0 */
    double tail = -(n * SK_VMATH_PIO2_3T - (b_err + c_err));
    double r = c + tail;
    *hi = r;
    *lo = (c - r) + tail;
    return bits & 3;
}

/* fdlibm's __kernel_sin(x, y, iy = 1): sin(x + y) for |x| <= ~pi/4, |y| <= ulp(x) / 2. */
SK_VMATH_INLINE double sk_vmath_kernel_sin(double x, double y) {
    const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                 S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                 S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
    double z = x * x, w = z * z, v = z * x;
    double r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    return x - ((z * (0.5 * y - v * r) - y) - v * S1);
}

/* fdlibm's __kernel_cos(x, y) in FreeBSD's form: cos(x + y) for |x| <= ~pi/4. w = 1 - z/2 is
 * rounded, and ((1 - w) - z/2) recovers that rounding exactly. */
SK_VMATH_INLINE double sk_vmath_kernel_cos(double x, double y) {
    const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                 C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                 C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
    double z = x * x, w = z * z;
    double r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    double half_z = 0.5 * z;
    double one_minus = 1.0 - half_z;
    return one_minus + (((1.0 - one_minus) - half_z) + (z * r - x * y));
}

/* sin x and cos x together (one reduction, both kernels), |x| <= SK_VMATH_BOUND. */
SK_VMATH_INLINE void sk_vsincos(double x, double *sin_x, double *cos_x) {
    double hi, lo;
    uint64_t quadrant = sk_vmath_reduce(x, &hi, &lo);
    double s = sk_vmath_kernel_sin(hi, lo), c = sk_vmath_kernel_cos(hi, lo);
    /* quadrant 0: (s, c); 1: (c, -s); 2: (-s, -c); 3: (-c, s). Selected and negated on the
     * bits rather than with ternaries: when a loop uses both results, GCC threads ternaries
     * into a multi-way branch that it then cannot vectorise. */
    uint64_t s_bits, c_bits;
    memcpy(&s_bits, &s, sizeof s);
    memcpy(&c_bits, &c, sizeof c);
    uint64_t swap = 0 - (quadrant & 1); /* all ones in odd quadrants */
    uint64_t sin_bits = (s_bits & ~swap) | (c_bits & swap);
    uint64_t cos_bits = (c_bits & ~swap) | (s_bits & swap);
    sin_bits ^= (quadrant & 2) << 62;       /* the sign bit, in quadrants 2 and 3 */
    cos_bits ^= ((quadrant + 1) & 2) << 62; /* in quadrants 1 and 2 */
    memcpy(sin_x, &sin_bits, sizeof sin_bits);
    memcpy(cos_x, &cos_bits, sizeof cos_bits);
}

/* sin x, |x| <= SK_VMATH_BOUND. */
SK_VMATH_INLINE double sk_vsin(double x) {
    double s, c;
    sk_vsincos(x, &s, &c);
    return s;
}

/* cos x, |x| <= SK_VMATH_BOUND. */
SK_VMATH_INLINE double sk_vcos(double x) {
    double s, c;
    sk_vsincos(x, &s, &c);
    return c;
}

/* Whether every |x[i]|, lo <= i < hi, is at most bound (false if any is NaN): the test a caller
 * makes before a vector loop, falling back to libm for the range when it fails. */
SK_VMATH_INLINE bool sk_vrange_ok(const double *x, int lo, int hi, double bound) {
    int64_t outside = 0;
    for (int i = lo; i < hi; i++) outside |= (int64_t)!(fabs(x[i]) <= bound);
    return outside == 0;
}

/* 2 pi as numpy's 2 * np.pi, split so that k * SK_VMATH_TWO_PI_HI and k * SK_VMATH_TWO_PI_LO
 * are exact for |k| < 2^22. */
#define SK_VMATH_TWO_PI (2.0 * M_PI)    /* 0x1.921fb54442d18p+2 */
#define SK_VMATH_TWO_PI_HI 0x1.921fb544p+2 /* 31 bits */
#define SK_VMATH_TWO_PI_LO 0x1.0b46p-32    /* 13 bits; HI + LO == TWO_PI exactly */

/*
 * Gymnasium's angle_normalize(x) = ((x + pi) % (2 pi)) - pi with Python's floored %, equal bit
 * for bit to the scalar formula
 *     w = fmod(x + pi, 2 pi); w = w < 0 ? w + 2 pi : w; return w - pi;
 * for |x| <= SK_VMATH_BOUND. With k the integer nearest (x + pi) / 2 pi, r = (x + pi) - k 2 pi
 * is computed exactly (the first subtraction by Sterbenz's lemma, the second because the result
 * is representable), and differs from fmod's result by 0 or one 2 pi: where fmod's is negative
 * so is r and both then add 2 pi with the same rounding; where r alone is negative, r + 2 pi is
 * fmod's result exactly; where fmod's is negative and r is not, (fmod + 2 pi) is r exactly. A
 * zero result may differ in sign from fmod's, which the final - pi erases.
 */
SK_VMATH_INLINE double sk_vangle_normalize(double x) {
    uint64_t unused;
    double shifted = x + M_PI;
    double k = sk_vmath_round(shifted * (1.0 / SK_VMATH_TWO_PI), &unused);
    double r = (shifted - k * SK_VMATH_TWO_PI_HI) - k * SK_VMATH_TWO_PI_LO;
    double wrapped = r < 0.0 ? r + SK_VMATH_TWO_PI : r;
    return wrapped - M_PI;
}

/*
 * Float sin and cos on |x| <= pi/4, for float32 env paths (16 lanes of AVX-512): no reduction,
 * just the single-precision minimax polynomials of Cephes' sinf.c and cosf.c (S. L. Moshier,
 * public domain), evaluated in float in Cephes' order. Within SK_VMATHF_KERNEL_MAX_ULP of
 * glibc's sinf and cosf on that range (tests/test_vmath.c sweeps every 16th float in it). A
 * caller checks its arguments with sk_vrangef_ok and falls back to libm when any is outside.
 */
#define SK_VMATHF_KERNEL_BOUND 0x1.921fb4p-1f /* the float just below pi/4 */
#define SK_VMATHF_KERNEL_MAX_ULP 1

/* sin x for |x| <= SK_VMATHF_KERNEL_BOUND. */
SK_VMATH_INLINE float sk_vsinf_kernel(float x) {
    const float S1 = -1.6666654611e-1f, S2 = 8.3321608736e-3f, S3 = -1.9515295891e-4f;
    float z = x * x;
    return ((S3 * z + S2) * z + S1) * z * x + x;
}

/* cos x for |x| <= SK_VMATHF_KERNEL_BOUND. */
SK_VMATH_INLINE float sk_vcosf_kernel(float x) {
    const float C1 = 4.166664568298827e-2f, C2 = -1.388731625493765e-3f,
                C3 = 2.443315711809948e-5f;
    float z = x * x;
    return ((C3 * z + C2) * z + C1) * z * z - 0.5f * z + 1.0f;
}

/* Whether every |x[i]|, lo <= i < hi, is at most bound (false if any is NaN). */
SK_VMATH_INLINE bool sk_vrangef_ok(const float *x, int lo, int hi, float bound) {
    int32_t outside = 0;
    for (int i = lo; i < hi; i++) outside |= (int32_t)!(fabsf(x[i]) <= bound);
    return outside == 0;
}

#endif
