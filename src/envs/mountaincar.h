/* MountainCar-v0 and MountainCarContinuous-v0, exposed for tests that set states directly. */
#ifndef SK_MOUNTAINCAR_H
#define SK_MOUNTAINCAR_H

#include "skinner.h"

#include "../core/isa.h"

/*
 * Struct-of-arrays state shared by both variants, double precision. MountainCar-v0 keeps its
 * state in float64 throughout, as Gymnasium does. MountainCarContinuous-v0 resets to float64
 * but Gymnasium stores the stepped state as float32, so after every step its position and
 * velocity hold float32 values (widened to double).
 */
typedef struct sk_mountaincar_state sk_mountaincar_state;

/* The vector steps of envs lo..hi-1 (MountainCarContinuous-v0's when continuous) compiled for
 * one ISA level (src/envs/isa/mountaincar_step.c). */
typedef void (*sk_mountaincar_step_fn)(sk_mountaincar_state *s, const sk_env_io *io, int lo,
                                       int hi, bool continuous);

struct sk_mountaincar_state {
    int num_envs;
    double *position, *velocity; /* (num_envs) */
    int32_t *elapsed;            /* (num_envs) steps in the current episode */
    double *episode_return;      /* (num_envs) */
    uint64_t *rng;               /* (num_envs) one stream per env */
    sk_mountaincar_step_fn step; /* the level in use's, picked at create (sk_isa_level_used) */
};

extern const sk_env_def sk_env_mountaincar;
extern const sk_env_def sk_env_mountaincar_continuous;

/* The scalar reference steps (libm cos, one env at a time) that the vector paths of the two
 * envs' .step are tested against, and fall back to when a position is beyond SK_VMATH_BOUND / 3
 * (core/vmath.h). */
void sk_mountaincar_step_reference(void *state, const sk_env_io *io, int lo, int hi);
void sk_mountaincar_continuous_step_reference(void *state, const sk_env_io *io, int lo, int hi);

/* The vector steps compiled for level, or NULL where this build has no such level (the AVX
 * levels exist on x86-64 only). A test that sets a state's step to another level's must check
 * first that the CPU has it (sk_isa_level_detected). */
sk_mountaincar_step_fn sk_mountaincar_step_at(sk_isa_level level);

/* The per-level objects behind sk_mountaincar_step_at. */
void sk_mountaincar_step_baseline(sk_mountaincar_state *s, const sk_env_io *io, int lo, int hi,
                                  bool continuous);
void sk_mountaincar_step_avx2(sk_mountaincar_state *s, const sk_env_io *io, int lo, int hi,
                              bool continuous);
void sk_mountaincar_step_avx512(sk_mountaincar_state *s, const sk_env_io *io, int lo, int hi,
                                bool continuous);

#endif
