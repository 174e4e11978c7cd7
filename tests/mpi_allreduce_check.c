/*
 * The program's MPI allreduces (src/cli/comm_mpi.c) against sums known exactly: every rank
 * contributes integer-valued floats and doubles, whose sums are exact in any order, so each
 * element must equal its closed form (for element i: (i % 7) x K (K + 1) / 2 floats, and
 * 1000 K (K - 1) / 2 + K i doubles). Checked for the rank-order allreduce (comm.mode =
 * exact) and the tree one (comm.mode = scale) at vector sizes below and above the tree's
 * switch to reduce-scatter and allgather (HALVING_MIN_BYTES), with 5 doubles as the loss
 * sums ride along, and with the doubles alone (the stop decisions). ctest runs it under
 * `mpirun -np K` for K = 2..5 (mpi_allreduce_check_npK); it prints the first mismatch and
 * exits 1.
 */
#include "cli/comm_cli.h"

#include <stdio.h>
#include <stdlib.h>

static int check(const sk_comm *comm, size_t num_floats, size_t num_doubles, bool tree) {
    int K = comm->size, r = comm->rank;
    float *floats = malloc(num_floats * sizeof *floats + 1);
    double *doubles = malloc(num_doubles * sizeof *doubles + 1);
    if (!floats || !doubles) return cli_error(1, "out of memory");
    for (size_t i = 0; i < num_floats; i++) floats[i] = (float)((r + 1) * (int)(i % 7));
    for (size_t i = 0; i < num_doubles; i++) doubles[i] = 1000.0 * r + (double)i;
    if (tree) sk_comm_tree_allreduce_f32_f64(comm, floats, num_floats, doubles, num_doubles);
    else sk_comm_allreduce_f32_f64(comm, floats, num_floats, doubles, num_doubles);
    int failed = 0;
    for (size_t i = 0; i < num_floats && !failed; i++) {
        float expected = (float)((int)(i % 7) * K * (K + 1) / 2);
        if (floats[i] != expected)
            failed = cli_error(1, "rank %d of %d, %s, %zu floats: float %zu = %g, expected %g", r, K,
                               tree ? "tree" : "rank order", num_floats, i, (double)floats[i],
                               (double)expected);
    }
    for (size_t i = 0; i < num_doubles && !failed; i++) {
        double expected = 1000.0 * K * (K - 1) / 2 + (double)K * (double)i;
        if (doubles[i] != expected)
            failed = cli_error(1, "rank %d of %d, %s, %zu doubles: double %zu = %g, expected %g", r,
                               K, tree ? "tree" : "rank order", num_doubles, i, doubles[i], expected);
    }
    free(floats);
    free(doubles);
    return failed;
}

int main(int argc, char **argv) {
    if (cli_comm_init(&argc, &argv) != SK_EXIT_OK) return 1;
    const sk_comm *comm = cli_comm();
    if (comm->size < 2) {
        cli_comm_finalize();
        return cli_error(1, "run under mpirun -np K, K >= 2 (got %d process)", comm->size);
    }
    /* 3 and 9,155 floats: below the switch (a CartPole-v1 gradient); 83,092: above it
     * (MinAtar's preset, 332 kB) */
    const size_t sizes[] = {3, 9155, 83092};
    int failed = 0;
    for (int tree = 0; tree < 2; tree++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            failed |= check(comm, sizes[k], 5, tree);
        failed |= check(comm, 0, 1, tree);
    }
    if (comm->rank == 0 && !failed) printf("mpi_allreduce_check: %d ranks: all sums exact\n", comm->size);
    cli_comm_finalize();
    return failed;
}
