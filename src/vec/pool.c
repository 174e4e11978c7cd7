#include "pool.h"

#include "../core/core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/*
 * Workers and the caller wait for each other by spinning a short while and
 * then sleeping on a condition variable. A job of the trainer often lasts
 * tens of microseconds (a CartPole minibatch), and waking a sleeping thread
 * through the kernel costs about as much: with sleeping alone, two threads
 * trained CartPole 1.2x slower than two MPI processes of one thread each
 * (bench/results/2026-11-24-b4dc8f0-mpi.md; Open MPI's shared-memory
 * collectives poll). Spinning is bounded (SKINNER_POOL_SPIN_US, default
 * below; 0 turns it off) and adapts: each waiter halves its spin after a
 * wait that outlasted it and doubles it back after one that did not, so on an
 * oversubscribed machine, where the thread waited for is often not running,
 * the waits become sleeps instead of stealing its core.
 *
 * Ordering: a sleeper announces itself (sleepers, caller_sleeping) and then
 * checks the condition under the lock; the other side publishes the
 * condition and then reads the announcement (both sequentially consistent),
 * so one of the two always sees the other, and a wake-up is never lost.
 */
#define SK_POOL_SPIN_US_DEFAULT 200

typedef struct worker_arg {
    sk_pool *pool;
    int index;
} worker_arg;

struct sk_pool {
    int num_workers;
    pthread_t *threads;
    worker_arg *args;
    pthread_mutex_t lock;
    pthread_cond_t start, done;
    _Atomic uint64_t generation; /* bumped for each job */
    atomic_int pending;          /* workers still running the current job */
    atomic_int sleepers;         /* workers asleep on start (or about to be) */
    atomic_bool caller_sleeping; /* the caller asleep on done (or about to be) */
    atomic_bool stopping;
    sk_pool_job job;
    void *ctx;
    long long spin_ns;        /* the longest spin */
    long long caller_spin_ns; /* the caller's current spin (adapted) */
};

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A pause between checks. Not sched_yield: on a loaded machine a yielding
 * thread gave its core away for a whole time slice (milliseconds a job, in
 * tests/test_pool.c with other processes busy). */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield"); /* Arm's spin-wait hint, the counterpart of x86's pause */
#endif
}

/* A waiter's next spin after a wait of waited_ns that a spin of *spin_ns
 * caught (caught) or not. */
static void adapt_spin(long long *spin_ns, long long max_ns, bool caught, long long waited_ns) {
    if (caught || waited_ns < max_ns) *spin_ns = SK_MIN(max_ns, *spin_ns * 2 + 1000);
    else *spin_ns /= 2;
}

/* Spins until the generation differs from seen (true) or spin_ns passes (false). */
static bool spin_for_job(sk_pool *pool, uint64_t seen, long long spin_ns) {
    if (spin_ns <= 0) return false;
    long long deadline = now_ns() + spin_ns;
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&pool->generation, memory_order_acquire) != seen ||
            atomic_load_explicit(&pool->stopping, memory_order_relaxed))
            return true;
        cpu_relax();
        if ((i & 255) == 0 && now_ns() > deadline) return false;
    }
}

static void *worker_main(void *arg_ptr) {
    worker_arg *arg = arg_ptr;
    sk_pool *pool = arg->pool;
    uint64_t seen = 0;
    long long spin_ns = pool->spin_ns;
    for (;;) {
        long long start = now_ns();
        bool caught = spin_for_job(pool, seen, spin_ns);
        if (!caught) {
            pthread_mutex_lock(&pool->lock);
            atomic_fetch_add(&pool->sleepers, 1);
            while (atomic_load(&pool->generation) == seen && !atomic_load(&pool->stopping))
                pthread_cond_wait(&pool->start, &pool->lock);
            atomic_fetch_sub(&pool->sleepers, 1);
            pthread_mutex_unlock(&pool->lock);
        }
        if (pool->spin_ns > 0) adapt_spin(&spin_ns, pool->spin_ns, caught, now_ns() - start);
        if (atomic_load(&pool->stopping)) return NULL;
        seen = atomic_load_explicit(&pool->generation, memory_order_acquire);

        pool->job(pool->ctx, arg->index, pool->num_workers);

        if (atomic_fetch_sub(&pool->pending, 1) == 1 && atomic_load(&pool->caller_sleeping)) {
            pthread_mutex_lock(&pool->lock);
            pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->lock);
        }
    }
}

/* SKINNER_POOL_SPIN_US (microseconds, 0 to 1000000), or the default. */
static long long spin_setting(void) {
    const char *text = getenv("SKINNER_POOL_SPIN_US");
    if (text && *text) {
        char *end;
        long value = strtol(text, &end, 10);
        if (*end == '\0' && value >= 0 && value <= 1000000) return value * 1000LL;
        sk_log(1, "SKINNER_POOL_SPIN_US = '%s' is not a count of microseconds from 0 to "
                    "1000000; using %d",
                    text, SK_POOL_SPIN_US_DEFAULT);
    }
    return SK_POOL_SPIN_US_DEFAULT * 1000LL;
}

sk_status sk_pool_create(sk_pool **out, int num_workers) {
    if (num_workers < 1) return sk_fail(SK_ERR_INVALID, "a pool needs at least one worker");
    sk_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return sk_fail(SK_ERR_NOMEM, "out of memory");
    pool->num_workers = num_workers;
    pool->spin_ns = pool->caller_spin_ns = spin_setting();
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->start, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->threads = calloc((size_t)num_workers, sizeof(pthread_t));
    pool->args = calloc((size_t)num_workers, sizeof(worker_arg));
    if (!pool->threads || !pool->args) {
        sk_pool_destroy(pool);
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    }
    for (int w = 1; w < num_workers; w++) {
        pool->args[w] = (worker_arg){pool, w};
        if (pthread_create(&pool->threads[w], NULL, worker_main, &pool->args[w]) != 0) {
            pool->num_workers = w; /* only join what started */
            sk_pool_destroy(pool);
            return sk_fail(SK_ERR_NOMEM, "cannot start worker thread %d", w);
        }
    }
    *out = pool;
    return SK_OK;
}

void sk_pool_destroy(sk_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    atomic_store(&pool->stopping, true);
    pthread_cond_broadcast(&pool->start);
    pthread_mutex_unlock(&pool->lock);
    for (int w = 1; w < pool->num_workers && pool->threads; w++) pthread_join(pool->threads[w], NULL);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->start);
    pthread_cond_destroy(&pool->done);
    free(pool->threads);
    free(pool->args);
    free(pool);
}

int sk_pool_size(const sk_pool *pool) { return pool->num_workers; }

/* Spins until every worker is done (true) or spin_ns passes (false). */
static bool spin_for_workers(sk_pool *pool) {
    if (pool->caller_spin_ns <= 0) return false;
    long long deadline = now_ns() + pool->caller_spin_ns;
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&pool->pending, memory_order_acquire) == 0) return true;
        cpu_relax();
        if ((i & 255) == 0 && now_ns() > deadline) return false;
    }
}

static void parallel_run(void *pool, sk_parallel_job job, void *ctx) { sk_pool_run(pool, job, ctx); }

sk_parallel sk_pool_parallel(sk_pool *pool) {
    return (sk_parallel){.ctx = pool, .run = parallel_run};
}

int sk_threads_or_cores(int threads) {
    if (threads > 0) return threads;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)cores : 1;
}

void sk_pool_run(sk_pool *pool, sk_pool_job job, void *ctx) {
    if (pool->num_workers == 1) {
        job(ctx, 0, 1);
        return;
    }
    pool->job = job;
    pool->ctx = ctx;
    atomic_store(&pool->pending, pool->num_workers - 1);
    atomic_fetch_add(&pool->generation, 1); /* publishes job and ctx */
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->lock);
        pthread_cond_broadcast(&pool->start);
        pthread_mutex_unlock(&pool->lock);
    }

    job(ctx, 0, pool->num_workers);

    long long start = now_ns();
    bool caught = spin_for_workers(pool);
    if (!caught) {
        pthread_mutex_lock(&pool->lock);
        atomic_store(&pool->caller_sleeping, true);
        while (atomic_load(&pool->pending) > 0) pthread_cond_wait(&pool->done, &pool->lock);
        atomic_store(&pool->caller_sleeping, false);
        pthread_mutex_unlock(&pool->lock);
    }
    if (pool->spin_ns > 0) adapt_spin(&pool->caller_spin_ns, pool->spin_ns, caught, now_ns() - start);
}
