/* Evaluation of a saved policy: rebuild the network from the checkpoint's
 * config, check every tensor's shape, and run whole episodes. */
#include "../core/config.h"
#include "algo.h"
#include "../envs/registry.h"
#include "../io/safetensors.h"
#include "../policy/policy.h"
#include "actor.h"
#include "eval.h"
#include "plan.h"

#include "comm.h"
#include "normalize.h"
#include "../vec/vec_internal.h"
#include "../core/rng.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define EVAL_MAX_ENVS 64

/* The trace's numbering and the episodes still to count, per env. */
typedef struct eval_counters {
    int *quota;                /* episodes each env still counts */
    int *episode_of, *step_of; /* the trace's numbering: each env's episode and step */
} eval_counters;

static void counters_free(eval_counters *c) {
    free(c->quota);
    free(c->episode_of);
    free(c->step_of);
}

static sk_status counters_alloc(eval_counters *c, int num_envs) {
    c->quota = calloc((size_t)num_envs, sizeof(int));
    c->episode_of = calloc((size_t)num_envs, sizeof(int));
    c->step_of = calloc((size_t)num_envs, sizeof(int));
    if (c->quota && c->episode_of && c->step_of) return SK_OK;
    counters_free(c);
    return sk_fail(SK_ERR_NOMEM, "out of memory for %d evaluation envs", num_envs);
}

/* The observation normaliser saved with the policy, frozen. */
static sk_status load_obs_norm(const sk_st_file *file, const char *path, int obs_size, float clip,
                               sk_norm_map *map) {
    const sk_st_tensor *mean = sk_st_find(file, "obs_norm.mean");
    const sk_st_tensor *var = sk_st_find(file, "obs_norm.var");
    if (!mean || !var || mean->dtype != SK_ST_F32 || var->dtype != SK_ST_F32 || mean->ndim != 1 || var->ndim != 1 || mean->shape[0] != obs_size ||
        var->shape[0] != obs_size)
        return sk_fail(SK_ERR_CORRUPT,
                       "checkpoint '%s' was trained with ppo.norm_obs but lacks obs_norm.mean/var "
                       "of size %d",
                       path, obs_size);
    sk_status status = sk_norm_map_init(map, obs_size, clip);
    if (status != SK_OK) return status;
    float mean_data[4096], var_data[4096];
    if (obs_size > 4096)
        return sk_fail(SK_ERR_INVALID, "observation size %d is too large to normalise", obs_size);
    memcpy(mean_data, mean->data, (size_t)obs_size * sizeof(float));
    memcpy(var_data, var->data, (size_t)obs_size * sizeof(float));
    for (int j = 0; j < obs_size; j++) {
        if (!(var_data[j] >= 0.0f) || !isfinite(mean_data[j]))
            return sk_fail(SK_ERR_CORRUPT, "checkpoint '%s': obs_norm holds invalid values", path);
        map->shift[j] = mean_data[j];
        map->scale[j] = (float)(1.0 / sqrt((double)var_data[j] + SK_NORM_EPS));
    }
    return SK_OK;
}

static sk_status load_params(const sk_st_file *file, const char *path, const sk_policy *policy,
                             float *params) {
    for (int i = 0; i < policy->num_tensors; i++) {
        const sk_tensor_info *info = &policy->tensors[i];
        const sk_st_tensor *t = sk_st_find(file, info->name);
        if (!t)
            return sk_fail(SK_ERR_CORRUPT, "checkpoint '%s' has no tensor '%s'", path, info->name);
        int64_t expected[2] = {info->rows, info->cols};
        int expected_ndim = sk_policy_tensor_ndim(info);
        bool ok = t->ndim == expected_ndim && t->dtype == SK_ST_F32;
        for (int d = 0; ok && d < expected_ndim; d++) ok = t->shape[d] == expected[d];
        if (!ok) {
            char expected_text[48];
            if (expected_ndim == 2) snprintf(expected_text, sizeof expected_text, "[%d, %d]", info->rows, info->cols);
            else snprintf(expected_text, sizeof expected_text, "[%d]", info->rows);
            return sk_fail(SK_ERR_CORRUPT,
                           "checkpoint '%s': tensor '%s' has the wrong shape or type (expected F32 %s)",
                           path, info->name, expected_text);
        }
        memcpy(params + info->offset, t->data, (size_t)info->rows * info->cols * sizeof(float));
        for (size_t k = 0; k < (size_t)info->rows * info->cols; k++)
            if (!isfinite(params[info->offset + k]))
                return sk_fail(SK_ERR_CORRUPT, "checkpoint '%s': tensor '%s' holds non-finite values",
                               path, info->name);
    }
    return SK_OK;
}

/* The random controller's streams: env i draws from sk_rng_seed(seed,
 * RANDOM_STREAM + i), apart from the envs' own (seed, i) and the policy's, so
 * its actions are the same under any split of the envs over processes. */
#define RANDOM_STREAM 0x7a2d0000ULL

/* Who picks the actions: a loaded policy, or a controller of the env's. */
typedef struct actor {
    sk_policy_actor *policy; /* NULL: controller */
    sk_controller controller;
    bool greedy;
    /* SK_CONTROLLER_RANDOM: each env's stream, and all-zero logits, which make
     * the categorical sampler uniform over each head's allowed choices */
    uint64_t rng[EVAL_MAX_ENVS];
    float *flat_logits; /* (sum of head sizes) */
} actor;

sk_status sk_eval_random_row(sk_vec *vec, uint64_t *rng, const float *zero_logits, int i,
                             int64_t step) {
    const sk_env_def *env = sk_vec_env(vec);
    const sk_action_space *space = &env->action_space;
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    if (space->kind == SK_SPACE_CONTINUOUS) {
        float *u = b->actions_continuous + (size_t)i * space->dim;
        for (int d = 0; d < space->dim; d++)
            u[d] = (float)sk_rng_uniform(rng, space->low[d], space->high[d]);
        return SK_OK;
    }
    const uint8_t *mask = env->mask_size ? b->masks + (size_t)i * env->mask_size : NULL;
    int head = mask ? sk_action_mask_unusable(space, mask) : -1;
    if (head >= 0)
        return sk_fail(SK_ERR_INVALID,
                       "%s: env %d's mask at step %lld allows no choice of head %d (expected at "
                       "least one allowed action per head)",
                       env->id, i, (long long)step, head);
    float logp;
    sk_categorical_sample(space, zero_logits, mask, 1, rng, false,
                          b->actions + (size_t)i * space->num_heads, &logp);
    return SK_OK;
}

/* Actions for envs lo..hi-1 (this process's) at step `step`: for every row
 * of them (a multi-agent env's agents each have one; all play as one). */
static sk_status act(sk_vec *vec, actor *who, int env_lo, int env_hi, int64_t step) {
    const sk_env_def *env = sk_vec_env(vec);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    int H = env->action_space.num_heads;
    int lo = env_lo * sk_vec_num_agents(vec), hi = env_hi * sk_vec_num_agents(vec);
    if (!who->policy) {
        if (who->controller == SK_CONTROLLER_HEURISTIC) {
            sk_env_extras_of(env)->heuristic(sk_vec_state(vec), env_lo, env_hi, b->actions);
            return sk_vec_check_actions(vec, env_lo, env_hi, "its heuristic");
        } else if (who->controller == SK_CONTROLLER_RANDOM)
            for (int i = lo; i < hi; i++) {
                sk_status status = sk_eval_random_row(vec, &who->rng[i], who->flat_logits, i,
                                                      step);
                if (status != SK_OK) return status;
            }
        else
            memset(b->actions + (size_t)lo * H, 0, (size_t)(hi - lo) * (size_t)H * sizeof(int32_t));
        return SK_OK;
    }
    sk_eval_policy_act(vec, who->policy, lo, hi, who->greedy);
    return SK_OK;
}

void sk_eval_policy_act(sk_vec *vec, sk_policy_actor *policy, int lo, int hi, bool greedy) {
    const sk_env_def *env = sk_vec_env(vec);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    int H = env->action_space.num_heads, D = env->action_space.dim, M = env->mask_size;
    int O = env->obs_size;
    bool discrete = env->action_space.kind == SK_SPACE_DISCRETE;
    if (b->obs_u8)
        sk_policy_actor_act_u8(policy, 0, b->obs_u8 + (size_t)lo * O,
                               M ? b->masks + (size_t)lo * M : NULL, hi - lo, greedy,
                               discrete ? b->actions + (size_t)lo * H : NULL,
                               discrete ? NULL : b->actions_continuous + (size_t)lo * D, NULL);
    else
        sk_policy_actor_act(policy, 0, b->obs + (size_t)lo * O,
                            M ? b->masks + (size_t)lo * M : NULL, hi - lo, greedy,
                            discrete ? b->actions + (size_t)lo * H : NULL,
                            discrete ? NULL : b->actions_continuous + (size_t)lo * D, NULL);
}

/* ---- the trace: JSON lines, one per counted step and one per episode end ---- */

static void trace_step(FILE *f, const sk_env_def *env, const sk_vec_buffers *b, int i, int episode,
                       int step) {
    const sk_action_space *space = &env->action_space;
    fprintf(f, "{\"env\": %d, \"episode\": %d, \"step\": %d, \"action\": [", i, episode, step);
    if (space->kind == SK_SPACE_DISCRETE) {
        const int32_t *a = b->actions + (size_t)i * space->num_heads;
        for (int h = 0; h < space->num_heads; h++) fprintf(f, "%s%d", h ? ", " : "", (int)a[h]);
        fputc(']', f);
        if (sk_env_extras_of(env)->action_names && a[0] >= 0 && a[0] < space->head_sizes[0])
            fprintf(f, ", \"op\": \"%s\"", sk_env_extras_of(env)->action_names[a[0]]);
    } else {
        const float *u = b->actions_continuous + (size_t)i * space->dim;
        for (int d = 0; d < space->dim; d++) fprintf(f, "%s%.9g", d ? ", " : "", (double)u[d]);
        fputc(']', f);
    }
    fprintf(f, ", \"reward\": %.9g}\n", (double)b->rewards[i]);
}

static void trace_end(FILE *f, const sk_env_def *env, const float *log, int i, int episode) {
    fprintf(f, "{\"env\": %d, \"episode\": %d, \"end\": true, \"return\": %.9g, \"length\": %.9g",
            i, episode, (double)log[0], (double)log[1]);
    for (int k = 2; k < env->num_log_fields; k++)
        fprintf(f, ", \"%s\": %.9g", env->log_names[k], (double)log[k]);
    fputs("}\n", f);
}

static sk_status open_trace(const char *path, FILE **out) {
    *out = NULL;
    if (!path) return SK_OK;
    if (!(*out = fopen(path, "w")))
        return sk_fail(SK_ERR_IO, "cannot write the trace '%s': %s (expected a writable file path)",
                       path, strerror(errno));
    return SK_OK;
}

static sk_status close_trace(FILE *f, const char *path, sk_status status) {
    if (!f) return status;
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0) failed = true;
    if (failed && status == SK_OK)
        return sk_fail(SK_ERR_IO, "writing the trace '%s' failed (disk full?)", path);
    return status;
}

/* A counted episode's record: the step it ended at, its env, its log fields. */
enum { E_STEP, E_ENV, E_LOG };

/* Runs episodes on the vec's envs (reset with seed), env i counting its
 * share of them; the rest of its episodes run on uncounted until all are in.
 * Under comm, this process runs its envs lo..hi-1 (the vec's range) and every
 * process's counted episodes are gathered and summed in the order one process
 * counts them (step, then env). */
static sk_status run_episodes(sk_vec *vec, actor *who, int episodes, uint64_t seed,
                              FILE *trace, const sk_comm *comm, int lo, int hi,
                              sk_eval_result *out) {
    const sk_env_def *env = sk_vec_env(vec);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    /* a multi-agent env's rows count episodes as envs do (each agent's its own) */
    int A = sk_vec_num_agents(vec), env_lo = lo, env_hi = hi;
    int num_envs = sk_vec_num_envs(vec) * A;
    lo *= A;
    hi *= A;
    int L = env->num_log_fields, H = env->action_space.num_heads;
    bool discrete = env->action_space.kind == SK_SPACE_DISCRETE;
    size_t record = E_LOG + (size_t)L;
    eval_counters c;
    sk_status status = counters_alloc(&c, num_envs);
    if (status != SK_OK) return status;
    int mine = 0; /* the episodes this process counts */
    for (int i = 0; i < num_envs; i++) {
        c.quota[i] = episodes / num_envs + (i < episodes % num_envs);
        if (i >= lo && i < hi) mine += c.quota[i];
    }
    double *records = malloc(((size_t)mine + 1) * record * sizeof(double));
    double *all = malloc(((size_t)episodes + 1) * record * sizeof(double));
    if (!records || !all) {
        free(records);
        free(all);
        counters_free(&c);
        return sk_fail(SK_ERR_NOMEM, "out of memory for %d episodes' records", episodes);
    }
    memset(out, 0, sizeof *out);
    sk_vec_reset(vec, seed);
    if (who->policy) sk_policy_actor_episode_start(who->policy, 0, NULL, NULL, hi - lo);
    int done = 0;
    double op_counts[SK_EVAL_MAX_OPS] = {0};
    for (int64_t t = 0; done < mine; t++) {
        status = act(vec, who, env_lo, env_hi, t);
        if (status != SK_OK) break;
        if (discrete)
            for (int i = lo; i < hi; i++) {
                int32_t a0 = b->actions[(size_t)i * H];
                if (c.quota[i] > 0 && b->active[i] && a0 >= 0 && a0 < SK_EVAL_MAX_OPS)
                    op_counts[a0]++;
            }
        sk_vec_step(vec);
        if (who->policy) /* a recurrent policy's memory starts over with each episode */
            sk_policy_actor_episode_start(who->policy, 0, b->terminated + lo, b->truncated + lo,
                                          hi - lo);
        if (trace)
            for (int i = lo; i < hi; i++)
                if (c.quota[i] > 0) trace_step(trace, env, b, i, c.episode_of[i], c.step_of[i]++);
        for (int i = lo; i < hi; i++) {
            if (!(b->terminated[i] || b->truncated[i]) || c.quota[i] == 0) continue;
            c.quota[i]--;
            const float *log = b->episode_log + (size_t)i * L;
            if (trace) trace_end(trace, env, log, i, c.episode_of[i]++);
            c.step_of[i] = 0;
            double *r = records + (size_t)done * record;
            r[E_STEP] = (double)t;
            r[E_ENV] = i;
            for (int f = 0; f < L; f++) r[E_LOG + f] = log[f];
            done++;
        }
    }
    counters_free(&c);
    status = sk_comm_agree(comm, status); /* a fault on any rank ends every rank's evaluation */
    if (status != SK_OK) {
        free(records);
        free(all);
        return status;
    }
    /* every process's records, in rank order; each is in (step, env) order */
    size_t *counts = calloc((size_t)comm->size, sizeof *counts);
    int *cursor = calloc((size_t)comm->size, sizeof *cursor);
    int *end = calloc((size_t)comm->size, sizeof *end);
    if (!counts || !cursor || !end) {
        free(records), free(all), free(counts), free(cursor), free(end);
        return sk_fail(SK_ERR_NOMEM, "out of memory");
    }
    for (int r = 0, at = 0; r < comm->size; r++) {
        int rlo, rhi;
        sk_comm_env_range(num_envs / A, r, comm->size, &rlo, &rhi);
        rlo *= A;
        rhi *= A;
        int theirs = 0;
        for (int i = rlo; i < rhi; i++) theirs += episodes / num_envs + (i < episodes % num_envs);
        counts[r] = (size_t)theirs * record * sizeof(double);
        cursor[r] = at;
        at += theirs;
        end[r] = at;
    }
    sk_comm_allgatherv_bytes(comm, records, all, counts);
    sk_comm_allreduce_f64(comm, op_counts, SK_EVAL_MAX_OPS);
    double sum[SK_MAX_LOG_FIELDS] = {0}, sum_sq[SK_MAX_LOG_FIELDS] = {0};
    double min = INFINITY, max = -INFINITY;
    for (int k = 0; k < episodes; k++) { /* the next record by (step, env) */
        int best = -1;
        for (int r = 0; r < comm->size; r++) {
            if (cursor[r] == end[r]) continue;
            const double *a = all + (size_t)cursor[r] * record;
            const double *bst = best < 0 ? NULL : all + (size_t)cursor[best] * record;
            if (!bst || a[E_STEP] < bst[E_STEP] || (a[E_STEP] == bst[E_STEP] && a[E_ENV] < bst[E_ENV]))
                best = r;
        }
        const double *log = all + (size_t)cursor[best]++ * record + E_LOG;
        for (int f = 0; f < L; f++) {
            float v = (float)log[f];
            sum[f] += v;
            sum_sq[f] += (double)v * v;
        }
        min = fmin(min, (float)log[0]);
        max = fmax(max, (float)log[0]);
    }
    free(records), free(all), free(counts), free(cursor), free(end);
    for (int a = 0; a < SK_EVAL_MAX_OPS; a++) out->op_counts[a] = (int64_t)op_counts[a];
    out->episodes = episodes;
    out->num_log_fields = L;
    for (int f = 0; f < L; f++) {
        out->log_mean[f] = sum[f] / episodes;
        double var = sum_sq[f] / episodes - out->log_mean[f] * out->log_mean[f];
        out->log_std[f] = var > 0.0 ? sqrt(var) : 0.0;
    }
    out->num_ops = discrete ? SK_MIN(env->action_space.head_sizes[0], SK_EVAL_MAX_OPS) : 0;
    out->mean_return = out->log_mean[0];
    out->std_return = out->log_std[0];
    out->mean_length = out->log_mean[1];
    out->min_return = min;
    out->max_return = max;
    return SK_OK;
}

/* Points the run's data locations elsewhere: each override is set in cfg
 * before the env is created; check_overrides then refuses any the env did
 * not read as a path (a key that shapes the env or the policy). */
static sk_status apply_overrides(sk_config *cfg, const sk_config *overrides) {
    const char *key, *value;
    for (int k = 0; overrides && sk_config_entry_at(overrides, k, &key, &value); k++) {
        sk_status status = sk_config_set(cfg, key, value);
        if (status != SK_OK) return status;
    }
    return SK_OK;
}

static sk_status check_overrides(const sk_config *cfg, const sk_config *overrides,
                                 const char *checkpoint) {
    const char *key, *value;
    for (int k = 0; overrides && sk_config_entry_at(overrides, k, &key, &value); k++)
        if (!sk_config_read_as_path(cfg, key))
            return sk_fail(SK_ERR_INVALID,
                           "%s cannot be changed when evaluating '%s': only data locations (keys "
                           "the env reads as paths, such as env.dataset) may point elsewhere; "
                           "every other key is the trained run's",
                           key, checkpoint);
    return SK_OK;
}

sk_status sk_policy_load(sk_loaded_policy *out, const char *checkpoint, const char *env_name) {
    return sk_policy_load_with(out, checkpoint, env_name, NULL);
}

/* The policy of an open checkpoint (borrowed). env is the one a plan
 * resolved, which the checkpoint must have been trained on; without it the
 * checkpoint's env is looked up (its recorded plugin loaded), and env_name,
 * if given, must name it. */
static sk_status load_from(sk_loaded_policy *out, const sk_st_file *file, const char *checkpoint,
                           const sk_env_def *env, const char *env_name,
                           const sk_config *overrides) {
    memset(out, 0, sizeof *out);
    sk_status status = SK_OK;
    const sk_algo *algo = NULL;
    out->cfg = sk_config_new();
    const char *format = sk_st_meta_get(file, "format");
    const char *config_text = sk_st_meta_get(file, "config");
    const char *saved_env = sk_st_meta_get(file, "env");
    if (!out->cfg) {
        status = sk_fail(SK_ERR_NOMEM, "out of memory");
    } else if (!format || strcmp(format, "skinner-policy-1") != 0 || !config_text || !saved_env) {
        status = sk_fail(SK_ERR_CORRUPT,
                         "'%s' is not a skinner policy checkpoint (missing format, env or config "
                         "metadata)",
                         checkpoint);
    } else if ((status = sk_config_load_string(out->cfg, config_text)) != SK_OK) {
        /* the message names the config's line */
    } else if ((status = sk_algo_resolve(out->cfg, &algo)) != SK_OK) {
    } else if (env) {
        out->env = env;
        if (!sk_run_plan_names(env, saved_env))
            status = sk_fail(SK_ERR_INVALID, "checkpoint '%s' was trained on %s, not on %s",
                             checkpoint, saved_env, env->id);
    } else if (!(out->env = sk_env_of_config(out->cfg, saved_env))) {
        status = sk_fail(SK_ERR_CORRUPT, "checkpoint '%s' was trained on unknown env '%s' (%s)",
                         checkpoint, saved_env, sk_last_error());
    } else if (env_name) {
        const sk_env_def *asked = sk_env_find(env_name);
        if (!asked) status = SK_ERR_UNKNOWN_ENV;
        else if (!sk_env_same(asked, out->env))
            status = sk_fail(SK_ERR_INVALID, "checkpoint '%s' was trained on %s, not on %s",
                             checkpoint, out->env->id, asked->id);
    }
    if (status == SK_OK) status = sk_st_require_checksum(file, checkpoint);
    if (status == SK_OK) status = apply_overrides(out->cfg, overrides);
    if (status == SK_OK) status = sk_env_configure(out->env, out->cfg, &out->env);
    if (status == SK_OK)
        status = sk_env_check_obs_type(out->env, sk_st_meta_get(file, "observation"), checkpoint);
    if (status == SK_OK) {
        /* symbolic envs size the policy from their data: ask one instance */
        void *probe = NULL;
        sk_error_clear();
        status = sk_fail_if_silent(out->env->create(&probe, 1, out->cfg), "%s's create",
                                   out->env->id);
        if (status == SK_OK && !algo->load_policy)
            status = sk_policy_configure(&out->policy, out->cfg, out->env, probe);
        if (probe) out->env->destroy(probe);
        if (status == SK_OK) status = check_overrides(out->cfg, overrides, checkpoint);
    }
    if (status == SK_OK && algo->load_policy) {
        status = algo->load_policy(out, file, checkpoint); /* the learner's own networks */
    } else if (status == SK_OK) {
        if (!(out->params = sk_alloc(out->policy.num_params * sizeof(float))))
            status = sk_fail(SK_ERR_NOMEM, "out of memory");
        else
            status = load_params(file, checkpoint, &out->policy, out->params);
    }
    if (status == SK_OK) {
        out->greedy_only = algo->acts_greedily;
        out->no_value = algo->no_value;
    }
    bool norm_obs = false;
    double clip_obs = 10.0;
    if (status == SK_OK) status = sk_cfg_bool(out->cfg, "ppo.norm_obs", false, &norm_obs);
    if (status == SK_OK) status = sk_cfg_double(out->cfg, "ppo.clip_obs", 10.0, 1e-3, 1e9, &clip_obs);
    if (status == SK_OK && !algo->load_policy) /* PPO's key; SAC squashes instead */
        status = sk_cfg_bool(out->cfg, "ppo.clip_actions", false, &out->clip_actions);
    if (status == SK_OK && norm_obs)
        status = load_obs_norm(file, checkpoint, out->env->obs_size, (float)clip_obs, &out->obs_map);
    if (status != SK_OK) sk_loaded_policy_free(out);
    return status;
}

sk_status sk_policy_load_with(sk_loaded_policy *out, const char *checkpoint, const char *env_name,
                              const sk_config *overrides) {
    memset(out, 0, sizeof *out);
    sk_st_file *file = NULL;
    sk_status status = sk_st_open(&file, checkpoint);
    if (status != SK_OK) return status;
    status = load_from(out, file, checkpoint, NULL, env_name, overrides);
    sk_st_close(file);
    return status;
}

sk_status sk_policy_load_plan(sk_loaded_policy *out, sk_run_plan *plan,
                              const sk_config *overrides) {
    memset(out, 0, sizeof *out);
    if (!plan->env)
        return sk_fail(SK_ERR_INVALID, "sk_policy_load_plan: the plan's env is not resolved");
    sk_status status = sk_run_plan_open_checkpoint(plan);
    if (status != SK_OK) return status;
    return load_from(out, plan->checkpoint, plan->checkpoint_path, plan->env, NULL, overrides);
}

sk_status sk_loaded_policy_set_epsilon(sk_loaded_policy *lp, double epsilon) {
    const char *algo = sk_config_get(lp->cfg, "train.algo");
    if (!(epsilon >= 0.0 && epsilon <= 1.0))
        return sk_fail(SK_ERR_INVALID, "epsilon = %g (expected a chance in [0, 1])", epsilon);
    if (epsilon > 0.0 && (!algo || strcmp(algo, "dqn") != 0))
        return sk_fail(SK_ERR_INVALID, "epsilon-greedy evaluation is for a DQN run (train.algo = "
                       "dqn); this checkpoint's learner is %s (PPO samples its policy unless asked "
                       "for greedy actions; SAC acts by its deterministic action)", algo ? algo : "ppo");
    lp->epsilon = epsilon;
    return SK_OK;
}

void sk_loaded_policy_bounds(const sk_loaded_policy *lp, float *scale, float *bias) {
    const sk_action_space *space = &lp->policy.space;
    for (int d = 0; d < space->dim; d++) {
        scale[d] = (space->high[d] - space->low[d]) / 2.0f;
        bias[d] = (space->high[d] + space->low[d]) / 2.0f;
    }
}

void sk_loaded_policy_env_actions(const sk_loaded_policy *lp, float *actions, int rows) {
    const sk_action_space *space = &lp->policy.space;
    if (space->kind != SK_SPACE_CONTINUOUS) return;
    if (lp->clip_actions) sk_space_clip(space, actions, rows);
    if (!lp->squash) return;
    float scale[SK_MAX_ACTION_DIM], bias[SK_MAX_ACTION_DIM];
    sk_loaded_policy_bounds(lp, scale, bias);
    for (int r = 0; r < rows; r++)
        for (int d = 0; d < space->dim; d++) {
            float *a = actions + (size_t)r * (size_t)space->dim + d;
            *a = tanhf(*a) * scale[d] + bias[d];
        }
}

void sk_loaded_policy_free(sk_loaded_policy *lp) {
    sk_free(lp->params);
    if (lp->obs_map.size) sk_norm_map_free(&lp->obs_map);
    sk_config_free(lp->cfg);
    memset(lp, 0, sizeof *lp);
}

/* Runs the episodes on min(episodes, EVAL_MAX_ENVS) envs created from cfg, on
 * the calling thread, tracing them to trace_path if given. Under comm (every
 * rank calls it), this rank runs its slice of the envs. */
static sk_status evaluate_with(const sk_env_def *env, const sk_config *cfg, actor *who,
                               int episodes, uint64_t seed, const char *trace_path,
                               const sk_comm *comm, sk_eval_result *out) {
    int A = sk_env_agents(env); /* a multi-agent env: its rows, at most EVAL_MAX_ENVS */
    int n = SK_MAX(1, SK_MIN(episodes, EVAL_MAX_ENVS) / A);
    int lo, hi;
    sk_comm_env_range(n, comm->rank, comm->size, &lo, &hi);
    sk_vec *vec = NULL;
    FILE *trace = NULL;
    sk_status status = comm->size > 1 && trace_path
                           ? sk_fail(SK_ERR_INVALID,
                                     "a trace is one file of every episode's steps: run an "
                                     "evaluation with a trace as one process, not under mpirun")
                           : sk_vec_create_range(&vec, env, n, lo, hi, 1, cfg);
    if (status == SK_OK) status = open_trace(trace_path, &trace);
    status = sk_comm_agree(comm, status); /* every rank runs its envs, or none does */
    if (status == SK_OK) {
        status = run_episodes(vec, who, episodes, seed, trace, comm, lo, hi, out);
        status = close_trace(trace, trace_path, status);
    } else if (trace) {
        fclose(trace);
    }
    sk_vec_destroy(vec);
    return status;
}

sk_status sk_evaluate(const char *checkpoint, const char *env_name, int episodes, bool greedy,
                      uint64_t seed, const char *trace_path, sk_eval_result *out) {
    return sk_evaluate_with(checkpoint, env_name, NULL, episodes, greedy, seed, trace_path, out);
}

sk_status sk_evaluate_with(const char *checkpoint, const char *env_name, const sk_config *overrides,
                           int episodes, bool greedy, uint64_t seed, const char *trace_path,
                           sk_eval_result *out) {
    sk_eval_options options = {.env_name = env_name, .overrides = overrides, .greedy = greedy,
                               .trace_path = trace_path};
    return sk_evaluate_with_options(checkpoint, episodes, seed, &options, out);
}

sk_status sk_evaluate_with_options(const char *checkpoint, int episodes, uint64_t seed,
                                   const sk_eval_options *options, sk_eval_result *out) {
    sk_comm single = sk_comm_single();
    return sk_evaluate_options_comm(checkpoint, episodes, seed, options, &single, out);
}

sk_status sk_evaluate_options_comm(const char *checkpoint, int episodes, uint64_t seed,
                                   const sk_eval_options *options, const sk_comm *comm,
                                   sk_eval_result *out) {
    const sk_eval_options defaults = {0};
    if (!options) options = &defaults;
    sk_status status = episodes < 1 ? sk_fail(SK_ERR_INVALID,
                                              "episodes = %d (expected at least 1)", episodes)
                                    : SK_OK;
    sk_loaded_policy lp;
    if (status == SK_OK)
        status = sk_policy_load_with(&lp, checkpoint, options->env_name, options->overrides);
    bool loaded = status == SK_OK;
    status = sk_comm_agree(comm, status);
    if (status == SK_OK) status = sk_evaluate_loaded_comm(&lp, episodes, seed, options, comm, out);
    if (loaded) sk_loaded_policy_free(&lp);
    return status;
}

sk_status sk_evaluate_loaded_comm(sk_loaded_policy *lp, int episodes, uint64_t seed,
                                  const sk_eval_options *options, const sk_comm *comm,
                                  sk_eval_result *out) {
    const sk_eval_options defaults = {0};
    if (!options) options = &defaults;
    sk_status status = episodes < 1 ? sk_fail(SK_ERR_INVALID,
                                              "episodes = %d (expected at least 1)", episodes)
                                    : sk_loaded_policy_set_epsilon(lp, options->epsilon);
    sk_policy_actor policy;
    int rows = SK_MAX(SK_MIN(episodes, EVAL_MAX_ENVS), sk_env_agents(lp->env));
    if (status == SK_OK && rows > EVAL_MAX_ENVS)
        status = sk_fail(SK_ERR_INVALID, "%s has %d agents per env; skinner eval runs at most %d "
                         "rows (one env's agents)", lp->env->id, sk_env_agents(lp->env),
                         EVAL_MAX_ENVS);
    if (status == SK_OK) status = sk_policy_actor_init(&policy, lp, 1, rows, seed);
    bool acting = status == SK_OK;
    status = sk_comm_agree(comm, status);
    if (status == SK_OK) {
        /* sampled actions: rank 0 draws one process's stream, the others their own */
        if (comm->rank > 0) policy.rng[0] = sk_rng_seed(seed, SK_ACTOR_STREAM + (uint64_t)comm->rank);
        actor who = {.policy = &policy, .greedy = options->greedy};
        status = evaluate_with(lp->env, lp->cfg, &who, episodes, seed, options->trace_path, comm,
                               out);
    }
    if (acting) sk_policy_actor_free(&policy);
    return status;
}

sk_status sk_evaluate_controller(const char *env_name, const sk_config *cfg, sk_controller controller,
                                 int episodes, uint64_t seed, const char *trace_path,
                                 sk_eval_result *out) {
    sk_comm single = sk_comm_single();
    return sk_evaluate_controller_comm(env_name, cfg, controller, episodes, seed, trace_path,
                                       &single, out);
}

sk_status sk_evaluate_controller_comm(const char *env_name, const sk_config *cfg,
                                      sk_controller controller, int episodes, uint64_t seed,
                                      const char *trace_path, const sk_comm *comm,
                                      sk_eval_result *out) {
    /* an unknown name: the env variant fails with sk_env_find's message */
    return sk_evaluate_controller_env_comm(sk_env_find(env_name), cfg, controller, episodes, seed,
                                           trace_path, comm, out);
}

sk_status sk_evaluate_controller_env_comm(const sk_env_def *env, const sk_config *cfg,
                                          sk_controller controller, int episodes, uint64_t seed,
                                          const char *trace_path, const sk_comm *comm,
                                          sk_eval_result *out) {
    sk_status status = SK_OK;
    if (episodes < 1)
        status = sk_fail(SK_ERR_INVALID, "episodes = %d (expected at least 1)", episodes);
    else if (!env)
        status = SK_ERR_UNKNOWN_ENV;
    else if (controller == SK_CONTROLLER_HEURISTIC && !sk_env_extras_of(env)->heuristic)
        status = sk_fail(SK_ERR_INVALID, "%s has no heuristic controller", env->id);
    else if (controller == SK_CONTROLLER_ZERO && env->action_space.kind != SK_SPACE_DISCRETE)
        status = sk_fail(SK_ERR_INVALID, "the zero controller needs discrete actions; %s's are continuous",
                         env->id);
    actor who = {.controller = controller};
    if (status == SK_OK && controller == SK_CONTROLLER_RANDOM) {
        size_t logits = 0;
        for (int h = 0; env->action_space.kind == SK_SPACE_DISCRETE && h < env->action_space.num_heads; h++)
            logits += (size_t)env->action_space.head_sizes[h];
        if (!(who.flat_logits = calloc(logits ? logits : 1, sizeof(float))))
            status = sk_fail(SK_ERR_NOMEM, "out of memory for %zu logits", logits);
        for (uint64_t i = 0; i < EVAL_MAX_ENVS; i++) who.rng[i] = sk_rng_seed(seed, RANDOM_STREAM + i);
    }
    status = sk_comm_agree(comm, status);
    if (status == SK_OK) status = evaluate_with(env, cfg, &who, episodes, seed, trace_path, comm, out);
    free(who.flat_logits);
    return status;
}

/* sk_parallel.gather over a communicator: counts in doubles. */
static void comm_gather(void *ctx, const double *mine, double *all, const size_t *counts) {
    const sk_comm *comm = ctx;
    size_t *bytes = malloc((size_t)comm->size * sizeof *bytes);
    SK_ASSERT(bytes);
    for (int r = 0; r < comm->size; r++) bytes[r] = counts[r] * sizeof(double);
    sk_comm_allgatherv_bytes(comm, mine, all, bytes);
    free(bytes);
}

sk_status sk_evaluate_env(const sk_loaded_policy *lp, const sk_config *options, int threads,
                          sk_progress_fn progress, void *progress_user, sk_env_report *out) {
    sk_comm single = sk_comm_single();
    return sk_evaluate_env_comm(lp, options, threads, &single, progress, progress_user, out);
}

sk_status sk_evaluate_env_comm(const sk_loaded_policy *lp, const sk_config *options, int threads,
                               const sk_comm *comm, sk_progress_fn progress, void *progress_user,
                               sk_env_report *out) {
    memset(out, 0, sizeof *out);
    const sk_env_evaluation *evaluation = sk_env_extras_of(lp->env)->evaluation;
    if (!evaluation)
        return sk_fail(SK_ERR_INVALID,
                       "%s has no evaluation of its own (expected an env whose extras name one); "
                       "evaluate it by episodes",
                       lp->env->id);
    sk_eval_host host;
    sk_status status = sk_eval_host_init(&host, lp, threads);
    if (status != SK_OK) return status;
    if (comm->size > 1) {
        host.parallel.part = comm->rank;
        host.parallel.num_parts = comm->size;
        host.parallel.gather_ctx = (void *)comm;
        host.parallel.gather = comm_gather;
    }
    status = evaluation->run(lp->env, lp->cfg, options, &host.policy.actor, &host.parallel,
                             progress, progress_user, out);
    if (status == SK_OK) status = sk_cfg_check_unused(options, "eval");
    sk_eval_host_free(&host);
    return status;
}
