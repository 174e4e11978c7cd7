/*
 * skinner/check.h: the env checker behind `skinner check ENV` and
 * skinner.check_env(env_id), in the spirit of Gymnasium's check_env. Run it
 * before trusting an env with a long training:
 *
 *     sk_check_report report;
 *     sk_check_options options = {.seed = 1};
 *     if (sk_check_env(sk_env_find("CartPole-v1"), NULL, &options, &report) == SK_OK)
 *         for (int k = 0; k < report.num_results; k++)
 *             printf("%s %s\n", report.results[k].name, report.results[k].detail);
 *
 * It drives the env's table itself, with buffers of its own fenced by guard
 * zones and filled with canaries before every reset and step, and through
 * sk_vec for the thread and state checks. docs/check.md describes each check.
 */
#ifndef SKINNER_CHECK_H
#define SKINNER_CHECK_H

#include "env.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sk_check_outcome {
    SK_CHECK_PASS,
    SK_CHECK_FAIL,
    SK_CHECK_SKIP, /* not applicable to this env or these options (the detail says why) */
    SK_CHECK_INFO, /* a measurement that never fails (speed) */
} sk_check_outcome;

/* One check: its first failure only (the env index and step where it was
 * seen; step 0 is the reset, step t the t-th step), or what it covered. */
typedef struct sk_check_result {
    char name[32];
    sk_check_outcome outcome;
    int env;        /* the failing env's index, or -1 */
    long long step; /* the failing step (0: reset), or -1 */
    char detail[512];
} sk_check_result;

#define SK_CHECK_MAX_RESULTS 24

typedef struct sk_check_report {
    char env_id[128];
    int num_envs, steps, threads;
    uint64_t seed;
    int num_results, num_failed;
    sk_check_result results[SK_CHECK_MAX_RESULTS];
} sk_check_report;

typedef struct sk_check_options {
    int num_envs;  /* 0: 16, or 2 for a slow env (extras->bench_num_envs > 0) */
    int steps;     /* steps of each run; 0: max_episode_steps + 8 within 64..1024 (8: slow env) */
    uint64_t seed; /* the envs' seed; the actions come from a stream derived from it */
    int threads;   /* workers of the thread check; 0: one per core, at least 2 */
    /* the env steps its whole batch at once only (a Python-defined env): the
     * checks that step part of the batch or split it over threads are skipped */
    bool whole_batch;
    /* the state arrays hold part of the env's state only (a Python-defined
     * env's own objects are not saved, so its runs cannot be resumed): the
     * restore check is skipped */
    bool partial_state;
} sk_check_options;

/*
 * Checks env as cfg configures it (env.* keys; NULL: defaults), with
 * `options` (NULL: all defaults). SK_OK when every check ran, whatever they
 * found: out->num_failed counts the failed ones. An error status (with
 * sk_last_error) when the env could not be created or out of memory; out
 * then holds the checks run so far.
 */
SK_API sk_status sk_check_env(const sk_env_def *env, const sk_config *cfg,
                              const sk_check_options *options, sk_check_report *out);

/* "pass", "FAIL", "skip" or "info". */
SK_API const char *sk_check_outcome_name(sk_check_outcome outcome);

/* The report as one line per check ("pass  NAME  detail", "FAIL  NAME  env 3
 * step 17: ...") and a summary line, to out. */
SK_API void sk_check_print(const sk_check_report *report, FILE *out);

/* The report as a JSON object (env, options, checks: name, status, detail,
 * env, step; passed, failed); a malloc'd string the caller frees, or NULL
 * when out of memory. */
SK_API char *sk_check_json(const sk_check_report *report);

#ifdef __cplusplus
}
#endif
#endif /* SKINNER_CHECK_H */
