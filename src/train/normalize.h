/*
 * Running statistics for observation normalisation and return-based reward
 * scaling, with the statistics of Gymnasium's NormalizeObservation and
 * NormalizeReward wrappers (RunningMeanStd: count starts at 1e-4, mean 0, var
 * 1; batches merged with Chan et al.'s parallel formula; values scaled by
 * 1 / sqrt(var + 1e-8) and clipped). One difference: the discounted return
 * whose spread scales rewards restarts at every episode end, truncations
 * included, where Gymnasium 1.x carries it over a truncation into the next
 * episode. skinner shares one set of statistics
 * across all envs and freezes it during a rollout: each worker accumulates
 * what it saw, and the trainer merges the workers in order afterwards, so runs
 * stay deterministic.
 */
#ifndef SK_NORMALIZE_H
#define SK_NORMALIZE_H

#include "../core/core.h"

#define SK_NORM_EPS 1e-8

typedef struct sk_running_stats {
    int size;
    double count;
    double *mean, *var; /* (size) */
} sk_running_stats;

/* One worker's accumulation over a rollout (Welford). */
typedef struct sk_welford {
    int size;
    double n;
    double *mean, *m2; /* (size) */
} sk_welford;

sk_status sk_running_stats_init(sk_running_stats *stats, int size);
void sk_running_stats_free(sk_running_stats *stats);
/* Merges a worker's accumulation and clears it. */
void sk_running_stats_merge(sk_running_stats *stats, sk_welford *batch);
/* Merges n values of the given mean and sum of squared deviations m2 (Chan
 * et al.); nothing when n is 0. */
void sk_running_stats_merge_moments(sk_running_stats *stats, double n, const double *mean,
                                    const double *m2);
/* An accumulation as 1 + 2 size doubles: n, mean, m2 (what sk_comm gathers). */
void sk_welford_pack(const sk_welford *acc, double *out);
void sk_welford_clear(sk_welford *acc);

sk_status sk_welford_init(sk_welford *acc, int size);
void sk_welford_free(sk_welford *acc);
static inline void sk_welford_add(sk_welford *acc, const float *x) {
    acc->n += 1.0;
    for (int j = 0; j < acc->size; j++) {
        double delta = x[j] - acc->mean[j];
        acc->mean[j] += delta / acc->n;
        acc->m2[j] += delta * (x[j] - acc->mean[j]);
    }
}

static inline void sk_welford_add_scalar(sk_welford *acc, double x) {
    acc->n += 1.0;
    double delta = x - acc->mean[0];
    acc->mean[0] += delta / acc->n;
    acc->m2[0] += delta * (x - acc->mean[0]);
}

/* The frozen affine map of a rollout: x -> clip((x - shift) * scale). */
typedef struct sk_norm_map {
    int size;
    float clip;
    float *shift, *scale; /* (size) */
} sk_norm_map;

sk_status sk_norm_map_init(sk_norm_map *map, int size, float clip);
void sk_norm_map_free(sk_norm_map *map);
/* shift = mean (or 0 when !center), scale = 1 / sqrt(var + eps). */
void sk_norm_map_update(sk_norm_map *map, const sk_running_stats *stats, bool center);
static inline void sk_norm_apply(const sk_norm_map *map, float *x) {
    for (int j = 0; j < map->size; j++) {
        float v = (x[j] - map->shift[j]) * map->scale[j];
        x[j] = v < -map->clip ? -map->clip : (v > map->clip ? map->clip : v);
    }
}

#endif
