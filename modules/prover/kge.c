/* The KGE models' scores and gradients, through query vectors (kge.h). */
#include "kge.h"

#include "skinner.h"

#include <stdio.h>

#include <stdlib.h>

#include <math.h>
#include <string.h>

const char *const sk_kge_model_names[] = {"transe", "complex", "rotate", NULL};

#define PI_F 3.14159265358979323846f

sk_status sk_kge_init(sk_kge *kge, sk_kge_model model, int num_entities, int num_relations, int dim,
                      float gamma, uint64_t seed) {
    memset(kge, 0, sizeof *kge);
    if (num_entities < 1 || num_relations < 1 || dim < 1)
        return sk_fail(SK_ERR_INVALID,
                       "a KGE model of %d entities, %d relations, dim %d (expected at least 1 of "
                       "each)",
                       num_entities, num_relations, dim);
    kge->model = model;
    kge->num_entities = num_entities;
    kge->num_relations = num_relations;
    kge->dim = dim;
    kge->gamma = gamma;
    kge->entity_width = model == SK_KGE_TRANSE ? dim : 2 * dim;
    kge->relation_width = model == SK_KGE_COMPLEX ? 2 * dim : dim;
    size_t entities = (size_t)num_entities * (size_t)kge->entity_width;
    kge->num_params = entities + (size_t)num_relations * (size_t)kge->relation_width;
    kge->params = sk_alloc(kge->num_params * sizeof(float));
    if (!kge->params)
        return sk_fail(SK_ERR_NOMEM, "out of memory for a KGE model of %zu parameters",
                       kge->num_params);
    uint64_t rng = sk_rng_seed(seed, 0x6b6765ULL);
    float bound = (gamma + 2.0f) / (float)dim;
    for (size_t k = 0; k < kge->num_params; k++) {
        float u = sk_rng_float(&rng); /* [0, 1) */
        bool phase = model == SK_KGE_ROTATE && k >= entities;
        kge->params[k] = phase ? (2.0f * u - 1.0f) * PI_F : (2.0f * u - 1.0f) * bound;
    }
    return SK_OK;
}

void sk_kge_free(sk_kge *kge) {
    sk_free(kge->params);
    memset(kge, 0, sizeof *kge);
}

void sk_kge_query(const sk_kge *kge, sk_kge_side side, const float *known, const float *rel,
                  float *q) {
    int D = kge->dim;
    switch (kge->model) {
    case SK_KGE_TRANSE:
        if (side == SK_KGE_TAIL)
            for (int j = 0; j < D; j++) q[j] = known[j] + rel[j];
        else
            for (int j = 0; j < D; j++) q[j] = known[j] - rel[j];
        return;
    case SK_KGE_ROTATE: {
        const float *re = known, *im = known + D;
        float sgn = side == SK_KGE_TAIL ? 1.0f : -1.0f; /* the head side rotates by conj(r) */
        for (int j = 0; j < D; j++) {
            float c = cosf(rel[j]), s = sgn * sinf(rel[j]);
            q[j] = re[j] * c - im[j] * s;
            q[D + j] = re[j] * s + im[j] * c;
        }
        return;
    }
    case SK_KGE_COMPLEX: {
        const float *re = known, *im = known + D, *rre = rel, *rim = rel + D;
        if (side == SK_KGE_TAIL)
            for (int j = 0; j < D; j++) { /* h o r */
                q[j] = re[j] * rre[j] - im[j] * rim[j];
                q[D + j] = re[j] * rim[j] + im[j] * rre[j];
            }
        else
            for (int j = 0; j < D; j++) { /* conj(r o conj(t)) */
                q[j] = rre[j] * re[j] + rim[j] * im[j];
                q[D + j] = rre[j] * im[j] - rim[j] * re[j];
            }
        return;
    }
    }
}

float sk_kge_score_query(const sk_kge *kge, const float *q, const float *e) {
    int D = kge->dim;
    float sum = 0.0f;
    switch (kge->model) {
    case SK_KGE_TRANSE:
        for (int j = 0; j < D; j++) sum += fabsf(q[j] - e[j]);
        return kge->gamma - sum;
    case SK_KGE_ROTATE:
        for (int j = 0; j < D; j++) {
            float a = q[j] - e[j], b = q[D + j] - e[D + j];
            sum += sqrtf(a * a + b * b);
        }
        return kge->gamma - sum;
    case SK_KGE_COMPLEX:
        for (int j = 0; j < 2 * D; j++) sum += q[j] * e[j];
        return sum;
    }
    return NAN;
}

float sk_kge_score(const sk_kge *kge, const float *h, const float *rel, const float *t) {
    float q[2 * SK_KGE_MAX_DIM];
    SK_ASSERT(kge->entity_width <= (int)(sizeof q / sizeof q[0]));
    sk_kge_query(kge, SK_KGE_TAIL, h, rel, q);
    return sk_kge_score_query(kge, q, t);
}

static float sign_of(float x) { return (float)((x > 0.0f) - (x < 0.0f)); }

void sk_kge_score_query_grad(const sk_kge *kge, const float *q, const float *e, float df, float *gq,
                             float *ge) {
    int D = kge->dim;
    switch (kge->model) {
    case SK_KGE_TRANSE:
        for (int j = 0; j < D; j++) {
            float g = df * sign_of(q[j] - e[j]); /* f = gamma - sum |q - e| */
            if (gq) gq[j] -= g;
            if (ge) ge[j] += g;
        }
        return;
    case SK_KGE_ROTATE:
        for (int j = 0; j < D; j++) {
            float a = q[j] - e[j], b = q[D + j] - e[D + j], m = sqrtf(a * a + b * b);
            if (m == 0.0f) continue; /* the modulus has no slope at 0: take 0 */
            float ga = df * a / m, gb = df * b / m;
            if (gq) gq[j] -= ga, gq[D + j] -= gb;
            if (ge) ge[j] += ga, ge[D + j] += gb;
        }
        return;
    case SK_KGE_COMPLEX:
        for (int j = 0; j < 2 * D; j++) {
            if (gq) gq[j] += df * e[j];
            if (ge) ge[j] += df * q[j];
        }
        return;
    }
}

void sk_kge_query_grad(const sk_kge *kge, sk_kge_side side, const float *known, const float *rel,
                       const float *gq, float *gknown, float *grel) {
    int D = kge->dim;
    switch (kge->model) {
    case SK_KGE_TRANSE: {
        float sgn = side == SK_KGE_TAIL ? 1.0f : -1.0f; /* q = known +- r */
        for (int j = 0; j < D; j++) {
            gknown[j] += gq[j];
            grel[j] += sgn * gq[j];
        }
        return;
    }
    case SK_KGE_ROTATE: {
        const float *re = known, *im = known + D;
        float sgn = side == SK_KGE_TAIL ? 1.0f : -1.0f;
        for (int j = 0; j < D; j++) {
            float c = cosf(rel[j]), s = sgn * sinf(rel[j]);
            float qre = re[j] * c - im[j] * s, qim = re[j] * s + im[j] * c;
            gknown[j] += gq[j] * c + gq[D + j] * s;
            gknown[D + j] += -gq[j] * s + gq[D + j] * c;
            /* dq/dtheta = sgn * i q */
            grel[j] += sgn * (-gq[j] * qim + gq[D + j] * qre);
        }
        return;
    }
    case SK_KGE_COMPLEX: {
        const float *re = known, *im = known + D, *rre = rel, *rim = rel + D;
        float *gre = gknown, *gim = gknown + D, *grre = grel, *grim = grel + D;
        const float *gqre = gq, *gqim = gq + D;
        if (side == SK_KGE_TAIL)
            for (int j = 0; j < D; j++) {
                gre[j] += gqre[j] * rre[j] + gqim[j] * rim[j];
                gim[j] += -gqre[j] * rim[j] + gqim[j] * rre[j];
                grre[j] += gqre[j] * re[j] + gqim[j] * im[j];
                grim[j] += -gqre[j] * im[j] + gqim[j] * re[j];
            }
        else
            for (int j = 0; j < D; j++) {
                grre[j] += gqre[j] * re[j] + gqim[j] * im[j];
                grim[j] += gqre[j] * im[j] - gqim[j] * re[j];
                gre[j] += gqre[j] * rre[j] - gqim[j] * rim[j];
                gim[j] += gqre[j] * rim[j] + gqim[j] * rre[j];
            }
        return;
    }
    }
}

/* sigmoid(x) and log sigmoid(x) without overflow. */
static double sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }
static double log_sigmoid(double x) { return x >= 0 ? -log1p(exp(-x)) : x - log1p(exp(x)); }

size_t sk_kge_batch_work_size(const sk_kge *kge, int negatives) {
    /* q, its gradient, then the negatives' scores and weights (self-adversarial) */
    return 2 * (size_t)kge->entity_width + 2 * (size_t)SK_MAX(negatives, 0);
}

double sk_kge_batch_loss_grad(const sk_kge *kge, const int32_t (*triples)[3], int batch,
                              sk_kge_side side, const int32_t *negatives, int num_negatives,
                              double temperature, float *grads, float *work) {
    return sk_kge_part_loss_grad(kge, triples, batch, 1.0 / batch, side, negatives, num_negatives,
                                 temperature, grads, work);
}

/* The self-adversarial weights of a positive's negatives (kge.h): softmax of
 * temperature * score over them, from their scores into weight. */
static void adversarial_weights(const sk_kge *kge, const float *q, const int32_t *negatives,
                                int num_negatives, double temperature, float *score,
                                float *weight) {
    float top = -INFINITY;
    for (int k = 0; k < num_negatives; k++) {
        score[k] = sk_kge_score_query(kge, q, sk_kge_entity(kge, negatives[k]));
        top = fmaxf(top, score[k]);
    }
    double sum = 0.0;
    for (int k = 0; k < num_negatives; k++) sum += weight[k] = (float)exp(temperature * (score[k] - top));
    for (int k = 0; k < num_negatives; k++) weight[k] = (float)(weight[k] / sum);
}

double sk_kge_part_loss_grad(const sk_kge *kge, const int32_t (*triples)[3], int count,
                             double inv_b, sk_kge_side side, const int32_t *negatives,
                             int num_negatives, double temperature, float *grads, float *work) {
    int W = kge->entity_width;
    float *q = work, *gq = work + W;
    float *neg_score = work + 2 * W, *neg_weight = neg_score + num_negatives;
    bool adversarial = temperature > 0.0;
    float *gent = grads;
    float *grel = grads + (size_t)kge->num_entities * (size_t)W;
    double loss = 0.0, inv_n = 1.0 / num_negatives;
    for (int b = 0; b < count; b++) {
        int32_t h = triples[b][0], r = triples[b][1], t = triples[b][2];
        int32_t known = side == SK_KGE_TAIL ? h : t, target = side == SK_KGE_TAIL ? t : h;
        const float *rel = sk_kge_relation(kge, r);
        sk_kge_query(kge, side, sk_kge_entity(kge, known), rel, q);
        memset(gq, 0, (size_t)W * sizeof(float));
        double s = sk_kge_score_query(kge, q, sk_kge_entity(kge, target));
        loss -= log_sigmoid(s) * inv_b;
        sk_kge_score_query_grad(kge, q, sk_kge_entity(kge, target), (float)(-sigmoid(-s) * inv_b),
                                gq, gent + (size_t)target * (size_t)W);
        if (adversarial)
            adversarial_weights(kge, q, negatives, num_negatives, temperature, neg_score, neg_weight);
        for (int k = 0; k < num_negatives; k++) {
            int32_t e = negatives[k];
            double sn = adversarial ? neg_score[k] : sk_kge_score_query(kge, q, sk_kge_entity(kge, e));
            double w = adversarial ? neg_weight[k] : inv_n; /* a weight, not differentiated */
            loss -= log_sigmoid(-sn) * inv_b * w;
            sk_kge_score_query_grad(kge, q, sk_kge_entity(kge, e), (float)(sigmoid(sn) * inv_b * w),
                                    gq, gent + (size_t)e * (size_t)W);
        }
        sk_kge_query_grad(kge, side, sk_kge_entity(kge, known), rel, gq,
                          gent + (size_t)known * (size_t)W,
                          grel + (size_t)r * (size_t)kge->relation_width);
    }
    return loss;
}
