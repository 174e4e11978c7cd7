/* The sweep file: a [sweep] section of settings, a section per tuned key (its name is
 * the config key, "[ppo.learning_rate]": distribution, min, max, centre, scale) and plain
 * sections ("[train]") whose keys every trial gets as they are. Its own small reader,
 * since the config reader takes no dotted section names; every refusal names its line. */
#include "sweep.h"

#include "skinner/module.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* What skinner's run writes in summary.json as numbers (src/train/run_files.c);
 * test_sweep checks the list against a real run's file. */
const char *const sk_sweep_summary_keys[] = {
    "total_steps", "wall_seconds", "sps", "solved_threshold", "solved_at_steps",
    "solved_at_seconds", "final_mean_return", "episodes", "anomalies", "rollout_idle", NULL};

typedef struct reader {
    const char *path;
    int line;
} reader;

#define REFUSE(rd, line, ...) sk_fail_at(SK_ERR_CONFIG, (rd)->path, (line), __VA_ARGS__)

static char *trim(char *text) {
    while (*text == ' ' || *text == '\t') text++;
    char *end = text + strlen(text);
    while (end > text && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
        *--end = '\0';
    return text;
}

static bool is_summary_key(const char *key) {
    for (int i = 0; sk_sweep_summary_keys[i]; i++)
        if (strcmp(key, sk_sweep_summary_keys[i]) == 0) return true;
    return false;
}

static sk_status parse_number(const reader *rd, const char *key, const char *value, double *out) {
    if (!sk_parse_f64(value, out) || !isfinite(*out))
        return REFUSE(rd, rd->line, "%s = '%s' is not a number", key, value);
    return SK_OK;
}

static sk_status parse_count(const reader *rd, const char *key, const char *value, int64_t lo,
                             int64_t hi, int64_t *out) {
    if (!sk_parse_i64(value, out) || *out < lo || *out > hi)
        return REFUSE(rd, rd->line, "%s = '%s' (expected an integer in %lld..%lld)", key, value,
                      (long long)lo, (long long)hi);
    return SK_OK;
}

static sk_status sweep_key(sk_sweep_spec *spec, const reader *rd, const char *key,
                           const char *value) {
    int64_t count = 0;
    sk_status status = SK_OK;
    if (strcmp(key, "env") == 0) {
        if (strlen(value) >= sizeof spec->env) return REFUSE(rd, rd->line, "env is too long");
        strcpy(spec->env, value);
        spec->env_line = rd->line;
    } else if (strcmp(key, "config") == 0) {
        if (strlen(value) >= sizeof spec->base_config)
            return REFUSE(rd, rd->line, "config is too long");
        strcpy(spec->base_config, value);
        spec->config_line = rd->line;
    } else if (strcmp(key, "method") == 0) {
        if (strcmp(value, "random") == 0) spec->method = SK_SWEEP_RANDOM;
        else if (strcmp(value, "pareto") == 0) spec->method = SK_SWEEP_PARETO;
        else return REFUSE(rd, rd->line, "method = '%s' (expected random or pareto)", value);
    } else if (strcmp(key, "metric") == 0) {
        if (strncmp(value, "summary.", 8) == 0) value += 8;
        spec->metric_line = rd->line;
        if (strncmp(value, "eval.", 5) == 0) {
            /* a key of `skinner eval --json` (dots reach into objects: eval.head.mrr); the
             * program checks that the env's evaluation reports it before any trial */
            value += 5;
            if (!*value || strlen(value) >= sizeof spec->metric || value[strlen(value) - 1] == '.')
                return REFUSE(rd, rd->line, "metric = 'eval.%s' names no key of the evaluation", value);
            strcpy(spec->metric, value);
            spec->metric_from_eval = true;
            return SK_OK;
        }
        if (!is_summary_key(value)) {
            char known[512] = "";
            for (int i = 0; sk_sweep_summary_keys[i]; i++) {
                strcat(known, i ? ", " : "");
                strcat(known, sk_sweep_summary_keys[i]);
            }
            return REFUSE(rd, rd->line,
                          "metric = '%s': no run writes it (a trial's summary.json has: %s; "
                          "eval.KEY reads `skinner eval --json`)",
                          value, known);
        }
        strcpy(spec->metric, value);
    } else if (strcmp(key, "eval") == 0) {
        if (strlen(value) >= sizeof spec->eval_args) return REFUSE(rd, rd->line, "eval is too long");
        strcpy(spec->eval_args, value);
    } else if (strcmp(key, "goal") == 0) {
        if (strcmp(value, "max") == 0) spec->maximize = true;
        else if (strcmp(value, "min") == 0) spec->maximize = false;
        else return REFUSE(rd, rd->line, "goal = '%s' (expected max or min)", value);
    } else if (strcmp(key, "cost") == 0) {
        if (strcmp(value, "seconds") == 0) spec->cost = SK_COST_SECONDS;
        else if (strcmp(value, "steps") == 0) spec->cost = SK_COST_STEPS;
        else return REFUSE(rd, rd->line, "cost = '%s' (expected seconds or steps)", value);
        spec->cost_line = rd->line;
    } else if (strcmp(key, "trials") == 0) {
        status = parse_count(rd, key, value, 1, 1000000, &spec->trials);
    } else if (strcmp(key, "seconds") == 0) {
        status = parse_number(rd, key, value, &spec->seconds);
        if (status == SK_OK && spec->seconds <= 0)
            return REFUSE(rd, rd->line, "seconds = '%s' (expected more than 0)", value);
    } else if (strcmp(key, "trials_at_once") == 0) {
        status = parse_count(rd, key, value, 1, 1024, &count);
        spec->trials_at_once = (int)count;
    } else if (strcmp(key, "threads_per_trial") == 0) {
        status = parse_count(rd, key, value, 1, 1024, &count);
        spec->threads_per_trial = (int)count;
    } else if (strcmp(key, "seeds_per_trial") == 0) {
        status = parse_count(rd, key, value, 1, 100, &count);
        spec->seeds_per_trial = (int)count;
    } else if (strcmp(key, "seed") == 0) {
        status = parse_count(rd, key, value, 0, INT64_MAX, &count);
        spec->seed = (uint64_t)count;
    } else if (strcmp(key, "early_stop") == 0) {
        status = parse_number(rd, key, value, &spec->early_stop);
        if (status == SK_OK && !(spec->early_stop > 0 && spec->early_stop <= 10))
            return REFUSE(rd, rd->line, "early_stop = '%s' (expected a margin in (0, 10], 0.5: "
                                        "half the best return)", value);
        spec->early_stop_line = rd->line;
    } else if (strcmp(key, "retest_every") == 0) {
        status = parse_count(rd, key, value, 0, 1000000, &count);
        spec->retest_every = (int)count;
    } else {
        return REFUSE(rd, rd->line,
                      "unknown key '%s' in [sweep] (expected env, config, method, metric, eval, goal, "
                      "cost, trials, seconds, trials_at_once, threads_per_trial, seeds_per_trial, "
                      "seed, retest_every, early_stop)",
                      key);
    }
    return status;
}

/* What a tuned key's section set, to be checked once the section ends. */
typedef struct param_seen {
    bool dist, min, max, centre, scale;
} param_seen;

static sk_status param_key(sk_sweep_param *param, param_seen *seen, const reader *rd,
                           const char *key, const char *value) {
    if (strcmp(key, "distribution") == 0) {
        if (!sk_sweep_dist_parse(value, &param->dist))
            return REFUSE(rd, rd->line,
                          "[%s] distribution = '%s' is unknown (expected uniform, log_uniform, "
                          "integer, pow2 or logit)",
                          param->key, value);
        seen->dist = true;
        return SK_OK;
    }
    double *slot = NULL;
    bool *flag = NULL;
    if (strcmp(key, "min") == 0) slot = &param->min, flag = &seen->min;
    else if (strcmp(key, "max") == 0) slot = &param->max, flag = &seen->max;
    else if (strcmp(key, "centre") == 0) slot = &param->centre, flag = &seen->centre;
    else if (strcmp(key, "scale") == 0) slot = &param->scale, flag = &seen->scale;
    else
        return REFUSE(rd, rd->line,
                      "unknown key '%s' in [%s] (expected distribution, min, max, centre, scale)",
                      key, param->key);
    *flag = true;
    return parse_number(rd, key, value, slot);
}

static bool is_pow2(double value) { return value >= 1 && exp2(round(log2(value))) == value; }

/* The checks that need the whole section. */
static sk_status param_check(sk_sweep_param *param, const param_seen *seen, const reader *rd) {
    const char *name = param->key;
    int line = param->line;
    if (!seen->dist) return REFUSE(rd, line, "[%s] has no distribution", name);
    if (!seen->min || !seen->max) return REFUSE(rd, line, "[%s] needs both min and max", name);
    if (!(param->min < param->max))
        return REFUSE(rd, line, "[%s] range %g..%g is %s (expected min below max)", name,
                      param->min, param->max, param->min == param->max ? "empty" : "inverted");
    switch (param->dist) {
    case SK_DIST_LOG_UNIFORM:
    case SK_DIST_POW2:
        if (param->min <= 0)
            return REFUSE(rd, line,
                          "[%s] %s range %g..%g reaches zero or below (a log range needs min > 0)",
                          name, sk_sweep_dist_name(param->dist), param->min, param->max);
        if (param->dist == SK_DIST_POW2 && (!is_pow2(param->min) || !is_pow2(param->max)))
            return REFUSE(rd, line, "[%s] pow2 range %g..%g: min and max must be powers of two",
                          name, param->min, param->max);
        break;
    case SK_DIST_LOGIT:
        if (param->min <= 0 || param->max >= 1)
            return REFUSE(rd, line, "[%s] logit range %g..%g must lie inside (0, 1)", name,
                          param->min, param->max);
        break;
    case SK_DIST_INTEGER:
        if (param->min != round(param->min) || param->max != round(param->max))
            return REFUSE(rd, line, "[%s] integer range %g..%g must have integer ends", name,
                          param->min, param->max);
        break;
    default: break;
    }
    if (seen->centre && (param->centre < param->min || param->centre > param->max))
        return REFUSE(rd, line, "[%s] centre %g is outside %g..%g", name, param->centre,
                      param->min, param->max);
    if (!seen->centre) param->centre = sk_sweep_value(param, 0.0);
    if (seen->scale && !(param->scale > 0 && param->scale <= 2))
        return REFUSE(rd, line, "[%s] scale %g (expected in (0, 2], [-1, 1] units)", name,
                      param->scale);
    if (!seen->scale) param->scale = 0.5;
    return SK_OK;
}

/* Whether a trial's env steps can differ from another's: only a run that stops when solved,
 * or a tuned budget, ends short of or beyond the fixed train.total_steps (a trial stopped
 * early is a failure, not a cost). Tuning env.num_envs or ppo.horizon moves the steps only by
 * the budget's rounding to whole updates. */
static bool steps_can_vary(const sk_sweep_spec *spec) {
    for (int j = 0; j < spec->num_params; j++)
        if (strcmp(spec->params[j].key, "train.total_steps") == 0) return true;
    for (int i = 0; i < spec->num_fixed; i++)
        if (strcmp(spec->fixed_key[i], "train.stop_when_solved") == 0)
            return strcmp(spec->fixed_value[i], "true") == 0;
    if (!spec->base_config[0]) return false;
    /* a base config that cannot be read is not judged here: loading the trials reports it */
    sk_config *base = sk_config_new();
    if (!base || sk_config_load_file(base, spec->base_config) != SK_OK) {
        sk_config_free(base);
        return true;
    }
    const char *stop = sk_config_get(base, "train.stop_when_solved");
    bool solved = stop && strcmp(stop, "true") == 0;
    sk_config_free(base);
    return solved;
}

static sk_status read_lines(sk_sweep_spec *spec, reader *rd, FILE *file) {
    char text[4096], section[SK_SWEEP_KEY_MAX] = "";
    sk_sweep_param *param = NULL;
    param_seen seen = {0};
    bool any_sweep = false;
    sk_status status = SK_OK;
    while (status == SK_OK && fgets(text, sizeof text, file)) {
        rd->line++;
        if (!strchr(text, '\n') && !feof(file))
            return REFUSE(rd, rd->line, "line is longer than %d bytes", (int)sizeof text - 2);
        char *line = trim(text);
        if (!*line || *line == ';' || *line == '#') continue;
        if (*line == '[') {
            char *close = strchr(line, ']');
            if (!close || *trim(close + 1))
                return REFUSE(rd, rd->line, "section line '%s' (expected [NAME])", line);
            *close = '\0';
            char *name = trim(line + 1);
            if (!*name || strlen(name) >= sizeof section)
                return REFUSE(rd, rd->line, "section name '%s' is empty or too long", name);
            if (param) status = param_check(param, &seen, rd);
            if (status != SK_OK) return status;
            param = NULL;
            strcpy(section, name);
            const char *dot = strchr(name, '.');
            if (dot && (dot == name || !dot[1] || strchr(dot + 1, '.')))
                return REFUSE(rd, rd->line, "[%s] is not a config key SECTION.KEY", name);
            if (dot) {
                for (int i = 0; i < spec->num_params; i++)
                    if (strcmp(spec->params[i].key, name) == 0)
                        return REFUSE(rd, rd->line, "[%s] is tuned twice (first on line %d)",
                                      name, spec->params[i].line);
                if (spec->num_params == SK_SWEEP_MAX_PARAMS)
                    return REFUSE(rd, rd->line, "more than %d tuned keys", SK_SWEEP_MAX_PARAMS);
                param = &spec->params[spec->num_params++];
                memset(param, 0, sizeof *param);
                strcpy(param->key, name);
                param->line = rd->line;
                memset(&seen, 0, sizeof seen);
            }
            any_sweep |= strcmp(name, "sweep") == 0;
            continue;
        }
        char *eq = strchr(line, '=');
        if (!eq) return REFUSE(rd, rd->line, "'%s' is not KEY = VALUE", line);
        *eq = '\0';
        char *key = trim(line), *value = trim(eq + 1);
        char *comment = strstr(value, " ;");
        if (comment) *comment = '\0', value = trim(value);
        if (!*section) return REFUSE(rd, rd->line, "key '%s' before any section", key);
        if (!*value) return REFUSE(rd, rd->line, "%s has no value", key);
        if (param) status = param_key(param, &seen, rd, key, value);
        else if (strcmp(section, "sweep") == 0) status = sweep_key(spec, rd, key, value);
        else {
            if (spec->num_fixed == SK_SWEEP_MAX_FIXED)
                return REFUSE(rd, rd->line, "more than %d fixed keys", SK_SWEEP_MAX_FIXED);
            int n = snprintf(spec->fixed_key[spec->num_fixed], SK_SWEEP_KEY_MAX, "%s.%s", section,
                             key);
            if (n >= SK_SWEEP_KEY_MAX || strlen(value) >= sizeof spec->fixed_value[0])
                return REFUSE(rd, rd->line, "key or value too long");
            spec->fixed_line[spec->num_fixed] = rd->line;
            strcpy(spec->fixed_value[spec->num_fixed++], value);
        }
    }
    if (status == SK_OK && param) status = param_check(param, &seen, rd);
    if (status != SK_OK) return status;
    if (!any_sweep) return REFUSE(rd, rd->line, "no [sweep] section");
    return SK_OK;
}

sk_status sk_sweep_spec_load(sk_sweep_spec *spec, const char *path) {
    memset(spec, 0, sizeof *spec);
    spec->method = SK_SWEEP_PARETO;
    spec->maximize = true;
    spec->trials_at_once = spec->threads_per_trial = spec->seeds_per_trial = 1;
    spec->seed = 1;
    spec->retest_every = 10;
    FILE *file = fopen(path, "r");
    if (!file) return sk_fail(SK_ERR_IO, "cannot open sweep file '%s': %s", path, strerror(errno));
    reader rd = {.path = path, .line = 0};
    sk_status status = read_lines(spec, &rd, file);
    fclose(file);
    if (status != SK_OK) return status;
    if (!spec->env[0]) return REFUSE(&rd, 1, "[sweep] names no env (env = ID)");
    if (!spec->metric[0]) return REFUSE(&rd, 1, "[sweep] names no metric (metric = KEY)");
    if (!spec->trials && spec->seconds == 0)
        return REFUSE(&rd, 1, "[sweep] sets no budget (trials = N and/or seconds = S)");
    if (!spec->num_params) return REFUSE(&rd, rd.line, "no tuned key ([SECTION.KEY] sections)");
    if (spec->early_stop > 0 &&
        (spec->metric_from_eval || strcmp(spec->metric, "final_mean_return") != 0 || !spec->maximize))
        return REFUSE(&rd, spec->early_stop_line,
                      "early_stop compares training returns: it needs metric = final_mean_return "
                      "and goal = max");
    if (spec->cost == SK_COST_STEPS && !steps_can_vary(spec))
        return REFUSE(&rd, spec->cost_line,
                      "cost = steps is the same for every trial: each runs train.total_steps, so "
                      "the score-cost front would be one point; set stop_when_solved = true in "
                      "[train] (a trial then costs the steps it took to solve), tune "
                      "train.total_steps, or use cost = seconds");
    /* the sweep sets these per run: --threads threads_per_trial, --seed 1..seeds_per_trial */
    static const char *const owned[] = {"train.threads", "train.seed"};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < spec->num_fixed; i++)
            if (strcmp(spec->fixed_key[i], owned[k]) == 0)
                return REFUSE(&rd, spec->fixed_line[i], "%s is the sweep's to set (%s)", owned[k],
                              k ? "seeds_per_trial runs seeds 1..N" : "threads_per_trial");
        for (int j = 0; j < spec->num_params; j++)
            if (strcmp(spec->params[j].key, owned[k]) == 0)
                return REFUSE(&rd, spec->params[j].line, "%s is the sweep's to set (%s)", owned[k],
                              k ? "seeds_per_trial runs seeds 1..N" : "threads_per_trial");
    }
    for (int i = 0; i < spec->num_fixed; i++)
        for (int j = 0; j < spec->num_params; j++)
            if (strcmp(spec->fixed_key[i], spec->params[j].key) == 0)
                return REFUSE(&rd, spec->params[j].line, "%s is both tuned and fixed",
                              spec->params[j].key);
    return SK_OK;
}
