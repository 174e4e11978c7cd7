/* A Gaussian process for the sweep's score and log-cost: the Matern-3/2 part follows
 * the bumps of a score surface, the linear part its trend across the box (what a few
 * dozen trials can tell), the white part the seed-to-seed noise of a trial. The
 * hyperparameters maximise the log marginal likelihood (Rasmussen & Williams, eq. 2.30),
 * by Nelder-Mead in their logs: five of them, a few hundred points at most, so a
 * gradient-free simplex is fast enough and has no gradient code to get wrong. K is
 * factored by LAPACK's dpotrf and solved by dpotrs (OpenBLAS ships both). */
#include "sweep.h"

#include "skinner/module.h"

#include <math.h>
#include <string.h>

/* LAPACK (Fortran calling convention, with the hidden length of the character
 * argument). */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda,
             double *b, const int *ldb, int *info, size_t uplo_len);

#define SQRT3 1.7320508075688772
#define LOG_2PI 1.8378770664093453
#define NM_MAX_EVALS 800

static double kernel(const sk_gp_hyper *h, const double *a, const double *b, int dims) {
    double dist2 = 0, dot = 0;
    for (int d = 0; d < dims; d++) {
        double diff = a[d] - b[d];
        dist2 += diff * diff;
        dot += a[d] * b[d];
    }
    double r = SQRT3 * sqrt(dist2) / exp(h->log_length);
    double bias = exp(h->log_bias);
    return exp(h->log_c) * (1.0 + r) * exp(-r) + exp(h->log_linear) * (bias * bias + dot);
}

/* Fills the lower factor of K in chol; false if K is not positive definite. */
static bool factor(const sk_gp_hyper *h, const double *x, int n, int dims, double *chol) {
    double noise = exp(h->log_noise) + SK_GP_JITTER;
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            double k = kernel(h, x + (size_t)i * dims, x + (size_t)j * dims, dims);
            chol[i + (size_t)j * n] = k + (i == j ? noise : 0.0);
        }
    int info = 0;
    dpotrf_("L", &n, chol, &n, &info, 1);
    return info == 0;
}

/* log p(y | x, h); alpha gets K^-1 y. -inf when K cannot be factored. */
static double log_marginal(const sk_gp_hyper *h, const double *x, const double *y, int n, int dims,
                           double *chol, double *alpha) {
    if (!factor(h, x, n, dims, chol)) return -INFINITY;
    memcpy(alpha, y, (size_t)n * sizeof *alpha);
    int info = 0, one = 1;
    dpotrs_("L", &n, &one, chol, &n, alpha, &n, &info, 1);
    if (info != 0) return -INFINITY;
    double fit = 0, logdet = 0;
    for (int i = 0; i < n; i++) {
        fit += y[i] * alpha[i];
        logdet += log(chol[i + (size_t)i * n]);
    }
    return -0.5 * fit - logdet - 0.5 * n * LOG_2PI;
}

static sk_gp_hyper from_vector(const double *v) {
    sk_gp_hyper h;
    double *slots[SK_GP_NUM_HYPER] = {&h.log_c, &h.log_length, &h.log_linear, &h.log_bias,
                                      &h.log_noise};
    for (int i = 0; i < SK_GP_NUM_HYPER; i++)
        *slots[i] = v[i] < SK_GP_LOG_MIN ? SK_GP_LOG_MIN : v[i] > SK_GP_LOG_MAX ? SK_GP_LOG_MAX : v[i];
    return h;
}

typedef struct fit_problem {
    const double *x, *y;
    int n, dims;
    double *chol, *alpha;
} fit_problem;

static double objective(const fit_problem *p, const double *v) {
    sk_gp_hyper h = from_vector(v);
    double lml = log_marginal(&h, p->x, p->y, p->n, p->dims, p->chol, p->alpha);
    return isfinite(lml) ? -lml : INFINITY;
}

/* Nelder-Mead (Lagarias et al. 1998's standard coefficients) from start; returns the
 * best value, best in v. */
static double nelder_mead(const fit_problem *p, double *v) {
    enum { D = SK_GP_NUM_HYPER };
    double simplex[D + 1][D], values[D + 1];
    for (int i = 0; i <= D; i++) {
        memcpy(simplex[i], v, sizeof simplex[i]);
        if (i) simplex[i][i - 1] += 1.0;
        values[i] = objective(p, simplex[i]);
    }
    int evals = D + 1;
    while (evals < NM_MAX_EVALS) {
        /* order: best first */
        for (int i = 1; i <= D; i++)
            for (int j = i; j > 0 && values[j] < values[j - 1]; j--) {
                double t = values[j];
                values[j] = values[j - 1], values[j - 1] = t;
                for (int d = 0; d < D; d++) {
                    t = simplex[j][d];
                    simplex[j][d] = simplex[j - 1][d], simplex[j - 1][d] = t;
                }
            }
        if (isfinite(values[D]) && fabs(values[D] - values[0]) < 1e-10 * (1 + fabs(values[0])))
            break;
        double centroid[D] = {0}, trial[D], trial2[D];
        for (int i = 0; i < D; i++)
            for (int d = 0; d < D; d++) centroid[d] += simplex[i][d] / D;
        for (int d = 0; d < D; d++) trial[d] = centroid[d] + (centroid[d] - simplex[D][d]);
        double reflected = objective(p, trial);
        evals++;
        if (reflected < values[0]) {
            for (int d = 0; d < D; d++) trial2[d] = centroid[d] + 2.0 * (centroid[d] - simplex[D][d]);
            double expanded = objective(p, trial2);
            evals++;
            bool take_expanded = expanded < reflected;
            memcpy(simplex[D], take_expanded ? trial2 : trial, sizeof trial);
            values[D] = take_expanded ? expanded : reflected;
        } else if (reflected < values[D - 1]) {
            memcpy(simplex[D], trial, sizeof trial);
            values[D] = reflected;
        } else {
            bool outside = reflected < values[D];
            for (int d = 0; d < D; d++)
                trial2[d] = outside ? centroid[d] + 0.5 * (trial[d] - centroid[d])
                                    : centroid[d] + 0.5 * (simplex[D][d] - centroid[d]);
            double contracted = objective(p, trial2);
            evals++;
            if (contracted < (outside ? reflected : values[D])) {
                memcpy(simplex[D], trial2, sizeof trial2);
                values[D] = contracted;
            } else {
                for (int i = 1; i <= D; i++) {
                    for (int d = 0; d < D; d++)
                        simplex[i][d] = simplex[0][d] + 0.5 * (simplex[i][d] - simplex[0][d]);
                    values[i] = objective(p, simplex[i]);
                }
                evals += D;
            }
        }
    }
    int best = 0;
    for (int i = 1; i <= D; i++)
        if (values[i] < values[best]) best = i;
    memcpy(v, simplex[best], sizeof simplex[best]);
    return values[best];
}

static sk_status gp_store(sk_gp *gp, const double *x, const double *y, int n, int dims) {
    memset(gp, 0, sizeof *gp);
    if (n < 1 || dims < 1) return sk_fail(SK_ERR_INVALID, "a GP needs points (got %d in %d dims)", n, dims);
    gp->n = n, gp->dims = dims;
    gp->x = malloc((size_t)n * dims * sizeof *gp->x);
    gp->chol = malloc((size_t)n * n * sizeof *gp->chol);
    gp->alpha = malloc((size_t)n * sizeof *gp->alpha);
    if (!gp->x || !gp->chol || !gp->alpha) {
        sk_gp_free(gp);
        return sk_fail(SK_ERR_NOMEM, "out of memory for a GP of %d points", n);
    }
    memcpy(gp->x, x, (size_t)n * dims * sizeof *gp->x);
    (void)y;
    return SK_OK;
}

sk_status sk_gp_set(sk_gp *gp, const double *x, const double *y, int n, int dims,
                    sk_gp_hyper hyper) {
    sk_status status = gp_store(gp, x, y, n, dims);
    if (status != SK_OK) return status;
    gp->hyper = hyper;
    gp->lml = log_marginal(&hyper, gp->x, y, n, dims, gp->chol, gp->alpha);
    if (!isfinite(gp->lml)) {
        sk_gp_free(gp);
        return sk_fail(SK_ERR_INVALID, "the GP's kernel matrix is not positive definite");
    }
    return SK_OK;
}

sk_status sk_gp_fit(sk_gp *gp, const double *x, const double *y, int n, int dims, int restarts,
                    uint64_t seed) {
    sk_status status = gp_store(gp, x, y, n, dims);
    if (status != SK_OK) return status;
    fit_problem problem = {gp->x, y, n, dims, gp->chol, gp->alpha};
    double best[SK_GP_NUM_HYPER] = {0}, best_value = INFINITY;
    uint64_t rng = sk_rng_seed(seed, 0x6770);
    for (int start = 0; start <= restarts; start++) {
        double v[SK_GP_NUM_HYPER] = {0}; /* the first start: every hyperparameter 1 */
        /* random starts within e^-3..e^3: the far corners of the bounds are flat */
        if (start)
            for (int i = 0; i < SK_GP_NUM_HYPER; i++) v[i] = sk_rng_uniform(&rng, -3.0, 3.0);
        double value = nelder_mead(&problem, v);
        if (value < best_value) {
            best_value = value;
            memcpy(best, v, sizeof best);
        }
    }
    sk_gp_hyper hyper = from_vector(best);
    sk_gp_free(gp);
    if (!isfinite(best_value))
        return sk_fail(SK_ERR_INVALID, "no GP hyperparameters factor the kernel matrix");
    return sk_gp_set(gp, x, y, n, dims, hyper);
}

sk_status sk_gp_predict(const sk_gp *gp, const double *xq, int m, double *mean, double *std) {
    int n = gp->n, dims = gp->dims;
    double *cross = malloc((size_t)n * m * sizeof *cross); /* (n, m) column-major */
    if (!cross) return sk_fail(SK_ERR_NOMEM, "out of memory predicting %d points", m);
    for (int j = 0; j < m; j++) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            double k = kernel(&gp->hyper, gp->x + (size_t)i * dims, xq + (size_t)j * dims, dims);
            cross[i + (size_t)j * n] = k;
            sum += k * gp->alpha[i];
        }
        mean[j] = sum;
    }
    if (std) {
        double *solved = malloc((size_t)n * m * sizeof *solved);
        if (!solved) {
            free(cross);
            return sk_fail(SK_ERR_NOMEM, "out of memory predicting %d points", m);
        }
        memcpy(solved, cross, (size_t)n * m * sizeof *solved);
        int info = 0;
        dpotrs_("L", &n, &m, gp->chol, &n, solved, &n, &info, 1);
        for (int j = 0; j < m; j++) {
            const double *point = xq + (size_t)j * dims;
            double var = kernel(&gp->hyper, point, point, dims) + exp(gp->hyper.log_noise);
            for (int i = 0; i < n; i++) var -= cross[i + (size_t)j * n] * solved[i + (size_t)j * n];
            std[j] = var > 0 ? sqrt(var) : 0.0; /* as scikit-learn: a rounding-negative variance is 0 */
        }
        free(solved);
        if (info != 0) {
            free(cross);
            return sk_fail(SK_ERR_INVALID, "dpotrs failed (info %d)", info);
        }
    }
    free(cross);
    return SK_OK;
}

void sk_gp_free(sk_gp *gp) {
    free(gp->x);
    free(gp->chol);
    free(gp->alpha);
    gp->x = gp->chol = gp->alpha = NULL;
}
