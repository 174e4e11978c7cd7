/* The Connect Four module's entry (cmake/SkinnerModule.cmake): its two tables (the same game, v1 with an image observation). */
#include "connect4.h"

SK_PLUGIN_EXPORT(&sk_env_connect_four, &sk_env_connect_four_v1)
