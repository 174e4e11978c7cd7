/*
 * The checker's comparisons of two runs' I/O (src/check/check.c drives the runs): the first
 * difference of observations (floats, or a uint8 env's bytes), masks, rewards, flags, final
 * observations and episode logs, named for the report.
 */
#include "check_internal.h"

#include <string.h>

static bool differ_floats(const float *a, const float *b, int count, int *at) {
    for (int k = 0; k < count; k++)
        if (memcmp(&a[k], &b[k], sizeof a[k]) != 0) {
            *at = k;
            return true;
        }
    return false;
}

static bool differ_bytes(const uint8_t *a, const uint8_t *b, int count, int *at) {
    for (int k = 0; k < count; k++)
        if (a[k] != b[k]) {
            *at = k;
            return true;
        }
    return false;
}

bool sk_ck_compare_io(sk_ck_run *run, sk_ck_check check, long long step, const sk_env_io *a,
                      const sk_env_io *b, const char *a_name, const char *b_name) {
    const sk_env_def *env = run->env;
    int O = env->obs_size, L = env->num_log_fields, M = env->mask_size, k;
    for (int i = 0; i < run->num_rows; i++) { /* a multi-agent env's rows */
        size_t si = (size_t)i;
        if (a->obs_u8) {
            if (differ_bytes(a->obs_u8 + si * (size_t)O, b->obs_u8 + si * (size_t)O, O, &k)) {
                sk_ck_fail(run, check, i, step, "obs[%d] = %d in %s, %d in %s", k,
                           a->obs_u8[si * (size_t)O + (size_t)k], a_name,
                           b->obs_u8[si * (size_t)O + (size_t)k], b_name);
                return false;
            }
        } else if (differ_floats(a->obs + si * (size_t)O, b->obs + si * (size_t)O, O, &k)) {
            const float *obs_a = a->obs + si * (size_t)O, *obs_b = b->obs + si * (size_t)O;
            sk_ck_fail(run, check, i, step, "obs[%d] = %.9g in %s, %.9g in %s", k, (double)obs_a[k],
                       a_name, (double)obs_b[k], b_name);
            return false;
        }
        if (M > 0) {
            const uint8_t *mask_a = a->masks + si * (size_t)M, *mask_b = b->masks + si * (size_t)M;
            for (k = 0; k < M; k++)
                if (mask_a[k] != mask_b[k]) {
                    sk_ck_fail(run, check, i, step, "masks[%d] = %d in %s, %d in %s", k, mask_a[k],
                               a_name, mask_b[k], b_name);
                    return false;
                }
        }
        if (a->active && a->active[i] != b->active[i]) {
            sk_ck_fail(run, check, i, step, "active = %d in %s, %d in %s", a->active[i], a_name,
                       b->active[i], b_name);
            return false;
        }
        if (step == 0) continue; /* a reset writes observations and masks only */
        if (differ_floats(a->rewards + si, b->rewards + si, 1, &k) ||
            a->terminated[i] != b->terminated[i] || a->truncated[i] != b->truncated[i]) {
            sk_ck_fail(run, check, i, step,
                       "reward, terminated, truncated = %.9g, %d, %d in %s; "
                       "%.9g, %d, %d in %s",
                       (double)a->rewards[i], a->terminated[i], a->truncated[i], a_name,
                       (double)b->rewards[i], b->terminated[i], b->truncated[i], b_name);
            return false;
        }
        if (!a->terminated[i] && !a->truncated[i]) continue;
        if (a->final_obs_u8) {
            const uint8_t *fa = a->final_obs_u8 + si * (size_t)O;
            const uint8_t *fb = b->final_obs_u8 + si * (size_t)O;
            if (differ_bytes(fa, fb, O, &k)) {
                sk_ck_fail(run, check, i, step, "final_obs[%d] = %d in %s, %d in %s", k, fa[k],
                           a_name, fb[k], b_name);
                return false;
            }
        } else if (differ_floats(a->final_obs + si * (size_t)O, b->final_obs + si * (size_t)O, O,
                                 &k)) {
            const float *fa = a->final_obs + si * (size_t)O, *fb = b->final_obs + si * (size_t)O;
            sk_ck_fail(run, check, i, step, "final_obs[%d] = %.9g in %s, %.9g in %s", k,
                       (double)fa[k], a_name, (double)fb[k], b_name);
            return false;
        }
        const float *la = a->episode_log + si * (size_t)L, *lb = b->episode_log + si * (size_t)L;
        if (differ_floats(la, lb, L, &k)) {
            sk_ck_fail(run, check, i, step, "episode_log[%d] = %.9g in %s, %.9g in %s", k,
                       (double)la[k], a_name, (double)lb[k], b_name);
            return false;
        }
    }
    return true;
}

bool sk_ck_trajectories_differ(const sk_ck_run *run, const sk_env_io *a, const sk_env_io *b,
                               long long step) {
    size_t N = (size_t)run->num_rows, O = (size_t)run->env->obs_size;
    if (a->obs_u8 ? memcmp(a->obs_u8, b->obs_u8, N * O) != 0
                  : memcmp(a->obs, b->obs, N * O * sizeof(float)) != 0)
        return true;
    return step > 0 && (memcmp(a->rewards, b->rewards, N * sizeof(float)) != 0 ||
                        memcmp(a->terminated, b->terminated, N) != 0);
}
