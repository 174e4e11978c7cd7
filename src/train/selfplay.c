/* Self-play against an Elo-rated pool of snapshots (selfplay.h). */
#include "selfplay.h"

#include "run_files.h"
#include "trainer_internal.h"
#include "versus.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <string.h>

double sk_elo_expected(double ra, double rb) { return 1.0 / (1.0 + pow(10.0, (rb - ra) / 400.0)); }

void sk_elo_update(double *ra, double *rb, double score, double k) {
    double change = k * (score - sk_elo_expected(*ra, *rb));
    *ra += change;
    *rb -= change;
}

int sk_selfplay_pick(const double *ratings, int count, bool by_rating, uint64_t *rng) {
    double top = ratings[0], total = 0.0;
    for (int j = 1; j < count; j++) top = fmax(top, ratings[j]);
    for (int j = 0; j < count; j++) total += by_rating ? pow(10.0, (ratings[j] - top) / 400.0) : 1.0;
    double draw = sk_rng_double(rng) * total;
    for (int j = 0; j < count; j++) {
        draw -= by_rating ? pow(10.0, (ratings[j] - top) / 400.0) : 1.0;
        if (draw < 0.0) return j;
    }
    return count - 1;
}

/* Appends fmt's text to the string in buf (size bytes), cut at buf's end. */
static void append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...) {
    size_t used = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        sk_status check_status_ = (expr);                                                          \
        if (check_status_ != SK_OK) return check_status_;                                          \
    } while (0)

/* selfplay.opponents (the text `listed`) as the env's built-in opponents, with
 * selfplay.opponent_share: each entry one of them, the shares adding up to at most 1. */
static sk_status configure_opponents(sk_trainer *tr, const char *listed) {
    sk_selfplay *sp = &tr->sp;
    char choices[1024], text[1024];
    snprintf(text, sizeof text, "%s", listed);
    sp->num_opponents = 0;
    for (char *save = NULL, *item = strtok_r(text, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ') item++;
        for (char *end = item + strlen(item); end > item && end[-1] == ' ';) *--end = '\0';
        if (sp->num_opponents == SK_SELFPLAY_MAX_OPPONENTS)
            return sk_fail(SK_ERR_CONFIG, "selfplay.opponents = '%s': more than %d opponents",
                           listed, SK_SELFPLAY_MAX_OPPONENTS);
        sk_opponent who = {0};
        sk_status status = SK_OK;
        bool builtin = sk_opponent_find_builtin(&who, tr->env, item, &status);
        if (status != SK_OK) /* its NAME is one, its ARG wrong: the reason says which */
            return sk_fail(SK_ERR_CONFIG, "selfplay.opponents: %s", sk_last_error());
        if (!builtin)
            return sk_fail(SK_ERR_CONFIG, "selfplay.opponents: '%s' is not one of %s's built-in "
                           "players (expected a comma-separated list of %s; the pool holds past "
                           "selves)", item, tr->env->id, sk_builtin_choices(tr->env, choices,
                                                                            sizeof choices));
        int k = sp->num_opponents++;
        sp->opponents[k] = who.builtin;
        sp->opponent_args[k] = who.arg;
    }
    if (sp->opponent_share > 0 && sp->num_opponents == 0)
        return sk_fail(SK_ERR_CONFIG, "selfplay.opponent_share = %g with no selfplay.opponents "
                       "(expected a comma-separated list of %s)", sp->opponent_share,
                       sk_builtin_choices(tr->env, choices, sizeof choices));
    if (sp->num_opponents > 0 && sp->opponent_share == 0)
        return sk_fail(SK_ERR_CONFIG, "selfplay.opponents = '%s' are never played: "
                       "selfplay.opponent_share is 0 (expected the share of games against them, "
                       "above 0)", listed);
    if (sp->opponent_share + sp->pool_share > 1.0 + 1e-9 && sp->opponent_share > 0)
        return sk_fail(SK_ERR_CONFIG, "selfplay.opponent_share = %g and selfplay.pool_share = %g "
                       "add up to more than 1 (the rest of the games are the learner against "
                       "itself): lower selfplay.pool_share to at most %g (its default is 1: "
                       "every game against the pool)", sp->opponent_share, sp->pool_share,
                       1.0 - sp->opponent_share);
    sp->env_state = sk_vec_state(tr->vec);
    return SK_OK;
}

sk_status sk_selfplay_configure(sk_trainer *tr) {
    sk_selfplay *sp = &tr->sp;
    int64_t v;
    CHECK(sk_cfg_bool(tr->cfg, "selfplay.enabled", false, &sp->on));
    CHECK(sk_cfg_int(tr->cfg, "selfplay.pool_size", 8, 1, SK_SELFPLAY_MAX_POOL, &v));
    sp->pool_size = (int)v;
    CHECK(sk_cfg_int(tr->cfg, "selfplay.snapshot_every", 10, 1, INT32_MAX, &v));
    sp->snapshot_every = (int)v;
    static const char *const samplings[] = {"rating", "uniform", NULL};
    int sampling;
    CHECK(sk_cfg_choice(tr->cfg, "selfplay.sampling", "rating", samplings, &sampling));
    sp->by_rating = sampling == 0;
    CHECK(sk_cfg_double(tr->cfg, "selfplay.elo_k", 16.0, 0.0, 1000.0, &sp->elo_k));
    CHECK(sk_cfg_double(tr->cfg, "selfplay.initial_rating", 1000.0, -1e6, 1e6, &sp->initial_rating));
    CHECK(sk_cfg_double(tr->cfg, "selfplay.pool_share", 1.0, 0.0, 1.0, &sp->pool_share));
    CHECK(sk_cfg_double(tr->cfg, "selfplay.opponent_share", 0.0, 0.0, 1.0, &sp->opponent_share));
    const char *listed = sk_cfg_string(tr->cfg, "selfplay.opponents", "");
    if (!sp->on && (listed[0] || sp->opponent_share > 0))
        return sk_fail(SK_ERR_CONFIG, "selfplay.opponents and selfplay.opponent_share share "
                       "self-play's games: they need selfplay.enabled = true");
    if (!sp->on) return SK_OK;
    if (tr->env->num_agents != 2)
        return sk_fail(SK_ERR_CONFIG, "selfplay.enabled = true: %s has %d agents per env "
                       "(expected a two-player env, num_agents = 2)", tr->env->id,
                       sk_env_agents(tr->env));
    if (tr->s.horizon * 2 < tr->s.num_minibatches)
        return sk_fail(SK_ERR_CONFIG, "selfplay.enabled = true: ppo.horizon = %d must be at least "
                       "half of ppo.num_minibatches = %d (the opponent's rows act from a minibatch "
                       "block's scratch)", tr->s.horizon, tr->s.num_minibatches);
    return configure_opponents(tr, listed);
}

static int envs_of(const sk_trainer *tr) { return tr->rollout.num_rows / 2; }

/* The next game's opponent: a pool member with probability selfplay.pool_share (by
 * rating or uniformly), else -1, the learner itself. A share of 1 draws only the member,
 * as before the share existed, so such runs repeat theirs bit for bit. */
static int32_t pick_opponent(sk_selfplay *sp, uint64_t *rng) {
    if (sp->opponent_share > 0) { /* a listed opponent, a member or itself, by one draw */
        double draw = sk_rng_double(rng);
        if (draw < sp->opponent_share)
            return -2 - (int32_t)(sk_rng_double(rng) * sp->num_opponents);
        if (draw >= sp->opponent_share + sp->pool_share) return -1;
    } else if (sp->pool_share < 1.0 && sk_rng_double(rng) >= sp->pool_share) {
        return -1;
    }
    return sk_selfplay_pick(sp->ratings, (int)sp->counters[SK_SELFPLAY_MEMBERS], sp->by_rating,
                            rng);
}

/* Member m's W^T into pool_t, where its weights were written: a rollout reads pool_t as it
 * stands (sk_trainer_run_rollout), so every writer of a member calls this once. */
static void transpose_member(sk_trainer *tr, size_t m) {
    sk_selfplay *sp = &tr->sp;
    const sk_policy *policy = &tr->learner.policy;
    size_t P = policy->num_params;
    sk_policy_transpose_weights(policy, sp->pool + m * P, sp->pool_t + m * P);
    sp->members_transposed++;
}

void sk_selfplay_transpose_pool(sk_trainer *tr) {
    if (!tr->sp.on) return;
    for (size_t m = 0; m < (size_t)tr->sp.counters[SK_SELFPLAY_MEMBERS]; m++)
        transpose_member(tr, m);
}

size_t sk_selfplay_pool_floats(const sk_trainer *tr) {
    const sk_selfplay *sp = &tr->sp;
    return sp->on ? (size_t)sp->counters[SK_SELFPLAY_MEMBERS] * tr->learner.policy.num_params : 0;
}

void sk_selfplay_start(sk_trainer *tr) {
    sk_selfplay *sp = &tr->sp;
    if (!sp->on) return;
    size_t P = tr->learner.policy.num_params;
    memcpy(sp->pool, tr->learner.params, P * sizeof(float));
    transpose_member(tr, 0);
    for (int j = 0; j <= sp->pool_size; j++) sp->ratings[j] = sp->initial_rating;
    sp->counters[SK_SELFPLAY_MEMBERS] = 1;
    sp->counters[SK_SELFPLAY_NEXT] = 1 % sp->pool_size;
    sp->counters[SK_SELFPLAY_GAMES] = 0;
    for (int e = 0; e < envs_of(tr); e++) {
        sp->role[e] = e % 2; /* half the envs' learners move first */
        sp->unrated[e] = 0;
        sp->rng[e] = sk_rng_seed(tr->s.seed ^ 0x5e1f91a7ULL, (uint64_t)e);
        sp->opponent[e] = sp->pool_share < 1.0 ? pick_opponent(sp, &sp->rng[e]) : 0;
    }
    for (size_t k = 0; k < (size_t)tr->s.horizon * (size_t)envs_of(tr); k++)
        sp->game_opponent[k] = -1;
}

sk_status sk_selfplay_check(const sk_trainer *tr, const char *path) {
    const sk_selfplay *sp = &tr->sp;
    if (!sp->on) return SK_OK;
    int64_t members = sp->counters[SK_SELFPLAY_MEMBERS], next = sp->counters[SK_SELFPLAY_NEXT];
    if (members < 1 || members > sp->pool_size)
        return sk_fail(SK_ERR_CORRUPT, "checkpoint '%s': selfplay.counters[0] (pool members) = "
                       "%lld is outside [1, %d] (selfplay.pool_size)", path, (long long)members,
                       sp->pool_size);
    if (next < 0 || next >= sp->pool_size)
        return sk_fail(SK_ERR_CORRUPT, "checkpoint '%s': selfplay.counters[1] (next slot) = %lld "
                       "is outside [0, %d] (selfplay.pool_size - 1)", path, (long long)next,
                       sp->pool_size - 1);
    /* -1: the learner plays itself; -2 - k: selfplay.opponents' k-th */
    int lowest = sp->opponent_share > 0 ? -1 - sp->num_opponents : sp->pool_share < 1.0 ? -1 : 0;
    for (int e = 0; e < envs_of(tr); e++)
        if (sp->opponent[e] < lowest || sp->opponent[e] >= members)
            return sk_fail(SK_ERR_CORRUPT, "checkpoint '%s': selfplay.opponent[%d] = %d is "
                           "outside [%d, %lld] (%s)", path, e, (int)sp->opponent[e], lowest,
                           (long long)members - 1,
                           lowest < -1 ? "-2 - k: selfplay.opponents' k-th, -1: itself, else one "
                                         "of the pool's members"
                           : lowest    ? "-1: itself, else one of the pool's members"
                                       : "the pool's members; selfplay.pool_share = 1");
    return SK_OK;
}

/* Listed opponent k's name as listed: "alphabeta:4". */
static void opponent_name(const sk_selfplay *sp, int k, char *out, size_t size) {
    const sk_env_opponent *who = sp->opponents[k];
    if (who->arg_name) snprintf(out, size, "%s:%d", who->name, sp->opponent_args[k]);
    else snprintf(out, size, "%s", who->name);
}

void sk_selfplay_opponents_text(const sk_selfplay *sp, char *out, size_t size) {
    out[0] = '\0';
    for (int k = 0; sp->on && k < sp->num_opponents; k++) {
        char name[64];
        opponent_name(sp, k, name, sizeof name);
        append(out, size, "%s%s", k ? ", " : "", name);
    }
}

sk_status sk_selfplay_check_opponents(const sk_trainer *tr, const char *saved, const char *path) {
    char listed[SK_SELFPLAY_MAX_OPPONENTS * 66];
    sk_selfplay_opponents_text(&tr->sp, listed, sizeof listed);
    if (!saved || strcmp(saved, listed) == 0) return SK_OK;
    if (!saved[0])
        return sk_fail(SK_ERR_INVALID, "checkpoint '%s' played no selfplay.opponents; this run "
                       "lists '%s' (resume without them, or start a new run)", path, listed);
    return sk_fail(SK_ERR_INVALID, "checkpoint '%s' played selfplay.opponents = '%s'; this run "
                   "lists '%s': its games under way would go on against other players and "
                   "opponents.csv's columns would change (resume with --selfplay.opponents '%s' "
                   "and its selfplay.opponent_share, or start a new run)", path, saved,
                   listed[0] ? listed : "none", saved);
}

/* The hooks below are self-play's row of the rollout's hooks (trainer_internal.h): the
 * rollout calls them only when self-play is on, so none checks sp->on. */

static bool selfplay_is_other(const void *ctx, int row) {
    const sk_selfplay *sp = ctx;
    return row % 2 != sp->role[row / 2] && sp->opponent[row / 2] != -1;
}

/* The listed opponents' actions for their rows among worker wk's envs at step `at` (wk's first
 * row's index into ro->actions): each env's player searches that env's state alone, on its
 * own moves only. */
static void listed_act(const sk_selfplay *sp, sk_rollout *ro, sk_worker *wk, size_t at) {
    size_t H = (size_t)ro->num_heads;
    for (int e = wk->lo / 2; e < wk->hi / 2; e++) {
        int k = -2 - sp->opponent[e];
        if (k < 0) continue;
        wk->listed_steps++;
        if (sp->listed_waits[e]) continue; /* the learner moves: the env ignores this row */
        wk->listed_searches++;
        sp->opponents[k]->act(sp->env_state, e, e + 1, sp->opponent_args[k], sp->rng,
                              sp->opponent_actions);
        size_t row = (size_t)e * 2 + 1 - (size_t)sp->role[e];
        memcpy(ro->actions + (at + row - (size_t)wk->lo) * H, sp->opponent_actions + row * H,
               H * sizeof(int32_t));
    }
}

/* Env e's opponent's group: its member, and with a policy per role, the side it plays. */
static int pool_group(const sk_selfplay *sp, int e, int roles) {
    return sp->opponent[e] * roles + (roles > 1 ? 1 - sp->role[e] : 0);
}

/* The pool members' actions of worker wk's rows at step t: the rows sorted by member (and,
 * policy.per_role, side) in one pass over the slice, in env order within each, then each
 * member's rows through its snapshot, member by member, from wk's stream. */
static void selfplay_act(void *ctx, sk_rollout *ro, const sk_policy *policy, sk_worker *wk, int t,
                         const float *obs_t) {
    const sk_selfplay *sp = ctx;
    size_t at = (size_t)t * (size_t)ro->num_rows + (size_t)wk->lo, P = policy->num_params;
    const uint8_t *masks = ro->mask_size ? ro->masks + at * (size_t)ro->mask_size : NULL;
    /* policy.per_role: a snapshot holds both roles' policies; each side plays its own. Group
     * g = member * roles + side, its rows from start[g] to start[g + 1]. */
    int roles = sk_policy_roles(policy), groups = (int)sp->counters[SK_SELFPLAY_MEMBERS] * roles;
    int start[SK_SELFPLAY_MAX_POOL * SK_MAX_POLICY_ROLES + 1] = {0};
    int lo = wk->lo / 2, hi = wk->hi / 2; /* the slice's envs */
    for (int e = lo; e < hi; e++)
        if (sp->opponent[e] >= 0) start[pool_group(sp, e, roles) + 1]++;
    int next[SK_SELFPLAY_MAX_POOL * SK_MAX_POLICY_ROLES]; /* where group g's next row goes */
    for (int g = 0; g < groups; g++) {
        start[g + 1] += start[g];
        next[g] = start[g];
    }
    int32_t *rows = wk->trunc_index; /* positions from wk->lo, group by group, envs in order */
    for (int e = lo; e < hi; e++)
        if (sp->opponent[e] >= 0) rows[next[pool_group(sp, e, roles)]++] = e * 2 + 1 - sp->role[e] - wk->lo;
    for (int g = 0; g < groups; g++) {
        const float *params = sp->pool + (size_t)(g / roles) * P +
                              (size_t)(g % roles) * sk_policy_role_params(policy);
        sk_policy_act_rows(policy, params, obs_t, masks, rows + start[g], start[g + 1] - start[g],
                           0, &wk->rng, false, ro->actions + at * (size_t)ro->num_heads,
                           ro->actions_f + at * (size_t)ro->action_dim, NULL, NULL, &wk->work,
                           &wk->role);
    }
    if (sp->opponent_share > 0) listed_act(sp, ro, wk, at);
}

static void selfplay_after_step(void *ctx, sk_rollout *ro, int lo, int hi, int t,
                                const float *episode_log, int num_log_fields) {
    sk_selfplay *sp = ctx;
    int E = ro->num_rows / 2;
    size_t N = (size_t)ro->num_rows, L = (size_t)num_log_fields;
    for (int e = lo / 2; e < hi / 2; e++) {
        size_t learner = (size_t)e * 2 + (size_t)sp->role[e];
        if (t >= 0 && (ro->terminated[(size_t)t * N + learner] || ro->truncated[(size_t)t * N + learner])) {
            float ret = episode_log[learner * L];
            /* a game against itself (-1) rates no one either */
            sp->game_opponent[(size_t)t * (size_t)E + (size_t)e] = sp->unrated[e] ? -1 : sp->opponent[e];
            sp->unrated[e] = 0;
            sp->game_score[(size_t)t * (size_t)E + (size_t)e] = ret > 0 ? 1.0f : ret < 0 ? 0.0f : 0.5f;
            sp->role[e] = 1 - sp->role[e];
            sp->opponent[e] = pick_opponent(sp, &sp->rng[e]);
        }
        /* a pool member's or a listed opponent's row of the next step is not a sample */
        size_t other = (size_t)(t + 1) * N + (size_t)e * 2 + 1 - (size_t)sp->role[e];
        sp->listed_waits[e] = sp->opponent[e] <= -2 && !ro->active[other];
        if (sp->opponent[e] != -1) ro->active[other] = 0;
    }
}

/* The games' Elo updates in (step, env) order; a listed opponent's game, its tally. */
static void selfplay_after_rollout(void *ctx, const sk_rollout *ro) {
    sk_selfplay *sp = ctx;
    double *learner = &sp->ratings[sp->pool_size];
    for (size_t k = 0; k < (size_t)ro->horizon * (size_t)(ro->num_rows / 2); k++) {
        int j = sp->game_opponent[k];
        if (j <= -2) {
            sp->vs_score[-2 - j] += sp->game_score[k];
            sp->vs_games[-2 - j]++;
            sp->game_opponent[k] = -1;
        }
        if (j < 0) continue;
        sk_elo_update(learner, &sp->ratings[j], sp->game_score[k], sp->elo_k);
        sp->counters[SK_SELFPLAY_GAMES]++;
        sp->game_opponent[k] = -1;
    }
}

static const sk_rollout_hooks selfplay_hooks = {
    .act = selfplay_act,
    .after_step = selfplay_after_step,
    .is_other = selfplay_is_other,
    .after_rollout = selfplay_after_rollout,
};

const sk_rollout_hooks *sk_selfplay_hooks(const sk_selfplay *sp) {
    return sp->on ? &selfplay_hooks : NULL;
}

/* The run folder's `name` open in *f for this run's rows (sk_run_open_rows: a resumed run
 * keeps the rows up to the checkpoint's update), its path in path, starting with the line
 * `header`. Nothing to do once open. */
static sk_status open_run_csv(const sk_trainer *tr, const char *name, const char *header,
                              FILE **f, char *path, size_t size) {
    snprintf(path, size, "%s/%s", tr->out.run_dir, name);
    if (*f) return SK_OK;
    CHECK(sk_run_open_rows(tr, name, tr->progress.update - 1, f, path, size));
    if (ftell(*f) == 0) fprintf(*f, "%s\n", header);
    return SK_OK;
}

static sk_status flush_run_csv(FILE *f, const char *path) {
    if (fflush(f) != 0 || ferror(f))
        return sk_fail(SK_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    return SK_OK;
}

/* opponents.csv's row: each listed opponent's mean score over the games that ended since
 * the last row (empty: none), then its count of them; the tallies start again. */
static sk_status write_opponents_row(sk_trainer *tr) {
    sk_selfplay *sp = &tr->sp;
    if (sp->opponent_share <= 0) return SK_OK;
    /* each entry's NAME:ARG (at most 63 bytes) twice with its suffixes */
    char path[4200], header[8 + SK_SELFPLAY_MAX_OPPONENTS * (2 * 64 + 16)] = "update";
    for (int k = 0; !sp->opponents_csv && k < sp->num_opponents; k++) {
        char name[64];
        opponent_name(sp, k, name, sizeof name);
        append(header, sizeof header, ",%s score,%s games", name, name);
    }
    CHECK(open_run_csv(tr, "opponents.csv", header, &sp->opponents_csv, path, sizeof path));
    fprintf(sp->opponents_csv, "%lld", (long long)tr->progress.update);
    for (int k = 0; k < sp->num_opponents; k++) {
        if (sp->vs_games[k]) fprintf(sp->opponents_csv, ",%.4f", sp->vs_score[k] / (double)sp->vs_games[k]);
        else fprintf(sp->opponents_csv, ",");
        fprintf(sp->opponents_csv, ",%lld", (long long)sp->vs_games[k]);
        sp->vs_score[k] = 0.0;
        sp->vs_games[k] = 0;
    }
    fprintf(sp->opponents_csv, "\n");
    return flush_run_csv(sp->opponents_csv, path);
}

sk_status sk_selfplay_after_update(sk_trainer *tr) {
    sk_selfplay *sp = &tr->sp;
    if (!sp->on) return SK_OK;
    if (tr->progress.update % sp->snapshot_every == 0) {
        int slot = (int)sp->counters[SK_SELFPLAY_NEXT];
        size_t P = tr->learner.policy.num_params;
        /* the games under way against the member leaving (none in an empty slot) go on
         * against the new one: neither's result; a game that ended at the rollout's last
         * step has not begun its successor */
        const sk_rollout *ro = &tr->rollout;
        size_t last = (size_t)(tr->s.horizon - 1) * (size_t)ro->num_rows;
        for (int e = 0; slot < sp->counters[SK_SELFPLAY_MEMBERS] && e < envs_of(tr); e++) {
            size_t row = last + (size_t)e * 2; /* a game ends for both agents */
            bool fresh = ro->terminated[row] || ro->truncated[row] || ro->terminated[row + 1] ||
                         ro->truncated[row + 1];
            if (sp->opponent[e] == slot && !fresh) sp->unrated[e] = 1;
        }
        memcpy(sp->pool + (size_t)slot * P, tr->learner.params, P * sizeof(float));
        transpose_member(tr, (size_t)slot);
        sp->ratings[slot] = sp->ratings[sp->pool_size];
        if (sp->counters[SK_SELFPLAY_MEMBERS] < sp->pool_size) sp->counters[SK_SELFPLAY_MEMBERS]++;
        sp->counters[SK_SELFPLAY_NEXT] = (slot + 1) % sp->pool_size;
    }
    if (!tr->out.run_dir[0] || tr->comm.rank != 0) return SK_OK;
    char path[4200], header[4096] = "update,games,learner";
    for (int j = 0; !sp->elo_csv && j < sp->pool_size; j++)
        append(header, sizeof header, ",pool_%d", j);
    CHECK(open_run_csv(tr, "elo.csv", header, &sp->elo_csv, path, sizeof path));
    fprintf(sp->elo_csv, "%lld,%lld,%.3f", (long long)tr->progress.update,
            (long long)sp->counters[SK_SELFPLAY_GAMES], sp->ratings[sp->pool_size]);
    for (int j = 0; j < sp->pool_size; j++) {
        if (j < sp->counters[SK_SELFPLAY_MEMBERS]) fprintf(sp->elo_csv, ",%.3f", sp->ratings[j]);
        else fprintf(sp->elo_csv, ",");
    }
    fprintf(sp->elo_csv, "\n");
    CHECK(flush_run_csv(sp->elo_csv, path));
    return write_opponents_row(tr);
}

void sk_selfplay_summary(const sk_trainer *tr, FILE *f) {
    const sk_selfplay *sp = &tr->sp;
    if (!sp->on) return;
    fprintf(f, "  \"selfplay\": {\"learner_rating\": %.3f, \"games\": %lld, \"pool\": [",
            sp->ratings[sp->pool_size], (long long)sp->counters[SK_SELFPLAY_GAMES]);
    for (int j = 0; j < sp->counters[SK_SELFPLAY_MEMBERS]; j++)
        fprintf(f, "%s%.3f", j ? ", " : "", sp->ratings[j]);
    fprintf(f, "]},\n");
}

void sk_selfplay_close(sk_trainer *tr) {
    if (tr->sp.elo_csv) fclose(tr->sp.elo_csv);
    if (tr->sp.opponents_csv) fclose(tr->sp.opponents_csv);
    tr->sp.elo_csv = NULL;
    tr->sp.opponents_csv = NULL;
}
