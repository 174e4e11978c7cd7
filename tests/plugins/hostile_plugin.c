/*
 * Hostile plugins: envs that load (or nearly) and then break the contract,
 * one fault per HOSTILE_* definition (tests/CMakeLists.txt builds each as a
 * module; tests/test_hostile.c trains, evaluates or loads them and checks the
 * error names the env and the fault). The env itself is trivial: every step
 * gives reward 1 and observation values 0.5, and an episode ends after
 * EPISODE_STEPS steps. Env FAULT_ENV misbehaves at its step FAULT_STEP.
 */
#include <skinner/env.h>

#include <math.h>

#define EPISODE_STEPS 10
#define FAULT_ENV 1
#define FAULT_STEP 3
#define OBS_VALUE 0.5f

#if defined(HOSTILE_NAN_REWARD)
#define ID "NanReward-v0"
#elif defined(HOSTILE_NAN_OBS)
#define ID "NanObs-v0"
#elif defined(HOSTILE_OUT_OF_BOX)
#define ID "OutOfBox-v0"
#define BOX 1
#elif defined(HOSTILE_SHORT_OBS)
#define ID "ShortObs-v0"
#define OBS_SIZE 5
#define OBS_WRITTEN 4
#elif defined(HOSTILE_NO_LEGAL)
#define ID "NoLegal-v0"
#define MASK_SIZE 2
#elif defined(HOSTILE_BIG_MASK)
#define ID "BigMask-v0"
#elif defined(HOSTILE_NULL_EVAL)
#define ID "NullEval-v0"
#elif defined(HOSTILE_MANY_ARRAYS)
#define ID "ManyArrays-v0"
#elif defined(HOSTILE_NEGATIVE_ARRAYS)
#define ID "NegativeArrays-v0"
#elif defined(HOSTILE_BAD_DTYPE)
#define ID "BadDtype-v0"
#elif defined(HOSTILE_NAN_PRIOR)
#define ID "NanPrior-v0"
#elif defined(HOSTILE_BAD_HEURISTIC)
#define ID "BadHeuristic-v0"
#elif defined(HOSTILE_NULL_STATE)
#define ID "NullState-v0"
#elif defined(HOSTILE_HUGE_OBS)
#define ID "HugeObs-v0"
#define OBS_SIZE SK_MAX_OBS_SIZE /* the largest allowed: with 2^20 envs, 64 TB of buffers */
#define OBS_WRITTEN 0 /* never stepped: its buffers cannot be allocated */
#else
#error "define one HOSTILE_* fault"
#endif

#ifndef OBS_SIZE
#define OBS_SIZE 2
#endif
#ifndef OBS_WRITTEN
#define OBS_WRITTEN OBS_SIZE
#endif
#ifndef MASK_SIZE
#define MASK_SIZE 0
#endif

typedef struct hostile_state {
    int32_t *elapsed;
} hostile_state;

static const sk_soa_field g_fields[] = {
    SK_SOA_FIELD_RANGE(hostile_state, elapsed, SK_ARRAY_I32, 0, EPISODE_STEPS),
};

static sk_status hostile_create(void **state, int num_envs, const sk_config *cfg) {
    (void)cfg;
#if defined(HOSTILE_NULL_STATE)
    (void)num_envs;
    *state = NULL; /* and yet SK_OK */
    return SK_OK;
#else
    *state = sk_soa_create(sizeof(hostile_state), g_fields, 1, num_envs, ID);
    return *state ? SK_OK : SK_ERR_NOMEM;
#endif
}

static void hostile_destroy(void *state) { sk_soa_destroy(state, g_fields, 1); }

static void write_obs(const sk_env_io *io, int i) {
    for (int k = 0; k < OBS_WRITTEN; k++) io->obs[(size_t)i * OBS_SIZE + (size_t)k] = OBS_VALUE;
    for (int k = 0; k < MASK_SIZE; k++) io->masks[(size_t)i * MASK_SIZE + (size_t)k] = 1;
}

static void hostile_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)seed;
    hostile_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->elapsed[i] = 0;
        write_obs(io, i);
    }
}

/* The fault, written over env i's good output at its step `elapsed`. */
static void misbehave(const sk_env_io *io, int i, int elapsed) {
    (void)io;
    if (i != FAULT_ENV || elapsed != FAULT_STEP) return;
#if defined(HOSTILE_NAN_REWARD)
    io->rewards[i] = NAN;
#elif defined(HOSTILE_NAN_OBS)
    io->obs[(size_t)i * OBS_SIZE + 1] = NAN;
#elif defined(HOSTILE_OUT_OF_BOX)
    io->obs[(size_t)i * OBS_SIZE + 1] = 2.0f;
#elif defined(HOSTILE_NO_LEGAL)
    for (int k = 0; k < MASK_SIZE; k++) io->masks[(size_t)i * MASK_SIZE + (size_t)k] = 0;
#endif
}

static void hostile_step(void *state, const sk_env_io *io, int lo, int hi) {
    hostile_state *s = state;
    for (int i = lo; i < hi; i++) {
        int elapsed = ++s->elapsed[i];
        io->rewards[i] = 1.0f;
        io->terminated[i] = elapsed == EPISODE_STEPS;
        io->truncated[i] = 0;
        write_obs(io, i);
        if (io->terminated[i]) {
            for (int k = 0; k < OBS_SIZE; k++)
                io->final_obs[(size_t)i * OBS_SIZE + (size_t)k] = OBS_VALUE;
            io->episode_log[2 * i] = (float)EPISODE_STEPS;
            io->episode_log[2 * i + 1] = (float)EPISODE_STEPS;
            s->elapsed[i] = 0;
        }
        misbehave(io, i, elapsed);
    }
}

static int hostile_state_arrays(void *state, sk_env_array *arrays) {
#if defined(HOSTILE_MANY_ARRAYS)
    /* one more than skinner allows, each a good array */
    for (int a = 0; a <= SK_MAX_ENV_ARRAYS; a++)
        sk_soa_arrays(state, g_fields, 1, arrays + a);
    return SK_MAX_ENV_ARRAYS + 1;
#elif defined(HOSTILE_NEGATIVE_ARRAYS)
    (void)state, (void)arrays;
    return -1;
#elif defined(HOSTILE_BAD_DTYPE)
    int count = sk_soa_arrays(state, g_fields, 1, arrays);
    arrays[0].type = (sk_array_type)9; /* past the last sk_array_type */
    return count;
#else
    return sk_soa_arrays(state, g_fields, 1, arrays);
#endif
}

#if defined(HOSTILE_BAD_HEURISTIC)
static void hostile_heuristic(const void *state, int lo, int hi, int32_t *actions) {
    (void)state;
    for (int i = lo; i < hi; i++) actions[i] = i == FAULT_ENV ? 7 : 0; /* head 0 has 2 choices */
}
static const sk_env_extras g_extras = {.heuristic = hostile_heuristic};
#define EXTRAS &g_extras
#elif defined(HOSTILE_NULL_EVAL)
static const sk_env_evaluation g_evaluation = {.name = "ranking", .run = NULL};
static const sk_env_extras g_extras = {.evaluation = &g_evaluation};
#define EXTRAS &g_extras
#else
#define EXTRAS NULL
#endif

#if defined(BOX)
static const float g_obs_low[OBS_SIZE] = {-1.0f, -1.0f};
static const float g_obs_high[OBS_SIZE] = {1.0f, 1.0f};
#define OBS_LOW g_obs_low
#define OBS_HIGH g_obs_high
#else
#define OBS_LOW NULL
#define OBS_HIGH NULL
#endif

static const sk_env_def hostile_env = {
    .id = ID,
    .summary = "a hostile fixture: " ID,
    .obs_size = OBS_SIZE,
#if defined(HOSTILE_BIG_MASK)
    /* heads whose masks_by_head0 layout needs 65536 + 65536 x 65536 bytes; the
     * mask size as an int product wraps to 65536 */
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 2, .head_sizes = {65536, 65536},
                     .masks_by_head0 = true},
    .mask_size = 65536,
#elif defined(HOSTILE_NAN_PRIOR)
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2},
                     .head0_prior = {NAN}},
#else
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
    .mask_size = MASK_SIZE,
#endif
    .max_episode_steps = EPISODE_STEPS,
    .solved_threshold = NAN,
    .num_log_fields = 2,
    .log_names = {"episode_return", "episode_length"},
    .create = hostile_create,
    .destroy = hostile_destroy,
    .reset = hostile_reset,
    .step = hostile_step,
    .state_arrays = hostile_state_arrays,
    .extras = EXTRAS,
    .obs_low = OBS_LOW,
    .obs_high = OBS_HIGH,
};

SK_PLUGIN_EXPORT(&hostile_env)
