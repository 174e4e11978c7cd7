/* Multi-agent envs (issue 37): the kit's rows and active flags through sk_vec
 * on a 2-agent env defined here, GAE over a row's inactive steps against a
 * trajectory computed by hand, the trainer on it (per-role statistics,
 * bit-identical runs, exact resume), Connect Four's rules against an
 * independent four-in-a-row check, and the module's alpha-beta searcher. */
#include "test_recorder.h"

#include "connect4/connect4.h"
#include "connect4/search.h"
#include "train/ppo.h"
#include "train/selfplay.h"
#include "train/trainer_internal.h"
#include "vec/vec_internal.h"

#include "skinner/check.h"
#include "skinner/vec.h"

#include <math.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ Duel-v0
 * Two agents per env: agent a lives a + 2 steps (agent 0 two, agent 1
 * three), earning 1 for each step it acts; a finished agent waits inactive
 * until the other finishes, then the env resets. Obs: the agent's index and
 * the steps it has left. The expected flags are written out by hand below. */
typedef struct duel {
    int32_t *left; /* (envs, 2) steps each agent has left */
} duel;

#define DUEL_LIFE(agent) ((agent) + 2)

static sk_status duel_create(void **state, int num_envs, const sk_config *cfg) {
    (void)cfg;
    duel *d = calloc(1, sizeof *d);
    if (!d || !(d->left = calloc((size_t)num_envs * 2, sizeof(int32_t)))) {
        free(d);
        return SK_ERR_NOMEM;
    }
    *state = d;
    return SK_OK;
}

static void duel_destroy(void *state) {
    duel *d = state;
    if (d) free(d->left);
    free(d);
}

static void duel_obs(const duel *d, const sk_env_io *io, float *obs, int row) {
    obs[(size_t)row * 2] = (float)(row % 2);
    obs[(size_t)row * 2 + 1] = (float)d->left[row];
    io->active[row] = d->left[row] > 0;
}

static void duel_new(duel *d, const sk_env_io *io, int e) {
    for (int a = 0; a < 2; a++) {
        d->left[e * 2 + a] = DUEL_LIFE(a);
        duel_obs(d, io, io->obs, e * 2 + a);
    }
}

static void duel_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)seed;
    for (int e = lo; e < hi; e++) duel_new(state, io, e);
}

static void duel_step(void *state, const sk_env_io *io, int lo, int hi) {
    duel *d = state;
    for (int e = lo; e < hi; e++) {
        for (int a = 0; a < 2; a++) {
            int row = e * 2 + a;
            io->rewards[row] = 0.0f;
            io->terminated[row] = io->truncated[row] = 0;
            if (d->left[row] == 0) continue; /* inactive: its action is ignored */
            io->rewards[row] = 1.0f;
            if (--d->left[row] > 0) continue;
            io->terminated[row] = 1;
            duel_obs(d, io, io->final_obs, row);
            io->episode_log[(size_t)row * 2] = (float)DUEL_LIFE(a);
            io->episode_log[(size_t)row * 2 + 1] = (float)DUEL_LIFE(a);
        }
        if (d->left[e * 2] == 0 && d->left[e * 2 + 1] == 0) duel_new(d, io, e);
        else
            for (int a = 0; a < 2; a++) duel_obs(d, io, io->obs, e * 2 + a);
    }
}

static int duel_arrays(void *state, sk_env_array *arrays) {
    duel *d = state;
    arrays[0] = (sk_env_array){"left", SK_ARRAY_I32, 2, d->left, true, 0, 3};
    return 1;
}

static const char *const g_duel_agents[] = {"short", "long"};
static const float g_duel_low[2] = {0, 0}, g_duel_high[2] = {1, 3};

static const sk_env_def g_duel = {
    .id = "Duel-v0",
    .obs_size = 2,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
    .max_episode_steps = 3,
    .solved_threshold = NAN,
    .num_log_fields = 2,
    .log_names = {"return", "length"},
    .create = duel_create,
    .destroy = duel_destroy,
    .reset = duel_reset,
    .step = duel_step,
    .state_arrays = duel_arrays,
    .obs_low = g_duel_low,
    .obs_high = g_duel_high,
    .num_agents = 2,
    .agent_names = g_duel_agents,
};

/* ------------------------------------------------------------ Opposite-v0
 * Two agents per env see the same constant observation (nothing tells them apart) and earn
 * 1 a step when the action equals their agent index, for 8 steps. One shared policy cannot
 * serve both (its two actions' probabilities add up to 1, so the roles' returns add up to
 * at most 8); a policy per role (policy.per_role) can earn 8 each. */
#define OPPOSITE_STEPS 8
typedef struct opposite {
    int32_t *t;    /* (envs) steps taken */
    float *earned; /* (envs, 2) */
} opposite;

static sk_status opposite_create(void **state, int num_envs, const sk_config *cfg) {
    (void)cfg;
    opposite *o = calloc(1, sizeof *o);
    if (!o || !(o->t = calloc((size_t)num_envs, sizeof *o->t)) ||
        !(o->earned = calloc((size_t)num_envs * 2, sizeof *o->earned))) {
        if (o) free(o->t);
        free(o);
        return SK_ERR_NOMEM;
    }
    *state = o;
    return SK_OK;
}

static void opposite_destroy(void *state) {
    opposite *o = state;
    if (o) free(o->t), free(o->earned);
    free(o);
}

static void opposite_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)seed;
    opposite *o = state;
    for (int e = lo; e < hi; e++) {
        o->t[e] = 0;
        for (int a = 0; a < 2; a++) {
            o->earned[e * 2 + a] = 0;
            io->obs[e * 2 + a] = 1.0f;
            io->active[e * 2 + a] = 1;
        }
    }
}

static void opposite_step(void *state, const sk_env_io *io, int lo, int hi) {
    opposite *o = state;
    for (int e = lo; e < hi; e++) {
        bool end = ++o->t[e] == OPPOSITE_STEPS;
        for (int a = 0; a < 2; a++) {
            int row = e * 2 + a;
            io->rewards[row] = io->actions[row] == a ? 1.0f : 0.0f;
            o->earned[row] += io->rewards[row];
            io->terminated[row] = end;
            io->truncated[row] = 0;
            io->obs[row] = 1.0f;
            io->active[row] = 1;
            if (!end) continue;
            io->final_obs[row] = 1.0f;
            io->episode_log[(size_t)row * 2] = o->earned[row];
            io->episode_log[(size_t)row * 2 + 1] = OPPOSITE_STEPS;
            o->earned[row] = 0;
        }
        if (end) o->t[e] = 0;
    }
}

static int opposite_arrays(void *state, sk_env_array *arrays) {
    opposite *o = state;
    arrays[0] = (sk_env_array){"t", SK_ARRAY_I32, 1, o->t, true, 0, OPPOSITE_STEPS - 1};
    arrays[1] = (sk_env_array){"earned", SK_ARRAY_F32, 2, o->earned, true, 0, OPPOSITE_STEPS};
    return 2;
}

static const char *const g_opposite_agents[] = {"zero", "one"};
static const float g_opposite_low[1] = {0}, g_opposite_high[1] = {1};

static const sk_env_def g_opposite = {
    .id = "Opposite-v0",
    .obs_size = 1,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
    .max_episode_steps = OPPOSITE_STEPS,
    .solved_threshold = NAN,
    .num_log_fields = 2,
    .log_names = {"return", "length"},
    .create = opposite_create,
    .destroy = opposite_destroy,
    .reset = opposite_reset,
    .step = opposite_step,
    .state_arrays = opposite_arrays,
    .obs_low = g_opposite_low,
    .obs_high = g_opposite_high,
    .num_agents = 2,
    .agent_names = g_opposite_agents,
};

static int register_duel(void **state) {
    (void)state;
    if (!sk_env_find("Duel-v0")) assert_int_equal(sk_env_register(&g_duel), SK_OK);
    if (!sk_env_find("Opposite-v0")) assert_int_equal(sk_env_register(&g_opposite), SK_OK);
    return 0;
}

/* The vec lays the buffers out by rows (env * 2 + agent) and steps envs:
 * flags, rewards, logs and the autoreset per row as written by hand. */
static void test_vec_rows_and_autoreset(void **state) {
    (void)state;
    sk_vec *vec;
    assert_int_equal(sk_vec_create(&vec, sk_env_find("Duel-v0"), 3, 2, NULL), SK_OK);
    assert_int_equal(sk_vec_num_agents(vec), 2);
    assert_int_equal(sk_vec_num_rows(vec), 6);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    sk_vec_reset(vec, 1);
    for (int row = 0; row < 6; row++) {
        assert_int_equal(b->active[row], 1);
        assert_true(b->obs[row * 2] == (float)(row % 2)); /* each row its agent's obs */
    }
    /* per step, for each agent (the same in every env): reward, terminated, active after */
    static const struct { float reward[2]; int terminated[2], active[2]; } expected[] = {
        {{1, 1}, {0, 0}, {1, 1}},
        {{1, 1}, {1, 0}, {0, 1}}, /* the short agent ends and waits */
        {{0, 1}, {0, 1}, {1, 1}}, /* the long one ends: the env resets, both act again */
        {{1, 1}, {0, 0}, {1, 1}},
    };
    for (int t = 0; t < 4; t++) {
        sk_vec_step(vec);
        for (int row = 0; row < 6; row++) {
            int agent = row % 2;
            assert_true(b->rewards[row] == expected[t].reward[agent]);
            assert_int_equal(b->terminated[row], expected[t].terminated[agent]);
            assert_int_equal(b->active[row], expected[t].active[agent]);
            if (b->terminated[row]) { /* its own log: the return and length of its life */
                assert_true(b->episode_log[row * 2] == (float)DUEL_LIFE(agent));
                assert_true(b->final_obs[row * 2 + 1] == 0.0f);
            }
        }
    }
    sk_vec_destroy(vec);
}

/* skinner check on Duel-v0, whose short agent waits inactive for the long
 * one: every check passes (its episode lengths counted in each agent's own
 * actions, 2 and 3) but seeds_differ, as Duel-v0 draws nothing. */
static void test_check_waiting_agents(void **state) {
    (void)state;
    static sk_check_report report;
    sk_check_options options = {.seed = 1};
    assert_int_equal(sk_check_env(sk_env_find("Duel-v0"), NULL, &options, &report), SK_OK);
    for (int k = 0; k < report.num_results; k++) {
        const sk_check_result *r = &report.results[k];
        bool want_fail = strcmp(r->name, "seeds_differ") == 0;
        if ((r->outcome == SK_CHECK_FAIL) != want_fail)
            fail_msg("%s: %s: %s", r->name, sk_check_outcome_name(r->outcome), r->detail);
    }
}

/* ------------------------------------------------------------ GAE */

/* With every row active, sk_gae_active is sk_gae, bit for bit. */
static void test_gae_all_active_is_gae(void **state) {
    (void)state;
    enum { T = 32, N = 3 };
    float rewards[T * N], values[(T + 1) * N], bootstrap[T * N];
    uint8_t terminated[T * N], truncated[T * N], active[(T + 1) * N];
    uint64_t rng = 7;
    for (int k = 0; k < T * N; k++) {
        rewards[k] = (float)sk_rng_uniform(&rng, -1, 1);
        bootstrap[k] = (float)sk_rng_uniform(&rng, -1, 1);
        terminated[k] = sk_rng_below(&rng, 10) == 0;
        truncated[k] = !terminated[k] && sk_rng_below(&rng, 12) == 0;
    }
    for (int k = 0; k < (T + 1) * N; k++) {
        values[k] = (float)sk_rng_uniform(&rng, -1, 1);
        active[k] = 1;
    }
    float adv_a[T * N], ret_a[T * N], adv_b[T * N], ret_b[T * N];
    sk_gae(adv_a, ret_a, rewards, values, terminated, truncated, bootstrap, T, N, 0, N, 0.99f, 0.95f);
    sk_gae_active(adv_b, ret_b, rewards, values, terminated, truncated, bootstrap, active, T, N, 0,
                  N, 0.99f, 0.95f);
    assert_memory_equal(adv_a, adv_b, sizeof adv_a);
    assert_memory_equal(ret_a, ret_b, sizeof ret_a);
}

/* A turn game's row, by hand (gamma = lambda = 0.5):
 *   t  active reward ended  value
 *   0  yes    0      -      0.1
 *   1  no     0      -      (9: not a sample)
 *   2  yes    0      -      0.2
 *   3  no    -1      term   (the opponent won while the agent waited)
 *   4  no     0      -      (the next game: the opponent moves first)
 *   5  yes    0      -      0.3,  values[T] = 0.4
 * t5: delta = 0 + 0.5 * 0.4 - 0.3 = -0.1, A = -0.1
 * t2: the wait brings -1 and the end: delta = 0 - 1 - 0.2 = -1.2, A = -1.2
 * t0: delta = 0 + 0.5 * 0.2 - 0.1 = 0, A = 0 + 0.25 * -1.2 = -0.3 */
static void test_gae_over_inactive_steps(void **state) {
    (void)state;
    enum { T = 6 };
    const float rewards[T] = {0, 0, 0, -1, 0, 0};
    const float values[T + 1] = {0.1f, 9, 0.2f, 9, 9, 0.3f, 0.4f};
    const uint8_t terminated[T] = {0, 0, 0, 1, 0, 0}, truncated[T] = {0};
    const uint8_t active[T + 1] = {1, 0, 1, 0, 0, 1, 1};
    float adv[T], ret[T];
    sk_gae_active(adv, ret, rewards, values, terminated, truncated, NULL, active, T, 1, 0, 1, 0.5f,
                  0.5f);
    const float want_adv[T] = {-0.3f, 0, -1.2f, 0, 0, -0.1f};
    const float want_ret[T] = {-0.2f, 0, -1.0f, 0, 0, 0.2f};
    for (int t = 0; t < T; t++) {
        if (fabsf(adv[t] - want_adv[t]) > 1e-6f || fabsf(ret[t] - want_ret[t]) > 1e-6f)
            fail_msg("step %d: advantage %.9g return %.9g, expected %.9g and %.9g", t,
                     (double)adv[t], (double)ret[t], (double)want_adv[t], (double)want_ret[t]);
    }
    /* waiting at T: t5 bootstraps from its own value, delta = 0.5 * 0.3 - 0.3 = -0.15 */
    const uint8_t waiting[T + 1] = {1, 0, 1, 0, 0, 1, 0};
    sk_gae_active(adv, ret, rewards, values, terminated, truncated, NULL, waiting, T, 1, 0, 1,
                  0.5f, 0.5f);
    assert_true(fabsf(adv[5] - -0.15f) < 1e-6f && fabsf(ret[5] - 0.15f) < 1e-6f);
    assert_true(fabsf(adv[0] - want_adv[0]) < 1e-6f); /* the rest as before */
}

/* The same turn game cut into two rollouts of 3 steps (t 0-2, then 3-5): at the first's
 * end the agent waits, so its action at t2 is deferred, the opponent's win at t3 (-1,
 * terminal) reaches it in the second, and it resolves there with the advantage and return
 * the whole trajectory gives it (-1.2, -1.0 above); t0 bootstraps from t2's value, its
 * lambda chain cut at the rollout's end (0 + 0.5 * 0.2 - 0.1 = 0). Without pending, t2
 * bootstrapped from itself and the -1 reached no action. Then an action deferred at the end
 * of a rollout where its agent waits throughout keeps waiting, the wait's rewards added,
 * and one resolved at the agent's next action carries that action's advantage. */
static void test_gae_pending_across_rollouts(void **state) {
    (void)state;
    enum { T = 3 };
    uint8_t waiting = 0, resolved = 0;
    float reward = 0, value = 0, rvalue = 0, radv = 0, rret = 0;
    int32_t deferred = -1;
    sk_gae_pending p = {&waiting, &reward, &value, &deferred, &resolved, &rvalue, &radv, &rret};
    const uint8_t none[T] = {0}, term2[T] = {1, 0, 0}, active1[T + 1] = {1, 0, 1, 0},
                  active2[T + 1] = {0, 0, 1, 1};
    const float rewards1[T] = {0, 0, 0}, values1[T + 1] = {0.1f, 9, 0.2f, 9};
    const float rewards2[T] = {-1, 0, 0}, values2[T + 1] = {9, 9, 0.3f, 0.4f};
    float adv[T], ret[T];
    sk_gae_active_pending(adv, ret, rewards1, values1, none, none, NULL, active1, T, 1, 0, 1, 0.5f,
                          0.5f, &p);
    assert_true(deferred == 2 && waiting == 1 && !resolved && value == 0.2f && reward == 0);
    assert_true(adv[2] == 0 && ret[2] == 0 && fabsf(adv[0]) < 1e-6f && fabsf(ret[0] - 0.1f) < 1e-6f);
    sk_gae_active_pending(adv, ret, rewards2, values2, term2, none, NULL, active2, T, 1, 0, 1, 0.5f,
                          0.5f, &p);
    assert_true(resolved == 1 && waiting == 0 && deferred == -1 && rvalue == 0.2f);
    assert_true(fabsf(radv - -1.2f) < 1e-6f && fabsf(rret - -1.0f) < 1e-6f);
    assert_true(fabsf(adv[2] - -0.1f) < 1e-6f); /* t5 as in the whole trajectory */
    /* deferred with 0.5 earned, then a rollout of waiting with +1 and no end: still waiting */
    const float rewards3[T] = {0, 0, 0.5f}, values3[T + 1] = {9, 9, 0.6f, 9};
    const uint8_t active3[T + 1] = {0, 0, 1, 0}, idle[T + 1] = {0, 0, 0, 0};
    sk_gae_active_pending(adv, ret, rewards3, values3, none, none, NULL, active3, T, 1, 0, 1,
                          0.5f, 0.5f, &p);
    assert_true(deferred == 2 && waiting == 1 && reward == 0.5f && value == 0.6f);
    const float rewards4[T] = {1, 0, 0}, values4[T + 1] = {9, 9, 9, 9};
    sk_gae_active_pending(adv, ret, rewards4, values4, none, none, NULL, idle, T, 1, 0, 1, 0.5f,
                          0.5f, &p);
    assert_true(!resolved && waiting == 1 && deferred == -1 && reward == 1.5f);
    /* its agent acts again at t1 (value 0.8, advantage there 0 + 0.5 * 1.0 - 0.8 = -0.3):
     * delta = 1.5 + 0.5 * 0.8 - 0.6 = 1.3, advantage 1.3 + 0.25 * -0.3 = 1.225 */
    const float rewards5[T] = {0, 0, 0}, values5[T + 1] = {9, 0.8f, 9, 1.0f};
    const uint8_t active5[T + 1] = {0, 1, 0, 1};
    sk_gae_active_pending(adv, ret, rewards5, values5, none, none, NULL, active5, T, 1, 0, 1, 0.5f,
                          0.5f, &p);
    assert_true(fabsf(adv[1] - -0.3f) < 1e-6f);
    assert_true(resolved && !waiting && fabsf(radv - 1.225f) < 1e-6f &&
                fabsf(rret - 1.825f) < 1e-6f);
}

/* ------------------------------------------------------------ the trainer */

static sk_config *duel_config(const char *env, const char *steps) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", env);
    sk_config_set(cfg, "env.num_envs", "8");
    sk_config_set(cfg, "ppo.horizon", "16");
    sk_config_set(cfg, "ppo.num_minibatches", "4");
    sk_config_set(cfg, "ppo.anneal_lr", "false");
    sk_config_set(cfg, "train.total_steps", steps);
    sk_config_set(cfg, "train.threads", "2");
    sk_config_set(cfg, "train.checkpoint_every", "0");
    return cfg;
}

static void train(sk_config *cfg, recorder *rec, const char *resume, const char *save,
                  const char *run_dir) {
    train_recorded(cfg, rec, resume, save, run_dir);
}

static char g_dir[64];

/* DuelFault-v0: Duel-v0 that breaks the contract once, on env 2's second
 * agent (row 5), at step g_fault_step of the run (one thread steps every
 * env): a NaN observation, or an active flag of 2. */
enum { FAULT_NAN_OBS, FAULT_ACTIVE };
static int g_fault_steps, g_fault_step, g_fault_kind;

static void duel_fault_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    g_fault_steps = 0;
    duel_reset(state, io, lo, hi, seed);
}

static void duel_fault_step(void *state, const sk_env_io *io, int lo, int hi) {
    duel_step(state, io, lo, hi);
    if (++g_fault_steps != g_fault_step || lo > 2 || 2 >= hi) return;
    if (g_fault_kind == FAULT_NAN_OBS) io->obs[5 * 2] = NAN;
    else io->active[5] = 2;
}

/* Trains DuelFault-v0 with fault `kind` at step `step`: the run's error. */
static void train_fault(int kind, int step, char *message, size_t size) {
    static sk_env_def fault_env; /* registered: kept */
    if (!sk_env_find("DuelFault-v0")) {
        fault_env = g_duel;
        fault_env.id = "DuelFault-v0";
        fault_env.reset = duel_fault_reset;
        fault_env.step = duel_fault_step;
        assert_int_equal(sk_env_register(&fault_env), SK_OK);
    }
    g_fault_kind = kind;
    g_fault_step = step;
    sk_config *cfg = duel_config("DuelFault-v0", "256");
    sk_config_set(cfg, "train.threads", "1");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_status status = sk_trainer_run(tr);
    snprintf(message, size, "%s", status == SK_OK ? "(trained)" : sk_trainer_last_error(tr));
    assert_int_equal(status, SK_ERR_ENV);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

/* A multi-agent env's contract faults name the env and the agent (h27):
 * before, the row read as the env index ("env index 5"), in the
 * trainer's checked steps and in the check of an actor's actions. */
static void test_fault_names_env_and_agent(void **state) {
    (void)state;
    char message[1024];
    train_fault(FAULT_NAN_OBS, 3, message, sizeof message);
    if (!strstr(message, "env index 2, agent 1, step 3") ||
        !strstr(message, "observation value 0 = nan is not finite"))
        fail_msg("the fault does not name env 2's agent 1 at step 3: %s", message);
    /* an action outside the head on env 1's agent 1 (row 3) */
    sk_vec *vec;
    assert_int_equal(sk_vec_create(&vec, sk_env_find("Duel-v0"), 3, 1, NULL), SK_OK);
    sk_vec_reset(vec, 1);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    for (int row = 0; row < 6; row++) b->actions[row] = row == 3 ? 7 : 0;
    assert_int_equal(sk_vec_check_actions(vec, 0, 3, "the test"), SK_ERR_ENV);
    if (!strstr(sk_last_error(), "wrote action 7 for head 0 of env index 1, agent 1 "))
        fail_msg("the action's fault does not name env 1's agent 1: %s", sk_last_error());
    sk_vec_destroy(vec);
}

/* An active flag other than 0 or 1 is the env's fault, named (h27): before,
 * the trainer took 2 for 1, and a 2 written at a rollout's last step went
 * into the checkpoint, which resume then refused (state.active's range is
 * [0, 1]): a run that could not continue. */
static void test_active_flag_checked(void **state) {
    (void)state;
    char message[1024];
    train_fault(FAULT_ACTIVE, 2, message, sizeof message);
    if (!strstr(message, "env index 2, agent 1, step 2") || !strstr(message, "active = 2"))
        fail_msg("the fault does not name env 2's agent 1's active flag at step 2: %s", message);
}

/* The batch counts rows (8 envs x 2 agents x 16 steps = 256); the episodes
 * are each agent's own, per role in summary.json: over 4 updates of 16
 * steps, the short agent's every 3 steps, the long one's too. */
static void test_trainer_roles(void **state) {
    (void)state;
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    char dir[128], path[200];
    snprintf(dir, sizeof dir, "%s/roles", g_dir);
    sk_config *cfg = duel_config("Duel-v0", "1024");
    train(cfg, &rec, NULL, NULL, dir);
    sk_config_free(cfg);
    assert_int_equal(rec.count, 4); /* 1024 / 256 */
    assert_int_equal(rec.rows[3].steps, 1024);
    /* 64 steps: each env's game ends at steps 3, 6, ..., 63: 21 per agent and env */
    assert_int_equal(rec.rows[3].episodes, 8 * 2 * 21);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    if (!strstr(text, "\"roles\": {\"short\": {\"episodes\": 168, \"mean_return\": 2}, "
                      "\"long\": {\"episodes\": 168, \"mean_return\": 3}}"))
        fail_msg("summary.json lacks the per-role returns:\n%s", text);
    /* roles.csv, by update: update u steps each env 16 times (its steps 16u-15..16u); an
     * env's game k ends for the short agent at its step 3k-1, for the long one at 3k */
    snprintf(path, sizeof path, "%s/roles.csv", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *line = strtok(text, "\n");
    assert_string_equal(line, "update,steps,return_short,return_long,episodes_short,episodes_long");
    int rows = 0;
    while ((line = strtok(NULL, "\n"))) {
        long long update, steps, short_count, long_count;
        double short_return, long_return;
        assert_int_equal(sscanf(line, "%lld,%lld,%lf,%lf,%lld,%lld", &update, &steps, &short_return,
                                &long_return, &short_count, &long_count),
                         6);
        rows++;
        int shorts = 0, longs = 0;
        for (int step = 16 * rows - 15; step <= 16 * rows; step++) {
            shorts += step % 3 == 2;
            longs += step % 3 == 0;
        }
        if (update != rows || steps != 256 * rows || short_count != 8 * shorts ||
            long_count != 8 * longs || short_return != 2 || long_return != 3)
            fail_msg("roles.csv row %d: '%s' (expected %d, %d, 2, 3, %d, %d)", rows, line, rows,
                     256 * rows, 8 * shorts, 8 * longs);
    }
    assert_int_equal(rows, 4);
}

/* policy.per_role on Opposite-v0: trained, a policy per role earns both roles' 8 a game
 * when evaluated greedily from its checkpoint (each row acts with its agent's own policy),
 * where one shared policy takes the same action for both and earns 4 a game; the
 * checkpoint names each role's tensors by its agent, twice the shared policy's. */
static void train_opposite(bool per_role, const char *save) {
    sk_config *cfg = duel_config("Opposite-v0", "24576");
    sk_config_set(cfg, "ppo.num_minibatches", "2");
    sk_config_set(cfg, "ppo.ent_coef", "0");
    if (per_role) sk_config_set(cfg, "policy.per_role", "true");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    assert_int_equal(sk_trainer_save(tr, save), SK_OK);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

static void test_per_role(void **state) {
    (void)state;
    char shared[200], path[200];
    snprintf(shared, sizeof shared, "%s/shared.safetensors", g_dir);
    snprintf(path, sizeof path, "%s/per_role.safetensors", g_dir);
    train_opposite(false, shared);
    train_opposite(true, path);
    sk_eval_result out;
    assert_int_equal(sk_evaluate(shared, "Opposite-v0", 64, true, 1, NULL, &out), SK_OK);
    assert_true(out.mean_return == OPPOSITE_STEPS / 2); /* one role's 8, the other's 0 */
    assert_int_equal(sk_evaluate(path, "Opposite-v0", 64, true, 1, NULL, &out), SK_OK);
    assert_true(out.mean_return == OPPOSITE_STEPS); /* both roles, every step */
    assert_true(out.op_counts[0] == out.op_counts[1]);
    /* sampled: each role's policy is sure of its action (an untrained one is a coin) */
    assert_int_equal(sk_evaluate(path, "Opposite-v0", 64, false, 1, NULL, &out), SK_OK);
    if (!(out.mean_return > 0.95 * OPPOSITE_STEPS))
        fail_msg("sampled, a policy per role earns %.3f of 8 a game", out.mean_return);
    sk_agent *agent = NULL, *one = NULL;
    assert_int_equal(sk_agent_load(&one, shared, NULL), SK_OK);
    assert_int_equal(sk_agent_load(&agent, path, NULL), SK_OK);
    int tensors = sk_agent_num_tensors(agent);
    assert_int_equal(tensors, 2 * sk_agent_num_tensors(one));
    for (int t = 0; t < tensors; t++) {
        sk_tensor_view view, plain;
        assert_int_equal(sk_agent_tensor(agent, t, &view), SK_OK);
        assert_int_equal(sk_agent_tensor(one, t % (tensors / 2), &plain), SK_OK);
        char want[64];
        snprintf(want, sizeof want, "%s.%s", t < tensors / 2 ? "zero" : "one", plain.name);
        if (strcmp(view.name, want) != 0)
            fail_msg("tensor %d is '%s' (expected '%s')", t, view.name, want);
    }
    sk_agent_free(one);
    /* greedy rows of whole envs act by role; a row count that is not whole envs is refused */
    float obs[4] = {1, 1, 1, 1};
    int32_t actions[4];
    assert_int_equal(sk_agent_act(agent, obs, NULL, 4, true, actions, NULL), SK_OK);
    assert_true(actions[0] == 0 && actions[1] == 1 && actions[2] == 0 && actions[3] == 1);
    assert_int_not_equal(sk_agent_act(agent, obs, NULL, 3, true, actions, NULL), SK_OK);
    assert_non_null(strstr(sk_last_error(), "a multiple of 2"));
    sk_agent_free(agent);
    /* refused: a single-agent env, a recurrent core */
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "CartPole-v1");
    sk_config_set(cfg, "policy.per_role", "true");
    sk_trainer *tr = NULL;
    assert_int_not_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_non_null(strstr(sk_last_error(), "CartPole-v1 has 1 agent per env"));
    sk_config_set(cfg, "env.id", "Opposite-v0");
    sk_config_set(cfg, "policy.core", "lstm");
    assert_int_not_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_non_null(strstr(sk_last_error(), "policy.core = lstm"));
    sk_config_free(cfg);
}

/* Self-play every 2 updates into a pool of 3 (the pool's weights, ratings
 * and each env's opponent, role and stream then in checkpoints). */
static void set_selfplay(sk_config *cfg) {
    sk_config_set(cfg, "selfplay.enabled", "true");
    sk_config_set(cfg, "selfplay.pool_size", "3");
    sk_config_set(cfg, "selfplay.snapshot_every", "2");
}

/* Two runs of one seed give the same updates; a run stopped and resumed
 * (the rows' active flags in the checkpoint) continues as one that never
 * stopped, on Duel-v0, on Connect Four and on Connect Four in self-play,
 * also with the 8 envs cut into 5 slices for 2 threads (train.slices: a
 * slice holds whole envs, its agents' rows together, and its own scratch for
 * the snapshots' actions); with a policy per role (policy.per_role) in
 * self-play (each snapshot holds both roles' policies) and on Duel-v0 in 5
 * slices; and in self-play with half the games against the learner itself
 * (selfplay.pool_share = 0.5: the envs' opponents, -1 among them, carried). */
static void test_identical_and_resumed(void **state) {
    (void)state;
    static recorder once, twice, first, second;
    const char *envs[] = {"Duel-v0", "ConnectFour-v0", "ConnectFour-v0", "ConnectFour-v0",
                          "ConnectFour-v0", "Duel-v0", "ConnectFour-v0"};
    char path[128];
    snprintf(path, sizeof path, "%s/half.safetensors", g_dir);
    for (int e = 0; e < 7; e++) {
        memset(&once, 0, sizeof once);
        memset(&twice, 0, sizeof twice);
        memset(&first, 0, sizeof first);
        memset(&second, 0, sizeof second);
        sk_config *whole = duel_config(envs[e], "2048"), *half = duel_config(envs[e], "1024");
        if (e >= 2 && e <= 4) {
            set_selfplay(whole);
            set_selfplay(half);
        }
        if (e == 3 || e == 5) {
            sk_config_set(whole, "train.slices", "5");
            sk_config_set(half, "train.slices", "5");
        }
        if (e == 4 || e == 5) {
            sk_config_set(whole, "policy.per_role", "true");
            sk_config_set(half, "policy.per_role", "true");
        }
        if (e == 6) {
            set_selfplay(whole);
            set_selfplay(half);
            sk_config_set(whole, "selfplay.pool_share", "0.5");
            sk_config_set(half, "selfplay.pool_share", "0.5");
        }
        train(whole, &once, NULL, NULL, NULL);
        train(whole, &twice, NULL, NULL, NULL);
        assert_int_equal(once.count, 8);
        assert_memory_equal(once.rows, twice.rows, sizeof once.rows[0] * 8);
        train(half, &first, NULL, path, NULL);
        train(whole, &second, path, NULL, NULL);
        assert_int_equal(first.count + second.count, 8);
        for (int i = 0; i < second.count; i++)
            if (memcmp(&second.rows[i], &once.rows[first.count + i], sizeof once.rows[0]) != 0)
                fail_msg("%s: update %d differs after resuming", envs[e], first.count + i + 1);
        sk_config_free(whole);
        sk_config_free(half);
    }
}

/* skinner train's note on a budget that is not whole updates counts a
 * multi-agent env's rows: 8 envs x 2 agents x 16 steps = 256 a batch. */
static void test_train_note_counts_rows(void **state) {
    (void)state;
    char command[600], text[4096];
    snprintf(command, sizeof command,
             "SKINNER_CONFIG_DIR=%s/configs %s train ConnectFour-v0 --total-steps 1000 "
             "--env.num_envs 8 --ppo.horizon 16 --ppo.num_minibatches 2 --threads 1 "
             "--run-dir %s/note 2>&1",
             SKINNER_SOURCE_DIR, SKINNER_BINARY, g_dir);
    FILE *p = popen(command, "r");
    assert_non_null(p);
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = 0;
    assert_int_equal(pclose(p), 0);
    const char *want = "--total-steps 1000 is not a multiple of the batch (env.num_envs 8 x 2 "
                       "agents x ppo.horizon 16 = 256): training runs 3 updates, 768 steps";
    if (!strstr(text, want)) fail_msg("expected '%s' in:\n%s", want, text);
}

/* docs/multiagent.md's check, eval and per-role commands for Connect Four, as printed
 * there, in the test's folder (its preset's train command is 60M steps:
 * bench/connect4_vs_alphabeta.sh). */
static void test_docs_commands(void **state) {
    (void)state;
    static const struct { const char *command, *want; } docs[] = {
        {"skinner check ConnectFour-v0", "ConnectFour-v0: 16 passed, 0 failed, 0 skipped"},
        {"skinner eval ConnectFour-v0 --policy heuristic", "ConnectFour-v0: 100 episodes"},
        {"skinner check ConnectFour-v1", "ConnectFour-v1: 16 passed, 0 failed, 0 skipped"},
        {"skinner train ConnectFour-v1 --policy.per_role true --total-steps 65536 --run-dir "
         "runs/c4-roles",
         "run folder: runs/c4-roles"},
        {"skinner eval ConnectFour-v1 --checkpoint runs/c4-roles", "ConnectFour-v1: 100 episodes"},
    };
    for (size_t k = 0; k < sizeof docs / sizeof docs[0]; k++) {
        char command[600], text[8192];
        snprintf(command, sizeof command, "cd %s && SKINNER_CONFIG_DIR=%s/configs %s%s 2>&1",
                 g_dir, SKINNER_SOURCE_DIR, SKINNER_BINARY, docs[k].command + strlen("skinner"));
        FILE *p = popen(command, "r");
        assert_non_null(p);
        size_t n = fread(text, 1, sizeof text - 1, p);
        text[n] = 0;
        assert_int_equal(pclose(p), 0);
        if (!strstr(text, docs[k].want))
            fail_msg("%s: no '%s' in:\n%s", docs[k].command, docs[k].want, text);
    }
}

/* The explained variance a multi-agent run reports is over its samples (the
 * active rows) only: recomputed here from the last rollout's values, returns
 * and active flags. */
static void test_explained_variance_over_samples(void **state) {
    (void)state;
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    sk_config *cfg = duel_config("ConnectFour-v0", "1024");
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_trainer_set_callback(tr, record, &rec);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    const sk_rollout *ro = &tr->rollout;
    double sum_t = 0, sum_r = 0, count = 0, var_t = 0, var_r = 0;
    size_t n = (size_t)ro->horizon * (size_t)ro->num_rows;
    for (size_t k = 0; k < n; k++)
        if (ro->active[k]) {
            sum_t += ro->returns[k];
            sum_r += ro->returns[k] - ro->values[k];
            count++;
        }
    for (size_t k = 0; k < n; k++)
        if (ro->active[k]) {
            double dt = ro->returns[k] - sum_t / count;
            double dr = ro->returns[k] - ro->values[k] - sum_r / count;
            var_t += dt * dt;
            var_r += dr * dr;
        }
    double want = 1.0 - var_r / var_t, got = rec.rows[rec.count - 1].explained_variance;
    if (!(fabs(got - want) < 1e-9))
        fail_msg("explained variance %.12g, over the samples %.12g", got, want);
    /* Connect Four's mover of the rollout's last step waits at its end: its move is
     * deferred (sk_gae_pending), no sample of that rollout; the last rollout resolved the
     * moves deferred by the one before (the -1 of a loss among them) */
    int waiting = 0, resolved = 0;
    for (int i = 0; i < ro->num_rows; i++) {
        waiting += ro->pending.waiting[i];
        resolved += ro->pending.resolved[i];
        if (ro->pending.waiting[i]) assert_int_equal(ro->active[n + (size_t)i], 0);
    }
    if (!(waiting > 0 && waiting <= ro->num_rows / 2 && resolved > 0))
        fail_msg("%d rows wait with a deferred move, %d resolved (expected 1 to %d, and some)",
                 waiting, resolved, ro->num_rows / 2);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

/* An update without samples (no learner row acted: one env in self-play, a
 * step a rollout, the snapshot to move) takes no step and is no anomaly
 * (h27): before, its losses were 0 / 0, the governor read the NaN KL as
 * "approx KL above governor.max_kl", restored the weights every other
 * update, and the run ended "diverged" at update 8. */
static void test_update_without_samples(void **state) {
    (void)state;
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    sk_config *cfg = duel_config("ConnectFour-v0", "40");
    set_selfplay(cfg);
    sk_config_set(cfg, "env.num_envs", "1");
    sk_config_set(cfg, "ppo.horizon", "1");
    sk_config_set(cfg, "ppo.num_minibatches", "1");
    train(cfg, &rec, NULL, NULL, NULL);
    sk_config_free(cfg);
    assert_int_equal(rec.count, 20);
    int empty = 0;
    for (int i = 0; i < rec.count; i++) {
        assert_int_equal(rec.rows[i].anomalies, 0);
        /* the learner moves first in the first game: updates 1, 3, ... have its sample */
        if (isnan(rec.rows[i].approx_kl)) empty++;
        else assert_true(rec.rows[i].approx_kl >= 0.0 && isfinite(rec.rows[i].policy_loss));
    }
    assert_true(empty > 0 && empty < rec.count);
}

/* ------------------------------------------------------------ Elo and the pool */

/* Hand values: equal ratings expect 0.5; 1000 against 1200 expects
 * 1 / (1 + 10^0.5) = 0.2402530734; winning moves K (1 - E) = 24.3119 at K = 32. */
static void test_elo_by_hand(void **state) {
    (void)state;
    assert_true(sk_elo_expected(1000, 1000) == 0.5);
    assert_true(fabs(sk_elo_expected(1000, 1200) - 0.2402530734) < 1e-9);
    assert_true(fabs(sk_elo_expected(1200, 1000) - 0.7597469266) < 1e-9);
    double a = 1000, b = 1200;
    sk_elo_update(&a, &b, 1.0, 32);
    assert_true(fabs(a - 1024.3119017) < 1e-6 && fabs(b - 1175.6880983) < 1e-6);
    a = 1000, b = 1000;
    sk_elo_update(&a, &b, 0.5, 32); /* a draw between equals changes nothing */
    assert_true(a == 1000 && b == 1000);
}

/* By rating, member j is met in proportion to 10^(r_j / 400): ratings 1000,
 * 1400, 1000 give 1/12, 10/12, 1/12; uniformly, a third each (120,000 draws,
 * within 1%). */
static void test_pool_sampling(void **state) {
    (void)state;
    const double ratings[3] = {1000, 1400, 1000};
    const double want[2][3] = {{1.0 / 12, 10.0 / 12, 1.0 / 12}, {1.0 / 3, 1.0 / 3, 1.0 / 3}};
    for (int mode = 0; mode < 2; mode++) {
        int counts[3] = {0};
        uint64_t rng = 99;
        enum { DRAWS = 120000 };
        for (int k = 0; k < DRAWS; k++) counts[sk_selfplay_pick(ratings, 3, mode == 0, &rng)]++;
        for (int j = 0; j < 3; j++)
            if (fabs((double)counts[j] / DRAWS - want[mode][j]) > 0.01)
                fail_msg("%s: member %d drawn %d times of %d (expected %.4f)",
                         mode ? "uniform" : "by rating", j, counts[j], DRAWS, want[mode][j]);
    }
}

/* A self-play run folder's elo.csv: one row per update (the games rated so
 * far, the learner's rating, the pool's), its last row in summary.json and
 * on `skinner monitor`'s elo line. */
static void test_elo_in_run_folder(void **state) {
    (void)state;
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    char dir[128], command[400], text[8192];
    snprintf(dir, sizeof dir, "%s/selfplay", g_dir);
    sk_config *cfg = duel_config("ConnectFour-v0", "2048");
    set_selfplay(cfg);
    train(cfg, &rec, NULL, NULL, dir);
    sk_config_free(cfg);
    snprintf(command, sizeof command, "tail -n 1 %s/elo.csv", dir);
    FILE *p = popen(command, "r");
    assert_non_null(p);
    long long update, games;
    double learner, pool[3];
    int fields = fscanf(p, "%lld,%lld,%lf,%lf,%lf,%lf", &update, &games, &learner, &pool[0],
                        &pool[1], &pool[2]);
    pclose(p);
    assert_int_equal(fields, 6);
    assert_int_equal(update, 8);
    assert_true(games > 0);
    snprintf(command, sizeof command, "%s monitor %s --once", SKINNER_BINARY, dir);
    p = popen(command, "r");
    assert_non_null(p);
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = 0;
    assert_int_equal(pclose(p), 0);
    char want[128];
    snprintf(want, sizeof want, "elo           learner %.0f after %lld games; pool %.0f %.0f %.0f",
             learner, games, pool[0], pool[1], pool[2]);
    if (!strstr(text, want)) fail_msg("skinner monitor lacks '%s':\n%s", want, text);
}

/* ------------------------------------------------------------ self-play's state (h27) */

enum { SET_MEMBERS, SET_NEXT, SET_OPPONENT, SET_PENDING_ACTION };

/* A 4-update self-play run saved to path with one self-play value set to
 * `value` before the save (what a corrupt or hand-edited file holds). */
static void save_with(const char *path, int which, int64_t value) {
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    sk_config *cfg = duel_config("ConnectFour-v0", "1024");
    set_selfplay(cfg);
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_trainer_set_callback(tr, record, &rec);
    assert_int_equal(sk_trainer_run(tr), SK_OK);
    assert_int_equal(tr->sp.counters[SK_SELFPLAY_MEMBERS], 3); /* the run's own: 1 + 2 */
    if (which == SET_MEMBERS) tr->sp.counters[SK_SELFPLAY_MEMBERS] = value;
    if (which == SET_NEXT) tr->sp.counters[SK_SELFPLAY_NEXT] = value;
    if (which == SET_OPPONENT) tr->sp.opponent[5] = (int32_t)value;
    if (which == SET_PENDING_ACTION) { /* the first row with a deferred move */
        int i = 0;
        while (!tr->rollout.pending.waiting[i]) i++;
        tr->rollout.pending_actions[i] = (int32_t)value;
    }
    assert_int_equal(sk_trainer_save(tr, path), SK_OK);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

static void expect_refused(const char *path, const char *needle1, const char *needle2) {
    sk_config *cfg = duel_config("ConnectFour-v0", "2048");
    set_selfplay(cfg);
    expect_resume_refused(cfg, path, needle1, needle2, SK_ERR_CORRUPT);
}

/* The pool holds selfplay.pool_size = 3 snapshots: a count of members past
 * it (the opponents' draw read ratings[3..], the rollout the pool's weights
 * past its end), a next slot past it (the snapshot's copy wrote past the
 * pool), or an env's opponent not among the members (its games' Elo updates
 * wrote ratings[5]) are refused, each named; before, all three resumed (each
 * value was only checked against 0..10^18 and 0..63). */
static void test_selfplay_state_refused(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/bad.safetensors", g_dir);
    save_with(path, SET_MEMBERS, 4);
    expect_refused(path, "selfplay.counters[0] (pool members) = 4", "[1, 3]");
    save_with(path, SET_MEMBERS, 0);
    expect_refused(path, "selfplay.counters[0] (pool members) = 0", "[1, 3]");
    save_with(path, SET_NEXT, 3);
    expect_refused(path, "selfplay.counters[1] (next slot) = 3", "[0, 2]");
    save_with(path, SET_OPPONENT, 5);
    expect_refused(path, "selfplay.opponent[5] = 5", "[0, 2]");
    /* -1 (the learner plays itself) only where selfplay.pool_share < 1 */
    save_with(path, SET_OPPONENT, -1);
    expect_refused(path, "selfplay.opponent[5] = -1", "[0, 2]");
    /* a deferred move's column past the board's 7: the learner would read past its logits */
    save_with(path, SET_PENDING_ACTION, 7);
    expect_refused(path, "state.pending_actions of row", "head 0 = 7 is outside [0, 6]");
    /* the run's own values resume */
    save_with(path, -1, 0);
    sk_config *cfg = duel_config("ConnectFour-v0", "2048");
    set_selfplay(cfg);
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_resume(tr, path), SK_OK);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

/* A snapshot that replaces the pool member a game under way is played against leaves that
 * game unrated: it goes on against the new member, and its result is neither's. With a
 * pool of 1 renewed every update of 4 steps, every Connect Four game (7 plies at least)
 * spans a snapshot, so no game is rated and every rating stays where it began; before, each
 * was credited to whichever member held the slot when it ended. A pool of 3 renewed every
 * 2 updates of 16 steps still rates games. */
static void test_replaced_member_unrated(void **state) {
    (void)state;
    for (int c = 0; c < 2; c++) {
        sk_config *cfg = duel_config("ConnectFour-v0", c == 0 ? "1024" : "2048");
        set_selfplay(cfg);
        if (c == 0) {
            sk_config_set(cfg, "ppo.horizon", "4");
            sk_config_set(cfg, "selfplay.pool_size", "1");
            sk_config_set(cfg, "selfplay.snapshot_every", "1");
        }
        sk_trainer *tr = NULL;
        assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
        assert_int_equal(sk_trainer_run(tr), SK_OK);
        int64_t games = tr->sp.counters[SK_SELFPLAY_GAMES];
        double learner = tr->sp.ratings[tr->sp.pool_size];
        if (c == 0 && (games != 0 || learner != 1000.0))
            fail_msg("%lld games rated, the learner at %.3f (expected none, 1000)",
                     (long long)games, learner);
        if (c == 1 && games == 0) fail_msg("no game rated with a pool of 3");
        sk_trainer_destroy(tr);
        sk_config_free(cfg);
    }
}

/* selfplay.pool_share: at 0 every game is the learner against itself, so the run is the
 * one without self-play, update for update, and rates no game; at 0.5 it rates fewer games
 * than at 1 (the default, every game against the pool), and some. */
static void test_pool_share(void **state) {
    (void)state;
    static recorder plain, none;
    memset(&plain, 0, sizeof plain);
    memset(&none, 0, sizeof none);
    sk_config *cfg = duel_config("ConnectFour-v0", "2048");
    train(cfg, &plain, NULL, NULL, NULL);
    set_selfplay(cfg);
    const char *shares[] = {"0", "0.5", "1"};
    int64_t games[3];
    for (int k = 0; k < 3; k++) {
        sk_config_set(cfg, "selfplay.pool_share", shares[k]);
        sk_trainer *tr = NULL;
        assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
        if (k == 0) sk_trainer_set_callback(tr, record, &none);
        assert_int_equal(sk_trainer_run(tr), SK_OK);
        games[k] = tr->sp.counters[SK_SELFPLAY_GAMES];
        if (k == 0) assert_true(tr->sp.ratings[tr->sp.pool_size] == 1000.0);
        sk_trainer_destroy(tr);
    }
    assert_int_equal(plain.count, 8);
    assert_int_equal(none.count, 8);
    for (int i = 0; i < 8; i++)
        if (memcmp(&plain.rows[i], &none.rows[i], sizeof plain.rows[0]) != 0)
            fail_msg("update %d: selfplay.pool_share = 0 differs from no self-play", i + 1);
    print_message("games rated at shares 0, 0.5, 1: %lld, %lld, %lld\n", (long long)games[0],
                  (long long)games[1], (long long)games[2]);
    assert_int_equal(games[0], 0);
    if (games[1] <= 0 || games[1] >= games[2])
        fail_msg("share 0.5 rated %lld games, share 1 %lld", (long long)games[1],
                 (long long)games[2]);
    sk_config_free(cfg);
}

/* ------------------------------------------------------------ elo.csv */

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot read %s", path);
    static char text[2][16384];
    static int which;
    char *out = text[which ^= 1];
    size_t n = fread(out, 1, sizeof text[0] - 1, f);
    out[n] = 0;
    fclose(f);
    return out;
}

/* elo.csv and roles.csv rows by update, as metrics.csv's: a fresh run in a folder that
 * held another run's rows starts the files anew (before, elo.csv's rows followed the old
 * ones: updates 1..4 then 1..8), and a run resumed from update 4 in a folder whose rows
 * went on to update 8 keeps rows 1..4 and writes 5..8 again (before: 1..8 then 5..8).
 * Either way the files are the uninterrupted run's, byte for byte (the ratings resume
 * exactly). */
static void test_elo_csv_by_update(void **state) {
    (void)state;
    static recorder rec;
    char dir[128], half_dir[128], checkpoint[200], once[2][16384];
    static const char *const files[2] = {"elo.csv", "roles.csv"};
    snprintf(dir, sizeof dir, "%s/elo", g_dir);
    snprintf(half_dir, sizeof half_dir, "%s/elo_half", g_dir);
    snprintf(checkpoint, sizeof checkpoint, "%s/half.safetensors", g_dir);
    sk_config *whole = duel_config("ConnectFour-v0", "2048");
    sk_config *half = duel_config("ConnectFour-v0", "1024");
    set_selfplay(whole);
    set_selfplay(half);
    memset(&rec, 0, sizeof rec);
    train_recorded(whole, &rec, NULL, NULL, half_dir); /* the uninterrupted run's files */
    char tmp[200];
    for (int f = 0; f < 2; f++) {
        snprintf(tmp, sizeof tmp, "%s/%s", half_dir, files[f]);
        snprintf(once[f], sizeof once[f], "%s", slurp(tmp));
        int lines = 0;
        for (const char *c = once[f]; *c; c++) lines += *c == '\n';
        assert_int_equal(lines, 1 + 8); /* the header, then updates 1..8 */
    }
    /* a 4-update run in dir, then a fresh 8-update run in the same dir */
    memset(&rec, 0, sizeof rec);
    train_recorded(half, &rec, NULL, checkpoint, dir);
    memset(&rec, 0, sizeof rec);
    train_recorded(whole, &rec, NULL, NULL, dir);
    for (int f = 0; f < 2; f++) {
        snprintf(tmp, sizeof tmp, "%s/%s", dir, files[f]);
        const char *got = slurp(tmp);
        if (strcmp(got, once[f]) != 0)
            fail_msg("a fresh run's %s:\n%s\nthe run's own:\n%s", files[f], got, once[f]);
    }
    /* dir now holds updates 1..8: resume from update 4 there */
    memset(&rec, 0, sizeof rec);
    train_recorded(whole, &rec, checkpoint, NULL, dir);
    assert_int_equal(rec.count, 4);
    for (int f = 0; f < 2; f++) {
        snprintf(tmp, sizeof tmp, "%s/%s", dir, files[f]);
        const char *got = slurp(tmp);
        if (strcmp(got, once[f]) != 0)
            fail_msg("a resumed run's %s:\n%s\nthe run's own:\n%s", files[f], got, once[f]);
    }
    sk_config_free(whole);
    sk_config_free(half);
}

/* An elo.csv that cannot be written ends the run with SK_ERR_IO naming the file, as a
 * metrics.csv that cannot be does (before, its rows were dropped without a word): here the
 * path is a folder, so opening it fails. */
static void test_elo_csv_write_failure_reported(void **state) {
    (void)state;
    char dir[128], elo[160];
    snprintf(dir, sizeof dir, "%s/elo_unwritable", g_dir);
    snprintf(elo, sizeof elo, "%s/elo.csv", dir);
    mkdir(dir, 0755);
    mkdir(elo, 0755);
    sk_config *cfg = duel_config("ConnectFour-v0", "1024");
    set_selfplay(cfg);
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_set_run_dir(tr, dir), SK_OK);
    sk_status status = sk_trainer_run(tr);
    const char *message = sk_trainer_last_error(tr);
    print_message("refused: %s\n", message);
    assert_int_equal(status, SK_ERR_IO);
    if (!strstr(message, "cannot write") || !strstr(message, elo))
        fail_msg("the error does not name %s: %s", elo, message);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
    rmdir(elo);
}

/* ------------------------------------------------------------ Connect Four */

/* Four in a row by looking at every cell and direction: the rule, written
 * apart from the bitboards. board[r][c]: 0 empty, 1 or 2. */
static int naive_winner(int board[C4_ROWS][C4_COLS]) {
    static const int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    for (int r = 0; r < C4_ROWS; r++)
        for (int c = 0; c < C4_COLS; c++)
            for (int d = 0; d < 4 && board[r][c]; d++) {
                int k = 1;
                while (k < 4) {
                    int rr = r + k * dirs[d][0], cc = c + k * dirs[d][1];
                    if (rr < 0 || rr >= C4_ROWS || cc < 0 || cc >= C4_COLS ||
                        board[rr][cc] != board[r][c])
                        break;
                    k++;
                }
                if (k == 4) return board[r][c];
            }
    return 0;
}

static uint64_t cells(const int (*rc)[2], int count) {
    uint64_t stones = 0;
    for (int k = 0; k < count; k++) stones |= c4_bit(rc[k][0], rc[k][1]);
    return stones;
}

/* Hand positions: a row, a column, both diagonals win; three, a broken four
 * and stones that would meet only across a column's edge do not. */
static void test_c4_fours(void **state) {
    (void)state;
    const int row[4][2] = {{0, 2}, {0, 3}, {0, 4}, {0, 5}};
    const int col[4][2] = {{2, 6}, {3, 6}, {4, 6}, {5, 6}};
    const int up[4][2] = {{0, 0}, {1, 1}, {2, 2}, {3, 3}};
    const int down[4][2] = {{5, 0}, {4, 1}, {3, 2}, {2, 3}};
    const int three[3][2] = {{1, 1}, {1, 2}, {1, 3}};
    const int broken[4][2] = {{0, 0}, {0, 1}, {0, 3}, {0, 4}};
    const int wrap[4][2] = {{3, 0}, {4, 0}, {5, 0}, {0, 1}}; /* bits 3..6 across the sentinel */
    assert_true(c4_has_four(cells(row, 4)));
    assert_true(c4_has_four(cells(col, 4)));
    assert_true(c4_has_four(cells(up, 4)));
    assert_true(c4_has_four(cells(down, 4)));
    assert_false(c4_has_four(cells(three, 3)));
    assert_false(c4_has_four(cells(broken, 4)));
    assert_false(c4_has_four(cells(wrap, 4)));
}

/* One Connect Four env whose games start on the empty board. */
static sk_vec *c4_vec_with(const char *id, const char *draw_reward);
static sk_vec *c4_vec(void) { return c4_vec_with("ConnectFour-v0", NULL); }

/* A board that is no position of the game (one stone floating over an empty cell, as a
 * corrupt checkpoint may hold) is refused naming the env it is in: v1's message said
 * ConnectFour-v0. */
static void test_c4_corrupt_board_names_its_env(void **state) {
    (void)state;
    static const char *const ids[2] = {"ConnectFour-v0", "ConnectFour-v1"};
    for (int k = 0; k < 2; k++) {
        sk_config *cfg = sk_config_new();
        sk_vec *vec;
        assert_int_equal(sk_vec_create(&vec, sk_env_find(ids[k]), 1, 1, cfg), SK_OK);
        sk_vec_reset(vec, 5);
        sk_env_array arrays[SK_MAX_ENV_ARRAYS];
        int count = sk_vec_state_arrays(vec, arrays);
        for (int a = 0; a < count; a++) {
            if (strcmp(arrays[a].name, "all") == 0) *(uint64_t *)arrays[a].data = c4_bit(1, 3);
            if (strcmp(arrays[a].name, "first") == 0) *(uint64_t *)arrays[a].data = c4_bit(1, 3);
            if (strcmp(arrays[a].name, "ply") == 0) *(int32_t *)arrays[a].data = 1;
            if (strcmp(arrays[a].name, "to_move") == 0) *(int32_t *)arrays[a].data = 1;
            if (strcmp(arrays[a].name, "opening") == 0) *(int32_t *)arrays[a].data = 0;
        }
        assert_int_equal(sk_vec_check_state(vec, "a test's board"), SK_ERR_CORRUPT);
        char want[64];
        snprintf(want, sizeof want, "%s: env 0's board", ids[k]);
        print_message("refused: %s\n", sk_last_error());
        if (!strstr(sk_last_error(), want)) fail_msg("'%s' lacks '%s'", sk_last_error(), want);
        sk_vec_destroy(vec);
        sk_config_free(cfg);
    }
}

/* Random games through the env: each move's outcome (win, draw, going on)
 * against naive_winner on a board kept by the test, the active flags
 * alternating, full columns masked; every game played to its end. */
static void test_c4_env_vs_naive_rules(void **state) {
    (void)state;
    sk_vec *vec = c4_vec();
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    sk_vec_reset(vec, 3);
    uint64_t rng = 11;
    int wins = 0, draws = 0, full_columns = 0;
    for (int game = 0; game < 400; game++) {
        int board[C4_ROWS][C4_COLS] = {{0}}, height[C4_COLS] = {0};
        for (int ply = 0;; ply++) {
            int mover = ply % 2;
            assert_int_equal(b->active[mover], 1);
            assert_int_equal(b->active[1 - mover], 0);
            assert_true(b->obs[mover * C4_OBS + 2 * C4_CELLS] == 1.0f);
            int legal[C4_COLS], count = 0;
            for (int c = 0; c < C4_COLS; c++) {
                assert_int_equal(b->masks[mover * C4_COLS + c], height[c] < C4_ROWS);
                assert_int_equal(b->masks[(1 - mover) * C4_COLS + c], height[c] < C4_ROWS);
                if (height[c] < C4_ROWS) legal[count++] = c;
                else full_columns++;
            }
            int col = legal[sk_rng_below(&rng, (uint32_t)count)];
            board[height[col]++][col] = mover + 1;
            b->actions[mover] = col;
            b->actions[1 - mover] = 0; /* ignored: not its turn */
            sk_vec_step(vec);
            int winner = naive_winner(board);
            bool full = ply + 1 == C4_CELLS;
            if (!winner && !full) {
                assert_int_equal(b->terminated[0] | b->terminated[1], 0);
                assert_true(b->rewards[0] == 0.0f && b->rewards[1] == 0.0f);
                continue;
            }
            assert_int_equal(b->terminated[0] & b->terminated[1], 1);
            float want = winner ? 1.0f : 0.0f; /* the mover's: it made the four */
            assert_true(b->rewards[mover] == want && b->rewards[1 - mover] == -want);
            assert_true(b->episode_log[mover * C4_LOG_FIELDS + 2] == (winner ? 1.0f : 0.0f));
            assert_true(b->episode_log[mover * C4_LOG_FIELDS + 3] == (winner ? 0.0f : 1.0f));
            assert_true(b->episode_log[mover * C4_LOG_FIELDS + 1] == (float)(ply / 2 + 1));
            for (int k = 0; k < 2 * C4_CELLS; k++) assert_true(b->obs[k] == 0.0f); /* reset */
            wins += winner != 0;
            draws += winner == 0;
            break;
        }
    }
    assert_true(wins > 300);
    assert_true(full_columns > 0);
    sk_vec_destroy(vec);
    (void)draws;
}

/* One env of id (v1 unmirrored) from the empty board, with env.draw_reward when given. */
static sk_vec *c4_vec_with(const char *id, const char *draw_reward) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.random_opening", "0");
    if (strcmp(id, "ConnectFour-v1") == 0) sk_config_set(cfg, "env.mirror", "false");
    if (draw_reward) sk_config_set(cfg, "env.draw_reward", draw_reward);
    sk_vec *vec;
    assert_int_equal(sk_vec_create(&vec, sk_env_find(id), 1, 1, cfg), SK_OK);
    sk_config_free(cfg);
    return vec;
}

/* A full board without four in a row (a sequence checked with a separate
 * script's naive rule) is a draw: env.draw_reward to both (default 0), both rows
 * terminated, draw = 1, and the log's return the game's result, 0, whatever the
 * reward (the ratings and eval's tallies read it), on v0 and v1 alike. */
static void test_c4_draw(void **state) {
    (void)state;
    static const int moves[C4_CELLS] = {6, 4, 6, 2, 3, 0, 0, 2, 1, 6, 6, 2, 4, 6, 4, 5, 3, 6, 1, 5, 1,
                                        3, 0, 5, 2, 1, 2, 0, 2, 3, 5, 4, 1, 1, 4, 3, 5, 4, 3, 5, 0, 0};
    static const struct { const char *id, *draw_reward; float want; } cases[] = {
        {"ConnectFour-v0", NULL, 0.0f},
        {"ConnectFour-v0", "-0.5", -0.5f},
        {"ConnectFour-v1", "-0.25", -0.25f},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sk_vec *vec = c4_vec_with(cases[c].id, cases[c].draw_reward);
        const sk_vec_buffers *b = sk_vec_buffers_of(vec);
        sk_vec_reset(vec, 1);
        int board[C4_ROWS][C4_COLS] = {{0}}, height[C4_COLS] = {0};
        for (int ply = 0; ply < C4_CELLS; ply++) {
            int col = moves[ply];
            board[height[col]++][col] = ply % 2 + 1;
            assert_int_equal(naive_winner(board), 0);
            b->actions[ply % 2] = col;
            sk_vec_step(vec);
            bool last = ply == C4_CELLS - 1;
            assert_int_equal(b->terminated[0], last);
            assert_int_equal(b->terminated[1], last);
            if (!last) assert_true(b->rewards[0] == 0.0f && b->rewards[1] == 0.0f);
        }
        assert_true(b->rewards[0] == cases[c].want && b->rewards[1] == cases[c].want);
        for (int p = 0; p < 2; p++) {
            assert_true(b->episode_log[p * C4_LOG_FIELDS + 0] == 0.0f); /* the result */
            assert_true(b->episode_log[p * C4_LOG_FIELDS + 1] == 21.0f); /* 21 moves each */
            assert_true(b->episode_log[p * C4_LOG_FIELDS + 2] == 0.0f);
            assert_true(b->episode_log[p * C4_LOG_FIELDS + 3] == 1.0f);
        }
        sk_vec_destroy(vec);
    }
}

/* env.draw_reward shapes draws only: a win is still +1 and -1 with it, and a value
 * outside [-1, 0] is refused naming the key. */
static void test_c4_draw_reward_leaves_wins(void **state) {
    (void)state;
    sk_vec *vec = c4_vec_with("ConnectFour-v0", "-1");
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    sk_vec_reset(vec, 1);
    static const int moves[7] = {0, 1, 0, 1, 0, 1, 0}; /* the first player's four in column 0 */
    for (int ply = 0; ply < 7; ply++) {
        b->actions[ply % 2] = moves[ply];
        sk_vec_step(vec);
    }
    assert_true(b->terminated[0] && b->terminated[1]);
    assert_true(b->rewards[0] == 1.0f && b->rewards[1] == -1.0f);
    assert_true(b->episode_log[0] == 1.0f && b->episode_log[C4_LOG_FIELDS] == -1.0f);
    sk_vec_destroy(vec);
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.draw_reward", "0.5");
    assert_int_not_equal(sk_vec_create(&vec, sk_env_find("ConnectFour-v1"), 1, 1, cfg), SK_OK);
    assert_non_null(strstr(sk_last_error(), "env.draw_reward"));
    sk_config_free(cfg);
}

/* A move into a full column (never allowed by the mask) loses the game. */
static void test_c4_illegal_move_loses(void **state) {
    (void)state;
    sk_vec *vec = c4_vec();
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    sk_vec_reset(vec, 1);
    const int moves[6] = {3, 3, 3, 3, 3, 3}; /* alternating stones: no four */
    for (int k = 0; k < 6; k++) {
        b->actions[k % 2] = moves[k];
        sk_vec_step(vec);
        assert_int_equal(b->terminated[0], 0);
    }
    assert_int_equal(b->masks[3], 0);
    assert_int_equal(b->masks[C4_COLS + 3], 0);
    b->actions[0] = 3; /* the first player drops into the full column */
    sk_vec_step(vec);
    assert_int_equal(b->terminated[0] & b->terminated[1], 1);
    assert_true(b->rewards[0] == -1.0f && b->rewards[1] == 1.0f);
    sk_vec_destroy(vec);
}

/* Plays ConnectFour-v0 and v1 (env.mirror as given) side by side with the
 * same seed and random legal moves: v1's image of every row must be v0's planes
 * rearranged channels last (own stones, the opponent's, the to-move flag in
 * every cell), left-right mirrored in the games v1's state marks mirrored,
 * in the observations and the final ones; masks mirrored alike, the same
 * rewards and ends. Returns how many games were mirrored, of `*games`. */
static int c4_image_vs_v0(bool mirror, int *games) {
    sk_config *cfg0 = sk_config_new(), *cfg1 = sk_config_new();
    if (mirror) { /* the flag's draw shifts v1's stream: no random openings then */
        sk_config_set(cfg0, "env.random_opening", "0");
        sk_config_set(cfg1, "env.random_opening", "0");
    }
    sk_config_set(cfg1, "env.mirror", mirror ? "true" : "false");
    sk_vec *vecs[2];
    assert_int_equal(sk_vec_create(&vecs[0], sk_env_find("ConnectFour-v0"), 3, 1, cfg0), SK_OK);
    assert_int_equal(sk_vec_create(&vecs[1], sk_env_find("ConnectFour-v1"), 3, 1, cfg1), SK_OK);
    sk_config_free(cfg0);
    sk_config_free(cfg1);
    sk_env_array arrays[16];
    int count = sk_vec_state_arrays(vecs[1], arrays);
    const int32_t *flags = NULL;
    for (int a = 0; a < count; a++)
        if (strcmp(arrays[a].name, "mirror") == 0) flags = arrays[a].data;
    assert_non_null(flags);
    const sk_vec_buffers *f = sk_vec_buffers_of(vecs[0]), *u = sk_vec_buffers_of(vecs[1]);
    assert_non_null(u->obs_u8);
    sk_vec_reset(vecs[0], 5);
    sk_vec_reset(vecs[1], 5);
    uint64_t rng = 9;
    int mirrored = 0, shown[3];
    *games = 0;
    for (int e = 0; e < 3; e++) shown[e] = flags[e];
    for (int step = 0; step < 600; step++) {
        for (int row = 0; row < 6; row++) {
            int m = shown[row / 2]; /* the flag of the game this row's obs shows */
            const float *flat = (f->terminated[row] ? f->final_obs : f->obs) + row * C4_OBS;
            const uint8_t *image = (u->terminated[row] ? u->final_obs_u8 : u->obs_u8) + row * C4_IMAGE;
            for (int k = 0; k < C4_CELLS; k++) {
                int r = k / C4_COLS, c = k % C4_COLS, seen = r * C4_COLS + (m ? C4_COLS - 1 - c : c);
                assert_true(image[3 * seen] == flat[k]);
                assert_true(image[3 * seen + 1] == flat[C4_CELLS + k]);
                assert_true(image[3 * seen + 2] == flat[2 * C4_CELLS]);
            }
            for (int c = 0; c < C4_COLS; c++)
                assert_int_equal(u->masks[row * C4_COLS + (m ? C4_COLS - 1 - c : c)],
                                 f->masks[row * C4_COLS + c]);
            assert_int_equal(u->active[row], f->active[row]);
            assert_true(u->rewards[row] == f->rewards[row]);
            assert_int_equal(u->terminated[row], f->terminated[row]);
        }
        for (int e = 0; e < 3; e++) {
            if (f->terminated[2 * e]) {
                mirrored += shown[e];
                ++*games;
            }
            shown[e] = flags[e]; /* the next obs is the state's game's */
        }
        for (int row = 0; row < 6; row++) {
            int legal[C4_COLS], n = 0;
            for (int c = 0; c < C4_COLS; c++)
                if (f->masks[row * C4_COLS + c]) legal[n++] = c;
            int col = legal[sk_rng_below(&rng, (uint32_t)n)];
            f->actions[row] = col;
            u->actions[row] = flags[row / 2] ? C4_COLS - 1 - col : col;
        }
        sk_vec_step(vecs[0]);
        sk_vec_step(vecs[1]);
    }
    sk_vec_destroy(vecs[0]);
    sk_vec_destroy(vecs[1]);
    return mirrored;
}

/* ConnectFour-v1 is v0's game with the board as an image, and with
 * env.mirror each game is seen mirrored with probability 1/2. */
static void test_c4_image_is_v0_rearranged(void **state) {
    (void)state;
    int games;
    assert_int_equal(c4_image_vs_v0(false, &games), 0);
    assert_true(games > 50);
    int mirrored = c4_image_vs_v0(true, &games);
    assert_true(games > 50);
    assert_true(mirrored > games / 4 && mirrored < 3 * games / 4);
}

/* skinner eval counts each agent's episodes: 100 episodes of random play
 * are 50 games seen from both sides, so the mean return is 0 and the win
 * rate is half of what is not drawn, exactly; moves are counted where the
 * agent acted (one a ply). */
static void test_eval_counts_both_sides(void **state) {
    (void)state;
    sk_eval_result out;
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_evaluate_controller("ConnectFour-v0", cfg,
                                            SK_CONTROLLER_RANDOM, 100, 1, NULL, &out), SK_OK);
    sk_config_free(cfg);
    assert_int_equal(out.episodes, 100);
    assert_true(out.mean_return == 0.0);
    assert_true(fabs(out.log_mean[2] - (1.0 - out.log_mean[3]) / 2) < 1e-12);
    int64_t moves = 0;
    for (int a = 0; a < out.num_ops; a++) moves += out.op_counts[a];
    /* the two sides' lengths (their own moves) add up to the games' plies */
    assert_true(fabs((double)moves - out.log_mean[1] * 100) < 1e-6);
}

/* A plugin of env ABI 4 loads as a single-agent env (its table ends before
 * num_agents, whatever lies past it), its version-4 extras whole. */
static void test_abi_v4_plugin(void **state) {
    (void)state;
    assert_int_equal(sk_env_load_plugin(PLUGIN_V4), SK_OK);
    const sk_env_def *env = sk_env_find("OldAbi4-v0");
    assert_non_null(env);
    assert_int_equal(env->num_agents, 0);
    assert_null(env->agent_names);
    assert_int_equal(sk_env_agents(env), 1);
    assert_int_equal(sk_env_extras_of(env)->render_width, 1);
    assert_non_null(sk_env_extras_of(env)->render);
    sk_vec *vec;
    assert_int_equal(sk_vec_create(&vec, env, 4, 1, NULL), SK_OK);
    assert_int_equal(sk_vec_num_rows(vec), 4);
    sk_vec_destroy(vec);
}

/* A plugin of env ABI 6, built in its layout (16 action bounds): its continuous space,
 * the members after the bounds and its extras reach the loaded table; its configure and
 * evaluation are given tables in its own layout (what they write and read comes out
 * right). */
static void test_abi_v6_plugin(void **state) {
    (void)state;
    assert_int_equal(sk_env_load_plugin(PLUGIN_V6), SK_OK);
    const sk_env_def *env = sk_env_find("OldAbi6-v0");
    assert_non_null(env);
    assert_int_equal(env->action_space.kind, SK_SPACE_CONTINUOUS);
    assert_int_equal(env->action_space.dim, 3);
    const float low[3] = {-1.0f, -2.0f, -0.5f}, high[3] = {1.0f, 0.25f, 0.75f};
    for (int k = 0; k < 3; k++) {
        assert_true(env->action_space.low[k] == low[k]);
        assert_true(env->action_space.high[k] == high[k]);
    }
    for (int k = 3; k < SK_MAX_ACTION_DIM; k++)
        assert_true(env->action_space.low[k] == 0.0f && env->action_space.high[k] == 0.0f);
    assert_int_equal(env->max_episode_steps, 10);
    assert_true(env->solved_threshold == 7.5);
    assert_int_equal(env->num_log_fields, 2);
    assert_string_equal(env->log_names[1], "episode_length");
    assert_int_equal(env->obs_shape[0], 3);
    assert_int_equal(env->num_agents, 0);
    int nq = 0, nv = 0;
    sk_env_extras_of(env)->physics_sizes(NULL, &nq, &nv);
    assert_int_equal(nq, 5);
    assert_int_equal(nv, 4);

    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_set(cfg, "env.steps", "33"), SK_OK);
    const sk_env_def *configured;
    assert_int_equal(sk_env_configure(env, cfg, &configured), SK_OK);
    assert_true(sk_env_same(configured, env));
    assert_int_equal(configured->max_episode_steps, 33);
    assert_true(configured->action_space.high[2] == 2.5f);
    assert_true(configured->action_space.low[1] == -2.0f);
    assert_true(configured->solved_threshold == 7.5);
    assert_string_equal(configured->log_names[0], "episode_return");
    assert_int_equal(sk_config_set(cfg, "env.steps", "0"), SK_OK);
    const sk_env_def *refused;
    assert_int_equal(sk_env_configure(env, cfg, &refused), SK_ERR_INVALID);
    sk_config_free(cfg);

    sk_env_report report = {0};
    const sk_env_evaluation *evaluation = sk_env_extras_of(configured)->evaluation;
    assert_int_equal(evaluation->run(configured, NULL, NULL, NULL, NULL, NULL, NULL, &report),
                     SK_OK);
    assert_true(report.metrics[0].value == 33.0);
    assert_true(report.metrics[1].value == 2.5);
    assert_string_equal(report.text, "episode_return episode_length\n");

    sk_vec *vec;
    assert_int_equal(sk_vec_create(&vec, configured, 2, 1, NULL), SK_OK);
    sk_vec_destroy(vec);
}

/* ------------------------------------------------------------ alpha-beta */

/* Depth 1 takes a win on the spot; depth 2 blocks the opponent's; depth 3
 * finds the forced win of an open three (two winning ends, one block). */
static void test_alphabeta(void **state) {
    (void)state;
    uint64_t rng = 5;
    int score;
    /* the mover has three in column 2; the opponent three in row 0, cols 4..6 */
    const int mine_rc[3][2] = {{0, 2}, {1, 2}, {2, 2}};
    const int theirs_rc[3][2] = {{0, 4}, {0, 5}, {0, 6}};
    uint64_t mine = cells(mine_rc, 3), all = mine | cells(theirs_rc, 3);
    for (int depth = 1; depth <= 6; depth++) {
        assert_int_equal(c4_search_move(mine, all, depth, &rng, &score), 2);
        assert_int_equal(score, C4_SEARCH_WIN);
    }
    /* the opponent threatens column 3 (row 0, cols 4..6 + col 3); the mover has nothing */
    const int lone[1][2] = {{1, 4}};
    mine = cells(lone, 1);
    all = mine | cells(theirs_rc, 3);
    for (int depth = 2; depth <= 6; depth++)
        assert_int_equal(c4_search_move(mine, all, depth, &rng, NULL), 3);
    /* the mover has cols 2, 3 of row 0; the opponent stones far up column 6: dropping in 1
     * or 4 makes an open three, won two plies later whatever the reply */
    const int pair[2][2] = {{0, 2}, {0, 3}};
    const int far[2][2] = {{0, 6}, {1, 6}};
    mine = cells(pair, 2);
    all = mine | cells(far, 2);
    int col = c4_search_move(mine, all, 3, &rng, &score);
    assert_true(col == 1 || col == 4);
    assert_int_equal(score, C4_SEARCH_WIN - 2);
    assert_true(c4_search_move(mine, all, 1, &rng, &score) >= 0);
    assert_true(score < C4_SEARCH_WIN / 2); /* one ply does not see it */
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner_multiagent_%d", (int)getpid());
    char command[200];
    snprintf(command, sizeof command, "rm -rf %s && mkdir -p %s", g_dir, g_dir);
    if (system(command) != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_vec_rows_and_autoreset, register_duel),
        cmocka_unit_test_setup(test_check_waiting_agents, register_duel),
        cmocka_unit_test(test_gae_all_active_is_gae),
        cmocka_unit_test(test_gae_over_inactive_steps),
        cmocka_unit_test(test_gae_pending_across_rollouts),
        cmocka_unit_test_setup(test_fault_names_env_and_agent, register_duel),
        cmocka_unit_test_setup(test_active_flag_checked, register_duel),
        cmocka_unit_test_setup(test_trainer_roles, register_duel),
        cmocka_unit_test_setup(test_per_role, register_duel),
        cmocka_unit_test_setup(test_identical_and_resumed, register_duel),
        cmocka_unit_test(test_explained_variance_over_samples),
        cmocka_unit_test(test_train_note_counts_rows),
        cmocka_unit_test(test_docs_commands),
        cmocka_unit_test(test_update_without_samples),
        cmocka_unit_test(test_elo_by_hand),
        cmocka_unit_test(test_pool_sampling),
        cmocka_unit_test(test_elo_in_run_folder),
        cmocka_unit_test(test_selfplay_state_refused),
        cmocka_unit_test(test_replaced_member_unrated),
        cmocka_unit_test(test_pool_share),
        cmocka_unit_test(test_elo_csv_by_update),
        cmocka_unit_test(test_elo_csv_write_failure_reported),
        cmocka_unit_test(test_c4_corrupt_board_names_its_env),
        cmocka_unit_test(test_c4_fours),
        cmocka_unit_test(test_c4_env_vs_naive_rules),
        cmocka_unit_test(test_c4_draw),
        cmocka_unit_test(test_c4_draw_reward_leaves_wins),
        cmocka_unit_test(test_c4_illegal_move_loses),
        cmocka_unit_test(test_c4_image_is_v0_rearranged),
        cmocka_unit_test(test_eval_counts_both_sides),
        cmocka_unit_test(test_abi_v4_plugin),
        cmocka_unit_test(test_abi_v6_plugin),
        cmocka_unit_test(test_alphabeta),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    snprintf(command, sizeof command, "rm -rf %s", g_dir);
    if (system(command) != 0) return 1;
    return failed;
}
