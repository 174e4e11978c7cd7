#include "events.h"

#include "algo.h"

#include "../core/isa.h"
#include "../io/telemetry.h"

#include <math.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define EVENT_RING 4096

/* Copies text into out as the inside of a JSON string. */
static void json_escape(char *out, size_t size, const char *text) {
    size_t n = 0;
    for (const char *p = text; *p && n + 7 < size; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20) {
            n += (size_t)snprintf(out + n, size - n, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    out[n] = '\0';
}

/* JSON has no NaN: write null. */
static const char *num(char *buf, size_t size, double value) {
    if (isfinite(value)) snprintf(buf, size, "%.6g", value);
    else snprintf(buf, size, "null");
    return buf;
}

static void emit_config(sk_trainer *tr) {
    /* one event per section keeps each under the ring's record size: every section of the
     * run's config that holds keys (every run's ppo.* and selfplay.*; an off-policy run's
     * dqn.* or sac.* and replay.* too; no empty ones) */
    const char *const *sections = sk_trainer_sections;
    for (size_t s = 0; sections[s]; s++) {
        char fields[900] = "", part[256], escaped[192];
        size_t len = strlen(sections[s]), used = 0;
        const char *key, *value;
        for (int i = 0; sk_config_entry_at(tr->cfg, i, &key, &value); i++) {
            if (strncmp(key, sections[s], len) != 0 || key[len] != '.') continue;
            json_escape(escaped, sizeof escaped, value);
            int n = snprintf(part, sizeof part, "%s\"%s\": \"%s\"", used ? ", " : "", key + len + 1,
                             escaped);
            if (n < 0 || used + (size_t)n >= sizeof fields) break;
            memcpy(fields + used, part, (size_t)n + 1);
            used += (size_t)n;
        }
        if (used)
            sk_telemetry_emit(tr->out.telemetry, "config", "\"section\": \"%s\", \"values\": {%s}",
                              sections[s], fields);
    }
}

sk_status sk_events_begin(sk_trainer *tr) {
    char path[4200];
    snprintf(path, sizeof path, "%s/events.jsonl", tr->out.run_dir);
    if (!tr->resumed) unlink(path); /* a new run in a reused folder starts a new log */
    sk_status status = sk_telemetry_open(&tr->out.telemetry, path, EVENT_RING);
    if (status != SK_OK) return status;
    struct utsname machine;
    if (uname(&machine) != 0) memset(&machine, 0, sizeof machine);
    char host[160], cpu[160];
    json_escape(host, sizeof host, machine.nodename);
    json_escape(cpu, sizeof cpu, sk_cpu_model());
    sk_telemetry_emit(tr->out.telemetry, tr->resumed ? "run_resumed" : "run_started",
                      "\"env\": \"%s\", \"version\": \"%s\", \"seed\": %llu, \"threads\": %d, "
                      "\"slices\": %d, \"num_envs\": %d, \"steps\": %lld, \"machine\": {\"host\": \"%s\", "
                      "\"system\": \"%s %s\", \"arch\": \"%s\", \"cores\": %ld, \"cpu\": \"%s\", "
                      "\"isa\": \"%s\", \"isa_detected\": \"%s\"}",
                      tr->env->id, SK_VERSION, (unsigned long long)tr->s.seed, tr->num_threads,
                      tr->num_workers, tr->s.num_envs, (long long)tr->progress.steps, host, machine.sysname,
                      machine.release, machine.machine, sysconf(_SC_NPROCESSORS_ONLN), cpu,
                      sk_isa_level_name(sk_isa_level_used()),
                      sk_isa_level_name(sk_isa_level_detected()));
    emit_config(tr);
    return SK_OK;
}

void sk_events_update(sk_trainer *tr, const sk_update_stats *st) {
    if (!tr->out.telemetry) return;
    char a[32], b[32], c[32], d[32], e[32], f[32], g[32];
    sk_telemetry_emit(tr->out.telemetry, "update",
                      "\"update\": %lld, \"steps\": %lld, \"sps\": %.0f, \"mean_return\": %s, "
                      "\"episodes\": %lld, \"policy_loss\": %s, \"value_loss\": %s, "
                      "\"entropy\": %s, \"approx_kl\": %s, \"clip_fraction\": %s, "
                      "\"explained_variance\": %s, \"learning_rate\": %.6g, \"restored\": %s",
                      (long long)st->update, (long long)st->steps, st->sps,
                      num(a, sizeof a, st->mean_return), (long long)st->episodes,
                      num(b, sizeof b, st->policy_loss), num(c, sizeof c, st->value_loss),
                      num(d, sizeof d, st->entropy), num(e, sizeof e, st->approx_kl),
                      num(f, sizeof f, st->clip_fraction), num(g, sizeof g, st->explained_variance),
                      st->learning_rate, st->restored ? "true" : "false");
    /* the env's own episode scores (e.g. Morpho-v0's test accuracy and Shapley
     * values), averaged over the episodes that ended in this update */
    if (tr->env->num_log_fields > 2 && tr->progress.log_count > 0) {
        char fields[600] = "", part[96], value[32];
        size_t used = 0;
        for (int k = 2; k < tr->env->num_log_fields; k++) {
            int n = snprintf(part, sizeof part, ", \"%s\": %s", tr->env->log_names[k],
                             num(value, sizeof value, tr->progress.log_sum[k] / tr->progress.log_count));
            if (n < 0 || used + (size_t)n >= sizeof fields) break;
            memcpy(fields + used, part, (size_t)n + 1);
            used += (size_t)n;
        }
        sk_telemetry_emit(tr->out.telemetry, "episodes", "\"update\": %lld, \"count\": %d%s",
                          (long long)st->update, tr->progress.log_count, fields);
    }
    if (tr->algo->grad_norms && tr->s.grad_stats_every > 0 && st->update % tr->s.grad_stats_every == 0) {
        char fields[900] = "", part[96];
        size_t used = 0;
        for (int i = 0; i < tr->learner.policy.num_tensors; i++) {
            char value[32];
            int n = snprintf(part, sizeof part, "%s\"%s\": %s", i ? ", " : "",
                             tr->learner.policy.tensors[i].name, num(value, sizeof value, tr->learner.grad_norms[i]));
            if (n < 0 || used + (size_t)n >= sizeof fields) break;
            memcpy(fields + used, part, (size_t)n + 1);
            used += (size_t)n;
        }
        sk_telemetry_emit(tr->out.telemetry, "grad_norms", "\"update\": %lld, \"norms\": {%s}",
                          (long long)st->update, fields);
    }
}

void sk_events_anomaly(sk_trainer *tr, const char *text) {
    if (!tr->out.telemetry) return;
    char escaped[400];
    json_escape(escaped, sizeof escaped, text);
    sk_telemetry_emit(tr->out.telemetry, "anomaly", "\"update\": %lld, \"what\": \"%s\", \"anomalies\": %lld",
                      (long long)tr->progress.update, escaped, (long long)tr->learner.governor.anomalies);
}

void sk_events_checkpoint(sk_trainer *tr, const char *path) {
    if (!tr->out.telemetry) return;
    char escaped[600];
    json_escape(escaped, sizeof escaped, path);
    sk_telemetry_emit(tr->out.telemetry, "checkpoint", "\"update\": %lld, \"steps\": %lld, \"path\": \"%s\"",
                      (long long)tr->progress.update, (long long)tr->progress.steps, escaped);
}

void sk_events_solved(sk_trainer *tr) {
    if (!tr->out.telemetry) return;
    sk_telemetry_emit(tr->out.telemetry, "solved", "\"steps\": %lld, \"seconds\": %.3f, \"threshold\": %g",
                      (long long)tr->progress.result.solved_at_steps, tr->progress.result.solved_at_seconds,
                      tr->env->solved_threshold);
}

uint64_t sk_events_end(sk_trainer *tr, sk_status run_status) {
    if (!tr->out.telemetry) return 0;
    char ret[32], error[600] = "";
    if (run_status != SK_OK) json_escape(error, sizeof error, sk_last_error());
    const sk_train_result *r = &tr->progress.result;
    sk_telemetry_emit(tr->out.telemetry, "run_finished",
                      "\"steps\": %lld, \"seconds\": %.3f, \"sps\": %.0f, \"solved\": %s, "
                      "\"final_mean_return\": %s, \"interrupted\": %s, \"anomalies\": %lld, "
                      "\"status\": \"%s\", \"error\": \"%s\"",
                      (long long)r->total_steps, r->wall_seconds, r->sps,
                      r->solved ? "true" : "false", num(ret, sizeof ret, r->final_mean_return),
                      r->interrupted ? "true" : "false", (long long)r->anomalies,
                      sk_status_name(run_status), error);
    uint64_t dropped = sk_telemetry_dropped(tr->out.telemetry);
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", sk_last_error()); /* the run's error, if any */
    sk_status close_status = sk_telemetry_close(tr->out.telemetry);
    tr->out.telemetry = NULL;
    if (close_status != SK_OK) sk_log(1, "%s", sk_last_error());
    sk_fail(run_status, "%s", saved);
    return dropped;
}
