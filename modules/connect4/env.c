/*
 * ConnectFour-v0: the two-player game on a 6 x 7 board as a multi-agent env
 * (skinner/env.h, num_agents = 2): row env * 2 + 0 is the first player, row
 * env * 2 + 1 the second. Turn-based through the active flags: only the
 * player to move is active (its action is read); the other waits with the
 * same legal-column mask, so every row can be sampled.
 *
 * Observation per row (85 values in [0, 1]): the board from that player's
 * view, its own stones (42, top row first) then the opponent's (42), then 1
 * when it is that player's move. Mask: the columns with room. Reward at the
 * end only: +1 the winner, -1 the loser, env.draw_reward (default 0) both on a
 * draw (the full board; the log's return is 0 then, the game's result);
 * both rows end (terminated) on the move that decides, the loser's while it
 * waits. A move into a full column (which the mask forbids) loses. The log
 * per row: return, length (that player's moves), win, draw.
 *
 * ConnectFour-v1 is the same game with the board as a 6 x 7 x 3 uint8 image
 * (c4_image: own stones, the opponent's, a plane of ones on the player's
 * move), so that a convolution (policy.encoder = cnn, configs/connect4_cnn.ini)
 * shares its weights over the board; v0's checkpoints keep loading as v0.
 *
 * Openings: with probability env.random_opening (default 0.5) a game starts
 * with one random stone of each player, drawn from the env's stream (seeded
 * per env from the run's seed), so that self-play meets more positions; the
 * first player still moves first. 0: every game starts on the empty board.
 */
#include "connect4.h"
#include "search.h"

#include <string.h>

/* The ids, each written once: the tables, the state's sizes and the messages name them. */
#define C4_V0_ID "ConnectFour-v0"
#define C4_V1_ID "ConnectFour-v1"

typedef struct c4_state {
    uint64_t *first;    /* the first player's stones */
    uint64_t *all;      /* every stone */
    int32_t *to_move;   /* 0: the first player, 1: the second */
    int32_t *ply;       /* stones on the board */
    int32_t *opening;   /* stones of the random opening (0 or 2) */
    uint64_t *rng;      /* the env's stream: the openings */
    int32_t *mirror;    /* v1: 1 when the game is seen left-right mirrored */
    const char *id;     /* C4_V0_ID or C4_V1_ID: which env the messages name */
    float opening_prob; /* env.random_opening */
    float draw_reward;  /* env.draw_reward: both players' reward for a draw */
    bool image;         /* ConnectFour-v1: obs as c4_image's bytes */
    bool mirror_on;     /* v1's env.mirror */
} c4_state;

/* v0's state arrays (v1 adds the mirror flags; v0's checkpoints keep theirs) */
#define C4_FIELDS                                                                                  \
    SK_SOA_FIELD_RANGE(c4_state, first, SK_ARRAY_U64, 0, (double)C4_FULL),                         \
        SK_SOA_FIELD_RANGE(c4_state, all, SK_ARRAY_U64, 0, (double)C4_FULL),                       \
        SK_SOA_FIELD_RANGE(c4_state, to_move, SK_ARRAY_I32, 0, 1),                                 \
        SK_SOA_FIELD_RANGE(c4_state, ply, SK_ARRAY_I32, 0, C4_CELLS),                              \
        SK_SOA_FIELD_RANGE(c4_state, opening, SK_ARRAY_I32, 0, 2),                                 \
        SK_SOA_FIELD(c4_state, rng, SK_ARRAY_U64)

static const sk_soa_field g_fields[] = {C4_FIELDS};
#define NUM_FIELDS ((int)(sizeof g_fields / sizeof g_fields[0]))

static const sk_soa_field g_fields_v1[] = {
    C4_FIELDS,
    SK_SOA_FIELD_RANGE(c4_state, mirror, SK_ARRAY_I32, 0, 1),
};
#define NUM_FIELDS_V1 ((int)(sizeof g_fields_v1 / sizeof g_fields_v1[0]))

/* env.draw_reward (default 0): both players' reward when the board fills with
 * no four, in [-1, 0]; below 0 a draw is worth less than a game still open,
 * so that a player that cannot lose learns to look for the win. The log's
 * return stays the game's result (+1, 0, -1): the ratings, eval's tallies and
 * the metrics read that. */
static sk_status c4_read_draw_reward(const sk_config *cfg, float *draw_reward) {
    double value;
    sk_status status = sk_cfg_double(cfg, "env.draw_reward", 0.0, -1.0, 0.0, &value);
    *draw_reward = (float)value;
    return status;
}

static sk_status c4_create(void **state, int num_envs, const sk_config *cfg) {
    double prob;
    float draw_reward;
    sk_status status = sk_cfg_double(cfg, "env.random_opening", 0.5, 0.0, 1.0, &prob);
    if (status == SK_OK) status = c4_read_draw_reward(cfg, &draw_reward);
    if (status != SK_OK) return status;
    c4_state *s = sk_soa_create(sizeof(c4_state), g_fields, NUM_FIELDS, num_envs, C4_V0_ID);
    if (!s) return SK_ERR_NOMEM;
    s->id = C4_V0_ID;
    s->opening_prob = (float)prob;
    s->draw_reward = draw_reward;
    *state = s;
    return SK_OK;
}

/* ConnectFour-v1: env.mirror (default true) shows each game left-right
 * mirrored with probability 1/2 (the observation, the mask and the columns
 * played), so that the policy meets every position and its mirror image. */
static sk_status c4_create_image(void **state, int num_envs, const sk_config *cfg) {
    double prob;
    bool mirror;
    float draw_reward;
    sk_status status = sk_cfg_double(cfg, "env.random_opening", 0.5, 0.0, 1.0, &prob);
    if (status == SK_OK) status = sk_cfg_bool(cfg, "env.mirror", true, &mirror);
    if (status == SK_OK) status = c4_read_draw_reward(cfg, &draw_reward);
    if (status != SK_OK) return status;
    c4_state *s =
        sk_soa_create(sizeof(c4_state), g_fields_v1, NUM_FIELDS_V1, num_envs, C4_V1_ID);
    if (!s) return SK_ERR_NOMEM;
    s->id = C4_V1_ID;
    s->opening_prob = (float)prob;
    s->draw_reward = draw_reward;
    s->image = true;
    s->mirror_on = mirror;
    *state = s;
    return SK_OK;
}

static void c4_destroy(void *state) {
    if (((c4_state *)state)->image) sk_soa_destroy(state, g_fields_v1, NUM_FIELDS_V1);
    else sk_soa_destroy(state, g_fields, NUM_FIELDS);
}

static int c4_state_arrays(void *state, sk_env_array *arrays) {
    if (((c4_state *)state)->image) return sk_soa_arrays(state, g_fields_v1, NUM_FIELDS_V1, arrays);
    return sk_soa_arrays(state, g_fields, NUM_FIELDS, arrays);
}

/* The column that env e's players see as col (its own mirror image). */
static int seen_col(const c4_state *s, int e, int col) {
    return s->mirror && s->mirror[e] ? C4_COLS - 1 - col : col;
}

/* Whether the stored stones agree: the first player's among all, all a stack
 * per column, ply the count and to_move its parity. */
static sk_status c4_check_state(const void *state, int num_envs) {
    const c4_state *s = state;
    for (int e = 0; e < num_envs; e++) {
        uint64_t all = s->all[e];
        bool stacked = true;
        for (int c = 0; c < C4_COLS; c++) {
            uint64_t column = (all >> (c * C4_COL_BITS)) & ((1ULL << C4_ROWS) - 1);
            stacked &= (column & (column + 1)) == 0; /* bits 0..k-1 only */
        }
        if ((s->first[e] & ~all) || (all & ~C4_FULL) || !stacked ||
            __builtin_popcountll(all) != s->ply[e] || s->to_move[e] != s->ply[e] % 2 ||
            __builtin_popcountll(s->first[e]) != (s->ply[e] + 1) / 2 || s->opening[e] % 2 ||
            s->opening[e] > s->ply[e])
            return sk_fail(SK_ERR_CORRUPT,
                           "%s: env %d's board (first 0x%llx, all 0x%llx, ply %d, "
                           "to_move %d) is not a position of the game",
                           s->id, e, (unsigned long long)s->first[e], (unsigned long long)all,
                           (int)s->ply[e], (int)s->to_move[e]);
    }
    return SK_OK;
}

/* Player p's observation of env e into row `row` of obs (C4_OBS floats) or,
 * for v1, of obs_u8 (C4_IMAGE bytes). */
static void write_obs(const c4_state *s, int e, int p, float *obs, uint8_t *obs_u8, size_t row) {
    uint64_t mine = p == 0 ? s->first[e] : s->all[e] & ~s->first[e];
    if (s->image) {
        uint64_t all = s->all[e];
        if (s->mirror[e]) mine = c4_mirror(mine), all = c4_mirror(all);
        c4_image(mine, all, s->to_move[e] == p, obs_u8 + row * C4_IMAGE);
        return;
    }
    float *out = obs + row * C4_OBS;
    c4_planes(mine, s->all[e], out);
    out[2 * C4_CELLS] = s->to_move[e] == p ? 1.0f : 0.0f;
}

/* Both rows' observations, masks and active flags of env e. */
static void write_rows(const c4_state *s, const sk_env_io *io, int e) {
    for (int p = 0; p < 2; p++) {
        size_t row = (size_t)e * 2 + (size_t)p;
        write_obs(s, e, p, io->obs, io->obs_u8, row);
        for (int c = 0; c < C4_COLS; c++)
            io->masks[row * C4_COLS + (size_t)c] = c4_can_play(s->all[e], seen_col(s, e, c));
        io->active[row] = s->to_move[e] == p;
    }
}

/* A new game in env e: the empty board, or a random stone for each player
 * (no four can come of two stones). */
static void new_game(c4_state *s, int e) {
    s->first[e] = s->all[e] = 0;
    s->to_move[e] = s->ply[e] = s->opening[e] = 0;
    if (s->mirror) s->mirror[e] = s->mirror_on && sk_rng_float(&s->rng[e]) < 0.5f;
    if (!(sk_rng_float(&s->rng[e]) < s->opening_prob)) return;
    for (int p = 0; p < 2; p++) {
        uint64_t stone = c4_drop_bit(s->all[e], (int)sk_rng_below(&s->rng[e], C4_COLS));
        s->all[e] |= stone;
        if (p == 0) s->first[e] |= stone;
    }
    s->ply[e] = s->opening[e] = 2;
}

static void c4_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    c4_state *s = state;
    for (int e = lo; e < hi; e++) {
        s->rng[e] = sk_rng_seed(seed, (uint64_t)e);
        new_game(s, e);
        write_rows(s, io, e);
    }
}

/* The game of env e ended with `winner` (0, 1, or -1 for a draw): both rows
 * end, logged, and a new game starts. */
static void end_game(c4_state *s, const sk_env_io *io, int e, int winner) {
    for (int p = 0; p < 2; p++) {
        size_t row = (size_t)e * 2 + (size_t)p;
        float result = winner < 0 ? 0.0f : winner == p ? 1.0f : -1.0f;
        io->rewards[row] = winner < 0 ? s->draw_reward : result;
        io->terminated[row] = 1;
        write_obs(s, e, p, io->final_obs, io->final_obs_u8, row);
        float *log = io->episode_log + row * C4_LOG_FIELDS;
        log[0] = result;
        log[1] = (float)((s->ply[e] - s->opening[e] + 1 - p) / 2); /* that player's moves */
        log[2] = winner == p ? 1.0f : 0.0f;
        log[3] = winner < 0 ? 1.0f : 0.0f;
    }
    new_game(s, e);
}

static void c4_step(void *state, const sk_env_io *io, int lo, int hi) {
    c4_state *s = state;
    for (int e = lo; e < hi; e++) {
        int mover = s->to_move[e];
        size_t base = (size_t)e * 2;
        io->rewards[base] = io->rewards[base + 1] = 0.0f;
        io->terminated[base] = io->terminated[base + 1] = 0;
        io->truncated[base] = io->truncated[base + 1] = 0;
        int col = io->actions[base + (size_t)mover];
        if (col >= 0 && col < C4_COLS) col = seen_col(s, e, col);
        if (col < 0 || col >= C4_COLS || !c4_can_play(s->all[e], col)) {
            end_game(s, io, e, 1 - mover); /* an illegal move loses */
        } else {
            uint64_t stone = c4_drop_bit(s->all[e], col);
            s->all[e] |= stone;
            if (mover == 0) s->first[e] |= stone;
            s->ply[e]++;
            uint64_t mine = mover == 0 ? s->first[e] : s->all[e] & ~s->first[e];
            if (c4_has_four(mine)) end_game(s, io, e, mover);
            else if (s->ply[e] == C4_CELLS) end_game(s, io, e, -1);
            else s->to_move[e] = 1 - mover;
        }
        write_rows(s, io, e);
    }
}

/* The legal columns' best by a one-ply look: a winning drop, else a drop that
 * blocks the opponent's win, else the centre-most legal column. */
static void c4_heuristic(const void *state, int lo, int hi, int32_t *actions) {
    const c4_state *s = state;
    static const int order[C4_COLS] = {3, 2, 4, 1, 5, 0, 6};
    for (int e = lo; e < hi; e++) {
        int mover = s->to_move[e];
        uint64_t all = s->all[e], mine = mover == 0 ? s->first[e] : all & ~s->first[e];
        int pick = -1, block = -1, centre = -1;
        for (int k = 0; k < C4_COLS; k++) {
            int c = order[k];
            if (!c4_can_play(all, c)) continue;
            uint64_t stone = c4_drop_bit(all, c);
            if (centre < 0) centre = c;
            if (pick < 0 && c4_has_four(mine | stone)) pick = c;
            if (block < 0 && c4_has_four((all & ~mine) | stone)) block = c;
        }
        int chosen = pick >= 0 ? pick : block >= 0 ? block : centre;
        for (int p = 0; p < 2; p++) actions[(size_t)e * 2 + (size_t)p] = seen_col(s, e, chosen);
    }
}

/* The built-in opponent "alphabeta:DEPTH" (search.h): the mover's column by a depth-DEPTH
 * search of the real board, ties broken by env e's stream, shown to the rows as they see it
 * (v1's mirror). Never part of a policy: it reads the whole board and searches it. */
static void c4_alphabeta(const void *state, int lo, int hi, int depth, uint64_t *rng,
                         int32_t *actions) {
    const c4_state *s = state;
    for (int e = lo; e < hi; e++) {
        uint64_t all = s->all[e], mine = s->to_move[e] == 0 ? s->first[e] : all & ~s->first[e];
        int col = c4_search_move(mine, all, depth, &rng[e], NULL);
        if (col < 0) col = 0; /* a full board ends the game before anyone moves */
        for (int p = 0; p < 2; p++) actions[(size_t)e * 2 + (size_t)p] = seen_col(s, e, col);
    }
}

static const sk_env_opponent g_opponents[] = {
    {.name = "alphabeta",
     .help = "negamax with alpha-beta pruning, DEPTH plies ahead, open-window leaf score "
             "(modules/connect4/search.h); ties at random",
     .arg_name = "DEPTH", .arg_low = 1, .arg_high = C4_SEARCH_MAX_DEPTH, .act = c4_alphabeta},
    {0},
};

static float g_obs_low[C4_OBS], g_obs_high[C4_OBS] = {
#define ONE4 1, 1, 1, 1
#define ONE17 ONE4, ONE4, ONE4, ONE4, 1
    ONE17, ONE17, ONE17, ONE17, ONE17,
};
_Static_assert(C4_OBS == 85, "g_obs_high lists 5 x 17 ones");

static const float g_image_low[C4_IMAGE], g_image_high[C4_IMAGE] = {
    ONE17, ONE17, ONE17, ONE17, ONE17, ONE17, ONE17, ONE4, 1, 1, 1,
};
_Static_assert(C4_IMAGE == 126, "g_image_high lists 7 x 17 + 7 ones");

static const char *const g_action_names[] = {"col0", "col1", "col2", "col3",
                                             "col4", "col5", "col6", NULL};
static const char *const g_agent_names[] = {"first", "second"};

/* ---- pictures (sk_env_extras.render, skinner eval --video): the board as it stands, not as
 * v1's mirrored view shows it, bottom row at the bottom; each cell a RENDER_CELL-pixel square
 * of the blue frame with a hole: white when empty, red for the first player's stone, yellow
 * for the second's (the colours of the classic wooden-and-plastic set). ---- */
#define RENDER_CELL 32
#define RENDER_HOLE_RADIUS 13.0
#define RENDER_WIDTH (C4_COLS * RENDER_CELL)
#define RENDER_HEIGHT (C4_ROWS * RENDER_CELL)
static const uint8_t g_frame_rgb[3] = {0, 82, 165}, g_empty_rgb[3] = {255, 255, 255},
                     g_first_rgb[3] = {214, 40, 40}, g_second_rgb[3] = {245, 200, 30};

static void c4_render(const void *state, int index, uint8_t *rgb) {
    const c4_state *s = state;
    uint64_t first = s->first[index], second = s->all[index] & ~first;
    for (int y = 0; y < RENDER_HEIGHT; y++)
        for (int x = 0; x < RENDER_WIDTH; x++) {
            int row = C4_ROWS - 1 - y / RENDER_CELL, col = x / RENDER_CELL; /* row 0: bottom */
            double dx = x % RENDER_CELL + 0.5 - RENDER_CELL / 2.0;
            double dy = y % RENDER_CELL + 0.5 - RENDER_CELL / 2.0;
            uint64_t bit = c4_bit(row, col);
            const uint8_t *color = dx * dx + dy * dy > RENDER_HOLE_RADIUS * RENDER_HOLE_RADIUS
                                       ? g_frame_rgb
                                   : (first & bit)  ? g_first_rgb
                                   : (second & bit) ? g_second_rgb
                                                    : g_empty_rgb;
            memcpy(rgb + 3 * ((size_t)y * RENDER_WIDTH + (size_t)x), color, 3);
        }
}

static const sk_env_extras g_extras = {
    .preset = "connect4",
    .action_names = g_action_names,
    .heuristic = c4_heuristic,
    .render_width = RENDER_WIDTH,
    .render_height = RENDER_HEIGHT,
    .render = c4_render,
    .opponents = g_opponents,
};

static const sk_env_extras g_extras_image = {
    .preset = "connect4_cnn",
    .action_names = g_action_names,
    .heuristic = c4_heuristic,
    .render_width = RENDER_WIDTH,
    .render_height = RENDER_HEIGHT,
    .render = c4_render,
    .opponents = g_opponents,
};

/* What v0 and v1 share of their tables. */
#define C4_TABLE                                                                                   \
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {C4_COLS}},          \
    .mask_size = C4_COLS, .max_episode_steps = C4_CELLS, .solved_threshold = NAN,                  \
    .num_log_fields = C4_LOG_FIELDS, .log_names = {"return", "length", "win", "draw"},             \
    .destroy = c4_destroy, .reset = c4_reset, .step = c4_step, .state_arrays = c4_state_arrays,    \
    .check_state = c4_check_state, .num_agents = 2, .agent_names = g_agent_names

const sk_env_def sk_env_connect_four = {
    .id = C4_V0_ID,
    .alias = "connect4",
    .summary = "two players drop stones into a 6x7 board; four in a row wins (turns by masks)",
    .obs_size = C4_OBS,
    .create = c4_create,
    .extras = &g_extras,
    .obs_low = g_obs_low,
    .obs_high = g_obs_high,
    C4_TABLE,
};

const sk_env_def sk_env_connect_four_v1 = {
    .id = C4_V1_ID,
    .summary = "Connect Four with the board as a 6x7x3 image (a CNN preset)",
    .obs_size = C4_IMAGE,
    .obs_dtype = SK_OBS_U8,
    .obs_shape = {C4_ROWS, C4_COLS, 3},
    .create = c4_create_image,
    .extras = &g_extras_image,
    .obs_low = g_image_low,
    .obs_high = g_image_high,
    C4_TABLE,
};
