/*
 * Two builds of an env module stepped in one process, in alternating slices, each slice's
 * thread CPU time measured: an A/B of env speed that holds on a shared machine, where two
 * `skinner bench env` runs a minute apart see different loads (bench/results/
 * 2026-11-27-*-minatar-env-speed-2.md). Also prints the store bound for the env's
 * observation rows: memset of num_envs rows of obs_size bytes, row after row, as a step writes
 * them.
 *
 *   minatar_ab A/skinner-minatar.so B/skinner-minatar.so MinAtar/Breakout-v1 [SECONDS [ENVS]]
 *
 * Random uniform actions (the bench's hash), autoreset on, the env's default config. Prints
 * M env steps per CPU-second of each build and B/A.
 */
#include <skinner.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLICE_SECONDS 0.2
#define STEPS_PER_CLOCK_READ 16

static double thread_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static uint32_t mix32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

typedef struct build {
    const sk_env_def *env;
    void *state;
    sk_env_io io;
    int32_t *actions; /* (num_envs) */
    uint32_t key;     /* the actions' hash counter */
    double cpu_seconds;
    long long steps;
} build;

static void *alloc_or_die(size_t bytes) {
    void *memory = calloc(1, bytes);
    if (!memory) {
        fprintf(stderr, "minatar_ab: out of memory for %zu bytes\n", bytes);
        exit(1);
    }
    return memory;
}

static void load(build *b, const char *path, const char *id, int num_envs) {
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!module) {
        fprintf(stderr, "minatar_ab: %s\n", dlerror());
        exit(1);
    }
    const sk_env_def *const *const *list = dlsym(module, "sk_plugin_envs");
    for (const sk_env_def *const *env = list ? *list : NULL; env && *env; env++)
        if (strcmp((*env)->id, id) == 0) b->env = *env;
    if (!b->env || b->env->obs_dtype != SK_OBS_U8) {
        fprintf(stderr, "minatar_ab: %s has no uint8 env %s\n", path, id);
        exit(1);
    }
    sk_config *cfg = sk_config_new();
    if (b->env->create(&b->state, num_envs, cfg) != SK_OK) {
        fprintf(stderr, "minatar_ab: %s: %s\n", id, sk_last_error());
        exit(1);
    }
    sk_config_free(cfg);
    size_t count = (size_t)num_envs, obs_bytes = count * (size_t)b->env->obs_size;
    b->actions = alloc_or_die(count * sizeof *b->actions);
    b->io = (sk_env_io){.actions = b->actions,
                        .rewards = alloc_or_die(count * sizeof(float)),
                        .terminated = alloc_or_die(count),
                        .truncated = alloc_or_die(count),
                        .episode_log = alloc_or_die(count * 2 * sizeof(float)),
                        .obs_u8 = alloc_or_die(obs_bytes),
                        .final_obs_u8 = alloc_or_die(obs_bytes)};
    b->key = 7;
    b->env->reset(b->state, &b->io, 0, num_envs, 1);
}

static void run_slice(build *b, int num_envs) {
    uint32_t size = (uint32_t)b->env->action_space.head_sizes[0];
    double start = thread_seconds();
    while (thread_seconds() - start < SLICE_SECONDS) {
        for (int k = 0; k < STEPS_PER_CLOCK_READ; k++) {
            uint32_t key = mix32(b->key++);
            for (int i = 0; i < num_envs; i++)
                b->actions[i] = (int32_t)(((mix32(key + (uint32_t)i) >> 16) * size) >> 16);
            b->env->step(b->state, &b->io, 0, num_envs);
        }
        b->steps += (long long)STEPS_PER_CLOCK_READ * num_envs;
    }
    b->cpu_seconds += thread_seconds() - start;
}

/* Rows of obs_size bytes memset one after another over num_envs rows: M rows per CPU-second. */
static double store_bound(int obs_size, int num_envs) {
    size_t row = (size_t)obs_size, count = (size_t)num_envs;
    unsigned char *rows = alloc_or_die(row * count);
    long long written = 0;
    double start = thread_seconds();
    while (thread_seconds() - start < 1.0) {
        for (size_t i = 0; i < count; i++) {
            memset(rows + i * row, (int)(i & 1), row);
            __asm__ volatile("" ::: "memory"); /* each row's stores happen */
        }
        written += (long long)count;
    }
    double rate = (double)written / (thread_seconds() - start);
    free(rows);
    return rate / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: minatar_ab A.so B.so ENV_ID [SECONDS [NUM_ENVS]]\n");
        return 2;
    }
    double seconds = argc > 4 ? atof(argv[4]) : 6.0;
    int num_envs = argc > 5 ? atoi(argv[5]) : 4096;
    if (!(seconds >= 2 * SLICE_SECONDS) || num_envs < 1) { /* at least one slice each */
        fprintf(stderr, "minatar_ab: SECONDS >= %g (one slice of each build) and NUM_ENVS >= 1 "
                "expected, got %s and %d\n", 2 * SLICE_SECONDS, argc > 4 ? argv[4] : "6", num_envs);
        return 2;
    }
    build a = {0}, b = {0};
    load(&a, argv[1], argv[3], num_envs);
    load(&b, argv[2], argv[3], num_envs);
    for (int slice = 0; slice < (int)(seconds / (2 * SLICE_SECONDS)); slice++) {
        run_slice(&a, num_envs);
        run_slice(&b, num_envs);
    }
    double rate_a = (double)a.steps / a.cpu_seconds / 1e6;
    double rate_b = (double)b.steps / b.cpu_seconds / 1e6;
    printf("%s, %d envs: A %.2f  B %.2f M steps per CPU-second (B/A %.3f); store bound %.0f M "
           "rows of %d bytes per CPU-second\n",
           argv[3], num_envs, rate_a, rate_b, rate_b / rate_a,
           store_bound(a.env->obs_size, num_envs), a.env->obs_size);
    return 0;
}
