/* The sweep file: a [sweep] section of settings, a section per tuned key (its name is
 * the config key, "[ppo.learning_rate]": distribution, min, max, centre, scale) and plain
 * sections ("[train]") whose keys every trial gets as they are. Its own small reader,
 * since the config reader takes no dotted section names; every refusal names its line. */
#include "sweep.h"

#include "skinner/module.h"

#include <errno.h>
#include <stddef.h>
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

/* names[0..count) joined as "a, b, c" (last_sep NULL) or "a, b or c" (last_sep " or ") in
 * buf[size], for a refusal that lists what a table accepts. */
static const char *join_names(char *buf, size_t size, const char *const *names, size_t count,
                              const char *last_sep) {
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++) {
        const char *sep = i == 0 ? "" : i + 1 == count && last_sep ? last_sep : ", ";
        used += (size_t)snprintf(buf + used, size - used, "%s%s", sep, names[i]);
    }
    return buf;
}

static sk_status copy_text(const reader *rd, const char *key, const char *value, char *out,
                           size_t size) {
    if (strlen(value) >= size) return REFUSE(rd, rd->line, "%s is too long", key);
    strcpy(out, value);
    return SK_OK;
}

/* value as one of names[0..count), its index in *index; refused naming the choices. */
static sk_status parse_choice(const reader *rd, const char *key, const char *value,
                              const char *const *names, size_t count, int *index) {
    for (size_t i = 0; i < count; i++)
        if (strcmp(value, names[i]) == 0) {
            *index = (int)i;
            return SK_OK;
        }
    char expected[256];
    return REFUSE(rd, rd->line, "%s = '%s' (expected %s)", key, value,
                  join_names(expected, sizeof expected, names, count, " or "));
}

/* A [sweep] key: its name, what reads its value into the spec, and for an int setting
 * (set_int) its range and field. */
typedef struct sweep_setting sweep_setting;
struct sweep_setting {
    const char *key;
    sk_status (*set)(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                     const char *value);
    int lo, hi;
    size_t int_at; /* offsetof(sk_sweep_spec, FIELD) */
};

/* The names of sk_sweep_method's, sk_sweep_cost's and the goal's values, by value. */
static const char *const g_method_names[] = {"random", "pareto"};
static const char *const g_cost_names[] = {"seconds", "steps"};
static const char *const g_goal_names[] = {"min", "max"}; /* by spec->maximize */
#define COUNT_OF(array) (sizeof(array) / sizeof *(array))
_Static_assert(COUNT_OF(g_method_names) == SK_SWEEP_PARETO + 1, "a name per sk_sweep_method");
_Static_assert(COUNT_OF(g_cost_names) == SK_COST_STEPS + 1, "a name per sk_sweep_cost");

const char *sk_sweep_method_name(sk_sweep_method method) { return g_method_names[method]; }
const char *sk_sweep_cost_name(sk_sweep_cost cost) { return g_cost_names[cost]; }
const char *sk_sweep_goal_name(bool maximize) { return g_goal_names[maximize]; }

static sk_status set_env(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                         const char *value) {
    spec->env_line = rd->line;
    return copy_text(rd, row->key, value, spec->env, sizeof spec->env);
}

static sk_status set_config(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                            const char *value) {
    spec->config_line = rd->line;
    return copy_text(rd, row->key, value, spec->base_config, sizeof spec->base_config);
}

static sk_status set_method(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                            const char *value) {
    int index = 0;
    sk_status status = parse_choice(rd, row->key, value, g_method_names, COUNT_OF(g_method_names), &index);
    if (status == SK_OK) spec->method = (sk_sweep_method)index;
    return status;
}

static sk_status set_metric(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                            const char *value) {
    (void)row;
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
        size_t count = 0;
        while (sk_sweep_summary_keys[count]) count++;
        char known[512];
        return REFUSE(rd, rd->line,
                      "metric = '%s': no run writes it (a trial's summary.json has: %s; "
                      "eval.KEY reads `skinner eval --json`)",
                      value, join_names(known, sizeof known, sk_sweep_summary_keys, count, NULL));
    }
    strcpy(spec->metric, value);
    return SK_OK;
}

static sk_status set_eval(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                          const char *value) {
    return copy_text(rd, row->key, value, spec->eval_args, sizeof spec->eval_args);
}

static sk_status set_goal(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                          const char *value) {
    /* listed as "max or min", the default first */
    const char *const names[] = {g_goal_names[1], g_goal_names[0]};
    int index = 0;
    sk_status status = parse_choice(rd, row->key, value, names, COUNT_OF(names), &index);
    if (status == SK_OK) spec->maximize = index == 0;
    return status;
}

static sk_status set_cost(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                          const char *value) {
    int index = 0;
    sk_status status = parse_choice(rd, row->key, value, g_cost_names, COUNT_OF(g_cost_names), &index);
    if (status != SK_OK) return status;
    spec->cost = (sk_sweep_cost)index;
    spec->cost_line = rd->line;
    return SK_OK;
}

static sk_status set_trials(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                            const char *value) {
    return parse_count(rd, row->key, value, 1, 1000000, &spec->trials);
}

static sk_status set_seconds(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                             const char *value) {
    sk_status status = parse_number(rd, row->key, value, &spec->seconds);
    if (status == SK_OK && spec->seconds <= 0)
        return REFUSE(rd, rd->line, "seconds = '%s' (expected more than 0)", value);
    return status;
}

static sk_status set_seed(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                          const char *value) {
    int64_t seed = 0;
    sk_status status = parse_count(rd, row->key, value, 0, INT64_MAX, &seed);
    spec->seed = (uint64_t)seed;
    return status;
}

static sk_status set_early_stop(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                                const char *value) {
    sk_status status = parse_number(rd, row->key, value, &spec->early_stop);
    if (status == SK_OK && !(spec->early_stop > 0 && spec->early_stop <= 10))
        return REFUSE(rd, rd->line, "early_stop = '%s' (expected a margin in (0, 10], 0.5: "
                                    "half the best return)", value);
    spec->early_stop_line = rd->line;
    return status;
}

/* An int setting: its row's range, into the int at its row's offset. */
static sk_status set_int(sk_sweep_spec *spec, const reader *rd, const sweep_setting *row,
                         const char *value) {
    int64_t count = 0;
    sk_status status = parse_count(rd, row->key, value, row->lo, row->hi, &count);
    if (status == SK_OK) *(int *)((char *)spec + row->int_at) = (int)count;
    return status;
}

/* The [sweep] keys (docs/sweeps.md's table): the reader and the refusal of an unknown key
 * both come from here. */
#define INT_SETTING(name, low, high)                                                           \
    .key = #name, .set = set_int, .lo = low, .hi = high, .int_at = offsetof(sk_sweep_spec, name)
static const sweep_setting g_sweep_settings[] = {
    {.key = "env", .set = set_env},
    {.key = "config", .set = set_config},
    {.key = "method", .set = set_method},
    {.key = "metric", .set = set_metric},
    {.key = "eval", .set = set_eval},
    {.key = "goal", .set = set_goal},
    {.key = "cost", .set = set_cost},
    {.key = "trials", .set = set_trials},
    {.key = "seconds", .set = set_seconds},
    {INT_SETTING(trials_at_once, 1, 1024)},
    {INT_SETTING(threads_per_trial, 1, 1024)},
    {INT_SETTING(seeds_per_trial, 1, 100)},
    {.key = "seed", .set = set_seed},
    {INT_SETTING(retest_every, 0, 1000000)},
    {.key = "early_stop", .set = set_early_stop},
};

static sk_status sweep_key(sk_sweep_spec *spec, const reader *rd, const char *key,
                           const char *value) {
    const char *names[COUNT_OF(g_sweep_settings)];
    for (size_t i = 0; i < COUNT_OF(g_sweep_settings); i++) {
        if (strcmp(key, g_sweep_settings[i].key) == 0)
            return g_sweep_settings[i].set(spec, rd, &g_sweep_settings[i], value);
        names[i] = g_sweep_settings[i].key;
    }
    char expected[512];
    return REFUSE(rd, rd->line, "unknown key '%s' in [sweep] (expected %s)", key,
                  join_names(expected, sizeof expected, names, COUNT_OF(names), NULL));
}

/* What a tuned key's section set, to be checked once the section ends. */
typedef struct param_seen {
    bool dist, min, max, centre, scale;
} param_seen;

static sk_status param_key(sk_sweep_param *param, param_seen *seen, const reader *rd,
                           const char *key, const char *value) {
    char expected[256];
    if (strcmp(key, "distribution") == 0) {
        if (!sk_sweep_dist_parse(value, &param->dist)) {
            const char *names[SK_SWEEP_DIST_COUNT];
            for (int i = 0; i < SK_SWEEP_DIST_COUNT; i++) names[i] = sk_sweep_dist_name((sk_sweep_dist)i);
            return REFUSE(rd, rd->line, "[%s] distribution = '%s' is unknown (expected %s)",
                          param->key, value,
                          join_names(expected, sizeof expected, names, COUNT_OF(names), " or "));
        }
        seen->dist = true;
        return SK_OK;
    }
    /* the section's numbers: where each goes and its flag in param_seen */
    const struct {
        const char *key;
        double *slot;
        bool *seen;
    } numbers[] = {{"min", &param->min, &seen->min},
                   {"max", &param->max, &seen->max},
                   {"centre", &param->centre, &seen->centre},
                   {"scale", &param->scale, &seen->scale}};
    const char *names[1 + COUNT_OF(numbers)] = {"distribution"};
    for (size_t i = 0; i < COUNT_OF(numbers); i++) {
        if (strcmp(key, numbers[i].key) == 0) {
            *numbers[i].seen = true;
            return parse_number(rd, key, value, numbers[i].slot);
        }
        names[1 + i] = numbers[i].key;
    }
    return REFUSE(rd, rd->line, "unknown key '%s' in [%s] (expected %s)", key, param->key,
                  join_names(expected, sizeof expected, names, COUNT_OF(names), NULL));
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
