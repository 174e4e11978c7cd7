/* sk_agent: a saved policy as a public object, for programs that act with it
 * themselves (the Python module's skinner.load). One sampling stream, one
 * worker; rows beyond the actor's capacity are taken in chunks. */
#include "actor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AGENT_ROWS 1024

struct sk_agent {
    sk_loaded_policy lp;
    sk_policy_actor actor;
};

sk_status sk_agent_load(sk_agent **out, const char *checkpoint, const sk_config *overrides) {
    *out = NULL;
    sk_agent *agent = calloc(1, sizeof *agent);
    if (!agent) return sk_fail(SK_ERR_NOMEM, "out of memory");
    /* one read of the checkpoint, which loads the plugin its run recorded */
    sk_status status = sk_policy_load_with(&agent->lp, checkpoint, NULL, overrides);
    if (status == SK_OK) {
        status = sk_policy_actor_init(&agent->actor, &agent->lp, 1, AGENT_ROWS, 0);
        if (status != SK_OK) sk_loaded_policy_free(&agent->lp);
    }
    if (status != SK_OK) {
        free(agent);
        return status;
    }
    *out = agent;
    return SK_OK;
}

void sk_agent_free(sk_agent *agent) {
    if (!agent) return;
    sk_policy_actor_free(&agent->actor);
    sk_loaded_policy_free(&agent->lp);
    free(agent);
}

const sk_env_def *sk_agent_env(const sk_agent *agent) { return agent->lp.env; }

const sk_loaded_policy *sk_agent_loaded(const sk_agent *agent) { return &agent->lp; }

const sk_config *sk_agent_config(const sk_agent *agent) { return agent->lp.cfg; }

void sk_agent_seed(sk_agent *agent, uint64_t seed) {
    agent->actor.rng[0] = sk_rng_seed(seed, SK_ACTOR_STREAM);
}

static sk_status act_rows(sk_agent *agent, const float *obs, const uint8_t *masks,
                          const uint8_t *episode_start, float *state, int rows, bool greedy,
                          int32_t *actions, float *actions_continuous) {
    const sk_policy *policy = &agent->lp.policy;
    const sk_action_space *space = &policy->space;
    size_t O = (size_t)policy->obs_size, M = (size_t)policy->mask_size;
    size_t S = (size_t)sk_policy_state_size(policy);
    if (rows < 0) return sk_fail(SK_ERR_INVALID, "rows = %d (expected 0 or more)", rows);
    int roles = sk_policy_roles(policy); /* policy.per_role: row r is agent r % roles */
    if (rows % roles)
        return sk_fail(SK_ERR_INVALID, "rows = %d: this policy has one policy per role "
                       "(policy.per_role), %d roles, so rows are whole envs: a multiple of %d "
                       "(row r is agent r %% %d of its env)", rows, roles, roles, roles);
    if (masks && !M)
        return sk_fail(SK_ERR_INVALID, "%s has no action masks, but masks were given",
                       agent->lp.env->id);
    for (int i = 0; i < rows; i++) {
        int bad = sk_policy_obs_invalid(policy, obs + (size_t)i * O);
        if (bad >= 0)
            return sk_fail(SK_ERR_INVALID,
                           "observation row %d: value %d (%g) is not one the policy can take "
                           "(non-finite, or an index outside the env's ranges)",
                           i, bad, (double)obs[(size_t)i * O + (size_t)bad]);
        if (masks) {
            int head = sk_action_mask_unusable(space, masks + (size_t)i * M);
            if (head >= 0)
                return sk_fail(SK_ERR_INVALID,
                               "action mask row %d allows no choice for head %d (expected at "
                               "least one allowed action per head)",
                               i, head);
        }
        int k = S ? sk_policy_state_invalid(policy, state + (size_t)i * S) : -1;
        if (k >= 0)
            return sk_fail(SK_ERR_INVALID,
                           "state row %d: value %d (%g) is not a state the core can hold "
                           "(expected h within [-1, 1], an LSTM's c within +-%g)",
                           i, k, (double)state[(size_t)i * S + (size_t)k], SK_CORE_CELL_MAX);
    }
    int H = space->num_heads, D = space->dim;
    int chunk = AGENT_ROWS - AGENT_ROWS % roles; /* whole envs a chunk */
    for (int lo = 0; lo < rows; lo += chunk) {
        int n = SK_MIN(chunk, rows - lo);
        if (S) { /* the rows' memories into the actor's rows, and back after */
            float *mine = sk_policy_actor_state(&agent->actor, 0, 0);
            memcpy(mine, state + (size_t)lo * S, (size_t)n * S * sizeof(float));
            if (episode_start) sk_policy_actor_episode_start(&agent->actor, 0, episode_start + lo, NULL, n);
        }
        sk_policy_actor_act(&agent->actor, 0, obs + (size_t)lo * O,
                            masks ? masks + (size_t)lo * M : NULL, n, greedy,
                            space->kind == SK_SPACE_DISCRETE ? actions + (size_t)lo * (size_t)H
                                                             : NULL,
                            space->kind == SK_SPACE_CONTINUOUS
                                ? actions_continuous + (size_t)lo * (size_t)D
                                : NULL,
                            NULL);
        if (S)
            memcpy(state + (size_t)lo * S, sk_policy_actor_state(&agent->actor, 0, 0),
                   (size_t)n * S * sizeof(float));
    }
    return SK_OK;
}

sk_status sk_agent_act(sk_agent *agent, const float *obs, const uint8_t *masks, int rows,
                       bool greedy, int32_t *actions, float *actions_continuous) {
    if (agent->lp.policy.core)
        return sk_fail(SK_ERR_INVALID,
                       "the policy is recurrent (policy.core): act with its memory "
                       "(sk_agent_act_recurrent)");
    return act_rows(agent, obs, masks, NULL, NULL, rows, greedy, actions, actions_continuous);
}

int sk_agent_state_size(const sk_agent *agent) { return sk_policy_state_size(&agent->lp.policy); }

sk_status sk_agent_act_recurrent(sk_agent *agent, const float *obs, const uint8_t *masks,
                                 const uint8_t *episode_start, float *state, int rows,
                                 bool greedy, int32_t *actions, float *actions_continuous) {
    if (!agent->lp.policy.core)
        return sk_fail(SK_ERR_INVALID, "the policy is feed-forward: it has no memory to carry "
                                       "(use sk_agent_act)");
    return act_rows(agent, obs, masks, episode_start, state, rows, greedy, actions,
                    actions_continuous);
}

int sk_agent_num_tensors(const sk_agent *agent) { return agent->lp.policy.num_tensors; }

sk_status sk_agent_tensor(const sk_agent *agent, int index, sk_tensor_view *out) {
    const sk_policy *policy = &agent->lp.policy;
    if (index < 0 || index >= policy->num_tensors)
        return sk_fail(SK_ERR_INVALID, "tensor index %d (expected 0 to %d)", index,
                       policy->num_tensors - 1);
    const sk_tensor_info *info = &policy->tensors[index];
    out->name = info->name;
    out->ndim = sk_policy_tensor_ndim(info);
    out->shape[0] = info->rows;
    out->shape[1] = out->ndim == 2 ? info->cols : 0;
    out->data = agent->lp.params + info->offset;
    return SK_OK;
}
