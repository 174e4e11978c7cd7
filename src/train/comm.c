#include "comm.h"

#include <string.h>

sk_comm sk_comm_single(void) { return (sk_comm){.rank = 0, .size = 1}; }

void sk_comm_sum_workers_f32(float *out, const float *const *parts, int num_parts, size_t count) {
    SK_ASSERT(num_parts >= 1);
    if (out != parts[0]) memcpy(out, parts[0], count * sizeof(float));
    for (int w = 1; w < num_parts; w++) {
        const float *part = parts[w];
        for (size_t k = 0; k < count; k++) out[k] += part[k];
    }
}

void sk_comm_allreduce_f32(const sk_comm *comm, float *data, size_t count) {
    if (comm->ops) comm->ops->allreduce_f32(comm->impl, data, count);
}

void sk_comm_allreduce_f64(const sk_comm *comm, double *data, size_t count) {
    if (comm->ops) comm->ops->allreduce_f64(comm->impl, data, count);
}

void sk_comm_bcast_f32(const sk_comm *comm, float *data, size_t count, int root) {
    if (comm->ops) comm->ops->bcast_f32(comm->impl, data, count, root);
}

void sk_comm_bcast_f64(const sk_comm *comm, double *data, size_t count, int root) {
    if (comm->ops) comm->ops->bcast_f64(comm->impl, data, count, root);
}

void sk_comm_allgather_f64(const sk_comm *comm, const double *mine, size_t count, double *all) {
    if (comm->ops) comm->ops->allgather_f64(comm->impl, mine, count, all);
    else if (all != mine) memcpy(all, mine, count * sizeof(double));
}

size_t sk_comm_allgatherv_f32(const sk_comm *comm, const float *mine, size_t count, float *all,
                              size_t capacity, size_t *counts) {
    if (comm->ops) return comm->ops->allgatherv_f32(comm->impl, mine, count, all, capacity, counts);
    SK_ASSERT(count <= capacity);
    if (all != mine) memcpy(all, mine, count * sizeof(float));
    counts[0] = count;
    return count;
}
