/*
 * Acrobot-v1 against Gymnasium 1.4.0's recorded dynamics (../shared/reference/gymnasium),
 * plus the env contract: reset distribution, per-env streams, autoreset, episode log and
 * truncation at 500 steps.
 *
 * Tolerances. skinner keeps the state in double and performs the same IEEE operations as
 * Gymnasium's acrobot.py (its _dsdt, its rk4 over [0, 0.2], wrap and bound), in the same order
 * and without fused multiply-adds. The results still differ from the recording in the last
 * bits, because NumPy's elementary functions are not glibc's: on AVX-512 CPUs (where the
 * reference was recorded) NumPy's float64 sin and cos come from Intel's SVML, up to a few ulp
 * from glibc's, and Gymnasium's `x**2` on a NumPy float64 calls libm pow, which misrounds about
 * one square in a thousand, where skinner squares with x * x. (Gymnasium's step re-typed in
 * Python with NumPy on such a CPU reproduces every recorded transition bit for bit; with
 * math.cos and math.sin instead, 1207 of the 1662 non-terminal ones differ in the last bits,
 * and skinner's 1208.) One step: those ulp differences, carried through four Runge-Kutta
 * stages, stay below 2e-13; the checks allow STATE_REL_TOL = 1e-12 relative (absolute below
 * 1.0), while real modelling differences are far larger: g = 9.81 instead of 9.8 shows as
 * 5e-3, the "nips" equation instead of the "book" one as 29 (and flips terminations), a 1e-6
 * relative change in the Runge-Kutta weight dt / 6 as 3e-5. Observations are float32 casts of
 * cos, sin and the velocities, so they agree unless a double that differs in the last bits
 * rounds across a float boundary: OBS_MAX_ULP = 1. The free-running check replays recorded
 * actions from each episode's first state only, so the per-step ulp differences accumulate;
 * see FREE_RUN_TOL.
 */
#include "gym_harness.h"

#include "envs/acrobot.h"
#include "core/rng.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define STATE_REL_TOL 1e-12
#define OBS_MAX_ULP 1
/* Free-running replay: the double pendulum is chaotic once the second link swings over the
 * top, so the per-step ulp differences above grow along a replayed episode. In 19 of the 20
 * recorded episodes the drift stays below 1e-12 over 500 steps; in episode 11 the second link
 * starts to whirl near step 420 and the drift grows about 30-fold every 20 steps, to 1.8e-9 at
 * step 474, then stays there. FREE_RUN_TOL = 1e-6 (absolute below 1.0, relative above) leaves
 * a 500-fold margin for a libm whose last bits fall elsewhere, and is still 30 times below the
 * smallest modelling error listed above after a single step. The observations are cos, sin
 * (both 1-Lipschitz) and the velocities themselves, so their error is the state's plus the
 * float32 rounding: within FREE_RUN_TOL absolute, or OBS_MAX_ULP. */
#define FREE_RUN_TOL 1e-6

#define OBS_SIZE 6
#define MAX_STEPS 500
#define RESET_BOUND 0.1

/* ------------------------------------------------------------- the env table */

static sk_acrobot_state *acrobot_of(const gym_run *run) { return run->state; }

static void expected_obs(const void *state, int i, float *out) {
    const sk_acrobot_state *s = state;
    out[0] = (float)cos(s->theta1[i]);
    out[1] = (float)sin(s->theta1[i]);
    out[2] = (float)cos(s->theta2[i]);
    out[3] = (float)sin(s->theta2[i]);
    out[4] = (float)s->dtheta1[i];
    out[5] = (float)s->dtheta2[i];
}

static const char *const g_state_names[4] = {"theta1", "theta2", "dtheta1", "dtheta2"};
static const char *const g_obs_names[OBS_SIZE] = {"obs[0] cos theta1", "obs[1] sin theta1",
                                                  "obs[2] cos theta2", "obs[3] sin theta2",
                                                  "obs[4] dtheta1",    "obs[5] dtheta2"};
/* U(-0.1, 0.1): the mean of 10000 has sd 5.8e-4, so 3e-3 is 5 sd */
static const gym_uniform g_reset[4] = {{-RESET_BOUND, RESET_BOUND, 3e-3, 1e-3},
                                       {-RESET_BOUND, RESET_BOUND, 3e-3, 1e-3},
                                       {-RESET_BOUND, RESET_BOUND, 3e-3, 1e-3},
                                       {-RESET_BOUND, RESET_BOUND, 3e-3, 1e-3}};

static const gym_env g_acrobot = {
    .def = &sk_env_acrobot,
    .transitions = "Acrobot-v1.transitions.csv",
    .episodes = "Acrobot-v1.episodes.csv",
    .state_size = 4,
    .state_names = g_state_names,
    .obs_names = g_obs_names,
    .max_steps = MAX_STEPS,
    .float32_reset = true,
    /* the recording's random policy never raises the tip: all 20 episodes hit the time limit,
     * so termination is covered by the transitions file and test_episode_log */
    .episodes_terminate = false,
    .obs_max_ulp = OBS_MAX_ULP,
    .reward_max_ulp = 0,
    /* float32 rounding leaves ~2^24 values per coordinate, so a few coincidences in one
     * coordinate are expected: whole states must differ */
    .reset_distinct_coord = -1,
    .step_moves = 1u << 2 | 1u << 3, /* dtheta1 or dtheta2 */
    .reset_uniform = g_reset,
    .one_step = {.state_rel = STATE_REL_TOL},
    .free_run = {.state_rel = FREE_RUN_TOL, .obs_abs = FREE_RUN_TOL},
    .coord_field = {offsetof(sk_acrobot_state, theta1),
                    offsetof(sk_acrobot_state, theta2),
                    offsetof(sk_acrobot_state, dtheta1),
                    offsetof(sk_acrobot_state, dtheta2)},
    .elapsed_field = offsetof(sk_acrobot_state, elapsed),
    .return_field = offsetof(sk_acrobot_state, episode_return),
    .float_return = true,
    .expected_obs = expected_obs,
};

/* -------------------------------------------------------------------- tests */

/* What the transitions file exercises: the velocity clip and every torque. */
typedef struct coverage {
    int clipped_rows, actions_seen[3];
} coverage;

static void count_row(void *ctx, const gym_run *run, const csv_table *t, const gym_columns *c,
                      int row) {
    (void)run;
    coverage *seen = ctx;
    int action = (int)csv_at(t, row, c->action);
    assert_true(action >= 0 && action < 3);
    seen->actions_seen[action]++;
    /* a velocity exactly at its bound shows the clip was exercised */
    if (fabs(csv_at(t, row, c->next_state[2])) == 4.0 * M_PI ||
        fabs(csv_at(t, row, c->next_state[3])) == 9.0 * M_PI)
        seen->clipped_rows++;
}

static void test_transitions(void **unused) {
    (void)unused;
    coverage seen = {0};
    REQUIRE_SHARED(shared);
    gym_transitions(&g_acrobot, shared, count_row, &seen);
    print_message("transitions: %d with a velocity at its bound, actions %d/%d/%d\n",
                  seen.clipped_rows, seen.actions_seen[0], seen.actions_seen[1],
                  seen.actions_seen[2]);
    assert_true(seen.clipped_rows > 0);
    assert_true(seen.actions_seen[0] > 0 && seen.actions_seen[1] > 0 && seen.actions_seen[2] > 0);
}

/* A pumping policy that raises the tip within ~70-140 steps: torque along the second joint's
 * velocity, action 2 (+1) when dtheta2 > 0 and action 0 (-1) otherwise. */
static double pumping_action(const gym_run *run, int i) {
    return acrobot_of(run)->dtheta2[i] > 0 ? 2.0 : 0.0;
}

static void test_env_streams(void **unused) {
    (void)unused;
    const double hanging[4] = {0.05, -0.02, 0.03, 0.01};
    gym_autoreset_streams(&g_acrobot, hanging, 0.0, pumping_action);
}

static void test_episode_log(void **unused) {
    (void)unused;
    gym_run h;
    gym_open(&h, &g_acrobot, 1);
    gym_reset(&h, 3);
    for (int episode = 0; episode < 3; episode++) {
        int steps = 0;
        do {
            h.actions[0] = (int32_t)pumping_action(&h, 0);
            gym_poison(&h);
            gym_step(&h);
            steps++;
            assert_int_equal(h.io.truncated[0], 0);
            if (!h.io.terminated[0]) {
                assert_true(h.io.rewards[0] == -1.0f);
                assert_int_equal(acrobot_of(&h)->elapsed[0], steps);
                assert_true(acrobot_of(&h)->episode_return[0] == -(float)steps);
            }
        } while (!h.io.terminated[0] && steps < MAX_STEPS);
        assert_int_equal(h.io.terminated[0], 1);
        print_message("episode %d: %d steps, reward on the last step %g, log return %g length %g\n",
                      episode, steps, (double)h.io.rewards[0], (double)h.io.episode_log[0],
                      (double)h.io.episode_log[1]);
        assert_true(h.io.rewards[0] == 0.0f); /* the terminating step earns 0 */
        assert_true(h.io.episode_log[0] == -(float)(steps - 1));
        assert_true(h.io.episode_log[1] == (float)steps);
        /* the ended episode's last observation is terminal: -cos t1 - cos(t1 + t2) > 1, with
         * cos(t1 + t2) = cos t1 cos t2 - sin t1 sin t2 (float32 obs, so a small margin) */
        const float *f = h.io.final_obs;
        double height = -(double)f[0] - ((double)f[0] * f[2] - (double)f[1] * f[3]);
        assert_true(height > 1.0 - 1e-5);
        /* the new episode starts fresh */
        assert_int_equal(acrobot_of(&h)->elapsed[0], 0);
        assert_true(acrobot_of(&h)->episode_return[0] == 0.0f);
        float want[OBS_SIZE];
        expected_obs(h.state, 0, want);
        for (int k = 0; k < OBS_SIZE; k++) assert_true(h.io.obs[k] == want[k]);
    }
    gym_close(&h);
}

static void test_truncation(void **unused) {
    (void)unused;
    const double hanging[4] = {0.01, -0.02, 0.03, -0.04};
    /* both links pointing up (theta1 = pi): the tip is two links above the pivot */
    const double upright[4] = {3.0, 0.0, 0.0, 0.0};
    gym_run h;
    gym_truncation(&h, &g_acrobot, hanging, upright, 1.0, -499.0); /* -1 per step so far */
    assert_true(h.io.rewards[0] == -1.0f);
    assert_true(h.io.episode_log[0] == -500.0f);
    assert_true(h.io.rewards[3] == 0.0f); /* the terminating step earns 0 */
    assert_true(h.io.episode_log[6 + 0] == -499.0f);
    assert_true(h.io.final_obs[3 * OBS_SIZE + 0] < -0.9f); /* cos theta1 near -1: link 1 up */
    gym_close(&h);
}

static void test_wrap_and_clip(void **unused) {
    (void)unused;
    /* angles leave [-pi, pi] and come back by whole turns; velocities stop at 4 pi and 9 pi */
    gym_run h;
    gym_open(&h, &g_acrobot, 2);
    const double spinning[4] = {3.1, -3.1, 12.5, -28.2};
    const double spinning_back[4] = {-3.1, 3.1, -12.5, 28.2};
    gym_set_state(&h, 0, spinning, 0, 0.0);
    gym_set_state(&h, 1, spinning_back, 0, 0.0);
    for (int step = 0; step < 50; step++) {
        h.actions[0] = 2;
        h.actions[1] = 0;
        gym_poison(&h);
        gym_step(&h);
        for (int i = 0; i < 2; i++) {
            assert_true(acrobot_of(&h)->theta1[i] >= -M_PI && acrobot_of(&h)->theta1[i] <= M_PI);
            assert_true(acrobot_of(&h)->theta2[i] >= -M_PI && acrobot_of(&h)->theta2[i] <= M_PI);
            assert_true(fabs(acrobot_of(&h)->dtheta1[i]) <= 4.0 * M_PI);
            assert_true(fabs(acrobot_of(&h)->dtheta2[i]) <= 9.0 * M_PI);
        }
    }
    gym_close(&h);
}

static void test_step_range(void **unused) {
    (void)unused;
    /* step(lo, hi) advances only lo..hi-1 and leaves other envs' state and outputs alone */
    gym_run h;
    gym_step_range(&h, &g_acrobot, 2.0);
    assert_true(h.io.rewards[1] == -1.0f);
    gym_close(&h);
}

static bool acrobot_use_level(void *state, sk_isa_level level) {
    sk_acrobot_step_fn step = sk_acrobot_step_at(level);
    ((sk_acrobot_state *)state)->step = step;
    return step != NULL;
}

/* Anywhere in the state space the env keeps: all angles, speeds up to the clips, so that steps
 * wrap, clip and terminate from the first. */
static void acrobot_scatter(gym_run *run, int i, uint64_t *rng) {
    sk_acrobot_state *s = acrobot_of(run);
    s->theta1[i] = sk_rng_uniform(rng, -M_PI, M_PI);
    s->theta2[i] = sk_rng_uniform(rng, -M_PI, M_PI);
    s->dtheta1[i] = sk_rng_uniform(rng, -4.0 * M_PI, 4.0 * M_PI);
    s->dtheta2[i] = sk_rng_uniform(rng, -9.0 * M_PI, 9.0 * M_PI);
}

/* The vector step compiled at each ISA level the CPU has: bit for bit the baseline's. */
static void test_levels_match_baseline(void **unused) {
    (void)unused;
    gym_levels_match(&g_acrobot, acrobot_use_level, acrobot_scatter, 1200, 1007 * 2);
}

static void test_definition(void **unused) {
    (void)unused;
    const sk_env_def *def = &sk_env_acrobot;
    assert_string_equal(def->id, "Acrobot-v1");
    assert_string_equal(def->alias, "acrobot");
    assert_int_equal(def->action_space.kind, SK_SPACE_DISCRETE);
    assert_int_equal(def->action_space.num_heads, 1);
    assert_int_equal(def->action_space.head_sizes[0], 3);
    assert_int_equal(def->mask_size, 0);
    assert_int_equal(def->max_episode_steps, MAX_STEPS);
    assert_true(def->solved_threshold == -100.0);
    assert_int_equal(def->num_log_fields, 2);
    assert_string_equal(def->log_names[0], "episode_return");
    assert_string_equal(def->log_names[1], "episode_length");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_definition),
        cmocka_unit_test(test_transitions),
        GYM_CASE(test_episodes_per_step, gym_case_episodes_per_step, &g_acrobot),
        GYM_CASE(test_episodes_free_running, gym_case_episodes_free_run, &g_acrobot),
        GYM_CASE(test_reset_distribution, gym_case_reset_streams, &g_acrobot),
        cmocka_unit_test(test_env_streams),
        cmocka_unit_test(test_episode_log),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_wrap_and_clip),
        cmocka_unit_test(test_step_range),
        cmocka_unit_test(test_levels_match_baseline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
