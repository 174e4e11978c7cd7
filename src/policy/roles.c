/* One policy per role (policy.per_role): agent k of every env of a multi-agent env acts
 * and learns with its own copy of the networks, where by default one policy serves every
 * agent and the role is told by the observation. The copies lie one after another in the
 * flat parameters, so Adam, the governor, checkpoints, self-play's snapshots and the
 * gradient exchange see one vector as before; the kinds' code runs on one copy at a time
 * (params + r * role_params) through role 0's tensor entries. */
#include "policy.h"

#include "../core/config.h"
#include "../core/core.h"
#include "../core/rng.h"

#include <ctype.h>
#include <string.h>

/* The name role r's tensors start with: the env's agent name when it is a plain word of
 * at most 10 characters (the longest tensor name, 20, fits beside it), else agent_R. */
static void role_prefix(const sk_env_def *env, int r, char out[16]) {
    const char *name = env->agent_names ? env->agent_names[r] : NULL;
    bool plain = name && strlen(name) <= 10;
    for (const char *c = name; plain && *c; c++)
        plain = isalnum((unsigned char)*c) || *c == '_' || *c == '-';
    if (plain) snprintf(out, 16, "%s", name);
    else snprintf(out, 16, "agent_%d", r);
}

sk_status sk_policy_configure_roles(sk_policy *policy, const sk_config *cfg, const sk_env_def *env) {
    bool per_role;
    sk_status status = sk_cfg_bool(cfg, "policy.per_role", false, &per_role);
    policy->roles = 1;
    policy->role_params = policy->num_params;
    policy->role_tensors = policy->num_tensors;
    if (status != SK_OK || !per_role) return status;
    int agents = sk_env_agents(env);
    if (agents < 2 || agents > SK_MAX_POLICY_ROLES)
        return sk_fail(SK_ERR_CONFIG, "policy.per_role = true: %s has %d agent%s per env "
                       "(expected a multi-agent env of 2 to %d agents: one policy per agent)",
                       env->id, agents, agents == 1 ? "" : "s", SK_MAX_POLICY_ROLES);
    if (policy->core)
        return sk_fail(SK_ERR_CONFIG, "policy.per_role = true with policy.core = %s: a "
                       "recurrent core is not supported with one policy per role (expected "
                       "policy.core = none)", policy->core->name);
    int T = policy->num_tensors;
    size_t P = policy->num_params;
    for (int r = agents - 1; r >= 0; r--) /* role 0's entries last: they are the source */
        for (int t = 0; t < T; t++) {
            sk_tensor_info *to = &policy->tensors[r * T + t];
            const sk_tensor_info *from = &policy->tensors[t];
            char prefix[16], name[sizeof to->name];
            role_prefix(env, r, prefix);
            int length = snprintf(name, sizeof name, "%s.%s", prefix, from->name);
            SK_ASSERT(length > 0 && (size_t)length < sizeof name);
            *to = *from;
            memcpy(to->name, name, sizeof name);
            to->offset = from->offset + (size_t)r * P;
        }
    policy->roles = agents;
    policy->num_tensors = agents * T;
    policy->num_params = (size_t)agents * P;
    return SK_OK;
}

sk_policy sk_policy_one_role(const sk_policy *policy) {
    sk_policy one = *policy;
    one.roles = 1;
    one.num_params = sk_policy_role_params(policy);
    one.num_tensors = policy->roles > 1 ? policy->role_tensors : policy->num_tensors;
    return one;
}

/* Samples the gathered rows k0..k1-1 (their actor outputs in work) into scratch. */
static void sample_gathered(const sk_policy *policy, const float *params, const uint8_t *masks,
                            int k0, int k1, uint64_t *rng, bool greedy, const sk_policy_work *work,
                            const sk_role_scratch *scratch) {
    size_t Z = (size_t)policy->logits_size, M = (size_t)policy->mask_size;
    size_t H = (size_t)policy->space.num_heads, D = (size_t)policy->space.dim, k = (size_t)k0;
    /* a space without discrete heads or a continuous part may have no array for it */
    sk_policy_sample(policy, params, work->out[SK_NET_ACTOR] + k * Z, masks ? masks + k * M : NULL,
                     k1 - k0, rng, greedy, H ? scratch->actions + k * H : NULL,
                     D ? scratch->actions_f + k * D : NULL, scratch->logp + k);
}

void sk_policy_act_rows(const sk_policy *policy, const float *params, const float *obs,
                        const uint8_t *masks, const int32_t *rows, int count, int skip_batch,
                        uint64_t *rng, bool greedy, int32_t *actions, float *actions_f,
                        float *logp, float *values, sk_policy_work *work,
                        const sk_role_scratch *scratch) {
    size_t O = (size_t)policy->obs_size, M = masks ? (size_t)policy->mask_size : 0;
    size_t H = (size_t)policy->space.num_heads, D = (size_t)policy->space.dim;
    bool discrete = policy->space.kind == SK_SPACE_DISCRETE;
    const uint8_t *gathered_masks = M ? scratch->masks : NULL;
    for (int k = 0; k < count; k++) {
        memcpy(scratch->obs + (size_t)k * O, obs + (size_t)rows[k] * O, O * sizeof(float));
        if (M) memcpy(scratch->masks + (size_t)k * M, masks + (size_t)rows[k] * M, M);
    }
    uint64_t draws = greedy || !rng ? 0 : (uint64_t)sk_policy_sample_draws(policy);
    if (count == 0) {
        if (skip_batch > 0) sk_rng_skip(rng, (uint64_t)skip_batch * draws);
        return;
    }
    if (!rng) { /* the critic alone */
        sk_policy_forward(policy, SK_NET_CRITIC, params, scratch->obs, count, work);
        for (int k = 0; k < count; k++) values[rows[k]] = work->out[SK_NET_CRITIC][k];
        return;
    }
    if (values) sk_policy_forward_both(policy, params, scratch->obs, count, work);
    else sk_policy_forward(policy, SK_NET_ACTOR, params, scratch->obs, count, work);
    if (skip_batch <= 0) {
        sample_gathered(policy, params, gathered_masks, 0, count, rng, greedy, work, scratch);
    } else { /* each run of consecutive rows in one call, the rows between skipped */
        int next = 0; /* the first row whose draws are not taken or skipped */
        for (int k0 = 0, k1; k0 < count; k0 = k1) {
            for (k1 = k0 + 1; k1 < count && rows[k1] == rows[k1 - 1] + 1;) k1++;
            sk_rng_skip(rng, (uint64_t)(rows[k0] - next) * draws);
            sample_gathered(policy, params, gathered_masks, k0, k1, rng, greedy, work, scratch);
            next = rows[k1 - 1] + 1;
        }
        sk_rng_skip(rng, (uint64_t)(skip_batch - next) * draws);
    }
    for (int k = 0; k < count; k++) {
        size_t i = (size_t)rows[k];
        if (actions && discrete)
            memcpy(actions + i * H, scratch->actions + (size_t)k * H, H * sizeof(int32_t));
        if (actions_f && !discrete)
            memcpy(actions_f + i * D, scratch->actions_f + (size_t)k * D, D * sizeof(float));
        if (logp) logp[i] = scratch->logp[k];
        if (values) values[i] = work->out[SK_NET_CRITIC][k];
    }
}

void sk_policy_act_roles(const sk_policy *policy, const float *params, const float *obs,
                         const uint8_t *masks, int B, uint64_t *rng, bool greedy, int32_t *actions,
                         float *actions_f, float *logp, float *values, sk_policy_work *work,
                         const sk_role_scratch *scratch) {
    int R = sk_policy_roles(policy);
    for (int r = 0; r < R; r++) {
        int n = 0;
        for (int i = r; i < B; i += R) scratch->rows[n++] = i;
        sk_policy_act_rows(policy, params + (size_t)r * sk_policy_role_params(policy), obs, masks,
                           scratch->rows, n, 0, rng, greedy, actions, actions_f, logp, values,
                           work, scratch);
    }
}

void sk_policy_values_roles(const sk_policy *policy, const float *params, const float *obs,
                            const int32_t *rows, int count, float *values, sk_policy_work *work,
                            const sk_role_scratch *scratch) {
    int R = sk_policy_roles(policy);
    for (int r = 0; r < R; r++) {
        int n = 0; /* the positions k of role r's rows */
        for (int k = 0; k < count; k++)
            if (rows[k] % R == r) scratch->rows[n++] = k;
        sk_policy_act_rows(policy, params + (size_t)r * sk_policy_role_params(policy), obs, NULL,
                           scratch->rows, n, 0, NULL, false, NULL, NULL, NULL, values, work,
                           scratch);
    }
}
