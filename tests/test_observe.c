/*
 * env.observe = positions: CartPole-v1 and Pendulum-v1 with their velocities hidden, and the
 * envs that fix it, CartPole-P-v1 and Pendulum-P-v1. A hidden-velocity env is stepped beside the
 * full env from the same seed with the same actions, through every path that writes
 * observations (the table's step, which takes the vector and AVX-512 paths, the scalar
 * reference, and CartPole's portable float32 loops, at both of CartPole's precisions). At every
 * step its observation must be the full one's with the velocity entries +0.0f and every other
 * entry bit for bit the same; final_obs of an ended episode follows the same rule; rewards,
 * flags and episode logs are the full env's. The env counts are not multiples of 16, so the
 * AVX-512 pass, its odd last pair of groups and the portable tail all run.
 */
#include "gym_reference.h"

#include "envs/cartpole.h"
#include "envs/pendulum.h"
#include "envs/registry.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define NUM_ENVS 1013 /* 2 chunks of CartPole's float32 step: 512, then 31 groups of 16 and 5 */
#define NUM_STEPS 600 /* 3 Pendulum truncations; CartPole's random episodes end every ~20 steps */
#define SEED 7
#define ACTION_SEED 11
#define PENDULUM_ACTION_RANGE 2.5 /* past the torque limit of 2, so clipping runs too */
#define MAX_OBS_SIZE 4

typedef void (*step_fn)(void *state, const sk_env_io *io, int lo, int hi);

/* One env batch of a compared pair. */
typedef struct side {
    const sk_env_def *def;
    sk_config *cfg;
    void *state;
    sk_env_io io;
    int32_t *actions;
    float *actions_continuous;
} side;

/* A comparison: the full env, the hidden one, and the path they are stepped through. */
typedef struct variant {
    const char *name;
    const sk_env_def *full_def;
    const sk_env_def *hidden_def;
    const char *precision;      /* env.precision for both, or NULL */
    const char *full_observe;   /* env.observe for the full side, or NULL (the default) */
    const char *hidden_observe; /* env.observe for the hidden side, or NULL (the table's) */
    step_fn step;               /* NULL: the table's step */
    bool velocity[MAX_OBS_SIZE];
} variant;

static void set_key(sk_config *cfg, const char *key, const char *value) {
    if (value) assert_int_equal(sk_config_set(cfg, key, value), SK_OK);
}

static void side_init(side *sd, const sk_env_def *def, const char *precision, const char *observe) {
    memset(sd, 0, sizeof *sd);
    sd->def = def;
    sd->cfg = sk_config_new();
    assert_non_null(sd->cfg);
    set_key(sd->cfg, "env.precision", precision);
    set_key(sd->cfg, "env.observe", observe);
    if (def->create(&sd->state, NUM_ENVS, sd->cfg) != SK_OK)
        fail_msg("%s: create failed: %s", def->id, sk_last_error());
    bool discrete = def->action_space.kind == SK_SPACE_DISCRETE;
    env_io_alloc(&sd->io, NUM_ENVS, def->obs_size, discrete ? &sd->actions : NULL,
                 discrete ? NULL : &sd->actions_continuous);
}

static void side_free(side *sd) {
    sd->def->destroy(sd->state);
    sk_config_free(sd->cfg);
    env_io_free(&sd->io);
}

static uint32_t bits_of(float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

typedef struct tally {
    const char *variant;
    long mismatches, nonzero_velocities, ends;
} tally;

/* hidden[k] against full[k], or against +0.0f where k is a velocity: bit for bit. */
static void compare_obs(tally *t, const variant *v, int obs_size, const char *buffer, int step,
                        int env, const float *full, const float *hidden) {
    for (int k = 0; k < obs_size; k++) {
        float want = v->velocity[k] ? 0.0f : full[k];
        if (v->velocity[k] && full[k] != 0.0f) t->nonzero_velocities++;
        if (bits_of(hidden[k]) == bits_of(want)) continue;
        if (t->mismatches++ < MAX_PRINTED_MISMATCHES)
            print_error("%s: step %d env %d %s[%d]: got %.9g (0x%08x), want %.9g (0x%08x)\n",
                        t->variant, step, env, buffer, k, (double)hidden[k], bits_of(hidden[k]),
                        (double)want, bits_of(want));
    }
}

static void compare_same(tally *t, const char *field, int step, int env, float full,
                         float hidden) {
    if (bits_of(full) == bits_of(hidden)) return;
    if (t->mismatches++ < MAX_PRINTED_MISMATCHES)
        print_error("%s: step %d env %d %s: got %.9g, full env's %.9g\n", t->variant, step, env,
                    field, (double)hidden, (double)full);
}

/* Everything the step wrote, for every env; step -1 is the reset. */
static void compare_step(tally *t, const variant *v, const side *full, const side *hidden,
                         int step) {
    int obs_size = full->def->obs_size;
    for (int i = 0; i < NUM_ENVS; i++) {
        size_t row = (size_t)i * (size_t)obs_size;
        compare_obs(t, v, obs_size, "obs", step, i, full->io.obs + row, hidden->io.obs + row);
        if (step < 0) continue;
        compare_same(t, "reward", step, i, full->io.rewards[i], hidden->io.rewards[i]);
        compare_same(t, "terminated", step, i, full->io.terminated[i], hidden->io.terminated[i]);
        compare_same(t, "truncated", step, i, full->io.truncated[i], hidden->io.truncated[i]);
        if (!(full->io.terminated[i] | full->io.truncated[i])) continue;
        t->ends++;
        compare_obs(t, v, obs_size, "final_obs", step, i, full->io.final_obs + row,
                    hidden->io.final_obs + row);
        for (int f = 0; f < ENV_LOG_FIELDS; f++)
            compare_same(t, "episode_log", step, i, full->io.episode_log[ENV_LOG_FIELDS * i + f],
                         hidden->io.episode_log[ENV_LOG_FIELDS * i + f]);
    }
}

static void run_variant(const variant *v) {
    side full, hidden;
    side_init(&full, v->full_def, v->precision, v->full_observe);
    side_init(&hidden, v->hidden_def, v->precision, v->hidden_observe);
    step_fn step = v->step ? v->step : v->full_def->step;
    tally t = {.variant = v->name};
    full.def->reset(full.state, &full.io, 0, NUM_ENVS, SEED);
    hidden.def->reset(hidden.state, &hidden.io, 0, NUM_ENVS, SEED);
    compare_step(&t, v, &full, &hidden, -1);
    uint64_t rng = sk_rng_seed(ACTION_SEED, 0);
    for (int s = 0; s < NUM_STEPS; s++) {
        for (int i = 0; i < NUM_ENVS; i++) {
            if (full.actions) {
                full.actions[i] = hidden.actions[i] = (int32_t)sk_rng_below(&rng, 2);
            } else {
                full.actions_continuous[i] = hidden.actions_continuous[i] = (float)sk_rng_uniform(
                    &rng, -PENDULUM_ACTION_RANGE, PENDULUM_ACTION_RANGE);
            }
        }
        env_io_poison(&full.io, NUM_ENVS, full.def->obs_size);
        env_io_poison(&hidden.io, NUM_ENVS, hidden.def->obs_size);
        step(full.state, &full.io, 0, NUM_ENVS);
        step(hidden.state, &hidden.io, 0, NUM_ENVS);
        compare_step(&t, v, &full, &hidden, s);
    }
    print_message("%s: %ld episode ends, %ld nonzero velocities hidden, %ld mismatches\n", v->name,
                  t.ends, t.nonzero_velocities, t.mismatches);
    side_free(&full);
    side_free(&hidden);
    if (t.mismatches) fail_msg("%s: %ld mismatches", v->name, t.mismatches);
    /* the comparison saw real velocities and real episode ends */
    assert_true(t.nonzero_velocities > (long)NUM_ENVS * NUM_STEPS / 2);
    assert_true(t.ends > NUM_ENVS);
}

#define CARTPOLE_VELOCITIES {false, true, false, true}
#define PENDULUM_VELOCITIES {false, false, true}

static void test_cartpole_positions(void **unused) {
    (void)unused;
    const sk_env_def *full = &sk_env_cartpole, *p = &sk_env_cartpole_p;
    const variant variants[] = {
        {"float64 step, CartPole-v1 env.observe = positions", full, full, NULL, NULL, "positions",
         NULL, CARTPOLE_VELOCITIES},
        {"float64 step, CartPole-P-v1", full, p, "float64", "full", NULL, NULL,
         CARTPOLE_VELOCITIES},
        {"float64 reference, CartPole-P-v1", full, p, NULL, NULL, NULL,
         sk_cartpole_step_reference, CARTPOLE_VELOCITIES},
        {"float32 step, CartPole-v1 env.observe = positions", full, full, "float32", NULL,
         "positions", NULL, CARTPOLE_VELOCITIES},
        {"float32 step, CartPole-P-v1", full, p, "float32", NULL, "positions", NULL,
         CARTPOLE_VELOCITIES},
        {"float32 reference (libm), CartPole-P-v1", full, p, "float32", NULL, NULL,
         sk_cartpole_step_reference, CARTPOLE_VELOCITIES},
        {"float32 portable, CartPole-P-v1", full, p, "float32", NULL, NULL,
         sk_cartpole_step_portable, CARTPOLE_VELOCITIES},
    };
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) run_variant(&variants[k]);
}

static void test_pendulum_positions(void **unused) {
    (void)unused;
    const sk_env_def *full = &sk_env_pendulum, *p = &sk_env_pendulum_p;
    const variant variants[] = {
        {"step, Pendulum-v1 env.observe = positions", full, full, NULL, NULL, "positions", NULL,
         PENDULUM_VELOCITIES},
        {"step, Pendulum-P-v1", full, p, NULL, "full", NULL, NULL, PENDULUM_VELOCITIES},
        {"reference, Pendulum-P-v1", full, p, NULL, NULL, "positions", sk_pendulum_step_reference,
         PENDULUM_VELOCITIES},
    };
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) run_variant(&variants[k]);
}

/* The -P table: found by id and alias, the full table's spaces, limits and functions (no copy
 * of the dynamics), its own create and preset, and a preset file that exists. */
static void check_hidden_table(const sk_env_def *full, const sk_env_def *p, const char *id,
                               const char *alias, const char *preset) {
    assert_ptr_equal(sk_env_find(id), p);
    assert_ptr_equal(sk_env_find(alias), p);
    assert_string_equal(p->id, id);
    assert_string_equal(p->alias, alias);
    char why[256];
    if (!sk_env_validate(p, why, sizeof why)) fail_msg("%s: %s", id, why);
    bool listed = false;
    for (const sk_env_def *const *env = sk_env_list(); *env; env++) listed |= *env == p;
    assert_true(listed);

    assert_int_equal(p->obs_size, full->obs_size);
    assert_memory_equal(&p->action_space, &full->action_space, sizeof p->action_space);
    assert_int_equal(p->mask_size, full->mask_size);
    assert_int_equal(p->max_episode_steps, full->max_episode_steps);
    assert_true(p->solved_threshold == full->solved_threshold);
    assert_int_equal(p->num_log_fields, full->num_log_fields);
    for (int k = 0; k < p->num_log_fields; k++)
        assert_string_equal(p->log_names[k], full->log_names[k]);
    assert_ptr_equal(p->step, full->step);
    assert_ptr_equal(p->reset, full->reset);
    assert_ptr_equal(p->destroy, full->destroy);
    assert_ptr_equal(p->state_arrays, full->state_arrays);
    assert_ptr_not_equal(p->create, full->create);

    assert_string_equal(sk_env_extras_of(p)->preset, preset);
    char path[4096];
    snprintf(path, sizeof path, "%s/configs/%s.ini", SKINNER_SOURCE_DIR, preset);
    if (access(path, R_OK) != 0) fail_msg("no preset %s", path);
}

static void test_hidden_tables(void **unused) {
    (void)unused;
    check_hidden_table(&sk_env_cartpole, &sk_env_cartpole_p, "CartPole-P-v1", "cartpole-p",
                       "cartpole_p");
    check_hidden_table(&sk_env_pendulum, &sk_env_pendulum_p, "Pendulum-P-v1", "pendulum-p",
                       "pendulum_p");
    assert_ptr_equal(sk_env_find("CARTPOLE-P-V1"), &sk_env_cartpole_p); /* case-insensitive */
}

/* create refuses value for env.observe with a message naming the key and what it accepts. */
static void expect_refused(const sk_env_def *def, const char *value, const char *accepted) {
    sk_config *cfg = sk_config_new();
    assert_non_null(cfg);
    set_key(cfg, "env.observe", value);
    void *state = NULL;
    sk_status status = def->create(&state, 4, cfg);
    const char *message = sk_last_error();
    print_message("%s, env.observe = %s: %s\n", def->id, value, message);
    if (status == SK_OK) def->destroy(state);
    assert_int_equal(status, SK_ERR_INVALID);
    assert_non_null(strstr(message, "env.observe"));
    assert_non_null(strstr(message, value));
    assert_non_null(strstr(message, accepted));
    sk_config_free(cfg);
}

/* create accepts value, and hides the velocities exactly when want_positions. */
static void expect_observe(const sk_env_def *def, const char *value, bool want_positions) {
    sk_config *cfg = sk_config_new();
    assert_non_null(cfg);
    set_key(cfg, "env.observe", value);
    void *state = NULL;
    if (def->create(&state, 4, cfg) != SK_OK)
        fail_msg("%s, env.observe = %s: %s", def->id, value ? value : "(unset)", sk_last_error());
    bool positions = def == &sk_env_cartpole || def == &sk_env_cartpole_p
                         ? ((sk_cartpole_state *)state)->observe_positions
                         : ((sk_pendulum_state *)state)->observe_positions;
    assert_int_equal(positions, want_positions);
    def->destroy(state);
    sk_config_free(cfg);
}

static void test_observe_key(void **unused) {
    (void)unused;
    const sk_env_def *full_defs[] = {&sk_env_cartpole, &sk_env_pendulum};
    const sk_env_def *p_defs[] = {&sk_env_cartpole_p, &sk_env_pendulum_p};
    for (int e = 0; e < 2; e++) {
        expect_observe(full_defs[e], NULL, false);
        expect_observe(full_defs[e], "full", false);
        expect_observe(full_defs[e], "positions", true);
        expect_refused(full_defs[e], "velocities", "full, positions");
        expect_refused(full_defs[e], "", "full, positions");
        expect_observe(p_defs[e], NULL, true);
        expect_observe(p_defs[e], "positions", true);
        /* the -P env's observation is fixed: the full one is CartPole-v1's or Pendulum-v1's */
        expect_refused(p_defs[e], "full", "one of: positions");
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cartpole_positions),
        cmocka_unit_test(test_pendulum_positions),
        cmocka_unit_test(test_hidden_tables),
        cmocka_unit_test(test_observe_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
