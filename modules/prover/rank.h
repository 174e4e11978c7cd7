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
 * Speed. Candidates of many queries share the env slots of the workers (the
 * host's, through sk_parallel; each proves in its own slice of one sk_vec of
 * workers x batch envs, 256 by default, so the dataset is loaded once):
 * every step runs one policy forward over a worker's busy slots, and a slot
 * whose episode ended claims the next candidate at once. A candidate's score
 * does not depend on which worker or slot proved it, nor the ranks on how
 * many there were. The true queries are proved first; a corruption of a
 * proved query stops as soon as its running log-probability (which only
 * falls) is below the query's score, since from there it can only rank below
 * it: the ranks are those of proving everything to the end (tested against
 * that). Before any of that, the kb's least model (sk_kb_model, kb.h) settles
 * the candidates no actions could prove: one outside it scores
 * SK_RANK_FAILED without a step, and a proof stops at a state with a ground
 * goal outside it; those are the scores proving to the end would give too
 * (sk_rank_options.unpruned proves everything, for timing and tests). On
 * family 99.9% of the candidates are settled so; WN18RR's model is too large
 * to build (SK_RANK_MODEL_ATOMS_PER_FACT), and every candidate is proved.
 *
 * `skinner eval Prover-v0` reaches it as the env's own evaluation,
 * sk_prover_ranking (sk_env_extras.evaluation), with eval.* options; the
 * policy comes as an sk_actor, so nothing here knows the trainer's code.
 *
 * The code is rank.c and rank_*.c, one concern each (rank_internal.h lists
 * them and holds what they share).
 */
#ifndef SK_PROVER_RANK_H
#define SK_PROVER_RANK_H

#include "prover.h"

#include <math.h>

#define SK_RANK_FAILED (-INFINITY)  /* the score of a failed proof */
#define SK_RANK_DEFAULT_BATCH 256   /* env slots per worker */
/* The least model is built up to this many atoms per train fact (at least
 * SK_RANK_MODEL_MIN_ATOMS), and not used past it: family's is 2.8 facts per
 * train fact (55,715 atoms, 0.1 s), WN18RR's passes 20M (230 per fact). */
#define SK_RANK_MODEL_ATOMS_PER_FACT 8
#define SK_RANK_MODEL_MIN_ATOMS (1 << 20)

typedef struct sk_rank_metrics {
    double mrr, hits1, hits3, hits10;
} sk_rank_metrics;

#define SK_RANK_DEPTHS 10

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
    int64_t steps;              /* policy steps taken over all candidates */
    /* the least model (sk_kb_model): its atoms, whether it was complete and
     * used, and the candidates it failed without a step */
    int64_t model_atoms;
    bool model_used;
    int64_t settled;
    int64_t dead_states;        /* proofs stopped at a state with a goal outside it */
    /* with a KGE model (sk_rank_options.kge): the same figures from its scores
     * alone and from the hybrid score, and the share of corruptions proved */
    /* the true queries proved, by the depth their split's *_depths.txt records:
     * [0] unprovable (-1), [d] depth d for 1 <= d < SK_RANK_DEPTHS - 1, and
     * [SK_RANK_DEPTHS - 1] deeper or not recorded */
    int depth_count[SK_RANK_DEPTHS], depth_proved[SK_RANK_DEPTHS];
    bool has_kge;
    sk_rank_metrics kge_head, kge_tail, kge_overall;
    sk_rank_metrics hybrid_head, hybrid_tail, hybrid_overall;
    double negatives_proved_rate;
} sk_rank_result;

/* How a proof enters the hybrid score: w_kge log sigmoid(kge) plus a fixed
 * bonus for a proof (and minus a penalty for a failure), or plus w_rl times
 * the proof's log-probability (a failure: minus the penalty). */
typedef enum sk_rank_proof_term { SK_RANK_PROOF_FIXED, SK_RANK_PROOF_LOGPROB } sk_rank_proof_term;

struct sk_kge;

/* One way of scoring a candidate from its KGE score and its proof (see
 * sk_rank_options): the weights a hybrid ranking, or one choice of
 * --tune-on, uses. */
typedef struct sk_rank_hybrid {
    double kge_weight, rl_weight, proof_bonus, fail_penalty;
    sk_rank_proof_term proof_term;
} sk_rank_hybrid;

typedef struct sk_rank_options {
    sk_kb_split split;   /* whose queries (kb->queries[split]), all of them, in file order */
    int max_queries;     /* the first max_queries of them; 0 = all */
    int sides;           /* SK_PROVER_CORRUPT_* to rank; 0 = the run's env.corrupt */
    uint64_t seed;       /* of the tie-breaking draws, the only randomness */
    int batch;           /* env slots per worker; 0 = SK_RANK_DEFAULT_BATCH */
    int negatives;       /* > 0: that many of each side's corruptions, sampled without
                            replacement (seeded by the query's index); 0: all of them */
    const struct sk_kge *kge; /* NULL: RL only; else also KGE-only and hybrid figures */
    double kge_weight, rl_weight, proof_bonus, fail_penalty;
    sk_rank_proof_term proof_term;
    bool unpruned;       /* true: prove every candidate, also those the least model rules
                            out (the same ranks, slower: for timing the policy, and tests) */
    int branches;        /* > 0: after the greedy proof, try other actions at each of its
                            first `branches` steps (a search that leaves the greedy path once,
                            rank_branch.c); a candidate scores its best proof. 0: greedy only */
    int alternatives;    /* with branches: the 2nd .. (alternatives + 1)th most likely
                            actions at each such step (0: 1, the second only) */
    sk_progress_fn progress; /* called after each chunk of queries ("queries"); may be NULL */
    void *progress_user;
    /* with a KGE model: grid_count more hybrids ranked from the same proofs
     * (what --tune-on compares), each query's positions drawn from a stream
     * of its own per hybrid; their overall figures go to grid_out (room for
     * grid_count). One part only (not under mpirun). */
    const sk_rank_hybrid *grid;
    int grid_count;
    sk_rank_metrics *grid_out;
} sk_rank_options;

/* The hybrid defaults: w_kge 1, a proof adds 1 (fixed), a failure 0; logprob
 * mode weighs the log-probability by 1. */
#define SK_RANK_KGE_WEIGHT 1.0
#define SK_RANK_RL_WEIGHT 1.0
#define SK_RANK_PROOF_BONUS 1.0
#define SK_RANK_FAIL_PENALTY 0.0

/*
 * Ranks with actor's greedy actions on Prover-v0 envs created from env_cfg
 * (env.dataset, env.max_depth: the run's). parallel must run its jobs on
 * actor->num_workers workers. SK_ERR_INVALID for another env or a split
 * without queries; create's errors (an unreadable dataset) pass through.
 */
sk_status sk_rank_run(const sk_env_def *env, const sk_config *env_cfg, const sk_actor *actor,
                      const sk_parallel *parallel, const sk_rank_options *options,
                      sk_rank_result *out);

/*
 * --tune-on valid (eval.tune_on, rank_tune.c): ranks the valid split once per
 * proof search of SK_TUNE_SEARCHES (greedy, 3 x 3, 5 x 5) and scores each
 * with the SK_TUNE_HYBRIDS hybrids of sk_rank_tune_grid (RL-only, fixed proof
 * bonuses, log-probability terms); KGE-only is a choice too, and is kept
 * unless another has a strictly higher valid MRR (ties keep the cheaper
 * search), so the choice is never below KGE-only on valid. base gives the
 * KGE model, sides, negatives, queries and seed; its split and weights are
 * not used. sk_rank_tune_apply sets o's weights and search to the choice.
 */
#define SK_TUNE_SEARCHES 3
#define SK_TUNE_HYBRIDS 9
extern const sk_rank_hybrid sk_rank_tune_grid[SK_TUNE_HYBRIDS];

typedef struct sk_rank_tuned {
    sk_rank_metrics kge_valid;                                 /* KGE-only on valid */
    sk_rank_metrics valid[SK_TUNE_SEARCHES][SK_TUNE_HYBRIDS]; /* each choice on valid */
    double proved_rate[SK_TUNE_SEARCHES]; /* valid queries each search proves */
    int best_search, best_hybrid;         /* -1, -1: KGE-only */
    sk_rank_hybrid hybrid;                /* the choice's weights ... */
    int branches, alternatives;           /* ... and search */
    double valid_mrr;                     /* its valid MRR */
    double seconds;
} sk_rank_tuned;

sk_status sk_rank_tune(const sk_env_def *env, const sk_config *env_cfg, const sk_actor *actor,
                       const sk_parallel *parallel, const sk_rank_options *base,
                       sk_rank_tuned *out);
void sk_rank_tune_apply(const sk_rank_tuned *tuned, sk_rank_options *o);
/* A choice's name ("greedy, proof bonus 1"; search -1: "KGE-only"). */
void sk_rank_tune_name(int search, int hybrid, char *buf, size_t size);
/* The choice as an INI preset ([eval] keys) with every choice's valid MRR. */
sk_status sk_rank_tune_write(const sk_rank_tuned *tuned, const char *path);

/*
 * The ranking as an env's own evaluation (Prover-v0's extras), reading
 * eval.split (train, valid or test; default test), eval.queries (0: all),
 * eval.corrupt (head, tail or both; default: env.corrupt), eval.seed
 * (default 1) and eval.batch (0: SK_RANK_DEFAULT_BATCH); a bad value fails
 * with SK_ERR_INVALID naming its key. Reports the figures as metrics (mrr,
 * hits1.., head_mrr.., tail_mrr.. for the ranked sides, queries, candidates,
 * head_corruptions, tail_corruptions, proved_rate, seconds), `skinner eval`'s
 * table as text, and the JSON members of `skinner eval --json`.
 */
extern const sk_env_evaluation sk_prover_ranking;

/* "train", "valid" or "test" to a split: false for any other name. */
bool sk_rank_split_parse(const char *name, sk_kb_split *out);
const char *sk_rank_split_name(sk_kb_split split);

/* ---- the pieces, for tests ---- */

/* Scores atoms[0..count) as sk_rank_run does (positive[k]: atoms[k] runs
 * as a positive), on batch env slots per worker (0: the default), with the
 * branch search of `branches` steps and `alternatives` actions (0: greedy
 * proofs only); no bound, and no least model. */
sk_status sk_rank_score(const sk_env_def *env, const sk_config *env_cfg, const sk_actor *actor,
                        const sk_parallel *parallel, const int32_t (*atoms)[3],
                        const uint8_t *positive, int count, int batch, int branches,
                        int alternatives, double *scores);

/* The filtered corruptions of query on side 0 (head, arg0) or 1 (tail,
 * arg1), in kb->cand order, into out (room for cap; kb->cand_start bounds how
 * many there can be). Returns how many. */
int sk_rank_corruptions(const sk_kb *kb, const int32_t query[3], int side, int32_t (*out)[3],
                        int cap);

/* Keeps a uniform sample of `keep` of atoms[0..count) (without replacement)
 * at the front, drawing from rng; returns how many are kept (all of them when
 * keep <= 0 or keep >= count). */
int sk_rank_sample(int32_t (*atoms)[3], int count, int keep, uint64_t *rng);
/* The stream query `query`'s corruptions are sampled from (head side, then
 * tail), apart from its tie-breaking stream sk_rng_seed(seed, query). */
uint64_t sk_rank_sample_stream(uint64_t seed, int query);

/* The rank (1-based) of a candidate scoring true_score among others[0..count):
 * 1 + those strictly above + a uniform draw in 0..ties over those equal.
 * Draws from rng only when there are ties. */
int sk_rank_position(double true_score, const double *others, int count, uint64_t *rng);

/* Adds one rank to sum (1/rank and hits as 0/1); sk_rank_mean divides by count. */
void sk_rank_metrics_add(sk_rank_metrics *sum, int rank);
sk_rank_metrics sk_rank_mean(sk_rank_metrics sum, int count);
/* From the sums of `total` queries' head and tail positions: each ranked
 * side's means, and the mean over the ranked sides (over 2 * total for both). */
void sk_rank_side_means(int sides, int total, sk_rank_metrics head, sk_rank_metrics tail,
                        sk_rank_metrics *head_out, sk_rank_metrics *tail_out,
                        sk_rank_metrics *overall);

#endif
