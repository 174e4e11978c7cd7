/* Checkpoints written before issue 12's redesign (tests/fixtures/checkpoint_v0.1,
 * by f4c4021) still load and evaluate to what that commit printed: the greedy
 * evaluation's mean, std, min and max return and head-0 action counts equal
 * the JSON `skinner eval ... --greedy --json` gave then, at its precision. */
#include "test_json.h"

#define FIXTURES SKINNER_SOURCE_DIR "/tests/fixtures/checkpoint_v0.1/"

/* The figure as the old JSON printed it (%.6g), so equal means bit for bit
 * up to that precision. */
static void expect_printed(const char *what, double got, const cJSON *json, const char *key) {
    char text[32];
    snprintf(text, sizeof text, "%.6g", got);
    double want = test_json_number(json, key);
    if (strtod(text, NULL) != want) fail_msg("%s: %s = %s, the fixture says %.6g", what, key, text, want);
}

static cJSON *read_json(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *json = cJSON_Parse(text);
    if (!json) fail_msg("%s is not JSON", path);
    return json;
}

static void check_fixture(const char *checkpoint, const char *expected, int episodes) {
    sk_eval_result r;
    sk_status status = sk_evaluate(checkpoint, NULL, episodes, true, 1, NULL, &r);
    if (status != SK_OK) fail_msg("%s: %s", checkpoint, sk_last_error());
    cJSON *json = read_json(expected);
    assert_int_equal(r.episodes, (int)test_json_number(json, "episodes"));
    expect_printed(checkpoint, r.mean_return, json, "mean_return");
    expect_printed(checkpoint, r.std_return, json, "std_return");
    expect_printed(checkpoint, r.min_return, json, "min_return");
    expect_printed(checkpoint, r.max_return, json, "max_return");
    expect_printed(checkpoint, r.mean_length, json, "mean_length");
    const cJSON *actions = cJSON_GetObjectItemCaseSensitive(json, "actions");
    if (actions) {
        assert_int_equal(r.num_ops, cJSON_GetArraySize(actions));
        for (int a = 0; a < r.num_ops; a++) {
            char name[16];
            snprintf(name, sizeof name, "%d", a);
            assert_int_equal(r.op_counts[a], (int64_t)test_json_number(actions, name));
        }
    } else {
        assert_int_equal(r.num_ops, 0); /* continuous actions: no counts */
    }
    cJSON_Delete(json);
}

static void test_cartpole_v0_1(void **state) {
    (void)state;
    check_fixture(FIXTURES "cartpole_v0.1.safetensors", FIXTURES "cartpole_eval.json", 8);
}

static void test_pendulum_v0_1(void **state) {
    (void)state;
    check_fixture(FIXTURES "pendulum_v0.1.safetensors", FIXTURES "pendulum_eval.json", 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cartpole_v0_1),
        cmocka_unit_test(test_pendulum_v0_1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
