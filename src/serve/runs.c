/* Run and sweep discovery for skinner serve: which folders under the roots are runs
 * (metrics.csv, live.bin or config.ini) or sweeps (sweep.ini or sweep.jsonl), and each
 * run's state as its live.bin and run.lock tell it (io/run_state.h). */
#define _GNU_SOURCE
#include "serve.h"

#include "io/live.h"
#include "io/run_state.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DEPTH 5        /* ROOT/sweep/trial/seed/... */
#define MAX_ENTRIES 20000  /* folders looked at per listing, whatever the tree holds */

static bool has_file(const char *dir, const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* config.ini's [env] id, for a run with no live.bin. */
static void env_from_config(const char *dir, char *out, size_t size) {
    out[0] = '\0';
    char path[4200];
    snprintf(path, sizeof path, "%s/config.ini", dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[1024];
    bool in_env = false;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '[') in_env = SERVE_STARTS_WITH(line, "[env]");
        else if (in_env && SERVE_STARTS_WITH(line, "id = ")) {
            const char *id = line + SERVE_LIT_LEN("id = ");
            size_t len = SK_SERVE_MIN_LL(strcspn(id, "\r\n"), size - 1);
            memcpy(out, id, len);
            out[len] = '\0';
            break;
        }
    }
    fclose(f);
}

void serve_run_status(serve_buf *out, const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/live.bin", dir);
    sk_live_reader *reader = NULL;
    static _Thread_local sk_live_data data; /* 12 KiB: off the stack of a server thread */
    bool live = sk_live_open_read(&reader, path) == SK_OK && sk_live_snapshot(reader, &data);
    if (reader) sk_live_close_read(reader);
    char env[SK_LIVE_ENV_ID_SIZE];
    if (live) snprintf(env, sizeof env, "%s", data.env_id);
    else env_from_config(dir, env, sizeof env);
    /* the rule skinner monitor follows too: a dead trainer's "running" is interrupted */
    const char *status = sk_live_status_name(sk_run_state(dir, live ? &data : NULL));
    SERVE_PUT_LIT(out, "{\"env\":");
    serve_buf_json_string(out, env);
    serve_buf_printf(out, ",\"status\":\"%s\"", status);
    if (live) {
        serve_buf_printf(out, ",\"steps\":%lld,\"total_steps\":%lld,\"update\":%lld",
                         (long long)data.steps, (long long)data.total_steps,
                         (long long)data.update);
        SERVE_PUT_LIT(out, ",\"return\":");
        serve_buf_json_number(out, data.update > 0 ? data.mean_return : NAN);
        SERVE_PUT_LIT(out, ",\"wall\":");
        serve_buf_json_number(out, data.wall_seconds);
        SERVE_PUT_LIT(out, ",\"sps\":");
        serve_buf_json_number(out, data.sps);
        serve_buf_printf(out, ",\"solved\":%s,\"solved_at\":%lld,\"anomalies\":%lld",
                         data.solved ? "true" : "false", (long long)data.solved_at_steps,
                         (long long)data.anomalies);
        SERVE_PUT_LIT(out, ",\"last_event\":");
        serve_buf_json_string(out, data.governor_event);
    }
    SERVE_PUT_LIT(out, "}");
}

typedef struct walk {
    serve_buf *out;
    const atomic_bool *stop;
    int root;
    int entries;
    bool first_run, first_sweep;
    serve_buf sweeps; /* the sweeps' JSON, appended after the runs */
} walk;

static void emit(walk *w, const char *dir, const char *rel) {
    bool sweep = has_file(dir, "sweep.ini") || has_file(dir, "sweep.jsonl");
    bool run = has_file(dir, "metrics.csv") || has_file(dir, "live.bin") ||
               has_file(dir, "config.ini");
    char id[4200];
    snprintf(id, sizeof id, "%d%s%s", w->root, rel[0] ? "/" : "", rel);
    if (sweep) {
        serve_buf *b = &w->sweeps;
        if (!w->first_sweep) SERVE_PUT_LIT(b, ",");
        SERVE_PUT_LIT(b, "{\"id\":");
        w->first_sweep = false;
        serve_buf_json_string(b, id);
        serve_buf_printf(b, ",\"jsonl\":%s}", has_file(dir, "sweep.jsonl") ? "true" : "false");
    } else if (run) {
        serve_buf *b = w->out;
        if (!w->first_run) SERVE_PUT_LIT(b, ",");
        SERVE_PUT_LIT(b, "{\"id\":");
        w->first_run = false;
        serve_buf_json_string(b, id);
        SERVE_PUT_LIT(b, ",\"state\":");
        serve_run_status(b, dir);
        SERVE_PUT_LIT(b, "}");
    }
}

static void walk_dir(walk *w, const char *dir, const char *rel, int depth) {
    if (++w->entries > MAX_ENTRIES || (w->stop && atomic_load(w->stop))) return;
    emit(w, dir, rel);
    if (depth >= MAX_DEPTH) return;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort);
    closedir(d);
    for (int k = 0; k < n; k++) {
        const char *name = names[k]->d_name;
        char path[4200], sub[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        /* no symlinks followed: a link out of a root would list what it must not serve */
        if (name[0] != '.' && lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", name);
            walk_dir(w, path, sub, depth + 1);
        }
        free(names[k]);
    }
    free(names);
}

void serve_list_runs(serve_buf *out, const char *const *roots_real, int num_roots,
                     const atomic_bool *stop) {
    walk w = {.out = out, .stop = stop, .first_run = true, .first_sweep = true, .sweeps = {.ok = true}};
    SERVE_PUT_LIT(out, "{\"roots\":[");
    for (int r = 0; r < num_roots; r++) {
        if (r) SERVE_PUT_LIT(out, ",");
        serve_buf_json_string(out, roots_real[r]);
    }
    SERVE_PUT_LIT(out, "],\"runs\":[");
    for (int r = 0; r < num_roots; r++) {
        w.root = r;
        walk_dir(&w, roots_real[r], "", 0);
    }
    SERVE_PUT_LIT(out, "],\"sweeps\":[");
    if (w.sweeps.len) serve_buf_put(out, w.sweeps.data, w.sweeps.len);
    if (!w.sweeps.ok) out->ok = false;
    free(w.sweeps.data);
    serve_buf_printf(out, "],\"truncated\":%s}", w.entries > MAX_ENTRIES ? "true" : "false");
}
