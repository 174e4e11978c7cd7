/* Finite-difference checks of SAC's backward passes (src/train/sac_net.c, sac_core.c): the
 * squashed Gaussian, the ReLU MLP (with and without its weights' gradients), and the critic's
 * and actor's whole losses with respect to their networks. */
#include "test_util.h"

#include "core/rng.h"
#include "train/sac_core.h"
#include "train/sac_net.h"

#include <math.h>

static void fill_normal(float *x, size_t n, uint64_t *rng, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = (float)(scale * sk_rng_normal(rng));
}

/* ---- the squashed Gaussian ---- */
enum { SQ_ROWS = 5, SQ_DIM = 3 };
typedef struct squash_ctx {
    float head[SQ_ROWS * 2 * SQ_DIM], noise[SQ_ROWS * SQ_DIM], scale[SQ_DIM], bias[SQ_DIM];
    float gact[SQ_ROWS * SQ_DIM], glogp[SQ_ROWS];
    float actions[SQ_ROWS * SQ_DIM], logp[SQ_ROWS], squashed[SQ_ROWS * SQ_DIM];
    float log_std_tanh[SQ_ROWS * SQ_DIM];
} squash_ctx;

static double squash_loss(void *p) {
    squash_ctx *c = p;
    sk_sac_squash_forward(c->head, c->noise, SQ_ROWS, SQ_DIM, c->scale, c->bias, c->actions,
                          c->logp, c->squashed, c->log_std_tanh);
    double sum = 0.0;
    for (int i = 0; i < SQ_ROWS * SQ_DIM; i++) sum += (double)c->gact[i] * c->actions[i];
    for (int i = 0; i < SQ_ROWS; i++) sum += (double)c->glogp[i] * c->logp[i];
    return sum;
}

static void test_squash(void **state) {
    (void)state;
    uint64_t rng = sk_rng_seed(21, 0);
    squash_ctx c;
    fill_normal(c.head, sizeof c.head / sizeof(float), &rng, 1.0);
    c.head[0] = 2.5f;     /* a mean where tanh saturates: 1 - tanh^2 ~ 0.03 */
    c.head[SQ_DIM] = 1.5f; /* a log-std near its top */
    fill_normal(c.noise, sizeof c.noise / sizeof(float), &rng, 1.0);
    fill_normal(c.gact, sizeof c.gact / sizeof(float), &rng, 1.0);
    fill_normal(c.glogp, SQ_ROWS, &rng, 1.0);
    float scales[SQ_DIM] = {1.0f, 2.5f, 0.25f}, biases[SQ_DIM] = {0.0f, -1.0f, 0.5f};
    memcpy(c.scale, scales, sizeof scales), memcpy(c.bias, biases, sizeof biases);
    squash_loss(&c);
    float dhead[SQ_ROWS * 2 * SQ_DIM];
    for (size_t i = 0; i < sizeof dhead / sizeof(float); i++) dhead[i] = 1.0f; /* it adds */
    sk_sac_squash_backward(c.head, c.noise, SQ_ROWS, SQ_DIM, c.scale, c.squashed, c.log_std_tanh,
                           c.gact, c.glogp, dhead);
    for (size_t i = 0; i < sizeof dhead / sizeof(float); i++) dhead[i] -= 1.0f;
    int failures = test_check_gradient("squash dhead", c.head, dhead, sizeof dhead / sizeof(float),
                                       squash_loss, &c, 1e-3f);
    assert_int_equal(failures, 0);
}

/* ---- the ReLU MLP ---- */
enum { NET_ROWS = 6, NET_IN = 5, NET_HIDDEN = 7, NET_OUT = 3, NET_LAYERS = 2 };
typedef struct net_ctx {
    sk_sac_net net;
    float params[512], inp[NET_ROWS * NET_IN], g[NET_ROWS * NET_OUT], out[NET_ROWS * NET_OUT];
    float act_store[NET_LAYERS][NET_ROWS * NET_HIDDEN];
    float *acts[NET_LAYERS];
} net_ctx;

static double net_loss(void *p) {
    net_ctx *c = p;
    sk_sac_net_forward(&c->net, c->params, NULL, c->inp, NET_ROWS, c->acts, c->out);
    double sum = 0.0;
    for (int i = 0; i < NET_ROWS * NET_OUT; i++) sum += (double)c->g[i] * c->out[i];
    return sum;
}

static void test_mlp(void **state) {
    (void)state;
    net_ctx c;
    memset(&c, 0, sizeof c);
    c.net.num_linear = NET_LAYERS + 1;
    size_t offset = 0;
    for (int l = 0; l <= NET_LAYERS; l++) {
        c.net.in[l] = l == 0 ? NET_IN : NET_HIDDEN;
        c.net.out[l] = l == NET_LAYERS ? NET_OUT : NET_HIDDEN;
        c.net.weight[l] = offset;
        offset += (size_t)c.net.in[l] * (size_t)c.net.out[l];
        c.net.bias[l] = offset;
        offset += (size_t)c.net.out[l];
    }
    assert_true(offset <= 512);
    for (int l = 0; l < NET_LAYERS; l++) c.acts[l] = c.act_store[l];
    uint64_t rng = sk_rng_seed(22, 0);
    fill_normal(c.params, offset, &rng, 0.5);
    fill_normal(c.inp, NET_ROWS * NET_IN, &rng, 1.0);
    fill_normal(c.g, NET_ROWS * NET_OUT, &rng, 1.0);
    net_loss(&c);
    float grads[512] = {0}, dinp[NET_ROWS * NET_IN] = {0}, dinp_only[NET_ROWS * NET_IN] = {0};
    float scratch[2 * NET_ROWS * NET_HIDDEN];
    sk_sac_net_backward(&c.net, c.params, grads, c.inp, c.acts, c.g, dinp, NET_ROWS, scratch);
    /* the input gradient alone (no weight GEMMs) is the same */
    sk_sac_net_backward(&c.net, c.params, NULL, c.inp, c.acts, c.g, dinp_only, NET_ROWS, scratch);
    for (int i = 0; i < NET_ROWS * NET_IN; i++) assert_float_equal(dinp[i], dinp_only[i], 1e-6);
    int failures = test_check_gradient("mlp params", c.params, grads, offset, net_loss, &c, 1e-3f);
    failures += test_check_gradient("mlp input", c.inp, dinp, NET_ROWS * NET_IN, net_loss, &c, 1e-3f);
    assert_int_equal(failures, 0);
}

/* ---- the whole losses ---- */
enum { ROWS = 8, OBS = 3, ACT = 2 };
typedef struct loss_ctx {
    sk_sac *sac;
    sk_sac_batch batch;
    float obs[ROWS * OBS], actions[ROWS * ACT], rewards[ROWS], terminated[ROWS], next_obs[ROWS * OBS];
    float next_noise[ROWS * ACT], actor_noise[ROWS * ACT];
} loss_ctx;

static double critic_loss(void *p) {
    loss_ctx *c = p;
    return sk_sac_critic_grad(c->sac, &c->batch, c->next_noise, NULL);
}

static double actor_loss(void *p) {
    loss_ctx *c = p;
    return sk_sac_actor_grad(c->sac, c->obs, ROWS, c->actor_noise, NULL);
}

static void test_losses(void **state) {
    (void)state;
    float low[ACT] = {-1.0f, -0.5f}, high[ACT] = {1.0f, 2.0f};
    sk_sac_config config = sk_sac_defaults(OBS, ACT, low, high);
    config.hidden = 8, config.max_rows = ROWS, config.log_alpha_init = -1.0f, config.seed = 3;
    loss_ctx c;
    assert_int_equal(sk_sac_create(&c.sac, &config), SK_OK);
    uint64_t rng = sk_rng_seed(23, 0);
    fill_normal(c.obs, ROWS * OBS, &rng, 1.0);
    fill_normal(c.next_obs, ROWS * OBS, &rng, 1.0);
    fill_normal(c.rewards, ROWS, &rng, 1.0);
    fill_normal(c.next_noise, ROWS * ACT, &rng, 1.0);
    fill_normal(c.actor_noise, ROWS * ACT, &rng, 1.0);
    for (int i = 0; i < ROWS; i++) {
        c.terminated[i] = (float)(i % 3 == 0);
        for (int d = 0; d < ACT; d++)
            c.actions[i * ACT + d] = low[d] + (high[d] - low[d]) * sk_rng_float(&rng);
    }
    c.batch = (sk_sac_batch){ROWS, c.obs, c.actions, c.rewards, c.terminated, c.next_obs};
    int failures = 0;
    for (int which = 0; which < 2; which++) {
        for (int i = 0; i < sk_sac_num_arrays(c.sac); i++) {
            const sk_sac_array *a = &sk_sac_arrays(c.sac)[i];
            bool actor = strncmp(a->name, "actor.", 6) == 0;
            if (!a->grad || actor != (which == 1)) continue;
            /* the gradients at the unperturbed weights: each loss call rewrites them */
            if (which == 0) critic_loss(&c);
            else actor_loss(&c);
            size_t n = (size_t)a->rows * (size_t)a->cols;
            float *analytic = malloc(n * sizeof(float));
            memcpy(analytic, a->grad, n * sizeof(float));
            failures += test_check_gradient(a->name, a->data, analytic, n,
                                            which == 0 ? critic_loss : actor_loss, &c,
                                            3e-3f); /* 1e-2 straddles a ReLU kink of qf2.0.weight[34] */
            free(analytic);
        }
    }
    sk_sac_destroy(c.sac);
    assert_int_equal(failures, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_squash),
        cmocka_unit_test(test_mlp),
        cmocka_unit_test(test_losses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
