/*
 * CartPole-v1 against Gymnasium 1.4.0's recorded dynamics (../shared/reference/gymnasium),
 * plus the env contract: reset distribution, per-env streams, autoreset, episode log and
 * truncation at 500 steps.
 *
 * Tolerances, and why they are not zero. skinner and Gymnasium evaluate the same Euler step in
 * double, but not bit for bit: Gymnasium 1.4.0 calls np.cos/np.sin, whose vectorised float64
 * kernels may differ from glibc's cos/sin by a few ulp, it squares with np.square (c*c before the
 * product) where cartpole.c multiplies left to right, and the library is built with
 * -march=native, so GCC contracts a*b+c into FMA. Measured on the 1,836 non-terminal transitions:
 * x and theta (no trig involved) agree exactly, x_dot or theta_dot differ in the last bit in
 * ~21% of rows (max 4.4e-16), and every differing row is reproduced exactly by nudging glibc's
 * cos/sin by at most 3 ulp. So one step is checked at STATE_REL_TOL = 1e-12 relative (absolute
 * below 1.0): ~4500x the largest rounding difference, and far below any modelling error (a
 * wrong constant, sign or missing term shows at 1e-6 or more). Observations are float32 casts
 * of those doubles; they were equal in every row, and OBS_MAX_ULP = 1 allows for the double that
 * rounds across a float boundary.
 *
 * A free-running replay (recorded actions from the first state only) amplifies those last-bit
 * differences: the recorded actions are open loop, and the upright pole is unstable with rate
 * lambda = sqrt(g / (l (4/3 - m_p / (m_c + m_p)))) = 3.97 /s, x1.083 per step, so a 1e-16
 * difference is 1e-6 after ~300 steps and O(1) by step 500 (measured: errors cross 1e-12 near
 * step 140, 1e-6 near 320, 1e-2 near 440; three 500-step episodes then terminate 6 to 14 steps
 * early, and a fourth terminates on its 500th step where Gymnasium's was truncated). The replay is therefore checked against the bound FREE_RUN_BASE_TOL * 1.083^t (the
 * measured error never exceeds 1.9e-16 * 1.083^t) for as long as that bound stays below
 * FREE_RUN_HORIZON_TOL; within that horizon every observation, flag and episode end must match.
 */
#include "gym_harness.h"

#include "envs/cartpole.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define STATE_REL_TOL 1e-12
#define OBS_MAX_ULP 1
#define FREE_RUN_BASE_TOL 2e-15   /* 10x the measured 1.9e-16 */
#define FREE_RUN_HORIZON_TOL 1e-3 /* reached at step ~340 */

/* Gymnasium's CartPole constants (gymnasium/envs/classic_control/cartpole.py), used only for the
 * error-growth bound and the rule tests. */
#define GYM_GRAVITY 9.8
#define GYM_MASS_CART 1.0
#define GYM_MASS_POLE 0.1
#define GYM_HALF_LENGTH 0.5
#define GYM_TAU 0.02
#define GYM_X_THRESHOLD 2.4
#define GYM_THETA_THRESHOLD (12.0 * 2.0 * M_PI / 360.0)
#define RESET_BOUND 0.05
#define MAX_STEPS 500

/* ------------------------------------------------------------- the env table */

static sk_cartpole_state *cartpole_of(const gym_run *run) { return run->state; }

/* The bound on the free-running error after `steps` steps: see the comment at the top. */
static double free_run_bound(int steps) {
    double lambda = sqrt(GYM_GRAVITY / (GYM_HALF_LENGTH * (4.0 / 3.0 - GYM_MASS_POLE /
                                                                          (GYM_MASS_CART +
                                                                           GYM_MASS_POLE))));
    return FREE_RUN_BASE_TOL * exp(lambda * GYM_TAU * steps);
}

/* Within the horizon the state (absolute), every observation, flag, reward and episode end. */
static gym_tolerance free_run_growth(int steps) {
    double bound = free_run_bound(steps);
    return (gym_tolerance){.state_abs = bound, .obs_abs = bound};
}

static const char *const g_state_names[4] = {"x", "x_dot", "theta", "theta_dot"};
static const char *const g_obs_names[4] = {"obs[0] x", "obs[1] x_dot", "obs[2] theta",
                                           "obs[3] theta_dot"};
/* U(-0.05, 0.05): the mean of 10000 has sd 2.9e-4, so 1.5e-3 is 5 sd */
static const gym_uniform g_reset[4] = {{-RESET_BOUND, RESET_BOUND, 1.5e-3, 5e-4},
                                       {-RESET_BOUND, RESET_BOUND, 1.5e-3, 5e-4},
                                       {-RESET_BOUND, RESET_BOUND, 1.5e-3, 5e-4},
                                       {-RESET_BOUND, RESET_BOUND, 1.5e-3, 5e-4}};

static const gym_env g_cartpole = {
    .def = &sk_env_cartpole,
    .transitions = "CartPole-v1.transitions.csv",
    .episodes = "CartPole-v1.episodes.csv",
    .state_size = 4,
    .state_names = g_state_names,
    .obs_names = g_obs_names,
    .max_steps = MAX_STEPS,
    .csv_lines = true,
    .episodes_terminate = true,
    .obs_max_ulp = OBS_MAX_ULP,
    .reward_max_ulp = 0,
    .reset_distinct_coord = 0,
    .step_moves = 1u << 0 | 1u << 1, /* x or x_dot */
    .reset_uniform = g_reset,
    .one_step = {.state_rel = STATE_REL_TOL},
    .free_run_growth = free_run_growth,
    .free_run_horizon_tol = FREE_RUN_HORIZON_TOL,
    .coord_field = {offsetof(sk_cartpole_state, x),
                    offsetof(sk_cartpole_state, x_dot),
                    offsetof(sk_cartpole_state, theta),
                    offsetof(sk_cartpole_state, theta_dot)},
    .elapsed_field = offsetof(sk_cartpole_state, elapsed),
    .return_field = offsetof(sk_cartpole_state, episode_return),
    .float_return = true,
};

/* -------------------------------------------------------------------- tests */

static void test_transitions(void **unused) {
    (void)unused;
    REQUIRE_SHARED(shared);
    gym_transitions(&g_cartpole, shared, NULL, NULL);
}

static void test_env_streams(void **unused) {
    (void)unused;
    const double upright[4] = {0.0, 0.0, 0.0, 0.0};
    gym_autoreset_streams(&g_cartpole, upright, 1.0, NULL);
}

static void test_episode_log(void **unused) {
    (void)unused;
    gym_run h;
    gym_open(&h, &g_cartpole, 1);
    gym_reset(&h, 3);
    for (int episode = 0; episode < 3; episode++) {
        /* pushing one way topples the pole within a few dozen steps */
        int steps = 0;
        do {
            gym_poison(&h);
            h.actions[0] = episode % 2;
            gym_step(&h);
            steps++;
            assert_true(h.io.rewards[0] == 1.0f);
            assert_int_equal(h.io.truncated[0], 0);
            if (!h.io.terminated[0]) assert_int_equal(cartpole_of(&h)->elapsed[0], steps);
        } while (!h.io.terminated[0] && steps < 500);
        assert_int_equal(h.io.terminated[0], 1);
        print_message("episode %d: %d steps, log return %g length %g\n", episode, steps,
                      (double)h.io.episode_log[0], (double)h.io.episode_log[1]);
        assert_true(h.io.episode_log[0] == (float)steps);
        assert_true(h.io.episode_log[1] == (float)steps);
        /* the ended episode's last observation is terminal; the new one starts fresh */
        assert_true(fabs(h.io.final_obs[0]) > 0.9 * GYM_X_THRESHOLD ||
                    fabs(h.io.final_obs[2]) > 0.9 * GYM_THETA_THRESHOLD);
        assert_int_equal(cartpole_of(&h)->elapsed[0], 0);
        assert_true(cartpole_of(&h)->episode_return[0] == 0.0f);
    }
    gym_close(&h);
}

static void test_truncation(void **unused) {
    (void)unused;
    const double upright[4] = {0.01, -0.02, 0.03, -0.04};
    const double falling[4] = {2.39, 1.0, 0.0, 0.0}; /* x passes 2.4 this step */
    gym_run h;
    gym_truncation(&h, &g_cartpole, upright, falling, 0.0, 499.0); /* +1 per step so far */
    assert_true(h.io.rewards[0] == 1.0f);
    assert_true(h.io.episode_log[0] == 500.0f);
    assert_true(h.io.final_obs[12] > 0.9 * GYM_X_THRESHOLD);
    gym_close(&h);
}

static void test_step_range(void **unused) {
    (void)unused;
    /* step(lo, hi) advances only lo..hi-1 and leaves other envs' state and outputs alone */
    gym_run h;
    gym_step_range(&h, &g_cartpole, 1.0);
    assert_true(h.io.rewards[1] == 1.0f);
    gym_close(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transitions),
        GYM_CASE(test_episodes_per_step, gym_case_episodes_per_step, &g_cartpole),
        GYM_CASE(test_episodes_free_running, gym_case_episodes_free_run, &g_cartpole),
        GYM_CASE(test_reset_distribution, gym_case_reset_streams, &g_cartpole),
        cmocka_unit_test(test_env_streams),
        cmocka_unit_test(test_episode_log),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_step_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
