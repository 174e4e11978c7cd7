/* Hyperparameter sweeps (docs/sweeps.md): the search space and its transforms, the
 * sweep file, the Gaussian process, the score-cost Pareto front and the suggestions, and
 * the state file. The program's `skinner sweep` (src/cli/sweep.c) runs the trials. */
#ifndef SK_SWEEP_H
#define SK_SWEEP_H

#include "../core/core.h"

#include <stdint.h>

/* ------------------------------------------------------------ the space */

typedef enum sk_sweep_dist {
    SK_DIST_UNIFORM,     /* linear in the value */
    SK_DIST_LOG_UNIFORM, /* linear in log(value); min > 0 */
    SK_DIST_INTEGER,     /* linear, rounded to an integer */
    SK_DIST_POW2,        /* linear in log2(value), rounded to a power of two */
    SK_DIST_LOGIT,       /* linear in log(v / (1 - v)); 0 < min < max < 1 */
} sk_sweep_dist;
#define SK_SWEEP_DIST_COUNT (SK_DIST_LOGIT + 1)

#define SK_SWEEP_KEY_MAX 128
#define SK_SWEEP_MAX_PARAMS 32

typedef struct sk_sweep_param {
    char key[SK_SWEEP_KEY_MAX]; /* the config key, "ppo.learning_rate" */
    sk_sweep_dist dist;
    double min, max;
    double centre; /* the first trial's value (default: the middle of the range) */
    double scale;  /* std of a suggestion around a front point, in [-1, 1] units */
    int line;      /* of its section in the sweep file */
} sk_sweep_param;

/* "uniform", "log_uniform", ...: false if name is none of them. */
bool sk_sweep_dist_parse(const char *name, sk_sweep_dist *out);
const char *sk_sweep_dist_name(sk_sweep_dist dist);
/* The value at u in [-1, 1] (clamped): u = -1 is min, u = 1 is max, linear in the
 * distribution's transform; integer and power-of-two values are rounded. */
double sk_sweep_value(const sk_sweep_param *param, double u);
/* The inverse: u in [-1, 1] of a value within [min, max] (clamped). */
double sk_sweep_unit(const sk_sweep_param *param, double value);

/* ------------------------------------------------------------ the sweep file */

typedef enum sk_sweep_method { SK_SWEEP_RANDOM, SK_SWEEP_PARETO } sk_sweep_method;
typedef enum sk_sweep_cost { SK_COST_SECONDS, SK_COST_STEPS } sk_sweep_cost;
/* The sweep file's words for a method, a cost and a goal ("pareto", "seconds", "max"): the
 * tables the reader parses them with (spec.c). */
const char *sk_sweep_method_name(sk_sweep_method method);
const char *sk_sweep_cost_name(sk_sweep_cost cost);
const char *sk_sweep_goal_name(bool maximize);

#define SK_SWEEP_MAX_FIXED 64
#define SK_SWEEP_TEXT_MAX 4224

typedef struct sk_sweep_spec {
    char env[256];
    char base_config[SK_SWEEP_TEXT_MAX]; /* an INI under the trials' keys, or "" */
    sk_sweep_method method;
    char metric[SK_SWEEP_KEY_MAX]; /* a key of the trials' summary.json, or of eval.json */
    bool metric_from_eval;         /* metric = eval.KEY: `skinner eval --json` of each seed */
    char eval_args[SK_SWEEP_TEXT_MAX]; /* [sweep] eval: that command's further arguments */
    bool maximize;
    sk_sweep_cost cost;
    int64_t trials;  /* budget: finished trials (0: no limit) */
    double seconds;  /* budget: sweep wall seconds (0: no limit) */
    int trials_at_once, threads_per_trial, seeds_per_trial;
    uint64_t seed;
    int retest_every; /* every Nth trial re-runs a front point (0: never) */
    double early_stop; /* stop a seed below best - early_stop |best| at equal steps (0: off) */
    int num_params;
    sk_sweep_param params[SK_SWEEP_MAX_PARAMS];
    int num_fixed; /* plain sections' keys, given to every trial */
    char fixed_key[SK_SWEEP_MAX_FIXED][SK_SWEEP_KEY_MAX];
    char fixed_value[SK_SWEEP_MAX_FIXED][256];
    int fixed_line[SK_SWEEP_MAX_FIXED];
    int metric_line, env_line, config_line, early_stop_line, cost_line; /* their lines in the file */
} sk_sweep_spec;

/* The summary.json keys a trial's metric or cost may be read from (numbers a run
 * writes); NULL-terminated. */
extern const char *const sk_sweep_summary_keys[];

/* Reads and checks the sweep file at path. Refuses, naming path:line, unknown
 * sections' keys, a missing env, metric or budget, an empty or inverted range, a
 * log range through zero, a logit range outside (0, 1), an unknown distribution,
 * method, goal or cost, a centre outside its range and a metric no run writes. */
sk_status sk_sweep_spec_load(sk_sweep_spec *spec, const char *path);

/* ------------------------------------------------------------ the Gaussian process */

/* k(a, b) = c * Matern32(|a - b| / length) + linear * (bias^2 + a.b) + noise * [a is b],
 * scikit-learn's ConstantKernel(c) * Matern(length, nu=1.5)
 * + ConstantKernel(linear) * DotProduct(bias) + WhiteKernel(noise). Logs of each. */
typedef struct sk_gp_hyper {
    double log_c, log_length, log_linear, log_bias, log_noise;
} sk_gp_hyper;

#define SK_GP_NUM_HYPER 5
/* The bounds of every log hyperparameter (scikit-learn's default 1e-5..1e5). */
#define SK_GP_LOG_MIN (-11.512925464970229)
#define SK_GP_LOG_MAX 11.512925464970229
/* Added to the diagonal, as scikit-learn's alpha default. */
#define SK_GP_JITTER 1e-10

typedef struct sk_gp {
    int n, dims;
    double *x;     /* (n, dims) */
    double *chol;  /* (n, n) lower Cholesky factor of K, column-major */
    double *alpha; /* (n) K^-1 y */
    sk_gp_hyper hyper;
    double lml; /* log marginal likelihood at hyper */
} sk_gp;

/* Fits hyper by maximising the log marginal likelihood (Nelder-Mead in the logs,
 * from the defaults and `restarts` random starts), then factors K. x (n, dims) and y (n)
 * are copied. */
sk_status sk_gp_fit(sk_gp *gp, const double *x, const double *y, int n, int dims, int restarts,
                    uint64_t seed);
/* The same at given hyperparameters (no fitting). */
sk_status sk_gp_set(sk_gp *gp, const double *x, const double *y, int n, int dims,
                    sk_gp_hyper hyper);
/* Mean and standard deviation (of a noisy observation, with the white noise, as
 * scikit-learn's predict) at m points xq (m, dims). std may be NULL. */
sk_status sk_gp_predict(const sk_gp *gp, const double *xq, int m, double *mean, double *std);
void sk_gp_free(sk_gp *gp);

/* ------------------------------------------------------------ the front and suggestions */

/* The indices of the points no other point beats on score (higher) and cost (lower) at
 * once, by increasing cost, in front (room for n); returns their count. */
int sk_pareto_front(const double *score, const double *cost, int n, int *front);

/* A finished trial as the suggestion sees it. */
typedef struct sk_sweep_obs {
    double u[SK_SWEEP_MAX_PARAMS]; /* its parameters in [-1, 1] */
    double score;                  /* the metric, larger is better (negated for goal min) */
    double cost;                   /* seconds or steps, > 0 */
    bool ok;                       /* false: failed, no score */
} sk_sweep_obs;

/* Suggests trial number `trial` (0-based) from the finished ones: the centre first;
 * random points for random search and until the Pareto search has enough successes;
 * then candidates around the front, the one best on predicted score at a cost near a
 * random target; every retest_every-th trial a front point again (*retest_of its
 * index in obs, else -1). Deterministic in (spec->seed, trial, obs). */
sk_status sk_sweep_suggest(const sk_sweep_spec *spec, const sk_sweep_obs *obs, int num_obs,
                           int trial, double *u, int *retest_of);

/* ------------------------------------------------------------ the state file */

/* A finished trial, one line of DIR/sweep.jsonl. */
typedef struct sk_sweep_trial {
    int index;     /* its folder DIR/trial-NNNN */
    int retest_of; /* the trial it re-ran, or -1 */
    bool ok;
    double value[SK_SWEEP_MAX_PARAMS]; /* the keys' values as the trial ran them */
    double metric;                     /* mean over its seeds (ok only) */
    double cost;                       /* mean seconds or steps over its seeds (ok only) */
    double trial_seconds;              /* its wall time, all seeds */
    double sweep_seconds;              /* the sweep's wall time when it finished */
    char message[512];                 /* why it failed (failed only) */
} sk_sweep_trial;

/* The observation the suggestion sees of trial (score = metric, negated for goal min). */
sk_sweep_obs sk_sweep_observe(const sk_sweep_spec *spec, const sk_sweep_trial *trial);

/* Appends trial as one JSON line to path with a single write, then fsyncs: a killed
 * sweep leaves whole lines, or one torn last line that sk_sweep_state_read drops. */
sk_status sk_sweep_state_append(const char *path, const sk_sweep_spec *spec,
                                const sk_sweep_trial *trial);
/* Reads every finished trial of path (a missing file is none) into *trials (malloc'd,
 * *count of them). A last line without its newline (a write cut by a kill) is cut off
 * the file; any other unreadable line is an error naming it. */
sk_status sk_sweep_state_read(const char *path, const sk_sweep_spec *spec, sk_sweep_trial **trials,
                              int *count);

#endif
