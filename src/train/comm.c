#include "comm.h"

#include "../vec/pool.h"

#include <stdio.h>
#include <stdlib.h>
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

void sk_comm_allreduce_f32_f64(const sk_comm *comm, float *floats, size_t num_floats,
                               double *doubles, size_t num_doubles) {
    if (comm->ops) comm->ops->allreduce_f32_f64(comm->impl, floats, num_floats, doubles, num_doubles);
}

void sk_comm_tree_allreduce_f32_f64(const sk_comm *comm, float *floats, size_t num_floats,
                                    double *doubles, size_t num_doubles) {
    if (comm->ops) comm->ops->tree_allreduce_f32_f64(comm->impl, floats, num_floats, doubles, num_doubles);
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

void sk_comm_allgatherv_bytes(const sk_comm *comm, const void *mine, void *all, const size_t *counts) {
    if (comm->ops) comm->ops->allgatherv_bytes(comm->impl, mine, all, counts);
    else if (all != mine) memcpy(all, mine, counts[0]);
}

void sk_comm_env_range(int num_envs, int rank, int size, int *lo, int *hi) {
    sk_slice(num_envs, rank, size, lo, hi);
}

enum { AGREE_MESSAGE = 500 };
typedef struct agree_record {
    int32_t status;
    char message[AGREE_MESSAGE];
} agree_record;

sk_status sk_comm_agree(const sk_comm *comm, sk_status status) {
    if (!comm->ops) return status;
    agree_record mine = {.status = (int32_t)status};
    if (status != SK_OK) snprintf(mine.message, sizeof mine.message, "%s", sk_last_error());
    agree_record *all = calloc((size_t)comm->size, sizeof *all);
    size_t *counts = calloc((size_t)comm->size, sizeof *counts);
    SK_ASSERT(all && counts);
    for (int r = 0; r < comm->size; r++) counts[r] = sizeof mine;
    comm->ops->allgatherv_bytes(comm->impl, &mine, all, counts);
    sk_status first = SK_OK;
    for (int r = 0; r < comm->size && first == SK_OK; r++) {
        if (all[r].status == SK_OK) continue;
        first = (sk_status)all[r].status;
        all[r].message[AGREE_MESSAGE - 1] = '\0';
        sk_fail(first, "rank %d: %s", r, all[r].message);
    }
    free(all);
    free(counts);
    return first;
}

size_t sk_comm_columns_scratch(const sk_comm_columns *arrays, int count, int num_envs) {
    size_t per_env = 0;
    for (int a = 0; a < count; a++) per_env += arrays[a].rows * arrays[a].bytes_per_env;
    return 2 * per_env * (size_t)num_envs; /* this rank's packed columns, then everyone's */
}

void sk_comm_allgather_columns(const sk_comm *comm, const sk_comm_columns *arrays, int count,
                               int num_envs, void *scratch) {
    if (!comm->ops) return;
    int K = comm->size;
    size_t per_env = 0;
    for (int a = 0; a < count; a++) per_env += arrays[a].rows * arrays[a].bytes_per_env;
    char *mine = scratch, *all = mine + per_env * (size_t)num_envs;
    size_t counts[SK_MAX_COMM_RANKS];
    SK_ASSERT(K <= SK_MAX_COMM_RANKS);
    for (int r = 0; r < K; r++) {
        int lo, hi;
        sk_comm_env_range(num_envs, r, K, &lo, &hi);
        counts[r] = per_env * (size_t)(hi - lo);
    }
    /* pack: array by array, row by row, this rank's columns */
    int lo, hi;
    sk_comm_env_range(num_envs, comm->rank, K, &lo, &hi);
    char *at = mine;
    for (int a = 0; a < count; a++) {
        size_t width = arrays[a].bytes_per_env, span = width * (size_t)(hi - lo);
        for (size_t row = 0; row < arrays[a].rows; row++) {
            memcpy(at, (char *)arrays[a].data + (row * (size_t)num_envs + (size_t)lo) * width, span);
            at += span;
        }
    }
    comm->ops->allgatherv_bytes(comm->impl, mine, all, counts);
    /* unpack every other rank's block the same way */
    const char *from = all;
    for (int r = 0; r < K; r++) {
        int rlo, rhi;
        sk_comm_env_range(num_envs, r, K, &rlo, &rhi);
        for (int a = 0; a < count; a++) {
            size_t width = arrays[a].bytes_per_env, span = width * (size_t)(rhi - rlo);
            for (size_t row = 0; row < arrays[a].rows; row++) {
                if (r != comm->rank)
                    memcpy((char *)arrays[a].data + (row * (size_t)num_envs + (size_t)rlo) * width,
                           from, span);
                from += span;
            }
        }
    }
}
