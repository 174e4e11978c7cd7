/* What `skinner eval` (eval_envs.c) and its games against an opponent (eval_versus.c) share. */
#ifndef SK_CLI_EVAL_VERSUS_H
#define SK_CLI_EVAL_VERSUS_H

#include "skinner.h"

struct sk_run_plan;

/* `skinner eval ENV --checkpoint RUN --opponent NAME` (eval_versus.c): the
 * plan's checkpoint against the opponent NAME names. baseline: the --policy
 * given instead of a checkpoint (random or heuristic plays in its seat, on the
 * envs of the preset, config_path's file and overrides; zero is refused),
 * extra_output: --trace or --video given (refused). Exit 2 for an opponent the
 * env does not offer. */
int cli_eval_versus(struct sk_run_plan *plan, const sk_config *overrides, const char *opponent,
                    const char *baseline, const char *config_path, bool extra_output,
                    int episodes, bool greedy, uint64_t seed, bool json);
/* A baseline's config (eval_envs.c): env's preset, config_path's file on it (NULL: none),
 * then overrides (--env.KEY), with the preset's env.num_envs read (it sizes training, not an
 * evaluation) into *out, to free; an exit code, said on stderr, when the file is wrong. */
int cli_baseline_config(const sk_env_def *env, const char *config_path,
                        const sk_config *overrides, sk_config **out);
/* The opponents env offers, for `skinner eval ENV --help` (nothing for a
 * single-agent env). */
void cli_print_opponents(const sk_env_def *env);

/* text as a JSON string on stdout (quotes and control characters escaped), or
 * null for NULL (eval_envs.c). */
void cli_print_json_text(const char *text);

#endif
