/*
 * The env checker's state checks (the arrays a checkpoint saves: sane,
 * within their ranges, restored into a fresh instance that then continues bit
 * for bit, and a corrupted state refused) and its speed measurement, through
 * sk_vec as training and checkpoints use the env.
 */
#define _GNU_SOURCE /* sched_getaffinity, getloadavg */
#include "check_internal.h"

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Room for a state_arrays that lists more arrays than it may. */
#define MAX_LISTED (4 * SK_MAX_ENV_ARRAYS)
/* How often (in checks per run) the env's own state is held to its ranges. */
#define STATE_CHECKS_PER_RUN 16
/* Each speed measurement steps for this long, SPEED_NUM_ENVS envs (or the
 * run's, for a slow env). */
#define SPEED_SECONDS 0.1
#define SPEED_NUM_ENVS 1024
/* Under this share of its threads' possible CPU time, a process was kept off the cores. */
#define BUSY_CPU_SHARE 0.75
/* Integers up to 2^53 convert to double exactly; a range bound above it
 * cannot be stepped over by one. */
#define EXACT_INTEGER_LIMIT 9007199254740992.0

static size_t type_bytes(sk_array_type type) {
    switch (type) {
    case SK_ARRAY_F32: case SK_ARRAY_I32: return 4;
    case SK_ARRAY_F64: case SK_ARRAY_I64: case SK_ARRAY_U64: return 8;
    case SK_ARRAY_U8: return 1;
    }
    return 0;
}

/* value must be representable in the array's type. */
static void write_value(const sk_env_array *a, size_t k, double value) {
    switch (a->type) {
    case SK_ARRAY_F32: ((float *)a->data)[k] = (float)value; break;
    case SK_ARRAY_F64: ((double *)a->data)[k] = value; break;
    case SK_ARRAY_I32: ((int32_t *)a->data)[k] = (int32_t)value; break;
    case SK_ARRAY_I64: ((int64_t *)a->data)[k] = (int64_t)value; break;
    case SK_ARRAY_U8: ((uint8_t *)a->data)[k] = (uint8_t)value; break;
    case SK_ARRAY_U64: ((uint64_t *)a->data)[k] = (uint64_t)value; break;
    }
}

/* The values an integer type holds, as doubles. */
static void type_limits(sk_array_type type, double *lo, double *hi) {
    switch (type) {
    case SK_ARRAY_I32: *lo = INT32_MIN, *hi = INT32_MAX; return;
    case SK_ARRAY_I64: *lo = -EXACT_INTEGER_LIMIT, *hi = EXACT_INTEGER_LIMIT; return;
    case SK_ARRAY_U8: *lo = 0, *hi = UINT8_MAX; return;
    case SK_ARRAY_U64: *lo = 0, *hi = EXACT_INTEGER_LIMIT; return;
    default: *lo = -INFINITY, *hi = INFINITY; return;
    }
}

/* The env's arrays, checked for what a checkpoint needs of them: -1 (a
 * state_arrays failure recorded) when they are not usable. */
static int list_arrays(sk_ck_run *run, sk_vec *vec, sk_env_array *arrays, long long step) {
    memset(arrays, 0, MAX_LISTED * sizeof *arrays);
    int count = run->env->state_arrays(sk_vec_state(vec), arrays);
    if (count < 0 || count > SK_MAX_ENV_ARRAYS) {
        sk_ck_fail(run, CK_STATE_ARRAYS, -1, step, "state_arrays returned %d (expected 0..%d)",
                   count, SK_MAX_ENV_ARRAYS);
        return -1;
    }
    for (int a = 0; a < count; a++) {
        const sk_env_array *array = &arrays[a];
        const char *problem = NULL;
        if (!array->name || !array->name[0]) problem = "has no name";
        else if (type_bytes(array->type) == 0) problem = "has an unknown type";
        else if (array->count < 1) problem = "has count < 1";
        else if (!array->data) problem = "has no data";
        else if (array->has_range && !(array->lo <= array->hi))
            problem = "has a range with lo > hi or NaN";
        for (int b = 0; !problem && b < a; b++)
            if (strcmp(arrays[b].name, array->name) == 0)
                problem = "repeats an earlier array's name";
        if (problem) {
            sk_ck_fail(run, CK_STATE_ARRAYS, -1, step, "array %d (\"%s\", type %d, count %d) %s", a,
                       array->name ? array->name : "(null)", (int)array->type, array->count,
                       problem);
            return -1;
        }
    }
    return count;
}

/* The env's own state, as it runs, within its declared ranges (else a
 * state_arrays failure) and accepted by its check_state. */
static void check_genuine(sk_ck_run *run, sk_vec *vec, long long step) {
    if (sk_ck_failed(run, CK_STATE_ARRAYS) || sk_ck_failed(run, CK_CHECK_STATE)) return;
    if (sk_vec_check_state(vec, "the env's own state") == SK_OK) return;
    char message[1024]; /* sk_last_error's buffer is the one written next */
    snprintf(message, sizeof message, "%s", sk_last_error());
    sk_error_clear();
    bool refused = run->env->check_state &&
                   sk_fail_if_silent(run->env->check_state(sk_vec_state(vec), run->num_envs),
                                     "%s's check_state", run->env->id) != SK_OK;
    if (refused)
        sk_ck_fail(run, CK_CHECK_STATE, -1, step, "check_state refused the env's own state: %s",
                   sk_last_error());
    else
        sk_ck_fail(run, CK_STATE_ARRAYS, -1, step, "%s", message);
}

static void step_with_random_actions(sk_ck_run *run, sk_vec *vec, uint64_t *rng) {
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    sk_ck_random_actions(run->env, b->masks, b->actions, b->actions_continuous, 0, run->num_rows,
                         rng);
    sk_vec_step(vec);
}

/* Copies x's arrays into y's (which must list the same ones) and checks the
 * copy is accepted; false (recorded) otherwise. */
static bool restore_into(sk_ck_run *run, sk_vec *y, const sk_env_array *from, int count,
                         long long step) {
    sk_env_array into[MAX_LISTED];
    if (list_arrays(run, y, into, step) != count) {
        sk_ck_fail(run, CK_STATE_RESTORE, -1, step,
                   "a fresh instance lists other state arrays "
                   "than the running one");
        return false;
    }
    for (int a = 0; a < count; a++) {
        if (strcmp(into[a].name, from[a].name) != 0 || into[a].type != from[a].type ||
            into[a].count != from[a].count) {
            sk_ck_fail(run, CK_STATE_RESTORE, -1, step,
                       "array %d is \"%s\" (count %d) in a fresh "
                       "instance but \"%s\" (count %d) in the running one",
                       a, into[a].name, into[a].count, from[a].name, from[a].count);
            return false;
        }
        memmove(into[a].data, from[a].data,
                (size_t)run->num_envs * (size_t)from[a].count * type_bytes(from[a].type));
    }
    if (sk_vec_check_state(y, "the restored state") != SK_OK) {
        sk_ck_fail(run, CK_STATE_RESTORE, -1, step,
                   "the state saved at step %lld was refused when "
                   "restored: %s",
                   step, sk_last_error());
        return false;
    }
    return true;
}

/* Puts values a checkpoint must not pass into one element of each array of
 * the last env (an out-of-range one where the array has a range; where it has
 * none but the env has a check_state, the type's most negative integer, which
 * no index or count can be) and checks each is refused. Returns how many
 * were tried. */
static int try_corruptions(sk_ck_run *run, sk_vec *vec) {
    sk_env_array arrays[MAX_LISTED];
    int count = list_arrays(run, vec, arrays, -1), tried = 0;
    int env_index = run->num_envs - 1;
    for (int a = 0; a < count && !sk_ck_failed(run, CK_CHECK_STATE); a++) {
        const sk_env_array *array = &arrays[a];
        bool floats = array->type == SK_ARRAY_F32 || array->type == SK_ARRAY_F64;
        double type_lo, type_hi, values[2];
        type_limits(array->type, &type_lo, &type_hi);
        int num_values = 0;
        if (array->has_range && floats) {
            values[num_values++] = NAN;
        } else if (array->has_range) {
            if (array->lo - 1 >= type_lo) values[num_values++] = floor(array->lo) - 1;
            if (array->hi + 1 <= type_hi) values[num_values++] = ceil(array->hi) + 1;
        } else if (run->env->check_state &&
                   (array->type == SK_ARRAY_I32 || array->type == SK_ARRAY_I64)) {
            values[num_values++] = type_lo;
        }
        size_t k = (size_t)env_index * (size_t)array->count, bytes = type_bytes(array->type);
        unsigned char saved[8], *element = (unsigned char *)array->data + k * bytes;
        memcpy(saved, element, bytes);
        for (int v = 0; v < num_values; v++) {
            write_value(array, k, values[v]);
            sk_status status = sk_vec_check_state(vec, "a corrupted state");
            memcpy(element, saved, bytes);
            tried++;
            if (status == SK_OK) {
                if (array->has_range)
                    sk_ck_fail(run, CK_CHECK_STATE, env_index, -1,
                               "env.%s[%zu] = %.17g was accepted "
                               "though its range is [%.17g, %.17g]",
                               array->name, k, values[v], array->lo, array->hi);
                else
                    sk_ck_fail(run, CK_CHECK_STATE, env_index, -1,
                               "env.%s[%zu] = %.17g was accepted "
                               "(the array has no range, and check_state did not refuse it)",
                               array->name, k, values[v]);
                break;
            }
        }
    }
    return tried;
}

sk_status sk_ck_check_state(sk_ck_run *run) {
    sk_vec *x = NULL, *y = NULL;
    sk_status status = sk_vec_create(&x, run->env, run->num_envs, 1, run->cfg);
    if (status == SK_OK) status = sk_vec_create(&y, run->env, run->num_envs, 1, run->cfg);
    if (status != SK_OK) goto done;
    sk_env_array arrays[MAX_LISTED];
    uint64_t rng = sk_rng_seed(run->seed, 0x57a7e000ULL);
    sk_vec_reset(x, run->seed);
    int count = list_arrays(run, x, arrays, 0);
    if (count < 0) {
        sk_ck_skip(run, CK_STATE_RESTORE, "the state arrays are not usable (see state_arrays)");
        sk_ck_skip(run, CK_CHECK_STATE, "the state arrays are not usable (see state_arrays)");
        goto done;
    }
    check_genuine(run, x, 0);
    int first = SK_MAX(1, run->steps / 2), every = SK_MAX(1, first / STATE_CHECKS_PER_RUN);
    for (int step = 1; step <= first; step++) {
        step_with_random_actions(run, x, &rng);
        if (step % every == 0 || step == first) {
            count = list_arrays(run, x, arrays, step);
            if (count < 0) goto done;
            check_genuine(run, x, step);
        }
    }
    sk_ck_note(run, CK_STATE_ARRAYS,
               "%d arrays, names unique, values within their ranges over %d "
               "steps",
               count, first);
    sk_vec_reset(y, run->seed + 0x5eed);
    sk_vec *corrupted = NULL; /* the instance whose state is corrupted next */
    if (run->partial_state) {
        sk_ck_skip(run, CK_STATE_RESTORE,
                   "the state arrays hold part of the env's state only (a "
                   "Python-defined env's own objects are not saved)");
        corrupted = x;
    } else if (restore_into(run, y, arrays, count, first)) {
        int second = SK_MAX(1, run->steps - first);
        const sk_vec_buffers *xb = sk_vec_buffers_of(x), *yb = sk_vec_buffers_of(y);
        size_t action_bytes = (size_t)run->num_rows * sk_ck_action_row_bytes(run->env);
        for (int step = 1; step <= second; step++) {
            /* the copy gets the original's actions: its masks were not part of the state */
            sk_ck_random_actions(run->env, xb->masks, xb->actions, xb->actions_continuous, 0,
                                 run->num_rows, &rng);
            if (xb->actions) memcpy(yb->actions, xb->actions, action_bytes);
            else memcpy(yb->actions_continuous, xb->actions_continuous, action_bytes);
            sk_ck_fill_vec_canaries(run, x);
            sk_ck_fill_vec_canaries(run, y);
            sk_vec_step(x);
            sk_vec_step(y);
            if (!sk_ck_compare_io(run, CK_STATE_RESTORE, first + step, sk_vec_io(x), sk_vec_io(y),
                                  "the original", "the restored copy"))
                break;
        }
        sk_ck_note(run, CK_STATE_RESTORE,
                   "the state saved at step %d, restored into a fresh "
                   "instance, continued bit for bit for %d steps",
                   first, second);
        corrupted = y;
    } else {
        sk_ck_skip(run, CK_CHECK_STATE, "the state could not be restored (see state_restore)");
    }
    int tried = corrupted ? try_corruptions(run, corrupted) : -1;
    if (tried == 0)
        sk_ck_skip(run, CK_CHECK_STATE,
                   "nothing to test: no array declares a range and the env has "
                   "no check_state, so a corrupted checkpoint would be trusted");
    else if (tried > 0)
        sk_ck_note(run, CK_CHECK_STATE, "%d corrupted values refused%s", tried,
                   run->env->check_state ? "; the env's own states accepted" : " by the ranges");
done:
    sk_vec_destroy(x);
    sk_vec_destroy(y);
    return status;
}

static double process_cpu_seconds(void) {
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return NAN;
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void sk_ck_speed_hint(char *out, size_t size, double one, double all, int threads,
                      const sk_ck_contention *seen) {
    out[0] = '\0';
    if (!(one > 0) || !(all < SK_CK_SLOW_THREADS_RATIO * one)) return;
    double slower = all > 0 ? one / all : INFINITY;
    bool loaded = seen->load_average >= seen->cores_online;
    bool pinned = seen->cores_allowed < threads;
    bool starved = seen->cpu_share < BUSY_CPU_SHARE;
    char load[48] = "load average unknown";
    if (isfinite(seen->load_average)) snprintf(load, sizeof load, "load average %.1f",
                                               seen->load_average);
    int at = snprintf(out, size, "; %d threads ran %.1fx slower than 1: ", threads, slower);
    if (at < 0 || (size_t)at >= size) return;
    if (loaded || pinned || starved)
        snprintf(out + at, size - at,
                 "the machine is busy (%s on %d cores, %d of them this process's; its threads "
                 "got %.0f%% of the CPU time they could use), so they waited for cores and for "
                 "each other: contention is the likely cause, not the env; measure again on an "
                 "idle machine",
                 load, seen->cores_online, seen->cores_allowed, 100.0 * seen->cpu_share);
    else
        snprintf(out + at, size - at,
                 "the machine is not busy (%s on %d cores; the threads got %.0f%% of their CPU "
                 "time), so the threads' hand-offs outweigh the env's steps: try more envs "
                 "(--num-envs)",
                 load, seen->cores_online, 100.0 * seen->cpu_share);
}

/* What the machine did while `threads` threads ran for wall_seconds using cpu_seconds. */
static sk_ck_contention contention_seen(int threads, double wall_seconds, double cpu_seconds) {
    sk_ck_contention seen = {.load_average = NAN, .cpu_share = NAN};
    double load[1];
    if (getloadavg(load, 1) == 1) seen.load_average = load[0];
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    seen.cores_online = online > 0 ? (int)online : 1;
    cpu_set_t allowed;
    seen.cores_allowed = sched_getaffinity(0, sizeof allowed, &allowed) == 0
                             ? CPU_COUNT(&allowed) : seen.cores_online;
    if (wall_seconds > 0 && threads > 0) seen.cpu_share = cpu_seconds / (wall_seconds * threads);
    return seen;
}

/* Steps per second of a fresh sk_vec of `threads` workers, for about
 * SPEED_SECONDS or the run's steps; 0 with a status on failure. */
static sk_status steps_per_second(sk_ck_run *run, int num_envs, int threads, double *sps,
                                  int *workers) {
    sk_vec *vec = NULL;
    sk_status status = sk_vec_create(&vec, run->env, num_envs, threads, run->cfg);
    if (status != SK_OK) return status;
    *workers = sk_vec_num_workers(vec);
    uint64_t rng = sk_rng_seed(run->seed, 0x5eedULL);
    sk_vec_reset(vec, run->seed);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    double start = sk_now(), elapsed = 0.0;
    long long steps = 0;
    do {
        /* actions within the masks where there are masks, else drawn once */
        if (steps == 0 || b->masks)
            sk_ck_random_actions(run->env, b->masks, b->actions, b->actions_continuous, 0,
                                 num_envs * run->num_agents, &rng);
        sk_vec_step(vec);
        steps++;
        elapsed = sk_now() - start;
    } while (elapsed < SPEED_SECONDS);
    *sps = (double)steps * num_envs / SK_MAX(elapsed, 1e-9);
    sk_vec_destroy(vec);
    return SK_OK;
}

sk_status sk_ck_measure_speed(sk_ck_run *run) {
    double one = 0.0, all = 0.0;
    int workers = 1, all_workers = 1;
    /* a batch as large as training's, so that the threads' hand-offs do not dominate */
    bool slow = sk_env_extras_of(run->env)->bench_num_envs > 0 || run->whole_batch;
    int num_envs = slow ? run->num_envs : SK_MAX(run->num_envs, SPEED_NUM_ENVS);
    sk_status status = steps_per_second(run, num_envs, 1, &one, &workers);
    if (status != SK_OK) return status;
    if (run->whole_batch || num_envs < 2 || run->threads < 2) {
        sk_ck_note(run, CK_SPEED, "%.3g env steps/s on 1 thread (%d envs)", one, num_envs);
        return SK_OK;
    }
    double wall = sk_now(), cpu = process_cpu_seconds();
    status = steps_per_second(run, num_envs, run->threads, &all, &all_workers);
    if (status != SK_OK) return status;
    sk_ck_contention seen =
        contention_seen(all_workers, sk_now() - wall, process_cpu_seconds() - cpu);
    char hint[384];
    sk_ck_speed_hint(hint, sizeof hint, one, all, all_workers, &seen);
    sk_ck_note(run, CK_SPEED, "%.3g env steps/s on 1 thread, %.3g on %d threads (%d envs; %s)%s",
               one, all, all_workers, num_envs,
               run->env->mask_size ? "actions drawn within the masks each step, on one thread"
                                   : "actions drawn once",
               hint);
    return SK_OK;
}
