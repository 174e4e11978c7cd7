/*
 * The env-output checks on their own (issue 30, items 5 and 6): a vec of
 * NUM_ENVS envs of ENV stepped on one thread, alternating blocks of plain
 * steps (sk_vec_step_range) and checked steps (sk_vec_step_checked: the NaN
 * canary before the step, the scan of observations, rewards, final_obs and
 * masks after), each block timed in this thread's CPU time so that other
 * processes on the machine do not count. Actions are all 0 (the env's cost
 * barely depends on them). Prints one JSON object: nanoseconds per env step
 * plain and checked, and their difference, which is the checks' cost per env
 * step to set against a training step's (bench/env_checks.sh).
 * usage: env_checks_bench [ENV=CartPole-v1] [NUM_ENVS=256] [BLOCKS=200] [STEPS_PER_BLOCK=200]
 */
#include "vec/vec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double thread_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "CartPole-v1";
    int num_envs = argc > 2 ? atoi(argv[2]) : 256;
    int blocks = argc > 3 ? atoi(argv[3]) : 200, steps = argc > 4 ? atoi(argv[4]) : 200;
    const sk_env_def *env = sk_env_find(name);
    sk_vec *vec = NULL;
    if (!env || num_envs < 1 || blocks < 1 || steps < 1 ||
        sk_vec_create(&vec, env, num_envs, 1, NULL) != SK_OK) {
        fprintf(stderr, "env_checks_bench: %s\n", sk_last_error());
        return 1;
    }
    sk_vec_reset(vec, 1);
    double *plain = malloc((size_t)blocks * sizeof *plain);
    double *checked = malloc((size_t)blocks * sizeof *checked);
    int64_t step = 0;
    for (int b = 0; b < blocks; b++) {
        double start = thread_seconds();
        for (int t = 0; t < steps; t++) sk_vec_step_range(vec, 0, num_envs);
        double middle = thread_seconds();
        for (int t = 0; t < steps; t++)
            if (!sk_vec_step_checked(vec, 0, num_envs, ++step)) {
                sk_vec_fault(vec);
                fprintf(stderr, "env_checks_bench: %s\n", sk_last_error());
                return 1;
            }
        double end = thread_seconds();
        double env_steps = (double)steps * num_envs;
        plain[b] = (middle - start) / env_steps * 1e9;
        checked[b] = (end - middle) / env_steps * 1e9;
    }
    qsort(plain, (size_t)blocks, sizeof *plain, compare);
    qsort(checked, (size_t)blocks, sizeof *checked, compare);
    double p = plain[blocks / 2], c = checked[blocks / 2];
    printf("{\"env\": \"%s\", \"num_envs\": %d, \"blocks\": %d, \"steps_per_block\": %d, "
           "\"plain_ns_per_env_step\": %.3f, \"checked_ns_per_env_step\": %.3f, "
           "\"check_ns_per_env_step\": %.3f}\n",
           name, num_envs, blocks, steps, p, c, c - p);
    free(plain);
    free(checked);
    sk_vec_destroy(vec);
    return 0;
}
