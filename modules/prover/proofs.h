/*
 * A few of a policy's proofs, written for the dashboard to draw as trees
 * (`skinner eval Prover-v0 ... --proofs FILE`, docs/dashboard.md).
 *
 * Each of the first `count` queries of a split runs as a positive (its own
 * fact excluded, as in the ranking) with the policy's greedy actions until it
 * ends or is truncated at env.max_depth. The file holds one JSON object a
 * query:
 *
 *   {"query": "p(a,b)", "split": "test", "index": 0, "outcome": "proved",
 *    "logp": -0.12, "steps": [{"goals": ["p(a,b)"], "chosen": 0, "logp": -0.01,
 *      "successors": [{"goals": ["q(a,_V1)", "r(_V1,b)"], "by": "rule r1: ..."},
 *                     {"goals": ["True"], "by": "fact"}], "more": 0}, ...]}
 *
 * outcome is proved, failed (the False or End state chosen) or truncated.
 * Each step is a state's goals, the successors resolution gave it (at most
 * SK_PROOFS_MAX_SUCCESSORS; "more" counts the rest) and which the policy took.
 * "by" says how each successor came from the first goal: "fact" (resolved
 * with a train fact), "rule NAME: HEAD :- BODY", "end" (the End action), or
 * "none" (no fact or rule applies: the False state). The labels are found by
 * deriving the state again with the rules left out, then with each rule of
 * the goal's predicate alone (sk_prover_derive on a view of the kb).
 */
#ifndef SK_PROVER_PROOFS_H
#define SK_PROVER_PROOFS_H

#include "kb.h"
#include "skinner.h"

#define SK_PROOFS_MAX_QUERIES 20     /* proofs a file holds at most */
#define SK_PROOFS_MAX_SUCCESSORS 12  /* successors listed per step */

/* Writes the greedy proofs of the first count (1..SK_PROOFS_MAX_QUERIES) queries
 * of split to path, with actor's worker 0 on the calling thread. SK_ERR_INVALID
 * for another env than Prover-v0 or a bad count, SK_ERR_IO naming path when it
 * cannot be written; the env's create errors pass through. */
sk_status sk_prover_write_proofs(const sk_env_def *env, const sk_config *env_cfg,
                                 const sk_actor *actor, sk_kb_split split, int count,
                                 const char *path);

#endif
