/* The run folder: config.ini, metrics.csv, policy.safetensors, summary.json, run.lock. */
#ifndef SK_RUN_FILES_H
#define SK_RUN_FILES_H

#include "trainer_internal.h"

sk_status sk_run_begin(sk_trainer *tr);
void sk_run_metrics_row(sk_trainer *tr, const sk_update_stats *st);
/* Keeps the header and the rows of updates up to last_update of a CSV whose rows begin with
 * their update (metrics.csv, elo.csv): a resumed run writes the later ones again. */
sk_status sk_run_truncate_rows(const char *path, int64_t last_update);
/* RUN_DIR/name open in *f (its path in path) for a run's rows: a new run starts the file; a
 * resumed one keeps its rows of updates up to last_update and appends (a folder of an older
 * skinner, without the file, starts one). The caller writes the header when ftell is 0. A
 * file that cannot be written ends the run with the reason. */
sk_status sk_run_open_rows(const sk_trainer *tr, const char *name, int64_t last_update, FILE **f,
                           char *path, size_t size);
/* Final checkpoint, event log closed, summary.json; run_status is how the run ended. */
sk_status sk_run_end(sk_trainer *tr, sk_status run_status);
/* Writes RUN_DIR/policy.safetensors (atomically). */
sk_status sk_run_checkpoint(sk_trainer *tr);

/* sk_run_lock and sk_run_unlock (one writer per run folder) are public, in
 * skinner/module.h: the trainer takes the lock (sk_trainer_set_run_dir), and so
 * does a module that writes a run folder of its own. */

#endif
