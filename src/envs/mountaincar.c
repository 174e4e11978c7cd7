/*
 * MountainCar-v0 and MountainCarContinuous-v0 (Moore 1990) with Gymnasium 1.x's exact rules.
 *
 * Both: a car in the valley y = sin(3x) starts at rest at x ~ U(-0.6, -0.4); each step adds the
 * push and the slope's pull -0.0025 cos(3x) to the velocity, clips it to +-0.07, adds the new
 * velocity to the position, clips that to [-1.2, 0.6], and stops the car (velocity 0) when it
 * sits on the left wall while still moving left. The episode terminates when the car reaches
 * the goal with a non-negative velocity.
 *
 * MountainCar-v0: 3 actions, push (action - 1) * 0.001, goal x >= 0.5, reward -1 on every
 * step, truncation after 200 steps; state float64 throughout.
 *
 * MountainCarContinuous-v0: one action, clipped to [-1, 1] for the push force * 0.0015, goal
 * x >= 0.45, reward +100 on reaching the goal minus 0.1 * action^2 with the UNCLIPPED action,
 * truncation after 999 steps. Gymnasium resets this state in float64 but stores the stepped
 * state as float32 (termination is judged on the float64 values before that cast), so the
 * state arrays hold float32 values after every step.
 *
 * The arithmetic is Gymnasium's, operation for operation, so the reference steps (libm's cos,
 * one env at a time) reproduce its recorded float64 states bit for bit. That needs fused
 * multiply-adds off: -march=native with GNU C contracts a * b + c into one FMA, which rounds
 * once where Python rounds twice. The envs' .step runs the same operations on SIMD lanes with
 * core/vmath.h's cos, within 1 ulp of libm's: a cos that differs moves the velocity by ~1e-19,
 * usually less than its own last bit, and never the float32 state of the continuous variant in
 * tests/test_envs_simd.c's 300,000 steps. That vector step is compiled once per ISA level
 * (src/envs/isa/mountaincar_step.c, the physics shared with the references through
 * mountaincar_shared.h); create picks the level in use's, and every level's results are bit for
 * bit the same.
 */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "mountaincar_shared.h"
#include "render.h"
#include "soa.h"

#include "../core/core.h"

/* The per-env arrays of the state, for allocation and checkpoints. */
static const sk_soa_field g_fields[] = {
    SK_SOA_FIELD(sk_mountaincar_state, position, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_mountaincar_state, velocity, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_mountaincar_state, elapsed, SK_ARRAY_I32),
    SK_SOA_FIELD(sk_mountaincar_state, episode_return, SK_ARRAY_F64),
    SK_SOA_FIELD(sk_mountaincar_state, rng, SK_ARRAY_U64),
};
#define NUM_FIELDS ((int)(sizeof g_fields / sizeof g_fields[0]))

static sk_status mountaincar_create(void **out, int num_envs, const sk_config *cfg) {
    (void)cfg;
    sk_mountaincar_state *s = sk_soa_create(sizeof *s, g_fields, NUM_FIELDS, num_envs, "MountainCar");
    if (!s) return SK_ERR_NOMEM;
    s->num_envs = num_envs;
    s->step = sk_mountaincar_step_at(sk_isa_level_used());
    if (!s->step) s->step = sk_mountaincar_step_baseline;
    *out = s;
    return SK_OK;
}

static void mountaincar_destroy(void *state) { sk_soa_destroy(state, g_fields, NUM_FIELDS); }

static void mountaincar_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    sk_mountaincar_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        mc_reset_one(s, i);
        mc_write_obs(s, io->obs + (size_t)i * MC_OBS_SIZE, i);
    }
}

/* Everything after the dynamics, common to both variants: reward, flags, the episode log, and
 * on an episode end the final observation and an in-place reset. */
static inline void finish_step(sk_mountaincar_state *s, const sk_env_io *io, int i,
                               bool terminated, double reward, int32_t max_episode_steps) {
    int32_t elapsed = ++s->elapsed[i];
    bool truncated = !terminated && elapsed >= max_episode_steps;
    io->rewards[i] = (float)reward;
    s->episode_return[i] += reward;
    io->terminated[i] = terminated;
    io->truncated[i] = truncated;
    if (terminated || truncated) {
        mc_write_obs(s, io->final_obs + (size_t)i * MC_OBS_SIZE, i);
        io->episode_log[2 * i + 0] = (float)s->episode_return[i];
        io->episode_log[2 * i + 1] = (float)elapsed;
        mc_reset_one(s, i);
    }
    mc_write_obs(s, io->obs + (size_t)i * MC_OBS_SIZE, i);
}

/* The readable references: libm's cos, one env at a time. */
void sk_mountaincar_step_reference(void *state, const sk_env_io *io, int lo, int hi) {
    sk_mountaincar_state *s = state;
    for (int i = lo; i < hi; i++) {
        double position = s->position[i], velocity = s->velocity[i];
        velocity = discrete_velocity(velocity, io->actions[i], cos(HILL_FREQUENCY * position));
        mc_move(&position, &velocity);
        s->position[i] = position;
        s->velocity[i] = velocity;
        bool terminated = position >= DISCRETE_GOAL_POSITION && velocity >= GOAL_VELOCITY;
        finish_step(s, io, i, terminated, DISCRETE_STEP_REWARD, DISCRETE_MAX_EPISODE_STEPS);
    }
}

void sk_mountaincar_continuous_step_reference(void *state, const sk_env_io *io, int lo, int hi) {
    sk_mountaincar_state *s = state;
    for (int i = lo; i < hi; i++) {
        double position = s->position[i], velocity = s->velocity[i];
        double action = (double)io->actions_continuous[i]; /* dim 1 */
        velocity = continuous_velocity(velocity, action, cos(HILL_FREQUENCY * position));
        mc_move(&position, &velocity);
        bool terminated = position >= CONTINUOUS_GOAL_POSITION && velocity >= GOAL_VELOCITY;
        double reward = continuous_reward(terminated, action);
        s->position[i] = (double)(float)position; /* Gymnasium keeps this state as float32 */
        s->velocity[i] = (double)(float)velocity;
        finish_step(s, io, i, terminated, reward, CONTINUOUS_MAX_EPISODE_STEPS);
    }
}

/* The vector steps of the level in use, picked once per env state at create. */
static void mountaincar_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_mountaincar_state *s = state;
    s->step(s, io, lo, hi, false);
}

static void mountaincar_continuous_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_mountaincar_state *s = state;
    s->step(s, io, lo, hi, true);
}

sk_mountaincar_step_fn sk_mountaincar_step_at(sk_isa_level level) {
    switch (level) {
    case SK_ISA_BASELINE: return sk_mountaincar_step_baseline;
#if defined(__x86_64__)
    case SK_ISA_AVX2: return sk_mountaincar_step_avx2;
    case SK_ISA_AVX512: return sk_mountaincar_step_avx512;
#endif
    default: return NULL;
    }
}

static int mountaincar_state_arrays(void *state, sk_env_array *arrays) {
    return sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
}

/* Gymnasium's observation space (both variants): position and the clipped velocity. */
static const float mountaincar_obs_low[MC_OBS_SIZE] = {(float)MIN_POSITION, (float)-MAX_SPEED};
static const float mountaincar_obs_high[MC_OBS_SIZE] = {(float)MAX_POSITION, (float)MAX_SPEED};

static const sk_env_extras mountaincar_extras = {
    .preset = "mountaincar",
    .render_width = SK_MOUNTAINCAR_RENDER_WIDTH,
    .render_height = SK_MOUNTAINCAR_RENDER_HEIGHT,
    .render = sk_mountaincar_render,
};

const sk_env_def sk_env_mountaincar = {
    .id = "MountainCar-v0",
    .alias = "mountaincar",
    .summary = "drive an underpowered car up a hill by rocking it (3 discrete pushes)",
    .obs_size = MC_OBS_SIZE,
    .obs_low = mountaincar_obs_low,
    .obs_high = mountaincar_obs_high,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {3}},
    .mask_size = 0,
    .max_episode_steps = DISCRETE_MAX_EPISODE_STEPS,
    .solved_threshold = -110.0,
    .num_log_fields = 2,
    .log_names = {"episode_return", "episode_length"},
    .create = mountaincar_create,
    .state_arrays = mountaincar_state_arrays,
    .destroy = mountaincar_destroy,
    .reset = mountaincar_reset,
    .step = mountaincar_step,
    .extras = &mountaincar_extras,
};

static const sk_env_extras mountaincar_continuous_extras = {
    .preset = "mountaincar_continuous",
    .render_width = SK_MOUNTAINCAR_RENDER_WIDTH,
    .render_height = SK_MOUNTAINCAR_RENDER_HEIGHT,
    .render = sk_mountaincar_render,
};

const sk_env_def sk_env_mountaincar_continuous = {
    .id = "MountainCarContinuous-v0",
    .alias = "mountaincar_continuous",
    .summary = "drive an underpowered car up a hill with a continuous force, paying for effort",
    .obs_size = MC_OBS_SIZE,
    .obs_low = mountaincar_obs_low,
    .obs_high = mountaincar_obs_high,
    .action_space = {.kind = SK_SPACE_CONTINUOUS,
                     .dim = 1,
                     .low = {(float)CONTINUOUS_MIN_ACTION},
                     .high = {(float)CONTINUOUS_MAX_ACTION}},
    .mask_size = 0,
    .max_episode_steps = CONTINUOUS_MAX_EPISODE_STEPS,
    .solved_threshold = 90.0,
    .num_log_fields = 2,
    .log_names = {"episode_return", "episode_length"},
    .create = mountaincar_create,
    .state_arrays = mountaincar_state_arrays,
    .destroy = mountaincar_destroy,
    .reset = mountaincar_reset,
    .step = mountaincar_continuous_step,
    .extras = &mountaincar_continuous_extras,
};
