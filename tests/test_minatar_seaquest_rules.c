/*
 * MinAtar's Seaquest rules that its recorded traces never reach (they hold at most 3
 * enemies and 3 divers), each set up as an exact state and stepped once, against
 * rules/seaquest.md: an enemy sub shot on its firing frame still fires; the ramp's
 * schedule; the full-surfacing bonus and the -1 diver count; an enemy spawn refused in a
 * row held by an enemy moving the other way, with its three draws still taken. The file
 * includes seaquest.c to reach its state, its table renamed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

/* the game's table under another name, so that this copy never clashes with the library's */
#define minatar_seaquest minatar_seaquest_under_test
#include "minatar/seaquest.c"

/* A game under water at (5, 4) with no spawn due this frame and nothing on the board. */
static void quiet_game(seaquest_state *state, bool ramping) {
    minatar_seaquest.init(state, ramping);
    minatar_seaquest.reset(state, NULL);
    state->sub_x = 5;
    state->sub_y = 4;
    state->surface = false;
    state->enemy_spawn_timer = 5;
    state->diver_spawn_timer = 5;
}

static float act(seaquest_state *state, int action, bool *terminal) {
    minatar_rng rng;
    minatar_rng_seed(&rng, 0); /* no spawn is due: no draw */
    minatar_rng before = rng;
    float reward = minatar_seaquest.act(state, &rng, action, terminal);
    assert_memory_equal(&before, &rng, sizeof rng);
    return reward;
}

/* Step 7: a sub that moves into a friendly bullet on the frame its shot is due is removed
 * with the bullet (+1) and still fires from that cell; step 8 moves the new bullet one cell
 * the same frame. */
static void test_shot_sub_still_fires(void **unused) {
    (void)unused;
    seaquest_state state;
    quiet_game(&state, true);
    state.subs[0] = make_object(2, 7, 1, 0, 0);
    state.num_subs = 1;
    state.friendly_bullets[0] = make_object(4, 7, 0, 0, 0); /* flies left to x 3 in step 5 */
    state.num_friendly_bullets = 1;
    bool terminal = false;
    assert_true(act(&state, MINATAR_NOOP, &terminal) == 1.0f);
    assert_false(terminal);
    assert_int_equal(state.num_subs, 0);
    assert_int_equal(state.num_friendly_bullets, 0);
    assert_int_equal(state.num_enemy_bullets, 1);
    seaquest_object want = make_object(4, 7, 1, 0, 0);
    assert_true(object_equal(&state.enemy_bullets[0], &want));
    uint8_t obs[MINATAR_SIDE * MINATAR_SIDE * NUM_CHANNELS];
    minatar_seaquest.observe(&state, obs);
    assert_int_equal(obs[(7 * MINATAR_SIDE + 4) * NUM_CHANNELS + CHANNEL_ENEMY_BULLET], 1);
}

/* A sub leaving the board on its firing frame fires from x 10; that bullet leaves in step 8. */
static void test_leaving_sub_fires_off_board(void **unused) {
    (void)unused;
    seaquest_state state;
    quiet_game(&state, true);
    state.subs[0] = make_object(LAST_CELL, 7, 1, 0, 0);
    state.num_subs = 1;
    bool terminal = false;
    assert_true(act(&state, MINATAR_NOOP, &terminal) == 0.0f);
    assert_false(terminal);
    assert_int_equal(state.num_subs, 0);
    assert_int_equal(state.num_enemy_bullets, 0);
}

/* Surfacing k times with divers aboard: the spawn interval is max(1, 20 - k); the move
 * interval drops by one on every second ramp (odd ramp index) down to 2: max(2, 5 - k/2);
 * the ramp stops once both are at their floor (k = 19). Without ramping nothing changes. */
static void test_ramp_schedule(void **unused) {
    (void)unused;
    for (int ramping = 0; ramping <= 1; ramping++) {
        seaquest_state state;
        quiet_game(&state, ramping);
        for (int k = 1; k <= 30; k++) {
            state.sub_y = 1;
            state.surface = false;
            state.diver_count = 2;
            state.enemy_spawn_timer = 5;
            state.diver_spawn_timer = 5;
            bool terminal = false;
            assert_true(act(&state, MINATAR_UP, &terminal) == 0.0f);
            assert_false(terminal);
            assert_int_equal(state.diver_count, 1);
            assert_int_equal(state.oxygen, MAX_OXYGEN);
            int spawn = ramping ? (20 - k > 1 ? 20 - k : 1) : 20;
            int move = ramping ? (5 - k / 2 > 2 ? 5 - k / 2 : 2) : 5;
            assert_int_equal(state.enemy_spawn_speed, spawn);
            assert_int_equal(state.move_speed, move);
            assert_int_equal(state.ramp_index, ramping ? (k < 19 ? k : 19) : 0);
        }
    }
}

/* Six divers aboard: the bonus is oxygen*10//200 (137 -> 6), the count ends at -1, and a
 * surfacing with -1 does not end the game (it leaves -2); 0 would. */
static void test_full_surfacing(void **unused) {
    (void)unused;
    seaquest_state state;
    quiet_game(&state, true);
    state.sub_y = 1;
    state.diver_count = MAX_DIVERS;
    state.oxygen = 137;
    bool terminal = false;
    assert_true(act(&state, MINATAR_UP, &terminal) == 6.0f);
    assert_false(terminal);
    assert_int_equal(state.diver_count, -1);
    assert_int_equal(state.oxygen, MAX_OXYGEN);
    state.sub_y = 1;
    state.surface = false;
    assert_true(act(&state, MINATAR_UP, &terminal) == 0.0f);
    assert_false(terminal);
    assert_int_equal(state.diver_count, -2);
    state.sub_y = 1;
    state.surface = false;
    state.diver_count = 0;
    assert_true(act(&state, MINATAR_UP, &terminal) == 0.0f);
    assert_true(terminal);
}

/* Step 2: lr = rand() < 1/2, sub = rand() < 1/3, row = randint(1, 9), drawn always; the enemy
 * is not added when an enemy in that row moves the other way, and is when it moves the same
 * way. */
static void test_spawn_refused_in_contested_row(void **unused) {
    (void)unused;
    for (int same_way = 0; same_way <= 1; same_way++) {
        seaquest_state state;
        quiet_game(&state, true);
        state.enemy_spawn_timer = 0;
        minatar_rng rng, expected;
        minatar_rng_seed(&rng, 42);
        expected = rng;
        int right = minatar_rng_rand(&expected) < 0.5;
        bool is_sub = minatar_rng_rand(&expected) < 1.0 / 3.0;
        int row = minatar_rng_randint(&expected, 1, 9);
        int blocker_right = same_way ? right : !right;
        state.fish[0] = make_object(4, row, blocker_right, 3, 0);
        state.num_fish = 1;
        bool terminal = false;
        minatar_seaquest.act(&state, &rng, MINATAR_NOOP, &terminal);
        assert_memory_equal(&expected, &rng, sizeof rng);
        int added = state.num_fish - 1 + state.num_subs;
        assert_int_equal(added, same_way ? 1 : 0);
        if (same_way) {
            const seaquest_object *spawned = is_sub ? &state.subs[0] : &state.fish[1];
            /* spawned at its edge with the move interval, then one frame of its timer */
            seaquest_object want = make_object(right ? 0 : LAST_CELL, row, right,
                                               INIT_MOVE_INTERVAL - 1,
                                               is_sub ? ENEMY_SHOT_INTERVAL - 1 : 0);
            assert_true(object_equal(spawned, &want));
        }
        assert_int_equal(state.enemy_spawn_timer, INIT_SPAWN_SPEED - 1);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shot_sub_still_fires),
        cmocka_unit_test(test_leaving_sub_fires_off_board),
        cmocka_unit_test(test_ramp_schedule),
        cmocka_unit_test(test_full_surfacing),
        cmocka_unit_test(test_spawn_refused_in_contested_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
