/* The recurrent cells' elementwise kernels (src/nn/isa/cells.c, the level's table in
 * src/nn/kernels.h) at widths that run their vector bodies and their tails at every level (test_rnn
 * runs them through the layer at a hidden size of 6, under one AVX2 vector): each output against
 * the cell's formulas in double (rnn.h; test_rnn checks those formulas against finite differences
 * and PyTorch). Every output element is compared, and the bytes past each array are checked
 * untouched. */
#include "test_util.h"

#include "core/rng.h"
#include "nn/kernels.h"
#include "nn/rnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REL_TOL 1e-5 /* float rounding of a few operations, tanh and sigmoid within ~3e-7 */
#define ABS_FLOOR 0.1
#define CANARY -7.0f

enum { ROWS = 3, MAX_WIDTH = 67, MAX_GATES = 4 * MAX_WIDTH, MAX_STATE = ROWS * MAX_WIDTH };

/* 1 (AVX-512's 16 lanes, AVX2's 8, SSE's 4: a tail alone), 6 (test_rnn's), 37 (bodies and a
 * tail of 5, 5 and 1), 64 (the preset's: bodies only), 67 */
static const int widths[] = {1, 6, 37, 64, 67};

static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

/* count floats of N(0, scale), then a canary */
static void fill(float *x, size_t count, uint64_t *rng, double scale) {
    for (size_t i = 0; i < count; i++) x[i] = (float)(scale * sk_rng_normal(rng));
    x[count] = CANARY;
}

static int check(const char *what, int H, const float *got, const double *want, size_t count) {
    int failures = 0;
    for (size_t i = 0; i < count; i++)
        if (!(test_rel_err(got[i], want[i], ABS_FLOOR) <= REL_TOL) && failures++ < 3)
            print_error("%s H=%d [%zu]: kernel %.9g, formula %.9g\n", what, H, i, (double)got[i],
                        want[i]);
    if (got[count] != CANARY && failures++ < 3)
        print_error("%s H=%d: written past its %zu floats\n", what, H, count);
    return failures;
}

/* The cell's inputs and outputs, with a float of room past each for the canary. */
typedef struct cell_case {
    float gates[MAX_GATES * ROWS + 1], proj[MAX_GATES * ROWS + 1], prev_c[MAX_STATE + 1];
    float prev_h[MAX_STATE + 1], h[MAX_STATE + 1], c[MAX_STATE + 1], cache[MAX_STATE + 1];
    float dh[MAX_STATE + 1], dh_prev[MAX_STATE + 1], dc_prev[MAX_STATE + 1];
    float dgates[MAX_GATES * ROWS + 1], dgates_hh[MAX_GATES * ROWS + 1];
    double want[MAX_GATES * ROWS], want_state[MAX_STATE], want_cache[MAX_STATE];
    double want_hh[MAX_GATES * ROWS], want_dh_prev[MAX_STATE], want_dc_prev[MAX_STATE];
} cell_case;

static void random_inputs(cell_case *k, int G, int H, uint64_t *rng) {
    size_t gates = (size_t)ROWS * (size_t)G * (size_t)H, state = (size_t)ROWS * (size_t)H;
    fill(k->gates, gates, rng, 2.0);
    fill(k->proj, gates, rng, 2.0);
    fill(k->prev_c, state, rng, 1.0);
    fill(k->prev_h, state, rng, 0.5);
    fill(k->dh, state, rng, 1.0);
    fill(k->dh_prev, state, rng, 1.0);
    fill(k->dc_prev, state, rng, 1.0);
}

static int check_lstm(cell_case *k, int H, uint64_t *rng) {
    const sk_nn_kernels *kernels = sk_nn_kernels_used();
    size_t gates = (size_t)ROWS * 4 * (size_t)H, state = (size_t)ROWS * (size_t)H;
    random_inputs(k, 4, H, rng);
    k->h[state] = k->c[state] = k->cache[state] = k->dgates[gates] = CANARY;
    float pre[MAX_GATES * ROWS];
    memcpy(pre, k->gates, gates * sizeof(float));
    kernels->lstm_cell_forward(k->h, k->c, k->gates, k->cache, k->proj, k->prev_c, ROWS, H);
    for (int row = 0; row < ROWS; row++)
        for (int j = 0; j < H; j++) {
            size_t g = (size_t)row * 4 * (size_t)H + (size_t)j, at = (size_t)row * (size_t)H + (size_t)j;
            double in = sigmoid((double)pre[g] + k->proj[g]);
            double forget = sigmoid((double)pre[g + (size_t)H] + k->proj[g + (size_t)H]);
            double cand = tanh((double)pre[g + 2 * (size_t)H] + k->proj[g + 2 * (size_t)H]);
            double out = sigmoid((double)pre[g + 3 * (size_t)H] + k->proj[g + 3 * (size_t)H]);
            k->want[g] = in, k->want[g + (size_t)H] = forget;
            k->want[g + 2 * (size_t)H] = cand, k->want[g + 3 * (size_t)H] = out;
            k->want_state[at] = forget * k->prev_c[at] + in * cand;
            k->want_cache[at] = tanh(k->want_state[at]);
        }
    int failures = check("lstm gates", H, k->gates, k->want, gates);
    failures += check("lstm c", H, k->c, k->want_state, state);
    failures += check("lstm tanh(c)", H, k->cache, k->want_cache, state);
    for (size_t i = 0; i < state; i++) {
        size_t row = i / (size_t)H, j = i % (size_t)H;
        k->want_state[i] = k->want[row * 4 * (size_t)H + 3 * (size_t)H + j] * k->cache[i];
    }
    failures += check("lstm h", H, k->h, k->want_state, state);

    /* backward from the forward's float outputs */
    for (int row = 0; row < ROWS; row++)
        for (int j = 0; j < H; j++) {
            size_t g = (size_t)row * 4 * (size_t)H + (size_t)j, at = (size_t)row * (size_t)H + (size_t)j;
            double in = k->gates[g], forget = k->gates[g + (size_t)H];
            double cand = k->gates[g + 2 * (size_t)H], out = k->gates[g + 3 * (size_t)H];
            double dh_total = (double)k->dh[at] + k->dh_prev[at], tc = k->cache[at];
            double dc = k->dc_prev[at] + dh_total * out * (1.0 - tc * tc);
            k->want[g] = dc * cand * in * (1.0 - in);
            k->want[g + (size_t)H] = dc * k->prev_c[at] * forget * (1.0 - forget);
            k->want[g + 2 * (size_t)H] = dc * in * (1.0 - cand * cand);
            k->want[g + 3 * (size_t)H] = dh_total * tc * out * (1.0 - out);
            k->want_dc_prev[at] = dc * forget;
            k->want_dh_prev[at] = 0.0; /* all of dh_prev flows through W_hh */
        }
    kernels->lstm_cell_backward(k->dgates, k->dh_prev, k->dc_prev, k->dh, k->gates, k->cache,
                                k->prev_c, ROWS, H);
    failures += check("lstm dgates", H, k->dgates, k->want, gates);
    failures += check("lstm dc_prev", H, k->dc_prev, k->want_dc_prev, state);
    failures += check("lstm dh_prev", H, k->dh_prev, k->want_dh_prev, state);
    return failures;
}

static int check_gru(cell_case *k, int H, uint64_t *rng) {
    const sk_nn_kernels *kernels = sk_nn_kernels_used();
    size_t gates = (size_t)ROWS * 3 * (size_t)H, state = (size_t)ROWS * (size_t)H;
    random_inputs(k, 3, H, rng);
    k->h[state] = k->cache[state] = k->dgates[gates] = k->dgates_hh[gates] = CANARY;
    float pre[MAX_GATES * ROWS];
    memcpy(pre, k->gates, gates * sizeof(float));
    kernels->gru_cell_forward(k->h, k->gates, k->cache, k->proj, k->prev_h, ROWS, H);
    for (int row = 0; row < ROWS; row++)
        for (int j = 0; j < H; j++) {
            size_t g = (size_t)row * 3 * (size_t)H + (size_t)j, at = (size_t)row * (size_t)H + (size_t)j;
            double reset = sigmoid((double)pre[g] + k->proj[g]);
            double update = sigmoid((double)pre[g + (size_t)H] + k->proj[g + (size_t)H]);
            double hidden_n = k->proj[g + 2 * (size_t)H];
            double cand = tanh((double)pre[g + 2 * (size_t)H] + reset * hidden_n);
            k->want[g] = reset, k->want[g + (size_t)H] = update, k->want[g + 2 * (size_t)H] = cand;
            k->want_cache[at] = hidden_n;
            k->want_state[at] = (1.0 - update) * cand + update * k->prev_h[at];
        }
    int failures = check("gru gates", H, k->gates, k->want, gates);
    failures += check("gru W_hn h + b_hn", H, k->cache, k->want_cache, state);
    failures += check("gru h", H, k->h, k->want_state, state);

    for (int row = 0; row < ROWS; row++)
        for (int j = 0; j < H; j++) {
            size_t g = (size_t)row * 3 * (size_t)H + (size_t)j, at = (size_t)row * (size_t)H + (size_t)j;
            double reset = k->gates[g], update = k->gates[g + (size_t)H];
            double cand = k->gates[g + 2 * (size_t)H];
            double dh_total = (double)k->dh[at] + k->dh_prev[at];
            double dcand = dh_total * (1.0 - update) * (1.0 - cand * cand);
            double dreset = dcand * k->cache[at] * reset * (1.0 - reset);
            double dupdate = dh_total * (k->prev_h[at] - cand) * update * (1.0 - update);
            k->want[g] = k->want_hh[g] = dreset;
            k->want[g + (size_t)H] = k->want_hh[g + (size_t)H] = dupdate;
            k->want[g + 2 * (size_t)H] = dcand;
            k->want_hh[g + 2 * (size_t)H] = dcand * reset;
            k->want_dh_prev[at] = dh_total * update;
        }
    kernels->gru_cell_backward(k->dgates, k->dgates_hh, k->dh_prev, k->dh, k->gates, k->cache,
                               k->prev_h, ROWS, H);
    failures += check("gru dgates_ih", H, k->dgates, k->want, gates);
    failures += check("gru dgates_hh", H, k->dgates_hh, k->want_hh, gates);
    failures += check("gru dh_prev", H, k->dh_prev, k->want_dh_prev, state);
    return failures;
}

static void test_cells_against_formulas(void **state) {
    (void)state;
    cell_case *k = malloc(sizeof *k);
    assert_non_null(k);
    uint64_t rng = 23;
    int failures = 0;
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        failures += check_lstm(k, widths[w], &rng);
        failures += check_gru(k, widths[w], &rng);
    }
    print_message("cells at %s: %d outputs off\n",
                  sk_isa_level_name(sk_nn_kernels_used()->level), failures);
    free(k);
    assert_int_equal(failures, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cells_against_formulas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
