/* sk_pool: every job runs exactly once on every worker, each worker sees the
 * caller's writes made before sk_pool_run, and the caller sees every worker's
 * writes after it, over many short jobs and through the sleeping path, with
 * spinning off, short and long, and with more workers than cores. A lost
 * wake-up hangs a case, which ctest's timeout turns into a failure. */
#include "test_util.h"

#include "skinner/pool.h"
#include "vec/pool.h"

#include <time.h>

#define MAX_WORKERS 8

typedef struct counting_job {
    long long input;                    /* written by the caller before each run */
    long long seen[MAX_WORKERS];        /* each worker's copy of input */
    long long runs[MAX_WORKERS];        /* how many jobs each worker ran */
    long long sum[MAX_WORKERS * 16];    /* a line of its own for each worker's work */
    int workers_seen;                   /* num_workers as the job was told it */
    long long sleep_ns;                 /* worker 1 sleeps this long in the job */
} counting_job;

static void sleep_ns(long long ns) {
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    nanosleep(&ts, NULL);
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void count(void *ctx, int worker, int num_workers) {
    counting_job *job = ctx;
    assert_true(worker >= 0 && worker < num_workers && num_workers <= MAX_WORKERS);
    job->workers_seen = num_workers;
    job->seen[worker] = job->input;
    job->runs[worker]++;
    long long acc = 0;
    for (long long i = 0; i < (job->input & 63); i++) acc += i * worker;
    job->sum[worker * 16] += acc;
    if (worker == 1 && job->sleep_ns) sleep_ns(job->sleep_ns);
}

/* jobs runs of count() on a pool of `workers` made with SKINNER_POOL_SPIN_US = spin;
 * every `pause_every`-th run the caller sleeps pause_ns first, so that workers
 * have gone to sleep (beyond any spin) when the next job comes. */
static void run_many(int workers, const char *spin, int jobs, int pause_every, long long pause_ns,
                     long long worker_sleep_ns) {
    setenv("SKINNER_POOL_SPIN_US", spin, 1);
    double start = seconds_now();
    sk_pool *pool;
    assert_int_equal(sk_pool_create(&pool, workers), SK_OK);
    assert_int_equal(sk_pool_size(pool), workers);
    counting_job *job = calloc(1, sizeof *job);
    assert_non_null(job);
    job->sleep_ns = worker_sleep_ns;
    long long expect_sum[MAX_WORKERS] = {0};
    for (int k = 1; k <= jobs; k++) {
        if (pause_every && k % pause_every == 0) sleep_ns(pause_ns);
        job->input = k * 7919LL;
        sk_pool_run(pool, count, job);
        for (int w = 0; w < workers; w++) {
            if (job->seen[w] != job->input)
                fail_msg("spin %s, %d workers, job %d: worker %d saw input %lld, not %lld", spin,
                         workers, k, w, job->seen[w], job->input);
            if (job->runs[w] != k)
                fail_msg("spin %s, %d workers, job %d: worker %d ran %lld jobs", spin, workers, k,
                         w, job->runs[w]);
            long long acc = 0;
            for (long long i = 0; i < (job->input & 63); i++) acc += i * w;
            expect_sum[w] += acc;
        }
        assert_int_equal(job->workers_seen, workers);
    }
    for (int w = 0; w < workers; w++) assert_true(job->sum[w * 16] == expect_sum[w]);
    sk_pool_destroy(pool);
    free(job);
    if (getenv("TEST_POOL_TIMES")) print_message("%d workers, spin %s, %d jobs: %.3f s\n", workers, spin, jobs, seconds_now() - start);
    unsetenv("SKINNER_POOL_SPIN_US");
}

static void test_many_short_jobs(void **unused) {
    (void)unused;
    run_many(2, "0", 20000, 0, 0, 0);    /* sleeping only, as before spinning */
    run_many(2, "200", 50000, 0, 0, 0);  /* the default: the workers catch jobs spinning */
    run_many(3, "5", 50000, 0, 0, 0);    /* spins run out often: both paths, racing */
}

static void test_jobs_after_the_spin_ran_out(void **unused) {
    (void)unused;
    /* pauses of 2 ms after a spin of 50 us: every worker is asleep when the job comes */
    run_many(2, "50", 400, 2, 2000000, 0);
    /* the caller waits beyond its spin for a slow worker 1, and sleeps */
    run_many(2, "50", 200, 0, 0, 1000000);
    /* a spin longer than any gap: no one ever sleeps */
    run_many(2, "1000000", 20000, 0, 0, 0);
}

static void test_more_workers_than_cores(void **unused) {
    (void)unused;
    run_many(MAX_WORKERS, "200", 5000, 0, 0, 0);
    run_many(MAX_WORKERS, "0", 5000, 7, 100000, 0);
}

static void test_a_bad_spin_setting_is_named_and_ignored(void **unused) {
    (void)unused;
    /* a warning names the variable; the pool still works with the default */
    run_many(2, "-3", 1000, 0, 0, 0);
    run_many(2, "lots", 1000, 0, 0, 0);
}

static void test_one_worker_runs_inline(void **unused) {
    (void)unused;
    run_many(1, "200", 1000, 0, 0, 0);
    sk_pool *pool = NULL;
    assert_int_equal(sk_pool_create(&pool, 0), SK_ERR_INVALID);
    assert_null(pool);
}

/* sk_pool_parallel: the sk_parallel a caller hands to calls that take one runs
 * the job on every worker of the pool, once, with the pool's worker count */
static void test_parallel_over_a_pool(void **unused) {
    (void)unused;
    sk_pool *pool;
    assert_int_equal(sk_pool_create(&pool, 3), SK_OK);
    sk_parallel parallel = sk_pool_parallel(pool);
    assert_ptr_equal(parallel.ctx, pool);
    assert_true(parallel.num_parts < 2);
    counting_job *job = calloc(1, sizeof *job);
    assert_non_null(job);
    job->input = 42;
    parallel.run(parallel.ctx, count, job);
    assert_int_equal(job->workers_seen, 3);
    for (int w = 0; w < 3; w++) {
        assert_true(job->runs[w] == 1);
        assert_true(job->seen[w] == 42);
    }
    sk_pool_destroy(pool);
    free(job);
}

/* sk_slice_aligned: the shares cover [begin, end) in order, each but the last starts and ends
 * on an align boundary counted from begin, and whole chunks differ by at most one a share */
static void test_aligned_shares(void **unused) {
    (void)unused;
    const size_t cases[][3] = {{0, 0, 16},    {0, 5, 16},     {0, 16, 16},   {0, 17, 16},
                               {3, 4355, 16}, {0, 9219, 16},  {7, 200, 64},  {0, 4096, 64},
                               {100, 101, 1}, {0, 1000, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int workers = 1; workers <= 5; workers++) {
            size_t begin = cases[c][0], end = cases[c][1], align = cases[c][2];
            size_t chunks = (end - begin + align - 1) / align, at = begin;
            for (int w = 0; w < workers; w++) {
                size_t lo, hi;
                sk_slice_aligned(begin, end, align, w, workers, &lo, &hi);
                assert_true(lo == at);
                assert_true(lo <= hi && hi <= end);
                assert_true((lo - begin) % align == 0);
                if (hi < end) assert_true((hi - begin) % align == 0);
                size_t share = (hi - lo + align - 1) / align;
                assert_true(share + 1 >= chunks / (size_t)workers && share <= chunks / (size_t)workers + 1);
                at = hi;
            }
            assert_true(at == end);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aligned_shares),
        cmocka_unit_test(test_many_short_jobs),
        cmocka_unit_test(test_jobs_after_the_spin_ran_out),
        cmocka_unit_test(test_more_workers_than_cores),
        cmocka_unit_test(test_a_bad_spin_setting_is_named_and_ignored),
        cmocka_unit_test(test_one_worker_runs_inline),
        cmocka_unit_test(test_parallel_over_a_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
