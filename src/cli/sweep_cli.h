/* skinner sweep's pieces shared by sweep.c (running) and sweep_files.c (the folder, the
 * checks before any trial, the report). */
#ifndef SK_SWEEP_CLI_H
#define SK_SWEEP_CLI_H

#include "../sweep/sweep.h"

#include <stddef.h>

/* Arguments of [sweep] eval at most. */
#define SWEEP_EVAL_MAX_ARGS 32

/* The whole file as a NUL-terminated string (malloc'd), or NULL. */
char *sweep_read_text(const char *path);
/* Removes path and everything under it, if it exists. */
void sweep_remove_tree(const char *path);
/* A number of a JSON file (summary.json, eval.json) at key, whose dots reach into objects
 * ("head.mrr"); false if missing, null or unreadable. */
bool sweep_summary_number(const char *path, const char *key, double *out);
/* The highest NNNN of DIR/trial-NNNN folders, or -1. */
int sweep_highest_trial(const char *dir);
void sweep_trial_dir(char *buf, size_t size, const char *dir, int index);
/* Writes a trial's config (base, fixed keys, tuned values) to path; without with_budget
 * (best.ini), no fixed train.total_steps. */
sk_status sweep_trial_config(const sk_sweep_spec *spec, const double *value, bool with_budget,
                             const char *path);

/* A new sweep: reads and checks the sweep file (every refusal before any trial: the
 * file's own checks, then `skinner config` on the tuned keys at their range's ends),
 * creates dir (new or empty) and copies the file (DIR/sweep.ini) and its base config
 * (DIR/base.ini) there. */
sk_status sweep_create(const char *dir, const char *config, const char *self, sk_sweep_spec *spec);
/* The sweep in dir, from its DIR/sweep.ini and DIR/base.ini. */
sk_status sweep_open_existing(const char *dir, sk_sweep_spec *spec);

/* Draws DIR/front.png and DIR/params.png from the n successful trials trials[index[k]]
 * and the front (indices into index); false if there is nothing to draw. */
bool sweep_plot(const char *dir, const sk_sweep_spec *spec, const sk_sweep_trial *trials,
                int count, const int *front, int front_size, const int *index, int n);

/* Removes a launcher's rank variables from this process's environment (a child's, before
 * it execs skinner). */
void scrub_launcher_environment(void);

/* Early stopping (sweep_early.c): the finished trials' return curves, read once each. */
typedef struct sweep_curves sweep_curves;
void sweep_curves_free(sweep_curves *curves);
/* Whether the running seed in seed_dir should stop: its latest mean return (its
 * metrics.csv) is below best - margin |best|, where best is the highest return that a finished
 * trial running at least as far had reached by the same step count (at least 3 such trials,
 * and the seed past a quarter of the shortest of them). Says why in message. *curves_io is
 * created on first use. */
bool sweep_early_stop(sweep_curves **curves_io, const char *dir, double margin,
                      const sk_sweep_trial *finished, int count, const char *seed_dir,
                      char *message, size_t size);

/* Whether dir is a sweep's folder (it has sweep.ini). */
bool sweep_is_folder(const char *dir);
/* skinner monitor DIR on a sweep: a snapshot, or one a second on a terminal (not once). */
int sweep_monitor(const char *dir, bool once);

/* Splits text (in place) at blanks into at most SWEEP_EVAL_MAX_ARGS args; their count, or
 * -1 if there are more. */
int sweep_split_args(char *text, char **args);

/* skinner sweep report DIR */
int sweep_report(int argc, char **argv);

#endif
