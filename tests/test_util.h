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
#include <unistd.h>

/* ../shared next to the repository, or NULL (a user's fresh clone has none). */
static inline const char *test_shared_dir(void) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/../shared", SKINNER_SOURCE_DIR);
    return access(path, R_OK) == 0 ? path : NULL;
}

/* Skips the current test with a message when ../shared is absent. */
#define REQUIRE_SHARED(dir_var)                                                                    \
    const char *dir_var = test_shared_dir();                                                       \
    if (!dir_var) {                                                                                \
        print_message("skipped: ../shared (Gymnasium references, datasets) is not next to the "   \
                      "repository\n");                                                             \
        skip();                                                                                    \
    }

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
 * with central differences of step eps; prints the worst error and the first
 * mismatches; returns how many entries are off by more than TEST_FD_TOL. */
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
        if (err > worst) worst = err;
        if (err > TEST_FD_TOL && failures++ < 5)
            print_error("%s[%zu]: analytic %.6g, numeric %.6g\n", what, i, (double)grad[i], numeric);
    }
    print_message("%s: %zu entries, worst relative error %.2e\n", what, n, worst);
    return failures;
}

#endif
