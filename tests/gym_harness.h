/*
 * One harness for the classic-control env tests (test_cartpole.c, test_acrobot.c,
 * test_mountaincar.c, test_pendulum.c): each describes its env in a gym_env table (its state,
 * how to set and read it, its tolerances and its special cases) and the harness runs what every
 * env is checked for against Gymnasium's recordings in ../shared/reference/gymnasium:
 *   gym_transitions        one step from each of the 2000 recorded states
 *   gym_episodes_per_step  the 20 recorded episodes, every step from its recorded state
 *   gym_episodes_free_run  the 20 episodes from their first state and recorded actions only
 *   gym_reset_streams      the reset distribution, seeds and per-env streams
 *   gym_autoreset_streams  envs that end together start distinct new episodes
 *   gym_truncation         the time limit, and terminated winning over it
 *   gym_step_range         step(lo, hi) touches lo..hi-1 only
 * What only one env has (its reset distribution, its rules, its episode log) stays in its test.
 * The comparisons and the csv reader are gym_reference.h's.
 */
#ifndef SK_GYM_HARNESS_H
#define SK_GYM_HARNESS_H

#include "gym_reference.h"

#include "core/isa.h"

#define GYM_MAX_STATE 4
#define GYM_MAX_OBS 6
#define GYM_RECORDED_EPISODES 20
#define GYM_TRANSITION_ROWS 2000

/* What a comparison allows. Observations and rewards pass within the env's max ulp of the
 * recorded value; beyond that, within obs_abs / reward_abs (return_abs for the logged return),
 * plus those ulps of the recorded value where the env's ulp_plus_abs says so. */
typedef struct gym_tolerance {
    double state_rel;  /* a float64 state: relative, absolute below STATE_ABS_FLOOR */
    double state_abs;  /* or absolute, where state_rel is 0 */
    double obs_abs;    /* observations */
    double reward_abs; /* float rewards */
    double return_abs; /* the logged return and the env's double running return */
} gym_tolerance;

/* A reset coordinate drawn from U(low, high) (within [low, high) of float64 draws; of float32
 * ones, within the bounds rounded to float32, ends included): its mean of GYM_RESET_ENVS draws within mean_tol
 * of the middle, the variance within 5% of (high - low)^2 / 12, and the draws filling the
 * interval to within fill of each end. */
typedef struct gym_uniform {
    double low, high, mean_tol, fill;
} gym_uniform;

/* One env under test, opened by gym_open: its state, the I/O buffers it steps into and the
 * actions it reads (discrete or continuous, the other pointer NULL). */
typedef struct gym_run {
    const struct gym_env *env;
    sk_config *cfg;
    void *state;
    int num_envs;
    int32_t *actions;
    float *actions_continuous;
    sk_env_io io;
} gym_run;

/* The episodes file's columns, and in a transitions file next_state0.. (else -1). */
typedef struct gym_columns {
    int episode, t, action, reward, terminated, truncated;
    int state[GYM_MAX_STATE], next_state[GYM_MAX_STATE], obs[GYM_MAX_OBS];
} gym_columns;

/* Called after every step of a replay, for what an env counts or checks of its own. */
typedef void (*gym_row_hook)(void *ctx, const gym_run *run, const csv_table *t,
                             const gym_columns *c, int row);

typedef struct gym_env {
    const sk_env_def *def;
    const char *transitions, *episodes; /* reference file names */
    int state_size;                     /* recorded state values */
    const char *const *state_names;     /* (state_size) */
    const char *const *obs_names;       /* (obs_size) */
    int max_steps;
    bool csv_lines;        /* mismatches name csv lines rather than data rows */
    bool float32_state;    /* the stepped state is float32 (MountainCarContinuous) */
    bool float32_reset;    /* Gymnasium draws the first state in float32 (Acrobot) */
    bool never_terminates; /* the recordings never say terminated (Pendulum) */
    bool episodes_terminate; /* the episodes file holds terminations as well as truncations */
    bool check_double_return; /* compare the env's double running return (Pendulum) */
    bool ulp_plus_abs;     /* obs/reward: the abs allowance comes with max ulps of the recording */
    int obs_max_ulp;
    int reward_max_ulp;     /* 0: rewards and logs exactly equal */
    int reset_distinct_coord; /* the coordinate that differs between seeds and envs; -1: the state */
    unsigned step_moves;      /* the coordinates one step from a reset state changes: any of */
    bool step_moves_all;      /* or all of them */
    const gym_uniform *reset_uniform; /* (state_size); low == high: that constant */
    gym_tolerance one_step, free_run;
    /* Free runs of a chaotic env: the tolerance after `steps` steps, which says something up
     * to a horizon (past it only the env's own rules are checked); NULL: free_run throughout. */
    gym_tolerance (*free_run_growth)(int steps);
    double free_run_horizon_tol; /* the horizon: the last step whose state_abs is within it */

    /* Where the state keeps what the recordings hold (offsetof its arrays): one double array
     * per recorded value, the step count and the running return (float or double). The state
     * opens with int num_envs, as every classic-control env's does (gym_open checks it). */
    size_t coord_field[GYM_MAX_STATE];
    size_t elapsed_field, return_field;
    bool float_return;
    /* The observation Gymnasium makes of env i's state; NULL: the state itself, as floats. */
    void (*expected_obs)(const void *state, int i, float *obs);
} gym_env;

/* The harness: create num_envs envs with a fresh config (gym_open) or the given one, which the
 * run then owns (gym_open_cfg). */
void gym_open(gym_run *run, const gym_env *env, int num_envs);
void gym_open_cfg(gym_run *run, const gym_env *env, int num_envs, sk_config *cfg);
void gym_close(gym_run *run);
void gym_set_state(gym_run *run, int i, const double *state, int32_t elapsed,
                   double episode_return);
/* A recorded action: discrete as an index, continuous as the float32 Gymnasium received. */
void gym_set_action(gym_run *run, int i, double action);
void gym_poison(gym_run *run);
void gym_step(gym_run *run);
void gym_reset(gym_run *run, uint64_t seed);
double gym_coord(const gym_run *run, int i, int k);
/* The gap from |x| to the next float up. */
double gym_float_ulp(float x);
int32_t gym_elapsed(const gym_run *run, int i);

/* The replays of the recordings under shared (the case's REQUIRE_SHARED: a skip must be noted
 * in the test's own file, where test_util.h tracks the running case). Each fails the test on
 * any mismatch after printing its largest errors; the hook (may be NULL) sees every step. */
void gym_transitions(const gym_env *env, const char *shared, gym_row_hook hook, void *ctx);
void gym_episodes_per_step(const gym_env *env, const char *shared, gym_row_hook hook, void *ctx);
void gym_episodes_free_run(const gym_env *env, const char *shared, gym_row_hook hook, void *ctx);

/* Reset: each env index its own stream, the same for one seed whatever the ranges reset, a new
 * one for another seed. */
void gym_reset_streams(const gym_env *env);
/* Autoreset: n envs set to `state`, stepped with `action` (or per env by policy) until they
 * end together; they must then start distinct new episodes, each with its own first obs. */
void gym_autoreset_streams(const gym_env *env, const double *state, double action,
                           double (*policy)(const gym_run *run, int i));
/* The time limit, one step of 4 envs (3 where the env never terminates) reset with seed 11,
 * each given `action`: env 0 in `state` on its last allowed step, env 1 in the same state at
 * step 0, env 2 one step short of the limit, env 3 in terminal_state on its last allowed step.
 * Envs 0, 2 and 3 have earned start_return so far. Checks the flags (terminated wins over the
 * limit), the steps, the logged lengths, env 0's final observation and its next episode; the
 * run stays open for an env's own checks (rewards, returns); close it with gym_close. */
void gym_truncation(gym_run *run, const gym_env *env, const double *state,
                    const double *terminal_state, double action, double start_return);
/* step(1, 2) of 3 envs reset with seed 5, each given `action`: envs 0 and 2 untouched. The run
 * stays open for an env's own checks; close it with gym_close. */
void gym_step_range(gym_run *run, const gym_env *env, double action);

/* Sets the state's vector step to the one compiled for level; false where this build has none. */
typedef bool (*gym_use_level)(void *state, sk_isa_level level);
/* Puts env i of a freshly reset run in a state drawn from rng (the same draws for both runs). */
typedef void (*gym_scatter)(gym_run *run, int i, uint64_t *rng);
/* Every ISA level above baseline that this CPU has (gym_levels.c): two runs of 1007 envs reset
 * with one seed (then scattered, where scatter is not NULL), one at the level and one at
 * baseline, stepped `steps` times with the same random actions (over two ranges, the second
 * not vector-aligned): their state arrays, observations, final observations, logs, rewards and
 * flags must be bit-identical after every step, with at least min_ends episode ends. */
void gym_levels_match(const gym_env *env, gym_use_level use_level, gym_scatter scatter,
                      int steps, long min_ends);

/* The cases every env runs as they are, for a test's case table: GYM_CASE(name, case, &env)
 * names the case and hands it the env as its state. Inline, so that a skip is noted in the
 * test's own file (test_util.h tracks the running case and the skips per file). */
#define GYM_CASE(name, function, env) {#name, function, NULL, NULL, (void *)(env)}

static inline void gym_case_episodes_per_step(void **state) {
    REQUIRE_SHARED(shared);
    gym_episodes_per_step(*state, shared, NULL, NULL);
}

static inline void gym_case_episodes_free_run(void **state) {
    REQUIRE_SHARED(shared);
    gym_episodes_free_run(*state, shared, NULL, NULL);
}

static inline void gym_case_reset_streams(void **state) { gym_reset_streams(*state); }

#endif
