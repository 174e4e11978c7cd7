/*
 * CartPole-v1 at env.precision = float32: against Gymnasium 1.4.0's recorded float64
 * transitions and episodes (../shared/reference/gymnasium), against skinner's float64 path from
 * the same states, its fallback, its checkpoint arrays and its config key.
 *
 * The tolerance is derived, per transition, from float32 arithmetic. With u = 2^-24 (the unit
 * roundoff of float), every rounding of a value v errs by at most u |v|. An expression computed
 * with at most n roundings along any path from its inputs then errs by at most
 *     gamma_n * f_abs,   gamma_n = n u / (1 - n u)
 * where f_abs is the expression evaluated on the absolute values of its inputs, constants and
 * sin/cos, with every subtraction turned into an addition (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., sections 3.1-3.3); a division counts its denominator's
 * roundings too, which is sound here because the denominator 2/3 - 0.045 cos^2 never cancels.
 * Counting roundings on the longest path of the float32 step in cartpole.c (x_dot'):
 *   casting the recorded state to float          1 per input (theta_dot^2: 2)
 *   sin, cos: kernel <= 1 ulp from libm, libm <= 1 ulp, the rounded argument: 3 each
 *   temp = F/M + c1 (thetadot^2 sin)             2 products, 1 sum, 2 rounded constants: 10
 *   numerator g sin - cos temp                   + 3 (one constant): 15
 *   denominator 4l/3 - c2 (cos cos)              cos twice (6) + 2 products, 1 sum, 2 constants: 11
 *   thetaacc                                      15 + 11 + 1 = 27
 *   xacc = temp - c1 (thetaacc cos)              27 + 3 (cos) + 2 products + 1 constant + 1 sum: 34
 *   x_dot' = x_dot + tau xacc                    + 1 constant + 1 product + 1 sum: 37
 * theta_dot' takes 30 and x', theta' 5, so N_ROUNDINGS = 40 covers every coordinate: a bound of
 * gamma_40 = 2.4e-6 times each coordinate's f_abs. Gymnasium's own float64 rounding (~1e-16) is
 * far below it. The tests print the largest error / bound they see (0.06-0.12: the bound is a
 * worst case over signs of errors that mostly cancel), so a wrong constant, sign or missing term
 * (errors of 1e-3 relative or more) fails while honest float rounding cannot.
 *
 * Termination compares the float state with the float thresholds (2.4f, 0.20943952f). A flag may
 * then differ from Gymnasium's only where the recorded next state lies within that state's
 * bound plus the threshold's own rounding of the threshold: such a transition is not resolvable
 * in float32, is counted and printed, and every other flag must match exactly.
 */
#include "gym_reference.h"

#include "core/rng.h"
#include "envs/cartpole.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define N_ROUNDINGS 40
#define UNIT_ROUNDOFF 0x1.0p-24

/* Gymnasium's constants (gymnasium/envs/classic_control/cartpole.py), for f_abs. */
#define GYM_GRAVITY 9.8
#define GYM_MASS_CART 1.0
#define GYM_MASS_POLE 0.1
#define GYM_TOTAL_MASS (GYM_MASS_CART + GYM_MASS_POLE)
#define GYM_HALF_LENGTH 0.5
#define GYM_POLE_MASS_LENGTH (GYM_MASS_POLE * GYM_HALF_LENGTH)
#define GYM_FORCE_MAG 10.0
#define GYM_TAU 0.02
#define GYM_X_THRESHOLD 2.4
#define GYM_THETA_THRESHOLD (12.0 * 2.0 * M_PI / 360.0)

static double gamma_n(int n) { return n * UNIT_ROUNDOFF / (1.0 - n * UNIT_ROUNDOFF); }

/* The bound on each coordinate of one float32 step from `state`: gamma_40 * f_abs. */
static void step_bound(const double state[4], double bound[4]) {
    double sin_abs = fabs(sin(state[2])), cos_abs = fabs(cos(state[2]));
    double x_dot = fabs(state[1]), theta_dot = fabs(state[3]);
    double temp = GYM_FORCE_MAG / GYM_TOTAL_MASS +
                  GYM_POLE_MASS_LENGTH / GYM_TOTAL_MASS * theta_dot * theta_dot * sin_abs;
    double denominator = GYM_HALF_LENGTH * (4.0 / 3.0 - GYM_MASS_POLE * cos_abs * cos_abs /
                                                            GYM_TOTAL_MASS);
    double thetaacc = (GYM_GRAVITY * sin_abs + cos_abs * temp) / denominator;
    double xacc = temp + GYM_POLE_MASS_LENGTH / GYM_TOTAL_MASS * thetaacc * cos_abs;
    double f_abs[4] = {fabs(state[0]) + GYM_TAU * x_dot, x_dot + GYM_TAU * xacc,
                       fabs(state[2]) + GYM_TAU * theta_dot, theta_dot + GYM_TAU * thetaacc};
    for (int k = 0; k < 4; k++) bound[k] = gamma_n(N_ROUNDINGS) * f_abs[k];
}

/* Whether a float32 step could flag termination differently from float64 at `next` (the
 * float64 next state) given the step's bound: some coordinate is that close to its threshold. */
static bool termination_unresolvable(const double next[4], const double bound[4]) {
    double x_margin = bound[0] + fabs((double)(float)GYM_X_THRESHOLD - GYM_X_THRESHOLD);
    double theta_margin =
        bound[2] + fabs((double)(float)GYM_THETA_THRESHOLD - GYM_THETA_THRESHOLD);
    return fabs(fabs(next[0]) - GYM_X_THRESHOLD) <= x_margin ||
           fabs(fabs(next[2]) - GYM_THETA_THRESHOLD) <= theta_margin;
}

/* ------------------------------------------------------------------ harness */

typedef struct harness {
    sk_config *cfg;
    sk_cartpole_state *s;
    int num_envs;
    int32_t *actions;
    sk_env_io io;
} harness;

static void harness_init(harness *h, int num_envs, const char *precision) {
    memset(h, 0, sizeof *h);
    h->num_envs = num_envs;
    h->cfg = sk_config_new();
    assert_int_equal(sk_config_set(h->cfg, "env.precision", precision), SK_OK);
    void *state = NULL;
    assert_int_equal(sk_env_cartpole.create(&state, num_envs, h->cfg), SK_OK);
    h->s = state;
    env_io_alloc(&h->io, num_envs, 4, &h->actions, NULL);
}

static void harness_free(harness *h) {
    sk_env_cartpole.destroy(h->s);
    sk_config_free(h->cfg);
    env_io_free(&h->io);
}

static void set_state32(harness *h, int i, const double state[4], int32_t elapsed) {
    h->s->x32[i] = (float)state[0];
    h->s->x_dot32[i] = (float)state[1];
    h->s->theta32[i] = (float)state[2];
    h->s->theta_dot32[i] = (float)state[3];
    h->s->elapsed[i] = elapsed;
}

static void get_state32(const harness *h, int i, double state[4]) {
    state[0] = h->s->x32[i];
    state[1] = h->s->x_dot32[i];
    state[2] = h->s->theta32[i];
    state[3] = h->s->theta_dot32[i];
}

static const char *const g_state_names[4] = {"x", "x_dot", "theta", "theta_dot"};

/* The largest error / bound seen, and how many flags were not resolvable in float32. */
typedef struct tally {
    double max_ratio;
    int unresolvable, compared;
} tally;

/* One coordinate (state or observation) against its float64 value and bound. */
static void check_coord(checker *ck, tally *ta, int row, const char *field, double got,
                        double want, double bound) {
    double err = fabs(got - want);
    if (err / bound > ta->max_ratio || isnan(err)) ta->max_ratio = err / bound;
    if (err > ck->max_state_abs || isnan(err)) ck->max_state_abs = err;
    ta->compared++;
    if (!(err <= bound))
        mismatch(ck, row, field, "got %.9g, want %.17g (err %.3g > bound %.3g)", got, want, err,
                 bound);
}

/* Env i's terminated flag against the float64 one, allowing a difference only where the
 * float64 next state is within reach of a threshold. */
static void check_terminated(checker *ck, tally *ta, int row, bool got, bool want,
                             const double next[4], const double bound[4]) {
    if (got == want) return;
    if (termination_unresolvable(next, bound)) {
        ta->unresolvable++;
        print_message("row %d: terminated %d vs float64's %d at x = %.9g, theta = %.9g, within "
                      "float32's reach of a threshold\n",
                      row, got, want, next[0], next[2]);
        return;
    }
    mismatch(ck, row, "terminated", "got %d, want %d", got, want);
}

/* -------------------------------------------------------------------- tests */

static void test_transitions(void **unused) {
    (void)unused;
    REQUIRE_SHARED(shared);
    csv_table t;
    csv_load_reference(&t, shared, "CartPole-v1.transitions.csv");
    int c_state[4], c_next[4];
    csv_cols(&t, "state", 4, c_state);
    csv_cols(&t, "next_state", 4, c_next);
    int c_action = csv_col(&t, "action"), c_term = csv_col(&t, "terminated");
    checker ck = {.source = "CartPole-v1.transitions.csv", .csv_lines = true};
    tally ta = {0};
    harness h;
    harness_init(&h, 1, "float32");
    for (int r = 0; r < t.rows; r++) {
        double state[4], next[4], bound[4], got[4] = {0};
        for (int k = 0; k < 4; k++) {
            state[k] = csv_at(&t, r, c_state[k]);
            next[k] = csv_at(&t, r, c_next[k]);
        }
        step_bound(state, bound);
        set_state32(&h, 0, state, 0);
        env_io_poison(&h.io, 1, 4);
        h.actions[0] = (int32_t)csv_at(&t, r, c_action);
        sk_env_cartpole.step(h.s, &h.io, 0, 1);
        bool want_term = csv_at(&t, r, c_term) != 0.0;
        check_terminated(&ck, &ta, r, h.io.terminated[0], want_term, next, bound);
        check_int(&ck, r, "truncated", h.io.truncated[0], 0);
        check_float(&ck, r, "reward", h.io.rewards[0], 1.0);
        /* the state that ended is final_obs; otherwise obs and the state itself */
        const float *obs = h.io.terminated[0] ? h.io.final_obs : h.io.obs;
        if (!h.io.terminated[0]) get_state32(&h, 0, got);
        for (int k = 0; k < 4; k++) {
            check_coord(&ck, &ta, r, g_state_names[k], obs[k], next[k], bound[k]);
            if (!h.io.terminated[0])
                check_coord(&ck, &ta, r, g_state_names[k], got[k], next[k], bound[k]);
        }
    }
    harness_free(&h);
    print_message("float32 transitions: %d rows, %d coordinates within gamma_%d f_abs (max error "
                  "/ bound %.3g), %d flags unresolvable in float32\n",
                  t.rows, ta.compared, N_ROUNDINGS, ta.max_ratio, ta.unresolvable);
    assert_true(ta.unresolvable <= 2); /* a few rows at most sit within ~1e-6 of a threshold */
    csv_free(&t);
    checker_finish(&ck, "float32, one step from recorded states");
}

/* Every step of the 20 recorded episodes, from the recorded state: flags, the truncation at
 * 500 steps, the episode log and the observations, so episode boundaries are Gymnasium's. */
static void test_episodes_per_step(void **unused) {
    (void)unused;
    REQUIRE_SHARED(shared);
    csv_table t;
    csv_load_reference(&t, shared, "CartPole-v1.episodes.csv");
    episode_columns c = episode_columns_of(&t, 4, 4);
    checker ck = {.source = "CartPole-v1.episodes.csv", .csv_lines = true};
    tally ta = {0};
    harness h;
    harness_init(&h, 1, "float32");
    int terminations = 0, truncations = 0;
    for (int r = 0; r < t.rows; r++) {
        double state[4], bound[4], next[4];
        for (int k = 0; k < 4; k++) state[k] = csv_at(&t, r, c.state[k]);
        step_bound(state, bound);
        int step_number = (int)csv_at(&t, r, c.t) + 1;
        set_state32(&h, 0, state, step_number - 1);
        env_io_poison(&h.io, 1, 4);
        h.actions[0] = (int32_t)csv_at(&t, r, c.action);
        sk_env_cartpole.step(h.s, &h.io, 0, 1);
        bool ended = check_episode_flags(&ck, &h.io, &t, &c, r, 500);
        check_float(&ck, r, "reward", h.io.rewards[0], csv_at(&t, r, c.reward));
        const float *obs = ended ? h.io.final_obs : h.io.obs;
        /* the recorded next observation is float(next state): add its rounding */
        for (int k = 0; k < 4; k++) {
            next[k] = csv_at(&t, r, c.obs[k]);
            check_coord(&ck, &ta, r, g_state_names[k], obs[k], next[k],
                        bound[k] + UNIT_ROUNDOFF * fabs(next[k]));
        }
        if (ended) {
            check_float(&ck, r, "episode_log[0] (return)", h.io.episode_log[0], step_number);
            check_float(&ck, r, "episode_log[1] (length)", h.io.episode_log[1], step_number);
            check_int(&ck, r, "elapsed after autoreset", h.s->elapsed[0], 0);
        }
        terminations += h.io.terminated[0] == 1;
        truncations += h.io.truncated[0] == 1;
    }
    harness_free(&h);
    print_message("float32 episodes, per step: %d steps, %d terminations, %d truncations, max "
                  "error / bound %.3g\n",
                  t.rows, terminations, truncations, ta.max_ratio);
    assert_true(terminations > 0 && truncations > 0);
    csv_free(&t);
    checker_finish(&ck, "float32, per-step replay of 20 episodes");
}

/* float32 against the float64 path on 1000 envs for 400 steps of random actions, the float32
 * state set from the float64 one before every step: the same bound per transition, the same
 * flags, and the same episode ends, logs and autoresets wherever the flags agree. */
static void test_against_float64(void **unused) {
    (void)unused;
    enum { N = 1000, STEPS = 400 };
    harness f64, f32;
    harness_init(&f64, N, "float64");
    harness_init(&f32, N, "float32");
    sk_env_cartpole.reset(f64.s, &f64.io, 0, N, 42);
    sk_env_cartpole.reset(f32.s, &f32.io, 0, N, 42);
    for (int i = 0; i < N; i++) { /* some reach the limit */
        f64.s->elapsed[i] = 480 + i % 20;
        f64.s->episode_return[i] = (float)f64.s->elapsed[i];
    }
    checker ck = {.source = "the float64 path"};
    tally ta = {0};
    uint64_t rng = 9;
    int episodes = 0, truncations = 0;
    for (int t = 0; t < STEPS; t++) {
        double bounds[N][4];
        for (int i = 0; i < N; i++) {
            double state[4] = {f64.s->x[i], f64.s->x_dot[i], f64.s->theta[i], f64.s->theta_dot[i]};
            step_bound(state, bounds[i]);
            set_state32(&f32, i, state, f64.s->elapsed[i]);
            f64.actions[i] = f32.actions[i] = (int32_t)sk_rng_below(&rng, 2);
        }
        sk_env_cartpole.step(f64.s, &f64.io, 0, N);
        sk_env_cartpole.step(f32.s, &f32.io, 0, N);
        for (int i = 0; i < N; i++) {
            int row = t * N + i;
            bool ended64 = f64.io.terminated[i] || f64.io.truncated[i];
            const float *final64 = &f64.io.final_obs[4 * i], *obs64 = &f64.io.obs[4 * i];
            const float *obs32 = f32.io.terminated[i] || f32.io.truncated[i]
                                     ? &f32.io.final_obs[4 * i]
                                     : &f32.io.obs[4 * i];
            double next[4];
            for (int k = 0; k < 4; k++) next[k] = ended64 ? final64[k] : obs64[k];
            check_terminated(&ck, &ta, row, f32.io.terminated[i], f64.io.terminated[i], next,
                             bounds[i]);
            if (f32.io.terminated[i] != f64.io.terminated[i]) continue;
            check_int(&ck, row, "truncated", f32.io.truncated[i], f64.io.truncated[i]);
            for (int k = 0; k < 4; k++)
                check_coord(&ck, &ta, row, g_state_names[k], obs32[k], next[k],
                            bounds[i][k] + UNIT_ROUNDOFF * fabs(next[k]));
            if (ended64) {
                episodes++;
                truncations += f64.io.truncated[i];
                check_float(&ck, row, "episode_log[0]", f32.io.episode_log[2 * i],
                            f64.io.episode_log[2 * i]);
                check_float(&ck, row, "episode_log[1]", f32.io.episode_log[2 * i + 1],
                            f64.io.episode_log[2 * i + 1]);
                check_int(&ck, row, "elapsed after autoreset", f32.s->elapsed[i], 0);
                for (int k = 0; k < 4; k++) /* a fresh start, the first observation */
                    if (!(fabsf(f32.io.obs[4 * i + k]) <= 0.05f))
                        mismatch(&ck, row, "autoreset", "obs[%d] = %g", k,
                                 (double)f32.io.obs[4 * i + k]);
            }
        }
    }
    print_message("float32 vs float64, %d steps x %d envs: %d episodes ended (%d truncated), max "
                  "error / bound %.3g, %d flags unresolvable in float32\n",
                  STEPS, N, episodes, truncations, ta.max_ratio, ta.unresolvable);
    assert_true(episodes > 1000 && truncations > 0);
    assert_true(ta.unresolvable <= 5);
    harness_free(&f64);
    harness_free(&f32);
    checker_finish(&ck, "float32 against float64");
}

/* Two float32 batches of num_envs, reset with their seeds. */
static void float32_pair(harness *a, harness *b, int num_envs, uint64_t seed_a, uint64_t seed_b) {
    harness_init(a, num_envs, "float32");
    harness_init(b, num_envs, "float32");
    sk_env_cartpole.reset(a->s, &a->io, 0, num_envs, seed_a);
    sk_env_cartpole.reset(b->s, &b->io, 0, num_envs, seed_b);
}

/* A theta beyond the float kernels' range sends its chunk (here the whole range) to the libm
 * float32 step. */
static void test_out_of_range_falls_back(void **unused) {
    (void)unused;
    enum { N = 64 };
    harness vec, ref;
    float32_pair(&vec, &ref, N, 3, 3);
    vec.s->theta32[17] = ref.s->theta32[17] = 2.5f;
    for (int i = 0; i < N; i++) vec.actions[i] = ref.actions[i] = i & 1;
    sk_env_cartpole.step(vec.s, &vec.io, 0, N);
    sk_cartpole_step_reference(ref.s, &ref.io, 0, N);
    assert_memory_equal(vec.s->theta_dot32, ref.s->theta_dot32, N * sizeof(float));
    assert_memory_equal(vec.io.obs, ref.io.obs, N * 4 * sizeof(float));
    assert_memory_equal(vec.io.terminated, ref.io.terminated, N);
    assert_int_equal(vec.io.terminated[17], 1);
    harness_free(&vec);
    harness_free(&ref);
}

/* The state arrays (what a checkpoint saves) restore a run exactly, and name float arrays. */
static void test_state_arrays_round_trip(void **unused) {
    (void)unused;
    enum { N = 100 };
    harness a, b;
    float32_pair(&a, &b, N, 5, 6);
    for (int t = 0; t < 37; t++) sk_env_cartpole.step(a.s, &a.io, 0, N);
    sk_env_array arrays_a[SK_MAX_ENV_ARRAYS], arrays_b[SK_MAX_ENV_ARRAYS];
    int count = sk_env_cartpole.state_arrays(a.s, arrays_a);
    assert_int_equal(sk_env_cartpole.state_arrays(b.s, arrays_b), count);
    const char *names[] = {"x", "x_dot", "theta", "theta_dot", "elapsed", "rng"};
    const sk_array_type types[] = {SK_ARRAY_F32, SK_ARRAY_F32, SK_ARRAY_F32, SK_ARRAY_F32,
                                   SK_ARRAY_I32, SK_ARRAY_U64};
    const size_t sizes[] = {4, 4, 4, 4, 4, 8};
    assert_int_equal(count, 6);
    for (int k = 0; k < count; k++) {
        assert_string_equal(arrays_a[k].name, names[k]);
        assert_int_equal(arrays_a[k].type, types[k]);
        memcpy(arrays_b[k].data, arrays_a[k].data, N * sizes[k]);
    }
    memcpy(b.io.obs, a.io.obs, N * 4 * sizeof(float));
    uint64_t rng = 1;
    for (int t = 0; t < 200; t++) {
        for (int i = 0; i < N; i++) a.actions[i] = b.actions[i] = (int32_t)sk_rng_below(&rng, 2);
        sk_env_cartpole.step(a.s, &a.io, 0, N);
        sk_env_cartpole.step(b.s, &b.io, 0, N);
        assert_memory_equal(a.io.obs, b.io.obs, N * 4 * sizeof(float));
        assert_memory_equal(a.io.terminated, b.io.terminated, N);
        assert_memory_equal(a.io.truncated, b.io.truncated, N);
    }
    harness_free(&a);
    harness_free(&b);
}

/* Every ISA level's step this CPU can run (the AVX-512 kernel at avx512, the loops vectorised
 * 8 wide at avx2) and the baseline level's give bit-identical runs from the same seed: states,
 * observations, final observations, logs and flags, over many episodes, with a range whose
 * length is neither a multiple of 16 nor of the chunk. The env states pick their level's step
 * at create; here each is set explicitly, so the test checks every level whatever SKINNER_ISA
 * says. */
static void test_levels_match_baseline(void **unused) {
    (void)unused;
    enum { N = 1000 + 7, STEPS = 1500 };
    int levels_compared = 0;
    for (int level = SK_ISA_AVX2; level <= (int)sk_isa_level_detected(); level++) {
        sk_cartpole_step_fn step = sk_cartpole_step_at((sk_isa_level)level);
        if (!step) continue; /* a build without the level (not x86-64) */
        harness a, b;
        float32_pair(&a, &b, N, 11, 11);
        a.s->step = step;
        uint64_t rng = 2;
        long ends = 0;
        for (int t = 0; t < STEPS; t++) {
            for (int i = 0; i < N; i++)
                a.actions[i] = b.actions[i] = (int32_t)sk_rng_below(&rng, 2);
            /* a lo that is not 16-aligned, as a worker's slice may be */
            sk_env_cartpole.step(a.s, &a.io, 0, 3);
            sk_env_cartpole.step(a.s, &a.io, 3, N);
            sk_cartpole_step_portable(b.s, &b.io, 0, 3);
            sk_cartpole_step_portable(b.s, &b.io, 3, N);
            assert_memory_equal(a.s->x32, b.s->x32, N * sizeof(float));
            assert_memory_equal(a.s->x_dot32, b.s->x_dot32, N * sizeof(float));
            assert_memory_equal(a.s->theta32, b.s->theta32, N * sizeof(float));
            assert_memory_equal(a.s->theta_dot32, b.s->theta_dot32, N * sizeof(float));
            assert_memory_equal(a.s->elapsed, b.s->elapsed, N * sizeof(int32_t));
            assert_memory_equal(a.s->rng, b.s->rng, N * sizeof(uint64_t));
            assert_memory_equal(a.io.obs, b.io.obs, N * 4 * sizeof(float));
            assert_memory_equal(a.io.final_obs, b.io.final_obs, N * 4 * sizeof(float));
            assert_memory_equal(a.io.episode_log, b.io.episode_log,
                                N * ENV_LOG_FIELDS * sizeof(float));
            assert_memory_equal(a.io.rewards, b.io.rewards, N * sizeof(float));
            assert_memory_equal(a.io.terminated, b.io.terminated, N);
            assert_memory_equal(a.io.truncated, b.io.truncated, N);
            for (int i = 0; i < N; i++) ends += a.io.terminated[i] | a.io.truncated[i];
        }
        print_message("%s: %ld episode ends compared with baseline\n",
                      sk_isa_level_name((sk_isa_level)level), ends);
        assert_true(ends > N * 10);
        harness_free(&a);
        harness_free(&b);
        levels_compared++;
    }
    if (levels_compared == 0)
        print_message("SKIPPED in part: %s has only the baseline level\n", sk_cpu_model());
}

static void test_precision_key(void **unused) {
    (void)unused;
    sk_config *cfg = sk_config_new();
    void *state = NULL;
    assert_int_equal(sk_env_cartpole.create(&state, 4, cfg), SK_OK); /* float64 by default */
    assert_int_equal(((sk_cartpole_state *)state)->precision, SK_CARTPOLE_FLOAT64);
    assert_null(((sk_cartpole_state *)state)->x32);
    sk_env_cartpole.destroy(state);
    assert_int_equal(sk_config_set(cfg, "env.precision", "float16"), SK_OK);
    assert_int_not_equal(sk_env_cartpole.create(&state, 4, cfg), SK_OK);
    const char *message = sk_last_error();
    print_message("env.precision = float16: %s\n", message);
    assert_non_null(strstr(message, "env.precision"));
    assert_non_null(strstr(message, "float64, float32"));
    sk_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transitions),
        cmocka_unit_test(test_episodes_per_step),
        cmocka_unit_test(test_against_float64),
        cmocka_unit_test(test_out_of_range_falls_back),
        cmocka_unit_test(test_state_arrays_round_trip),
        cmocka_unit_test(test_levels_match_baseline),
        cmocka_unit_test(test_precision_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
