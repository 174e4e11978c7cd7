/* A run folder's state (run_state.h): live.bin's word, checked against run.lock. */
#include "run_state.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define RUN_PATH_MAX 4200
#define PROC_LOCKS_LINE_MAX 512
#define PROC_LOCKS_INODE_FIELD 5 /* "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF" */

bool sk_run_lock_held(const char *run_dir) {
    char path[RUN_PATH_MAX];
    snprintf(path, sizeof path, "%s/run.lock", run_dir);
    struct stat st;
    if (stat(path, &st) != 0) return false;
    FILE *f = fopen("/proc/locks", "r");
    if (!f) return false;
    char line[PROC_LOCKS_LINE_MAX];
    bool held = false;
    while (!held && fgets(line, sizeof line, f)) {
        if (!strstr(line, "FLOCK")) continue;
        char *field = line;
        for (int k = 0; k < PROC_LOCKS_INODE_FIELD && field; k++) {
            field = strchr(field, ' ');
            while (field && *field == ' ') field++;
        }
        unsigned major_number, minor_number;
        unsigned long long inode;
        if (field && sscanf(field, "%x:%x:%llu", &major_number, &minor_number, &inode) == 3)
            held = major_number == major(st.st_dev) && minor_number == minor(st.st_dev) &&
                   inode == st.st_ino;
    }
    fclose(f);
    return held;
}

static bool has_summary(const char *run_dir) {
    char path[RUN_PATH_MAX];
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int64_t sk_run_state(const char *run_dir, const sk_live_data *live) {
    bool held = sk_run_lock_held(run_dir);
    if (live) {
        if (live->status == SK_LIVE_RUNNING && !held) return SK_LIVE_INTERRUPTED;
        return live->status;
    }
    if (held) return SK_LIVE_RUNNING;
    return has_summary(run_dir) ? SK_LIVE_FINISHED : -1;
}
