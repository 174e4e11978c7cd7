/* Early stopping of a sweep's trials (docs/sweeps.md): a running seed whose training return
 * is far below the best that finished trials had reached by the same step count is stopped,
 * and its trial recorded as failed with why. "Equal cost" is steps here: a finished trial's
 * curve is its first seed's metrics.csv, read once. */
#include "sweep_cli.h"

#include <limits.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* Finished trials compared with before a seed may be stopped. */
#define EARLY_MIN_TRIALS 3
/* A seed is compared only past this share of the compared trials' shortest run. */
#define EARLY_MIN_PROGRESS 0.25

struct sweep_curves {
    int count, capacity;
    struct curve {
        int index; /* the trial */
        int rows;
        double *steps, *mean_return; /* (rows) */
    } *curves;
};

void sweep_curves_free(sweep_curves *curves) {
    if (!curves) return;
    for (int i = 0; i < curves->count; i++) {
        free(curves->curves[i].steps);
        free(curves->curves[i].mean_return);
    }
    free(curves->curves);
    free(curves);
}

/* Steps and mean returns of a metrics.csv (update,steps,wall_seconds,sps,mean_return,...,
 * src/train/run_files.c); rows without a finite return are left out. */
static int read_curve(const char *path, double **steps, double **mean_return) {
    char *text = sweep_read_text(path);
    int rows = 0, capacity = 0;
    *steps = *mean_return = NULL;
    for (char *line = text ? strchr(text, '\n') : NULL; line && line[1]; line = strchr(line + 1, '\n')) {
        long long update, step;
        double wall, sps, value;
        if (sscanf(line + 1, "%lld,%lld,%lf,%lf,%lf", &update, &step, &wall, &sps, &value) != 5 ||
            !isfinite(value))
            continue;
        if (rows == capacity) {
            capacity = capacity ? 2 * capacity : 256;
            double *grown_steps = realloc(*steps, (size_t)capacity * sizeof **steps);
            if (grown_steps) *steps = grown_steps;
            double *grown_returns = realloc(*mean_return, (size_t)capacity * sizeof **mean_return);
            if (grown_returns) *mean_return = grown_returns;
            if (!grown_steps || !grown_returns) break;
        }
        (*steps)[rows] = (double)step;
        (*mean_return)[rows++] = value;
    }
    free(text);
    return rows;
}

/* The curve of finished trial `index`, read on first use; NULL if it has none. */
static const struct curve *curve_of(sweep_curves *curves, const char *dir, int index, int seed) {
    for (int i = 0; i < curves->count; i++)
        if (curves->curves[i].index == index) return curves->curves[i].rows ? &curves->curves[i] : NULL;
    if (curves->count == curves->capacity) {
        int capacity = curves->capacity ? 2 * curves->capacity : 64;
        struct curve *grown = realloc(curves->curves, (size_t)capacity * sizeof *grown);
        if (!grown) return NULL;
        curves->curves = grown, curves->capacity = capacity;
    }
    struct curve *c = &curves->curves[curves->count++];
    char path[PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/trial-%04d/seed-%d/metrics.csv", dir, index, seed);
    c->index = index;
    c->rows = read_curve(path, &c->steps, &c->mean_return);
    return c->rows ? c : NULL;
}

bool sweep_early_stop(sweep_curves **curves_io, const char *dir, double margin,
                      const sk_sweep_trial *finished, int count, const char *seed_dir,
                      char *message, size_t size) {
    if (!*curves_io && !(*curves_io = calloc(1, sizeof **curves_io))) return false;
    sweep_curves *curves = *curves_io;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/metrics.csv", seed_dir);
    double *steps = NULL, *returns = NULL;
    int rows = read_curve(path, &steps, &returns);
    if (rows == 0) {
        free(steps), free(returns);
        return false;
    }
    double now_steps = steps[rows - 1], now_return = returns[rows - 1];
    free(steps), free(returns);
    /* the best return at equal steps among finished trials that ran at least this far */
    int compared = 0, best_index = -1;
    double best = -INFINITY, shortest = INFINITY;
    for (int i = 0; i < count; i++) {
        if (!finished[i].ok) continue;
        /* seed 1, or a re-test's first seed (sweep.c's train_seed) */
        int seed = finished[i].retest_of >= 0 ? 1000 * (finished[i].index + 1) : 1;
        const struct curve *c = curve_of(curves, dir, finished[i].index, seed);
        if (!c || c->steps[c->rows - 1] < now_steps) continue;
        compared++;
        shortest = fmin(shortest, c->steps[c->rows - 1]);
        double at = -INFINITY;
        for (int r = 0; r < c->rows && c->steps[r] <= now_steps; r++) at = c->mean_return[r];
        if (at > best) best = at, best_index = finished[i].index;
    }
    if (compared < EARLY_MIN_TRIALS || now_steps < EARLY_MIN_PROGRESS * shortest || best_index < 0)
        return false;
    double threshold = best - margin * fabs(best);
    if (now_return >= threshold) return false;
    snprintf(message, size,
             "stopped early: mean return %.4g at %.0f steps, below %.4g (trial %d had %.4g there; "
             "early_stop = %g)",
             now_return, now_steps, threshold, best_index, best, margin);
    return true;
}
