/* Morpho-v0: the lifecycle and its masks against tables written from the
 * issue's rules; the env's straight-through isolation, governor, episode end,
 * and counterfactuals and Shapley values on a host whose answers are counted
 * by hand. */
#include "test_util.h"

#include "skinner/vec.h"

#include "core/config.h"
#include "core/core.h"
#include "core/rng.h"
#include "morpho/morpho_internal.h"
#include "policy/policy.h"

#include <math.h>
#include <string.h>

/* |a - b| <= eps, in double */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* ------------------------------------------------------------------ lifecycle */

static morpho_slot make_slot(morpho_stage stage, int age, int in_stage) {
    morpho_slot s;
    memset(&s, 0, sizeof s);
    s.stage = stage;
    s.age = age;
    s.epochs_in_stage = in_stage;
    s.blueprint = MORPHO_BP_MLP_SMALL;
    s.tempo = 5;
    s.healthy = 1;
    s.alpha = morpho_alpha_hold(stage == MORPHO_DORMANT || stage == MORPHO_TRAINING ||
                                        stage == MORPHO_GERMINATED
                                    ? 0.0f
                                    : 1.0f);
    return s;
}

/* One row: slot states and, per op, which slots the op is allowed on (bit k =
 * slot k), written from the gates. */
typedef struct gate_row {
    const char *what;
    morpho_slot slots[MORPHO_SLOTS];
    unsigned allowed[MORPHO_NUM_OPS]; /* WAIT: ignored (always allowed) */
} gate_row;

static void check_row(const gate_row *row) {
    uint8_t mask[512];
    assert_true(morpho_mask_size() <= (int)sizeof mask);
    morpho_masks(row->slots, mask);
    assert_int_equal(mask[MORPHO_WAIT], 1);
    for (int op = 1; op < MORPHO_NUM_OPS; op++) {
        for (int k = 0; k < MORPHO_SLOTS; k++) {
            bool want = (row->allowed[op] >> k) & 1u;
            bool got = mask[MORPHO_NUM_OPS + op * MORPHO_SLOTS + k];
            int32_t action[MORPHO_HEADS] = {op, k, 0, 0, 0, 0, 0, 0};
            if (want != got || want != morpho_allowed(row->slots, action))
                fail_msg("%s: op %s slot %d: expected %s", row->what, morpho_op_names[op], k,
                         want ? "allowed" : "masked");
        }
        if (mask[op] != (row->allowed[op] != 0))
            fail_msg("%s: op %s mask %d", row->what, morpho_op_names[op], mask[op]);
    }
}

static void test_gates(void **state) {
    (void)state;
    morpho_slot dormant = make_slot(MORPHO_DORMANT, 0, 0);
    morpho_slot training9 = make_slot(MORPHO_TRAINING, 10, 9);
    morpho_slot training10 = make_slot(MORPHO_TRAINING, 11, 10);
    morpho_slot sick = training10;
    sick.healthy = 0;
    morpho_slot young = make_slot(MORPHO_TRAINING, 4, 3);
    morpho_slot moving = make_slot(MORPHO_BLENDING, 13, 2);
    morpho_alpha_retarget(&moving.alpha, 1.0f, 5, MORPHO_CURVE_LINEAR);
    moving.alpha = (morpho_alpha){.alpha = 0.4f, .start = 0.0f, .target = 1.0f, .epochs = 5,
                                  .tick = 2, .curve = MORPHO_CURVE_LINEAR};
    morpho_slot at_one = make_slot(MORPHO_BLENDING, 16, 5);
    morpho_slot at_07 = make_slot(MORPHO_BLENDING, 16, 5);
    at_07.alpha = morpho_alpha_hold(0.7f);
    morpho_slot pruning = at_one;
    pruning.pruning = 1;
    morpho_slot holding = make_slot(MORPHO_HOLDING, 20, 1);
    morpho_slot measured = holding;
    measured.measured = 1;
    morpho_slot fossil = make_slot(MORPHO_FOSSILIZED, 30, 4);
    morpho_slot germinated = make_slot(MORPHO_GERMINATED, 0, 0);
    morpho_slot embargoed = make_slot(MORPHO_EMBARGOED, 0, 2);
    morpho_slot resetting = make_slot(MORPHO_RESETTING, 0, 0);
    morpho_slot pruned = make_slot(MORPHO_PRUNED, 0, 0);
    enum { G = MORPHO_GERMINATE, S = MORPHO_SET_ALPHA_TARGET, P = MORPHO_PRUNE,
           F = MORPHO_FOSSILIZE, A = MORPHO_ADVANCE };
    const gate_row rows[] = {
        {"all empty", {dormant, dormant, dormant}, {[G] = 07}},
        {"training 9 epochs", {dormant, training9, dormant}, {[P] = 02}},
        {"training 10 epochs", {dormant, training10, dormant}, {[P] = 02, [A] = 02}},
        {"training, unhealthy", {dormant, sick, dormant}, {[P] = 02}},
        {"training, age 4", {young, dormant, dormant}, {0}},
        {"blending, alpha moving", {moving, dormant, dormant}, {[G] = 06, [S] = 01, [P] = 01}},
        {"blending at 1", {dormant, dormant, at_one}, {[G] = 03, [S] = 04, [P] = 04, [A] = 04}},
        {"blending held at 0.7", {at_07, dormant, dormant}, {[G] = 06, [S] = 01, [P] = 01}},
        {"being pruned", {pruning, dormant, dormant}, {[G] = 06}},
        {"holding, not measured", {dormant, holding, dormant}, {[G] = 05, [S] = 02, [P] = 02}},
        {"holding, measured", {dormant, holding, measured},
         {[G] = 01, [S] = 06, [P] = 06, [F] = 04}},
        {"fossilized", {fossil, dormant, dormant}, {[G] = 06}},
        {"germinated", {germinated, dormant, dormant}, {0}},
        {"embargoed", {dormant, embargoed, dormant}, {0}},
        {"resetting", {dormant, dormant, resetting}, {0}},
        {"pruned", {pruned, dormant, dormant}, {0}},
        {"full", {fossil, measured, at_one}, {[S] = 06, [P] = 06, [F] = 02, [A] = 04}},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) check_row(&rows[r]);
}

static void apply_ok(morpho_slot *slots, int op, int slot, morpho_effect want_effect) {
    int32_t action[MORPHO_HEADS] = {op, slot, MORPHO_BP_LORA4, MORPHO_BLEND_GATED, 1, 0, 1, 0};
    morpho_effect effects[MORPHO_SLOTS];
    if (!morpho_apply(slots, action, effects))
        fail_msg("%s on slot %d refused", morpho_op_names[op], slot);
    assert_int_equal(effects[slot], want_effect);
}

static void ticks(morpho_slot *slots, int n, morpho_effect *last) {
    for (int t = 0; t < n; t++) morpho_tick(slots, last);
}

static void test_lifecycle_paths(void **state) {
    (void)state;
    morpho_slot slots[MORPHO_SLOTS];
    for (int k = 0; k < MORPHO_SLOTS; k++) slots[k] = make_slot(MORPHO_DORMANT, 0, 0);
    morpho_effect fx[MORPHO_SLOTS];
    /* germinate -> (1 tick) training -> (10 ticks) advance -> blending over the tempo */
    apply_ok(slots, MORPHO_GERMINATE, 0, MORPHO_EFFECT_CREATE);
    assert_int_equal(slots[0].stage, MORPHO_GERMINATED);
    assert_int_equal(slots[0].blueprint, MORPHO_BP_LORA4);
    assert_int_equal(slots[0].style, MORPHO_BLEND_GATED);
    assert_int_equal(slots[0].tempo, 5); /* tempo choice 1 */
    ticks(slots, 1, fx);
    assert_int_equal(slots[0].stage, MORPHO_TRAINING);
    slots[0].healthy = 1;
    ticks(slots, 10, fx);
    assert_int_equal(slots[0].age, 11);
    apply_ok(slots, MORPHO_ADVANCE, 0, MORPHO_EFFECT_NONE);
    assert_int_equal(slots[0].stage, MORPHO_BLENDING);
    ticks(slots, 4, fx);
    assert_true(slots[0].alpha.alpha > 0.0f && slots[0].alpha.alpha < 1.0f);
    ticks(slots, 1, fx);
    assert_true(slots[0].alpha.alpha == 1.0f);
    apply_ok(slots, MORPHO_ADVANCE, 0, MORPHO_EFFECT_NONE);
    assert_int_equal(slots[0].stage, MORPHO_HOLDING);
    /* holding -> blending with a target below 1 */
    int32_t lower[MORPHO_HEADS] = {MORPHO_SET_ALPHA_TARGET, 0, 0, 0, 0, 0, 2, 0};
    assert_true(morpho_apply(slots, lower, fx));
    assert_int_equal(slots[0].stage, MORPHO_BLENDING);
    ticks(slots, 5, fx);
    assert_true(slots[0].alpha.alpha == 0.5f);
    int32_t raise[MORPHO_HEADS] = {MORPHO_SET_ALPHA_TARGET, 0, 0, 0, 0, 2, 0, 0};
    assert_true(morpho_apply(slots, raise, fx)); /* speed 0: there at the next tick */
    ticks(slots, 1, fx);
    apply_ok(slots, MORPHO_ADVANCE, 0, MORPHO_EFFECT_NONE);
    slots[0].measured = 1;
    apply_ok(slots, MORPHO_FOSSILIZE, 0, MORPHO_EFFECT_NONE);
    assert_int_equal(slots[0].stage, MORPHO_FOSSILIZED);
    ticks(slots, 50, fx);
    assert_int_equal(slots[0].stage, MORPHO_FOSSILIZED);
    assert_true(slots[0].alpha.alpha == 1.0f);

    /* prune before blending: at once, then embargo 5, resetting 1, empty */
    apply_ok(slots, MORPHO_GERMINATE, 1, MORPHO_EFFECT_CREATE);
    ticks(slots, 5, fx);
    apply_ok(slots, MORPHO_PRUNE, 1, MORPHO_EFFECT_REMOVE);
    assert_int_equal(slots[1].stage, MORPHO_PRUNED);
    int32_t germ2[MORPHO_HEADS] = {MORPHO_GERMINATE, 2, 0, 0, 0, 0, 0, 0};
    morpho_slot before[MORPHO_SLOTS];
    memcpy(before, slots, sizeof before);
    assert_false(morpho_apply(slots, germ2, fx)); /* refused and nothing changed */
    assert_memory_equal(before, slots, sizeof before);
    int stages[8];
    for (int t = 0; t < 8; t++) {
        ticks(slots, 1, fx);
        stages[t] = slots[1].stage;
    }
    const int want[8] = {MORPHO_EMBARGOED, MORPHO_EMBARGOED, MORPHO_EMBARGOED, MORPHO_EMBARGOED,
                         MORPHO_EMBARGOED, MORPHO_RESETTING, MORPHO_DORMANT, MORPHO_DORMANT};
    for (int t = 0; t < 8; t++)
        if (stages[t] != want[t])
            fail_msg("tick %d after the prune: %s, expected %s", t + 1,
                     morpho_stage_names[stages[t]], morpho_stage_names[want[t]]);

    /* prune after blending: alpha ramps down over the tempo, then the seed goes */
    slots[2] = make_slot(MORPHO_HOLDING, 20, 3);
    slots[2].tempo = 3;
    apply_ok(slots, MORPHO_PRUNE, 2, MORPHO_EFFECT_NONE);
    assert_int_equal(slots[2].stage, MORPHO_BLENDING);
    morpho_effect seen = MORPHO_EFFECT_NONE;
    for (int t = 0; t < 3; t++) {
        assert_int_equal(slots[2].stage, MORPHO_BLENDING);
        morpho_tick(slots, fx);
        seen = fx[2];
    }
    assert_int_equal(seen, MORPHO_EFFECT_REMOVE);
    assert_int_equal(slots[2].stage, MORPHO_PRUNED);
}

/* Every action's verdict matches the mask, over random slot states. */
static void test_mask_matches_apply(void **state) {
    (void)state;
    uint64_t rng = 99;
    uint8_t mask[512];
    for (int trial = 0; trial < 2000; trial++) {
        morpho_slot slots[MORPHO_SLOTS];
        for (int k = 0; k < MORPHO_SLOTS; k++) {
            slots[k] = make_slot((morpho_stage)sk_rng_below(&rng, MORPHO_NUM_STAGES),
                                 (int)sk_rng_below(&rng, 12), (int)sk_rng_below(&rng, 13));
            slots[k].healthy = (int)sk_rng_below(&rng, 2);
            slots[k].measured = (int)sk_rng_below(&rng, 2);
            if (slots[k].stage == MORPHO_BLENDING) slots[k].pruning = (int)sk_rng_below(&rng, 2);
        }
        morpho_masks(slots, mask);
        int32_t action[MORPHO_HEADS];
        for (int h = 0; h < MORPHO_HEADS; h++)
            action[h] = (int32_t)sk_rng_below(&rng, (uint32_t)morpho_head_sizes[h]);
        bool by_mask = mask[action[0]] &&
                       (action[0] == MORPHO_WAIT ||
                        mask[MORPHO_NUM_OPS + action[0] * MORPHO_SLOTS + action[1]]);
        morpho_slot copy[MORPHO_SLOTS];
        memcpy(copy, slots, sizeof copy);
        morpho_effect fx[MORPHO_SLOTS];
        assert_int_equal(morpho_apply(copy, action, fx), by_mask);
    }
}

/* ------------------------------------------------------------------ Shapley by hand */

static void test_shapley(void **state) {
    (void)state;
    /* two seeds: v({}) .5, v({0}) .6, v({1}) .55, v({0,1}) .7
     * phi0 = ((.6-.5) + (.7-.55))/2 = .125, phi1 = ((.55-.5) + (.7-.6))/2 = .075 */
    float acc2[MORPHO_SUBSETS] = {0.5f, 0.6f, NAN, NAN, 0.55f, 0.7f, NAN, NAN};
    float phi[MORPHO_SLOTS];
    morpho_shapley(acc2, 0x5, phi); /* seeds in slots 0 and 2 */
    assert_near(phi[0], 0.125, 1e-6);
    assert_near(phi[1], 0.0, 0.0);
    assert_near(phi[2], 0.075, 1e-6);
    /* three seeds, a symmetric game: v(S) = |S|^2 / 10 -> each 0.9 / 3 = 0.3;
     * and an additive game: v(S) = sum of w_k -> phi_k = w_k */
    float sym[MORPHO_SUBSETS], add[MORPHO_SUBSETS];
    const float w[3] = {0.01f, -0.02f, 0.05f};
    for (unsigned s = 0; s < MORPHO_SUBSETS; s++) {
        int n = __builtin_popcount(s);
        sym[s] = (float)(n * n) / 10.0f;
        add[s] = 0.8f;
        for (int k = 0; k < 3; k++)
            if ((s >> k) & 1u) add[s] += w[k];
    }
    morpho_shapley(sym, 0x7, phi);
    for (int k = 0; k < 3; k++) assert_near(phi[k], 0.3, 1e-6);
    morpho_shapley(add, 0x7, phi);
    for (int k = 0; k < 3; k++) assert_near(phi[k], w[k], 1e-6);
}

/* ------------------------------------------------------------------ the env */

/* n Morpho envs on an sk_vec; the pointers are the vec's buffers. */
typedef struct env_run {
    const sk_env_def *env;
    sk_vec *vec;
    void *state;
    sk_config *cfg;
    int n;
    float *obs, *final_obs, *rewards, *log;
    int32_t *actions;
    uint8_t *terminated, *truncated, *masks;
} env_run;

static void env_open(env_run *r, int n, const char *extra) {
    memset(r, 0, sizeof *r);
    r->env = &sk_env_morpho;
    r->n = n;
    r->cfg = sk_config_new();
    char text[512];
    snprintf(text, sizeof text,
             "[env]\ndata = synthetic\nbatches = 4\nbatch_size = 64\nval_size = 300\n%s", extra);
    assert_int_equal(sk_config_load_string(r->cfg, text), SK_OK);
    if (sk_vec_create(&r->vec, r->env, n, 1, r->cfg) != SK_OK) fail_msg("create: %s", sk_last_error());
    const sk_vec_buffers *b = sk_vec_buffers_of(r->vec);
    r->state = sk_vec_state(r->vec);
    r->obs = b->obs, r->final_obs = b->final_obs, r->rewards = b->rewards, r->log = b->episode_log;
    r->actions = b->actions, r->masks = b->masks;
    r->terminated = b->terminated, r->truncated = b->truncated;
    sk_vec_reset(r->vec, 7);
}

static void env_close(env_run *r) {
    sk_vec_destroy(r->vec);
    sk_config_free(r->cfg);
}

static void set_action(env_run *r, int i, int op, int slot, int blueprint) {
    int32_t *a = r->actions + (size_t)i * MORPHO_HEADS;
    memset(a, 0, MORPHO_HEADS * sizeof(int32_t));
    a[MORPHO_HEAD_OP] = op;
    a[MORPHO_HEAD_SLOT] = slot;
    a[MORPHO_HEAD_BLUEPRINT] = blueprint;
}

/* A TRAINING seed leaves the host exactly as it would be without it: env 0
 * germinates, env 1 waits; same seed, so their hosts must stay bit-identical
 * through TRAINING, and part once the seed blends. */
static void test_straight_through(void **state) {
    (void)state;
    env_run r;
    env_open(&r, 2, "");
    morpho_state *m = r.state;
    size_t host = morpho_host_params(m->D, m->H);
    /* both envs seeded alike: reset env 1 with env 0's streams */
    m->meta[1] = m->meta[0];
    memcpy(m->arena_all + m->arena, m->arena_all, m->arena * sizeof(float));
    memcpy(m->perm + m->data->n_train, m->perm, (size_t)m->data->n_train * sizeof(int32_t));
    for (int epoch = 0; epoch < 12; epoch++) {
        set_action(&r, 0, epoch == 0 ? MORPHO_GERMINATE : MORPHO_WAIT, 1, MORPHO_BP_MLP_SMALL);
        set_action(&r, 1, MORPHO_WAIT, 0, 0);
        sk_vec_step_range(r.vec, 0, 2);
        assert_int_equal(m->meta[0].slots[1].stage, MORPHO_TRAINING);
        assert_memory_equal(m->arena_all, m->arena_all + m->arena, host * sizeof(float));
        /* a host without seeds earns the accuracy term alone: 5 x (accuracy - 0.8) */
        assert_near(r.rewards[1], 5.0 * (m->meta[1].val_acc - 0.8), 1e-5);
    }
    /* the seed did learn */
    const float *p = morpho_slot_params(m, 0, 1);
    size_t n = morpho_seed_num_params(MORPHO_BP_MLP_SMALL, m->H);
    double moved = 0.0;
    for (size_t k = 0; k < n; k++) moved += fabs(p[k]);
    assert_true(moved > 0.0);
    assert_true(m->meta[0].slots[1].healthy);
    /* advance: now the seed shapes the output, and the hosts part */
    set_action(&r, 0, MORPHO_ADVANCE, 1, 0);
    set_action(&r, 1, MORPHO_WAIT, 0, 0);
    sk_vec_step_range(r.vec, 0, 2);
    sk_vec_step_range(r.vec, 0, 2);
    assert_int_equal(m->meta[0].slots[1].stage, MORPHO_BLENDING);
    assert_true(memcmp(m->arena_all, m->arena_all + m->arena, host * sizeof(float)) != 0);
    env_close(&r);
}

/* Counterfactuals on a host that predicts one class whatever the input:
 * every weight 0; b0 puts the stream at e_0, the output layer maps stream
 * coordinate c to class c, and each seed (MLP_SMALL with only b2 set) moves
 * the stream's mass to another coordinate. The accuracy of a configuration
 * is then the share of validation labels of the class it ends on, counted
 * here from the labels. A TRAINING seed stays out of every configuration
 * but has its prospect measured. */
static void test_counterfactuals_by_hand(void **state) {
    (void)state;
    env_run r;
    env_open(&r, 1, "");
    morpho_state *m = r.state;
    int D = m->D, H = m->H;
    float *arena = m->arena_all;
    memset(arena, 0, morpho_host_params(D, H) * sizeof(float));
    float *b0 = arena + (size_t)H * D;
    float *w1 = b0 + H, *b1 = w1 + (size_t)H * H, *w2 = b1 + H, *b2 = w2 + (size_t)H * H;
    float *wout = b2 + H;
    b0[0] = 1.0f;
    for (int k = 0; k < H; k++) w1[(size_t)k * H + k] = w2[(size_t)k * H + k] = 1.0f;
    for (int c = 0; c < MORPHO_CLASSES; c++) wout[(size_t)c * H + c] = 1.0f;
    /* seeds in slots 0 and 2, blending at alpha 1 (ADD): slot 0 moves e0 -> e3,
     * slot 2 moves e0 -> e5 and e3 -> e7 */
    morpho_meta *meta = &m->meta[0];
    size_t small = morpho_seed_num_params(MORPHO_BP_MLP_SMALL, H);
    for (int k = 0; k < 3; k += 2) {
        meta->slots[k].stage = MORPHO_HOLDING;
        meta->slots[k].blueprint = MORPHO_BP_MLP_SMALL;
        meta->slots[k].style = MORPHO_BLEND_ADD;
        meta->slots[k].alpha = morpho_alpha_hold(1.0f);
        memset(morpho_slot_params(m, 0, k), 0, small * sizeof(float));
    }
    /* MLP_SMALL packs W1 (H,H), b1 (H), W2 (H,H), b2 (H): b2 is the last H */
    float *s0_b2 = morpho_slot_params(m, 0, 0) + small - H;
    s0_b2[0] = -1.0f, s0_b2[3] = 1.0f;
    /* slot 2's seed must depend on its input: b1 = 0, W1 = identity, so
     * relu(W1 x) = x for x >= 0; W2 maps e0 -> e5 - e0 and e3 -> e7 - e3 */
    float *p2 = morpho_slot_params(m, 0, 2);
    float *s2_w1 = p2, *s2_w2 = p2 + (size_t)H * H + H;
    for (int k = 0; k < H; k++) s2_w1[(size_t)k * H + k] = 1.0f;
    s2_w2[(size_t)0 * H + 0] = -1.0f, s2_w2[(size_t)5 * H + 0] = 1.0f;
    s2_w2[(size_t)3 * H + 3] = -1.0f, s2_w2[(size_t)7 * H + 3] = 1.0f;
    /* slot 1 holds a TRAINING seed whose output would move e3 -> e9: not in
     * any configuration, but its prospect is measured */
    meta->slots[1].stage = MORPHO_TRAINING;
    meta->slots[1].blueprint = MORPHO_BP_MLP_SMALL;
    float *s1 = morpho_slot_params(m, 0, 1);
    memset(s1, 0, small * sizeof(float));
    s1[small - H + 3] = -1.0f, s1[small - H + 9] = 1.0f;
    morpho_validate(m, 0);
    int count[MORPHO_CLASSES] = {0};
    for (int e = 0; e < m->cfg.val_size; e++) count[m->data->val_y[e]]++;
    double share[MORPHO_CLASSES];
    for (int c = 0; c < MORPHO_CLASSES; c++) share[c] = (double)count[c] / m->cfg.val_size;
    /* {}: class 0; {0}: 3; {2}: 5; {0,2}: 7 */
    assert_near(meta->subset_acc[0], share[0], 1e-6);
    assert_near(meta->subset_acc[1], share[3], 1e-6);
    assert_near(meta->subset_acc[4], share[5], 1e-6);
    assert_near(meta->subset_acc[5], share[7], 1e-6);
    assert_true(isnan(meta->subset_acc[2]) && isnan(meta->subset_acc[7]));
    assert_near(meta->val_acc, share[7], 1e-6);
    assert_near(meta->slots[0].contribution, share[7] - share[5], 1e-6);
    assert_near(meta->slots[2].contribution, share[7] - share[3], 1e-6);
    assert_true(meta->slots[0].measured && meta->slots[2].measured);
    assert_near(meta->slots[1].prospect, share[9] - share[7], 1e-6);
    assert_near(meta->slots[1].contribution, 0.0, 0.0);
    float phi[MORPHO_SLOTS];
    morpho_shapley(meta->subset_acc, 0x5, phi);
    assert_near(phi[0], 0.5 * ((share[3] - share[0]) + (share[7] - share[5])), 1e-6);
    assert_near(phi[2], 0.5 * ((share[5] - share[0]) + (share[7] - share[3])), 1e-6);
    env_close(&r);
}

/* A learning rate that blows the loss up is rolled back and penalised. */
static void test_governor(void **state) {
    (void)state;
    env_run r;
    env_open(&r, 1, "lr = 9.0\nclip = 1000000\n");
    morpho_state *m = r.state;
    float *before = malloc(m->arena * sizeof(float));
    int rolled_back = 0;
    for (int epoch = 0; epoch < 6; epoch++) {
        memcpy(before, m->arena_all, m->arena * sizeof(float));
        set_action(&r, 0, MORPHO_WAIT, 0, 0);
        sk_vec_step_range(r.vec, 0, 1);
        if (memcmp(before, m->arena_all, m->arena * sizeof(float)) == 0) {
            rolled_back++;
            /* the penalty, beside the accuracy term (5 x (accuracy - 0.8)) */
            assert_true(r.rewards[0] - 5.0f * (m->meta[0].val_acc - 0.8f) <= -0.9f);
        }
        for (size_t k = 0; k < m->arena; k++) assert_true(isfinite(m->arena_all[k]));
    }
    assert_true(rolled_back > 0);
    free(before);
    env_close(&r);
}

/* Episodes end after env.epochs with the log filled and a fresh host. */
static void test_episode_end(void **state) {
    (void)state;
    env_run r;
    env_open(&r, 1, "epochs = 3\n");
    morpho_state *m = r.state;
    for (int epoch = 0; epoch < 3; epoch++) {
        set_action(&r, 0, epoch == 0 ? MORPHO_GERMINATE : MORPHO_WAIT, 0, MORPHO_BP_LORA4);
        sk_vec_step_range(r.vec, 0, 1);
        assert_int_equal(r.terminated[0], epoch == 2);
        assert_int_equal(r.truncated[0], 0);
    }
    assert_near(r.log[1], 3.0, 0.0);
    assert_true(r.log[MORPHO_LOG_TEST_ACC] > 0.15f && r.log[MORPHO_LOG_TEST_ACC] <= 1.0f);
    assert_near(r.log[MORPHO_LOG_EXTRA_PARAMS],
                       (double)(morpho_seed_num_params(MORPHO_BP_LORA4, m->H) +
                                morpho_blend_num_params(MORPHO_BLEND_ADD, m->H)),
                       0.0);
    assert_int_equal(m->meta[0].epoch, 0);
    assert_int_equal(m->meta[0].slots[0].stage, MORPHO_DORMANT);
    /* the final observation says the seed was training; the new one is empty */
    const float *slot0 = r.final_obs + MORPHO_GLOBAL_FEATURES;
    assert_near(slot0[0], 1.0, 0.0);
    assert_near(r.obs[MORPHO_GLOBAL_FEATURES], 0.0, 0.0);
    /* the mask the env wrote is the lifecycle's */
    uint8_t want[512];
    morpho_masks(m->meta[0].slots, want);
    assert_memory_equal(r.masks, want, (size_t)r.env->mask_size);
    env_close(&r);
}

/* The shaped reward is the documented sum with the configured weights: one
 * LoRA-4 seed is germinated, trained, advanced to BLENDING and HOLDING and
 * fossilized, and each epoch's reward is rebuilt from the state before and
 * after the step and the formulas in docs/morpho.md. */
static void test_reward_weights(void **state) {
    (void)state;
    static const double stage_value[] = {
        [MORPHO_GERMINATED] = 1, [MORPHO_TRAINING] = 2, [MORPHO_BLENDING] = 3,
        [MORPHO_HOLDING] = 4,    [MORPHO_FOSSILIZED] = 5,
    };
    env_run r;
    env_open(&r, 1,
             "w_accuracy = 2\nw_attr = 7\nw_rent = 3\nw_fossil = 11\nw_terminal = 0\n");
    morpho_state *m = r.state;
    morpho_slot *slot = &m->meta[0].slots[0];
    double host = (double)morpho_host_params(m->D, m->H);
    double extra = (double)(morpho_seed_num_params(MORPHO_BP_LORA4, m->H) +
                            morpho_blend_num_params(MORPHO_BLEND_ADD, m->H));
    double rent = fmin(0.5 * log1p(extra / host), 1.5);
    bool blended = false, fossilized = false;
    for (int epoch = 0; epoch < 60 && !fossilized; epoch++) {
        int op = MORPHO_WAIT;
        if (epoch == 0) op = MORPHO_GERMINATE;
        else if (slot->stage == MORPHO_TRAINING && slot->epochs_in_stage >= 10)
            op = MORPHO_ADVANCE;
        else if (slot->stage == MORPHO_BLENDING && morpho_alpha_settled(&slot->alpha))
            op = MORPHO_ADVANCE;
        else if (slot->stage == MORPHO_HOLDING && slot->measured && slot->contribution != 0.0f)
            op = MORPHO_FOSSILIZE; /* once the bonus is not zero, so the test sees it */
        double phi_before = 0.05 * (epoch == 0 ? 0.0 : stage_value[slot->stage]);
        double action_term = op == MORPHO_GERMINATE ? -0.05
                             : op == MORPHO_FOSSILIZE ? 11.0 * slot->contribution
                                                      : 0.0;
        set_action(&r, 0, op, 0, MORPHO_BP_LORA4);
        sk_vec_step_range(r.vec, 0, 1);
        assert_int_equal(m->meta[0].last_success, 1);
        const morpho_meta *meta = &m->meta[0];
        /* the contribution is the main accuracy minus the accuracy without the seed */
        double attribution = 0.0;
        if (morpho_stage_blends((morpho_stage)slot->stage)) {
            assert_near(slot->contribution, meta->subset_acc[1] - meta->subset_acc[0], 1e-6);
            attribution = slot->contribution;
            blended |= attribution != 0.0;
        }
        fossilized = slot->stage == MORPHO_FOSSILIZED;
        double want = action_term + 2.0 * (meta->val_acc - 0.8) + 7.0 * attribution - 3.0 * rent +
                      0.995 * 0.05 * stage_value[slot->stage] - phi_before;
        if (fabs(r.rewards[0] - want) > 1e-5)
            fail_msg("epoch %d (%s): reward %.6f, want %.6f", epoch, morpho_op_names[op],
                     r.rewards[0], want);
    }
    assert_true(blended);
    assert_true(fossilized);
    env_close(&r);
}

static void test_bad_config(void **state) {
    (void)state;
    const char *bad[] = {"[env]\nreward = dense\n", "[env]\nbatches = 0\n",
                         "[env]\nval_size = 999999\n", "[env]\ndata = /nonexistent/folder\n",
                         "[env]\nw_rent = -1\n", "[env]\nhost = resnet\n",
                         "[env]\nprecision = bf16\n", "[env]\nhost = cnn\nprecision = fp16\n",
                         "[env]\nhost = cnn\nfixed_blueprint = mlp_large\n",
                         "[env]\nfixed_seeds = 4\n"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        sk_config *cfg = sk_config_new();
        assert_int_equal(sk_config_load_string(cfg, bad[k]), SK_OK);
        void *st = NULL;
        sk_status status = sk_env_morpho.create(&st, 1, cfg);
        assert_true(status != SK_OK);
        assert_null(st);
        assert_true(strlen(sk_last_error()) > 0);
        print_message("rejected as expected: %s\n", sk_last_error());
        sk_config_free(cfg);
    }
}

/* The epoch's gradient (host and blending seeds together, through three blend
 * styles) against central differences of the loss; a TRAINING seed moves
 * nothing in the loss (straight-through) yet gets a gradient. */
/* The epoch's gradient (host, seeds, blends) against central differences of
 * the loss: the linear host with MLP/LoRA/norm seeds, or the CNN host with
 * convolutional ones (extra holds the config). */
static void check_epoch_gradient(const char *name, const char *extra, const int blueprints[3]) {
    env_run r;
    env_open(&r, 1, extra);
    morpho_state *m = r.state;
    morpho_meta *meta = &m->meta[0];
    const int *bp = blueprints;
    const morpho_style style[3] = {MORPHO_BLEND_GATED, MORPHO_BLEND_ADD, MORPHO_BLEND_MULTIPLY};
    const morpho_stage stage[3] = {MORPHO_BLENDING, MORPHO_TRAINING, MORPHO_HOLDING};
    const float alpha[3] = {0.6f, 0.0f, 1.0f};
    uint64_t rng = 123;
    for (int k = 0; k < 3; k++) {
        meta->slots[k].stage = stage[k];
        meta->slots[k].blueprint = bp[k];
        meta->slots[k].style = style[k];
        meta->slots[k].alpha = morpho_alpha_hold(alpha[k]);
        float *p = morpho_slot_params(m, 0, k);
        size_t n = morpho_slot_seed_params(m, k, bp[k]) +
                   morpho_blend_num_params(style[k], (int)m->dim[k]);
        for (size_t j = 0; j < n; j++) p[j] = (float)(0.3 * sk_rng_normal(&rng));
    }
    enum { B = 16 };
    const float *x = m->data->train_x;
    const uint8_t *y = m->data->train_y;
    size_t n = morpho_grad_floats(m);
    float *grads = malloc(n * sizeof(float)), *scratch = malloc(n * sizeof(float));
    morpho_loss_grad(m, 0, x, y, B, grads);
    size_t host = m->host_params, group = (n - host) / MORPHO_SLOTS;
    double worst = 0.0, eps = 5e-3;
    int checked = 0;
    for (int trial = 0; trial < 120; trial++) {
        /* a host parameter, or one of a slot's seed/blend parameters */
        int where = (int)sk_rng_below(&rng, 4);
        size_t index;
        float *param;
        if (where == 0) {
            index = sk_rng_below(&rng, (uint32_t)host);
            param = m->arena_all + index;
        } else {
            int k = where - 1;
            size_t used = morpho_slot_seed_params(m, k, bp[k]);
            size_t j = sk_rng_below(&rng, (uint32_t)used);
            if (style[k] == MORPHO_BLEND_GATED && sk_rng_below(&rng, 2))
                j = m->seed_params + sk_rng_below(&rng, (uint32_t)(m->dim[k] + 1));
            index = host + (size_t)k * group + j;
            param = morpho_slot_params(m, 0, k) + j;
        }
        float saved = *param;
        *param = saved + (float)eps;
        double up = morpho_loss_grad(m, 0, x, y, B, scratch);
        *param = saved - (float)eps;
        double down = morpho_loss_grad(m, 0, x, y, B, scratch);
        *param = saved;
        double fd = (up - down) / (2 * eps);
        if (where == 2) { /* the TRAINING seed: invisible to the loss */
            assert_true(up == down);
            continue;
        }
        double err = fabs(grads[index] - fd) / (1e-2 + fabs(fd));
        if (err > worst) worst = err;
        checked++;
    }
    print_message("epoch gradient (%s): %d parameters, worst error %.2e (relative, floor 1e-2)\n",
                  name, checked, worst);
    assert_true(checked > 60);
    assert_true(worst < 2e-2);
    /* the TRAINING seed still learns */
    double norm = 0.0;
    for (size_t j = 0; j < group; j++) norm += fabs(grads[host + group + j]);
    assert_true(norm > 0.0);
    free(grads);
    free(scratch);
    env_close(&r);
}

static void test_epoch_gradient(void **state) {
    (void)state;
    const int linear[3] = {MORPHO_BP_MLP_SMALL, MORPHO_BP_LORA4, MORPHO_BP_NORM};
    check_epoch_gradient("linear host", "", linear);
}

/* The CNN host (channels 4, 8, 16), six seed kinds, with and without the
 * host's ReLUs; the synthetic task at full resolution stands in for the images. */
static void test_epoch_gradient_cnn(void **state) {
    (void)state;
    const int chains[3] = {MORPHO_CBP_CONV_HEAVY, MORPHO_CBP_BOTTLENECK, MORPHO_CBP_SE};
    check_epoch_gradient("CNN host", "host = cnn\nchannels = 4\n", chains);
    const int others[3] = {MORPHO_CBP_DEPTHWISE, MORPHO_CBP_CONV_LIGHT, MORPHO_CBP_NORM};
    check_epoch_gradient("CNN host without ReLU", "host = cnn\nchannels = 4\nhost_relu = false\n", others);
}

/* state_arrays hold the whole state: an env restored from them into a fresh
 * instance continues bit for bit like the original (what resume relies on);
 * on the CNN host in bf16 too (oneDNN's kernels are deterministic on one thread). */
static void check_state_arrays_restore(const char *extra, int blueprint) {
    env_run a, b;
    env_open(&a, 2, extra);
    env_open(&b, 2, extra);
    for (int epoch = 0; epoch < 3; epoch++) {
        set_action(&a, 0, epoch == 0 ? MORPHO_GERMINATE : MORPHO_WAIT, 2, blueprint);
        set_action(&a, 1, MORPHO_WAIT, 0, 0);
        sk_vec_step_range(a.vec, 0, 2);
    }
    sk_env_array from[SK_MAX_ENV_ARRAYS], to[SK_MAX_ENV_ARRAYS];
    int n = a.env->state_arrays(a.state, from);
    assert_int_equal(b.env->state_arrays(b.state, to), n);
    static const size_t size_of[] = {[SK_ARRAY_F32] = 4, [SK_ARRAY_F64] = 8, [SK_ARRAY_I32] = 4,
                                     [SK_ARRAY_I64] = 8, [SK_ARRAY_U8] = 1, [SK_ARRAY_U64] = 8};
    for (int k = 0; k < n; k++) {
        assert_string_equal(from[k].name, to[k].name);
        memcpy(to[k].data, from[k].data, 2 * (size_t)from[k].count * size_of[from[k].type]);
    }
    morpho_state *ma = a.state, *mb = b.state;
    /* a restored mid-episode state passes the checks; a tampered one does not */
    if (b.env->check_state(b.state, 2) != SK_OK) fail_msg("a real state refused: %s", sk_last_error());
    int32_t stage = mb->meta[1].slots[2].stage;
    mb->meta[1].slots[2].stage = 99;
    assert_int_equal(b.env->check_state(b.state, 2), SK_ERR_CORRUPT);
    assert_non_null(strstr(sk_last_error(), "env 1: slot stage = 99"));
    mb->meta[1].slots[2].stage = stage;
    float loss = mb->meta[0].train_loss;
    mb->meta[0].train_loss = NAN;
    assert_int_equal(b.env->check_state(b.state, 2), SK_ERR_CORRUPT);
    mb->meta[0].train_loss = loss;
    assert_true(from[2].has_range && from[2].lo == 0 && from[2].hi == mb->data->n_train - 1);
    for (int epoch = 0; epoch < 3; epoch++) {
        for (int i = 0; i < 2; i++) {
            set_action(&a, i, MORPHO_WAIT, 0, 0);
            set_action(&b, i, MORPHO_WAIT, 0, 0);
        }
        sk_vec_step_range(a.vec, 0, 2);
        sk_vec_step_range(b.vec, 0, 2);
        assert_memory_equal(ma->arena_all, mb->arena_all, 2 * ma->arena * sizeof(float));
        assert_memory_equal(a.obs, b.obs, 2 * MORPHO_OBS_SIZE * sizeof(float));
        assert_memory_equal(a.rewards, b.rewards, 2 * sizeof(float));
    }
    env_close(&a);
    env_close(&b);
}

static void test_state_arrays_restore(void **state) {
    (void)state;
    check_state_arrays_restore("", MORPHO_BP_GATE);
    check_state_arrays_restore("host = cnn\nchannels = 4\nprecision = bf16\n", MORPHO_CBP_CONV_HEAVY);
}

/* The exploration prior: a fresh policy prefers WAIT by e^3 over each other op
 * (the actor's last layer starts near 0, so the logits are near the prior). */
static void test_wait_prior(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    sk_policy policy;
    assert_int_equal(sk_policy_configure(&policy, cfg, &sk_env_morpho, NULL), SK_OK);
    float *params = malloc(policy.num_params * sizeof(float));
    uint64_t rng = 5;
    sk_policy_init_params(&policy, params, &rng);
    sk_policy_work work;
    assert_int_equal(sk_policy_work_alloc(&work, &policy, 4), SK_OK);
    float obs[4 * MORPHO_OBS_SIZE];
    for (int k = 0; k < 4 * MORPHO_OBS_SIZE; k++) obs[k] = (float)sk_rng_normal(&rng);
    sk_policy_forward(&policy, SK_NET_ACTOR, params, obs, 4, &work);
    for (int r = 0; r < 4; r++) {
        const float *z = work.out[SK_NET_ACTOR] + (size_t)r * policy.logits_size;
        for (int op = 1; op < MORPHO_NUM_OPS; op++) assert_near(z[0] - z[op], 3.0, 0.2);
        assert_near(z[MORPHO_NUM_OPS], z[MORPHO_NUM_OPS + 1], 0.2); /* other heads: no prior */
    }
    sk_policy_work_free(&work);
    free(params);
    sk_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gates),
        cmocka_unit_test(test_lifecycle_paths),
        cmocka_unit_test(test_mask_matches_apply),
        cmocka_unit_test(test_shapley),
        cmocka_unit_test(test_straight_through),
        cmocka_unit_test(test_counterfactuals_by_hand),
        cmocka_unit_test(test_governor),
        cmocka_unit_test(test_episode_end),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_reward_weights),
        cmocka_unit_test(test_wait_prior),
        cmocka_unit_test(test_state_arrays_restore),
        cmocka_unit_test(test_epoch_gradient),
        cmocka_unit_test(test_epoch_gradient_cnn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
