/* The worker pool is public (include/skinner/pool.h: contract and example);
 * the tree includes it through this header as before. */
#ifndef SK_POOL_H
#define SK_POOL_H

#include "skinner/pool.h"

#endif
