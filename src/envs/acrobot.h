/* Acrobot-v1, exposed for tests that set states directly. */
#ifndef SK_ACROBOT_H
#define SK_ACROBOT_H

#include "skinner.h"

#include "../core/isa.h"

/* Struct-of-arrays state; double precision, as Gymnasium keeps it after the first step (its
 * reset state is float32, which reset_one reproduces by rounding through float). */
typedef struct sk_acrobot_state sk_acrobot_state;

/* A vector step of envs lo..hi-1 compiled for one ISA level (src/envs/isa/acrobot_step.c). */
typedef void (*sk_acrobot_step_fn)(sk_acrobot_state *s, const sk_env_io *io, int lo, int hi);

struct sk_acrobot_state {
    int num_envs;
    double *theta1, *theta2;   /* (num_envs) joint angles, wrapped to [-pi, pi] */
    double *dtheta1, *dtheta2; /* (num_envs) joint velocities, bounded to 4 pi and 9 pi */
    int32_t *elapsed;          /* (num_envs) steps in the current episode */
    float *episode_return;     /* (num_envs) */
    uint64_t *rng;             /* (num_envs) one stream per env */
    sk_acrobot_step_fn step;   /* the level in use's, picked at create (sk_isa_level_used) */
};

extern const sk_env_def sk_env_acrobot;

/* The scalar reference step (libm sin and cos, one env at a time) that the vector path of
 * sk_env_acrobot.step is tested against, and falls back to when a state is outside the range
 * the vector path supports (acrobot.c). */
void sk_acrobot_step_reference(void *state, const sk_env_io *io, int lo, int hi);

/* The vector step compiled for level, or NULL where this build has no such level (the AVX levels
 * exist on x86-64 only). A test that sets a state's step to another level's must check first
 * that the CPU has it (sk_isa_level_detected). */
sk_acrobot_step_fn sk_acrobot_step_at(sk_isa_level level);

/* The per-level objects behind sk_acrobot_step_at. */
void sk_acrobot_step_baseline(sk_acrobot_state *s, const sk_env_io *io, int lo, int hi);
void sk_acrobot_step_avx2(sk_acrobot_state *s, const sk_env_io *io, int lo, int hi);
void sk_acrobot_step_avx512(sk_acrobot_state *s, const sk_env_io *io, int lo, int hi);

#endif
