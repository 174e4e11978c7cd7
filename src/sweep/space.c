/* The search space: each tuned key maps [-1, 1] onto [min, max] through its
 * distribution's transform, so the Gaussian processes and the suggestions work in one
 * unit box whatever the keys' scales (a learning rate spans decades, a horizon powers of
 * two, a discount the last few thousandths below 1). */
#include "sweep.h"

#include <math.h>
#include <string.h>

static const char *const g_dist_names[] = {"uniform", "log_uniform", "integer", "pow2", "logit"};
_Static_assert(sizeof g_dist_names / sizeof *g_dist_names == SK_SWEEP_DIST_COUNT,
               "a name per sk_sweep_dist");

bool sk_sweep_dist_parse(const char *name, sk_sweep_dist *out) {
    for (int i = 0; i < (int)(sizeof g_dist_names / sizeof *g_dist_names); i++)
        if (strcmp(name, g_dist_names[i]) == 0) {
            *out = (sk_sweep_dist)i;
            return true;
        }
    return false;
}

const char *sk_sweep_dist_name(sk_sweep_dist dist) { return g_dist_names[dist]; }

static double logit(double p) { return log(p / (1.0 - p)); }

/* The transform in which the distribution is linear. */
static double forward(sk_sweep_dist dist, double value) {
    switch (dist) {
    case SK_DIST_LOG_UNIFORM: return log(value);
    case SK_DIST_POW2: return log2(value);
    case SK_DIST_LOGIT: return logit(value);
    default: return value;
    }
}

static double backward(sk_sweep_dist dist, double t) {
    switch (dist) {
    case SK_DIST_LOG_UNIFORM: return exp(t);
    case SK_DIST_POW2: return exp2(round(t));
    case SK_DIST_LOGIT: return 1.0 / (1.0 + exp(-t));
    case SK_DIST_INTEGER: return round(t);
    default: return t;
    }
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

double sk_sweep_value(const sk_sweep_param *param, double u) {
    double lo = forward(param->dist, param->min), hi = forward(param->dist, param->max);
    double t = lo + (clamp(u, -1.0, 1.0) + 1.0) * 0.5 * (hi - lo);
    return clamp(backward(param->dist, t), param->min, param->max);
}

double sk_sweep_unit(const sk_sweep_param *param, double value) {
    double lo = forward(param->dist, param->min), hi = forward(param->dist, param->max);
    double t = forward(param->dist, clamp(value, param->min, param->max));
    return clamp(2.0 * (t - lo) / (hi - lo) - 1.0, -1.0, 1.0);
}
