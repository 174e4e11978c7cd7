/* Helpers shared by the C tests (cmocka). */
#ifndef SK_TEST_UTIL_H
#define SK_TEST_UTIL_H

#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the above first */
#include "skinner.h"
#include <stdbool.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs command through the shell, its stdout (add 2>&1 for stderr too) into out,
 * NUL-terminated; returns its exit status, or -1 when it did not exit. */
static inline int test_run_command(const char *command, char *out, size_t size) {
    FILE *pipe = popen(command, "r");
    assert_non_null(pipe);
    size_t used = fread(out, 1, size - 1, pipe);
    out[used] = '\0';
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ------------------------------------------------------------ skipping, loudly
 * A case that cannot run here (no ../shared, tmux or a Debian data package missing)
 * prints `SKIPPED: <case>: <why>` and ends as skipped; `make test` gathers those lines
 * from ctest's log and lists them. A program whose every case skipped exits with
 * TEST_SKIP_EXIT, which tests/CMakeLists.txt declares as ctest's SKIP_RETURN_CODE, so
 * ctest lists it as skipped rather than passed. Under CI (CI=true) nothing may skip:
 * CI has ../shared and what scripts/setup.sh installs, so the case fails instead,
 * naming what is missing. */
#define TEST_SKIP_EXIT 77

static inline bool test_under_ci(void) {
    const char *ci = getenv("CI");
    return ci && ci[0] && strcmp(ci, "0") != 0 && strcmp(ci, "false") != 0;
}

/* Whole cases skipped by this program (each test is one program). */
static inline int *test_skipped_cases(void) {
    static int count;
    return &count;
}

/* The running case, as test_run_group tracks it: its index in the group (-1 before the
 * first) and the group's cases as the test declared them (cmocka runs them in order). */
typedef struct test_group_state {
    int current;
    const struct CMUnitTest *tests;
    size_t count;
} test_group_state;

static inline test_group_state *test_group(void) {
    static test_group_state group = {.current = -1};
    return &group;
}

static inline const char *test_current_case(void) {
    test_group_state *group = test_group();
    return group->current >= 0 && (size_t)group->current < group->count
               ? group->tests[group->current].name
               : NULL;
}

/* Each case's setup: advances to the case, then runs the case's own setup if it has one. */
static inline int test_case_begin(void **state) {
    test_group_state *group = test_group();
    group->current++;
    CMFixtureFunction own = test_current_case() ? group->tests[group->current].setup_func : NULL;
    return own ? own(state) : 0;
}

/* Prints the SKIPPED line of the running case (test_case, the calling function, names it
 * outside test_run_group) or of its part `part` (NULL: the whole case), and counts a whole
 * case; under CI fails the case at file:line instead (and does not return). */
__attribute__((format(printf, 5, 6))) static inline void
test_skip_note(const char *file, int line, const char *test_case, const char *part,
               const char *fmt, ...) {
    char why[4600];
    if (test_current_case()) test_case = test_current_case();
    va_list args;
    va_start(args, fmt);
    vsnprintf(why, sizeof why, fmt, args);
    va_end(args);
    if (test_under_ci()) {
        print_error("FAILED: %s%s%s%s: %s (CI=true: a missing requirement fails the run)\n",
                    test_case, part ? ", part '" : "", part ? part : "", part ? "'" : "", why);
        _fail(file, line);
    }
    print_message("SKIPPED: %s%s%s%s: %s\n", test_case, part ? ", part '" : "", part ? part : "",
                  part ? "'" : "", why);
    if (!part) ++*test_skipped_cases();
}

/* Skips the running case (printf-style reason); fails it under CI. */
#define TEST_SKIP(...)                                                                             \
    do {                                                                                           \
        test_skip_note(__FILE__, __LINE__, __func__, NULL, __VA_ARGS__);                           \
        skip();                                                                                    \
    } while (0)

/* Notes that the part `part` of the running case was left out; the rest of it runs. */
#define TEST_SKIP_PART(part, ...) test_skip_note(__FILE__, __LINE__, __func__, part, __VA_ARGS__)

/* Where the references and datasets are: $SKINNER_SHARED_DIR when set, else ../shared
 * next to the repository. */
static inline const char *test_shared_path(void) {
    static char path[4096];
    const char *override = getenv("SKINNER_SHARED_DIR");
    if (override && override[0]) snprintf(path, sizeof path, "%s", override);
    else snprintf(path, sizeof path, "%s/../shared", SKINNER_SOURCE_DIR);
    return path;
}

/* The shared folder, or NULL when it is absent (a user's fresh clone has none). */
static inline const char *test_shared_dir(void) {
    const char *path = test_shared_path();
    return access(path, R_OK) == 0 ? path : NULL;
}

#define TEST_SHARED_MISSING                                                                        \
    "%s (Gymnasium references, datasets) is missing: put it next to the repository or set "       \
    "SKINNER_SHARED_DIR"

/* Declares dir_var, the shared folder; skips the case when it is absent (fails under CI). */
#define REQUIRE_SHARED(dir_var)                                                                    \
    const char *dir_var = test_shared_dir();                                                       \
    if (!dir_var) TEST_SKIP(TEST_SHARED_MISSING, test_shared_path())

/* Declares dir_var, the shared folder or NULL; when absent, notes that the case's
 * `part` is left out (fails under CI). */
#define OPTIONAL_SHARED(dir_var, part)                                                             \
    const char *dir_var = test_shared_dir();                                                       \
    if (!dir_var) TEST_SKIP_PART(part, TEST_SHARED_MISSING, test_shared_path())

/* SKINNER_TEST_CASES=a,b: the cases of that name only, in the group's order, so that ctest
 * can run a program's few cases again under another environment (the bf16 entries of
 * tests/CMakeLists.txt). A name the group lacks fails the run: a renamed case must not
 * leave an entry running nothing. Returns how many were kept (into out), or -1. */
/* In a comma-separated list: whether the name at p is `name`, and the list after it. */
static inline bool test_list_name_is(const char *p, const char *name) {
    size_t len = strcspn(p, ",");
    return len == strlen(name) && strncmp(p, name, len) == 0;
}
static inline const char *test_list_next(const char *p) {
    p += strcspn(p, ",");
    return *p ? p + 1 : p;
}

static inline int test_select_cases(const struct CMUnitTest *tests, size_t count,
                                    struct CMUnitTest *out) {
    const char *only = getenv("SKINNER_TEST_CASES");
    if (!only || !only[0]) {
        memcpy(out, tests, count * sizeof *out);
        return (int)count;
    }
    int kept = 0;
    for (size_t i = 0; i < count; i++)
        for (const char *p = only; *p; p = test_list_next(p))
            if (test_list_name_is(p, tests[i].name)) {
                out[kept++] = tests[i];
                break;
            }
    for (const char *p = only; *p; p = test_list_next(p)) {
        bool found = false;
        for (int k = 0; k < kept && !found; k++) found = test_list_name_is(p, out[k].name);
        if (!found) {
            fprintf(stderr, "SKINNER_TEST_CASES names '%.*s', which this program has not\n",
                    (int)strcspn(p, ","), p);
            return -1;
        }
    }
    return kept;
}

/* The test program's main: cmocka's runner, then the skip policy above (every case
 * skipped: TEST_SKIP_EXIT; otherwise the number of failed cases, as cmocka returns). */
static inline int test_run_group(const char *name, const struct CMUnitTest *tests, size_t count,
                                 CMFixtureFunction setup, CMFixtureFunction teardown) {
    /* the selected cases, each entered through test_case_begin so that a skip can name it */
    struct CMUnitTest *selected = malloc(count * sizeof *selected);
    struct CMUnitTest *tracked = malloc(count * sizeof *tracked);
    int kept = selected && tracked ? test_select_cases(tests, count, selected) : -1;
    if (kept < 0) {
        if (!selected || !tracked) fprintf(stderr, "%s: out of memory\n", name);
        free(selected), free(tracked);
        return 1;
    }
    count = (size_t)kept;
    memcpy(tracked, selected, count * sizeof *tracked);
    for (size_t i = 0; i < count; i++) tracked[i].setup_func = test_case_begin;
    *test_group() = (test_group_state){.current = -1, .tests = selected, .count = count};
    int failed = _cmocka_run_group_tests(name, tracked, count, setup, teardown);
    free(tracked);
    free(selected);
    int skipped = *test_skipped_cases();
    if (skipped) print_message("skipped %d of %zu cases (the SKIPPED lines above say why)\n",
                               skipped, count);
    return failed == 0 && count > 0 && (size_t)skipped == count ? TEST_SKIP_EXIT : failed;
}
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(tests, setup, teardown)                                             \
    test_run_group(#tests, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

/* Relative error with an absolute floor, for float comparisons. */
static inline double test_rel_err(double got, double want, double floor_abs) {
    double diff = got > want ? got - want : want - got;
    double scale = (want < 0 ? -want : want);
    return diff / (scale > floor_abs ? scale : floor_abs);
}

/* Finite differences in float32: central differences of a loss evaluated
 * in double on float parameters. */
#define TEST_FD_TOL 2e-2   /* ~1e-4 truncation + rounding, relative */
#define TEST_FD_FLOOR 5e-3 /* ~1e-5 absolute noise in a float difference quotient */

typedef double (*test_loss_fn)(void *ctx);

/* Compares the analytic gradient `grad` of loss(ctx) with respect to x[0..n)
 * with central differences of step eps (and of 4 eps and eps / 4 where eps misses);
 * prints the worst error and the first mismatches; returns how many entries are off by more
 * than TEST_FD_TOL at both steps. */
static inline int test_check_gradient(const char *what, float *x, const float *grad, size_t n,
                                      test_loss_fn loss, void *ctx, float eps) {
    int failures = 0;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        float saved = x[i];
        x[i] = saved + eps;
        double up = loss(ctx);
        x[i] = saved - eps;
        double down = loss(ctx);
        x[i] = saved;
        double numeric = (up - down) / (2.0 * (double)eps);
        double err = test_rel_err(grad[i], numeric, TEST_FD_FLOOR);
        /* Where eps misses, four times and a quarter of it must agree instead: a float32 loss
         * whose rounding noise is large for eps (oneDNN's AVX2 convolutions in test_cnn: 2.2%
         * at 1e-3, 0.02% at 1e-2) or a ReLU's kink within eps of x[i]. A wrong gradient
         * misses at every step. */
        static const float other_steps[] = {4.0f, 0.25f};
        for (size_t k = 0; k < 2 && err > TEST_FD_TOL; k++) {
            float step = eps * other_steps[k];
            x[i] = saved + step;
            up = loss(ctx);
            x[i] = saved - step;
            down = loss(ctx);
            x[i] = saved;
            double other = (up - down) / (2.0 * (double)step);
            double err_other = test_rel_err(grad[i], other, TEST_FD_FLOOR);
            if (err_other < err) err = err_other, numeric = other;
        }
        if (err > worst) worst = err;
        if (err > TEST_FD_TOL && failures++ < 5)
            print_error("%s[%zu]: analytic %.6g, numeric %.6g\n", what, i, (double)grad[i], numeric);
    }
    print_message("%s: %zu entries, worst relative error %.2e\n", what, n, worst);
    return failures;
}

#endif
