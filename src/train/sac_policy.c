/*
 * What eval, export and serve act with from a SAC checkpoint (sk_algo.load_policy): the
 * actor's deterministic action, tanh(mean) scaled into the env's bounds, as CleanRL's
 * sac_continuous_action evaluates. The actor (sac.actor.*: ReLU layers, then the mean and
 * log-std heads) is laid out as an MLP policy of the same widths whose last layer is the mean
 * head; sk_loaded_policy.squash applies the tanh and the scaling after it. The log-std head
 * (state-dependent) has no place in that policy and is not read: the action is always the
 * deterministic one (greedy_only). The policy's critic and log-std stay zero; the Q networks
 * read an action and are no state value (no_value).
 */
#include "algo.h"
#include "sac_core.h"

#include <float.h>
#include <string.h>

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        sk_status check_status_ = (expr);                                                          \
        if (check_status_ != SK_OK) return check_status_;                                          \
    } while (0)

/* Copies checkpoint tensor `from` (sac.actor.*, saved flat) into the policy's tensor `to`. */
static sk_status read_tensor(sk_loaded_policy *lp, const sk_st_file *file, const char *path,
                             const char *from, const char *to) {
    const sk_policy *policy = &lp->policy;
    for (int i = 0; i < policy->num_tensors; i++) {
        const sk_tensor_info *t = &policy->tensors[i];
        if (strcmp(t->name, to) != 0) continue;
        return sk_checkpoint_restore(file, path, from, SK_ST_F32, lp->params + t->offset,
                                     (int64_t)t->rows * t->cols, true, -FLT_MAX, FLT_MAX);
    }
    return sk_fail(SK_ERR_INVALID, "sac: the acting policy has no tensor '%s'", to);
}

sk_status sk_sac_load_policy(sk_loaded_policy *lp, const sk_st_file *file, const char *path) {
    const sk_env_def *env = lp->env;
    const sk_action_space *space = &env->action_space;
    if (space->kind != SK_SPACE_CONTINUOUS)
        return sk_fail(SK_ERR_CORRUPT, "checkpoint '%s' was trained with train.algo = sac on %s, "
                       "whose actions are not continuous", path, env->id);
    sk_sac_config defaults = sk_sac_defaults(env->obs_size, space->dim, space->low, space->high);
    int64_t hidden, layers; /* the ranges sac.c's settings read them with */
    CHECK(sk_cfg_int(lp->cfg, "sac.hidden", defaults.hidden, 1, 4096, &hidden));
    CHECK(sk_cfg_int(lp->cfg, "sac.layers", defaults.layers, 1, SK_SAC_MAX_LAYERS, &layers));
    CHECK(sk_policy_init(&lp->policy, env->obs_size, space, 0, (int)hidden, (int)layers,
                         SK_ACTIVATION_RELU));
    if (!(lp->params = sk_alloc(lp->policy.num_params * sizeof(float))))
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    memset(lp->params, 0, lp->policy.num_params * sizeof(float));
    char from[48], to[32];
    for (int l = 0; l <= (int)layers; l++)
        for (int part = 0; part < 2; part++) {
            const char *what = part ? "bias" : "weight";
            if (l < layers) snprintf(from, sizeof from, "sac.actor.%d.%s", l, what);
            else snprintf(from, sizeof from, "sac.actor.mean.%s", what);
            snprintf(to, sizeof to, "actor.%d.%s", l, what);
            CHECK(read_tensor(lp, file, path, from, to));
        }
    lp->squash = true;
    return SK_OK;
}
