/*
 * A policy's games against an opponent (sk_evaluate_versus, skinner.h): the
 * opponent resolved once from its name, then handed down with the policy.
 *
 *     sk_opponent opponent;
 *     sk_opponent_resolve(&opponent, lp.env, "alphabeta:4"); // or "random", a run folder
 *     sk_evaluate_versus_loaded(&lp, &opponent, 200, true, 1, &result);
 *     sk_opponent_free(&opponent);
 */
#ifndef SK_VERSUS_H
#define SK_VERSUS_H

#include "eval.h"

typedef enum sk_opponent_kind {
    SK_OPPONENT_RANDOM,    /* uniform over each row's allowed actions */
    SK_OPPONENT_HEURISTIC, /* the env's heuristic controller (sk_env_extras.heuristic) */
    SK_OPPONENT_BUILTIN,   /* one of the env's opponents (sk_env_extras.opponents) */
    SK_OPPONENT_POLICY     /* a checkpoint of the same env */
} sk_opponent_kind;

typedef struct sk_opponent {
    sk_opponent_kind kind;
    const sk_env_opponent *builtin; /* SK_OPPONENT_BUILTIN: the env's entry */
    int arg;                        /* ... and NAME:ARG's value (0 without one) */
    sk_loaded_policy policy;        /* SK_OPPONENT_POLICY: owned */
} sk_opponent;

/* The opponent `spec` names for env (see sk_evaluate_versus): SK_ERR_INVALID
 * for a single-agent env, continuous actions, an unknown name (the message
 * lists what env offers), a bad ARG, or a checkpoint of another env; the
 * checkpoint loader's status for an unreadable one. On failure nothing is
 * left to free. */
sk_status sk_opponent_resolve(sk_opponent *out, const sk_env_def *env, const char *spec);
void sk_opponent_free(sk_opponent *opponent);
/* spec as one of env's built-in opponents (NAME or NAME:ARG) into out: true when its NAME is
 * one, with *status SK_OK or the reason its ARG is wrong (left as it was otherwise). */
bool sk_opponent_find_builtin(sk_opponent *out, const sk_env_def *env, const char *spec,
                              sk_status *status);

/* What env offers, for messages and --help: "random, heuristic,
 * alphabeta:DEPTH (1..10), or a checkpoint of ConnectFour-v1 (a run folder or
 * its policy.safetensors)". */
void sk_opponent_choices(const sk_env_def *env, char *text, size_t size);
/* Only env's built-in opponents ("alphabeta:DEPTH (1..10)"; "(none)" without any), into
 * text, which it returns. */
const char *sk_builtin_choices(const sk_env_def *env, char *text, size_t size);

/* sk_evaluate_versus for a policy already loaded and an opponent already
 * resolved (both borrowed). */
sk_status sk_evaluate_versus_loaded(const sk_loaded_policy *lp, const sk_opponent *opponent,
                                    int episodes, bool greedy, uint64_t seed,
                                    sk_versus_result *out);
/* The same games with a baseline in the policy's seat: player is random, heuristic or a
 * built-in (resolved as an opponent is), the envs built from cfg (an env's preset and the
 * user's keys); the first mover alternates as for a policy, and greedy applies to a
 * checkpoint opponent. */
sk_status sk_evaluate_versus_baseline(const sk_env_def *env, const sk_config *cfg,
                                      const sk_opponent *player, const sk_opponent *opponent,
                                      int episodes, bool greedy, uint64_t seed,
                                      sk_versus_result *out);

#endif
