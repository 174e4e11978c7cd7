/* A loaded policy acting on observations: normalise (with the frozen
 * statistics saved beside the weights), run the actor network, sample. */
#include "actor.h"

#include "../core/rng.h"
#include "dqn.h"

#include <string.h>

/* OpenBLAS's own threads would compete with the workers, and at an
 * evaluation's sizes (256 rows) gain nothing even alone. */
extern void openblas_set_num_threads(int num_threads);

static void act_discrete(void *ctx, int worker, const float *obs, const uint8_t *masks, int rows,
                         bool greedy, int32_t *actions, float *logp) {
    SK_ASSERT(((const sk_policy_actor *)ctx)->lp->env->action_space.kind == SK_SPACE_DISCRETE);
    sk_policy_actor_act(ctx, worker, obs, masks, rows, greedy, actions, NULL, logp);
}

static void act_discrete_at(void *ctx, int worker, int at, const float *obs,
                            const uint8_t *masks, int rows, bool greedy, int32_t *actions,
                            float *logp) {
    SK_ASSERT(((const sk_policy_actor *)ctx)->lp->env->action_space.kind == SK_SPACE_DISCRETE);
    sk_policy_actor_act_at(ctx, worker, at, obs, masks, rows, greedy, actions, NULL, logp);
}

static void episode_start_row(void *ctx, int worker, int row) {
    float *state = sk_policy_actor_state(ctx, worker, row);
    if (state)
        memset(state, 0, (size_t)sk_policy_state_size(&((sk_policy_actor *)ctx)->lp->policy) *
                             sizeof(float));
}

float *sk_policy_actor_state(sk_policy_actor *pa, int worker, int row) {
    SK_ASSERT(worker >= 0 && worker < pa->num_workers && row >= 0 && row < pa->max_rows);
    size_t S = (size_t)sk_policy_state_size(&pa->lp->policy);
    if (!S) return NULL;
    return pa->state + ((size_t)worker * (size_t)pa->max_rows + (size_t)row) * S;
}

void sk_policy_actor_episode_start(sk_policy_actor *pa, int worker, const uint8_t *ended,
                                   const uint8_t *also_ended, int rows) {
    for (int r = 0; r < rows; r++)
        if (!ended || ended[r] || (also_ended && also_ended[r])) episode_start_row(pa, worker, r);
}

sk_status sk_policy_actor_init(sk_policy_actor *pa, const sk_loaded_policy *lp, int num_workers,
                               int max_rows, uint64_t seed) {
    memset(pa, 0, sizeof *pa);
    if (num_workers < 1 || max_rows < 1)
        return sk_fail(SK_ERR_INVALID, "actor of %d workers x %d rows (expected at least 1 each)",
                       num_workers, max_rows);
    pa->lp = lp;
    pa->num_workers = num_workers;
    pa->max_rows = max_rows;
    size_t obs_floats = (size_t)max_rows * (size_t)lp->env->obs_size;
    pa->work = calloc((size_t)num_workers, sizeof *pa->work);
    pa->rng = calloc((size_t)num_workers, sizeof *pa->rng);
    /* normalised or widened (uint8) observations: never both (training refuses norm_obs
     * for uint8 envs) */
    bool policy_obs = lp->obs_map.size || lp->env->obs_dtype == SK_OBS_U8;
    if (policy_obs) pa->policy_obs = sk_alloc((size_t)num_workers * obs_floats * sizeof(float));
    size_t state_floats = (size_t)num_workers * (size_t)max_rows *
                          (size_t)sk_policy_state_size(&lp->policy);
    if (state_floats) pa->state = sk_alloc(state_floats * sizeof(float));
    /* policy.per_role: each worker's rows gathered by role */
    bool short_of_roles = sk_policy_roles(&lp->policy) > 1 &&
                          !(pa->role = calloc((size_t)num_workers, sizeof *pa->role));
    for (int w = 0; pa->role && w < num_workers && !short_of_roles; w++) {
        const sk_env_def *env = lp->env;
        size_t rows = (size_t)max_rows, heads = (size_t)env->action_space.num_heads;
        size_t dim = (size_t)env->action_space.dim;
        sk_role_scratch *s = &pa->role[w];
        short_of_roles = !(s->rows = sk_alloc(rows * sizeof(int32_t))) ||
                         !(s->obs = sk_alloc(rows * (size_t)env->obs_size * sizeof(float))) ||
                         (env->mask_size && !(s->masks = sk_alloc(rows * (size_t)env->mask_size))) ||
                         !(s->actions = sk_alloc((rows * heads + 1) * sizeof(int32_t))) ||
                         !(s->actions_f = sk_alloc((rows * dim + 1) * sizeof(float))) ||
                         !(s->logp = sk_alloc(rows * sizeof(float)));
    }
    sk_status status = pa->work && pa->rng && (!policy_obs || pa->policy_obs) &&
                               (!state_floats || pa->state) && !short_of_roles
                           ? SK_OK
                           : sk_fail(SK_ERR_NOMEM, "out of memory for %d policy workers", num_workers);
    for (int w = 0; w < num_workers && status == SK_OK; w++) {
        pa->rng[w] = sk_rng_seed(seed, SK_ACTOR_STREAM + (uint64_t)w);
        status = sk_policy_work_alloc(&pa->work[w], &lp->policy, max_rows);
    }
    if (status != SK_OK) {
        sk_policy_actor_free(pa);
        return status;
    }
    pa->actor = (sk_actor){.ctx = pa, .num_workers = num_workers, .max_rows = max_rows,
                           .act = act_discrete};
    if (state_floats) {
        pa->actor.act_at = act_discrete_at;
        pa->actor.episode_start = episode_start_row;
    }
    return SK_OK;
}

void sk_policy_actor_free(sk_policy_actor *pa) {
    for (int w = 0; pa->role && w < pa->num_workers; w++) {
        sk_role_scratch *s = &pa->role[w];
        sk_free(s->rows), sk_free(s->obs), sk_free(s->masks);
        sk_free(s->actions), sk_free(s->actions_f), sk_free(s->logp);
    }
    free(pa->role);
    for (int w = 0; pa->work && w < pa->num_workers; w++) sk_policy_work_free(&pa->work[w]);
    free(pa->work);
    free(pa->rng);
    sk_free(pa->policy_obs);
    sk_free(pa->state);
    memset(pa, 0, sizeof *pa);
}

void sk_policy_actor_act(sk_policy_actor *pa, int worker, const float *obs, const uint8_t *masks,
                         int rows, bool greedy, int32_t *actions, float *actions_continuous,
                         float *logp) {
    sk_policy_actor_act_at(pa, worker, 0, obs, masks, rows, greedy, actions, actions_continuous,
                           logp);
}

void sk_policy_actor_act_u8(sk_policy_actor *pa, int worker, const uint8_t *obs,
                            const uint8_t *masks, int rows, bool greedy, int32_t *actions,
                            float *actions_continuous, float *logp) {
    SK_ASSERT(pa->lp->env->obs_dtype == SK_OBS_U8 && !pa->lp->obs_map.size && rows <= pa->max_rows);
    size_t obs_size = (size_t)pa->lp->env->obs_size;
    float *wide = pa->policy_obs + (size_t)worker * (size_t)pa->max_rows * obs_size;
    sk_obs_widen(wide, obs, (size_t)rows * obs_size);
    sk_policy_actor_act_at(pa, worker, 0, wide, masks, rows, greedy, actions, actions_continuous,
                           logp);
}

void sk_policy_actor_act_at(sk_policy_actor *pa, int worker, int at, const float *obs,
                            const uint8_t *masks, int rows, bool greedy, int32_t *actions,
                            float *actions_continuous, float *logp) {
    SK_ASSERT(worker >= 0 && worker < pa->num_workers && rows >= 0 && at >= 0 &&
              at + rows <= pa->max_rows);
    const sk_loaded_policy *lp = pa->lp;
    sk_policy_work *work = &pa->work[worker];
    greedy = greedy || lp->greedy_only;
    if (lp->obs_map.size) {
        size_t obs_size = (size_t)lp->env->obs_size;
        float *normalised = pa->policy_obs + (size_t)worker * (size_t)pa->max_rows * obs_size;
        memcpy(normalised, obs, (size_t)rows * obs_size * sizeof(float));
        for (int i = 0; i < rows; i++) sk_norm_apply(&lp->obs_map, normalised + (size_t)i * obs_size);
        obs = normalised;
    }
    const sk_policy *policy = &lp->policy;
    if (policy->core && rows > 0)
        sk_policy_core_step(policy, lp->params, obs, sk_policy_actor_state(pa, worker, at), rows,
                            work);
    if (pa->role) { /* policy.per_role: each row by its agent's own policy */
        sk_policy_act_roles(policy, lp->params, obs, masks, rows, &pa->rng[worker], greedy,
                            actions, actions_continuous, logp, NULL, work, &pa->role[worker]);
    } else {
        sk_policy_forward(&lp->policy, SK_NET_ACTOR, lp->params, obs, rows, work);
        sk_policy_sample(&lp->policy, lp->params, work->out[SK_NET_ACTOR], masks, rows,
                         &pa->rng[worker], greedy, actions, actions_continuous,
                         logp ? logp : work->logp);
    }
    if (actions_continuous) sk_loaded_policy_env_actions(lp, actions_continuous, rows);
    for (int r = 0; actions && lp->epsilon > 0.0 && r < rows; r++) /* DQN's one head */
        if (sk_rng_double(&pa->rng[worker]) < lp->epsilon)
            actions[r] = sk_dqn_explore(masks ? masks + (size_t)r * (size_t)policy->mask_size
                                              : NULL, policy->logits_size, &pa->rng[worker]);
}

sk_status sk_eval_host_init(sk_eval_host *host, const sk_loaded_policy *lp, int threads) {
    memset(host, 0, sizeof *host);
    if (threads < 0)
        return sk_fail(SK_ERR_INVALID, "threads = %d (expected 0 for one per core, or more)",
                       threads);
    sk_status status = sk_pool_create(&host->pool, sk_threads_or_cores(threads));
    if (status == SK_OK)
        status = sk_policy_actor_init(&host->policy, lp, sk_pool_size(host->pool),
                                      SK_ACTOR_DEFAULT_ROWS, 0);
    if (status != SK_OK) {
        sk_eval_host_free(host);
        return status;
    }
    host->parallel = sk_pool_parallel(host->pool);
    openblas_set_num_threads(1);
    return SK_OK;
}

void sk_eval_host_free(sk_eval_host *host) {
    sk_policy_actor_free(&host->policy);
    if (host->pool) sk_pool_destroy(host->pool);
    memset(host, 0, sizeof *host);
}
