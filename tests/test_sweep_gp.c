/* Issue 34 ask 2: skinner's Gaussian process (src/sweep/gp.c) against scikit-learn's
 * GaussianProcessRegressor with the same kernel, ConstantKernel * Matern(nu=1.5) +
 * ConstantKernel * DotProduct + WhiteKernel, on fixed data: the log marginal likelihood and
 * the predictive mean and std at skinner's fitted hyperparameters, and skinner's fit against
 * scikit-learn's own (tests/test_sweep_gp.py does the scikit-learn side). Without Debian's
 * python3-sklearn the case is skipped loudly; under CI=true it fails. */
#include "test_util.h"

#include "sweep/sweep.h"
#include "test_spawn.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <sys/wait.h>

enum { NUM_POINTS = 40, DIMS = 3, NUM_QUERIES = 12, RESTARTS = 4 };

static cJSON *matrix(const double *values, int rows, int cols) {
    cJSON *outer = cJSON_CreateArray();
    for (int r = 0; r < rows; r++)
        cJSON_AddItemToArray(outer, cJSON_CreateDoubleArray(values + (size_t)r * cols, cols));
    return outer;
}

static void test_gp_against_sklearn(void **state) {
    (void)state;
    if (access("/usr/bin/python3", X_OK) != 0) TEST_SKIP("/usr/bin/python3 is missing");
    /* fixed data: a bump, a trend and a little noise over [-1, 1]^3 */
    double x[NUM_POINTS * DIMS], y[NUM_POINTS], xq[NUM_QUERIES * DIMS];
    uint64_t rng = sk_rng_seed(34, 0);
    for (int i = 0; i < NUM_POINTS; i++) {
        double *p = x + i * DIMS;
        for (int d = 0; d < DIMS; d++) p[d] = sk_rng_uniform(&rng, -1.0, 1.0);
        y[i] = sin(3.0 * p[0]) + 0.5 * p[1] - p[2] * p[2] + 0.05 * sk_rng_normal(&rng);
    }
    for (int i = 0; i < NUM_QUERIES * DIMS; i++) xq[i] = sk_rng_uniform(&rng, -1.2, 1.2);
    sk_gp gp;
    assert_int_equal(sk_gp_fit(&gp, x, y, NUM_POINTS, DIMS, RESTARTS, 1), SK_OK);
    double mean[NUM_QUERIES], std[NUM_QUERIES];
    assert_int_equal(sk_gp_predict(&gp, xq, NUM_QUERIES, mean, std), SK_OK);
    /* a sanity check of our own: the fit explains the data far better than its spread */
    double train_mean[NUM_POINTS], residual = 0, spread = 0, y_mean = 0;
    assert_int_equal(sk_gp_predict(&gp, x, NUM_POINTS, train_mean, NULL), SK_OK);
    for (int i = 0; i < NUM_POINTS; i++) y_mean += y[i] / NUM_POINTS;
    for (int i = 0; i < NUM_POINTS; i++) {
        residual += (train_mean[i] - y[i]) * (train_mean[i] - y[i]);
        spread += (y[i] - y_mean) * (y[i] - y_mean);
    }
    assert_true(residual < 0.05 * spread);

    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "x", matrix(x, NUM_POINTS, DIMS));
    cJSON_AddItemToObject(root, "y", cJSON_CreateDoubleArray(y, NUM_POINTS));
    cJSON_AddItemToObject(root, "xq", matrix(xq, NUM_QUERIES, DIMS));
    double theta[] = {gp.hyper.log_c, gp.hyper.log_length, gp.hyper.log_linear, gp.hyper.log_bias,
                      gp.hyper.log_noise};
    cJSON_AddItemToObject(root, "theta", cJSON_CreateDoubleArray(theta, SK_GP_NUM_HYPER));
    cJSON_AddNumberToObject(root, "lml", gp.lml);
    cJSON_AddItemToObject(root, "mean", cJSON_CreateDoubleArray(mean, NUM_QUERIES));
    cJSON_AddItemToObject(root, "std", cJSON_CreateDoubleArray(std, NUM_QUERIES));
    cJSON_AddNumberToObject(root, "log_bound", SK_GP_LOG_MAX);
    cJSON_AddNumberToObject(root, "restarts", RESTARTS);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    sk_gp_free(&gp);
    char dir[] = "/tmp/skinner-test-sweep-gp-XXXXXX", data[128], out[128], err[128];
    assert_non_null(mkdtemp(dir));
    snprintf(data, sizeof data, "%s/gp.json", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    FILE *file = fopen(data, "w");
    assert_non_null(file);
    fputs(text, file);
    fclose(file);
    free(text);
    char *argv[] = {"/usr/bin/python3", SKINNER_SOURCE_DIR "/tests/test_sweep_gp.py", data, NULL};
    pid_t pid = test_spawn(argv, out, err, 100);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    char command[512];
    snprintf(command, sizeof command, "cat '%s' '%s'", out, err);
    if (system(command) != 0) print_message("(could not show its output)\n");
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    if (system(command) != 0) print_message("could not remove %s\n", dir);
    if (code == TEST_SKIP_EXIT)
        TEST_SKIP("scikit-learn is missing (Debian's python3-sklearn; scripts/setup.sh --test)");
    assert_int_equal(code, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gp_against_sklearn)};
    return test_run_group("test_sweep_gp", tests, 1, NULL, NULL);
}
