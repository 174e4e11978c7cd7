#include "normalize.h"

#include <math.h>
#include <string.h>

#define INITIAL_COUNT 1e-4 /* Gymnasium's RunningMeanStd epsilon */

sk_status sk_running_stats_init(sk_running_stats *stats, int size) {
    stats->size = size;
    stats->count = INITIAL_COUNT;
    stats->mean = sk_alloc((size_t)size * sizeof(double));
    stats->var = sk_alloc((size_t)size * sizeof(double));
    if (!stats->mean || !stats->var) return sk_fail(SK_ERR_NOMEM, "out of memory");
    for (int j = 0; j < size; j++) stats->var[j] = 1.0;
    return SK_OK;
}

void sk_running_stats_free(sk_running_stats *stats) {
    sk_free(stats->mean);
    sk_free(stats->var);
    memset(stats, 0, sizeof *stats);
}

void sk_running_stats_merge_moments(sk_running_stats *stats, double n, const double *mean,
                                    const double *m2_batch) {
    if (!(n > 0.0)) return;
    double total = stats->count + n;
    for (int j = 0; j < stats->size; j++) {
        double batch_var = m2_batch[j] / n;
        double delta = mean[j] - stats->mean[j];
        double m2 = stats->var[j] * stats->count + batch_var * n +
                    delta * delta * stats->count * n / total;
        stats->mean[j] += delta * n / total;
        stats->var[j] = m2 / total;
    }
    stats->count = total;
}

void sk_welford_pack(const sk_welford *acc, double *out) {
    out[0] = acc->n;
    memcpy(out + 1, acc->mean, (size_t)acc->size * sizeof(double));
    memcpy(out + 1 + acc->size, acc->m2, (size_t)acc->size * sizeof(double));
}

void sk_welford_clear(sk_welford *batch) {
    batch->n = 0.0;
    memset(batch->mean, 0, (size_t)batch->size * sizeof(double));
    memset(batch->m2, 0, (size_t)batch->size * sizeof(double));
}

void sk_running_stats_merge(sk_running_stats *stats, sk_welford *batch) {
    sk_running_stats_merge_moments(stats, batch->n, batch->mean, batch->m2);
    sk_welford_clear(batch);
}

sk_status sk_welford_init(sk_welford *acc, int size) {
    acc->size = size;
    acc->n = 0.0;
    acc->mean = sk_alloc((size_t)size * sizeof(double));
    acc->m2 = sk_alloc((size_t)size * sizeof(double));
    return acc->mean && acc->m2 ? SK_OK : sk_fail(SK_ERR_NOMEM, "out of memory");
}

void sk_welford_free(sk_welford *acc) {
    sk_free(acc->mean);
    sk_free(acc->m2);
    memset(acc, 0, sizeof *acc);
}

sk_status sk_norm_map_init(sk_norm_map *map, int size, float clip) {
    map->size = size;
    map->clip = clip;
    map->shift = sk_alloc((size_t)size * sizeof(float));
    map->scale = sk_alloc((size_t)size * sizeof(float));
    if (!map->shift || !map->scale) return sk_fail(SK_ERR_NOMEM, "out of memory");
    for (int j = 0; j < size; j++) map->scale[j] = 1.0f;
    return SK_OK;
}

void sk_norm_map_free(sk_norm_map *map) {
    sk_free(map->shift);
    sk_free(map->scale);
    memset(map, 0, sizeof *map);
}

void sk_norm_map_update(sk_norm_map *map, const sk_running_stats *stats, bool center) {
    for (int j = 0; j < map->size; j++) {
        map->shift[j] = center ? (float)stats->mean[j] : 0.0f;
        map->scale[j] = (float)(1.0 / sqrt(stats->var[j] + SK_NORM_EPS));
    }
}
