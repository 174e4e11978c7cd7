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

/* Rank r's chunk of n values in chunks of `chunk`: its first index and its count. */
static size_t chunk_of(size_t n, size_t chunk, size_t r, size_t *first) {
    *first = SK_MIN(r * chunk, n);
    return SK_MIN(chunk, n - *first);
}

/* floats and doubles summed over the ranks in rank order, in one alltoall and one
 * allgather: rank r owns chunk r of each (its block: the doubles, then the floats),
 * sums every rank's block in rank order, and the allgather returns the sums. */
static void ordered_allreduce(mpi_impl *m, float *floats, size_t nf, double *doubles, size_t nd) {
    size_t K = (size_t)m->size, cf = (nf + K - 1) / K, cd = (nd + K - 1) / K;
    size_t float_bytes = (cf * sizeof(float) + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    size_t block = cd * sizeof(double) + float_bytes; /* a multiple of 8: the doubles stay aligned */
    SK_ASSERT(block <= (size_t)INT32_MAX);
    char *send = scratch(m, (2 * K + 1) * block + 1);
    char *recv = send + K * block, *sum = recv + K * block;
    memset(send, 0, K * block);
    for (size_t r = 0; r < K; r++) {
        size_t first, count = chunk_of(nd, cd, r, &first);
        if (count) memcpy(send + r * block, doubles + first, count * sizeof(double));
        count = chunk_of(nf, cf, r, &first);
        if (count) memcpy(send + r * block + cd * sizeof(double), floats + first, count * sizeof(float));
    }
    MPI_Alltoall(send, (int)block, MPI_BYTE, recv, (int)block, MPI_BYTE, m->comm);
    double *out_d = (double *)(void *)sum;
    float *out_f = (float *)(void *)(sum + cd * sizeof(double));
    for (size_t r = 0; r < K; r++) {
        const double *in_d = (const double *)(void *)(recv + r * block);
        const float *in_f = (const float *)(void *)(recv + r * block + cd * sizeof(double));
        if (r == 0) {
            memcpy(out_d, in_d, cd * sizeof(double));
            memcpy(out_f, in_f, cf * sizeof(float));
            continue;
        }
        for (size_t i = 0; i < cd; i++) out_d[i] += in_d[i];
        for (size_t i = 0; i < cf; i++) out_f[i] += in_f[i];
    }
    MPI_Allgather(sum, (int)block, MPI_BYTE, send, (int)block, MPI_BYTE, m->comm);
    for (size_t r = 0; r < K; r++) {
        size_t first, count = chunk_of(nd, cd, r, &first);
        if (count) memcpy(doubles + first, send + r * block, count * sizeof(double));
        count = chunk_of(nf, cf, r, &first);
        if (count) memcpy(floats + first, send + r * block + cd * sizeof(double), count * sizeof(float));
    }
    count((K - 1) * block);
    count((K - 1) * block);
    g_traffic.allreduce_calls++;
    g_traffic.allreduce_bytes += 2 * (K - 1) * block;
}

/* Adds the partner's block (theirs) to this rank's (mine), the lower rank's first. */
static void add_blocks(char *mine, const char *theirs, size_t nd, size_t nf, bool mine_first) {
    double *sum_d = (double *)(void *)mine;
    float *sum_f = (float *)(void *)(mine + nd * sizeof(double));
    const double *in_d = (const double *)(const void *)theirs;
    const float *in_f = (const float *)(const void *)(theirs + nd * sizeof(double));
    for (size_t i = 0; i < nd; i++) sum_d[i] = mine_first ? sum_d[i] + in_d[i] : in_d[i] + sum_d[i];
    for (size_t i = 0; i < nf; i++) sum_f[i] = mine_first ? sum_f[i] + in_f[i] : in_f[i] + sum_f[i];
}

/* Blocks of at least this many bytes go by reduce-scatter and allgather (Rabenseifner's
 * allreduce: about 2 S bytes sent a rank instead of recursive doubling's log2 K S, for 2 log2 K
 * latencies instead of log2 K). At 10 Gbit/s and 20 us a message (bench/mpi_model.py), a
 * 128 kB block's extra bytes under doubling cost as much as the halving's extra latencies
 * at about 16 ranks; beyond, and for larger blocks, the halving wins. */
#define HALVING_MIN_BYTES (128 * 1024)

enum chunk_io { CHUNKS_PACK, CHUNKS_ADD_MINE_FIRST, CHUNKS_ADD_THEIRS_FIRST, CHUNKS_COPY_IN };

/* Bytes of chunks c0..c1-1 of `parts` equal chunks of nd doubles and nf floats. */
static size_t chunks_bytes(size_t nd, size_t nf, int parts, int c0, int c1) {
    size_t d = nd * (size_t)c1 / (size_t)parts - nd * (size_t)c0 / (size_t)parts;
    size_t f = nf * (size_t)c1 / (size_t)parts - nf * (size_t)c0 / (size_t)parts;
    return d * sizeof(double) + f * sizeof(float);
}

/* Chunks c0..c1-1 of parts equal chunks of the doubles and of the floats, to or from buf
 * (their doubles, then their floats): packed into it, added to the arrays (the lower rank's
 * values first) or copied into them. Returns the bytes of those chunks in buf. */
static size_t chunks_io(char *buf, double *doubles, size_t nd, float *floats, size_t nf, int parts,
                        int c0, int c1, enum chunk_io io) {
    size_t d0 = nd * (size_t)c0 / (size_t)parts, d1 = nd * (size_t)c1 / (size_t)parts;
    size_t f0 = nf * (size_t)c0 / (size_t)parts, f1 = nf * (size_t)c1 / (size_t)parts;
    size_t double_bytes = (d1 - d0) * sizeof(double), float_bytes = (f1 - f0) * sizeof(float);
    double *in_d = (double *)(void *)buf;
    float *in_f = (float *)(void *)(buf + double_bytes);
    switch (io) {
    case CHUNKS_PACK:
        if (d1 > d0) memcpy(buf, doubles + d0, double_bytes);
        if (f1 > f0) memcpy(buf + double_bytes, floats + f0, float_bytes);
        break;
    case CHUNKS_COPY_IN:
        if (d1 > d0) memcpy(doubles + d0, buf, double_bytes);
        if (f1 > f0) memcpy(floats + f0, buf + double_bytes, float_bytes);
        break;
    case CHUNKS_ADD_MINE_FIRST:
        for (size_t i = d0; i < d1; i++) doubles[i] = doubles[i] + in_d[i - d0];
        for (size_t i = f0; i < f1; i++) floats[i] = floats[i] + in_f[i - f0];
        break;
    case CHUNKS_ADD_THEIRS_FIRST:
        for (size_t i = d0; i < d1; i++) doubles[i] = in_d[i - d0] + doubles[i];
        for (size_t i = f0; i < f1; i++) floats[i] = in_f[i - f0] + floats[i];
        break;
    }
    return double_bytes + float_bytes;
}

/* The allreduce among ranks 0..P-1 (P a power of two) of the arrays in place, by recursive
 * halving (each step keeps half of its chunks and adds the partner's copy of them; rank r ends
 * owning chunk r's sum) and then recursive doubling of the owned chunks. send and recv hold
 * half the vector's bytes at least. */
static void halving_allreduce(mpi_impl *m, float *floats, size_t nf, double *doubles, size_t nd,
                             int P, char *send, char *recv) {
    int rank = m->rank, c0 = 0, c1 = P;
    for (int distance = P / 2; distance >= 1; distance /= 2) {
        int partner = rank ^ distance, mid = (c0 + c1) / 2;
        bool lower = rank < partner;
        int keep0 = lower ? c0 : mid, keep1 = lower ? mid : c1;
        size_t out = chunks_io(send, doubles, nd, floats, nf, P, lower ? mid : c0, lower ? c1 : mid,
                               CHUNKS_PACK);
        size_t in = chunks_bytes(nd, nf, P, keep0, keep1);
        MPI_Sendrecv(send, (int)out, MPI_BYTE, partner, 1, recv, (int)in, MPI_BYTE, partner, 1,
                     m->comm, MPI_STATUS_IGNORE);
        count(out);
        chunks_io(recv, doubles, nd, floats, nf, P, keep0, keep1,
                  lower ? CHUNKS_ADD_MINE_FIRST : CHUNKS_ADD_THEIRS_FIRST);
        c0 = keep0;
        c1 = keep1;
    }
    for (int distance = 1; distance < P; distance *= 2) {
        int partner = rank ^ distance, length = c1 - c0;
        int p0 = rank < partner ? c1 : c0 - length;
        size_t out = chunks_io(send, doubles, nd, floats, nf, P, c0, c1, CHUNKS_PACK);
        size_t in = chunks_bytes(nd, nf, P, p0, p0 + length);
        MPI_Sendrecv(send, (int)out, MPI_BYTE, partner, 2, recv, (int)in, MPI_BYTE, partner, 2,
                     m->comm, MPI_STATUS_IGNORE);
        count(out);
        chunks_io(recv, doubles, nd, floats, nf, P, p0, p0 + length, CHUNKS_COPY_IN);
        c0 = SK_MIN(c0, p0);
        c1 = SK_MAX(c1, p0 + length);
    }
}

/* The same sums in a fixed tree of ranks instead of rank order, for comm.mode = scale, by
 * recursive doubling: with P the largest power of two <= K, rank P + j first folds its
 * block into rank j's; then for s = 1, 2, 4, ... < P each rank r < P swaps its partial with
 * rank r ^ s and both add them, the lower rank's first (so both hold the same bits); last,
 * rank j hands the total to rank P + j. The order of the additions depends on K alone, so
 * a run repeats bit for bit for a given K, in log2 K message latencies (2 more when K is
 * not a power of two) instead of the alltoall's K - 1 + log2 K. */
static void tree_allreduce(void *impl, float *floats, size_t nf, double *doubles, size_t nd) {
    mpi_impl *m = impl;
    size_t float_bytes = (nf * sizeof(float) + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    size_t block = nd * sizeof(double) + float_bytes;
    SK_ASSERT(block <= (size_t)INT32_MAX);
    char *mine = scratch(m, 2 * block + 1), *theirs = mine + block;
    if (nd) memcpy(mine, doubles, nd * sizeof(double));
    if (nf) memcpy(mine + nd * sizeof(double), floats, nf * sizeof(float));
    int size = m->size, rank = m->rank, P = 1;
    while (P * 2 <= size) P *= 2;
    unsigned long long before = g_traffic.bytes;
    if (rank >= P) { /* an extra rank: its block goes to rank - P, the total comes back */
        MPI_Send(mine, (int)block, MPI_BYTE, rank - P, 0, m->comm);
        count(block);
        MPI_Recv(mine, (int)block, MPI_BYTE, rank - P, 0, m->comm, MPI_STATUS_IGNORE);
    } else {
        if (rank + P < size) {
            MPI_Recv(theirs, (int)block, MPI_BYTE, rank + P, 0, m->comm, MPI_STATUS_IGNORE);
            add_blocks(mine, theirs, nd, nf, true);
        }
        if (block >= HALVING_MIN_BYTES && P > 1) { /* in the caller's arrays; mine, theirs as buffers */
            if (nd) memcpy(doubles, mine, nd * sizeof(double));
            if (nf) memcpy(floats, mine + nd * sizeof(double), nf * sizeof(float));
            halving_allreduce(m, floats, nf, doubles, nd, P, mine, theirs);
            if (nd) memcpy(mine, doubles, nd * sizeof(double));
            if (nf) memcpy(mine + nd * sizeof(double), floats, nf * sizeof(float));
        } else {
            for (int step = 1; step < P; step *= 2) {
                int partner = rank ^ step;
                MPI_Sendrecv(mine, (int)block, MPI_BYTE, partner, 0, theirs, (int)block, MPI_BYTE,
                             partner, 0, m->comm, MPI_STATUS_IGNORE);
                count(block);
                add_blocks(mine, theirs, nd, nf, rank < partner);
            }
        }
        if (rank + P < size) {
            MPI_Send(mine, (int)block, MPI_BYTE, rank + P, 0, m->comm);
            count(block);
        }
    }
    if (nd) memcpy(doubles, mine, nd * sizeof(double));
    if (nf) memcpy(floats, mine + nd * sizeof(double), nf * sizeof(float));
    g_traffic.allreduce_calls++;
    g_traffic.allreduce_bytes += g_traffic.bytes - before;
}

static void allreduce_f32(void *impl, float *data, size_t n) { ordered_allreduce(impl, data, n, NULL, 0); }
static void allreduce_f64(void *impl, double *data, size_t n) { ordered_allreduce(impl, NULL, 0, data, n); }
static void allreduce_f32_f64(void *impl, float *floats, size_t nf, double *doubles, size_t nd) {
    ordered_allreduce(impl, floats, nf, doubles, nd);
}

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
    .allreduce_f32_f64 = allreduce_f32_f64,
    .tree_allreduce_f32_f64 = tree_allreduce,
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
