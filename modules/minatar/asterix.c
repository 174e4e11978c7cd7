/*
 * MinAtar's Asterix (rules restated from MinAtar 1.0.15 in
 * ../shared/reference/minatar/rules/asterix.md; the recorded traces there are
 * the authority). The player moves on rows 1..8; each of those rows holds at
 * most one entity, an enemy or a piece of gold, that enters at one edge and
 * crosses to the other. Gold touched is +1; an enemy touched ends the game.
 * Entities spawn every spawn_speed frames and move every move_speed frames;
 * with difficulty ramping both intervals shorten every 102 frames.
 */
#include "asterix.h"

#include "minatar_batch.h"

#include <string.h>

enum { ASTERIX_PLAYER, ASTERIX_ENEMY, ASTERIX_TRAIL, ASTERIX_GOLD, ASTERIX_CHANNELS };
_Static_assert(ASTERIX_CHANNELS == MINATAR_ASTERIX_CHANNELS, "asterix.h states the channels");

#define ASTERIX_LAST_CELL (MINATAR_SIDE - 1)
#define ASTERIX_PLAYER_START 5
#define ASTERIX_TOP_ROW 1
#define ASTERIX_BOTTOM_ROW 8
/* MinAtar's constants: init_spawn_speed, init_move_interval, ramp_interval. */
#define ASTERIX_INIT_SPAWN_SPEED 10
#define ASTERIX_INIT_MOVE_INTERVAL 5
#define ASTERIX_RAMP_INTERVAL 100
/* spawn(): an entity moves right with probability 1/2, and is gold with 1/3. */
#define ASTERIX_RIGHT_PROB (1.0 / 2.0)
#define ASTERIX_GOLD_PROB (1.0 / 3.0)

static void asterix_init(void *state, bool ramping) {
    asterix_game *game = state;
    memset(game, 0, sizeof *game);
    game->ramping = ramping;
}

/* A new game: no draws. */
static void asterix_reset(void *state, minatar_rng *rng) {
    (void)rng;
    asterix_game *game = state;
    bool ramping = game->ramping;
    memset(game, 0, sizeof *game);
    game->ramping = ramping;
    game->player_x = ASTERIX_PLAYER_START;
    game->player_y = ASTERIX_PLAYER_START;
    game->spawn_speed = ASTERIX_INIT_SPAWN_SPEED;
    game->spawn_timer = ASTERIX_INIT_SPAWN_SPEED;
    game->move_speed = ASTERIX_INIT_MOVE_INTERVAL;
    game->move_timer = ASTERIX_INIT_MOVE_INTERVAL;
    game->ramp_timer = ASTERIX_RAMP_INTERVAL;
}

/* spawn(): the direction and the kind are always drawn; the slot is drawn
 * uniformly among the free ones (ascending), and not at all when none is free. */
static void asterix_spawn(asterix_game *game, minatar_rng *rng) {
    bool moving_right = minatar_rng_rand(rng) < ASTERIX_RIGHT_PROB;
    bool gold = minatar_rng_rand(rng) < ASTERIX_GOLD_PROB;
    int free_slots[ASTERIX_SLOTS], num_free = 0;
    for (int slot = 0; slot < ASTERIX_SLOTS; slot++)
        if (!game->entities[slot].present) free_slots[num_free++] = slot;
    if (num_free == 0) return;
    int slot = free_slots[minatar_rng_randint(rng, 0, num_free)];
    game->entities[slot] = (asterix_entity){
        .present = true,
        .moving_right = moving_right,
        .gold = gold,
        .x = moving_right ? 0 : ASTERIX_LAST_CELL,
    };
}

/* An entity on the player's cell: gold is collected (+1, the slot cleared), an
 * enemy ends the game (the frame still runs to its end). */
static float asterix_touch(asterix_game *game, int slot) {
    asterix_entity *entity = &game->entities[slot];
    if (!entity->present || entity->x != game->player_x || slot + 1 != game->player_y) return 0.0f;
    if (entity->gold) {
        entity->present = false;
        return 1.0f;
    }
    game->terminal = true;
    return 0.0f;
}

static float asterix_act(void *state, minatar_rng *rng, int action, bool *terminal) {
    asterix_game *game = state;
    *terminal = true;
    if (game->terminal) return 0.0f;
    float reward = 0.0f;

    /* Spawn on the frame the spawn timer reaches 0 (the first on act 11). */
    if (game->spawn_timer == 0) {
        asterix_spawn(game, rng);
        game->spawn_timer = game->spawn_speed;
    }

    /* The player moves one cell, held inside columns 0..9 and rows 1..8; fire is a no-op. */
    switch (action) {
    case MINATAR_LEFT:
        if (game->player_x > 0) game->player_x--;
        break;
    case MINATAR_RIGHT:
        if (game->player_x < ASTERIX_LAST_CELL) game->player_x++;
        break;
    case MINATAR_UP:
        if (game->player_y > ASTERIX_TOP_ROW) game->player_y--;
        break;
    case MINATAR_DOWN:
        if (game->player_y < ASTERIX_BOTTOM_ROW) game->player_y++;
        break;
    default:
        break;
    }

    /* An entity on the player's new cell: only the one of the player's row (slot y - 1) can
     * be; MinAtar tests all of them, and the others touch nothing. */
    reward += asterix_touch(game, game->player_y - 1);

    /* Entities move one cell on the frame the move timer reaches 0; one leaving
     * the board is cleared, one landing on the player touches it. */
    if (game->move_timer == 0) {
        game->move_timer = game->move_speed;
        for (int slot = 0; slot < ASTERIX_SLOTS; slot++) {
            asterix_entity *entity = &game->entities[slot];
            if (!entity->present) continue;
            entity->x = (int8_t)(entity->x + (entity->moving_right ? 1 : -1));
            if (entity->x < 0 || entity->x > ASTERIX_LAST_CELL) entity->present = false;
            else reward += asterix_touch(game, slot);
        }
    }
    game->spawn_timer--;
    game->move_timer--;

    /* Difficulty ramp: ramp_timer counts 100 down to -1 (102 frames), then the
     * spawn interval shortens by one, and the move interval on every second
     * ramp (odd ramp_index before the increment), neither below 1. */
    if (game->ramping && (game->spawn_speed > 1 || game->move_speed > 1)) {
        if (game->ramp_timer >= 0) {
            game->ramp_timer--;
        } else {
            if (game->move_speed > 1 && game->ramp_index % 2 == 1) game->move_speed--;
            if (game->spawn_speed > 1) game->spawn_speed--;
            game->ramp_index++;
            game->ramp_timer = ASTERIX_RAMP_INTERVAL;
        }
    }
    *terminal = game->terminal;
    return reward;
}

/* MinAtar's state(): the player, each entity (gold or enemy) and, behind each
 * entity, its trail cell when that is on the board. */
static void asterix_observe(const void *state, uint8_t *obs) {
    const asterix_game *game = state;
    memset(obs, 0, MINATAR_SIDE * MINATAR_SIDE * ASTERIX_CHANNELS);
#define ASTERIX_CELL(y, x, c) obs[((y) * MINATAR_SIDE + (x)) * ASTERIX_CHANNELS + (c)]
    ASTERIX_CELL(game->player_y, game->player_x, ASTERIX_PLAYER) = 1;
    for (int slot = 0; slot < ASTERIX_SLOTS; slot++) {
        const asterix_entity *entity = &game->entities[slot];
        if (!entity->present) continue;
        int y = slot + 1, trail_x = entity->x + (entity->moving_right ? -1 : 1);
        ASTERIX_CELL(y, entity->x, entity->gold ? ASTERIX_GOLD : ASTERIX_ENEMY) = 1;
        if (trail_x >= 0 && trail_x <= ASTERIX_LAST_CELL)
            ASTERIX_CELL(y, trail_x, ASTERIX_TRAIL) = 1;
    }
#undef ASTERIX_CELL
}

/* The timers count down to 0 from their intervals (a negative one would never fire again); the
 * ramp timer runs 100 down to -1. */
static bool asterix_validate(const void *state, char *why, size_t why_size) {
    const asterix_game *game = state;
    char what[32];
    for (int slot = 0; slot < ASTERIX_SLOTS; slot++) {
        const asterix_entity *entity = &game->entities[slot];
        snprintf(what, sizeof what, "entities[%d].present", slot);
        if (!minatar_check_flag(what, &entity->present, why, why_size)) return false;
        snprintf(what, sizeof what, "entities[%d].moving_right", slot);
        if (!minatar_check_flag(what, &entity->moving_right, why, why_size)) return false;
        snprintf(what, sizeof what, "entities[%d].gold", slot);
        if (!minatar_check_flag(what, &entity->gold, why, why_size)) return false;
        /* an absent entity keeps the x it left the board at */
        snprintf(what, sizeof what, "entities[%d].x", slot);
        if (entity->present &&
            !minatar_check_range(what, entity->x, 0, ASTERIX_LAST_CELL, why, why_size))
            return false;
    }
    return minatar_check_flag("ramping", &game->ramping, why, why_size) &&
           minatar_check_flag("terminal", &game->terminal, why, why_size) &&
           minatar_check_range("player_x", game->player_x, 0, ASTERIX_LAST_CELL, why,
                               why_size) &&
           minatar_check_range("player_y", game->player_y, ASTERIX_TOP_ROW, ASTERIX_BOTTOM_ROW,
                               why, why_size) &&
           minatar_check_range("spawn_speed", game->spawn_speed, 1, ASTERIX_INIT_SPAWN_SPEED, why,
                               why_size) &&
           minatar_check_range("spawn_timer", game->spawn_timer, 0, game->spawn_speed, why,
                               why_size) &&
           minatar_check_range("move_speed", game->move_speed, 1, ASTERIX_INIT_MOVE_INTERVAL,
                               why, why_size) &&
           minatar_check_range("move_timer", game->move_timer, 0, game->move_speed, why,
                               why_size) &&
           minatar_check_range("ramp_timer", game->ramp_timer, -1, ASTERIX_RAMP_INTERVAL, why,
                               why_size) &&
           minatar_check_range("ramp_index", game->ramp_index, 0, INT32_MAX, why, why_size);
}

MINATAR_BATCH_STEP(asterix_step, asterix_game, asterix_act, asterix_observe, asterix_reset)

const minatar_game_ops minatar_asterix = {
    .name = "asterix",
    .channels = ASTERIX_CHANNELS,
    .state_size = sizeof(asterix_game),
    .init = asterix_init,
    .reset = asterix_reset,
    .act = asterix_act,
    .observe = asterix_observe,
    .step = asterix_step,
    .num_minimal_actions = MINATAR_COUNT(MINATAR_ASTERIX_MINIMAL_ACTIONS),
    .minimal_actions = {MINATAR_ASTERIX_MINIMAL_ACTIONS},
    .validate = asterix_validate,
};
