/*
 * The options of Prover-v0's ranking (its extras' eval_options): what
 * `skinner eval Prover-v0 --help` prints and the CLI accepts as --eval.NAME,
 * with the flags the docs have always used (--split, --kge, --no-prune, ...)
 * as aliases. The ranking reads each key itself (rank_eval.c's read_options);
 * keep the ranges and defaults here equal to those reads.
 */
#include "rank.h"

#include <stdint.h>

static const char *const g_splits[] = {"train", "valid", "test", NULL};
static const char *const g_sides[] = {"head", "tail", "both", NULL};
static const char *const g_proof_terms[] = {"fixed", "logprob", NULL};
static const char *const g_tune_splits[] = {"none", "valid", NULL};

#define SK_STR_(x) #x
#define SK_STR(x) SK_STR_(x)

const sk_env_option sk_prover_eval_options[] = {
    {.name = "split", .kind = SK_OPTION_CHOICE, .choices = g_splits, .default_text = "test",
     .help = "the split whose queries are ranked", .alias = "--split"},
    {.name = "queries", .kind = SK_OPTION_INT, .low = 1, .high = INT32_MAX,
     .default_text = "all", .help = "the first N queries of the split", .alias = "--queries"},
    {.name = "corrupt", .kind = SK_OPTION_CHOICE, .choices = g_sides,
     .default_text = "the run's env.corrupt",
     .help = "the ranked sides (Countries' protocol is tail)", .alias = "--corrupt"},
    {.name = "negatives", .kind = SK_OPTION_INT, .low = 0, .high = INT32_MAX, .default_text = "0",
     .help = "sampled corruptions per side (filtered, without replacement); 0: all",
     .alias = "--negatives"},
    {.name = "seed", .kind = SK_OPTION_INT, .low = 0, .high = (double)INT64_MAX,
     .default_text = "1", .help = "tie-breaking and sampling (--seed sets it too)"},
    {.name = "batch", .kind = SK_OPTION_INT, .low = 0, .high = 1 << 20, .default_text = "0",
     .help = "env slots per worker; 0: the default (256)"},
    {.name = "kge", .kind = SK_OPTION_PATH, .default_text = "none",
     .help = "a 'skinner kge train' run or model: adds KGE-only and hybrid figures",
     .alias = "--kge"},
    {.name = "kge_weight", .kind = SK_OPTION_DOUBLE, .low = 0, .high = 1e6,
     .default_text = SK_STR(SK_RANK_KGE_WEIGHT),
     .help = "hybrid = W log sigmoid(kge) + proof term", .alias = "--kge-weight"},
    {.name = "proof", .kind = SK_OPTION_CHOICE, .choices = g_proof_terms, .default_text = "fixed",
     .help = "proof term: fixed (+ proof_bonus) or logprob (+ rl_weight x log-probability)",
     .alias = "--proof"},
    {.name = "proof_bonus", .kind = SK_OPTION_DOUBLE, .low = -1e6, .high = 1e6,
     .default_text = SK_STR(SK_RANK_PROOF_BONUS), .help = "the fixed proof term",
     .alias = "--proof-bonus"},
    {.name = "rl_weight", .kind = SK_OPTION_DOUBLE, .low = 0, .high = 1e6,
     .default_text = SK_STR(SK_RANK_RL_WEIGHT), .help = "the logprob proof term's weight",
     .alias = "--rl-weight"},
    {.name = "fail_penalty", .kind = SK_OPTION_DOUBLE, .low = -1e6, .high = 1e6,
     .default_text = SK_STR(SK_RANK_FAIL_PENALTY), .help = "subtracted for a failed proof",
     .alias = "--fail-penalty"},
    {.name = "branches", .kind = SK_OPTION_INT, .low = 0, .high = 1 << 16, .default_text = "0",
     .help = "after the greedy proof, try other actions at its first N steps (best proof counts)",
     .alias = "--branches"},
    {.name = "alternatives", .kind = SK_OPTION_INT, .low = 1, .high = 1 << 16,
     .default_text = "1", .help = "with branches: the 2nd to (K+1)th likeliest actions per step",
     .alias = "--alternatives"},
    {.name = "prune", .kind = SK_OPTION_BOOL, .default_text = "true",
     .help = "fail candidates the kb's least model shows unprovable without a step (same figures)",
     .alias = "--no-prune", .alias_value = "false"},
    {.name = "proofs", .kind = SK_OPTION_PATH, .default_text = "none",
     .help = "write the first 20 queries' proofs there (JSON lines; skinner serve draws them)",
     .alias = "--proofs"},
    {.name = "tune_on", .kind = SK_OPTION_CHOICE, .choices = g_tune_splits, .default_text = "none",
     .help = "choose the hybrid's weights and the proof search on valid (KGE-only included), "
             "then rank the split with them",
     .alias = "--tune-on"},
    {.name = "tune_out", .kind = SK_OPTION_PATH, .default_text = "none",
     .help = "with tune_on: write the choice and every choice's valid MRR here (an INI preset)",
     .alias = "--tune-out"},
    {0},
};
