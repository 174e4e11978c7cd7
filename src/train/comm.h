/*
 * sk_comm: every reduction across workers and across processes goes through
 * here, in a fixed order, so a run's numbers do not depend on timing.
 *
 * Two levels. Within a process, the trainer's workers each hold a partial
 * result; sk_comm_sum_workers folds them in worker order (w0 + w1 + ...).
 * Across processes (ranks), sk_comm_allreduce_* sums each rank's value in
 * rank order and gives every rank the total; sk_comm_allgather* give every
 * rank every rank's parts in rank order, for merges that are not sums
 * (normalisation moments, finished episodes), which then run over all the
 * parts in (rank, worker) order; sk_comm_bcast_* copies rank root's value to
 * all. The single-process communicator (rank 0 of 1) makes
 * the cross-rank calls identities, so a one-process run computes exactly
 * what it did before sk_comm existed; an MPI communicator (issue 14) plugs
 * in behind the same calls.
 */
#ifndef SK_COMM_H
#define SK_COMM_H

#include "../core/core.h"

/* Processes of a distributed run at most (the launcher may start fewer). */
#define SK_MAX_COMM_RANKS 4096

typedef struct sk_comm_ops {
    void (*allreduce_f32)(void *impl, float *data, size_t count);
    void (*allreduce_f64)(void *impl, double *data, size_t count);
    /* floats and doubles summed in rank order in one collective */
    void (*allreduce_f32_f64)(void *impl, float *floats, size_t num_floats, double *doubles,
                              size_t num_doubles);
    /* the same sums in a fixed tree of ranks (the order depends on the rank count alone) */
    void (*tree_allreduce_f32_f64)(void *impl, float *floats, size_t num_floats, double *doubles,
                                   size_t num_doubles);
    void (*allgather_f64)(void *impl, const double *mine, size_t count, double *all);
    size_t (*allgatherv_f32)(void *impl, const float *mine, size_t count, float *all,
                             size_t capacity, size_t *counts);
    void (*bcast_f32)(void *impl, float *data, size_t count, int root);
    void (*bcast_f64)(void *impl, double *data, size_t count, int root);
    /* every rank's counts[rank] bytes (known to all), in rank order, into all */
    void (*allgatherv_bytes)(void *impl, const void *mine, void *all, const size_t *counts);
} sk_comm_ops;

typedef struct sk_comm {
    int rank, size;
    const sk_comm_ops *ops; /* NULL: the single-process communicator */
    void *impl;
} sk_comm;

/* Rank 0 of 1. */
sk_comm sk_comm_single(void);

/* out = parts[0] + parts[1] + ... + parts[num_parts - 1], element-wise, in
 * that order (out may alias parts[0]). */
void sk_comm_sum_workers_f32(float *out, const float *const *parts, int num_parts, size_t count);

/* Sums data over the ranks in rank order; every rank gets the sum. */
void sk_comm_allreduce_f32(const sk_comm *comm, float *data, size_t count);
void sk_comm_allreduce_f64(const sk_comm *comm, double *data, size_t count);
/* Both of the above in one collective (one message latency instead of two): a
 * minibatch's gradient and its loss sums. Each element's sum is the one the
 * separate calls give. */
void sk_comm_allreduce_f32_f64(const sk_comm *comm, float *floats, size_t num_floats,
                               double *doubles, size_t num_doubles);
/* The same sums added in a fixed tree of ranks (recursive doubling: ((r0 + r1) + (r2 +
 * r3)) ...) in log2 K message latencies rather than rank order's K - 1 + log2 K: the order
 * depends on the number of ranks alone, so a run repeats bit for bit for a given ranks x
 * threads, but (beyond 2 ranks) does not equal one process of as many threads. comm.mode =
 * scale's minibatch reduction, and any sum that no order changes (counts of flags). */
void sk_comm_tree_allreduce_f32_f64(const sk_comm *comm, float *floats, size_t num_floats,
                                    double *doubles, size_t num_doubles);
/* Every rank's `count` doubles, in rank order, into all (size x count). */
void sk_comm_allgather_f64(const sk_comm *comm, const double *mine, size_t count, double *all);
/* Every rank's own number of floats, in rank order, into all (at most
 * capacity floats in all); counts (size) receives each rank's count.
 * Returns the total. */
size_t sk_comm_allgatherv_f32(const sk_comm *comm, const float *mine, size_t count, float *all,
                              size_t capacity, size_t *counts);
/* Copies rank root's data to every rank. */
void sk_comm_bcast_f32(const sk_comm *comm, float *data, size_t count, int root);
void sk_comm_bcast_f64(const sk_comm *comm, double *data, size_t count, int root);
/* Every rank's counts[rank] bytes, in rank order, into all (the sum of counts). */
void sk_comm_allgatherv_bytes(const sk_comm *comm, const void *mine, void *all, const size_t *counts);

/* The envs rank `rank` of `size` steps: a contiguous slice lo..hi-1 of the
 * num_envs (sk_slice, as a process slices its envs over its threads). */
void sk_comm_env_range(int num_envs, int rank, int size, int *lo, int *hi);

/* A collective check that every rank got here with SK_OK: returns SK_OK on
 * every rank if all did; otherwise, on every rank, the lowest failing rank's
 * status with its message ("rank R: ...") as the last error. */
sk_status sk_comm_agree(const sk_comm *comm, sk_status status);

/* An array of rows of per-env records (row-major: row r's env i at
 * (r * num_envs + i) * bytes_per_env), of which each rank filled the columns of
 * its own envs (sk_comm_env_range). */
typedef struct sk_comm_columns {
    void *data;
    size_t rows, bytes_per_env;
} sk_comm_columns;

/* Bytes of scratch sk_comm_allgather_columns needs for these arrays. */
size_t sk_comm_columns_scratch(const sk_comm_columns *arrays, int count, int num_envs);
/* Gives every rank every rank's columns of the arrays, in one exchange;
 * scratch holds sk_comm_columns_scratch bytes. A single process has them all. */
void sk_comm_allgather_columns(const sk_comm *comm, const sk_comm_columns *arrays, int count,
                               int num_envs, void *scratch);

#endif
