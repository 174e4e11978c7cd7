/*
 * The program's communicator: Open MPI when skinner runs under a launcher
 * (mpirun, or srun with PMI/PMIx), the single-process one otherwise. MPI is
 * initialised only under a launcher, so a plain `skinner train` starts no MPI
 * machinery, and a build without MPI has the single-process one alone.
 *
 * Every cross-rank sum is ordered (rank 0 + rank 1 + ... in that order) so
 * that K ranks of one thread compute bit for bit what one process of K
 * threads computes: MPI_Allreduce may add in any order, so the sum is an
 * alltoall of chunks (rank r owns chunk r), an in-order sum of each chunk by
 * its owner, and an allgather of the sums. That moves 2 (K-1)/K of the data
 * per rank, as a ring allreduce does.
 */
#include "comm_cli.h"

#include <stdlib.h>
#include <string.h>

static sk_comm g_comm = {.rank = 0, .size = 1};
static cli_comm_traffic g_traffic;

const sk_comm *cli_comm(void) { return &g_comm; }
cli_comm_traffic cli_comm_traffic_of(void) { return g_traffic; }

#ifdef SKINNER_MPI
#include <mpi.h>

typedef struct mpi_impl {
    MPI_Comm comm;
    int rank, size;
    char *scratch;
    size_t scratch_bytes;
    int *counts, *displs; /* (size) for the v-collectives */
} mpi_impl;

static mpi_impl g_mpi;

static char *scratch(mpi_impl *m, size_t bytes) {
    if (bytes > m->scratch_bytes) {
        free(m->scratch);
        m->scratch = malloc(bytes);
        if (!m->scratch) {
            fprintf(stderr, "skinner: error: rank %d: out of memory (%zu bytes to communicate)\n",
                    m->rank, bytes);
            MPI_Abort(m->comm, SK_EXIT_FAILURE);
        }
        m->scratch_bytes = bytes;
    }
    return m->scratch;
}

static void count(size_t bytes_sent) {
    g_traffic.calls++;
    g_traffic.bytes += bytes_sent;
}

/* data (count elements of elem bytes) summed over the ranks in rank order. */
static void ordered_allreduce(mpi_impl *m, void *data, size_t n, bool f64) {
    size_t K = (size_t)m->size, elem = f64 ? sizeof(double) : sizeof(float);
    size_t chunk = (n + K - 1) / K;
    MPI_Datatype type = f64 ? MPI_DOUBLE : MPI_FLOAT;
    SK_ASSERT(chunk <= (size_t)INT32_MAX);
    char *send = scratch(m, (2 * K + 1) * chunk * elem + 1);
    char *recv = send + K * chunk * elem, *sum = recv + K * chunk * elem;
    memcpy(send, data, n * elem);
    memset(send + n * elem, 0, (K * chunk - n) * elem);
    MPI_Alltoall(send, (int)chunk, type, recv, (int)chunk, type, m->comm);
    if (f64) {
        double *out = (double *)(void *)sum;
        const double *in = (const double *)(void *)recv;
        for (size_t i = 0; i < chunk; i++) out[i] = in[i];
        for (size_t r = 1; r < K; r++)
            for (size_t i = 0; i < chunk; i++) out[i] += in[r * chunk + i];
    } else {
        float *out = (float *)(void *)sum;
        const float *in = (const float *)(void *)recv;
        for (size_t i = 0; i < chunk; i++) out[i] = in[i];
        for (size_t r = 1; r < K; r++)
            for (size_t i = 0; i < chunk; i++) out[i] += in[r * chunk + i];
    }
    MPI_Allgather(sum, (int)chunk, type, send, (int)chunk, type, m->comm);
    memcpy(data, send, n * elem);
    count((K - 1) * chunk * elem);
    count((K - 1) * chunk * elem);
    g_traffic.allreduce_calls++;
    g_traffic.allreduce_bytes += 2 * (K - 1) * chunk * elem;
}

static void allreduce_f32(void *impl, float *data, size_t n) { ordered_allreduce(impl, data, n, false); }
static void allreduce_f64(void *impl, double *data, size_t n) { ordered_allreduce(impl, data, n, true); }

static void allgather_f64(void *impl, const double *mine, size_t n, double *all) {
    mpi_impl *m = impl;
    SK_ASSERT(n <= (size_t)INT32_MAX);
    MPI_Allgather(mine, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, m->comm);
    count((size_t)(m->size - 1) * n * sizeof(double));
}

static void allgatherv_bytes(void *impl, const void *mine, void *all, const size_t *counts) {
    mpi_impl *m = impl;
    size_t at = 0;
    for (int r = 0; r < m->size; r++) {
        SK_ASSERT(counts[r] <= (size_t)INT32_MAX && at <= (size_t)INT32_MAX);
        m->counts[r] = (int)counts[r];
        m->displs[r] = (int)at;
        at += counts[r];
    }
    MPI_Allgatherv(mine, m->counts[m->rank], MPI_BYTE, all, m->counts, m->displs, MPI_BYTE, m->comm);
    count((size_t)(m->size - 1) * counts[m->rank]);
}

static size_t allgatherv_f32(void *impl, const float *mine, size_t n, float *all, size_t capacity,
                             size_t *counts) {
    mpi_impl *m = impl;
    unsigned long long own = n, *each = (unsigned long long *)(void *)scratch(
                                    m, (size_t)m->size * sizeof(unsigned long long));
    MPI_Allgather(&own, 1, MPI_UNSIGNED_LONG_LONG, each, 1, MPI_UNSIGNED_LONG_LONG, m->comm);
    count((size_t)(m->size - 1) * sizeof own);
    size_t total = 0;
    for (int r = 0; r < m->size; r++) {
        counts[r] = (size_t)each[r] * sizeof(float);
        total += (size_t)each[r];
    }
    SK_ASSERT(total <= capacity);
    allgatherv_bytes(impl, mine, all, counts);
    for (int r = 0; r < m->size; r++) counts[r] /= sizeof(float);
    return total;
}

static void bcast(mpi_impl *m, void *data, size_t n, MPI_Datatype type, size_t elem, int root) {
    SK_ASSERT(n <= (size_t)INT32_MAX);
    MPI_Bcast(data, (int)n, type, root, m->comm);
    count(m->rank == root ? (size_t)(m->size - 1) * n * elem : 0);
}

static void bcast_f32(void *impl, float *data, size_t n, int root) {
    bcast(impl, data, n, MPI_FLOAT, sizeof(float), root);
}

static void bcast_f64(void *impl, double *data, size_t n, int root) {
    bcast(impl, data, n, MPI_DOUBLE, sizeof(double), root);
}

static const sk_comm_ops g_mpi_ops = {
    .allreduce_f32 = allreduce_f32,
    .allreduce_f64 = allreduce_f64,
    .allgather_f64 = allgather_f64,
    .allgatherv_f32 = allgatherv_f32,
    .bcast_f32 = bcast_f32,
    .bcast_f64 = bcast_f64,
    .allgatherv_bytes = allgatherv_bytes,
};

/* Launchers say who they started: Open MPI's mpirun, PMIx (srun --mpi=pmix,
 * prterun), PMI-2 (srun --mpi=pmi2). */
static bool launched(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

int cli_comm_init(int *argc, char ***argv) {
    if (!launched()) return SK_EXIT_OK;
    int provided = 0;
    /* only the main thread calls MPI; the worker threads never do */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return cli_error(SK_EXIT_FAILURE, "MPI_Init failed under the launcher");
    g_mpi.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(g_mpi.comm, &g_mpi.rank);
    MPI_Comm_size(g_mpi.comm, &g_mpi.size);
    if (g_mpi.size > SK_MAX_COMM_RANKS) {
        if (g_mpi.rank == 0)
            cli_error(SK_EXIT_FAILURE, "%d processes: skinner runs on at most %d", g_mpi.size,
                      SK_MAX_COMM_RANKS);
        MPI_Finalize();
        return SK_EXIT_FAILURE;
    }
    g_mpi.counts = calloc((size_t)g_mpi.size, sizeof(int));
    g_mpi.displs = calloc((size_t)g_mpi.size, sizeof(int));
    if (!g_mpi.counts || !g_mpi.displs) return cli_error(SK_EXIT_FAILURE, "out of memory");
    g_comm = (sk_comm){.rank = g_mpi.rank, .size = g_mpi.size, .ops = &g_mpi_ops, .impl = &g_mpi};
    return SK_EXIT_OK;
}

void cli_comm_finalize(void) {
    if (!g_comm.ops) return;
    MPI_Finalize();
    free(g_mpi.scratch);
    free(g_mpi.counts);
    free(g_mpi.displs);
    g_comm = (sk_comm){.rank = 0, .size = 1};
}

bool cli_comm_has_mpi(void) { return true; }

#else /* built without MPI: always one process */

int cli_comm_init(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    if (getenv("OMPI_COMM_WORLD_SIZE") && atoi(getenv("OMPI_COMM_WORLD_SIZE")) > 1)
        return cli_error(SK_EXIT_FAILURE,
                         "started by mpirun with %s processes, but this skinner was built without "
                         "MPI (install libopenmpi-dev and rebuild)",
                         getenv("OMPI_COMM_WORLD_SIZE"));
    return SK_EXIT_OK;
}

void cli_comm_finalize(void) {}

bool cli_comm_has_mpi(void) { return false; }

#endif

int cli_comm_share_text(char **text) {
    const sk_comm *comm = &g_comm;
    if (comm->size == 1) return SK_EXIT_OK;
    double length = comm->rank == 0 ? (double)strlen(*text) + 1 : 0.0;
    sk_comm_bcast_f64(comm, &length, 1, 0);
    size_t bytes = (size_t)length, words = (bytes + sizeof(double) - 1) / sizeof(double);
    double *packed = calloc(words, sizeof(double)); /* the text's bytes, carried as doubles */
    if (!packed) return cli_error(SK_EXIT_FAILURE, "out of memory");
    if (comm->rank == 0) memcpy(packed, *text, bytes);
    sk_comm_bcast_f64(comm, packed, words, 0);
    if (comm->rank != 0) {
        *text = malloc(bytes);
        if (!*text) {
            free(packed);
            return cli_error(SK_EXIT_FAILURE, "out of memory");
        }
        memcpy(*text, packed, bytes);
        (*text)[bytes - 1] = '\0';
    }
    free(packed);
    return SK_EXIT_OK;
}
