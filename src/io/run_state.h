/* A run folder's state as its readers show it: skinner monitor and skinner serve ask here, so
 * the two never disagree about a run. */
#ifndef SK_RUN_STATE_H
#define SK_RUN_STATE_H

#include "live.h"

#include <stdbool.h>

/* True when some process holds RUN_DIR/run.lock's flock (sk_run_lock): the run's trainer is
 * alive. Read from /proc/locks, so the check takes no lock itself and a trainer starting at
 * that moment is not refused. False when there is no run.lock or /proc/locks cannot be read. */
bool sk_run_lock_held(const char *run_dir);

/*
 * The run's state, an sk_live_status, or -1 when nothing tells (sk_live_status_name gives
 * "unknown" for it). live is the run's live.bin record, or NULL when it has none.
 *
 * The rule: live.bin's status, except that a run whose live.bin still says running while no
 * process holds its run.lock died without saying so (SIGKILL, an out-of-memory kill, a power
 * cut) and is interrupted. Without live.bin: running while the lock is held, finished when
 * summary.json exists, else unknown.
 */
int64_t sk_run_state(const char *run_dir, const sk_live_data *live);

#endif
