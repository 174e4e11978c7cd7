/* Runs an exported C header (policy.h, found on the include path) over recorded rows:
 *     driver DIR           reads DIR/obs.bin, DIR/start.bin and DIR/mask.bin (if there),
 *                          writes DIR/out.bin: per row the action, the actor's output,
 *                          the value and the state after the step, as floats
 *     driver DIR bench N   prints the CPU nanoseconds per policy_act over N passes of the rows
 * Built by tests/test_export.c and bench/export_c.sh with cc -Wall -Wextra -Werror -std=c99. */
#define _POSIX_C_SOURCE 199309L
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *read_all(const char *dir, const char *name, long *bytes) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = malloc(*bytes > 0 ? (size_t)*bytes : 1);
    if (!data || fread(data, 1, (size_t)*bytes, f) != (size_t)*bytes) {
        fclose(f);
        free(data);
        return NULL;
    }
    fclose(f);
    return data;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: driver DIR [bench N]\n");
        return 2;
    }
    long obs_bytes = 0, start_bytes = 0, mask_bytes = 0;
    policy_obs_t *obs = read_all(argv[1], "obs.bin", &obs_bytes);
    uint8_t *start = read_all(argv[1], "start.bin", &start_bytes);
    uint8_t *masks = POLICY_MASK_SIZE ? read_all(argv[1], "mask.bin", &mask_bytes) : NULL;
    if (!obs || !start) {
        fprintf(stderr, "driver: cannot read %s/obs.bin and start.bin\n", argv[1]);
        return 1;
    }
    long rows = obs_bytes / (long)(POLICY_OBS_SIZE * sizeof(policy_obs_t));
    if (rows != start_bytes) {
        fprintf(stderr, "driver: %ld observations but %ld episode flags\n", rows, start_bytes);
        return 1;
    }
    policy_state state;
    policy_reset(&state);
    policy_action_t action[POLICY_ACTION_SIZE];
    if (argc == 4) { /* bench */
        long passes = atol(argv[3]);
        struct timespec t0, t1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        double checksum = 0.0;
        for (long p = 0; p < passes; p++)
            for (long r = 0; r < rows; r++) {
                if (start[r]) policy_reset(&state);
                policy_act(obs + r * POLICY_OBS_SIZE,
                           masks ? masks + r * POLICY_MASK_SIZE : NULL, &state, action);
                checksum += (double)action[0];
            }
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
        double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
                    ((double)passes * (double)rows);
        printf("%.1f ns/action (%ld actions, checksum %g)\n", ns, passes * rows, checksum);
        return 0;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/out.bin", argv[1]);
    FILE *out = fopen(path, "wb");
    if (!out) return 1;
    for (long r = 0; r < rows; r++) {
        if (start[r]) policy_reset(&state);
        float values[POLICY_ACTION_SIZE + POLICY_OUT_SIZE + 1 + POLICY_STATE_SIZE];
        /* the same step twice from one state: policy_forward's outputs, policy_act's action */
        policy_state before = state;
        values[POLICY_ACTION_SIZE + POLICY_OUT_SIZE] =
            policy_forward(obs + r * POLICY_OBS_SIZE, &state, values + POLICY_ACTION_SIZE);
        policy_act(obs + r * POLICY_OBS_SIZE, masks ? masks + r * POLICY_MASK_SIZE : NULL,
                   &before, action);
        for (int k = 0; k < POLICY_ACTION_SIZE; k++) values[k] = (float)action[k];
        for (int k = 0; k < POLICY_STATE_SIZE; k++)
            values[POLICY_ACTION_SIZE + POLICY_OUT_SIZE + 1 + k] = state.v[k];
        fwrite(values, sizeof(float), sizeof values / sizeof values[0], out);
    }
    return fclose(out) == 0 ? 0 : 1;
}
