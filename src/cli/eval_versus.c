/* `skinner eval ENV --checkpoint RUN --opponent NAME`: a multi-agent env's
 * games against an opponent (src/train/versus.h), and its report. */
#include "cli.h"

#include "comm_cli.h"
#include "eval_versus.h"
#include "train/plan.h"
#include "train/versus.h"

#include <string.h>

void cli_print_opponents(const sk_env_def *env) {
    if (sk_env_agents(env) < 2) return;
    char choices[1024];
    sk_opponent_choices(env, choices, sizeof choices);
    printf("\n%s's opponents (--opponent NAME): %s.\n", env->id, choices);
    for (const sk_env_opponent *o = sk_env_extras_of(env)->opponents; o && o->name; o++)
        printf("  %s%s%s\n      %s\n", o->name, o->arg_name ? ":" : "",
               o->arg_name ? o->arg_name : "", o->help ? o->help : "");
}

/* "0.525 [0.456, 0.593]" */
static void print_outcome(const char *name, const sk_outcome *o, bool json) {
    if (json)
        printf(", \"%s\": %d, \"%s_rate\": %.6g, \"%s_ci95\": [%.6g, %.6g]", name, o->count, name,
               o->rate, name, o->low, o->high);
    else
        printf("  %-6s %5d  %.3f [%.3f, %.3f]\n", name, o->count, o->rate, o->low, o->high);
}

static void print_versus(const sk_env_def *env, const char *checkpoint, const char *opponent,
                         bool greedy, const sk_versus_result *r, bool json) {
    static const char *const outcome_names[] = {"wins", "draws", "losses"};
    const sk_outcome *outcomes[] = {&r->win, &r->draw, &r->loss};
    if (json) {
        printf("{\"env\": ");
        cli_print_json_text(env->id);
        printf(", \"policy\": ");
        cli_print_json_text(checkpoint);
        printf(", \"opponent\": ");
        cli_print_json_text(opponent);
        printf(", \"games\": %d, \"greedy\": %s, \"mean_return\": %.6g, \"std_return\": %.6g, "
               "\"opponent_episodes\": %lld, \"opponent_mean_return\": %.6g",
               r->games, greedy ? "true" : "false", r->mean_return, r->std_return,
               (long long)r->opponent_episodes, r->opponent_mean_return);
        for (int k = 0; k < 3; k++) print_outcome(outcome_names[k], outcomes[k], true);
        printf(", \"interval\": \"wilson95\", \"by_role\": {");
        for (int a = 0; a < r->num_roles; a++) {
            printf("%s", a ? ", " : "");
            cli_print_json_text(r->role_names[a]);
            printf(": {\"games\": %d, \"wins\": %d, \"draws\": %d, \"losses\": %d}",
                   r->role_games[a], r->role_wins[a], r->role_draws[a], r->role_losses[a]);
        }
        printf("}}\n");
        return;
    }
    printf("%s: %d game%s against %s%s, return %.2f +- %.2f (the opponent's %.2f over %lld "
           "episode%s)\n", env->id, r->games, r->games == 1 ? "" : "s", opponent,
           greedy ? " (greedy)" : "", r->mean_return, r->std_return, r->opponent_mean_return,
           (long long)r->opponent_episodes, r->opponent_episodes == 1 ? "" : "s");
    printf("  %-6s %5s  rate  [95%% Wilson interval]\n", "", "games");
    for (int k = 0; k < 3; k++) print_outcome(outcome_names[k], outcomes[k], false);
    for (int a = 0; a < r->num_roles; a++)
        printf("  as %s: %d game%s, %d won, %d drawn, %d lost\n", r->role_names[a],
               r->role_games[a], r->role_games[a] == 1 ? "" : "s", r->role_wins[a],
               r->role_draws[a], r->role_losses[a]);
}

/* A baseline (--policy random or heuristic) in the policy's seat: its games on the
 * preset's envs with the user's keys. */
static sk_status baseline_versus(const sk_env_def *env, const sk_config *overrides,
                                 const char *config_path, const char *baseline,
                                 const sk_opponent *opponent, int episodes, bool greedy,
                                 uint64_t seed, sk_versus_result *result, bool *reported) {
    sk_opponent player;
    sk_status status = sk_opponent_resolve(&player, env, baseline);
    if (status != SK_OK) {
        char why[1024]; /* copied before sk_fail rewrites it */
        snprintf(why, sizeof why, "%s", sk_last_error());
        return sk_fail(status, "--policy %s against an opponent: %s", baseline, why);
    }
    sk_config *base = NULL;
    if (cli_baseline_config(env, config_path, overrides, &base) != SK_EXIT_OK) {
        *reported = true; /* it said why */
        status = SK_ERR_CONFIG;
    } else {
        status = sk_evaluate_versus_baseline(env, base, &player, opponent, episodes, greedy, seed,
                                             result);
        if (status == SK_OK) status = sk_cfg_check_unused(base, "env");
    }
    sk_config_free(base);
    sk_opponent_free(&player);
    return status;
}

int cli_eval_versus(sk_run_plan *plan, const sk_config *overrides, const char *opponent,
                    const char *baseline, const char *config_path, bool extra_output,
                    int episodes, bool greedy, uint64_t seed, bool json) {
    if (baseline && strcmp(baseline, "zero") == 0)
        return cli_error(SK_EXIT_USAGE, "--policy zero plays action 0 in every state, which a "
                         "game refuses once that move is taken: against --opponent, use "
                         "--policy random or heuristic, or --checkpoint RUN");
    if (extra_output)
        return cli_error(SK_EXIT_USAGE, "--opponent reports games; --trace and --video follow "
                         "one policy's episodes (drop them, or drop --opponent)");
    if (cli_comm()->size > 1)
        return cli_error(SK_EXIT_USAGE, "--opponent runs as one process, not under mpirun");
    sk_opponent who;
    sk_status status = sk_opponent_resolve(&who, plan->env, opponent);
    if (status != SK_OK)
        return cli_error(status == SK_ERR_INVALID ? SK_EXIT_USAGE : SK_EXIT_FAILURE,
                         "%s", sk_last_error());
    sk_versus_result result;
    bool reported = false;
    if (baseline) {
        status = baseline_versus(plan->env, overrides, config_path, baseline, &who, episodes,
                                 greedy, seed, &result, &reported);
    } else {
        sk_loaded_policy lp;
        status = sk_policy_load_plan(&lp, plan, overrides);
        if (status == SK_OK) {
            status = sk_evaluate_versus_loaded(&lp, &who, episodes, greedy, seed, &result);
            sk_loaded_policy_free(&lp);
        }
    }
    sk_opponent_free(&who);
    if (status != SK_OK)
        return reported ? SK_EXIT_FAILURE
               : cli_error(status == SK_ERR_INVALID ? SK_EXIT_USAGE : SK_EXIT_FAILURE, "%s",
                           sk_last_error());
    print_versus(plan->env, baseline ? baseline : plan->checkpoint_path, opponent, greedy,
                 &result, json);
    return SK_EXIT_OK;
}
