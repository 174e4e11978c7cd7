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
 * tests/test_envs_simd.c's 300,000 steps.
 */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "mountaincar.h"
#include "render.h"
#include "soa.h"

#include "../core/core.h"
#include "../core/rng.h"
#include "../core/vmath.h"

#include <math.h>

/* Gymnasium's constants (gymnasium/envs/classic_control/mountain_car.py and
 * continuous_mountain_car.py). */
#define MIN_POSITION -1.2
#define MAX_POSITION 0.6
#define MAX_SPEED 0.07
#define GOAL_VELOCITY 0.0
#define GRAVITY 0.0025 /* the slope term: velocity -= GRAVITY * cos(3 * position) */
#define HILL_FREQUENCY 3.0
#define RESET_LOW -0.6
#define RESET_HIGH -0.4
#define OBS_SIZE 2

/* MountainCar-v0 */
#define DISCRETE_FORCE 0.001
#define DISCRETE_GOAL_POSITION 0.5
#define DISCRETE_STEP_REWARD -1.0
#define DISCRETE_MAX_EPISODE_STEPS 200

/* MountainCarContinuous-v0 */
#define CONTINUOUS_MAX_ACTION 1.0
#define CONTINUOUS_MIN_ACTION (-CONTINUOUS_MAX_ACTION) /* -1.0: continuous_velocity's clip
                                                         * relies on the symmetry */
#define CONTINUOUS_POWER 0.0015
#define CONTINUOUS_GOAL_POSITION 0.45
#define CONTINUOUS_GOAL_REWARD 100.0
#define CONTINUOUS_ACTION_COST 0.1
#define CONTINUOUS_MAX_EPISODE_STEPS 999

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
    *out = s;
    return SK_OK;
}

static void mountaincar_destroy(void *state) { sk_soa_destroy(state, g_fields, NUM_FIELDS); }

static inline void write_obs(const sk_mountaincar_state *s, float *obs, int i) {
    obs[0] = (float)s->position[i];
    obs[1] = (float)s->velocity[i];
}

static inline void reset_one(sk_mountaincar_state *s, int i) {
    s->position[i] = sk_rng_uniform(&s->rng[i], RESET_LOW, RESET_HIGH);
    s->velocity[i] = 0.0;
    s->elapsed[i] = 0;
    s->episode_return[i] = 0.0;
}

static void mountaincar_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    sk_mountaincar_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        reset_one(s, i);
        write_obs(s, io->obs + (size_t)i * OBS_SIZE, i);
    }
}

static inline double clamp(double x, double lo, double hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

/* The velocity update of each variant, given cos(3 x); then, common to both, the speed limit,
 * the position clip and the left wall that stops a car still moving left. Shared by the
 * reference and the vector paths so the physics exists once. */
static inline double discrete_velocity(double velocity, int32_t action, double cos_hill) {
    double push = (double)(action - 1) * DISCRETE_FORCE;
    return velocity + (push + cos_hill * (-GRAVITY));
}

/* The force is Python's min(max(a, -1), 1): a NaN action passes through as it does there
 * rather than being replaced by a bound. Written around fabs so the float-to-double conversion
 * of the action feeds every branch: GCC otherwise sinks it into one, where it may trap, and
 * leaves the vector loop scalar. */
static inline double continuous_velocity(double velocity, double action, double cos_hill) {
    double force = fabs(action) > CONTINUOUS_MAX_ACTION ? copysign(CONTINUOUS_MAX_ACTION, action)
                                                        : action;
    return velocity + (force * CONTINUOUS_POWER - GRAVITY * cos_hill);
}

static inline void move(double *position, double *velocity) {
    double new_velocity = clamp(*velocity, -MAX_SPEED, MAX_SPEED);
    double new_position = clamp(*position + new_velocity, MIN_POSITION, MAX_POSITION);
    *velocity = new_position == MIN_POSITION && new_velocity < 0.0 ? 0.0 : new_velocity;
    *position = new_position;
}

/* Reward +100 on reaching the goal, minus 0.1 * action^2 with the UNCLIPPED action. */
static inline double continuous_reward(bool terminated, double action) {
    double goal = terminated ? CONTINUOUS_GOAL_REWARD : 0.0;
    return goal - action * action * CONTINUOUS_ACTION_COST;
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
        write_obs(s, io->final_obs + (size_t)i * OBS_SIZE, i);
        io->episode_log[2 * i + 0] = (float)s->episode_return[i];
        io->episode_log[2 * i + 1] = (float)elapsed;
        reset_one(s, i);
    }
    write_obs(s, io->obs + (size_t)i * OBS_SIZE, i);
}

/* The readable references: libm's cos, one env at a time. */
void sk_mountaincar_step_reference(void *state, const sk_env_io *io, int lo, int hi) {
    sk_mountaincar_state *s = state;
    for (int i = lo; i < hi; i++) {
        double position = s->position[i], velocity = s->velocity[i];
        velocity = discrete_velocity(velocity, io->actions[i], cos(HILL_FREQUENCY * position));
        move(&position, &velocity);
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
        move(&position, &velocity);
        bool terminated = position >= CONTINUOUS_GOAL_POSITION && velocity >= GOAL_VELOCITY;
        double reward = continuous_reward(terminated, action);
        s->position[i] = (double)(float)position; /* Gymnasium keeps this state as float32 */
        s->velocity[i] = (double)(float)velocity;
        finish_step(s, io, i, terminated, reward, CONTINUOUS_MAX_EPISODE_STEPS);
    }
}

/*
 * The vector paths: the same operations, with cos from vmath.h, as branch-free loops over
 * struct-of-arrays that GCC runs on SIMD lanes, the rare episode ends handled after them. The
 * state stays in [-1.2, 0.6], far inside vmath's range; a range with a position beyond it (set
 * by hand, or NaN) falls back to the reference.
 */
#define VECTOR_POSITION_LIMIT (SK_VMATH_BOUND / HILL_FREQUENCY)

/* Logs, resets and writes the first observation of the episodes that ended in lo..hi-1. */
static void finish_episodes(sk_mountaincar_state *s, const sk_env_io *io, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (!io->terminated[i] && !io->truncated[i]) continue;
        float *obs = io->obs + (size_t)i * OBS_SIZE;
        for (int k = 0; k < OBS_SIZE; k++) io->final_obs[(size_t)i * OBS_SIZE + k] = obs[k];
        io->episode_log[2 * i + 0] = (float)s->episode_return[i];
        io->episode_log[2 * i + 1] = (float)s->elapsed[i];
        reset_one(s, i);
        write_obs(s, obs, i);
    }
}

/* The passes after the dynamics, which left the new float64 state in the state arrays:
 * termination, the float32 store of MountainCarContinuous's state (after termination is judged,
 * as Gymnasium does), observations, step counts, truncation, then the episode ends. */
static void finish_vector(sk_mountaincar_state *s, const sk_env_io *io, int lo, int hi,
                          double goal_position, bool float32_state,
                          int32_t max_episode_steps) {
    double *restrict positions = s->position, *restrict velocities = s->velocity;
    uint8_t *restrict terminated = io->terminated, *restrict truncated = io->truncated;
    for (int i = lo; i < hi; i++)
        terminated[i] =
            (uint8_t)((positions[i] >= goal_position) & (velocities[i] >= GOAL_VELOCITY));
    float *restrict obs = io->obs;
    if (float32_state) {
        for (int i = lo; i < hi; i++) {
            float position = (float)positions[i], velocity = (float)velocities[i];
            positions[i] = (double)position;
            velocities[i] = (double)velocity;
            obs[(size_t)i * OBS_SIZE + 0] = position;
            obs[(size_t)i * OBS_SIZE + 1] = velocity;
        }
    } else {
        for (int i = lo; i < hi; i++) {
            obs[(size_t)i * OBS_SIZE + 0] = (float)positions[i];
            obs[(size_t)i * OBS_SIZE + 1] = (float)velocities[i];
        }
    }
    int32_t *restrict elapsed = s->elapsed;
    for (int i = lo; i < hi; i++) elapsed[i] += 1;
    int ended = 0;
    for (int i = lo; i < hi; i++) {
        int trunc = !terminated[i] & (elapsed[i] >= max_episode_steps);
        truncated[i] = (uint8_t)trunc;
        ended |= terminated[i] | trunc;
    }
    if (ended) finish_episodes(s, io, lo, hi);
}

static void discrete_step_vector(sk_mountaincar_state *s, const sk_env_io *io, int lo, int hi) {
    double *restrict positions = s->position, *restrict velocities = s->velocity;
    double *restrict returns = s->episode_return;
    const int32_t *restrict actions = io->actions;
    float *restrict rewards = io->rewards;
    for (int i = lo; i < hi; i++) {
        double position = positions[i], velocity = velocities[i];
        velocity = discrete_velocity(velocity, actions[i], sk_vcos(HILL_FREQUENCY * position));
        move(&position, &velocity);
        positions[i] = position;
        velocities[i] = velocity;
        returns[i] += DISCRETE_STEP_REWARD;
    }
    for (int i = lo; i < hi; i++) rewards[i] = (float)DISCRETE_STEP_REWARD;
    finish_vector(s, io, lo, hi, DISCRETE_GOAL_POSITION, false, DISCRETE_MAX_EPISODE_STEPS);
}

static void continuous_step_vector(sk_mountaincar_state *s, const sk_env_io *io, int lo,
                                   int hi) {
    double *restrict positions = s->position, *restrict velocities = s->velocity;
    double *restrict returns = s->episode_return;
    const float *restrict actions = io->actions_continuous;
    float *restrict rewards = io->rewards;
    for (int i = lo; i < hi; i++) {
        double position = positions[i], velocity = velocities[i];
        double action = (double)actions[i];
        velocity = continuous_velocity(velocity, action, sk_vcos(HILL_FREQUENCY * position));
        move(&position, &velocity);
        positions[i] = position; /* float64 until finish_vector has judged termination */
        velocities[i] = velocity;
    }
    /* A pass of its own: in the loop above, GCC threads the termination test through the
     * clamps' branches into a boolean select it cannot vectorise. */
    for (int i = lo; i < hi; i++) {
        bool terminated = (positions[i] >= CONTINUOUS_GOAL_POSITION) &
                          (velocities[i] >= GOAL_VELOCITY);
        double reward = continuous_reward(terminated, (double)actions[i]);
        rewards[i] = (float)reward;
        returns[i] += reward;
    }
    finish_vector(s, io, lo, hi, CONTINUOUS_GOAL_POSITION, true, CONTINUOUS_MAX_EPISODE_STEPS);
}

static void mountaincar_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_mountaincar_state *s = state;
    if (sk_vrange_ok(s->position, lo, hi, VECTOR_POSITION_LIMIT))
        discrete_step_vector(s, io, lo, hi);
    else sk_mountaincar_step_reference(state, io, lo, hi);
}

static void mountaincar_continuous_step(void *state, const sk_env_io *io, int lo, int hi) {
    sk_mountaincar_state *s = state;
    if (sk_vrange_ok(s->position, lo, hi, VECTOR_POSITION_LIMIT))
        continuous_step_vector(s, io, lo, hi);
    else sk_mountaincar_continuous_step_reference(state, io, lo, hi);
}

static int mountaincar_state_arrays(void *state, sk_env_array *arrays) {
    return sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
}

/* Gymnasium's observation space (both variants): position and the clipped velocity. */
static const float mountaincar_obs_low[OBS_SIZE] = {(float)MIN_POSITION, (float)-MAX_SPEED};
static const float mountaincar_obs_high[OBS_SIZE] = {(float)MAX_POSITION, (float)MAX_SPEED};

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
    .obs_size = OBS_SIZE,
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
    .obs_size = OBS_SIZE,
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
