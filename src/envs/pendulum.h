/* Pendulum-v1 and Pendulum-P-v1 (its velocity hidden), exposed for tests that set states
 * directly. */
#ifndef SK_PENDULUM_H
#define SK_PENDULUM_H

#include "skinner.h"

#include "../core/isa.h"

/* Struct-of-arrays state; double precision, as Gymnasium keeps it. theta is not wrapped (only
 * the cost normalises it), so it drifts freely over an episode exactly as Gymnasium's does. */
typedef struct sk_pendulum_state sk_pendulum_state;

/* A vector step of envs lo..hi-1 compiled for one ISA level (src/envs/isa/pendulum_step.c). */
typedef void (*sk_pendulum_step_fn)(sk_pendulum_state *s, const sk_env_io *io, int lo, int hi);

struct sk_pendulum_state {
    int num_envs;
    double gravity;              /* env.g, Gymnasium's g (default 10.0) */
    bool observe_positions;      /* env.observe = positions: obs theta_dot written as 0 */
    double *theta, *theta_dot;   /* (num_envs) angle from upright (rad), angular speed (rad/s) */
    int32_t *elapsed;            /* (num_envs) steps in the current episode */
    double *episode_return;      /* (num_envs) summed in double, as Gymnasium's float64 rewards */
    uint64_t *rng;               /* (num_envs) one stream per env */
    sk_pendulum_step_fn step;    /* the level in use's, picked at create (sk_isa_level_used) */
};

extern const sk_env_def sk_env_pendulum;
/* Pendulum-v1 with env.observe = positions fixed (a value other than positions is refused). */
extern const sk_env_def sk_env_pendulum_p;

/* The scalar reference step (libm sin, cos and fmod, one env at a time) that the vector path of
 * sk_env_pendulum.step is tested against, and falls back to when an angle is beyond
 * SK_VMATH_BOUND (core/vmath.h). */
void sk_pendulum_step_reference(void *state, const sk_env_io *io, int lo, int hi);

/* The vector step compiled for level, or NULL where this build has no such level (the AVX levels
 * exist on x86-64 only). A test that sets a state's step to another level's must check first
 * that the CPU has it (sk_isa_level_detected). */
sk_pendulum_step_fn sk_pendulum_step_at(sk_isa_level level);

/* The per-level objects behind sk_pendulum_step_at. */
void sk_pendulum_step_baseline(sk_pendulum_state *s, const sk_env_io *io, int lo, int hi);
void sk_pendulum_step_avx2(sk_pendulum_state *s, const sk_env_io *io, int lo, int hi);
void sk_pendulum_step_avx512(sk_pendulum_state *s, const sk_env_io *io, int lo, int hi);

#endif
