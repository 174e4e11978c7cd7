/*
 * MinAtar's Asterix (modules/minatar/asterix.c) against MinAtar 1.0.15
 * itself: the four recorded traces of ../shared/reference/minatar replayed bit
 * for bit (applied action, reward, terminal, every cell after every step and
 * reset), its minimal action set as MinAtar's (rules/00_common.md), and an
 * act() on a game already over. The traces' episodes end by frame 229 with at
 * most 6 entities, so the later ramps and a spawn into full slots are checked
 * against rules/asterix.md's words. Also prints the game's single-core speed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "minatar/asterix.h"
#include "minatar_replay.h"
#include "test_util.h"

static void test_trace_seed0_sticky_ramping(void **unused) {
    (void)unused;
    assert_int_equal(minatar_replay(&minatar_asterix, "asterix_seed0_sticky0.1_ramp1.jsonl"), 3000);
}

static void test_trace_seed1_sticky_ramping(void **unused) {
    (void)unused;
    assert_int_equal(minatar_replay(&minatar_asterix, "asterix_seed1_sticky0.1_ramp1.jsonl"), 3000);
}

static void test_trace_seed2_no_sticky_no_ramping(void **unused) {
    (void)unused;
    assert_int_equal(minatar_replay(&minatar_asterix, "asterix_seed2_sticky0_ramp0.jsonl"), 3000);
}

static void test_trace_seed3_biased_policy(void **unused) {
    (void)unused;
    assert_int_equal(
        minatar_replay(&minatar_asterix, "asterix_seed3_sticky0.1_ramp1_biased.jsonl"), 6000);
}

/* MinAtar's minimal_action_set() for asterix: n, l, u, r, d (rules/00_common.md). */
static void test_minimal_action_set(void **unused) {
    (void)unused;
    const int want[] = {0, 1, 2, 3, 4};
    assert_int_equal(minatar_asterix.num_minimal_actions, 5);
    assert_memory_equal(minatar_asterix.minimal_actions, want, sizeof want);
    assert_int_equal(minatar_asterix.channels, 4);
}

/* A new game as MinAtar's Environment(ramping) after seed(seed) and reset(). */
static void start_game(asterix_game *game, minatar_rng *rng, uint32_t seed, bool ramping) {
    minatar_rng_seed(rng, seed);
    minatar_asterix.init(game, ramping);
    minatar_asterix.reset(game, rng);
}

/* Plays with random actions until the game ends; then every action on the ended game
 * returns 0 and terminal, and changes neither the game nor the random stream. */
static void test_act_after_game_over(void **unused) {
    (void)unused;
    asterix_game game;
    minatar_rng rng, actions;
    start_game(&game, &rng, 7, true);
    minatar_rng_seed(&actions, 8);
    bool terminal = false;
    for (int step = 0; step < 100000 && !terminal; step++)
        minatar_asterix.act(&game, &rng, minatar_rng_randint(&actions, 0, MINATAR_NUM_ACTIONS),
                            &terminal);
    assert_true(terminal);
    uint8_t obs_before[MINATAR_SIDE * MINATAR_SIDE * 4], obs_after[sizeof obs_before];
    minatar_asterix.observe(&game, obs_before);
    minatar_expect_over_unchanged(&minatar_asterix, &game, &rng);
    minatar_asterix.observe(&game, obs_after);
    assert_memory_equal(obs_after, obs_before, sizeof obs_before);
}

/* rules/asterix.md: with ramping, ramps fall on acts 102, 204, 306, ...; each takes
 * spawn_speed one down (10 -> 1) and move_speed one down at ramp_index 1, 3, 5, 7 (5 -> 1);
 * once both are 1 nothing changes. The entities are cleared before every act so that the
 * player lives through all nine ramps (the spawns still draw). Without ramping, none. */
static void test_difficulty_ramps(void **unused) {
    (void)unused;
    enum { ACTS = 1500, RAMP_EVERY = 102, RAMPS = 9 };
    const int spawn_after[RAMPS + 1] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    const int move_after[RAMPS + 1] = {5, 5, 4, 4, 3, 3, 2, 2, 1, 1};
    for (int ramping = 0; ramping <= 1; ramping++) {
        asterix_game game;
        minatar_rng rng;
        start_game(&game, &rng, 3, ramping);
        for (int act = 1; act <= ACTS; act++) {
            for (int slot = 0; slot < ASTERIX_SLOTS; slot++) game.entities[slot].present = false;
            bool terminal = true;
            minatar_asterix.act(&game, &rng, MINATAR_NOOP, &terminal);
            assert_false(terminal);
            int ramps = ramping ? act / RAMP_EVERY : 0;
            if (ramps > RAMPS) ramps = RAMPS;
            if (game.spawn_speed != spawn_after[ramps] || game.move_speed != move_after[ramps])
                fail_msg("ramping %d, after act %d: spawn_speed %d move_speed %d, expected %d %d",
                         ramping, act, game.spawn_speed, game.move_speed, spawn_after[ramps],
                         move_after[ramps]);
        }
    }
}

/* rules/asterix.md, spawn(): the direction and the kind are drawn even when all 8 slots
 * are full (then no slot is drawn and nothing spawns); with k free slots the slot is
 * randint(k) over the free ones, ascending (no draw when k is 1). */
static void test_spawn_into_full_and_nearly_full_slots(void **unused) {
    (void)unused;
    for (int num_free = 0; num_free <= 2; num_free++) {
        asterix_game game;
        minatar_rng rng;
        start_game(&game, &rng, 11, false);
        /* enemies at x 1 moving right, none on the player's column 5; the free slots last */
        for (int slot = 0; slot < ASTERIX_SLOTS; slot++)
            game.entities[slot] = (asterix_entity){.present = slot < ASTERIX_SLOTS - num_free,
                                                   .moving_right = true, .gold = false, .x = 1};
        game.spawn_timer = 0;
        game.move_timer = 3;
        minatar_rng expected = rng;
        bool moving_right = minatar_rng_rand(&expected) < 0.5;
        bool gold = minatar_rng_rand(&expected) < 1.0 / 3.0;
        int spawned = -1;
        if (num_free > 0)
            spawned = ASTERIX_SLOTS - num_free + minatar_rng_randint(&expected, 0, num_free);
        asterix_game before = game;
        bool terminal = true;
        float reward = minatar_asterix.act(&game, &rng, MINATAR_NOOP, &terminal);
        assert_true(reward == 0.0f);
        assert_false(terminal);
        assert_memory_equal(&rng, &expected, sizeof rng);
        for (int slot = 0; slot < ASTERIX_SLOTS; slot++) {
            const asterix_entity *got = &game.entities[slot];
            if (slot == spawned) {
                assert_true(got->present);
                assert_int_equal(got->moving_right, moving_right);
                assert_int_equal(got->gold, gold);
                assert_int_equal(got->x, moving_right ? 0 : MINATAR_SIDE - 1);
            } else {
                assert_memory_equal(got, &before.entities[slot], sizeof *got);
            }
        }
        assert_int_equal(game.spawn_timer, game.spawn_speed - 1);
    }
}

/* Single-core speed with random actions, printed only. */
static void test_speed(void **unused) {
    (void)unused;
    minatar_print_speed(&minatar_asterix, 1000000, "~284k");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_seed0_sticky_ramping),
        cmocka_unit_test(test_trace_seed1_sticky_ramping),
        cmocka_unit_test(test_trace_seed2_no_sticky_no_ramping),
        cmocka_unit_test(test_trace_seed3_biased_policy),
        cmocka_unit_test(test_minimal_action_set),
        cmocka_unit_test(test_act_after_game_over),
        cmocka_unit_test(test_difficulty_ramps),
        cmocka_unit_test(test_spawn_into_full_and_nearly_full_slots),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
