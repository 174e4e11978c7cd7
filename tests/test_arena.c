/*
 * Arena's rules (modules/arena/arena.h) on hand-built maps: moves, the reverse kept out, food
 * and growth, deaths on walls, bodies, a head-on swap and two heads into one cell, a head into
 * a tail that leaves (and one that stays), truncation, every view against one computed cell by
 * cell from the map's description, each life's log against its rewards, and one seed's run
 * replayed bit for bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "skinner.h"
#include "test_util.h"
#include "arena/arena.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define MAX_ROWS 64

/* one batch's io, rows of a map's agents */
typedef struct batch_io {
    uint8_t obs[MAX_ROWS * ARENA_MAX_OBS_SIZE], final_obs[MAX_ROWS * ARENA_MAX_OBS_SIZE];
    int32_t actions[MAX_ROWS];
    float rewards[MAX_ROWS], log[MAX_ROWS * ARENA_LOG_FIELDS];
    uint8_t terminated[MAX_ROWS], truncated[MAX_ROWS];
    sk_env_io io;
} batch_io;

static void io_init(batch_io *b) {
    memset(b, 0, sizeof *b);
    b->io = (sk_env_io){.obs_u8 = b->obs, .final_obs_u8 = b->final_obs, .actions = b->actions,
                        .rewards = b->rewards, .terminated = b->terminated,
                        .truncated = b->truncated, .episode_log = b->log};
}

/* a 6x5 map, vision 2, two snakes, no food of its own */
static const arena_settings g_small = {.num_agents = 2, .width = 6, .height = 5, .vision = 2,
                                       .food = 0, .max_length = 8, .max_steps = 100};

static arena *make(const arena_settings *settings, int num_envs) {
    arena *game = NULL;
    assert_int_equal(arena_create(&game, settings, num_envs, "Arena-v0"), SK_OK);
    return game;
}

static int32_t cell(const arena *game, int x, int y) { return arena_cell(game, x, y); }

static int32_t head_of(const arena *game, int row) {
    return arena_body_cell(game, row, game->length[row] - 1);
}

static int count_channel(const arena *game, int env, int channel) {
    int total = 0;
    for (int y = 0; y < game->settings.height; y++)
        for (int x = 0; x < game->settings.width; x++)
            total += arena_at(game, env, arena_cell(game, x, y))[channel];
    return total;
}

/* two snakes: row 0 tail (0,1) -> head (2,1) heading right; row 1 alone at (5,4) heading up */
static void two_snakes(arena *game) {
    arena_clear(game, 0, 7);
    int32_t first[3] = {cell(game, 0, 1), cell(game, 1, 1), cell(game, 2, 1)};
    arena_place(game, 0, first, 3, ARENA_RIGHT);
    int32_t second[1] = {cell(game, 5, 4)};
    arena_place(game, 1, second, 1, ARENA_UP);
}

static void test_moves_and_reverse(void **unused) {
    (void)unused;
    arena *game = make(&g_small, 1);
    batch_io *b = malloc(sizeof *b);
    io_init(b);
    two_snakes(game);
    b->actions[0] = ARENA_DOWN;
    b->actions[1] = ARENA_LEFT;
    arena_step_env(game, 0, &b->io);
    assert_int_equal(head_of(game, 0), cell(game, 2, 2));
    assert_int_equal(arena_body_cell(game, 0, 0), cell(game, 1, 1)); /* the tail followed */
    assert_int_equal(game->length[0], 3);
    assert_int_equal(head_of(game, 1), cell(game, 4, 4));
    assert_int_equal(arena_at(game, 0, cell(game, 0, 1))[ARENA_BODY], 0);
    assert_int_equal(arena_at(game, 0, cell(game, 2, 1))[ARENA_HEAD], 0);
    assert_int_equal(arena_at(game, 0, cell(game, 2, 2))[ARENA_HEAD], 1);
    assert_int_equal(count_channel(game, 0, ARENA_BODY), 4);
    assert_int_equal(count_channel(game, 0, ARENA_HEAD), 2);
    assert_true(b->rewards[0] == 0.0f && b->rewards[1] == 0.0f);
    assert_int_equal(b->terminated[0] | b->terminated[1] | b->truncated[0] | b->truncated[1], 0);
    /* row 0 heads down: up is the reverse (into its neck) and keeps it going down */
    b->actions[0] = ARENA_UP;
    arena_step_env(game, 0, &b->io);
    assert_int_equal(head_of(game, 0), cell(game, 2, 3));
    assert_int_equal(game->heading[0], ARENA_DOWN);
    /* a snake of length 1 has no neck: row 1 (heading left) may turn right */
    b->actions[1] = ARENA_RIGHT;
    arena_step_env(game, 0, &b->io);
    assert_int_equal(head_of(game, 1), cell(game, 4, 4));
    assert_int_equal(b->terminated[1], 0);
    free(b);
    arena_destroy(game);
}

static void test_food_and_growth(void **unused) {
    (void)unused;
    arena *game = make(&g_small, 1);
    batch_io *b = malloc(sizeof *b);
    io_init(b);
    two_snakes(game);
    arena_at(game, 0, cell(game, 3, 1))[ARENA_FOOD] = 1;
    b->actions[0] = ARENA_RIGHT;
    b->actions[1] = ARENA_UP;
    arena_step_env(game, 0, &b->io);
    assert_true(b->rewards[0] == 1.0f);
    assert_true(b->rewards[1] == 0.0f);
    assert_int_equal(game->length[0], 4);
    assert_int_equal(arena_body_cell(game, 0, 0), cell(game, 0, 1)); /* the tail stayed */
    assert_int_equal(head_of(game, 0), cell(game, 3, 1));
    assert_int_equal(arena_at(game, 0, cell(game, 3, 1))[ARENA_FOOD], 0);
    /* the eaten food is replaced on an empty cell: one food on the map, off every body */
    assert_int_equal(count_channel(game, 0, ARENA_FOOD), 1);
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 6; x++) {
            const uint8_t *at = arena_at(game, 0, cell(game, x, y));
            assert_false(at[ARENA_FOOD] && at[ARENA_BODY]);
        }
    /* at max_length a snake eats (+1) without growing */
    arena_settings short_snakes = g_small;
    short_snakes.max_length = 3;
    arena *capped = make(&short_snakes, 1);
    two_snakes(capped);
    arena_at(capped, 0, cell(capped, 3, 1))[ARENA_FOOD] = 1;
    arena_step_env(capped, 0, &b->io);
    assert_true(b->rewards[0] == 1.0f);
    assert_int_equal(capped->length[0], 3);
    assert_int_equal(arena_body_cell(capped, 0, 0), cell(capped, 1, 1));
    arena_destroy(capped);
    free(b);
    arena_destroy(game);
}

/* The row's death: reward -1, terminated, its log, and a new snake of length 1 elsewhere. */
static void assert_died(const arena *game, const batch_io *b, int row, float life_return,
                        float life_steps, float snake_length) {
    assert_true(b->rewards[row] == -1.0f);
    assert_int_equal(b->terminated[row], 1);
    assert_int_equal(b->truncated[row], 0);
    assert_true(b->log[row * ARENA_LOG_FIELDS + ARENA_LOG_RETURN] == life_return);
    assert_true(b->log[row * ARENA_LOG_FIELDS + ARENA_LOG_LENGTH] == life_steps);
    assert_true(b->log[row * ARENA_LOG_FIELDS + ARENA_LOG_SNAKE_LENGTH] == snake_length);
    assert_int_equal(game->length[row], 1);
    assert_int_equal(game->life_steps[row], 0);
    assert_true(game->life_return[row] == 0.0f);
}

static void test_wall_death_and_respawn(void **unused) {
    (void)unused;
    arena *game = make(&g_small, 1);
    batch_io *b = malloc(sizeof *b);
    io_init(b);
    two_snakes(game);
    b->actions[0] = ARENA_RIGHT;
    b->actions[1] = ARENA_DOWN; /* (5,4) is on the bottom row: into the wall */
    arena_step_env(game, 0, &b->io);
    assert_died(game, b, 1, -1.0f, 1.0f, 1.0f);
    assert_int_equal(b->terminated[0], 0);
    /* the final view is centred where the dead head was: the wall below it, the wall at the
     * map's corner 2 cells right; the head's own cell is empty (its tail, the same cell, left
     * before it struck the wall) */
    int view = game->view;
    const uint8_t *final = b->final_obs + game->obs_size;
    int centre = (2 * view + 2) * ARENA_CHANNELS, below = (3 * view + 2) * ARENA_CHANNELS;
    assert_int_equal(final[centre + ARENA_BODY], 0);
    assert_int_equal(final[below + ARENA_BODY], 1);
    assert_int_equal(final[(2 * view + 3) * ARENA_CHANNELS + ARENA_BODY], 1);
    assert_int_equal(final[(2 * view + 1) * ARENA_CHANNELS + ARENA_BODY], 0);
    /* 3 cells of row 0 and the newborn: 4 bodies, 2 heads */
    assert_int_equal(count_channel(game, 0, ARENA_BODY), 4);
    assert_int_equal(count_channel(game, 0, ARENA_HEAD), 2);
    free(b);
    arena_destroy(game);
}

static void test_body_collisions(void **unused) {
    (void)unused;
    arena *game = make(&g_small, 1);
    batch_io *b = malloc(sizeof *b);
    io_init(b);
    /* row 1 at (1,2) heads up into row 0's middle cell (1,1) */
    arena_clear(game, 0, 3);
    int32_t first[3] = {cell(game, 0, 1), cell(game, 1, 1), cell(game, 2, 1)};
    arena_place(game, 0, first, 3, ARENA_RIGHT);
    int32_t second[2] = {cell(game, 1, 3), cell(game, 1, 2)};
    arena_place(game, 1, second, 2, ARENA_UP);
    b->actions[0] = ARENA_RIGHT;
    b->actions[1] = ARENA_UP;
    arena_step_env(game, 0, &b->io);
    assert_died(game, b, 1, -1.0f, 1.0f, 2.0f);
    assert_int_equal(b->terminated[0], 0);
    assert_int_equal(head_of(game, 0), cell(game, 3, 1));
    /* the dead body left the map: row 0's 3 cells and the newborn */
    assert_int_equal(count_channel(game, 0, ARENA_BODY), 4);
    /* its own body: row 0 of length 5 turning back on itself dies */
    arena_clear(game, 0, 3);
    int32_t coil[5] = {cell(game, 1, 1), cell(game, 2, 1), cell(game, 3, 1), cell(game, 3, 2),
                       cell(game, 2, 2)};
    arena_place(game, 0, coil, 5, ARENA_LEFT);
    arena_place(game, 1, (int32_t[]){cell(game, 5, 4)}, 1, ARENA_UP);
    b->actions[0] = ARENA_UP; /* (2,1): its own body */
    b->actions[1] = ARENA_UP;
    arena_step_env(game, 0, &b->io);
    assert_died(game, b, 0, -1.0f, 1.0f, 5.0f);
    free(b);
    arena_destroy(game);
}

static void test_head_on_and_same_cell(void **unused) {
    (void)unused;
    arena *game = make(&g_small, 1);
    batch_io *b = malloc(sizeof *b);
    io_init(b);
    /* a swap: (2,2) right and (3,2) left, each into the other's head */
    arena_clear(game, 0, 5);
    arena_place(game, 0, (int32_t[]){cell(game, 1, 2), cell(game, 2, 2)}, 2, ARENA_RIGHT);
    arena_place(game, 1, (int32_t[]){cell(game, 4, 2), cell(game, 3, 2)}, 2, ARENA_LEFT);
    b->actions[0] = ARENA_RIGHT;
    b->actions[1] = ARENA_LEFT;
    arena_step_env(game, 0, &b->io);
    assert_died(game, b, 0, -1.0f, 1.0f, 2.0f);
    assert_died(game, b, 1, -1.0f, 1.0f, 2.0f);
    assert_int_equal(count_channel(game, 0, ARENA_BODY), 2); /* the two newborns */
    assert_int_equal(count_channel(game, 0, ARENA_HEAD), 2);
    /* one free cell (2,2) entered by both heads at once, food in it: both die, food stays */
    arena_clear(game, 0, 5);
    arena_place(game, 0, (int32_t[]){cell(game, 0, 2), cell(game, 1, 2)}, 2, ARENA_RIGHT);
    arena_place(game, 1, (int32_t[]){cell(game, 4, 2), cell(game, 3, 2)}, 2, ARENA_LEFT);
    arena_at(game, 0, cell(game, 2, 2))[ARENA_FOOD] = 1;
    arena_step_env(game, 0, &b->io);
    assert_died(game, b, 0, -1.0f, 1.0f, 2.0f);
    assert_died(game, b, 1, -1.0f, 1.0f, 2.0f);
    assert_int_equal(count_channel(game, 0, ARENA_FOOD), 1);
    assert_int_equal(count_channel(game, 0, ARENA_HEAD), 2);
    assert_int_equal(count_channel(game, 0, ARENA_BODY), 2);
    free(b);
    arena_destroy(game);
}

static void test_tails(void **unused) {
    (void)unused;
    arena *game = make(&g_small, 1);
    batch_io *b = malloc(sizeof *b);
    io_init(b);
    /* row 1's head (1,2) moves up into row 0's tail (1,1), which leaves as row 0 moves on */
    arena_clear(game, 0, 9);
    arena_place(game, 0, (int32_t[]){cell(game, 1, 1), cell(game, 2, 1), cell(game, 3, 1)}, 3,
                ARENA_RIGHT);
    arena_place(game, 1, (int32_t[]){cell(game, 1, 3), cell(game, 1, 2)}, 2, ARENA_UP);
    b->actions[0] = ARENA_RIGHT;
    b->actions[1] = ARENA_UP;
    arena_step_env(game, 0, &b->io);
    assert_int_equal(b->terminated[0] | b->terminated[1], 0);
    assert_int_equal(head_of(game, 1), cell(game, 1, 1));
    /* the same, but row 0 eats and keeps its tail: row 1 dies in it */
    arena_clear(game, 0, 9);
    arena_place(game, 0, (int32_t[]){cell(game, 1, 1), cell(game, 2, 1), cell(game, 3, 1)}, 3,
                ARENA_RIGHT);
    arena_place(game, 1, (int32_t[]){cell(game, 1, 3), cell(game, 1, 2)}, 2, ARENA_UP);
    arena_at(game, 0, cell(game, 4, 1))[ARENA_FOOD] = 1;
    arena_step_env(game, 0, &b->io);
    assert_true(b->rewards[0] == 1.0f);
    assert_died(game, b, 1, -1.0f, 1.0f, 2.0f);
    assert_int_equal(game->length[0], 4);
    free(b);
    arena_destroy(game);
}

static void test_truncation(void **unused) {
    (void)unused;
    arena_settings settings = g_small;
    settings.max_steps = 3;
    arena *game = make(&settings, 1);
    batch_io *b = malloc(sizeof *b);
    io_init(b);
    arena_clear(game, 0, 11);
    arena_place(game, 0, (int32_t[]){cell(game, 0, 0)}, 1, ARENA_RIGHT);
    arena_place(game, 1, (int32_t[]){cell(game, 0, 4)}, 1, ARENA_RIGHT);
    b->actions[0] = b->actions[1] = ARENA_RIGHT;
    for (int step = 1; step <= 3; step++) {
        arena_step_env(game, 0, &b->io);
        int ends = step == 3;
        assert_int_equal(b->truncated[0], ends);
        assert_int_equal(b->truncated[1], ends);
        assert_int_equal(b->terminated[0], 0);
    }
    assert_true(b->log[ARENA_LOG_RETURN] == 0.0f);
    assert_true(b->log[ARENA_LOG_LENGTH] == 3.0f);
    assert_true(b->log[ARENA_LOG_SNAKE_LENGTH] == 1.0f);
    /* the final view is the survivor's, its head in the centre, at (3,0) */
    int view = game->view, centre = (2 * view + 2) * ARENA_CHANNELS;
    assert_int_equal(b->final_obs[centre + ARENA_HEAD], 1);
    assert_int_equal(b->final_obs[(1 * view + 2) * ARENA_CHANNELS + ARENA_BODY], 1); /* wall */
    assert_int_equal(game->life_steps[0], 0);
    free(b);
    arena_destroy(game);
}

/* The view of row computed cell by cell from the bodies' lists and the food's cells, not from
 * the padded map: a cell off the map is a wall. */
static void expected_view(const arena *game, int env, int row, const uint8_t *food_map,
                          uint8_t *out) {
    int width = game->settings.width, height = game->settings.height;
    int vision = game->settings.vision, view = game->view, pad = game->pad_width;
    int32_t head = head_of(game, row);
    int head_x = head % pad - vision, head_y = head / pad - vision;
    memset(out, 0, game->obs_size);
    for (int dy = -vision; dy <= vision; dy++)
        for (int dx = -vision; dx <= vision; dx++) {
            int x = head_x + dx, y = head_y + dy;
            uint8_t *o = out + ((dy + vision) * view + dx + vision) * ARENA_CHANNELS;
            if (x < 0 || y < 0 || x >= width || y >= height) {
                o[ARENA_BODY] = 1;
                continue;
            }
            o[ARENA_FOOD] = food_map[y * width + x];
            int32_t at = arena_cell(game, x, y);
            int first = env * game->settings.num_agents;
            for (int other = first; other < first + game->settings.num_agents; other++)
                for (int k = 0; k < game->length[other]; k++)
                    if (arena_body_cell(game, other, k) == at) {
                        o[ARENA_BODY] = 1;
                        if (k == game->length[other] - 1) o[ARENA_HEAD] = 1;
                    }
        }
}

/* Random play on two maps of 16 snakes: every view against expected_view, every life's log
 * against the rewards its row received, the food count constant; the same seed replays bit
 * for bit. Returns a checksum of the run. */
static uint64_t random_run(uint64_t seed, int steps, bool check) {
    arena_settings settings = {.num_agents = 16, .width = 20, .height = 14, .vision = 3,
                               .food = 12, .max_length = 6, .max_steps = 40};
    arena *game = make(&settings, 2);
    batch_io *b = malloc(sizeof *b);
    io_init(b);
    for (int env = 0; env < 2; env++) arena_reset_env(game, env, seed, b->obs);
    float returns[MAX_ROWS] = {0};
    int lengths[MAX_ROWS] = {0}, deaths = 0, meals = 0;
    uint64_t rng = seed, checksum = 0;
    uint8_t expected[ARENA_MAX_OBS_SIZE], food_map[20 * 14];
    for (int step = 0; step < steps; step++) {
        for (int row = 0; row < 32; row++) b->actions[row] = (int32_t)sk_rng_below(&rng, 4);
        for (int env = 0; env < 2; env++) arena_step_env(game, env, &b->io);
        for (int row = 0; row < 32; row++) {
            checksum = sk_mix64(checksum ^ (uint64_t)head_of(game, row) ^
                                (uint64_t)(b->rewards[row] + 2.0f) << 32);
            if (!check) continue;
            returns[row] += b->rewards[row];
            lengths[row]++;
            deaths += b->terminated[row];
            meals += b->rewards[row] > 0.0f;
            if (b->terminated[row] || b->truncated[row]) {
                /* the last view is inside the Box too: every byte 0 or 1 */
                for (size_t k = 0; k < game->obs_size; k++)
                    assert_in_range(b->final_obs[(size_t)row * game->obs_size + k], 0, 1);
                assert_true(b->log[row * ARENA_LOG_FIELDS + ARENA_LOG_RETURN] == returns[row]);
                assert_true(b->log[row * ARENA_LOG_FIELDS + ARENA_LOG_LENGTH] ==
                            (float)lengths[row]);
                assert_true(lengths[row] <= settings.max_steps);
                assert_int_equal(b->truncated[row], lengths[row] == settings.max_steps &&
                                                        !b->terminated[row]);
                returns[row] = 0.0f;
                lengths[row] = 0;
            }
        }
        if (!check) continue;
        for (int env = 0; env < 2; env++) {
            assert_int_equal(count_channel(game, env, ARENA_FOOD), settings.food);
            assert_int_equal(count_channel(game, env, ARENA_HEAD), settings.num_agents);
            for (int y = 0; y < 14; y++)
                for (int x = 0; x < 20; x++)
                    food_map[y * 20 + x] = arena_at(game, env, arena_cell(game, x, y))[ARENA_FOOD];
            for (int row = env * 16; row < env * 16 + 16; row++) {
                expected_view(game, env, row, food_map, expected);
                assert_memory_equal(b->obs + (size_t)row * game->obs_size, expected,
                                    game->obs_size);
            }
        }
        char why[160];
        assert_true(arena_validate(game, why, sizeof why));
    }
    if (check) {
        assert_true(deaths > 50); /* random play dies often and eats sometimes */
        assert_true(meals > 10);
    }
    free(b);
    arena_destroy(game);
    return checksum;
}

static void test_random_play(void **unused) {
    (void)unused;
    uint64_t first = random_run(42, 300, true);
    assert_true(first == random_run(42, 300, false));
    assert_true(first != random_run(43, 300, false));
}

/* A restored map must be the one its snakes and food make (h27): before, only the bodies'
 * cells were checked, so a map with a wall cleared (heads walk into the padding, and on past
 * the map's memory), with every free cell marked a body (a new snake or food then finds no
 * empty cell and is placed at cell -1, before the map), with a food too many, or with two
 * snakes on one cell, passed. */
static void test_corrupt_map_refused(void **unused) {
    (void)unused;
    arena *game = make(&g_small, 2);
    uint8_t *obs = calloc((size_t)2 * 2, game->obs_size);
    char why[160];
    enum { CLEAR_WALL, FILL_MAP, EXTRA_FOOD, OVERLAP, CASES };
    const char *needles[CASES] = {"is not a wall", "does not agree with the snakes' bodies",
                                  "holds 1 food (expected 0, env.food)", "is another snake's too"};
    for (int c = 0; c < CASES; c++) {
        for (int env = 0; env < 2; env++) arena_reset_env(game, env, 5, obs);
        assert_true(arena_validate(game, why, sizeof why));
        uint8_t *grid = arena_at(game, 1, 0);
        int32_t free_cell = -1;
        for (int y = 0; y < g_small.height && free_cell < 0; y++)
            for (int x = 0; x < g_small.width && free_cell < 0; x++)
                if (!arena_at(game, 1, cell(game, x, y))[ARENA_BODY]) free_cell = cell(game, x, y);
        if (c == CLEAR_WALL) grid[(size_t)(cell(game, 0, 2) - 1) * ARENA_CHANNELS + ARENA_BODY] = 0;
        if (c == FILL_MAP)
            for (int y = 0; y < g_small.height; y++)
                for (int x = 0; x < g_small.width; x++)
                    arena_at(game, 1, cell(game, x, y))[ARENA_BODY] = 1;
        if (c == EXTRA_FOOD) arena_at(game, 1, free_cell)[ARENA_FOOD] = 1;
        if (c == OVERLAP) /* row 3's single cell onto row 2's */
            game->body[3 * (size_t)game->ring + (size_t)game->head_at[3]] = head_of(game, 2);
        if (arena_validate(game, why, sizeof why)) fail_msg("case %d: a corrupt map passed", c);
        if (!strstr(why, needles[c])) fail_msg("case %d: '%s' lacks '%s'", c, why, needles[c]);
        assert_non_null(strstr(why, "map 1"));
    }
    free(obs);
    arena_destroy(game);
}

static void test_settings_refused(void **unused) {
    (void)unused;
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_set(cfg, "env.width", "8"), SK_OK);
    assert_int_equal(sk_config_set(cfg, "env.height", "8"), SK_OK);
    arena_settings settings;
    /* 64 snakes of 16 and 256 food on 64 cells */
    assert_int_equal(arena_settings_read(cfg, &settings), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "env.num_agents x env.max_length + env.food"));
    sk_config_free(cfg);
}

/* The table through sk_vec: configure sizes the view and the agents from env.* keys; the
 * table's own sizes are the defaults'. */
static void test_table_configure(void **unused) {
    (void)unused;
    const sk_env_def *env = sk_env_find("Arena-v0");
    assert_non_null(env);
    arena_settings defaults;
    sk_config *cfg = sk_config_new();
    assert_int_equal(arena_settings_read(cfg, &defaults), SK_OK);
    int view = 2 * defaults.vision + 1;
    assert_int_equal(env->num_agents, defaults.num_agents);
    assert_int_equal(env->obs_size, view * view * ARENA_CHANNELS);
    assert_int_equal(env->max_episode_steps, defaults.max_steps);
    assert_int_equal(sk_config_set(cfg, "env.num_agents", "16"), SK_OK);
    assert_int_equal(sk_config_set(cfg, "env.vision", "3"), SK_OK);
    sk_vec *vec = NULL;
    assert_int_equal(sk_vec_create(&vec, env, 3, 1, cfg), SK_OK);
    const sk_env_def *shaped = sk_vec_env(vec);
    assert_int_equal(sk_vec_num_agents(vec), 16);
    assert_int_equal(sk_vec_num_rows(vec), 48);
    assert_int_equal(shaped->obs_size, 7 * 7 * ARENA_CHANNELS);
    assert_int_equal(shaped->obs_shape[0], 7);
    sk_vec_reset(vec, 1);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    for (int row = 0; row < 48; row++) {
        assert_int_equal(b->active[row], 1);
        /* every view has its own head in the centre */
        assert_int_equal(b->obs_u8[(size_t)row * 147 + (3 * 7 + 3) * ARENA_CHANNELS + ARENA_HEAD],
                         1);
    }
    sk_vec_destroy(vec);
    sk_config_free(cfg);
}

/* skinner bench env counts a multi-agent env's agent steps too: env steps x agents. */
static void test_bench_counts_agents(void **unused) {
    (void)unused;
    FILE *pipe = popen(SKINNER_BINARY " bench env Arena-v0 --seconds 0.2 --json", "r");
    assert_non_null(pipe);
    char line[512] = "";
    assert_non_null(fgets(line, sizeof line, pipe));
    assert_int_equal(pclose(pipe), 0);
    const char *sps_at = strstr(line, "\"sps\": "), *agents_at = strstr(line, "\"num_agents\": ");
    const char *agent_sps_at = strstr(line, "\"agent_sps\": ");
    assert_non_null(sps_at);
    assert_non_null(agents_at);
    assert_non_null(agent_sps_at);
    double sps = atof(sps_at + 7), agent_sps = atof(agent_sps_at + 13);
    assert_int_equal(atoi(agents_at + 14), 64);
    assert_true(sps > 0.0);
    assert_true(fabs(agent_sps - 64.0 * sps) <= 64.0); /* both printed rounded */
}

/* docs/multiagent.md's check and bench commands, as printed there. */
static void test_docs_commands(void **unused) {
    (void)unused;
    static char out[16384];
    assert_int_equal(test_run_command(SKINNER_BINARY " check Arena-v0 2>&1", out, sizeof out), 0);
    assert_non_null(strstr(out, "passed, 0 failed"));
    assert_int_equal(test_run_command(SKINNER_BINARY " bench env Arena-v0 2>&1", out, sizeof out), 0);
    assert_non_null(strstr(out, "Arena-v0: 64 envs of 64 agents, 1 thread"));
    assert_non_null(strstr(out, "agent steps/s"));
}

/* The preset trains: 3 updates of 32,768 agent steps (seed 1, one thread: the same run each
 * time) raise the mean return of the lives from the first update's (random play, ~0.4). */
static void test_preset_trains(void **unused) {
    (void)unused;
    char dir[] = "/tmp/test_arena_XXXXXX", command[512], path[600];
    static char out[16384];
    assert_non_null(mkdtemp(dir));
    snprintf(command, sizeof command,
             "SKINNER_CONFIG_DIR=%s/configs " SKINNER_BINARY " train Arena-v0 --total-steps 98304 "
             "--seed 1 --threads 1 --run-dir %s/run --quiet 2>&1",
             SKINNER_SOURCE_DIR, dir);
    assert_int_equal(test_run_command(command, out, sizeof out), 0);
    snprintf(path, sizeof path, "%s/run/metrics.csv", dir);
    FILE *metrics = fopen(path, "r");
    assert_non_null(metrics);
    char line[1024];
    double returns[3];
    int updates = 0;
    assert_non_null(fgets(line, sizeof line, metrics)); /* update,steps,wall,sps,mean_return */
    while (updates < 3 && fgets(line, sizeof line, metrics)) {
        int update;
        long steps;
        double wall, sps;
        assert_int_equal(sscanf(line, "%d,%ld,%lf,%lf,%lf", &update, &steps, &wall, &sps,
                                &returns[updates]), 5);
        assert_int_equal(steps, 32768L * (updates + 1)); /* agent steps: 8 maps x 64 x 64 */
        updates++;
    }
    fclose(metrics);
    assert_int_equal(updates, 3);
    assert_true(returns[0] < 1.0);
    assert_true(returns[2] > returns[0] + 0.2);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    assert_int_equal(system(command), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moves_and_reverse),
        cmocka_unit_test(test_food_and_growth),
        cmocka_unit_test(test_wall_death_and_respawn),
        cmocka_unit_test(test_body_collisions),
        cmocka_unit_test(test_head_on_and_same_cell),
        cmocka_unit_test(test_tails),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_random_play),
        cmocka_unit_test(test_corrupt_map_refused),
        cmocka_unit_test(test_settings_refused),
        cmocka_unit_test(test_table_configure),
        cmocka_unit_test(test_bench_counts_agents),
        cmocka_unit_test(test_docs_commands),
        cmocka_unit_test(test_preset_trains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
