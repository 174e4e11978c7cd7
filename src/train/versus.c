/* A policy's games against an opponent (versus.h): the policy plays one agent
 * of each env, the opponent every other, and the policy's episodes are
 * counted as wins, draws and losses by the sign of their return. */
#include "versus.h"

#include "actor.h"
#include "../core/rng.h"
#include "../vec/vec_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define VERSUS_MAX_ENVS 64
/* The normal quantile of a two-sided 95% interval. */
#define WILSON_Z_95 1.959963984540054
/* The opponent's streams, apart from the envs' (seed, e) and the policy's; a baseline
 * player's (sk_evaluate_versus_baseline) apart from both. */
#define OPPONENT_STREAM 0x0bb0000ULL
#define PLAYER_STREAM 0x0aa0000ULL

void sk_wilson_interval(int count, int total, double z, double *low, double *high) {
    if (total <= 0) {
        *low = 0.0, *high = 1.0;
        return;
    }
    double n = total, p = count / n, z2 = z * z;
    double centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    double half = z / (1.0 + z2 / n) * sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n));
    /* the ends are exactly 0 and 1 at no and at every success; rounding would miss them */
    *low = count == 0 ? 0.0 : fmax(0.0, centre - half);
    *high = count == total ? 1.0 : fmin(1.0, centre + half);
}

/* env's built-in opponents, each after `separator` ("alphabeta:DEPTH (1..10)"), from text +
 * used; returns the new length. */
static size_t list_builtins(const sk_env_def *env, char *text, size_t size, size_t used,
                            const char *separator) {
    for (const sk_env_opponent *o = sk_env_extras_of(env)->opponents; o && o->name && used < size;
         o++, separator = ", ") {
        if (o->arg_name)
            used += (size_t)snprintf(text + used, size - used, "%s%s:%s (%d..%d)", separator,
                                     o->name, o->arg_name, o->arg_low, o->arg_high);
        else
            used += (size_t)snprintf(text + used, size - used, "%s%s", separator, o->name);
    }
    return used;
}

const char *sk_builtin_choices(const sk_env_def *env, char *text, size_t size) {
    snprintf(text, size, "(none)");
    list_builtins(env, text, size, 0, "");
    return text;
}

void sk_opponent_choices(const sk_env_def *env, char *text, size_t size) {
    const sk_env_extras *extras = sk_env_extras_of(env);
    size_t used = (size_t)snprintf(text, size, "random");
    if (extras->heuristic && used < size) used += (size_t)snprintf(text + used, size - used, ", heuristic");
    used = list_builtins(env, text, size, used, ", ");
    if (used < size)
        snprintf(text + used, size - used,
                 ", or a checkpoint of %s (a run folder or its policy.safetensors)", env->id);
}

bool sk_opponent_find_builtin(sk_opponent *out, const sk_env_def *env, const char *spec,
                         sk_status *status) {
    const char *colon = strchr(spec, ':');
    size_t name_length = colon ? (size_t)(colon - spec) : strlen(spec);
    for (const sk_env_opponent *o = sk_env_extras_of(env)->opponents; o && o->name; o++) {
        if (strlen(o->name) != name_length || strncmp(o->name, spec, name_length) != 0) continue;
        out->kind = SK_OPPONENT_BUILTIN;
        out->builtin = o;
        if (!o->arg_name && colon)
            *status = sk_fail(SK_ERR_INVALID, "opponent '%s': %s takes no argument (expected %s)",
                              spec, o->name, o->name);
        else if (o->arg_name && !colon)
            *status = sk_fail(SK_ERR_INVALID, "opponent '%s' needs its %s (expected %s:%s, %s "
                              "from %d to %d)", spec, o->arg_name, o->name, o->arg_name,
                              o->arg_name, o->arg_low, o->arg_high);
        if (!colon || *status != SK_OK) return true;
        char *end = NULL;
        long value = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end != '\0' || value < o->arg_low || value > o->arg_high)
            *status = sk_fail(SK_ERR_INVALID, "opponent '%s': %s '%s' (expected an integer "
                              "from %d to %d)", spec, o->arg_name, colon + 1, o->arg_low,
                              o->arg_high);
        else
            out->arg = (int)value;
        return true;
    }
    return false;
}

/* The checkpoint file a run folder or a file names, into path: false when
 * nothing is there. */
static bool checkpoint_file(const char *file_or_run_dir, char *path, size_t size) {
    struct stat info;
    if (stat(file_or_run_dir, &info) != 0) return false;
    snprintf(path, size, S_ISDIR(info.st_mode) ? "%s/policy.safetensors" : "%s", file_or_run_dir);
    return true;
}

sk_status sk_opponent_resolve(sk_opponent *out, const sk_env_def *env, const char *spec) {
    memset(out, 0, sizeof *out);
    char choices[1024];
    sk_opponent_choices(env, choices, sizeof choices);
    if (sk_env_agents(env) < 2)
        return sk_fail(SK_ERR_INVALID, "%s has one agent: an opponent plays the other agents "
                       "of a multi-agent env (docs/multiagent.md)",
                       env->id);
    if (env->action_space.kind != SK_SPACE_DISCRETE)
        return sk_fail(SK_ERR_INVALID, "%s's actions are continuous: opponents play discrete "
                       "actions", env->id);
    if (!spec || !*spec)
        return sk_fail(SK_ERR_INVALID, "an empty opponent (expected %s)", choices);
    sk_status status = SK_OK;
    if (strcmp(spec, "random") == 0) {
        out->kind = SK_OPPONENT_RANDOM;
        return SK_OK;
    }
    if (strcmp(spec, "heuristic") == 0 && sk_env_extras_of(env)->heuristic) {
        out->kind = SK_OPPONENT_HEURISTIC;
        return SK_OK;
    }
    if (sk_opponent_find_builtin(out, env, spec, &status)) return status;
    char path[4200];
    if (!checkpoint_file(spec, path, sizeof path)) {
        if (strchr(spec, '/') || strstr(spec, ".safetensors"))
            return sk_fail(SK_ERR_INVALID, "opponent '%s': no such checkpoint (expected %s)",
                           spec, choices);
        return sk_fail(SK_ERR_INVALID, "unknown opponent '%s' for %s (expected %s)", spec,
                       env->id, choices);
    }
    out->kind = SK_OPPONENT_POLICY;
    status = sk_policy_load(&out->policy, path, env->id);
    if (status != SK_OK) {
        char why[1024]; /* the loader's message, copied before sk_fail rewrites it */
        snprintf(why, sizeof why, "%s", sk_last_error());
        memset(out, 0, sizeof *out);
        return sk_fail(status, "opponent '%s': %s", spec, why);
    }
    return SK_OK;
}

void sk_opponent_free(sk_opponent *opponent) {
    if (opponent->kind == SK_OPPONENT_POLICY) sk_loaded_policy_free(&opponent->policy);
    memset(opponent, 0, sizeof *opponent);
}

/* What one side (the player or its opponent) plays with while the games run. */
typedef struct opponent_play {
    const sk_opponent *who;
    sk_policy_actor actor;   /* SK_OPPONENT_POLICY: acting for lp */
    bool acting;
    float *zero_logits;      /* SK_OPPONENT_RANDOM: one per choice of every head */
    uint64_t *rng;           /* (rows) random's streams per row; builtin's per env */
} opponent_play;

/* lp: who's policy (SK_OPPONENT_POLICY), or NULL; its actor draws from actor_seed, the
 * random and built-in sides from streams (stream + row) of seed. */
static sk_status play_init(opponent_play *play, const sk_opponent *who,
                           const sk_loaded_policy *lp, const sk_env_def *env, int rows,
                           uint64_t seed, uint64_t stream, uint64_t actor_seed) {
    memset(play, 0, sizeof *play);
    play->who = who;
    int choices = 0;
    for (int h = 0; h < env->action_space.num_heads; h++) choices += env->action_space.head_sizes[h];
    play->zero_logits = calloc((size_t)choices, sizeof(float));
    play->rng = malloc((size_t)rows * sizeof(uint64_t));
    if (!play->zero_logits || !play->rng)
        return sk_fail(SK_ERR_NOMEM, "out of memory for the opponent's %d rows", rows);
    for (int r = 0; r < rows; r++) play->rng[r] = sk_rng_seed(seed, stream + (uint64_t)r);
    if (who->kind != SK_OPPONENT_POLICY) return SK_OK;
    sk_status status = sk_policy_actor_init(&play->actor, lp, 1, rows, actor_seed);
    play->acting = status == SK_OK;
    return status;
}

static void play_free(opponent_play *play) {
    if (play->acting) sk_policy_actor_free(&play->actor);
    free(play->zero_logits);
    free(play->rng);
}

/* One side's actions for every row of the vec's envs, into its buffers. */
static sk_status opponent_act(opponent_play *play, sk_vec *vec, bool greedy, int64_t step) {
    int envs = sk_vec_num_envs(vec), rows = sk_vec_num_rows(vec);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    const sk_opponent *who = play->who;
    switch (who->kind) {
    case SK_OPPONENT_RANDOM:
        for (int r = 0; r < rows; r++) {
            sk_status status = sk_eval_random_row(vec, &play->rng[r], play->zero_logits, r, step);
            if (status != SK_OK) return status;
        }
        return SK_OK;
    case SK_OPPONENT_HEURISTIC:
        sk_env_extras_of(sk_vec_env(vec))->heuristic(sk_vec_state(vec), 0, envs, b->actions);
        return sk_vec_check_actions(vec, 0, envs, "its heuristic");
    case SK_OPPONENT_BUILTIN:
        who->builtin->act(sk_vec_state(vec), 0, envs, who->arg, play->rng, b->actions);
        return sk_vec_check_actions(vec, 0, envs, "its opponent");
    case SK_OPPONENT_POLICY:
        sk_eval_policy_act(vec, &play->actor, 0, rows, greedy);
        return SK_OK;
    }
    return SK_OK;
}

/* The tallies of the counted games. */
typedef struct tally {
    int games, wins, draws, losses;
    double sum, sum_sq;
    int64_t their_episodes; /* the opponent's episodes that ended while an env counted */
    double their_sum;
    int role_games[SK_VERSUS_MAX_ROLES], role_wins[SK_VERSUS_MAX_ROLES],
        role_draws[SK_VERSUS_MAX_ROLES], role_losses[SK_VERSUS_MAX_ROLES];
} tally;

static void count_game(tally *t, int role, float ret) {
    t->games++;
    t->sum += ret;
    t->sum_sq += (double)ret * ret;
    int *by_role = ret > 0.0f ? t->role_wins : ret < 0.0f ? t->role_losses : t->role_draws;
    *(ret > 0.0f ? &t->wins : ret < 0.0f ? &t->losses : &t->draws) += 1;
    if (role < SK_VERSUS_MAX_ROLES) {
        t->role_games[role]++;
        by_role[role]++;
    }
}

static sk_outcome outcome_of(int count, int games) {
    sk_outcome o = {.count = count, .rate = games ? (double)count / games : 0.0};
    sk_wilson_interval(count, games, WILSON_Z_95, &o.low, &o.high);
    return o;
}

static void report(const tally *t, const sk_env_def *env, sk_versus_result *out) {
    memset(out, 0, sizeof *out);
    out->games = t->games;
    out->win = outcome_of(t->wins, t->games);
    out->draw = outcome_of(t->draws, t->games);
    out->loss = outcome_of(t->losses, t->games);
    out->mean_return = t->sum / t->games;
    double var = t->sum_sq / t->games - out->mean_return * out->mean_return;
    out->std_return = var > 0.0 ? sqrt(var) : 0.0;
    out->opponent_episodes = t->their_episodes;
    out->opponent_mean_return = t->their_episodes ? t->their_sum / (double)t->their_episodes : 0.0;
    int agents = sk_env_agents(env);
    out->num_roles = agents <= SK_VERSUS_MAX_ROLES ? agents : 0;
    for (int r = 0; r < out->num_roles; r++) {
        if (env->agent_names) snprintf(out->role_names[r], SK_VERSUS_NAME_SIZE, "%s", env->agent_names[r]);
        else snprintf(out->role_names[r], SK_VERSUS_NAME_SIZE, "agent_%d", r);
        out->role_games[r] = t->role_games[r];
        out->role_wins[r] = t->role_wins[r];
        out->role_draws[r] = t->role_draws[r];
        out->role_losses[r] = t->role_losses[r];
    }
}

/* The games on the vec's envs: env e counts quota[e] of the player's episodes. */
static sk_status run_games(sk_vec *vec, opponent_play *player, opponent_play *play,
                           int episodes, bool greedy, uint64_t seed, tally *t) {
    const sk_env_def *env = sk_vec_env(vec);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    int envs = sk_vec_num_envs(vec), agents = sk_vec_num_agents(vec), rows = envs * agents;
    int heads = env->action_space.num_heads;
    int *quota = calloc((size_t)envs, sizeof(int)), *role = calloc((size_t)envs, sizeof(int));
    int32_t *theirs = malloc((size_t)rows * (size_t)heads * sizeof(int32_t));
    if (!quota || !role || !theirs) {
        free(quota), free(role), free(theirs);
        return sk_fail(SK_ERR_NOMEM, "out of memory for %d envs' games", envs);
    }
    for (int e = 0; e < envs; e++) {
        quota[e] = episodes / envs + (e < episodes % envs);
        role[e] = e % agents;
    }
    sk_vec_reset(vec, seed);
    if (player->acting) sk_policy_actor_episode_start(&player->actor, 0, NULL, NULL, rows);
    if (play->acting) sk_policy_actor_episode_start(&play->actor, 0, NULL, NULL, rows);
    sk_status status = SK_OK;
    for (int64_t step = 0; t->games < episodes && status == SK_OK; step++) {
        if ((status = opponent_act(play, vec, greedy, step)) != SK_OK) break;
        memcpy(theirs, b->actions, (size_t)rows * (size_t)heads * sizeof(int32_t));
        if ((status = opponent_act(player, vec, greedy, step)) != SK_OK) break;
        for (int r = 0; r < rows; r++) /* the player keeps its own agent's row only */
            if (r % agents != role[r / agents])
                memcpy(b->actions + (size_t)r * heads, theirs + (size_t)r * heads,
                       (size_t)heads * sizeof(int32_t));
        sk_vec_step(vec);
        if (player->acting)
            sk_policy_actor_episode_start(&player->actor, 0, b->terminated, b->truncated, rows);
        if (play->acting)
            sk_policy_actor_episode_start(&play->actor, 0, b->terminated, b->truncated, rows);
        for (int e = 0; e < envs; e++) {
            size_t mine = (size_t)e * agents + (size_t)role[e];
            for (int a = 0; a < agents && quota[e] > 0; a++) {
                size_t row = (size_t)e * agents + (size_t)a;
                if (row == mine || !(b->terminated[row] || b->truncated[row])) continue;
                t->their_episodes++;
                t->their_sum += b->episode_log[row * (size_t)env->num_log_fields];
            }
            if (!(b->terminated[mine] || b->truncated[mine])) continue;
            if (quota[e] > 0) {
                quota[e]--;
                count_game(t, role[e], b->episode_log[mine * (size_t)env->num_log_fields]);
            }
            bool game_over = true; /* every agent's episode ended: the next game swaps seats */
            for (int a = 0; a < agents; a++)
                game_over &= b->terminated[(size_t)e * agents + (size_t)a] ||
                             b->truncated[(size_t)e * agents + (size_t)a];
            if (game_over) role[e] = (role[e] + 1) % agents;
        }
    }
    free(quota), free(role), free(theirs);
    return status;
}

/* The games of `player` (acting for lp when a policy) against opponent on env, whose
 * envs take their keys from cfg. */
static sk_status versus(const sk_env_def *env, const sk_config *cfg, const sk_opponent *player,
                        const sk_loaded_policy *lp, const sk_opponent *opponent, int episodes,
                        bool greedy, uint64_t seed, sk_versus_result *out) {
    memset(out, 0, sizeof *out);
    if (episodes < 1) return sk_fail(SK_ERR_INVALID, "episodes = %d (expected at least 1)", episodes);
    int agents = sk_env_agents(env), envs = SK_MIN(episodes, VERSUS_MAX_ENVS);
    sk_vec *vec = NULL;
    opponent_play mine = {0}, theirs; /* mine: freed whether or not play_init ran */
    const sk_loaded_policy *their_policy =
        opponent->kind == SK_OPPONENT_POLICY ? &opponent->policy : NULL;
    sk_status status = play_init(&theirs, opponent, their_policy, env, envs * agents, seed,
                                 OPPONENT_STREAM, sk_rng_seed(seed, OPPONENT_STREAM - 1));
    if (status == SK_OK)
        status = play_init(&mine, player, lp, env, envs * agents, seed, PLAYER_STREAM, seed);
    if (status == SK_OK) status = sk_vec_create_range(&vec, env, envs, 0, envs, 1, cfg);
    tally t = {0};
    if (status == SK_OK) status = run_games(vec, &mine, &theirs, episodes, greedy, seed, &t);
    if (status == SK_OK) report(&t, env, out);
    sk_vec_destroy(vec);
    play_free(&mine);
    play_free(&theirs);
    return status;
}

sk_status sk_evaluate_versus_loaded(const sk_loaded_policy *lp, const sk_opponent *opponent,
                                    int episodes, bool greedy, uint64_t seed,
                                    sk_versus_result *out) {
    const sk_opponent player = {.kind = SK_OPPONENT_POLICY};
    return versus(lp->env, lp->cfg, &player, lp, opponent, episodes, greedy, seed, out);
}

sk_status sk_evaluate_versus_baseline(const sk_env_def *env, const sk_config *cfg,
                                      const sk_opponent *player, const sk_opponent *opponent,
                                      int episodes, bool greedy, uint64_t seed,
                                      sk_versus_result *out) {
    SK_ASSERT(player->kind != SK_OPPONENT_POLICY);
    return versus(env, cfg, player, NULL, opponent, episodes, greedy, seed, out);
}

sk_status sk_evaluate_versus(const char *checkpoint, const char *env_name, const char *opponent,
                             int episodes, bool greedy, uint64_t seed, sk_versus_result *out) {
    sk_loaded_policy lp;
    char path[4200];
    if (!checkpoint_file(checkpoint, path, sizeof path)) snprintf(path, sizeof path, "%s", checkpoint);
    sk_status status = sk_policy_load(&lp, path, env_name); /* its message names a missing file */
    if (status != SK_OK) return status;
    sk_opponent who;
    status = sk_opponent_resolve(&who, lp.env, opponent);
    if (status == SK_OK) {
        status = sk_evaluate_versus_loaded(&lp, &who, episodes, greedy, seed, out);
        sk_opponent_free(&who);
    }
    sk_loaded_policy_free(&lp);
    return status;
}
