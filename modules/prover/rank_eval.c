/* The ranking as Prover-v0's own evaluation (sk_prover_ranking, rank.h):
 * the eval.* options in, sk_rank_run, and its figures out as metrics, the
 * text table of `skinner eval` and the members of `skinner eval --json`. */
#include "rank.h"

#include "proofs.h"
#include "skinner.h"

#include <stdlib.h>
#include "kge.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* eval.* options; a bad value names its key and what was expected. The
 * table hosts show and check (sk_prover_eval_options, eval_options.c) keeps
 * the same ranges and defaults. */
static sk_status read_options(const sk_config *options, sk_rank_options *out) {
    memset(out, 0, sizeof *out);
    const char *split = sk_cfg_string(options, "eval.split", "test");
    if (!sk_rank_split_parse(split, &out->split))
        return sk_fail(SK_ERR_INVALID, "eval.split '%s' (expected train, valid or test)", split);
    const char *corrupt = sk_cfg_string(options, "eval.corrupt", NULL);
    if (corrupt && !sk_prover_corrupt_parse(corrupt, &out->sides))
        return sk_fail(SK_ERR_INVALID, "eval.corrupt '%s' (expected head, tail or both)", corrupt);
    int64_t queries, seed, batch, negatives, branches, alternatives;
    static const char *const proof_terms[] = {"fixed", "logprob", NULL};
    int proof_term = 0;
    sk_status status = sk_cfg_int(options, "eval.queries", 0, 0, INT32_MAX, &queries);
    if (status == SK_OK) status = sk_cfg_int(options, "eval.seed", 1, 0, INT64_MAX, &seed);
    if (status == SK_OK) status = sk_cfg_int(options, "eval.batch", 0, 0, 1 << 20, &batch);
    if (status == SK_OK)
        status = sk_cfg_int(options, "eval.negatives", 0, 0, INT32_MAX, &negatives);
    if (status == SK_OK) status = sk_cfg_int(options, "eval.branches", 0, 0, 1 << 16, &branches);
    if (status == SK_OK)
        status = sk_cfg_int(options, "eval.alternatives", 1, 1, 1 << 16, &alternatives);
    if (status == SK_OK)
        status = sk_cfg_double(options, "eval.kge_weight", SK_RANK_KGE_WEIGHT, 0.0, 1e6,
                               &out->kge_weight);
    if (status == SK_OK)
        status = sk_cfg_double(options, "eval.rl_weight", SK_RANK_RL_WEIGHT, 0.0, 1e6,
                               &out->rl_weight);
    if (status == SK_OK)
        status = sk_cfg_double(options, "eval.proof_bonus", SK_RANK_PROOF_BONUS, -1e6, 1e6,
                               &out->proof_bonus);
    if (status == SK_OK)
        status = sk_cfg_double(options, "eval.fail_penalty", SK_RANK_FAIL_PENALTY, -1e6, 1e6,
                               &out->fail_penalty);
    if (status == SK_OK)
        status = sk_cfg_choice(options, "eval.proof", "fixed", proof_terms, &proof_term);
    bool prune = true;
    if (status == SK_OK) status = sk_cfg_bool(options, "eval.prune", true, &prune);
    if (status != SK_OK) return status;
    out->unpruned = !prune;
    out->max_queries = (int)queries;
    out->seed = (uint64_t)seed;
    out->batch = (int)batch;
    out->negatives = (int)negatives;
    out->branches = (int)branches;
    out->alternatives = (int)alternatives;
    out->proof_term = (sk_rank_proof_term)proof_term;
    return SK_OK;
}

static void add_metric(sk_env_report *out, const char *prefix, const char *name, double value) {
    SK_ASSERT(out->num_metrics < SK_MAX_METRICS);
    sk_metric *m = &out->metrics[out->num_metrics++];
    snprintf(m->name, sizeof m->name, "%s%s", prefix, name);
    m->value = value;
}

static void add_side(sk_env_report *out, const char *prefix, const sk_rank_metrics *m) {
    add_metric(out, prefix, "mrr", m->mrr);
    add_metric(out, prefix, "hits1", m->hits1);
    add_metric(out, prefix, "hits3", m->hits3);
    add_metric(out, prefix, "hits10", m->hits10);
}

/* Appends to a fixed buffer; the report's texts are a few hundred bytes. */
static void append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...) {
    size_t used = strlen(buf);
    SK_ASSERT(used < size);
    va_list args;
    va_start(args, fmt);
    vsnprintf(buf + used, size - used, fmt, args);
    va_end(args);
}

static void side_json(char *buf, size_t size, const char *name, const sk_rank_metrics *m,
                      const char *end) {
    append(buf, size,
           "\"%s\": {\"mrr\": %.6g, \"hits1\": %.6g, \"hits3\": %.6g, \"hits10\": %.6g}%s",
           name, m->mrr, m->hits1, m->hits3, m->hits10, end);
}

/* What --tune-on chose, and each choice's valid MRR: one line per search. */
static void report_tuned(const sk_rank_tuned *t, const char *preset, sk_env_report *out) {
    append(out->text, sizeof out->text,
           "tuned on valid (%.1f s), valid MRR: KGE-only %.4f; per search: RL-only | proof "
           "bonus 0.3 1 3 10 | 0.1 log p, fail 1 10 | 1 log p, fail 1 10\n",
           t->seconds, t->kge_valid.mrr);
    append(out->json, sizeof out->json, ", \"tuned\": {\"kge_valid_mrr\": %.6g, \"valid_mrr\": [",
           t->kge_valid.mrr);
    for (int s = 0; s < SK_TUNE_SEARCHES; s++) {
        char name[160];
        sk_rank_tune_name(s, 0, name, sizeof name);
        *strchr(name, ',') = '\0';
        append(out->text, sizeof out->text, "  %-13s", name);
        append(out->json, sizeof out->json, "%s[", s ? ", " : "");
        for (int g = 0; g < SK_TUNE_HYBRIDS; g++) {
            append(out->text, sizeof out->text, "%s%.4f", g == 1 || g == 5 ? " | " : " ",
                   t->valid[s][g].mrr);
            append(out->json, sizeof out->json, "%s%.6g", g ? ", " : "", t->valid[s][g].mrr);
        }
        append(out->text, sizeof out->text, "\n");
        append(out->json, sizeof out->json, "]");
    }
    char name[160];
    sk_rank_tune_name(t->best_search, t->best_hybrid, name, sizeof name);
    append(out->text, sizeof out->text, "chosen: %s (valid MRR %.4f)%s%s\n", name, t->valid_mrr,
           preset ? "; preset " : "", preset ? preset : "");
    append(out->json, sizeof out->json,
           "], \"choice\": \"%s\", \"chosen_valid_mrr\": %.6g, \"kge_weight\": %g, "
           "\"proof\": \"%s\", \"proof_bonus\": %g, \"rl_weight\": %g, \"fail_penalty\": %g, "
           "\"branches\": %d, \"alternatives\": %d, \"seconds\": %.3f}",
           name, t->valid_mrr, t->hybrid.kge_weight,
           t->hybrid.proof_term == SK_RANK_PROOF_LOGPROB ? "logprob" : "fixed",
           t->hybrid.proof_bonus, t->hybrid.rl_weight, t->hybrid.fail_penalty, t->branches,
           t->alternatives, t->seconds);
}

static void report(const sk_env_def *env, const sk_rank_options *options, const sk_rank_result *r,
                   sk_env_report *out) {
    bool head = r->sides & SK_PROVER_CORRUPT_HEAD, tail = r->sides & SK_PROVER_CORRUPT_TAIL;
    add_side(out, "", &r->overall);
    if (head) add_side(out, "head_", &r->head);
    if (tail) add_side(out, "tail_", &r->tail);
    add_metric(out, "", "queries", r->queries);
    add_metric(out, "", "candidates", (double)r->candidates);
    add_metric(out, "", "head_corruptions", (double)r->head_corruptions);
    add_metric(out, "", "tail_corruptions", (double)r->tail_corruptions);
    add_metric(out, "", "proved_rate", r->proved_rate);
    add_metric(out, "", "seconds", r->seconds);
    add_metric(out, "", "steps", (double)r->steps);
    add_metric(out, "", "settled", (double)r->settled);
    const char *split = sk_rank_split_name(options->split);
    const char *sides = sk_prover_corrupt_name(r->sides);
    append(out->json, sizeof out->json,
           "\"split\": \"%s\", \"corrupt\": \"%s\", \"queries\": %d, \"candidates\": %lld, "
           "\"head_corruptions\": %lld, \"tail_corruptions\": %lld, \"proved_rate\": %.6g, "
           "\"seconds\": %.3f, \"steps\": %lld, \"model_atoms\": %lld, \"model_used\": %s, "
           "\"settled\": %lld, \"dead_states\": %lld, \"branches\": %d, \"alternatives\": %d, "
           "\"seed\": %llu, "
           "\"mrr\": %.6g, \"hits1\": %.6g, "
           "\"hits3\": %.6g, \"hits10\": %.6g, ",
           split, sides, r->queries, (long long)r->candidates, (long long)r->head_corruptions,
           (long long)r->tail_corruptions, r->proved_rate, r->seconds, (long long)r->steps,
           (long long)r->model_atoms, r->model_used ? "true" : "false", (long long)r->settled,
           (long long)r->dead_states, options->branches,
           options->branches ? options->alternatives : 0,
           (unsigned long long)options->seed, r->overall.mrr, r->overall.hits1, r->overall.hits3,
           r->overall.hits10);
    /* a side that was not ranked has no entry */
    if (head) side_json(out->json, sizeof out->json, "head", &r->head, tail ? ", " : "");
    if (tail) side_json(out->json, sizeof out->json, "tail", &r->tail, "");
    append(out->text, sizeof out->text,
           "%s ranking, %s split, %s corruptions: %d queries, %lld candidates, %.1f s; true "
           "queries proved: %.1f%%\n",
           env->id, split, sides, r->queries, (long long)r->candidates, r->seconds,
           100.0 * r->proved_rate);
    if (options->branches)
        append(out->text, sizeof out->text,
               "proof search: the greedy proof, then the next %d most likely action%s at each "
               "of its first %d steps\n",
               options->alternatives, options->alternatives == 1 ? "" : "s", options->branches);
    if (r->model_used)
        append(out->text, sizeof out->text,
               "least model: %lld atoms; %.1f%% of the candidates are outside it and failed "
               "without a proof; %lld policy steps\n",
               (long long)r->model_atoms, 100.0 * (double)r->settled / (double)r->candidates,
               (long long)r->steps);
    else if (r->model_atoms)
        append(out->text, sizeof out->text,
               "least model: over %lld atoms, not used; %lld policy steps\n",
               (long long)r->model_atoms, (long long)r->steps);
    append(out->text, sizeof out->text, "%-8s %7s %7s %7s %7s\n", "", "MRR", "Hits@1", "Hits@3",
           "Hits@10");
    const char *names[3] = {"head", "tail", "overall"};
    const sk_rank_metrics *rows[3] = {&r->head, &r->tail, &r->overall};
    const bool shown[3] = {head, tail, true};
    for (int k = 0; k < 3; k++)
        if (shown[k])
            append(out->text, sizeof out->text, "%-8s %7.3f %7.3f %7.3f %7.3f\n", names[k],
                   rows[k]->mrr, rows[k]->hits1, rows[k]->hits3, rows[k]->hits10);
    /* the true queries proved by recorded depth (the *_depths.txt files) */
    append(out->text, sizeof out->text, "true queries proved by recorded depth:");
    append(out->json, sizeof out->json, ", \"proved_by_depth\": {");
    bool first = true;
    for (int d = 0; d < SK_RANK_DEPTHS; d++) {
        if (!r->depth_count[d]) continue;
        char name[16];
        if (d == 0) snprintf(name, sizeof name, "unprovable");
        else if (d == SK_RANK_DEPTHS - 1) snprintf(name, sizeof name, "other");
        else snprintf(name, sizeof name, "%d", d);
        append(out->text, sizeof out->text, " %s %d/%d (%.1f%%)", name, r->depth_proved[d],
               r->depth_count[d], 100.0 * r->depth_proved[d] / r->depth_count[d]);
        append(out->json, sizeof out->json, "%s\"%s\": [%d, %d]", first ? "" : ", ", name,
               r->depth_proved[d], r->depth_count[d]);
        first = false;
    }
    append(out->text, sizeof out->text, "\n");
    append(out->json, sizeof out->json, "}");
    if (!r->has_kge) return;
    /* the KGE-only and hybrid figures of the same candidates */
    add_side(out, "kge_", &r->kge_overall);
    add_side(out, "hybrid_", &r->hybrid_overall);
    add_metric(out, "", "negatives_proved_rate", r->negatives_proved_rate);
    append(out->json, sizeof out->json, ", \"negatives\": %d, \"negatives_proved_rate\": %.6g, ",
           options->negatives, r->negatives_proved_rate);
    side_json(out->json, sizeof out->json, "kge", &r->kge_overall, ", ");
    side_json(out->json, sizeof out->json, "hybrid", &r->hybrid_overall, "");
    append(out->text, sizeof out->text,
           "with the KGE model: corruptions proved %.1f%%; hybrid = %g log sigmoid(kge) + %s\n",
           100.0 * r->negatives_proved_rate, options->kge_weight,
           options->proof_term == SK_RANK_PROOF_LOGPROB ? "w_rl log p(proof)"
                                                        : "a fixed proof term");
    const char *scorers[3] = {"rl", "kge", "hybrid"};
    const sk_rank_metrics *overall[3] = {&r->overall, &r->kge_overall, &r->hybrid_overall};
    for (int k = 0; k < 3; k++)
        append(out->text, sizeof out->text, "%-8s %7.3f %7.3f %7.3f %7.3f\n", scorers[k],
               overall[k]->mrr, overall[k]->hits1, overall[k]->hits3, overall[k]->hits10);
}

static sk_status ranking_run(const sk_env_def *env, const sk_config *env_cfg,
                             const sk_config *options, const sk_actor *actor,
                             const sk_parallel *parallel, sk_progress_fn progress,
                             void *progress_user, sk_env_report *out) {
    memset(out, 0, sizeof *out);
    sk_rank_options ranking;
    sk_status status = read_options(options, &ranking);
    if (status != SK_OK) return status;
    ranking.progress = progress;
    ranking.progress_user = progress_user;
    /* eval.kge: a model of `skinner kge train` for the KGE-only and hybrid figures */
    const char *kge_path = sk_cfg_string(options, "eval.kge", NULL);
    sk_kge kge;
    if (kge_path && kge_path[0]) {
        char path[4200];
        struct stat st;
        if (stat(kge_path, &st) == 0 && S_ISDIR(st.st_mode))
            snprintf(path, sizeof path, "%s/kge.safetensors", kge_path);
        else snprintf(path, sizeof path, "%s", kge_path);
        status = sk_kge_load(&kge, path, NULL, 0);
        if (status != SK_OK) return status;
        ranking.kge = &kge;
    }
    /* eval.tune_on valid: the weights and the search chosen on valid, then the ranking */
    static const char *const tune_splits[] = {"none", "valid", NULL};
    int tune_on = 0;
    status = sk_cfg_choice(options, "eval.tune_on", "none", tune_splits, &tune_on);
    const char *tune_out = sk_cfg_string(options, "eval.tune_out", NULL);
    if (tune_out && !tune_out[0]) tune_out = NULL;
    sk_rank_tuned tuned;
    if (status == SK_OK && tune_on) {
        status = sk_rank_tune(env, env_cfg, actor, parallel, &ranking, &tuned);
        if (status == SK_OK) sk_rank_tune_apply(&tuned, &ranking);
        if (status == SK_OK && tune_out) status = sk_rank_tune_write(&tuned, tune_out);
    }
    sk_rank_result r;
    if (status == SK_OK) status = sk_rank_run(env, env_cfg, actor, parallel, &ranking, &r);
    if (status == SK_OK) report(env, &ranking, &r, out);
    if (status == SK_OK && tune_on) report_tuned(&tuned, tune_out, out);
    if (ranking.kge) sk_kge_free(&kge);
    /* eval.proofs: a few of the ranked queries' proofs, for the dashboard's trees (proofs.h) */
    const char *proofs = sk_cfg_string(options, "eval.proofs", NULL);
    if (status == SK_OK && proofs && proofs[0] && parallel->part == 0) { /* one writer */
        int count = SK_MIN(r.queries, SK_PROOFS_MAX_QUERIES);
        status = sk_prover_write_proofs(env, env_cfg, actor, ranking.split, count, proofs);
        if (status == SK_OK)
            append(out->text, sizeof out->text, "proofs of %d queries written to %s\n", count,
                   proofs);
    }
    return status;
}

const sk_env_evaluation sk_prover_ranking = {
    .name = "ranking",
    .description = "MRR and Hits@1/3/10 of each query of a split among its filtered corruptions",
    .run = ranking_run,
};
