/*
 * Settings derived from a knowledge base (issue 38 ask 2): what `skinner
 * prover run` trains with when no preset is given. Each rule is in derive.c
 * beside its reason; on Countries S3, family and WN18RR they give the shipped
 * presets' sizes (max_atoms 10, max_successors 20, max_depth 20, embed 32;
 * KGE RotatE 500 x 20 epochs on family, 200 x 60 on WN18RR), except the
 * policy's steps on WN18RR (6M against the preset's 2M) and the negative
 * episodes (none: under reward type 0 they pay nothing), which
 * docs/prover.md measures.
 */
#ifndef SK_PROVER_DERIVE_H
#define SK_PROVER_DERIVE_H

#include "kb.h"

/* The statistics the rules read. */
typedef struct sk_prover_kb_stats {
    int constants, predicates, train_facts, rules;
    int max_body;            /* atoms in the longest rule body */
    int max_rules_per_head;  /* rules sharing a head predicate, at most */
    bool depths_recorded;    /* train_depths.txt gave depths */
    int provable_queries;    /* train queries of recorded depth >= 1 */
    int deep_queries;        /* of depth >= 2 */
    int median_depth, max_depth; /* over those of depth >= 1 */
    int fanout_p90;          /* 90th percentile of train facts per (predicate, first argument) */
    int max_tail_candidates; /* the largest tail type of a predicate queried in test */
} sk_prover_kb_stats;

typedef struct sk_prover_derived {
    sk_prover_kb_stats stats;
    int max_atoms, max_successors, max_depth, embed;
    bool corrupt_tail;       /* env.corrupt = tail (else both) */
    int64_t total_steps;
    int kge_dim, kge_epochs;
    bool kge_sparse;         /* WN18RR's KGE training (margin 4, self-adversarial, cosine) */
} sk_prover_derived;

/* The settings for kb (finalized). SK_ERR_NOMEM only. */
sk_status sk_prover_settings_derive(const sk_kb *kb, sk_prover_derived *out);
/* The policy's settings (env, policy, train) as a config file the trainer
 * layers on Prover-v0's preset, with the statistics as comments. */
sk_status sk_prover_derived_write(const sk_prover_derived *d, const char *dataset,
                                  const char *path);
/* The KGE's settings as a `skinner kge train --config` file. */
sk_status sk_prover_derived_write_kge(const sk_prover_derived *d, const char *dataset,
                                      const char *path);

#endif
