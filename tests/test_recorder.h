/* Shared by the trainer tests that compare runs update by update (test_resume,
 * test_multiagent, test_selfplay_opponents): a callback keeping each update's stats without
 * its times, a run trained (resumed from a checkpoint, saved, in a run folder) into it, and
 * a resume that must be refused. */
#ifndef SK_TEST_RECORDER_H
#define SK_TEST_RECORDER_H

#include "test_util.h"

#define MAX_ROWS 128

typedef struct recorder {
    sk_update_stats rows[MAX_ROWS];
    int count;
    int64_t stop_after; /* return false after this update (0: never) */
} recorder;

static inline bool record(const sk_update_stats *st, void *user) {
    recorder *r = user;
    if (r->count < MAX_ROWS) {
        sk_update_stats row = *st;
        row.wall_seconds = row.sps = 0.0;
        r->rows[r->count++] = row;
    }
    return r->stop_after == 0 || st->update < r->stop_after;
}

/* Trains cfg (resuming from `resume`, in `run_dir`, each if given) into rec and saves
 * to `save` if given. */
static inline void train_recorded(sk_config *cfg, recorder *rec, const char *resume,
                                  const char *save, const char *run_dir) {
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    if (resume) assert_int_equal(sk_trainer_resume(tr, resume), SK_OK);
    if (run_dir) assert_int_equal(sk_trainer_set_run_dir(tr, run_dir), SK_OK);
    sk_trainer_set_callback(tr, record, rec);
    if (sk_trainer_run(tr) != SK_OK) fail_msg("training failed: %s", sk_trainer_last_error(tr));
    if (save) assert_int_equal(sk_trainer_save(tr, save), SK_OK);
    sk_trainer_destroy(tr);
}

/* A trainer made from cfg refuses to resume from the checkpoint at `path` with `status`, its
 * message holding `needle` (and needle2, if given); cfg is freed. */
static inline void expect_resume_refused(sk_config *cfg, const char *path, const char *needle,
                                         const char *needle2, sk_status status) {
    sk_trainer *tr = NULL;
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    sk_status got = sk_trainer_resume(tr, path);
    const char *message = sk_trainer_last_error(tr);
    if (got == SK_OK) fail_msg("resumed from %s, where a refusal with '%s' was expected", path, needle);
    print_message("refused: %s\n", message);
    if (!strstr(message, needle) || (needle2 && !strstr(message, needle2)))
        fail_msg("message lacks '%s'/'%s': %s", needle, needle2 ? needle2 : "", message);
    assert_int_equal(got, status);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

#endif
