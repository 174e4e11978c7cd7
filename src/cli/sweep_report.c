/* skinner sweep report DIR: the trials, the score-cost Pareto front and the best config,
 * which it writes as DIR/best.ini for `skinner train ENV --config DIR/best.ini`. */
#include "cli.h"
#include "sweep_cli.h"

#include <limits.h>
#include <math.h>
#include <string.h>

static const char *g_report_usage =
    "usage: skinner sweep report DIR\n"
    "\n"
    "Prints the sweep's trials, its score-cost Pareto front and its best config (the\n"
    "best mean of a trial and its re-tests), and writes the best as DIR/best.ini.\n";

static void print_values(const sk_sweep_spec *spec, const sk_sweep_trial *trial) {
    for (int d = 0; d < spec->num_params; d++) printf("  %s=%.6g", spec->params[d].key, trial->value[d]);
    printf("\n");
}

/* The mean metric of trial i with every re-test of it, and how many runs that is. */
static double pooled_metric(const sk_sweep_trial *trials, int count, int i, int *runs) {
    double sum = trials[i].metric;
    *runs = 1;
    for (int j = 0; j < count; j++)
        if (trials[j].ok && trials[j].retest_of == trials[i].index) sum += trials[j].metric, ++*runs;
    return sum / *runs;
}

int sweep_report(int argc, char **argv) {
    if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        fputs(g_report_usage, stdout);
        return SK_EXIT_OK;
    }
    if (argc != 1) {
        fputs(g_report_usage, stderr);
        return cli_error(SK_EXIT_USAGE, "sweep report takes one sweep folder");
    }
    const char *dir = argv[0];
    sk_sweep_spec spec;
    sk_sweep_trial *trials = NULL;
    int count = 0;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/sweep.jsonl", dir);
    sk_status status = sweep_open_existing(dir, &spec);
    if (status == SK_OK) status = sk_sweep_state_read(path, &spec, &trials, &count);
    if (status != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    int ok = 0;
    double seconds = 0;
    for (int i = 0; i < count; i++) {
        ok += trials[i].ok;
        seconds = fmax(seconds, trials[i].sweep_seconds);
    }
    const char *cost_name = sk_sweep_cost_name(spec.cost);
    printf("sweep of %s in %s: %s search, metric %s (goal %s), cost %s\n", spec.env, dir,
           sk_sweep_method_name(spec.method), spec.metric,
           sk_sweep_goal_name(spec.maximize), cost_name);
    printf("%d trial(s): %d ok, %d failed, %.1f s of sweep\n\n", count, ok, count - ok, seconds);
    printf("trial  %-12s %-12s params\n", spec.metric, cost_name);
    for (int i = 0; i < count; i++) {
        const sk_sweep_trial *trial = &trials[i];
        if (trial->ok) printf("%5d  %-12.6g %-12.6g", trial->index, trial->metric, trial->cost);
        else printf("%5d  %-25s", trial->index, "failed");
        if (trial->retest_of >= 0) printf("  (re-test of %d)", trial->retest_of);
        print_values(&spec, trial);
        if (!trial->ok) printf("       %s\n", trial->message);
    }
    if (ok == 0) {
        free(trials);
        return cli_error(SK_EXIT_FAILURE, "no trial of '%s' succeeded: no front, no best config", dir);
    }
    double *score = malloc((size_t)ok * 2 * sizeof *score);
    int *index = malloc((size_t)ok * 2 * sizeof *index);
    if (!score || !index) {
        free(score), free(index), free(trials);
        return cli_error(SK_EXIT_FAILURE, "out of memory");
    }
    double *cost = score + ok;
    int *front = index + ok, n = 0;
    for (int i = 0; i < count; i++)
        if (trials[i].ok) {
            score[n] = spec.maximize ? trials[i].metric : -trials[i].metric;
            cost[n] = trials[i].cost;
            index[n++] = i;
        }
    int front_size = sk_pareto_front(score, cost, n, front);
    printf("\nPareto front (%s against %s, cheapest first):\n", spec.metric, cost_name);
    for (int k = 0; k < front_size; k++) {
        const sk_sweep_trial *trial = &trials[index[front[k]]];
        printf("%5d  %-12.6g %-12.6g", trial->index, trial->metric, trial->cost);
        print_values(&spec, trial);
    }
    if (sweep_plot(dir, &spec, trials, count, front, front_size, index, n))
        printf("\nfigures: %s/front.png (the metric against cost, the front in red), "
               "%s/params.png (the metric against each key)\n", dir, dir);
    int best = -1, best_runs = 0;
    double best_metric = 0;
    for (int k = 0; k < n; k++) {
        int i = index[k], runs;
        if (trials[i].retest_of >= 0) continue;
        double metric = pooled_metric(trials, count, i, &runs);
        if (best < 0 || (spec.maximize ? metric > best_metric : metric < best_metric))
            best = i, best_metric = metric, best_runs = runs;
    }
    free(score), free(index);
    int code = SK_EXIT_OK;
    if (best >= 0) {
        printf("\nbest: trial %d, %s %.6g (%d run%s of %d seed(s))\n", trials[best].index,
               spec.metric, best_metric, best_runs, best_runs == 1 ? "" : "s", spec.seeds_per_trial);
        for (int d = 0; d < spec.num_params; d++)
            printf("  %s = %.10g\n", spec.params[d].key, trials[best].value[d]);
        snprintf(path, sizeof path, "%s/best.ini", dir);
        if (sweep_trial_config(&spec, trials[best].value, false, path) != SK_OK)
            code = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
        else printf("wrote %s; train it: skinner train %s --config %s\n", path, spec.env, path);
    }
    free(trials);
    return code;
}
