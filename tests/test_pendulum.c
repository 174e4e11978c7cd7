/*
 * Pendulum-v1 against Gymnasium 1.4.0's recorded dynamics (../shared/reference/gymnasium),
 * plus the env contract: reset distribution, per-env streams, torque clipping, autoreset,
 * episode log and truncation at 200 steps.
 *
 * Actions. The csv's action column holds float64 samples, but Gymnasium's action space is a
 * float32 Box and the recorded env computed with the float32 value widened to double: with
 * u = clip((double)(float)action) every one of the 2000 recorded transition rewards is
 * reproduced bit for bit; with u = clip(action) only 379 are (the 377 whose torque clips to
 * +-2, and 2 by chance), and the next states miss by 1e-11 to 1e-8 relative. So
 * the test feeds (float)action, exactly what skinner's float32 actions_continuous carries.
 *
 * Tolerances. skinner keeps the state in double and performs Gymnasium's IEEE operations in
 * Gymnasium's order, so one step from a given state agrees to a few ulp: numpy's SIMD sin and
 * glibc's differ by an ulp now and then (a 1-ulp change of sin moves theta_dot by 15 dt ulp(sin)
 * ~ 1e-16), and the compiler may fuse a multiply-add. The checks allow a relative error of
 * STATE_REL_TOL = 1e-12 (absolute below 1.0) on the next state and on the double reward (read
 * back from the env's double episode_return): ~4500 ulp, far above rounding-order effects and
 * far below any modelling error (the float64-torque variant above, a wrong constant, clip or
 * order of operations all miss by 1e-11 or more). Observations are float32 casts of those
 * doubles: within OBS_MAX_ULP = 1 ulp (a double that rounds across a float boundary). The float
 * reward is the float32 cast of -cost: within REWARD_MAX_ULP = 1 ulp, for the same reason.
 */
#include "gym_harness.h"

#include "envs/pendulum.h"
#include "core/rng.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define STATE_REL_TOL 1e-12
#define OBS_MAX_ULP 1
#define REWARD_MAX_ULP 1

/*
 * Free-running replay: skinner starts from an episode's first recorded state and applies the
 * recorded torques for all 200 steps, checking the state after every step against the next
 * recorded one, and every observation and reward. One step agrees to ~1 ulp, not always to
 * the bit (numpy's SIMD sin against glibc's, and fused multiply-adds when the build allows
 * them), and those last-bit differences are carried forward and amplified by the dynamics: the
 * upright position is unstable (errors grow by up to exp(sqrt(15) dt) ~ 1.21 per step there)
 * while swinging is only mildly sensitive, and the speed clip at +-8 erases differences. Over
 * the 20 recorded episodes the drift starts at step 0-16 and reaches ~1e-10 relative by the
 * end (worst in episodes 10, 11 and 17; the maximum is printed below), with or without FMA.
 * The replay therefore allows FREE_RUN_STATE_REL = 1e-8 (relative, absolute below 1), about
 * 100x the worst measured drift. The one-step tests above pin the arithmetic; the free run is
 * there for what they cannot see (state carried between steps, the step count, the episode
 * end), and any such bug moves the trajectory by far more than 1e-8. Everything else follows
 * from that state bound by first-order propagation, with |theta| < FREE_RUN_MAX_THETA = 40 in
 * the recordings (asserted), so |d theta| <= 4e-7 and |d theta_dot| <= 8e-8:
 *   observations: |d cos|, |d sin| <= |d theta|, and d theta_dot itself: FREE_RUN_OBS_ABS = 5e-7
 *   rewards: |d cost| <= 2 pi |d theta| + 0.2 * 8 |d theta_dot| <= 2.7e-6: FREE_RUN_REWARD_ABS
 *   the return: 200 rewards: FREE_RUN_RETURN_ABS = 200 * FREE_RUN_REWARD_ABS
 * each on top of the one-step allowance (1 float ulp for float32 values).
 */
#define FREE_RUN_STATE_REL 1e-8
#define FREE_RUN_MAX_THETA 40.0
#define FREE_RUN_OBS_ABS 5e-7
#define FREE_RUN_REWARD_ABS 3e-6
#define FREE_RUN_RETURN_ABS (200 * FREE_RUN_REWARD_ABS)

/* Gymnasium's constants, restated so the test checks them rather than borrowing the env's. */
#define GYM_DT 0.05
#define GYM_MAX_SPEED 8.0
#define GYM_EPISODE_STEPS 200

#define OBS_SIZE 3

/* ------------------------------------------------------------- the env table */

static sk_pendulum_state *pendulum_of(const gym_run *run) { return run->state; }

static void set_pendulum(gym_run *run, int i, double theta, double theta_dot, int32_t elapsed,
                         double episode_return) {
    const double state[2] = {theta, theta_dot};
    gym_set_state(run, i, state, elapsed, episode_return);
}

/* Gymnasium's _get_obs: (cos theta, sin theta, theta_dot) in float32. */
static void expected_obs(const void *state, int i, float *obs) {
    const sk_pendulum_state *s = state;
    obs[0] = (float)cos(s->theta[i]);
    obs[1] = (float)sin(s->theta[i]);
    obs[2] = (float)s->theta_dot[i];
}

static const char *const g_state_names[2] = {"theta", "theta_dot"};
static const char *const g_obs_names[OBS_SIZE] = {"obs[0] cos(theta)", "obs[1] sin(theta)",
                                                   "obs[2] theta_dot"};
/* U(-b, b): the mean of 10000 has sd b/173, so b/35 is 5 sd */
static const gym_uniform g_reset[2] = {{-M_PI, M_PI, M_PI / 35.0, 1e-3 * M_PI},
                                       {-1.0, 1.0, 1.0 / 35.0, 1e-3}};

static const gym_env g_pendulum = {
    .def = &sk_env_pendulum,
    .transitions = "Pendulum-v1.transitions.csv",
    .episodes = "Pendulum-v1.episodes.csv",
    .state_size = 2,
    .state_names = g_state_names,
    .obs_names = g_obs_names,
    .max_steps = GYM_EPISODE_STEPS,
    .never_terminates = true,
    .check_double_return = true,
    .ulp_plus_abs = true,
    .obs_max_ulp = OBS_MAX_ULP,
    .reward_max_ulp = REWARD_MAX_ULP,
    .reset_distinct_coord = 0,
    .step_moves = 1u << 0 | 1u << 1,
    .step_moves_all = true,
    .reset_uniform = g_reset,
    .one_step = {.state_rel = STATE_REL_TOL},
    .free_run = {.state_rel = FREE_RUN_STATE_REL,
                 .obs_abs = FREE_RUN_OBS_ABS,
                 .reward_abs = FREE_RUN_REWARD_ABS,
                 .return_abs = FREE_RUN_RETURN_ABS},
    .coord_field = {offsetof(sk_pendulum_state, theta), offsetof(sk_pendulum_state, theta_dot)},
    .elapsed_field = offsetof(sk_pendulum_state, elapsed),
    .return_field = offsetof(sk_pendulum_state, episode_return),
    .expected_obs = expected_obs,
};

/* -------------------------------------------------------------------- tests */

static void test_definition(void **unused) {
    (void)unused;
    const sk_env_def *env = &sk_env_pendulum;
    assert_string_equal(env->id, "Pendulum-v1");
    assert_string_equal(env->alias, "pendulum");
    assert_string_equal(sk_env_extras_of(env)->preset, "pendulum");
    assert_int_equal(env->obs_size, OBS_SIZE);
    assert_int_equal(env->action_space.kind, SK_SPACE_CONTINUOUS);
    assert_int_equal(env->action_space.dim, 1);
    assert_true(env->action_space.low[0] == -2.0f && env->action_space.high[0] == 2.0f);
    assert_int_equal(env->mask_size, 0);
    assert_int_equal(env->max_episode_steps, GYM_EPISODE_STEPS);
    assert_true(env->solved_threshold == -200.0);
    assert_int_equal(env->num_log_fields, 2);
    assert_string_equal(env->log_names[0], "episode_return");
    assert_string_equal(env->log_names[1], "episode_length");
}

/* What the transitions file exercises: both clips. */
typedef struct coverage {
    int saturated_rows, clipped_rows;
} coverage;

static void count_clips(void *ctx, const gym_run *run, const csv_table *t, const gym_columns *c,
                        int row) {
    (void)run;
    coverage *seen = ctx;
    seen->clipped_rows += fabsf((float)csv_at(t, row, c->action)) > 2.0f;
    seen->saturated_rows += fabs(csv_at(t, row, c->next_state[1])) == GYM_MAX_SPEED;
}

static void test_transitions(void **unused) {
    (void)unused;
    coverage seen = {0};
    REQUIRE_SHARED(shared);
    gym_transitions(&g_pendulum, shared, count_clips, &seen);
    print_message("transitions: %d with |action| > 2, %d with the speed clipped\n",
                  seen.clipped_rows, seen.saturated_rows);
    assert_true(seen.saturated_rows > 0 && seen.clipped_rows > 0); /* the file exercises both */
}

/* The largest recorded |theta| a replay started from. */
static void track_theta(void *ctx, const gym_run *run, const csv_table *t, const gym_columns *c,
                        int row) {
    (void)run;
    double *max_theta = ctx;
    *max_theta = fmax(*max_theta, fabs(csv_at(t, row, c->state[0])));
}

static void test_episodes_per_step(void **unused) {
    (void)unused;
    double max_theta = 0.0;
    REQUIRE_SHARED(shared);
    gym_episodes_per_step(&g_pendulum, shared, track_theta, &max_theta);
    print_message("episodes, per step: max recorded |theta| %.3g\n", max_theta);
    assert_true(max_theta > M_PI); /* steps from |theta| > pi: the cost must normalise it */
}

static void test_episodes_free_running(void **unused) {
    (void)unused;
    double max_theta = 0.0;
    REQUIRE_SHARED(shared);
    gym_episodes_free_run(&g_pendulum, shared, track_theta, &max_theta);
    print_message("free run: max |theta| %.3g (the tolerances assume < %g)\n", max_theta,
                  FREE_RUN_MAX_THETA);
    assert_true(max_theta < FREE_RUN_MAX_THETA);
}

static void test_env_streams(void **unused) {
    (void)unused;
    const double swinging[2] = {0.5, -0.25};
    gym_autoreset_streams(&g_pendulum, swinging, 1.0, NULL);
}

static void test_episode_log(void **unused) {
    (void)unused;
    gym_run h;
    gym_open(&h, &g_pendulum, 1);
    gym_reset(&h, 3);
    for (int episode = 0; episode < 3; episode++) {
        /* a bang-bang torque, different per episode, in and out of bounds */
        double float_sum = 0.0, rounding_bound = 0.0;
        for (int step = 1; step <= GYM_EPISODE_STEPS; step++) {
            gym_poison(&h);
            h.actions_continuous[0] = (float)((step / 7 + episode) % 2 ? 3.0 - episode : -1.5);
            gym_step(&h);
            float reward = h.io.rewards[0];
            assert_true(reward <= 0.0f && reward >= -16.2736044f); /* -(pi^2 + 6.4 + 0.004) */
            float_sum += (double)reward;
            rounding_bound += 0.5 * gym_float_ulp(reward);
            assert_int_equal(h.io.terminated[0], 0);
            assert_int_equal(h.io.truncated[0], step == GYM_EPISODE_STEPS);
            if (step < GYM_EPISODE_STEPS) assert_int_equal(pendulum_of(&h)->elapsed[0], step);
            for (int k = 0; k < 2; k++)
                assert_true(fabsf(h.io.obs[k]) <= 1.0f);
            assert_true(fabsf(h.io.obs[2]) <= 8.0f);
        }
        /* the env sums the double rewards; the test sees float ones, each within half an ulp,
         * and the log itself is rounded to float once more */
        rounding_bound += 0.5 * gym_float_ulp(h.io.episode_log[0]);
        double err = fabs((double)h.io.episode_log[0] - float_sum);
        print_message("episode %d: log return %.9g length %g; sum of float rewards %.9g, "
                      "difference %.3g (rounding bound %.3g)\n",
                      episode, (double)h.io.episode_log[0], (double)h.io.episode_log[1], float_sum,
                      err, rounding_bound);
        assert_true(err <= rounding_bound);
        assert_true(h.io.episode_log[1] == (float)GYM_EPISODE_STEPS);
        assert_true(fabsf(h.io.final_obs[0] * h.io.final_obs[0] +
                          h.io.final_obs[1] * h.io.final_obs[1] - 1.0f) < 1e-6f);
        assert_int_equal(pendulum_of(&h)->elapsed[0], 0);
        assert_true(pendulum_of(&h)->episode_return[0] == 0.0);
    }
    gym_close(&h);
}

static void test_truncation(void **unused) {
    (void)unused;
    const double state[2] = {2.0, -3.0};
    gym_run h;
    gym_truncation(&h, &g_pendulum, state, NULL, 0.5, -500.0);
    float want_log = (float)(-500.0 + (double)h.io.rewards[1]);
    assert_true(h.io.episode_log[0] == want_log || ulp_distance(h.io.episode_log[0], want_log) <= 1);
    gym_close(&h);
}

static void test_torque_clipping(void **unused) {
    (void)unused;
    /* out-of-bounds torques act, and cost, exactly as the bound; in-bounds ones are used as is.
     * env k drives the same state with actions[k]. */
    enum { N = 8 };
    const float actions[N] = {2.0f, 2.5f, 100.0f, INFINITY, -2.0f, -2.0001f, -1e30f, 1.25f};
    gym_run h;
    gym_open(&h, &g_pendulum, N);
    for (int i = 0; i < N; i++) {
        set_pendulum(&h, i, 0.75, 1.5, 0, 0.0);
        h.actions_continuous[i] = actions[i];
    }
    gym_poison(&h);
    gym_step(&h);
    for (int i = 1; i < N - 1; i++) {
        int ref = actions[i] > 0 ? 0 : 4;
        assert_true(pendulum_of(&h)->theta_dot[i] == pendulum_of(&h)->theta_dot[ref]);
        assert_true(pendulum_of(&h)->theta[i] == pendulum_of(&h)->theta[ref]);
        assert_true(h.io.rewards[i] == h.io.rewards[ref]);
    }
    assert_true(pendulum_of(&h)->theta_dot[0] != pendulum_of(&h)->theta_dot[4]);
    /* closed form for the in-bounds torque: thdot' = thdot + (15 sin(th) + 3 u) dt,
     * cost = th^2 + 0.1 thdot^2 + 0.001 u^2 */
    double want_theta_dot = 1.5 + (15.0 * sin(0.75) + 3.0 * 1.25) * 0.05;
    double want_cost = 0.75 * 0.75 + 0.1 * 1.5 * 1.5 + 0.001 * 1.25 * 1.25;
    assert_true(test_rel_err(pendulum_of(&h)->theta_dot[N - 1], want_theta_dot, 1.0) < STATE_REL_TOL);
    assert_true(test_rel_err(pendulum_of(&h)->theta[N - 1], 0.75 + want_theta_dot * 0.05, 1.0) < STATE_REL_TOL);
    assert_true(ulp_distance(h.io.rewards[N - 1], (float)-want_cost) <= 1);
    gym_close(&h);
}

static void test_speed_clip_and_angle_wrap(void **unused) {
    (void)unused;
    /* env 0: the speed clips at +8 before it moves the angle; env 1 at -8; env 2: theta five
     * turns past the bottom costs like theta - 10 pi (the cost normalises; the state does not) */
    gym_run h;
    gym_open(&h, &g_pendulum, 3);
    set_pendulum(&h, 0, M_PI / 2, 7.9, 0, 0.0);
    set_pendulum(&h, 1, -M_PI / 2, -7.9, 0, 0.0);
    set_pendulum(&h, 2, 0.3 + 10.0 * M_PI, 0.0, 0, 0.0);
    h.actions_continuous[0] = 2.0f;
    h.actions_continuous[1] = -2.0f;
    h.actions_continuous[2] = 0.0f;
    gym_poison(&h);
    gym_step(&h);
    assert_true(pendulum_of(&h)->theta_dot[0] == 8.0 && pendulum_of(&h)->theta[0] == M_PI / 2 + 8.0 * 0.05);
    assert_true(pendulum_of(&h)->theta_dot[1] == -8.0 && pendulum_of(&h)->theta[1] == -M_PI / 2 - 8.0 * 0.05);
    assert_true(h.io.obs[2] == 8.0f && h.io.obs[OBS_SIZE + 2] == -8.0f);
    /* the cost uses the speed before the step, unclipped: 7.9, not 8 */
    double want_cost0 = (M_PI / 2) * (M_PI / 2) + 0.1 * 7.9 * 7.9 + 0.001 * 4.0;
    assert_true(ulp_distance(h.io.rewards[0], (float)-want_cost0) <= 1);
    double angle = 0.3 + 10.0 * M_PI - 10.0 * M_PI; /* the wrap, up to rounding of 10 pi */
    assert_true(fabs((double)h.io.rewards[2] + angle * angle) < 1e-6);
    assert_true(pendulum_of(&h)->theta[2] > 10.0 * M_PI); /* the state keeps its turns */
    gym_close(&h);
}

static void test_gravity_config(void **unused) {
    (void)unused;
    /* from horizontal at rest with no torque, the first step gains 3 g / (2 l) dt of speed */
    sk_config *cfg = sk_config_new();
    assert_non_null(cfg);
    assert_int_equal(sk_config_set(cfg, "env.g", "9.81"), SK_OK);
    gym_run h;
    gym_open_cfg(&h, &g_pendulum, 2, cfg);
    assert_true(pendulum_of(&h)->gravity == 9.81);
    gym_run d;
    gym_open(&d, &g_pendulum, 1);
    assert_true(pendulum_of(&d)->gravity == 10.0);
    assert_string_equal(sk_config_get(d.cfg, "env.g"), "10"); /* the resolved default */
    set_pendulum(&h, 0, M_PI / 2, 0.0, 0, 0.0);
    set_pendulum(&d, 0, M_PI / 2, 0.0, 0, 0.0);
    h.actions_continuous[0] = h.actions_continuous[1] = d.actions_continuous[0] = 0.0f;
    gym_step(&h);
    gym_step(&d);
    assert_true(fabs(pendulum_of(&h)->theta_dot[0] - 1.5 * 9.81 * 0.05) < 1e-15);
    assert_true(fabs(pendulum_of(&d)->theta_dot[0] - 1.5 * 10.0 * 0.05) < 1e-15);
    gym_close(&h);
    gym_close(&d);

    sk_config *bad = sk_config_new();
    assert_non_null(bad);
    assert_int_equal(sk_config_set(bad, "env.g", "-1"), SK_OK);
    void *state = NULL;
    assert_int_equal(sk_env_pendulum.create(&state, 1, bad), SK_ERR_INVALID);
    assert_null(state);
    assert_non_null(strstr(sk_last_error(), "env.g"));
    sk_config_free(bad);
}

static void test_step_range(void **unused) {
    (void)unused;
    /* step(lo, hi) advances only lo..hi-1 and leaves other envs' state and outputs alone */
    gym_run h;
    gym_step_range(&h, &g_pendulum, 1.0);
    gym_close(&h);
}

static bool pendulum_use_level(void *state, sk_isa_level level) {
    sk_pendulum_step_fn step = sk_pendulum_step_at(level);
    ((sk_pendulum_state *)state)->step = step;
    return step != NULL;
}

/* Angles a few turns either way (theta is never wrapped), any speed up to the clip, any step
 * count: the speed clip, the angle normalisation and truncations from the first steps. */
static void pendulum_scatter(gym_run *run, int i, uint64_t *rng) {
    sk_pendulum_state *s = pendulum_of(run);
    s->theta[i] = sk_rng_uniform(rng, -3.0 * M_PI, 3.0 * M_PI);
    s->theta_dot[i] = sk_rng_uniform(rng, -8.0, 8.0);
    s->elapsed[i] = (int32_t)sk_rng_below(rng, (uint64_t)run->env->max_steps);
}

/* The vector step compiled at each ISA level the CPU has: bit for bit the baseline's. */
static void test_levels_match_baseline(void **unused) {
    (void)unused;
    gym_levels_match(&g_pendulum, pendulum_use_level, pendulum_scatter, 600, 1007 * 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_definition),
        cmocka_unit_test(test_transitions),
        cmocka_unit_test(test_episodes_per_step),
        cmocka_unit_test(test_episodes_free_running),
        GYM_CASE(test_reset_distribution, gym_case_reset_streams, &g_pendulum),
        cmocka_unit_test(test_env_streams),
        cmocka_unit_test(test_episode_log),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_torque_clipping),
        cmocka_unit_test(test_speed_clip_and_angle_wrap),
        cmocka_unit_test(test_gravity_config),
        cmocka_unit_test(test_step_range),
        cmocka_unit_test(test_levels_match_baseline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
