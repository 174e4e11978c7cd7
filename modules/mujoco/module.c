/* The MuJoCo module's entry (cmake/SkinnerModule.cmake): Gymnasium's MuJoCo tasks (tasks.c). */
#include "mujoco_env.h"

SK_API const int sk_plugin_abi_version = SK_ENV_ABI_VERSION;
SK_API const sk_env_def *const *const sk_plugin_envs = mj_env_tables;
