/* SAC's learner: the object, its layout and arrays, and acting (src/train/sac_core.h has the
 * contracts, src/train/sac_step.c the steps, src/train/sac_net.c the layers). */
#include "sac_core.h"

#include "../core/core.h"
#include "../core/rng.h"
#include "../nn/gemm_small.h"
#include "sac_internal.h"

#include <math.h>
#include <string.h>

enum { ALIGN_FLOATS = 16 }; /* 64 bytes between carved buffers */

sk_sac_config sk_sac_defaults(int obs_size, int act_dim, const float *act_low,
                              const float *act_high) {
    sk_sac_config config = {
        .obs_size = obs_size, .act_dim = act_dim, .hidden = 256, .layers = 2, .max_rows = 256,
        .row_blocks = 2, .policy_lr = 3e-4f, .q_lr = 1e-3f, .alpha_lr = 1e-3f, .gamma = 0.99f, .tau = 0.005f,
        .policy_frequency = 2, .target_frequency = 1, .autotune = true, .alpha = 0.2f,
        .log_alpha_init = 0.0f, .target_entropy = -(float)act_dim,
        .adam = {0.9f, 0.999f, 1e-8f}, .seed = 1,
    };
    for (int d = 0; d < act_dim && d < SK_MAX_ACTION_DIM; d++) {
        config.act_low[d] = act_low[d];
        config.act_high[d] = act_high[d];
    }
    return config;
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) return sk_fail(SK_ERR_INVALID, __VA_ARGS__);                                  \
    } while (0)

static bool positive_finite(float x) { return isfinite(x) && x > 0.0f; }

static sk_status validate(const sk_sac_config *c) {
    CHECK(c->obs_size >= 1 && c->obs_size <= 1 << 16,
          "sac: obs_size = %d is out of range (expected 1..65536)", c->obs_size);
    CHECK(c->act_dim >= 1 && c->act_dim <= SK_MAX_ACTION_DIM,
          "sac: act_dim = %d is out of range (expected 1..%d)", c->act_dim, SK_MAX_ACTION_DIM);
    for (int d = 0; d < c->act_dim; d++)
        CHECK(isfinite(c->act_low[d]) && isfinite(c->act_high[d]) && c->act_low[d] < c->act_high[d],
              "sac: action bounds of dimension %d are [%g, %g] (expected finite, low < high: SAC "
              "squashes its actions into the bounds)",
              d, (double)c->act_low[d], (double)c->act_high[d]);
    CHECK(c->hidden >= 1 && c->hidden <= 4096, "sac: hidden = %d is out of range (expected 1..4096)",
          c->hidden);
    CHECK(c->layers >= 1 && c->layers <= SK_SAC_MAX_LAYERS,
          "sac: layers = %d is out of range (expected 1..%d)", c->layers, SK_SAC_MAX_LAYERS);
    CHECK(c->max_rows >= 1 && c->max_rows <= 1 << 20,
          "sac: max_rows = %d is out of range (expected 1..1048576)", c->max_rows);
    CHECK(positive_finite(c->policy_lr) && positive_finite(c->q_lr) && positive_finite(c->alpha_lr),
          "sac: learning rates %g (policy), %g (q), %g (alpha) must be finite and > 0",
          (double)c->policy_lr, (double)c->q_lr, (double)c->alpha_lr);
    CHECK(c->gamma >= 0.0f && c->gamma <= 1.0f, "sac: gamma = %g is out of range (expected 0..1)",
          (double)c->gamma);
    CHECK(c->tau > 0.0f && c->tau <= 1.0f, "sac: tau = %g is out of range (expected (0, 1])",
          (double)c->tau);
    CHECK(c->row_blocks >= 1 && c->row_blocks <= SK_SAC_MAX_BLOCKS && c->row_blocks <= c->max_rows,
          "sac: row_blocks = %d is out of range (expected 1..%d, at most max_rows = %d)",
          c->row_blocks, SK_SAC_MAX_BLOCKS, c->max_rows);
    CHECK(c->policy_frequency >= 1 && c->policy_frequency <= 1000,
          "sac: policy_frequency = %d is out of range (expected 1..1000)", c->policy_frequency);
    CHECK(c->target_frequency >= 1, "sac: target_frequency = %d is out of range (expected >= 1)",
          c->target_frequency);
    CHECK(c->autotune || positive_finite(c->alpha),
          "sac: alpha = %g must be finite and > 0 without autotune", (double)c->alpha);
    CHECK(isfinite(c->log_alpha_init) && isfinite(c->target_entropy),
          "sac: log_alpha_init = %g and target_entropy = %g must be finite",
          (double)c->log_alpha_init, (double)c->target_entropy);
    CHECK(c->adam.beta1 >= 0.0f && c->adam.beta1 < 1.0f && c->adam.beta2 >= 0.0f &&
              c->adam.beta2 < 1.0f && positive_finite(c->adam.eps),
          "sac: Adam's betas (%g, %g) must be in [0, 1) and eps = %g > 0", (double)c->adam.beta1,
          (double)c->adam.beta2, (double)c->adam.eps);
    return SK_OK;
}

/* One more named array. */
static void add_tensor(sk_sac *sac, const char *name, float *data, float *grad, int rows, int cols) {
    SK_ASSERT(sac->num_arrays < SK_SAC_MAX_ARRAYS);
    sk_sac_array *a = &sac->arrays[sac->num_arrays++];
    snprintf(a->name, sizeof a->name, "%s", name);
    a->data = data, a->grad = grad, a->rows = rows, a->cols = cols;
}

/* A network's layers: weight (out, in) then bias (out) each, from 0; *size floats in all. */
static void lay_out_net(sk_sac_net *net, int in, int hidden, int layers, int out, size_t *size) {
    net->num_linear = layers + 1;
    size_t offset = 0;
    net->wt_floats = 0;
    for (int l = 0; l <= layers; l++) {
        net->in[l] = l == 0 ? in : hidden;
        net->out[l] = l == layers ? out : hidden;
        net->weight[l] = offset;
        offset += (size_t)net->in[l] * (size_t)net->out[l];
        net->transposed[l] = sk_gemm_small_forward_transposes(net->in[l], net->out[l]);
        net->wt[l] = net->wt_floats;
        if (net->transposed[l]) net->wt_floats += (size_t)net->in[l] * (size_t)net->out[l];
        net->bias[l] = offset;
        offset += (size_t)net->out[l];
    }
    *size = offset;
}

/* The arrays of a laid-out network at data (and grad), named as torch's modules would be
 * (PREFIX.l.weight, PREFIX.l.bias); the actor's head is two named tensors read as one
 * (2 act_dim) layer. */
static void name_net(sk_sac *sac, const sk_sac_net *net, const char *prefix, float *data,
                     float *grad, bool actor_head) {
    char name[40];
    int act = sac->config.act_dim;
    for (int l = 0; l < net->num_linear; l++) {
        bool head = actor_head && l == net->num_linear - 1;
        if (head) {
            size_t w = net->weight[l], b = net->bias[l], half = (size_t)act * (size_t)net->in[l];
            snprintf(name, sizeof name, "%s.mean.weight", prefix);
            add_tensor(sac, name, data + w, grad ? grad + w : NULL, act, net->in[l]);
            snprintf(name, sizeof name, "%s.log_std.weight", prefix);
            add_tensor(sac, name, data + w + half, grad ? grad + w + half : NULL, act, net->in[l]);
            snprintf(name, sizeof name, "%s.mean.bias", prefix);
            add_tensor(sac, name, data + b, grad ? grad + b : NULL, act, 1);
            snprintf(name, sizeof name, "%s.log_std.bias", prefix);
            add_tensor(sac, name, data + b + act, grad ? grad + b + act : NULL, act, 1);
            continue;
        }
        snprintf(name, sizeof name, "%s.%d.weight", prefix, l);
        add_tensor(sac, name, data + net->weight[l], grad ? grad + net->weight[l] : NULL,
                   net->out[l], net->in[l]);
        snprintf(name, sizeof name, "%s.%d.bias", prefix, l);
        add_tensor(sac, name, data + net->bias[l], grad ? grad + net->bias[l] : NULL, net->out[l], 1);
    }
}

/* torch.nn.Linear's default init: weight and bias uniform in +-1/sqrt(in). */
static void init_net(const sk_sac_net *net, float *params, uint64_t *rng) {
    for (int l = 0; l < net->num_linear; l++) {
        double bound = 1.0 / sqrt((double)net->in[l]);
        size_t weights = (size_t)net->in[l] * (size_t)net->out[l];
        for (size_t i = 0; i < weights; i++)
            params[net->weight[l] + i] = (float)sk_rng_uniform(rng, -bound, bound);
        for (int i = 0; i < net->out[l]; i++)
            params[net->bias[l] + (size_t)i] = (float)sk_rng_uniform(rng, -bound, bound);
    }
}

typedef struct carve {
    float **where;
    size_t floats;
} carve;

sk_status sk_sac_create(sk_sac **out, const sk_sac_config *config) {
    *out = NULL;
    sk_status status = validate(config);
    if (status != SK_OK) return status;
    sk_sac *sac = calloc(1, sizeof *sac);
    if (!sac) return sk_fail(SK_ERR_NOMEM, "sac: out of memory for the learner");
    sac->config = *config;
    const sk_sac_config *c = &sac->config;
    int act = c->act_dim, hidden = c->hidden, layers = c->layers;
    size_t actor_size, q_size;
    lay_out_net(&sac->actor, c->obs_size, hidden, layers, 2 * act, &actor_size);
    for (int k = 0; k < 2; k++) lay_out_net(&sac->qf[k], c->obs_size + act, hidden, layers, 1, &q_size);
    sac->actor_base = 0;
    for (int k = 0; k < 2; k++) {
        sac->q_base[k] = actor_size + (size_t)k * q_size;
        sac->target_base[k] = (size_t)k * q_size;
    }
    sac->num_params = actor_size + 2 * q_size;
    sac->q_floats = 2 * q_size;
    for (int d = 0; d < act; d++) {
        sac->scale[d] = (c->act_high[d] - c->act_low[d]) / 2.0f;
        sac->bias[d] = (c->act_high[d] + c->act_low[d]) / 2.0f;
    }

    size_t P = sac->num_params, A = (size_t)act;
    sac->block_rows = (c->max_rows + c->row_blocks - 1) / c->row_blocks;
    size_t rows = (size_t)sac->block_rows;
    size_t H = rows * (size_t)hidden, Q_IN = rows * ((size_t)c->obs_size + A);
    carve carves[13 + SK_SAC_MAX_BLOCKS * (20 + 3 * SK_SAC_MAX_LAYERS)];
    int n = 0;
#define CARVE(ptr, count) (carves[n++] = (carve){&(ptr), (count)})
    CARVE(sac->params, P), CARVE(sac->grads, P), CARVE(sac->adam_m, P), CARVE(sac->adam_v, P);
    CARVE(sac->targets, sac->q_floats), CARVE(sac->alpha_state, 3);
    CARVE(sac->noise, (1 + 2 * (size_t)c->policy_frequency) * (size_t)c->max_rows * A);
    CARVE(sac->zeros, rows * A);
    CARVE(sac->wt_actor, sac->actor.wt_floats);
    for (int k = 0; k < 2; k++)
        CARVE(sac->wt_q[k], sac->qf[k].wt_floats), CARVE(sac->wt_targets[k], sac->qf[k].wt_floats);
    for (int b = 0; b < c->row_blocks; b++) {
        sk_sac_block *block = &sac->blocks[b];
        CARVE(block->grads, P);
        for (int l = 0; l < layers; l++) {
            CARVE(block->actor_acts[l], H);
            CARVE(block->q_acts[0][l], H), CARVE(block->q_acts[1][l], H);
        }
        CARVE(block->head, 2 * rows * A), CARVE(block->dhead, 2 * rows * A);
        CARVE(block->actions, rows * A), CARVE(block->squashed, rows * A);
        CARVE(block->log_std_tanh, rows * A), CARVE(block->daction, rows * A);
        CARVE(block->logp, rows), CARVE(block->dlogp, rows), CARVE(block->target_q, rows);
        for (int k = 0; k < 2; k++) CARVE(block->q_out[k], rows), CARVE(block->dq[k], rows);
        CARVE(block->q_in, Q_IN), CARVE(block->dq_in, Q_IN), CARVE(block->scratch, 2 * H);
    }
#undef CARVE
    size_t total = 0;
    for (int i = 0; i < n; i++) total += (carves[i].floats + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS;
    sac->memory = sk_alloc(total * sizeof(float)); /* zeroed */
    if (!sac->memory) {
        free(sac);
        return sk_fail(SK_ERR_NOMEM, "sac: out of memory for %zu floats of networks and workspace",
                       total);
    }
    float *next = sac->memory;
    for (int i = 0; i < n; i++) {
        *carves[i].where = next;
        next += (carves[i].floats + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS;
    }

    uint64_t rng = sk_rng_seed(c->seed, 0x5ac);
    init_net(&sac->actor, sac->params + sac->actor_base, &rng);
    for (int k = 0; k < 2; k++) init_net(&sac->qf[k], sac->params + sac->q_base[k], &rng);
    memcpy(sac->targets, sac->params + sac->q_base[0], sac->q_floats * sizeof(float));
    sac->alpha_state[0] = c->log_alpha_init;
    sac->stale = SK_SAC_WT_ALL;

    name_net(sac, &sac->actor, "actor", sac->params + sac->actor_base, sac->grads + sac->actor_base, true);
    static const char *const q_names[2] = {"qf1", "qf2"}, *const target_names[2] = {"qf1_target", "qf2_target"};
    for (int k = 0; k < 2; k++)
        name_net(sac, &sac->qf[k], q_names[k], sac->params + sac->q_base[k], sac->grads + sac->q_base[k], false);
    for (int k = 0; k < 2; k++)
        name_net(sac, &sac->qf[k], target_names[k], sac->targets + sac->target_base[k], NULL, false);
    add_tensor(sac, "adam.m", sac->adam_m, NULL, (int)P, 1);
    add_tensor(sac, "adam.v", sac->adam_v, NULL, (int)P, 1);
    add_tensor(sac, "log_alpha", sac->alpha_state, NULL, 1, 1);
    add_tensor(sac, "log_alpha.adam.m", sac->alpha_state + 1, NULL, 1, 1);
    add_tensor(sac, "log_alpha.adam.v", sac->alpha_state + 2, NULL, 1, 1);
    *out = sac;
    return SK_OK;
}

void sk_sac_destroy(sk_sac *sac) {
    if (!sac) return;
    sk_free(sac->memory);
    free(sac);
}

const sk_sac_config *sk_sac_get_config(const sk_sac *sac) { return &sac->config; }

float sk_sac_alpha(const sk_sac *sac) {
    return sac->config.autotune ? expf(sac->alpha_state[0]) : sac->config.alpha;
}

int sk_sac_num_arrays(const sk_sac *sac) { return sac->num_arrays; }
const sk_sac_array *sk_sac_arrays(sk_sac *sac) {
    sac->stale = SK_SAC_WT_ALL; /* the caller may write the weights */
    return sac->arrays;
}

const sk_sac_array *sk_sac_find_array(sk_sac *sac, const char *name) {
    sac->stale = SK_SAC_WT_ALL;
    for (int i = 0; i < sac->num_arrays; i++)
        if (strcmp(sac->arrays[i].name, name) == 0) return &sac->arrays[i];
    return NULL;
}

sk_sac_counters sk_sac_get_counters(const sk_sac *sac) { return sac->counters; }
void sk_sac_set_counters(sk_sac *sac, sk_sac_counters counters) { sac->counters = counters; }

void sk_sac_set_parallel(sk_sac *sac, const sk_parallel *parallel) {
    sac->has_parallel = parallel != NULL;
    if (parallel) sac->parallel = *parallel;
}

void sk_sac_actor_forward(sk_sac *sac, sk_sac_block *block, const float *obs, int rows,
                          const float *noise) {
    sk_sac_net_forward(&sac->actor, sac->params + sac->actor_base, sac->wt_actor, obs, rows,
                       block->actor_acts, block->head);
    sk_sac_squash_forward(block->head, noise, rows, sac->config.act_dim, sac->scale, sac->bias,
                          block->actions, block->logp, block->squashed, block->log_std_tanh);
}

void sk_sac_act(sk_sac *sac, const float *obs, int rows, const float *noise, bool deterministic,
                float *actions, float *logp) {
    SK_ASSERT(rows >= 1 && rows <= sac->config.max_rows);
    size_t A = (size_t)sac->config.act_dim, O = (size_t)sac->config.obs_size;
    sk_sac_block *block = &sac->blocks[0];
    sk_sac_refresh_transposes(sac, SK_SAC_WT_ACTOR);
    for (int lo = 0; lo < rows; lo += sac->block_rows) { /* a block's rows at a time */
        int n = rows - lo < sac->block_rows ? rows - lo : sac->block_rows;
        sk_sac_actor_forward(sac, block, obs + (size_t)lo * O, n,
                             deterministic ? sac->zeros : noise + (size_t)lo * A);
        memcpy(actions + (size_t)lo * A, block->actions, (size_t)n * A * sizeof(float));
        if (logp) memcpy(logp + lo, block->logp, (size_t)n * sizeof(float));
    }
}

double sk_sac_critic_macs(const sk_sac *sac, int rows) {
    double actor = sk_sac_net_macs(&sac->actor), q = sk_sac_net_macs(&sac->qf[0]);
    double q_first = sk_sac_net_first_macs(&sac->qf[0]);
    /* actor forward; two target forwards; two forwards, each with its weight gradient and its
     * hidden layers' input gradients */
    return rows * (actor + 2.0 * q + 2.0 * (q + q + (q - q_first)));
}

double sk_sac_actor_macs(const sk_sac *sac, int rows) {
    double actor = sk_sac_net_macs(&sac->actor), q = sk_sac_net_macs(&sac->qf[0]);
    double actor_first = sk_sac_net_first_macs(&sac->actor);
    /* actor forward; two Q forwards and their input gradients; the actor's weight and hidden
     * input gradients; alpha's actor forward */
    double macs = actor + 2.0 * (q + q) + actor + (actor - actor_first);
    if (sac->config.autotune) macs += actor;
    return rows * macs;
}
