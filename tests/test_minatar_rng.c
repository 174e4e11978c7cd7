/*
 * MinAtar's random stream (modules/minatar/minatar_rng.h) against numpy's
 * legacy RandomState, whose outputs are published and frozen (NEP 19): the
 * figures below are what numpy 1.24 prints for the calls named beside them.
 * And the trace reader (tests/minatar_trace.h) on MinAtar's recorded traces.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "minatar/minatar_rng.h"
#include "minatar_trace.h"
#include "test_util.h"

static void test_mt19937_reference_output(void **unused) {
    (void)unused;
    /* MT19937 seeded 5489 (init_genrand): its first output, and its 10000th, which the C++
     * standard requires of std::mt19937 */
    minatar_rng rng;
    minatar_rng_seed(&rng, 5489);
    assert_int_equal(minatar_rng_u32(&rng), 3499211612u);
    for (int k = 2; k < 10000; k++) minatar_rng_u32(&rng);
    assert_int_equal(minatar_rng_u32(&rng), 4123659995u);
}

static void test_numpy_rand_and_randint(void **unused) {
    (void)unused;
    minatar_rng rng;
    /* RandomState(0).rand(), .rand() */
    minatar_rng_seed(&rng, 0);
    assert_true(minatar_rng_rand(&rng) == 0.5488135039273248);
    assert_true(minatar_rng_rand(&rng) == 0.7151893663724195);
    /* RandomState(0).randint(0, 10, 5) */
    const int first_five[5] = {5, 0, 3, 3, 7};
    minatar_rng_seed(&rng, 0);
    for (int k = 0; k < 5; k++) assert_int_equal(minatar_rng_randint(&rng, 0, 10), first_five[k]);
    /* RandomState(1234): eight randint(1, 6), then rand() */
    const int eight[8] = {4, 5, 5, 1, 2, 2, 2, 3};
    minatar_rng_seed(&rng, 1234);
    for (int k = 0; k < 8; k++) assert_int_equal(minatar_rng_randint(&rng, 1, 6), eight[k]);
    assert_true(minatar_rng_rand(&rng) == 0.198518759026171);
    /* randint over a single value draws nothing */
    minatar_rng copy = rng;
    assert_int_equal(minatar_rng_randint(&rng, 7, 8), 7);
    assert_memory_equal(&copy, &rng, sizeof rng);
}

/* The env's sticky test compares rand()'s 53 bits k with minatar_rng_threshold53(p) as
 * integers; it must agree with MinAtar's rand() < p (k / 2^53 < p in doubles) for every k,
 * checked at the k where the answer turns and beside it, for probabilities whose p * 2^53 is
 * and is not a whole number (a threshold without the ceiling fails 0.1 and 1/3). */
static void test_sticky_threshold_is_rand_below_p(void **unused) {
    (void)unused;
    const double two53 = 9007199254740992.0;
    const double probabilities[] = {0.0, 0.1, 1.0 / 3.0, 0.5, 0.25, 1e-17, 0.999999999999,
                                    1.0 - 1.0 / two53, 1.0};
    int checked = 0;
    for (size_t n = 0; n < sizeof probabilities / sizeof probabilities[0]; n++) {
        double p = probabilities[n];
        uint64_t threshold = minatar_rng_threshold53(p);
        uint64_t turn = (uint64_t)(p * two53);
        const uint64_t near[] = {0, 1, turn > 1 ? turn - 1 : 0, turn, turn + 1, turn + 2,
                                 (1ull << 53) - 1};
        for (size_t m = 0; m < sizeof near / sizeof near[0]; m++) {
            uint64_t k = near[m] < (1ull << 53) ? near[m] : (1ull << 53) - 1;
            bool minatar = (double)k / two53 < p;
            if ((k < threshold) != minatar)
                fail_msg("p = %.17g, k = %llu: rand() < p is %d, k < threshold (%llu) is %d", p,
                         (unsigned long long)k, minatar, (unsigned long long)threshold,
                         k < threshold);
            checked++;
        }
    }
    assert_int_equal(checked, 63);
    /* and a stream's draws: the same answers as minatar_sticky's double test */
    minatar_rng a, b;
    minatar_rng_seed(&a, 7);
    minatar_rng_seed(&b, 7);
    uint64_t threshold = minatar_rng_threshold53(0.1);
    int below = 0;
    for (int k = 0; k < 100000; k++) {
        bool by_integer = minatar_rng_bits53(&a) < threshold;
        assert_int_equal(by_integer, minatar_rng_rand(&b) < 0.1);
        below += by_integer;
    }
    assert_in_range(below, 9500, 10500);
}

/* Every trace loads, its states have 10x10xC cells of 0/1, its header names the game of
 * its file, and the sticky rule is visible: with p = 0 every applied action is the one
 * requested, with p = 0.1 about a tenth are not (the previous action instead). */
static void test_traces_load(void **unused) {
    (void)unused;
    REQUIRE_SHARED(shared);
    const char *games[] = {"asterix", "breakout", "freeway", "seaquest", "space_invaders"};
    const int channels[] = {4, 4, 7, 10, 6};
    for (int g = 0; g < 5; g++) {
        for (int variant = 0; variant < 2; variant++) {
            char path[4200];
            snprintf(path, sizeof path, "%s/reference/minatar/%s_seed%d_%s.jsonl", shared,
                     games[g], variant ? 2 : 0, variant ? "sticky0_ramp0" : "sticky0.1_ramp1");
            minatar_trace trace;
            if (!minatar_trace_load(path, &trace)) fail_msg("cannot load %s", path);
            assert_string_equal(trace.game, games[g]);
            assert_int_equal(trace.channels, channels[g]);
            assert_int_equal(trace.num_steps, 3000);
            int differ = 0;
            for (int t = 0; t < trace.num_steps; t++)
                differ += trace.steps[t].action != trace.steps[t].effective;
            if (variant) assert_int_equal(differ, 0);
            else if (differ < 150 || differ > 450)
                fail_msg("%s: %d of 3000 actions replaced, expected about 300 * 5/6", path, differ);
            minatar_trace_free(&trace);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mt19937_reference_output),
        cmocka_unit_test(test_numpy_rand_and_randint),
        cmocka_unit_test(test_sticky_threshold_is_rand_below_p),
        cmocka_unit_test(test_traces_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
