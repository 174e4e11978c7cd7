/* Work done twice in the hot loops (issue 53 ask 7), counted: the draws a row's sample
 * takes (what lets the learner skip the rows another player acts for and keep its stream),
 * the rows a self-play rollout runs through an actor (each once: the learner's by the
 * learner, a pool member's by its snapshot), the learner's rows whose agent acts (a
 * turn-based env's waiting agents run through none), the convolution primitives the
 * ConnectFour-v1 preset's rollout makes once warmed up (none), the weights its forwards
 * transpose (none: they read copies made before the rollout) and the self-play pool's members
 * transposed (one a write of a member, none a rollout). The runs stay bit-identical:
 * test_multiagent's test_identical_and_resumed and test_determinism hold that. */
#include "test_util.h"

#include "core/config.h"
#include "core/rng.h"
#include "nn/conv.h"
#include "nn/gemm_small.h"
#include "core/isa.h"
#include "policy/policy.h"
#include "skinner/pool.h"
#include "train/trainer_internal.h"
#include "vec/vec_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* splitmix64's state moves by SK_GOLDEN_GAMMA a draw: the draws between two states */
static uint64_t draws_between(uint64_t before, uint64_t after) {
    uint64_t inverse = SK_GOLDEN_GAMMA; /* Newton's iteration for the inverse mod 2^64 */
    for (int k = 0; k < 6; k++) inverse *= 2 - SK_GOLDEN_GAMMA * inverse;
    return (after - before) * inverse;
}

/* sk_policy_sample_draws against what the samplers take: several heads, the binary fast
 * path, a Gaussian; with a mask that forbids choices too. */
static void test_sample_draws(void **state) {
    (void)state;
    sk_action_space spaces[] = {
        {.kind = SK_SPACE_DISCRETE, .num_heads = 2, .head_sizes = {3, 4}},
        {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
        {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {7}},
        {.kind = SK_SPACE_CONTINUOUS, .dim = 3, .low = {-1, -1, -1}, .high = {1, 1, 1}},
    };
    enum { ROWS = 5, OBS = 4 };
    for (size_t s = 0; s < sizeof spaces / sizeof spaces[0]; s++) {
        int mask_size = s == 2 ? 7 : 0;
        sk_policy policy;
        sk_policy_work work;
        assert_int_equal(sk_policy_init(&policy, OBS, &spaces[s], mask_size, 8, 1,
                                        SK_ACTIVATION_TANH), SK_OK);
        assert_int_equal(sk_policy_work_alloc(&work, &policy, ROWS), SK_OK);
        float *params = calloc(policy.num_params, sizeof(float)), obs[ROWS * OBS];
        uint64_t rng = 3;
        sk_policy_init_params(&policy, params, &rng);
        for (int i = 0; i < ROWS * OBS; i++) obs[i] = (float)sk_rng_normal(&rng);
        uint8_t masks[ROWS * 7];
        for (int i = 0; i < ROWS * 7; i++) masks[i] = i % 3 != 0;
        int32_t actions[ROWS * 2];
        float actions_f[ROWS * 3], logp[ROWS];
        sk_policy_forward(&policy, SK_NET_ACTOR, params, obs, ROWS, &work);
        uint64_t before = rng;
        sk_policy_sample(&policy, params, work.out[SK_NET_ACTOR], mask_size ? masks : NULL, ROWS,
                         &rng, false, actions, actions_f, logp);
        assert_int_equal(draws_between(before, rng),
                         (uint64_t)ROWS * (uint64_t)sk_policy_sample_draws(&policy));
        sk_policy_work_free(&work);
        free(params);
    }
}

/* A trainer of cfg whose envs are reset and whose rollout has run once; the workers' actor
 * rows (the learner's and, apart, those of the hooks' players: self-play's pool) and the
 * convolutions' primitives counted from there, over one more rollout. */
typedef struct rollout_counts {
    int64_t actor_rows, other_rows, conv_misses;
    int64_t rows;       /* the rollout's, T x N */
    int64_t acting;     /* the reference: the learner's rows whose agent acted (see below) */
    int64_t transposes; /* weights transposed by a forward's call (sk_gemm_small_transposes) */
} rollout_counts;

static int64_t conv_misses(const sk_trainer *tr) {
    int64_t misses = 0;
    for (int w = 0; w < tr->num_workers; w++)
        for (int l = 0; l < SK_MAX_CONV; l++)
            if (tr->workers[w].work.cnn_conv[l])
                misses += sk_conv_counts_of(tr->workers[w].work.cnn_conv[l]).batch_misses;
    return misses;
}

static int64_t actor_rows(const sk_trainer *tr) {
    int64_t rows = 0;
    for (int w = 0; w < tr->num_workers; w++) rows += tr->workers[w].work.actor_rows;
    return rows;
}

/* The hooks' act wrapped to count the actor rows their players run, worker by worker. */
static const sk_rollout_hooks *g_hooks;
static const sk_worker *g_workers;
static int64_t g_other_rows[SK_MAX_WORKERS];

static void counting_act(void *ctx, sk_rollout *ro, const sk_policy *policy, sk_worker *wk, int t,
                         const float *obs_t) {
    int64_t before = wk->work.actor_rows;
    g_hooks->act(ctx, ro, policy, wk, t, obs_t);
    g_other_rows[wk - g_workers] += wk->work.actor_rows - before;
}

/* The learner's rows whose agent acted in the rollout, from its records after it: the rows
 * still active (self-play sets its pool's rows inactive) and the one action per row that
 * GAE deferred to the next rollout (it clears that row's flag); every row without agents. */
static int64_t acting_rows(const sk_rollout *ro) {
    int64_t rows = (int64_t)ro->horizon * ro->num_rows, count = 0;
    if (ro->num_agents == 1) return rows;
    for (int64_t k = 0; k < rows; k++) count += ro->active[k];
    for (int i = 0; i < ro->num_rows; i++) count += ro->pending.deferred[i] >= 0;
    return count;
}

static rollout_counts second_rollout(const sk_config *cfg) {
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_trainer_run_workers(tr, sk_reset_job);
    sk_trainer_run_rollout(tr); /* the warm-up */
    tr->progress.update++; /* the next rollout starts from this one's last observations */
    sk_rollout_hooks counting;
    const sk_rollout_hooks *hooks = tr->hooks;
    if (hooks) {
        counting = *hooks;
        counting.act = counting_act;
        g_hooks = hooks;
        g_workers = tr->workers;
        memset(g_other_rows, 0, sizeof g_other_rows);
        tr->hooks = &counting;
    }
    rollout_counts before = {.actor_rows = actor_rows(tr), .conv_misses = conv_misses(tr),
                             .transposes = sk_gemm_small_transposes()};
    sk_trainer_run_rollout(tr);
    assert_false(sk_vec_faulted(tr->vec));
    rollout_counts counts = {.actor_rows = actor_rows(tr) - before.actor_rows,
                             .conv_misses = conv_misses(tr) - before.conv_misses,
                             .rows = (int64_t)tr->rollout.horizon * tr->rollout.num_rows,
                             .acting = acting_rows(&tr->rollout),
                             .transposes = sk_gemm_small_transposes() - before.transposes};
    for (int w = 0; hooks && w < tr->num_workers; w++) counts.other_rows += g_other_rows[w];
    tr->hooks = hooks;
    sk_trainer_destroy(tr);
    return counts;
}

/* ConnectFour-v0 at 16 envs and 16 steps a rollout, on 1 or 2 threads. */
static sk_config *small_connect4(int threads) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "ConnectFour-v0");
    sk_config_set(cfg, "env.num_envs", "16");
    sk_config_set(cfg, "ppo.horizon", "16");
    sk_config_set(cfg, "train.threads", threads == 1 ? "1" : "2");
    return cfg;
}

/* Connect Four in self-play, every game against the pool (selfplay.pool_share 1): half the
 * rows are a pool member's, each run once a step by its snapshot (before: the learner ran
 * every row and the pool its half again, 1.5 x the rows); of the learner's half, only the
 * rows whose agent is to move (before: all of them, twice those). */
static void test_selfplay_rows_once(void **state) {
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        sk_config *cfg = small_connect4(threads);
        sk_config_set(cfg, "selfplay.enabled", "true");
        rollout_counts counts = second_rollout(cfg);
        print_message("%d thread(s): %lld rollout rows: %lld pool rows, %lld learner's (%lld "
                      "acting)\n", threads, (long long)counts.rows, (long long)counts.other_rows,
                      (long long)(counts.actor_rows - counts.other_rows), (long long)counts.acting);
        assert_int_equal(counts.other_rows, counts.rows / 2);
        assert_int_equal(counts.actor_rows - counts.other_rows, counts.acting);
        sk_config_free(cfg);
    }
}

/* The learner runs through its networks only the rows whose agent acts, at the presets of
 * the multi-agent envs (configs/connect4.ini: ConnectFour-v0, a pool in every game;
 * connect4_cnn.ini: ConnectFour-v1, a fifth of the games; arena.ini: Arena-v0, every agent
 * acting every step), at their sizes; the pool's rows apart. Before: every learner row
 * (Connect Four's waiting player's too: about twice the acting rows). */
static void test_learner_rows_acting(void **state) {
    (void)state;
    static const char *const presets[][2] = {
        {"connect4.ini", "ConnectFour-v0"},
        {"connect4_cnn.ini", "ConnectFour-v1"},
        {"arena.ini", "Arena-v0"},
    };
    for (size_t p = 0; p < sizeof presets / sizeof presets[0]; p++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/configs/%s", SKINNER_SOURCE_DIR, presets[p][0]);
        sk_config *cfg = sk_config_new();
        assert_int_equal(sk_config_load_file(cfg, path), SK_OK);
        sk_config_set(cfg, "env.id", presets[p][1]);
        sk_config_set(cfg, "train.threads", "2");
        rollout_counts counts = second_rollout(cfg);
        int64_t learner = counts.actor_rows - counts.other_rows;
        print_message("%s: %lld rollout rows, %lld another player's; the learner ran %lld, "
                      "%lld acting\n", presets[p][1], (long long)counts.rows,
                      (long long)counts.other_rows, (long long)learner, (long long)counts.acting);
        assert_int_equal(learner, counts.acting);
        sk_config_free(cfg);
    }
}

/* A per-role policy's update (policy.per_role: ConnectFour-v0's two roles, each
 * minibatch block gathered role by role for its copy of the networks): the gathers visit
 * each sample once an epoch (before: once per role), and the last minibatch's blocks hold
 * what a plain gather of their samples from the rollout gives, role 0's rows first. */
static void test_role_gather(void **state) {
    (void)state;
    for (int threads = 1; threads <= 2; threads++) {
        sk_config *cfg = small_connect4(threads);
        sk_config_set(cfg, "ppo.num_minibatches", "2");
        sk_config_set(cfg, "ppo.update_epochs", "2");
        sk_config_set(cfg, "policy.per_role", "true");
        sk_trainer *tr = NULL;
        assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
        sk_trainer_run_workers(tr, sk_reset_job);
        for (int r = 0; r < 2; r++) { /* the second: actions that waited resolve too */
            sk_trainer_run_workers(tr, sk_rollout_job);
            tr->progress.update++;
        }
        const sk_rollout *ro = &tr->rollout;
        int64_t rows = (int64_t)ro->horizon * ro->num_rows, samples = 0, visits = 0;
        for (int64_t k = 0; k < rows; k++) samples += ro->active[k];
        for (int i = 0; i < ro->num_rows; i++) samples += ro->pending.resolved[i];
        sk_update_stats stats;
        const char *anomaly = NULL;
        sk_learner_update(tr, 1e-4f, &stats, &anomaly);
        assert_null(anomaly);
        for (int w = 0; w < tr->num_threads; w++) visits += tr->workers[w].gather_visits;
        print_message("%d thread(s): %lld samples, 2 epochs: the gathers visited %lld rows\n",
                      threads, (long long)samples, (long long)visits);
        assert_int_equal(visits, 2 * samples);
        /* the last minibatch: perm[start..samples - 1], block w of it on worker w */
        int start = (int)(samples / 2), count = (int)samples - start, O = ro->obs_size;
        for (int w = 0; w < tr->num_threads; w++) {
            const sk_worker *wk = &tr->workers[w];
            int lo, hi, a = 0;
            sk_slice(count, w, tr->num_threads, &lo, &hi);
            for (int role = 0; role < 2; role++)
                for (int j = lo; j < hi; j++) {
                    int64_t k = tr->learner.perm[start + j];
                    if (k % 2 != role) continue;
                    bool ready = k >= rows;
                    size_t i = (size_t)(ready ? k - rows : k);
                    const float *obs = ready ? ro->ready_obs : ro->obs;
                    assert_memory_equal(wk->mb_obs + (size_t)a * (size_t)O, obs + i * (size_t)O,
                                        (size_t)O * sizeof(float));
                    const int32_t *actions = ready ? ro->ready_actions : ro->actions;
                    assert_int_equal(wk->mb_actions[a], actions[i]);
                    assert_true(wk->mb_logp[a] == (ready ? ro->ready_logp : ro->logp)[i]);
                    assert_true(wk->mb_returns[a] ==
                                (ready ? ro->pending.resolved_ret : ro->returns)[i]);
                    assert_true(wk->mb_values[a] ==
                                (ready ? ro->pending.resolved_value : ro->values)[i]);
                    assert_true(wk->mb_adv[a] == tr->learner.mb_adv_norm[j]);
                    a++;
                }
        }
        sk_trainer_destroy(tr);
        sk_config_free(cfg);
    }
}

/* The config of configs/INI for env, run on 2 threads. */
static sk_config *preset_config(const char *ini, const char *env) {
    char path[4096];
    snprintf(path, sizeof path, "%s/configs/%s", SKINNER_SOURCE_DIR, ini);
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_load_file(cfg, path), SK_OK);
    sk_config_set(cfg, "env.id", env);
    sk_config_set(cfg, "train.threads", "2");
    return cfg;
}

/* The ConnectFour-v1 preset (configs/connect4_cnn.ini: a fifth of the games against a pool
 * of 16, whose rows' count changes step by step, so the learner's does too): once warmed up
 * by a rollout, a rollout makes no convolution primitive (before: 686 a worker in 10
 * updates) and transposes no weights, the pool's included (before: 384). */
static void test_connect4_rollout_no_misses(void **state) {
    (void)state;
    sk_config *cfg = preset_config("connect4_cnn.ini", "ConnectFour-v1");
    rollout_counts counts = second_rollout(cfg);
    print_message("%lld rollout rows: %lld convolution primitives made, %lld weights transposed "
                  "by forwards\n", (long long)counts.rows, (long long)counts.conv_misses,
                  (long long)counts.transposes);
    assert_int_equal(counts.conv_misses, 0);
    assert_int_equal(counts.transposes, 0); /* before: 384, the pool's */
    sk_config_free(cfg);
}

/* A rollout of each preset, once warmed up, transposes no weights on a forward's call: its
 * forwards read the copy made before it (issue 53 ask 7). Before, with 2 threads: 1028 in
 * CartPole-v1's (4 layers a step and worker, and the truncations' values), 774 in the LSTM
 * preset's, 1286 in MinAtar/Breakout-v1's. */
static void test_rollout_no_transposes(void **state) {
    (void)state;
    const struct {
        const char *env, *ini;
    } presets[] = {
        {"CartPole-v1", "cartpole.ini"},
        {"CartPole-v1", "cartpole_lstm.ini"},
        {"MinAtar/Breakout-v1", "minatar.ini"},
    };
    for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++) {
        sk_config *cfg = preset_config(presets[k].ini, presets[k].env);
        rollout_counts counts = second_rollout(cfg);
        print_message("%s (%s): %lld rollout rows, %lld weights transposed by forwards\n",
                      presets[k].env, presets[k].ini, (long long)counts.rows,
                      (long long)counts.transposes);
        assert_int_equal(counts.transposes, 0);
        sk_config_free(cfg);
    }
}

/* After the weights change (a restore, a load, an update), the copy the next rollout reads is
 * made anew: W^T of the new weights, and each forward from it equals, bit for bit, the forward
 * of a fresh work that transposes as it goes. */
static void test_transposed_copy_follows_params(void **state) {
    (void)state;
    sk_config *cfg = preset_config("cartpole_lstm.ini", "CartPole-v1");
    sk_config_set(cfg, "policy.layers", "1");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_trainer_run_workers(tr, sk_reset_job);
    sk_trainer_run_rollout(tr);
    sk_learner *ln = &tr->learner;
    const sk_policy *policy = &ln->policy;
    enum { ROWS = 8 };
    uint64_t rng = 11;
    float obs[ROWS * 4], *state_kept = calloc((size_t)ROWS * 2 * 64, sizeof(float));
    float *state_fresh = calloc((size_t)ROWS * 2 * 64, sizeof(float));
    for (int i = 0; i < ROWS * 4; i++) obs[i] = (float)sk_rng_normal(&rng);
    /* new weights, as a checkpoint's load or the governor's restore writes them; then a
     * rollout, which made its copy of them: each weight's W^T, element by element */
    for (size_t i = 0; i < policy->num_params; i++)
        ln->params[i] = (float)sk_rng_uniform(&rng, -0.5, 0.5);
    tr->progress.update++;
    sk_trainer_run_rollout(tr);
    int transposed = 0;
    for (int k = 0; k < policy->num_tensors; k++) {
        const sk_tensor_info *t = &policy->tensors[k];
        if (sk_policy_tensor_ndim(t) != 2 || !sk_gemm_small_forward_transposes(t->cols, t->rows))
            continue;
        transposed++;
        for (int r = 0; r < t->rows; r++)
            for (int c = 0; c < t->cols; c++)
                assert_true(ln->params_t[t->offset + (size_t)c * (size_t)t->rows + (size_t)r] ==
                            ln->params[t->offset + (size_t)r * (size_t)t->cols + (size_t)c]);
    }
    sk_policy_work kept, fresh;
    assert_int_equal(sk_policy_work_alloc(&kept, policy, ROWS), SK_OK);
    assert_int_equal(sk_policy_work_alloc(&fresh, policy, ROWS), SK_OK);
    sk_policy_work_use_transposed(&kept, 0, ln->params, ln->params_t, policy->num_params);
    long long transposes = sk_gemm_small_transposes();
    sk_policy_core_step(policy, ln->params, obs, state_kept, ROWS, &kept);
    sk_policy_forward_both(policy, ln->params, obs, ROWS, &kept);
    assert_int_equal(sk_gemm_small_transposes(), transposes); /* all from the copy */
    sk_policy_core_step(policy, ln->params, obs, state_fresh, ROWS, &fresh);
    sk_policy_forward_both(policy, ln->params, obs, ROWS, &fresh);
    /* the encoder, W_ih, W_hh and the two trunks' hidden layers (the heads read W) */
    bool kernels = sk_isa_level_used() != SK_ISA_BASELINE;
    assert_int_equal(transposed, kernels ? 5 : 0);
    if (kernels) assert_true(sk_gemm_small_transposes() > transposes);
    size_t logits = (size_t)ROWS * (size_t)policy->logits_size;
    assert_memory_equal(state_kept, state_fresh, (size_t)ROWS * 2 * 64 * sizeof(float));
    assert_memory_equal(kept.out[SK_NET_ACTOR], fresh.out[SK_NET_ACTOR], logits * sizeof(float));
    assert_memory_equal(kept.out[SK_NET_CRITIC], fresh.out[SK_NET_CRITIC], ROWS * sizeof(float));
    sk_policy_work_free(&kept);
    sk_policy_work_free(&fresh);
    free(state_kept);
    free(state_fresh);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

/* The floats of pool_t checked against W^T of sp->pool, element by element, for every
 * member: each SK_TENSOR_MATRIX whose forward transposes at this ISA level. Returns the
 * tensors checked. */
static int check_pool_transposed(const sk_trainer *tr) {
    const sk_policy *policy = &tr->learner.policy;
    const sk_selfplay *sp = &tr->sp;
    size_t P = policy->num_params;
    int checked = 0;
    for (int64_t m = 0; m < sp->counters[SK_SELFPLAY_MEMBERS]; m++)
        for (int k = 0; k < policy->num_tensors; k++) {
            const sk_tensor_info *t = &policy->tensors[k];
            if (t->kind != SK_TENSOR_MATRIX || !sk_gemm_small_forward_transposes(t->cols, t->rows))
                continue;
            const float *w = sp->pool + (size_t)m * P + t->offset;
            const float *wt = sp->pool_t + (size_t)m * P + t->offset;
            for (int r = 0; r < t->rows; r++)
                for (int c = 0; c < t->cols; c++)
                    if (!(wt[(size_t)c * (size_t)t->rows + (size_t)r] ==
                          w[(size_t)r * (size_t)t->cols + (size_t)c]))
                        fail_msg("member %lld, %s[%d][%d]: pool_t holds %g, the member %g",
                                 (long long)m, t->name, r, c,
                                 (double)wt[(size_t)c * (size_t)t->rows + (size_t)r],
                                 (double)w[(size_t)r * (size_t)t->cols + (size_t)c]);
            checked++;
        }
    return checked;
}

/* Self-play's pool_t (its members' W^T, read by the rollout's forwards) is made where a
 * member is written, once a write: four rollouts without a snapshot transpose no member
 * (before: every member before every rollout, 4 here), and after a run's snapshots and
 * after a resume, before any rollout, pool_t is W^T of every member. */
static void test_pool_transposed_when_written(void **state) {
    (void)state;
    sk_config *cfg = small_connect4(2);
    sk_config_set(cfg, "selfplay.enabled", "true");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_trainer_run_workers(tr, sk_reset_job);
    int64_t before = tr->sp.members_transposed;
    for (int r = 0; r < 4; r++) {
        sk_trainer_run_rollout(tr);
        tr->progress.update++;
    }
    print_message("4 rollouts of a pool of %lld: %lld members transposed\n",
                  (long long)tr->sp.counters[SK_SELFPLAY_MEMBERS],
                  (long long)(tr->sp.members_transposed - before));
    assert_int_equal(tr->sp.members_transposed - before, 0);
    sk_trainer_destroy(tr);

    /* 6 updates of 512 rows, a snapshot every 2: the initial member and 3 snapshots in a
     * pool of 3, the first replaced */
    sk_config_set(cfg, "selfplay.pool_size", "3");
    sk_config_set(cfg, "selfplay.snapshot_every", "2");
    sk_config_set(cfg, "train.total_steps", "3072");
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    assert_int_equal(tr->sp.counters[SK_SELFPLAY_MEMBERS], 3);
    assert_int_equal(tr->sp.members_transposed, 1 + 3);
    int checked = check_pool_transposed(tr);
    bool kernels = sk_isa_level_used() != SK_ISA_BASELINE;
    if (kernels) assert_true(checked > 0);
    char dir[] = "/tmp/test_hotloop_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/pool.safetensors", dir);
    assert_int_equal(sk_trainer_save(tr, path), SK_OK);
    sk_trainer_destroy(tr);

    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_resume(tr, path), SK_OK);
    assert_int_equal(check_pool_transposed(tr), checked);
    assert_int_equal(tr->sp.members_transposed, 1 + 3); /* its start's, then the 3 restored */
    print_message("after 3 snapshots and after the resume: %d weights of 3 members checked\n",
                  checked);
    sk_trainer_destroy(tr);
    remove(path);
    rmdir(dir);
    sk_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_draws),
        cmocka_unit_test(test_selfplay_rows_once),
        cmocka_unit_test(test_learner_rows_acting),
        cmocka_unit_test(test_role_gather),
        cmocka_unit_test(test_connect4_rollout_no_misses),
        cmocka_unit_test(test_rollout_no_transposes),
        cmocka_unit_test(test_transposed_copy_follows_params),
        cmocka_unit_test(test_pool_transposed_when_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
