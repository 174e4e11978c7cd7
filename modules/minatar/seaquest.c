/*
 * MinAtar's Seaquest (minatar/environments/seaquest.py, MinAtar 1.0.15), rules restated in
 * ../shared/reference/minatar/rules/seaquest.md and checked bit for bit against MinAtar's
 * recorded traces (tests/test_minatar_seaquest.c).
 *
 * A submarine under the surface shoots enemy fish and subs (+1 each) crossing its rows,
 * collects up to six divers and must come up for oxygen before it runs out (200 frames).
 * Surfacing with six divers pays oxygen*10/200 and refills; surfacing with none ends the game,
 * as does touching an enemy or an enemy bullet. Each surfacing ramps the difficulty (enemies
 * spawn and move faster) when ramping is on. No time limit.
 *
 * MinAtar keeps its objects in Python lists of lists and removes them by value
 * (list.remove, the FIRST equal element) while iterating in reverse over the same list. The
 * lists below reproduce that exactly: an object is a value, removal is by value, and the
 * reverse walk advances by index as Python's reversed() iterator does (so if an equal earlier
 * object is removed instead of the current one, the current one is visited again).
 *
 * MinAtar's quirks kept here:
 * - Surfacing with six divers leaves diver_count at -1 (it is zeroed, then decremented): a
 *   later surfacing with -1 does not end the game and pickups count up from -1.
 * - An enemy sub that is removed (off the board or shot) still fires that frame if its
 *   shot timer is due, from its last x, possibly off the board (that bullet goes in step 8).
 * - The out-of-oxygen test reads the oxygen from before this frame's decrement: the 201st
 *   submerged frame ends the game, with the oxygen at -1.
 */
#include "seaquest.h"

#include "minatar_batch.h"

#include <skinner/module.h>

#include <string.h>

#define CHANNEL_SUB_FRONT 0
#define CHANNEL_SUB_BACK 1
#define CHANNEL_FRIENDLY_BULLET 2
#define CHANNEL_TRAIL 3
#define CHANNEL_ENEMY_BULLET 4
#define CHANNEL_ENEMY_FISH 5
#define CHANNEL_ENEMY_SUB 6
#define CHANNEL_OXYGEN_GAUGE 7
#define CHANNEL_DIVER_GAUGE 8
#define CHANNEL_DIVER 9
#define NUM_CHANNELS MINATAR_SEAQUEST_CHANNELS

#define LAST_CELL (MINATAR_SIDE - 1)
#define GAUGE_ROW LAST_CELL
#define SUB_LOWEST_ROW (LAST_CELL - 1) /* the gauges take the bottom row */
#define SUB_START_X 5
#define ENEMY_FIRST_ROW 1                /* randint(1, 9): rows 1..8 */
#define ENEMY_ROW_END (SUB_LOWEST_ROW + 1) /* randint's exclusive end */

/* MinAtar's constants (seaquest.py). */
#define MAX_OXYGEN 200
#define INIT_SPAWN_SPEED 20
#define DIVER_SPAWN_SPEED 30
#define INIT_MOVE_INTERVAL 5
#define SHOT_COOL_DOWN 5
#define ENEMY_SHOT_INTERVAL 10
#define DIVER_MOVE_INTERVAL 5
#define MAX_DIVERS 6
#define SURFACE_BONUS_PER_OXYGEN 10 /* bonus = oxygen * 10 // MAX_OXYGEN */
#define MIN_SPAWN_SPEED 1           /* ramping stops at these */
#define MIN_MOVE_SPEED 2

/*
 * Capacities, from the game's real maxima:
 * - An enemy moves once every move_t+1 <= INIT_MOVE_INTERVAL+1 = 6 frames (its timer is the
 *   global move speed, which only decreases) and leaves the board after 10 moves, so it lives
 *   at most 60 frames; at most one enemy spawns per frame: at most 61 fish or 61 subs.
 * - An enemy bullet moves every frame and is gone after 11 moves; a sub fires once every
 *   ENEMY_SHOT_INTERVAL+1 = 11 frames: the bullets alive were fired in the last 11 frames by
 *   distinct subs, at most 61 alive plus 11 spawned in that window.
 * - A friendly bullet lives at most 10 frames and one is fired every SHOT_COOL_DOWN frames: 3.
 * - A diver lives at most 6*10 = 60 frames and one spawns every 30 frames: 3.
 * (Measured over 200k acts of the lookahead player in tests/test_minatar_seaquest.c, ramping
 * on: at most 22 enemies in a list and 8 enemy bullets.)
 */
#define MAX_ENEMIES SEAQUEST_MAX_ENEMIES
#define MAX_ENEMY_BULLETS SEAQUEST_MAX_ENEMY_BULLETS
#define MAX_FRIENDLY_BULLETS SEAQUEST_MAX_FRIENDLY_BULLETS
#define MAX_DIVER_OBJECTS SEAQUEST_MAX_DIVER_OBJECTS

/* One of the state's lists: its items, its count, its capacity. */
typedef struct object_list {
    seaquest_object *items;
    int32_t *count;
    int32_t capacity;
} object_list;

static bool object_equal(const seaquest_object *a, const seaquest_object *b) {
    return a->x == b->x && a->y == b->y && a->right == b->right &&
           a->move_timer == b->move_timer && a->shot_timer == b->shot_timer;
}

static void list_append(object_list list, seaquest_object item) {
    SK_ASSERT(*list.count < list.capacity); /* the capacities above are the game's maxima */
    list.items[(*list.count)++] = item;
}

/* list.remove(value): drops the first item equal to value. *position is the current item's
 * index, moved down if an earlier item went, or -1 if the current item itself went. */
static void list_remove(object_list list, seaquest_object value, int32_t *position) {
    for (int32_t k = 0; k < *list.count; k++) {
        if (!object_equal(&list.items[k], &value)) continue;
        memmove(&list.items[k], &list.items[k + 1],
                (size_t)(*list.count - k - 1) * sizeof *list.items);
        (*list.count)--;
        if (*position == k) *position = -1;
        else if (*position > k) (*position)--;
        return;
    }
}

static bool on_cell(const seaquest_object *item, int32_t x, int32_t y) {
    return item->x == x && item->y == y;
}

static bool off_board(const seaquest_object *item) {
    return item->x < 0 || item->x > LAST_CELL;
}

static int32_t step_of(int32_t right) {
    return right ? 1 : -1;
}

/* An item; every field is small (see seaquest_object). */
static seaquest_object make_object(int32_t x, int32_t y, int32_t right, int32_t move_timer,
                                   int32_t shot_timer) {
    return (seaquest_object){(int8_t)x, (int8_t)y, (int8_t)right, (int8_t)move_timer,
                             (int8_t)shot_timer};
}

/* One cell along its direction. */
static void move_object(seaquest_object *item) {
    item->x = (int8_t)(item->x + step_of(item->right));
}

static int32_t floor_div(int32_t numerator, int32_t denominator) {
    int32_t quotient = numerator / denominator;
    if ((numerator % denominator != 0) && ((numerator < 0) != (denominator < 0))) quotient--;
    return quotient;
}

static void seaquest_init(void *game, bool ramping) {
    seaquest_state *state = game;
    memset(state, 0, sizeof *state);
    state->ramping = ramping;
}

static void seaquest_reset(void *game, minatar_rng *rng) {
    (void)rng; /* MinAtar's reset draws nothing */
    seaquest_state *state = game;
    bool ramping = state->ramping;
    memset(state, 0, sizeof *state);
    state->ramping = ramping;
    state->oxygen = MAX_OXYGEN;
    state->sub_x = SUB_START_X;
    state->sub_y = 0;
    state->sub_right = 0;
    state->enemy_spawn_speed = INIT_SPAWN_SPEED;
    state->enemy_spawn_timer = INIT_SPAWN_SPEED;
    state->diver_spawn_timer = DIVER_SPAWN_SPEED;
    state->move_speed = INIT_MOVE_INTERVAL;
    state->surface = true;
}

#define LIST(state, name, capacity)                                                                \
    ((object_list){(state)->name, &(state)->num_##name, (capacity)})

/* A fish or sub on side lr, in a row 1..8; nothing when an enemy in that row moves the
 * other way. Draws lr, is_sub and the row, always. */
static void spawn_enemy(seaquest_state *state, minatar_rng *rng) {
    int32_t right = minatar_rng_rand(rng) < 1.0 / 2.0;
    bool is_sub = minatar_rng_rand(rng) < 1.0 / 3.0;
    int32_t x = right ? 0 : LAST_CELL;
    int32_t y = minatar_rng_randint(rng, ENEMY_FIRST_ROW, ENEMY_ROW_END);
    for (int32_t k = 0; k < state->num_subs; k++)
        if (state->subs[k].y == y && state->subs[k].right != right) return;
    for (int32_t k = 0; k < state->num_fish; k++)
        if (state->fish[k].y == y && state->fish[k].right != right) return;
    if (is_sub)
        list_append(LIST(state, subs, MAX_ENEMIES),
                    make_object(x, y, right, state->move_speed, ENEMY_SHOT_INTERVAL));
    else
        list_append(LIST(state, fish, MAX_ENEMIES),
                    make_object(x, y, right, state->move_speed, 0));
}

static void spawn_diver(seaquest_state *state, minatar_rng *rng) {
    int32_t right = minatar_rng_rand(rng) < 1.0 / 2.0;
    int32_t y = minatar_rng_randint(rng, ENEMY_FIRST_ROW, ENEMY_ROW_END);
    list_append(LIST(state, divers, MAX_DIVER_OBJECTS),
                make_object(right ? 0 : LAST_CELL, y, right, DIVER_MOVE_INTERVAL, 0));
}

/* The first item of list on item's cell is removed with item (from its own list): true. */
static bool shoot_first_on_cell(object_list targets, object_list shooters, seaquest_object item,
                                int32_t *item_position) {
    for (int32_t k = 0; k < *targets.count; k++) {
        if (!on_cell(&targets.items[k], item.x, item.y)) continue;
        int32_t unused = -1;
        list_remove(targets, targets.items[k], &unused);
        list_remove(shooters, item, item_position);
        return true;
    }
    return false;
}

/* Step 5: friendly bullets fly, then hit the first fish on their cell, else the first sub. */
static int move_friendly_bullets(seaquest_state *state) {
    int reward = 0;
    object_list bullets = LIST(state, friendly_bullets, MAX_FRIENDLY_BULLETS);
    for (int32_t next = state->num_friendly_bullets - 1;
         next >= 0 && next < state->num_friendly_bullets;) {
        int32_t position = next--;
        seaquest_object *bullet = &state->friendly_bullets[position];
        move_object(bullet);
        seaquest_object value = *bullet;
        if (off_board(&value)) {
            list_remove(bullets, value, &position);
        } else if (shoot_first_on_cell(LIST(state, fish, MAX_ENEMIES), bullets, value,
                                       &position) ||
                   shoot_first_on_cell(LIST(state, subs, MAX_ENEMIES), bullets, value,
                                       &position)) {
            reward++;
        }
    }
    return reward;
}

/* Step 6: a diver on the sub's cell is picked up (up to six), else it moves on its timer. */
static void move_divers(seaquest_state *state) {
    object_list divers = LIST(state, divers, MAX_DIVER_OBJECTS);
    for (int32_t next = state->num_divers - 1; next >= 0 && next < state->num_divers;) {
        int32_t position = next--;
        seaquest_object *diver = &state->divers[position];
        if (on_cell(diver, state->sub_x, state->sub_y) && state->diver_count < MAX_DIVERS) {
            list_remove(divers, *diver, &position);
            state->diver_count++;
        } else if (diver->move_timer == 0) {
            diver->move_timer = DIVER_MOVE_INTERVAL;
            move_object(diver);
            if (off_board(diver)) {
                list_remove(divers, *diver, &position);
            } else if (on_cell(diver, state->sub_x, state->sub_y) &&
                       state->diver_count < MAX_DIVERS) {
                list_remove(divers, *diver, &position);
                state->diver_count++;
            }
        } else {
            diver->move_timer--;
        }
    }
}

/* Steps 7 and 9: enemies touching the sub end the game; on their timer they move, leave the
 * board, touch the sub or run into a friendly bullet (both go, +1). Subs then fire on their
 * own timer, even one just removed. Returns the reward. */
static int move_enemies(seaquest_state *state, object_list enemies, bool shoots) {
    int reward = 0;
    object_list bullets = LIST(state, friendly_bullets, MAX_FRIENDLY_BULLETS);
    for (int32_t next = *enemies.count - 1; next >= 0 && next < *enemies.count;) {
        int32_t position = next--;
        seaquest_object enemy = enemies.items[position]; /* Python's reference, kept after removal */
        if (on_cell(&enemy, state->sub_x, state->sub_y)) state->terminal = true;
        if (enemy.move_timer == 0) {
            enemy.move_timer = (int8_t)state->move_speed;
            move_object(&enemy);
            enemies.items[position] = enemy;
            if (off_board(&enemy)) {
                list_remove(enemies, enemy, &position);
            } else if (on_cell(&enemy, state->sub_x, state->sub_y)) {
                state->terminal = true;
            } else {
                for (int32_t k = 0; k < state->num_friendly_bullets; k++) {
                    if (!on_cell(&state->friendly_bullets[k], enemy.x, enemy.y)) continue;
                    int32_t unused = -1;
                    list_remove(enemies, enemy, &position);
                    list_remove(bullets, state->friendly_bullets[k], &unused);
                    reward++;
                    break;
                }
            }
        } else {
            enemy.move_timer--;
            enemies.items[position] = enemy;
        }
        if (!shoots) continue;
        if (enemy.shot_timer == 0) {
            enemy.shot_timer = ENEMY_SHOT_INTERVAL;
            list_append(LIST(state, enemy_bullets, MAX_ENEMY_BULLETS),
                        (seaquest_object){enemy.x, enemy.y, enemy.right, 0, 0});
        } else {
            enemy.shot_timer--;
        }
        if (position >= 0) enemies.items[position] = enemy;
    }
    return reward;
}

/* Step 8: enemy bullets on the sub end the game; they fly one cell, leave or hit the sub. */
static void move_enemy_bullets(seaquest_state *state) {
    object_list bullets = LIST(state, enemy_bullets, MAX_ENEMY_BULLETS);
    for (int32_t next = state->num_enemy_bullets - 1;
         next >= 0 && next < state->num_enemy_bullets;) {
        int32_t position = next--;
        seaquest_object *bullet = &state->enemy_bullets[position];
        if (on_cell(bullet, state->sub_x, state->sub_y)) state->terminal = true;
        move_object(bullet);
        if (off_board(bullet)) list_remove(bullets, *bullet, &position);
        else if (on_cell(bullet, state->sub_x, state->sub_y)) state->terminal = true;
    }
}

/* Surfacing with divers: six pay oxygen*10/200 and zero the count; the count then drops by
 * one (so six leave -1), the oxygen refills and the difficulty ramps. Returns the bonus. */
static int surface(seaquest_state *state) {
    state->surface = true;
    int bonus = 0;
    if (state->diver_count == MAX_DIVERS) {
        state->diver_count = 0;
        bonus = floor_div(state->oxygen * SURFACE_BONUS_PER_OXYGEN, MAX_OXYGEN);
    }
    state->oxygen = MAX_OXYGEN;
    state->diver_count--;
    if (state->ramping && (state->enemy_spawn_speed > MIN_SPAWN_SPEED ||
                           state->move_speed > MIN_MOVE_SPEED)) {
        if (state->move_speed > MIN_MOVE_SPEED && state->ramp_index % 2 == 1)
            state->move_speed--;
        if (state->enemy_spawn_speed > MIN_SPAWN_SPEED) state->enemy_spawn_speed--;
        state->ramp_index++;
    }
    return bonus;
}

static float seaquest_act(void *game, minatar_rng *rng, int action, bool *terminal) {
    seaquest_state *state = game;
    if (state->terminal) {
        *terminal = true;
        return 0.0f;
    }
    int reward = 0;

    /* Spawns, on their timers: an enemy (drawn even when its row refuses it), a diver. */
    if (state->enemy_spawn_timer == 0) {
        spawn_enemy(state, rng);
        state->enemy_spawn_timer = state->enemy_spawn_speed;
    }
    if (state->diver_spawn_timer == 0) {
        spawn_diver(state, rng);
        state->diver_spawn_timer = DIVER_SPAWN_SPEED;
    }

    /* The player: fire when the gun is cool (fire during the cooldown does nothing), or move
     * (left and right also turn the sub). */
    if (action == MINATAR_FIRE) {
        if (state->shot_timer == 0) {
            list_append(LIST(state, friendly_bullets, MAX_FRIENDLY_BULLETS),
                        make_object(state->sub_x, state->sub_y, state->sub_right, 0, 0));
            state->shot_timer = SHOT_COOL_DOWN;
        }
    } else if (action == MINATAR_LEFT) {
        if (state->sub_x > 0) state->sub_x--;
        state->sub_right = 0;
    } else if (action == MINATAR_RIGHT) {
        if (state->sub_x < LAST_CELL) state->sub_x++;
        state->sub_right = 1;
    } else if (action == MINATAR_UP) {
        if (state->sub_y > 0) state->sub_y--;
    } else if (action == MINATAR_DOWN) {
        if (state->sub_y < SUB_LOWEST_ROW) state->sub_y++;
    }

    reward += move_friendly_bullets(state);
    move_divers(state);
    reward += move_enemies(state, LIST(state, subs, MAX_ENEMIES), true);
    move_enemy_bullets(state);
    reward += move_enemies(state, LIST(state, fish, MAX_ENEMIES), false);

    if (state->enemy_spawn_timer > 0) state->enemy_spawn_timer--;
    if (state->diver_spawn_timer > 0) state->diver_spawn_timer--;
    if (state->shot_timer > 0) state->shot_timer--;

    /* Oxygen: out before this frame's breath ends the game; under water it runs down; the
     * first frame back on the surface ends the game without divers, else pays and refills. */
    if (state->oxygen <= 0) state->terminal = true;
    if (state->sub_y > 0) {
        state->oxygen--;
        state->surface = false;
    } else if (!state->surface) {
        if (state->diver_count == 0) state->terminal = true;
        else reward += surface(state);
    }

    *terminal = state->terminal;
    return (float)reward;
}

static void set_cell(uint8_t *obs, int32_t y, int32_t x, int channel) {
    obs[((size_t)y * MINATAR_SIDE + (size_t)x) * NUM_CHANNELS + (size_t)channel] = 1;
}

/* Objects in channel, with a trail behind each moving one (the cell it came from). */
static void draw_objects(uint8_t *obs, const seaquest_object *items, int32_t count, int channel,
                         bool trail) {
    for (int32_t k = 0; k < count; k++) {
        const seaquest_object *item = &items[k];
        set_cell(obs, item->y, item->x, channel);
        if (!trail) continue;
        int32_t behind = item->x - step_of(item->right);
        if (behind >= 0 && behind <= LAST_CELL) set_cell(obs, item->y, behind, CHANNEL_TRAIL);
    }
}

static void seaquest_observe(const void *game, uint8_t *obs) {
    const seaquest_state *state = game;
    memset(obs, 0, (size_t)MINATAR_SIDE * MINATAR_SIDE * NUM_CHANNELS);
    set_cell(obs, state->sub_y, state->sub_x, CHANNEL_SUB_FRONT);
    set_cell(obs, state->sub_y, state->sub_x - step_of(state->sub_right), CHANNEL_SUB_BACK);
    int32_t oxygen = state->oxygen > 0 ? state->oxygen : 0;
    for (int32_t x = 0; x < oxygen * MINATAR_SIDE / MAX_OXYGEN; x++)
        set_cell(obs, GAUGE_ROW, x, CHANNEL_OXYGEN_GAUGE);
    for (int32_t x = LAST_CELL - state->diver_count; x < LAST_CELL; x++)
        set_cell(obs, GAUGE_ROW, x, CHANNEL_DIVER_GAUGE);
    draw_objects(obs, state->friendly_bullets, state->num_friendly_bullets,
                 CHANNEL_FRIENDLY_BULLET, false);
    draw_objects(obs, state->enemy_bullets, state->num_enemy_bullets, CHANNEL_ENEMY_BULLET, false);
    draw_objects(obs, state->fish, state->num_fish, CHANNEL_ENEMY_FISH, true);
    draw_objects(obs, state->subs, state->num_subs, CHANNEL_ENEMY_SUB, true);
    draw_objects(obs, state->divers, state->num_divers, CHANNEL_DIVER, true);
}

/* One list: its count within its capacity, and each item on the board above the gauge row (an
 * item leaving the board is removed in the frame it leaves), facing 0/1, its timers within
 * their intervals. */
static bool validate_list(const char *name, const seaquest_object *items, int32_t count,
                          int32_t capacity, char *why, size_t why_size) {
    char what[48];
    snprintf(what, sizeof what, "num_%s", name);
    if (!minatar_check_range(what, count, 0, capacity, why, why_size)) return false;
    for (int32_t k = 0; k < count; k++) {
        const seaquest_object *item = &items[k];
        const struct {
            const char *field;
            int value, lo, hi;
        } fields[] = {{"x", item->x, 0, LAST_CELL},
                      {"y", item->y, 0, SUB_LOWEST_ROW},
                      {"right", item->right, 0, 1},
                      {"move_timer", item->move_timer, 0, INIT_MOVE_INTERVAL},
                      {"shot_timer", item->shot_timer, 0, ENEMY_SHOT_INTERVAL}};
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
            snprintf(what, sizeof what, "%s[%d].%s", name, (int)k, fields[f].field);
            if (!minatar_check_range(what, fields[f].value, fields[f].lo, fields[f].hi, why,
                                     why_size))
                return false;
        }
    }
    return true;
}

/* diver_count's floor: each surfacing below 0 takes one more (the quirk), so any negative count
 * is reachable; the floor keeps 9 - diver_count (the gauge's first column) and the next
 * decrement within int32. */
#define MIN_DIVER_COUNT (-(INT32_MAX - MINATAR_SIDE))

/* The sub's back is drawn one cell behind it, so it never faces a wall it stands on; the
 * diver gauge is drawn from column 9 - diver_count; oxygen ends at -1 (see the quirks). */
static bool seaquest_validate(const void *game, char *why, size_t why_size) {
    const seaquest_state *state = game;
    if (!validate_list("friendly_bullets", state->friendly_bullets,
                       state->num_friendly_bullets, MAX_FRIENDLY_BULLETS, why, why_size) ||
        !validate_list("enemy_bullets", state->enemy_bullets, state->num_enemy_bullets,
                       MAX_ENEMY_BULLETS, why, why_size) ||
        !validate_list("fish", state->fish, state->num_fish, MAX_ENEMIES, why, why_size) ||
        !validate_list("subs", state->subs, state->num_subs, MAX_ENEMIES, why, why_size) ||
        !validate_list("divers", state->divers, state->num_divers, MAX_DIVER_OBJECTS, why,
                       why_size))
        return false;
    if (!minatar_check_range("sub_right", state->sub_right, 0, 1, why, why_size)) return false;
    return minatar_check_range("sub_x", state->sub_x, state->sub_right ? 1 : 0,
                               state->sub_right ? LAST_CELL : LAST_CELL - 1, why, why_size) &&
           minatar_check_range("sub_y", state->sub_y, 0, SUB_LOWEST_ROW, why, why_size) &&
           minatar_check_range("oxygen", state->oxygen, -1, MAX_OXYGEN, why, why_size) &&
           minatar_check_range("diver_count", state->diver_count, MIN_DIVER_COUNT, MAX_DIVERS,
                               why, why_size) &&
           minatar_check_range("enemy_spawn_speed", state->enemy_spawn_speed, MIN_SPAWN_SPEED,
                               INIT_SPAWN_SPEED, why, why_size) &&
           minatar_check_range("enemy_spawn_timer", state->enemy_spawn_timer, 0,
                               INIT_SPAWN_SPEED, why, why_size) &&
           minatar_check_range("diver_spawn_timer", state->diver_spawn_timer, 0,
                               DIVER_SPAWN_SPEED, why, why_size) &&
           minatar_check_range("move_speed", state->move_speed, MIN_MOVE_SPEED,
                               INIT_MOVE_INTERVAL, why, why_size) &&
           minatar_check_range("ramp_index", state->ramp_index, 0, INT32_MAX, why, why_size) &&
           minatar_check_range("shot_timer", state->shot_timer, 0, SHOT_COOL_DOWN, why,
                               why_size) &&
           minatar_check_flag("surface", &state->surface, why, why_size) &&
           minatar_check_flag("terminal", &state->terminal, why, why_size) &&
           minatar_check_flag("ramping", &state->ramping, why, why_size);
}

MINATAR_BATCH_STEP(seaquest_step, seaquest_state, seaquest_act, seaquest_observe, seaquest_reset)

const minatar_game_ops minatar_seaquest = {
    .name = "seaquest",
    .channels = NUM_CHANNELS,
    .state_size = sizeof(seaquest_state),
    .init = seaquest_init,
    .reset = seaquest_reset,
    .act = seaquest_act,
    .observe = seaquest_observe,
    .step = seaquest_step,
    .num_minimal_actions = MINATAR_COUNT(MINATAR_SEAQUEST_MINIMAL_ACTIONS),
    .minimal_actions = {MINATAR_SEAQUEST_MINIMAL_ACTIONS},
    .validate = seaquest_validate,
};
