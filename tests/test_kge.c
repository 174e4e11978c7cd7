/* Knowledge-graph embeddings (modules/prover/kge.c): TransE, ComplEx and RotatE scored through the
 * query vectors of kge.h from either side against the textbook scores of
 * tests/reference/kge_reference.py (torch, float64 fixtures); DeepProofLog's batch loss and its
 * gradient against the fixtures and against finite differences (of the C loss in float, and of
 * an independent double-precision implementation of the textbook formulas here); accumulation,
 * a batch split into parts, and the initialisation against its documented ranges. */
#include "test_fixture.h"
#include "test_util.h"

#include "io/safetensors.h"
#include "prover/kge.h"
#include "prover/kge_train.h"

#include <math.h>

/* The fixtures' sizes. */
enum { NUM_ENTITIES = 7, NUM_RELATIONS = 3, DIM = 5, BATCH = 4, NUM_NEGATIVES = 3 };
enum {
    MAX_PARAMS = NUM_ENTITIES * 2 * DIM + NUM_RELATIONS * 2 * DIM, /* ComplEx's */
    UNTOUCHED_ENTITY = 6,   /* in no triple and no negative: its gradient is exactly 0 */
    UNTOUCHED_RELATION = 2,
};

/* Scores and the loss are sums of ~2 DIM float32 terms of size ~1, each rounded to ~1e-7
 * relative, so ~1e-6 off a float64 reference; a relative 1e-5 above a floor of 1 (a score near
 * 0 has no meaningful relative error) is 10x that, while a wrong term is off by ~0.1. */
#define SCORE_TOL 1e-5
#define SCORE_FLOOR 1.0
/* A gradient entry sums up to B (N + 1) = 16 terms of size <= 1/B, each ~1e-7 relative off in
 * float32 (cosf, sinf, sqrtf, products): measured at most 5e-8 absolute (1.6e-7 after adding to
 * 0.5 twice), and the test prints the worst. GRAD_ABS + GRAD_REL |want| >= 1e-5 keeps a 60x
 * margin for another libm or FMA contraction (-march=native), while one dropped, doubled or
 * mis-signed term (a negative's sigmoid / (B N) times a derivative of ~0.1 to 1) moves an entry
 * by ~1e-2, and even a 0.1% error in TransE's slope by ~1e-4. */
#define GRAD_ABS 1e-5
#define GRAD_REL 1e-5
/* Central differences of the C loss in float, with test_util.h's tolerances (2e-2 relative above
 * a floor of 5e-3). The loss's float32 rounding, ~1e-7 per score, divided by the step gives the
 * quotient's noise: measured 8e-3 relative at a step of 1e-3, 1.6e-3 at 3e-3. The fixtures keep
 * every L1 term and complex modulus > 0.02 from its kink at 0 (kge_reference.py checks it), and
 * a step of 3e-3 moves one by at most 6e-3 (twice the step where a triple's head is its tail),
 * so it stays on one side. */
#define FD_EPS_FLOAT 3e-3f
/* Central differences of the double reference: truncation ~1e-12, rounding ~1e-10, so the
 * float32 gradient is held to GRAD_ABS / GRAD_REL as against torch. */
#define FD_EPS_DOUBLE 1e-6

static sk_kge_model model_ids[] = {SK_KGE_TRANSE, SK_KGE_COMPLEX, SK_KGE_ROTATE};
static const sk_kge_side sides[] = {SK_KGE_TAIL, SK_KGE_HEAD};
static const char *const side_names[] = {"tail", "head"};

/* ---- the fixtures (format of tests/fixtures/rnn_*.txt, as test_rnn.c reads it) ---- */

/* Record `side`.`what`, e.g. "tail.grad". */
static void read_side_record(const char *text, sk_kge_side side, const char *what, double *values,
                             size_t count) {
    char name[64];
    snprintf(name, sizeof name, "%s.%s", side_names[side], what);
    read_record(text, name, values, count);
}

/* A fixture's model (its params read into kge.params) and batch, with its text for the
 * expected values. */
typedef struct kge_case {
    sk_kge kge;
    int32_t triples[BATCH][3];
    int32_t negatives[NUM_NEGATIVES];
    char *text;
} kge_case;

static void load_case(kge_case *kc, sk_kge_model model) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/kge_%s.txt", SKINNER_SOURCE_DIR,
             sk_kge_model_names[model]);
    kc->text = read_text(path);
    double sizes[6];
    read_record(kc->text, "sizes", sizes, 6);
    assert_true(sizes[0] == NUM_ENTITIES && sizes[1] == NUM_RELATIONS && sizes[2] == DIM &&
                sizes[4] == BATCH && sizes[5] == NUM_NEGATIVES);
    assert_int_equal(sk_kge_init(&kc->kge, model, NUM_ENTITIES, NUM_RELATIONS, DIM,
                                 (float)sizes[3], 1),
                     SK_OK);
    size_t count = kc->kge.num_params;
    assert_true(count <= MAX_PARAMS);
    double params[MAX_PARAMS];
    read_record(kc->text, "params", params, count);
    for (size_t i = 0; i < count; i++) kc->kge.params[i] = (float)params[i]; /* exact: float32 */
    double triples[BATCH * 3], negatives[NUM_NEGATIVES];
    read_record(kc->text, "triples", triples, BATCH * 3);
    read_record(kc->text, "negatives", negatives, NUM_NEGATIVES);
    for (int b = 0; b < BATCH; b++)
        for (int i = 0; i < 3; i++) kc->triples[b][i] = (int32_t)triples[b * 3 + i];
    for (int k = 0; k < NUM_NEGATIVES; k++) kc->negatives[k] = (int32_t)negatives[k];
}

static void free_case(kge_case *kc) {
    sk_kge_free(&kc->kge);
    free(kc->text);
}

static float *new_work(const sk_kge *kge) {
    float *work = malloc(sk_kge_batch_work_size(kge, NUM_NEGATIVES) * sizeof(float));
    assert_non_null(work);
    return work;
}

/* How many of got[0..n) are off want by more than GRAD_ABS + GRAD_REL |want|; prints the first
 * mismatches and the worst error. */
static int compare_grads(const char *what, const float *got, const double *want, size_t n) {
    int failures = 0;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs(got[i] - want[i]);
        worst = fmax(worst, err);
        if (!(err <= GRAD_ABS + GRAD_REL * fabs(want[i])) && failures++ < 5)
            print_error("%s[%zu]: skinner %.9g, reference %.9g\n", what, i, (double)got[i],
                        want[i]);
    }
    print_message("%-28s %3zu values, worst absolute error %.2e\n", what, n, worst);
    return failures;
}

/* The untouched entity's and relation's gradient rows are exactly 0. */
static void assert_untouched_rows_zero(const sk_kge *kge, const float *grads) {
    const float *entity = grads + (size_t)UNTOUCHED_ENTITY * (size_t)kge->entity_width;
    const float *relation = grads + (size_t)kge->num_entities * (size_t)kge->entity_width +
                            (size_t)UNTOUCHED_RELATION * (size_t)kge->relation_width;
    for (int i = 0; i < kge->entity_width; i++) assert_true(entity[i] == 0.0f);
    for (int i = 0; i < kge->relation_width; i++) assert_true(relation[i] == 0.0f);
}

/* ---- scores ---- */

/* score(h, r, t) three ways: sk_kge_score, and f(q, e) with q from the tail side (h, r) against
 * t and from the head side (t, r) against h; each against want. Returns how many are off. */
static int check_triple_score(const sk_kge *kge, int head, int rel, int tail, double want,
                              double *worst) {
    const float *h = sk_kge_entity(kge, head), *r = sk_kge_relation(kge, rel),
                *t = sk_kge_entity(kge, tail);
    float q[2 * DIM];
    double got[3];
    got[0] = sk_kge_score(kge, h, r, t);
    sk_kge_query(kge, SK_KGE_TAIL, h, r, q);
    got[1] = sk_kge_score_query(kge, q, t);
    sk_kge_query(kge, SK_KGE_HEAD, t, r, q);
    got[2] = sk_kge_score_query(kge, q, h);
    const char *ways[] = {"sk_kge_score", "tail-side query", "head-side query"};
    int failures = 0;
    for (int way = 0; way < 3; way++) {
        double err = test_rel_err(got[way], want, SCORE_FLOOR);
        *worst = fmax(*worst, err);
        if (!(err <= SCORE_TOL) && failures++ < 3)
            print_error("score(%d, %d, %d) by %s: skinner %.9g, reference %.9g\n", head, rel, tail,
                        ways[way], got[way], want);
    }
    return failures;
}

/* Every positive and every negative of both sides, each scored three ways, against torch. */
static void test_scores(void **state) {
    sk_kge_model model = *(sk_kge_model *)*state;
    kge_case kc;
    load_case(&kc, model);
    double worst = 0.0;
    int failures = 0;
    for (int s = 0; s < 2; s++) {
        double pos[BATCH], neg[BATCH * NUM_NEGATIVES];
        read_side_record(kc.text, sides[s], "scores_pos", pos, BATCH);
        read_side_record(kc.text, sides[s], "scores_neg", neg, BATCH * NUM_NEGATIVES);
        for (int b = 0; b < BATCH; b++) {
            int h = kc.triples[b][0], r = kc.triples[b][1], t = kc.triples[b][2];
            failures += check_triple_score(&kc.kge, h, r, t, pos[b], &worst);
            for (int k = 0; k < NUM_NEGATIVES; k++) {
                int e = kc.negatives[k];
                double want = neg[b * NUM_NEGATIVES + k];
                failures += sides[s] == SK_KGE_TAIL ? check_triple_score(&kc.kge, h, r, e, want, &worst)
                                                    : check_triple_score(&kc.kge, e, r, t, want, &worst);
            }
        }
    }
    print_message("%s: %d triples x 3 ways against torch, worst relative error %.2e\n",
                  sk_kge_model_names[model], 2 * BATCH * (NUM_NEGATIVES + 1), worst);
    assert_int_equal(failures, 0);
    free_case(&kc);
}

/* ---- the batch loss against torch ---- */

/* The loss and every gradient entry of both sides against the fixture. */
static void test_loss_grad_torch(void **state) {
    sk_kge_model model = *(sk_kge_model *)*state;
    kge_case kc;
    load_case(&kc, model);
    size_t count = kc.kge.num_params;
    float *work = new_work(&kc.kge);
    int failures = 0;
    for (int s = 0; s < 2; s++) {
        float grads[MAX_PARAMS] = {0};
        double loss = sk_kge_batch_loss_grad(&kc.kge, (const int32_t(*)[3])kc.triples, BATCH,
                                             sides[s], kc.negatives, NUM_NEGATIVES, 0.0, grads, work);
        double want_loss, want_grad[MAX_PARAMS];
        read_side_record(kc.text, sides[s], "loss", &want_loss, 1);
        read_side_record(kc.text, sides[s], "grad", want_grad, count);
        print_message("%s %s loss: skinner %.9g, torch %.9g\n", sk_kge_model_names[model],
                      side_names[s], loss, want_loss);
        assert_true(test_rel_err(loss, want_loss, SCORE_FLOOR) <= SCORE_TOL);
        char what[64];
        snprintf(what, sizeof what, "%s %s grad", sk_kge_model_names[model], side_names[s]);
        failures += compare_grads(what, grads, want_grad, count);
        assert_untouched_rows_zero(&kc.kge, grads);
    }
    assert_int_equal(failures, 0);
    free(work);
    free_case(&kc);
}

/* ---- finite differences ---- */

/* The C loss of a case and side at the current kge.params (its gradient is dropped). */
typedef struct loss_ctx {
    const kge_case *kc;
    sk_kge_side side;
    float *work;
} loss_ctx;

static double c_loss(void *p) {
    loss_ctx *ctx = p;
    float scratch[MAX_PARAMS] = {0};
    return sk_kge_batch_loss_grad(&ctx->kc->kge, (const int32_t(*)[3])ctx->kc->triples, BATCH,
                                  ctx->side, ctx->kc->negatives, NUM_NEGATIVES, 0.0, scratch, ctx->work);
}

/* The textbook score of kge_reference.py, in double on rows of a double arena. */
static double textbook_score(const sk_kge *kge, const double *h, const double *r, const double *t) {
    int dim = kge->dim;
    double sum = 0.0;
    for (int j = 0; j < dim; j++) {
        if (kge->model == SK_KGE_TRANSE) {
            sum += fabs(h[j] + r[j] - t[j]);
        } else if (kge->model == SK_KGE_ROTATE) {
            double c = cos(r[j]), s = sin(r[j]);
            double re = h[j] * c - h[dim + j] * s - t[j];
            double im = h[j] * s + h[dim + j] * c - t[dim + j];
            sum += sqrt(re * re + im * im);
        } else { /* Re(h r conj(t)) */
            double hr_re = h[j] * r[j] - h[dim + j] * r[dim + j];
            double hr_im = h[j] * r[dim + j] + h[dim + j] * r[j];
            sum += hr_re * t[j] + hr_im * t[dim + j];
        }
    }
    return kge->model == SK_KGE_COMPLEX ? sum : (double)kge->gamma - sum;
}

static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

/* DeepProofLog's loss from the textbook scores: -log sigmoid(s) = softplus(-s). */
static double textbook_loss(const kge_case *kc, sk_kge_side side, const double *arena) {
    const sk_kge *kge = &kc->kge;
    const double *relations = arena + (size_t)kge->num_entities * (size_t)kge->entity_width;
    double loss = 0.0;
    for (int b = 0; b < BATCH; b++) {
        const double *h = arena + kc->triples[b][0] * kge->entity_width;
        const double *r = relations + kc->triples[b][1] * kge->relation_width;
        const double *t = arena + kc->triples[b][2] * kge->entity_width;
        double negatives = 0.0;
        for (int k = 0; k < NUM_NEGATIVES; k++) {
            const double *e = arena + kc->negatives[k] * kge->entity_width;
            double s = side == SK_KGE_TAIL ? textbook_score(kge, h, r, e)
                                           : textbook_score(kge, e, r, t);
            negatives += softplus(s);
        }
        loss += softplus(-textbook_score(kge, h, r, t)) + negatives / NUM_NEGATIVES;
    }
    return loss / BATCH;
}

/* Every entry of the arena (the rows the batch touches and the untouched ones, whose gradient
 * must be 0) by central differences, of the C loss in float and of the double textbook loss. */
static void test_finite_differences(void **state) {
    sk_kge_model model = *(sk_kge_model *)*state;
    kge_case kc;
    load_case(&kc, model);
    size_t count = kc.kge.num_params;
    float *work = new_work(&kc.kge);
    int failures = 0;
    for (int s = 0; s < 2; s++) {
        float grads[MAX_PARAMS] = {0};
        loss_ctx ctx = {&kc, sides[s], work};
        double loss = sk_kge_batch_loss_grad(&kc.kge, (const int32_t(*)[3])kc.triples, BATCH,
                                             sides[s], kc.negatives, NUM_NEGATIVES, 0.0, grads, work);
        assert_untouched_rows_zero(&kc.kge, grads);
        char what[64];
        snprintf(what, sizeof what, "%s %s, C loss (float)", sk_kge_model_names[model],
                 side_names[s]);
        failures += test_check_gradient(what, kc.kge.params, grads, count, c_loss, &ctx,
                                        FD_EPS_FLOAT);

        double arena[MAX_PARAMS], numeric[MAX_PARAMS];
        for (size_t i = 0; i < count; i++) arena[i] = kc.kge.params[i];
        double want_loss = textbook_loss(&kc, sides[s], arena);
        assert_true(test_rel_err(loss, want_loss, SCORE_FLOOR) <= SCORE_TOL);
        for (size_t i = 0; i < count; i++) {
            double saved = arena[i];
            arena[i] = saved + FD_EPS_DOUBLE;
            double up = textbook_loss(&kc, sides[s], arena);
            arena[i] = saved - FD_EPS_DOUBLE;
            double down = textbook_loss(&kc, sides[s], arena);
            arena[i] = saved;
            numeric[i] = (up - down) / (2.0 * FD_EPS_DOUBLE);
        }
        snprintf(what, sizeof what, "%s %s, textbook (double)", sk_kge_model_names[model],
                 side_names[s]);
        failures += compare_grads(what, grads, numeric, count);
    }
    assert_int_equal(failures, 0);
    free(work);
    free_case(&kc);
}

/* The public per-triple gradients: df * d score / d (h, r, t) through sk_kge_score_query_grad
 * and sk_kge_query_grad from either side, against central differences of the textbook score. */
static void test_score_grad(void **state) {
    sk_kge_model model = *(sk_kge_model *)*state;
    kge_case kc;
    load_case(&kc, model);
    const sk_kge *kge = &kc.kge;
    int ew = kge->entity_width, rw = kge->relation_width, failures = 0;
    const double df = -0.7; /* a scale that is neither 1 nor positive */
    for (int b = 0; b < BATCH; b++) {
        if (kc.triples[b][0] == kc.triples[b][2]) continue; /* h and t rows would alias */
        const float *h = sk_kge_entity(kge, kc.triples[b][0]);
        const float *r = sk_kge_relation(kge, kc.triples[b][1]);
        const float *t = sk_kge_entity(kge, kc.triples[b][2]);
        /* the textbook gradient: [h | r | t] in double */
        double rows[6 * DIM], want[6 * DIM];
        int width = 2 * ew + rw;
        for (int i = 0; i < ew; i++) rows[i] = h[i], rows[ew + rw + i] = t[i];
        for (int i = 0; i < rw; i++) rows[ew + i] = r[i];
        for (int i = 0; i < width; i++) {
            double saved = rows[i];
            rows[i] = saved + FD_EPS_DOUBLE;
            double up = textbook_score(kge, rows, rows + ew, rows + ew + rw);
            rows[i] = saved - FD_EPS_DOUBLE;
            double down = textbook_score(kge, rows, rows + ew, rows + ew + rw);
            rows[i] = saved;
            want[i] = df * (up - down) / (2.0 * FD_EPS_DOUBLE);
        }
        for (int s = 0; s < 2; s++) {
            const float *known = sides[s] == SK_KGE_TAIL ? h : t;
            const float *other = sides[s] == SK_KGE_TAIL ? t : h;
            float q[2 * DIM], gq[2 * DIM] = {0}, got[6 * DIM] = {0};
            float *gh = got, *gr = got + ew, *gt = got + ew + rw;
            sk_kge_query(kge, sides[s], known, r, q);
            sk_kge_score_query_grad(kge, q, other, (float)df, gq,
                                    sides[s] == SK_KGE_TAIL ? gt : gh);
            sk_kge_query_grad(kge, sides[s], known, r, gq, sides[s] == SK_KGE_TAIL ? gh : gt, gr);
            char what[64];
            snprintf(what, sizeof what, "%s %s triple %d [h|r|t]", sk_kge_model_names[model],
                     side_names[s], b);
            failures += compare_grads(what, got, want, (size_t)width);
        }
    }
    assert_int_equal(failures, 0);
    free_case(&kc);
}

/* ---- accumulation and parts ---- */

/* Two calls into gradients that start at 0.5 give 0.5 + twice torch's gradient, and each
 * returns torch's loss (nothing carried over in work). */
static void test_accumulation(void **state) {
    sk_kge_model model = *(sk_kge_model *)*state;
    kge_case kc;
    load_case(&kc, model);
    size_t count = kc.kge.num_params;
    float *work = new_work(&kc.kge);
    int failures = 0;
    for (int s = 0; s < 2; s++) {
        float grads[MAX_PARAMS];
        for (size_t i = 0; i < count; i++) grads[i] = 0.5f;
        double want_loss, want_grad[MAX_PARAMS];
        read_side_record(kc.text, sides[s], "loss", &want_loss, 1);
        read_side_record(kc.text, sides[s], "grad", want_grad, count);
        for (int call = 0; call < 2; call++) {
            double loss = sk_kge_batch_loss_grad(&kc.kge, (const int32_t(*)[3])kc.triples, BATCH,
                                                 sides[s], kc.negatives, NUM_NEGATIVES, 0.0, grads,
                                                 work);
            assert_true(test_rel_err(loss, want_loss, SCORE_FLOOR) <= SCORE_TOL);
        }
        for (size_t i = 0; i < count; i++) want_grad[i] = 0.5 + 2.0 * want_grad[i];
        char what[64];
        snprintf(what, sizeof what, "%s %s 0.5 + 2 grad", sk_kge_model_names[model],
                 side_names[s]);
        failures += compare_grads(what, grads, want_grad, count);
    }
    assert_int_equal(failures, 0);
    free(work);
    free_case(&kc);
}

/* sk_kge_part_loss_grad over positives [0, 1) and [1, B) of a batch of B, into one gradient:
 * the losses add up to torch's loss of the batch, the gradients to its gradient; at temperature
 * 0 (DeepProofLog's loss, records loss and grad) and at the fixture's self-adversarial one
 * (adv_loss, adv_grad). */
static void check_parts(const kge_case *kc, double temperature, const char *loss_record,
                        const char *grad_record) {
    size_t count = kc->kge.num_params;
    float *work = new_work(&kc->kge);
    int failures = 0;
    for (int s = 0; s < 2; s++) {
        float grads[MAX_PARAMS] = {0};
        const int32_t(*triples)[3] = (const int32_t(*)[3])kc->triples;
        double loss = sk_kge_part_loss_grad(&kc->kge, triples, 1, 1.0 / BATCH, sides[s],
                                            kc->negatives, NUM_NEGATIVES, temperature, grads,
                                            work) +
                      sk_kge_part_loss_grad(&kc->kge, triples + 1, BATCH - 1, 1.0 / BATCH,
                                            sides[s], kc->negatives, NUM_NEGATIVES, temperature,
                                            grads, work);
        double want_loss, want_grad[MAX_PARAMS];
        read_side_record(kc->text, sides[s], loss_record, &want_loss, 1);
        read_side_record(kc->text, sides[s], grad_record, want_grad, count);
        assert_true(test_rel_err(loss, want_loss, SCORE_FLOOR) <= SCORE_TOL);
        char what[64];
        snprintf(what, sizeof what, "%s %s parts %s", sk_kge_model_names[kc->kge.model],
                 side_names[s], grad_record);
        failures += compare_grads(what, grads, want_grad, count);
    }
    assert_int_equal(failures, 0);
    free(work);
}

static void test_parts(void **state) {
    sk_kge_model model = *(sk_kge_model *)*state;
    kge_case kc;
    load_case(&kc, model);
    double temperature;
    read_record(kc.text, "adversarial", &temperature, 1);
    check_parts(&kc, 0.0, "loss", "grad");
    check_parts(&kc, temperature, "adv_loss", "adv_grad");
    free_case(&kc);
}

/* ---- self-adversarial negative sampling against torch ---- */

/* The self-adversarial loss and gradient (weights softmax(T s_bk), held constant) of both sides
 * against the fixture; the fixture's weights are far enough from 1/N that its gradient differs
 * from DeepProofLog's loss's by more than the tolerance, so a temperature that is ignored, or a
 * gradient taken through the weights, fails. */
static void test_adversarial_torch(void **state) {
    sk_kge_model model = *(sk_kge_model *)*state;
    kge_case kc;
    load_case(&kc, model);
    size_t count = kc.kge.num_params;
    float *work = new_work(&kc.kge);
    double temperature;
    read_record(kc.text, "adversarial", &temperature, 1);
    assert_true(temperature > 0.0);
    int failures = 0;
    for (int s = 0; s < 2; s++) {
        float grads[MAX_PARAMS] = {0};
        double loss = sk_kge_batch_loss_grad(&kc.kge, (const int32_t(*)[3])kc.triples, BATCH,
                                             sides[s], kc.negatives, NUM_NEGATIVES, temperature,
                                             grads, work);
        double want_loss, want_grad[MAX_PARAMS], uniform_grad[MAX_PARAMS];
        read_side_record(kc.text, sides[s], "adv_loss", &want_loss, 1);
        read_side_record(kc.text, sides[s], "adv_grad", want_grad, count);
        read_side_record(kc.text, sides[s], "grad", uniform_grad, count);
        double apart = 0.0;
        for (size_t i = 0; i < count; i++) apart = fmax(apart, fabs(want_grad[i] - uniform_grad[i]));
        assert_true(apart > 100 * GRAD_ABS);
        print_message("%s %s self-adversarial loss: skinner %.9g, torch %.9g\n",
                      sk_kge_model_names[model], side_names[s], loss, want_loss);
        assert_true(test_rel_err(loss, want_loss, SCORE_FLOOR) <= SCORE_TOL);
        char what[64];
        snprintf(what, sizeof what, "%s %s adversarial grad", sk_kge_model_names[model],
                 side_names[s]);
        failures += compare_grads(what, grads, want_grad, count);
        assert_untouched_rows_zero(&kc.kge, grads);
    }
    assert_int_equal(failures, 0);
    free(work);
    free_case(&kc);
}

/* ---- layout and initialisation ---- */

/* Smallest and largest of x[0..n). */
static void range_of(const float *x, size_t n, double *lo, double *hi) {
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < n; i++) *lo = fmin(*lo, x[i]), *hi = fmax(*hi, x[i]);
}

static void test_init(void **state) {
    sk_kge_model model = *(sk_kge_model *)*state;
    enum { ENTITIES = 40, RELATIONS = 12, INIT_DIM = 8 };
    const float gamma = 10.0f;
    const double bound = (10.0 + 2.0) / INIT_DIM; /* 1.5: neither 1 nor pi */
    const int widths[3][2] = {[SK_KGE_TRANSE] = {INIT_DIM, INIT_DIM},
                              [SK_KGE_COMPLEX] = {2 * INIT_DIM, 2 * INIT_DIM},
                              [SK_KGE_ROTATE] = {2 * INIT_DIM, INIT_DIM}};
    sk_kge kge, same, other;
    assert_int_equal(sk_kge_init(&kge, model, ENTITIES, RELATIONS, INIT_DIM, gamma, 5), SK_OK);
    assert_int_equal(sk_kge_init(&same, model, ENTITIES, RELATIONS, INIT_DIM, gamma, 5), SK_OK);
    assert_int_equal(sk_kge_init(&other, model, ENTITIES, RELATIONS, INIT_DIM, gamma, 6), SK_OK);
    assert_int_equal(kge.model, model);
    assert_true(kge.num_entities == ENTITIES && kge.num_relations == RELATIONS &&
                kge.dim == INIT_DIM && kge.gamma == gamma);
    int ew = widths[model][0], rw = widths[model][1];
    assert_int_equal(kge.entity_width, ew);
    assert_int_equal(kge.relation_width, rw);
    size_t entity_floats = (size_t)ENTITIES * (size_t)ew;
    size_t relation_floats = (size_t)RELATIONS * (size_t)rw;
    assert_int_equal(kge.num_params, entity_floats + relation_floats);
    assert_ptr_equal(sk_kge_entity(&kge, 3), kge.params + 3 * ew);
    assert_ptr_equal(sk_kge_relation(&kge, 2), kge.params + entity_floats + 2 * (size_t)rw);

    /* entities uniform in [-b, b]: inside, and reaching both ends (the chance that none of
     * >= 320 uniform values falls in either outer 10% is < 1e-14) */
    double lo, hi;
    range_of(kge.params, entity_floats, &lo, &hi);
    print_message("%s init: entities in [%.4f, %.4f] (b = %.4f)\n", sk_kge_model_names[model], lo,
                  hi, bound);
    assert_true(lo >= -bound && hi <= bound && lo < -0.9 * bound && hi > 0.9 * bound);
    range_of(kge.params + entity_floats, relation_floats, &lo, &hi);
    print_message("%s init: relations in [%.4f, %.4f]\n", sk_kge_model_names[model], lo, hi);
    if (model == SK_KGE_ROTATE) {
        /* phases in [-pi, pi), beyond [-b, b] on both sides (each side misses with chance
         * (1 - (pi - b) / (2 pi))^96 < 1e-11) */
        assert_true(lo >= -M_PI && hi < M_PI && lo < -bound && hi > bound);
    } else {
        assert_true(lo >= -bound && hi <= bound && lo < -0.9 * bound && hi > 0.9 * bound);
    }

    /* the seed decides the arena: the same one gives it to the bit, another a different one */
    assert_memory_equal(kge.params, same.params, kge.num_params * sizeof(float));
    size_t differing = 0;
    for (size_t i = 0; i < kge.num_params; i++) differing += kge.params[i] != other.params[i];
    print_message("seed 6 against seed 5: %zu of %zu values differ\n", differing, kge.num_params);
    assert_true(differing > kge.num_params * 9 / 10);
    sk_kge_free(&kge);
    sk_kge_free(&same);
    sk_kge_free(&other);
}

/* ---- the trainer's update ---- */

/* The first update of sk_kge_train_step against AdamW applied by hand to torch's gradient
 * (record tail.grad): Adam's first step divides the bias-corrected moments m = g, v = g², so each
 * parameter moves by lr_1 g / (|g| + eps) after decoupled weight decay p (1 - lr_1 wd), where
 * lr_1 is the rate of update 1: the learning rate, or under a cosine decay over T updates
 * lr (1 + cos(pi / T)) / 2 (T = 1 leaves every parameter where it was). Two workers split the
 * batch, so their reduction is in it too. */
static void test_first_update(void **state) {
    sk_kge_model model = *(sk_kge_model *)*state;
    const double lr = 0.01;
    const struct {
        int64_t decay_steps;
        double weight_decay, want_lr;
    } cases[] = {
        {0, 0.0, lr},
        {4, 0.0, lr * (1.0 + cos(M_PI / 4.0)) / 2.0},
        {4, 0.1, lr * (1.0 + cos(M_PI / 4.0)) / 2.0},
        {1, 0.1, 0.0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kge_case kc;
        load_case(&kc, model);
        size_t count = kc.kge.num_params;
        double before[MAX_PARAMS], grad[MAX_PARAMS];
        for (size_t i = 0; i < count; i++) before[i] = kc.kge.params[i];
        read_side_record(kc.text, SK_KGE_TAIL, "grad", grad, count);
        int32_t atoms[BATCH][3];
        for (int b = 0; b < BATCH; b++) {
            atoms[b][0] = kc.triples[b][1] + SK_KB_FIRST_PRED;
            atoms[b][1] = kc.triples[b][0] + 1;
            atoms[b][2] = kc.triples[b][2] + 1;
        }
        sk_kb kb = {0};
        kb.facts[SK_KB_TRAIN].atoms = atoms;
        kb.facts[SK_KB_TRAIN].count = BATCH;
        sk_kge_train_config tc = {.batch_size = BATCH, .negatives = NUM_NEGATIVES, .threads = 2,
                                  .learning_rate = lr, .weight_decay = cases[c].weight_decay,
                                  .adam_eps = 1e-8, .lr_decay_steps = cases[c].decay_steps,
                                  .seed = 1};
        assert_true(fabs(sk_kge_learning_rate(&tc, 1) - cases[c].want_lr) <= 1e-15);
        sk_kge_trainer *tr;
        assert_int_equal(sk_kge_trainer_create(&tr, &kc.kge, &kb, &tc), SK_OK);
        sk_kge_train_step(tr, (const int32_t(*)[3])kc.triples, BATCH, SK_KGE_TAIL, kc.negatives,
                          NUM_NEGATIVES);
        assert_int_equal(sk_kge_trainer_steps(tr), 1);
        double lr1 = cases[c].want_lr, worst = 0.0;
        int failures = 0;
        size_t ew = (size_t)kc.kge.entity_width, rw = (size_t)kc.kge.relation_width,
               entities = (size_t)NUM_ENTITIES * ew;
        for (size_t i = 0; i < count; i++) {
            /* the rows no triple or negative touches keep their values (lazy, as SparseAdam) */
            bool untouched = i < entities ? i / ew == UNTOUCHED_ENTITY
                                          : (i - entities) / rw == UNTOUCHED_RELATION;
            double want = untouched ? before[i]
                                         : before[i] * (1.0 - lr1 * cases[c].weight_decay) -
                                               lr1 * grad[i] / (fabs(grad[i]) + 1e-8);
            double err = fabs(kc.kge.params[i] - want);
            worst = fmax(worst, err);
            if (!(err <= 2e-6) && failures++ < 5)
                print_error("%s case %zu param %zu: skinner %.9g, AdamW %.9g (before %.9g)\n",
                            sk_kge_model_names[model], c, i, (double)kc.kge.params[i], want,
                            before[i]);
        }
        print_message("%s decay over %lld, wd %.1f: worst %.2e\n", sk_kge_model_names[model],
                      (long long)cases[c].decay_steps, cases[c].weight_decay, worst);
        assert_int_equal(failures, 0);
        sk_kge_trainer_destroy(tr);
        free_case(&kc);
    }
}

/* The cosine decay's landmarks: half the rate halfway, 0 at the last update and after it. */
static void test_cosine_landmarks(void **state) {
    (void)state;
    sk_kge_train_config tc = {.learning_rate = 0.004, .lr_decay_steps = 1000};
    assert_true(fabs(sk_kge_learning_rate(&tc, 500) - 0.002) <= 1e-15);
    assert_true(fabs(sk_kge_learning_rate(&tc, 1000)) <= 1e-15);
    assert_true(fabs(sk_kge_learning_rate(&tc, 5000)) <= 1e-15);
    assert_true(sk_kge_learning_rate(&tc, 250) > sk_kge_learning_rate(&tc, 251));
    tc.lr_decay_steps = 0;
    assert_true(sk_kge_learning_rate(&tc, 5000) == 0.004);
}

static void test_model_names(void **state) {
    (void)state;
    assert_string_equal(sk_kge_model_names[SK_KGE_TRANSE], "transe");
    assert_string_equal(sk_kge_model_names[SK_KGE_COMPLEX], "complex");
    assert_string_equal(sk_kge_model_names[SK_KGE_ROTATE], "rotate");
    assert_null(sk_kge_model_names[3]);
}

/* ---- tampered model files (issue 30 item 15): refused, naming what is wrong ---- */

/* A RotatE model of 3 entities and 2 relations of dim 4 written with the metadata given
 * (format, model, dim, gamma; NULL leaves a key out), checksums as sk_st_write seals them. */
static void write_model(const char *path, const char *model, const char *dim, const char *gamma) {
    static float entities[3 * 8], relations[2 * 4];
    sk_st_tensor tensors[] = {
        {.name = "kge.entities", .ndim = 2, .shape = {3, 8}, .data = entities, .dtype = SK_ST_F32},
        {.name = "kge.relations", .ndim = 2, .shape = {2, 4}, .data = relations,
         .dtype = SK_ST_F32},
    };
    sk_st_meta meta[4] = {{"format", "skinner-kge-1"}};
    int count = 1;
    if (model) meta[count++] = (sk_st_meta){"model", model};
    if (dim) meta[count++] = (sk_st_meta){"dim", dim};
    if (gamma) meta[count++] = (sk_st_meta){"gamma", gamma};
    assert_int_equal(sk_st_write(path, tensors, 2, meta, count), SK_OK);
}

/* sk_kge_load of path fails with SK_ERR_CORRUPT and a message holding both needles. */
static void expect_model_refused(const char *path, const char *needle1, const char *needle2) {
    sk_kge kge;
    sk_status status = sk_kge_load(&kge, path, NULL, 0);
    if (status == SK_OK) {
        sk_kge_free(&kge);
        fail_msg("a tampered KGE model loaded: %s (wanted '%s')", path, needle1);
    }
    assert_int_equal(status, SK_ERR_CORRUPT);
    const char *message = sk_last_error();
    print_message("refused: %s\n", message);
    if (!strstr(message, needle1) || (needle2 && !strstr(message, needle2)))
        fail_msg("message lacks '%s'/'%s': %s", needle1, needle2 ? needle2 : "", message);
}

static void test_tampered_models_refused(void **state) {
    (void)state;
    char dir[] = "/tmp/skinner-test-kge-XXXXXX", path[96];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/kge.safetensors", dir);
    /* the control: the writer's own file loads, numbers as written */
    write_model(path, "rotate", "4", "6.5");
    sk_kge kge;
    assert_int_equal(sk_kge_load(&kge, path, NULL, 0), SK_OK);
    assert_int_equal(kge.dim, 4);
    assert_true(kge.gamma == 6.5f);
    sk_kge_free(&kge);

    /* numbers with trailing text, none, or out of range: strtol read "16abc" as 16,
     * strtod "abc" as 0 */
    const struct { const char *model, *dim, *gamma, *needle; } bad[] = {
        {"rotate", "16abc", "6.5", "dim = \"16abc\" (expected an integer 1..4096)"},
        {"rotate", "4", "abc", "gamma = \"abc\""},
        {"rotate", "4", "", "gamma = \"\""},
        {"rotate", "4", "6.5x", "gamma = \"6.5x\""},
        {"rotate", "4", "nan", "gamma = \"nan\""},
        {"rotate", "4", "-1", "gamma = \"-1\""},
        {"rotate", "0", "6.5", "dim = \"0\""},
        {"rotate", "4097", "6.5", "dim = \"4097\""},
        {"rotate", NULL, "6.5", "dim = \"(none)\""},
        {"rotat", "4", "6.5", "model = \"rotat\""},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        write_model(path, bad[k].model, bad[k].dim, bad[k].gamma);
        expect_model_refused(path, bad[k].needle, NULL);
    }

    /* both checksum keys renamed away (same length, so the layout holds): refused as a
     * policy without one is, by every reader (kge eval, eval --kge and kge train
     * --resume all read models through sk_kge_load) */
    write_model(path, "rotate", "4", "6.5");
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    char bytes[4096];
    size_t size = fread(bytes, 1, sizeof bytes, f);
    assert_true(size > 8 && size < sizeof bytes);
    bytes[size] = '\0'; /* the header is text; the zero data after it ends it too */
    const char *keys[] = {SK_ST_CRC_KEY, SK_ST_CHECKSUM_KEY};
    for (int k = 0; k < 2; k++) {
        char *key = strstr(bytes + 8, keys[k]);
        assert_non_null(key);
        key[0] = 'x';
    }
    rewind(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    fclose(f);
    expect_model_refused(path, "has no checksum", path);
    unlink(path);
    rmdir(dir);
}

/* One test per function and model, named e.g. "test_scores(transe)". */
#define MODEL_TEST(f, m, name) {#f "(" name ")", f, NULL, NULL, &model_ids[m]}
#define FOR_EACH_MODEL(f)                                                                          \
    MODEL_TEST(f, SK_KGE_TRANSE, "transe"), MODEL_TEST(f, SK_KGE_COMPLEX, "complex"),              \
        MODEL_TEST(f, SK_KGE_ROTATE, "rotate")

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_names),
        FOR_EACH_MODEL(test_scores),
        FOR_EACH_MODEL(test_loss_grad_torch),
        FOR_EACH_MODEL(test_finite_differences),
        FOR_EACH_MODEL(test_score_grad),
        FOR_EACH_MODEL(test_accumulation),
        FOR_EACH_MODEL(test_parts),
        FOR_EACH_MODEL(test_adversarial_torch),
        FOR_EACH_MODEL(test_init),
        FOR_EACH_MODEL(test_first_update),
        cmocka_unit_test(test_cosine_landmarks),
        cmocka_unit_test(test_tampered_models_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
