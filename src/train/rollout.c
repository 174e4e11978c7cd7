/*
 * The rollout: each worker steps and infers on its own slice of the envs
 * (sk_vec's slices), with no synchronisation until the end, and writes what
 * it saw into rollout storage; then GAE over its slice.
 */
#include "algo.h"

#include "../vec/vec_internal.h"

#include <string.h>

void sk_copy_sample(const sk_rollout *ro, sk_sample_store to, size_t at, sk_sample_store from,
                    size_t k) {
    size_t O = (size_t)ro->obs_size, M = (size_t)ro->mask_size, H = (size_t)ro->num_heads;
    size_t D = (size_t)ro->action_dim;
    if (!ro->obs_u8_dtype) memcpy(to.obs + at * O, from.obs + k * O, O * sizeof(float));
    else if (to.obs_u8) memcpy(to.obs_u8 + at * O, from.obs_u8 + k * O, O);
    else /* into floats: the learner's side of the widening (the actor's: policy_obs) */
        sk_obs_widen(to.obs + at * O, from.obs_u8 + k * O, O);
    if (M) memcpy(to.masks + at * M, from.masks + k * M, M);
    memcpy(to.actions + at * H, from.actions + k * H, H * sizeof(int32_t));
    memcpy(to.actions_f + at * D, from.actions_f + k * D, D * sizeof(float));
    to.logp[at] = from.logp[k];
}

sk_sample_store sk_rollout_samples(const sk_rollout *ro) {
    return (sk_sample_store){ro->obs, ro->obs_u8, ro->masks, ro->actions, ro->actions_f, ro->logp};
}

sk_sample_store sk_ready_samples(const sk_rollout *ro) {
    return (sk_sample_store){ro->ready_obs, ro->ready_obs_u8, ro->ready_masks, ro->ready_actions,
                             ro->ready_actions_f, ro->ready_logp};
}

void sk_rollout_gae(sk_rollout *ro, bool bootstrap_truncated, float gamma, float gae_lambda,
                    int lo, int hi) {
    if (ro->num_agents > 1) {
        sk_gae_active_pending(ro->advantages, ro->returns, ro->rewards, ro->values,
                              ro->terminated, ro->truncated,
                              bootstrap_truncated ? ro->bootstrap : NULL, ro->active, ro->horizon,
                              ro->num_rows, lo, hi, gamma, gae_lambda, &ro->pending);
        /* a resolved action's inputs become a sample of this update, then an action
         * deferred at this rollout's end takes its place and is no sample of this one */
        sk_sample_store rollout = sk_rollout_samples(ro), ready = sk_ready_samples(ro);
        sk_sample_store pending = {ro->pending_obs, ro->pending_obs_u8, ro->pending_masks,
                                   ro->pending_actions, ro->pending_actions_f, ro->pending_logp};
        for (int i = lo; i < hi; i++) {
            if (ro->pending.resolved[i]) sk_copy_sample(ro, ready, (size_t)i, pending, (size_t)i);
            int t = ro->pending.deferred[i];
            if (t < 0) continue;
            size_t k = (size_t)t * (size_t)ro->num_rows + (size_t)i;
            sk_copy_sample(ro, pending, (size_t)i, rollout, k);
            ro->active[k] = 0;
        }
        return;
    }
    sk_gae(ro->advantages, ro->returns, ro->rewards, ro->values, ro->terminated, ro->truncated,
           bootstrap_truncated ? ro->bootstrap : NULL, ro->horizon, ro->num_rows, lo, hi, gamma,
           gae_lambda);
}

/* Copies observation rows lo..hi-1 from the vec's buffers into
 * rollout storage at index `at` (step * N + row): floats, or a uint8
 * env's bytes as they are. */
static void store_obs(sk_rollout *ro, const sk_vec_buffers *b, size_t at, int lo, int hi) {
    size_t O = (size_t)ro->obs_size, count = (size_t)(hi - lo);
    if (ro->obs_u8_dtype)
        memcpy(ro->obs_u8 + at * O, b->obs_u8 + (size_t)lo * O, count * O);
    else
        memcpy(ro->obs + at * O, b->obs + (size_t)lo * O, count * O * sizeof(float));
}

/* The policy's input for worker wk's rows of step t (0..T): the floats in
 * place, or a uint8 env's bytes widened into the worker's scratch, unless it
 * holds them already (wk->obs_wide_step). */
static const float *policy_obs(const sk_rollout *ro, sk_worker *wk, int t) {
    size_t O = (size_t)ro->obs_size, at = (size_t)t * (size_t)ro->num_rows + (size_t)wk->lo;
    if (!ro->obs_u8_dtype) return ro->obs + at * O;
    if (wk->obs_wide_step != t)
        sk_obs_widen(wk->obs_wide, ro->obs_u8 + at * O, (size_t)(wk->hi - wk->lo) * O);
    wk->obs_wide_step = t;
    return wk->obs_wide;
}

/* Copies what rows lo..hi-1 returned from the step (the vec's buffers)
 * into rollout row t (rewards, flags) and row t + 1 (observations, masks,
 * a multi-agent env's active flags). */
static void store_step(sk_rollout *ro, const sk_vec_buffers *b, int t, int lo, int hi) {
    size_t N = (size_t)ro->num_rows, M = (size_t)ro->mask_size;
    size_t row = (size_t)t * N, count = (size_t)(hi - lo);
    store_obs(ro, b, row + N + (size_t)lo, lo, hi);
    if (ro->num_agents > 1) memcpy(ro->active + row + N + lo, b->active + lo, count);
    if (M) memcpy(ro->masks + (row + N + (size_t)lo) * M, b->masks + (size_t)lo * M, count * M);
    memcpy(ro->rewards + row + lo, b->rewards + lo, count * sizeof(float));
    memcpy(ro->terminated + row + lo, b->terminated + lo, count);
    memcpy(ro->truncated + row + lo, b->truncated + lo, count);
}

/* Hands step t's actions of rows lo..hi-1 to the vec. */
static void load_actions(const sk_rollout *ro, const sk_vec_buffers *b, int t, int lo, int hi) {
    size_t row = (size_t)t * (size_t)ro->num_rows, count = (size_t)(hi - lo);
    size_t H = (size_t)ro->num_heads, D = (size_t)ro->action_dim;
    if (H)
        memcpy(b->actions + (size_t)lo * H, ro->actions + (row + (size_t)lo) * H,
               count * H * sizeof(int32_t));
    if (D)
        memcpy(b->actions_continuous + (size_t)lo * D, ro->actions_f + (row + (size_t)lo) * D,
               count * D * sizeof(float));
    if (D && ro->clip_actions)
        sk_space_clip(ro->clip_actions, b->actions_continuous + (size_t)lo * D, (int)count);
}

/* Normalises the fresh observations (norm_obs) and scales the rewards (norm_reward, returns
 * discounted by gamma) of step t for the worker's slice with the learner's frozen maps,
 * accumulating the raw values seen. */
static void normalize_step(sk_rollout *ro, const sk_learner *ln, bool norm_obs, bool norm_reward,
                           float gamma, sk_worker *wk, int t) {
    int N = ro->num_rows, O = ro->obs_size;
    size_t row = (size_t)t * (size_t)N;
    if (norm_obs) {
        for (int i = wk->lo; i < wk->hi; i++) {
            float *obs = ro->obs + (row + (size_t)N + (size_t)i) * (size_t)O;
            sk_welford_add(&wk->obs_acc, obs);
            sk_norm_apply(&ln->obs_map, obs);
        }
    }
    if (norm_reward) {
        for (int i = wk->lo; i < wk->hi; i++) {
            size_t k = row + (size_t)i;
            double discounted = ro->discounted_return[i] * gamma + ro->rewards[k];
            sk_welford_add_scalar(&wk->return_acc, discounted);
            /* a new episode starts its own discounted return */
            ro->discounted_return[i] = (ro->terminated[k] || ro->truncated[k]) ? 0.0 : discounted;
            sk_norm_apply(&ln->reward_map, &ro->rewards[k]);
        }
    }
}

/* The critic's values of `count` observations (policy-ready) into values;
 * with a core, from copies of the recurrent states of the envs `index` (one
 * more step of each, not kept: the envs' own states stay as they are). */
static void critic_values(const sk_learner *ln, const sk_rollout *ro, sk_worker *wk,
                          const float *obs, const int *index, int count, float *values) {
    if (ro->state_size) {
        size_t S = (size_t)ro->state_size;
        for (int k = 0; k < count; k++)
            memcpy(wk->trunc_state + (size_t)k * S, ro->state + (size_t)index[k] * S,
                   S * sizeof(float));
        sk_policy_core_step(&ln->policy, ln->params, obs, wk->trunc_state, count, &wk->work);
    }
    if (sk_policy_roles(&ln->policy) > 1) { /* each row's own role's critic */
        sk_policy_values_roles(&ln->policy, ln->params, obs, index, count, values, &wk->work,
                               &wk->role);
        return;
    }
    sk_policy_forward(&ln->policy, SK_NET_CRITIC, ln->params, obs, count, &wk->work);
    memcpy(values, wk->work.out[SK_NET_CRITIC], (size_t)count * sizeof(float));
}

static void record_episodes_and_truncations(sk_trainer *tr, sk_worker *wk, int t) {
    sk_rollout *ro = &tr->rollout;
    const sk_vec_buffers *b = sk_vec_buffers_of(tr->vec);
    int N = ro->num_rows, O = ro->obs_size, L = tr->env->num_log_fields, A = ro->num_agents;
    size_t row = (size_t)t * (size_t)N;
    int num_truncated = 0;
    for (int i = wk->lo; i < wk->hi; i++) {
        bool terminated = ro->terminated[row + (size_t)i], truncated = ro->truncated[row + (size_t)i];
        if (!terminated && !truncated) continue;
        if (tr->hooks && tr->hooks->is_other(tr->hooks_ctx, i)) continue; /* not the learner's */
        const float *log = b->episode_log + (size_t)i * (size_t)L;
        float *record = wk->episodes + SK_EPISODE_RECORD(L) * (size_t)wk->num_episodes++;
        memcpy(record, log, (size_t)L * sizeof(float));
        record[L] = (float)t; /* exact: t < 2^24 */
        record[L + 1] = (float)(i % A); /* the agent: exact, A <= SK_MAX_AGENTS */
        if (truncated && !terminated) {
            float *copy = wk->trunc_obs + (size_t)num_truncated * (size_t)O;
            if (b->final_obs_u8)
                sk_obs_widen(copy, b->final_obs_u8 + (size_t)i * (size_t)O, (size_t)O);
            else
                memcpy(copy, b->final_obs + (size_t)i * (size_t)O, (size_t)O * sizeof(float));
            if (tr->s.norm_obs) sk_norm_apply(&tr->learner.obs_map, copy);
            wk->trunc_index[num_truncated++] = i;
        }
    }
    if (num_truncated == 0 || !tr->algo->rollout_values) return;
    /* the value of the final observation, seen from where the episode was */
    float *values = wk->work.logp; /* free between the rollout's uses */
    critic_values(&tr->learner, ro, wk, wk->trunc_obs, wk->trunc_index, num_truncated, values);
    for (int k = 0; k < num_truncated; k++)
        ro->bootstrap[row + (size_t)wk->trunc_index[k]] = values[k];
}

/* With a core: the states of envs whose episode ended at step t start over
 * (the autoreset step's observation opens the next episode). */
static void reset_ended_states(sk_rollout *ro, const sk_worker *wk, int t) {
    size_t S = (size_t)ro->state_size, row = (size_t)t * (size_t)ro->num_rows;
    for (int i = wk->lo; i < wk->hi; i++)
        if (ro->terminated[row + (size_t)i] || ro->truncated[row + (size_t)i])
            memset(ro->state + (size_t)i * S, 0, S * sizeof(float));
}

/* With a core: keeps the states entering chunk t / L, then advances the
 * slice's states by the observations of step t; work.features holds them. */
static void core_step(sk_rollout *ro, const sk_learner *ln, sk_worker *wk, int t,
                      const float *obs_t) {
    size_t S = (size_t)ro->state_size, N = (size_t)ro->num_rows, lo = (size_t)wk->lo;
    float *state = ro->state + lo * S;
    if (t % ro->bptt_horizon == 0) {
        size_t chunk = (size_t)(t / ro->bptt_horizon) * N;
        memcpy(ro->chunk_state + (chunk + lo) * S, state,
               (size_t)(wk->hi - wk->lo) * S * sizeof(float));
    }
    sk_policy_core_step(&ln->policy, ln->params, obs_t, state, wk->hi - wk->lo, &wk->work);
}

int sk_rollout_learner_rows(const sk_trainer *tr, const sk_worker *wk, int t, int32_t *rows) {
    const sk_rollout *ro = &tr->rollout;
    /* a multi-agent env's flags of step t: final when the step acts (store_step and the
     * hooks' after_step wrote them); GAE only clears some later (a deferred action's) */
    size_t row = (size_t)t * (size_t)ro->num_rows;
    const uint8_t *active = ro->num_agents > 1 ? ro->active + row : NULL;
    int count = 0;
    for (int i = wk->lo; i < wk->hi; i++) {
        if (active && !active[i]) continue; /* its agent waits: the env ignores its action */
        if (tr->hooks && tr->hooks->is_other(tr->hooks_ctx, i)) continue;
        rows[count++] = i - wk->lo;
    }
    return count;
}

void sk_rollout_job(void *ctx, int w, int num_workers) {
    (void)num_workers;
    sk_trainer *tr = ctx;
    sk_rollout *ro = &tr->rollout;
    const sk_learner *ln = &tr->learner;
    sk_worker *wk = &tr->workers[w];
    const sk_vec_buffers *b = sk_vec_buffers_of(tr->vec);
    int N = ro->num_rows, T = ro->horizon, O = ro->obs_size, H = ro->num_heads;
    int D = ro->action_dim, M = ro->mask_size, lo = wk->lo, B = wk->hi - wk->lo;
    int A = ro->num_agents; /* the worker's rows lo..hi-1 are its envs lo / A..hi / A - 1 */
    wk->num_episodes = 0;
    /* an env fault at the reset or in another rollout ends the run (trainer.c) */
    if (B == 0 || sk_vec_faulted(tr->vec)) return;

    /* step T of the last rollout, widened for its values, is this one's step 0 */
    wk->obs_wide_step = tr->progress.update > 0 && wk->obs_wide_step == T ? 0 : -1;
    if (tr->progress.update > 0) { /* the last rollout's final observations start this one */
        if (ro->obs_u8_dtype)
            memcpy(ro->obs_u8 + (size_t)lo * O, ro->obs_u8 + ((size_t)T * N + (size_t)lo) * O,
                   (size_t)B * O);
        else
            memcpy(ro->obs + (size_t)lo * O, ro->obs + ((size_t)T * N + (size_t)lo) * O,
                   (size_t)B * O * sizeof(float));
        if (M)
            memcpy(ro->masks + (size_t)lo * M, ro->masks + ((size_t)T * N + (size_t)lo) * M,
                   (size_t)B * M);
        if (ro->num_agents > 1)
            memcpy(ro->active + lo, ro->active + (size_t)T * N + (size_t)lo, (size_t)B);
    }
    for (int t = 0; t < T; t++) {
        size_t row = (size_t)t * (size_t)N;
        const float *obs_t = policy_obs(ro, wk, t);
        const uint8_t *masks_t = M ? ro->masks + (row + (size_t)lo) * (size_t)M : NULL;
        if (ro->state_size) core_step(ro, ln, wk, t, obs_t);
        if (sk_policy_roles(&ln->policy) > 1) { /* lo is an env's first agent: role 0 */
            sk_policy_act_roles(&ln->policy, ln->params, obs_t, masks_t, B, &wk->rng, false,
                                ro->actions + (row + (size_t)lo) * (size_t)H,
                                ro->actions_f + (row + (size_t)lo) * (size_t)D,
                                ro->logp + row + (size_t)lo, ro->values + row + (size_t)lo,
                                &wk->work, &wk->role);
        } else {
            tr->algo->act(tr, wk, t, obs_t, masks_t, B);
        }
        if (tr->hooks) tr->hooks->act(tr->hooks_ctx, ro, &ln->policy, wk, t, obs_t);

        load_actions(ro, b, t, lo, wk->hi);
        /* each env's step count since the run began: update * T + t + 1 */
        if (!sk_vec_step_checked(tr->vec, lo / A, wk->hi / A, tr->progress.update * T + t + 1))
            return;
        store_step(ro, b, t, lo, wk->hi);
        if (tr->algo->after_step) tr->algo->after_step(tr, wk, t);
        normalize_step(ro, ln, tr->s.norm_obs, tr->s.norm_reward, (float)tr->s.gamma, wk, t);
        record_episodes_and_truncations(tr, wk, t);
        if (tr->hooks)
            tr->hooks->after_step(tr->hooks_ctx, ro, lo, wk->hi, t, b->episode_log,
                                  tr->env->num_log_fields);
        if (ro->state_size) reset_ended_states(ro, wk, t);
    }
    if (!tr->algo->rollout_values) return;
    /* value of the observation after the last step, for GAE */
    size_t last = (size_t)T * (size_t)N + (size_t)lo;
    for (int k = 0; k < B; k++) wk->trunc_index[k] = lo + k;
    critic_values(ln, ro, wk, policy_obs(ro, wk, T), wk->trunc_index, B, ro->values + last);
    sk_rollout_gae(ro, tr->s.bootstrap_truncated, (float)tr->s.gamma, (float)tr->s.gae_lambda, lo,
                   wk->hi);
}

void sk_reset_job(void *ctx, int w, int num_workers) {
    (void)num_workers;
    sk_trainer *tr = ctx;
    sk_rollout *ro = &tr->rollout;
    sk_worker *wk = &tr->workers[w];
    if (wk->hi == wk->lo) return;
    int A = ro->num_agents;
    if (!sk_vec_reset_checked(tr->vec, wk->lo / A, wk->hi / A, tr->layout.env_seed)) return;
    size_t S = (size_t)ro->state_size; /* every episode starts from a zero state */
    memset(ro->state + (size_t)wk->lo * S, 0, (size_t)(wk->hi - wk->lo) * S * sizeof(float));
    const sk_vec_buffers *b = sk_vec_buffers_of(tr->vec);
    size_t O = (size_t)ro->obs_size, M = (size_t)ro->mask_size, count = (size_t)(wk->hi - wk->lo);
    store_obs(ro, b, (size_t)wk->lo, wk->lo, wk->hi);
    if (M) memcpy(ro->masks + (size_t)wk->lo * M, b->masks + (size_t)wk->lo * M, count * M);
    if (ro->num_agents > 1) memcpy(ro->active + wk->lo, b->active + wk->lo, count);
    if (tr->hooks) /* the other players' rows are not samples */
        tr->hooks->after_step(tr->hooks_ctx, ro, wk->lo, wk->hi, -1, b->episode_log,
                              tr->env->num_log_fields);
    if (tr->s.norm_obs) {
        for (int i = wk->lo; i < wk->hi; i++) {
            float *obs = ro->obs + (size_t)i * O;
            sk_welford_add(&wk->obs_acc, obs);
            sk_norm_apply(&tr->learner.obs_map, obs);
        }
    }
}
