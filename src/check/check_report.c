/* The env checker's report: the results the checks record, one line per
 * check and a summary, or JSON. */
#include "check_internal.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *sk_check_outcome_name(sk_check_outcome outcome) {
    switch (outcome) {
    case SK_CHECK_PASS: return "pass";
    case SK_CHECK_FAIL: return "FAIL";
    case SK_CHECK_SKIP: return "skip";
    case SK_CHECK_INFO: return "info";
    }
    return "?";
}

/* "env 3 step 17: " before a failure's detail ("at reset" for step 0). */
static void where(const sk_check_result *result, char *out, size_t size) {
    out[0] = '\0';
    if (result->outcome != SK_CHECK_FAIL) return;
    char step[48] = "";
    if (result->step == 0) snprintf(step, sizeof step, " at reset");
    else if (result->step > 0) snprintf(step, sizeof step, " step %lld", result->step);
    if (result->env >= 0) snprintf(out, size, "env %d%s: ", result->env, step);
    else if (step[0]) snprintf(out, size, "%s: ", step + 1);
}

void sk_check_print(const sk_check_report *report, FILE *out) {
    int passed = 0, skipped = 0;
    size_t width = 0;
    for (int k = 0; k < report->num_results; k++) {
        size_t len = strlen(report->results[k].name);
        if (len > width) width = len;
    }
    for (int k = 0; k < report->num_results; k++) {
        const sk_check_result *result = &report->results[k];
        char prefix[96];
        where(result, prefix, sizeof prefix);
        fprintf(out, "%s  %-*s  %s%s\n", sk_check_outcome_name(result->outcome), (int)width,
                result->name, prefix, result->detail);
        passed += result->outcome == SK_CHECK_PASS;
        skipped += result->outcome == SK_CHECK_SKIP;
    }
    fprintf(out, "%s: %d passed, %d failed, %d skipped (%d envs, %d steps, seed %llu)\n",
            report->env_id, passed, report->num_failed, skipped, report->num_envs, report->steps,
            (unsigned long long)report->seed);
}

char *sk_check_json(const sk_check_report *report) {
    cJSON *root = cJSON_CreateObject(), *checks = cJSON_CreateArray();
    if (!root || !checks) {
        cJSON_Delete(root);
        cJSON_Delete(checks);
        return NULL;
    }
    cJSON_AddStringToObject(root, "env", report->env_id);
    cJSON_AddNumberToObject(root, "num_envs", report->num_envs);
    cJSON_AddNumberToObject(root, "steps", report->steps);
    cJSON_AddNumberToObject(root, "threads", report->threads);
    cJSON_AddNumberToObject(root, "seed", (double)report->seed);
    int passed = 0;
    for (int k = 0; k < report->num_results; k++) {
        const sk_check_result *result = &report->results[k];
        cJSON *item = cJSON_CreateObject();
        if (!item) break;
        cJSON_AddStringToObject(item, "name", result->name);
        cJSON_AddStringToObject(item, "status", sk_check_outcome_name(result->outcome));
        cJSON_AddStringToObject(item, "detail", result->detail);
        if (result->env >= 0) cJSON_AddNumberToObject(item, "env", result->env);
        else cJSON_AddNullToObject(item, "env");
        if (result->step >= 0) cJSON_AddNumberToObject(item, "step", (double)result->step);
        else cJSON_AddNullToObject(item, "step");
        cJSON_AddItemToArray(checks, item);
        passed += result->outcome == SK_CHECK_PASS;
    }
    cJSON_AddItemToObject(root, "checks", checks);
    cJSON_AddNumberToObject(root, "passed", passed);
    cJSON_AddNumberToObject(root, "failed", report->num_failed);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

/* ---- the results the checks record (check.c and check_state.c) ---- */

void sk_ck_fail(sk_ck_run *run, sk_ck_check check, int env, long long step, const char *fmt, ...) {
    sk_check_result *result = &run->report->results[check];
    if (result->outcome == SK_CHECK_FAIL) return;
    result->outcome = SK_CHECK_FAIL;
    result->env = env;
    result->step = step;
    va_list args;
    va_start(args, fmt);
    vsnprintf(result->detail, sizeof result->detail, fmt, args);
    va_end(args);
}

static void set_detail(sk_ck_run *run, sk_ck_check check, sk_check_outcome outcome, const char *fmt,
                       va_list args) {
    sk_check_result *result = &run->report->results[check];
    if (result->outcome == SK_CHECK_FAIL) return;
    result->outcome = outcome;
    vsnprintf(result->detail, sizeof result->detail, fmt, args);
}

void sk_ck_skip(sk_ck_run *run, sk_ck_check check, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    set_detail(run, check, SK_CHECK_SKIP, fmt, args);
    va_end(args);
}

void sk_ck_note(sk_ck_run *run, sk_ck_check check, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    set_detail(run, check, run->report->results[check].outcome, fmt, args);
    va_end(args);
}

bool sk_ck_failed(const sk_ck_run *run, sk_ck_check check) {
    return run->report->results[check].outcome == SK_CHECK_FAIL;
}
