/*
 * Broken-v0: a small env that `skinner check` passes, and one fault per
 * BROKEN_* definition that it must flag by name (tests/CMakeLists.txt builds
 * each as libbroken_<fault>.so; tests/test_check.c runs the checker on them).
 *
 * A walker on positions 0..29 starts on 0..9 and steps left, stays or steps
 * right (moves off the line are masked); position 29 ends the episode with
 * +1, every other step costs 0.01, and the episode is truncated after 20
 * steps. The observation (4 values, each in [0, 1]): the position / 29, the
 * steps taken / 20, a noise value drawn from the env's stream each step, and
 * whether the walker stands on position 0. Most faults strike env FAULTY_ENV
 * only, so the checker must name that env.
 */
#include <skinner/env.h>

#include <math.h>
#include <string.h>

#define POSITIONS 30
#define START_POSITIONS 10
#define GOAL (POSITIONS - 1)
#define MAX_STEPS 20
#define NUM_MOVES 3
#if defined(BROKEN_HEAD_MASK)
/* a second head (a stride of 1 or 2, unused) that matters only when head 0
 * steps right, with masks by head 0: head 0's block, then one block of the
 * second head per head-0 choice */
#define NUM_HEADS 2
#define STRIDES 2
#define MASK_SIZE (NUM_MOVES + NUM_MOVES * STRIDES)
#define SPACE                                                                                      \
    {.kind = SK_SPACE_DISCRETE, .num_heads = 2, .head_sizes = {NUM_MOVES, STRIDES},               \
     .relevant_when = {0, 1u << 2}, .masks_by_head0 = true}
#else
#define NUM_HEADS 1
#define MASK_SIZE NUM_MOVES
#define SPACE {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {NUM_MOVES}}
#endif
#define NUM_LOG_FIELDS 2
#define FAULTY_ENV 3
#define WRITTEN_OBS 4 /* what the env writes of each observation */
#if defined(BROKEN_OBS_SIZE5)
#define OBS_SIZE 5 /* declared, while WRITTEN_OBS are written (issue 30 defect 6) */
#else
#define OBS_SIZE WRITTEN_OBS
#endif

typedef struct walk_state {
    int num_envs;
    int32_t *pos, *elapsed, *goal;
    float *episode_return;
    uint64_t *rng;
} walk_state;

static const sk_soa_field g_fields[] = {
    SK_SOA_FIELD_RANGE(walk_state, pos, SK_ARRAY_I32, 0, POSITIONS - 1),
    SK_SOA_FIELD_RANGE(walk_state, elapsed, SK_ARRAY_I32, 0, MAX_STEPS),
#if defined(BROKEN_DUPLICATE_NAMES)
    SK_SOA_FIELD_NAMED("pos", walk_state, goal, SK_ARRAY_I32),
#else
    /* no range: check_state (where there is one) must refuse what is not a position */
    SK_SOA_FIELD(walk_state, goal, SK_ARRAY_I32),
#endif
    SK_SOA_FIELD(walk_state, episode_return, SK_ARRAY_F32),
    SK_SOA_FIELD(walk_state, rng, SK_ARRAY_U64), /* last: BROKEN_UNSAVED_FIELD leaves it out */
};
#define NUM_FIELDS ((int)(sizeof g_fields / sizeof g_fields[0]))

#if defined(BROKEN_NONDETERMINISTIC)
static int g_calls; /* a process-wide counter: two instances of one seed drift apart */
#endif

static sk_status walk_create(void **out, int num_envs, const sk_config *cfg) {
    (void)cfg;
    walk_state *s = sk_soa_create(sizeof *s, g_fields, NUM_FIELDS, num_envs, "Broken-v0");
    if (!s) return SK_ERR_NOMEM;
    s->num_envs = num_envs;
    *out = s;
    return SK_OK;
}

static void walk_destroy(void *state) { sk_soa_destroy(state, g_fields, NUM_FIELDS); }

static int walk_state_arrays(void *state, sk_env_array *arrays) {
    int count = sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
#if defined(BROKEN_UNSAVED_FIELD)
    count--; /* the stream is not saved: a restored copy draws other noise */
#endif
    return count;
}

#if defined(BROKEN_CHECK_STATE_MISSES)
/* accepts anything, a goal of INT32_MIN included */
static sk_status walk_check_state(const void *state, int num_envs) {
    (void)state, (void)num_envs;
    return SK_OK;
}
#define CHECK_STATE walk_check_state
#else
static sk_status walk_check_state(const void *state, int num_envs) {
    const walk_state *s = state;
    for (int i = 0; i < num_envs; i++)
        if (s->goal[i] != GOAL)
            return sk_fail(SK_ERR_CORRUPT, "env.goal of env %d = %d (expected %d)", i,
                           (int)s->goal[i], GOAL);
    return SK_OK;
}
#define CHECK_STATE walk_check_state
#endif

static void observe(walk_state *s, const sk_env_io *io, int i, int lo, bool stepping) {
    (void)lo, (void)stepping;
#if defined(BROKEN_WRONG_ROW)
    size_t row = (size_t)(i - lo); /* an index relative to the range: rows of other envs */
#else
    size_t row = (size_t)i;
#endif
    float *obs = io->obs + row * OBS_SIZE;
    obs[0] = (float)s->pos[i] / (float)(POSITIONS - 1);
    obs[1] = (float)s->elapsed[i] / (float)MAX_STEPS;
#if defined(BROKEN_UNWRITTEN_OBS)
    if (!stepping || i != FAULTY_ENV) /* a slot the step forgets for one env */
#endif
        obs[2] = sk_rng_float(&s->rng[i]);
    obs[3] = s->pos[i] == 0 ? 1.0f : 0.0f;
#if defined(BROKEN_OBS_OVERRUN)
    obs[OBS_SIZE] = 0.0f; /* one value too many: the next row's first, past the last row */
#endif
    uint8_t *mask = io->masks + row * MASK_SIZE;
    mask[0] = s->pos[i] > 0;
    mask[1] = 1;
    mask[2] = s->pos[i] < POSITIONS - 1;
#if defined(BROKEN_HEAD_MASK)
    memset(mask + NUM_MOVES, 1, NUM_MOVES * STRIDES);
    /* stepping right is allowed, but then no stride is: no legal action */
    if (i == FAULTY_ENV) memset(mask + NUM_MOVES + 2 * STRIDES, 0, STRIDES);
#endif
#if defined(BROKEN_MASK_OVERRUN)
    mask[NUM_MOVES] = 1;
#endif
}

static void start_episode(walk_state *s, int i) {
    s->pos[i] = (int32_t)sk_rng_below(&s->rng[i], START_POSITIONS);
    s->elapsed[i] = 0;
    s->goal[i] = GOAL;
    s->episode_return[i] = 0.0f;
}

static void walk_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    walk_state *s = state;
#if defined(BROKEN_SEEDS_IGNORED)
    seed = 0;
#endif
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        start_episode(s, i);
        observe(s, io, i, lo, false);
    }
}

static void walk_step(void *state, const sk_env_io *io, int lo, int hi) {
    walk_state *s = state;
    for (int i = lo; i < hi; i++) {
        int32_t move = io->actions[(size_t)i * NUM_HEADS];
        if (move >= 0 && move < NUM_MOVES) {
            int32_t pos = s->pos[i] + move - 1;
            if (pos >= 0 && pos < POSITIONS) s->pos[i] = pos;
        }
        s->elapsed[i]++;
        bool reached = s->pos[i] == s->goal[i];
        float reward = reached ? 1.0f : -0.01f;
#if defined(BROKEN_NAN_REWARD)
        if (i == FAULTY_ENV && s->elapsed[i] == 2) reward = NAN;
#endif
#if defined(BROKEN_NONDETERMINISTIC)
        if (i == FAULTY_ENV) reward += 0.001f * (float)(g_calls++ % 2);
#endif
        s->episode_return[i] += reward;
        io->rewards[i] = reward;
#if defined(BROKEN_REWARD_OVERRUN)
        io->rewards[i + 1] = 0.0f; /* an off-by-one: the next env's reward, past the last */
#endif
        io->terminated[i] = reached;
        io->truncated[i] = !reached && s->elapsed[i] >= MAX_STEPS;
#if defined(BROKEN_NO_TRUNCATION)
        if (i == FAULTY_ENV) io->truncated[i] = 0;
#endif
#if defined(BROKEN_BOTH_FLAGS)
        if (i == FAULTY_ENV) io->terminated[i] = io->truncated[i] = 1;
#endif
        observe(s, io, i, lo, true);
#if defined(BROKEN_OBS_BOX)
        if (i == FAULTY_ENV) io->obs[(size_t)i * OBS_SIZE] = 1.5f;
#endif
#if defined(BROKEN_NO_LEGAL_ACTION)
        if (i == FAULTY_ENV) memset(io->masks + (size_t)i * MASK_SIZE, 0, NUM_MOVES);
#endif
        if (!io->terminated[i] && !io->truncated[i]) continue;
#if defined(BROKEN_NO_FINAL_OBS)
        if (i != FAULTY_ENV)
#endif
            memcpy(io->final_obs + (size_t)i * OBS_SIZE, io->obs + (size_t)i * OBS_SIZE,
                   WRITTEN_OBS * sizeof(float));
        float *log = io->episode_log + (size_t)i * NUM_LOG_FIELDS;
        log[0] = s->episode_return[i];
#if defined(BROKEN_WRONG_LOG_RETURN)
        if (i == FAULTY_ENV) log[0] += 1.0f;
#endif
        log[1] = (float)s->elapsed[i];
        start_episode(s, i);
        observe(s, io, i, lo, true);
    }
}

/* each value in [0, 1] (room for the 5 values BROKEN_OBS_SIZE5 declares) */
static const float g_obs_low[5] = {0};
static const float g_obs_high[5] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f};

static const sk_env_def broken_env = {
    .id = "Broken-v0",
    .summary = "a walker on a line, with one fault per build (tests/test_check.c)",
    .obs_size = OBS_SIZE,
    .action_space = SPACE,
    .mask_size = MASK_SIZE,
    .max_episode_steps = MAX_STEPS,
    .solved_threshold = NAN,
    .num_log_fields = NUM_LOG_FIELDS,
    .log_names = {"episode_return", "episode_length"},
    .create = walk_create,
    .destroy = walk_destroy,
    .reset = walk_reset,
    .step = walk_step,
    .state_arrays = walk_state_arrays,
    .check_state = CHECK_STATE,
    .obs_low = g_obs_low,
    .obs_high = g_obs_high,
};

SK_PLUGIN_EXPORT(&broken_env)
