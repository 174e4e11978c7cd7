/*
 * --tune-on valid (modules/prover/rank_tune.c, issue 38 ask 1): the hybrid's
 * weights and the proof search chosen on the valid split, on two knowledge
 * bases built here whose answers are known, proved by a hand-built policy
 * (every weight zero: greedy takes the first successor, facts before rules).
 *
 * Both have one rule, knows(X,Y), worksIn(Y,Z) -> worksIn(X,Z), six persons
 * and two cities; the KGE is TransE in 2 dimensions with the rows set by hand
 * (worksIn's relation vector 0, so worksIn(p, k) scores gamma - |p - k|).
 *
 *   mislead: the true valid and test queries (p5 works in k1, p6 in k2) have
 *            no proof (they know nobody), while their three head corruptions
 *            left after filtering (p2, p3, p4 know p1, who works in both) are
 *            proved; the tail sides have none (filtered). The KGE puts p5 on k1
 *            and p6 on k2, the others 10 or more away: KGE-only ranks every
 *            query first, RL-only fourth on the head side, and so does a proof
 *            bonus of 10. The tuned ranking must fall back to the KGE.
 *   help:    the true queries are proved (p2 knows p1, in k1; p6 knows p5, in
 *            k2) and none of their corruptions is; the KGE ranks a corruption
 *            first (p3 on k1 and p4 on k2, the true heads 5 away): KGE-only
 *            ranks each query second on the head side and first on the tail
 *            side. A proof term ranks every query first: the tuned ranking must
 *            use the proofs.
 */
#include "test_json.h"

#include "core/core.h"
#include "prover/kge.h"
#include "prover/prover.h"
#include "prover/rank.h"
#include "train/actor.h"
#include "train/eval.h"
#include "skinner/vec.h"
#include "test_prover_policy.h"

#include <math.h>
#include <sys/stat.h>

typedef struct kb_files {
    const char *name, *train, *valid, *test;
} kb_files;

static const char *const g_domains = "persons p1 p2 p3 p4 p5 p6\ncities k1 k2\n";
static const char *const g_rules = "r1:1:knows(X,Y), worksIn(Y,Z) -> worksIn(X,Z)\n";

static const kb_files g_mislead = {
    "mislead",
    "worksIn(p1,k1).\nworksIn(p1,k2).\nknows(p2,p1).\nknows(p3,p1).\nknows(p4,p1).\n"
    "worksIn(p5,k2).\nworksIn(p6,k1).\n",
    "worksIn(p5,k1).\n",
    "worksIn(p6,k2).\n",
};
static const kb_files g_help = {
    "help",
    "worksIn(p1,k1).\nknows(p2,p1).\nworksIn(p5,k2).\nknows(p6,p5).\nworksIn(p4,k1).\n",
    "worksIn(p2,k1).\n",
    "worksIn(p6,k2).\n",
};

static void write_file(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void make_kb(const kb_files *files, char *dir, size_t size) {
    snprintf(dir, size, "/tmp/skinner_test_tune_%s_XXXXXX", files->name);
    assert_non_null(mkdtemp(dir));
    write_file(dir, "domain2constants.txt", g_domains);
    write_file(dir, "rules.txt", g_rules);
    write_file(dir, "train.txt", files->train);
    write_file(dir, "valid.txt", files->valid);
    write_file(dir, "test.txt", files->test);
}

static void remove_kb(const char *dir) {
    const char *names[] = {"domain2constants.txt", "rules.txt", "train.txt", "valid.txt",
                           "test.txt", "kge.safetensors", "tuned.ini"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        unlink(path);
    }
    rmdir(dir);
}

/* Constant name's row of a TransE model in 2 dimensions: (x, y). */
static void place(sk_kge *kge, sk_kb *kb, const char *name, float x, float y) {
    int32_t c = sk_kb_find_const(kb, name);
    assert_true(c >= 1);
    float *row = sk_kge_entity(kge, c - 1);
    row[0] = x;
    row[1] = y;
}

static void hand_kge(sk_kge *kge, sk_kb *kb, const kb_files *files) {
    assert_int_equal(sk_kge_init(kge, SK_KGE_TRANSE, kb->num_consts,
                                 kb->num_preds - SK_KB_FIRST_PRED, 2, 6.0f, 1),
                     SK_OK);
    memset(kge->params, 0, (size_t)(kb->num_consts * kge->entity_width +
                                    (kb->num_preds - SK_KB_FIRST_PRED) * kge->relation_width) *
                               sizeof(float));
    place(kge, kb, "k1", 0, 0);
    place(kge, kb, "k2", 0, 20);
    const char *persons[] = {"p1", "p2", "p3", "p4", "p5", "p6"};
    for (int p = 0; p < 6; p++) place(kge, kb, persons[p], 10 + (float)p, 0);
    if (files == &g_mislead) {
        place(kge, kb, "p5", 0, 0); /* the true heads on their cities */
        place(kge, kb, "p6", 0, 20);
    } else {
        place(kge, kb, "p3", 0, 0); /* a corruption on each city, the true heads 5 away */
        place(kge, kb, "p4", 0, 20);
        place(kge, kb, "p2", 5, 0);
        place(kge, kb, "p6", 5, 20);
    }
}

typedef struct tuned_run {
    sk_rank_tuned tuned;
    sk_rank_result test;
} tuned_run;

/* Tunes on valid and ranks test with the choice, as eval.tune_on does. */
static void tune(const kb_files *files, char *dir, size_t size, tuned_run *out) {
    make_kb(files, dir, size);
    sk_kb *kb = NULL;
    assert_int_equal(sk_kb_load(&kb, dir), SK_OK);
    sk_kge kge;
    hand_kge(&kge, kb, files);
    sk_loaded_policy lp;
    zero_policy_on(&lp, "candidates", dir);
    sk_eval_host host;
    assert_int_equal(sk_eval_host_init(&host, &lp, 1), SK_OK);
    sk_rank_options o = {.split = SK_KB_TEST, .seed = 5, .kge = &kge,
                         .sides = SK_PROVER_CORRUPT_BOTH};
    assert_int_equal(sk_rank_tune(lp.env, lp.cfg, &host.policy.actor, &host.parallel, &o,
                                  &out->tuned),
                     SK_OK);
    sk_rank_tune_apply(&out->tuned, &o);
    assert_int_equal(sk_rank_run(lp.env, lp.cfg, &host.policy.actor, &host.parallel, &o,
                                 &out->test),
                     SK_OK);
    char name[160];
    sk_rank_tune_name(out->tuned.best_search, out->tuned.best_hybrid, name, sizeof name);
    print_message("%s: KGE-only valid MRR %.4f, chosen '%s' (valid %.4f); test: rl %.4f kge "
                  "%.4f hybrid %.4f\n",
                  files->name, out->tuned.kge_valid.mrr, name, out->tuned.valid_mrr,
                  out->test.overall.mrr, out->test.kge_overall.mrr, out->test.hybrid_overall.mrr);
    /* the model, saved for the program's run below */
    char model[512];
    snprintf(model, sizeof model, "%s/kge.safetensors", dir);
    sk_config *kge_cfg = sk_config_new();
    assert_int_equal(sk_kge_save(&kge, model, dir, 1, kge_cfg), SK_OK);
    sk_config_free(kge_cfg);
    sk_eval_host_free(&host);
    sk_loaded_policy_free(&lp);
    sk_kge_free(&kge);
    sk_kb_free(kb);
}

static void test_proofs_mislead_tuned_falls_back_to_kge(void **st) {
    (void)st;
    char dir[256];
    tuned_run run;
    tune(&g_mislead, dir, sizeof dir, &run);
    const sk_rank_tuned *t = &run.tuned;
    /* KGE-only ranks the valid query first on both sides */
    assert_true(fabs(t->kge_valid.mrr - 1.0) < 1e-12);
    assert_int_equal(t->best_search, -1);
    assert_true(fabs(t->valid_mrr - 1.0) < 1e-12);
    /* RL-only: the head side's truth fails below p2, p3, p4 proved (rank 4); the tail side
     * has no corruption (p5 works in k2, a train fact): rank 1. A proof bonus of 10 lifts
     * the proved corruptions over the truth's KGE score too. */
    for (int s = 0; s < SK_TUNE_SEARCHES; s++) {
        assert_true(fabs(t->valid[s][0].mrr - (0.25 + 1) / 2) < 1e-12);
        assert_true(sk_rank_tune_grid[4].proof_bonus == 10.0);
        assert_true(fabs(t->valid[s][4].mrr - (0.25 + 1) / 2) < 1e-12);
    }
    /* test: the chosen hybrid is the KGE's ranking, greedy, and ranks the query first */
    assert_int_equal(t->branches, 0);
    assert_true(t->hybrid.proof_bonus == 0.0 && t->hybrid.fail_penalty == 0.0);
    assert_true(fabs(run.test.hybrid_overall.mrr - run.test.kge_overall.mrr) < 1e-12);
    assert_true(fabs(run.test.hybrid_overall.mrr - 1.0) < 1e-12);
    assert_true(run.test.overall.mrr < 1.0); /* the policy alone does not */
    remove_kb(dir);
}

static void test_proofs_help_tuned_uses_them(void **st) {
    (void)st;
    char dir[256];
    tuned_run run;
    tune(&g_help, dir, sizeof dir, &run);
    const sk_rank_tuned *t = &run.tuned;
    /* the KGE ranks p3 above the true head p2: head rank 2, tail rank 1 (p2 is 5 from k1,
     * over 20 from k2) */
    assert_true(fabs(t->kge_valid.mrr - (0.5 + 1) / 2) < 1e-12);
    assert_true(t->best_search >= 0);
    assert_true(fabs(t->valid_mrr - 1.0) < 1e-12);
    /* the cheapest search that reaches it: greedy proves the query already */
    assert_int_equal(t->best_search, 0);
    assert_int_equal(t->branches, 0);
    /* RL-only ranks it first (proved, no corruption proved); so does every bonus */
    assert_true(fabs(t->valid[0][0].mrr - 1.0) < 1e-12);
    /* on test the choice ranks the query first, the KGE alone does not */
    assert_true(fabs(run.test.hybrid_overall.mrr - 1.0) < 1e-12);
    assert_true(fabs(run.test.kge_overall.mrr - (0.5 + 1) / 2) < 1e-12);
    remove_kb(dir);
}

/* eval.tune_on through the env's evaluation: the choice written as a preset
 * whose [eval] keys load back, and reported in the JSON. */
static void test_tune_preset_written(void **st) {
    (void)st;
    char dir[256];
    tuned_run run;
    tune(&g_help, dir, sizeof dir, &run);
    sk_loaded_policy lp;
    zero_policy_on(&lp, "candidates", dir);
    sk_config *options = sk_config_new();
    char model[512], preset[512];
    snprintf(model, sizeof model, "%s/kge.safetensors", dir);
    snprintf(preset, sizeof preset, "%s/tuned.ini", dir);
    assert_int_equal(sk_config_set(options, "eval.kge", model), SK_OK);
    assert_int_equal(sk_config_set(options, "eval.tune_on", "valid"), SK_OK);
    assert_int_equal(sk_config_set(options, "eval.tune_out", preset), SK_OK);
    assert_int_equal(sk_config_set(options, "eval.seed", "5"), SK_OK);
    sk_env_report report;
    assert_int_equal(sk_evaluate_env(&lp, options, 1, NULL, NULL, &report), SK_OK);
    print_message("%s", report.text);
    assert_non_null(strstr(report.text, "chosen: greedy, RL-only (valid MRR 1.0000)"));
    assert_non_null(strstr(report.json, "\"choice\": \"greedy, RL-only\""));
    sk_config *read = sk_config_new();
    assert_int_equal(sk_config_load_file(read, preset), SK_OK);
    assert_string_equal(sk_config_get(read, "eval.proof"), "logprob");
    assert_string_equal(sk_config_get(read, "eval.kge_weight"), "0");
    assert_string_equal(sk_config_get(read, "eval.branches"), "0");
    /* without a KGE model there is nothing to tune */
    assert_int_equal(sk_config_set(options, "eval.kge", ""), SK_OK);
    assert_int_equal(sk_evaluate_env(&lp, options, 1, NULL, NULL, &report), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "needs a KGE model"));
    sk_config_free(read);
    sk_config_free(options);
    sk_loaded_policy_free(&lp);
    remove_kb(dir);
}

/* env.shaping (issue 38 ask 3): two envs over the same KB stepped with the same random
 * actions, one shaped (c = 0.5) and one not. Each step's reward differs by exactly
 * gamma Phi(s') - Phi(s), Phi = -c x goals (0 once ended), from the goal counts read before
 * and after; with gamma 1 an episode's shaping sums to c (one goal at the start, none at
 * the end); the logged returns are equal. */
static void test_potential_shaping(void **st) {
    (void)st;
    char dir[256];
    make_kb(&g_help, dir, sizeof dir);
    const double c = 0.5;
    const char *gammas[] = {"0.9", "1"};
    for (int k = 0; k < 2; k++) {
        double gamma = atof(gammas[k]);
        sk_vec *vecs[2];
        for (int shaped = 0; shaped < 2; shaped++) {
            sk_config *cfg = sk_config_new();
            assert_int_equal(sk_config_set(cfg, "env.dataset", dir), SK_OK);
            assert_int_equal(sk_config_set(cfg, "env.negative_ratio", "1"), SK_OK);
            if (shaped) {
                assert_int_equal(sk_config_set(cfg, "env.shaping", "0.5"), SK_OK);
                assert_int_equal(sk_config_set(cfg, "env.shaping_gamma", gammas[k]), SK_OK);
            }
            assert_int_equal(sk_vec_create(&vecs[shaped], &sk_env_prover, 8, 1, cfg), SK_OK);
            sk_config_free(cfg);
            sk_vec_reset(vecs[shaped], 3);
        }
        const sk_prover_state *plain = sk_vec_state(vecs[0]);
        const sk_vec_buffers *b0 = sk_vec_buffers_of(vecs[0]), *b1 = sk_vec_buffers_of(vecs[1]);
        uint64_t rng = 5;
        double episode_shaping[8] = {0};
        int ended = 0;
        for (int t = 0; t < 400; t++) {
            int goals_before[8];
            for (int i = 0; i < 8; i++) {
                goals_before[i] = plain->num_goals[i];
                int32_t action = (int32_t)sk_rng_below(&rng, (uint32_t)plain->num_succ[i]);
                b0->actions[i] = b1->actions[i] = action;
            }
            sk_vec_step(vecs[0]);
            sk_vec_step(vecs[1]);
            for (int i = 0; i < 8; i++) {
                if (b0->truncated[i] && !b0->terminated[i]) { /* no end potential: not summed */
                    episode_shaping[i] = 0.0;
                    continue;
                }
                /* Phi(s') is 0 once ended (the state is then the next episode's) */
                double after = b0->terminated[i] ? 0.0 : -c * plain->num_goals[i];
                double want = gamma * after + c * goals_before[i];
                double got = (double)b1->rewards[i] - (double)b0->rewards[i];
                if (fabs(got - want) > 1e-5)
                    fail_msg("step %d env %d: shaping %g, expected %g (%d goals before)", t, i,
                             got, want, goals_before[i]);
                episode_shaping[i] += got;
                if (b0->terminated[i]) {
                    assert_float_equal(b0->episode_log[i * 4], b1->episode_log[i * 4], 0.0f);
                    if (gamma == 1.0) assert_true(fabs(episode_shaping[i] - c) < 1e-4);
                    episode_shaping[i] = 0.0;
                    ended++;
                }
            }
        }
        print_message("gamma %s: %d episodes ended\n", gammas[k], ended);
        assert_true(ended > 50);
        sk_vec_destroy(vecs[0]);
        sk_vec_destroy(vecs[1]);
    }
    remove_kb(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proofs_mislead_tuned_falls_back_to_kge),
        cmocka_unit_test(test_proofs_help_tuned_uses_them),
        cmocka_unit_test(test_tune_preset_written),
        cmocka_unit_test(test_potential_shaping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
