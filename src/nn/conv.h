/*
 * The convolutions are public (include/skinner/nn.h: layouts, precision,
 * contracts and where the oneDNN backend is loaded from); the tree includes
 * them through this header as before.
 */
#ifndef SK_NN_CONV_H
#define SK_NN_CONV_H

#include "skinner/nn.h"

#endif
