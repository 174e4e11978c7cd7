/*
 * `skinner bench env`'s random actions (src/vec/random_actions.h), compiled once per ISA level:
 * every level this CPU runs writes the same bits from the same key as a scalar reference written
 * here from the hash's definition (discrete and continuous), and the same actions and stream
 * state as the baseline level (masked), over ranges whose ends are not multiples of a vector.
 * Each level's table is called explicitly, so the test covers every level whatever SKINNER_ISA
 * says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/isa.h"
#include "vec/random_actions.h"

enum { ROWS = 1000 + 7, LO = 3, KEYS = 40 };

/* lowbias32 (C. Wellons, hash-prospector), as published: the reference the levels must match. */
static uint32_t reference_hash(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* Uniform in [0, size): the top 16 hash bits scaled by size. */
static int32_t reference_discrete(uint32_t key, uint32_t index, uint32_t size) {
    return (int32_t)(((uint64_t)(reference_hash(key + index) >> 16) * size) >> 16);
}

/* low + span u with u the top 24 hash bits over 2^24, each operation rounded to float (this
 * file is compiled without contraction: tests/CMakeLists.txt). */
static float reference_continuous(uint32_t key, uint32_t index, float low, float high) {
    float unit = (float)(reference_hash(key + index) >> 8) / 16777216.0f;
    float span = high - low;
    float scaled = span * unit;
    return low + scaled;
}

static int levels_to_test(void) { return (int)sk_isa_level_detected(); }

static void test_discrete_matches_reference(void **unused) {
    (void)unused;
    const sk_action_space spaces[] = {
        {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
        {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {18}},
        {.kind = SK_SPACE_DISCRETE, .num_heads = 3, .head_sizes = {5, 65535, 3}},
    };
    int32_t *actions = malloc(ROWS * 3 * sizeof(int32_t));
    assert_non_null(actions);
    int levels = 0;
    for (int level = SK_ISA_BASELINE; level <= levels_to_test(); level++) {
        const sk_random_actions *random = sk_random_actions_at((sk_isa_level)level);
        if (!random) continue; /* a build without the level (not x86-64) */
        levels++;
        for (size_t s = 0; s < sizeof spaces / sizeof spaces[0]; s++) {
            int heads = spaces[s].num_heads;
            for (uint32_t k = 0; k < KEYS; k++) {
                uint32_t key = k * 0x9e3779b9U; /* keys near 0 and near 2^32 */
                memset(actions, 0xff, ROWS * 3 * sizeof(int32_t));
                random->discrete(actions, &spaces[s], LO, ROWS, key);
                for (int i = 0; i < ROWS * heads; i++) {
                    int h = i % heads;
                    int32_t want = i < LO * heads ? -1
                                                  : reference_discrete(key, (uint32_t)i,
                                                                       (uint32_t)spaces[s].head_sizes[h]);
                    if (actions[i] != want)
                        fail_msg("level %s, %d heads, key %u: action %d (row %d head %d) is %d, "
                                 "the reference %d", sk_isa_level_name((sk_isa_level)level),
                                 heads, key, i, i / heads, h, actions[i], want);
                }
            }
        }
    }
    assert_true(levels >= 1);
    free(actions);
}

static void test_continuous_matches_reference(void **unused) {
    (void)unused;
    const sk_action_space spaces[] = {
        {.kind = SK_SPACE_CONTINUOUS, .dim = 1, .low = {-2.0f}, .high = {2.0f}},
        {.kind = SK_SPACE_CONTINUOUS, .dim = 3, .low = {-1.0f, 0.1f, -1000.0f},
         .high = {1.0f, 3.7f, 0.005f}},
    };
    float *out = malloc(ROWS * 3 * sizeof(float));
    assert_non_null(out);
    int levels = 0;
    for (int level = SK_ISA_BASELINE; level <= levels_to_test(); level++) {
        const sk_random_actions *random = sk_random_actions_at((sk_isa_level)level);
        if (!random) continue;
        levels++;
        for (size_t s = 0; s < sizeof spaces / sizeof spaces[0]; s++) {
            int dim = spaces[s].dim;
            for (uint32_t k = 0; k < KEYS; k++) {
                uint32_t key = k * 0x9e3779b9U;
                for (int i = 0; i < ROWS * dim; i++) out[i] = -9.0f;
                random->continuous(out, &spaces[s], LO, ROWS, key);
                for (int i = 0; i < ROWS * dim; i++) {
                    int d = i % dim;
                    float want = i < LO * dim ? -9.0f
                                              : reference_continuous(key, (uint32_t)i,
                                                                     spaces[s].low[d],
                                                                     spaces[s].high[d]);
                    if (memcmp(&out[i], &want, sizeof want) != 0)
                        fail_msg("level %s, dim %d, key %u: action %d (row %d dim %d) is %.9g, "
                                 "the reference %.9g (bits differ)",
                                 sk_isa_level_name((sk_isa_level)level), dim, key, i, i / dim, d,
                                 (double)out[i], (double)want);
                    assert_true(out[i] >= spaces[s].low[d] || i < LO * dim);
                    assert_true(out[i] <= spaces[s].high[d]);
                }
            }
        }
    }
    assert_true(levels >= 1);
    free(out);
}

/* Two heads, head 1's block per head-0 choice: masks with holes, a row allowing nothing in head
 * 1, rows of one choice. Every level picks what the baseline picks and leaves the stream where it
 * does; each pick is allowed, and over the rows every allowed head-0 choice comes up. */
static void test_masked_levels_match(void **unused) {
    (void)unused;
    enum { CHOICES0 = 4, CHOICES1 = 3, MASK = CHOICES0 + CHOICES0 * CHOICES1 };
    const sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 2,
                                   .head_sizes = {CHOICES0, CHOICES1}, .masks_by_head0 = true};
    uint8_t *masks = calloc(ROWS, MASK);
    int32_t *want = calloc(ROWS * 2, sizeof(int32_t)), *got = calloc(ROWS * 2, sizeof(int32_t));
    assert_true(masks && want && got);
    uint64_t fill = sk_rng_seed(7, 0);
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < MASK; j++) masks[(size_t)i * MASK + (size_t)j] = sk_rng_below(&fill, 3) != 0;
    for (int j = 0; j < MASK; j++) masks[5 * MASK + j] = j == 2; /* head 0: only 2; head 1: none */
    for (int j = CHOICES0 + CHOICES1; j < MASK; j++) masks[6 * MASK + j] = 0;
    uint64_t baseline_rng = sk_rng_seed(3, 1);
    sk_random_actions_baseline.masked(want, &space, masks, MASK, LO, ROWS, &baseline_rng);
    int seen[CHOICES0] = {0};
    for (int i = LO; i < ROWS; i++) {
        const uint8_t *mask = masks + (size_t)i * MASK;
        int32_t a0 = want[2 * i], a1 = want[2 * i + 1];
        assert_true(a0 >= 0 && a0 < CHOICES0 && a1 >= 0 && a1 < CHOICES1);
        int any0 = 0, any1 = 0;
        for (int j = 0; j < CHOICES0; j++) any0 |= mask[j];
        for (int j = 0; j < CHOICES1; j++) any1 |= mask[CHOICES0 + a0 * CHOICES1 + j];
        if (any0) assert_true(mask[a0]);
        if (any1) assert_true(mask[CHOICES0 + a0 * CHOICES1 + a1]);
        else assert_int_equal(a1, 0);
        seen[a0]++;
    }
    assert_int_equal(want[2 * 5], 2);
    assert_int_equal(want[2 * 5 + 1], 0);
    for (int j = 0; j < CHOICES0; j++) assert_true(seen[j] > ROWS / 10);
    for (int level = SK_ISA_AVX2; level <= levels_to_test(); level++) {
        const sk_random_actions *random = sk_random_actions_at((sk_isa_level)level);
        if (!random) continue;
        uint64_t rng = sk_rng_seed(3, 1);
        memset(got, 0, ROWS * 2 * sizeof(int32_t));
        random->masked(got, &space, masks, MASK, LO, ROWS, &rng);
        assert_memory_equal(got, want, ROWS * 2 * sizeof(int32_t));
        assert_int_equal(rng, baseline_rng);
    }
    free(masks);
    free(want);
    free(got);
}

/* The bench uses the level the process uses. */
static void test_used_is_the_level_in_use(void **unused) {
    (void)unused;
    assert_ptr_equal(sk_random_actions_used(), sk_random_actions_at(sk_isa_level_used()));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discrete_matches_reference),
        cmocka_unit_test(test_continuous_matches_reference),
        cmocka_unit_test(test_masked_levels_match),
        cmocka_unit_test(test_used_is_the_level_in_use),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
