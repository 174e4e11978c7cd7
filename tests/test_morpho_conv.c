/* Convolutions (src/nn/conv.h) against a direct convolution written here in
 * double, their backward against the same and against finite differences,
 * bfloat16 rounding on constructed bit patterns, and Morpho-v0's convolutional
 * seeds (src/envs/morpho/conv_blocks.h): identity at init, parameter counts
 * from the header's formulas, gradients by finite differences, detached and
 * accumulated backward, and the bf16 context against the f32 one. */
#include "test_util.h"

#include "core/rng.h"
#include "morpho/conv_blocks.h"
#include "nn/conv.h"

#include <float.h>
#include <math.h>

#define CONV_TOL 1e-5 /* f32 vs double, relative to the sum of |terms| of each output */
#define MAX_B 5
#define FD_LINEAR_EPS 0.25f
#define FD_EPS 1e-2f /* the seeds' steps, as test_morpho_blocks.c */

static void fill_normal(float *x, size_t n, uint64_t *rng, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(scale * sk_rng_normal(rng));
}

static void round_bf16(float *out, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = sk_bf16_round(x[i]);
}

/* ---- the direct convolution, in double ---- */

static int side_out(int side, int k, int stride) { return (side + 2 * (k / 2) - k) / stride + 1; }
static size_t in_n(sk_conv_shape s, int B) { return (size_t)B * s.height * s.width * s.channels; }
static size_t out_n(sk_conv_shape s, int B) {
    return (size_t)B * side_out(s.height, s.kernel, s.stride) *
           side_out(s.width, s.kernel, s.stride) * s.out_channels;
}
static size_t w_n(sk_conv_shape s) {
    return (size_t)s.out_channels * s.kernel * s.kernel * (s.channels / s.groups);
}

/* Visits every (output, input, weight) triple of the convolution: fn gets the
 * three flat indices (input -1 for none: bias only). */
typedef void (*tap_fn)(void *ctx, size_t yi, size_t xi, size_t wi);
static void for_each_tap(sk_conv_shape s, int B, tap_fn fn, void *ctx) {
    int oh = side_out(s.height, s.kernel, s.stride), ow = side_out(s.width, s.kernel, s.stride);
    int icg = s.channels / s.groups, ocg = s.out_channels / s.groups, pad = s.kernel / 2;
    for (int n = 0; n < B; n++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++)
                for (int o = 0; o < s.out_channels; o++) {
                    size_t yi = (((size_t)n * oh + oy) * ow + ox) * s.out_channels + o;
                    fn(ctx, yi, (size_t)-1, (size_t)o);
                    for (int ky = 0; ky < s.kernel; ky++)
                        for (int kx = 0; kx < s.kernel; kx++) {
                            int iy = oy * s.stride - pad + ky, ix = ox * s.stride - pad + kx;
                            if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width) continue;
                            for (int j = 0; j < icg; j++) {
                                size_t xi = (((size_t)n * s.height + iy) * s.width + ix) *
                                                s.channels + (size_t)(o / ocg) * icg + j;
                                size_t wi = (((size_t)o * s.kernel + ky) * s.kernel + kx) * icg + j;
                                fn(ctx, yi, xi, wi);
                            }
                        }
                }
}

/* Forward: y = b + sum x w, and scale = |b| + sum |x w| (the error bound's unit). */
typedef struct naive {
    const float *x, *w, *b, *dy;
    double *y, *y_abs;                                   /* forward */
    double *dx, *dx_abs, *dw, *dw_abs, *db, *db_abs;     /* backward */
} naive;

static void fwd_tap(void *p, size_t yi, size_t xi, size_t wi) {
    naive *c = p;
    double t = xi == (size_t)-1 ? (c->b ? c->b[wi] : 0.0) : (double)c->x[xi] * c->w[wi];
    c->y[yi] += t;
    c->y_abs[yi] += fabs(t);
}

static void bwd_tap(void *p, size_t yi, size_t xi, size_t wi) {
    naive *c = p;
    double g = c->dy[yi];
    if (xi == (size_t)-1) {
        c->db[wi] += g;
        c->db_abs[wi] += fabs(g);
        return;
    }
    c->dx[xi] += g * c->w[wi];
    c->dx_abs[xi] += fabs(g * c->w[wi]);
    c->dw[wi] += g * c->x[xi];
    c->dw_abs[wi] += fabs(g * c->x[xi]);
}

static double *dzeros(size_t n) { return calloc(n ? n : 1, sizeof(double)); }
static float *fzeros(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

static naive naive_forward(sk_conv_shape s, int B, const float *x, const float *w, const float *b) {
    naive c = {.x = x, .w = w, .b = b, .y = dzeros(out_n(s, B)), .y_abs = dzeros(out_n(s, B))};
    for_each_tap(s, B, fwd_tap, &c);
    return c;
}

static naive naive_backward(sk_conv_shape s, int B, const float *x, const float *w,
                            const float *dy) {
    naive c = {.x = x, .w = w, .dy = dy, .dx = dzeros(in_n(s, B)), .dx_abs = dzeros(in_n(s, B)),
               .dw = dzeros(w_n(s)), .dw_abs = dzeros(w_n(s)),
               .db = dzeros((size_t)s.out_channels), .db_abs = dzeros((size_t)s.out_channels)};
    for_each_tap(s, B, bwd_tap, &c);
    return c;
}

static void naive_free(naive *c) {
    double *all[] = {c->y, c->y_abs, c->dx, c->dx_abs, c->dw, c->dw_abs, c->db, c->db_abs};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]);
}

/* The worst |got - want| / max(scale, 1e-6) (0 where nothing contributes, exactly). */
static double worst_err(const float *got, const double *want, const double *scale, size_t n) {
    double worst = 0.0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(got[i] - want[i]) / fmax(scale[i], 1e-6));
    return worst;
}

static const sk_conv_shape g_shapes[] = {
    /* h, w, in, out, k, stride, groups */
    {28, 28, 1, 8, 3, 2, 1}, {7, 7, 16, 32, 3, 2, 1}, {5, 5, 4, 6, 3, 1, 1},
    {4, 4, 8, 3, 1, 1, 1},   {6, 6, 8, 8, 3, 1, 8},   {5, 7, 3, 4, 3, 1, 1},
    {5, 7, 3, 4, 3, 2, 1},   {6, 6, 4, 6, 3, 1, 2},   {4, 4, 8, 3, 1, 2, 1},
};
#define NUM_SHAPES (sizeof g_shapes / sizeof g_shapes[0])

static const char *shape_name(sk_conv_shape s) {
    static char buf[96];
    snprintf(buf, sizeof buf, "%dx%dx%d->%d k%d s%d g%d", s.height, s.width, s.channels,
             s.out_channels, s.kernel, s.stride, s.groups);
    return buf;
}

/* ---- 1. forward ---- */

static void test_conv_forward(void **state) {
    (void)state;
    assert_int_equal(sk_conv_out_side(28, 3, 2), 14);
    assert_int_equal(sk_conv_out_side(7, 3, 2), 4);
    assert_int_equal(sk_conv_out_side(5, 3, 2), 3);
    assert_int_equal(sk_conv_out_side(5, 3, 1), 5);
    sk_conv *bad; /* an even kernel; channels not divisible by groups */
    sk_conv_shape even = {4, 4, 8, 8, 2, 1, 1}, ungrouped = {4, 4, 8, 6, 3, 1, 3};
    assert_int_equal(sk_conv_create(&bad, even, SK_PRECISION_F32), SK_ERR_INVALID);
    assert_int_equal(sk_conv_create(&bad, ungrouped, SK_PRECISION_F32), SK_ERR_INVALID);
    const int batches[] = {3, 5, 1, 2, 3, 4, 5, 1, 2, 5}; /* > 4 sizes: evicts cached primitives */
    for (size_t k = 0; k < NUM_SHAPES; k++) {
        sk_conv_shape s = g_shapes[k];
        assert_int_equal(sk_conv_weight_floats(s), w_n(s));
        sk_conv *conv;
        assert_int_equal(sk_conv_create(&conv, s, SK_PRECISION_F32), SK_OK);
        uint64_t rng = sk_rng_seed(101, k);
        float *x = fzeros(in_n(s, MAX_B)), *w = fzeros(w_n(s)), b[64];
        float *y = fzeros(out_n(s, MAX_B) + 8); /* 8 past the end: nothing writes there */
        fill_normal(w, w_n(s), &rng, 0.5);
        fill_normal(b, (size_t)s.out_channels, &rng, 1.0);
        double worst = 0.0;
        for (size_t t = 0; t < sizeof batches / sizeof batches[0]; t++) {
            int B = batches[t];
            fill_normal(x, in_n(s, B), &rng, 1.0);
            for (int i = 0; i < 8; i++) y[out_n(s, B) + (size_t)i] = 12345.0f;
            const float *bias = t == 1 ? NULL : b; /* once without bias */
            sk_conv_forward(conv, y, x, w, bias, B);
            naive ref = naive_forward(s, B, x, w, bias);
            double err = worst_err(y, ref.y, ref.y_abs, out_n(s, B));
            worst = fmax(worst, err);
            if (err > CONV_TOL) print_error("%s B=%d: error %.2e\n", shape_name(s), B, err);
            assert_true(err <= CONV_TOL);
            for (int i = 0; i < 8; i++) assert_true(y[out_n(s, B) + (size_t)i] == 12345.0f);
            naive_free(&ref);
        }
        print_message("forward %-24s worst error %.2e (batches 3,5,1,2,3,4,5,1,2,5)\n",
                      shape_name(s), worst);
        sk_conv_destroy(conv);
        free(x);
        free(w);
        free(y);
    }
}

/* ---- 2. backward ---- */

typedef struct conv_loss_ctx {
    sk_conv *conv;
    float *x, *w, *b, *g, *y;
    size_t ny;
    int B;
} conv_loss_ctx;

static double conv_loss(void *p) {
    conv_loss_ctx *c = p;
    sk_conv_forward(c->conv, c->y, c->x, c->w, c->b, c->B);
    double sum = 0.0;
    for (size_t i = 0; i < c->ny; i++) sum += (double)c->g[i] * c->y[i];
    return sum;
}

static void test_conv_backward(void **state) {
    (void)state;
    for (size_t k = 0; k < NUM_SHAPES; k++) {
        sk_conv_shape s = g_shapes[k];
        sk_conv *conv;
        assert_int_equal(sk_conv_create(&conv, s, SK_PRECISION_F32), SK_OK);
        size_t nx = in_n(s, MAX_B), nw = w_n(s), nb = (size_t)s.out_channels;
        float *x = fzeros(nx), *w = fzeros(nw), b[64], *dy = fzeros(out_n(s, MAX_B));
        float *y = fzeros(out_n(s, MAX_B));
        uint64_t rng = sk_rng_seed(202, k);
        double worst = 0.0;
        const int batches[] = {3, 5};
        for (int t = 0; t < 2; t++) {
            int B = batches[t];
            size_t nxb = in_n(s, B);
            fill_normal(x, nxb, &rng, 1.0);
            fill_normal(w, nw, &rng, 0.5);
            fill_normal(b, nb, &rng, 1.0);
            fill_normal(dy, out_n(s, B), &rng, 1.0);
            float *dx[3] = {fzeros(nx), fzeros(nx), fzeros(nx)}, *dw[4], *db[4];
            for (int i = 0; i < 4; i++) dw[i] = fzeros(nw), db[i] = fzeros(nb);
            sk_conv_backward(conv, dx[0], dw[0], db[0], dy, x, w, B);
            naive ref = naive_backward(s, B, x, w, dy);
            double e = fmax(worst_err(dx[0], ref.dx, ref.dx_abs, nxb),
                            fmax(worst_err(dw[0], ref.dw, ref.dw_abs, nw),
                                 worst_err(db[0], ref.db, ref.db_abs, nb)));
            naive_free(&ref);
            if (e > CONV_TOL) print_error("%s B=%d: backward error %.2e\n", shape_name(s), B, e);
            assert_true(e <= CONV_TOL);
            worst = fmax(worst, e);
            /* accumulates: twice from zero is exactly twice */
            sk_conv_backward(conv, dx[1], dw[1], db[1], dy, x, w, B);
            sk_conv_backward(conv, dx[1], dw[1], db[1], dy, x, w, B);
            for (size_t i = 0; i < nxb; i++) assert_true(dx[1][i] == 2.0f * dx[0][i]);
            for (size_t i = 0; i < nw; i++) assert_true(dw[1][i] == 2.0f * dw[0][i]);
            for (size_t i = 0; i < nb; i++) assert_true(db[1][i] == 2.0f * db[0][i]);
            for (size_t i = nxb; i < nx; i++) assert_true(dx[1][i] == 0.0f); /* nothing past B */
            /* dx = NULL: the same dw, db; db = NULL: the same dx, dw */
            sk_conv_backward(conv, NULL, dw[2], db[2], dy, x, w, B);
            sk_conv_backward(conv, dx[2], dw[3], NULL, dy, x, w, B);
            assert_memory_equal(dw[2], dw[0], nw * sizeof(float));
            assert_memory_equal(db[2], db[0], nb * sizeof(float));
            assert_memory_equal(dw[3], dw[0], nw * sizeof(float));
            assert_memory_equal(dx[2], dx[0], nxb * sizeof(float));
            for (size_t i = 0; i < nb; i++) assert_true(db[3][i] == 0.0f);
            /* finite differences of L = sum g conv(x) at B = 3. L is linear in each of x,
             * w, b: central differences are exact at any step, and a step of FD_LINEAR_EPS
             * keeps the outputs' float rounding (~1e-7 relative, over the ~50 outputs one
             * weight moves) well under TEST_FD_FLOOR once divided by the step */
            if (B == 3) {
                conv_loss_ctx c = {conv, x, w, b, dy, y, out_n(s, B), B};
                char what[128];
                snprintf(what, sizeof what, "fd %s dx", shape_name(s));
                int fails = test_check_gradient(what, x, dx[0], nxb, conv_loss, &c, FD_LINEAR_EPS);
                snprintf(what, sizeof what, "fd %s dw", shape_name(s));
                fails += test_check_gradient(what, w, dw[0], nw, conv_loss, &c, FD_LINEAR_EPS);
                snprintf(what, sizeof what, "fd %s db", shape_name(s));
                fails += test_check_gradient(what, b, db[0], nb, conv_loss, &c, FD_LINEAR_EPS);
                assert_int_equal(fails, 0);
            }
            for (int i = 0; i < 3; i++) free(dx[i]);
            for (int i = 0; i < 4; i++) free(dw[i]), free(db[i]);
        }
        print_message("backward %-24s worst error vs double %.2e\n", shape_name(s), worst);
        sk_conv_destroy(conv);
        free(x);
        free(w);
        free(dy);
        free(y);
    }
}

/* ---- 3. bfloat16 ---- */

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint32_t to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void test_bf16_round(void **state) {
    (void)state;
    /* bf16 keeps 7 mantissa bits: the spacing at 1 is 2^-7 (bit 16 of the float) */
    const struct { uint32_t in, want; } cases[] = {
        {0x3f800000u, 0x3f800000u}, /* 1 */
        {0x3f808000u, 0x3f800000u}, /* 1 + 2^-8: a tie, to even (1) */
        {0x3f818000u, 0x3f820000u}, /* 1 + 3 2^-8: a tie between 1 + 2^-7 and 1 + 2^-6: even */
        {0x3f808001u, 0x3f810000u}, /* just above the tie: up */
        {0x3f807fffu, 0x3f800000u}, /* just below: down */
        {0x3fffffffu, 0x40000000u}, /* the carry reaches the exponent: 2 */
        {0x7f7fffffu, 0x7f800000u}, /* FLT_MAX: +inf */
        {0x7f800000u, 0x7f800000u}, /* +inf */
        {0x00000000u, 0x00000000u}, /* +0 */
        {0x00008000u, 0x00000000u}, /* a denormal tie: to even (0) */
        {0x00018000u, 0x00020000u}, /* a denormal tie: to even (up) */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int neg = 0; neg < 2; neg++) { /* negative values symmetric */
            uint32_t sign = neg ? 0x80000000u : 0u;
            uint32_t got = to_bits(sk_bf16_round(from_bits(cases[k].in | sign)));
            if (got != (cases[k].want | sign))
                print_error("bf16(0x%08x) = 0x%08x, want 0x%08x\n", cases[k].in | sign, got,
                            cases[k].want | sign);
            assert_int_equal(got, cases[k].want | sign);
            uint16_t h;
            float f = from_bits(cases[k].in | sign);
            sk_f32_to_bf16(&h, &f, 1);
            assert_int_equal((uint32_t)h << 16, cases[k].want | sign);
        }
    }
    assert_true(sk_bf16_round(1.0f) == 1.0f);
    assert_true(sk_bf16_round(FLT_MAX) == INFINITY && sk_bf16_round(-FLT_MAX) == -INFINITY);
    /* NaN stays NaN, whatever the payload (one only in the low 16 bits too) */
    const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fa00000u, 0xff80ffffu};
    for (size_t k = 0; k < sizeof nans / sizeof nans[0]; k++) {
        assert_true(isnan(sk_bf16_round(from_bits(nans[k]))));
        uint16_t h;
        float f = from_bits(nans[k]);
        sk_f32_to_bf16(&h, &f, 1);
        assert_true(isnan(from_bits((uint32_t)h << 16)));
    }
    /* random values: within half a bf16 ulp, the low 16 bits zero */
    uint64_t rng = 5;
    for (int i = 0; i < 10000; i++) {
        float v = (float)(sk_rng_normal(&rng) * exp(8.0 * sk_rng_normal(&rng)));
        float r = sk_bf16_round(v);
        assert_true((to_bits(r) & 0xffffu) == 0);
        assert_true(fabs((double)r - v) <= ldexp(fabs((double)v), -8) * (1 + 1e-12));
    }
}

static void test_bf16_conv(void **state) {
    (void)state;
    const sk_conv_shape shapes[] = {g_shapes[1], g_shapes[4], g_shapes[6], g_shapes[7]};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        sk_conv_shape s = shapes[k];
        enum { B = 3 };
        size_t nx = in_n(s, B), nw = w_n(s), ny = out_n(s, B), nb = (size_t)s.out_channels;
        sk_conv *lo, *hi;
        assert_int_equal(sk_conv_create(&lo, s, SK_PRECISION_BF16), SK_OK);
        assert_int_equal(sk_conv_create(&hi, s, SK_PRECISION_F32), SK_OK);
        float *x = fzeros(nx), *w = fzeros(nw), b[64], *xr = fzeros(nx), *wr = fzeros(nw);
        float *y = fzeros(ny), *y32 = fzeros(ny), *dy = fzeros(ny), *dyr = fzeros(ny);
        float *dx = fzeros(nx), *dw = fzeros(nw), *db = fzeros(nb);
        uint64_t rng = sk_rng_seed(303, k);
        fill_normal(x, nx, &rng, 1.0);
        fill_normal(w, nw, &rng, 0.5);
        fill_normal(b, nb, &rng, 1.0);
        fill_normal(dy, ny, &rng, 1.0);
        round_bf16(xr, x, nx);
        round_bf16(wr, w, nw);
        round_bf16(dyr, dy, ny);
        sk_conv_forward(lo, y, x, w, b, B);
        sk_conv_forward(hi, y32, x, w, b, B);
        naive ref = naive_forward(s, B, xr, wr, b);
        double err = worst_err(y, ref.y, ref.y_abs, ny);
        double apart = 0.0; /* bf16 from f32 */
        for (size_t i = 0; i < ny; i++)
            apart = fmax(apart, fabs((double)y[i] - y32[i]) / fmax(ref.y_abs[i], 1e-6));
        naive_free(&ref);
        sk_conv_backward(lo, dx, dw, db, dy, x, w, B);
        naive bref = naive_backward(s, B, xr, wr, dyr);
        double dx_err = worst_err(dx, bref.dx, bref.dx_abs, nx);
        double dw_err = worst_err(dw, bref.dw, bref.dw_abs, nw);
        double db_err = worst_err(db, bref.db, bref.db_abs, nb);
        naive_free(&bref);
        print_message("bf16 %-24s forward %.2e (from f32 %.2e), dx %.2e, dw %.2e, db %.2e\n",
                      shape_name(s), err, apart, dx_err, dw_err, db_err);
        assert_true(err <= 1e-4);
        assert_true(apart > 1e-4); /* the rounding really happens */
        assert_true(dx_err <= 1e-3 && dw_err <= 1e-3 && db_err <= 1e-3);
        sk_conv_destroy(lo);
        sk_conv_destroy(hi);
        float *all[] = {x, w, xr, wr, y, y32, dy, dyr, dx, dw, db};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
    }
}

/* ---- 4. convolutional seeds ---- */

static int reduced(int C) { return C / 4 > 2 ? C / 4 : 2; } /* r = max(C / 4, 2) */

/* The header's parameter layout, block by block (weights then bias per layer). */
static int param_blocks(morpho_conv_blueprint bp, int C, size_t *n) {
    size_t c = (size_t)C, r = (size_t)reduced(C), h = c / 2 > 0 ? c / 2 : 1; /* max(C/2, 1) */
    switch (bp) {
    case MORPHO_CBP_NORM: /* g, gamma, beta */
        n[0] = 1, n[1] = c, n[2] = c;
        return 3;
    case MORPHO_CBP_SE: /* W1 (r, C), b1, W2 (C, r), b2 */
        n[0] = r * c, n[1] = r, n[2] = c * r, n[3] = c;
        return 4;
    case MORPHO_CBP_DEPTHWISE: /* D 3x3 depthwise, d, P 1x1 C -> C, p */
        n[0] = 9 * c, n[1] = c, n[2] = c * c, n[3] = c;
        return 4;
    case MORPHO_CBP_CONV_LIGHT: /* K 3x3 C -> max(C/2, 1), k, P 1x1 back to C, p */
        n[0] = 9 * c * h, n[1] = h, n[2] = h * c, n[3] = c;
        return 4;
    case MORPHO_CBP_CONV_HEAVY: /* 2 (9 C^2 + C) */
        n[0] = 9 * c * c, n[1] = c, n[2] = 9 * c * c, n[3] = c;
        return 4;
    case MORPHO_CBP_BOTTLENECK: /* V 1x1 C -> r, v, M 3x3 r -> r, m, U 1x1 r -> C, u */
        n[0] = r * c, n[1] = r, n[2] = 9 * r * r, n[3] = r, n[4] = c * r, n[5] = c;
        return 6;
    }
    return 0;
}

typedef struct seed_case {
    morpho_conv_ctx *ctx;
    morpho_conv_blueprint bp;
    morpho_geom geom;
    int B;
    size_t n, np, ncache;
    float *params, *x, *s, *g, *cache;
    size_t kink_at, kink_n; /* the cache floats that are ReLU outputs */
    unsigned char *pattern; /* which were > 0 at the base point */
} seed_case;

static double seed_loss(void *p) {
    seed_case *c = p;
    morpho_cseed_forward(c->ctx, c->bp, c->params, c->x, c->s, c->cache, c->B);
    double sum = 0.0;
    for (size_t i = 0; i < c->n; i++) sum += (double)c->g[i] * c->s[i];
    return sum;
}

/* Whether the last forward switched any ReLU relative to the base point. */
static bool kinked(const seed_case *c) {
    for (size_t i = 0; i < c->kink_n; i++)
        if ((c->cache[c->kink_at + i] > 0.0f) != c->pattern[i]) return true;
    return false;
}

/* Central differences at the sampled coordinates of v. A step that switches a
 * ReLU (the activation pattern in the cache changes at v + eps or v - eps)
 * measures a secant across the kink, not the derivative at v. A chain seed is
 * linear in any one coordinate while no ReLU switches (each coordinate is in
 * one layer, the rest is a product of fixed masked matrices), so for chains a
 * one-sided difference on a side that switches nothing is exact too, and with
 * a switch on both sides the step shrinks (eps / 10, eps / 100) and retries.
 * What still switches (or, for SE, which is not piecewise linear, any switch)
 * is skipped and counted. Every other coordinate must match. */
static int check_sampled(const char *what, seed_case *c, float *v, const float *grad,
                         const size_t *idx, size_t m, int *skipped, int *adapted) {
    bool chain = c->bp != MORPHO_CBP_SE && c->bp != MORPHO_CBP_NORM;
    double base = seed_loss(c);
    int failures = 0;
    double worst = 0.0;
    for (size_t k = 0; k < m; k++) {
        size_t i = idx[k];
        float saved = v[i], eps = FD_EPS;
        double numeric = NAN;
        for (int tries = 0; tries < (chain ? 3 : 1) && isnan(numeric); tries++, eps /= 10.0f) {
            v[i] = saved + eps;
            double up = seed_loss(c);
            bool kink_up = kinked(c);
            v[i] = saved - eps;
            double down = seed_loss(c);
            bool kink_down = kinked(c);
            v[i] = saved;
            if (!kink_up && !kink_down) numeric = (up - down) / (2.0 * (double)eps);
            else if (chain && !kink_up) numeric = (up - base) / (double)eps;
            else if (chain && !kink_down) numeric = (base - down) / (double)eps;
            if (kink_up || kink_down) (*adapted)++;
        }
        if (isnan(numeric)) {
            (*skipped)++;
            continue;
        }
        double err = test_rel_err(grad[i], numeric, TEST_FD_FLOOR);
        worst = fmax(worst, err);
        if (err > TEST_FD_TOL && failures++ < 5)
            print_error("%s[%zu]: analytic %.6g, numeric %.6g\n", what, i, (double)grad[i],
                        numeric);
    }
    print_message("%-32s %zu sampled, worst relative error %.2e\n", what, m, worst);
    return failures;
}

static void seed_case_alloc(seed_case *c) {
    c->n = (size_t)c->B * c->geom.height * c->geom.width * c->geom.channels;
    c->np = morpho_cseed_num_params(c->bp, c->geom);
    c->ncache = (size_t)c->B * morpho_cseed_cache_floats(c->bp, c->geom);
    c->params = calloc(c->np, sizeof(float));
    c->x = calloc(c->n, sizeof(float));
    c->s = calloc(c->n, sizeof(float));
    c->g = calloc(c->n, sizeof(float));
    c->cache = calloc(c->ncache + 1, sizeof(float));
    c->pattern = calloc(c->ncache + 1, 1);
    /* ReLU outputs: a chain's whole cache; SE's hidden (B, r) after m (B, C) */
    int C = c->geom.channels, r = reduced(C);
    c->kink_at = c->bp == MORPHO_CBP_SE ? (size_t)c->B * C : 0;
    c->kink_n = c->bp == MORPHO_CBP_NORM ? 0
                : c->bp == MORPHO_CBP_SE ? (size_t)c->B * r : c->ncache;
}

static void seed_case_free(seed_case *c) {
    void *all[] = {c->params, c->x, c->s, c->g, c->cache, c->pattern};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]);
}

/* SE: per-image channel offsets, so the means m are of order 1, and b1 > 0: with
 * m ~ 0 and all hidden units dead (B r = 6 of them) the mean path carries no
 * gradient and the dx check would not see it. */
static void se_mean_path_alive(seed_case *c, uint64_t *rng) {
    int C = c->geom.channels, r = reduced(C);
    size_t per_image = c->n / (size_t)c->B;
    float offset[MAX_B * 64];
    fill_normal(offset, (size_t)c->B * C, rng, 1.0);
    for (size_t i = 0; i < c->n; i++) c->x[i] += offset[(i / per_image) * C + i % C];
    float *b1 = c->params + (size_t)r * C;
    for (int k = 0; k < r; k++) b1[k] = fabsf(b1[k]) + 0.1f;
}

/* (c) dx at 40 random coordinates and up to 8 coordinates of every parameter
 * block against finite differences; dx and dparams from one backward. */
static void seed_gradients(seed_case *c, const float *dx, const float *dparams, uint64_t *rng) {
    size_t blocks[6], idx[64], m = 0;
    int nblocks = param_blocks(c->bp, c->geom.channels, blocks);
    for (int k = 0; k < 40; k++) idx[m++] = sk_rng_below(rng, (uint32_t)c->n);
    char what[96];
    int n = snprintf(what, sizeof what, "%s %dx%dx%d ", morpho_conv_blueprint_names[c->bp],
                     c->geom.height, c->geom.width, c->geom.channels);
    int skipped_x = 0, skipped_p = 0, kinks_x = 0, kinks_p = 0;
    snprintf(what + n, sizeof what - (size_t)n, "dx");
    int failures = check_sampled(what, c, c->x, dx, idx, m, &skipped_x, &kinks_x);
    m = 0;
    for (int k = 0, at = 0; k < nblocks; at += (int)blocks[k], k++)
        for (size_t j = 0; j < blocks[k] && j < 8; j++)
            idx[m++] = (size_t)at + (blocks[k] <= 8 ? j : sk_rng_below(rng, (uint32_t)blocks[k]));
    snprintf(what + n, sizeof what - (size_t)n, "dparams");
    failures += check_sampled(what, c, c->params, dparams, idx, m, &skipped_p, &kinks_p);
    print_message("%-32s steps across a ReLU: %d (x), %d (params); skipped %d of 40 x, "
                  "%d of %zu params\n", "", kinks_x, kinks_p, skipped_x, skipped_p, m);
    assert_int_equal(failures, 0);
    assert_true(skipped_x <= 4 && (size_t)skipped_p * 10 <= m); /* <= 10% unchecked */
}

/* (d) a detached input gives the same dparams; (e) backward twice gives
 * double. Not bit for bit: NORM's backward adds into dparams row chunk by
 * row chunk, so the second call's sums round differently. */
static void seed_detached_and_accumulated(seed_case *c, const float *dx, const float *dparams) {
    float *dp_detached = calloc(c->np, sizeof(float)), *dp2 = calloc(c->np, sizeof(float));
    float *dx2 = calloc(c->n, sizeof(float));
    seed_loss(c); /* the base point's cache */
    morpho_cseed_backward(c->ctx, c->bp, c->params, c->x, c->cache, c->g, NULL, dp_detached, c->B);
    assert_memory_equal(dp_detached, dparams, c->np * sizeof(float));
    for (int k = 0; k < 2; k++)
        morpho_cseed_backward(c->ctx, c->bp, c->params, c->x, c->cache, c->g, dx2, dp2, c->B);
    double worst = 0.0;
    for (size_t i = 0; i < c->np; i++)
        worst = fmax(worst, test_rel_err(dp2[i], 2.0 * dparams[i], 1e-3));
    for (size_t i = 0; i < c->n; i++) worst = fmax(worst, test_rel_err(dx2[i], 2.0 * dx[i], 1e-3));
    print_message("%-32s backward twice vs 2 x once: worst relative difference %.2e\n", "",
                  worst);
    assert_true(worst <= 1e-5);
    free(dp_detached);
    free(dp2);
    free(dx2);
}

/* The bf16 context's forward: within 2e-2 of f32 (relative to max |s|);
 * identical for NORM and SE (no convolution: they stay float), not for the
 * chains (their convolutions run in bf16). c->s holds the f32 output. */
static void seed_bf16_vs_f32(seed_case *c, morpho_conv_ctx *ctx16) {
    float *s16 = calloc(c->n, sizeof(float)), *cache = calloc(c->ncache + 1, sizeof(float));
    morpho_cseed_forward(ctx16, c->bp, c->params, c->x, s16, cache, c->B);
    double diff = 0.0, top = 0.0;
    for (size_t i = 0; i < c->n; i++) {
        diff = fmax(diff, fabs((double)s16[i] - c->s[i]));
        top = fmax(top, fabs((double)c->s[i]));
    }
    print_message("%-32s bf16 vs f32 forward: max diff %.2e of max |s| %.2f\n", "", diff, top);
    assert_true(diff <= 2e-2 * top);
    if (c->bp == MORPHO_CBP_NORM || c->bp == MORPHO_CBP_SE) assert_true(diff == 0.0);
    else assert_true(diff > 0.0);
    free(s16);
    free(cache);
}

static void test_seeds(void **state) {
    (void)state;
    /* 5x5x1: r = 2 > C, wider than the slot (env.channels = 1); 1x1x8: SE's
     * scratch (C + r per image) exceeds the activation's C */
    const morpho_geom geoms[] = {{4, 4, 8}, {7, 5, 6}, {5, 5, 1}, {1, 1, 8}};
    enum { B = 3 };
    for (int gi = 0; gi < 4; gi++) {
        morpho_geom geom = geoms[gi];
        morpho_conv_ctx *ctx, *ctx16;
        assert_int_equal(morpho_conv_ctx_create(&ctx, geom, B, SK_PRECISION_F32), SK_OK);
        assert_int_equal(morpho_conv_ctx_create(&ctx16, geom, B, SK_PRECISION_BF16), SK_OK);
        for (int bpi = 0; bpi < MORPHO_NUM_BLUEPRINTS; bpi++) {
            seed_case c = {.ctx = ctx, .bp = (morpho_conv_blueprint)bpi, .geom = geom, .B = B};
            seed_case_alloc(&c);
            /* (b) the parameter count from the header's formulas */
            size_t blocks[6], want = 0;
            for (int k = 0, nb = param_blocks(c.bp, geom.channels, blocks); k < nb; k++)
                want += blocks[k];
            assert_int_equal(c.np, want);
            assert_true(morpho_cseed_max_params(geom) >= want);
            /* (a) the identity at init, bit for bit, at both precisions */
            uint64_t rng = sk_rng_seed(404, (uint64_t)(gi * 8 + bpi));
            morpho_cseed_init(c.bp, geom, c.params, &rng);
            fill_normal(c.x, c.n, &rng, 1.0);
            morpho_cseed_forward(ctx, c.bp, c.params, c.x, c.s, c.cache, B);
            assert_memory_equal(c.s, c.x, c.n * sizeof(float));
            morpho_cseed_forward(ctx16, c.bp, c.params, c.x, c.s, c.cache, B);
            assert_memory_equal(c.s, c.x, c.n * sizeof(float));
            /* away from init: every parameter random, the zero last layers too */
            fill_normal(c.params, c.np, &rng, 0.3);
            fill_normal(c.g, c.n, &rng, 1.0);
            if (c.bp == MORPHO_CBP_SE) se_mean_path_alive(&c, &rng);
            seed_loss(&c);
            for (size_t i = 0; i < c.kink_n; i++) c.pattern[i] = c.cache[c.kink_at + i] > 0.0f;
            float *dx = calloc(c.n, sizeof(float)), *dparams = calloc(c.np, sizeof(float));
            morpho_cseed_backward(ctx, c.bp, c.params, c.x, c.cache, c.g, dx, dparams, B);
            seed_gradients(&c, dx, dparams, &rng);
            seed_detached_and_accumulated(&c, dx, dparams);
            seed_bf16_vs_f32(&c, ctx16);
            free(dx);
            free(dparams);
            seed_case_free(&c);
        }
        morpho_conv_ctx_destroy(ctx);
        morpho_conv_ctx_destroy(ctx16);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_forward),
        cmocka_unit_test(test_conv_backward),
        cmocka_unit_test(test_bf16_round),
        cmocka_unit_test(test_bf16_conv),
        cmocka_unit_test(test_seeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
