/*
 * Ranking evaluation of a Prover-v0 policy, the filtered ranking protocol of
 * knowledge-base completion (DeepProofLog, arXiv:2511.08581, and the
 * link-prediction literature before it): every query of a split is ranked
 * among its filtered corruptions by how well the policy proves each of them.
 * Every query counts, those *_depths.txt records as unprovable included.
 *
 * Candidates. For a query p(a, b), the head corruptions are p(c, b) and the
 * tail corruptions p(a, c) for every constant c of a type seen at that
 * position of p (kb->cand), c != a (resp. b), filtered: a corruption that is a
 * known true fact of any split is left out, so a model is not penalised for
 * ranking another truth above the query. Truths the dataset does not list
 * stay in: countries_s3 gives the region of 159 of its 243 countries, so many
 * head corruptions of locatedInCR(c, region) are true and provable, and head
 * ranks there measure little (tail ranks are the benchmark's usual figure).
 *
 * Score. Each candidate is the query of one episode, run with greedy actions
 * (the most likely allowed action, ties to the first: deterministic, so a
 * candidate has one proof and one score, whatever the seed) until it ends or
 * is truncated at env.max_depth. Its score is the sum of the log-probabilities
 * of the actions taken when the episode ends proved, and SK_RANK_FAILED
 * (-infinity) otherwise (failed or truncated): a failed proof ranks below
 * every successful one, and failed proofs tie with each other whatever path
 * led there, since a failed path says nothing about how true the atom is.
 * The true query runs as a positive (its own fact excluded, as in training;
 * a valid or test query is not a train fact, so this changes nothing there),
 * corruptions as negatives (they are not facts: no exclusion). The reward is
 * not used.
 *
 * Rank. The rank of the true query among its candidates is 1 + the number of
 * corruptions scoring strictly higher + a uniform draw in 0..ties, where ties
 * counts the corruptions scoring exactly the same: its position among them is
 * uniformly random (a seeded stream per query), so a policy that fails every
 * proof gets the expected rank of a random guess, not rank 1. Each query is
 * ranked against its head and its tail corruptions separately, or against one
 * side only (sk_rank_options.sides, by default the run's env.corrupt); MRR is
 * the mean of 1 / rank and Hits@k the fraction of ranks <= k, per side, and
 * overall as the mean over the ranked sides.
 *
 * DeepProofLog's protocol (its eval_corruptions and samplers): Countries
 * ranks tail corruptions only, the true region among the other regions (the
 * constants of the true tail's domain in domain2constants.txt, which for
 * locatedInCR are exactly the regions, as kb->cand gives them: 4 per query),
 * the benchmark's protocol since Bouchard et al. 2015; family ranks head and
 * tail corruptions over every constant and averages the two sides. Both
 * enumerate all corruptions, filtered against train, valid and test facts,
 * and break ties at random. One difference: DeepProofLog scores a failed
 * proof as its log-probability - 100, so failed proofs are ordered by how
 * likely the failing path was; here they tie (see Score).
 *
 * Speed. Candidates of many queries share the env slots of the workers (one
 * thread per core by default, 256 slots each): every step runs one policy
 * forward over a worker's whole batch, and a slot whose episode ended claims
 * the next candidate at once. A candidate's score does not depend on which
 * worker or slot proved it, nor the ranks on how many there were. The true
 * queries are proved first; a corruption of a proved query stops as soon as
 * its running log-probability (which only falls) is below the query's
 * score, since from there it can only rank below it: the ranks are those of
 * proving everything to the end (tested against that).
 */
#ifndef SK_RANK_H
#define SK_RANK_H

#include "../envs/prover/prover.h"
#include "eval.h"

#include <math.h>

#define SK_RANK_FAILED (-INFINITY)  /* the score of a failed proof */
#define SK_RANK_DEFAULT_BATCH 256   /* env slots per worker */

typedef struct sk_rank_metrics {
    double mrr, hits1, hits3, hits10;
} sk_rank_metrics;

typedef struct sk_rank_result {
    sk_rank_metrics head, tail; /* the true query against its head / tail corruptions
                                   (zero for a side not ranked) */
    sk_rank_metrics overall;    /* the mean over the ranked sides */
    int sides;                  /* SK_PROVER_CORRUPT_*: the sides ranked */
    int queries;                /* queries ranked */
    int64_t candidates;         /* proofs attempted: the queries and all their corruptions */
    int64_t head_corruptions, tail_corruptions;
    double proved_rate;         /* fraction of the true queries the policy proved */
    double seconds;             /* wall time of the ranking */
} sk_rank_result;

/* Called after each batch of queries is ranked. */
typedef void (*sk_rank_progress_fn)(int queries_done, int queries_total, void *user);

typedef struct sk_rank_options {
    sk_kb_split split;   /* whose queries (kb->queries[split]), all of them, in file order */
    int max_queries;     /* the first max_queries of them; 0 = all */
    int sides;           /* SK_PROVER_CORRUPT_* to rank; 0 = the run's env.corrupt */
    uint64_t seed;       /* of the tie-breaking draws, the only randomness */
    int threads;         /* workers, each with its own env slots; 0 = one per core */
    int batch;           /* env slots per worker; 0 = SK_RANK_DEFAULT_BATCH */
    sk_rank_progress_fn progress; /* may be NULL */
    void *progress_user;
} sk_rank_options;

/*
 * Ranks with a loaded policy (lp->env must be Prover-v0; the env is created
 * from lp->cfg, so env.dataset and env.max_depth are the run's). Borrows lp.
 * SK_ERR_INVALID for another env or a split without queries; create's errors
 * (an unreadable dataset) pass through. Sets OpenBLAS to one thread (as
 * sk_trainer_create does): the workers are the parallelism.
 */
sk_status sk_rank_policy(const sk_loaded_policy *lp, const sk_rank_options *options,
                         sk_rank_result *out);

/*
 * Loads a checkpoint written by sk_trainer_save on Prover-v0 and ranks the
 * queries of split ("train", "valid" or "test"; NULL = "test"): max_queries
 * of them (0 = all), ties broken with seed.
 */
sk_status sk_rank_evaluate(const char *checkpoint, const char *split, int max_queries,
                           uint64_t seed, sk_rank_result *out);

/* "train", "valid" or "test" to a split: false for any other name. */
bool sk_rank_split_parse(const char *name, sk_kb_split *out);
const char *sk_rank_split_name(sk_kb_split split);

/* ---- the pieces, for tests ---- */

/* Scores atoms[0..count) as sk_rank_policy does (positive[k]: atoms[k] runs
 * as a positive), with threads and batch as in sk_rank_options. */
sk_status sk_rank_score(const sk_loaded_policy *lp, const int32_t (*atoms)[3],
                        const uint8_t *positive, int count, int threads, int batch,
                        double *scores);

/* The filtered corruptions of query on side 0 (head, arg0) or 1 (tail,
 * arg1), in kb->cand order, into out (room for cap; kb->cand_start bounds how
 * many there can be). Returns how many. */
int sk_rank_corruptions(const sk_kb *kb, const int32_t query[3], int side, int32_t (*out)[3],
                        int cap);

/* The rank (1-based) of a candidate scoring true_score among others[0..count):
 * 1 + those strictly above + a uniform draw in 0..ties over those equal.
 * Draws from rng only when there are ties. */
int sk_rank_position(double true_score, const double *others, int count, uint64_t *rng);

/* Adds one rank to sum (1/rank and hits as 0/1); sk_rank_mean divides by count. */
void sk_rank_metrics_add(sk_rank_metrics *sum, int rank);
sk_rank_metrics sk_rank_mean(sk_rank_metrics sum, int count);

#endif
