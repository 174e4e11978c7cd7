/*
 * skinner/pool.h: a fixed set of worker threads that run one job at a time,
 * on every worker, for env authors whose work splits into independent slices
 * (Prover ranks queries, KGE trains on batches with it). The calling thread
 * is worker 0, so a pool of 1 starts no thread and runs the job inline.
 * A whole program (link with -lskinner):
 *
 *     #include <skinner/pool.h>
 *     #include <stdio.h>
 *
 *     typedef struct square_job { const float *in; float *out; int n; } square_job;
 *
 *     static void square_slice(void *ctx, int worker, int num_workers) {
 *         square_job *job = ctx;
 *         int lo, hi;
 *         sk_slice(job->n, worker, num_workers, &lo, &hi); // this worker's [lo, hi)
 *         for (int i = lo; i < hi; i++) job->out[i] = job->in[i] * job->in[i];
 *     }
 *
 *     int main(void) {
 *         float in[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, out[10];
 *         sk_pool *pool;
 *         if (sk_pool_create(&pool, 4) != SK_OK) {
 *             fprintf(stderr, "%s\n", sk_last_error());
 *             return 1;
 *         }
 *         square_job job = {in, out, 10};
 *         sk_pool_run(pool, square_slice, &job); // returns when all 4 slices are done
 *         sk_pool_destroy(pool);
 *         printf("%g %g\n", out[3], out[9]); // 9 81
 *         return 0;
 *     }
 *
 * A job writes only what its worker owns (its slice, its own scratch indexed
 * by `worker`), so it needs no lock; what it reads must not change until
 * sk_pool_run returns, which orders every worker's writes before the caller's
 * next read.
 */
#ifndef SKINNER_POOL_H
#define SKINNER_POOL_H

#include "env.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: the threads and the job they wait for. */
typedef struct sk_pool sk_pool;
/* One worker's share of a job: worker in [0, num_workers). */
typedef void (*sk_pool_job)(void *ctx, int worker, int num_workers);

/* *out = a pool of num_workers workers (>= 1), num_workers - 1 of them
 * threads started now. SK_ERR_INVALID for num_workers < 1, SK_ERR_NOMEM when
 * memory or a thread cannot be had (the threads started are joined). */
SK_API sk_status sk_pool_create(sk_pool **out, int num_workers);
/* Stops and joins the threads; NULL-safe. Not while a job runs. */
SK_API void sk_pool_destroy(sk_pool *pool);
SK_API int sk_pool_size(const sk_pool *pool);
/* Runs job(ctx, worker, num_workers) once for every worker, the calling
 * thread being worker 0, and returns when all are done. One job at a time:
 * not reentrant, and not called from two threads at once on one pool. */
SK_API void sk_pool_run(sk_pool *pool, sk_pool_job job, void *ctx);
/* The sk_parallel (skinner/env.h) that runs its jobs on pool's workers, for
 * the calls that take one; no parts (an evaluation in one process). */
SK_API sk_parallel sk_pool_parallel(sk_pool *pool);

/* The contiguous share [lo, hi) of n items that worker w of workers owns:
 * the shares cover [0, n) in order and differ in size by at most one. */
static inline void sk_slice(int n, int w, int workers, int *lo, int *hi) {
    *lo = (int)((long long)n * w / workers);
    *hi = (int)((long long)n * (w + 1) / workers);
}

#ifdef __cplusplus
}
#endif

#endif
