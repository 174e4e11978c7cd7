/* The env checker's pieces shared by check.c (buffers, contract, determinism),
 * check_state.c (state arrays, restore, speed) and check_report.c. */
#ifndef SK_CHECK_INTERNAL_H
#define SK_CHECK_INTERNAL_H

#include "skinner/check.h"
#include "skinner/vec.h"

#include "../core/core.h"

/* The checks, in the order they are reported. */
typedef enum sk_ck_check {
    CK_UNWRITTEN,
    CK_OVERRUN,
    CK_OTHER_ROWS,
    CK_OBS_SPACE,
    CK_REWARDS,
    CK_MASKS,
    CK_FLAGS,
    CK_FINAL_OBS,
    CK_TIME_LIMIT,
    CK_EPISODE_LOG,
    CK_SAME_SEED,
    CK_THREADS,
    CK_SEEDS_DIFFER,
    CK_STATE_ARRAYS,
    CK_STATE_RESTORE,
    CK_CHECK_STATE,
    CK_SPEED,
    CK_COUNT
} sk_ck_check;

_Static_assert(CK_COUNT <= SK_CHECK_MAX_RESULTS, "more checks than a report holds");

/* One run of the checker: the configured env, the options resolved, the report. */
typedef struct sk_ck_run {
    const sk_env_def *env; /* configured by cfg */
    const sk_config *cfg;
    int num_envs, steps, threads;
    int num_agents, num_rows; /* a multi-agent env's rows: num_envs x num_agents (else num_envs) */
    uint64_t seed;
    bool whole_batch, partial_state;
    sk_check_report *report;
} sk_ck_run;

/* Records the first failure of a check (later ones are ignored). */
void sk_ck_fail(sk_ck_run *run, sk_ck_check check, int env, long long step, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Marks a check skipped, or sets the detail of a check that did not fail. */
void sk_ck_skip(sk_ck_run *run, sk_ck_check check, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void sk_ck_note(sk_ck_run *run, sk_ck_check check, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool sk_ck_failed(const sk_ck_run *run, sk_ck_check check);

/* The bytes of one env's actions (num_heads int32 or dim floats). */
size_t sk_ck_action_row_bytes(const sk_env_def *env);

/* Random actions for envs lo..hi-1, each head's among the choices its mask
 * row allows (head 0 first, then the block of head 0's choice where masks
 * depend on it); continuous actions uniform within their bounds. */
void sk_ck_random_actions(const sk_env_def *env, const uint8_t *masks, int32_t *actions,
                          float *actions_continuous, int lo, int hi, uint64_t *rng);

/* Canaries (as the checker's own buffers get) in every slot of a vec's
 * buffers that its env writes, before a reset or step whose outputs are
 * compared with another run's. */
void sk_ck_fill_vec_canaries(const sk_ck_run *run, sk_vec *vec);

/* Whether anything of the observations, rewards or flags differs between a and b. */
bool sk_ck_trajectories_differ(const sk_ck_run *run, const sk_env_io *a, const sk_env_io *b,
                               long long step);

/* Compares what two runs of the same env wrote for every env (obs, rewards,
 * flags, masks; final_obs and episode_log where episodes ended in `a`):
 * false at the first difference, recorded as `check` with run names. */
bool sk_ck_compare_io(sk_ck_run *run, sk_ck_check check, long long step, const sk_env_io *a,
                      const sk_env_io *b, const char *a_name, const char *b_name);

/* check_state.c */
sk_status sk_ck_check_state(sk_ck_run *run);
sk_status sk_ck_measure_speed(sk_ck_run *run);

/* Several threads stepping at under this share of one thread's speed are "far below" it. */
#define SK_CK_SLOW_THREADS_RATIO 0.5
/* What the machine was doing while the threads ran: the 1-minute load average (NAN if
 * unknown), the cores online and those this process may use (its affinity), and the CPU
 * time the process got over wall time x threads (1: every thread always on a core). */
typedef struct sk_ck_contention {
    double load_average;
    int cores_online, cores_allowed;
    double cpu_share;
} sk_ck_contention;
/* Writes into out (size bytes) why `threads` threads stepping at `all` env steps/s may be
 * far below one thread's `one`: contention when the machine was busy (load average at or
 * above the cores, fewer cores allowed than threads, or under 3/4 of the threads' CPU time
 * had), else the threads' hand-offs outweighing short steps. "" when all is not far below. */
void sk_ck_speed_hint(char *out, size_t size, double one, double all, int threads,
                      const sk_ck_contention *seen);

#endif
