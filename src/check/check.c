/*
 * The env checker: drives an env's table with buffers of its own, each fenced
 * by guard zones and filled with canaries before every reset and step, so that
 * a slot never written, a write past a row's end or into a row outside the
 * range stepped is seen where it happens; checks the contract (spaces, flags,
 * time limit, episode statistics) on the way; and compares runs of the same
 * seed (again, and over threads through sk_vec) and of different seeds.
 */
#include "check_internal.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/* A quiet NaN with a payload no arithmetic produces: a float slot still
 * holding it was never written. Byte buffers get CANARY_BYTE, which is
 * neither 0 nor 1, and so do the guard zones around every buffer. */
#define CANARY_BITS 0x7fc5a5a5u
#define CANARY_BYTE 0xa5
/* Bytes of guard zone on each side of a buffer (a multiple of 64 keeps the
 * data as aligned as sk_alloc's). */
#define GUARD_BYTES 256
/* Runs compared for the thread check and the sub-range steps stay short. */
#define RANGE_STEPS 8
/* A return is a float sum of floats: |return - sum| may be a few ulps of the
 * sum of |rewards| per step (the env adds in float, the checker in double). */
#define RETURN_RELATIVE_TOLERANCE 1e-5

/* ---------------------------------------------------------------- results */

static const char *const g_check_names[CK_COUNT] = {
    [CK_UNWRITTEN] = "unwritten",       [CK_OVERRUN] = "overrun",
    [CK_OTHER_ROWS] = "other_rows",     [CK_OBS_SPACE] = "obs_space",
    [CK_REWARDS] = "rewards",           [CK_MASKS] = "masks",
    [CK_FLAGS] = "flags",               [CK_FINAL_OBS] = "final_obs",
    [CK_TIME_LIMIT] = "time_limit",     [CK_EPISODE_LOG] = "episode_log",
    [CK_SAME_SEED] = "same_seed",       [CK_THREADS] = "threads",
    [CK_SEEDS_DIFFER] = "seeds_differ", [CK_STATE_ARRAYS] = "state_arrays",
    [CK_STATE_RESTORE] = "state_restore", [CK_CHECK_STATE] = "check_state",
    [CK_SPEED] = "speed",
};

/* ---------------------------------------------------------------- actions */

/* Where head h's mask block starts for head-0 choice a (see sk_action_space). */
static size_t mask_block(const sk_action_space *space, int h, int a) {
    size_t at = 0;
    for (int g = 0; g < h; g++)
        at += (size_t)space->head_sizes[g] *
              (space->masks_by_head0 && g > 0 ? (size_t)space->head_sizes[0] : 1);
    if (space->masks_by_head0 && h > 0) at += (size_t)a * (size_t)space->head_sizes[h];
    return at;
}

static bool head_relevant(const sk_action_space *space, int h, int a) {
    uint64_t when = space->relevant_when[h];
    return h == 0 || when == 0 || (a < 64 && ((when >> a) & 1u));
}

size_t sk_ck_action_row_bytes(const sk_env_def *env) {
    const sk_action_space *space = &env->action_space;
    return space->kind == SK_SPACE_DISCRETE ? (size_t)space->num_heads * sizeof(int32_t)
                                            : (size_t)space->dim * sizeof(float);
}

/* A uniformly random choice among the n whose mask byte is set (all when
 * mask is NULL); 0 when none is. */
static int32_t random_allowed(const uint8_t *mask, int n, uint64_t *rng) {
    int allowed = 0;
    for (int j = 0; j < n; j++) allowed += !mask || mask[j];
    if (allowed == 0) return 0;
    int pick = (int)sk_rng_below(rng, (uint32_t)allowed);
    for (int j = 0; j < n; j++)
        if ((!mask || mask[j]) && pick-- == 0) return j;
    return 0;
}

void sk_ck_random_actions(const sk_env_def *env, const uint8_t *masks, int32_t *actions,
                          float *actions_continuous, int lo, int hi, uint64_t *rng) {
    const sk_action_space *space = &env->action_space;
    for (int i = lo; i < hi; i++) {
        if (space->kind == SK_SPACE_CONTINUOUS) {
            for (int d = 0; d < space->dim; d++)
                actions_continuous[(size_t)i * (size_t)space->dim + (size_t)d] =
                    (float)sk_rng_uniform(rng, space->low[d], space->high[d]);
            continue;
        }
        int32_t *row = actions + (size_t)i * (size_t)space->num_heads;
        const uint8_t *mask =
            masks && env->mask_size ? masks + (size_t)i * (size_t)env->mask_size : NULL;
        for (int h = 0; h < space->num_heads; h++)
            row[h] = random_allowed(mask ? mask + mask_block(space, h, h ? row[0] : 0) : NULL,
                                    space->head_sizes[h], rng);
    }
}

/* --------------------------------------------------------------- buffers */

enum { BUF_OBS, BUF_FINAL_OBS, BUF_ACTIONS, BUF_REWARDS, BUF_TERMINATED, BUF_TRUNCATED,
       BUF_MASKS, BUF_LOG, BUF_ACTIVE, NUM_BUFS };

/* One I/O buffer between two guard zones: num_rows rows of row_bytes (a
 * multi-agent env's rows are its (env, agent) pairs). */
typedef struct guarded {
    const char *name;
    unsigned char *base; /* the allocation: guard, data, guard */
    unsigned char *data;
    size_t row_bytes;
    bool floats; /* float slots get CANARY_BITS, byte slots CANARY_BYTE */
} guarded;

/* An instance of the env driven directly, with guarded buffers. */
typedef struct instance {
    const sk_env_def *env;
    void *state;
    int num_envs, num_agents, num_rows;
    guarded bufs[NUM_BUFS];
    sk_env_io io;
    uint64_t action_rng;
} instance;

static size_t data_bytes(const instance *inst, int b) {
    return (size_t)inst->num_rows * inst->bufs[b].row_bytes;
}

static void fill_floats(float *data, size_t count) {
    uint32_t canary = CANARY_BITS;
    for (size_t k = 0; k < count; k++) memcpy(&data[k], &canary, sizeof canary);
}

/* Canaries in every slot the env writes, for envs lo..hi-1. */
static void fill_canaries(instance *inst, int lo, int hi) {
    lo *= inst->num_agents; /* rows */
    hi *= inst->num_agents;
    for (int b = 0; b < NUM_BUFS; b++) {
        guarded *g = &inst->bufs[b];
        unsigned char *from = g->data + (size_t)lo * g->row_bytes;
        size_t bytes = (size_t)(hi - lo) * g->row_bytes;
        if (b == BUF_ACTIONS) continue;
        if (g->floats) fill_floats((float *)(void *)from, bytes / sizeof(float));
        else memset(from, CANARY_BYTE, bytes);
    }
}

void sk_ck_fill_vec_canaries(const sk_ck_run *run, sk_vec *vec) {
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    const sk_env_def *env = run->env;
    size_t N = (size_t)run->num_rows, O = (size_t)env->obs_size;
    if (run->num_agents > 1) memset(b->active, CANARY_BYTE, N);
    if (b->obs_u8) {
        memset(b->obs_u8, CANARY_BYTE, N * O);
        memset(b->final_obs_u8, CANARY_BYTE, N * O);
    } else {
        fill_floats(b->obs, N * O);
        fill_floats(b->final_obs, N * O);
    }
    fill_floats(b->rewards, N);
    fill_floats(b->episode_log, N * (size_t)env->num_log_fields);
    memset(b->terminated, CANARY_BYTE, N);
    memset(b->truncated, CANARY_BYTE, N);
    if (b->masks) memset(b->masks, CANARY_BYTE, N * (size_t)env->mask_size);
}

static void instance_free(instance *inst) {
    if (inst->state) inst->env->destroy(inst->state);
    for (int b = 0; b < NUM_BUFS; b++) sk_free(inst->bufs[b].base);
    memset(inst, 0, sizeof *inst);
}

static sk_status instance_create(sk_ck_run *run, instance *inst, uint64_t action_seed) {
    const sk_env_def *env = run->env;
    const sk_action_space *space = &env->action_space;
    size_t O = (size_t)env->obs_size;
    size_t action_bytes = sk_ck_action_row_bytes(env);
    bool u8 = env->obs_dtype == SK_OBS_U8; /* bytes get CANARY_BYTE, outside a 0/1 Box */
    const guarded shapes[NUM_BUFS] = {
        [BUF_OBS] = {"obs", NULL, NULL, O * sk_obs_elem_size(env), !u8},
        [BUF_FINAL_OBS] = {"final_obs", NULL, NULL, O * sk_obs_elem_size(env), !u8},
        [BUF_ACTIONS] = {"actions", NULL, NULL, action_bytes, false},
        [BUF_REWARDS] = {"rewards", NULL, NULL, sizeof(float), true},
        [BUF_TERMINATED] = {"terminated", NULL, NULL, 1, false},
        [BUF_TRUNCATED] = {"truncated", NULL, NULL, 1, false},
        [BUF_MASKS] = {"masks", NULL, NULL, (size_t)env->mask_size, false},
        [BUF_LOG] = {"episode_log", NULL, NULL, (size_t)env->num_log_fields * sizeof(float), true},
        [BUF_ACTIVE] = {"active", NULL, NULL, run->num_agents > 1 ? 1 : 0, false},
    };
    memset(inst, 0, sizeof *inst);
    inst->env = env;
    inst->num_envs = run->num_envs;
    inst->num_agents = run->num_agents;
    inst->num_rows = run->num_rows;
    inst->action_rng = action_seed;
    for (int b = 0; b < NUM_BUFS; b++) {
        guarded *g = &inst->bufs[b];
        *g = shapes[b];
        size_t bytes = data_bytes(inst, b);
        g->base = sk_alloc(bytes + 2 * GUARD_BYTES);
        if (!g->base) {
            const char *name = g->name;
            instance_free(inst);
            return sk_fail(SK_ERR_NOMEM, "%s: out of memory for the checker's %s buffer (%zu "
                           "bytes)", env->id, name, bytes);
        }
        g->data = g->base + GUARD_BYTES;
        memset(g->base, CANARY_BYTE, bytes + 2 * GUARD_BYTES);
    }
    memset(inst->bufs[BUF_ACTIONS].data, 0, data_bytes(inst, BUF_ACTIONS));
    bool discrete = space->kind == SK_SPACE_DISCRETE;
    inst->io = (sk_env_io){
        .obs = u8 ? NULL : (float *)(void *)inst->bufs[BUF_OBS].data,
        .final_obs = u8 ? NULL : (float *)(void *)inst->bufs[BUF_FINAL_OBS].data,
        .obs_u8 = u8 ? inst->bufs[BUF_OBS].data : NULL,
        .final_obs_u8 = u8 ? inst->bufs[BUF_FINAL_OBS].data : NULL,
        .actions = discrete ? (const int32_t *)(void *)inst->bufs[BUF_ACTIONS].data : NULL,
        .actions_continuous = discrete ? NULL : (const float *)(void *)inst->bufs[BUF_ACTIONS].data,
        .rewards = (float *)(void *)inst->bufs[BUF_REWARDS].data,
        .terminated = inst->bufs[BUF_TERMINATED].data,
        .truncated = inst->bufs[BUF_TRUNCATED].data,
        .masks = env->mask_size ? inst->bufs[BUF_MASKS].data : NULL,
        .episode_log = (float *)(void *)inst->bufs[BUF_LOG].data,
        .active = run->num_agents > 1 ? inst->bufs[BUF_ACTIVE].data : NULL,
    };
    sk_error_clear();
    sk_status status = sk_fail_if_silent(env->create(&inst->state, run->num_envs, run->cfg),
                                         "%s's create", env->id);
    if (status != SK_OK) {
        inst->state = NULL;
        instance_free(inst);
    }
    return status;
}

static void instance_actions(instance *inst) {
    sk_ck_random_actions(inst->env, inst->io.masks, (int32_t *)(void *)inst->bufs[BUF_ACTIONS].data,
                         (float *)(void *)inst->bufs[BUF_ACTIONS].data, 0, inst->num_rows,
                         &inst->action_rng);
}

/* The guard zones around every buffer are intact (an overrun otherwise). */
static void check_guards(sk_ck_run *run, const instance *inst, long long step) {
    for (int b = 0; b < NUM_BUFS && !sk_ck_failed(run, CK_OVERRUN); b++) {
        const guarded *g = &inst->bufs[b];
        size_t bytes = data_bytes(inst, b);
        for (size_t k = 0; k < GUARD_BYTES; k++) {
            if (g->base[GUARD_BYTES - 1 - k] != CANARY_BYTE) {
                sk_ck_fail(run, CK_OVERRUN, 0, step,
                           "%s: byte %zu before the buffer's start was written (env 0's row starts "
                           "there)",
                           g->name, k + 1);
                break;
            }
            if (g->data[bytes + k] != CANARY_BYTE) {
                sk_ck_fail(run, CK_OVERRUN, inst->num_rows - 1, step,
                           "%s: byte %zu past the end of the last env's row was written (a row is "
                           "%zu bytes: %s)",
                           g->name, k, g->row_bytes,
                           b == BUF_OBS || b == BUF_FINAL_OBS ? "obs_size values"
                           : b == BUF_MASKS                   ? "mask_size bytes"
                           : b == BUF_LOG                     ? "num_log_fields floats"
                                                              : "one value");
                break;
            }
        }
    }
}

/* ---------------------------------------------------------- the contract */

static bool is_canary(float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits == CANARY_BITS;
}

/* Checks an observation row written by the env: every slot written, each
 * value inside the declared Box (else finite). */
static void check_obs_row(sk_ck_run *run, const float *row, const char *what, sk_ck_check unwritten,
                          int i, long long step) {
    const sk_env_def *env = run->env;
    for (int k = 0; k < env->obs_size; k++) {
        float value = row[k];
        if (is_canary(value)) {
            sk_ck_fail(run, unwritten, i, step, "%s[%d] was never written (obs_size = %d)", what, k,
                       env->obs_size);
            return;
        }
        if (env->obs_low && !(value >= env->obs_low[k] && value <= env->obs_high[k])) {
            sk_ck_fail(run, CK_OBS_SPACE, i, step,
                       "%s[%d] = %.9g is outside the declared space "
                       "[%.9g, %.9g]",
                       what, k, (double)value, (double)env->obs_low[k], (double)env->obs_high[k]);
            return;
        }
        if (!isfinite(value)) {
            sk_ck_fail(run, CK_OBS_SPACE, i, step, "%s[%d] = %.9g (expected a finite value)", what,
                       k, (double)value);
            return;
        }
    }
}

/* The same for a uint8 env's row: a byte is always finite, and 0xa5 (the
 * canary) is a valid byte, so an unwritten one shows only where the declared
 * Box excludes it (a 0/1 image's does). */
static void check_byte_row(sk_ck_run *run, const uint8_t *row, const char *what,
                           sk_ck_check unwritten, int i, long long step) {
    const sk_env_def *env = run->env;
    for (int k = 0; env->obs_low && k < env->obs_size; k++) {
        float value = row[k];
        if (value >= env->obs_low[k] && value <= env->obs_high[k]) continue;
        if (row[k] == CANARY_BYTE)
            sk_ck_fail(run, unwritten, i, step,
                       "%s[%d] was never written (it holds the canary "
                       "0x%02x, outside the declared space [%.9g, %.9g]; obs_size = %d)",
                       what, k, CANARY_BYTE, (double)env->obs_low[k], (double)env->obs_high[k],
                       env->obs_size);
        else
            sk_ck_fail(run, CK_OBS_SPACE, i, step,
                       "%s[%d] = %d is outside the declared space "
                       "[%.9g, %.9g]",
                       what, k, (int)row[k], (double)env->obs_low[k], (double)env->obs_high[k]);
        return;
    }
}

/* Observation row i of io (final: final_obs), floats or bytes. */
static void check_obs_at(sk_ck_run *run, const sk_env_io *io, bool final, int i,
                         sk_ck_check unwritten, long long step) {
    size_t at = (size_t)i * (size_t)run->env->obs_size;
    const char *what = final ? "final_obs" : "obs";
    if (io->obs_u8)
        check_byte_row(run, (final ? io->final_obs_u8 : io->obs_u8) + at, what, unwritten, i, step);
    else
        check_obs_row(run, (final ? io->final_obs : io->obs) + at, what, unwritten, i, step);
}

/* Every mask byte written and 0 or 1, and a legal choice in every head that
 * matters for some allowed head-0 choice. */
static void check_mask_row(sk_ck_run *run, const uint8_t *mask, int i, long long step) {
    const sk_env_def *env = run->env;
    const sk_action_space *space = &env->action_space;
    for (int k = 0; k < env->mask_size; k++) {
        if (mask[k] == CANARY_BYTE) {
            sk_ck_fail(run, CK_UNWRITTEN, i, step, "masks[%d] was never written (mask_size = %d)",
                       k, env->mask_size);
            return;
        }
        if (mask[k] > 1) {
            sk_ck_fail(run, CK_MASKS, i, step, "masks[%d] = %d (expected 0 or 1)", k, mask[k]);
            return;
        }
    }
    int n0 = space->head_sizes[0];
    bool any0 = false;
    for (int a = 0; a < n0; a++) any0 |= mask[a] != 0;
    if (!any0) {
        sk_ck_fail(run, CK_MASKS, i, step, "no legal action: head 0's %d mask bytes are all 0", n0);
        return;
    }
    for (int h = 1; h < space->num_heads; h++) {
        int blocks = space->masks_by_head0 ? n0 : 1;
        for (int a = 0; a < n0; a++) {
            if (!mask[a] || !head_relevant(space, h, a)) continue;
            const uint8_t *block = mask + mask_block(space, h, blocks > 1 ? a : 0);
            bool any = false;
            for (int j = 0; j < space->head_sizes[h]; j++) any |= block[j] != 0;
            if (!any) {
                sk_ck_fail(run, CK_MASKS, i, step,
                           "no legal action for head %d when head 0 "
                           "chooses %d (allowed, and head %d matters then): its %d mask bytes are "
                           "all 0",
                           h, a, h, space->head_sizes[h]);
                return;
            }
        }
    }
}

/* What the checker tracks of each row's episode, to check the env's own. A
 * multi-agent env's episode lengths count the steps its agent acted in
 * (active before the step). */
typedef struct episode_tally {
    double *sum, *sum_abs;
    int *length;
    uint8_t *was_active; /* (rows) a multi-agent env's active flags before the step */
    long long ended, limit_reached;
} episode_tally;

/* A multi-agent env's active flag of row i: written, and 0 or 1. */
static void check_active(sk_ck_run *run, const instance *inst, int i, long long step) {
    if (!inst->io.active) return;
    uint8_t active = inst->io.active[i];
    if (active == CANARY_BYTE)
        sk_ck_fail(run, CK_UNWRITTEN, i, step, "active was never written (a multi-agent env "
                                               "writes every row's flag at reset and step)");
    else if (active > 1)
        sk_ck_fail(run, CK_FLAGS, i, step, "active = %d (expected 0 or 1)", active);
}

static void check_after_reset(sk_ck_run *run, const instance *inst) {
    check_guards(run, inst, 0);
    for (int i = 0; i < inst->num_rows; i++) {
        check_active(run, inst, i, 0);
        check_obs_at(run, &inst->io, false, i, CK_UNWRITTEN, 0);
        if (inst->io.masks)
            check_mask_row(run, inst->io.masks + (size_t)i * (size_t)run->env->mask_size, i, 0);
    }
}

static void check_episode_end(sk_ck_run *run, const instance *inst, episode_tally *tally, int i,
                              long long step) {
    const sk_env_def *env = run->env;
    const sk_env_io *io = &inst->io;
    size_t L = (size_t)env->num_log_fields;
    check_obs_at(run, io, true, i, CK_FINAL_OBS, step);
    const float *log = io->episode_log + (size_t)i * L;
    for (size_t k = 0; k < L; k++)
        if (is_canary(log[k])) {
            sk_ck_fail(run, CK_EPISODE_LOG, i, step,
                       "episode_log[%zu] (%s) was not written where "
                       "the episode ended",
                       k, env->log_names[k]);
            return;
        }
    double tolerance =
        RETURN_RELATIVE_TOLERANCE * tally->sum_abs[i] * (1.0 + tally->length[i]) + 1e-6;
    if (!(fabs((double)log[0] - tally->sum[i]) <= tolerance))
        sk_ck_fail(run, CK_EPISODE_LOG, i, step,
                   "episode_log[0] (%s) = %.9g, but the episode's %d "
                   "rewards sum to %.9g",
                   env->log_names[0], (double)log[0], tally->length[i], tally->sum[i]);
    else if (log[1] != (float)tally->length[i])
        sk_ck_fail(run, CK_EPISODE_LOG, i, step,
                   "episode_log[1] (%s) = %.9g, but the episode "
                   "lasted %d steps",
                   env->log_names[1], (double)log[1], tally->length[i]);
}

/* After a step of every env: what the env wrote for each. */
static void check_after_step(sk_ck_run *run, const instance *inst, episode_tally *tally,
                             long long step) {
    const sk_env_def *env = run->env;
    const sk_env_io *io = &inst->io;
    check_guards(run, inst, step);
    for (int i = 0; i < inst->num_rows; i++) {
        check_active(run, inst, i, step);
        check_obs_at(run, io, false, i, CK_UNWRITTEN, step);
        if (io->masks) check_mask_row(run, io->masks + (size_t)i * (size_t)env->mask_size, i, step);
        float reward = io->rewards[i];
        if (is_canary(reward))
            sk_ck_fail(run, CK_UNWRITTEN, i, step, "the reward was never written");
        else if (!isfinite(reward))
            sk_ck_fail(run, CK_REWARDS, i, step,
                       "reward = %.9g (expected a "
                       "finite value)",
                       (double)reward);
        uint8_t terminated = io->terminated[i], truncated = io->truncated[i];
        if (terminated == CANARY_BYTE || truncated == CANARY_BYTE) {
            sk_ck_fail(run, CK_UNWRITTEN, i, step, "%s was never written",
                       terminated == CANARY_BYTE ? "terminated" : "truncated");
            continue;
        }
        if (terminated > 1 || truncated > 1)
            sk_ck_fail(run, CK_FLAGS, i, step, "terminated = %d, truncated = %d (expected 0 or 1)",
                       terminated, truncated);
        else if (terminated && truncated)
            sk_ck_fail(run, CK_FLAGS, i, step,
                       "terminated and truncated are both set (truncated "
                       "means the time limit ended an episode that did not terminate)");
        if (isfinite(reward)) {
            tally->sum[i] += (double)reward;
            tally->sum_abs[i] += fabs((double)reward);
        }
        bool multi = inst->num_agents > 1;
        int length = tally->length[i] += !multi || tally->was_active[i];
        if (length == env->max_episode_steps) tally->limit_reached++;
        if (multi) { /* an agent's steps are its own actions: the env's limit is the env's */
        } else if (!terminated && truncated && length != env->max_episode_steps)
            sk_ck_fail(run, CK_TIME_LIMIT, i, step,
                       "truncated after %d steps (max_episode_steps = "
                       "%d)",
                       length, env->max_episode_steps);
        else if (!terminated && !truncated && length >= env->max_episode_steps)
            sk_ck_fail(run, CK_TIME_LIMIT, i, step,
                       "the episode reached max_episode_steps = %d "
                       "without being truncated",
                       env->max_episode_steps);
        if (!terminated && !truncated) continue;
        check_episode_end(run, inst, tally, i, step);
        tally->ended++;
        tally->sum[i] = tally->sum_abs[i] = 0.0;
        tally->length[i] = 0;
    }
}

/* ------------------------------------------------------------ the runs */

/* Run a (checked), b (the same seed again), c (the next seed) and, unless
 * the env steps its whole batch only, a sk_vec of run->threads workers, in
 * lockstep: each draws its actions from its own masks with the same action
 * stream, so identical envs get identical actions. */
typedef struct lockstep {
    instance a, b, c;
    sk_vec *vec;
    uint64_t vec_rng;
    episode_tally tally;
    bool c_differs;
    long long c_steps;
} lockstep;

static uint64_t action_seed(const sk_ck_run *run) { return sk_rng_seed(run->seed, 0xac710500ULL); }

static sk_status lockstep_create(sk_ck_run *run, lockstep *ls) {
    memset(ls, 0, sizeof *ls);
    size_t N = (size_t)run->num_rows;
    ls->tally.sum = calloc(N, sizeof(double));
    ls->tally.sum_abs = calloc(N, sizeof(double));
    ls->tally.length = calloc(N, sizeof(int));
    ls->tally.was_active = calloc(N, 1);
    if (!ls->tally.sum || !ls->tally.sum_abs || !ls->tally.length || !ls->tally.was_active)
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_status status = instance_create(run, &ls->a, action_seed(run));
    if (status == SK_OK) status = instance_create(run, &ls->b, action_seed(run));
    if (status == SK_OK) status = instance_create(run, &ls->c, action_seed(run));
    if (status == SK_OK && !run->whole_batch && run->num_envs > 1 && run->threads > 1)
        status = sk_vec_create(&ls->vec, run->env, run->num_envs, run->threads, run->cfg);
    ls->vec_rng = action_seed(run);
    return status;
}

static void lockstep_free(lockstep *ls) {
    instance_free(&ls->a);
    instance_free(&ls->b);
    instance_free(&ls->c);
    sk_vec_destroy(ls->vec);
    free(ls->tally.sum);
    free(ls->tally.sum_abs);
    free(ls->tally.length);
    free(ls->tally.was_active);
}

static void lockstep_compare(sk_ck_run *run, lockstep *ls, long long step) {
    if (!sk_ck_failed(run, CK_SAME_SEED))
        sk_ck_compare_io(run, CK_SAME_SEED, step, &ls->a.io, &ls->b.io, "the first run",
                         "a second run of the same seed");
    if (ls->vec && !sk_ck_failed(run, CK_THREADS))
        sk_ck_compare_io(run, CK_THREADS, step, &ls->a.io, sk_vec_io(ls->vec), "1 thread",
                         "the run split over threads");
    if (!ls->c_differs) {
        ls->c_differs = sk_ck_trajectories_differ(run, &ls->a.io, &ls->c.io, step);
        ls->c_steps = step;
    }
}

/* An env that writes past its rows would write past the vec's buffers too,
 * which have no guard zones: the vec is not stepped again. */
static void stop_vec_after_overrun(sk_ck_run *run, lockstep *ls) {
    if (!ls->vec || !sk_ck_failed(run, CK_OVERRUN)) return;
    sk_vec_destroy(ls->vec);
    ls->vec = NULL;
    if (!sk_ck_failed(run, CK_THREADS))
        sk_ck_skip(run, CK_THREADS,
                   "not run: the env writes past its rows (see overrun), which "
                   "would corrupt the vec's unguarded buffers");
}

static sk_status run_lockstep(sk_ck_run *run) {
    lockstep ls;
    sk_status status = lockstep_create(run, &ls);
    if (status != SK_OK) {
        lockstep_free(&ls);
        return status;
    }
    int N = run->num_envs;
    /* canaries in every run's buffers, so that a slot left unwritten is the
     * unwritten check's to report, not a difference between runs */
    fill_canaries(&ls.a, 0, N);
    fill_canaries(&ls.b, 0, N);
    fill_canaries(&ls.c, 0, N);
    run->env->reset(ls.a.state, &ls.a.io, 0, N, run->seed);
    check_after_reset(run, &ls.a);
    stop_vec_after_overrun(run, &ls);
    run->env->reset(ls.b.state, &ls.b.io, 0, N, run->seed);
    run->env->reset(ls.c.state, &ls.c.io, 0, N, run->seed + 1);
    if (ls.vec) {
        sk_ck_fill_vec_canaries(run, ls.vec);
        sk_vec_reset(ls.vec, run->seed);
    }
    lockstep_compare(run, &ls, 0);
    for (long long step = 1; step <= run->steps; step++) {
        instance_actions(&ls.a);
        instance_actions(&ls.b);
        if (ls.a.io.active) memcpy(ls.tally.was_active, ls.a.io.active, (size_t)run->num_rows);
        fill_canaries(&ls.a, 0, N);
        run->env->step(ls.a.state, &ls.a.io, 0, N);
        check_after_step(run, &ls.a, &ls.tally, step);
        stop_vec_after_overrun(run, &ls);
        fill_canaries(&ls.b, 0, N);
        run->env->step(ls.b.state, &ls.b.io, 0, N);
        if (!ls.c_differs) {
            instance_actions(&ls.c);
            fill_canaries(&ls.c, 0, N);
            run->env->step(ls.c.state, &ls.c.io, 0, N);
        }
        if (ls.vec) {
            const sk_vec_buffers *vb = sk_vec_buffers_of(ls.vec);
            sk_ck_random_actions(run->env, vb->masks, vb->actions, vb->actions_continuous, 0,
                                 run->num_rows, &ls.vec_rng);
            sk_ck_fill_vec_canaries(run, ls.vec);
            sk_vec_step(ls.vec);
        }
        lockstep_compare(run, &ls, step);
    }
    const sk_env_def *env = run->env;
    sk_ck_note(run, CK_UNWRITTEN,
               "every obs, reward, flag and mask slot written at reset and at "
               "each of %d steps of %d envs",
               run->steps, N);
    sk_ck_note(run, CK_OVERRUN, "the %d bytes around each buffer untouched", GUARD_BYTES);
    sk_ck_note(run, CK_OBS_SPACE, "%s",
               env->obs_low ? "every observation inside the declared Box"
                            : "every observation finite (no Box declared)");
    sk_ck_note(run, CK_REWARDS, "every reward finite");
    if (env->mask_size) sk_ck_note(run, CK_MASKS, "a legal action in every head of every mask row");
    else sk_ck_skip(run, CK_MASKS, "the env has no masks");
    sk_ck_note(run, CK_FLAGS, "terminated and truncated 0 or 1, never both");
    sk_ck_note(run, CK_FINAL_OBS, "written on all %lld ended episodes", ls.tally.ended);
    sk_ck_note(run, CK_EPISODE_LOG,
               "return and length of all %lld ended episodes agree with the "
               "rewards and steps",
               ls.tally.ended);
    if (ls.tally.limit_reached)
        sk_ck_note(run, CK_TIME_LIMIT, "truncated exactly at max_episode_steps = %d (%lld times)",
                   env->max_episode_steps, ls.tally.limit_reached);
    else
        sk_ck_note(run, CK_TIME_LIMIT,
                   "no episode reached max_episode_steps = %d in %d steps, and "
                   "none was truncated early",
                   env->max_episode_steps, run->steps);
    sk_ck_note(run, CK_SAME_SEED, "seed %llu twice: the same %d steps of %d envs",
               (unsigned long long)run->seed, run->steps, N);
    if (ls.vec)
        sk_ck_note(run, CK_THREADS, "1 thread and %d threads: the same %d steps",
                   sk_vec_num_workers(ls.vec), run->steps);
    else if (!sk_ck_failed(run, CK_OVERRUN))
        sk_ck_skip(run, CK_THREADS, "%s",
                   run->whole_batch    ? "the env steps its whole batch at once"
                   : run->num_envs < 2 ? "a single env"
                                       : "--threads 1");
    if (ls.c_differs)
        sk_ck_note(run, CK_SEEDS_DIFFER, "seeds %llu and %llu differ at step %lld",
                   (unsigned long long)run->seed, (unsigned long long)run->seed + 1, ls.c_steps);
    else
        sk_ck_fail(run, CK_SEEDS_DIFFER, -1, -1,
                   "seeds %llu and %llu gave the same observations, "
                   "rewards and flags for %d steps of %d envs (is the seed ignored?)",
                   (unsigned long long)run->seed, (unsigned long long)run->seed + 1, run->steps, N);
    lockstep_free(&ls);
    return SK_OK;
}

/* Rows outside lo..hi-1 of every buffer the env writes equal `before`. */
static void check_other_rows(sk_ck_run *run, const instance *inst, unsigned char *const *before,
                             int lo, int hi, long long step) {
    for (int b = 0; b < NUM_BUFS; b++) {
        const guarded *g = &inst->bufs[b];
        if (b == BUF_ACTIONS || g->row_bytes == 0) continue;
        for (int i = 0; i < inst->num_rows; i++) { /* lo, hi: rows */
            if (i == lo) i = hi;
            if (i >= inst->num_rows) break;
            size_t at = (size_t)i * g->row_bytes;
            if (memcmp(g->data + at, before[b] + at, g->row_bytes) == 0) continue;
            sk_ck_fail(run, CK_OTHER_ROWS, i, step,
                       "%s row of env %d was written while %s envs "
                       "%d..%d only",
                       g->name, i, step ? "stepping" : "resetting", lo, hi - 1);
            return;
        }
    }
}

/* Resets and steps parts of the batch (two ranges, split at a different
 * place each step), checking that rows outside the range stay untouched. */
static sk_status run_ranges(sk_ck_run *run) {
    int N = run->num_envs;
    if (run->whole_batch || N < 2) {
        sk_ck_skip(run, CK_OTHER_ROWS, "%s",
                   run->whole_batch ? "the env steps its whole batch at once" : "a single env");
        return SK_OK;
    }
    instance inst;
    sk_status status = instance_create(run, &inst, action_seed(run));
    if (status != SK_OK) return status;
    unsigned char *before[NUM_BUFS] = {0};
    for (int b = 0; b < NUM_BUFS && status == SK_OK; b++)
        if (!(before[b] = malloc(data_bytes(&inst, b) + 1)))
            status = sk_fail(SK_ERR_NOMEM, "out of memory");
    int steps = SK_MIN(run->steps, RANGE_STEPS);
    for (int step = 0; step <= steps && status == SK_OK; step++) {
        int split = 1 + step % (N - 1);
        if (step > 0) instance_actions(&inst);
        for (int part = 0; part < 2; part++) {
            int lo = part ? split : 0, hi = part ? N : split;
            for (int b = 0; b < NUM_BUFS; b++)
                memcpy(before[b], inst.bufs[b].data, data_bytes(&inst, b));
            if (step == 0) run->env->reset(inst.state, &inst.io, lo, hi, run->seed);
            else run->env->step(inst.state, &inst.io, lo, hi);
            check_other_rows(run, &inst, before, lo * run->num_agents, hi * run->num_agents, step);
        }
    }
    sk_ck_note(run, CK_OTHER_ROWS,
               "resets and %d steps of envs split in two ranges left the rows "
               "outside each range untouched",
               steps);
    for (int b = 0; b < NUM_BUFS; b++) free(before[b]);
    instance_free(&inst);
    return status;
}

/* ----------------------------------------------------------- entry point */

static void resolve_options(sk_ck_run *run, const sk_check_options *options) {
    const sk_env_def *env = run->env;
    bool slow = sk_env_extras_of(env)->bench_num_envs > 0;
    run->num_envs = options->num_envs > 0 ? options->num_envs : slow ? 2 : 16;
    run->num_agents = sk_env_agents(env);
    run->num_rows = run->num_envs * run->num_agents;
    long long steps = (long long)env->max_episode_steps + 8;
    run->steps = options->steps > 0 ? options->steps
                 : slow              ? 8
                                     : (int)SK_MAX(64, SK_MIN(1024, steps));
    run->seed = options->seed;
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    run->threads = options->threads > 0 ? options->threads : SK_MAX(2, cores);
    run->whole_batch = options->whole_batch;
    run->partial_state = options->partial_state;
}

sk_status sk_check_env(const sk_env_def *env, const sk_config *cfg,
                       const sk_check_options *options, sk_check_report *out) {
    memset(out, 0, sizeof *out);
    if (!env) return sk_fail(SK_ERR_INVALID, "sk_check_env: no environment given");
    sk_check_options defaults = {0};
    sk_config *empty = NULL;
    if (!cfg && !(cfg = empty = sk_config_new())) return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_ck_run run = {.cfg = cfg, .report = out};
    sk_status status = sk_env_configure(env, cfg, &run.env);
    snprintf(out->env_id, sizeof out->env_id, "%s", env->id);
    if (status == SK_OK) {
        resolve_options(&run, options ? options : &defaults);
        out->num_envs = run.num_envs;
        out->steps = run.steps;
        out->threads = run.threads;
        out->seed = run.seed;
        out->num_results = CK_COUNT;
        for (int k = 0; k < CK_COUNT; k++) {
            snprintf(out->results[k].name, sizeof out->results[k].name, "%s", g_check_names[k]);
            out->results[k].env = -1;
            out->results[k].step = -1;
        }
        out->results[CK_SPEED].outcome = SK_CHECK_INFO;
        status = run_lockstep(&run);
        if (status == SK_OK) status = run_ranges(&run);
        if (status == SK_OK && sk_ck_failed(&run, CK_OVERRUN)) {
            /* sk_vec's buffers have no guard zones: an env writing past its rows
             * would corrupt the heap there */
            const sk_ck_check vec_checks[] = {CK_STATE_ARRAYS, CK_STATE_RESTORE, CK_CHECK_STATE,
                                           CK_SPEED};
            for (size_t k = 0; k < sizeof vec_checks / sizeof vec_checks[0]; k++)
                sk_ck_skip(&run, vec_checks[k],
                           "not run: the env writes past its rows (see overrun)");
        } else {
            if (status == SK_OK) status = sk_ck_check_state(&run);
            if (status == SK_OK) status = sk_ck_measure_speed(&run);
        }
    }
    for (int k = 0; k < out->num_results; k++)
        out->num_failed += out->results[k].outcome == SK_CHECK_FAIL;
    sk_config_free(empty);
    return status;
}
