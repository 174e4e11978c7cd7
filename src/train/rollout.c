/* The two parallel phases of a PPO iteration: the rollout (each worker steps
 * and infers on its own slice of envs, with no synchronisation until the end)
 * and the minibatch gradient (each worker takes a block of the minibatch). */
#include "rollout.h"

#include <string.h>

/* Normalises the fresh observations and scales the rewards of step t for the
 * worker's slice with the frozen maps, accumulating the raw values seen. */
static void normalize_step(sk_trainer *tr, sk_worker *wk, int t) {
    int N = tr->s.num_envs, O = tr->obs_size;
    size_t row = (size_t)t * (size_t)N;
    if (tr->s.norm_obs) {
        for (int i = wk->lo; i < wk->hi; i++) {
            float *obs = tr->obs + (row + (size_t)N + (size_t)i) * (size_t)O;
            sk_welford_add(&wk->obs_acc, obs);
            sk_norm_apply(&tr->obs_map, obs);
        }
    }
    if (tr->s.norm_reward) {
        float gamma = (float)tr->s.gamma;
        for (int i = wk->lo; i < wk->hi; i++) {
            size_t k = row + (size_t)i;
            double discounted = tr->discounted_return[i] * gamma + tr->rewards[k];
            sk_welford_add_scalar(&wk->return_acc, discounted);
            /* a new episode starts its own discounted return */
            tr->discounted_return[i] = (tr->terminated[k] || tr->truncated[k]) ? 0.0 : discounted;
            sk_norm_apply(&tr->reward_map, &tr->rewards[k]);
        }
    }
}

static void record_episodes_and_truncations(sk_trainer *tr, sk_worker *wk, int t) {
    const sk_env_def *env = tr->env;
    int N = tr->s.num_envs, O = tr->obs_size, L = env->num_log_fields;
    size_t row = (size_t)t * (size_t)N;
    int num_truncated = 0;
    for (int i = wk->lo; i < wk->hi; i++) {
        bool terminated = tr->terminated[row + (size_t)i], truncated = tr->truncated[row + (size_t)i];
        if (!terminated && !truncated) continue;
        const float *log = tr->episode_log + (size_t)i * (size_t)L;
        float *record = wk->episodes + (size_t)(L + 1) * (size_t)wk->num_episodes++;
        memcpy(record, log, (size_t)L * sizeof(float));
        record[L] = (float)t; /* exact: t < 2^24 */
        if (truncated && !terminated) {
            float *copy = wk->trunc_obs + (size_t)num_truncated * (size_t)O;
            memcpy(copy, tr->final_obs + (size_t)i * (size_t)O, (size_t)O * sizeof(float));
            if (tr->s.norm_obs) sk_norm_apply(&tr->obs_map, copy);
            wk->trunc_index[num_truncated++] = i;
        }
    }
    if (num_truncated == 0) return;
    sk_policy_forward(&tr->policy, SK_NET_CRITIC, tr->params, wk->trunc_obs, num_truncated,
                      &wk->work);
    for (int k = 0; k < num_truncated; k++)
        tr->bootstrap[row + (size_t)wk->trunc_index[k]] = wk->work.out[SK_NET_CRITIC][k];
}

void sk_rollout_job(void *ctx, int w, int num_workers) {
    (void)num_workers;
    sk_trainer *tr = ctx;
    sk_worker *wk = &tr->workers[w];
    const sk_env_def *env = tr->env;
    int N = tr->s.num_envs, T = tr->s.horizon, O = tr->obs_size, H = tr->num_heads;
    int D = tr->action_dim, M = tr->mask_size, lo = wk->lo, B = wk->hi - wk->lo;
    wk->num_episodes = 0;
    if (B == 0) return;

    if (tr->update > 0) { /* the last rollout's final observations start this one */
        memcpy(tr->obs + (size_t)lo * O, tr->obs + ((size_t)T * N + (size_t)lo) * O,
               (size_t)B * O * sizeof(float));
        if (M)
            memcpy(tr->masks + (size_t)lo * M, tr->masks + ((size_t)T * N + (size_t)lo) * M,
                   (size_t)B * M);
    }
    for (int t = 0; t < T; t++) {
        size_t row = (size_t)t * (size_t)N;
        const float *obs_t = tr->obs + (row + (size_t)lo) * (size_t)O;
        const uint8_t *masks_t = M ? tr->masks + (row + (size_t)lo) * (size_t)M : NULL;
        sk_policy_forward(&tr->policy, SK_NET_ACTOR, tr->params, obs_t, B, &wk->work);
        sk_policy_sample(&tr->policy, tr->params, wk->work.out[SK_NET_ACTOR], masks_t, B,
                         &wk->rng, false, tr->actions + (row + (size_t)lo) * (size_t)H,
                         tr->actions_f + (row + (size_t)lo) * (size_t)D,
                         tr->logp + row + (size_t)lo);
        sk_policy_forward(&tr->policy, SK_NET_CRITIC, tr->params, obs_t, B, &wk->work);
        memcpy(tr->values + row + (size_t)lo, wk->work.out[SK_NET_CRITIC], (size_t)B * sizeof(float));

        sk_env_io io = {
            .obs = tr->obs + (row + (size_t)N) * (size_t)O,
            .final_obs = tr->final_obs,
            .actions = tr->actions + row * (size_t)H,
            .actions_continuous = tr->actions_f + row * (size_t)D,
            .rewards = tr->rewards + row,
            .terminated = tr->terminated + row,
            .truncated = tr->truncated + row,
            .masks = M ? tr->masks + (row + (size_t)N) * (size_t)M : NULL,
            .episode_log = tr->episode_log,
        };
        env->step(tr->env_state, &io, lo, wk->hi);
        normalize_step(tr, wk, t);
        record_episodes_and_truncations(tr, wk, t);
    }
    /* value of the observation after the last step, for GAE */
    size_t last = (size_t)T * (size_t)N + (size_t)lo;
    sk_policy_forward(&tr->policy, SK_NET_CRITIC, tr->params, tr->obs + last * (size_t)O, B,
                      &wk->work);
    memcpy(tr->values + last, wk->work.out[SK_NET_CRITIC], (size_t)B * sizeof(float));
    sk_gae(tr->advantages, tr->returns, tr->rewards, tr->values, tr->terminated, tr->truncated,
           tr->s.bootstrap_truncated ? tr->bootstrap : NULL, T, N, lo, wk->hi,
           (float)tr->s.gamma, (float)tr->s.gae_lambda);
}

void sk_reset_job(void *ctx, int w, int num_workers) {
    (void)num_workers;
    sk_trainer *tr = ctx;
    sk_worker *wk = &tr->workers[w];
    if (wk->hi == wk->lo) return;
    sk_env_io io = {
        .obs = tr->obs,
        .final_obs = tr->final_obs,
        .masks = tr->mask_size ? tr->masks : NULL,
        .episode_log = tr->episode_log,
    };
    tr->env->reset(tr->env_state, &io, wk->lo, wk->hi, tr->s.seed);
    if (tr->s.norm_obs) {
        for (int i = wk->lo; i < wk->hi; i++) {
            float *obs = tr->obs + (size_t)i * (size_t)tr->obs_size;
            sk_welford_add(&wk->obs_acc, obs);
            sk_norm_apply(&tr->obs_map, obs);
        }
    }
}

void sk_minibatch_job(void *ctx, int w, int num_workers) {
    sk_trainer *tr = ctx;
    sk_worker *wk = &tr->workers[w];
    int O = tr->obs_size, H = tr->num_heads, D = tr->action_dim, M = tr->mask_size;
    int lo, hi;
    sk_slice(tr->minibatch_size, w, num_workers, &lo, &hi);
    memset(wk->grads, 0, tr->policy.num_params * sizeof(float));
    memset(&wk->sums, 0, sizeof wk->sums);
    int rows = hi - lo;
    if (rows == 0) return;
    const int32_t *indices = tr->perm + tr->current_minibatch + lo;
    for (int r = 0; r < rows; r++) {
        size_t k = (size_t)indices[r];
        memcpy(wk->mb_obs + (size_t)r * O, tr->obs + k * O, (size_t)O * sizeof(float));
        memcpy(wk->mb_actions + (size_t)r * H, tr->actions + k * H, (size_t)H * sizeof(int32_t));
        memcpy(wk->mb_actions_f + (size_t)r * D, tr->actions_f + k * D, (size_t)D * sizeof(float));
        if (M) memcpy(wk->mb_masks + (size_t)r * M, tr->masks + k * M, (size_t)M);
        wk->mb_logp[r] = tr->logp[k];
        wk->mb_returns[r] = tr->returns[k];
        wk->mb_values[r] = tr->values[k];
        wk->mb_adv[r] = tr->mb_adv_norm[lo + r];
    }
    sk_ppo_rows block = {
        .rows = rows,
        .obs = wk->mb_obs,
        .actions = H ? wk->mb_actions : NULL,
        .actions_continuous = D ? wk->mb_actions_f : NULL,
        .masks = M ? wk->mb_masks : NULL,
        .old_logp = wk->mb_logp,
        .advantages = wk->mb_adv,
        .returns = wk->mb_returns,
        .old_values = wk->mb_values,
    };
    sk_ppo_loss_config loss = {
        .clip_coef = (float)tr->s.clip_coef,
        .ent_coef = (float)tr->s.ent_coef,
        .vf_coef = (float)tr->s.vf_coef,
        .clip_vloss = tr->s.clip_vloss,
    };
    sk_ppo_loss_grad(&tr->policy, tr->params, wk->grads, &wk->work, &block,
                     1.0f / (float)tr->minibatch_size, &loss, &wk->sums);
}
