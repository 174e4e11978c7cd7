/*
 * DQN (train.algo = dqn): a Q network (the policy's actor net, its outputs the action
 * values: the MLP or CNN encoder as PPO's policy has them), a target copy, epsilon-greedy
 * acting over legal actions, one-step or n-step targets, optionally double DQN (the online
 * net picks the next action, the target net scores it). The iteration is the off-policy
 * one of offpolicy.c.
 *
 * Defaults: CleanRL's dqn.py for vector observations (lr 2.5e-4, replay 10,000, gamma
 * 0.99, tau 1, target every 500 steps, batch 128, epsilon 1 -> 0.05 over half the run,
 * learning from step 10,000, a gradient step every 10 env steps) and its dqn_atari.py for
 * uint8 images (lr 1e-4, replay 1M, target every 1,000, batch 32, epsilon -> 0.01 over a
 * tenth of the run, learning from 80,000, every 4 steps). The loss is the mean squared TD
 * error, as both scripts take it; Adam with PyTorch's eps 1e-8.
 */
#include "dqn.h"

#include "algo.h"
#include "offpolicy.h"

#include "../nn/nn.h"

#include <math.h>
#include <string.h>

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        sk_status check_status_ = (expr);                                                          \
        if (check_status_ != SK_OK) return check_status_;                                          \
    } while (0)

int sk_dqn_argmax(const float *q, const uint8_t *mask, int num_actions) {
    int best = -1;
    for (int a = 0; a < num_actions; a++)
        if ((!mask || mask[a]) && (best < 0 || q[a] > q[best])) best = a;
    return best < 0 ? 0 : best;
}

int sk_dqn_explore(const uint8_t *mask, int num_actions, uint64_t *rng) {
    int legal = 0;
    for (int a = 0; a < num_actions; a++) legal += !mask || mask[a];
    int pick = legal > 0 ? (int)sk_rng_below(rng, (uint32_t)legal) : 0;
    for (int a = 0; a < num_actions; a++)
        if ((!mask || mask[a]) && pick-- == 0) return a;
    return 0;
}

double sk_dqn_loss_grad(const sk_policy *policy, const float *params, const float *target,
                        float *grads, const sk_dqn_batch *batch, bool double_q, float *q_next,
                        sk_policy_work *work, double *q_taken) {
    int B = batch->rows, A = policy->logits_size;
    size_t stride = (size_t)A;
    sk_policy_forward(policy, SK_NET_ACTOR, target, batch->next_obs, B, work);
    memcpy(q_next, work->out[SK_NET_ACTOR], (size_t)B * stride * sizeof(float));
    /* the next action: the target's own greedy one, or (double DQN) the online net's */
    const float *chooser = q_next;
    if (double_q) {
        sk_policy_forward(policy, SK_NET_ACTOR, params, batch->next_obs, B, work);
        chooser = work->out[SK_NET_ACTOR];
    }
    float *next_value = work->logp; /* (capacity) free here; the forward below keeps it */
    for (int b = 0; b < B; b++) {
        const uint8_t *mask = batch->next_masks ? batch->next_masks + (size_t)b * stride : NULL;
        int choice = sk_dqn_argmax(chooser + (size_t)b * stride, mask, A);
        next_value[b] = q_next[(size_t)b * stride + (size_t)choice];
    }
    sk_policy_forward(policy, SK_NET_ACTOR, params, batch->obs, B, work);
    const float *q = work->out[SK_NET_ACTOR];
    float *dq = work->dout[SK_NET_ACTOR];
    memset(dq, 0, (size_t)B * stride * sizeof(float));
    double loss = 0.0, q_sum = 0.0;
    for (int b = 0; b < B; b++) {
        float y = batch->returns[b] + batch->discounts[b] * next_value[b];
        size_t at = (size_t)b * stride + (size_t)batch->actions[b];
        float error = q[at] - y;
        loss += (double)error * error;
        q_sum += q[at];
        dq[at] = 2.0f * error / (float)B;
    }
    if (q_taken) *q_taken = q_sum / B;
    sk_policy_backward(policy, SK_NET_ACTOR, params, grads, batch->obs, B, work);
    return loss / B;
}

/* ---- the learner's row ---- */

typedef struct dqn {
    sk_offpolicy op;
    double learning_rate, gamma, start_e, end_e, exploration_fraction, adam_eps, max_grad_norm;
    int batch_size, n_step;
    bool double_q;
    float *target;              /* (num_params) the target network */
    sk_policy_work work;        /* batch_size rows */
    int64_t *slots;             /* (batch) */
    float *obs, *next_obs;      /* (batch, obs_size) */
    int32_t *actions;
    float *returns, *discounts; /* (batch) */
    uint8_t *next_masks;        /* (batch, actions) */
    float *q_next;              /* (batch, actions) */
    double q_taken;             /* the last iteration's mean Q(s, a) over its batches (NaN: none) */
} dqn;

static dqn *state_of(const sk_trainer *tr) { return tr->algo_state; }

static sk_status dqn_settings(sk_trainer *tr) {
    dqn *d = calloc(1, sizeof *d);
    if (!d) return sk_fail(SK_ERR_NOMEM, "out of memory");
    tr->algo_state = d;
    d->q_taken = NAN;
    bool images = tr->env->obs_dtype == SK_OBS_U8; /* dqn_atari.py's settings */
    int64_t v;
    CHECK(sk_cfg_double(tr->cfg, "dqn.learning_rate", images ? 1e-4 : 2.5e-4, 0.0, 1.0,
                        &d->learning_rate));
    CHECK(sk_cfg_double(tr->cfg, "dqn.gamma", 0.99, 0.0, 1.0, &d->gamma));
    CHECK(sk_cfg_int(tr->cfg, "dqn.batch_size", images ? 32 : 128, 1, 1 << 16, &v));
    d->batch_size = (int)v;
    CHECK(sk_cfg_double(tr->cfg, "dqn.start_e", 1.0, 0.0, 1.0, &d->start_e));
    CHECK(sk_cfg_double(tr->cfg, "dqn.end_e", images ? 0.01 : 0.05, 0.0, 1.0, &d->end_e));
    CHECK(sk_cfg_double(tr->cfg, "dqn.exploration_fraction", images ? 0.10 : 0.5, 1e-9, 1.0,
                        &d->exploration_fraction));
    CHECK(sk_cfg_double(tr->cfg, "dqn.adam_eps", 1e-8, 1e-12, 1.0, &d->adam_eps));
    CHECK(sk_cfg_double(tr->cfg, "dqn.max_grad_norm", 0.0, 0.0, 1e9, &d->max_grad_norm));
    CHECK(sk_cfg_bool(tr->cfg, "dqn.double", false, &d->double_q));
    CHECK(sk_cfg_int(tr->cfg, "dqn.n_step", 1, 1, 1000, &v));
    d->n_step = (int)v;
    d->op.learning_starts = images ? 80000 : 10000;
    d->op.train_frequency = images ? 4 : 10;
    d->op.gradient_steps_per_round = 1;
    d->op.target_frequency = images ? 1000 : 500;
    d->op.tau = 1.0;
    return sk_offpolicy_settings(tr, &d->op, "dqn", images ? 1000000 : 10000);
}

static sk_status dqn_check(sk_trainer *tr) {
    const sk_env_def *env = tr->env;
    const char *why = NULL;
    if (env->action_space.kind != SK_SPACE_DISCRETE || env->action_space.num_heads != 1)
        why = "its actions are not one Discrete head (DQN scores each action of one head; "
              "continuous control: train.algo = sac)";
    else if (sk_env_agents(env) > 1) why = "it has several agents per env";
    else if (tr->learner.policy.core) why = "policy.core is set (a recurrent core needs sequence "
                                            "replay, which DQN here does not do): set policy.core = none";
    else if (tr->sp.on) why = "self-play (selfplay.*) learns from the rollout's games, which "
                              "replay would mix with old opponents' ones";
    else if (tr->comm.size > 1) why = "it runs under several processes (DQN trains in one "
                                      "process: use --threads, not mpirun)";
    else if (sk_policy_roles(&tr->learner.policy) > 1) why = "policy.per_role is set";
    if (!why) return SK_OK;
    return sk_fail(SK_ERR_CONFIG, "train.algo = dqn cannot train %s: %s", env->id, why);
}

static sk_status dqn_create(sk_trainer *tr) {
    dqn *d = state_of(tr);
    const sk_policy *policy = &tr->learner.policy;
    size_t B = (size_t)d->batch_size, O = (size_t)tr->obs_size, A = (size_t)policy->logits_size;
    CHECK(sk_offpolicy_create(tr, &d->op));
    tr->learner_threads = 1; /* a gradient step's batch (32-128 rows) runs on the caller */
    CHECK(sk_policy_work_alloc(&d->work, policy, d->batch_size));
    d->target = sk_alloc(policy->num_params * sizeof(float));
    d->slots = calloc(B, sizeof *d->slots);
    d->obs = calloc(B * O, sizeof(float));
    d->next_obs = calloc(B * O, sizeof(float));
    d->actions = calloc(B, sizeof(int32_t));
    d->returns = calloc(B, sizeof(float));
    d->discounts = calloc(B, sizeof(float));
    d->next_masks = calloc(B * A, 1);
    d->q_next = calloc(B * A, sizeof(float));
    if (!d->target || !d->slots || !d->obs || !d->next_obs || !d->actions || !d->returns ||
        !d->discounts || !d->next_masks || !d->q_next)
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_target_update(d->target, tr->learner.params, policy->num_params, 1.0);
    return SK_OK;
}

static void dqn_destroy(sk_trainer *tr) {
    dqn *d = state_of(tr);
    if (!d) return;
    sk_offpolicy_free(&d->op);
    sk_policy_work_free(&d->work);
    sk_free(d->target);
    free(d->slots);
    free(d->obs);
    free(d->next_obs);
    free(d->actions);
    free(d->returns);
    free(d->discounts);
    free(d->next_masks);
    free(d->q_next);
    free(d);
    tr->algo_state = NULL;
}

/* Epsilon at env step `step` of the run: linear over exploration_fraction of it. */
static double epsilon_at(const sk_trainer *tr, const dqn *d, int64_t step) {
    return sk_linear_schedule(d->start_e, d->end_e,
                              d->exploration_fraction * (double)tr->s.total_steps, (double)step);
}

/* Epsilon-greedy over the legal actions: a uniform legal action with probability epsilon,
 * else the masked argmax of Q. */
static void dqn_act(sk_trainer *tr, sk_worker *wk, int t, const float *obs_t,
                    const uint8_t *masks_t, int B) {
    const dqn *d = state_of(tr);
    sk_rollout *ro = &tr->rollout;
    const sk_policy *policy = &tr->learner.policy;
    int A = policy->logits_size;
    size_t at = (size_t)t * (size_t)ro->num_rows + (size_t)wk->lo;
    double epsilon = epsilon_at(tr, d, tr->progress.steps + (int64_t)t * ro->num_rows);
    sk_policy_forward(policy, SK_NET_ACTOR, tr->learner.params, obs_t, B, &wk->work);
    for (int b = 0; b < B; b++) {
        const uint8_t *mask = masks_t ? masks_t + (size_t)b * (size_t)A : NULL;
        int action;
        if (sk_rng_double(&wk->rng) < epsilon) {
            action = sk_dqn_explore(mask, A, &wk->rng);
        } else {
            action = sk_dqn_argmax(wk->work.out[SK_NET_ACTOR] + (size_t)b * (size_t)A, mask, A);
        }
        ro->actions[at + (size_t)b] = action;
        ro->logp[at + (size_t)b] = 0.0f;
    }
}

static void dqn_after_step(sk_trainer *tr, sk_worker *wk, int t) {
    sk_offpolicy_after_step(tr, &state_of(tr)->op, wk, t);
}

/* Samples a batch from the buffer into d's arrays (observations widened). */
static void sample_batch(sk_trainer *tr, dqn *d) {
    const sk_replay *rb = &d->op.replay;
    size_t O = (size_t)tr->obs_size, M = (size_t)tr->mask_size;
    sk_replay_sample(rb, &tr->learner.rng, d->batch_size, d->n_step, d->slots);
    for (int b = 0; b < d->batch_size; b++) {
        size_t slot = (size_t)d->slots[b];
        int64_t last;
        d->returns[b] = sk_replay_nstep(rb, d->slots[b], d->n_step, (float)d->gamma, &last,
                                        &d->discounts[b]);
        if (rb->spec.obs_u8) {
            sk_obs_widen(d->obs + (size_t)b * O, rb->obs_u8 + slot * O, O);
            sk_obs_widen(d->next_obs + (size_t)b * O, rb->next_obs_u8 + (size_t)last * O, O);
        } else {
            memcpy(d->obs + (size_t)b * O, rb->obs + slot * O, O * sizeof(float));
            memcpy(d->next_obs + (size_t)b * O, rb->next_obs + (size_t)last * O, O * sizeof(float));
        }
        d->actions[b] = rb->actions[slot];
        if (M) memcpy(d->next_masks + (size_t)b * M, rb->next_masks + (size_t)last * M, M);
    }
}

static sk_status dqn_learn(sk_trainer *tr, sk_update_stats *st, const char **anomaly) {
    dqn *d = state_of(tr);
    sk_learner *ln = &tr->learner;
    size_t P = ln->policy.num_params;
    sk_offpolicy_store(tr, &d->op);
    sk_adam adam = {0.9f, 0.999f, (float)d->adam_eps};
    double loss_sum = 0.0, q_sum = 0.0;
    int losses = 0;
    for (int u = 0; u < d->op.steps_per_iteration; u++) {
        bool learn, update_target;
        int64_t env_step;
        sk_offpolicy_when(tr, &d->op, u, &learn, &update_target, &env_step);
        if (!learn || sk_replay_sampleable(&d->op.replay, d->n_step) == 0) continue;
        sample_batch(tr, d);
        sk_dqn_batch batch = {d->batch_size, d->obs, d->next_obs, d->actions, d->returns,
                              d->discounts, tr->mask_size ? d->next_masks : NULL};
        memset(ln->grads, 0, P * sizeof(float));
        double q_taken;
        double loss = sk_dqn_loss_grad(&ln->policy, ln->params, d->target, ln->grads, &batch,
                                       d->double_q, d->q_next, &d->work, &q_taken);
        double norm = d->max_grad_norm > 0.0 ? sk_clip_grad_norm(ln->grads, P, d->max_grad_norm)
                                             : sk_grad_norm(ln->grads, P);
        if (!isfinite(loss) || !isfinite(norm)) {
            *anomaly = "non-finite TD loss or gradient";
            return SK_OK;
        }
        sk_adam_update(ln->params, ln->grads, ln->adam_m, ln->adam_v, P, (float)d->learning_rate,
                       adam, ++ln->adam_step);
        d->op.gradient_steps++;
        if (update_target) sk_target_update(d->target, ln->params, P, d->op.tau);
        loss_sum += loss;
        q_sum += q_taken;
        losses++;
    }
    st->value_loss = losses ? loss_sum / losses : NAN; /* the mean TD loss of its steps */
    d->q_taken = losses ? q_sum / losses : NAN;
    st->policy_loss = st->entropy = st->approx_kl = st->clip_fraction = NAN;
    st->explained_variance = NAN;
    st->learning_rate = d->learning_rate;
    if (!sk_all_finite(ln->params, P)) *anomaly = "non-finite weights after the update";
    return SK_OK;
}

static const char *const dqn_figures[] = {"epsilon", "q_value", "gradient_steps", "replay_rows",
                                          NULL};

/* learner.csv's row: epsilon at the steps taken (the next action's), the last iteration's
 * mean Q of the batches' actions, the gradient steps and transitions held so far */
static void dqn_figure_values(const sk_trainer *tr, double *values) {
    const dqn *d = state_of(tr);
    values[0] = epsilon_at(tr, d, tr->progress.steps);
    values[1] = d->q_taken;
    values[2] = (double)d->op.gradient_steps;
    values[3] = (double)d->op.replay.count;
}

static int dqn_save(const sk_trainer *tr, sk_st_tensor *out, int max) {
    const dqn *d = state_of(tr);
    out[0] = (sk_st_tensor){.name = "dqn.target", .ndim = 1,
                            .shape = {(int64_t)tr->learner.policy.num_params}, .data = d->target,
                            .dtype = SK_ST_F32};
    return 1 + sk_offpolicy_save(tr, &d->op, out + 1, max - 1);
}

static sk_status dqn_restore(sk_trainer *tr, const sk_st_file *file, const char *path) {
    dqn *d = state_of(tr);
    CHECK(sk_checkpoint_restore(file, path, "dqn.target", SK_ST_F32, d->target,
                                (int64_t)tr->learner.policy.num_params, true, -INFINITY, INFINITY));
    return sk_offpolicy_restore(tr, &d->op, file, path);
}

/* Acting: one forward a step; learning: per gradient step, the target's and the online
 * net's forward over the batch (and the online net's on the next observations for double
 * DQN) and the backward (about two forwards), spread over train_frequency env steps. */
static double dqn_flops_per_step(const sk_trainer *tr) {
    const dqn *d = state_of(tr);
    double forward = sk_policy_forward_flops(&tr->learner.policy) / 2.0; /* one net of two */
    double passes = 4.0 + (d->double_q ? 1.0 : 0.0);
    return forward * (1.0 + passes * d->batch_size / d->op.train_frequency);
}

static int64_t dqn_max_optimizer_steps(const sk_trainer *tr) {
    return state_of(tr)->op.steps_per_iteration;
}

const sk_algo sk_algo_dqn = {
    .name = "dqn",
    .sections = (const char *const[]){"dqn", "replay", NULL},
    .settings = dqn_settings,
    .check = dqn_check,
    .create = dqn_create,
    .destroy = dqn_destroy,
    .act = dqn_act,
    .rollout_values = false,
    .governed = true,
    .acts_greedily = true,
    .no_value = true,
    .after_step = dqn_after_step,
    .learn = dqn_learn,
    .save = dqn_save,
    .restore = dqn_restore,
    .max_optimizer_steps = dqn_max_optimizer_steps,
    .flops_per_step = dqn_flops_per_step,
    .figures = dqn_figures,
    .figure_values = dqn_figure_values,
};
