/* The sweep's two readers: the sweep file (sk_sweep_spec_load) and its state file
 * (sk_sweep_state_read, read back by `skinner sweep --resume` and `sweep report`). Whatever
 * state the reader accepts, the writer writes so that reading it back gives the same trials. */
#include "fuzz_util.h"

#include "sweep/sweep.h"

#include <math.h>
#include <string.h>

/* Two tuned keys and a fixed one, as a user's sweep file has them. */
static const char spec_text[] = "[sweep]\n"
                                "env = CartPole-v1\n"
                                "metric = final_mean_return\n"
                                "trials = 10\n"
                                "[ppo.learning_rate]\n"
                                "distribution = log_uniform\n"
                                "min = 1e-4\n"
                                "max = 1e-2\n"
                                "[ppo.horizon]\n"
                                "distribution = pow2\n"
                                "min = 32\n"
                                "max = 512\n"
                                "[train]\n"
                                "total_steps = 1000\n";

static char dir[] = "/tmp/skinner-fuzz-sweep-XXXXXX";
static char spec_path[64], back_path[64];
static sk_sweep_spec spec;

static bool same_double(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static bool same_trial(const sk_sweep_spec *s, const sk_sweep_trial *a, const sk_sweep_trial *b) {
    if (a->index != b->index || a->retest_of != b->retest_of || a->ok != b->ok) return false;
    for (int d = 0; d < s->num_params; d++)
        if (!same_double(a->value[d], b->value[d])) return false;
    if (a->ok && (!same_double(a->metric, b->metric) || !same_double(a->cost, b->cost)))
        return false;
    if (!a->ok && strcmp(a->message, b->message) != 0) return false;
    return same_double(a->trial_seconds, b->trial_seconds) &&
           same_double(a->sweep_seconds, b->sweep_seconds);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    if (!mkdtemp(dir)) abort();
    snprintf(spec_path, sizeof spec_path, "%s/sweep.ini", dir);
    snprintf(back_path, sizeof back_path, "%s/sweep.jsonl", dir);
    FILE *file = fopen(spec_path, "w");
    if (!file || fputs(spec_text, file) < 0 || fclose(file) != 0) abort();
    if (sk_sweep_spec_load(&spec, spec_path) != SK_OK) {
        fprintf(stderr, "the harness's own sweep file: %s\n", sk_last_error());
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* the input as a sweep file */
    static sk_sweep_spec fuzzed;
    (void)sk_sweep_spec_load(&fuzzed, fuzz_as_file(data, size));

    /* the input as the state file of the harness's sweep */
    sk_sweep_trial *trials = NULL;
    int count = 0;
    if (sk_sweep_state_read(fuzz_as_file(data, size), &spec, &trials, &count) == SK_OK) {
        unlink(back_path);
        for (int t = 0; t < count; t++)
            if (sk_sweep_state_append(back_path, &spec, &trials[t]) != SK_OK) abort();
        sk_sweep_trial *back = NULL;
        int back_count = 0;
        if (sk_sweep_state_read(back_path, &spec, &back, &back_count) != SK_OK) {
            fprintf(stderr, "written state does not read back: %s\n", sk_last_error());
            abort();
        }
        if (back_count != count) abort();
        for (int t = 0; t < count; t++)
            if (!same_trial(&spec, &trials[t], &back[t])) {
                fprintf(stderr, "trial %d differs after a round trip\n", t);
                abort();
            }
        free(back);
    }
    free(trials);
    return 0;
}
