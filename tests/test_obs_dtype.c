/*
 * Observations with a shape and a dtype (issue 32 ask 1), through Pixels-v0
 * (tests/plugins/pixels_plugin.c: a uint8 10x10x3 image of 0/1 cells):
 * the kit's table checks, sk_vec's byte buffers and their checks, rollout
 * storage of one byte per value, training, resuming and evaluating through
 * the CLI, and the checkpoint's recorded dtype and shape.
 */
#include <stdio.h>

#include "test_spawn.h"
#include "test_util.h"

#include "envs/registry.h"
#include "io/safetensors.h"
#include "vec/vec_internal.h"
#include "core/config.h"
#include "skinner/vec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define PIXELS_BYTES 300 /* 10 x 10 x 3 */
#define PIXELS_EPISODE 8 /* its episode length: the best return */

static const sk_env_def *pixels(void) {
    assert_int_equal(sk_env_load_plugin(PLUGIN_PIXELS), SK_OK);
    const sk_env_def *env = sk_env_find("Pixels-v0");
    assert_non_null(env);
    return env;
}

/* Runs the skinner program with args (NULL-terminated) in dir; its exit code,
 * its stdout and stderr joined into out. */
static int run_skinner(const char *dir, char *out, size_t size, const char *const *args) {
    char *argv[32] = {(char *)SKINNER_BINARY};
    int n = 1;
    for (; args[n - 1]; n++) argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    char out_path[512], err_path[512], cwd[512];
    snprintf(out_path, sizeof out_path, "%s/out.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    pid_t pid = test_spawn(argv, out_path, err_path, 240);
    int status = 0;
    waitpid(pid, &status, 0);
    assert_int_equal(chdir(cwd), 0);
    out[0] = '\0';
    const char *paths[] = {out_path, err_path};
    size_t used = 0;
    for (int p = 0; p < 2; p++) {
        FILE *f = fopen(paths[p], "r");
        if (!f) continue;
        used += fread(out + used, 1, size - 1 - used, f);
        out[used] = '\0';
        fclose(f);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *scratch_dir(void) {
    static char dir[] = "/tmp/skinner_obs_dtype_XXXXXX";
    static bool made;
    if (!made) assert_non_null(mkdtemp(dir));
    made = true;
    return dir;
}

/* The table checks: the shape's product is obs_size, a known dtype, a uint8 Box within 0..255. */
static void test_table_checks(void **unused) {
    (void)unused;
    sk_env_def def = *pixels();
    char why[512];
    assert_true(sk_env_validate(&def, why, sizeof why));
    def.obs_shape[2] = 4;
    assert_false(sk_env_validate(&def, why, sizeof why));
    assert_non_null(strstr(why, "multiply to 400 but obs_size = 300"));
    def = *pixels();
    def.obs_dtype = (sk_obs_dtype)7;
    assert_false(sk_env_validate(&def, why, sizeof why));
    assert_non_null(strstr(why, "obs_dtype = 7"));
    def = *pixels();
    def.obs_shape[1] = 0; /* a gap: {10, 0, 3} */
    assert_false(sk_env_validate(&def, why, sizeof why));
    char type[96];
    sk_env_obs_type(pixels(), type, sizeof type);
    assert_string_equal(type, "uint8 10x10x3");
    sk_env_obs_type(sk_env_find("CartPole-v1"), type, sizeof type);
    assert_string_equal(type, "float32 4");
}

/* sk_vec hands a uint8 env byte buffers (no float ones), and what the env wrote is its image. */
static void test_vec_bytes(void **unused) {
    (void)unused;
    sk_vec *vec;
    assert_int_equal(sk_vec_create(&vec, pixels(), 16, 1, NULL), SK_OK);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    assert_null(b->obs);
    assert_null(b->final_obs);
    assert_non_null(b->obs_u8);
    assert_non_null(b->final_obs_u8);
    assert_true(sk_vec_reset_checked(vec, 0, 16, 3));
    for (int i = 0; i < 16; i++) {
        int lit = 0;
        for (int k = 0; k < PIXELS_BYTES; k++) {
            assert_true(b->obs_u8[i * PIXELS_BYTES + k] <= 1);
            lit += b->obs_u8[i * PIXELS_BYTES + k];
        }
        assert_int_equal(lit, 2); /* the cell, and its half's marker */
    }
    sk_vec_destroy(vec);
}

/* An unwritten byte (the env's fault) is named by the checked reset: 0xa5 is outside 0..1. */
static void test_unwritten_byte_blamed(void **unused) {
    (void)unused;
    sk_config *cfg = sk_config_new();
    assert_int_equal(sk_config_set(cfg, "env.unwritten_byte", "7"), SK_OK);
    sk_vec *vec;
    assert_int_equal(sk_vec_create(&vec, pixels(), 4, 1, cfg), SK_OK);
    assert_false(sk_vec_reset_checked(vec, 0, 4, 1));
    assert_int_equal(sk_vec_fault(vec), SK_ERR_ENV);
    assert_non_null(strstr(sk_last_error(), "observation byte 7 of env 0 = 0xa5 was never written"));
    sk_vec_destroy(vec);
    sk_config_free(cfg);
}

/* Old checkpoints (no metadata) mean float vectors; a recorded type must match the env's. */
static void test_checkpoint_obs_type(void **unused) {
    (void)unused;
    const sk_env_def *cartpole = sk_env_find("CartPole-v1");
    assert_int_equal(sk_env_check_obs_type(cartpole, NULL, "old.safetensors"), SK_OK);
    assert_int_equal(sk_env_check_obs_type(cartpole, "float32 4", "c.safetensors"), SK_OK);
    assert_int_equal(sk_env_check_obs_type(pixels(), "uint8 10x10x3", "p.safetensors"), SK_OK);
    assert_int_equal(sk_env_check_obs_type(pixels(), NULL, "old.safetensors"), SK_ERR_INVALID);
    assert_int_equal(sk_env_check_obs_type(pixels(), "float32 10x10x3", "p.safetensors"),
                     SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "float32 10x10x3"));
    assert_non_null(strstr(sk_last_error(), "uint8 10x10x3"));
}

/* Training on Pixels-v0 through the CLI learns to read the image (a blind policy
 * returns PIXELS_EPISODE / 2 on average), resumes from its checkpoint, evaluates,
 * and refuses ppo.norm_obs. */
static void test_cli_train_eval_resume(void **unused) {
    (void)unused;
    char out[16384], spec[600];
    const char *dir = scratch_dir();
    snprintf(spec, sizeof spec, "%s:Pixels-v0", PLUGIN_PIXELS);
    const char *train[] = {"train", spec, "--total-steps", "20000", "--run-dir", "run",
                           "--threads", "2", NULL};
    assert_int_equal(run_skinner(dir, out, sizeof out, train), 0);
    const char *found = strstr(out, "final mean return ");
    assert_non_null(found);
    double final_return = atof(found + strlen("final mean return "));
    printf("Pixels-v0 after 20k steps: mean return %.3f (blind %.1f, best %d)\n", final_return,
           PIXELS_EPISODE / 2.0, PIXELS_EPISODE);
    assert_true(final_return > 6.5);

    /* the rollout keeps bytes: the checkpoint's current observations are state.obs_u8,
     * uint8, one byte per value (no float state.obs), and the type is recorded */
    char checkpoint[600];
    snprintf(checkpoint, sizeof checkpoint, "%s/run/policy.safetensors", dir);
    sk_st_file *file;
    assert_int_equal(sk_st_open(&file, checkpoint), SK_OK);
    const sk_st_tensor *stored = sk_st_find(file, "state.obs_u8");
    assert_non_null(stored);
    assert_int_equal(stored->dtype, SK_ST_U8);
    assert_int_equal(stored->shape[1], PIXELS_BYTES);
    assert_null(sk_st_find(file, "state.obs"));
    assert_string_equal(sk_st_meta_get(file, "observation"), "uint8 10x10x3");
    sk_st_close(file);

    const char *resume[] = {"train", spec, "--resume", "run", "--total-steps", "25000",
                            "--threads", "2", NULL};
    int code = run_skinner(dir, out, sizeof out, resume);
    if (code != 0) fprintf(stderr, "%s\n", out);
    assert_int_equal(code, 0);

    const char *eval[] = {"eval", spec, "--checkpoint", "run/policy.safetensors", NULL};
    code = run_skinner(dir, out, sizeof out, eval);
    if (code != 0) fprintf(stderr, "%s\n", out);
    assert_int_equal(code, 0);
    found = strstr(out, "return ");
    assert_non_null(found);
    assert_true(atof(found + strlen("return ")) > 6.5);

    const char *norm[] = {"train", spec, "--total-steps", "1000", "--run-dir", "norm",
                          "--ppo.norm_obs", "true", NULL};
    assert_int_not_equal(run_skinner(dir, out, sizeof out, norm), 0);
    assert_non_null(strstr(out, "ppo.norm_obs = true, but Pixels-v0 observes uint8 images"));

    const char *unwritten[] = {"train", spec, "--total-steps", "1000", "--run-dir", "bad",
                               "--env.unwritten_byte", "7", NULL};
    assert_int_not_equal(run_skinner(dir, out, sizeof out, unwritten), 0);
    assert_non_null(strstr(out, "observation byte 7 of env "));
    assert_non_null(strstr(out, " = 0xa5 was never written"));
}

/* `skinner check` passes Pixels-v0 and flags an unwritten byte (the canary 0xa5, outside 0..1). */
static void test_check(void **unused) {
    (void)unused;
    char out[16384], spec[600];
    snprintf(spec, sizeof spec, "%s:Pixels-v0", PLUGIN_PIXELS);
    const char *good[] = {"check", spec, NULL};
    int code = run_skinner(scratch_dir(), out, sizeof out, good);
    if (code != 0) fprintf(stderr, "%s\n", out);
    assert_int_equal(code, 0);
    assert_non_null(strstr(out, "Pixels-v0: 15 passed, 0 failed"));
    const char *bad[] = {"check", spec, "--env.unwritten_byte", "5", NULL};
    run_skinner(scratch_dir(), out, sizeof out, bad);
    assert_non_null(strstr(out, "FAIL  unwritten      env 0 at reset: obs[5] was never written"));
    assert_non_null(strstr(out, "FAIL  final_obs"));
}

/* `skinner envs` prints the dtype and shape; --json has them. */
static void test_envs_listing(void **unused) {
    (void)unused;
    char out[65536], plugin_flag[600];
    snprintf(plugin_flag, sizeof plugin_flag, "%s:Pixels-v0", PLUGIN_PIXELS);
    const char *listing[] = {"envs", NULL};
    assert_int_equal(run_skinner(scratch_dir(), out, sizeof out, listing), 0);
    const char *cartpole = strstr(out, "CartPole-v1 ");
    assert_non_null(cartpole);
    const char *json_args[] = {"envs", "--json", NULL};
    assert_int_equal(run_skinner(scratch_dir(), out, sizeof out, json_args), 0);
    assert_non_null(strstr(out, "\"obs_dtype\": \"float32\", \"obs_shape\": [4]"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_checks),
        cmocka_unit_test(test_vec_bytes),
        cmocka_unit_test(test_unwritten_byte_blamed),
        cmocka_unit_test(test_checkpoint_obs_type),
        cmocka_unit_test(test_cli_train_eval_resume),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_envs_listing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
