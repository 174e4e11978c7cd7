/*
 * Struct-of-arrays env state described once, as a table of its fields: the
 * table allocates, frees and lists (for checkpoints, with each field's
 * allowed range) every per-env array, so an env writes none of that by hand
 * and cannot forget a field in one place. The table is public
 * (sk_soa_field in skinner/env.h) so that plugin envs use it too.
 */
#ifndef SK_ENVS_SOA_H
#define SK_ENVS_SOA_H

#include "../core/core.h"

#endif
