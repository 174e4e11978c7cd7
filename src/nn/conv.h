/*
 * The convolutions are public (include/skinner/nn.h: layouts, precision,
 * contracts and where the oneDNN backend is loaded from); the tree includes
 * them through this header as before.
 */
#ifndef SK_NN_CONV_H
#define SK_NN_CONV_H

#include "skinner/nn.h"

#include <stdint.h>

/* What a convolution did since it was created, for the tests and benchmarks that count
 * work done twice (issue 53 ask 7): batch sizes whose primitives had to be made (a miss of
 * its batch cache re-creates them and allocates) and reorders of the caller's weights into
 * a primitive's layout. */
typedef struct sk_conv_counts {
    int64_t batch_misses, weight_reorders;
} sk_conv_counts;
sk_conv_counts sk_conv_counts_of(const sk_conv *conv);

#endif
