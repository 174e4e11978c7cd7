/* A Prover-v0 policy with every weight zero, for the ranking tests (test_rank.c,
 * test_prover_tune.c): every allowed action has the same logit, so greedy takes the
 * first successor (facts before rules, rules in file order) and each step's
 * log-probability is -log(number of successors). Include after cmocka (test_util.h). */
#ifndef SK_TEST_PROVER_POLICY_H
#define SK_TEST_PROVER_POLICY_H

#include "core/core.h"
#include "prover/prover.h"
#include "train/actor.h"

/* A policy of policy.type `type` over dataset with every weight zero. */
static inline void zero_policy_on(sk_loaded_policy *lp, const char *type, const char *dataset) {
    memset(lp, 0, sizeof *lp);
    lp->env = &sk_env_prover;
    lp->cfg = sk_config_new();
    assert_non_null(lp->cfg);
    assert_int_equal(sk_config_set(lp->cfg, "env.dataset", dataset), SK_OK);
    assert_int_equal(sk_config_set(lp->cfg, "policy.type", type), SK_OK);
    void *probe = NULL;
    assert_int_equal(sk_env_prover.create(&probe, 1, lp->cfg), SK_OK);
    assert_int_equal(sk_policy_configure(&lp->policy, lp->cfg, lp->env, probe), SK_OK);
    sk_env_prover.destroy(probe);
    lp->params = sk_alloc(lp->policy.num_params * sizeof(float)); /* zeroed */
    assert_non_null(lp->params);
}

#endif
