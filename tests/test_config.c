/* Config: INI parsing with located errors, typed validated reads, unknown
 * keys, and the resolved table's round trip. */
#include "test_util.h"

#include "core/config.h"
#include "core/core.h"

#include <sys/stat.h>

static char g_dir[64];

static const char *write_file(const char *name, const char *text) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_load_and_override(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    const char *path = write_file("a.ini", "; comment\n[ppo]\nlearning_rate = 0.001\nhorizon=32\n\n[env]\nnum_envs = 8\n");
    assert_int_equal(sk_config_load_file(cfg, path), SK_OK);
    assert_string_equal(sk_config_get(cfg, "ppo.learning_rate"), "0.001");
    assert_int_equal(sk_config_set(cfg, "ppo.horizon", "64"), SK_OK);
    int64_t horizon;
    assert_int_equal(sk_cfg_int(cfg, "ppo.horizon", 128, 1, 1000, &horizon), SK_OK);
    assert_int_equal(horizon, 64);
    double gamma;
    assert_int_equal(sk_cfg_double(cfg, "ppo.gamma", 0.99, 0, 1, &gamma), SK_OK);
    assert_true(gamma == 0.99);
    assert_string_equal(sk_config_get(cfg, "ppo.gamma"), "0.99"); /* the default is recorded */
    /* learning_rate was never read: reported as unknown */
    assert_int_equal(sk_cfg_check_unused(cfg, "ppo"), SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), "ppo.learning_rate"));
    assert_int_equal(sk_cfg_check_unused(cfg, "train"), SK_OK);
    /* a typo of a key that was read names it; a key near none names nothing */
    static const char *const typos[] = {"ppo.update_epoch", "ppo.zzz", "ppo.x"};
    for (int c = 0; c < 3; c++) {
        sk_config *typo = sk_config_new();
        assert_int_equal(sk_config_set(typo, typos[c], "3"), SK_OK);
        int64_t value;
        assert_int_equal(sk_cfg_int(typo, "ppo.update_epochs", 4, 1, 100, &value), SK_OK);
        assert_int_equal(sk_cfg_int(typo, "ppo.horizon", 4, 1, 100, &value), SK_OK);
        assert_int_equal(sk_cfg_check_unused(typo, "ppo"), SK_ERR_CONFIG);
        if (c == 0)
            assert_string_equal(sk_last_error(), "unknown config key 'ppo.update_epoch' (did you "
                                                 "mean 'ppo.update_epochs'?)");
        else /* far from every name; a short one is not "near" a 7-letter one */
            assert_true(strstr(sk_last_error(), "did you mean") == NULL);
        sk_config_free(typo);
    }
    const char *sections[] = {"ppo", NULL};
    assert_int_equal(sk_cfg_check_sections(cfg, sections), SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), "env.num_envs"));

    /* round trip through text */
    char *text = sk_config_to_string(cfg);
    sk_config *copy = sk_config_new();
    assert_int_equal(sk_config_load_string(copy, text), SK_OK);
    assert_string_equal(sk_config_get(copy, "ppo.horizon"), "64");
    assert_string_equal(sk_config_get(copy, "env.num_envs"), "8");
    free(text);
    sk_config_free(copy);
    sk_config_free(cfg);
}

static void test_syntax_errors_name_file_and_line(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    const char *path = write_file("bad.ini", "[ppo]\nhorizon = 3\nthis line has no equals sign\n");
    assert_int_equal(sk_config_load_file(cfg, path), SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), path));
    assert_non_null(strstr(sk_last_error(), ":3:"));
    path = write_file("nosection.ini", "horizon = 3\n");
    assert_int_equal(sk_config_load_file(cfg, path), SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), ":1:"));
    assert_non_null(strstr(sk_last_error(), "outside any [section]"));
    assert_int_equal(sk_config_load_file(cfg, "/nonexistent/x.ini"), SK_ERR_IO);
    assert_non_null(strstr(sk_last_error(), "/nonexistent/x.ini"));
    assert_int_equal(sk_config_set(cfg, "nodot", "1"), SK_ERR_CONFIG);
    assert_int_equal(sk_config_set(cfg, "a.b.c", "1"), SK_ERR_CONFIG);
    sk_config_free(cfg);
}

static void test_typed_reads_reject_bad_values(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    int64_t i;
    double d;
    bool b;
    int choice;
    sk_config_set(cfg, "a.int", "12x");
    assert_int_equal(sk_cfg_int(cfg, "a.int", 0, 0, 100, &i), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "a.int"));
    sk_config_set(cfg, "a.int", "1e3");
    assert_int_equal(sk_cfg_int(cfg, "a.int", 0, 0, 10000, &i), SK_OK);
    assert_int_equal(i, 1000);
    assert_int_equal(sk_cfg_int(cfg, "a.int", 0, 0, 100, &i), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "out of range"));
    sk_config_set(cfg, "a.float", "nan");
    assert_int_equal(sk_cfg_double(cfg, "a.float", 0, 0, 1, &d), SK_ERR_INVALID);
    sk_config_set(cfg, "a.float", "fast");
    assert_int_equal(sk_cfg_double(cfg, "a.float", 0, 0, 1, &d), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "fast"));
    sk_config_set(cfg, "a.bool", "maybe");
    assert_int_equal(sk_cfg_bool(cfg, "a.bool", false, &b), SK_ERR_INVALID);
    sk_config_set(cfg, "a.bool", "yes");
    assert_int_equal(sk_cfg_bool(cfg, "a.bool", false, &b), SK_OK);
    assert_true(b);
    const char *choices[] = {"tanh", "relu", NULL};
    sk_config_set(cfg, "a.act", "gelu");
    assert_int_equal(sk_cfg_choice(cfg, "a.act", "tanh", choices, &choice), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "tanh, relu"));
    assert_null(strstr(sk_last_error(), "did you mean"));
    sk_config_set(cfg, "a.act", "ReLU");
    assert_int_equal(sk_cfg_choice(cfg, "a.act", "tanh", choices, &choice), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "did you mean 'relu'?"));
    sk_config_free(cfg);
}


/* Values a user can pass on the command line that inih's reader mangled: cut at
 * " ;", trimmed, longer than its 200-byte line, or not text at all. */
static const char *const g_adversarial[] = {
    "DIR/a ;b", "a;b", "#hash", "x # y", " leading", "trailing ", "\ttabs\t", "in\tside",
    "q\"uote", "\"", "\"quoted\"", "back\\slash", "\\x41", "\\", "new\nline", "cr\rlf",
    "\x01\x1f\x7f", "= [s] :", "[section]", "; comment", "caf\xc3\xa9", "", " ", NULL};

#define NUM_ADVERSARIAL ((int)(sizeof g_adversarial / sizeof *g_adversarial) - 1)

static char *long_value(size_t len, char fill) {
    char *text = malloc(len + 1);
    assert_non_null(text);
    memset(text, fill, len);
    text[len] = '\0';
    return text;
}

/* Writes cfg to a file, reads it back and checks every key and value. */
static void assert_round_trip(const sk_config *cfg) {
    char path[256];
    snprintf(path, sizeof path, "%s/round_trip.ini", g_dir);
    assert_int_equal(sk_config_write(cfg, path), SK_OK);
    sk_config *back = sk_config_new();
    if (sk_config_load_file(back, path) != SK_OK) fail_msg("re-read: %s", sk_last_error());
    const char *key, *value, *key2, *value2;
    int count = 0;
    for (int i = 0; sk_config_entry_at(cfg, i, &key, &value); i++, count++) {
        const char *got = sk_config_get(back, key);
        if (!got || strcmp(got, value) != 0)
            fail_msg("%s: wrote '%s', read back '%s'", key, value, got ? got : "(absent)");
    }
    int back_count = 0;
    while (sk_config_entry_at(back, back_count, &key2, &value2)) back_count++;
    assert_int_equal(back_count, count);
    /* the checkpoint metadata's path: text, not a file */
    char *text = sk_config_to_string(cfg);
    sk_config *from_text = sk_config_new();
    assert_int_equal(sk_config_load_string(from_text, text), SK_OK);
    for (int i = 0; sk_config_entry_at(cfg, i, &key, &value); i++)
        assert_string_equal(sk_config_get(from_text, key), value);
    free(text);
    sk_config_free(from_text);
    sk_config_free(back);
}

static void test_round_trip_every_preset_key(void **state) {
    (void)state;
    char pattern[512];
    snprintf(pattern, sizeof pattern, "ls %s/configs/*.ini", SKINNER_SOURCE_DIR);
    FILE *list = popen(pattern, "r");
    assert_non_null(list);
    char preset[1024];
    int presets = 0, checked = 0;
    char *long_a = long_value(254, 'a'), *long_b = long_value(100000, 'b');
    while (fgets(preset, sizeof preset, list)) {
        preset[strcspn(preset, "\n")] = '\0';
        sk_config *cfg = sk_config_new();
        if (sk_config_load_file(cfg, preset) != SK_OK) fail_msg("%s", sk_last_error());
        presets++;
        int keys = 0;
        const char *key, *value;
        while (sk_config_entry_at(cfg, keys, &key, &value)) keys++;
        assert_true(keys > 0);
        for (int v = 0; g_adversarial[v]; v++) {
            for (int k = 0; k < keys; k++) {
                sk_config_entry_at(cfg, k, &key, &value);
                assert_int_equal(sk_config_set(cfg, key, g_adversarial[(v + k) % NUM_ADVERSARIAL]), SK_OK);
            }
            assert_round_trip(cfg);
            checked++;
        }
        for (int k = 0; k < keys; k++) {
            sk_config_entry_at(cfg, k, &key, &value);
            assert_int_equal(sk_config_set(cfg, key, k % 2 ? long_a : long_b), SK_OK);
        }
        assert_round_trip(cfg);
        sk_config_free(cfg);
    }
    pclose(list);
    free(long_a);
    free(long_b);
    assert_true(presets >= 10);
    assert_true(checked > 0);
}

static void test_bad_keys_refused_at_set(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    const char *bad[] = {"env.a b", "env.a\tb", "env.a=b", "env.[a", "en v.a", "env.", ".a",
                         "env.a;b", "env.#a", "env.a\"", "env.a\\b", "env.a:b", "env.a\nb", NULL};
    const char *problem[] = {"space", "tab", "'='", "'['", "space", "empty", "empty", "';'",
                             "'#'", "quote", "backslash", "':'", "control", NULL};
    for (int i = 0; bad[i]; i++) {
        assert_int_equal(sk_config_set(cfg, bad[i], "1"), SK_ERR_CONFIG);
        if (!strstr(sk_last_error(), bad[i]) || !strstr(sk_last_error(), problem[i]))
            fail_msg("key '%s': message '%s' should name it and '%s'", bad[i], sk_last_error(),
                     problem[i]);
    }
    sk_config_free(cfg);
}

static void test_duplicates_name_both_lines(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    const char *path = write_file("dup.ini", "[ppo]\nhorizon = 3\ngamma = 0.9\nhorizon = 4\n");
    assert_int_equal(sk_config_load_file(cfg, path), SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), ":4:"));
    assert_non_null(strstr(sk_last_error(), "line 2"));
    assert_non_null(strstr(sk_last_error(), "ppo.horizon"));
    path = write_file("dupsec.ini", "[ppo]\nhorizon = 3\n\n[env]\nx = 1\n[ppo]\ngamma = 1\n");
    assert_int_equal(sk_config_load_file(cfg, path), SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), ":6:"));
    assert_non_null(strstr(sk_last_error(), "line 1"));
    assert_non_null(strstr(sk_last_error(), "[ppo]"));
    /* a later file overriding an earlier one is layering, not duplication */
    sk_config_free(cfg);
    cfg = sk_config_new();
    path = write_file("one.ini", "[ppo]\nhorizon = 3\n");
    assert_int_equal(sk_config_load_file(cfg, path), SK_OK);
    path = write_file("two.ini", "[ppo]\nhorizon = 5 ; inline comment\n");
    assert_int_equal(sk_config_load_file(cfg, path), SK_OK);
    assert_string_equal(sk_config_get(cfg, "ppo.horizon"), "5");
    sk_config_free(cfg);
}

static void test_only_regular_files_of_bounded_size(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_load_file(cfg, g_dir), SK_ERR_IO);
    assert_non_null(strstr(sk_last_error(), "directory"));
    assert_int_equal(sk_config_load_file(cfg, "/dev/zero"), SK_ERR_IO);
    assert_non_null(strstr(sk_last_error(), "regular file"));
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/fifo.ini", g_dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(sk_config_load_file(cfg, fifo), SK_ERR_IO); /* without a writer: no hang */
    assert_non_null(strstr(sk_last_error(), "FIFO"));
    char big[256];
    snprintf(big, sizeof big, "%s/big.ini", g_dir);
    FILE *f = fopen(big, "w");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)17 << 20), 0);
    fclose(f);
    assert_int_equal(sk_config_load_file(cfg, big), SK_ERR_CORRUPT);
    assert_non_null(strstr(sk_last_error(), "at most"));
    sk_config_free(cfg);
}

static void test_many_keys_load_in_linear_time(void **state) {
    (void)state;
    enum { KEYS = 200000 };
    char path[256];
    snprintf(path, sizeof path, "%s/many.ini", g_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[s]\n", f);
    for (int i = 0; i < KEYS; i++) fprintf(f, "k%d = %d\n", i, i);
    fclose(f);
    sk_config *cfg = sk_config_new();
    double start = sk_now();
    assert_int_equal(sk_config_load_file(cfg, path), SK_OK);
    double seconds = sk_now() - start;
    print_message("%d keys loaded in %.3f s\n", KEYS, seconds);
    assert_string_equal(sk_config_get(cfg, "s.k199999"), "199999");
    assert_true(seconds < 5.0); /* inih and a linear search took 48 s */
    sk_config_free(cfg);
}

static void test_empty_config_writes_empty_text(void **state) {
    (void)state;
    sk_config *cfg = sk_config_new();
    char *text = sk_config_to_string(cfg);
    assert_non_null(text);
    assert_string_equal(text, "");
    free(text);
    sk_config_free(cfg);
}

static void test_path_reads_become_absolute(void **state) {
    (void)state;
    char cwd[4096], want[4200];
    assert_non_null(getcwd(cwd, sizeof cwd));
    sk_config *cfg = sk_config_new();
    const char *out;
    sk_config_set(cfg, "env.dataset", "no/such/dir");
    assert_int_equal(sk_cfg_path(cfg, "env.dataset", "", &out), SK_OK);
    snprintf(want, sizeof want, "%s/no/such/dir", cwd);
    assert_string_equal(out, want);
    assert_string_equal(sk_config_get(cfg, "env.dataset"), want); /* recorded */
    assert_int_equal(chdir(g_dir), 0);
    sk_config_set(cfg, "env.dataset", "./");
    assert_int_equal(sk_cfg_path(cfg, "env.dataset", "", &out), SK_OK);
    char real[4096];
    assert_non_null(realpath(g_dir, real));
    assert_string_equal(out, real);
    assert_int_equal(chdir(cwd), 0);
    sk_config_set(cfg, "env.dataset", "/abs/x");
    assert_int_equal(sk_cfg_path(cfg, "env.dataset", "", &out), SK_OK);
    assert_string_equal(out, "/abs/x");
    assert_int_equal(sk_cfg_path(cfg, "env.other", "", &out), SK_OK);
    assert_string_equal(out, "");
    assert_int_equal(sk_cfg_check_unused(cfg, "env"), SK_OK);
    sk_config_free(cfg);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner-test-config-XXXXXX");
    if (!mkdtemp(g_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_and_override),
        cmocka_unit_test(test_syntax_errors_name_file_and_line),
        cmocka_unit_test(test_typed_reads_reject_bad_values),
        cmocka_unit_test(test_round_trip_every_preset_key),
        cmocka_unit_test(test_bad_keys_refused_at_set),
        cmocka_unit_test(test_duplicates_name_both_lines),
        cmocka_unit_test(test_only_regular_files_of_bounded_size),
        cmocka_unit_test(test_many_keys_load_in_linear_time),
        cmocka_unit_test(test_empty_config_writes_empty_text),
        cmocka_unit_test(test_path_reads_become_absolute),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0) return 1;
    return rc;
}
