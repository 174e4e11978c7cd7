/*
 * Issue 51 ask 6: SAC's learner against the machine's FLOP limit. CleanRL's networks at
 * HalfCheetah's sizes (obs 17, act 6, two 256 x 256 ReLU Q networks and actor, batch 256;
 * src/train/sac_core.h), updated on a fixed random batch with CleanRL's schedule (a critic step
 * every update; every 2nd, two actor and alpha steps; targets every update), on one thread.
 * Prints the core's FMA peak at the ISA level in use, then per round of UPDATES updates the
 * rate; the medians of updates/s, of the critic and of the actor steps alone, the GFLOP/s the
 * layers' multiply-adds reach (2 flops each), and that as a fraction of one core's peak and of
 * the machine's (cores x that). One JSON object per line.
 * usage: sac_update [ROUNDS=9] [UPDATES=40]
 */
#include "core/isa.h"
#include "core/rng.h"
#include "fma_peak.h"
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

static float *normals(size_t n, uint64_t *rng) {
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = (float)sk_rng_normal(rng);
    return x;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 9, updates = argc > 2 ? atoi(argv[2]) : 40;
    if (rounds < 1 || updates < 2) {
        fprintf(stderr, "usage: sac_update [ROUNDS >= 1] [UPDATES >= 2]\n");
        return 2;
    }
    float low[ACT], high[ACT];
    for (int d = 0; d < ACT; d++) low[d] = -1.0f, high[d] = 1.0f;
    sk_sac_config config = sk_sac_defaults(OBS, ACT, low, high);
    sk_sac *sac;
    if (sk_sac_create(&sac, &config) != SK_OK) {
        fprintf(stderr, "sac_update: %s\n", sk_last_error());
        return 1;
    }
    uint64_t rng = sk_rng_seed(51, 3);
    float *obs = normals(ROWS * OBS, &rng), *next_obs = normals(ROWS * OBS, &rng);
    float *rewards = normals(ROWS, &rng), *actions = normals(ROWS * ACT, &rng);
    float *terminated = calloc(ROWS, sizeof(float)), *noise = normals(3 * ROWS * ACT, &rng);
    for (int i = 0; i < ROWS * ACT; i++) actions[i] = actions[i] > 1.0f ? 1.0f : actions[i] < -1.0f ? -1.0f : actions[i];
    sk_sac_batch batch = {ROWS, obs, actions, rewards, terminated, next_obs};

    sk_isa_level level = sk_isa_level_used();
    double peak = fma_peak_gflops(level, 25);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("{\"peak\": \"%s\", \"gflops_one_core\": %.1f, \"cores\": %ld}\n",
           sk_isa_level_name(level), peak, cores);

    sk_sac_losses losses;
    int64_t step = 1;
    for (int i = 0; i < 10; i++) sk_sac_update_rng(sac, &batch, step++, &rng, &losses); /* warm */
    double *rates = calloc((size_t)rounds, sizeof(double));
    double *critic = calloc((size_t)rounds, sizeof(double)), *actor = calloc((size_t)rounds, sizeof(double));
    for (int round = 0; round < rounds; round++) {
        double start = now();
        for (int i = 0; i < updates; i++) sk_sac_update_rng(sac, &batch, step++, &rng, &losses);
        rates[round] = updates / (now() - start);
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
    double gflops = flops * rate / 1e9;
    printf("{\"updates_per_s\": %.1f, \"gflop_per_update\": %.4f, \"gflops\": %.1f, "
           "\"critic_ms\": %.3f, \"critic_gflops\": %.1f, \"actor_ms\": %.3f, \"actor_gflops\": %.1f, "
           "\"of_one_core_peak\": %.3f, \"of_machine_peak\": %.3f, \"flop_1m_steps\": %.3g, "
           "\"minutes_1m_steps\": %.1f}\n",
           rate, flops / 1e9, gflops, critic_s * 1e3, critic_flops / critic_s / 1e9, actor_s * 1e3,
           actor_flops / actor_s / 1e9, peak > 0 ? gflops / peak : 0.0,
           peak > 0 ? gflops / (peak * (double)cores) : 0.0, flops * 1e6, 1e6 / rate / 60.0);
    sk_sac_destroy(sac);
    free(obs), free(next_obs), free(rewards), free(actions), free(terminated), free(noise);
    free(rates), free(critic), free(actor);
    return 0;
}
