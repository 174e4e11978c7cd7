/*
 * Ranking evaluation of Prover-v0 (modules/prover/rank.h): the rank arithmetic on
 * hand-made score lists, the MRR/Hits formulas against hand-computed values,
 * the filtered corruptions, and whole rankings on a small knowledge base
 * written in DeepProofLog's format, proved by a hand-built policy whose
 * choices are known: all weights zero, so every allowed action has the same
 * logit, greedy takes the first and each step's log-probability is
 * -log(number of successors).
 *
 * The knowledge base (g_files) has two halves with their own types and rules.
 * Successors list facts first, then rules in file order, so greedy always
 * resolves a locatedIn/worksIn goal by r1/r3 (of two rules: -log 2).
 *   test:  locatedIn(c2,e) by r1 then neighborOf(c2,c1), locatedIn(c1,e) is a
 *          fact: proved, score -log 2; likewise locatedIn(c4,f) through c3.
 *          Every corruption fails on the r1 path (no neighborOf out of the
 *          corrupt country, or a chain that ends in one), so MRR is 1.
 *   valid: worksIn(p3,k1) takes r3 twice (p3 -> p2 -> p1): score -2 log 2.
 *          Its only head corruption, worksIn(p4,k1) (p1 and p2 are known,
 *          filtered), is provable in one r3 step, score -log 2: it ranks
 *          above the true query, head rank 2. The tail corruption
 *          worksIn(p3,k2) fails: tail rank 1. worksIn(p2,k1) ties with its
 *          corruption worksIn(p4,k1) (both -log 2): head rank 1 or 2 at even
 *          odds.
 */
#include "test_json.h"

#include "core/core.h"
#include "core/rng.h"
#include "prover/prover.h"
#include "prover/rank.h"
#include "io/safetensors.h"
#include "prover/kge_train.h"
#include "skinner/kge.h"
#include "train/actor.h"
#include "test_prover_policy.h"

#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define LOG2 0.69314718055994531
#define SCORE_TOL 1e-6 /* float log-probabilities summed in double */

/* ------------------------------------------------------------ arithmetic */

static void test_position_counts_strictly_higher(void **st) {
    (void)st;
    uint64_t rng = sk_rng_seed(1, 0);
    double others[] = {-1.0, -3.0, -0.5, -2.5};
    assert_int_equal(sk_rank_position(-2.0, others, 4, &rng), 3);
    assert_int_equal(sk_rank_position(0.0, others, 4, &rng), 1);
    assert_int_equal(sk_rank_position(-9.0, others, 4, &rng), 5);
    assert_int_equal(sk_rank_position(-9.0, NULL, 0, &rng), 1);
}

static void test_failed_proof_below_every_success(void **st) {
    (void)st;
    /* a true query proved with a very unlikely proof still beats every failure */
    double failed[] = {SK_RANK_FAILED, SK_RANK_FAILED, SK_RANK_FAILED};
    for (uint64_t seed = 0; seed < 100; seed++) {
        uint64_t rng = sk_rng_seed(seed, 0);
        assert_int_equal(sk_rank_position(-1e30, failed, 3, &rng), 1);
    }
    /* a failed true query sits below every proved corruption, among the failed ones */
    double mixed[] = {-1e30, SK_RANK_FAILED, -50.0, SK_RANK_FAILED};
    int seen[6] = {0};
    for (uint64_t seed = 0; seed < 300; seed++) {
        uint64_t rng = sk_rng_seed(seed, 0);
        int rank = sk_rank_position(SK_RANK_FAILED, mixed, 4, &rng);
        assert_in_range(rank, 3, 5);
        seen[rank]++;
    }
    assert_true(seen[3] > 0 && seen[4] > 0 && seen[5] > 0);
}

/* Over many seeds, a tie puts the true query uniformly among the tied. */
static void test_ties_are_uniform(void **st) {
    (void)st;
    enum { DRAWS = 30000 };
    double tied[] = {0.0, 0.0};      /* a 3-way tie: ranks 1, 2, 3 */
    double above[] = {1.0, 0.0, 0.0}; /* one above, then the same tie: 2, 3, 4 */
    int count[5] = {0};
    double sum = 0.0, sum_above = 0.0;
    uint64_t rng = sk_rng_seed(7, 0);
    for (int k = 0; k < DRAWS; k++) {
        int rank = sk_rank_position(0.0, tied, 2, &rng);
        assert_in_range(rank, 1, 3);
        count[rank]++;
        sum += rank;
        sum_above += sk_rank_position(0.0, above, 3, &rng);
    }
    /* sd of the mean: sqrt(2/3 / 30000) = 0.0047 */
    print_message("3-way tie: mean rank %.4f (1: %d, 2: %d, 3: %d)\n", sum / DRAWS, count[1],
                  count[2], count[3]);
    assert_true(fabs(sum / DRAWS - 2.0) < 0.025);
    assert_true(fabs(sum_above / DRAWS - 3.0) < 0.025);
    for (int r = 1; r <= 3; r++) assert_true(fabs(count[r] / (double)DRAWS - 1.0 / 3) < 0.015);
}

static void test_metrics_formulas(void **st) {
    (void)st;
    int ranks[] = {1, 2, 4, 11, 3};
    sk_rank_metrics sum = {0};
    for (int k = 0; k < 5; k++) sk_rank_metrics_add(&sum, ranks[k]);
    sk_rank_metrics m = sk_rank_mean(sum, 5);
    double mrr = (1.0 + 1.0 / 2 + 1.0 / 4 + 1.0 / 11 + 1.0 / 3) / 5; /* 0.434848... */
    assert_true(fabs(m.mrr - mrr) < 1e-12);
    assert_true(fabs(m.mrr - 0.43484848484848485) < 1e-12);
    assert_true(fabs(m.hits1 - 0.2) < 1e-12);  /* 1 */
    assert_true(fabs(m.hits3 - 0.6) < 1e-12);  /* 1, 2, 3 */
    assert_true(fabs(m.hits10 - 0.8) < 1e-12); /* all but 11 */
    sk_rank_metrics none = sk_rank_mean(sum, 0);
    assert_true(none.mrr == 0.0 && none.hits10 == 0.0);
}

/* ------------------------------------------------------------ the dataset */

static const char *const g_files[][2] = {
    {"domain2constants.txt", "countries c1 c2 c3 c4 c5 c6\nregions e f\n"
                             "persons p1 p2 p3 p4\ncities k1 k2\n"},
    {"rules.txt", "r1:1:neighborOf(X,Y), locatedIn(Y,Z) -> locatedIn(X,Z)\n"
                  "r2:1:neighborOf(Y,X), locatedIn(Y,Z) -> locatedIn(X,Z)\n"
                  "r3:1:knows(X,Y), worksIn(Y,Z) -> worksIn(X,Z)\n"
                  "r4:1:knows(Y,X), worksIn(Y,Z) -> worksIn(X,Z)\n"},
    {"train.txt", "locatedIn(c1,e).\nlocatedIn(c3,f).\nlocatedIn(c5,f).\n"
                  "neighborOf(c2,c1).\nneighborOf(c4,c3).\n"
                  "worksIn(p1,k1).\nknows(p2,p1).\nknows(p3,p2).\nknows(p4,p1).\n"},
    {"valid.txt", "worksIn(p3,k1).\nworksIn(p2,k1).\n"},
    {"test.txt", "locatedIn(c2,e).\nlocatedIn(c4,f).\n"},
};
#define NUM_FILES (sizeof g_files / sizeof g_files[0])

static char g_dataset[256];

static int make_dataset(void **st) {
    (void)st;
    snprintf(g_dataset, sizeof g_dataset, "/tmp/skinner_test_rank_XXXXXX");
    if (!mkdtemp(g_dataset)) return -1;
    for (size_t k = 0; k < NUM_FILES; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", g_dataset, g_files[k][0]);
        FILE *f = fopen(path, "w");
        if (!f) return -1;
        fputs(g_files[k][1], f);
        fclose(f);
    }
    return 0;
}

static void remove_run(const char *dir);

static int remove_dataset(void **st) {
    (void)st;
    for (size_t k = 0; k < NUM_FILES; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", g_dataset, g_files[k][0]);
        unlink(path);
    }
    char run[300];
    snprintf(run, sizeof run, "%s/run", g_dataset);
    remove_run(run);
    rmdir(g_dataset);
    return 0;
}

/* An atom "pred(a,b)" of kb. */
static void atom(const sk_kb *kb, const char *pred, const char *a, const char *b, int32_t out[3]) {
    out[0] = sk_kb_find_pred(kb, pred);
    out[1] = sk_kb_find_const(kb, a);
    out[2] = sk_kb_find_const(kb, b);
    assert_true(out[0] >= SK_KB_FIRST_PRED && out[1] > 0 && out[2] > 0);
}

/* Whether list[0..count) holds pred(a,b) for the constants named. */
static bool holds(const sk_kb *kb, const int32_t (*list)[3], int count, const char *pred,
                  const char *a, const char *b) {
    int32_t want[3];
    atom(kb, pred, a, b, want);
    for (int k = 0; k < count; k++)
        if (memcmp(list[k], want, sizeof want) == 0) return true;
    return false;
}

static void test_corruptions_are_filtered_and_typed(void **st) {
    (void)st;
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_load(&kb, g_dataset), SK_OK);
    int32_t query[3], out[16][3];
    atom(kb, "locatedIn", "c2", "e", query);
    /* head: the countries but c2 itself and c1 (locatedIn(c1,e) is a train fact) */
    int n = sk_rank_corruptions(kb, query, 0, out, 16);
    assert_int_equal(n, 4);
    const char *heads[] = {"c3", "c4", "c5", "c6"};
    for (int k = 0; k < 4; k++)
        assert_true(holds(kb, (const int32_t(*)[3])out, n, "locatedIn", heads[k], "e"));
    /* tail: the other region, no person or city */
    n = sk_rank_corruptions(kb, query, 1, out, 16);
    assert_int_equal(n, 1);
    assert_true(holds(kb, (const int32_t(*)[3])out, n, "locatedIn", "c2", "f"));
    /* facts of every split are filtered: worksIn(p1,k1) train, worksIn(p2,k1) valid */
    atom(kb, "worksIn", "p3", "k1", query);
    n = sk_rank_corruptions(kb, query, 0, out, 16);
    assert_int_equal(n, 1);
    assert_true(holds(kb, (const int32_t(*)[3])out, n, "worksIn", "p4", "k1"));
    /* and a test fact is filtered from a corruption of another query */
    atom(kb, "locatedIn", "c3", "f", query);
    n = sk_rank_corruptions(kb, query, 0, out, 16);
    assert_false(holds(kb, (const int32_t(*)[3])out, n, "locatedIn", "c4", "f"));
    assert_false(holds(kb, (const int32_t(*)[3])out, n, "locatedIn", "c5", "f"));
    assert_int_equal(n, 3); /* c1, c2, c6 */
    sk_kb_free(kb);
}

/* ------------------------------------------------------------ policies */

/* The ranking as `skinner eval` hosts it: the loaded policy as the actor of
 * `threads` workers (0: one per core) on a pool of as many threads. */
typedef struct rank_options {
    sk_kb_split split;
    int max_queries, sides;
    uint64_t seed;
    int threads, batch;
    bool unpruned;
    int branches, alternatives;
} rank_options;

static sk_status rank_policy(const sk_loaded_policy *lp, const rank_options *options,
                             sk_rank_result *out) {
    sk_eval_host host;
    sk_status status = sk_eval_host_init(&host, lp, options->threads);
    if (status != SK_OK) return status;
    sk_rank_options ranking = {.split = options->split, .max_queries = options->max_queries,
                               .sides = options->sides, .seed = options->seed,
                               .batch = options->batch, .unpruned = options->unpruned,
                               .branches = options->branches,
                               .alternatives = options->alternatives};
    status = sk_rank_run(lp->env, lp->cfg, &host.policy.actor, &host.parallel, &ranking, out);
    sk_eval_host_free(&host);
    return status;
}

static sk_status rank_score_search(const sk_loaded_policy *lp, const int32_t (*atoms)[3],
                                   const uint8_t *positive, int count, int threads, int batch,
                                   int branches, int alternatives, double *scores) {
    sk_eval_host host;
    sk_status status = sk_eval_host_init(&host, lp, threads);
    if (status != SK_OK) return status;
    status = sk_rank_score(lp->env, lp->cfg, &host.policy.actor, &host.parallel, atoms, positive,
                           count, batch, branches, alternatives, scores);
    sk_eval_host_free(&host);
    return status;
}

static sk_status rank_score(const sk_loaded_policy *lp, const int32_t (*atoms)[3],
                            const uint8_t *positive, int count, int threads, int batch,
                            double *scores) {
    return rank_score_search(lp, atoms, positive, count, threads, batch, 0, 0, scores);
}

/* sk_evaluate_env with one eval.* option set. */
static sk_status evaluate_with(const sk_loaded_policy *lp, const char *key, const char *value,
                               sk_env_report *out) {
    sk_config *options = sk_config_new();
    assert_non_null(options);
    if (key) assert_int_equal(sk_config_set(options, key, value), SK_OK);
    sk_status status = sk_evaluate_env(lp, options, 1, NULL, NULL, out);
    sk_config_free(options);
    return status;
}

static void zero_policy(sk_loaded_policy *lp, const char *type) {
    zero_policy_on(lp, type, g_dataset);
}

static const char *const g_policy_types[] = {"mlp", "candidates"};

static void test_scores_are_greedy_proof_log_probs(void **st) {
    (void)st;
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_load(&kb, g_dataset), SK_OK);
    int32_t atoms[7][3];
    uint8_t positive[7] = {1, 1, 0, 0, 0, 0, 1};
    atom(kb, "locatedIn", "c2", "e", atoms[0]);
    atom(kb, "worksIn", "p3", "k1", atoms[1]);
    atom(kb, "locatedIn", "c3", "e", atoms[2]);
    atom(kb, "worksIn", "p4", "k1", atoms[3]);
    atom(kb, "worksIn", "p3", "k2", atoms[4]);
    /* a train fact: as a negative it is a fact (one step, one choice: 0); as a
     * positive it is excluded and r1 leads nowhere */
    atom(kb, "locatedIn", "c1", "e", atoms[5]);
    atom(kb, "locatedIn", "c1", "e", atoms[6]);
    double want[7] = {-LOG2, -2 * LOG2, SK_RANK_FAILED, -LOG2, SK_RANK_FAILED, 0.0,
                      SK_RANK_FAILED};
    for (size_t t = 0; t < 2; t++) {
        sk_loaded_policy lp;
        zero_policy(&lp, g_policy_types[t]);
        for (int batch = 1; batch <= 8; batch++) {
            double scores[7];
            int threads = 1 + batch % 3;
            assert_int_equal(rank_score(&lp, (const int32_t(*)[3])atoms, positive, 7, threads,
                                           batch, scores),
                             SK_OK);
            for (int k = 0; k < 7; k++) {
                if (isinf(want[k])) {
                    if (scores[k] != want[k])
                        fail_msg("%s, batch %d: atom %d scored %g, want a failed proof",
                                 g_policy_types[t], batch, k, scores[k]);
                } else if (!(fabs(scores[k] - want[k]) < SCORE_TOL)) {
                    fail_msg("%s, batch %d: atom %d scored %.9g, want %.9g", g_policy_types[t],
                             batch, k, scores[k], want[k]);
                }
            }
        }
        sk_loaded_policy_free(&lp);
    }
    sk_kb_free(kb);
}

static void expect_metrics(const char *what, sk_rank_metrics got, sk_rank_metrics want) {
    if (fabs(got.mrr - want.mrr) > 1e-12 || fabs(got.hits1 - want.hits1) > 1e-12 ||
        fabs(got.hits3 - want.hits3) > 1e-12 || fabs(got.hits10 - want.hits10) > 1e-12)
        fail_msg("%s: mrr %g hits1 %g hits3 %g hits10 %g, want %g %g %g %g", what, got.mrr,
                 got.hits1, got.hits3, got.hits10, want.mrr, want.hits1, want.hits3, want.hits10);
}

static void test_ranking_end_to_end(void **st) {
    (void)st;
    const sk_rank_metrics perfect = {1, 1, 1, 1};
    for (size_t t = 0; t < 2; t++) {
        sk_loaded_policy lp;
        zero_policy(&lp, g_policy_types[t]);
        sk_rank_result r;
        /* test: every true query proved on the first-choice path, no corruption */
        rank_options options = {.split = SK_KB_TEST, .seed = 3};
        assert_int_equal(rank_policy(&lp, &options, &r), SK_OK);
        expect_metrics("test head", r.head, perfect);
        expect_metrics("test tail", r.tail, perfect);
        expect_metrics("test overall", r.overall, perfect);
        assert_int_equal(r.queries, 2);
        assert_int_equal(r.candidates, 2 + 7 + 2);
        assert_int_equal(r.head_corruptions, 4 + 3);
        assert_int_equal(r.tail_corruptions, 2);
        assert_true(r.proved_rate == 1.0);
        /* valid, first query: a corruption proved more likely than the query */
        options = (rank_options){.split = SK_KB_VALID, .max_queries = 1, .seed = 3};
        assert_int_equal(rank_policy(&lp, &options, &r), SK_OK);
        assert_int_equal(r.queries, 1);
        assert_int_equal(r.candidates, 3);
        expect_metrics("valid head", r.head, (sk_rank_metrics){0.5, 0, 1, 1});
        expect_metrics("valid tail", r.tail, perfect);
        expect_metrics("valid overall", r.overall, (sk_rank_metrics){0.75, 0.5, 1, 1});
        assert_int_equal(r.sides, SK_PROVER_CORRUPT_BOTH); /* env.corrupt's default */
        /* one side only: the other is neither proved nor counted, overall is that side */
        options.sides = SK_PROVER_CORRUPT_TAIL;
        assert_int_equal(rank_policy(&lp, &options, &r), SK_OK);
        assert_int_equal(r.sides, SK_PROVER_CORRUPT_TAIL);
        assert_int_equal(r.candidates, 2);
        assert_int_equal(r.head_corruptions, 0);
        assert_int_equal(r.tail_corruptions, 1);
        expect_metrics("valid tail only: head", r.head, (sk_rank_metrics){0});
        expect_metrics("valid tail only: tail", r.tail, perfect);
        expect_metrics("valid tail only: overall", r.overall, perfect);
        options.sides = SK_PROVER_CORRUPT_HEAD;
        assert_int_equal(rank_policy(&lp, &options, &r), SK_OK);
        assert_int_equal(r.candidates, 2);
        assert_int_equal(r.tail_corruptions, 0);
        expect_metrics("valid head only: tail", r.tail, (sk_rank_metrics){0});
        expect_metrics("valid head only: overall", r.overall, (sk_rank_metrics){0.5, 0, 1, 1});
        /* test, tail only: c2 and c4 each against the other region */
        options =
            (rank_options){.split = SK_KB_TEST, .seed = 3, .sides = SK_PROVER_CORRUPT_TAIL};
        assert_int_equal(rank_policy(&lp, &options, &r), SK_OK);
        assert_int_equal(r.candidates, 2 + 2);
        expect_metrics("test tail only", r.overall, perfect);
        options.sides = 4;
        assert_int_equal(rank_policy(&lp, &options, &r), SK_ERR_INVALID);
        sk_loaded_policy_free(&lp);
    }
}

static double report_metric(const sk_env_report *report, const char *name) {
    for (int k = 0; k < report->num_metrics; k++)
        if (strcmp(report->metrics[k].name, name) == 0) return report->metrics[k].value;
    fail_msg("the report has no metric %s", name);
    return NAN;
}

/* Prover-v0's ranking as its own evaluation (what `skinner eval` runs): the
 * eval.* options read, the figures as metrics, the table and the JSON. */
static void test_ranking_as_evaluation(void **st) {
    (void)st;
    sk_loaded_policy lp;
    zero_policy(&lp, "mlp");
    assert_true(sk_env_extras_of(&sk_env_prover)->evaluation == &sk_prover_ranking);
    sk_env_report report;
    assert_int_equal(evaluate_with(&lp, NULL, NULL, &report), SK_OK); /* test split, both sides */
    const char *names[] = {"mrr", "hits1", "head_mrr", "tail_hits10"};
    for (int k = 0; k < 4; k++) assert_true(report_metric(&report, names[k]) == 1.0);
    assert_true(report_metric(&report, "queries") == 2);
    assert_true(report_metric(&report, "candidates") == 11);
    assert_true(report_metric(&report, "proved_rate") == 1.0);
    assert_non_null(strstr(report.text, "Prover-v0 ranking, test split, both corruptions: 2 "
                                        "queries, 11 candidates"));
    assert_non_null(strstr(report.text, "overall    1.000   1.000   1.000   1.000\n"));
    char json_text[4200];
    snprintf(json_text, sizeof json_text, "{%s}", report.json);
    cJSON *json = cJSON_Parse(json_text);
    if (!json) fail_msg("the report's JSON members do not parse: %s", report.json);
    assert_true(test_json_number(json, "seed") == 1);
    assert_true(test_json_number(cJSON_GetObjectItem(json, "head"), "mrr") == 1.0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(json, "split")), "test");
    cJSON_Delete(json);
    /* valid, tail only: no head entries */
    sk_config *options = sk_config_new();
    assert_int_equal(sk_config_set(options, "eval.split", "valid"), SK_OK);
    assert_int_equal(sk_config_set(options, "eval.corrupt", "tail"), SK_OK);
    assert_int_equal(sk_config_set(options, "eval.seed", "3"), SK_OK);
    assert_int_equal(sk_evaluate_env(&lp, options, 2, NULL, NULL, &report), SK_OK);
    sk_config_free(options);
    assert_true(report_metric(&report, "candidates") == 2 + 2); /* each query and k2 */
    for (int k = 0; k < report.num_metrics; k++)
        assert_null(strstr(report.metrics[k].name, "head_mrr"));
    assert_null(strstr(report.json, "\"head\":"));
    assert_non_null(strstr(report.text, "valid split, tail corruptions"));
    /* an env without an evaluation of its own */
    lp.env = sk_env_find("CartPole-v1");
    assert_int_equal(evaluate_with(&lp, NULL, NULL, &report), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "CartPole-v1 has no evaluation"));
    lp.env = &sk_env_prover;
    sk_loaded_policy_free(&lp);
}

/* The second valid query ties with its corruption: seeded, and even odds. */
static void test_ranking_ties_by_seed(void **st) {
    (void)st;
    enum { SEEDS = 400 };
    sk_loaded_policy lp;
    zero_policy(&lp, "mlp");
    double hits1 = 0.0;
    int differ = 0;
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        rank_options options = {.split = SK_KB_VALID, .seed = seed};
        sk_rank_result r, again;
        assert_int_equal(rank_policy(&lp, &options, &r), SK_OK);
        options.batch = 1; /* the same draws whatever the batch and the workers */
        options.threads = 2;
        assert_int_equal(rank_policy(&lp, &options, &again), SK_OK);
        assert_memory_equal(&r.head, &again.head, sizeof r.head);
        /* query 1 ranks 2nd always, query 2 1st or 2nd */
        assert_true(r.head.hits1 == 0.0 || r.head.hits1 == 0.5);
        assert_true(r.head.hits3 == 1.0);
        expect_metrics("valid tail", r.tail, (sk_rank_metrics){1, 1, 1, 1});
        hits1 += r.head.hits1;
        differ += r.head.hits1 == 0.5;
    }
    hits1 /= SEEDS;
    print_message("head hits@1 over %d seeds: %.4f (expected 0.25)\n", SEEDS, hits1);
    assert_true(fabs(hits1 - 0.25) < 0.0625); /* sd 0.0125 */
    assert_true(differ > 0 && differ < SEEDS);
    sk_loaded_policy_free(&lp);
}

/* Random weights: the same result whatever the batch size and the number of
 * workers (slot reuse, idle slots, candidates claimed across threads). */
static void test_batch_size_does_not_change_results(void **st) {
    (void)st;
    for (size_t t = 0; t < 2; t++) {
        sk_loaded_policy lp;
        zero_policy(&lp, g_policy_types[t]);
        uint64_t rng = sk_rng_seed(11, t);
        sk_policy_init_params(&lp.policy, lp.params, &rng);
        for (size_t k = 0; k < lp.policy.num_params; k++) lp.params[k] *= 50.0f; /* sharp choices */
        for (int split = SK_KB_VALID; split <= SK_KB_TEST; split++) {
            sk_rank_result base, other;
            rank_options options = {.split = (sk_kb_split)split, .seed = 5, .threads = 1};
            assert_int_equal(rank_policy(&lp, &options, &base), SK_OK);
            int batches[] = {1, 2, 3, 5}, threads[] = {1, 3, 2, 4};
            for (int b = 0; b < 4; b++) {
                options.batch = batches[b];
                options.threads = threads[b];
                assert_int_equal(rank_policy(&lp, &options, &other), SK_OK);
                assert_memory_equal(&base.head, &other.head, sizeof base.head);
                assert_memory_equal(&base.tail, &other.tail, sizeof base.tail);
                assert_true(base.proved_rate == other.proved_rate);
                assert_int_equal(base.candidates, other.candidates);
            }
        }
        sk_loaded_policy_free(&lp);
    }
}

/* A candidates policy's weights do not depend on S: ranked through an env
 * configured with room for 40 successors (where countries never has more
 * than 20), the same weights give the same ranks as through the default
 * table; and the configured table is accepted as Prover-v0's. */
static void test_configured_successors_rank_the_same(void **st) {
    (void)st;
    sk_loaded_policy lp, wide;
    zero_policy(&lp, "candidates");
    uint64_t rng = sk_rng_seed(17, 0);
    sk_policy_init_params(&lp.policy, lp.params, &rng);
    for (size_t k = 0; k < lp.policy.num_params; k++) lp.params[k] *= 20.0f;
    memset(&wide, 0, sizeof wide);
    wide.cfg = sk_config_new();
    assert_int_equal(sk_config_set(wide.cfg, "env.dataset", g_dataset), SK_OK);
    assert_int_equal(sk_config_set(wide.cfg, "policy.type", "candidates"), SK_OK);
    assert_int_equal(sk_config_set(wide.cfg, "env.max_successors", "40"), SK_OK);
    assert_int_equal(sk_env_configure(&sk_env_prover, wide.cfg, &wide.env), SK_OK);
    assert_int_equal(wide.env->mask_size, 40);
    void *probe = NULL;
    assert_int_equal(sk_env_prover.create(&probe, 1, wide.cfg), SK_OK);
    assert_int_equal(sk_policy_configure(&wide.policy, wide.cfg, wide.env, probe), SK_OK);
    sk_env_prover.destroy(probe);
    assert_int_equal(wide.policy.num_params, lp.policy.num_params);
    assert_int_equal(wide.policy.obs_size, wide.env->obs_size);
    wide.params = sk_alloc(wide.policy.num_params * sizeof(float));
    assert_non_null(wide.params);
    memcpy(wide.params, lp.params, lp.policy.num_params * sizeof(float));
    rank_options options = {.split = SK_KB_TEST, .seed = 4, .threads = 2};
    sk_rank_result base, other;
    assert_int_equal(rank_policy(&lp, &options, &base), SK_OK);
    if (rank_policy(&wide, &options, &other) != SK_OK) fail_msg("%s", sk_last_error());
    assert_memory_equal(&base.head, &other.head, sizeof base.head);
    assert_memory_equal(&base.tail, &other.tail, sizeof base.tail);
    assert_true(base.proved_rate == other.proved_rate);
    sk_loaded_policy_free(&lp);
    sk_loaded_policy_free(&wide);
}

/* The hand-made kb, countries_s3 and family (paths into countries and family). */
static void three_datasets(const char *shared, char countries[4200], char family[4200],
                           const char *datasets[3]) {
    snprintf(countries, 4200, "%s/datasets/countries_s3", shared);
    snprintf(family, 4200, "%s/datasets/family", shared);
    datasets[0] = g_dataset, datasets[1] = countries, datasets[2] = family;
}

/* The ranking of rank_policy, recomputed the long way: every candidate
 * proved to the end (sk_rank_score, no bound), ranked with the same draws.
 * Returns how many corruptions were proved with a lower score than their true
 * query (sk_rank_run must cut those short, at the last step at the latest). */
static int reference_ranking(const sk_loaded_policy *lp, const sk_kb *kb, sk_kb_split split,
                             int max_queries, uint64_t seed, int branches, int alternatives,
                             sk_rank_result *out) {
    memset(out, 0, sizeof *out);
    const sk_kb_atoms *queries = &kb->queries[split];
    int total = max_queries && max_queries < queries->count ? max_queries : queries->count;
    enum { CAP = 8192 };
    int32_t(*atoms)[3] = malloc(CAP * sizeof *atoms);
    uint8_t *positive = calloc(CAP, 1);
    double *scores = malloc(CAP * sizeof *scores);
    assert_true(atoms && positive && scores);
    sk_rank_metrics head = {0}, tail = {0};
    int below = 0;
    for (int q = 0; q < total; q++) {
        memcpy(atoms[0], queries->atoms[q], sizeof atoms[0]);
        positive[0] = 1;
        int n_head = sk_rank_corruptions(kb, atoms[0], 0, atoms + 1, CAP - 1);
        int n_tail = sk_rank_corruptions(kb, atoms[0], 1, atoms + 1 + n_head, CAP - 1 - n_head);
        int count = 1 + n_head + n_tail;
        assert_int_equal(rank_score_search(lp, (const int32_t(*)[3])atoms, positive, count, 1, 64,
                                           branches, alternatives, scores),
                         SK_OK);
        for (int k = 1; k < count; k++) /* proved, but less likely: cut by the bound */
            below += scores[k] > SK_RANK_FAILED && scores[k] < scores[0];
        uint64_t rng = sk_rng_seed(seed, (uint64_t)q);
        sk_rank_metrics_add(&head, sk_rank_position(scores[0], scores + 1, n_head, &rng));
        sk_rank_metrics_add(&tail, sk_rank_position(scores[0], scores + 1 + n_head, n_tail, &rng));
        out->proved_rate += scores[0] > SK_RANK_FAILED;
    }
    out->head = sk_rank_mean(head, total);
    out->tail = sk_rank_mean(tail, total);
    out->proved_rate /= total;
    free(atoms);
    free(positive);
    free(scores);
    return below;
}

/* Corruptions are proved only as far as needed to tell them from the true
 * query's score; the ranks are those of proving every one to the end. With
 * random, moderately sharp weights, proofs have log-probabilities well below
 * 0, so many corruptions fall below their true query on the way. */
static void test_cut_proofs_rank_the_same(void **st) {
    (void)st;
    REQUIRE_SHARED(shared);
    char countries[4200], family[4200];
    const char *datasets[3];
    three_datasets(shared, countries, family, datasets);
    const char *names[] = {"hand-made", "countries_s3", "family"};
    int64_t dead_states = 0;
    double greedy_proved = 0.0;
    int searched_more = 0;
    for (size_t d = 0; d < 3; d++) {
        sk_kb *kb = NULL;
        assert_int_equal(sk_kb_load(&kb, datasets[d]), SK_OK);
        /* family: its first queries only (6,000 corruptions each), one policy */
        int inits = d == 2 ? 1 : 3, max_queries = d == 2 ? 12 : 0;
        for (uint64_t init = 0; init < (uint64_t)inits; init++) {
            sk_loaded_policy lp;
            zero_policy_on(&lp, "candidates", datasets[d]);
            uint64_t rng = sk_rng_seed(21, init);
            sk_policy_init_params(&lp.policy, lp.params, &rng);
            for (size_t k = 0; k < lp.policy.num_params; k++) lp.params[k] *= 5.0f;
            for (int split = d == 2 ? SK_KB_TEST : SK_KB_VALID; split <= SK_KB_TEST; split++)
            for (int branches = 0; branches <= 3; branches += 3) {
                sk_rank_result want, got;
                /* family with the search: its first 3 queries */
                int queries = d == 2 && branches ? 3 : max_queries;
                int below = reference_ranking(&lp, kb, (sk_kb_split)split, queries, 9,
                                              branches, 2, &want);
                rank_options options = {.split = (sk_kb_split)split, .seed = 9, .threads = 2,
                                        .batch = 16, .max_queries = queries,
                                        .branches = branches, .alternatives = 2};
                assert_int_equal(rank_policy(&lp, &options, &got), SK_OK);
                print_message("%s, init %llu, %s, %d branches: MRR head %.4f tail %.4f, proved "
                              "%.3f, %d corruptions proved below their query; %lld settled by "
                              "the least model, %lld proofs stopped at a state outside it\n",
                              names[d], (unsigned long long)init,
                              sk_rank_split_name((sk_kb_split)split), branches, got.head.mrr,
                              got.tail.mrr, got.proved_rate, below, (long long)got.settled,
                              (long long)got.dead_states);
                assert_memory_equal(&want.head, &got.head, sizeof want.head);
                assert_memory_equal(&want.tail, &got.tail, sizeof want.tail);
                assert_true(want.proved_rate == got.proved_rate);
                if (d == 1) assert_true(below > 0); /* the cut was exercised */
                /* the least model settled candidates without a step */
                assert_true(got.model_used);
                if (d > 0) assert_true(got.settled > 0);
                dead_states += got.dead_states;
                /* and without it: the same ranks, every candidate proved */
                sk_rank_result unpruned;
                options.unpruned = true;
                assert_int_equal(rank_policy(&lp, &options, &unpruned), SK_OK);
                assert_memory_equal(&want.head, &unpruned.head, sizeof want.head);
                assert_memory_equal(&want.tail, &unpruned.tail, sizeof want.tail);
                assert_true(!unpruned.model_used && unpruned.settled == 0 &&
                            unpruned.steps > got.steps);
                /* the search proves every true query greedy proofs do, and more */
                /* (on the same queries: not family's, ranked on fewer with the search) */
                if (branches == 0) greedy_proved = got.proved_rate;
                else if (d < 2) assert_true(got.proved_rate >= greedy_proved);
                searched_more += branches > 0 && d < 2 && got.proved_rate > greedy_proved;
            }
            sk_loaded_policy_free(&lp);
        }
        sk_kb_free(kb);
    }
    assert_true(dead_states > 0); /* proofs were stopped on the way, too */
    assert_true(searched_more > 0);
}

/* ---- the branch search, against an enumeration of its paths ---- */

enum { PATH_CAP = 64 };
/* The enumeration acts on one row at a time, as the ranking does with batch = 1, and their
 * scores agree to the bit. On batches of 16 rows the policy's float log-probabilities differ in
 * their last bits (up to 1e-5 relative over a proof of log-probability -4, relative to
 * max(1, -score) here); where two actions' probabilities are that close, the other one may be
 * taken and the path changes: up to 1% of the candidates are let through (9 of 8,312 with 3
 * alternatives at the time of writing, among random policies' many near-equal choices). */
#define SEARCH_SCORE_TOL 1e-4

/* One path of atom's proof in env slot 0 of vec, acting through actor's worker 0: with
 * branch < 0 the greedy path, recorded into path_* (len steps); with branch = t, the greedy
 * path's first t actions, then the best action at t other than tried[0..*num_tried) (whose
 * probabilities add up to *tried_mass; the action taken is added to them), then greedy
 * actions. Returns the path's log-probability (the branch step's as a share of the whole
 * distribution) if it ends proved, else SK_RANK_FAILED. */
typedef struct enum_path {
    int32_t action[PATH_CAP];
    float logp[PATH_CAP];
    int allowed[PATH_CAP], len;
    int32_t tried[PATH_CAP];
    int num_tried;
    double tried_mass;
} enum_path;

static double enumerated_path(sk_vec *vec, const sk_actor *actor, const int32_t atom[3],
                              bool positive, int branch, enum_path *p) {
    const sk_env_def *env = sk_vec_env(vec);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    sk_prover_set_query(sk_vec_state(vec), sk_vec_io(vec), 0, atom, positive);
    uint8_t mask[2048];
    assert_true(env->mask_size <= (int)sizeof mask);
    double sum = 0.0;
    for (int t = 0;; t++) {
        assert_true(t < PATH_CAP);
        int32_t action;
        float logp;
        if (branch >= 0 && t < branch) {
            action = p->action[t];
            logp = p->logp[t];
        } else {
            memcpy(mask, b->masks, (size_t)env->mask_size);
            int allowed = 0;
            for (int j = 0; j < env->mask_size; j++) allowed += mask[j] != 0;
            if (t == branch)
                for (int k = 0; k < p->num_tried; k++) mask[p->tried[k]] = 0;
            actor->act(actor->ctx, 0, b->obs, mask, 1, true, &action, &logp);
            if (t == branch) {
                logp += (float)log1p(-p->tried_mass);
                p->tried[p->num_tried++] = action;
                p->tried_mass += exp((double)logp);
            }
            if (branch < 0) p->action[t] = action, p->logp[t] = logp, p->allowed[t] = allowed;
        }
        sum += logp;
        b->actions[0] = action;
        sk_vec_step_range(vec, 0, 1);
        if (b->terminated[0] || b->truncated[0]) {
            if (branch < 0) p->len = t + 1;
            bool proved = b->terminated[0] &&
                          b->episode_log[SK_PROVER_LOG_PROVED] > 0.5f;
            return proved ? sum : SK_RANK_FAILED;
        }
    }
}

/* The branch search's score of atom, enumerated: the best of the greedy path and of each
 * branch at its first `branches` steps: the 2nd to (alternatives + 1)th most likely actions
 * there, as far as the step allows them. *greedy gets the greedy path's score. */
static double enumerated_search(sk_vec *vec, const sk_actor *actor, const int32_t atom[3],
                                bool positive, int branches, int alternatives, double *greedy) {
    enum_path p = {0};
    double best = enumerated_path(vec, actor, atom, positive, -1, &p);
    *greedy = best;
    for (int t = 0; t < branches && t < p.len; t++) {
        p.tried[0] = p.action[t];
        p.num_tried = 1;
        p.tried_mass = exp((double)p.logp[t]);
        for (int rank = 2; rank <= alternatives + 1 && rank <= p.allowed[t]; rank++)
            best = fmax(best, enumerated_path(vec, actor, atom, positive, t, &p));
    }
    return best;
}

/* sk_rank_score with branches = B gives every candidate the best proof of the paths the search
 * defines (enumerated one by one in a single env here, with no cut), on random sharp policies
 * (one env slot per worker, two workers; and nearly always the same on batches of 16 slots):
 * true queries and corruptions of countries_s3 and the hand-made kb, and family's test
 * queries. The search must prove candidates the greedy proof fails, and find better proofs of
 * some it proves. */
static void test_branch_search_scores(void **st) {
    (void)st;
    REQUIRE_SHARED(shared);
    char countries[4200], family[4200];
    const char *datasets[3];
    three_datasets(shared, countries, family, datasets);
    enum { BRANCHES = 4, ALTERNATIVES = 3, CAP = 4096 };
    int32_t(*atoms)[3] = malloc(CAP * sizeof *atoms);
    uint8_t *positive = malloc(CAP);
    double *scores = malloc(CAP * sizeof *scores);
    assert_true(atoms && positive && scores);
    double *batched = malloc(CAP * sizeof *batched);
    assert_non_null(batched);
    int rescued = 0, improved = 0, total = 0, near_ties = 0;
    double worst = 0.0;
    for (size_t d = 0; d < 3; d++) {
        sk_kb *kb = NULL;
        assert_int_equal(sk_kb_load(&kb, datasets[d]), SK_OK);
        int count = 0;
        const sk_kb_atoms *test = &kb->queries[SK_KB_TEST];
        int cap = d == 2 ? 300 : CAP - 64; /* family: its first 300 true queries */
        for (int q = 0; q < test->count && count < cap; q++) {
            memcpy(atoms[count], test->atoms[q], sizeof atoms[0]);
            positive[count++] = 1;
            if (d == 2) continue; /* family: true queries only */
            int n = sk_rank_corruptions(kb, test->atoms[q], 1, atoms + count, CAP - count);
            memset(positive + count, 0, (size_t)n);
            count += n;
        }
        for (uint64_t init = 0; init < 2; init++) {
            sk_loaded_policy lp;
            zero_policy_on(&lp, "candidates", datasets[d]);
            uint64_t rng = sk_rng_seed(33, init);
            sk_policy_init_params(&lp.policy, lp.params, &rng);
            for (size_t k = 0; k < lp.policy.num_params; k++) lp.params[k] *= 5.0f;
            assert_int_equal(rank_score_search(&lp, (const int32_t(*)[3])atoms, positive, count, 2,
                                               1, BRANCHES, ALTERNATIVES, scores),
                             SK_OK);
            assert_int_equal(rank_score_search(&lp, (const int32_t(*)[3])atoms, positive, count, 2,
                                               16, BRANCHES, ALTERNATIVES, batched),
                             SK_OK);
            sk_eval_host host;
            assert_int_equal(sk_eval_host_init(&host, &lp, 1), SK_OK);
            sk_vec *vec = NULL;
            assert_int_equal(sk_vec_create(&vec, lp.env, 1, 1, lp.cfg), SK_OK);
            sk_vec_reset(vec, 1);
            int mismatches = 0;
            for (int k = 0; k < count; k++) {
                double greedy, want = enumerated_search(vec, &host.policy.actor, atoms[k],
                                                        positive[k], BRANCHES, ALTERNATIVES,
                                                        &greedy);
                bool same = isinf(want) ? scores[k] == want : fabs(scores[k] - want) < SCORE_TOL;
                if (!isinf(want)) worst = fmax(worst, fabs(scores[k] - want));
                bool close = isinf(scores[k]) ? batched[k] == scores[k]
                                              : fabs(batched[k] - scores[k]) <
                                                    SEARCH_SCORE_TOL * fmax(1.0, -scores[k]);
                near_ties += !close;
                if (!same && mismatches++ < 5)
                    print_error("dataset %zu, init %llu, candidate %d: searched %.9g, "
                                "enumerated %.9g (greedy %.9g)\n",
                                d, (unsigned long long)init, k, scores[k], want, greedy);
                rescued += greedy == SK_RANK_FAILED && want > SK_RANK_FAILED;
                improved += greedy > SK_RANK_FAILED && want > greedy;
            }
            total += count;
            assert_int_equal(mismatches, 0);
            sk_vec_destroy(vec);
            sk_eval_host_free(&host);
            sk_loaded_policy_free(&lp);
        }
        sk_kb_free(kb);
    }
    print_message("branch search over %d candidates: %d proved only by a branch, %d proved "
                  "better; worst difference %.2e; %d scored otherwise on batches of 16\n",
                  total, rescued, improved, worst, near_ties);
    assert_true(rescued > 0 && improved > 0);
    assert_true(near_ties * 100 <= total);
    free(batched);
    free(atoms);
    free(positive);
    free(scores);
}

/* countries_s3 with the zero policy: the counts of the real dataset, and the
 * same figures at any batch size. */
static void test_countries_batches_agree(void **st) {
    (void)st;
    REQUIRE_SHARED(shared);
    char dataset[4200];
    snprintf(dataset, sizeof dataset, "%s/datasets/countries_s3", shared);
    sk_loaded_policy lp;
    zero_policy_on(&lp, "candidates", dataset);
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_load(&kb, dataset), SK_OK);
    int64_t head = 0, tail = 0;
    int32_t out[1024][3];
    const sk_kb_atoms *queries = &kb->queries[SK_KB_TEST];
    for (int q = 0; q < queries->count; q++) {
        head += sk_rank_corruptions(kb, queries->atoms[q], 0, out, 1024);
        tail += sk_rank_corruptions(kb, queries->atoms[q], 1, out, 1024);
    }
    sk_kb_free(kb);
    sk_rank_result a, b;
    rank_options options = {.split = SK_KB_TEST, .seed = 1, .threads = 1};
    assert_int_equal(rank_policy(&lp, &options, &a), SK_OK);
    options.batch = 7;
    options.threads = 3;
    assert_int_equal(rank_policy(&lp, &options, &b), SK_OK);
    print_message("countries_s3, zero policy: MRR %.3f (head %.3f, tail %.3f), proved %.2f, "
                  "%lld candidates in %.2f s\n",
                  a.overall.mrr, a.head.mrr, a.tail.mrr, a.proved_rate, (long long)a.candidates,
                  a.seconds);
    assert_int_equal(a.queries, 24);
    assert_int_equal(a.head_corruptions, head);
    assert_int_equal(a.tail_corruptions, tail);
    assert_int_equal(a.tail_corruptions, 24 * 4); /* 5 regions, none other known */
    assert_int_equal(a.candidates, 24 + head + tail);
    assert_memory_equal(&a.overall, &b.overall, sizeof a.overall);
    /* per recorded depth: test_depths.txt's counts, read here independently */
    int want[SK_RANK_DEPTHS] = {0}, proved = 0, counted = 0;
    char path[4300], line[512];
    snprintf(path, sizeof path, "%s/test_depths.txt", dataset);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        const char *space = strrchr(line, ' ');
        if (!space) continue;
        int depth = atoi(space + 1);
        want[depth == -1 ? 0 : depth >= 1 && depth < SK_RANK_DEPTHS - 1 ? depth : SK_RANK_DEPTHS - 1]++;
    }
    fclose(f);
    for (int d = 0; d < SK_RANK_DEPTHS; d++) {
        assert_int_equal(a.depth_count[d], want[d]);
        assert_true(a.depth_proved[d] <= a.depth_count[d]);
        proved += a.depth_proved[d];
        counted += a.depth_count[d];
    }
    assert_int_equal(counted, a.queries);
    assert_int_equal(proved, (int)lround(a.proved_rate * a.queries));
    sk_loaded_policy_free(&lp);
}


/* Progress within one query: a WN18RR query has ~80k corruptions, which take
 * seconds; the ranking reports the candidates started while it works, not
 * only when a batch of queries is done. */
typedef struct progress_log {
    int candidate_reports, query_reports;
    int last_done, last_total;
} progress_log;

static void log_progress(int done, int total, const char *unit, void *user) {
    progress_log *log = user;
    assert_true(done >= 0 && done <= total);
    if (strcmp(unit, "candidates") == 0) {
        log->candidate_reports++;
        log->last_done = done;
        log->last_total = total;
    } else {
        assert_string_equal(unit, "queries");
        log->query_reports++;
    }
}

static void test_progress_within_a_query(void **st) {
    (void)st;
    REQUIRE_SHARED(shared);
    char dataset[4200];
    snprintf(dataset, sizeof dataset, "%s/datasets/wn18rr", shared);
    sk_loaded_policy lp;
    zero_policy_on(&lp, "mlp", dataset);
    sk_config *options = sk_config_new();
    assert_int_equal(sk_config_set(options, "eval.queries", "1"), SK_OK);
    progress_log log = {0};
    sk_env_report report;
    assert_int_equal(sk_evaluate_env(&lp, options, 1, log_progress, &log, &report), SK_OK);
    print_message("%d reports within the query (last %d/%d candidates), %d after queries\n",
                  log.candidate_reports, log.last_done, log.last_total, log.query_reports);
    assert_true(log.candidate_reports >= 1);
    assert_true(log.last_total > 1000 && log.last_done > 0);
    assert_int_equal(log.query_reports, 1);
    sk_config_free(options);
    sk_loaded_policy_free(&lp);
}

static void test_errors(void **st) {
    (void)st;
    sk_rank_result r;
    sk_loaded_policy missing;
    assert_int_equal(sk_policy_load(&missing, "/nonexistent/policy.safetensors", "Prover-v0"),
                     SK_ERR_IO);
    /* options reach the ranking as eval.* keys, checked there */
    sk_loaded_policy zero;
    zero_policy(&zero, "mlp");
    sk_env_report report;
    assert_int_equal(evaluate_with(&zero, "eval.split", "exam", &report), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "'exam'"));
    assert_int_equal(evaluate_with(&zero, "eval.queries", "-1", &report), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "eval.queries"));
    assert_int_equal(evaluate_with(&zero, "eval.corrupt", "relation", &report), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "eval.corrupt 'relation'"));
    assert_int_equal(evaluate_with(&zero, "eval.queue", "1", &report), SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), "eval.queue"));
    sk_loaded_policy_free(&zero);
    sk_kb_split split = SK_KB_TRAIN;
    assert_true(sk_rank_split_parse("valid", &split) && split == SK_KB_VALID);
    assert_true(sk_rank_split_parse("test", &split) && split == SK_KB_TEST);
    assert_false(sk_rank_split_parse("Test", &split));
    assert_string_equal(sk_rank_split_name(SK_KB_TRAIN), "train");
    sk_loaded_policy lp;
    zero_policy(&lp, "mlp");
    lp.env = sk_env_find("CartPole-v1");
    rank_options options = {.split = SK_KB_TEST};
    assert_int_equal(rank_policy(&lp, &options, &r), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "Prover-v0"));
    lp.env = &sk_env_prover;
    /* the train split has no explicit queries here: its facts are the queries */
    options.split = SK_KB_TRAIN;
    options.max_queries = 3;
    assert_int_equal(rank_policy(&lp, &options, &r), SK_OK);
    assert_int_equal(r.queries, 3);
    sk_loaded_policy_free(&lp);
}

/* ------------------------------------------------------------ the program */

/* Runs the skinner program with args (NULL-terminated); its stdout into out.
 * Returns the exit code, or -1 if it did not exit normally. */
static int run_skinner(char *out, size_t size, const char *const *args) {
    char path[300];
    snprintf(path, sizeof path, "%s/stdout.txt", g_dataset);
    char *argv[96];
    int argc = 0;
    argv[argc++] = (char *)SKINNER_BINARY;
    for (int k = 0; args[k]; k++) {
        if (argc == 95) fail_msg("more than 94 arguments for %s", SKINNER_BINARY);
        argv[argc++] = (char *)args[k];
    }
    argv[argc] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(path, "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(125);
        alarm(120);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, size - 1, f);
    out[n] = '\0';
    fclose(f);
    unlink(path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void remove_run(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void test_cli_eval_ranks_prover(void **st) {
    (void)st;
    setenv("SKINNER_CONFIG_DIR", SKINNER_SOURCE_DIR "/configs", 1);
    char run[300], checkpoint[400], out[8192];
    snprintf(run, sizeof run, "%s/run", g_dataset);
    snprintf(checkpoint, sizeof checkpoint, "%s/policy.safetensors", run);
    const char *train[] = {"train", "prover", "--env.dataset", g_dataset, "--total-steps", "4096",
                           "--run-dir", run, "--quiet", NULL};
    assert_int_equal(run_skinner(out, sizeof out, train), 0);

    const char *json_args[] = {"eval", "Prover-v0", "--checkpoint", checkpoint, "--json", NULL};
    assert_int_equal(run_skinner(out, sizeof out, json_args), 0);
    cJSON *json = cJSON_Parse(out);
    if (!json) fail_msg("eval --json printed no JSON object: %s", out);
    const char *keys[] = {"mrr", "hits1", "hits3", "hits10"};
    for (int k = 0; k < 4; k++) {
        double v = test_json_number(json, keys[k]);
        assert_true(v >= 0.0 && v <= 1.0);
        double head = test_json_number(cJSON_GetObjectItem(json, "head"), keys[k]);
        double tail = test_json_number(cJSON_GetObjectItem(json, "tail"), keys[k]);
        assert_true(fabs(v - (head + tail) / 2) < 1e-5);
    }
    assert_true(test_json_number(json, "queries") == 2);
    assert_true(test_json_number(json, "candidates") == 11);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(json, "corrupt")), "both");
    cJSON_Delete(json);

    /* --corrupt tail: the tail side only, and it is the overall figure */
    const char *tail_args[] = {"eval", "Prover-v0", "--checkpoint", checkpoint, "--corrupt",
                               "tail", "--json", NULL};
    assert_int_equal(run_skinner(out, sizeof out, tail_args), 0);
    json = cJSON_Parse(out);
    if (!json) fail_msg("eval --corrupt tail --json printed no JSON object: %s", out);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(json, "corrupt")), "tail");
    assert_null(cJSON_GetObjectItem(json, "head"));
    for (int k = 0; k < 4; k++)
        assert_true(test_json_number(json, keys[k]) ==
                    test_json_number(cJSON_GetObjectItem(json, "tail"), keys[k]));
    assert_true(test_json_number(json, "candidates") == 4);
    assert_true(test_json_number(json, "head_corruptions") == 0);
    cJSON_Delete(json);
    const char *bad_side[] = {"eval", "Prover-v0", "--checkpoint", checkpoint, "--corrupt",
                              "relation", NULL};
    assert_int_equal(run_skinner(out, sizeof out, bad_side), 2);

    const char *table[] = {"eval", "prover", "--checkpoint", checkpoint, "--split", "valid",
                           "--queries", "1", NULL};
    assert_int_equal(run_skinner(out, sizeof out, table), 0);
    assert_non_null(strstr(out, "valid split, both corruptions: 1 queries, 3 candidates"));
    assert_non_null(strstr(out, "overall"));
    assert_non_null(strstr(out, "Hits@10"));

    /* the generic form of the same options (issue 31 ask 3): --eval.KEY for each alias, and
     * --eval.prune false for --no-prune, rank the same */
    const char *generic[] = {"eval", "prover", "--checkpoint", checkpoint, "--eval.split",
                             "valid", "--eval.queries=1", NULL};
    char generic_out[8192];
    assert_int_equal(run_skinner(generic_out, sizeof generic_out, generic), 0);
    assert_non_null(strstr(generic_out, "valid split, both corruptions: 1 queries, 3 candidates"));
    const char *figures[][12] = {
        {"eval", "Prover-v0", "--checkpoint", checkpoint, "--corrupt", "head", "--no-prune",
         "--negatives", "2", "--seed", "5", "--json"},
        {"eval", "Prover-v0", "--checkpoint", checkpoint, "--eval.corrupt", "head",
         "--eval.prune", "false", "--eval.negatives", "2", "--eval.seed=5", "--json"},
    };
    double mrr[2], candidates[2];
    for (int f = 0; f < 2; f++) {
        const char *args[13] = {0};
        memcpy(args, figures[f], sizeof figures[f]);
        assert_int_equal(run_skinner(out, sizeof out, args), 0);
        json = cJSON_Parse(out);
        if (!json) fail_msg("eval --json printed no JSON object: %s", out);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(json, "corrupt")), "head");
        mrr[f] = test_json_number(json, "mrr");
        candidates[f] = test_json_number(json, "candidates");
        cJSON_Delete(json);
    }
    assert_true(mrr[0] == mrr[1] && candidates[0] == candidates[1]);
    assert_true(candidates[0] == 2 + 2 * 2); /* 2 queries, 2 sampled corruptions each */

    /* every option the env's table declares is one the ranking reads (an unread eval.* key is
     * refused as unknown): each at a value of its declared kind and range */
    const sk_env_option *options = sk_env_extras_of(sk_env_find("Prover-v0"))->eval_options;
    const char *all[80] = {"eval", "Prover-v0", "--checkpoint", checkpoint, "--eval.queries", "1"};
    int argc = 6, given = 0;
    char flags[32][40], values[32][40];
    for (const sk_env_option *option = options; option->name && given < 32; option++) {
        if (strcmp(option->name, "queries") == 0 || option->kind == SK_OPTION_PATH) continue;
        snprintf(flags[given], sizeof flags[given], "--eval.%s", option->name);
        if (option->kind == SK_OPTION_CHOICE)
            snprintf(values[given], sizeof values[given], "%s", option->choices[0]);
        else if (option->kind == SK_OPTION_BOOL)
            snprintf(values[given], sizeof values[given], "true");
        else snprintf(values[given], sizeof values[given], "%.0f", option->low);
        all[argc++] = flags[given];
        all[argc++] = values[given++];
    }
    all[argc] = NULL;
    assert_true(argc > 6 + 2 * 10);
    assert_int_equal(run_skinner(out, sizeof out, all), 0);
    assert_non_null(strstr(out, "train split, head corruptions: 1 queries"));

    const char *episodes[] = {"eval", "Prover-v0", "--checkpoint", checkpoint, "--episodes", "6",
                              "--json", NULL};
    assert_int_equal(run_skinner(out, sizeof out, episodes), 0);
    json = cJSON_Parse(out);
    if (!json) fail_msg("eval --episodes --json printed no JSON object: %s", out);
    assert_true(test_json_number(json, "episodes") == 6);
    assert_null(cJSON_GetObjectItem(json, "mrr"));
    cJSON_Delete(json);

    const char *bad_split[] = {"eval", "Prover-v0", "--checkpoint", checkpoint, "--split", "exam",
                               NULL};
    assert_int_equal(run_skinner(out, sizeof out, bad_split), 2);
    const char *mixed[] = {"eval", "Prover-v0", "--checkpoint", checkpoint, "--episodes", "3",
                           "--queries", "1", NULL};
    assert_int_equal(run_skinner(out, sizeof out, mixed), 2);
    const char *other_env[] = {"eval", "cartpole", "--checkpoint", checkpoint, "--split", "test",
                               NULL};
    assert_int_equal(run_skinner(out, sizeof out, other_env), 2);
}

/* ------------------------------------------------------------ with a KGE model */

/* The KGE-only figures of a split, computed here from sk_kge_score and the
 * filtered corruptions (no sampling; KGE scores of floats do not tie here). */
static sk_rank_metrics kge_expected(const sk_kge *kge, const sk_kb *kb, sk_kb_split split, int side) {
    const sk_kb_atoms *queries = &kb->queries[split];
    sk_rank_metrics sum = {0};
    int32_t out[64][3];
    for (int q = 0; q < queries->count; q++) {
        const int32_t *a = queries->atoms[q];
        double truth = sk_kge_score(kge, sk_kge_entity(kge, a[1] - 1),
                                    sk_kge_relation(kge, a[0] - SK_KB_FIRST_PRED),
                                    sk_kge_entity(kge, a[2] - 1));
        int n = sk_rank_corruptions(kb, a, side, out, 64), above = 0;
        for (int k = 0; k < n; k++) {
            double score = sk_kge_score(kge, sk_kge_entity(kge, out[k][1] - 1),
                                        sk_kge_relation(kge, out[k][0] - SK_KB_FIRST_PRED),
                                        sk_kge_entity(kge, out[k][2] - 1));
            assert_true(score != truth);
            above += score > truth;
        }
        sk_rank_metrics_add(&sum, 1 + above);
    }
    return sk_rank_mean(sum, queries->count);
}

/* Hybrid ranking: the KGE-only figures are the model's own; with no proof
 * term the hybrid score ranks as the KGE score does; a proof bonus lifts the
 * proved true queries above their unproved corruptions; --negatives keeps N
 * corruptions per side. */
static void test_hybrid_with_kge(void **st) {
    (void)st;
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_load(&kb, g_dataset), SK_OK);
    sk_kge kge;
    assert_int_equal(sk_kge_init(&kge, SK_KGE_ROTATE, kb->num_consts,
                                 kb->num_preds - SK_KB_FIRST_PRED, 4, 2.0f, 7),
                     SK_OK);
    sk_loaded_policy lp;
    zero_policy(&lp, "candidates");
    sk_eval_host host;
    assert_int_equal(sk_eval_host_init(&host, &lp, 1), SK_OK);
    sk_rank_options o = {.split = SK_KB_TEST, .seed = 3, .kge = &kge, .kge_weight = 1.0,
                         .proof_bonus = 0.0, .fail_penalty = 0.0};
    sk_rank_result r;
    assert_int_equal(sk_rank_run(lp.env, lp.cfg, &host.policy.actor, &host.parallel, &o, &r), SK_OK);
    assert_true(r.has_kge);
    expect_metrics("kge head", r.kge_head, kge_expected(&kge, kb, SK_KB_TEST, 0));
    expect_metrics("kge tail", r.kge_tail, kge_expected(&kge, kb, SK_KB_TEST, 1));
    expect_metrics("hybrid without a proof term = kge", r.hybrid_overall, r.kge_overall);
    expect_metrics("rl unchanged by the model", r.overall, (sk_rank_metrics){1, 1, 1, 1});
    assert_true(r.negatives_proved_rate == 0.0); /* no corruption of test is proved */
    /* no test_depths.txt here: every query under "not recorded", all of them proved */
    assert_int_equal(r.depth_count[SK_RANK_DEPTHS - 1], r.queries);
    assert_int_equal(r.depth_proved[SK_RANK_DEPTHS - 1], r.queries);
    for (int d = 0; d < SK_RANK_DEPTHS - 1; d++) assert_int_equal(r.depth_count[d], 0);
    /* the same KGE-only figures from sk_kge_rank */
    sk_kge_rank_options ko = {.split = SK_KB_TEST, .sides = SK_PROVER_CORRUPT_BOTH, .seed = 3,
                              .threads = 1};
    sk_rank_result kr;
    assert_int_equal(sk_kge_rank(&kge, kb, &ko, &kr), SK_OK);
    expect_metrics("sk_kge_rank", kr.overall, r.kge_overall);
    /* a proof bonus: every test query is proved and none of its corruptions */
    o.proof_bonus = 10.0;
    assert_int_equal(sk_rank_run(lp.env, lp.cfg, &host.policy.actor, &host.parallel, &o, &r), SK_OK);
    expect_metrics("hybrid with a bonus", r.hybrid_overall, (sk_rank_metrics){1, 1, 1, 1});
    /* valid's first query: one of its corruptions is proved */
    o.split = SK_KB_VALID;
    o.max_queries = 1;
    assert_int_equal(sk_rank_run(lp.env, lp.cfg, &host.policy.actor, &host.parallel, &o, &r), SK_OK);
    assert_true(r.negatives_proved_rate > 0.0);
    /* one sampled corruption per side: test has 4 + 3 head and 2 tail corruptions */
    o = (sk_rank_options){.split = SK_KB_TEST, .seed = 3, .negatives = 1};
    assert_int_equal(sk_rank_run(lp.env, lp.cfg, &host.policy.actor, &host.parallel, &o, &r), SK_OK);
    assert_int_equal(r.head_corruptions, 2);
    assert_int_equal(r.tail_corruptions, 2);
    assert_int_equal(r.candidates, 2 + 4);
    assert_false(r.has_kge);
    o.negatives = 100; /* more than there are: all of them */
    assert_int_equal(sk_rank_run(lp.env, lp.cfg, &host.policy.actor, &host.parallel, &o, &r), SK_OK);
    assert_int_equal(r.head_corruptions, 4 + 3);
    assert_int_equal(r.tail_corruptions, 2);
    /* a model of another dataset is refused */
    sk_kge other;
    assert_int_equal(sk_kge_init(&other, SK_KGE_TRANSE, kb->num_consts + 1, 1, 4, 2.0f, 1), SK_OK);
    o.kge = &other;
    assert_int_equal(sk_rank_run(lp.env, lp.cfg, &host.policy.actor, &host.parallel, &o, &r),
                     SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "trained on the same dataset"));
    sk_kge_free(&other);
    sk_eval_host_free(&host);
    sk_loaded_policy_free(&lp);
    sk_kge_free(&kge);
    sk_kb_free(kb);
}

/* skinner kge train | eval, and eval Prover-v0 --kge, through the program. */
typedef struct kge_calls {
    int starts, epochs, ranked, stop_after;
    int64_t last_epoch;
} kge_calls;

static void kge_started(const sk_kge_train_summary *sizes, void *user) {
    kge_calls *calls = user;
    calls->starts++;
    assert_true(sizes->entities > 0 && sizes->train_facts > 0);
}

static bool kge_epoch_done(const sk_kge_epoch *epoch, void *user) {
    kge_calls *calls = user;
    calls->epochs++;
    calls->ranked += epoch->ranked;
    assert_true(epoch->epoch == calls->last_epoch + 1);
    assert_true(isfinite(epoch->loss));
    calls->last_epoch = epoch->epoch;
    return calls->stop_after == 0 || epoch->epoch < calls->stop_after;
}

static int csv_rows(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int lines = 0;
    for (int c; (c = fgetc(f)) != EOF;) lines += c == '\n';
    fclose(f);
    return lines - 1; /* the header */
}

/* skinner/kge.h's drivers (issue 31 ask 3: the CLI and Python call them):
 * sizes and epochs reported through the callbacks, one metrics row an
 * epoch, a stop on the callback's word, the ranking of the trained model
 * equal to the figures computed here from its scores, and config errors as
 * SK_ERR_CONFIG (the CLI's usage errors). */
static void test_kge_library(void **st) {
    (void)st;
    char run[300], metrics[400], model[400];
    snprintf(run, sizeof run, "%s/kgelib", g_dataset);
    snprintf(metrics, sizeof metrics, "%s/metrics.csv", run);
    snprintf(model, sizeof model, "%s/kge.safetensors", run);
    sk_config *cfg = sk_config_new();
    const char *keys[][2] = {{"kge.dataset", g_dataset}, {"kge.dim", "4"}, {"kge.epochs", "3"},
                             {"kge.batch_size", "4"}, {"kge.negatives", "3"},
                             {"kge.eval_every", "2"}, {"kge.threads", "1"}, {"kge.run_dir", run}};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        assert_int_equal(sk_config_set(cfg, keys[k][0], keys[k][1]), SK_OK);
    kge_calls calls = {0};
    sk_kge_train_summary summary;
    assert_int_equal(sk_kge_train_run(cfg, NULL, kge_started, kge_epoch_done, &calls, &summary),
                     SK_OK);
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_load(&kb, g_dataset), SK_OK);
    assert_int_equal(calls.starts, 1);
    assert_int_equal(calls.epochs, 3);
    assert_int_equal(calls.ranked, 2); /* epoch 2 (eval_every) and the last */
    assert_true(summary.epochs == 3 && summary.first_epoch == 1 && summary.ranked);
    assert_int_equal(summary.entities, kb->num_consts);
    assert_int_equal(summary.train_facts, kb->facts[SK_KB_TRAIN].count);
    assert_string_equal(summary.model_path, model);
    assert_int_equal(csv_rows(metrics), 3);
    assert_null(sk_config_get(cfg, "kge.force")); /* the caller's config is not changed */

    /* the model ranks the test split as its scores say */
    sk_config *eval = sk_config_new();
    assert_int_equal(sk_config_set(eval, "kge.checkpoint", run), SK_OK);
    sk_kge_eval_summary ranked;
    assert_int_equal(sk_kge_eval_run(eval, &ranked), SK_OK);
    sk_kge kge;
    assert_int_equal(sk_kge_load(&kge, model, NULL, 0), SK_OK);
    sk_rank_metrics head = kge_expected(&kge, kb, SK_KB_TEST, 0);
    sk_rank_metrics tail = kge_expected(&kge, kb, SK_KB_TEST, 1);
    expect_metrics("library head", (sk_rank_metrics){ranked.head.mrr, ranked.head.hits1,
                                                      ranked.head.hits3, ranked.head.hits10}, head);
    expect_metrics("library tail", (sk_rank_metrics){ranked.tail.mrr, ranked.tail.hits1,
                                                      ranked.tail.hits3, ranked.tail.hits10}, tail);
    assert_true(fabs(ranked.overall.mrr - (head.mrr + tail.mrr) / 2) < 1e-12);
    assert_true(ranked.head_ranked && ranked.tail_ranked);
    assert_string_equal(ranked.split, "test");
    assert_int_equal(ranked.queries, kb->queries[SK_KB_TEST].count);
    sk_kge_free(&kge);
    assert_int_equal(sk_config_set(eval, "kge.corrupt", "sideways"), SK_OK);
    assert_int_equal(sk_kge_eval_run(eval, &ranked), SK_ERR_CONFIG);
    sk_config_free(eval);

    /* a stop after epoch 1: SK_ERR_INTERRUPTED with one metrics row */
    assert_int_equal(sk_config_set(cfg, "kge.force", "true"), SK_OK);
    calls = (kge_calls){.stop_after = 1};
    assert_int_equal(sk_kge_train_run(cfg, NULL, NULL, kge_epoch_done, &calls, &summary),
                     SK_ERR_INTERRUPTED);
    assert_int_equal(calls.epochs, 1);
    assert_int_equal(csv_rows(metrics), 1);
    /* an unknown key, and a resume with a config file, are the caller's to change */
    assert_int_equal(sk_config_set(cfg, "kge.dimension", "4"), SK_OK);
    assert_int_equal(sk_kge_train_run(cfg, NULL, NULL, NULL, NULL, &summary), SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), "kge.dimension"));
    sk_config *resume = sk_config_new();
    assert_int_equal(sk_config_set(resume, "kge.resume", run), SK_OK);
    assert_int_equal(sk_kge_train_run(resume, "x.ini", NULL, NULL, NULL, &summary), SK_ERR_CONFIG);
    sk_config_free(resume);
    sk_config_free(cfg);
    sk_kb_free(kb);
    remove_run(run);
}

static void test_cli_kge(void **st) {
    (void)st;
    char run[300], model[400], policy[300], out[8192];
    snprintf(run, sizeof run, "%s/kgerun", g_dataset);
    snprintf(model, sizeof model, "%s/kge.safetensors", run);
    snprintf(policy, sizeof policy, "%s/run", g_dataset); /* test_cli_eval_ranks_prover's */
    const char *train[] = {"kge", "train", "--dataset", g_dataset, "--dim", "4", "--epochs", "3",
                           "--batch-size", "4", "--negatives", "3", "--run-dir", run, "--quiet",
                           NULL};
    assert_int_equal(run_skinner(out, sizeof out, train), 0);
    struct stat info;
    assert_int_equal(stat(model, &info), 0);
    /* a model is not overwritten without --force */
    assert_int_equal(run_skinner(out, sizeof out, train), 1);
    const char *eval[] = {"kge", "eval", "--checkpoint", run, "--json", NULL};
    assert_int_equal(run_skinner(out, sizeof out, eval), 0);
    cJSON *json = cJSON_Parse(out);
    if (!json) fail_msg("kge eval --json printed no JSON object: %s", out);
    assert_true(test_json_number(json, "queries") == 2);
    double mrr = test_json_number(json, "mrr");
    assert_true(mrr > 0.0 && mrr <= 1.0);
    cJSON_Delete(json);
    /* the hybrid figures beside the RL ones */
    const char *hybrid[] = {"eval", "Prover-v0", "--checkpoint", policy, "--kge", run,
                            "--negatives", "2", "--json", NULL};
    assert_int_equal(run_skinner(out, sizeof out, hybrid), 0);
    json = cJSON_Parse(out);
    if (!json) fail_msg("eval --kge --json printed no JSON object: %s", out);
    assert_true(test_json_number(cJSON_GetObjectItem(json, "kge"), "mrr") > 0.0);
    assert_true(test_json_number(cJSON_GetObjectItem(json, "hybrid"), "mrr") > 0.0);
    assert_true(test_json_number(json, "negatives") == 2);
    cJSON_Delete(json);
    /* resume: 2 epochs, then resumed to 4, is the run of 4 (every tensor) */
    char whole[300], part[300];
    snprintf(whole, sizeof whole, "%s/kgewhole", g_dataset);
    snprintf(part, sizeof part, "%s/kgepart", g_dataset);
    const char *four[] = {"kge", "train", "--dataset", g_dataset, "--dim", "4", "--epochs", "4",
                          "--batch-size", "4", "--negatives", "3", "--eval-every", "2",
                          "--threads", "2", "--run-dir", whole, "--quiet", NULL};
    assert_int_equal(run_skinner(out, sizeof out, four), 0);
    const char *two[] = {"kge", "train", "--dataset", g_dataset, "--dim", "4", "--epochs", "2",
                         "--batch-size", "4", "--negatives", "3", "--eval-every", "2",
                         "--threads", "2", "--run-dir", part, "--quiet", NULL};
    assert_int_equal(run_skinner(out, sizeof out, two), 0);
    const char *more[] = {"kge", "train", "--resume", part, "--epochs", "4", "--quiet", NULL};
    assert_int_equal(run_skinner(out, sizeof out, more), 0);
    const char *changed[] = {"kge", "train", "--resume", part, "--epochs", "6", "--dim", "5",
                             "--quiet", NULL};
    assert_int_equal(run_skinner(out, sizeof out, changed), 2); /* the model's size is the run's */
    char a_path[400], b_path[400];
    snprintf(a_path, sizeof a_path, "%s/kge.safetensors", whole);
    snprintf(b_path, sizeof b_path, "%s/kge.safetensors", part);
    sk_st_file *a = NULL, *b = NULL;
    assert_int_equal(sk_st_open(&a, a_path), SK_OK);
    assert_int_equal(sk_st_open(&b, b_path), SK_OK);
    const char *names[] = {"kge.entities", "kge.relations", "state.adam_m", "state.adam_v",
                           "state.counters", "state.rng", "state.order"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const sk_st_tensor *ta = sk_st_find(a, names[k]), *tb = sk_st_find(b, names[k]);
        assert_non_null(ta);
        assert_non_null(tb);
        size_t bytes = sk_st_dtype_size(ta->dtype);
        for (int d = 0; d < ta->ndim; d++) bytes *= (size_t)ta->shape[d];
        if (memcmp(ta->data, tb->data, bytes) != 0) fail_msg("resumed %s differs", names[k]);
    }
    sk_st_close(a);
    sk_st_close(b);
    remove_run(whole);
    remove_run(part);
    /* bad input: an unknown model or key, no dataset, a damaged model */
    const char *bad_model[] = {"kge", "train", "--dataset", g_dataset, "--model", "distmult",
                               "--run-dir", run, "--force", "--quiet", NULL};
    assert_int_equal(run_skinner(out, sizeof out, bad_model), 2);
    const char *bad_schedule[] = {"kge", "train", "--dataset", g_dataset, "--lr-schedule",
                                  "linear", "--run-dir", run, "--force", "--quiet", NULL};
    assert_int_equal(run_skinner(out, sizeof out, bad_schedule), 2);
    /* --help after a kge command is the usage, not an option that needs a value */
    const char *help[] = {"kge", "eval", "--checkpoint", run, "--help", NULL};
    assert_int_equal(run_skinner(out, sizeof out, help), 0);
    assert_non_null(strstr(out, "usage: skinner kge train"));
    const char *bad_key[] = {"kge", "train", "--dataset", g_dataset, "--dimension", "4", NULL};
    assert_int_equal(run_skinner(out, sizeof out, bad_key), 2);
    const char *no_data[] = {"kge", "train", "--dim", "4", NULL};
    assert_int_equal(run_skinner(out, sizeof out, no_data), 2);
    FILE *f = fopen(model, "r+b");
    assert_non_null(f);
    fseek(f, -4, SEEK_END);
    fputc(0x7f, f); /* a flipped byte: the checksum no longer matches */
    fclose(f);
    assert_int_equal(run_skinner(out, sizeof out, eval), 1);
    assert_int_equal(run_skinner(out, sizeof out, hybrid), 1);
    remove_run(run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hybrid_with_kge),
        cmocka_unit_test(test_position_counts_strictly_higher),
        cmocka_unit_test(test_failed_proof_below_every_success),
        cmocka_unit_test(test_ties_are_uniform),
        cmocka_unit_test(test_metrics_formulas),
        cmocka_unit_test(test_corruptions_are_filtered_and_typed),
        cmocka_unit_test(test_scores_are_greedy_proof_log_probs),
        cmocka_unit_test(test_ranking_end_to_end),
        cmocka_unit_test(test_ranking_as_evaluation),
        cmocka_unit_test(test_ranking_ties_by_seed),
        cmocka_unit_test(test_batch_size_does_not_change_results),
        cmocka_unit_test(test_configured_successors_rank_the_same),
        cmocka_unit_test(test_countries_batches_agree),
        cmocka_unit_test(test_cut_proofs_rank_the_same),
        cmocka_unit_test(test_branch_search_scores),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_progress_within_a_query),
        cmocka_unit_test(test_cli_eval_ranks_prover),
        cmocka_unit_test(test_cli_kge),
        cmocka_unit_test(test_kge_library),
    };
    return cmocka_run_group_tests(tests, make_dataset, remove_dataset);
}
