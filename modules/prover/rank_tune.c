/* --tune-on valid (eval.tune_on): the hybrid's weights and the proof search
 * chosen on the valid split, then used on the split asked for (rank.h,
 * sk_rank_tune). Each search is one ranking of the valid queries; the
 * hybrids of the grid are scored from its proofs, so the grid costs the KGE
 * scores once and a sort per hybrid, not a ranking each. */
#include "rank_internal.h"

#include "skinner.h"

#include <stdio.h>
#include <string.h>

/* The searches tried, cheapest first: greedy, then the searches of
 * docs/prover.md's Proof search table that moved family (3 x 3, 5 x 5). */
static const int g_branches[SK_TUNE_SEARCHES] = {0, 3, 5};
static const int g_alternatives[SK_TUNE_SEARCHES] = {1, 3, 5};

/* The hybrids tried with each search. Ranks do not change when every term is
 * scaled, so the KGE weight stays 1 where the KGE counts and the grid moves
 * the proof terms against it; RL-only weighs the KGE 0. A failure's penalty
 * of 1e6 puts every failed proof below every proof. */
const sk_rank_hybrid sk_rank_tune_grid[SK_TUNE_HYBRIDS] = {
    {.kge_weight = 0, .rl_weight = 1, .fail_penalty = 1e6, .proof_term = SK_RANK_PROOF_LOGPROB},
    {.kge_weight = 1, .proof_bonus = 0.3, .proof_term = SK_RANK_PROOF_FIXED},
    {.kge_weight = 1, .proof_bonus = 1, .proof_term = SK_RANK_PROOF_FIXED},
    {.kge_weight = 1, .proof_bonus = 3, .proof_term = SK_RANK_PROOF_FIXED},
    {.kge_weight = 1, .proof_bonus = 10, .proof_term = SK_RANK_PROOF_FIXED},
    {.kge_weight = 1, .rl_weight = 0.1, .fail_penalty = 1, .proof_term = SK_RANK_PROOF_LOGPROB},
    {.kge_weight = 1, .rl_weight = 0.1, .fail_penalty = 10, .proof_term = SK_RANK_PROOF_LOGPROB},
    {.kge_weight = 1, .rl_weight = 1, .fail_penalty = 1, .proof_term = SK_RANK_PROOF_LOGPROB},
    {.kge_weight = 1, .rl_weight = 1, .fail_penalty = 10, .proof_term = SK_RANK_PROOF_LOGPROB},
};

/* KGE-only: log sigmoid is increasing, so these rank as the KGE scores do. */
static const sk_rank_hybrid g_kge_only = {.kge_weight = 1, .proof_term = SK_RANK_PROOF_FIXED};

void sk_rank_tune_name(int search, int hybrid, char *buf, size_t size) {
    char how[64];
    if (search < 0) {
        snprintf(buf, size, "KGE-only");
        return;
    }
    if (g_branches[search]) snprintf(how, sizeof how, "%d x %d search", g_branches[search],
                                     g_alternatives[search]);
    else snprintf(how, sizeof how, "greedy");
    const sk_rank_hybrid *h = &sk_rank_tune_grid[hybrid];
    if (hybrid == 0) snprintf(buf, size, "%s, RL-only", how);
    else if (h->proof_term == SK_RANK_PROOF_FIXED)
        snprintf(buf, size, "%s, proof bonus %g", how, h->proof_bonus);
    else snprintf(buf, size, "%s, %g x log p(proof), fail penalty %g", how, h->rl_weight,
                  h->fail_penalty);
}

sk_status sk_rank_tune(const sk_env_def *env, const sk_config *env_cfg, const sk_actor *actor,
                       const sk_parallel *parallel, const sk_rank_options *base,
                       sk_rank_tuned *out) {
    memset(out, 0, sizeof *out);
    if (!base->kge)
        return sk_fail(SK_ERR_INVALID, "eval.tune_on needs a KGE model (--kge RUN): the "
                                       "hybrid's weights are what it chooses");
    out->best_search = out->best_hybrid = -1;
    out->hybrid = g_kge_only;
    double started = sk_now();
    for (int s = 0; s < SK_TUNE_SEARCHES; s++) {
        sk_rank_options o = *base;
        o.split = SK_KB_VALID;
        o.branches = g_branches[s];
        o.alternatives = g_alternatives[s];
        o.grid = sk_rank_tune_grid;
        o.grid_count = SK_TUNE_HYBRIDS;
        o.grid_out = out->valid[s];
        sk_rank_result r;
        sk_status status = sk_rank_run(env, env_cfg, actor, parallel, &o, &r);
        if (status != SK_OK) return status;
        out->proved_rate[s] = r.proved_rate;
        if (s == 0) out->kge_valid = r.kge_overall;
        /* KGE-only unless a choice beats it; ties keep the cheaper search */
        double best = out->best_search < 0 ? out->kge_valid.mrr
                                           : out->valid[out->best_search][out->best_hybrid].mrr;
        for (int g = 0; g < SK_TUNE_HYBRIDS; g++)
            if (out->valid[s][g].mrr > best) {
                best = out->valid[s][g].mrr;
                out->best_search = s;
                out->best_hybrid = g;
            }
    }
    out->valid_mrr = out->best_search < 0 ? out->kge_valid.mrr
                                          : out->valid[out->best_search][out->best_hybrid].mrr;
    if (out->best_search >= 0) {
        out->hybrid = sk_rank_tune_grid[out->best_hybrid];
        out->branches = g_branches[out->best_search];
        out->alternatives = g_alternatives[out->best_search];
    } else {
        out->branches = 0;
        out->alternatives = 1;
    }
    out->seconds = sk_now() - started;
    return SK_OK;
}

void sk_rank_tune_apply(const sk_rank_tuned *tuned, sk_rank_options *o) {
    o->kge_weight = tuned->hybrid.kge_weight;
    o->rl_weight = tuned->hybrid.rl_weight;
    o->proof_bonus = tuned->hybrid.proof_bonus;
    o->fail_penalty = tuned->hybrid.fail_penalty;
    o->proof_term = tuned->hybrid.proof_term;
    o->branches = tuned->branches;
    o->alternatives = tuned->alternatives;
}

sk_status sk_rank_tune_write(const sk_rank_tuned *tuned, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return sk_fail(SK_ERR_IO, "cannot write the tuned preset '%s'", path);
    char name[160];
    sk_rank_tune_name(tuned->best_search, tuned->best_hybrid, name, sizeof name);
    const sk_rank_hybrid *h = &tuned->hybrid;
    fprintf(f,
            "; skinner eval Prover-v0 --tune-on valid: the hybrid and proof search with the best\n"
            "; valid MRR (KGE-only unless a choice beats it), used on the ranked split. Give them\n"
            "; to another ranking as --eval.KEY VALUE.\n"
            "; chosen: %s, valid MRR %.6f (KGE-only %.6f)\n"
            "[eval]\nkge_weight = %g\nproof = %s\nproof_bonus = %g\nrl_weight = %g\n"
            "fail_penalty = %g\nbranches = %d\nalternatives = %d\n",
            name, tuned->valid_mrr, tuned->kge_valid.mrr, h->kge_weight,
            h->proof_term == SK_RANK_PROOF_LOGPROB ? "logprob" : "fixed", h->proof_bonus,
            h->rl_weight, h->fail_penalty, tuned->branches, tuned->alternatives);
    fprintf(f, "\n; every choice's valid MRR (Hits@1, Hits@10)\n; KGE-only: %.6f (%.4f, %.4f)\n",
            tuned->kge_valid.mrr, tuned->kge_valid.hits1, tuned->kge_valid.hits10);
    for (int s = 0; s < SK_TUNE_SEARCHES; s++)
        for (int g = 0; g < SK_TUNE_HYBRIDS; g++) {
            sk_rank_tune_name(s, g, name, sizeof name);
            const sk_rank_metrics *m = &tuned->valid[s][g];
            fprintf(f, "; %s: %.6f (%.4f, %.4f)\n", name, m->mrr, m->hits1, m->hits10);
        }
    bool written = !ferror(f);
    if (fclose(f) != 0 || !written)
        return sk_fail(SK_ERR_IO, "cannot write the tuned preset '%s'", path);
    return SK_OK;
}
