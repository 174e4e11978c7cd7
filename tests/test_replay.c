/* The replay buffer (src/train/replay.h): uniform sampling over what it holds after the
 * ring wrapped, n-step returns that stop at an episode's end (bootstrapping a truncation
 * from its final observation), the checkpoint round trip, hostile checkpoint values
 * refused by name, and the memory check's refusal with the numbers. Expected values are
 * worked out here from the transitions' own tags, not read from the buffer's code. */
#include "test_util.h"

#include "train/replay.h"

#include <math.h>

enum { STREAMS = 2, CAPACITY = 6, OBS = 3, HEAD = 4 };

/* Writes `steps` steps of both streams: transition number k (in order of arrival)
 * has reward k, action k % HEAD, observation (k, k, k) and next observation -k. */
static void fill(sk_replay *rb, int *next_tag, int steps, const uint8_t *terminated,
                 const uint8_t *truncated) {
    for (int t = 0; t < steps; t++) {
        for (int i = 0; i < STREAMS; i++) {
            int k = (*next_tag)++;
            int64_t slot = sk_replay_next_slot(rb, i);
            for (int j = 0; j < OBS; j++) {
                rb->obs[slot * OBS + j] = (float)k;
                rb->next_obs[slot * OBS + j] = (float)-k;
            }
            rb->actions[slot] = k % HEAD;
            rb->rewards[slot] = (float)k;
            rb->terminated[slot] = terminated ? terminated[k] : 0;
            rb->truncated[slot] = truncated ? truncated[k] : 0;
        }
        sk_replay_advance(rb, 1);
    }
}

static sk_replay_spec small_spec(void) {
    return (sk_replay_spec){.capacity = CAPACITY, .streams = STREAMS, .obs_size = OBS,
                            .num_heads = 1};
}

static void test_sampling_after_wrap_is_uniform_over_the_newest(void **state) {
    (void)state;
    sk_replay rb;
    sk_replay_spec spec = small_spec();
    assert_int_equal(sk_replay_create(&rb, &spec), SK_OK);
    int tag = 0;
    fill(&rb, &tag, 5, NULL, NULL); /* 10 transitions into 6 slots: 4..9 are held */
    assert_int_equal(rb.count, CAPACITY);
    enum { DRAWS = 60000 };
    static int64_t slots[DRAWS];
    uint64_t rng = 7;
    for (int n_step = 1; n_step <= 2; n_step++) {
        /* n = 2: a start needs its stream's next transition held: 8 and 9 have none */
        int lo = 4, hi = n_step == 1 ? 9 : 7;
        int seen[10] = {0};
        sk_replay_sample(&rb, &rng, DRAWS, n_step, slots);
        for (int d = 0; d < DRAWS; d++) {
            int k = (int)rb.rewards[slots[d]];
            assert_true(k >= lo && k <= hi);
            seen[k]++;
        }
        double expected = (double)DRAWS / (hi - lo + 1), chi2 = 0.0;
        for (int k = lo; k <= hi; k++) chi2 += (seen[k] - expected) * (seen[k] - expected) / expected;
        /* chi-square with at most 5 degrees of freedom: p < 1e-4 beyond 25.7 */
        printf("n_step %d: chi2 %.2f over %d transitions\n", n_step, chi2, hi - lo + 1);
        assert_true(chi2 < 25.7);
    }
    sk_replay_free(&rb);
}

static void test_nstep_stops_at_episode_ends(void **state) {
    (void)state;
    sk_replay rb;
    sk_replay_spec spec = small_spec();
    assert_int_equal(sk_replay_create(&rb, &spec), SK_OK);
    /* stream 0 holds transitions 0, 2, 4; stream 1 holds 1, 3, 5: transition 2
     * (stream 0's second) terminated, transition 3 (stream 1's second) was truncated */
    uint8_t terminated[6] = {0, 0, 1, 0, 0, 0}, truncated[6] = {0, 0, 0, 1, 0, 0};
    int tag = 0;
    fill(&rb, &tag, 3, terminated, truncated);
    const float gamma = 0.9f;
    int64_t last;
    float discount;
    /* stream 0 from transition 0, n = 3: 0 + 0.9 * 2, then the termination: no bootstrap */
    int64_t slot0 = 0, slot1 = 1; /* before the wrap transition k sits in slot k */
    float ret = sk_replay_nstep(&rb, slot0, 3, gamma, &last, &discount);
    assert_float_equal(ret, 0.0f + 0.9f * 2.0f, 1e-6);
    assert_float_equal(discount, 0.0f, 0.0);
    assert_int_equal((int)rb.rewards[last], 2);
    /* stream 1 from transition 1, n = 3: 1 + 0.9 * 3, cut by the truncation: bootstrap
     * from transition 3's next observation (the final one, tagged -3) at gamma^2 */
    ret = sk_replay_nstep(&rb, slot1, 3, gamma, &last, &discount);
    assert_float_equal(ret, 1.0f + 0.9f * 3.0f, 1e-6);
    assert_float_equal(discount, 0.81f, 1e-6);
    assert_float_equal(rb.next_obs[last * OBS], -3.0f, 0.0);
    /* n = 1 from transition 4 (no end): its own reward, bootstrap at gamma from -4 */
    ret = sk_replay_nstep(&rb, 4, 1, gamma, &last, &discount);
    assert_float_equal(ret, 4.0f, 0.0);
    assert_float_equal(discount, 0.9f, 1e-7);
    assert_float_equal(rb.next_obs[last * OBS], -4.0f, 0.0);
    sk_replay_free(&rb);
}

/* Writes rb's checkpoint tensors to a file (replay.counters first changed by tamper, if
 * given: capacity, streams, position, count) and opens it. */
static sk_st_file *saved(const sk_replay *rb, const char *path, void (*tamper)(int64_t *counters)) {
    sk_st_tensor tensors[16];
    int n = sk_replay_save(rb, tensors, 16);
    assert_string_equal(tensors[0].name, "replay.counters");
    if (tamper) tamper((int64_t *)tensors[0].data);
    sk_st_meta meta[] = {{"format", "test"}};
    assert_int_equal(sk_st_write(path, tensors, n, meta, 1), SK_OK);
    sk_st_file *file = NULL;
    assert_int_equal(sk_st_open(&file, path), SK_OK);
    return file;
}

static void test_checkpoint_round_trip(void **state) {
    (void)state;
    char path[] = "/tmp/skinner_replay_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    sk_replay_spec spec = small_spec();
    for (int steps = 2; steps <= 5; steps += 3) { /* before and after the wrap */
        sk_replay a, b;
        assert_int_equal(sk_replay_create(&a, &spec), SK_OK);
        assert_int_equal(sk_replay_create(&b, &spec), SK_OK);
        uint8_t flags[10] = {0, 1, 0, 0, 1, 0, 0, 0, 1, 0};
        int tag = 0;
        fill(&a, &tag, steps, flags, NULL);
        sk_st_file *file = saved(&a, path, NULL);
        int heads[1] = {HEAD};
        assert_int_equal(sk_replay_restore(&b, file, path, heads), SK_OK);
        sk_st_close(file);
        assert_int_equal(b.pos, a.pos);
        assert_int_equal(b.count, a.count);
        assert_memory_equal(b.obs, a.obs, (size_t)a.count * OBS * sizeof(float));
        assert_memory_equal(b.next_obs, a.next_obs, (size_t)a.count * OBS * sizeof(float));
        assert_memory_equal(b.actions, a.actions, (size_t)a.count * sizeof(int32_t));
        assert_memory_equal(b.rewards, a.rewards, (size_t)a.count * sizeof(float));
        assert_memory_equal(b.terminated, a.terminated, (size_t)a.count);
        uint64_t rng_a = 3, rng_b = 3;
        int64_t sa[32], sb[32];
        sk_replay_sample(&a, &rng_a, 32, 1, sa);
        sk_replay_sample(&b, &rng_b, 32, 1, sb);
        assert_memory_equal(sa, sb, sizeof sa);
        sk_replay_free(&a);
        sk_replay_free(&b);
    }
    unlink(path);
}

/* A buffer's checkpoint with one value changed is refused, naming `name`. */
static void refused(const char *what, void (*tamper)(sk_replay *rb),
                    void (*tamper_counters)(int64_t *counters), const char *name) {
    char path[] = "/tmp/skinner_replay_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    sk_replay_spec spec = small_spec();
    sk_replay a, b;
    assert_int_equal(sk_replay_create(&a, &spec), SK_OK);
    assert_int_equal(sk_replay_create(&b, &spec), SK_OK);
    int tag = 0;
    fill(&a, &tag, 2, NULL, NULL);
    if (tamper) tamper(&a);
    sk_st_file *file = saved(&a, path, tamper_counters);
    int heads[1] = {HEAD};
    sk_status status = sk_replay_restore(&b, file, path, heads);
    printf("%s: %s\n", what, sk_last_error());
    assert_int_not_equal(status, SK_OK);
    assert_non_null(strstr(sk_last_error(), name));
    sk_st_close(file);
    sk_replay_free(&a);
    sk_replay_free(&b);
    unlink(path);
}

static void count_beyond_capacity(int64_t *counters) { counters[3] = CAPACITY + STREAMS; }
static void position_out_of_range(int64_t *counters) { counters[2] = -2; }
static void position_not_after_count(int64_t *counters) { counters[2] = 0; } /* count 4: not full */
static void capacity_other(int64_t *counters) { counters[0] = 8; }
static void action_beyond_head(sk_replay *rb) { rb->actions[1] = HEAD; }
static void flag_not_boolean(sk_replay *rb) { rb->terminated[2] = 2; }

static void test_hostile_checkpoint_values_are_refused(void **state) {
    (void)state;
    refused("count", NULL, count_beyond_capacity, "replay.counters' count = 8");
    refused("position", NULL, position_out_of_range, "replay.counters' position = -2");
    refused("position before full", NULL, position_not_after_count, "position = 0");
    refused("capacity", NULL, capacity_other, "replay.size = 6");
    refused("action", action_beyond_head, NULL, "replay.actions[1]");
    refused("flag", flag_not_boolean, NULL, "replay.terminated[2]");
}

static void test_memory_is_checked_with_the_numbers(void **state) {
    (void)state;
    sk_replay_spec spec = {.capacity = 1000000, .streams = 1, .obs_size = 400, .obs_u8 = true,
                           .num_heads = 1};
    /* a transition: 2 x 400 observation bytes, an int32 action, a float reward, 2 flags */
    size_t row = 800 + 4 + 4 + 2;
    assert_int_equal(sk_replay_bytes(&spec), (size_t)1000000 * row);
    assert_int_equal(sk_replay_check_fits(&spec, 0, (size_t)1000000 * row), SK_OK);
    sk_status status = sk_replay_check_fits(&spec, 0, (size_t)500000 * row);
    printf("%s\n", sk_last_error());
    assert_int_equal(status, SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), "replay.size = 1000000"));
    assert_non_null(strstr(sk_last_error(), "at most 500000"));
    /* a buffer larger than the machine is refused before anything is allocated */
    sk_replay rb;
    spec.capacity = (int64_t)1 << 40;
    assert_int_equal(sk_replay_create(&rb, &spec), SK_ERR_CONFIG);
    assert_null(rb.obs_u8);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampling_after_wrap_is_uniform_over_the_newest),
        cmocka_unit_test(test_nstep_stops_at_episode_ends),
        cmocka_unit_test(test_checkpoint_round_trip),
        cmocka_unit_test(test_hostile_checkpoint_values_are_refused),
        cmocka_unit_test(test_memory_is_checked_with_the_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
