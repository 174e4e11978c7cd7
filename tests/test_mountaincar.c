/*
 * MountainCar-v0 and MountainCarContinuous-v0 against Gymnasium 1.4.0's recorded dynamics
 * (../shared/reference/gymnasium), plus the env contract: reset distribution, per-env streams,
 * autoreset, episode log, truncation, and the rules the recordings exercise only by chance
 * (left wall, speed limit, action clipping, the unclipped action cost, float32 state).
 *
 * Tolerances. mountaincar.c performs Gymnasium's float64 operations in Gymnasium's order, with
 * FMA contraction switched off. Its vector path takes cos from src/core/vmath.h (within 1 ulp
 * of glibc's), so states agree to the last bits rather than exactly (measured: 2.8e-17 for one
 * MountainCar-v0 step, 4.4e-16 over a free run; the scalar reference reproduces the recordings
 * bit for bit). The checks allow a last-bit difference, so an ulp of cos never fails a
 * correct env:
 *   - float64 states (MountainCar-v0): STATE_REL_TOL = 1e-12 relative (absolute below 1.0),
 *     ~4500x one double ulp and far below any modelling error (a wrong constant, sign or
 *     operation order shows at 1e-7 or more: the push is 1e-3, the slope term 2.5e-3).
 *   - MountainCarContinuous-v0 stores its stepped state as float32, and observations are
 *     float32 in both envs: OBS_MAX_ULP = 1 float ulp, since a last-bit difference in the
 *     float64 value can round to the neighbouring float.
 *   - rewards (float32 in skinner, float64 in Gymnasium): REWARD_MAX_ULP = 1 float ulp of the
 *     recorded reward cast to float, for the same reason.
 *   - flags and episode ends: exact.
 * The continuous recordings' action column is float64 text, but Gymnasium received the
 * action as float32 (the recorded reward is 0.1 * float32(action)^2 in every row, and not
 * 0.1 * action^2): skinner's actions are float32 too, so the test passes (float)action.
 * Free-running replays cannot drift: MountainCar's dynamics are not chaotic over an episode
 * and every step is reproduced exactly, so they use the per-step tolerances.
 */
#include "gym_harness.h"

#include "envs/mountaincar.h"
#include "core/rng.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The rule tests recompute a step in closed form; like mountaincar.c, round every product
 * rather than letting -march=native fuse multiply-adds. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define STATE_REL_TOL 1e-12
#define OBS_MAX_ULP 1
#define REWARD_MAX_ULP 1

/* Gymnasium's constants (gymnasium/envs/classic_control/mountain_car.py,
 * continuous_mountain_car.py), used by the rule tests. */
#define GYM_MIN_POSITION -1.2
#define GYM_MAX_POSITION 0.6
#define GYM_MAX_SPEED 0.07
#define GYM_GRAVITY 0.0025
#define GYM_FORCE 0.001
#define GYM_POWER 0.0015
#define GYM_RESET_LOW -0.6
#define GYM_RESET_HIGH -0.4

/* ------------------------------------------------------------- the env tables */

static const char *const g_state_names[2] = {"position", "velocity"};
static const char *const g_obs_names[2] = {"obs[0] position", "obs[1] velocity"};
/* U(-0.6, -0.4): the mean of 10000 has sd 5.8e-4, so 3e-3 is 5 sd; the velocity starts at 0.
 * Gymnasium resets in float64, also for the continuous variant. */
static const gym_uniform g_reset[2] = {{GYM_RESET_LOW, GYM_RESET_HIGH, 3e-3, 1e-3}, {0, 0, 0, 0}};

#define MOUNTAINCAR_TABLE                                                                         \
    .state_size = 2, .state_names = g_state_names, .obs_names = g_obs_names,                     \
    .episodes_terminate = true, .obs_max_ulp = OBS_MAX_ULP, .reward_max_ulp = REWARD_MAX_ULP,     \
    .reset_distinct_coord = 0, .step_moves = 1u << 1, /* the velocity */                          \
    .reset_uniform = g_reset,                                                                     \
    /* free runs cannot drift (see the top): the one-step tolerances throughout */                \
    .one_step = {.state_rel = STATE_REL_TOL}, .free_run = {.state_rel = STATE_REL_TOL},           \
    .coord_field = {offsetof(sk_mountaincar_state, position),                                     \
                    offsetof(sk_mountaincar_state, velocity)},                                    \
    .elapsed_field = offsetof(sk_mountaincar_state, elapsed),                                     \
    .return_field = offsetof(sk_mountaincar_state, episode_return)

/* The two variants under test. */
typedef struct variant {
    gym_env env;
    bool continuous;
    double goal_position;
} variant;

static const variant g_discrete = {
    .env = {.def = &sk_env_mountaincar,
            .transitions = "MountainCar-v0.transitions.csv",
            .episodes = "MountainCar-v0.episodes.csv",
            .max_steps = 200,
            MOUNTAINCAR_TABLE},
    .continuous = false,
    .goal_position = 0.5,
};

static const variant g_continuous = {
    .env = {.def = &sk_env_mountaincar_continuous,
            .transitions = "MountainCarContinuous-v0.transitions.csv",
            .episodes = "MountainCarContinuous-v0.episodes.csv",
            .max_steps = 999,
            .float32_state = true, /* Gymnasium stores the stepped state as float32 */
            MOUNTAINCAR_TABLE},
    .continuous = true,
    .goal_position = 0.45,
};

static sk_mountaincar_state *car_of(const gym_run *run) { return run->state; }

static void set_car(gym_run *run, int i, double position, double velocity, int32_t elapsed,
                    double episode_return) {
    const double state[2] = {position, velocity};
    gym_set_state(run, i, state, elapsed, episode_return);
}

/* ------------------------------------------------------------- transitions */

/* What the transitions file exercises: every rule. */
typedef struct coverage {
    bool continuous;
    int wall_rows, speed_limit_rows, clipped_action_rows;
} coverage;

static void count_rules(void *ctx, const gym_run *run, const csv_table *t, const gym_columns *c,
                        int row) {
    (void)run;
    coverage *seen = ctx;
    double want_position = csv_at(t, row, c->next_state[0]);
    double want_velocity = csv_at(t, row, c->next_state[1]);
    double action = csv_at(t, row, c->action);
    seen->wall_rows += want_position == GYM_MIN_POSITION || (float)want_position == -1.2f;
    seen->speed_limit_rows += fabs(want_velocity) == GYM_MAX_SPEED ||
                              fabsf((float)want_velocity) == (float)GYM_MAX_SPEED;
    seen->clipped_action_rows += seen->continuous && fabsf((float)action) > 1.0f;
}

static void run_transitions(const variant *v) {
    coverage seen = {.continuous = v->continuous};
    REQUIRE_SHARED(shared);
    gym_transitions(&v->env, shared, count_rules, &seen);
    print_message("%s: %d at the left wall, %d at the speed limit, %d with |action| > 1\n",
                  v->env.transitions, seen.wall_rows, seen.speed_limit_rows,
                  seen.clipped_action_rows);
    assert_true(seen.wall_rows > 0 && seen.speed_limit_rows > 0);
    if (v->continuous) assert_true(seen.clipped_action_rows > 0);
}

static void test_transitions_discrete(void **unused) {
    (void)unused;
    run_transitions(&g_discrete);
}

static void test_transitions_continuous(void **unused) {
    (void)unused;
    run_transitions(&g_continuous);
}

/* ---------------------------------------------------------------- episodes */

/* ------------------------------------------------------------------- reset */

static void test_reset_distribution(void **unused) {
    (void)unused;
    gym_reset_streams(&g_discrete.env);
    gym_reset_streams(&g_continuous.env);
}

static void test_env_streams(void **unused) {
    (void)unused;
    /* every env starts just short of the goal, pushing right: all terminate on the first step */
    const double near_goal[2] = {0.49, 0.02};
    gym_autoreset_streams(&g_discrete.env, near_goal, 2.0, NULL);
    gym_autoreset_streams(&g_continuous.env, near_goal, 1.0, NULL);
}

/* ------------------------------------------------------------- episode log */

/* Pumping energy (push along the velocity) reaches the goal in ~100 steps; no push never
 * does, so the episode runs into the time limit. */
static void test_episode_log(void **unused) {
    (void)unused;
    for (int vi = 0; vi < 2; vi++) {
        const variant *v = vi ? &g_continuous : &g_discrete;
        gym_run h;
        gym_open(&h, &v->env, 1);
        gym_reset(&h, 3);
        for (int episode = 0; episode < 3; episode++) {
            bool pump = episode != 1;
            /* continuous: push 1.5, clipped to 1 in the dynamics, costing 0.1 * 1.5^2 */
            double push = v->continuous ? 1.5 : 1.0;
            double cost = v->continuous ? 0.1 * push * push : 1.0;
            double sum_rewards = 0.0;
            int steps = 0;
            do {
                double direction = car_of(&h)->velocity[0] >= 0.0 ? 1.0 : -1.0;
                double action = pump ? direction * push : 0.0;
                gym_set_action(&h, 0, v->continuous ? action : action + 1.0);
                gym_poison(&h);
                gym_step(&h);
                steps++;
                sum_rewards += h.io.rewards[0];
                if (!h.io.terminated[0] && !h.io.truncated[0])
                    assert_int_equal(car_of(&h)->elapsed[0], steps);
            } while (!h.io.terminated[0] && !h.io.truncated[0] && steps < 2000);
            assert_int_equal(h.io.terminated[0], pump);
            assert_int_equal(h.io.truncated[0], !pump);
            if (!pump) assert_int_equal(steps, v->env.max_steps);
            double want_return;
            if (!v->continuous)
                want_return = -(double)steps;
            else
                want_return = pump ? 100.0 - cost * steps : 0.0;
            print_message("%s episode %d (%s): %d steps, log return %.9g (want %.9g) length %g\n",
                          v->env.def->id, episode, pump ? "pumping" : "no push", steps,
                          (double)h.io.episode_log[0], want_return, (double)h.io.episode_log[1]);
            /* float32 log of a float64 sum: within 1 float ulp of the closed form (the
             * continuous sum of ~100 equal costs differs from cost * steps by < 1e-12) */
            assert_true(ulp_distance(h.io.episode_log[0], (float)want_return) <= 1);
            assert_true(fabs((double)h.io.episode_log[0] - sum_rewards) < 1e-4);
            assert_true(h.io.episode_log[1] == (float)steps);
            if (pump) assert_true(h.io.final_obs[0] >= (float)v->goal_position - 1e-7f);
            assert_int_equal(car_of(&h)->elapsed[0], 0);
            assert_true(car_of(&h)->episode_return[0] == 0.0);
        }
        gym_close(&h);
    }
}

/* ------------------------------------------------------------------ limits */

static void run_truncation(const variant *v) {
    const double before_limit[2] = {-0.5, 0.01}, near_goal[2] = {0.49, 0.02};
    gym_run h;
    gym_truncation(&h, &v->env, before_limit, near_goal, v->continuous ? 0.0 : 1.0, -5.0);
    float want_reward = v->continuous ? 0.0f : -1.0f;
    assert_true(h.io.rewards[0] == want_reward);
    assert_true(h.io.episode_log[0] == (float)(-5.0 + want_reward));
    assert_true(h.io.final_obs[6] >= (float)v->goal_position);
    gym_close(&h);
}

static void test_truncation(void **unused) {
    (void)unused;
    run_truncation(&g_discrete);
    run_truncation(&g_continuous);
}

static void test_step_range(void **unused) {
    (void)unused;
    /* step(lo, hi) advances only lo..hi-1 and leaves other envs' state and outputs alone */
    gym_run h;
    gym_step_range(&h, &g_discrete.env, 2.0);
    gym_close(&h);
    gym_step_range(&h, &g_continuous.env, 1.0);
    gym_close(&h);
}

/* ------------------------------------------------------------------- rules */

/* One step of env 0 from (position, velocity) with action; returns the reward. */
static float step_from(gym_run *h, double position, double velocity, double action) {
    set_car(h, 0, position, velocity, 0, 0.0);
    gym_set_action(h, 0, action);
    gym_poison(h);
    gym_step(h);
    return h->io.rewards[0];
}

static void test_rules(void **unused) {
    (void)unused;
    gym_run d, c;
    gym_open(&d, &g_discrete.env, 1);
    gym_open(&c, &g_continuous.env, 1);

    /* The closed form of one step away from every limit (the same float64 operations in the
     * same order as mountaincar.c, so equal to the last bit). */
    double x = -0.3, u = 0.01;
    step_from(&d, x, u, 2.0);
    double want_u = u + (GYM_FORCE + cos(3.0 * x) * (-GYM_GRAVITY));
    assert_true(car_of(&d)->velocity[0] == want_u && car_of(&d)->position[0] == x + want_u);
    step_from(&c, x, u, 0.5);
    want_u = u + (0.5 * GYM_POWER - GYM_GRAVITY * cos(3.0 * x));
    assert_true(car_of(&c)->velocity[0] == (double)(float)want_u);
    assert_true(car_of(&c)->position[0] == (double)(float)(x + want_u));

    /* left wall: the car stops there, with velocity 0 rather than the clipped -0.07 (the
     * continuous state then holds float32(-1.2), which is just below -1.2) */
    for (int vi = 0; vi < 2; vi++) {
        gym_run *h = vi ? &c : &d;
        step_from(h, -1.19, -0.065, vi ? -1.0 : 0.0);
        assert_true(car_of(h)->position[0] == (vi ? (double)(float)GYM_MIN_POSITION : GYM_MIN_POSITION));
        assert_true(car_of(h)->velocity[0] == 0.0);
        assert_true(h->io.obs[0] == -1.2f && h->io.obs[1] == 0.0f);
        /* on the wall moving right: velocity kept */
        step_from(h, GYM_MIN_POSITION, 0.0, vi ? 1.0 : 2.0);
        assert_true(car_of(h)->velocity[0] > 0.0 && car_of(h)->position[0] > GYM_MIN_POSITION);
        /* the speed limit */
        step_from(h, -0.5, 0.0699, vi ? 1.0 : 2.0);
        assert_true(car_of(h)->velocity[0] == (vi ? (double)(float)GYM_MAX_SPEED : GYM_MAX_SPEED));
        step_from(h, 0.0, -0.0699, vi ? -1.0 : 0.0);
        assert_true(car_of(h)->velocity[0] == (vi ? (double)(float)-GYM_MAX_SPEED : -GYM_MAX_SPEED));
        /* the right bound clips the position (and the car terminates there) */
        step_from(h, 0.59, 0.05, vi ? 1.0 : 2.0);
        assert_true(h->io.final_obs[0] == (float)GYM_MAX_POSITION);
        assert_int_equal(h->io.terminated[0], 1);
    }

    /* MountainCar-v0's goal is 0.5 with a non-negative velocity; moving left past it is not a
     * success. */
    step_from(&d, 0.51, -0.001, 0.0);
    assert_int_equal(d.io.terminated[0], 0);
    assert_true(car_of(&d)->position[0] > 0.5 && car_of(&d)->velocity[0] < 0.0);
    assert_true(step_from(&d, 0.46, 0.01, 1.0) == -1.0f);
    assert_int_equal(d.io.terminated[0], 0); /* 0.47 is past the continuous goal, not this one */

    /* MountainCarContinuous-v0: the force is clipped to [-1, 1], the cost is not */
    float r_one = step_from(&c, -0.5, 0.01, 1.0);
    double u_one = car_of(&c)->velocity[0], x_one = car_of(&c)->position[0];
    float r_big = step_from(&c, -0.5, 0.01, 2.5);
    assert_true(car_of(&c)->velocity[0] == u_one && car_of(&c)->position[0] == x_one);
    assert_true(r_one == (float)(-0.1) && r_big == (float)(-0.625));
    float r_neg = step_from(&c, -0.5, 0.01, -3.0);
    double u_neg = car_of(&c)->velocity[0];
    step_from(&c, -0.5, 0.01, -1.0);
    assert_true(car_of(&c)->velocity[0] == u_neg && r_neg == (float)(-0.9));
    /* reaching the goal: +100 minus the cost of the unclipped action */
    float r_goal = step_from(&c, 0.44, 0.02, 4.0);
    assert_int_equal(c.io.terminated[0], 1);
    assert_true(r_goal == (float)(100.0 - 1.6));

    /* Termination is judged on the float64 position before Gymnasium's float32 cast: a car
     * that ends 1e-9 past 0.45 terminates, although its float32 observation reads 0.45f, which
     * is below 0.45. */
    double x0 = 0.4, target = 0.45 + 1e-9;
    double u0 = (target - x0) + GYM_GRAVITY * cos(3.0 * x0); /* action 0: no push */
    step_from(&c, x0, u0, 0.0);
    assert_int_equal(c.io.terminated[0], 1);
    assert_true((double)c.io.final_obs[0] < 0.45 && c.io.final_obs[0] == 0.45f);
    /* and 1e-9 short of the goal does not, though the float32 position is the same */
    step_from(&c, x0, u0 - 2e-9, 0.0);
    assert_int_equal(c.io.terminated[0], 0);
    assert_true(c.io.obs[0] == 0.45f);

    /* the continuous state holds float32 values after a step */
    step_from(&c, -0.512345678901234, 0.001234567890123, 0.3);
    assert_true(car_of(&c)->position[0] == (double)(float)car_of(&c)->position[0]);
    assert_true(car_of(&c)->velocity[0] == (double)(float)car_of(&c)->velocity[0]);
    assert_true(car_of(&c)->position[0] == (double)c.io.obs[0] && car_of(&c)->velocity[0] == (double)c.io.obs[1]);

    /* env definitions */
    assert_string_equal(sk_env_mountaincar.id, "MountainCar-v0");
    assert_int_equal(sk_env_mountaincar.action_space.kind, SK_SPACE_DISCRETE);
    assert_int_equal(sk_env_mountaincar.action_space.num_heads, 1);
    assert_int_equal(sk_env_mountaincar.action_space.head_sizes[0], 3);
    assert_int_equal(sk_env_mountaincar.max_episode_steps, 200);
    assert_true(sk_env_mountaincar.solved_threshold == -110.0);
    assert_string_equal(sk_env_mountaincar_continuous.id, "MountainCarContinuous-v0");
    assert_int_equal(sk_env_mountaincar_continuous.action_space.kind, SK_SPACE_CONTINUOUS);
    assert_int_equal(sk_env_mountaincar_continuous.action_space.dim, 1);
    assert_true(sk_env_mountaincar_continuous.action_space.low[0] == -1.0f);
    assert_true(sk_env_mountaincar_continuous.action_space.high[0] == 1.0f);
    assert_int_equal(sk_env_mountaincar_continuous.max_episode_steps, 999);
    assert_true(sk_env_mountaincar_continuous.solved_threshold == 90.0);
    for (int vi = 0; vi < 2; vi++) {
        const sk_env_def *def = vi ? &sk_env_mountaincar_continuous : &sk_env_mountaincar;
        assert_int_equal(def->obs_size, 2);
        assert_int_equal(def->mask_size, 0);
        assert_int_equal(def->num_log_fields, 2);
        assert_string_equal(def->log_names[0], "episode_return");
        assert_string_equal(def->log_names[1], "episode_length");
    }
    gym_close(&d);
    gym_close(&c);
}

static bool car_use_level(void *state, sk_isa_level level) {
    sk_mountaincar_step_fn step = sk_mountaincar_step_at(level);
    ((sk_mountaincar_state *)state)->step = step;
    return step != NULL;
}

/* Anywhere on the track at any allowed speed, any step count: walls, goals and time limits
 * from the first steps. */
static void car_scatter(gym_run *run, int i, uint64_t *rng) {
    sk_mountaincar_state *s = car_of(run);
    s->position[i] = sk_rng_uniform(rng, -1.2, 0.6);
    s->velocity[i] = sk_rng_uniform(rng, -0.07, 0.07);
    s->elapsed[i] = (int32_t)sk_rng_below(rng, (uint64_t)run->env->max_steps);
}

/* Both variants' vector steps compiled at each ISA level the CPU has: bit for bit the
 * baseline's. */
static void test_levels_match_baseline(void **unused) {
    (void)unused;
    gym_levels_match(&g_discrete.env, car_use_level, car_scatter, 600, 1007 * 2);
    gym_levels_match(&g_continuous.env, car_use_level, car_scatter, 600, 500);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transitions_discrete),
        cmocka_unit_test(test_transitions_continuous),
        GYM_CASE(test_episodes_per_step_discrete, gym_case_episodes_per_step, &g_discrete.env),
        GYM_CASE(test_episodes_per_step_continuous, gym_case_episodes_per_step,
                 &g_continuous.env),
        GYM_CASE(test_episodes_free_running_discrete, gym_case_episodes_free_run,
                 &g_discrete.env),
        GYM_CASE(test_episodes_free_running_continuous, gym_case_episodes_free_run,
                 &g_continuous.env),
        cmocka_unit_test(test_reset_distribution),
        cmocka_unit_test(test_env_streams),
        cmocka_unit_test(test_episode_log),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_step_range),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_levels_match_baseline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
