/*
 * gym_levels_match: an env's vector step at every ISA level this CPU has against its baseline
 * level's, bit for bit (gym_harness.h says what it checks).
 */
#include "gym_harness.h"

#include "core/isa.h"
#include "core/rng.h"

#include <string.h>

static size_t type_size(sk_array_type type) {
    return type == SK_ARRAY_F64 || type == SK_ARRAY_I64 || type == SK_ARRAY_U64 ? 8
           : type == SK_ARRAY_U8                                                ? 1
                                                                                : 4;
}

/* Fails, naming the level, the step and the array, unless a and b hold the same bytes. */
static void expect_same(const void *a, const void *b, size_t bytes, const char *what,
                        sk_isa_level level, int step) {
    if (memcmp(a, b, bytes) == 0) return;
    fail_msg("%s at step %d: %s differs from the baseline level's", sk_isa_level_name(level), step,
             what);
}

/* The state arrays, observations, final observations, logs, rewards and flags of a and b. */
static void expect_runs_same(const gym_run *a, const gym_run *b, sk_isa_level level, int step) {
    const sk_env_def *def = a->env->def;
    sk_env_array xs[SK_MAX_ENV_ARRAYS], ys[SK_MAX_ENV_ARRAYS];
    int count = def->state_arrays(a->state, xs);
    assert_int_equal(def->state_arrays(b->state, ys), count);
    for (int k = 0; k < count; k++)
        expect_same(xs[k].data, ys[k].data, (size_t)xs[k].count * type_size(xs[k].type),
                    xs[k].name, level, step);
    size_t n = (size_t)a->num_envs, obs = n * (size_t)def->obs_size * sizeof(float);
    expect_same(a->io.obs, b->io.obs, obs, "obs", level, step);
    expect_same(a->io.final_obs, b->io.final_obs, obs, "final_obs", level, step);
    expect_same(a->io.episode_log, b->io.episode_log,
                n * (size_t)def->num_log_fields * sizeof(float), "episode_log", level, step);
    expect_same(a->io.rewards, b->io.rewards, n * sizeof(float), "rewards", level, step);
    expect_same(a->io.terminated, b->io.terminated, n, "terminated", level, step);
    expect_same(a->io.truncated, b->io.truncated, n, "truncated", level, step);
}

/* One action per env, the same for both runs: uniform over the choices, or over the box
 * stretched 1.5 times about its middle, so that the clips are exercised. */
static void draw_actions(gym_run *a, gym_run *b, uint64_t *rng) {
    const sk_action_space *space = &a->env->def->action_space;
    for (int i = 0; i < a->num_envs; i++) {
        double action = space->kind == SK_SPACE_DISCRETE
                            ? (double)sk_rng_below(rng, (uint64_t)space->head_sizes[0])
                            : sk_rng_uniform(rng, 1.25 * space->low[0] - 0.25 * space->high[0],
                                             1.25 * space->high[0] - 0.25 * space->low[0]);
        gym_set_action(a, i, action);
        gym_set_action(b, i, action);
    }
}

void gym_levels_match(const gym_env *env, gym_use_level use_level, gym_scatter scatter,
                      int steps, long min_ends) {
    enum { N = 1000 + 7 }; /* neither a multiple of 8 nor of 16 */
    int levels_compared = 0;
    for (int level = SK_ISA_AVX2; level <= (int)sk_isa_level_detected(); level++) {
        gym_run a, b;
        gym_open(&a, env, N);
        gym_open(&b, env, N);
        if (!use_level(a.state, (sk_isa_level)level)) { /* a build without it (not x86-64) */
            gym_close(&a);
            gym_close(&b);
            continue;
        }
        assert_true(use_level(b.state, SK_ISA_BASELINE));
        gym_reset(&a, 11);
        gym_reset(&b, 11);
        uint64_t rng = 2;
        if (scatter) {
            for (int i = 0; i < N; i++) {
                uint64_t draw = rng;
                scatter(&a, i, &draw);
                scatter(&b, i, &rng);
            }
        }
        long ends = 0;
        for (int t = 0; t < steps; t++) {
            draw_actions(&a, &b, &rng);
            /* a lo that is not vector-aligned, as a worker's slice may be */
            env->def->step(a.state, &a.io, 0, 3);
            env->def->step(a.state, &a.io, 3, N);
            env->def->step(b.state, &b.io, 0, 3);
            env->def->step(b.state, &b.io, 3, N);
            expect_runs_same(&a, &b, (sk_isa_level)level, t);
            for (int i = 0; i < N; i++) ends += a.io.terminated[i] | a.io.truncated[i];
        }
        print_message("%s %s: %d steps of %d envs, %ld episode ends, bit-identical to baseline\n",
                      env->def->id, sk_isa_level_name((sk_isa_level)level), steps, N, ends);
        assert_true(ends >= min_ends);
        gym_close(&a);
        gym_close(&b);
        levels_compared++;
    }
    if (levels_compared == 0)
        print_message("SKIPPED in part: %s has only the baseline level\n", sk_cpu_model());
}
