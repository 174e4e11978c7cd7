/*
 * Morpho-v0, the environment: observations, rewards, the env interface, the
 * heuristic controller and the checkpointed state. The host's epoch and the
 * counterfactual validation are morpho_train.c; what the agent may do is
 * lifecycle.c; the seed and blend numerics are blocks.c; the data is data.c.
 * See morpho.h.
 */
#include "morpho.h"

#include "skinner/module.h"
#include "skinner/nn.h"
#include "morpho_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define H_DEFAULT 32
#define POOL 4 /* the linear host's 7x7 input; the CNN host takes the 28x28 images */
/* The CNN host's defaults: first stage width, episode length in epochs, an
 * epoch of CNN_BATCHES x CNN_BATCH_SIZE images, the SGD learning rate of host
 * and seeds (docs/morpho.md, "The CNN host") */
#define CHANNELS_DEFAULT 8
#define CNN_EPOCHS 60
#define CNN_BATCHES 8
#define CNN_BATCH_SIZE 256
#define CNN_LR 0.01
#define CLASSES MORPHO_CLASSES
#define HISTORY MORPHO_HISTORY
#define N_VAL_POOL 5000 /* the last 5,000 training images are the validation split */

/* ---- reward constants (shaped mode) ----
 * ACCURACY      per epoch, W_ACCURACY x (validation accuracy - ACCURACY_BASELINE),
 *               accuracy as a fraction: the area under the accuracy curve above a
 *               linear classifier's ~80%, so a seed that helps sooner pays more.
 *               The baseline only keeps returns centred (episodes have a fixed
 *               length, so it shifts every policy's return alike).
 * ATTRIBUTION   per epoch, W_ATTR x the sum of the blending seeds' contributions
 *               c_i (a seed worth 5 points earns 0.0125 a step). Kept well below
 *               the accuracy term: the host co-adapts to its seeds, so removing
 *               one costs far more than it ever added (a first seed's c_i reaches
 *               20-30 points while the whole network gains 5), and at W_ATTR 2 the
 *               term outweighed accuracy: PPO grew one or two heavily co-adapted
 *               seeds instead of the most accurate network.
 *               A TRAINING seed's prospect (what it would add as the slot's
 *               output) is observed, not rewarded: straight-through training
 *               follows the loss's gradient at the host's output, so the seed's
 *               raw output is no estimate of what it adds once blended.
 * POTENTIAL     PBRS F = gamma Phi(s') - Phi(s), Phi = W_STAGE x sum over slots of
 *               the stage's value (0 empty/pruned/embargoed/resetting, 1 germinated,
 *               2 training, 3 blending, 4 holding, 5 fossilized); gamma 0.995 as the
 *               issue gives it (the preset trains at ppo.gamma 0.99, under which
 *               the term pays up to 0.004 an epoch for seeds in later stages);
 *               Phi of the end of an episode is 0
 * RENT          per epoch, W_RENT x min(0.5 ln(1 + extra / max(host, 200)), 1.5),
 *               extra = the parameters of every existing seed and its blend
 * ACTION COSTS  germinate 0.05, set alpha target 0.01, prune 0.02; an action
 *               outside the mask FAILED_COST and no effect
 * FOSSILIZE     W_FOSSIL x the seed's last contribution (negative if it hurt);
 *               small for the same reason as W_ATTR
 * PRUNE         -W_PRUNE x the seed's last contribution (pruning a harmful seed pays)
 * GOVERNOR      a rolled-back epoch costs GOVERNOR_PENALTY
 * TERMINAL      W_TERMINAL x the final validation accuracy (a fraction)
 * Sparse mode: only at the end, W_TERMINAL x accuracy - the rent term unweighted.
 * The W_* weights are defaults; env.w_accuracy, env.w_attr, env.w_rent,
 * env.w_fossil, env.w_prune and env.w_terminal override them. */
#define W_ATTR 0.25
#define W_ACCURACY 5.0
#define ACCURACY_BASELINE 0.8
#define W_STAGE 0.05
#define PBRS_GAMMA 0.995
#define W_RENT 0.05
#define COST_GERMINATE 0.05
#define COST_SET_ALPHA 0.01
#define COST_PRUNE 0.02
#define FAILED_COST 0.1
#define W_FOSSIL 2.0
#define W_PRUNE 2.0
#define GOVERNOR_PENALTY 1.0
#define W_TERMINAL 10.0

static const float g_stage_value[MORPHO_NUM_STAGES] = {0, 1, 2, 3, 4, 5, 0, 0, 0};

/* Parameters of slot k's seed and its blend. */
static size_t seed_extra_params(const morpho_state *m, int k, const morpho_slot *slot) {
    return morpho_slot_seed_params(m, k, slot->blueprint) +
           morpho_blend_num_params((morpho_style)slot->style, (int)m->dim[k]);
}

/* ------------------------------------------------------------------ observation and reward */

static float symlog(double x) { return (float)(x < 0 ? -log1p(-x) : log1p(x)); }

static double potential(const morpho_meta *meta) {
    double phi = 0.0;
    for (int k = 0; k < MORPHO_SLOTS; k++) phi += g_stage_value[meta->slots[k].stage];
    return W_STAGE * phi;
}

static double extra_params(const morpho_state *m, const morpho_meta *meta) {
    double extra = 0.0;
    for (int k = 0; k < MORPHO_SLOTS; k++)
        if (morpho_stage_has_seed((morpho_stage)meta->slots[k].stage))
            extra += (double)seed_extra_params(m, k, &meta->slots[k]);
    return extra;
}

static double rent(const morpho_state *m, const morpho_meta *meta) {
    double host = fmax((double)m->host_params, 200.0);
    return fmin(0.5 * log1p(extra_params(m, meta) / host), 1.5);
}

static void write_obs(const morpho_state *m, int i, float *o) {
    const morpho_meta *meta = &m->meta[i];
    memset(o, 0, MORPHO_OBS_SIZE * sizeof(float));
    float *g = o;
    *g++ = (float)meta->epoch / (float)m->cfg.epochs;
    *g++ = symlog(meta->val_loss);
    *g++ = meta->val_acc;
    for (int k = 0; k < HISTORY; k++) *g++ = symlog(meta->loss_hist[k]);
    for (int k = 0; k < HISTORY; k++) *g++ = meta->acc_hist[k];
    for (int k = 0; k < MORPHO_SLOTS; k++) g[meta->slots[k].stage] += 1.0f / MORPHO_SLOTS;
    g += MORPHO_NUM_STAGES;
    g[meta->last_op] = 1.0f;
    g += MORPHO_NUM_OPS;
    *g++ = (float)meta->last_success;
    SK_ASSERT(g - o == MORPHO_GLOBAL_FEATURES);
    for (int k = 0; k < MORPHO_SLOTS; k++) {
        const morpho_slot *slot = &meta->slots[k];
        float *p = o + MORPHO_GLOBAL_FEATURES + k * MORPHO_SLOT_FEATURES;
        bool seed = morpho_stage_has_seed((morpho_stage)slot->stage);
        *p++ = seed ? 1.0f : 0.0f;
        p[slot->stage] = 1.0f;
        p += MORPHO_NUM_STAGES;
        *p++ = slot->alpha.alpha;
        *p++ = slot->alpha.target;
        *p++ = (float)SK_MAX(slot->alpha.epochs - slot->alpha.tick, 0) / 8.0f;
        *p++ = (float)slot->pruning;
        *p++ = 10.0f * slot->contribution;
        *p++ = 10.0f * (slot->contribution - slot->contribution_prev);
        *p++ = 10.0f * slot->prospect;
        *p++ = symlog(slot->grad_norm);
        *p++ = (float)slot->healthy;
        *p++ = (float)slot->epochs_in_stage / 10.0f;
        *p++ = (float)slot->age / 50.0f;
        if (seed) {
            p[slot->blueprint] = 1.0f;
            p[MORPHO_NUM_BLUEPRINTS + slot->style] = 1.0f;
        }
        p += MORPHO_NUM_BLUEPRINTS + MORPHO_NUM_STYLES;
        *p++ = seed ? (float)slot->tempo / 8.0f : 0.0f;
        SK_ASSERT(p - (o + MORPHO_GLOBAL_FEATURES + k * MORPHO_SLOT_FEATURES) ==
                  MORPHO_SLOT_FEATURES);
    }
}

static void push_history(morpho_meta *meta) {
    memmove(meta->loss_hist, meta->loss_hist + 1, (HISTORY - 1) * sizeof(float));
    memmove(meta->acc_hist, meta->acc_hist + 1, (HISTORY - 1) * sizeof(float));
    meta->loss_hist[HISTORY - 1] = meta->val_loss;
    meta->acc_hist[HISTORY - 1] = meta->val_acc;
}

/* A fresh episode: a new host, empty slots, a measured starting point. */
static void reset_env(morpho_state *m, int i) {
    morpho_meta *meta = &m->meta[i];
    uint64_t rng = meta->rng, seed_rng = meta->seed_rng;
    memset(meta, 0, sizeof *meta);
    meta->rng = rng;
    meta->seed_rng = seed_rng;
    meta->perm_pos = m->data->n_train; /* reshuffle at the first draw */
    morpho_host_reset(m, i, &meta->rng);
    for (int k = 0; k < m->cfg.fixed_seeds; k++) {
        morpho_slot *slot = &meta->slots[k];
        slot->stage = MORPHO_HOLDING;
        slot->blueprint = m->cfg.fixed_blueprint;
        slot->style = MORPHO_BLEND_ADD;
        slot->tempo = morpho_tempo_epochs[0];
        slot->healthy = 1;
        slot->alpha = morpho_alpha_hold(1.0f);
        morpho_seed_create(m, i, k, slot, &meta->seed_rng);
    }
    morpho_validate(m, i);
    for (int k = 0; k < HISTORY; k++) push_history(meta);
    meta->train_loss = meta->val_loss;
    meta->potential = (float)potential(meta);
}

static void write_mask(const morpho_state *m, int i, const sk_env_io *io) {
    if (io->masks) morpho_masks(m->meta[i].slots, io->masks + (size_t)i * morpho_mask_size());
}

/* ------------------------------------------------------------------ the env interface */

static void morpho_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    morpho_state *m = state;
    for (int i = lo; i < hi; i++) {
        int32_t *perm = m->perm + (size_t)i * m->data->n_train;
        for (int k = 0; k < m->data->n_train; k++) perm[k] = k;
        m->meta[i].rng = sk_rng_seed(seed, (uint64_t)i);
        m->meta[i].seed_rng = sk_rng_seed(seed ^ 0x5eed5eed5eedULL, (uint64_t)i);
        reset_env(m, i);
        write_obs(m, i, io->obs + (size_t)i * MORPHO_OBS_SIZE);
        write_mask(m, i, io);
    }
}

static double apply_action(morpho_state *m, int i, const int32_t *action) {
    morpho_meta *meta = &m->meta[i];
    morpho_effect effects[MORPHO_SLOTS];
    int op = action[MORPHO_HEAD_OP];
    int s = action[MORPHO_HEAD_SLOT];
    /* what a prune or fossilize is worth is read before the action changes the slot */
    float contribution = (s >= 0 && s < MORPHO_SLOTS) ? meta->slots[s].contribution : 0.0f;
    if (m->cfg.fixed_seeds > 0) { /* the seeds are fixed: every action is a WAIT */
        meta->last_op = MORPHO_WAIT;
        meta->last_success = 1;
        return 0.0;
    }
    bool ok = morpho_apply(meta->slots, action, effects);
    meta->last_op = (op >= 0 && op < MORPHO_NUM_OPS) ? op : MORPHO_WAIT;
    meta->last_success = ok;
    if (!ok) return -FAILED_COST;
    for (int k = 0; k < MORPHO_SLOTS; k++)
        if (effects[k] == MORPHO_EFFECT_CREATE)
            morpho_seed_create(m, i, k, &meta->slots[k], &meta->seed_rng);
    if (m->cfg.sparse) return 0.0;
    switch (op) {
    case MORPHO_GERMINATE: return -COST_GERMINATE;
    case MORPHO_SET_ALPHA_TARGET: return -COST_SET_ALPHA;
    case MORPHO_PRUNE: return -COST_PRUNE - m->cfg.w_prune * contribution;
    case MORPHO_FOSSILIZE: return m->cfg.w_fossil * contribution;
    default: return 0.0;
    }
}

static void end_episode(morpho_state *m, int i, const sk_env_io *io, double *reward) {
    morpho_meta *meta = &m->meta[i];
    const morpho_data *d = m->data;
    *reward += m->cfg.w_terminal * meta->val_acc;
    if (m->cfg.sparse) *reward -= rent(m, meta);
    float *log = io->episode_log + (size_t)i * MORPHO_NUM_LOG_FIELDS;
    float values[MORPHO_SLOTS];
    morpho_shapley(meta->subset_acc, morpho_blending_mask(meta), values);
    int fossils = 0;
    for (int k = 0; k < MORPHO_SLOTS; k++) fossils += meta->slots[k].stage == MORPHO_FOSSILIZED;
    log[0] = meta->episode_return + (float)*reward;
    log[1] = (float)meta->epoch;
    log[MORPHO_LOG_TEST_ACC] =
        (float)morpho_evaluate(m, i, d->test_x, d->test_y, d->n_test, morpho_blending_mask(meta),
                               NULL);
    log[MORPHO_LOG_EXTRA_PARAMS] = (float)extra_params(m, meta);
    log[MORPHO_LOG_FOSSILS] = (float)fossils;
    for (int k = 0; k < MORPHO_SLOTS; k++) log[MORPHO_LOG_SHAPLEY + k] = values[k];
}

static void morpho_step(void *state, const sk_env_io *io, int lo, int hi) {
    morpho_state *m = state;
    for (int i = lo; i < hi; i++) {
        morpho_meta *meta = &m->meta[i];
        io->terminated[i] = 0;
        io->truncated[i] = 0;
        double reward = apply_action(m, i, io->actions + (size_t)i * MORPHO_HEADS);
        if (!morpho_train_epoch(m, i)) reward -= GOVERNOR_PENALTY;
        morpho_validate(m, i);
        morpho_effect effects[MORPHO_SLOTS];
        morpho_tick(meta->slots, effects);
        meta->epoch++;
        push_history(meta);
        double phi = potential(meta);
        bool done = meta->epoch >= m->cfg.epochs;
        if (!m->cfg.sparse) {
            double attribution = 0.0;
            for (int k = 0; k < MORPHO_SLOTS; k++) {
                const morpho_slot *slot = &meta->slots[k];
                if (morpho_stage_blends((morpho_stage)slot->stage) && !slot->pruning)
                    attribution += slot->contribution;
            }
            reward += m->cfg.w_accuracy * (meta->val_acc - ACCURACY_BASELINE) +
                      m->cfg.w_attr * attribution - m->cfg.w_rent * rent(m, meta);
            reward += PBRS_GAMMA * (done ? 0.0 : phi) - meta->potential;
        }
        meta->potential = (float)phi;
        float *obs = io->obs + (size_t)i * MORPHO_OBS_SIZE;
        if (done) {
            end_episode(m, i, io, &reward);
            io->terminated[i] = 1;
            write_obs(m, i, io->final_obs + (size_t)i * MORPHO_OBS_SIZE);
            reset_env(m, i);
        } else {
            meta->episode_return += (float)reward;
        }
        io->rewards[i] = (float)reward;
        write_obs(m, i, obs);
        write_mask(m, i, io);
    }
}

/* ------------------------------------------------------------------ the heuristic */

/* Germinate a large MLP seed (add, tempo 5) when validation accuracy has
 * gained less than half a point over the last five epochs; advance a seed
 * whenever its gate allows; fossilize a holding seed whose contribution is
 * positive and prune one whose contribution is not; prune a blending seed
 * that hurts by more than half a point. */
static void morpho_heuristic(const void *state, int lo, int hi, int32_t *actions) {
    const morpho_state *m = state;
    for (int i = lo; i < hi; i++) {
        const morpho_meta *meta = &m->meta[i];
        int32_t *a = actions + (size_t)i * MORPHO_HEADS;
        memset(a, 0, MORPHO_HEADS * sizeof(int32_t));
        a[MORPHO_HEAD_BLUEPRINT] = MORPHO_BP_MLP_LARGE;
        a[MORPHO_HEAD_STYLE] = MORPHO_BLEND_ADD;
        a[MORPHO_HEAD_TEMPO] = 1;
        int32_t choice[MORPHO_HEADS];
        bool chosen = false;
        for (int k = 0; k < MORPHO_SLOTS && !chosen; k++) {
            const morpho_slot *slot = &meta->slots[k];
            int op = -1;
            if (slot->stage == MORPHO_HOLDING && slot->measured)
                op = slot->contribution > 0.0f ? MORPHO_FOSSILIZE : MORPHO_PRUNE;
            else if (slot->stage == MORPHO_BLENDING && slot->contribution < -0.005f)
                op = MORPHO_PRUNE;
            else if (slot->stage == MORPHO_TRAINING || slot->stage == MORPHO_BLENDING)
                op = MORPHO_ADVANCE;
            if (op < 0) continue;
            memcpy(choice, a, sizeof choice);
            choice[MORPHO_HEAD_OP] = op;
            choice[MORPHO_HEAD_SLOT] = k;
            if (morpho_allowed(meta->slots, choice)) chosen = true;
        }
        bool plateau = meta->epoch >= HISTORY &&
                       meta->acc_hist[HISTORY - 1] - meta->acc_hist[0] < 0.005f;
        for (int k = 0; k < MORPHO_SLOTS && !chosen && plateau; k++) {
            memcpy(choice, a, sizeof choice);
            choice[MORPHO_HEAD_OP] = MORPHO_GERMINATE;
            choice[MORPHO_HEAD_SLOT] = k;
            if (morpho_allowed(meta->slots, choice)) chosen = true;
        }
        if (chosen) memcpy(a, choice, sizeof choice);
    }
}

/* ------------------------------------------------------------------ create / destroy / state */

static void work_free(morpho_work *w) {
    morpho_work_host_free(w);
    sk_free(w->x);
    sk_free(w->labels);
    sk_free(w->grads);
}

static void morpho_destroy(void *state) {
    morpho_state *m = state;
    if (!m) return;
    if (m->work)
        for (int i = 0; i < m->num_envs; i++) work_free(&m->work[i]);
    sk_free(m->work);
    sk_free(m->arena_all);
    sk_free(m->snapshot_all);
    sk_free(m->meta);
    sk_free(m->perm);
    if (m->data) morpho_data_release(m->data);
    sk_free(m);
}

static sk_status work_alloc(morpho_state *m, morpho_work *w) {
    size_t B = (size_t)m->cfg.batch_size, most = m->max_dim;
    size_t channels = (size_t)m->geom[MORPHO_SLOTS - 1].channels;
    size_t floats = B * (size_t)m->D + 2 * B * CLASSES + 3 * B * most + 2 * B * channels;
    for (int k = 0; k < MORPHO_SLOTS; k++)
        floats += 3 * B * m->dim[k] + B * (m->seed_cache + m->blend_cache);
    w->x = sk_alloc(floats * sizeof(float));
    w->labels = sk_alloc(B);
    w->grads = sk_alloc(morpho_grad_floats(m) * sizeof(float));
    if (!w->x || !w->labels || !w->grads) return sk_fail(SK_ERR_NOMEM, "out of memory");
    float *p = w->x + B * (size_t)m->D;
    for (int k = 0; k < MORPHO_SLOTS; k++) {
        w->h[k] = p, p += B * m->dim[k];
        w->s[k] = p, p += B * m->dim[k];
        w->y[k] = p, p += B * m->dim[k];
        w->seed_cache[k] = p, p += B * m->seed_cache;
        w->blend_cache[k] = p, p += B * m->blend_cache;
    }
    w->logits = p, p += B * CLASSES;
    w->dlogits = p, p += B * CLASSES;
    w->dy = p, p += B * most;
    w->dh = p, p += B * most;
    w->ds = p, p += B * most;
    w->pooled = p, p += B * channels;
    w->dpooled = p;
    return morpho_work_host_create(m, w);
}

static sk_status read_config(const sk_config *cfg, morpho_cfg *c, const char **source) {
    int64_t v;
    double f;
    sk_status st;
#define INT_KEY(key, def, lo, hi, field)                                                          \
    if ((st = sk_cfg_int(cfg, key, def, lo, hi, &v)) != SK_OK) return st;                        \
    c->field = (int)v;
#define REAL_KEY(key, def, lo, hi, field)                                                         \
    if ((st = sk_cfg_double(cfg, key, def, lo, hi, &f)) != SK_OK) return st;                    \
    c->field = (float)f;
    /* the host comes first: the CNN host's epoch, episode and learning rates
     * have their own defaults (docs/morpho.md says how they were chosen) */
    static const char *const hosts[] = {"linear", "cnn", NULL};
    if ((st = sk_cfg_choice(cfg, "env.host", "linear", hosts, &c->host)) != SK_OK) return st;
    bool cnn = c->host == MORPHO_HOST_CNN;
    INT_KEY("env.epochs", cnn ? CNN_EPOCHS : 150, 1, 100000, epochs)
    INT_KEY("env.batches", cnn ? CNN_BATCHES : 24, 1, 100000, batches)
    INT_KEY("env.batch_size", cnn ? CNN_BATCH_SIZE : 512, 1, 65536, batch_size)
    INT_KEY("env.val_size", 1000, 1, N_VAL_POOL, val_size)
    INT_KEY("env.hidden", H_DEFAULT, 2, 1024, hidden)
    INT_KEY("env.channels", CHANNELS_DEFAULT, 1, 64, channels)
    REAL_KEY("env.lr", cnn ? CNN_LR : 0.02, 0.0, 10.0, lr)
    REAL_KEY("env.seed_lr", cnn ? CNN_LR : 0.02, 0.0, 10.0, seed_lr)
    REAL_KEY("env.clip", 5.0, 1e-6, 1e9, clip)
    REAL_KEY("env.w_accuracy", W_ACCURACY, 0.0, 1e6, w_accuracy)
    REAL_KEY("env.w_attr", W_ATTR, 0.0, 1e6, w_attr)
    REAL_KEY("env.w_rent", W_RENT, 0.0, 1e6, w_rent)
    REAL_KEY("env.w_fossil", W_FOSSIL, 0.0, 1e6, w_fossil)
    REAL_KEY("env.w_prune", W_PRUNE, 0.0, 1e6, w_prune)
    REAL_KEY("env.w_terminal", W_TERMINAL, 0.0, 1e6, w_terminal)
#undef INT_KEY
#undef REAL_KEY
    static const char *const rewards[] = {"shaped", "sparse", NULL};
    int reward;
    if ((st = sk_cfg_choice(cfg, "env.reward", "shaped", rewards, &reward)) != SK_OK) return st;
    c->sparse = reward == 1;
    static const char *const precisions[] = {"fp32", "bf16", NULL};
    if ((st = sk_cfg_choice(cfg, "env.precision", "fp32", precisions, &c->precision)) != SK_OK)
        return st;
    if ((st = sk_cfg_bool(cfg, "env.host_relu", false, &c->host_relu)) != SK_OK) return st;
    if ((st = sk_cfg_int(cfg, "env.fixed_seeds", 0, 0, MORPHO_SLOTS, &v)) != SK_OK) return st;
    c->fixed_seeds = (int)v;
    const char *const *names =
        c->host == MORPHO_HOST_CNN ? morpho_conv_blueprint_names : morpho_blueprint_names;
    const char *blueprints[MORPHO_NUM_BLUEPRINTS + 1] = {NULL};
    memcpy(blueprints, names, MORPHO_NUM_BLUEPRINTS * sizeof(char *));
    if ((st = sk_cfg_choice(cfg, "env.fixed_blueprint", names[4], blueprints,
                            &c->fixed_blueprint)) != SK_OK)
        return st;
    if (c->precision == SK_PRECISION_BF16 && c->host != MORPHO_HOST_CNN)
        return sk_fail(SK_ERR_INVALID, "env.precision = bf16 needs env.host = cnn (the linear "
                       "host trains in fp32 only)");
    *source = sk_cfg_string(cfg, "env.data", "auto");
    /* a folder is stored absolute, so that eval finds it from anywhere */
    if (*source && strcmp(*source, "auto") != 0 && strcmp(*source, "fashion") != 0 &&
        strcmp(*source, "synthetic") != 0)
        return sk_cfg_path(cfg, "env.data", "auto", source);
    return SK_OK;
}

static sk_status morpho_create(void **out, int num_envs, const sk_config *cfg) {
    *out = NULL;
    morpho_state *m = sk_alloc(sizeof *m);
    if (!m) return sk_fail(SK_ERR_NOMEM, "out of memory");
    memset(m, 0, sizeof *m);
    m->num_envs = num_envs;
    const char *source;
    sk_status st = read_config(cfg, &m->cfg, &source);
    if (st == SK_OK)
        st = morpho_data_acquire(&m->data, source, m->cfg.host == MORPHO_HOST_CNN ? 1 : POOL,
                                 N_VAL_POOL);
    if (st != SK_OK) {
        morpho_destroy(m);
        return st;
    }
    m->D = m->data->dim;
    m->H = m->cfg.hidden;
    if ((st = morpho_host_setup(m)) != SK_OK) {
        morpho_destroy(m);
        return st;
    }
    morpho_layout(m);
    size_t n = (size_t)num_envs;
    m->arena_all = sk_alloc(n * m->arena * sizeof(float));
    m->snapshot_all = sk_alloc(n * m->arena * sizeof(float));
    m->meta = sk_alloc(n * sizeof(morpho_meta));
    m->perm = sk_alloc(n * (size_t)m->data->n_train * sizeof(int32_t));
    m->work = sk_alloc(n * sizeof(morpho_work));
    if (!m->arena_all || !m->snapshot_all || !m->meta || !m->perm || !m->work) {
        morpho_destroy(m);
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    }
    memset(m->arena_all, 0, n * m->arena * sizeof(float));
    memset(m->meta, 0, n * sizeof(morpho_meta));
    memset(m->work, 0, n * sizeof(morpho_work));
    for (int i = 0; i < num_envs; i++)
        if ((st = work_alloc(m, &m->work[i])) != SK_OK) {
            morpho_destroy(m);
            return st;
        }
    *out = m;
    return SK_OK;
}

static int morpho_state_arrays(void *state, sk_env_array *arrays) {
    morpho_state *m = state;
    arrays[0] = (sk_env_array){.name = "arena", .type = SK_ARRAY_F32, .count = (int)m->arena,
                               .data = m->arena_all, .has_range = true, .lo = -INFINITY,
                               .hi = INFINITY};
    arrays[1] = (sk_env_array){.name = "meta", .type = SK_ARRAY_U8,
                               .count = (int)sizeof(morpho_meta), .data = m->meta};
    arrays[2] = (sk_env_array){.name = "perm", .type = SK_ARRAY_I32, .count = m->data->n_train,
                               .data = m->perm, .has_range = true, .lo = 0,
                               .hi = m->data->n_train - 1};
    return 3;
}

/* An int field of a restored env in [lo, hi], or a message naming it. */
static sk_status check_field(int env, const char *field, int64_t value, int64_t lo, int64_t hi) {
    if (value >= lo && value <= hi) return SK_OK;
    return sk_fail(SK_ERR_CORRUPT, "env.meta of env %d: %s = %lld is outside its allowed range "
                   "[%lld, %lld]", env, field, (long long)value, (long long)lo, (long long)hi);
}

/* No NaN among x[0..n) (an exploded epoch's loss may be infinite). */
static bool numbers_all(const float *x, int n) {
    for (int k = 0; k < n; k++)
        if (isnan(x[k])) return false;
    return true;
}

/* The fields of env.meta that index tables or bound loops must be what a
 * running env can hold, and the scores the observation is made of numbers. */
static sk_status morpho_check_state(const void *state, int num_envs) {
    const morpho_state *m = state;
    for (int i = 0; i < num_envs; i++) {
        const morpho_meta *meta = &m->meta[i];
        sk_status st = check_field(i, "epoch", meta->epoch, 0, m->cfg.epochs);
        if (st == SK_OK) st = check_field(i, "perm_pos", meta->perm_pos, 0, m->data->n_train);
        if (st == SK_OK) st = check_field(i, "last_op", meta->last_op, 0, MORPHO_NUM_OPS - 1);
        if (st == SK_OK) st = check_field(i, "last_success", meta->last_success, 0, 1);
        for (int k = 0; st == SK_OK && k < MORPHO_SLOTS; k++) {
            const morpho_slot *slot = &meta->slots[k];
            const morpho_alpha *alpha = &slot->alpha;
            st = check_field(i, "slot stage", slot->stage, 0, MORPHO_NUM_STAGES - 1);
            if (st == SK_OK)
                st = check_field(i, "slot blueprint", slot->blueprint, 0,
                                 MORPHO_NUM_BLUEPRINTS - 1);
            if (st == SK_OK)
                st = check_field(i, "slot style", slot->style, 0, MORPHO_NUM_STYLES - 1);
            if (st == SK_OK) st = check_field(i, "slot tempo", slot->tempo, 0, 1 << 20);
            if (st == SK_OK)
                st = check_field(i, "slot alpha curve", alpha->curve, 0, MORPHO_NUM_CURVES - 1);
            if (st == SK_OK) st = check_field(i, "slot alpha epochs", alpha->epochs, 0, 1 << 20);
            if (st == SK_OK) st = check_field(i, "slot alpha tick", alpha->tick, 0, 1 << 20);
            float values[] = {slot->grad_norm, slot->contribution, slot->contribution_prev,
                              slot->prospect, alpha->alpha, alpha->start, alpha->target};
            if (st == SK_OK && !numbers_all(values, (int)(sizeof values / sizeof values[0])))
                st = sk_fail(SK_ERR_CORRUPT, "env.meta of env %d: slot %d holds a NaN", i, k);
        }
        float scores[] = {meta->train_loss, meta->val_loss, meta->val_acc, meta->potential,
                          meta->episode_return};
        /* subset_acc holds NaN for the subsets not measured */
        if (st == SK_OK &&
            !(numbers_all(scores, 5) && numbers_all(meta->loss_hist, MORPHO_HISTORY) &&
              numbers_all(meta->acc_hist, MORPHO_HISTORY)))
            st = sk_fail(SK_ERR_CORRUPT, "env.meta of env %d holds a NaN score", i);
        if (st != SK_OK) return st;
    }
    return SK_OK;
}

static const sk_env_extras morpho_extras = {
    .preset = "morpho",
    .action_names = morpho_op_names,
    .bench_num_envs = 8, /* each env is a host network with its own scratch */
    .heuristic = morpho_heuristic,
};

const sk_env_def sk_env_morpho = {
    .id = "Morpho-v0",
    .alias = "morpho",
    .summary = "grow a host network while it trains: graft, blend, keep or prune seed modules",
    .obs_size = MORPHO_OBS_SIZE,
    .action_space = {.kind = SK_SPACE_DISCRETE,
                     .num_heads = MORPHO_HEADS,
                     .head_sizes = {MORPHO_NUM_OPS, MORPHO_SLOTS, MORPHO_NUM_BLUEPRINTS,
                                    MORPHO_NUM_STYLES, 3, 3, 4, MORPHO_NUM_CURVES},
                     /* bit op: the head matters for that op (lifecycle.h) */
                     .relevant_when = {0, 0x3e, 0x2, 0x2, 0x2, 0x4, 0x4, 0x4},
                     .masks_by_head0 = true,
                     /* WAIT starts e^3 times likelier than any other allowed op: a
                      * uniform start prunes ~97% of new seeds before they may blend
                      * and learns only to wait (docs/morpho.md) */
                     .head0_prior = {3.0f}},
    .mask_size = MORPHO_NUM_OPS * (1 + MORPHO_SLOTS + MORPHO_NUM_BLUEPRINTS + MORPHO_NUM_STYLES +
                                   3 + 3 + 4 + MORPHO_NUM_CURVES),
    .max_episode_steps = 150,
    .solved_threshold = NAN, /* no return counts as solved */
    .num_log_fields = MORPHO_NUM_LOG_FIELDS,
    .log_names = {"return", "length", "test_acc", "extra_params", "fossils", "shapley_0",
                  "shapley_1", "shapley_2"},
    .create = morpho_create,
    .destroy = morpho_destroy,
    .reset = morpho_reset,
    .step = morpho_step,
    .state_arrays = morpho_state_arrays,
    .check_state = morpho_check_state,
    .extras = &morpho_extras,
};
