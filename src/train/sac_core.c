/* SAC's learner: the object, its layout, and the critic, actor, alpha and target steps
 * (src/train/sac_core.h has the contracts; src/train/sac_net.c the layers). */
#include "sac_core.h"

#include "../core/core.h"
#include "../core/rng.h"
#include "sac_net.h"

#include <math.h>
#include <string.h>

enum {
    MAX_ARRAYS = (2 * SK_SAC_MAX_LAYERS + 4) + 4 * 2 * (SK_SAC_MAX_LAYERS + 1) + 5,
    ALIGN_FLOATS = 16, /* 64 bytes between carved buffers */
};

struct sk_sac {
    sk_sac_config config;
    sk_sac_net actor, qf[2];   /* offsets within each network's own block */
    size_t actor_base, q_base[2], target_base[2]; /* each network's block in params / targets */
    size_t num_params, q_floats;                  /* every parameter; both Q networks' */
    float *params, *grads, *adam_m, *adam_v;      /* (num_params): actor, qf1, qf2 */
    float *targets;                               /* (q_floats): qf1_target, qf2_target */
    float *alpha_state;                           /* log_alpha, its Adam m and v */
    float scale[SK_MAX_ACTION_DIM], bias[SK_MAX_ACTION_DIM];
    sk_sac_counters counters;
    sk_sac_array arrays[MAX_ARRAYS];
    int num_arrays;
    /* workspace for max_rows rows */
    float *actor_acts[SK_SAC_MAX_LAYERS]; /* (rows, hidden) each */
    float *head, *dhead;                  /* (rows, 2 act_dim) */
    float *actions, *squashed, *log_std_tanh, *daction; /* (rows, act_dim) */
    float *logp, *dlogp, *target_q;       /* (rows) */
    float *q_acts[2][SK_SAC_MAX_LAYERS];  /* (rows, hidden) each */
    float *q_out[2], *dq[2];              /* (rows) */
    float *q_in, *dq_in;                  /* (rows, obs_size + act_dim) */
    float *scratch;                       /* (2 rows, hidden) */
    float *noise;                         /* (1 + 2 policy_frequency) (rows, act_dim) */
    float *zeros;                         /* (rows, act_dim): the deterministic action's noise */
    void *block;
};

sk_sac_config sk_sac_defaults(int obs_size, int act_dim, const float *act_low,
                              const float *act_high) {
    sk_sac_config config = {
        .obs_size = obs_size, .act_dim = act_dim, .hidden = 256, .layers = 2, .max_rows = 256,
        .policy_lr = 3e-4f, .q_lr = 1e-3f, .alpha_lr = 1e-3f, .gamma = 0.99f, .tau = 0.005f,
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

/* Lays a network out from *offset on (its block's start), naming its tensors PREFIX.l.weight
 * and PREFIX.l.bias; the actor's head is two named tensors read as one (2 act_dim) layer. */
static void add_tensor(sk_sac *sac, const char *name, float *data, float *grad, int rows, int cols) {
    SK_ASSERT(sac->num_arrays < MAX_ARRAYS);
    sk_sac_array *a = &sac->arrays[sac->num_arrays++];
    snprintf(a->name, sizeof a->name, "%s", name);
    a->data = data, a->grad = grad, a->rows = rows, a->cols = cols;
}

static void lay_out_net(sk_sac_net *net, int in, int hidden, int layers, int out, size_t *size) {
    net->num_linear = layers + 1;
    size_t offset = 0;
    for (int l = 0; l <= layers; l++) {
        net->in[l] = l == 0 ? in : hidden;
        net->out[l] = l == layers ? out : hidden;
        net->weight[l] = offset;
        offset += (size_t)net->in[l] * (size_t)net->out[l];
        net->bias[l] = offset;
        offset += (size_t)net->out[l];
    }
    *size = offset;
}

/* The arrays of a laid-out network at data (and grad), named as torch's modules would be. */
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

    size_t rows = (size_t)c->max_rows, P = sac->num_params, A = (size_t)act;
    size_t H = rows * (size_t)hidden, Q_IN = rows * ((size_t)c->obs_size + A);
    carve carves[64];
    int n = 0;
#define CARVE(ptr, count) (carves[n++] = (carve){&(ptr), (count)})
    CARVE(sac->params, P), CARVE(sac->grads, P), CARVE(sac->adam_m, P), CARVE(sac->adam_v, P);
    CARVE(sac->targets, sac->q_floats), CARVE(sac->alpha_state, 3);
    for (int l = 0; l < layers; l++) {
        CARVE(sac->actor_acts[l], H);
        CARVE(sac->q_acts[0][l], H), CARVE(sac->q_acts[1][l], H);
    }
    CARVE(sac->head, 2 * rows * A), CARVE(sac->dhead, 2 * rows * A);
    CARVE(sac->actions, rows * A), CARVE(sac->squashed, rows * A);
    CARVE(sac->log_std_tanh, rows * A), CARVE(sac->daction, rows * A);
    CARVE(sac->logp, rows), CARVE(sac->dlogp, rows), CARVE(sac->target_q, rows);
    for (int k = 0; k < 2; k++) CARVE(sac->q_out[k], rows), CARVE(sac->dq[k], rows);
    CARVE(sac->q_in, Q_IN), CARVE(sac->dq_in, Q_IN), CARVE(sac->scratch, 2 * H);
    CARVE(sac->noise, (1 + 2 * (size_t)c->policy_frequency) * rows * A);
    CARVE(sac->zeros, rows * A);
#undef CARVE
    size_t total = 0;
    for (int i = 0; i < n; i++) total += (carves[i].floats + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS;
    sac->block = sk_alloc(total * sizeof(float)); /* zeroed */
    if (!sac->block) {
        free(sac);
        return sk_fail(SK_ERR_NOMEM, "sac: out of memory for %zu floats of networks and workspace",
                       total);
    }
    float *next = sac->block;
    for (int i = 0; i < n; i++) {
        *carves[i].where = next;
        next += (carves[i].floats + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS;
    }

    uint64_t rng = sk_rng_seed(c->seed, 0x5ac);
    init_net(&sac->actor, sac->params + sac->actor_base, &rng);
    for (int k = 0; k < 2; k++) init_net(&sac->qf[k], sac->params + sac->q_base[k], &rng);
    memcpy(sac->targets, sac->params + sac->q_base[0], sac->q_floats * sizeof(float));
    sac->alpha_state[0] = c->log_alpha_init;

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
    sk_free(sac->block);
    free(sac);
}

const sk_sac_config *sk_sac_get_config(const sk_sac *sac) { return &sac->config; }

float sk_sac_alpha(const sk_sac *sac) {
    return sac->config.autotune ? expf(sac->alpha_state[0]) : sac->config.alpha;
}

int sk_sac_num_arrays(const sk_sac *sac) { return sac->num_arrays; }
const sk_sac_array *sk_sac_arrays(const sk_sac *sac) { return sac->arrays; }

const sk_sac_array *sk_sac_find_array(const sk_sac *sac, const char *name) {
    for (int i = 0; i < sac->num_arrays; i++)
        if (strcmp(sac->arrays[i].name, name) == 0) return &sac->arrays[i];
    return NULL;
}

sk_sac_counters sk_sac_get_counters(const sk_sac *sac) { return sac->counters; }
void sk_sac_set_counters(sk_sac *sac, sk_sac_counters counters) { sac->counters = counters; }

/* The actor on obs with noise: sac->head, actions, logp, squashed and log_std_tanh. */
static void actor_forward(sk_sac *sac, const float *obs, int rows, const float *noise) {
    sk_sac_net_forward(&sac->actor, sac->params + sac->actor_base, obs, rows, sac->actor_acts,
                       sac->head);
    sk_sac_squash_forward(sac->head, noise, rows, sac->config.act_dim, sac->scale, sac->bias,
                          sac->actions, sac->logp, sac->squashed, sac->log_std_tanh);
}

/* sac->q_in = obs || actions, row by row. */
static void join_inputs(sk_sac *sac, const float *obs, const float *actions, int rows) {
    size_t O = (size_t)sac->config.obs_size, A = (size_t)sac->config.act_dim, width = O + A;
    for (int row = 0; row < rows; row++) {
        memcpy(sac->q_in + (size_t)row * width, obs + (size_t)row * O, O * sizeof(float));
        memcpy(sac->q_in + (size_t)row * width + O, actions + (size_t)row * A, A * sizeof(float));
    }
}

void sk_sac_act(sk_sac *sac, const float *obs, int rows, const float *noise, bool deterministic,
                float *actions, float *logp) {
    SK_ASSERT(rows >= 1 && rows <= sac->config.max_rows);
    actor_forward(sac, obs, rows, deterministic ? sac->zeros : noise);
    size_t A = (size_t)sac->config.act_dim;
    memcpy(actions, sac->actions, (size_t)rows * A * sizeof(float));
    if (logp) memcpy(logp, sac->logp, (size_t)rows * sizeof(float));
}

float sk_sac_critic_grad(sk_sac *sac, const sk_sac_batch *batch, const float *next_noise,
                         sk_sac_losses *out) {
    const sk_sac_config *c = &sac->config;
    int rows = batch->rows;
    SK_ASSERT(rows >= 1 && rows <= c->max_rows);
    float alpha = sk_sac_alpha(sac);
    /* the target: the next actions from the current actor, the target networks' values */
    actor_forward(sac, batch->next_obs, rows, next_noise);
    join_inputs(sac, batch->next_obs, sac->actions, rows);
    for (int k = 0; k < 2; k++)
        sk_sac_net_forward(&sac->qf[k], sac->targets + sac->target_base[k], sac->q_in, rows,
                           sac->q_acts[k], sac->q_out[k]);
    for (int i = 0; i < rows; i++) {
        float next_v = fminf(sac->q_out[0][i], sac->q_out[1][i]) - alpha * sac->logp[i];
        sac->target_q[i] = batch->rewards[i] + (1.0f - batch->terminated[i]) * c->gamma * next_v;
    }
    /* both Q networks on the batch's actions, one after the other in the same activations */
    join_inputs(sac, batch->obs, batch->actions, rows);
    memset(sac->grads + sac->q_base[0], 0, sac->q_floats * sizeof(float));
    double loss[2], value[2];
    for (int k = 0; k < 2; k++) {
        sk_sac_net_forward(&sac->qf[k], sac->params + sac->q_base[k], sac->q_in, rows,
                           sac->q_acts[0], sac->q_out[0]);
        double sum = 0.0, q_sum = 0.0;
        for (int i = 0; i < rows; i++) {
            float diff = sac->q_out[0][i] - sac->target_q[i];
            sum += (double)diff * diff;
            q_sum += sac->q_out[0][i];
            sac->dq[0][i] = 2.0f * diff / (float)rows; /* d mean(diff^2) */
        }
        loss[k] = sum / rows, value[k] = q_sum / rows;
        sk_sac_net_backward(&sac->qf[k], sac->params + sac->q_base[k], sac->grads + sac->q_base[k],
                            sac->q_in, sac->q_acts[0], sac->dq[0], NULL, rows, sac->scratch);
    }
    if (out) {
        out->qf1_loss = (float)loss[0], out->qf2_loss = (float)loss[1];
        out->qf_loss = (float)(loss[0] + loss[1]);
        out->qf1_value = (float)value[0], out->qf2_value = (float)value[1];
    }
    return (float)(loss[0] + loss[1]);
}

float sk_sac_actor_grad(sk_sac *sac, const float *obs, int rows, const float *actor_noise,
                        sk_sac_losses *out) {
    const sk_sac_config *c = &sac->config;
    SK_ASSERT(rows >= 1 && rows <= c->max_rows);
    size_t A = (size_t)c->act_dim, width = (size_t)c->obs_size + A;
    float alpha = sk_sac_alpha(sac);
    actor_forward(sac, obs, rows, actor_noise);
    join_inputs(sac, obs, sac->actions, rows);
    for (int k = 0; k < 2; k++)
        sk_sac_net_forward(&sac->qf[k], sac->params + sac->q_base[k], sac->q_in, rows,
                           sac->q_acts[k], sac->q_out[k]);
    /* loss mean(alpha logp - min(q1, q2)): the min's gradient goes to the smaller Q, halved
     * between them where they tie (torch.min's) */
    double loss = 0.0, logp_sum = 0.0;
    float inv_rows = 1.0f / (float)rows;
    for (int i = 0; i < rows; i++) {
        float q1 = sac->q_out[0][i], q2 = sac->q_out[1][i];
        loss += (double)(alpha * sac->logp[i] - fminf(q1, q2));
        logp_sum += sac->logp[i];
        float share1 = q1 < q2 ? 1.0f : (q1 > q2 ? 0.0f : 0.5f);
        sac->dq[0][i] = -inv_rows * share1;
        sac->dq[1][i] = -inv_rows * (1.0f - share1);
        sac->dlogp[i] = alpha * inv_rows;
    }
    /* back through the Q networks to their action inputs only (their weights stay) */
    memset(sac->dq_in, 0, (size_t)rows * width * sizeof(float));
    for (int k = 0; k < 2; k++)
        sk_sac_net_backward(&sac->qf[k], sac->params + sac->q_base[k], NULL, sac->q_in,
                            sac->q_acts[k], sac->dq[k], sac->dq_in, rows, sac->scratch);
    for (int i = 0; i < rows; i++)
        memcpy(sac->daction + (size_t)i * A, sac->dq_in + (size_t)i * width + c->obs_size,
               A * sizeof(float));
    memset(sac->dhead, 0, 2 * (size_t)rows * A * sizeof(float));
    sk_sac_squash_backward(sac->head, actor_noise, rows, c->act_dim, sac->scale, sac->squashed,
                           sac->log_std_tanh, sac->daction, sac->dlogp, sac->dhead);
    size_t actor_floats = sac->q_base[0] - sac->actor_base;
    memset(sac->grads + sac->actor_base, 0, actor_floats * sizeof(float));
    sk_sac_net_backward(&sac->actor, sac->params + sac->actor_base, sac->grads + sac->actor_base,
                        obs, sac->actor_acts, sac->dhead, NULL, rows, sac->scratch);
    if (out) {
        out->actor_loss = (float)(loss / rows);
        out->entropy = (float)(-logp_sum / rows);
    }
    return (float)(loss / rows);
}

void sk_sac_critic_step(sk_sac *sac, const sk_sac_batch *batch, const float *next_noise,
                        sk_sac_losses *out) {
    sk_sac_critic_grad(sac, batch, next_noise, out);
    size_t at = sac->q_base[0];
    sk_adam_update(sac->params + at, sac->grads + at, sac->adam_m + at, sac->adam_v + at,
                   sac->q_floats, sac->config.q_lr, sac->config.adam, ++sac->counters.q_steps);
}

void sk_sac_actor_step(sk_sac *sac, const float *obs, int rows, const float *actor_noise,
                       const float *alpha_noise, sk_sac_losses *out) {
    const sk_sac_config *c = &sac->config;
    sk_sac_actor_grad(sac, obs, rows, actor_noise, out);
    size_t at = sac->actor_base, n = sac->q_base[0] - sac->actor_base;
    sk_adam_update(sac->params + at, sac->grads + at, sac->adam_m + at, sac->adam_v + at, n,
                   c->policy_lr, c->adam, ++sac->counters.actor_steps);
    if (c->autotune) {
        /* fresh actions from the updated actor; d/d(log_alpha) of
         * mean(-exp(log_alpha) (logp + target_entropy)) */
        SK_ASSERT(alpha_noise != NULL);
        actor_forward(sac, obs, rows, alpha_noise);
        double sum = 0.0;
        for (int i = 0; i < rows; i++) sum += (double)(sac->logp[i] + c->target_entropy);
        float alpha = expf(sac->alpha_state[0]);
        float mean = (float)(sum / rows), grad = -alpha * mean;
        if (out) out->alpha_loss = grad;
        sk_adam_update(sac->alpha_state, &grad, sac->alpha_state + 1, sac->alpha_state + 2, 1,
                       c->alpha_lr, c->adam, ++sac->counters.alpha_steps);
    }
    if (out) out->alpha = sk_sac_alpha(sac);
}

void sk_sac_update_targets(sk_sac *sac) {
    float tau = sac->config.tau, keep = 1.0f - tau;
    const float *online = sac->params + sac->q_base[0];
    float *target = sac->targets;
    for (size_t i = 0; i < sac->q_floats; i++) target[i] = tau * online[i] + keep * target[i];
}

void sk_sac_update(sk_sac *sac, const sk_sac_batch *batch, const sk_sac_noise *noise,
                   int64_t global_step, sk_sac_losses *out) {
    const sk_sac_config *c = &sac->config;
    sk_sac_critic_step(sac, batch, noise->next, out);
    bool actor_due = global_step % c->policy_frequency == 0;
    size_t slice = (size_t)batch->rows * (size_t)c->act_dim;
    if (actor_due)
        for (int k = 0; k < c->policy_frequency; k++)
            sk_sac_actor_step(sac, batch->obs, batch->rows, noise->actor + (size_t)k * slice,
                              noise->alpha ? noise->alpha + (size_t)k * slice : NULL, out);
    bool targets_due = global_step % c->target_frequency == 0;
    if (targets_due) sk_sac_update_targets(sac);
    if (out) out->actor_updated = actor_due, out->targets_updated = targets_due;
}

static void fill_normal(float *x, size_t n, uint64_t *rng) {
    for (size_t i = 0; i < n; i++) x[i] = (float)sk_rng_normal(rng);
}

void sk_sac_update_rng(sk_sac *sac, const sk_sac_batch *batch, int64_t global_step,
                       uint64_t *rng, sk_sac_losses *out) {
    const sk_sac_config *c = &sac->config;
    size_t slice = (size_t)batch->rows * (size_t)c->act_dim, pf = (size_t)c->policy_frequency;
    float *next = sac->noise, *actor = next + slice, *alpha = actor + pf * slice;
    fill_normal(next, slice, rng);
    if (global_step % c->policy_frequency == 0)
        for (size_t k = 0; k < pf; k++) {
            fill_normal(actor + k * slice, slice, rng);
            if (c->autotune) fill_normal(alpha + k * slice, slice, rng);
        }
    sk_sac_noise noise = {next, actor, c->autotune ? alpha : NULL};
    sk_sac_update(sac, batch, &noise, global_step, out);
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
