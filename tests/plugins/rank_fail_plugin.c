/*
 * RankFail-v0, for tests/mpi_check.sh: a one-step env whose creation fails in
 * the process that Open MPI numbers $SKINNER_TEST_FAIL_RANK (its
 * OMPI_COMM_WORLD_RANK), as an env whose data is missing on one node would.
 * Everywhere else it is a trivial env (observation 0, reward 1, done).
 */
#include <skinner/env.h>

#include <stdlib.h>
#include <string.h>

static int g_state;

static sk_status rank_create(void **state, int num_envs, const sk_config *cfg) {
    (void)num_envs;
    (void)cfg;
    const char *fail = getenv("SKINNER_TEST_FAIL_RANK"), *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (fail && rank && strcmp(fail, rank) == 0)
        return sk_fail(SK_ERR_IO, "RankFail-v0: cannot read its data on this node (rank %s)", rank);
    *state = &g_state;
    return SK_OK;
}
static void rank_destroy(void *state) { (void)state; }
static void rank_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)state, (void)seed;
    for (int i = lo; i < hi; i++) io->obs[i] = 0.0f;
}
static void rank_step(void *state, const sk_env_io *io, int lo, int hi) {
    (void)state;
    for (int i = lo; i < hi; i++) {
        io->obs[i] = 0.0f;
        io->final_obs[i] = 0.0f;
        io->rewards[i] = 1.0f;
        io->terminated[i] = 1;
        io->truncated[i] = 0;
        io->episode_log[2 * i] = 1.0f;
        io->episode_log[2 * i + 1] = 1.0f;
    }
}
static int rank_state_arrays(void *state, sk_env_array *arrays) {
    (void)state, (void)arrays;
    return 0;
}

static const sk_env_def rank_env = {
    .id = "RankFail-v0",
    .obs_size = 1,
    .action_space = {.kind = SK_SPACE_DISCRETE, .num_heads = 1, .head_sizes = {2}},
    .max_episode_steps = 1,
    .num_log_fields = 2,
    .log_names = {"episode_return", "episode_length"},
    .create = rank_create,
    .destroy = rank_destroy,
    .reset = rank_reset,
    .step = rank_step,
    .state_arrays = rank_state_arrays,
};

SK_PLUGIN_EXPORT(&rank_env)
