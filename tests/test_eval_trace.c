/* skinner eval's trace (--trace FILE): every counted step and episode end as
 * JSON lines. Read back with cJSON, it must add up to what the evaluation
 * reports: step rows per episode = its length, their rewards = its return,
 * their head-0 actions = the op counts, the end rows' scores = the means. */
#include "test_json.h"

#include "core/config.h"

#include <math.h>

#define EPISODES 3
#define MAX_ENVS 8

static const char *g_config = "[env]\ndata = synthetic\nepochs = 40\nbatches = 2\nbatch_size = 64\n"
                              "val_size = 200\n";

static void test_trace_adds_up(void **state) {
    (void)state;
    const sk_env_def *env = sk_env_find("Morpho-v0");
    assert_non_null(env);
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_load_string(cfg, g_config), SK_OK);
    char dir[64], path[128];
    snprintf(dir, sizeof dir, "/tmp/skinner-test-trace-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/trace.jsonl", dir);
    sk_eval_result result;
    sk_status status =
        sk_evaluate_controller("Morpho-v0", cfg, SK_CONTROLLER_HEURISTIC, EPISODES, 1, path, &result);
    if (status != SK_OK) fail_msg("eval: %s", sk_last_error());

    FILE *f = fopen(path, "r");
    assert_non_null(f);
    double rewards[MAX_ENVS] = {0}, return_sum = 0.0, acc_sum = 0.0;
    int steps[MAX_ENVS] = {0}, episode[MAX_ENVS] = {0}, ends = 0;
    int64_t ops[SK_EVAL_MAX_OPS] = {0};
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        cJSON *row = cJSON_Parse(line);
        if (!row) fail_msg("not JSON: %s", line);
        int i = (int)test_json_number(row, "env");
        assert_true(i >= 0 && i < MAX_ENVS);
        assert_int_equal((int)test_json_number(row, "episode"), episode[i]);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(row, "end"))) {
            assert_int_equal((int)test_json_number(row, "length"), steps[i]);
            double ret = test_json_number(row, "return");
            assert_true(fabs(ret - rewards[i]) <= 1e-3 * (1.0 + fabs(rewards[i])));
            return_sum += ret;
            acc_sum += test_json_number(row, "test_acc");
            episode[i]++, steps[i] = 0, rewards[i] = 0.0, ends++;
        } else {
            assert_int_equal((int)test_json_number(row, "step"), steps[i]);
            const cJSON *action = cJSON_GetObjectItemCaseSensitive(row, "action");
            assert_int_equal(cJSON_GetArraySize(action), env->action_space.num_heads);
            int op = cJSON_GetArrayItem(action, 0)->valueint;
            assert_true(op >= 0 && op < env->action_space.head_sizes[0]);
            ops[op]++;
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "op");
            assert_true(cJSON_IsString(name));
            assert_string_equal(name->valuestring, sk_env_extras_of(env)->action_names[op]);
            rewards[i] += test_json_number(row, "reward");
            steps[i]++;
        }
        cJSON_Delete(row);
    }
    fclose(f);
    assert_int_equal(ends, EPISODES);
    for (int i = 0; i < MAX_ENVS; i++) assert_int_equal(steps[i], 0); /* no step after the end */
    for (int a = 0; a < result.num_ops; a++) assert_int_equal(ops[a], result.op_counts[a]);
    assert_true(ops[1] > 0); /* the heuristic germinated: the trace holds more than WAIT */
    assert_true(fabs(return_sum / EPISODES - result.mean_return) <=
                1e-4 * (1.0 + fabs(result.mean_return)));
    int acc_field = 2;
    while (acc_field < env->num_log_fields && strcmp(env->log_names[acc_field], "test_acc") != 0)
        acc_field++;
    assert_true(acc_field < env->num_log_fields);
    assert_true(fabs(acc_sum / EPISODES - result.log_mean[acc_field]) <= 1e-6);
    remove(path);
    rmdir(dir);
    sk_config_free(cfg);
}

/* An unwritable trace path fails before any episode, naming the path. */
static void test_trace_bad_path(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_load_string(cfg, g_config), SK_OK);
    sk_eval_result result;
    const char *path = "/nonexistent-skinner-dir/trace.jsonl";
    assert_int_not_equal(
        sk_evaluate_controller("Morpho-v0", cfg, SK_CONTROLLER_ZERO, 1, 1, path, &result), SK_OK);
    assert_non_null(strstr(sk_last_error(), path));
    print_message("rejected as expected: %s\n", sk_last_error());
    sk_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_adds_up),
        cmocka_unit_test(test_trace_bad_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
