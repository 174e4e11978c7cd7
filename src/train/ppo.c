#include "ppo.h"

#include "../core/core.h"

#include <math.h>
#include <string.h>

void sk_ppo_loss_grad(const sk_policy *policy, const float *params, float *grads,
                      sk_policy_work *work, const sk_ppo_rows *rows, float scale,
                      const sk_ppo_loss_config *config, sk_ppo_loss_sums *sums) {
    int B = rows->rows;
    int T = policy->core ? rows->seq_len : 1, sequences = B / T;
    if (policy->core) {
        SK_ASSERT(T >= 1 && B % T == 0);
        sk_policy_core_forward(policy, params, rows->obs, rows->state0, rows->resets, T,
                               sequences, work);
    }
    sk_policy_forward_both(policy, params, rows->obs, B, work);
    const float *logits = work->out[SK_NET_ACTOR];
    const float *values = work->out[SK_NET_CRITIC];
    sk_policy_evaluate(policy, params, logits, rows->masks, rows->actions,
                       rows->actions_continuous, B, work->logp, work->entropy);

    float *dlogp = work->dout[SK_NET_CRITIC]; /* borrowed: dvalues is written after use */
    float *dvalues = work->dout[SK_NET_CRITIC];
    float clip = config->clip_coef;
    /* d(loss)/d(entropy) is the same for every row */
    float dentropy_row = -config->ent_coef * scale;
    float *dentropy = work->entropy; /* overwritten below after its sum is taken */
    for (int i = 0; i < B; i++) {
        float logratio = work->logp[i] - rows->old_logp[i];
        float ratio = expf(logratio);
        float adv = rows->advantages[i];
        float clipped_ratio = fminf(fmaxf(ratio, 1.0f - clip), 1.0f + clip);
        float unclipped_term = -adv * ratio, clipped_term = -adv * clipped_ratio;
        sums->policy_loss += fmaxf(unclipped_term, clipped_term);
        sums->approx_kl += (double)((ratio - 1.0f) - logratio);
        sums->clip_fraction += fabsf(ratio - 1.0f) > clip ? 1.0 : 0.0;
        sums->entropy += work->entropy[i];
        /* max(a, b) passes the gradient to the larger term; where they tie the
         * ratio is inside the clip range and both give -adv. */
        dlogp[i] = unclipped_term >= clipped_term ? -adv * ratio * scale : 0.0f;
        dentropy[i] = dentropy_row;
    }
    sk_policy_dist_backward(policy, params, grads, logits, rows->masks, rows->actions,
                            rows->actions_continuous, B, dlogp, dentropy,
                            work->dout[SK_NET_ACTOR]);

    float dv_scale = config->vf_coef * scale; /* d(0.5 * e^2)/de = e */
    for (int i = 0; i < B; i++) {
        float value = values[i], target = rows->returns[i];
        float error = value - target;
        float unclipped = error * error;
        if (config->clip_vloss) {
            float old = rows->old_values[i];
            float delta = value - old;
            float clamped = fminf(fmaxf(delta, -clip), clip);
            float clipped_error = old + clamped - target;
            float clipped = clipped_error * clipped_error;
            sums->value_loss += 0.5 * fmaxf(unclipped, clipped);
            if (unclipped >= clipped) {
                dvalues[i] = dv_scale * error;
            } else {
                bool inside = delta >= -clip && delta <= clip;
                dvalues[i] = inside ? dv_scale * clipped_error : 0.0f;
            }
        } else {
            sums->value_loss += 0.5 * unclipped;
            dvalues[i] = dv_scale * error;
        }
    }
    if (policy->core)
        memset(work->dfeatures, 0, (size_t)B * (size_t)policy->feature_size * sizeof(float));
    sk_policy_backward_both(policy, params, grads, rows->obs, B, work);
    if (policy->core)
        sk_policy_core_backward(policy, params, grads, rows->obs, rows->resets, T, sequences, work);
}

void sk_gae(float *advantages, float *returns, const float *rewards, const float *values,
            const uint8_t *terminated, const uint8_t *truncated, const float *bootstrap, int T,
            int N, int lo, int hi, float gamma, float lambda) {
    for (int i = lo; i < hi; i++) {
        float last = 0.0f;
        for (int t = T - 1; t >= 0; t--) {
            size_t k = (size_t)t * (size_t)N + (size_t)i;
            float value = values[k];
            float delta;
            if (terminated[k]) {
                delta = rewards[k] - value;
                last = delta;
            } else if (truncated[k]) {
                /* without bootstrap values the cut is treated as terminal */
                delta = rewards[k] + (bootstrap ? gamma * bootstrap[k] : 0.0f) - value;
                last = delta;
            } else {
                delta = rewards[k] + gamma * values[k + (size_t)N] - value;
                last = delta + gamma * lambda * last;
            }
            advantages[k] = last;
            returns[k] = last + value;
        }
    }
}

/* The action of row i that waited from an earlier rollout, resolved in this one where its
 * outcome came (the advantages of this rollout's steps already known), or kept waiting
 * with this rollout's rewards added. */
static void resolve_waiting(const float *advantages, const float *rewards, const float *values,
                            const uint8_t *terminated, const uint8_t *truncated,
                            const float *bootstrap, const uint8_t *active, int T, int N, int i,
                            float gamma, float lambda, const sk_gae_pending *pending) {
    float earned = pending->reward[i], value = pending->value[i], delta = 0.0f, tail = 0.0f;
    bool resolved = false;
    for (int t = 0; t <= T && !resolved; t++) {
        size_t k = (size_t)t * (size_t)N + (size_t)i;
        if (active[k]) { /* the agent acts again: bootstrapped there, its advantage carried */
            delta = earned + gamma * values[k] - value;
            tail = t < T ? gamma * lambda * advantages[k] : 0.0f;
            resolved = true;
        } else if (t < T) {
            earned += rewards[k];
            if (terminated[k] || truncated[k]) {
                float next = truncated[k] && !terminated[k] && bootstrap ? bootstrap[k] : 0.0f;
                delta = earned + gamma * next - value;
                resolved = true;
            }
        }
    }
    pending->waiting[i] = !resolved;
    pending->reward[i] = earned;
    if (!resolved) return;
    pending->resolved[i] = 1;
    pending->resolved_value[i] = value;
    pending->resolved_adv[i] = delta + tail;
    pending->resolved_ret[i] = delta + tail + value;
}

void sk_gae_active_pending(float *advantages, float *returns, const float *rewards,
                           const float *values, const uint8_t *terminated,
                           const uint8_t *truncated, const float *bootstrap,
                           const uint8_t *active, int T, int N, int lo, int hi, float gamma,
                           float lambda, const sk_gae_pending *pending) {
    for (int i = lo; i < hi; i++) {
        float last = 0.0f, next_value = values[(size_t)T * (size_t)N + (size_t)i];
        /* an agent waiting after the rollout's last step has no value of its own there (the
         * critic never learns a waiting agent's): its last action bootstraps from itself, or
         * with pending, waits for the next rollout */
        bool next_known = active[(size_t)T * (size_t)N + (size_t)i];
        int deferred = -1;
        float deferred_reward = 0.0f;
        /* what the wait after the next-earlier active step brings: summed rewards, and
         * whether (and how) the episode ended during it */
        float carry = 0.0f, carry_bootstrap = 0.0f;
        enum { GOES_ON, TERMINAL, TRUNCATED } carry_end = GOES_ON;
        for (int t = T - 1; t >= 0; t--) {
            size_t k = (size_t)t * (size_t)N + (size_t)i;
            bool ended = terminated[k] || truncated[k];
            if (!active[k]) {
                advantages[k] = returns[k] = 0.0f;
                if (ended) { /* the steps after this one are the next episode's */
                    carry = rewards[k];
                    carry_end = terminated[k] ? TERMINAL : TRUNCATED;
                    carry_bootstrap = bootstrap ? bootstrap[k] : 0.0f;
                } else {
                    carry += rewards[k];
                }
                continue;
            }
            float value = values[k], delta;
            if (terminated[k]) {
                delta = rewards[k] - value;
                last = delta;
            } else if (truncated[k]) {
                delta = rewards[k] + (bootstrap ? gamma * bootstrap[k] : 0.0f) - value;
                last = delta;
            } else if (carry_end == TERMINAL) {
                delta = rewards[k] + carry - value;
                last = delta;
            } else if (carry_end == TRUNCATED) {
                delta = rewards[k] + carry + gamma * carry_bootstrap - value;
                last = delta;
            } else if (!next_known && pending) { /* its outcome is still to come: deferred */
                deferred = t;
                deferred_reward = rewards[k] + carry;
                advantages[k] = returns[k] = 0.0f;
                last = 0.0f;
                next_value = value;
                next_known = true;
                carry = 0.0f;
                continue;
            } else {
                delta = rewards[k] + carry + gamma * (next_known ? next_value : value) - value;
                last = delta + gamma * lambda * last;
            }
            advantages[k] = last;
            returns[k] = last + value;
            next_value = value;
            next_known = true;
            carry = 0.0f;
            carry_end = GOES_ON;
        }
        if (!pending) continue;
        pending->resolved[i] = 0;
        if (pending->waiting[i])
            resolve_waiting(advantages, rewards, values, terminated, truncated, bootstrap, active,
                            T, N, i, gamma, lambda, pending);
        pending->deferred[i] = deferred;
        if (deferred < 0) continue;
        pending->waiting[i] = 1;
        pending->reward[i] = deferred_reward;
        pending->value[i] = values[(size_t)deferred * (size_t)N + (size_t)i];
    }
}

void sk_gae_active(float *advantages, float *returns, const float *rewards, const float *values,
                   const uint8_t *terminated, const uint8_t *truncated, const float *bootstrap,
                   const uint8_t *active, int T, int N, int lo, int hi, float gamma, float lambda) {
    sk_gae_active_pending(advantages, returns, rewards, values, terminated, truncated, bootstrap,
                          active, T, N, lo, hi, gamma, lambda, NULL);
}

void sk_normalize(float *out, const float *x, int n) {
    double mean = 0.0;
    for (int i = 0; i < n; i++) mean += x[i];
    mean /= n;
    double var = 0.0;
    for (int i = 0; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
    double std = n > 1 ? sqrt(var / (n - 1)) : 0.0;
    for (int i = 0; i < n; i++) out[i] = (float)((x[i] - mean) / (std + 1e-8));
}
