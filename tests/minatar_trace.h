/*
 * MinAtar 1.0.15's recorded traces (../shared/reference/minatar, README.md
 * there): a header line (game, seed, sticky, ramping, shape, obs0), then one
 * line per act() call (a requested action, eff the action applied after the
 * sticky rule, r, term, obs after the step, reset and obs_after_reset). States
 * are 10x10xC bools [y][x][c], packed MSB first (numpy's packbits) in hex;
 * here they are unpacked to one byte (0 or 1) per cell and channel.
 */
#ifndef SKINNER_TEST_MINATAR_TRACE_H
#define SKINNER_TEST_MINATAR_TRACE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MINATAR_SIDE 10
#define MINATAR_MAX_CHANNELS 10

typedef struct minatar_trace_step {
    int action, effective;
    double reward;
    bool terminal, reset;
    uint8_t *obs;             /* (10, 10, C) after the step */
    uint8_t *obs_after_reset; /* (10, 10, C) when reset, else NULL */
} minatar_trace_step;

typedef struct minatar_trace {
    char game[32];
    uint32_t seed;
    double sticky;
    bool ramping;
    int channels;
    uint8_t *obs0; /* (10, 10, C) after the first seeded reset */
    int num_steps;
    minatar_trace_step *steps;
} minatar_trace;

/* Unpacks a packbits hex string of cells values into out (0/1 bytes); false if malformed. */
static inline bool minatar_trace_unpack(const char *hex, int cells, uint8_t *out) {
    size_t need = (size_t)(cells + 7) / 8 * 2;
    if (!hex || strlen(hex) != need) return false;
    for (int k = 0; k < cells; k++) {
        char digit = hex[k / 4];
        int nibble = digit >= '0' && digit <= '9' ? digit - '0'
                     : digit >= 'a' && digit <= 'f' ? digit - 'a' + 10
                     : digit >= 'A' && digit <= 'F' ? digit - 'A' + 10
                                                    : -1;
        if (nibble < 0) return false;
        out[k] = (uint8_t)((nibble >> (3 - k % 4)) & 1);
    }
    return true;
}

static inline void minatar_trace_free(minatar_trace *trace) {
    for (int t = 0; trace->steps && t < trace->num_steps; t++) {
        free(trace->steps[t].obs);
        free(trace->steps[t].obs_after_reset);
    }
    free(trace->steps);
    free(trace->obs0);
    memset(trace, 0, sizeof *trace);
}

/* A state member of a line, unpacked into a new buffer; NULL if absent or malformed. */
static inline uint8_t *minatar_trace_state(const cJSON *line, const char *key, int cells) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(line, key);
    uint8_t *state = malloc((size_t)cells);
    if (!state || !cJSON_IsString(item) || !minatar_trace_unpack(item->valuestring, cells, state)) {
        free(state);
        return NULL;
    }
    return state;
}

/* Loads a trace file; false (with a message on stderr) if it cannot be read or parsed. */
static inline bool minatar_trace_load(const char *path, minatar_trace *trace) {
    memset(trace, 0, sizeof *trace);
    FILE *file = fopen(path, "r");
    if (!file) {
        fprintf(stderr, "minatar trace %s: cannot open\n", path);
        return false;
    }
    char *text = NULL;
    size_t size = 0;
    int capacity = 0, cells = 0;
    bool good = true;
    for (int line_number = 1; good && getline(&text, &size, file) > 0; line_number++) {
        cJSON *line = cJSON_Parse(text);
        if (!line) {
            fprintf(stderr, "minatar trace %s:%d: not JSON\n", path, line_number);
            good = false;
            break;
        }
        if (line_number == 1) {
            const cJSON *game = cJSON_GetObjectItemCaseSensitive(line, "game");
            const cJSON *shape = cJSON_GetObjectItemCaseSensitive(line, "shape");
            const cJSON *channels = cJSON_GetArrayItem(shape, 2);
            good = cJSON_IsString(game) && cJSON_IsNumber(channels) &&
                   channels->valueint >= 1 && channels->valueint <= MINATAR_MAX_CHANNELS;
            if (good) {
                snprintf(trace->game, sizeof trace->game, "%s", game->valuestring);
                trace->channels = channels->valueint;
                cells = MINATAR_SIDE * MINATAR_SIDE * trace->channels;
                trace->seed = (uint32_t)cJSON_GetObjectItemCaseSensitive(line, "seed")->valuedouble;
                trace->sticky = cJSON_GetObjectItemCaseSensitive(line, "sticky")->valuedouble;
                trace->ramping = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(line, "ramping"));
                trace->obs0 = minatar_trace_state(line, "obs0", cells);
                good = trace->obs0 != NULL;
            }
        } else {
            if (trace->num_steps == capacity) {
                capacity = capacity ? 2 * capacity : 1024;
                minatar_trace_step *grown = realloc(trace->steps, (size_t)capacity * sizeof *grown);
                if (!grown) good = false;
                else trace->steps = grown;
            }
            if (good) {
                minatar_trace_step *step = &trace->steps[trace->num_steps];
                memset(step, 0, sizeof *step);
                trace->num_steps++;
                step->action = cJSON_GetObjectItemCaseSensitive(line, "a")->valueint;
                step->effective = cJSON_GetObjectItemCaseSensitive(line, "eff")->valueint;
                step->reward = cJSON_GetObjectItemCaseSensitive(line, "r")->valuedouble;
                step->terminal = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(line, "term"));
                step->reset = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(line, "reset"));
                step->obs = minatar_trace_state(line, "obs", cells);
                if (step->reset)
                    step->obs_after_reset = minatar_trace_state(line, "obs_after_reset", cells);
                good = step->obs && (!step->reset || step->obs_after_reset);
            }
        }
        if (!good) fprintf(stderr, "minatar trace %s:%d: malformed line\n", path, line_number);
        cJSON_Delete(line);
    }
    free(text);
    fclose(file);
    if (good && trace->num_steps == 0) {
        fprintf(stderr, "minatar trace %s: no steps\n", path);
        good = false;
    }
    if (!good) minatar_trace_free(trace);
    return good;
}

#endif /* SKINNER_TEST_MINATAR_TRACE_H */
