/*
 * Envs that misbehave in ways the skinner program must report, not suffer,
 * and one that tests a baseline (tests/test_cli.c):
 *   SilentCreate-v0   create fails without a message (no sk_fail)
 *   SilentCheck-v0    trains, but check_state refuses every restored state
 *                     without a message
 *   ../../escape/Escape-v0 (alias "escape")
 *                     an id that, pasted into a path, leaves runs/
 *   Masked-v0         four actions of which the mask allows 1 and 3 only; an
 *                     action the mask forbids costs MASKED_PENALTY
 * Each is the same tiny env otherwise: an episode is EPISODE_STEPS steps,
 * action 1 earns 1 and action 0 nothing, the observation is the step count.
 */
#include <skinner/env.h>

#include <math.h>

#define EPISODE_STEPS 4
#define NUM_LOG_FIELDS 2
#define MASKED_ACTIONS 4
#define MASKED_PENALTY -100.0f

typedef struct counter_state {
    int32_t *elapsed;
    float *episode_return;
} counter_state;

static const sk_soa_field g_fields[] = {
    SK_SOA_FIELD_RANGE(counter_state, elapsed, SK_ARRAY_I32, 0, EPISODE_STEPS),
    SK_SOA_FIELD_RANGE(counter_state, episode_return, SK_ARRAY_F32, MASKED_PENALTY * EPISODE_STEPS,
                       EPISODE_STEPS),
};
#define NUM_FIELDS ((int)(sizeof g_fields / sizeof g_fields[0]))

static bool masked_allows(int32_t action) { return action == 1 || action == 3; }

/* Masked-v0's mask (the other envs have none: io->masks is NULL). */
static void write_mask(const sk_env_io *io, int i) {
    if (!io->masks) return;
    for (int a = 0; a < MASKED_ACTIONS; a++)
        io->masks[(size_t)i * MASKED_ACTIONS + a] = masked_allows(a);
}

static sk_status counter_create(void **out, int num_envs, const sk_config *cfg) {
    (void)cfg;
    *out = sk_soa_create(sizeof(counter_state), g_fields, NUM_FIELDS, num_envs, "counter");
    return *out ? SK_OK : SK_ERR_NOMEM;
}

static sk_status silent_create(void **out, int num_envs, const sk_config *cfg) {
    (void)num_envs, (void)cfg;
    *out = NULL;
    return SK_ERR_INVALID; /* the fault under test: no sk_fail */
}

static void counter_destroy(void *state) { sk_soa_destroy(state, g_fields, NUM_FIELDS); }

static void start_episode(counter_state *s, const sk_env_io *io, int i) {
    s->elapsed[i] = 0;
    s->episode_return[i] = 0.0f;
    io->obs[i] = 0.0f;
    write_mask(io, i);
}

static void counter_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)seed;
    for (int i = lo; i < hi; i++) start_episode(state, io, i);
}

static void counter_step(void *state, const sk_env_io *io, int lo, int hi) {
    counter_state *s = state;
    for (int i = lo; i < hi; i++) {
        int32_t action = io->actions[i];
        io->rewards[i] = action == 1 ? 1.0f : 0.0f;
        if (io->masks) io->rewards[i] = masked_allows(action) ? 1.0f : MASKED_PENALTY;
        io->terminated[i] = 0;
        io->truncated[i] = 0;
        s->episode_return[i] += io->rewards[i];
        io->obs[i] = (float)++s->elapsed[i];
        if (s->elapsed[i] < EPISODE_STEPS) continue;
        io->terminated[i] = 1;
        io->final_obs[i] = io->obs[i];
        io->episode_log[(size_t)i * NUM_LOG_FIELDS] = s->episode_return[i];
        io->episode_log[(size_t)i * NUM_LOG_FIELDS + 1] = (float)s->elapsed[i];
        start_episode(s, io, i);
    }
}

static int counter_arrays(void *state, sk_env_array *arrays) {
    return sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
}

static sk_status silent_check_state(const void *state, int num_envs) {
    (void)state, (void)num_envs;
    return SK_ERR_CORRUPT; /* the fault under test: no sk_fail */
}

#define COUNTER_ENV(env_id, env_alias, num_actions, masks, create_fn, check_fn)                    \
    {                                                                                              \
        .id = env_id, .alias = env_alias, .summary = "a counter that misbehaves (tests)",          \
        .obs_size = 1,                                                                             \
        .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {num_actions}},  \
        .mask_size = masks, .max_episode_steps = EPISODE_STEPS, .solved_threshold = NAN,           \
        .num_log_fields = NUM_LOG_FIELDS, .log_names = {"episode_return", "episode_length"},       \
        .create = create_fn, .destroy = counter_destroy, .reset = counter_reset,                   \
        .step = counter_step, .state_arrays = counter_arrays, .check_state = check_fn,             \
    }

static const sk_env_def g_silent_create =
    COUNTER_ENV("SilentCreate-v0", NULL, 2, 0, silent_create, NULL);
static const sk_env_def g_silent_check =
    COUNTER_ENV("SilentCheck-v0", NULL, 2, 0, counter_create, silent_check_state);
static const sk_env_def g_escape =
    COUNTER_ENV("../../escape/Escape-v0", "escape", 2, 0, counter_create, NULL);
static const sk_env_def g_masked =
    COUNTER_ENV("Masked-v0", NULL, MASKED_ACTIONS, MASKED_ACTIONS, counter_create, NULL);

SK_PLUGIN_EXPORT(&g_silent_create, &g_silent_check, &g_escape, &g_masked)
