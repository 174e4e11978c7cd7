/* The LSTM and GRU layers (src/nn/rnn.c) over a sequence of STEPS steps of ROWS rows with
 * episode resets: every gradient against finite differences of an independent double-precision
 * implementation of the formulas in rnn.h; outputs and gradients against torch.nn.LSTM and
 * torch.nn.GRU (tests/reference/rnn_reference.py, float64 fixtures); the acting step against
 * the sequence; and the initialisation against PyTorch's distribution. */
#include "test_fixture.h"
#include "test_util.h"

#include "core/rng.h"
#include "nn/rnn.h"

#include <math.h>

/* The fixtures' sizes too. */
enum { STEPS = 5, ROWS = 3, INPUT = 4, HIDDEN = 6 };
enum {
    MAX_PARAMS = 4 * HIDDEN * (INPUT + HIDDEN + 2), /* an LSTM's */
    STATE = ROWS * HIDDEN,
    X_SIZE = STEPS * ROWS * INPUT,
    SEQ_SIZE = STEPS * ROWS * HIDDEN,
    MAX_RECORD = MAX_PARAMS > SEQ_SIZE ? MAX_PARAMS : SEQ_SIZE, /* the longest array compared */
};

/* The float32 layer against float64 references (torch's, or the finite differences of ours).
 * Values and gradients here are sums of terms of 0.1 to 1, rounded to ~1e-7 each; where terms
 * cancel to a small gradient that absolute error stays, so below the floor errors are measured
 * against the floor. Measured: ~1e-6 (the test prints the worst), and a broken term of any gate
 * is off by far more than the tolerance. */
#define REL_TOL 1e-5
#define ABS_FLOOR 0.1
#define FD_EPS 1e-6 /* in double: truncation ~1e-12, rounding ~1e-10 */

/* One layer's inputs: the layer's own float arrays. */
typedef struct rnn_case {
    sk_rnn rnn;
    float params[MAX_PARAMS];
    float x[X_SIZE], h0[STATE], c0[STATE], dh[SEQ_SIZE]; /* dh: the loss is sum(h * dh) */
    uint8_t resets[STEPS * ROWS];
} rnn_case;

static bool is_lstm(const rnn_case *rc) { return rc->rnn.cell == SK_RNN_LSTM; }

/* What sk_rnn_forward and sk_rnn_backward give for a case. */
typedef struct rnn_result {
    float h[SEQ_SIZE], c[SEQ_SIZE];
    float dparams[MAX_PARAMS], dx[X_SIZE], dh0[STATE], dc0[STATE];
} rnn_result;

/* Forward, then `backwards` backward passes on the same work into gradients that start at 0. */
static void run_layer(rnn_result *out, const rnn_case *rc, int backwards) {
    float *work = malloc(sk_rnn_work_size(rc->rnn, STEPS, ROWS) * sizeof(float));
    assert_non_null(work);
    bool lstm = is_lstm(rc);
    memset(out, 0, sizeof *out);
    sk_rnn_forward(out->h, lstm ? out->c : NULL, work, rc->x, rc->h0, lstm ? rc->c0 : NULL,
                   rc->resets, rc->params, rc->rnn, STEPS, ROWS);
    for (int pass = 0; pass < backwards; pass++)
        sk_rnn_backward(out->dx, out->dh0, lstm ? out->dc0 : NULL, out->dparams, work, rc->dh,
                        rc->x, rc->resets, rc->params, rc->rnn, STEPS, ROWS);
    free(work);
}

/* How many of got[0..n) are off want by more than REL_TOL (relative, above ABS_FLOOR); prints
 * the first mismatches and the worst error, which it adds to *worst_seen. */
static int compare(const char *what, const float *got, const double *want, size_t n,
                   double *worst_seen) {
    int failures = 0;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double err = test_rel_err(got[i], want[i], ABS_FLOOR);
        if (err > worst) worst = err;
        if (!(err <= REL_TOL) && failures++ < 5)
            print_error("%s[%zu]: skinner %.9g, reference %.9g\n", what, i, (double)got[i],
                        want[i]);
    }
    print_message("%-18s %3zu values, worst relative error %.2e\n", what, n, worst);
    if (worst > *worst_seen) *worst_seen = worst;
    return failures;
}

/* ---- an independent implementation, in double ---- */

typedef struct reference {
    sk_rnn rnn;
    double params[MAX_PARAMS], x[X_SIZE], h0[STATE], c0[STATE], dh[SEQ_SIZE];
    const uint8_t *resets;
} reference;

static void reference_from_case(reference *ref, const rnn_case *rc) {
    ref->rnn = rc->rnn;
    for (int i = 0; i < MAX_PARAMS; i++) ref->params[i] = rc->params[i];
    for (int i = 0; i < X_SIZE; i++) ref->x[i] = rc->x[i];
    for (int i = 0; i < STATE; i++) ref->h0[i] = rc->h0[i], ref->c0[i] = rc->c0[i];
    for (int i = 0; i < SEQ_SIZE; i++) ref->dh[i] = rc->dh[i];
    ref->resets = rc->resets;
}

static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

/* The loss sum(h * dh) straight from the formulas in rnn.h, one row and one unit at a time;
 * every step's h and c go to h_out and c_out (T, B, H) unless NULL. */
static double reference_loss(const reference *ref, double *h_out, double *c_out) {
    sk_rnn rnn = ref->rnn;
    const double *w_ih = ref->params + sk_rnn_tensor_info(rnn, SK_RNN_WEIGHT_IH).offset;
    const double *w_hh = ref->params + sk_rnn_tensor_info(rnn, SK_RNN_WEIGHT_HH).offset;
    const double *b_ih = ref->params + sk_rnn_tensor_info(rnn, SK_RNN_BIAS_IH).offset;
    const double *b_hh = ref->params + sk_rnn_tensor_info(rnn, SK_RNN_BIAS_HH).offset;
    int gate_rows = sk_rnn_num_gates(rnn.cell) * HIDDEN;
    double h[ROWS][HIDDEN], c[ROWS][HIDDEN], loss = 0.0;
    memcpy(h, ref->h0, sizeof h);
    memcpy(c, ref->c0, sizeof c);
    for (int t = 0; t < STEPS; t++) {
        for (int b = 0; b < ROWS; b++) {
            if (ref->resets[t * ROWS + b])
                for (int j = 0; j < HIDDEN; j++) h[b][j] = c[b][j] = 0.0;
            const double *x = ref->x + (t * ROWS + b) * INPUT;
            double in[4 * HIDDEN], hid[4 * HIDDEN]; /* W_ih x + b_ih, W_hh h + b_hh */
            for (int k = 0; k < gate_rows; k++) {
                in[k] = b_ih[k];
                hid[k] = b_hh[k];
                for (int i = 0; i < INPUT; i++) in[k] += w_ih[k * INPUT + i] * x[i];
                for (int j = 0; j < HIDDEN; j++) hid[k] += w_hh[k * HIDDEN + j] * h[b][j];
            }
            for (int j = 0; j < HIDDEN; j++) {
                const int R = 0, Z = HIDDEN, N = 2 * HIDDEN;                  /* GRU */
                const int I = 0, F = HIDDEN, G = 2 * HIDDEN, O = 3 * HIDDEN; /* LSTM */
                if (rnn.cell == SK_RNN_LSTM) {
                    c[b][j] = sigmoid(in[F + j] + hid[F + j]) * c[b][j] +
                              sigmoid(in[I + j] + hid[I + j]) * tanh(in[G + j] + hid[G + j]);
                    h[b][j] = sigmoid(in[O + j] + hid[O + j]) * tanh(c[b][j]);
                } else {
                    double r = sigmoid(in[R + j] + hid[R + j]);
                    double z = sigmoid(in[Z + j] + hid[Z + j]);
                    double n = tanh(in[N + j] + r * hid[N + j]);
                    h[b][j] = (1.0 - z) * n + z * h[b][j];
                }
                int at = (t * ROWS + b) * HIDDEN + j;
                loss += h[b][j] * ref->dh[at];
                if (h_out) h_out[at] = h[b][j];
                if (c_out) c_out[at] = c[b][j];
            }
        }
    }
    return loss;
}

/* Central differences of the reference loss in each of values[0..n). */
static void numeric_gradient(double *grad, double *values, size_t n, reference *ref) {
    for (size_t i = 0; i < n; i++) {
        double saved = values[i];
        values[i] = saved + FD_EPS;
        double up = reference_loss(ref, NULL, NULL);
        values[i] = saved - FD_EPS;
        double down = reference_loss(ref, NULL, NULL);
        values[i] = saved;
        grad[i] = (up - down) / (2.0 * FD_EPS);
    }
}

static void fill_normal(float *x, size_t n, uint64_t *rng, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(scale * sk_rng_normal(rng));
}

/* PyTorch's initialisation, doubled so that the gates reach well into their curves; a reset in
 * the middle of row 1 and at the first step of row 2, whose h0 and c0 so get no gradient. */
static void random_case(rnn_case *rc, sk_rnn_cell cell, uint64_t seed) {
    memset(rc, 0, sizeof *rc);
    rc->rnn = (sk_rnn){cell, INPUT, HIDDEN};
    uint64_t rng = seed;
    sk_rnn_init_params(rc->params, rc->rnn, &rng);
    for (size_t i = 0; i < sk_rnn_num_params(rc->rnn); i++) rc->params[i] *= 2.0f;
    fill_normal(rc->x, X_SIZE, &rng, 1.0);
    fill_normal(rc->h0, STATE, &rng, 0.5);
    fill_normal(rc->c0, STATE, &rng, 0.5);
    fill_normal(rc->dh, SEQ_SIZE, &rng, 1.0);
    rc->resets[2 * ROWS + 1] = 1;
    rc->resets[0 * ROWS + 2] = 1;
}

/* The largest |twice[i] - 2 once[i]|. */
static double off_twice(const float *twice, const float *once, size_t n) {
    double off = 0.0;
    for (size_t i = 0; i < n; i++) off = fmax(off, fabs(twice[i] - 2.0 * once[i]));
    return off;
}

/* Every gradient of the layer against finite differences of the reference; the outputs against
 * the reference's. */
static void check_finite_differences(sk_rnn_cell cell) {
    rnn_case rc;
    random_case(&rc, cell, cell == SK_RNN_LSTM ? 101 : 202);
    rnn_result *got = malloc(sizeof *got);
    assert_non_null(got);
    run_layer(got, &rc, 1);

    reference *ref = malloc(sizeof *ref);
    assert_non_null(ref);
    reference_from_case(ref, &rc);
    double want[MAX_RECORD], want_c[SEQ_SIZE];
    double worst = 0.0;
    int failures = 0;
    reference_loss(ref, want, want_c);
    failures += compare("h", got->h, want, SEQ_SIZE, &worst);
    if (is_lstm(&rc)) failures += compare("c", got->c, want_c, SEQ_SIZE, &worst);
    for (int k = 0; k < SK_RNN_NUM_TENSORS; k++) {
        sk_rnn_tensor tensor = sk_rnn_tensor_info(rc.rnn, k);
        size_t count = (size_t)tensor.rows * (size_t)tensor.cols;
        numeric_gradient(want, ref->params + tensor.offset, count, ref);
        failures += compare(tensor.name, got->dparams + tensor.offset, want, count, &worst);
    }
    numeric_gradient(want, ref->x, X_SIZE, ref);
    failures += compare("x", got->dx, want, X_SIZE, &worst);
    numeric_gradient(want, ref->h0, STATE, ref);
    failures += compare("h0", got->dh0, want, STATE, &worst);
    for (int j = 0; j < HIDDEN; j++) /* row 2 is reset at the first step */
        assert_true(got->dh0[2 * HIDDEN + j] == 0.0f && got->dc0[2 * HIDDEN + j] == 0.0f);
    if (is_lstm(&rc)) {
        numeric_gradient(want, ref->c0, STATE, ref);
        failures += compare("c0", got->dc0, want, STATE, &worst);
    }
    print_message("%s against finite differences: worst relative error %.2e\n",
                  sk_rnn_cell_names[cell], worst);
    assert_int_equal(failures, 0);

    /* Backward accumulates, and leaves the forward's cache as it was: a second pass on the same
     * work doubles every gradient (to the bit with a BLAS that adds C after its product). */
    rnn_result *twice = malloc(sizeof *twice);
    assert_non_null(twice);
    run_layer(twice, &rc, 2);
    double off = fmax(fmax(off_twice(twice->dparams, got->dparams, MAX_PARAMS),
                           off_twice(twice->dx, got->dx, X_SIZE)),
                      fmax(off_twice(twice->dh0, got->dh0, STATE),
                           off_twice(twice->dc0, got->dc0, STATE)));
    print_message("two backward passes against twice one: largest difference %.3g\n", off);
    assert_true(off <= 1e-6);
    free(twice);
    free(ref);
    free(got);
}

static void test_lstm_finite_differences(void **state) {
    (void)state;
    check_finite_differences(SK_RNN_LSTM);
}

static void test_gru_finite_differences(void **state) {
    (void)state;
    check_finite_differences(SK_RNN_GRU);
}

/* ---- PyTorch's fixtures ---- */

static void read_floats(const char *text, const char *name, float *values, size_t count) {
    double *read = malloc(count * sizeof(double));
    assert_non_null(read);
    read_record(text, name, read, count);
    for (size_t i = 0; i < count; i++) values[i] = (float)read[i];
    free(read);
}

/* The fixture's inputs into rc, and a pointer to its text for the expected values. */
static char *load_torch_case(rnn_case *rc, sk_rnn_cell cell) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/rnn_%s.txt", SKINNER_SOURCE_DIR,
             sk_rnn_cell_names[cell]);
    char *text = read_text(path);
    double sizes[4];
    const char *size_names[] = {"steps", "rows", "input_size", "hidden_size"};
    const int expected[] = {STEPS, ROWS, INPUT, HIDDEN};
    for (int k = 0; k < 4; k++) {
        read_record(text, size_names[k], &sizes[k], 1);
        assert_int_equal((int)sizes[k], expected[k]);
    }
    memset(rc, 0, sizeof *rc);
    rc->rnn = (sk_rnn){cell, INPUT, HIDDEN};
    for (int k = 0; k < SK_RNN_NUM_TENSORS; k++) {
        sk_rnn_tensor tensor = sk_rnn_tensor_info(rc->rnn, k);
        char name[64];
        snprintf(name, sizeof name, "param.%s", tensor.name);
        size_t count = (size_t)tensor.rows * (size_t)tensor.cols;
        read_floats(text, name, rc->params + tensor.offset, count);
    }
    read_floats(text, "x", rc->x, X_SIZE);
    read_floats(text, "h0", rc->h0, STATE);
    if (cell == SK_RNN_LSTM) read_floats(text, "c0", rc->c0, STATE);
    read_floats(text, "dh", rc->dh, SEQ_SIZE);
    double resets[STEPS * ROWS];
    read_record(text, "resets", resets, STEPS * ROWS);
    for (int i = 0; i < STEPS * ROWS; i++) rc->resets[i] = resets[i] != 0.0;
    return text;
}

/* want[0..count) = record name, then compare */
static int compare_record(const char *text, const char *name, const float *got, size_t count,
                          double *worst) {
    double want[MAX_RECORD];
    read_record(text, name, want, count);
    return compare(name, got, want, count, worst);
}

static void check_torch(sk_rnn_cell cell) {
    rnn_case rc;
    char *text = load_torch_case(&rc, cell);
    rnn_result *got = malloc(sizeof *got);
    assert_non_null(got);
    run_layer(got, &rc, 1);
    double worst = 0.0, loss = 0.0, want_loss;
    int failures = compare_record(text, "h", got->h, SEQ_SIZE, &worst);
    if (cell == SK_RNN_LSTM) failures += compare_record(text, "c", got->c, SEQ_SIZE, &worst);
    for (int i = 0; i < SEQ_SIZE; i++) loss += (double)got->h[i] * rc.dh[i];
    read_record(text, "loss", &want_loss, 1);
    print_message("loss: skinner %.9g, torch %.9g\n", loss, want_loss);
    assert_true(test_rel_err(loss, want_loss, ABS_FLOOR) <= REL_TOL);
    for (int k = 0; k < SK_RNN_NUM_TENSORS; k++) {
        sk_rnn_tensor tensor = sk_rnn_tensor_info(rc.rnn, k);
        char name[64];
        snprintf(name, sizeof name, "grad.%s", tensor.name);
        failures += compare_record(text, name, got->dparams + tensor.offset,
                                   (size_t)tensor.rows * (size_t)tensor.cols, &worst);
    }
    failures += compare_record(text, "grad.x", got->dx, X_SIZE, &worst);
    failures += compare_record(text, "grad.h0", got->dh0, STATE, &worst);
    if (cell == SK_RNN_LSTM) failures += compare_record(text, "grad.c0", got->dc0, STATE, &worst);
    print_message("%s against torch: worst relative error %.2e\n", sk_rnn_cell_names[cell], worst);
    assert_int_equal(failures, 0);
    free(got);
    free(text);
}

static void test_lstm_torch(void **state) {
    (void)state;
    check_torch(SK_RNN_LSTM);
}

static void test_gru_torch(void **state) {
    (void)state;
    check_torch(SK_RNN_GRU);
}

/* ---- acting ---- */

/* sk_rnn_step, step after step with the same resets, gives the sequence's states. */
static void check_step(sk_rnn_cell cell) {
    rnn_case rc;
    random_case(&rc, cell, 303);
    bool lstm = is_lstm(&rc);
    rnn_result *seq = malloc(sizeof *seq);
    assert_non_null(seq);
    run_layer(seq, &rc, 0);
    float h[STATE], c[STATE];
    memcpy(h, rc.h0, sizeof h);
    memcpy(c, rc.c0, sizeof c);
    float *work = malloc(sk_rnn_work_size(rc.rnn, 1, ROWS) * sizeof(float));
    assert_non_null(work);
    double worst = 0.0;
    for (int t = 0; t < STEPS; t++) {
        sk_rnn_step(h, lstm ? c : NULL, work, rc.x + t * ROWS * INPUT, rc.resets + t * ROWS,
                    rc.params, rc.rnn, ROWS);
        for (int i = 0; i < STATE; i++) {
            worst = fmax(worst, fabs((double)h[i] - seq->h[t * STATE + i]));
            if (lstm) worst = fmax(worst, fabs((double)c[i] - seq->c[t * STATE + i]));
        }
    }
    print_message("%s: step by step against the sequence, largest difference %.3g\n",
                  sk_rnn_cell_names[cell], worst);
    /* the same arithmetic; only a BLAS that sums differently for fewer rows could differ */
    assert_true(worst <= 1e-6);
    free(work);
    free(seq);
}

static void test_step_matches_sequence(void **state) {
    (void)state;
    check_step(SK_RNN_LSTM);
    check_step(SK_RNN_GRU);
}

/* A NULL h0 / c0 is a zero state and NULL resets are no resets. */
static void test_null_state_and_resets(void **state) {
    (void)state;
    for (int cell = SK_RNN_LSTM; cell <= SK_RNN_GRU; cell++) {
        rnn_case rc;
        random_case(&rc, (sk_rnn_cell)cell, 404);
        memset(rc.h0, 0, sizeof rc.h0);
        memset(rc.c0, 0, sizeof rc.c0);
        memset(rc.resets, 0, sizeof rc.resets);
        rnn_result *explicit = malloc(sizeof *explicit);
        assert_non_null(explicit);
        run_layer(explicit, &rc, 0);
        bool lstm = is_lstm(&rc);
        float h[SEQ_SIZE], c[SEQ_SIZE];
        float *work = malloc(sk_rnn_work_size(rc.rnn, STEPS, ROWS) * sizeof(float));
        assert_non_null(work);
        sk_rnn_forward(h, lstm ? c : NULL, work, rc.x, NULL, NULL, NULL, rc.params, rc.rnn,
                       STEPS, ROWS);
        assert_memory_equal(h, explicit->h, sizeof h);
        if (lstm) assert_memory_equal(c, explicit->c, sizeof c);
        free(work);
        free(explicit);
    }
}

/* ---- layout and initialisation ---- */

static void test_layout_and_init(void **state) {
    (void)state;
    sk_rnn lstm = {SK_RNN_LSTM, 16, 64}, gru = {SK_RNN_GRU, 16, 64};
    /* PyTorch's shapes, in named_parameters() order */
    sk_rnn_tensor w_hh = sk_rnn_tensor_info(lstm, SK_RNN_WEIGHT_HH);
    assert_string_equal(w_hh.name, "weight_hh_l0");
    assert_true(w_hh.rows == 4 * 64 && w_hh.cols == 64 && w_hh.offset == 4 * 64 * 16);
    sk_rnn_tensor b_hh = sk_rnn_tensor_info(gru, SK_RNN_BIAS_HH);
    assert_string_equal(b_hh.name, "bias_hh_l0");
    assert_true(b_hh.rows == 3 * 64 && b_hh.cols == 1);
    assert_true(b_hh.offset + 3 * 64 == sk_rnn_num_params(gru));
    assert_int_equal(sk_rnn_num_params(lstm), 4 * 64 * (16 + 64 + 2));

    /* uniform in [-1/sqrt(H), 1/sqrt(H)): bounds, mean and variance b^2 / 3 */
    size_t count = sk_rnn_num_params(lstm);
    float *params = malloc(count * sizeof(float)), *again = malloc(count * sizeof(float));
    assert_true(params && again);
    uint64_t rng = 9, rng_again = 9;
    sk_rnn_init_params(params, lstm, &rng);
    sk_rnn_init_params(again, lstm, &rng_again);
    assert_memory_equal(params, again, count * sizeof(float));
    double bound = 1.0 / sqrt(64.0), sum = 0.0, sum_sq = 0.0, lo = 1.0, hi = -1.0;
    for (size_t i = 0; i < count; i++) {
        sum += params[i];
        sum_sq += (double)params[i] * params[i];
        lo = fmin(lo, params[i]);
        hi = fmax(hi, params[i]);
    }
    double mean = sum / (double)count, variance = sum_sq / (double)count - mean * mean;
    print_message("init: %zu values in [%.4f, %.4f], mean %.2e, variance %.5f (want %.5f)\n",
                  count, lo, hi, mean, variance, bound * bound / 3.0);
    assert_true(lo >= -bound && hi <= bound && lo < -0.99 * bound && hi > 0.99 * bound);
    assert_true(fabs(mean) < 0.02 * bound); /* 5 standard errors at 20992 values */
    assert_true(fabs(variance / (bound * bound / 3.0) - 1.0) < 0.03);
    free(params);
    free(again);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lstm_finite_differences),
        cmocka_unit_test(test_gru_finite_differences),
        cmocka_unit_test(test_lstm_torch),
        cmocka_unit_test(test_gru_torch),
        cmocka_unit_test(test_step_matches_sequence),
        cmocka_unit_test(test_null_state_and_resets),
        cmocka_unit_test(test_layout_and_init),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
