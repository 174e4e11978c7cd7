/*
 * GridWorld-v0: an environment built outside skinner's tree, as a plugin.
 *
 * An agent walks a size x size grid (env.size, default 5) towards a goal.
 * Both start on distinct random cells. Four moves (up, down, left, right);
 * a move into the border is masked. Reaching the goal gives +1 and ends the
 * episode; every other step costs 0.01; the episode is truncated after 50
 * steps. The observation is the agent's and the goal's (x, y), each scaled to
 * [0, 1]. The best return is 1 - 0.01 x (the Manhattan distance - 1).
 *
 * Uses <skinner/env.h> only; built with
 *     cc -std=c17 -O2 -shared -fPIC gridworld.c -o libgridworld.so $(pkg-config --cflags skinner)
 * and trained with
 *     skinner train ./libgridworld.so:GridWorld-v0 --stop-when-solved
 */
#include <skinner/env.h>

#include <math.h>
#include <string.h>

#define MIN_SIZE 3
#define MAX_SIZE 16
#define DEFAULT_SIZE 5
#define MAX_EPISODE_STEPS 50
#define GOAL_REWARD 1.0f
#define STEP_REWARD -0.01f
#define OBS_SIZE 4 /* agent x, y, goal x, y */
#define NUM_MOVES 4
#define NUM_LOG_FIELDS 3 /* return, length, reached_goal */

enum move { MOVE_UP, MOVE_DOWN, MOVE_LEFT, MOVE_RIGHT };
static const int g_dx[NUM_MOVES] = {0, 0, -1, 1};
static const int g_dy[NUM_MOVES] = {-1, 1, 0, 0};

/* Struct-of-arrays: one element per env in each array. */
typedef struct grid_state {
    int size; /* from env.size, the same for every env */
    int32_t *x, *y, *goal_x, *goal_y;
    int32_t *elapsed;
    float *episode_return;
    uint64_t *rng;
} grid_state;

/* Every array, once: allocation, freeing and checkpoints follow from this
 * table, and a restored checkpoint is refused if a value leaves its range. */
static const sk_soa_field g_fields[] = {
    SK_SOA_FIELD_RANGE(grid_state, x, SK_ARRAY_I32, 0, MAX_SIZE - 1),
    SK_SOA_FIELD_RANGE(grid_state, y, SK_ARRAY_I32, 0, MAX_SIZE - 1),
    SK_SOA_FIELD_RANGE(grid_state, goal_x, SK_ARRAY_I32, 0, MAX_SIZE - 1),
    SK_SOA_FIELD_RANGE(grid_state, goal_y, SK_ARRAY_I32, 0, MAX_SIZE - 1),
    SK_SOA_FIELD_RANGE(grid_state, elapsed, SK_ARRAY_I32, 0, MAX_EPISODE_STEPS),
    SK_SOA_FIELD_RANGE(grid_state, episode_return, SK_ARRAY_F32,
                       STEP_REWARD * MAX_EPISODE_STEPS, GOAL_REWARD),
    SK_SOA_FIELD(grid_state, rng, SK_ARRAY_U64),
};
#define NUM_FIELDS ((int)(sizeof g_fields / sizeof g_fields[0]))

static sk_status grid_create(void **out, int num_envs, const sk_config *cfg) {
    int64_t size;
    sk_status status = sk_cfg_int(cfg, "env.size", DEFAULT_SIZE, MIN_SIZE, MAX_SIZE, &size);
    if (status != SK_OK) return status;
    grid_state *s = sk_soa_create(sizeof *s, g_fields, NUM_FIELDS, num_envs, "GridWorld-v0");
    if (!s) return SK_ERR_NOMEM;
    s->size = (int)size;
    *out = s;
    return SK_OK;
}

static void grid_destroy(void *state) { sk_soa_destroy(state, g_fields, NUM_FIELDS); }

static int grid_state_arrays(void *state, sk_env_array *arrays) {
    return sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
}

/* Env i's observation and move mask. */
static void observe(const grid_state *s, const sk_env_io *io, int i) {
    float scale = 1.0f / (float)(s->size - 1);
    float *obs = io->obs + (size_t)i * OBS_SIZE;
    obs[0] = (float)s->x[i] * scale;
    obs[1] = (float)s->y[i] * scale;
    obs[2] = (float)s->goal_x[i] * scale;
    obs[3] = (float)s->goal_y[i] * scale;
    uint8_t *mask = io->masks + (size_t)i * NUM_MOVES;
    int last = s->size - 1;
    mask[MOVE_UP] = s->y[i] > 0;
    mask[MOVE_DOWN] = s->y[i] < last;
    mask[MOVE_LEFT] = s->x[i] > 0;
    mask[MOVE_RIGHT] = s->x[i] < last;
}

/* A new episode for env i from its own stream: the goal on a random cell, the
 * agent on a random other cell. */
static void reset_one(grid_state *s, int i) {
    uint32_t cells = (uint32_t)(s->size * s->size);
    uint32_t goal = sk_rng_below(&s->rng[i], cells);
    uint32_t agent = sk_rng_below(&s->rng[i], cells - 1);
    if (agent >= goal) agent++;
    s->goal_x[i] = (int32_t)(goal % (uint32_t)s->size);
    s->goal_y[i] = (int32_t)(goal / (uint32_t)s->size);
    s->x[i] = (int32_t)(agent % (uint32_t)s->size);
    s->y[i] = (int32_t)(agent / (uint32_t)s->size);
    s->elapsed[i] = 0;
    s->episode_return[i] = 0.0f;
}

static void grid_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    grid_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->rng[i] = sk_rng_seed(seed, (uint64_t)i);
        reset_one(s, i);
        observe(s, io, i);
    }
}

static void grid_step(void *state, const sk_env_io *io, int lo, int hi) {
    grid_state *s = state;
    int last = s->size - 1;
    for (int i = lo; i < hi; i++) {
        int32_t move = io->actions[i];
        /* a masked move (into the border) or an unknown one leaves the agent in place */
        if (move >= 0 && move < NUM_MOVES) {
            int x = s->x[i] + g_dx[move], y = s->y[i] + g_dy[move];
            if (x >= 0 && x <= last && y >= 0 && y <= last) {
                s->x[i] = x;
                s->y[i] = y;
            }
        }
        s->elapsed[i]++;
        bool reached = s->x[i] == s->goal_x[i] && s->y[i] == s->goal_y[i];
        float reward = reached ? GOAL_REWARD : STEP_REWARD;
        s->episode_return[i] += reward;
        io->rewards[i] = reward;
        io->terminated[i] = reached;
        io->truncated[i] = !reached && s->elapsed[i] >= MAX_EPISODE_STEPS;
        observe(s, io, i);
        if (io->terminated[i] || io->truncated[i]) {
            memcpy(io->final_obs + (size_t)i * OBS_SIZE, io->obs + (size_t)i * OBS_SIZE,
                   OBS_SIZE * sizeof(float));
            float *log = io->episode_log + (size_t)i * NUM_LOG_FIELDS;
            log[0] = s->episode_return[i];
            log[1] = (float)s->elapsed[i];
            log[2] = reached ? 1.0f : 0.0f;
            reset_one(s, i);
            observe(s, io, i);
        }
    }
}

static const sk_env_def gridworld_env = {
    .id = "GridWorld-v0",
    .alias = "gridworld",
    .summary = "walk a grid (5x5 by default) to the goal; moves off the grid are masked",
    .obs_size = OBS_SIZE,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {NUM_MOVES}},
    .mask_size = NUM_MOVES,
    .max_episode_steps = MAX_EPISODE_STEPS,
    .solved_threshold = 0.95,
    .num_log_fields = NUM_LOG_FIELDS,
    .log_names = {"episode_return", "episode_length", "reached_goal"},
    .create = grid_create,
    .destroy = grid_destroy,
    .reset = grid_reset,
    .step = grid_step,
    .state_arrays = grid_state_arrays,
};

SK_PLUGIN_EXPORT(&gridworld_env)
