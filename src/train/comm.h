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

typedef struct sk_comm_ops {
    void (*allreduce_f32)(void *impl, float *data, size_t count);
    void (*allreduce_f64)(void *impl, double *data, size_t count);
    void (*allgather_f64)(void *impl, const double *mine, size_t count, double *all);
    size_t (*allgatherv_f32)(void *impl, const float *mine, size_t count, float *all,
                             size_t capacity, size_t *counts);
    void (*bcast_f32)(void *impl, float *data, size_t count, int root);
    void (*bcast_f64)(void *impl, double *data, size_t count, int root);
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

#endif
