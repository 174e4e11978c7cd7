/* CartPole-v1 and CartPole-P-v1 (its velocities hidden), exposed for tests that set states
 * directly. */
#ifndef SK_CARTPOLE_H
#define SK_CARTPOLE_H

#include "skinner.h"

#include "../core/isa.h"

/* env.precision: float64 (the default) keeps the state in double as Gymnasium does and
 * follows it to the last bits; float32 keeps it in float, 16 envs to an AVX-512 vector where the
 * CPU has them. */
typedef enum sk_cartpole_precision { SK_CARTPOLE_FLOAT64, SK_CARTPOLE_FLOAT32 } sk_cartpole_precision;

/* Struct-of-arrays state. Only the arrays of the chosen precision are allocated; the others
 * are NULL. */
typedef struct sk_cartpole_state sk_cartpole_state;

/* A vector step of envs lo..hi-1 compiled for one ISA level (src/envs/isa/cartpole_step.c). */
typedef void (*sk_cartpole_step_fn)(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi);

struct sk_cartpole_state {
    int num_envs;
    sk_cartpole_precision precision;
    bool observe_positions; /* env.observe = positions: obs velocities written as 0 */
    double *x, *x_dot, *theta, *theta_dot;     /* (num_envs) float64 */
    float *episode_return;                     /* (num_envs) float64 */
    float *x32, *x_dot32, *theta32, *theta_dot32; /* (num_envs) float32 */
    int32_t *elapsed;                          /* (num_envs) steps in the current episode */
    uint64_t *rng;                             /* (num_envs) one stream per env */
    sk_cartpole_step_fn step; /* the level in use's, picked at create (sk_isa_level_used) */
};

extern const sk_env_def sk_env_cartpole;
/* CartPole-v1 with env.observe = positions fixed (a value other than positions is refused). */
extern const sk_env_def sk_env_cartpole_p;

/* The scalar reference step (libm sin/cos, one env at a time) that the vector
 * path of sk_env_cartpole.step is tested against. At env.precision = float32 it
 * is the float32 step with libm's sinf/cosf, which the vector path also falls
 * back to when some |theta| exceeds its kernels' range. */
void sk_cartpole_step_reference(void *state, const sk_env_io *io, int lo, int hi);

/* The step at the baseline level: at float32, the portable vector loops that the AVX-512 kernel
 * must match bit for bit (tests/test_cartpole_f32.c checks it). */
void sk_cartpole_step_portable(void *state, const sk_env_io *io, int lo, int hi);

/* The vector step compiled for level, or NULL where this build has no such level (the AVX levels
 * exist on x86-64 only). A test that sets a state's step to another level's must check first
 * that the CPU has it (sk_isa_level_detected). */
sk_cartpole_step_fn sk_cartpole_step_at(sk_isa_level level);

/* The per-level objects behind sk_cartpole_step_at. */
void sk_cartpole_step_baseline(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi);
void sk_cartpole_step_avx2(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi);
void sk_cartpole_step_avx512(sk_cartpole_state *s, const sk_env_io *io, int lo, int hi);

#endif
