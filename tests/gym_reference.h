/*
 * Helpers for the tests that check an env against Gymnasium's recordings in
 * ../shared/reference/gymnasium: a reader for those csv files, a checker that compares one field
 * at a time, counts every mismatch and prints the first ones with their row, field, got and
 * want, and the I/O buffers an env steps into. The classic-control tests (test_cartpole.c,
 * test_acrobot.c, test_mountaincar.c, test_pendulum.c) use them through gym_harness.h, which
 * runs the replays for all four; other env tests use them directly.
 *
 * Header-only and static inline, so that a test may use part of it without unused-function
 * warnings.
 */
#ifndef SK_GYM_REFERENCE_H
#define SK_GYM_REFERENCE_H

#include "test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One size for every test: csv_table crosses from a test into gym_harness.c. */
#define CSV_MAX_COLS 32
#define CSV_LINE 4096

/* The first mismatches are printed, the rest only counted. */
#define MAX_PRINTED_MISMATCHES 12

/* Relative errors of states are taken against max(|want|, STATE_ABS_FLOOR): absolute below 1. */
#define STATE_ABS_FLOOR 1.0

/* Every env under test logs two fields per episode: its return and its length. */
#define ENV_LOG_FIELDS 2

/* ---------------------------------------------------------------- csv reader */

typedef struct csv_table {
    int rows, cols;
    char names[CSV_MAX_COLS][32];
    double *values; /* (rows, cols) */
} csv_table;

static inline void csv_free(csv_table *t) {
    free(t->values);
    t->values = NULL;
}

/* Reads a numeric CSV with a header line; fails the test on a malformed file. */
static inline void csv_load(csv_table *t, const char *path) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    char line[CSV_LINE];
    if (!fgets(line, sizeof line, f)) fail_msg("%s is empty", path);
    for (char *field = strtok(line, ",\r\n"); field; field = strtok(NULL, ",\r\n")) {
        if (t->cols == CSV_MAX_COLS) fail_msg("%s has more than %d columns", path, CSV_MAX_COLS);
        snprintf(t->names[t->cols++], sizeof t->names[0], "%s", field);
    }
    size_t capacity = 0;
    int line_no = 1;
    while (fgets(line, sizeof line, f)) {
        line_no++;
        if (line[0] == '\n' || line[0] == '\0') continue;
        if ((size_t)(t->rows + 1) * (size_t)t->cols > capacity) {
            capacity = capacity ? 2 * capacity : 1024 * (size_t)t->cols;
            t->values = realloc(t->values, capacity * sizeof(double));
            assert_non_null(t->values);
        }
        const char *p = line;
        for (int c = 0; c < t->cols; c++) {
            char *end = NULL;
            double v = strtod(p, &end);
            if (end == p) fail_msg("%s:%d: column %s is not a number", path, line_no, t->names[c]);
            char want_sep = c + 1 < t->cols ? ',' : '\n';
            if (*end != want_sep && !(want_sep == '\n' && (*end == '\0' || *end == '\r')))
                fail_msg("%s:%d: expected %d columns", path, line_no, t->cols);
            t->values[(size_t)t->rows * (size_t)t->cols + (size_t)c] = v;
            p = end + 1;
        }
        t->rows++;
    }
    fclose(f);
}

/* Reads shared/reference/gymnasium/<file> (shared: test_shared_dir()); it must hold a row. */
static inline void csv_load_reference(csv_table *t, const char *shared, const char *file) {
    char path[4096];
    int length = snprintf(path, sizeof path, "%s/reference/gymnasium/%s", shared, file);
    if (length < 0 || (size_t)length >= sizeof path)
        fail_msg("path too long: %s/reference/gymnasium/%s", shared, file);
    csv_load(t, path);
    assert_true(t->rows > 0);
}

/* The index of the column called name; fails the test if there is none. */
static inline int csv_col(const csv_table *t, const char *name) {
    for (int c = 0; c < t->cols; c++)
        if (strcmp(t->names[c], name) == 0) return c;
    fail_msg("reference csv has no column '%s'", name);
    return -1;
}

/* The indices of the columns <prefix>0 .. <prefix>(count - 1), e.g. next_obs0..next_obs3. */
static inline void csv_cols(const csv_table *t, const char *prefix, int count, int *cols) {
    for (int k = 0; k < count; k++) {
        char name[32];
        snprintf(name, sizeof name, "%s%d", prefix, k);
        cols[k] = csv_col(t, name);
    }
}

static inline double csv_at(const csv_table *t, int row, int col) {
    return t->values[(size_t)row * (size_t)t->cols + (size_t)col];
}

/* The last row of the run of rows from `first` that share its value in column col (in an
 * episodes file with col = "episode": the last step of the episode starting at `first`). */
static inline int csv_run_end(const csv_table *t, int first, int col) {
    int last = first;
    while (last + 1 < t->rows && csv_at(t, last + 1, col) == csv_at(t, first, col)) last++;
    return last;
}

/* --------------------------------------------------------------- comparison */

/* Counts the mismatches against one reference file and tracks the largest errors seen, which
 * a test prints whether or not it passes. A test uses the max_ fields of what it compares. */
typedef struct checker {
    const char *source; /* which reference file */
    bool csv_lines;     /* name csv line numbers (the header is line 1) rather than data rows */
    int failures, printed;
    double max_state_abs, max_state_rel;
    int max_state_ulp; /* float32 states */
    double max_obs_abs;
    int max_obs_ulp;
    double max_reward_abs;
    int max_reward_ulp;
    double max_return_abs, max_return_rel;
} checker;

/* Records a failed check of `field` in data row `row`; prints the first ones. */
static inline void mismatch(checker *ck, int row, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static inline void mismatch(checker *ck, int row, const char *field, const char *fmt, ...) {
    ck->failures++;
    if (ck->printed++ >= MAX_PRINTED_MISMATCHES) return;
    char detail[256];
    va_list args;
    va_start(args, fmt);
    vsnprintf(detail, sizeof detail, fmt, args);
    va_end(args);
    if (ck->csv_lines)
        print_error("%s line %d, %s: %s\n", ck->source, row + 2, field, detail);
    else
        print_error("%s row %d, %s: %s\n", ck->source, row, field, detail);
}

/* Distance in representable floats; 0 when equal. */
static inline int ulp_distance(float a, float b) {
    if (a == b) return 0;
    if (isnan(a) || isnan(b)) return INT32_MAX;
    int32_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    if (ia < 0) ia = INT32_MIN - ia;
    if (ib < 0) ib = INT32_MIN - ib;
    int64_t d = (int64_t)ia - (int64_t)ib;
    if (d < 0) d = -d;
    return d > INT32_MAX ? INT32_MAX : (int)d;
}

/* A float64 state coordinate: within rel_tol relative, absolute below STATE_ABS_FLOOR. */
static inline void check_state(checker *ck, int row, const char *field, double got, double want,
                               double rel_tol) {
    double abs_err = fabs(got - want);
    double rel = test_rel_err(got, want, STATE_ABS_FLOOR);
    if (abs_err > ck->max_state_abs || isnan(abs_err)) ck->max_state_abs = abs_err;
    if (rel > ck->max_state_rel || isnan(rel)) ck->max_state_rel = rel;
    if (!(rel <= rel_tol))
        mismatch(ck, row, field, "got %.17g, want %.17g (rel err %.3g > %.3g)", got, want, rel,
                 rel_tol);
}

/* A float32 observation: passes within max_ulp floats or within abs_tol. */
static inline void check_obs(checker *ck, int row, const char *field, float got,
                             double want_csv, int max_ulp, double abs_tol) {
    float want = (float)want_csv; /* the csv holds a float32 printed exactly */
    int ulp = ulp_distance(got, want);
    double abs_err = fabs((double)got - (double)want);
    if (ulp > ck->max_obs_ulp) ck->max_obs_ulp = ulp;
    if (abs_err > ck->max_obs_abs || isnan(abs_err)) ck->max_obs_abs = abs_err;
    if (ulp > max_ulp && !(abs_err <= abs_tol))
        mismatch(ck, row, field, "got %.9g, want %.9g (%d ulp > %d, abs err %.3g > %.3g)",
                 (double)got, (double)want, ulp, max_ulp, abs_err, abs_tol);
}

static inline void check_int(checker *ck, int row, const char *field, long got, long want) {
    if (got != want) mismatch(ck, row, field, "got %ld, want %ld", got, want);
}

/* Exactly equal. */
static inline void check_float(checker *ck, int row, const char *field, float got, double want) {
    if ((double)got != want) mismatch(ck, row, field, "got %.9g, want %.9g", (double)got, want);
}

/* ------------------------------------------------------------ episodes files */

#define EPISODE_MAX_COLS 8

/* The columns of an episodes file: one row per step, the state before it and what followed. */
typedef struct episode_columns {
    int episode, t, action, reward, terminated, truncated;
    int state[EPISODE_MAX_COLS]; /* state0 .. */
    int obs[EPISODE_MAX_COLS];   /* next_obs0 .. */
} episode_columns;

static inline episode_columns episode_columns_of(const csv_table *t, int state_size,
                                                 int obs_size) {
    assert_true(state_size <= EPISODE_MAX_COLS && obs_size <= EPISODE_MAX_COLS);
    episode_columns c;
    c.episode = csv_col(t, "episode");
    c.t = csv_col(t, "t");
    c.action = csv_col(t, "action");
    c.reward = csv_col(t, "reward");
    c.terminated = csv_col(t, "terminated");
    c.truncated = csv_col(t, "truncated");
    csv_cols(t, "state", state_size, c.state);
    csv_cols(t, "next_obs", obs_size, c.obs);
    return c;
}

/* Env 0's terminated and truncated flags after the step of episodes-file row r. Gymnasium's
 * TimeLimit reports truncated whenever elapsed >= max_steps, even on a terminal step: checks
 * that the file means that, then maps it to skinner's "limit hit and not terminated". Returns
 * whether the recorded episode ended at row r. */
static inline bool check_episode_flags(checker *ck, const sk_env_io *io, const csv_table *t,
                                       const episode_columns *c, int r, int max_steps) {
    bool want_term = csv_at(t, r, c->terminated) != 0.0;
    bool gym_trunc = csv_at(t, r, c->truncated) != 0.0;
    bool limit_hit = (int)csv_at(t, r, c->t) + 1 >= max_steps;
    if (gym_trunc != limit_hit) {
        char field[64];
        snprintf(field, sizeof field, "csv truncated == (t+1 >= %d)", max_steps);
        check_int(ck, r, field, gym_trunc, limit_hit);
    }
    bool want_trunc = gym_trunc && !want_term;
    check_int(ck, r, "terminated", io->terminated[0], want_term);
    check_int(ck, r, "truncated", io->truncated[0], want_trunc);
    return want_term || want_trunc;
}

/* Whether a replayed episode ends where the recording does: at row r, skinner ended (ended)
 * exactly when the recording did (want_end), and the recording exactly at its last row
 * (last_row). Otherwise records an "episode end" mismatch and returns false. */
static inline bool check_episode_end(checker *ck, int row, int episode, bool ended,
                                     bool want_end, bool last_row, int step,
                                     int recorded_length) {
    if (want_end == ended && last_row == want_end) return true;
    mismatch(ck, row, "episode end",
             "episode %d: skinner %s at step %d; the recording ends at step %d", episode,
             ended ? "ended" : "did not end", step, recorded_length);
    return false;
}

/* Fails the test if any check failed; call once a test's summary is printed. */
static inline void checker_fail_on_mismatches(const checker *ck, const char *what) {
    if (ck->failures) fail_msg("%s: %d mismatches against %s", what, ck->failures, ck->source);
}

/* Prints the largest state and observation errors, then fails on any mismatch. */
static inline void checker_finish(const checker *ck, const char *what) {
    print_message("%s: max state error %.3g abs / %.3g rel, max obs error %.3g abs / %d ulp, "
                  "%d mismatches\n",
                  what, ck->max_state_abs, ck->max_state_rel, ck->max_obs_abs, ck->max_obs_ulp,
                  ck->failures);
    checker_fail_on_mismatches(ck, what);
}

/* ------------------------------------------------------------------- env I/O */

/* Allocates zeroed I/O buffers for num_envs envs with obs_size observations and points io at
 * them. Pass the address of exactly one action pointer: it receives the (writable) action
 * buffer that io reads. io's other action pointer and its masks stay NULL, so that an env
 * reading the wrong kind of action crashes instead of passing. Free with env_io_free. */
static inline void env_io_alloc(sk_env_io *io, int num_envs, int obs_size,
                                int32_t **discrete_actions, float **continuous_actions) {
    size_t n = (size_t)num_envs;
    *io = (sk_env_io){.obs = calloc(n * (size_t)obs_size, sizeof(float)),
                      .final_obs = calloc(n * (size_t)obs_size, sizeof(float)),
                      .rewards = calloc(n, sizeof(float)),
                      .terminated = calloc(n, 1),
                      .truncated = calloc(n, 1),
                      .masks = NULL,
                      .episode_log = calloc(n * ENV_LOG_FIELDS, sizeof(float))};
    assert_true(io->obs && io->final_obs && io->rewards && io->episode_log && io->terminated &&
                io->truncated);
    assert_true((discrete_actions != NULL) != (continuous_actions != NULL));
    if (discrete_actions) {
        *discrete_actions = calloc(n, sizeof(int32_t));
        assert_non_null(*discrete_actions);
        io->actions = *discrete_actions;
    } else {
        *continuous_actions = calloc(n, sizeof(float));
        assert_non_null(*continuous_actions);
        io->actions_continuous = *continuous_actions;
    }
}

static inline void env_io_free(sk_env_io *io) {
    free(io->obs);
    free(io->final_obs);
    free(io->rewards);
    free(io->episode_log);
    free(io->terminated);
    free(io->truncated);
    /* io only reads the actions, but env_io_alloc allocated them */
    free((void *)io->actions);
    free((void *)io->actions_continuous);
    *io = (sk_env_io){0};
}

/* Poisons the outputs so that a value the step forgot to write cannot pass by accident:
 * NaN floats and flags of 7. */
static inline void env_io_poison(const sk_env_io *io, int num_envs, int obs_size) {
    for (int k = 0; k < obs_size * num_envs; k++) io->obs[k] = io->final_obs[k] = NAN;
    for (int i = 0; i < num_envs; i++) {
        io->rewards[i] = NAN;
        io->terminated[i] = io->truncated[i] = 7;
    }
    for (int k = 0; k < ENV_LOG_FIELDS * num_envs; k++) io->episode_log[k] = NAN;
}

/* ------------------------------------------------------------------- resets */

static inline int compare_doubles(const void *p, const void *q) {
    double a = *(const double *)p, b = *(const double *)q;
    return (a > b) - (a < b);
}

/* Fails with "two envs <what> <value>" if two of the n values are equal. */
static inline void assert_all_distinct(const double *values, int n, const char *what) {
    double *sorted = malloc((size_t)n * sizeof *sorted);
    assert_non_null(sorted);
    memcpy(sorted, values, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
    for (int i = 1; i < n; i++)
        if (sorted[i] == sorted[i - 1]) fail_msg("two envs %s %.17g", what, sorted[i]);
    free(sorted);
}

#endif
