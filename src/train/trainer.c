/* The PPO trainer: settings, composing the parts (sk_vec, sk_rollout,
 * sk_learner, sk_comm), the iteration loop. */
#include "../io/live.h"
#include "algo.h"
#include "../io/tfevents.h"
#include "../envs/registry.h"
#include "events.h"
#include "plan.h"
#include "run_files.h"
#include "trainer_state.h"

#include "../core/rng.h"
#include "../nn/nn.h"
#include "../vec/pool.h"
#include "../vec/vec_internal.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        sk_status check_status_ = (expr);                                                          \
        if (check_status_ != SK_OK) return check_status_;                                          \
    } while (0)

sk_status sk_settings_resolve(sk_ppo_settings *s, const sk_config *cfg, const sk_env_def *env) {
    int64_t v;
    CHECK(sk_cfg_int(cfg, "env.num_envs", 4, 1, 1 << 22, &v));
    s->num_envs = (int)v;
    CHECK(sk_cfg_int(cfg, "ppo.horizon", 128, 1, 1 << 20, &v));
    s->horizon = (int)v;
    CHECK(sk_cfg_int(cfg, "ppo.num_minibatches", 4, 1, 1 << 20, &v));
    s->num_minibatches = (int)v;
    CHECK(sk_cfg_int(cfg, "ppo.update_epochs", 4, 1, 1000, &v));
    s->update_epochs = (int)v;
    CHECK(sk_cfg_double(cfg, "ppo.learning_rate", 2.5e-4, 0.0, 1.0, &s->learning_rate));
    CHECK(sk_cfg_bool(cfg, "ppo.anneal_lr", true, &s->anneal_lr));
    CHECK(sk_cfg_double(cfg, "ppo.gamma", 0.99, 0.0, 1.0, &s->gamma));
    CHECK(sk_cfg_double(cfg, "ppo.gae_lambda", 0.95, 0.0, 1.0, &s->gae_lambda));
    CHECK(sk_cfg_bool(cfg, "ppo.norm_adv", true, &s->norm_adv));
    CHECK(sk_cfg_double(cfg, "ppo.clip_coef", 0.2, 0.0, 10.0, &s->clip_coef));
    CHECK(sk_cfg_bool(cfg, "ppo.clip_vloss", true, &s->clip_vloss));
    CHECK(sk_cfg_double(cfg, "ppo.ent_coef", 0.01, 0.0, 100.0, &s->ent_coef));
    CHECK(sk_cfg_double(cfg, "ppo.vf_coef", 0.5, 0.0, 100.0, &s->vf_coef));
    CHECK(sk_cfg_double(cfg, "ppo.max_grad_norm", 0.5, 1e-9, 1e9, &s->max_grad_norm));
    CHECK(sk_cfg_double(cfg, "ppo.target_kl", 0.0, 0.0, 1e9, &s->target_kl));
    CHECK(sk_cfg_double(cfg, "ppo.adam_eps", 1e-5, 1e-12, 1.0, &s->adam_eps));
    CHECK(sk_cfg_bool(cfg, "ppo.norm_obs", false, &s->norm_obs));
    CHECK(sk_cfg_bool(cfg, "ppo.norm_reward", false, &s->norm_reward));
    CHECK(sk_cfg_double(cfg, "ppo.clip_obs", 10.0, 1e-3, 1e9, &s->clip_obs));
    CHECK(sk_cfg_double(cfg, "ppo.clip_reward", 10.0, 1e-3, 1e9, &s->clip_reward));
    CHECK(sk_cfg_bool(cfg, "ppo.bootstrap_truncated", true, &s->bootstrap_truncated));
    CHECK(sk_cfg_bool(cfg, "ppo.clip_actions", false, &s->clip_actions));
    CHECK(sk_cfg_double(cfg, "ppo.ema_decay", 0.0, 0.0, 0.999999, &s->ema_decay));
    CHECK(sk_cfg_double(cfg, "governor.max_kl", 1.0, 1e-6, 1e9, &s->governor_max_kl));
    CHECK(sk_cfg_int(cfg, "governor.max_anomalies", 3, 0, SK_GOVERNOR_MAX_ANOMALIES, &v));
    s->governor_max_anomalies = (int)v;
    CHECK(sk_cfg_int(cfg, "governor.window", 20, 1, 1000000, &v));
    s->governor_window = (int)v;
    CHECK(sk_cfg_int(cfg, "train.total_steps", 500000, 1, INT64_MAX / 2, &v));
    s->total_steps = v;
    CHECK(sk_cfg_int(cfg, "train.seed", 1, 0, INT64_MAX, &v));
    s->seed = (uint64_t)v;
    CHECK(sk_cfg_int(cfg, "train.threads", 0, 0, 1024, &v));
    s->threads = (int)v;
    CHECK(sk_cfg_int(cfg, "train.slices", 0, 0, SK_MAX_WORKERS, &v));
    s->slices = (int)v;
    CHECK(sk_cfg_bool(cfg, "train.stop_when_solved", false, &s->stop_when_solved));
    /* an off-policy learner's defaults count env steps (sk_offpolicy_settings) */
    s->checkpoint_every_default = !sk_config_get(cfg, "train.checkpoint_every");
    s->log_every_default = !sk_config_get(cfg, "train.log_every");
    CHECK(sk_cfg_int(cfg, "train.checkpoint_every", 100, 0, INT32_MAX, &v));
    s->checkpoint_every = (int)v;
    CHECK(sk_cfg_int(cfg, "train.grad_stats_every", 10, 0, INT32_MAX, &v));
    s->grad_stats_every = (int)v;
    CHECK(sk_cfg_int(cfg, "train.log_every", 1, 1, INT32_MAX, &v));
    s->log_every = (int)v;
    CHECK(sk_cfg_bool(cfg, "telemetry.tensorboard", false, &s->tensorboard));
    static const char *const comm_modes[] = {"exact", "scale", NULL};
    int mode;
    CHECK(sk_cfg_choice(cfg, "comm.mode", "exact", comm_modes, &mode));
    s->comm_scale = mode == 1; /* trainer_build_local keeps it only under several processes */
    /* a multi-agent env's batch is its rows': envs x agents */
    int64_t batch = (int64_t)s->num_envs * (env ? sk_env_agents(env) : 1) * s->horizon;
    if (batch > (1 << 26))
        return sk_fail(SK_ERR_INVALID, "env.num_envs x agents x ppo.horizon = %lld is too large "
                       "(max %d)", (long long)batch, 1 << 26);
    if (batch % s->num_minibatches != 0 || batch / s->num_minibatches < 2)
        return sk_fail(SK_ERR_INVALID,
                       "ppo.num_minibatches = %d must divide the batch env.num_envs x ppo.horizon "
                       "= %lld into minibatches of at least 2",
                       s->num_minibatches, (long long)batch);
    return SK_OK;
}

/* ppo.bptt_horizon, for a policy with a core: the steps of one training
 * sequence (gradients flow back through time within it). It must divide
 * ppo.horizon, and the sequences (env.num_envs x ppo.horizon / it) must split
 * into ppo.num_minibatches equal minibatches. */
static sk_status resolve_sequences(sk_trainer *tr) {
    const sk_policy *policy = &tr->learner.policy;
    /* this rank's envs in scale mode; a multi-agent env's rows */
    int N = tr->layout.env_count * sk_env_agents(tr->env), T = tr->s.horizon;
    int L = 1;
    if (!policy->core && sk_config_get(tr->cfg, "ppo.bptt_horizon")) {
        /* a recurrent preset run with policy.core = none: known, checked, unused */
        int64_t unused;
        CHECK(sk_cfg_int(tr->cfg, "ppo.bptt_horizon", T, 1, T, &unused));
    }
    if (policy->core) {
        int64_t v;
        CHECK(sk_cfg_int(tr->cfg, "ppo.bptt_horizon", T % 16 == 0 ? 16 : T, 1, T, &v));
        L = (int)v;
        if (T % L != 0)
            return sk_fail(SK_ERR_CONFIG,
                           "ppo.bptt_horizon = %d must divide ppo.horizon = %d (a rollout is cut "
                           "into whole sequences)",
                           L, T);
        int sequences = N * (T / L);
        if (sequences % tr->s.num_minibatches != 0 && !tr->s.comm_scale)
            return sk_fail(SK_ERR_CONFIG,
                           "ppo.num_minibatches = %d must divide the %d sequences of a rollout "
                           "(env.num_envs %d x ppo.horizon %d / ppo.bptt_horizon %d)",
                           tr->s.num_minibatches, sequences, N, T, L);
    }
    if (tr->s.comm_scale && N * (T / L) % tr->s.num_minibatches != 0)
        return sk_fail(SK_ERR_CONFIG,
                       "comm.mode = scale: ppo.num_minibatches = %d must divide the %d sequences "
                       "of rank %d's rollout (its %d of env.num_envs %d x ppo.horizon %d / %d "
                       "steps a sequence): each rank draws its minibatches from its own rows; "
                       "choose env.num_envs so that every rank's share divides",
                       tr->s.num_minibatches, N * (T / L), tr->comm.rank, N, tr->s.num_envs, T, L);
    tr->rollout.state_size = sk_policy_state_size(policy);
    tr->rollout.bptt_horizon = L;
    tr->learner.num_sequences = N * (T / L);
    tr->learner.minibatch_sequences = tr->learner.num_sequences / tr->s.num_minibatches;
    tr->learner.minibatch_capacity =
        sk_env_agents(tr->env) > 1
            ? (N * (T + 1) + tr->s.num_minibatches - 1) / tr->s.num_minibatches
            : tr->learner.minibatch_sequences;
    return SK_OK;
}

const char *const sk_trainer_sections[] = {"env",  "ppo",      "policy",    "train",  "governor",
                                           "comm", "selfplay", "telemetry", "dqn",    "replay",
                                           "sac",  NULL};

/* A worker's stream and scratch beyond the table's arrays (trainer_state.c). */
static sk_status alloc_worker(sk_trainer *tr, sk_worker *wk, int w) {
    int slice = wk->hi - wk->lo;
    int block_sequences =
        (tr->learner.minibatch_capacity + tr->layout.minibatch_parts - 1) / tr->layout.minibatch_parts;
    int capacity = SK_MAX(SK_MAX(slice, block_sequences * tr->rollout.bptt_horizon), 1);
    /* the run's worker index: one process with K threads and K ranks of one
     * thread each give each worker the same stream */
    wk->rng = sk_rng_seed(tr->s.seed ^ 0x5eed5eed5eedULL, (uint64_t)(tr->layout.worker_offset + w));
    CHECK(sk_policy_work_alloc(&wk->work, &tr->learner.policy, capacity));
    CHECK(sk_welford_init(&wk->obs_acc, tr->obs_size));
    CHECK(sk_welford_init(&wk->return_acc, 1));
    return SK_OK;
}

static void free_worker(sk_worker *wk) {
    sk_policy_work_free(&wk->work);
    sk_welford_free(&wk->obs_acc);
    sk_welford_free(&wk->return_acc);
}

static sk_status learner_init(sk_trainer *tr) {
    sk_learner *ln = &tr->learner;
    uint64_t init_rng = sk_rng_seed(tr->s.seed, 0x1417ULL);
    sk_policy_init_params(&ln->policy, ln->params, &init_rng);
    if (tr->s.ema_decay > 0.0) memcpy(ln->ema, ln->params, ln->policy.num_params * sizeof(float));
    ln->governor.max_kl = tr->s.governor_max_kl;
    ln->governor.max_anomalies = tr->s.governor_max_anomalies;
    ln->governor.window = tr->s.governor_window;
    ln->rng = sk_rng_seed(tr->s.seed, 0x5417ULL);
    CHECK(sk_running_stats_init(&ln->obs_stats, tr->obs_size));
    CHECK(sk_running_stats_init(&ln->return_stats, 1));
    CHECK(sk_norm_map_init(&ln->obs_map, tr->obs_size, (float)tr->s.clip_obs));
    CHECK(sk_norm_map_init(&ln->reward_map, 1, (float)tr->s.clip_reward));
    return SK_OK;
}

static void learner_free(sk_learner *ln) {
    sk_running_stats_free(&ln->obs_stats);
    sk_running_stats_free(&ln->return_stats);
    sk_norm_map_free(&ln->obs_map);
    sk_norm_map_free(&ln->reward_map);
}

/* What each rank builds alone: the env, the settings, its vec, the policy.
 * env is the one a plan resolved, or NULL to look env.id up (and load the
 * env.plugin the config names). */
static sk_status trainer_build_local(sk_trainer *tr, const sk_env_def *env) {
    const char *env_name = sk_cfg_string(tr->cfg, "env.id", env ? env->id : NULL);
    if (!env_name) return sk_fail(SK_ERR_CONFIG, "no environment given (set env.id)");
    if (env && !sk_run_plan_names(env, env_name))
        return sk_fail(SK_ERR_CONFIG, "env.id = %s, but the trainer was given %s", env_name,
                       env->id);
    sk_cfg_string(tr->cfg, "env.plugin", NULL); /* known: the env's plugin (a plan loaded it) */
    tr->env = env ? env : sk_env_of_config(tr->cfg, env_name);
    if (!tr->env) return SK_ERR_UNKNOWN_ENV;
    CHECK(sk_env_configure(tr->env, tr->cfg, &tr->env));
    CHECK(sk_env_record_plugin(tr->cfg, tr->env));
    CHECK(sk_algo_resolve(tr->cfg, &tr->algo));
    CHECK(sk_settings_resolve(&tr->s, tr->cfg, tr->env));
    if (tr->algo->settings) CHECK(tr->algo->settings(tr));
    if (sk_env_agents(tr->env) > 1 && tr->comm.size > 1)
        return sk_fail(SK_ERR_CONFIG, "%s has %d agents per env; multi-agent envs train in one "
                       "process (use --threads, not mpirun)", tr->env->id, tr->env->num_agents);
    int K = tr->comm.size, lo, hi;
    if (tr->s.num_envs < K)
        return sk_fail(SK_ERR_CONFIG,
                       "env.num_envs = %d is fewer than the %d processes of the run (each steps a "
                       "slice of the envs); set env.num_envs to at least %d",
                       tr->s.num_envs, K, K);
    sk_comm_env_range(tr->s.num_envs, tr->comm.rank, K, &lo, &hi);
    int threads = sk_threads_or_cores(tr->s.threads);
    if (tr->s.slices > 0) threads = SK_MIN(threads, tr->s.slices); /* a thread a slice at most */
    tr->s.comm_scale = tr->s.comm_scale && K > 1; /* scale in one process is exact */
    tr->layout.env_seed = tr->s.seed;
    if (tr->s.comm_scale) {
        /* the rank creates its own envs alone, numbered from 0: rank r > 0 resets them
         * from a seed of its own, so no two ranks' envs share a stream */
        tr->layout.env_first = lo;
        tr->layout.env_count = hi - lo;
        if (tr->comm.rank > 0)
            tr->layout.env_seed = sk_rng_seed(tr->s.seed ^ 0x5ca1e5eedULL, (uint64_t)tr->comm.rank);
        CHECK(sk_vec_create_range(&tr->vec, tr->env, hi - lo, 0, hi - lo, threads, tr->cfg));
    } else {
        tr->layout.env_first = 0;
        tr->layout.env_count = tr->s.num_envs;
        CHECK(sk_vec_create_range(&tr->vec, tr->env, tr->s.num_envs, lo, hi, threads, tr->cfg));
    }
    CHECK(sk_policy_configure(&tr->learner.policy, tr->cfg, tr->env, sk_vec_state(tr->vec)));
    CHECK(resolve_sequences(tr));
    if (sk_env_agents(tr->env) > 1 && tr->learner.policy.core)
        return sk_fail(SK_ERR_CONFIG, "%s has %d agents per env; a policy with a core "
                       "(policy.core) does not train multi-agent envs yet: set policy.core = none",
                       tr->env->id, tr->env->num_agents);
    CHECK(sk_selfplay_configure(tr));
    tr->hooks = sk_selfplay_hooks(&tr->sp);
    tr->hooks_ctx = &tr->sp;
    if (tr->algo->check) CHECK(tr->algo->check(tr));
    CHECK(sk_algo_check_sections(tr->algo, tr->cfg));
    for (int i = 0; sk_trainer_sections[i]; i++) CHECK(sk_cfg_check_unused(tr->cfg, sk_trainer_sections[i]));
    CHECK(sk_cfg_check_sections(tr->cfg, sk_trainer_sections));
    tr->num_threads = sk_vec_num_workers(tr->vec);
    tr->learner_threads = tr->num_threads;
    tr->num_workers = tr->s.slices > 0 ? tr->s.slices : tr->num_threads;
    int rank_envs = hi - lo; /* the envs this rank steps, in either mode */
    if (tr->s.slices > rank_envs)
        return sk_fail(SK_ERR_CONFIG,
                       "train.slices = %d is more than the %d envs %s steps (a slice is at "
                       "least one env); set train.slices to at most %d, or 0 for one slice per "
                       "thread",
                       tr->s.slices, rank_envs, K > 1 ? "each process" : "the run", rank_envs);
    return SK_OK;
}

/* Collective: every rank's worker count, and where this rank's workers sit
 * among the run's. */
static sk_status count_workers(sk_trainer *tr) {
    int K = tr->comm.size;
    CHECK(sk_trainer_state_alloc(tr, true));
    double *counts = malloc((size_t)K * 2 * sizeof *counts); /* (ranks, workers and threads) */
    double mine[2] = {tr->num_workers, tr->num_threads};
    if (counts) sk_comm_allgather_f64(&tr->comm, mine, 2, counts);
    if (!counts) return sk_fail(SK_ERR_NOMEM, "out of memory");
    sk_run_layout *lay = &tr->layout;
    lay->worker_offset = lay->total_workers = lay->max_workers = 0;
    lay->thread_offset = lay->total_threads = 0;
    for (int r = 0; r < K; r++) {
        lay->rank_workers[r] = (int)counts[2 * r];
        if (r < tr->comm.rank) lay->worker_offset += lay->rank_workers[r];
        if (r < tr->comm.rank) lay->thread_offset += (int)counts[2 * r + 1];
        lay->total_workers += lay->rank_workers[r];
        lay->total_threads += (int)counts[2 * r + 1];
        lay->max_workers = SK_MAX(lay->max_workers, lay->rank_workers[r]);
    }
    free(counts);
    lay->minibatch_part_offset = tr->s.comm_scale ? 0 : lay->thread_offset;
    lay->minibatch_parts = tr->s.comm_scale ? tr->num_threads : lay->total_threads;
    return SK_OK;
}

/* The rollout arrays the learner reads, as columns of envs, for the exchange
 * between ranks after each rollout (rows 0..T of the observations and masks). */
static int rollout_columns(sk_trainer *tr, sk_comm_columns *out) {
    sk_rollout *ro = &tr->rollout;
    size_t T = (size_t)ro->horizon, f = sizeof(float);
    size_t chunks = T / (size_t)ro->bptt_horizon, S = (size_t)ro->state_size;
    int n = 0;
    if (ro->obs_u8_dtype) out[n++] = (sk_comm_columns){ro->obs_u8, T + 1, (size_t)ro->obs_size};
    else out[n++] = (sk_comm_columns){ro->obs, T + 1, (size_t)ro->obs_size * f};
    out[n++] = (sk_comm_columns){ro->values, T + 1, f};
    out[n++] = (sk_comm_columns){ro->logp, T, f};
    out[n++] = (sk_comm_columns){ro->advantages, T, f};
    out[n++] = (sk_comm_columns){ro->returns, T, f};
    out[n++] = (sk_comm_columns){ro->terminated, T, 1};
    out[n++] = (sk_comm_columns){ro->truncated, T, 1};
    if (ro->mask_size) out[n++] = (sk_comm_columns){ro->masks, T + 1, (size_t)ro->mask_size};
    if (ro->num_heads)
        out[n++] = (sk_comm_columns){ro->actions, T, (size_t)ro->num_heads * sizeof(int32_t)};
    if (ro->action_dim) out[n++] = (sk_comm_columns){ro->actions_f, T, (size_t)ro->action_dim * f};
    if (S) out[n++] = (sk_comm_columns){ro->chunk_state, chunks, S * f};
    return n;
}

enum { MAX_COLUMNS = 16 + SK_MAX_ENV_ARRAYS };

/* The per-env state a checkpoint holds beyond the rollout's arrays. */
static int state_columns(sk_trainer *tr, sk_comm_columns *out) {
    sk_rollout *ro = &tr->rollout;
    size_t S = (size_t)ro->state_size, f = sizeof(float);
    int n = 0;
    out[n++] = (sk_comm_columns){ro->discounted_return, 1, sizeof(double)};
    if (S) out[n++] = (sk_comm_columns){ro->state, 1, S * f};
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    int count = sk_vec_state_arrays(tr->vec, arrays);
    for (int a = 0; a < count; a++)
        out[n++] = (sk_comm_columns){arrays[a].data, 1,
                                     (size_t)arrays[a].count * sk_array_type_size(arrays[a].type)};
    return n;
}

void sk_trainer_gathered_free(sk_trainer *tr) {
    for (int k = 0; k < tr->gathered.count; k++) free(tr->gathered.all[k]);
    tr->gathered.count = 0;
}

const void *sk_trainer_gathered(const sk_trainer *tr, const void *local) {
    for (int k = 0; k < tr->gathered.count; k++)
        if (tr->gathered.local[k] == local) return tr->gathered.all[k];
    return local;
}

/* comm.mode = scale: every rank's rows of the per-env state a checkpoint holds (the
 * current observations and masks, the state columns), in rank order, which is env
 * order, into tr->gathered; each rank holds only its own envs' rows between checkpoints. */
static void gather_saved_envs(sk_trainer *tr) {
    sk_rollout *ro = &tr->rollout;
    sk_trainer_gathered_free(tr);
    sk_comm_columns columns[MAX_COLUMNS];
    size_t current = sk_trainer_current_row(tr), O = (size_t)ro->obs_size, M = (size_t)ro->mask_size;
    int n = 0;
    if (ro->obs_u8_dtype) columns[n++] = (sk_comm_columns){ro->obs_u8 + current * O, 1, O};
    else columns[n++] = (sk_comm_columns){ro->obs + current * O, 1, O * sizeof(float)};
    if (M) columns[n++] = (sk_comm_columns){ro->masks + current * M, 1, M};
    n += state_columns(tr, columns + n);
    SK_ASSERT(n <= SK_MAX_GATHERED);
    size_t *counts = tr->layout.rank_floats; /* free between merges */
    for (int k = 0; k < n; k++) {
        for (int r = 0; r < tr->comm.size; r++) {
            int lo, hi;
            sk_comm_env_range(tr->s.num_envs, r, tr->comm.size, &lo, &hi);
            counts[r] = (size_t)(hi - lo) * columns[k].bytes_per_env;
        }
        void *all = malloc((size_t)tr->s.num_envs * columns[k].bytes_per_env + 1);
        SK_ASSERT(all);
        sk_comm_allgatherv_bytes(&tr->comm, columns[k].data, all, counts);
        tr->gathered.local[k] = columns[k].data;
        tr->gathered.all[k] = all;
        tr->gathered.count = k + 1;
    }
}

void sk_trainer_sync_state(sk_trainer *tr) {
    uint64_t *mine = tr->layout.rngs_all + 1 + tr->layout.worker_offset;
    for (int w = 0; w < tr->num_workers; w++) mine[w] = tr->workers[w].rng;
    tr->layout.rngs_all[0] = tr->learner.rng;
    if (tr->comm.size == 1) return;
    size_t *counts = tr->layout.rank_floats; /* free between merges */
    for (int r = 0; r < tr->comm.size; r++) counts[r] = (size_t)tr->layout.rank_workers[r] * sizeof(uint64_t);
    uint64_t *copy = malloc((size_t)tr->num_workers * sizeof *copy + 1);
    SK_ASSERT(copy);
    memcpy(copy, mine, (size_t)tr->num_workers * sizeof *copy);
    sk_comm_allgatherv_bytes(&tr->comm, copy, tr->layout.rngs_all + 1, counts);
    free(copy);
    if (tr->s.comm_scale) {
        gather_saved_envs(tr);
        return;
    }
    sk_comm_columns columns[MAX_COLUMNS];
    int n = rollout_columns(tr, columns);
    n += state_columns(tr, columns + n);
    SK_ASSERT(n <= MAX_COLUMNS);
    size_t bytes = sk_comm_columns_scratch(columns, n, tr->s.num_envs);
    void *scratch = malloc(bytes + 1);
    SK_ASSERT(scratch);
    sk_comm_allgather_columns(&tr->comm, columns, n, tr->s.num_envs, scratch);
    free(scratch);
}

size_t sk_trainer_exchange_bytes(sk_trainer *tr) {
    if (tr->comm.size == 1 || tr->s.comm_scale) return 0; /* scale: no rollout exchange */
    sk_comm_columns columns[MAX_COLUMNS];
    int n = rollout_columns(tr, columns);
    return sk_comm_columns_scratch(columns, n, tr->s.num_envs);
}

/* After a rollout, every rank gets every rank's rows: each computes its
 * share of every minibatch, drawn from all the envs as in one process. */
static void exchange_rollout(sk_trainer *tr) {
    if (tr->comm.size == 1 || tr->s.comm_scale) return;
    sk_comm_columns columns[MAX_COLUMNS];
    int n = rollout_columns(tr, columns);
    sk_comm_allgather_columns(&tr->comm, columns, n, tr->s.num_envs, tr->layout.columns_scratch);
}

/* What follows the collective count of workers: storage, the learner, workers. */
static sk_status trainer_build_shared(sk_trainer *tr) {

    const sk_env_def *env = tr->env;
    tr->obs_size = env->obs_size;
    tr->rollout.obs_u8_dtype = env->obs_dtype == SK_OBS_U8;
    if (tr->s.norm_obs && tr->rollout.obs_u8_dtype)
        return sk_fail(SK_ERR_CONFIG,
                       "ppo.norm_obs = true, but %s observes uint8 images (expected "
                       "ppo.norm_obs = false: running normalisation applies to float vectors; "
                       "a uint8 observation reaches the encoder as its byte values)",
                       env->id);
    if (tr->s.norm_obs && env->obs_size > SK_MAX_OBS_NORM)
        return sk_fail(SK_ERR_CONFIG, "ppo.norm_obs supports observations of up to %d values; %s has %d",
                       SK_MAX_OBS_NORM, env->id, env->obs_size);
    bool continuous = env->action_space.kind == SK_SPACE_CONTINUOUS;
    tr->num_heads = continuous ? 0 : env->action_space.num_heads;
    tr->action_dim = continuous ? env->action_space.dim : 0;
    tr->mask_size = env->mask_size;
    int A = sk_env_agents(env), N = tr->s.num_envs * A, T = tr->s.horizon;
    /* the run's batch and minibatch (in scale mode, every rank's rows together); a
     * multi-agent env's rows are its (env, agent) pairs, of which only the active are
     * samples: its minibatches are cut from those (sk_learner_update) */
    tr->batch_size = N * T;
    tr->minibatch_size = tr->batch_size / tr->s.num_minibatches;
    tr->rollout.num_rows = tr->layout.env_count * A;
    tr->rollout.num_agents = A;
    tr->rollout.horizon = T;
    tr->rollout.obs_size = tr->obs_size;
    tr->rollout.num_heads = tr->num_heads;
    tr->rollout.action_dim = tr->action_dim;
    if (tr->s.clip_actions && !continuous)
        return sk_fail(SK_ERR_CONFIG, "ppo.clip_actions = true, but %s's actions are not "
                       "continuous (expected false: it clips a Box action to its bounds)", env->id);
    tr->rollout.clip_actions = tr->s.clip_actions ? &env->action_space : NULL;
    tr->rollout.mask_size = tr->mask_size;
    tr->workers = calloc((size_t)tr->num_workers, sizeof(sk_worker));
    if (!tr->workers) return sk_fail(SK_ERR_NOMEM, "out of memory");
    for (int w = 0; w < tr->num_workers; w++) { /* in rows: envs x agents */
        sk_vec_slices(tr->vec, w, tr->num_workers, &tr->workers[w].lo, &tr->workers[w].hi);
        tr->workers[w].lo *= A;
        tr->workers[w].hi *= A;
    }
    CHECK(sk_trainer_state_alloc(tr, false));
    CHECK(learner_init(tr));
    sk_selfplay_start(tr);
    for (int w = 0; w < tr->num_workers; w++) CHECK(alloc_worker(tr, &tr->workers[w], w));
    if (tr->algo->create) CHECK(tr->algo->create(tr));
    tr->progress.result.solved_at_steps = -1;
    tr->progress.result.solved_at_seconds = NAN;
    return SK_OK;
}

sk_status sk_trainer_fail(sk_trainer *tr, sk_status status) {
    if (status != SK_OK) snprintf(tr->last_error, sizeof tr->last_error, "%s", sk_last_error());
    return status;
}

const char *sk_trainer_last_error(const sk_trainer *tr) {
    return tr->last_error[0] ? tr->last_error : "no error";
}

static sk_status trainer_create(sk_trainer **out, const sk_config *cfg, const sk_env_def *env,
                                const sk_comm *comm);

sk_status sk_trainer_create(sk_trainer **out, const sk_config *cfg) {
    sk_comm single = sk_comm_single();
    return sk_trainer_create_comm(out, cfg, &single);
}

sk_status sk_trainer_create_comm(sk_trainer **out, const sk_config *cfg, const sk_comm *comm) {
    return trainer_create(out, cfg, NULL, comm);
}

sk_status sk_trainer_create_plan(sk_trainer **out, const sk_run_plan *plan, const sk_comm *comm) {
    if (!plan->env) {
        *out = NULL;
        return sk_fail(SK_ERR_INVALID, "sk_trainer_create_plan: the plan's env is not resolved");
    }
    return trainer_create(out, plan->cfg, plan->env, comm);
}

static sk_status trainer_create(sk_trainer **out, const sk_config *cfg, const sk_env_def *env,
                                const sk_comm *comm) {
    *out = NULL;
    sk_trainer *tr = calloc(1, sizeof *tr);
    sk_status status = tr ? SK_OK : sk_fail(SK_ERR_NOMEM, "out of memory");
    if (tr) {
        tr->comm = *comm;
        tr->out.run_lock = -1;
        tr->cfg = sk_config_copy(cfg);
        status = tr->cfg ? trainer_build_local(tr, env) : sk_fail(SK_ERR_NOMEM, "out of memory");
    }
    /* every rank goes on together, or none does (with the failing rank's message) */
    status = sk_comm_agree(comm, status);
    if (status == SK_OK) {
        status = count_workers(tr);
        if (status == SK_OK) status = trainer_build_shared(tr);
        status = sk_comm_agree(comm, status);
    }
    if (status != SK_OK) {
        sk_trainer_destroy(tr);
        return status;
    }
    *out = tr;
    return SK_OK;
}

void sk_trainer_destroy(sk_trainer *tr) {
    if (!tr) return;
    for (int w = 0; tr->workers && w < tr->num_workers; w++) free_worker(&tr->workers[w]);
    if (tr->algo && tr->algo->destroy) tr->algo->destroy(tr);
    sk_selfplay_close(tr);
    sk_trainer_state_free(tr); /* the workers' arrays too: before the workers go */
    sk_trainer_gathered_free(tr);
    free(tr->workers);
    sk_vec_destroy(tr->vec);
    learner_free(&tr->learner);
    if (tr->out.metrics) fclose(tr->out.metrics);
    if (tr->out.roles) fclose(tr->out.roles);
    if (tr->out.learner) fclose(tr->out.learner);
    (void)sk_tfevents_close(tr->out.tensorboard); /* a run that failed before sk_run_end */
    if (tr->out.telemetry) sk_events_end(tr, SK_OK);
    sk_live_close(tr->out.live);
    sk_run_unlock(tr->out.run_lock);
    sk_config_free(tr->cfg);
    free(tr);
}

void sk_trainer_abort(sk_trainer *tr) { atomic_store(&tr->abort_requested, true); }

void sk_trainer_set_callback(sk_trainer *tr, sk_update_fn fn, void *user) {
    tr->out.callback = fn;
    tr->out.callback_user = user;
}

sk_status sk_trainer_set_run_dir(sk_trainer *tr, const char *dir) {
    if (strlen(dir) >= sizeof tr->out.run_dir - 64)
        return sk_trainer_fail(tr, sk_fail(SK_ERR_INVALID, "run directory path is too long"));
    if (tr->out.run_lock >= 0 && strcmp(dir, tr->out.run_dir) == 0) return SK_OK; /* held already */
    sk_status status = sk_mkdirs(dir);
    int lock_fd = -1;
    if (status == SK_OK) status = sk_run_lock(dir, &lock_fd); /* one writer per folder */
    if (status != SK_OK) return sk_trainer_fail(tr, status);
    sk_run_unlock(tr->out.run_lock);
    tr->out.run_lock = lock_fd;
    snprintf(tr->out.run_dir, sizeof tr->out.run_dir, "%s", dir);
    return SK_OK;
}

sk_train_result sk_trainer_result(const sk_trainer *tr) { return tr->progress.result; }

int sk_trainer_threads(const sk_trainer *tr) { return tr->num_threads; }

int sk_trainer_learner_threads(const sk_trainer *tr) { return tr->learner_threads; }

size_t sk_trainer_num_params(const sk_trainer *tr) { return tr->learner.policy.num_params; }

int sk_trainer_batch_size(const sk_trainer *tr) { return tr->batch_size; }

double sk_trainer_flops_per_step(const sk_trainer *tr) { return tr->algo->flops_per_step(tr); }

void sk_trainer_time_split(const sk_trainer *tr, double *rollout_seconds, double *learn_seconds) {
    if (rollout_seconds) *rollout_seconds = tr->progress.rollout_seconds;
    if (learn_seconds) *learn_seconds = tr->progress.learn_seconds;
}

const sk_config *sk_trainer_config(const sk_trainer *tr) { return tr->cfg; }

/* Adds the rollout's finished episodes of every worker (of every rank,
 * through sk_comm) to the 100-episode window in the order they ended (step,
 * then rank and worker), whatever the split. */
static void merge_episodes(sk_trainer *tr) {
    int L = tr->env->num_log_fields, W = tr->num_workers, Wmax = tr->layout.max_workers;
    size_t record = SK_EPISODE_RECORD(L);
    /* this rank's records, worker after worker, and how many each has */
    size_t local = 0;
    for (int w = 0; w < W; w++) {
        const sk_worker *wk = &tr->workers[w];
        size_t floats = (size_t)wk->num_episodes * record;
        memcpy(tr->layout.episodes_local + local, wk->episodes, floats * sizeof(float));
        local += floats;
        tr->layout.episode_counts[w] = wk->num_episodes;
    }
    for (int w = W; w < Wmax; w++) tr->layout.episode_counts[w] = 0; /* padding */
    sk_comm_allgatherv_f32(&tr->comm, tr->layout.episodes_local, local, tr->layout.episodes_all,
                           sk_trainer_array_count(tr, SK_SIZE_EPISODES_ALL), tr->layout.rank_floats);
    sk_comm_allgather_f64(&tr->comm, tr->layout.episode_counts, (size_t)Wmax, tr->layout.episode_counts_all);
    const int64_t *start = tr->layout.part_start;
    int32_t *count = tr->layout.part_count, *cursor = tr->layout.part_cursor;
    int parts = 0;
    size_t at = 0;
    for (int r = 0; r < tr->comm.size; r++) /* (rank, worker) order: the run's worker order */
        for (int w = 0; w < tr->layout.rank_workers[r]; w++, parts++) {
            tr->layout.part_start[parts] = (int64_t)at;
            count[parts] = (int)tr->layout.episode_counts_all[(size_t)r * (size_t)Wmax + (size_t)w];
            cursor[parts] = 0;
            at += (size_t)count[parts] * record;
        }
    memset(tr->progress.log_sum, 0, sizeof tr->progress.log_sum);
    memset(tr->progress.role_return_sum, 0, sizeof tr->progress.role_return_sum);
    memset(tr->progress.role_count, 0, sizeof tr->progress.role_count);
    tr->progress.log_count = 0;
    for (int t = 0; t < tr->s.horizon; t++) {
        for (int k = 0; k < parts; k++) {
            const float *part = tr->layout.episodes_all + start[k];
            while (cursor[k] < count[k] && (int)part[record * (size_t)cursor[k] + (size_t)L] == t) {
                const float *episode = part + record * (size_t)cursor[k]++;
                for (int f = 2; f < L; f++) tr->progress.log_sum[f] += episode[f];
                tr->progress.log_count++;
                int role = (int)episode[L + 1];
                if (role < SK_MAX_ROLES) {
                    tr->progress.role_return_sum[role] += episode[0];
                    tr->progress.role_count[role]++;
                    tr->progress.role_return_total[role] += episode[0];
                    tr->progress.role_count_total[role]++;
                }
                tr->progress.window_return[tr->progress.window_pos] = episode[0];
                tr->progress.window_length[tr->progress.window_pos] = episode[1];
                tr->progress.window_pos = (tr->progress.window_pos + 1) % SK_WINDOW;
                if (tr->progress.window_count < SK_WINDOW) tr->progress.window_count++;
                tr->progress.episodes++;
            }
        }
    }
}

double sk_window_mean(const float *values, int count) {
    if (count == 0) return NAN;
    double sum = 0.0;
    for (int i = 0; i < count; i++) sum += values[i];
    return sum / count;
}

/* Whether flag holds on any rank (every rank gets the answer). */
bool sk_trainer_any_rank(sk_trainer *tr, bool flag) {
    if (tr->comm.size == 1) return flag;
    double value = flag ? 1.0 : 0.0; /* a count of 0s and 1s: exact in any order */
    sk_comm_tree_allreduce_f32_f64(&tr->comm, NULL, 0, &value, 1);
    return value > 0.0;
}

/* Collective: rank 0 writes RUN_DIR/policy.safetensors with every rank's
 * state; every rank gets its status. */
static sk_status checkpoint(sk_trainer *tr) {
    sk_trainer_sync_state(tr);
    sk_status status = tr->comm.rank == 0 ? sk_run_checkpoint(tr) : SK_OK;
    sk_trainer_gathered_free(tr);
    return sk_comm_agree(&tr->comm, status);
}

sk_status sk_trainer_run(sk_trainer *tr) {
    if (tr->ran)
        return sk_trainer_fail(tr, sk_fail(SK_ERR_INVALID,
                                           "sk_trainer_run was already called on this trainer; "
                                           "create a new one (sk_trainer_resume continues from a "
                                           "checkpoint)"));
    tr->ran = true;
    int64_t num_updates = SK_MAX(1, tr->s.total_steps / tr->batch_size);
    /* rank 0 alone writes the run folder; the others join its checkpoints */
    sk_status begun = tr->out.run_dir[0] && tr->comm.rank == 0 ? sk_run_begin(tr) : SK_OK;
    CHECK(sk_trainer_fail(tr, sk_comm_agree(&tr->comm, begun)));
    tr->out.run_files = sk_trainer_any_rank(tr, tr->comm.rank == 0 && tr->out.run_dir[0]);
    tr->progress.start_time = sk_now();
    if (!tr->resumed) sk_trainer_run_workers(tr, sk_reset_job);
    bool governed = tr->algo->governed;
    if (governed) sk_governor_save(&tr->learner);
    sk_status status = SK_OK;
    /* the reset observations were normalised with the initial statistics
     * (identity up to eps); they count toward the first update of them */
    bool stop = false;
    while (tr->progress.update < num_updates && !stop) {
        if (governed && !sk_all_finite(tr->learner.params, tr->learner.policy.num_params)) { /* corrupted between updates */
            status = sk_governor_trouble(tr, "non-finite weights before the rollout");
            if (status != SK_OK) break;
        }
        double rollout_start = sk_now();
        double rollout_wall = sk_trainer_run_rollout(tr);
        tr->progress.rollout_available += rollout_wall * tr->num_threads;
        for (int t = 0; t < tr->num_threads; t++) tr->progress.rollout_busy += tr->thread_busy[t];
        /* an env that broke its contract (sk_vec_step_checked) stops every rank */
        if (sk_trainer_any_rank(tr, sk_vec_faulted(tr->vec))) {
            atomic_store(&tr->abort_requested, true); /* no checkpoint of that rollout */
            status = sk_vec_faulted(tr->vec) ? sk_vec_fault(tr->vec)
                                             : sk_fail(SK_ERR_ENV, "an env of another rank broke "
                                                                   "its contract (that rank names it)");
            break;
        }
        if (sk_trainer_any_rank(tr, atomic_load(&tr->abort_requested))) {
            atomic_store(&tr->abort_requested, true);
            status = sk_fail(SK_ERR_INTERRUPTED,
                             "training was aborted during update %lld's rollout (an env failed); "
                             "that rollout was not learned from and no checkpoint was written of it",
                             (long long)tr->progress.update + 1);
            break;
        }
        exchange_rollout(tr);
        double learn_start = sk_now();
        tr->progress.rollout_seconds += learn_start - rollout_start;
        tr->progress.update++;
        tr->progress.steps += tr->batch_size;
        merge_episodes(tr);
        if (tr->hooks && tr->hooks->after_rollout) tr->hooks->after_rollout(tr->hooks_ctx, &tr->rollout);

        sk_update_stats *st = &tr->progress.last;
        memset(st, 0, sizeof *st);
        const char *anomaly = NULL;
        status = tr->algo->learn(tr, st, &anomaly);
        tr->progress.learn_seconds += sk_now() - learn_start;
        if (status != SK_OK) break;
        if (anomaly) {
            SK_ASSERT(governed); /* only a governed learner's weights have a good copy */
            status = sk_governor_trouble(tr, anomaly);
            st->restored = true;
            if (status != SK_OK) break;
        } else if (governed) {
            sk_governor_save(&tr->learner);
            sk_learner_ema_update(&tr->learner, tr->s.ema_decay, tr->progress.update);
        }
        if (tr->sp.on) { /* rank 0 writes elo.csv: its failure ends every rank's run */
            status = sk_comm_agree(&tr->comm, sk_selfplay_after_update(tr));
            if (status != SK_OK) break;
        }
        st->anomalies = tr->learner.governor.anomalies;
        st->update = tr->progress.update;
        st->steps = tr->progress.steps;
        st->wall_seconds = tr->progress.elapsed_before + sk_now() - tr->progress.start_time;
        st->sps = (double)tr->progress.steps / st->wall_seconds;
        st->mean_return = sk_window_mean(tr->progress.window_return, tr->progress.window_count);
        st->mean_length = sk_window_mean(tr->progress.window_length, tr->progress.window_count);
        st->episodes = tr->progress.episodes;

        bool solved = tr->progress.window_count == SK_WINDOW &&
                      st->mean_return >= tr->env->solved_threshold;
        /* train.log_every thins metrics.csv and events.jsonl; an anomaly,
         * the update that solved and the last update are always kept, so
         * the rows do not depend on where a run was stopped and resumed */
        bool logged = tr->progress.update % tr->s.log_every == 0 || anomaly != NULL ||
                      (solved && !tr->progress.result.solved) || tr->progress.update == num_updates;
        if (solved && !tr->progress.result.solved) {
            tr->progress.result.solved = true;
            tr->progress.result.solved_at_steps = tr->progress.steps;
            tr->progress.result.solved_at_seconds = st->wall_seconds;
            sk_events_solved(tr);
        }
        sk_live_update(tr->out.live, st, tr->progress.result.solved, tr->progress.result.solved_at_steps);
        if (logged && tr->out.metrics) sk_run_metrics_row(tr, st);
        if (logged) sk_events_update(tr, st);
        if (tr->out.run_files && tr->s.checkpoint_every > 0 && tr->progress.update % tr->s.checkpoint_every == 0) {
            status = checkpoint(tr);
            if (status != SK_OK) break;
        }
        /* a callback's stop (a signal to one rank) stops every rank at this update */
        if (sk_trainer_any_rank(tr, tr->out.callback && !tr->out.callback(st, tr->out.callback_user))) {
            tr->progress.result.interrupted = true;
            stop = true;
        }
        if (solved && tr->s.stop_when_solved) stop = true;
    }
    tr->progress.result.total_steps = tr->progress.steps;
    tr->progress.result.wall_seconds = tr->progress.elapsed_before + sk_now() - tr->progress.start_time;
    tr->progress.result.sps = tr->progress.steps > 0 ? (double)tr->progress.steps / tr->progress.result.wall_seconds : 0.0;
    tr->progress.result.final_mean_return = sk_window_mean(tr->progress.window_return, tr->progress.window_count);
    tr->progress.result.anomalies = tr->learner.governor.anomalies;
    if (tr->out.run_files) {
        /* the final checkpoint (not of a rollout aborted by a failed env) */
        if (!atomic_load(&tr->abort_requested)) sk_trainer_sync_state(tr);
        sk_status end_status = tr->comm.rank == 0 ? sk_run_end(tr, status) : SK_OK;
        end_status = sk_comm_agree(&tr->comm, end_status);
        if (status == SK_OK) status = end_status;
    }
    return sk_trainer_fail(tr, status);
}
