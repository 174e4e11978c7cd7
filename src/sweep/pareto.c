/* The score-cost Pareto front and the suggestions, in the style of CARBS (Fetterman et
 * al. 2023) and PufferLib's Protein: search near the best trade-offs found so far,
 * aiming each suggestion at a random cost along the front, so a sweep both finds cheap
 * configs that score well and spends on expensive ones only where they pay. */
#include "sweep.h"

#include <math.h>
#include <string.h>

/* Candidates drawn around the front per suggestion. */
#define NUM_CANDIDATES 256
/* Restarts of the GPs' hyperparameter fit. */
#define GP_RESTARTS 2
/* Optimism: candidates are ranked on mean + UCB_BETA * std of the score. */
#define UCB_BETA 0.5

int sk_pareto_front(const double *score, const double *cost, int n, int *front) {
    int count = 0;
    for (int i = 0; i < n; i++) {
        bool dominated = false;
        for (int j = 0; j < n && !dominated; j++)
            dominated = score[j] >= score[i] && cost[j] <= cost[i] &&
                        (score[j] > score[i] || cost[j] < cost[i]);
        if (!dominated) front[count++] = i;
    }
    for (int i = 1; i < count; i++) /* by cost, then by index: a stable order */
        for (int j = i; j > 0 && cost[front[j]] < cost[front[j - 1]]; j--) {
            int t = front[j];
            front[j] = front[j - 1], front[j - 1] = t;
        }
    return count;
}

static void standardise(double *values, int n) {
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++) mean += values[i] / n;
    for (int i = 0; i < n; i++) var += (values[i] - mean) * (values[i] - mean) / n;
    double sd = var > 1e-24 ? sqrt(var) : 1.0;
    for (int i = 0; i < n; i++) values[i] = (values[i] - mean) / sd;
}

static void rescale01(double *values, int n) {
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) lo = fmin(lo, values[i]), hi = fmax(hi, values[i]);
    for (int i = 0; i < n; i++) values[i] = hi > lo ? (values[i] - lo) / (hi - lo) : 0.5;
}

/* The successful trials' points, scores and log-costs; its count. */
static int successes(const sk_sweep_obs *obs, int num_obs, int dims, double *x, double *score,
                     double *log_cost, int *index) {
    int n = 0;
    for (int i = 0; i < num_obs; i++) {
        if (!obs[i].ok) continue;
        memcpy(x + (size_t)n * dims, obs[i].u, (size_t)dims * sizeof *x);
        score[n] = obs[i].score;
        log_cost[n] = log(fmax(obs[i].cost, 1e-12));
        index[n++] = i;
    }
    return n;
}

static sk_status suggest_pareto(const sk_sweep_spec *spec, int dims, const double *x,
                                const double *score, const double *log_cost, const int *front,
                                int front_size, int n, uint64_t *rng, double *u) {
    double *buffer = malloc(((size_t)NUM_CANDIDATES * (dims + 3) + 2 * (size_t)n) * sizeof *buffer);
    if (!buffer) return sk_fail(SK_ERR_NOMEM, "out of memory for the sweep's candidates");
    double *cand = buffer, *mean_score = cand + (size_t)NUM_CANDIDATES * dims;
    double *std_score = mean_score + NUM_CANDIDATES, *mean_cost = std_score + NUM_CANDIDATES;
    double *y_score = mean_cost + NUM_CANDIDATES, *y_cost = y_score + n;
    memcpy(y_score, score, (size_t)n * sizeof *y_score);
    memcpy(y_cost, log_cost, (size_t)n * sizeof *y_cost);
    standardise(y_score, n);
    standardise(y_cost, n);
    for (int c = 0; c < NUM_CANDIDATES; c++) {
        const double *centre = x + (size_t)front[sk_rng_below(rng, (uint32_t)front_size)] * dims;
        for (int d = 0; d < dims; d++) {
            double v = centre[d] + spec->params[d].scale * sk_rng_normal(rng);
            cand[(size_t)c * dims + d] = v < -1 ? -1 : v > 1 ? 1 : v;
        }
    }
    sk_gp gp_score, gp_cost;
    uint64_t gp_seed = sk_rng_next(rng);
    sk_status status = sk_gp_fit(&gp_score, x, y_score, n, dims, GP_RESTARTS, gp_seed);
    if (status == SK_OK) {
        status = sk_gp_predict(&gp_score, cand, NUM_CANDIDATES, mean_score, std_score);
        sk_gp_free(&gp_score);
    }
    if (status == SK_OK) status = sk_gp_fit(&gp_cost, x, y_cost, n, dims, GP_RESTARTS, gp_seed + 1);
    if (status == SK_OK) {
        status = sk_gp_predict(&gp_cost, cand, NUM_CANDIDATES, mean_cost, NULL);
        sk_gp_free(&gp_cost);
    }
    if (status == SK_OK) {
        for (int c = 0; c < NUM_CANDIDATES; c++) mean_score[c] += UCB_BETA * std_score[c];
        rescale01(mean_score, NUM_CANDIDATES);
        rescale01(mean_cost, NUM_CANDIDATES);
        double target = sk_rng_double(rng), best = -INFINITY;
        int chosen = 0;
        for (int c = 0; c < NUM_CANDIDATES; c++) {
            double utility = mean_score[c] * (1.0 - fabs(mean_cost[c] - target));
            if (utility > best) best = utility, chosen = c;
        }
        memcpy(u, cand + (size_t)chosen * dims, (size_t)dims * sizeof *u);
    }
    free(buffer);
    return status;
}

sk_status sk_sweep_suggest(const sk_sweep_spec *spec, const sk_sweep_obs *obs, int num_obs,
                           int trial, double *u, int *retest_of) {
    int dims = spec->num_params;
    uint64_t rng = sk_rng_seed(spec->seed, (uint64_t)trial);
    *retest_of = -1;
    if (trial == 0) { /* the centre: the config the user would have run */
        for (int d = 0; d < dims; d++) u[d] = sk_sweep_unit(&spec->params[d], spec->params[d].centre);
        return SK_OK;
    }
    int min_successes = dims + 2 > 4 ? dims + 2 : 4;
    double *x = malloc(((size_t)num_obs * (dims + 2) + 1) * sizeof *x);
    int *index = malloc(2 * ((size_t)num_obs + 1) * sizeof *index);
    if (!x || !index) {
        free(x);
        free(index);
        return sk_fail(SK_ERR_NOMEM, "out of memory for the sweep's %d trials", num_obs);
    }
    double *score = x + (size_t)num_obs * dims, *log_cost = score + num_obs;
    int *front = index + num_obs + 1;
    int n = successes(obs, num_obs, dims, x, score, log_cost, index);
    sk_status status = SK_OK;
    if (spec->method == SK_SWEEP_RANDOM || n < min_successes) {
        for (int d = 0; d < dims; d++) u[d] = sk_rng_uniform(&rng, -1.0, 1.0);
    } else {
        int front_size = sk_pareto_front(score, log_cost, n, front);
        if (spec->retest_every > 0 && trial % spec->retest_every == 0) {
            int pick = front[sk_rng_below(&rng, (uint32_t)front_size)];
            memcpy(u, x + (size_t)pick * dims, (size_t)dims * sizeof *u);
            *retest_of = index[pick];
        } else {
            status = suggest_pareto(spec, dims, x, score, log_cost, front, front_size, n, &rng, u);
        }
    }
    free(x);
    free(index);
    return status;
}
