/*
 * The core of a policy (policy.core), whichever it is: the kind's encoder (MLP: one
 * Linear + activation; CANDIDATES: the state's encoding) into work->enc, then the core's
 * ops (sk_core_ops) from there to work->features, which the heads read. The cores are the
 * rows of sk_core_table.
 */
#include "../core/core.h"
#include "policy.h"

#include <string.h>

const sk_core_ops *const sk_core_table[] = {&sk_core_lstm, &sk_core_gru, NULL};

int sk_policy_state_size(const sk_policy *policy) {
    return policy->core ? policy->core->num_parts * policy->core_size : 0;
}

int sk_policy_state_invalid(const sk_policy *policy, const float *state_row) {
    if (!policy->core) return -1;
    int C = policy->core_size;
    for (int k = 0; k < policy->core->num_parts * C; k++) {
        double limit = policy->core->part_limits[k / C];
        if (!(state_row[k] >= -limit && state_row[k] <= limit)) return k;
    }
    return -1;
}

double sk_policy_forward_flops(const sk_policy *policy) {
    if (sk_policy_roles(policy) > 1) { /* a row runs through its own role's copy */
        sk_policy one = sk_policy_one_role(policy);
        return sk_policy_forward_flops(&one);
    }
    double macs = policy->kind->forward_macs(policy);
    if (policy->core) macs += policy->core->forward_macs(policy);
    return 2.0 * macs;
}

void sk_policy_core_forward(const sk_policy *policy, const float *params, const float *obs,
                            const float *state0, const uint8_t *resets, int T, int B,
                            sk_policy_work *work) {
    SK_ASSERT(policy->core && T * B <= work->capacity);
    policy->kind->encode(policy, params, obs, T * B, work);
    policy->core->forward(policy, params, state0, resets, T, B, work);
}

void sk_policy_core_backward(const sk_policy *policy, const float *params, float *grads,
                             const float *obs, const uint8_t *resets, int T, int B,
                             sk_policy_work *work) {
    SK_ASSERT(policy->core);
    policy->core->backward(policy, params, grads, resets, T, B, work);
    policy->kind->encode_backward(policy, params, grads, obs, T * B, work);
}

void sk_policy_core_step(const sk_policy *policy, const float *params, const float *obs,
                         float *state, int B, sk_policy_work *work) {
    SK_ASSERT(policy->core && B <= work->capacity);
    policy->kind->encode(policy, params, obs, B, work);
    policy->core->step(policy, params, state, B, work);
}
