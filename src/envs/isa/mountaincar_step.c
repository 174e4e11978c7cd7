/*
 * MountainCar's vector steps (both variants) at one ISA level: #included by
 * src/envs/isa/level_*.c, each compiled with its level's -march and -ffp-contract=off
 * (CMakeLists.txt), so the loops run at the level's width and every lane rounds as the
 * baseline's do: the results are bit for bit the same at every level. src/envs/mountaincar.c
 * picks one per env state at create (sk_mountaincar_step_at).
 */
#include "../mountaincar_shared.h"

/*
 * The vector paths: the same operations, with cos from vmath.h, as branch-free loops over
 * struct-of-arrays that GCC runs on SIMD lanes, the rare episode ends handled after them. The
 * state stays in [-1.2, 0.6], far inside vmath's range; a range with a position beyond it (set
 * by hand, or NaN) falls back to the reference.
 */
#define VECTOR_POSITION_LIMIT (SK_VMATH_BOUND / HILL_FREQUENCY)

/* Logs, resets and writes the first observation of the episodes that ended in lo..hi-1. */
static inline void mc_finish_episodes(sk_mountaincar_state *s, const sk_env_io *io, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (!io->terminated[i] && !io->truncated[i]) continue;
        float *obs = io->obs + (size_t)i * MC_OBS_SIZE;
        for (int k = 0; k < MC_OBS_SIZE; k++) io->final_obs[(size_t)i * MC_OBS_SIZE + k] = obs[k];
        io->episode_log[2 * i + 0] = (float)s->episode_return[i];
        io->episode_log[2 * i + 1] = (float)s->elapsed[i];
        mc_reset_one(s, i);
        mc_write_obs(s, obs, i);
    }
}

/* The passes after the dynamics, which left the new float64 state in the state arrays:
 * termination, the float32 store of MountainCarContinuous's state (after termination is judged,
 * as Gymnasium does), observations, step counts, truncation, then the episode ends. */
static void mc_finish_vector(sk_mountaincar_state *s, const sk_env_io *io, int lo, int hi,
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
            obs[(size_t)i * MC_OBS_SIZE + 0] = position;
            obs[(size_t)i * MC_OBS_SIZE + 1] = velocity;
        }
    } else {
        for (int i = lo; i < hi; i++) {
            obs[(size_t)i * MC_OBS_SIZE + 0] = (float)positions[i];
            obs[(size_t)i * MC_OBS_SIZE + 1] = (float)velocities[i];
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
    if (ended) mc_finish_episodes(s, io, lo, hi);
}

static void discrete_step_vector(sk_mountaincar_state *s, const sk_env_io *io, int lo, int hi) {
    double *restrict positions = s->position, *restrict velocities = s->velocity;
    double *restrict returns = s->episode_return;
    const int32_t *restrict actions = io->actions;
    float *restrict rewards = io->rewards;
    for (int i = lo; i < hi; i++) {
        double position = positions[i], velocity = velocities[i];
        velocity = discrete_velocity(velocity, actions[i], sk_vcos(HILL_FREQUENCY * position));
        mc_move(&position, &velocity);
        positions[i] = position;
        velocities[i] = velocity;
        returns[i] += DISCRETE_STEP_REWARD;
    }
    for (int i = lo; i < hi; i++) rewards[i] = (float)DISCRETE_STEP_REWARD;
    mc_finish_vector(s, io, lo, hi, DISCRETE_GOAL_POSITION, false, DISCRETE_MAX_EPISODE_STEPS);
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
        mc_move(&position, &velocity);
        positions[i] = position; /* float64 until mc_finish_vector has judged termination */
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
    mc_finish_vector(s, io, lo, hi, CONTINUOUS_GOAL_POSITION, true, CONTINUOUS_MAX_EPISODE_STEPS);
}

#ifndef SK_ISA_CAT
#define SK_ISA_CAT2(a, b) a##b
#define SK_ISA_CAT(a, b) SK_ISA_CAT2(a, b)
#endif

void SK_ISA_CAT(sk_mountaincar_step_, SK_ISA_SUFFIX)(sk_mountaincar_state *s, const sk_env_io *io,
                                                     int lo, int hi, bool continuous) {
    if (!sk_vrange_ok(s->position, lo, hi, VECTOR_POSITION_LIMIT)) {
        if (continuous) sk_mountaincar_continuous_step_reference(s, io, lo, hi);
        else sk_mountaincar_step_reference(s, io, lo, hi);
    } else if (continuous) {
        continuous_step_vector(s, io, lo, hi);
    } else {
        discrete_step_vector(s, io, lo, hi);
    }
}
