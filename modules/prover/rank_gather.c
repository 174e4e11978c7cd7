/* A ranking split over the parts of a distributed run (sk_parallel.num_parts
 * processes, `mpirun skinner eval`): each part ranks its slice of the queries,
 * then sk_parallel.gather gives every part all parts' records and counters,
 * which each sums in query order, so the figures do not depend on the split. */
#include "rank_internal.h"

#include "skinner.h"

#include <stdio.h>
#include "skinner/pool.h"

#include <stdlib.h>
#include <string.h>

void sk_rank_gather_records(const sk_parallel *parallel, int total, const double *records,
                            double *all) {
    int parts = parallel->num_parts > 1 ? parallel->num_parts : 1;
    if (parts == 1) {
        memcpy(all, records, (size_t)total * RECORD * sizeof(double));
        return;
    }
    size_t *counts = malloc((size_t)parts * sizeof *counts);
    SK_ASSERT(counts && parallel->gather);
    for (int p = 0; p < parts; p++) {
        int lo, hi;
        sk_slice(total, p, parts, &lo, &hi);
        counts[p] = (size_t)(hi - lo) * RECORD;
    }
    int lo, hi;
    sk_slice(total, parallel->part, parts, &lo, &hi);
    parallel->gather(parallel->gather_ctx, records + (size_t)lo * RECORD, all, counts);
    free(counts);
}

void sk_rank_sum_over_parts(const sk_parallel *parallel, int64_t *counters, int count) {
    int parts = parallel->num_parts > 1 ? parallel->num_parts : 1;
    if (parts == 1) return;
    double mine[8], *all = malloc((size_t)parts * (size_t)count * sizeof *all);
    size_t *counts = malloc((size_t)parts * sizeof *counts);
    SK_ASSERT(count <= 8 && all && counts && parallel->gather);
    for (int k = 0; k < count; k++) mine[k] = (double)counters[k];
    for (int p = 0; p < parts; p++) counts[p] = (size_t)count;
    parallel->gather(parallel->gather_ctx, mine, all, counts);
    for (int k = 0; k < count; k++) {
        counters[k] = 0;
        for (int p = 0; p < parts; p++)
            counters[k] += (int64_t)all[(size_t)p * (size_t)count + (size_t)k];
    }
    free(all);
    free(counts);
}
