/* From scores to ranks: a candidate's position among its corruptions by
 * the policy's proofs, by a KGE model alone and by the hybrid of the two, and
 * the means of those positions (rank.h: the protocol). */
#include "rank_internal.h"

#include "skinner.h"

#include <stdio.h>

#include <stdlib.h>
#include "kge.h"

#include <math.h>

int sk_rank_position(double true_score, const double *others, int count, uint64_t *rng) {
    int above = 0, ties = 0;
    for (int k = 0; k < count; k++) {
        above += others[k] > true_score;
        ties += others[k] == true_score;
    }
    int place = ties ? (int)sk_rng_below(rng, (uint32_t)ties + 1) : 0;
    return 1 + above + place;
}

void sk_rank_metrics_add(sk_rank_metrics *sum, int rank) {
    SK_ASSERT(rank >= 1);
    sum->mrr += 1.0 / rank;
    sum->hits1 += rank <= 1;
    sum->hits3 += rank <= 3;
    sum->hits10 += rank <= 10;
}

sk_rank_metrics sk_rank_mean(sk_rank_metrics sum, int count) {
    if (count <= 0) return (sk_rank_metrics){0};
    return (sk_rank_metrics){sum.mrr / count, sum.hits1 / count, sum.hits3 / count,
                             sum.hits10 / count};
}

void sk_rank_side_means(int sides, int total, sk_rank_metrics head, sk_rank_metrics tail,
                        sk_rank_metrics *head_out, sk_rank_metrics *tail_out,
                        sk_rank_metrics *overall) {
    if (sides & SK_PROVER_CORRUPT_HEAD) *head_out = sk_rank_mean(head, total);
    if (sides & SK_PROVER_CORRUPT_TAIL) *tail_out = sk_rank_mean(tail, total);
    sk_rank_metrics both = {head.mrr + tail.mrr, head.hits1 + tail.hits1,
                            head.hits3 + tail.hits3, head.hits10 + tail.hits10};
    *overall = sk_rank_mean(both, sides == SK_PROVER_CORRUPT_BOTH ? 2 * total : total);
}

/* The KGE score of a Prover atom (pred, arg0, arg1). */
static double kge_of(const sk_kge *kge, const int32_t atom[3]) {
    return sk_kge_score(kge, sk_kge_entity(kge, atom[1] - 1),
                        sk_kge_relation(kge, atom[0] - SK_KB_FIRST_PRED),
                        sk_kge_entity(kge, atom[2] - 1));
}

static double log_sigmoid(double x) { return x >= 0 ? -log1p(exp(-x)) : x - log1p(exp(x)); }

/* The hybrid score of a candidate from its KGE score and its proof's. */
static double hybrid_of(const sk_rank_hybrid *h, double kge, double proof) {
    bool proved = proof != SK_RANK_FAILED;
    double term = !proved                                   ? -h->fail_penalty
                  : h->proof_term == SK_RANK_PROOF_LOGPROB ? h->rl_weight * proof
                                                            : h->proof_bonus;
    return h->kge_weight * log_sigmoid(kge) + term;
}

sk_rank_hybrid sk_rank_hybrid_of(const sk_rank_options *o) {
    return (sk_rank_hybrid){.kge_weight = o->kge_weight, .rl_weight = o->rl_weight,
                            .proof_bonus = o->proof_bonus, .fail_penalty = o->fail_penalty,
                            .proof_term = o->proof_term};
}

/* Query's positions under each of o->grid's hybrids (head, tail) into
 * grid_records, from the candidates' KGE scores ks and proofs' scores. */
static void rank_grid(const rank_chunk *c, int q, const sk_rank_options *o, int sides,
                      const double *ks, double kge_truth, double truth, double *hs,
                      double *grid_records) {
    int query = c->first_query + q, count = c->num_head[q] + c->num_tail[q];
    int nh = c->num_head[q];
    const double *score = c->score + c->start[q];
    for (int g = 0; g < o->grid_count; g++) {
        const sk_rank_hybrid *h = &o->grid[g];
        for (int k = 0; k < count; k++) hs[k] = hybrid_of(h, ks[k], score[k]);
        double hyb_truth = hybrid_of(h, kge_truth, truth);
        /* a stream per query and hybrid, apart from the main figures' */
        uint64_t rng = sk_rng_seed(o->seed ^ 0x74756e65ull, (uint64_t)query * 4096u + (uint64_t)g);
        double *record = grid_records + ((size_t)query * (size_t)o->grid_count + (size_t)g) * 2;
        if (sides & SK_PROVER_CORRUPT_HEAD)
            record[0] = sk_rank_position(hyb_truth, hs, nh, &rng);
        if (sides & SK_PROVER_CORRUPT_TAIL)
            record[1] = sk_rank_position(hyb_truth, hs + nh, c->num_tail[q], &rng);
    }
}

void sk_rank_chunk_queries(const rank_chunk *c, const double *query_score,
                           const int32_t (*queries)[3], const sk_rank_options *o, int sides,
                           double *kge_scratch, double *hyb_scratch, double *records,
                           double *grid_records) {
    sk_rank_hybrid main_hybrid = sk_rank_hybrid_of(o);
    for (int q = 0; q < c->num_queries; q++) {
        const double *score = c->score + c->start[q];
        int query = c->first_query + q, count = c->num_head[q] + c->num_tail[q];
        double truth = query_score[query];
        double *record = records + (size_t)query * RECORD;
        /* one stream per query: the draws do not depend on how queries were chunked */
        uint64_t rng = sk_rng_seed(o->seed, (uint64_t)query);
        if (sides & SK_PROVER_CORRUPT_HEAD)
            record[R_HEAD] = sk_rank_position(truth, score, c->num_head[q], &rng);
        if (sides & SK_PROVER_CORRUPT_TAIL)
            record[R_TAIL] = sk_rank_position(truth, score + c->num_head[q], c->num_tail[q], &rng);
        record[R_PROVED] = truth != SK_RANK_FAILED;
        record[R_NUM_HEAD] = c->num_head[q];
        record[R_NUM_TAIL] = c->num_tail[q];
        if (!o->kge) continue;
        double *ks = kge_scratch + c->start[q], *hs = hyb_scratch + c->start[q];
        int proved = 0;
        for (int k = 0; k < count; k++) {
            ks[k] = kge_of(o->kge, c->atoms[c->start[q] + k]);
            hs[k] = hybrid_of(&main_hybrid, ks[k], score[k]);
            proved += score[k] != SK_RANK_FAILED;
        }
        double kge_truth = kge_of(o->kge, queries[query]);
        double hyb_truth = hybrid_of(&main_hybrid, kge_truth, truth);
        int nh = c->num_head[q];
        if (sides & SK_PROVER_CORRUPT_HEAD) {
            record[R_KGE_HEAD] = sk_rank_position(kge_truth, ks, nh, &rng);
            record[R_HYB_HEAD] = sk_rank_position(hyb_truth, hs, nh, &rng);
        }
        if (sides & SK_PROVER_CORRUPT_TAIL) {
            record[R_KGE_TAIL] = sk_rank_position(kge_truth, ks + nh, c->num_tail[q], &rng);
            record[R_HYB_TAIL] = sk_rank_position(hyb_truth, hs + nh, c->num_tail[q], &rng);
        }
        record[R_NEG_PROVED] = proved;
        if (grid_records) rank_grid(c, q, o, sides, ks, kge_truth, truth, hs, grid_records);
    }
}

void sk_rank_sum_grid(const double *grid_records, int total, int sides, int grid_count,
                      sk_rank_metrics *out) {
    for (int g = 0; g < grid_count; g++) {
        sk_rank_metrics head = {0}, tail = {0}, head_mean, tail_mean;
        for (int q = 0; q < total; q++) {
            const double *record = grid_records + ((size_t)q * (size_t)grid_count + (size_t)g) * 2;
            if (sides & SK_PROVER_CORRUPT_HEAD) sk_rank_metrics_add(&head, (int)record[0]);
            if (sides & SK_PROVER_CORRUPT_TAIL) sk_rank_metrics_add(&tail, (int)record[1]);
        }
        sk_rank_side_means(sides, total, head, tail, &head_mean, &tail_mean, &out[g]);
    }
}

void sk_rank_sum_records(const double *all, int total, int sides, const int32_t *depths, bool kge,
                         sk_rank_result *out) {
    sk_rank_metrics head = {0}, tail = {0}, kge_head = {0}, kge_tail = {0}, hyb_head = {0},
                    hyb_tail = {0};
    int proved = 0;
    double negatives_proved = 0.0;
    bool h = sides & SK_PROVER_CORRUPT_HEAD, t = sides & SK_PROVER_CORRUPT_TAIL;
    out->candidates = total;
    for (int q = 0; q < total; q++) {
        const double *record = all + (size_t)q * RECORD;
        if (h) sk_rank_metrics_add(&head, (int)record[R_HEAD]);
        if (t) sk_rank_metrics_add(&tail, (int)record[R_TAIL]);
        proved += record[R_PROVED] != 0.0;
        int32_t depth = depths ? depths[q] : SK_KB_DEPTH_UNKNOWN;
        int bucket = depth == -1                                 ? 0
                     : depth >= 1 && depth < SK_RANK_DEPTHS - 1 ? depth
                                                                : SK_RANK_DEPTHS - 1;
        out->depth_count[bucket]++;
        out->depth_proved[bucket] += record[R_PROVED] != 0.0;
        out->head_corruptions += (int64_t)record[R_NUM_HEAD];
        out->tail_corruptions += (int64_t)record[R_NUM_TAIL];
        if (!kge) continue;
        if (h) sk_rank_metrics_add(&kge_head, (int)record[R_KGE_HEAD]);
        if (t) sk_rank_metrics_add(&kge_tail, (int)record[R_KGE_TAIL]);
        if (h) sk_rank_metrics_add(&hyb_head, (int)record[R_HYB_HEAD]);
        if (t) sk_rank_metrics_add(&hyb_tail, (int)record[R_HYB_TAIL]);
        negatives_proved += record[R_NEG_PROVED];
    }
    out->candidates += out->head_corruptions + out->tail_corruptions;
    out->queries = total;
    out->sides = sides;
    sk_rank_side_means(sides, total, head, tail, &out->head, &out->tail, &out->overall);
    if (kge) {
        out->has_kge = true;
        sk_rank_side_means(sides, total, kge_head, kge_tail, &out->kge_head, &out->kge_tail,
                           &out->kge_overall);
        sk_rank_side_means(sides, total, hyb_head, hyb_tail, &out->hybrid_head,
                           &out->hybrid_tail, &out->hybrid_overall);
        int64_t corruptions = out->head_corruptions + out->tail_corruptions;
        out->negatives_proved_rate = corruptions ? negatives_proved / (double)corruptions : 0.0;
    }
    out->proved_rate = (double)proved / total;
}
