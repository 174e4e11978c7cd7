/* The worker pool is public (include/skinner/pool.h: contract and example);
 * the tree includes it through this header as before. */
#ifndef SK_POOL_H
#define SK_POOL_H

#include "skinner/pool.h"

/* The number of threads a `threads` setting asks for: itself when above 0,
 * else one per online core (at least 1). */
int sk_threads_or_cores(int threads);

#endif
