/* The run folder: config.ini, metrics.csv, policy.safetensors, summary.json, run.lock. */
#ifndef SK_RUN_FILES_H
#define SK_RUN_FILES_H

#include "trainer_internal.h"

sk_status sk_run_begin(sk_trainer *tr);
void sk_run_metrics_row(sk_trainer *tr, const sk_update_stats *st);
/* Final checkpoint, event log closed, summary.json; run_status is how the run ended. */
sk_status sk_run_end(sk_trainer *tr, sk_status run_status);
/* Writes RUN_DIR/policy.safetensors (atomically). */
sk_status sk_run_checkpoint(sk_trainer *tr);

/* A run folder has one writer: RUN_DIR/run.lock, flock'd for as long as the
 * descriptor *lock_fd stays open, records the holder's pid, host and command.
 * While another process holds it, SK_ERR_IO names that holder and nothing in
 * the folder is touched; a dead holder's lock went with it (flock), so a
 * crashed run never blocks its own --resume. sk_run_unlock releases it (the
 * file stays: removing it would let a third process lock a fresh file while a
 * second still holds the old one). Used by the trainer (sk_trainer_set_run_dir)
 * and by 'skinner kge train'. */
sk_status sk_run_lock(const char *dir, int *lock_fd);
void sk_run_unlock(int lock_fd);

#endif
