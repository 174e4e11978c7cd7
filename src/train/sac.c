/*
 * SAC (train.algo = sac): sac_core.h's learner (CleanRL's sac_continuous_action: two Q
 * networks and targets, a tanh-squashed Gaussian actor, automatic entropy tuning) on the
 * shared off-policy iteration (offpolicy.c). Before learning starts the envs act uniformly
 * within their bounds, as CleanRL's action_space.sample(); then by the actor's samples.
 * Its networks are its own (sac_core), not the trainer's policy: a checkpoint holds them
 * under sac.*, and eval, export and serve act with the actor's deterministic action
 * (sac_policy.c).
 */
#include "algo.h"
#include "offpolicy.h"
#include "sac_core.h"
#include "../vec/pool.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        sk_status check_status_ = (expr);                                                          \
        if (check_status_ != SK_OK) return check_status_;                                          \
    } while (0)

enum { NAME_SIZE = 48, MAX_SAVED = 64 };

typedef struct sac {
    sk_offpolicy op;
    sk_sac_config config;
    int batch_size;
    sk_sac *core;
    pthread_mutex_t act_lock; /* sk_sac_act is one thread's at a time */
    bool lock_ready;
    float *noise;             /* (env rows, act_dim) each worker's rows' draws */
    float *obs, *actions, *rewards, *terminated, *next_obs; /* a sampled batch */
    int64_t *slots;
    /* the update's threads: train.threads of them up to the row blocks (2), whatever the env
     * count (one env, as CleanRL's SAC, gives the vec's pool one); NULL on one thread */
    sk_pool *pool;
    char names[MAX_SAVED][NAME_SIZE]; /* checkpoint tensor names: "sac." + the core's */
    int64_t counters[3];
    double qf1_value, qf2_value; /* the last iteration's mean Q of its batches (NaN: none) */
} sac;

static sac *state_of(const sk_trainer *tr) { return tr->algo_state; }

/* A float default as the shortest decimal that reads back to it (0.2f as 0.2, not
 * 0.200000003): config.ini and `skinner config` show what a user would write, and the run
 * reads the same float. */
static double shortest(float value) {
    char text[32];
    for (int digits = 6; digits < 9; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, (double)value);
        if ((float)strtod(text, NULL) == value) return strtod(text, NULL);
    }
    return (double)value;
}

static sk_status sac_settings(sk_trainer *tr) {
    sac *s = calloc(1, sizeof *s);
    if (!s) return sk_fail(SK_ERR_NOMEM, "out of memory");
    tr->algo_state = s;
    s->qf1_value = s->qf2_value = NAN;
    const sk_action_space *space = &tr->env->action_space;
    if (space->kind != SK_SPACE_CONTINUOUS)
        return sk_fail(SK_ERR_CONFIG, "train.algo = sac cannot train %s: its actions are not "
                       "continuous (SAC's actor is a squashed Gaussian; Discrete actions: "
                       "train.algo = dqn)", tr->env->id);
    s->config = sk_sac_defaults(tr->env->obs_size, space->dim, space->low, space->high);
    sk_sac_config *c = &s->config;
    int64_t v;
    double x;
    CHECK(sk_cfg_int(tr->cfg, "sac.hidden", c->hidden, 1, 4096, &v));
    c->hidden = (int)v;
    CHECK(sk_cfg_int(tr->cfg, "sac.layers", c->layers, 1, SK_SAC_MAX_LAYERS, &v));
    c->layers = (int)v;
    CHECK(sk_cfg_int(tr->cfg, "sac.batch_size", 256, 1, 1 << 16, &v));
    s->batch_size = (int)v;
    CHECK(sk_cfg_double(tr->cfg, "sac.policy_lr", shortest(c->policy_lr), 0.0, 1.0, &x));
    c->policy_lr = (float)x;
    CHECK(sk_cfg_double(tr->cfg, "sac.q_lr", shortest(c->q_lr), 0.0, 1.0, &x));
    c->q_lr = c->alpha_lr = (float)x; /* CleanRL's alpha optimiser takes q_lr */
    CHECK(sk_cfg_double(tr->cfg, "sac.gamma", shortest(c->gamma), 0.0, 1.0, &x));
    c->gamma = (float)x;
    CHECK(sk_cfg_int(tr->cfg, "sac.policy_frequency", c->policy_frequency, 1, 1 << 20, &v));
    c->policy_frequency = (int)v;
    CHECK(sk_cfg_bool(tr->cfg, "sac.autotune", c->autotune, &c->autotune));
    CHECK(sk_cfg_double(tr->cfg, "sac.alpha", shortest(c->alpha), 0.0, 1e6, &x));
    c->alpha = (float)x;
    c->seed = tr->s.seed;
    /* the shared loop: a gradient step an env step from step 5,000, the targets' Polyak
     * step (tau) with each; the update-to-data ratio is gradient_steps / train_frequency */
    s->op.learning_starts = 5000;
    s->op.train_frequency = 1;
    s->op.gradient_steps_per_round = 1;
    s->op.target_frequency = 1;
    s->op.tau = shortest(c->tau);
    CHECK(sk_offpolicy_settings(tr, &s->op, "sac", 1000000));
    c->tau = (float)s->op.tau;
    c->target_frequency = (int)SK_MIN(s->op.target_frequency, INT32_MAX);
    c->max_rows = SK_MAX(s->batch_size, tr->s.num_envs);
    return SK_OK;
}

static sk_status sac_check(sk_trainer *tr) {
    const char *why = NULL;
    if (sk_env_agents(tr->env) > 1) why = "it has several agents per env";
    else if (tr->learner.policy.core) why = "policy.core is set (SAC's networks have no core)";
    else if (tr->sp.on) why = "self-play (selfplay.*) is on";
    else if (tr->comm.size > 1) why = "it runs under several processes (SAC trains in one "
                                      "process: use --threads, not mpirun)";
    if (!why) return SK_OK;
    return sk_fail(SK_ERR_CONFIG, "train.algo = sac cannot train %s: %s", tr->env->id, why);
}

/* The update's row blocks on train.threads threads (0: one a core), at most one a block (a
 * thread more would only wait): the same bits on any number (test_sac_torch). The envs step
 * on the vec's own threads, between updates. */
static sk_status sac_threads(sk_trainer *tr, sac *s) {
    int threads = SK_MIN(sk_threads_or_cores(tr->s.threads), s->config.row_blocks);
    tr->learner_threads = 1;
    if (threads <= 1) return SK_OK;
    CHECK(sk_pool_create(&s->pool, threads));
    tr->learner_threads = threads;
    sk_parallel parallel = sk_pool_parallel(s->pool);
    sk_sac_set_parallel(s->core, &parallel);
    return SK_OK;
}

static sk_status sac_create(sk_trainer *tr) {
    sac *s = state_of(tr);
    size_t B = (size_t)s->batch_size, O = (size_t)tr->obs_size, D = (size_t)tr->action_dim;
    CHECK(sk_offpolicy_create(tr, &s->op));
    CHECK(sk_sac_create(&s->core, &s->config));
    CHECK(sac_threads(tr, s));
    if (pthread_mutex_init(&s->act_lock, NULL) != 0) return sk_fail(SK_ERR_NOMEM, "mutex");
    s->lock_ready = true;
    s->noise = calloc((size_t)tr->rollout.num_rows * D, sizeof(float));
    s->obs = calloc(B * O, sizeof(float));
    s->next_obs = calloc(B * O, sizeof(float));
    s->actions = calloc(B * D, sizeof(float));
    s->rewards = calloc(B, sizeof(float));
    s->terminated = calloc(B, sizeof(float));
    s->slots = calloc(B, sizeof(int64_t));
    if (!s->noise || !s->obs || !s->next_obs || !s->actions || !s->rewards || !s->terminated ||
        !s->slots)
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    if (sk_sac_num_arrays(s->core) > MAX_SAVED) return sk_fail(SK_ERR_INVALID, "sac: too many arrays");
    return SK_OK;
}

static void sac_destroy(sk_trainer *tr) {
    sac *s = state_of(tr);
    if (!s) return;
    sk_offpolicy_free(&s->op);
    sk_sac_destroy(s->core);
    if (s->pool) sk_pool_destroy(s->pool);
    if (s->lock_ready) pthread_mutex_destroy(&s->act_lock);
    free(s->noise), free(s->obs), free(s->next_obs), free(s->actions);
    free(s->rewards), free(s->terminated), free(s->slots);
    free(s);
    tr->algo_state = NULL;
}

/* Uniform actions within the bounds before learning starts, the actor's samples after. */
static void sac_act(sk_trainer *tr, sk_worker *wk, int t, const float *obs_t,
                    const uint8_t *masks_t, int B) {
    (void)masks_t;
    sac *s = state_of(tr);
    sk_rollout *ro = &tr->rollout;
    const sk_action_space *space = &tr->env->action_space;
    int D = ro->action_dim;
    size_t at = (size_t)t * (size_t)ro->num_rows + (size_t)wk->lo;
    float *actions = ro->actions_f + at * (size_t)D;
    int64_t step = tr->progress.steps + (int64_t)t * ro->num_rows;
    if (step < s->op.learning_starts) {
        for (int k = 0; k < B * D; k++)
            actions[k] = (float)sk_rng_uniform(&wk->rng, space->low[k % D], space->high[k % D]);
        return;
    }
    float *noise = s->noise + (size_t)wk->lo * (size_t)D;
    for (int k = 0; k < B * D; k++) noise[k] = (float)sk_rng_normal(&wk->rng);
    pthread_mutex_lock(&s->act_lock);
    sk_sac_act(s->core, obs_t, B, noise, false, actions, NULL);
    pthread_mutex_unlock(&s->act_lock);
}

static void sac_after_step(sk_trainer *tr, sk_worker *wk, int t) {
    sk_offpolicy_after_step(tr, &state_of(tr)->op, wk, t);
}

static void sample_batch(sk_trainer *tr, sac *s) {
    const sk_replay *rb = &s->op.replay;
    size_t O = (size_t)tr->obs_size, D = (size_t)tr->action_dim;
    sk_replay_sample(rb, &tr->learner.rng, s->batch_size, 1, s->slots);
    for (int b = 0; b < s->batch_size; b++) {
        size_t slot = (size_t)s->slots[b];
        memcpy(s->obs + (size_t)b * O, rb->obs + slot * O, O * sizeof(float));
        memcpy(s->next_obs + (size_t)b * O, rb->next_obs + slot * O, O * sizeof(float));
        memcpy(s->actions + (size_t)b * D, rb->actions_f + slot * D, D * sizeof(float));
        s->rewards[b] = rb->rewards[slot];
        s->terminated[b] = rb->terminated[slot] ? 1.0f : 0.0f; /* a truncation bootstraps */
    }
}

static sk_status sac_learn(sk_trainer *tr, sk_update_stats *st, const char **anomaly) {
    (void)anomaly;
    sac *s = state_of(tr);
    sk_offpolicy_store(tr, &s->op);
    double q_loss = 0.0, actor_loss = 0.0, entropy = 0.0, qf1 = 0.0, qf2 = 0.0;
    int steps = 0, actor_steps = 0;
    for (int u = 0; u < s->op.steps_per_iteration; u++) {
        bool learn, update_target;
        int64_t env_step;
        sk_offpolicy_when(tr, &s->op, u, &learn, &update_target, &env_step);
        if (!learn || sk_replay_sampleable(&s->op.replay, 1) == 0) continue;
        sample_batch(tr, s);
        sk_sac_batch batch = {s->batch_size, s->obs, s->actions, s->rewards, s->terminated,
                              s->next_obs};
        sk_sac_losses losses;
        /* CleanRL's global_step schedules the actor's and the targets' steps */
        sk_sac_update_rng(s->core, &batch, env_step, &tr->learner.rng, &losses);
        s->op.gradient_steps++;
        if (!isfinite(losses.qf_loss) || (losses.actor_updated && !isfinite(losses.actor_loss)))
            return sk_fail(SK_ERR_NUMERIC, "train.algo = sac: non-finite loss at env step %lld "
                           "(critic %g, actor %g)", (long long)env_step, losses.qf_loss,
                           losses.actor_loss);
        q_loss += losses.qf_loss;
        qf1 += losses.qf1_value;
        qf2 += losses.qf2_value;
        steps++;
        if (losses.actor_updated) {
            actor_loss += losses.actor_loss;
            entropy += losses.entropy;
            actor_steps++;
        }
    }
    st->value_loss = steps ? q_loss / steps : NAN;           /* qf1 + qf2 losses */
    s->qf1_value = steps ? qf1 / steps : NAN;
    s->qf2_value = steps ? qf2 / steps : NAN;
    st->policy_loss = actor_steps ? actor_loss / actor_steps : NAN;
    st->entropy = actor_steps ? entropy / actor_steps : NAN;
    st->approx_kl = st->clip_fraction = st->explained_variance = NAN;
    st->learning_rate = s->config.q_lr;
    return SK_OK;
}

static const char *const sac_figures[] = {"alpha",          "qf1_value",   "qf2_value",
                                          "gradient_steps", "replay_rows", NULL};

/* learner.csv's row: the temperature the next step uses, the last iteration's mean Q of the
 * batches' actions by each critic, the gradient steps and transitions held so far */
static void sac_figure_values(const sk_trainer *tr, double *values) {
    const sac *s = state_of(tr);
    values[0] = sk_sac_alpha(s->core);
    values[1] = s->qf1_value;
    values[2] = s->qf2_value;
    values[3] = (double)s->op.gradient_steps;
    values[4] = (double)s->op.replay.count;
}

static int sac_save(const sk_trainer *tr, sk_st_tensor *out, int max) {
    sac *s = state_of(tr);
    sk_sac_counters c = sk_sac_get_counters(s->core);
    s->counters[0] = c.q_steps;
    s->counters[1] = c.actor_steps;
    s->counters[2] = c.alpha_steps;
    int n = 0;
    out[n++] = (sk_st_tensor){.name = "sac.counters", .ndim = 1, .shape = {3},
                              .data = s->counters, .dtype = SK_ST_I64};
    const sk_sac_array *arrays = sk_sac_arrays(s->core);
    for (int a = 0; a < sk_sac_num_arrays(s->core); a++) {
        SK_ASSERT(n < max);
        snprintf(s->names[a], NAME_SIZE, "sac.%s", arrays[a].name);
        out[n++] = (sk_st_tensor){.name = s->names[a], .ndim = 1,
                                  .shape = {(int64_t)arrays[a].rows * arrays[a].cols},
                                  .data = arrays[a].data, .dtype = SK_ST_F32};
    }
    return n + sk_offpolicy_save(tr, &s->op, out + n, max - n);
}

static sk_status sac_restore(sk_trainer *tr, const sk_st_file *file, const char *path) {
    sac *s = state_of(tr);
    const sk_sac_array *arrays = sk_sac_arrays(s->core);
    for (int a = 0; a < sk_sac_num_arrays(s->core); a++) {
        char name[NAME_SIZE];
        snprintf(name, sizeof name, "sac.%s", arrays[a].name);
        bool variance = strstr(name, "adam.v") != NULL;
        CHECK(sk_checkpoint_restore(file, path, name, SK_ST_F32, arrays[a].data,
                                    (int64_t)arrays[a].rows * arrays[a].cols, true,
                                    variance ? 0.0 : -INFINITY, INFINITY));
    }
    CHECK(sk_checkpoint_restore(file, path, "sac.counters", SK_ST_I64, s->counters, 3, true, 0,
                                9e15));
    sk_sac_set_counters(s->core, (sk_sac_counters){s->counters[0], s->counters[1], s->counters[2]});
    return sk_offpolicy_restore(tr, &s->op, file, path);
}

static int64_t sac_max_optimizer_steps(const sk_trainer *tr) { (void)tr; return 0; }

/* Per env step: the actor's forward, and the gradient steps' critic and actor work. */
static double sac_flops_per_step(const sk_trainer *tr) {
    const sac *s = state_of(tr);
    double per_update = sk_sac_critic_macs(s->core, s->batch_size) +
                        sk_sac_actor_macs(s->core, s->batch_size);
    double updates = (double)s->op.gradient_steps_per_round / s->op.train_frequency;
    return 2.0 * (sk_sac_actor_macs(s->core, 1) / 2.0 + updates * per_update);
}

const sk_algo sk_algo_sac = {
    .name = "sac",
    .sections = (const char *const[]){"sac", "replay", NULL},
    .settings = sac_settings,
    .check = sac_check,
    .create = sac_create,
    .destroy = sac_destroy,
    .act = sac_act,
    .rollout_values = false,
    .load_policy = sk_sac_load_policy,
    .acts_greedily = true,
    .no_value = true,
    .after_step = sac_after_step,
    .learn = sac_learn,
    .save = sac_save,
    .restore = sac_restore,
    .max_optimizer_steps = sac_max_optimizer_steps,
    .flops_per_step = sac_flops_per_step,
    .figures = sac_figures,
    .figure_values = sac_figure_values,
};
