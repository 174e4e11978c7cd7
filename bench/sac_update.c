/*
 * Issue 51 ask 6: SAC's learner against the machine's FLOP limit. CleanRL's networks at
 * HalfCheetah's sizes (obs 17, act 6, two 256 x 256 ReLU Q networks and actor, batch 256;
 * src/train/sac_core.h), updated on a fixed random batch with CleanRL's schedule (a critic step
 * every update; every 2nd, two actor and alpha steps; targets every update), its 2 row blocks on
 * THREADS threads (an sk_pool; 1: inline).
 * Prints the core's FMA peak at the ISA level in use, then per round of UPDATES updates the
 * rate; the medians of updates/s, of the critic and of the actor steps alone, the GFLOP/s the
 * layers' multiply-adds reach (2 flops each), and that as a fraction of the threads' peak
 * (threads x one core's) and of the machine's (cores x one core's). One JSON object per line.
 * usage: sac_update [ROUNDS=9] [UPDATES=40] [THREADS=the machine's cores] [ROW_BLOCKS=2]
 */
#include "core/isa.h"
#include "core/rng.h"
#include "fma_peak.h"
#include "skinner/pool.h"
#include "train/sac_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { OBS = 17, ACT = 6, ROWS = 256 }; /* HalfCheetah-v4's observation and action sizes */

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *x, int n) {
    qsort(x, (size_t)n, sizeof(double), compare_doubles);
    return x[n / 2];
}

/* CPU seconds of every thread of the process: on a shared machine the wall clock counts the
 * time other jobs held the cores, this does not (spinning waits count). */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


static float *normals(size_t n, uint64_t *rng) {
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = (float)sk_rng_normal(rng);
    return x;
}

int main(int argc, char **argv) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int rounds = argc > 1 ? atoi(argv[1]) : 9, updates = argc > 2 ? atoi(argv[2]) : 40;
    int threads = argc > 3 ? atoi(argv[3]) : (int)cores, row_blocks = argc > 4 ? atoi(argv[4]) : 2;
    if (rounds < 1 || updates < 2 || threads < 1 || threads > 64) {
        fprintf(stderr, "usage: sac_update [ROUNDS >= 1] [UPDATES >= 2] [THREADS 1..64] [ROW_BLOCKS]\n");
        return 2;
    }
    float low[ACT], high[ACT];
    for (int d = 0; d < ACT; d++) low[d] = -1.0f, high[d] = 1.0f;
    sk_sac_config config = sk_sac_defaults(OBS, ACT, low, high);
    config.row_blocks = row_blocks;
    sk_sac *sac;
    if (sk_sac_create(&sac, &config) != SK_OK) {
        fprintf(stderr, "sac_update: %s\n", sk_last_error());
        return 1;
    }
    sk_pool *pool;
    if (sk_pool_create(&pool, threads) != SK_OK) {
        fprintf(stderr, "sac_update: %s\n", sk_last_error());
        return 1;
    }
    sk_parallel parallel = sk_pool_parallel(pool);
    if (threads > 1) sk_sac_set_parallel(sac, &parallel);
    uint64_t rng = sk_rng_seed(51, 3);
    float *obs = normals(ROWS * OBS, &rng), *next_obs = normals(ROWS * OBS, &rng);
    float *rewards = normals(ROWS, &rng), *actions = normals(ROWS * ACT, &rng);
    float *terminated = calloc(ROWS, sizeof(float)), *noise = normals(3 * ROWS * ACT, &rng);
    for (int i = 0; i < ROWS * ACT; i++) actions[i] = actions[i] > 1.0f ? 1.0f : actions[i] < -1.0f ? -1.0f : actions[i];
    sk_sac_batch batch = {ROWS, obs, actions, rewards, terminated, next_obs};

    sk_isa_level level = sk_isa_level_used();
    double peak = fma_peak_gflops(level, 25);
    printf("{\"peak\": \"%s\", \"gflops_one_core\": %.1f, \"cores\": %ld, \"threads\": %d}\n",
           sk_isa_level_name(level), peak, cores, threads);

    sk_sac_losses losses;
    int64_t step = 1;
    for (int i = 0; i < 10; i++) sk_sac_update_rng(sac, &batch, step++, &rng, &losses); /* warm */
    double *rates = calloc((size_t)rounds, sizeof(double)), *cpu_rates = calloc((size_t)rounds, sizeof(double));
    double *critic = calloc((size_t)rounds, sizeof(double)), *actor = calloc((size_t)rounds, sizeof(double));
    for (int round = 0; round < rounds; round++) {
        double start = now(), cpu_start = cpu_now();
        for (int i = 0; i < updates; i++) sk_sac_update_rng(sac, &batch, step++, &rng, &losses);
        rates[round] = updates / (now() - start);
        cpu_rates[round] = updates / (cpu_now() - cpu_start);
        start = now();
        for (int i = 0; i < updates; i++) sk_sac_critic_step(sac, &batch, noise, &losses);
        critic[round] = (now() - start) / updates;
        start = now();
        for (int i = 0; i < updates; i++)
            sk_sac_actor_step(sac, obs, ROWS, noise + ROWS * ACT, noise + 2 * ROWS * ACT, &losses);
        actor[round] = (now() - start) / updates;
        printf("{\"round\": %d, \"updates_per_s\": %.1f, \"qf_loss\": %.4g, \"alpha\": %.4g}\n",
               round, rates[round], (double)losses.qf_loss, (double)losses.alpha);
        fflush(stdout);
    }
    /* per update on average: one critic step and (policy_frequency actor steps every
     * policy_frequency updates) one actor step */
    double critic_flops = 2.0 * sk_sac_critic_macs(sac, ROWS), actor_flops = 2.0 * sk_sac_actor_macs(sac, ROWS);
    double flops = critic_flops + actor_flops;
    double rate = median(rates, rounds), critic_s = median(critic, rounds), actor_s = median(actor, rounds);
    double gflops = flops * rate / 1e9, cpu_gflops = flops * median(cpu_rates, rounds) / 1e9;
    printf("{\"updates_per_s\": %.1f, \"gflop_per_update\": %.4f, \"gflops\": %.1f, "
           "\"critic_ms\": %.3f, \"critic_gflops\": %.1f, \"actor_ms\": %.3f, \"actor_gflops\": %.1f, "
           "\"of_threads_peak\": %.3f, \"of_machine_peak\": %.3f, \"flop_1m_steps\": %.3g, "
           "\"minutes_1m_steps\": %.1f, \"gflops_per_cpu_s\": %.1f, \"per_cpu_s_of_one_core_peak\": %.3f}\n",
           rate, flops / 1e9, gflops, critic_s * 1e3, critic_flops / critic_s / 1e9, actor_s * 1e3,
           actor_flops / actor_s / 1e9, peak > 0 ? gflops / (peak * threads) : 0.0,
           peak > 0 ? gflops / (peak * (double)cores) : 0.0, flops * 1e6, 1e6 / rate / 60.0, cpu_gflops,
           peak > 0 ? cpu_gflops / peak : 0.0);
    sk_sac_destroy(sac);
    sk_pool_destroy(pool);
    free(obs), free(next_obs), free(rewards), free(actions), free(terminated), free(noise);
    free(rates), free(cpu_rates), free(critic), free(actor);
    return 0;
}
