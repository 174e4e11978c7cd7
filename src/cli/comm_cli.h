/* The program's communicator (comm_mpi.c): MPI under a launcher, else one process. */
#ifndef SK_COMM_CLI_H
#define SK_COMM_CLI_H

#include "cli.h"
#include "train/comm.h"

/* Payload bytes this rank handed to MPI to send to other ranks, and the
 * collective calls that carried them, since the start. */
typedef struct cli_comm_traffic {
    unsigned long long bytes, calls;
    unsigned long long allreduce_bytes, allreduce_calls; /* of which in ordered allreduces */
} cli_comm_traffic;

/* Joins the run's processes when a launcher started this one (mpirun, srun);
 * otherwise nothing. Returns an exit code. */
int cli_comm_init(int *argc, char ***argv);
void cli_comm_finalize(void);
const sk_comm *cli_comm(void);
bool cli_comm_has_mpi(void);
cli_comm_traffic cli_comm_traffic_of(void);

/* Rank 0's NUL-terminated *text to every rank (the others get a malloc'd copy
 * in *text). Returns an exit code. */
int cli_comm_share_text(char **text);

#endif
