/* The learner's small-GEMM kernels (src/nn/gemm_small.c) against a naive double-precision
 * product on odd shapes (rows not a multiple of the 6-row tile or the 16-row head block,
 * K of 1-5, N of 1-3, widths of 63 and 65), their transpose against its definition, a row's
 * forward output against the same row computed alone (bit for bit), and the linear layer's
 * backward through them against finite differences; every kernel's sums in one fixed order (a
 * row's forward the same bit for bit in any batch); and the layers on a thread with a 64 KiB
 * stack (issue 53 ask 4). */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "test_util.h"

#include "core/rng.h"
#include "nn/gemm_small.h"
#include "nn/kernels.h"
#include "nn/nn.h"
#include "nn/rnn.h"

#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const int row_counts[] = {1, 5, 7, 8, 13, 14, 17, 31, 257};
static const int widths[] = {1, 2, 3, 4, 5, 16, 17, 63, 64, 65, 130};

static float *normal_floats(size_t n, uint64_t *rng) {
    float *x = malloc(n * sizeof(float));
    assert_non_null(x);
    for (size_t i = 0; i < n; i++) x[i] = (float)sk_rng_normal(rng);
    return x;
}

/* |got - want| within float rounding of a sum of terms of size `scale` (sum of |products|) */
static int check_close(const char *what, const float *got, const double *want, const double *scale,
                       size_t n, int B, int C, int OC) {
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double tol = 4e-6 * scale[i] + 1e-6;
        if (!(fabs((double)got[i] - want[i]) <= tol) && bad++ < 3)
            print_error("%s B=%d C=%d OC=%d [%zu]: got %.9g, want %.9g (tolerance %.2g)\n", what, B,
                        C, OC, i, (double)got[i], want[i], tol);
    }
    return bad;
}

/* Whether this build has the kernels: they decline every shape without AVX-512. */
static bool kernels_built(void) {
    float out = 0.0f, inp = 1.0f, w = 1.0f;
    return sk_gemm_small_forward(&out, &inp, &w, NULL, 1, 1, 1);
}

static void test_transpose(void **state) {
    (void)state;
    uint64_t rng = 11;
    int sizes[] = {1, 3, 15, 16, 17, 32, 33, 63, 64, 65};
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
        for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
            int rows = sizes[a], cols = sizes[b];
            float *src = normal_floats((size_t)rows * (size_t)cols, &rng);
            float *dst = calloc((size_t)rows * (size_t)cols, sizeof(float));
            sk_gemm_small_transpose(dst, src, rows, cols);
            for (int r = 0; r < rows; r++)
                for (int c = 0; c < cols; c++)
                    if (dst[(size_t)c * (size_t)rows + (size_t)r] != src[(size_t)r * (size_t)cols + (size_t)c])
                        fail_msg("transpose %dx%d: [%d][%d] wrong", rows, cols, r, c);
            free(src);
            free(dst);
        }
}

/* want (M, N) = init (M, N; or zeros) + bias (N; or zeros) + A B in double, and scale the sums of
 * the terms' magnitudes; A[i][k] = a[i * a_row + k * a_k], B[k][j] = b[k * b_k + j * b_col]. */
static void reference(double *want, double *scale, const float *init, const float *bias, int M,
                      int N, int K, const float *a, size_t a_row, size_t a_k, const float *b,
                      size_t b_k, size_t b_col) {
    for (size_t i = 0; i < (size_t)M; i++)
        for (size_t j = 0; j < (size_t)N; j++) {
            double sum = init ? init[i * (size_t)N + j] : 0.0;
            if (bias) sum += bias[j];
            double mag = fabs(sum);
            for (size_t k = 0; k < (size_t)K; k++) {
                double term = (double)a[i * a_row + k * a_k] * b[k * b_k + j * b_col];
                sum += term, mag += fabs(term);
            }
            want[i * (size_t)N + j] = sum, scale[i * (size_t)N + j] = mag;
        }
}

enum { EXPECT_FORWARD = 1, EXPECT_DINPUT = 2, EXPECT_DWEIGHT = 4, EXPECT_ALL = 7 };

/* Each pass at one shape against the double product; returns the mismatches. `expect` names the
 * passes the kernels must take at this shape (where the build has them). */
static int check_shape(int B, int C, int OC, uint64_t *rng, int expect) {
    size_t nb = (size_t)B, nc = (size_t)C, no = (size_t)OC;
    float *inp = normal_floats(nb * nc, rng), *w = normal_floats(no * nc, rng);
    float *bias = normal_floats(no, rng), *dout = normal_floats(nb * no, rng);
    float *dinp = normal_floats(nb * nc, rng), *dw = normal_floats(no * nc, rng);
    float *out = malloc(nb * no * sizeof(float)), *row_out = malloc(no * sizeof(float));
    float *dw_scratch = calloc(no * nc, sizeof(float)); /* the fallback's dW, for dX alone */
    size_t most = (nb * nc > no * nc ? nb * nc : no * nc) + nb * no;
    double *want = malloc(most * sizeof(double)), *scale = malloc(most * sizeof(double));
    int bad = 0;
    int taken = 0;

    /* forward, with and without a bias */
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        const float *b = with_bias ? bias : NULL;
        reference(want, scale, NULL, b, B, OC, C, inp, nc, 1, w, 1, nc);
        bool forward_taken = sk_gemm_small_forward(out, inp, w, b, B, C, OC);
        if (!forward_taken) sk_linear_forward(out, inp, w, b, B, C, OC);
        taken |= forward_taken ? EXPECT_FORWARD : 0;
        bad += check_close("forward", out, want, scale, nb * no, B, C, OC);
        /* a row's output is the same computed alone: acting and learning agree (OpenBLAS's,
         * where the kernels decline, need not) */
        for (size_t r = 0; forward_taken && r < nb; r += 3) {
            sk_linear_forward(row_out, inp + r * nc, w, b, 1, C, OC);
            if (memcmp(row_out, out + r * no, no * sizeof(float)) != 0 && bad++ < 3)
                print_error("forward B=%d C=%d OC=%d: row %zu differs computed alone\n", B, C, OC, r);
        }
    }

    /* dinput (B, C) += dout w */
    reference(want, scale, dinp, NULL, B, C, OC, dout, no, 1, w, nc, 1);
    if (sk_gemm_small_dinput(dinp, dout, w, B, C, OC)) taken |= EXPECT_DINPUT;
    else sk_linear_backward(dinp, dw_scratch, NULL, dout, inp, w, B, C, OC);
    bad += check_close("dinput", dinp, want, scale, nb * nc, B, C, OC);

    /* dweight (OC, C) += dout^T inp */
    reference(want, scale, dw, NULL, OC, C, B, dout, 1, no, inp, nc, 1);
    if (sk_gemm_small_dweight(dw, dout, inp, B, C, OC)) taken |= EXPECT_DWEIGHT;
    else sk_linear_backward(NULL, dw, NULL, dout, inp, w, B, C, OC);
    bad += check_close("dweight", dw, want, scale, no * nc, B, C, OC);

    if (kernels_built() && (expect & ~taken) && bad++ < 3)
        print_error("B=%d C=%d OC=%d: a kernel declined a shape it is for (passes %d of %d)\n",
                    B, C, OC, taken, expect);
    free(inp), free(w), free(bias), free(dout), free(dinp), free(dw), free(out), free(row_out);
    free(dw_scratch);
    free(want), free(scale);
    return bad;
}

static void test_against_double(void **state) {
    (void)state;
    uint64_t rng = 7;
    int bad = 0;
    for (size_t i = 0; i < sizeof row_counts / sizeof row_counts[0]; i++)
        for (size_t j = 0; j < sizeof widths / sizeof widths[0]; j++)
            for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++)
                bad += check_shape(row_counts[i], widths[j], widths[k], &rng, EXPECT_ALL);
    /* the learner's own: 256 rows per thread, CartPole's 4 inputs, 64 wide, 2- and 1-way
     * heads; an LSTM's 256 gates; MinAtar's dense layer and wider (the forward in chunks of K,
     * 1100 x 200 in 17 of them) */
    int learner[][4] = {{256, 4, 64, EXPECT_ALL}, {256, 64, 64, EXPECT_ALL},
                        {256, 64, 2, EXPECT_ALL}, {256, 64, 1, EXPECT_ALL},
                        {512, 64, 64, EXPECT_ALL}, {16, 64, 256, EXPECT_ALL},
                        {256, 4, 256, EXPECT_ALL},
                        {256, 1024, 64, EXPECT_ALL}, {7, 1025, 5, EXPECT_ALL},
                        {9, 1100, 200, EXPECT_ALL},
                        /* B's column blocks packed into a panel (rows 256+ floats apart, K 16+,
                         * 4+ row tiles: src/nn/isa/gemm.c), a partial last block among them */
                        {31, 260, 17, EXPECT_ALL}, {257, 300, 130, EXPECT_ALL},
                        {48, 256, 250, EXPECT_ALL}};
    for (size_t i = 0; i < sizeof learner / sizeof learner[0]; i++)
        bad += check_shape(learner[i][0], learner[i][1], learner[i][2], &rng, learner[i][3]);
    assert_int_equal(bad, 0);
}

/* ---- the sums' order, exactly: what makes a row's result independent of the batch ---- */

/* c (M, N) = init (M, N; or zeros), then fmaf over k ascending, then + bias (N; or none): the
 * order every GEMM kernel sums in (src/nn/isa/gemm.c: the tiles, the narrow-K blocks, the 1-2
 * row tiles), in scalar C. A[i][k] = a[i * a_row + k * a_k], B[k][j] = b[k * b_k + j * b_col]. */
static void reference_fma(float *c, const float *init, const float *bias, int M, int N, int K,
                          const float *a, size_t a_row, size_t a_k, const float *b, size_t b_k,
                          size_t b_col) {
    for (size_t i = 0; i < (size_t)M; i++)
        for (size_t j = 0; j < (size_t)N; j++) {
            float sum = init ? init[i * (size_t)N + j] : 0.0f;
            for (size_t k = 0; k < (size_t)K; k++)
                sum = fmaf(a[i * a_row + k * a_k], b[k * b_k + j * b_col], sum);
            c[i * (size_t)N + j] = bias ? sum + bias[j] : sum;
        }
}

static int count_unequal(const char *what, const float *got, const float *want, size_t n, int B,
                         int C, int OC) {
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0 && bad++ < 3)
            print_error("%s B=%d C=%d OC=%d [%zu]: got %.9g, want %.9g (bit for bit)\n", what, B,
                        C, OC, i, (double)got[i], (double)want[i]);
    return bad;
}

/* The forward (W and W^T given), dX and dW at one shape against reference_fma bit for bit, and
 * the forward of runs of rows against the whole batch's rows: self-play forwards subsets of
 * the rows the learner forwards together. The forward where OC is 5+ (the 1-4 output heads
 * sum as dot products, in their own fixed order), dW where C is 16+ (a narrower input sums
 * dW^T from zero, then adds it). */
static int check_order(int B, int C, int OC, uint64_t *rng) {
    size_t nb = (size_t)B, nc = (size_t)C, no = (size_t)OC;
    float *inp = normal_floats(nb * nc, rng), *w = normal_floats(no * nc, rng);
    float *bias = normal_floats(no, rng), *dout = normal_floats(nb * no, rng);
    float *dinp = normal_floats(nb * nc, rng), *dw = normal_floats(no * nc, rng);
    float *wt = malloc(nc * no * sizeof(float)), *out = malloc(nb * no * sizeof(float));
    size_t most = (nb > no ? nb : no) * (nc > no ? nc : no);
    float *want = malloc(most * sizeof(float));
    for (size_t o = 0; o < no; o++)
        for (size_t c = 0; c < nc; c++) wt[c * no + o] = w[o * nc + c];
    int bad = 0;
    if (OC >= 5) reference_fma(want, NULL, bias, B, OC, C, inp, nc, 1, w, 1, nc);
    /* the whole batch, then runs of its rows (first row, length) from its start, middle and end,
     * each through both forwards */
    int runs[][2] = {{0, B}, {0, 1}, {1, 2}, {1, 17}, {B / 3, 7}, {B / 3, 17}, {B - 1, 1}};
    for (size_t r = 0; OC >= 5 && r < sizeof runs / sizeof runs[0]; r++)
        for (int transposed = 0; transposed < 2; transposed++) {
            int r0 = runs[r][0], rows = B - r0 < runs[r][1] ? B - r0 : runs[r][1];
            if (rows <= 0) continue; /* a batch of 1 has no second row */
            const float *rows_inp = inp + (size_t)r0 * nc;
            bool taken = transposed ? sk_gemm_small_forward_t(out, rows_inp, wt, bias, rows, C, OC)
                                    : sk_gemm_small_forward(out, rows_inp, w, bias, rows, C, OC);
            const char *what = transposed ? "forward_t" : "forward";
            if (taken)
                bad += count_unequal(what, out, want + (size_t)r0 * no, (size_t)rows * no, rows,
                                     C, OC);
            else if (bad++ < 3)
                print_error("%s B=%d C=%d OC=%d declined\n", what, rows, C, OC);
        }
    reference_fma(want, dinp, NULL, B, C, OC, dout, no, 1, w, nc, 1);
    if (!sk_gemm_small_dinput(dinp, dout, w, B, C, OC) && bad++ < 3)
        print_error("dinput B=%d C=%d OC=%d declined\n", B, C, OC);
    bad += count_unequal("dinput", dinp, want, nb * nc, B, C, OC);
    if (C >= 16) {
        reference_fma(want, dw, NULL, OC, C, B, dout, 1, no, inp, nc, 1);
        if (!sk_gemm_small_dweight(dw, dout, inp, B, C, OC) && bad++ < 3)
            print_error("dweight B=%d C=%d OC=%d declined\n", B, C, OC);
        bad += count_unequal("dweight", dw, want, no * nc, B, C, OC);
    }
    free(inp), free(w), free(bias), free(dout), free(dinp), free(dw), free(wt), free(out);
    free(want);
    return bad;
}

static void test_sum_order(void **state) {
    (void)state;
    if (!kernels_built()) return; /* the baseline level: no kernels, cblas_sgemm sums its own way */
    uint64_t rng = 11;
    int bad = 0;
    /* K of 1-8 into 5-300 outputs (CartPole's 4 observations into a layer, an LSTM's 256 gates;
     * dX of a 1-8 output layer), whole blocks of columns and a part of one, row counts across
     * blocks of rows; dW and the forward of 1-2 rows at 16-300 wide */
    static const int rows[] = {1, 2, 3, 17, 40, 256};
    static const int narrow[] = {1, 2, 3, 4, 5, 8};
    static const int wide[] = {5, 16, 24, 64, 72, 130, 250, 256};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (size_t k = 0; k < sizeof narrow / sizeof narrow[0]; k++)
            for (size_t n = 0; n < sizeof wide / sizeof wide[0]; n++) {
                bad += check_order(rows[r], narrow[k], wide[n], &rng);
                bad += check_order(rows[r], wide[n], narrow[k] + 4, &rng);
                if (narrow[k] <= 2) bad += check_order(rows[r], wide[n], narrow[k], &rng);
            }
    /* the presets' own: CartPole's layers and heads' dX and dW (heads: 1-2 outputs) */
    int learner[][3] = {{256, 4, 64}, {256, 64, 64}, {256, 4, 256}, {16, 64, 256}, {256, 64, 5}};
    for (size_t i = 0; i < sizeof learner / sizeof learner[0]; i++)
        bad += check_order(learner[i][0], learner[i][1], learner[i][2], &rng);
    assert_int_equal(bad, 0);
}

/* ---- the linear layer's backward through the kernels, by finite differences ---- */
typedef struct fd_ctx {
    int B, C, OC;
    float *inp, *w, *b, *g, *out;
} fd_ctx;

static double fd_loss(void *p) {
    fd_ctx *c = p;
    sk_linear_forward(c->out, c->inp, c->w, c->b, c->B, c->C, c->OC);
    double sum = 0.0;
    for (int i = 0; i < c->B * c->OC; i++) sum += (double)c->g[i] * tanh((double)c->out[i]);
    return sum;
}

static void test_finite_differences(void **state) {
    (void)state;
    int shapes[][3] = {{7, 65, 3}, {13, 5, 17}, {19, 63, 2}, {8, 4, 64}};
    uint64_t rng = 3;
    int failures = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        fd_ctx c = {shapes[s][0], shapes[s][1], shapes[s][2], NULL, NULL, NULL, NULL, NULL};
        size_t nb = (size_t)c.B, nc = (size_t)c.C, no = (size_t)c.OC;
        c.inp = normal_floats(nb * nc, &rng), c.w = normal_floats(no * nc, &rng);
        c.b = normal_floats(no, &rng), c.g = normal_floats(nb * no, &rng);
        for (size_t i = 0; i < no * nc; i++) c.w[i] *= 0.2f;
        c.out = malloc(nb * no * sizeof(float));
        float *dout = malloc(nb * no * sizeof(float));
        float *dinp = calloc(nb * nc, sizeof(float)), *dw = calloc(no * nc, sizeof(float));
        float *db = calloc(no, sizeof(float));
        fd_loss(&c);
        for (size_t i = 0; i < nb * no; i++) {
            double t = tanh((double)c.out[i]);
            dout[i] = (float)((double)c.g[i] * (1.0 - t * t));
        }
        sk_linear_backward(dinp, dw, db, dout, c.inp, c.w, c.B, c.C, c.OC);
        failures += test_check_gradient("dinput", c.inp, dinp, nb * nc, fd_loss, &c, 1e-2f);
        failures += test_check_gradient("dweight", c.w, dw, no * nc, fd_loss, &c, 1e-2f);
        failures += test_check_gradient("dbias", c.b, db, no, fd_loss, &c, 1e-2f);
        free(c.inp), free(c.w), free(c.b), free(c.g), free(c.out), free(dout), free(dinp), free(dw);
        free(db);
    }
    assert_int_equal(failures, 0);
}

/* ---- the bias gradient: db += the column sums of dout, in its fixed order ---- */
/* The order kernels.h's bias_grad sums a column in, written out one float at a time: where OC is
 * a multiple of 16, the even rows and the odd rows apart, then the two; otherwise eight parts
 * (rows 8i + k into part k, the rest into part 0), added pairwise. Every level's vectors must
 * give these bits (a run's checkpoint is the same whichever level made it, up to the GEMMs). */
static float bias_sum_in_order(const float *dout, int B, int OC, int o) {
    if (OC % 16 == 0) {
        float even = 0.0f, odd = 0.0f;
        int row = 0;
        for (; row + 2 <= B; row += 2) {
            even += dout[(size_t)row * (size_t)OC + (size_t)o];
            odd += dout[(size_t)(row + 1) * (size_t)OC + (size_t)o];
        }
        if (row < B) even += dout[(size_t)row * (size_t)OC + (size_t)o];
        return even + odd;
    }
    float part[8] = {0};
    int row = 0;
    for (; row + 8 <= B; row += 8)
        for (int k = 0; k < 8; k++) part[k] += dout[(size_t)(row + k) * (size_t)OC + (size_t)o];
    for (; row < B; row++) part[0] += dout[(size_t)row * (size_t)OC + (size_t)o];
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

static void test_bias_grad(void **state) {
    (void)state;
    /* columns: whole blocks of four vectors at every width (64, 256), single vectors after
     * them (16, 48, 80, 272), and the 8-part sums (1, 2, 17, 65) */
    static const int columns[] = {1, 2, 16, 17, 48, 64, 65, 80, 256, 272};
    static const int rows[] = {0, 1, 2, 3, 8, 13, 256, 257};
    uint64_t rng = 17;
    int bad = 0;
    for (size_t a = 0; a < sizeof rows / sizeof rows[0]; a++)
        for (size_t b = 0; b < sizeof columns / sizeof columns[0]; b++) {
            int B = rows[a], OC = columns[b];
            float *dout = normal_floats((size_t)B * (size_t)OC + 1, &rng);
            float *db = normal_floats((size_t)OC, &rng), *start = malloc((size_t)OC * sizeof(float));
            assert_non_null(start);
            memcpy(start, db, (size_t)OC * sizeof(float));
            sk_nn_kernels_used()->bias_grad(db, dout, B, OC);
            for (int o = 0; o < OC; o++) {
                float want = start[o] + bias_sum_in_order(dout, B, OC, o);
                double exact = start[o], scale = fabs(start[o]);
                for (int r = 0; r < B; r++) {
                    exact += dout[(size_t)r * (size_t)OC + (size_t)o];
                    scale += fabs(dout[(size_t)r * (size_t)OC + (size_t)o]);
                }
                if ((memcmp(&db[o], &want, sizeof want) != 0 ||
                     !(fabs(db[o] - exact) <= 1e-6 * scale + 1e-7)) && bad++ < 3)
                    print_error("bias_grad B=%d OC=%d [%d]: got %.9g, in order %.9g, exact %.9g\n",
                                B, OC, o, (double)db[o], (double)want, exact);
            }
            free(dout), free(db), free(start);
        }
    print_message("bias_grad at %s: %d of the columns off\n",
                  sk_isa_level_name(sk_nn_kernels_used()->level), bad);
    assert_int_equal(bad, 0);
}

/* ---- a forward, a backward and an LSTM on a thread with a small stack ---- */
/* The layers' shapes that once kept up to 64 KiB of transposed weights on the stack: a wide
 * forward (W^T in chunks), a head with a padded last block, the narrow input's dweight, an
 * LSTM forward and backward (W_hh^T for all steps). Outputs are compared, bit for bit, with
 * the same calls on the main thread. */
enum { SB = 13, SC = 256, SOC = 256, SH = 64, SI = 17, ST = 3, SR = 5, NARROW = 4 };
typedef struct small_stack_case {
    float *inp, *w, *b, *dout, *narrow_inp; /* inputs */
    float *rnn_params, *rnn_x, *rnn_dh;
    float out[SB * SOC], head_out[SB * 2], dinp[SB * SC], dw[SOC * SC], db[SOC];
    float narrow_dw[SOC * NARROW], narrow_db[SOC], narrow_dinp[SB * NARROW];
    float h[ST * SR * SH], c[ST * SR * SH], *rnn_work, *rnn_dparams, rnn_dx[ST * SR * SI];
} small_stack_case;

static void *small_stack_run(void *arg) {
    small_stack_case *k = arg;
    sk_linear_forward(k->out, k->inp, k->w, k->b, SB, SC, SOC);
    sk_linear_forward(k->head_out, k->inp, k->w, k->b, SB, SC, 2);
    sk_linear_backward(k->dinp, k->dw, k->db, k->dout, k->inp, k->w, SB, SC, SOC);
    sk_linear_backward(k->narrow_dinp, k->narrow_dw, k->narrow_db, k->dout, k->narrow_inp, k->w,
                       SB, NARROW, SOC);
    sk_rnn rnn = {SK_RNN_LSTM, SI, SH};
    sk_rnn_forward(k->h, k->c, k->rnn_work, k->rnn_x, NULL, NULL, NULL, k->rnn_params, rnn, ST, SR);
    sk_rnn_backward(k->rnn_dx, NULL, NULL, k->rnn_dparams, k->rnn_work, k->rnn_dh, k->rnn_x, NULL,
                    k->rnn_params, rnn, ST, SR);
    return NULL;
}

static small_stack_case *small_stack_case_new(void) {
    small_stack_case *k = calloc(1, sizeof *k);
    assert_non_null(k);
    uint64_t rng = 19;
    sk_rnn rnn = {SK_RNN_LSTM, SI, SH};
    k->inp = normal_floats(SB * SC, &rng), k->w = normal_floats(SOC * SC, &rng);
    k->b = normal_floats(SOC, &rng), k->dout = normal_floats(SB * SOC, &rng);
    k->narrow_inp = normal_floats(SB * NARROW, &rng);
    k->rnn_params = normal_floats(sk_rnn_num_params(rnn), &rng);
    k->rnn_x = normal_floats(ST * SR * SI, &rng), k->rnn_dh = normal_floats(ST * SR * SH, &rng);
    k->rnn_work = calloc(sk_rnn_work_size(rnn, ST, SR), sizeof(float));
    k->rnn_dparams = calloc(sk_rnn_num_params(rnn), sizeof(float));
    assert_true(k->rnn_work && k->rnn_dparams);
    return k;
}

static void small_stack_case_free(small_stack_case *k) {
    free(k->inp), free(k->w), free(k->b), free(k->dout), free(k->narrow_inp), free(k->rnn_params);
    free(k->rnn_x), free(k->rnn_dh), free(k->rnn_work), free(k->rnn_dparams), free(k);
}

/* glibc carves a thread's static TLS (OpenBLAS's alone is 60 KiB) out of the stack it is
 * given, so the thread gets its 64 KiB for frames on top of the loaded objects' PT_TLS. */
static int add_tls(struct dl_phdr_info *info, size_t size, void *total) {
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS)
            *(size_t *)total += info->dlpi_phdr[i].p_memsz + info->dlpi_phdr[i].p_align;
    return 0;
}

static void test_small_stack_thread(void **state) {
    (void)state;
    small_stack_case *main_thread = small_stack_case_new(), *small = small_stack_case_new();
    small_stack_run(main_thread);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    /* 64 KiB; the sanitizers' instrumentation needs more of every frame than the code does */
#if defined(__SANITIZE_ADDRESS__)
    size_t stack = 256 * 1024;
#else
    size_t stack = 64 * 1024;
#endif
    size_t tls = 0;
    dl_iterate_phdr(add_tls, &tls);
    stack += tls + 4096; /* + glibc's thread descriptor */
    assert_int_equal(pthread_attr_setstacksize(&attr, stack), 0);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, &attr, small_stack_run, small), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    pthread_attr_destroy(&attr);
    sk_rnn rnn = {SK_RNN_LSTM, SI, SH};
    assert_memory_equal(small->out, main_thread->out, sizeof small->out);
    assert_memory_equal(small->head_out, main_thread->head_out, sizeof small->head_out);
    assert_memory_equal(small->dinp, main_thread->dinp, sizeof small->dinp);
    assert_memory_equal(small->dw, main_thread->dw, sizeof small->dw);
    assert_memory_equal(small->narrow_dw, main_thread->narrow_dw, sizeof small->narrow_dw);
    assert_memory_equal(small->h, main_thread->h, sizeof small->h);
    assert_memory_equal(small->rnn_dx, main_thread->rnn_dx, sizeof small->rnn_dx);
    assert_memory_equal(small->rnn_dparams, main_thread->rnn_dparams,
                        sk_rnn_num_params(rnn) * sizeof(float));
    small_stack_case_free(main_thread);
    small_stack_case_free(small);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_against_double),
        cmocka_unit_test(test_sum_order),
        cmocka_unit_test(test_finite_differences),
        cmocka_unit_test(test_bias_grad),
        cmocka_unit_test(test_small_stack_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
