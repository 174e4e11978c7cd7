/*
 * What a command resolves once (issue 31 ask 4): the env, found by name one
 * time with its plugin loaded one time, and the checkpoint, opened one time.
 * `skinner train`, `skinner eval` and `skinner bench train` build a plan from
 * their command line and hand it down: the trainer, the resume and the policy
 * loader read the plan's env and its open checkpoint, so nothing after the
 * plan looks the env up by name or opens the checkpoint again
 * (tests/resolve_once.py counts both). The library's name-and-path calls
 * (sk_trainer_create, sk_trainer_resume, sk_evaluate) keep resolving for
 * themselves, once each.
 *
 *     sk_run_plan plan;
 *     sk_run_plan_init(&plan);
 *     sk_run_plan_set_checkpoint(&plan, "runs/x");  // or its policy.safetensors
 *     sk_run_plan_resolve_env(&plan, "CartPole-v1"); // opens the checkpoint first
 *     sk_policy_load_plan(&lp, &plan, overrides);          // reads the open file
 *     sk_run_plan_free(&plan);
 */
#ifndef SK_PLAN_H
#define SK_PLAN_H

#include "../io/safetensors.h"

#include "skinner.h"

struct sk_comm;
struct sk_loaded_policy;

#define SK_PLAN_PATH_MAX 4200

typedef struct sk_run_plan {
    const sk_env_def *env; /* as registered (the run's config configures it); NULL until
                              resolved */
    sk_config *cfg;        /* the command's config, owned: the run's for train */
    char checkpoint_path[SK_PLAN_PATH_MAX]; /* "" without a checkpoint */
    sk_st_file *checkpoint;                 /* open from the first read until closed */
    bool checkpoint_closed;                 /* read and closed: never opened again */
    sk_status checkpoint_status;            /* a failed open, reported again (not retried) */
    char checkpoint_error[1024];            /* ... with its message */
    sk_config *checkpoint_cfg; /* the config the checkpoint records, parsed once */
} sk_run_plan;

/* An empty plan with a new config; SK_ERR_NOMEM. */
sk_status sk_run_plan_init(sk_run_plan *plan);
void sk_run_plan_free(sk_run_plan *plan);

/* The checkpoint to read: a policy.safetensors, or the run folder that holds
 * it (its policy.safetensors). Not opened yet: its reader reports a missing file. */
sk_status sk_run_plan_set_checkpoint(sk_run_plan *plan, const char *file_or_run_dir);
/* Opens the plan's checkpoint the first time (sk_st_open's checks, and its
 * recorded config parsed into checkpoint_cfg); later calls keep the same
 * file, or repeat the first call's failure without trying again.
 * SK_ERR_INVALID without a checkpoint, or once it was closed. */
sk_status sk_run_plan_open_checkpoint(sk_run_plan *plan);
/* Frees the open checkpoint's bytes once its last reader is done (a resumed
 * trainer does not keep them while it trains); checkpoint_cfg stays. */
void sk_run_plan_close_checkpoint(sk_run_plan *plan);

/* Loads the plugin at path unless it is loaded already (under any name);
 * NULL or "" loads nothing. How a run's recorded env.plugin is loaded once. */
sk_status sk_run_plan_load_plugin(const char *path);

/*
 * Finds the env `name` names (an id, an alias, or FILE.so:ID) with one
 * registry lookup. Before it, each plugin the command needs is loaded unless
 * it already is: FILE of FILE.so:ID (its failure is the lookup's), and the
 * one the plan's checkpoint records. The checkpoint is opened for that; if
 * it cannot be, or its plugin cannot be loaded, the lookup goes on (the env
 * may come from --env-lib), and the checkpoint's failure waits for its
 * reader. An unknown name fails as sk_env_find does (SK_ERR_UNKNOWN_ENV),
 * adding why the checkpoint's plugin could not be loaded.
 */
sk_status sk_run_plan_resolve_env(sk_run_plan *plan, const char *name);

/* Whether `name` (an id or alias, case-insensitive, or FILE.so:ID) names env,
 * without asking the registry: how a run's env.id, a checkpoint's env and an
 * --env.id are checked against the plan's env. */
bool sk_run_plan_names(const sk_env_def *env, const char *name);

/* The plan's consumers. */

/* sk_trainer_create_comm for plan->env with plan->cfg: no lookup by name. */
sk_status sk_trainer_create_plan(sk_trainer **out, const sk_run_plan *plan,
                                 const struct sk_comm *comm);
/* sk_trainer_resume from the plan's checkpoint (opened if it was not). */
sk_status sk_trainer_resume_plan(sk_trainer *trainer, sk_run_plan *plan);
/* sk_policy_load_with from the plan's checkpoint and env (eval.h). */
sk_status sk_policy_load_plan(struct sk_loaded_policy *out, sk_run_plan *plan,
                              const sk_config *overrides);

#endif
