/* skinner sweep report's figures: DIR/front.png (each trial's metric against its cost, the
 * Pareto front joined) and DIR/params.png (the metric against each tuned key's value). */
#include "sweep_cli.h"

#include <math.h>
#include <plplot.h>
#include <string.h>

#define FIGURE_WIDTH 1000
#define FIGURE_HEIGHT 700
#define COLOR_BACKGROUND 0
#define COLOR_AXES 1
#define COLOR_TRIAL 2
#define COLOR_FRONT 3
#define SYMBOL_DOT 17
#define SYMBOL_CIRCLE 4

static void start_figure(const char *path, int columns, int rows) {
    plsdev("pngcairo");
    plsfnam(path);
    plspage(0, 0, FIGURE_WIDTH, FIGURE_HEIGHT, 0, 0);
    plscol0(COLOR_BACKGROUND, 255, 255, 255);
    plscol0(COLOR_AXES, 0, 0, 0);
    plscol0(COLOR_TRIAL, 70, 110, 200);
    plscol0(COLOR_FRONT, 220, 50, 40);
    plssub(columns, rows);
    plinit();
}

/* Limits of values with a margin; logs when log_scale. */
static void limits(const double *values, int n, double *lo, double *hi) {
    *lo = INFINITY, *hi = -INFINITY;
    for (int i = 0; i < n; i++) *lo = fmin(*lo, values[i]), *hi = fmax(*hi, values[i]);
    double pad = *hi > *lo ? 0.05 * (*hi - *lo) : 0.5 + 0.05 * fabs(*lo);
    *lo -= pad, *hi += pad;
}

static bool log_axis(sk_sweep_dist dist) { return dist == SK_DIST_LOG_UNIFORM || dist == SK_DIST_POW2; }

bool sweep_plot(const char *dir, const sk_sweep_spec *spec, const sk_sweep_trial *trials,
                int count, const int *front, int front_size, const int *index, int n) {
    char path[4200];
    double *x = malloc((size_t)n * 2 * sizeof *x);
    if (!x || n == 0) {
        free(x);
        return false;
    }
    double *y = x + n, x_lo, x_hi, y_lo, y_hi;
    for (int k = 0; k < n; k++) {
        x[k] = log10(fmax(trials[index[k]].cost, 1e-12));
        y[k] = trials[index[k]].metric;
    }
    (void)count;
    snprintf(path, sizeof path, "%s/front.png", dir);
    start_figure(path, 1, 1);
    limits(x, n, &x_lo, &x_hi);
    limits(y, n, &y_lo, &y_hi);
    plcol0(COLOR_AXES);
    plenv(x_lo, x_hi, y_lo, y_hi, 0, 10); /* log x */
    char label[256], title[512];
    snprintf(label, sizeof label, "cost (%s, log scale)", sk_sweep_cost_name(spec->cost));
    snprintf(title, sizeof title, "%s sweep: %s (goal %s) against cost; red: the Pareto front",
             spec->env, spec->metric, sk_sweep_goal_name(spec->maximize));
    pllab(label, spec->metric, title);
    plcol0(COLOR_TRIAL);
    plpoin(n, x, y, SYMBOL_CIRCLE);
    double fx[SK_SWEEP_MAX_PARAMS * 64], fy[SK_SWEEP_MAX_PARAMS * 64];
    int shown = front_size < (int)(sizeof fx / sizeof *fx) ? front_size : (int)(sizeof fx / sizeof *fx);
    for (int k = 0; k < shown; k++) fx[k] = x[front[k]], fy[k] = y[front[k]];
    plcol0(COLOR_FRONT);
    plwidth(2.0);
    plline(shown, fx, fy);
    plpoin(shown, fx, fy, SYMBOL_DOT);
    plend();

    snprintf(path, sizeof path, "%s/params.png", dir);
    int columns = spec->num_params < 3 ? spec->num_params : 3;
    start_figure(path, columns, (spec->num_params + columns - 1) / columns);
    for (int d = 0; d < spec->num_params; d++) {
        const sk_sweep_param *param = &spec->params[d];
        for (int k = 0; k < n; k++) {
            double value = trials[index[k]].value[d];
            x[k] = log_axis(param->dist) ? log10(value) : value;
        }
        double lo = log_axis(param->dist) ? log10(param->min) : param->min;
        double hi = log_axis(param->dist) ? log10(param->max) : param->max;
        double pad = 0.03 * (hi - lo);
        pladv(0);
        plcol0(COLOR_AXES);
        plvsta();
        plwind(lo - pad, hi + pad, y_lo, y_hi);
        plbox(log_axis(param->dist) ? "bcnstl" : "bcnst", 0, 0, "bcnstv", 0, 0);
        snprintf(label, sizeof label, "%s (%s)", param->key, sk_sweep_dist_name(param->dist));
        pllab(label, spec->metric, "");
        plcol0(COLOR_TRIAL);
        plpoin(n, x, y, SYMBOL_CIRCLE);
    }
    plend();
    free(x);
    return true;
}
