/* The off-policy learners' shared iteration (offpolicy.h). */
#include "offpolicy.h"

#include "algo.h"
#include "skinner/vec.h"
#include "../vec/vec_internal.h"

#include <math.h>
#include <string.h>

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        sk_status check_status_ = (expr);                                                          \
        if (check_status_ != SK_OK) return check_status_;                                          \
    } while (0)

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* env steps between an off-policy run's checkpoints unless given, or more for a large buffer
 * (sk_offpolicy_create) */
enum { OFFPOLICY_CHECKPOINT_STEPS = 50000 };

int sk_offpolicy_horizon(int train_frequency, int rows) {
    int T = (int)(train_frequency / gcd64(train_frequency, rows));
    while ((int64_t)T * rows < 2) T *= 2;
    return T;
}

/* Unless `key` was given (is_default), *every = the iterations of `iteration` env steps that
 * make env_steps, rounded up, recorded in the run's config as key. */
static sk_status every_env_steps(sk_trainer *tr, bool is_default, const char *key,
                                 int64_t env_steps, int64_t iteration, int *every) {
    if (!is_default) return SK_OK;
    *every = (int)((env_steps + iteration - 1) / iteration);
    char text[32];
    snprintf(text, sizeof text, "%d", *every);
    if (sk_config_set(tr->cfg, key, text) != SK_OK) return sk_fail(SK_ERR_NOMEM, "out of memory");
    return SK_OK;
}

sk_status sk_offpolicy_settings(sk_trainer *tr, sk_offpolicy *op, const char *section,
                                int64_t replay_default) {
    char key[64];
    int64_t v;
    CHECK(sk_cfg_int(tr->cfg, "replay.size", replay_default, 1, INT32_MAX,
                     &op->replay.spec.capacity));
    CHECK(sk_cfg_bool(tr->cfg, "replay.save", true, &op->save_replay));
    snprintf(key, sizeof key, "%s.learning_starts", section);
    CHECK(sk_cfg_int(tr->cfg, key, op->learning_starts, 0, INT64_MAX / 2, &op->learning_starts));
    snprintf(key, sizeof key, "%s.train_frequency", section);
    CHECK(sk_cfg_int(tr->cfg, key, op->train_frequency, 1, 1 << 20, &v));
    op->train_frequency = (int)v;
    snprintf(key, sizeof key, "%s.gradient_steps", section);
    CHECK(sk_cfg_int(tr->cfg, key, op->gradient_steps_per_round, 1, 1 << 16, &v));
    op->gradient_steps_per_round = (int)v;
    snprintf(key, sizeof key, "%s.target_network_frequency", section);
    CHECK(sk_cfg_int(tr->cfg, key, op->target_frequency, 1, INT64_MAX / 2, &op->target_frequency));
    snprintf(key, sizeof key, "%s.tau", section);
    CHECK(sk_cfg_double(tr->cfg, key, op->tau, 0.0, 1.0, &op->tau));
    /* the [ppo] section (an env's preset sets it) is PPO's: the buffer keeps observations
     * and rewards as the env gave them */
    if (tr->s.ema_decay > 0.0)
        return sk_fail(SK_ERR_CONFIG, "ppo.ema_decay = %g averages PPO's weights; train.algo = %s "
                       "keeps target networks of its own (drop the key)", tr->s.ema_decay,
                       tr->algo->name);
    tr->s.norm_obs = tr->s.norm_reward = tr->s.clip_actions = false;
    if (sk_config_set(tr->cfg, "ppo.norm_obs", "false") != SK_OK ||
        sk_config_set(tr->cfg, "ppo.norm_reward", "false") != SK_OK ||
        sk_config_set(tr->cfg, "ppo.clip_actions", "false") != SK_OK)
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    int rows = tr->s.num_envs; /* single-agent envs only (the learner's check) */
    tr->s.horizon = sk_offpolicy_horizon(op->train_frequency, rows);
    tr->s.num_minibatches = 1;
    tr->s.update_epochs = 1;
    op->steps_per_iteration = (int)((int64_t)tr->s.horizon * rows / op->train_frequency *
                                    op->gradient_steps_per_round);
    /* An iteration is a few env steps (one env: 2), not PPO's thousands: unless given, a
     * metrics row every 100 env steps (CleanRL's SAC logs as often; PPO's default of every
     * iteration logged 500,000 rows in a 1M-step run). The checkpoints' spacing waits for the
     * buffer's size (sk_offpolicy_create). */
    int64_t iteration = (int64_t)tr->s.horizon * rows;
    CHECK(every_env_steps(tr, tr->s.log_every_default, "train.log_every", 100, iteration,
                          &tr->s.log_every));
    return SK_OK;
}

sk_status sk_offpolicy_create(sk_trainer *tr, sk_offpolicy *op) {
    const sk_rollout *ro = &tr->rollout;
    sk_replay_spec spec = {
        .capacity = op->replay.spec.capacity,
        .streams = ro->num_rows,
        .obs_size = ro->obs_size,
        .obs_u8 = ro->obs_u8_dtype,
        .num_heads = ro->num_heads,
        .action_dim = ro->action_dim,
        .mask_size = ro->mask_size,
    };
    CHECK(sk_replay_create(&op->replay, &spec));
    /* Unless train.checkpoint_every was given: a checkpoint every 50,000 env steps (PPO's
     * default of every iteration rewrote a 1M-step SAC run's 100 MB and more every 200 steps),
     * or, when it holds the buffer (replay.save), every replay-bytes / 1 KB steps if rarer, so
     * that checkpoints write at most 1 KB per env step. MinAtar's 1M frames are an 811 MB
     * checkpoint: every 50,000 steps, 5M steps of DQN wrote 81 GB and spent a fifth of the run
     * in the kernel; now 6 checkpoints, one every 2-3 minutes there. */
    int64_t checkpoint_steps = OFFPOLICY_CHECKPOINT_STEPS;
    if (op->save_replay && (int64_t)(sk_replay_bytes(&spec) / 1024) > checkpoint_steps)
        checkpoint_steps = (int64_t)(sk_replay_bytes(&spec) / 1024);
    CHECK(every_env_steps(tr, tr->s.checkpoint_every_default, "train.checkpoint_every",
                          checkpoint_steps, (int64_t)tr->s.horizon * tr->s.num_envs,
                          &tr->s.checkpoint_every));
    size_t rows = (size_t)ro->horizon * (size_t)ro->num_rows * (size_t)ro->obs_size;
    if (ro->obs_u8_dtype) op->final_obs_u8 = calloc(rows, 1);
    else op->final_obs = calloc(rows, sizeof(float));
    if (!op->final_obs && !op->final_obs_u8) return sk_fail(SK_ERR_NOMEM, "out of memory");
    return SK_OK;
}

void sk_offpolicy_free(sk_offpolicy *op) {
    sk_replay_free(&op->replay);
    free(op->final_obs);
    free(op->final_obs_u8);
    op->final_obs = NULL;
    op->final_obs_u8 = NULL;
}

void sk_offpolicy_after_step(sk_trainer *tr, sk_offpolicy *op, sk_worker *wk, int t) {
    const sk_rollout *ro = &tr->rollout;
    const sk_vec_buffers *b = sk_vec_buffers_of(tr->vec);
    size_t O = (size_t)ro->obs_size, row = (size_t)t * (size_t)ro->num_rows;
    for (int i = wk->lo; i < wk->hi; i++) {
        if (!ro->terminated[row + (size_t)i] && !ro->truncated[row + (size_t)i]) continue;
        if (b->final_obs_u8)
            memcpy(op->final_obs_u8 + (row + (size_t)i) * O, b->final_obs_u8 + (size_t)i * O, O);
        else
            memcpy(op->final_obs + (row + (size_t)i) * O, b->final_obs + (size_t)i * O,
                   O * sizeof(float));
    }
}

void sk_offpolicy_store(sk_trainer *tr, sk_offpolicy *op) {
    const sk_rollout *ro = &tr->rollout;
    sk_replay *rb = &op->replay;
    size_t N = (size_t)ro->num_rows, O = (size_t)ro->obs_size, M = (size_t)ro->mask_size;
    size_t H = (size_t)ro->num_heads, D = (size_t)ro->action_dim;
    for (int t = 0; t < ro->horizon; t++) {
        for (size_t i = 0; i < N; i++) {
            size_t k = (size_t)t * N + i, next = k + N;
            size_t slot = (size_t)sk_replay_next_slot(rb, (int)i);
            bool ended = ro->terminated[k] || ro->truncated[k];
            if (ro->obs_u8_dtype) {
                memcpy(rb->obs_u8 + slot * O, ro->obs_u8 + k * O, O);
                memcpy(rb->next_obs_u8 + slot * O,
                       ended ? op->final_obs_u8 + k * O : ro->obs_u8 + next * O, O);
            } else {
                memcpy(rb->obs + slot * O, ro->obs + k * O, O * sizeof(float));
                memcpy(rb->next_obs + slot * O, ended ? op->final_obs + k * O : ro->obs + next * O,
                       O * sizeof(float));
            }
            if (H) memcpy(rb->actions + slot * H, ro->actions + k * H, H * sizeof(int32_t));
            if (D) memcpy(rb->actions_f + slot * D, ro->actions_f + k * D, D * sizeof(float));
            rb->rewards[slot] = ro->rewards[k];
            rb->terminated[slot] = ro->terminated[k];
            rb->truncated[slot] = ro->truncated[k];
            /* the env gives no mask for a final observation: where an episode was cut,
             * every action counts in its bootstrap (a terminated one has none) */
            if (M) {
                if (ended) memset(rb->next_masks + slot * M, 1, M);
                else memcpy(rb->next_masks + slot * M, ro->masks + next * M, M);
            }
        }
        sk_replay_advance(rb, 1);
    }
}

void sk_offpolicy_when(const sk_trainer *tr, const sk_offpolicy *op, int u, bool *learn,
                       bool *update_target, int64_t *env_step) {
    int per_round = op->gradient_steps_per_round, rounds = op->steps_per_iteration / per_round;
    int64_t first = tr->progress.steps - (int64_t)rounds * op->train_frequency;
    int64_t step = first + (int64_t)(u / per_round + 1) * op->train_frequency; /* env steps by then */
    *env_step = step;
    *learn = step > op->learning_starts;
    /* a target update falls at each multiple of target_frequency crossed, after the round */
    *update_target = *learn && u % per_round == per_round - 1 &&
                     step / op->target_frequency != (step - op->train_frequency) / op->target_frequency;
}

double sk_linear_schedule(double start, double end, double duration, double step) {
    double slope = (end - start) / duration;
    return fmax(slope * step + start, end);
}

void sk_target_update(float *target, const float *online, size_t n, double tau) {
    if (tau >= 1.0) {
        memcpy(target, online, n * sizeof(float));
        return;
    }
    float keep = (float)(1.0 - tau), take = (float)tau;
    for (size_t k = 0; k < n; k++) target[k] = take * online[k] + keep * target[k];
}

int sk_offpolicy_save(const sk_trainer *tr, const sk_offpolicy *op, sk_st_tensor *out, int max) {
    (void)tr;
    int n = 0;
    out[n++] = (sk_st_tensor){.name = "offpolicy.gradient_steps", .ndim = 1, .shape = {1},
                              .data = &op->gradient_steps, .dtype = SK_ST_I64};
    if (op->save_replay) n += sk_replay_save(&op->replay, out + n, max - n);
    return n;
}

sk_status sk_offpolicy_restore(sk_trainer *tr, sk_offpolicy *op, const sk_st_file *file,
                               const char *path) {
    CHECK(sk_checkpoint_restore(file, path, "offpolicy.gradient_steps", SK_ST_I64,
                                &op->gradient_steps, 1, true, 0, 9e15));
    if (!sk_replay_in_checkpoint(file)) {
        sk_log(1, "resuming '%s' without its replay buffer (saved with replay.save = false): "
                  "the buffer starts empty, so this run is not the run that never stopped "
                  "(inexact resume)", path);
        return SK_OK;
    }
    int heads[SK_MAX_HEADS];
    for (int h = 0; h < tr->rollout.num_heads; h++) heads[h] = tr->env->action_space.head_sizes[h];
    return sk_replay_restore(&op->replay, file, path, heads);
}
