/* The raw physics of a MuJoCo model on one thread (bench/mujoco_speed.sh, issue 50 ask 6): the
 * limit a CPU env steps at. mj_step in a loop, a new uniform random ctrl within ctrlrange every
 * FRAME_SKIP steps (an env step), mj_resetData every 1000 env steps (an episode's limit), for
 * SECONDS; prints "mj_steps wall_seconds cpu_seconds".
 * usage: mujoco_raw MODEL FRAME_SKIP SECONDS */
#include <mujoco/mujoco.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double uniform(uint64_t *s) { /* xorshift64*, in [0, 1) */
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ULL) >> 11) * 0x1.0p-53;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: mujoco_raw MODEL FRAME_SKIP SECONDS\n");
        return 2;
    }
    char error[1000] = "";
    mjModel *m = mj_loadXML(argv[1], NULL, error, sizeof error);
    int frame_skip = atoi(argv[2]);
    double seconds = atof(argv[3]);
    if (!m || frame_skip < 1 || !(seconds > 0)) {
        fprintf(stderr, "mujoco_raw: %s (expected a model file, a frame_skip >= 1, seconds > 0)\n",
                m ? "bad FRAME_SKIP or SECONDS" : error);
        return 2;
    }
    mjData *d = mj_makeData(m);
    uint64_t rng = 88172645463325252ULL;
    long steps = 0;
    double wall = now(CLOCK_MONOTONIC), cpu = now(CLOCK_PROCESS_CPUTIME_ID);
    for (long env_step = 0; now(CLOCK_MONOTONIC) - wall < seconds; env_step += 1000) {
        mj_resetData(m, d);
        for (int k = 0; k < 1000; k++) {
            for (int a = 0; a < m->nu; a++) {
                const mjtNum *range = m->actuator_ctrlrange + 2 * a;
                d->ctrl[a] = range[0] + (range[1] - range[0]) * uniform(&rng);
            }
            for (int f = 0; f < frame_skip; f++) mj_step(m, d);
            steps += frame_skip;
        }
    }
    printf("%ld %.4f %.4f\n", steps, now(CLOCK_MONOTONIC) - wall,
           now(CLOCK_PROCESS_CPUTIME_ID) - cpu);
    mj_deleteData(d);
    mj_deleteModel(m);
    return 0;
}
