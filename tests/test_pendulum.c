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
#include "gym_reference.h"

#include "envs/pendulum.h"

#include <math.h>
#include <stdbool.h>
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

/* What a comparison allows: the one-step tolerances, or the free-running ones. */
typedef struct tolerance {
    double state_rel;  /* next state, relative with an absolute floor of 1 */
    double obs_abs;    /* observations: 1 float ulp, plus this much */
    double reward_abs; /* float rewards: 1 float ulp, plus this much */
    double return_abs; /* the double running return: state_rel relative, or this much */
} tolerance;

static const tolerance g_one_step = {STATE_REL_TOL, 0.0, 0.0, 0.0};
static const tolerance g_free_run = {FREE_RUN_STATE_REL, FREE_RUN_OBS_ABS, FREE_RUN_REWARD_ABS,
                                     FREE_RUN_RETURN_ABS};

/* ------------------------------------------------------------------ harness */

typedef struct harness {
    sk_config *cfg;
    sk_pendulum_state *s;
    int num_envs;
    float *actions;
    sk_env_io io; /* obs, final_obs, rewards, terminated, truncated, episode_log */
} harness;

static void harness_init_cfg(harness *h, int num_envs, sk_config *cfg) {
    memset(h, 0, sizeof *h);
    h->num_envs = num_envs;
    h->cfg = cfg;
    void *state = NULL;
    assert_int_equal(sk_env_pendulum.create(&state, num_envs, h->cfg), SK_OK);
    h->s = state;
    assert_int_equal(h->s->num_envs, num_envs);
    env_io_alloc(&h->io, num_envs, OBS_SIZE, NULL, &h->actions);
}

static void harness_init(harness *h, int num_envs) {
    sk_config *cfg = sk_config_new();
    assert_non_null(cfg);
    harness_init_cfg(h, num_envs, cfg);
}

static void harness_free(harness *h) {
    sk_env_pendulum.destroy(h->s);
    sk_config_free(h->cfg);
    env_io_free(&h->io);
}

static void set_state(harness *h, int i, double theta, double theta_dot, int32_t elapsed,
                      double episode_return) {
    h->s->theta[i] = theta;
    h->s->theta_dot[i] = theta_dot;
    h->s->elapsed[i] = elapsed;
    h->s->episode_return[i] = episode_return;
}

static void poison_outputs(harness *h) { env_io_poison(&h->io, h->num_envs, OBS_SIZE); }

static void step_all(harness *h) { sk_env_pendulum.step(h->s, &h->io, 0, h->num_envs); }

/* --------------------------------------------------------------- comparison */

static double float_ulp(float x) {
    float a = fabsf(x);
    return (double)nextafterf(a, INFINITY) - (double)a;
}

/* The double return the env has summed so far (its rewards before the float cast). */
static void check_return(checker *ck, int row, const char *field, double got, double want,
                         const tolerance *tol) {
    double abs_err = fabs(got - want);
    double rel = test_rel_err(got, want, STATE_ABS_FLOOR);
    if (abs_err > ck->max_return_abs || isnan(abs_err)) ck->max_return_abs = abs_err;
    if (rel > ck->max_return_rel || isnan(rel)) ck->max_return_rel = rel;
    if (!(rel <= tol->state_rel || abs_err <= tol->return_abs))
        mismatch(ck, row, field, "got %.17g, want %.17g (rel err %.3g > %.3g, abs %.3g > %.3g)",
                 got, want, rel, tol->state_rel, abs_err, tol->return_abs);
}

/* A float32 value against a recorded one: within max_ulp float ulps of its float32 cast, or
 * within abs_tol plus max_ulp ulps. Tracks the largest errors in *max_ulp_seen, *max_abs_seen. */
static void check_float32(checker *ck, int row, const char *field, float got, double want_csv,
                          int max_ulp, double abs_tol, int *max_ulp_seen, double *max_abs_seen) {
    float want = (float)want_csv; /* observations: the csv holds a float32 printed exactly */
    int ulp = ulp_distance(got, want);
    double abs_err = fabs((double)got - want_csv);
    if (ulp > *max_ulp_seen) *max_ulp_seen = ulp;
    if (abs_err > *max_abs_seen || isnan(abs_err)) *max_abs_seen = abs_err;
    if (ulp <= max_ulp) return;
    double allowed = abs_tol + max_ulp * float_ulp(want);
    if (!(abs_err <= allowed))
        mismatch(ck, row, field, "got %.9g, want %.17g (%d ulp > %d, abs %.3g > %.3g)",
                 (double)got, want_csv, ulp, max_ulp, abs_err, allowed);
}

static void check_obs_within(checker *ck, int row, const char *field, float got,
                             double want_csv, const tolerance *tol) {
    check_float32(ck, row, field, got, want_csv, OBS_MAX_ULP, tol->obs_abs, &ck->max_obs_ulp,
                  &ck->max_obs_abs);
}

static void check_reward(checker *ck, int row, const char *field, float got, double want,
                         double abs_tol) {
    check_float32(ck, row, field, got, want, REWARD_MAX_ULP, abs_tol, &ck->max_reward_ulp,
                  &ck->max_reward_abs);
}

/* Prints the largest state, return, observation and reward errors, then fails on any
 * mismatch. */
static void checker_finish_rewards(const checker *ck, const char *what) {
    print_message("%s: max state error %.3g abs / %.3g rel; max double-return error %.3g abs / "
                  "%.3g rel; max obs error %.3g abs / %d ulp; max float reward/log error %.3g "
                  "abs / %d ulp; %d mismatches\n",
                  what, ck->max_state_abs, ck->max_state_rel, ck->max_return_abs,
                  ck->max_return_rel, ck->max_obs_abs, ck->max_obs_ulp, ck->max_reward_abs,
                  ck->max_reward_ulp, ck->failures);
    checker_fail_on_mismatches(ck, what);
}

static const char *const g_obs_names[OBS_SIZE] = {"obs[0] cos(theta)", "obs[1] sin(theta)",
                                                   "obs[2] theta_dot"};

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

static void test_transitions(void **unused) {
    (void)unused;
    REQUIRE_SHARED(shared);
    csv_table t;
    csv_load_reference(&t, shared, "Pendulum-v1.transitions.csv");
    assert_int_equal(t.rows, 2000);
    int c_theta = csv_col(&t, "state0"), c_theta_dot = csv_col(&t, "state1");
    int c_next_theta = csv_col(&t, "next_state0"), c_next_theta_dot = csv_col(&t, "next_state1");
    int c_obs[OBS_SIZE];
    csv_cols(&t, "next_obs", OBS_SIZE, c_obs);
    int c_action = csv_col(&t, "action"), c_reward = csv_col(&t, "reward");
    int c_term = csv_col(&t, "terminated");

    checker ck = {.source = "Pendulum-v1.transitions.csv"};
    int saturated_rows = 0, clipped_rows = 0;
    harness h;
    harness_init(&h, 1);
    for (int r = 0; r < t.rows; r++) {
        float action = (float)csv_at(&t, r, c_action);
        set_state(&h, 0, csv_at(&t, r, c_theta), csv_at(&t, r, c_theta_dot), 0, 0.0);
        poison_outputs(&h);
        h.actions[0] = action;
        step_all(&h);

        double want_theta_dot = csv_at(&t, r, c_next_theta_dot);
        clipped_rows += fabsf(action) > 2.0f;
        saturated_rows += fabs(want_theta_dot) == GYM_MAX_SPEED;
        check_int(&ck, r, "csv terminated", csv_at(&t, r, c_term) != 0.0, 0); /* never */
        check_int(&ck, r, "terminated", h.io.terminated[0], 0);
        check_int(&ck, r, "truncated", h.io.truncated[0], 0);
        double want_reward = csv_at(&t, r, c_reward);
        check_reward(&ck, r, "reward", h.io.rewards[0], want_reward, 0.0);
        check_return(&ck, r, "reward (double, episode_return)", h.s->episode_return[0],
                     want_reward, &g_one_step);
        check_state(&ck, r, "theta", h.s->theta[0], csv_at(&t, r, c_next_theta), STATE_REL_TOL);
        check_state(&ck, r, "theta_dot", h.s->theta_dot[0], want_theta_dot, STATE_REL_TOL);
        for (int k = 0; k < OBS_SIZE; k++)
            check_obs_within(&ck, r, g_obs_names[k], h.io.obs[k], csv_at(&t, r, c_obs[k]),
                             &g_one_step);
        check_int(&ck, r, "elapsed", h.s->elapsed[0], 1);
    }
    harness_free(&h);
    print_message("transitions: %d rows, %d with |action| > 2, %d with the speed clipped\n",
                  t.rows, clipped_rows, saturated_rows);
    assert_true(saturated_rows > 0 && clipped_rows > 0); /* the file exercises both clips */
    csv_free(&t);
    checker_finish_rewards(&ck, "one step from recorded states");
}

/* The recorded state: episode_columns.state[THETA], [THETA_DOT]. */
enum { THETA, THETA_DOT };

static void load_episodes(csv_table *t, episode_columns *c) {
    REQUIRE_SHARED(shared);
    csv_load_reference(t, shared, "Pendulum-v1.episodes.csv");
    *c = episode_columns_of(t, 2, OBS_SIZE);
    assert_int_equal(t->rows, 20 * GYM_EPISODE_STEPS);
    assert_int_equal((int)csv_at(t, t->rows - 1, c->episode), 19); /* 20 whole episodes */
}

/* Checks flags, reward, observation and the env's running return of one step against csv row
 * r, given the recorded return up to and including row r. Returns whether the recorded episode
 * ended there. */
static bool check_episode_step(checker *ck, const harness *h, const csv_table *t,
                               const episode_columns *c, int r, double recorded_return,
                               const tolerance *tol) {
    int step_number = (int)csv_at(t, r, c->t) + 1;
    /* Pendulum never terminates */
    check_int(ck, r, "csv terminated", csv_at(t, r, c->terminated) != 0.0, 0);
    bool ended = check_episode_flags(ck, &h->io, t, c, r, GYM_EPISODE_STEPS);
    check_reward(ck, r, "reward", h->io.rewards[0], csv_at(t, r, c->reward), tol->reward_abs);
    const float *obs = ended ? h->io.final_obs : h->io.obs;
    for (int k = 0; k < OBS_SIZE; k++)
        check_obs_within(ck, r, ended ? "final_obs" : "obs", obs[k], csv_at(t, r, c->obs[k]),
                         tol);
    if (ended) {
        /* the log is the float32 cast of the double sum: 1 ulp of the recorded sum */
        check_reward(ck, r, "episode_log[0] (return)", h->io.episode_log[0], recorded_return,
                     tol->return_abs);
        check_int(ck, r, "episode_log[1] (length)", (long)h->io.episode_log[1], step_number);
        check_int(ck, r, "elapsed after autoreset", h->s->elapsed[0], 0);
        check_int(ck, r, "episode_return after autoreset is 0", h->s->episode_return[0] == 0.0,
                  1);
        /* the new episode's first observation is of its fresh state */
        const sk_pendulum_state *s = h->s;
        check_int(ck, r, "reset state in bounds",
                  fabs(s->theta[0]) <= M_PI && fabs(s->theta_dot[0]) <= 1.0, 1);
        check_int(ck, r, "obs after autoreset is the new state's",
                  h->io.obs[0] == (float)cos(s->theta[0]) &&
                      h->io.obs[1] == (float)sin(s->theta[0]) &&
                      h->io.obs[2] == (float)s->theta_dot[0],
                  1);
    } else {
        check_return(ck, r, "episode_return (double)", h->s->episode_return[0], recorded_return,
                     tol);
        check_int(ck, r, "elapsed", h->s->elapsed[0], step_number);
    }
    return ended;
}

static void test_episodes_per_step(void **unused) {
    (void)unused;
    csv_table t;
    episode_columns c;
    load_episodes(&t, &c);
    checker ck = {.source = "Pendulum-v1.episodes.csv"};
    harness h;
    harness_init(&h, 1);
    int truncations = 0, wrapped_rows = 0;
    double recorded_return = 0.0; /* of the current episode, before row r */
    for (int r = 0; r < t.rows; r++) {
        int step = (int)csv_at(&t, r, c.t);
        if (step == 0) recorded_return = 0.0;
        double theta = csv_at(&t, r, c.state[THETA]);
        wrapped_rows += fabs(theta) > M_PI; /* the cost must normalise the angle */
        set_state(&h, 0, theta, csv_at(&t, r, c.state[THETA_DOT]), (int32_t)step, recorded_return);
        poison_outputs(&h);
        h.actions[0] = (float)csv_at(&t, r, c.action);
        step_all(&h);
        recorded_return += csv_at(&t, r, c.reward);
        bool ended = check_episode_step(&ck, &h, &t, &c, r, recorded_return, &g_one_step);
        if (ended) {
            truncations++;
        } else { /* the next row holds the state this step produced */
            check_state(&ck, r, "theta", h.s->theta[0], csv_at(&t, r + 1, c.state[THETA]),
                        STATE_REL_TOL);
            check_state(&ck, r, "theta_dot", h.s->theta_dot[0],
                        csv_at(&t, r + 1, c.state[THETA_DOT]), STATE_REL_TOL);
        }
    }
    harness_free(&h);
    print_message("episodes, per step: %d steps, %d truncations, %d steps from |theta| > pi\n",
                  t.rows, truncations, wrapped_rows);
    assert_int_equal(truncations, 20);
    assert_true(wrapped_rows > 0);
    csv_free(&t);
    checker_finish_rewards(&ck, "per-step replay of 20 episodes");
}

static void test_episodes_free_running(void **unused) {
    (void)unused;
    csv_table t;
    episode_columns c;
    load_episodes(&t, &c);
    checker ck = {.source = "Pendulum-v1.episodes.csv"};
    int episodes = 0;
    double max_theta = 0.0;
    for (int first = 0; first < t.rows;) {
        int last = csv_run_end(&t, first, c.episode);
        assert_int_equal((int)csv_at(&t, first, c.t), 0);
        harness h;
        harness_init(&h, 1);
        set_state(&h, 0, csv_at(&t, first, c.state[THETA]), csv_at(&t, first, c.state[THETA_DOT]),
                  0, 0.0);
        double recorded_return = 0.0;
        for (int r = first; r <= last; r++) {
            poison_outputs(&h);
            h.actions[0] = (float)csv_at(&t, r, c.action);
            step_all(&h);
            recorded_return += csv_at(&t, r, c.reward);
            max_theta = fmax(max_theta, fabs(csv_at(&t, r, c.state[THETA])));
            bool want_end = check_episode_step(&ck, &h, &t, &c, r, recorded_return, &g_free_run);
            bool ended = h.io.terminated[0] || h.io.truncated[0];
            if (!check_episode_end(&ck, r, (int)csv_at(&t, r, c.episode), ended, want_end,
                                   r == last, r - first + 1, last - first + 1))
                break;
            if (!ended) {
                check_state(&ck, r, "theta", h.s->theta[0], csv_at(&t, r + 1, c.state[THETA]),
                            FREE_RUN_STATE_REL);
                check_state(&ck, r, "theta_dot", h.s->theta_dot[0],
                            csv_at(&t, r + 1, c.state[THETA_DOT]), FREE_RUN_STATE_REL);
            }
        }
        harness_free(&h);
        episodes++;
        first = last + 1;
    }
    assert_int_equal(episodes, 20);
    csv_free(&t);
    print_message("free run: max |theta| %.3g (the tolerances assume < %g)\n", max_theta,
                  FREE_RUN_MAX_THETA);
    assert_true(max_theta < FREE_RUN_MAX_THETA);
    checker_finish_rewards(&ck, "free-running replay of 20 episodes");
}

#define RESET_ENVS 10000

static void test_reset_distribution(void **unused) {
    (void)unused;
    harness a, b;
    harness_init(&a, RESET_ENVS);
    harness_init(&b, RESET_ENVS);
    poison_outputs(&a);
    sk_env_pendulum.reset(a.s, &a.io, 0, RESET_ENVS, 42);
    const char *names[2] = {"theta", "theta_dot"};
    const double bound[2] = {M_PI, 1.0};
    double sum[2] = {0}, sum_sq[2] = {0};
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int i = 0; i < RESET_ENVS; i++) {
        assert_int_equal(a.s->elapsed[i], 0);
        assert_true(a.s->episode_return[i] == 0.0);
        double v[2] = {a.s->theta[i], a.s->theta_dot[i]};
        for (int k = 0; k < 2; k++) {
            if (!(v[k] >= -bound[k] && v[k] < bound[k]))
                fail_msg("env %d %s = %.17g is outside [-%g, %g)", i, names[k], v[k], bound[k],
                         bound[k]);
            sum[k] += v[k];
            sum_sq[k] += v[k] * v[k];
            lo[k] = fmin(lo[k], v[k]);
            hi[k] = fmax(hi[k], v[k]);
        }
        const float *obs = a.io.obs + OBS_SIZE * i;
        if (obs[0] != (float)cos(v[0]) || obs[1] != (float)sin(v[0]) || obs[2] != (float)v[1])
            fail_msg("env %d obs (%.9g, %.9g, %.9g) is not (cos, sin, theta_dot) of its state", i,
                     (double)obs[0], (double)obs[1], (double)obs[2]);
    }
    /* U(-b, b): mean 0, variance b^2/3; the mean of 10000 has sd b/173, so b/35 is 5 sd; the
     * sample variance has a relative sd of 0.9%, so 5% is over 5 sd. */
    for (int k = 0; k < 2; k++) {
        double mean = sum[k] / RESET_ENVS, variance = sum_sq[k] / RESET_ENVS - mean * mean;
        double var = bound[k] * bound[k] / 3.0;
        print_message("reset %-9s mean %+.2e variance %.4e (uniform: %.4e) range [%.5f, %.5f]\n",
                      names[k], mean, variance, var, lo[k], hi[k]);
        assert_true(fabs(mean) < bound[k] / 35.0);
        assert_true(fabs(variance / var - 1.0) < 0.05);
        assert_true(lo[k] < -0.999 * bound[k] && hi[k] > 0.999 * bound[k]); /* fills it */
    }

    /* same seed: identical; different seed: different in every env */
    sk_env_pendulum.reset(b.s, &b.io, 0, RESET_ENVS, 42);
    for (int i = 0; i < RESET_ENVS; i++)
        if (a.s->theta[i] != b.s->theta[i] || a.s->theta_dot[i] != b.s->theta_dot[i])
            fail_msg("seed 42 twice: env %d differs", i);
    sk_env_pendulum.reset(b.s, &b.io, 0, RESET_ENVS, 43);
    int same = 0;
    for (int i = 0; i < RESET_ENVS; i++) same += a.s->theta[i] == b.s->theta[i];
    if (same) fail_msg("seeds 42 and 43 give the same theta in %d of %d envs", same, RESET_ENVS);
    harness_free(&a);
    harness_free(&b);
}

static void test_env_streams(void **unused) {
    (void)unused;
    enum { N = 1000 };
    harness a, b;
    harness_init(&a, N);
    harness_init(&b, N);
    sk_env_pendulum.reset(a.s, &a.io, 0, N, 7);
    /* each index has its own stream */
    assert_all_distinct(a.s->theta, N, "reset to the same theta =");

    /* the stream depends on (seed, index) only, not on how the range is split into calls, so
     * threads that reset disjoint ranges reproduce a single-threaded run */
    sk_env_pendulum.reset(b.s, &b.io, 600, N, 7);
    sk_env_pendulum.reset(b.s, &b.io, 0, 1, 7);
    sk_env_pendulum.reset(b.s, &b.io, 1, 600, 7);
    for (int i = 0; i < N; i++)
        if (a.s->theta[i] != b.s->theta[i] || a.s->theta_dot[i] != b.s->theta_dot[i])
            fail_msg("env %d depends on the reset range", i);

    /* autoreset draws from the env's own stream too: envs in the same state that end at the
     * same step start different new episodes */
    for (int i = 0; i < N; i++) {
        set_state(&a, i, 0.5, -0.25, 0, 0.0);
        a.actions[i] = 1.0f;
    }
    for (int steps = 1; steps <= GYM_EPISODE_STEPS; steps++) {
        poison_outputs(&a);
        step_all(&a);
        for (int i = 0; i < N; i++) {
            assert_int_equal(a.io.terminated[i], 0);
            assert_int_equal(a.io.truncated[i], steps == GYM_EPISODE_STEPS);
        }
    }
    assert_all_distinct(a.s->theta, N, "autoreset to the same theta =");
    for (int i = 0; i < N; i++) {
        assert_int_equal(a.s->elapsed[i], 0);
        assert_true(a.s->theta[i] >= -M_PI && a.s->theta[i] < M_PI);
        assert_true(a.s->theta_dot[i] >= -1.0 && a.s->theta_dot[i] < 1.0);
        /* the new first obs */
        assert_true(a.io.obs[OBS_SIZE * i + 0] == (float)cos(a.s->theta[i]));
        assert_true(a.io.obs[OBS_SIZE * i + 2] == (float)a.s->theta_dot[i]);
        for (int k = 0; k < OBS_SIZE; k++) /* every env ended in the same state */
            assert_true(a.io.final_obs[OBS_SIZE * i + k] == a.io.final_obs[k]);
    }
    harness_free(&a);
    harness_free(&b);
}

static void test_episode_log(void **unused) {
    (void)unused;
    harness h;
    harness_init(&h, 1);
    sk_env_pendulum.reset(h.s, &h.io, 0, 1, 3);
    for (int episode = 0; episode < 3; episode++) {
        /* a bang-bang torque, different per episode, in and out of bounds */
        double float_sum = 0.0, rounding_bound = 0.0;
        for (int step = 1; step <= GYM_EPISODE_STEPS; step++) {
            poison_outputs(&h);
            h.actions[0] = (float)((step / 7 + episode) % 2 ? 3.0 - episode : -1.5);
            step_all(&h);
            float reward = h.io.rewards[0];
            assert_true(reward <= 0.0f && reward >= -16.2736044f); /* -(pi^2 + 6.4 + 0.004) */
            float_sum += (double)reward;
            rounding_bound += 0.5 * float_ulp(reward);
            assert_int_equal(h.io.terminated[0], 0);
            assert_int_equal(h.io.truncated[0], step == GYM_EPISODE_STEPS);
            if (step < GYM_EPISODE_STEPS) assert_int_equal(h.s->elapsed[0], step);
            for (int k = 0; k < 2; k++)
                assert_true(fabsf(h.io.obs[k]) <= 1.0f);
            assert_true(fabsf(h.io.obs[2]) <= 8.0f);
        }
        /* the env sums the double rewards; the test sees float ones, each within half an ulp,
         * and the log itself is rounded to float once more */
        rounding_bound += 0.5 * float_ulp(h.io.episode_log[0]);
        double err = fabs((double)h.io.episode_log[0] - float_sum);
        print_message("episode %d: log return %.9g length %g; sum of float rewards %.9g, "
                      "difference %.3g (rounding bound %.3g)\n",
                      episode, (double)h.io.episode_log[0], (double)h.io.episode_log[1], float_sum,
                      err, rounding_bound);
        assert_true(err <= rounding_bound);
        assert_true(h.io.episode_log[1] == (float)GYM_EPISODE_STEPS);
        assert_true(fabsf(h.io.final_obs[0] * h.io.final_obs[0] +
                          h.io.final_obs[1] * h.io.final_obs[1] - 1.0f) < 1e-6f);
        assert_int_equal(h.s->elapsed[0], 0);
        assert_true(h.s->episode_return[0] == 0.0);
    }
    harness_free(&h);
}

static void test_truncation(void **unused) {
    (void)unused;
    /* env 0 at elapsed 199 (its 200th step), env 1 the same state at elapsed 0, env 2 at
     * elapsed 198 (not yet the limit) */
    harness h;
    harness_init(&h, 3);
    sk_env_pendulum.reset(h.s, &h.io, 0, 3, 11);
    set_state(&h, 0, 2.0, -3.0, 199, -500.0);
    set_state(&h, 1, 2.0, -3.0, 0, 0.0);
    set_state(&h, 2, 2.0, -3.0, 198, -500.0);
    poison_outputs(&h);
    for (int i = 0; i < 3; i++) h.actions[i] = 0.5f;
    step_all(&h);

    assert_int_equal(h.io.truncated[0], 1);
    assert_int_equal(h.io.terminated[0], 0);
    assert_true(h.io.rewards[0] == h.io.rewards[1]);
    assert_true(h.io.episode_log[0] == (float)(-500.0 + (double)h.io.rewards[1]) ||
                ulp_distance(h.io.episode_log[0], (float)(-500.0 + (double)h.io.rewards[1])) <= 1);
    assert_true(h.io.episode_log[1] == 200.0f);
    for (int k = 0; k < OBS_SIZE; k++) /* final_obs is the post-step state of the ended episode */
        assert_true(h.io.final_obs[k] == h.io.obs[OBS_SIZE + k]);
    assert_int_equal(h.s->elapsed[0], 0);
    assert_true(h.s->theta[0] >= -M_PI && h.s->theta[0] < M_PI);
    assert_true(h.io.obs[0] == (float)cos(h.s->theta[0]));

    assert_int_equal(h.io.truncated[1], 0);
    assert_int_equal(h.io.terminated[1], 0);
    assert_int_equal(h.s->elapsed[1], 1);
    assert_true(isnan(h.io.episode_log[2]) && isnan(h.io.final_obs[OBS_SIZE]));

    assert_int_equal(h.io.truncated[2], 0); /* step 199 of 200 */
    assert_int_equal(h.s->elapsed[2], 199);
    harness_free(&h);
}

static void test_torque_clipping(void **unused) {
    (void)unused;
    /* out-of-bounds torques act, and cost, exactly as the bound; in-bounds ones are used as is.
     * env k drives the same state with actions[k]. */
    enum { N = 8 };
    const float actions[N] = {2.0f, 2.5f, 100.0f, INFINITY, -2.0f, -2.0001f, -1e30f, 1.25f};
    harness h;
    harness_init(&h, N);
    for (int i = 0; i < N; i++) {
        set_state(&h, i, 0.75, 1.5, 0, 0.0);
        h.actions[i] = actions[i];
    }
    poison_outputs(&h);
    step_all(&h);
    for (int i = 1; i < N - 1; i++) {
        int ref = actions[i] > 0 ? 0 : 4;
        assert_true(h.s->theta_dot[i] == h.s->theta_dot[ref]);
        assert_true(h.s->theta[i] == h.s->theta[ref]);
        assert_true(h.io.rewards[i] == h.io.rewards[ref]);
    }
    assert_true(h.s->theta_dot[0] != h.s->theta_dot[4]);
    /* closed form for the in-bounds torque: thdot' = thdot + (15 sin(th) + 3 u) dt,
     * cost = th^2 + 0.1 thdot^2 + 0.001 u^2 */
    double want_theta_dot = 1.5 + (15.0 * sin(0.75) + 3.0 * 1.25) * 0.05;
    double want_cost = 0.75 * 0.75 + 0.1 * 1.5 * 1.5 + 0.001 * 1.25 * 1.25;
    assert_true(test_rel_err(h.s->theta_dot[N - 1], want_theta_dot, 1.0) < STATE_REL_TOL);
    assert_true(test_rel_err(h.s->theta[N - 1], 0.75 + want_theta_dot * 0.05, 1.0) < STATE_REL_TOL);
    assert_true(ulp_distance(h.io.rewards[N - 1], (float)-want_cost) <= 1);
    harness_free(&h);
}

static void test_speed_clip_and_angle_wrap(void **unused) {
    (void)unused;
    /* env 0: the speed clips at +8 before it moves the angle; env 1 at -8; env 2: theta five
     * turns past the bottom costs like theta - 10 pi (the cost normalises; the state does not) */
    harness h;
    harness_init(&h, 3);
    set_state(&h, 0, M_PI / 2, 7.9, 0, 0.0);
    set_state(&h, 1, -M_PI / 2, -7.9, 0, 0.0);
    set_state(&h, 2, 0.3 + 10.0 * M_PI, 0.0, 0, 0.0);
    h.actions[0] = 2.0f;
    h.actions[1] = -2.0f;
    h.actions[2] = 0.0f;
    poison_outputs(&h);
    step_all(&h);
    assert_true(h.s->theta_dot[0] == 8.0 && h.s->theta[0] == M_PI / 2 + 8.0 * 0.05);
    assert_true(h.s->theta_dot[1] == -8.0 && h.s->theta[1] == -M_PI / 2 - 8.0 * 0.05);
    assert_true(h.io.obs[2] == 8.0f && h.io.obs[OBS_SIZE + 2] == -8.0f);
    /* the cost uses the speed before the step, unclipped: 7.9, not 8 */
    double want_cost0 = (M_PI / 2) * (M_PI / 2) + 0.1 * 7.9 * 7.9 + 0.001 * 4.0;
    assert_true(ulp_distance(h.io.rewards[0], (float)-want_cost0) <= 1);
    double angle = 0.3 + 10.0 * M_PI - 10.0 * M_PI; /* the wrap, up to rounding of 10 pi */
    assert_true(fabs((double)h.io.rewards[2] + angle * angle) < 1e-6);
    assert_true(h.s->theta[2] > 10.0 * M_PI); /* the state keeps its turns */
    harness_free(&h);
}

static void test_gravity_config(void **unused) {
    (void)unused;
    /* from horizontal at rest with no torque, the first step gains 3 g / (2 l) dt of speed */
    sk_config *cfg = sk_config_new();
    assert_non_null(cfg);
    assert_int_equal(sk_config_set(cfg, "env.g", "9.81"), SK_OK);
    harness h;
    harness_init_cfg(&h, 2, cfg);
    assert_true(h.s->gravity == 9.81);
    harness d;
    harness_init(&d, 1);
    assert_true(d.s->gravity == 10.0);
    assert_string_equal(sk_config_get(d.cfg, "env.g"), "10"); /* the resolved default */
    set_state(&h, 0, M_PI / 2, 0.0, 0, 0.0);
    set_state(&d, 0, M_PI / 2, 0.0, 0, 0.0);
    h.actions[0] = h.actions[1] = d.actions[0] = 0.0f;
    step_all(&h);
    step_all(&d);
    assert_true(fabs(h.s->theta_dot[0] - 1.5 * 9.81 * 0.05) < 1e-15);
    assert_true(fabs(d.s->theta_dot[0] - 1.5 * 10.0 * 0.05) < 1e-15);
    harness_free(&h);
    harness_free(&d);

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
    harness h;
    harness_init(&h, 3);
    sk_env_pendulum.reset(h.s, &h.io, 0, 3, 5);
    double before[3][2];
    for (int i = 0; i < 3; i++) {
        before[i][0] = h.s->theta[i];
        before[i][1] = h.s->theta_dot[i];
    }
    poison_outputs(&h);
    for (int i = 0; i < 3; i++) h.actions[i] = 1.0f;
    sk_env_pendulum.step(h.s, &h.io, 1, 2);
    for (int i = 0; i < 3; i += 2) {
        assert_true(h.s->theta[i] == before[i][0] && h.s->theta_dot[i] == before[i][1]);
        assert_int_equal(h.s->elapsed[i], 0);
        assert_int_equal(h.io.terminated[i], 7);
        assert_true(isnan(h.io.rewards[i]));
        for (int k = 0; k < OBS_SIZE; k++) assert_true(isnan(h.io.obs[OBS_SIZE * i + k]));
    }
    assert_true(h.s->theta[1] != before[1][0] && h.s->theta_dot[1] != before[1][1]);
    assert_true(h.io.obs[OBS_SIZE + 0] == (float)cos(h.s->theta[1]));
    assert_true(h.io.obs[OBS_SIZE + 1] == (float)sin(h.s->theta[1]));
    assert_true(h.io.obs[OBS_SIZE + 2] == (float)h.s->theta_dot[1]);
    assert_int_equal(h.s->elapsed[1], 1);
    assert_int_equal(h.io.terminated[1], 0);
    assert_int_equal(h.io.truncated[1], 0);
    harness_free(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_definition),
        cmocka_unit_test(test_transitions),
        cmocka_unit_test(test_episodes_per_step),
        cmocka_unit_test(test_episodes_free_running),
        cmocka_unit_test(test_reset_distribution),
        cmocka_unit_test(test_env_streams),
        cmocka_unit_test(test_episode_log),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_torque_clipping),
        cmocka_unit_test(test_speed_clip_and_angle_wrap),
        cmocka_unit_test(test_gravity_config),
        cmocka_unit_test(test_step_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
