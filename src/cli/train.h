#ifndef SK_CLI_TRAIN_H
#define SK_CLI_TRAIN_H

#include "cli.h"

#include "train/plan.h"

typedef struct cli_train_extra {
    bool allow_run_flags, allow_bench_flags;
    bool help, quiet, json;
    bool force; /* --force: an existing, non-empty --run-dir may be written into */
    /* train.total_steps came from the user (--total-steps, --train.total_steps or
     * --config FILE), not from a preset or default: only then is its rounding
     * to whole updates worth a note */
    bool total_steps_given;
    const char *run_dir;
    const char *resume_dir; /* --resume RUN_DIR */
    double seconds;
} cli_train_extra;

/* The one-line progress display: an updating line on a terminal, a plain line
 * every 2 s otherwise. */
typedef struct cli_progress {
    bool tty, quiet;
    double last_print;
    int64_t total_steps;
    double seconds_budget; /* > 0: ETA from this wall-clock budget instead of steps */
    /* the rate shown and the ETA are over the last 5-10 s, not the run's average (an
     * off-policy run's random warm-up steps are many times faster than its learning ones):
     * the wall seconds and steps at two marks, the older first, moved every 5 s */
    double mark_seconds[2];
    int64_t mark_steps[2];
} cli_progress;

/* An sk_update_fn that prints progress; returns false once interrupted. */
bool cli_progress_update(const sk_update_stats *st, void *user);

/* Parses "ENV [options]" of train, bench train and config into the plan
 * (an initialised one): its env found once (plugins loaded once), its config
 * assembled from the preset and --config FILE, or from the run's config.ini
 * with --resume, each file read once, and the options on top. */
int cli_train_config(int argc, char **argv, sk_run_plan *plan, cli_train_extra *extra,
                     const char *usage);

/* cli_train_config on rank 0 of a distributed run, whose result (exit code,
 * config, run to resume) every other rank takes: the ranks cannot differ
 * (each resolves the env of the shared config once). One process:
 * cli_train_config. *resume_copy is for the caller to free. */
int cli_train_config_shared(int argc, char **argv, sk_run_plan *plan, cli_train_extra *extra,
                            const char *usage, char **resume_copy);

#endif
