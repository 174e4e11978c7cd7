/* The Morpho module's entry: its one table (morpho.c), which the registry finds in
 * skinner-morpho.so (cmake/SkinnerModule.cmake). Only the shared module holds it; the
 * tests link the same objects without it. */
#include "morpho.h"

SK_PLUGIN_EXPORT(&sk_env_morpho)
