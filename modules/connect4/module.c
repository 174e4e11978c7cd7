/* The Connect Four module's entry (cmake/SkinnerModule.cmake): its one table. */
#include "connect4.h"

SK_PLUGIN_EXPORT(&sk_env_connect_four)
