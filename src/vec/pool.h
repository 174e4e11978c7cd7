/* The worker pool is public (include/skinner/pool.h: contract and example);
 * the tree includes it through this header as before. */
#ifndef SK_POOL_H
#define SK_POOL_H

#include "skinner/pool.h"

#include <stddef.h>

/* The number of threads a `threads` setting asks for: itself when above 0,
 * else one per online core (at least 1). */
int sk_threads_or_cores(int threads);

/* Worker w's share [lo, hi) of the items [begin, end), cut at multiples of align items after
 * begin (the last share ends at end): a vector kernel run on each share takes the same path
 * over every item as one run over them all, its tail only in the last share. */
static inline void sk_slice_aligned(size_t begin, size_t end, size_t align, int w, int workers,
                                    size_t *lo, size_t *hi) {
    size_t chunks = (end - begin + align - 1) / align;
    *lo = begin + align * (chunks * (size_t)w / (size_t)workers);
    *hi = begin + align * (chunks * (size_t)(w + 1) / (size_t)workers);
    if (*hi > end) *hi = end;
    if (*lo > end) *lo = end;
}

#endif
