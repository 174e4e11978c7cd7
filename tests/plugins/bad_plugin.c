/*
 * Plugins that sk_env_load_plugin must refuse, one per BAD_* definition
 * (tests/CMakeLists.txt builds each as a module; tests/test_plugin.c loads
 * them). Their functions are never called: the loader refuses the table first.
 */
#include <skinner/env.h>

#if defined(BAD_NO_SYMBOLS)
/* a shared object, but not a plugin: no sk_plugin_* symbols */
SK_API int not_a_plugin(void) { return 0; }
#else

static char g_bad_state; /* create must give a state (a NULL one with SK_OK is refused) */
static sk_status bad_create(void **state, int num_envs, const sk_config *cfg) {
    (void)num_envs;
    (void)cfg;
    *state = &g_bad_state;
    return SK_OK;
}
static void bad_destroy(void *state) { (void)state; }
static void bad_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)state, (void)io, (void)lo, (void)hi, (void)seed;
}
#if !defined(BAD_NULL_STEP)
static void bad_step(void *state, const sk_env_io *io, int lo, int hi) {
    (void)state, (void)io, (void)lo, (void)hi;
}
#endif
static int bad_state_arrays(void *state, sk_env_array *arrays) {
    (void)state, (void)arrays;
    return 0;
}


#if defined(BAD_ZERO_OBS)
#define ID "BadObs-v0"
#define OBS_SIZE 0
#else
#define OBS_SIZE 1
#endif
#if defined(BAD_NULL_STEP)
#define ID "BadStep-v0"
#define STEP NULL
#else
#define STEP bad_step
#endif
#if defined(BAD_DUPLICATE_ID)
#define ID "CARTPOLE-V1" /* CartPole-v1's id, in other case */
#endif
#if defined(BAD_ABI_VERSION)
#define ID "BadAbi-v0"
#endif

static const sk_env_def bad_env = {
    .id = ID,
    .obs_size = OBS_SIZE,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
    .max_episode_steps = 10,
    .num_log_fields = 2,
    .log_names = {"episode_return", "episode_length"},
    .create = bad_create,
    .destroy = bad_destroy,
    .reset = bad_reset,
    .step = STEP,
    .state_arrays = bad_state_arrays,
};

#if defined(BAD_ABI_VERSION)
/* what SK_PLUGIN_EXPORT writes, with a version from another skinner */
SK_API const int sk_plugin_abi_version = 999;
static const sk_env_def *const envs_list[] = {&bad_env, NULL};
SK_API const sk_env_def *const *const sk_plugin_envs = envs_list;
#else
SK_PLUGIN_EXPORT(&bad_env)
#endif

#endif
