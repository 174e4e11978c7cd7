/*
 * Issue 36 asks 1 and 2: a policy exported as a C header and as an ONNX model acts as
 * skinner does. For each policy kind (MLP over a normalised float observation, Gaussian,
 * Gaussian clipped to its bounds (ppo.clip_actions), CNN over uint8 images, LSTM, GRU, masked
 * multi-head in both mask layouts) a policy with random weights (init, then noise, so that
 * logits are not near ties) reads 1,000 observations recorded from its env under random actions, then 200 random ones. skinner's
 * own acting path (normalise, core step, nets, greedy sample: actor.c's) is the reference:
 *   - the header, compiled with cc -Wall -Wextra -Werror -std=c99 and run by
 *     tests/export/driver.c, gives the same greedy actions on every row and the actor's
 *     outputs, value and recurrent state within 1e-5 (relative above 1);
 *   - the ONNX model passes onnx.checker.check_model (full check) and, run by ONNX Runtime
 *     (PyPI's onnx and onnxruntime in the test venv, SKINNER_TEST_PYTHON; tests/export/
 *     onnx_run.py), gives the same, the recurrent state carried over all 1,200 steps; with
 *     masks, also with one row of ones as the mask, broadcast over the batch (against
 *     skinner's unmasked greedy actions).
 * A missing compiler, test venv, onnx or onnxruntime skips that part loudly; CI=true fails.
 */
#include "test_util.h"

#include "core/core.h"
#include "export/export.h"
#include "policy/policy.h"
#include "train/eval.h"

#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define RECORDED_ROWS 1000
#define RANDOM_ROWS 200
#define ROWS (RECORDED_ROWS + RANDOM_ROWS)
#define OUTPUT_TOL 1e-5

typedef enum mask_kind { MASK_NONE, MASK_PLAIN, MASK_BY_HEAD0 } mask_kind;

typedef struct kind_case {
    const char *name;
    const char *env_id;
    const sk_core_ops *core;
    bool cnn;
    mask_kind masks;
    bool normalise;
    bool clip; /* ppo.clip_actions: the greedy mean clipped to the bounds */
} kind_case;

/* A policy of the case's kind with random weights, and its recorded rows. */
typedef struct fixture {
    sk_loaded_policy lp;
    char dir[64];
    int rows, obs_size, mask_size, state_size, action_size;
    bool bytes;
    uint8_t *obs_u8;   /* (rows, obs_size) for a uint8 env */
    float *obs;        /* (rows, obs_size) as the env wrote them (widened for a uint8 env) */
    uint8_t *start;    /* (rows) 1: an episode starts at this row */
    uint8_t *masks;    /* (rows, mask_size) or NULL */
    /* skinner's reference, per row: action, actor output, value, state after (floats) */
    float *want;
    int want_width;
    float *want_nomask_actions; /* (rows, action_size) greedy without the mask */
    int clipped_rows;           /* rows whose greedy mean was outside the bounds (clip cases) */
} fixture;

static void write_file(const char *dir, const char *name, const void *data, size_t bytes) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, bytes, f), bytes);
    assert_int_equal(fclose(f), 0);
}

static float *read_floats(const char *dir, const char *name, size_t count) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("%s was not written", path);
    float *data = malloc(count * sizeof(float) + 1);
    size_t got = fread(data, sizeof(float), count + 1, f);
    fclose(f);
    if (got != count) fail_msg("%s holds %zu floats (expected %zu)", path, got, count);
    return data;
}

/* The synthetic action spaces of the masked cases: three heads of 3, 4 and 2 choices; head 1
 * matters only when head 0 chose 0 or 1. */
static sk_action_space masked_space(mask_kind masks) {
    sk_action_space space = {.kind = SK_SPACE_DISCRETE, .num_heads = 3,
                             .head_sizes = {3, 4, 2}, .relevant_when = {0, 0x3, 0}};
    space.masks_by_head0 = masks == MASK_BY_HEAD0;
    return space;
}

/* A random mask row that leaves every block a choice. */
static void random_mask(const sk_action_space *space, uint8_t *row, int size, uint64_t *rng) {
    for (int k = 0; k < size; k++) row[k] = sk_rng_float(rng) < 0.6f;
    int at = 0;
    int blocks[1 + SK_MAX_HEADS * 64][2], count = 0; /* (offset, size) of each block */
    blocks[count][0] = 0, blocks[count++][1] = space->head_sizes[0];
    at = space->head_sizes[0];
    for (int h = 1; h < space->num_heads; h++) {
        int copies = space->masks_by_head0 ? space->head_sizes[0] : 1;
        for (int c = 0; c < copies; c++, at += space->head_sizes[h])
            blocks[count][0] = at, blocks[count++][1] = space->head_sizes[h];
    }
    assert_int_equal(at, size);
    for (int b = 0; b < count; b++) {
        bool any = false;
        for (int j = 0; j < blocks[b][1]; j++) any = any || row[blocks[b][0] + j];
        if (!any) row[blocks[b][0] + (int)sk_rng_below(rng, (uint32_t)blocks[b][1])] = 1;
    }
}

static void build_policy(fixture *fx, const kind_case *kc, const sk_env_def *env) {
    sk_loaded_policy *lp = &fx->lp;
    lp->env = env;
    lp->clip_actions = kc->clip;
    sk_action_space space = kc->masks ? masked_space(kc->masks) : env->action_space;
    if (kc->clip) { /* bounds narrower than the env's: a fresh head's means are small */
        space.low[0] = -0.1f;
        space.high[0] = 0.15f;
    }
    int mask_size = kc->masks ? sk_action_mask_size(&space) : 0;
    sk_core_spec core = {kc->core, kc->core ? 16 : 0};
    sk_cnn_spec spec = {0};
    if (kc->cnn) {
        spec = (sk_cnn_spec){.layers = 2, .height = env->obs_shape[0], .width = env->obs_shape[1],
                             .channels = env->obs_shape[2], .out_channels = {6, 8},
                             .kernel = {3, 3}, .stride = {1, 2}, .padding = {1, 0},
                             .dense = 24};
    }
    sk_status status = sk_policy_init_encoded(
        &lp->policy, env->obs_size, &space, mask_size, 32, kc->core ? 1 : 2,
        kc->cnn || kc->masks ? SK_ACTIVATION_RELU : SK_ACTIVATION_TANH, core,
        kc->cnn ? &sk_encoder_cnn : NULL, kc->cnn ? &spec : NULL);
    if (status != SK_OK) fail_msg("policy of %s: %s", kc->name, sk_last_error());
    uint64_t rng = sk_rng_seed(36, 1);
    lp->params = sk_alloc(lp->policy.num_params * sizeof(float));
    assert_non_null(lp->params);
    sk_policy_init_params(&lp->policy, lp->params, &rng);
    for (int i = 0; i < lp->policy.num_tensors; i++) { /* noise: logits far from ties */
        const sk_tensor_info *t = &lp->policy.tensors[i];
        double scale = 0.5 / sqrt((double)t->cols);
        for (size_t k = 0; k < (size_t)t->rows * (size_t)t->cols; k++)
            lp->params[t->offset + k] += (float)(scale * sk_rng_normal(&rng));
    }
    if (kc->normalise) {
        assert_int_equal(sk_norm_map_init(&lp->obs_map, env->obs_size, 5.0f), SK_OK);
        for (int k = 0; k < env->obs_size; k++) {
            lp->obs_map.shift[k] = (float)(0.3 * sk_rng_normal(&rng));
            lp->obs_map.scale[k] = (float)sk_rng_uniform(&rng, 0.5, 3.0);
        }
    }
    fx->obs_size = env->obs_size;
    fx->mask_size = mask_size;
    fx->state_size = sk_policy_state_size(&lp->policy);
    fx->action_size = space.kind == SK_SPACE_DISCRETE ? space.num_heads : space.dim;
    fx->bytes = env->obs_dtype == SK_OBS_U8;
}

/* RECORDED_ROWS observations of one env under random actions, then RANDOM_ROWS random ones. */
static void record_rows(fixture *fx, const kind_case *kc) {
    const sk_env_def *env = fx->lp.env;
    size_t O = (size_t)fx->obs_size;
    fx->rows = ROWS;
    fx->obs = calloc(ROWS * O, sizeof(float));
    fx->obs_u8 = calloc(ROWS * O, 1);
    fx->start = calloc(ROWS, 1);
    if (fx->mask_size) fx->masks = calloc(ROWS * (size_t)fx->mask_size, 1);
    sk_vec *vec;
    assert_int_equal(sk_vec_create(&vec, env, 1, 1, NULL), SK_OK);
    sk_vec_reset(vec, 7);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    uint64_t rng = sk_rng_seed(36, 2);
    bool starts = true;
    for (int r = 0; r < RECORDED_ROWS; r++) {
        fx->start[r] = starts;
        for (size_t k = 0; k < O; k++) {
            if (fx->bytes) fx->obs_u8[r * O + k] = b->obs_u8[k];
            fx->obs[r * O + k] = fx->bytes ? (float)b->obs_u8[k] : b->obs[k];
        }
        const sk_action_space *space = &env->action_space;
        if (space->kind == SK_SPACE_DISCRETE) {
            for (int h = 0; h < space->num_heads; h++)
                b->actions[h] = (int32_t)sk_rng_below(&rng, (uint32_t)space->head_sizes[h]);
        } else {
            for (int d = 0; d < space->dim; d++)
                b->actions_continuous[d] = (float)sk_rng_uniform(&rng, -2.0, 2.0);
        }
        sk_vec_step(vec);
        starts = b->terminated[0] || b->truncated[0];
    }
    sk_vec_destroy(vec);
    for (int r = RECORDED_ROWS; r < ROWS; r++) {
        fx->start[r] = r == RECORDED_ROWS;
        for (size_t k = 0; k < O; k++) {
            uint8_t byte = (uint8_t)sk_rng_below(&rng, 2);
            fx->obs_u8[r * O + k] = byte;
            fx->obs[r * O + k] = fx->bytes ? (float)byte : (float)(2.0 * sk_rng_normal(&rng));
        }
    }
    if (fx->masks) {
        sk_action_space space = masked_space(kc->masks);
        for (int r = 0; r < ROWS; r++)
            random_mask(&space, fx->masks + (size_t)r * (size_t)fx->mask_size, fx->mask_size, &rng);
    }
}

/* skinner's acting path on each row: actor.c's normalise, core step, forward and greedy
 * sample, plus the critic's value. */
static void reference(fixture *fx) {
    const sk_loaded_policy *lp = &fx->lp;
    const sk_policy *policy = &lp->policy;
    size_t O = (size_t)fx->obs_size;
    fx->want_width = fx->action_size + policy->logits_size + 1 + fx->state_size;
    fx->want = calloc((size_t)fx->rows * (size_t)fx->want_width, sizeof(float));
    fx->want_nomask_actions = calloc((size_t)fx->rows * (size_t)fx->action_size, sizeof(float));
    sk_policy_work work = {0};
    assert_int_equal(sk_policy_work_alloc(&work, policy, 1), SK_OK);
    float state[64] = {0}, x[4096];
    assert_true(fx->state_size <= 64 && O <= 4096);
    uint64_t rng = 0;
    for (int r = 0; r < fx->rows; r++) {
        memcpy(x, fx->obs + r * O, O * sizeof(float));
        if (lp->obs_map.size) sk_norm_apply(&lp->obs_map, x);
        if (fx->start[r]) memset(state, 0, sizeof state);
        if (policy->core) sk_policy_core_step(policy, lp->params, x, state, 1, &work);
        sk_policy_forward(policy, SK_NET_ACTOR, lp->params, x, 1, &work);
        sk_policy_forward(policy, SK_NET_CRITIC, lp->params, x, 1, &work);
        float *row = fx->want + (size_t)r * (size_t)fx->want_width;
        int32_t actions[SK_MAX_HEADS];
        float continuous[SK_MAX_ACTION_DIM], logp;
        const uint8_t *mask = fx->masks ? fx->masks + (size_t)r * (size_t)fx->mask_size : NULL;
        for (int pass = 0; pass < 2; pass++) {
            sk_policy_sample(policy, lp->params, work.out[SK_NET_ACTOR], pass ? NULL : mask, 1,
                             &rng, true, actions, continuous, &logp);
            if (policy->space.kind == SK_SPACE_CONTINUOUS) {
                float mean[SK_MAX_ACTION_DIM];
                memcpy(mean, continuous, sizeof mean);
                sk_loaded_policy_env_actions(lp, continuous, 1);
                if (!pass && memcmp(mean, continuous, sizeof mean) != 0) fx->clipped_rows++;
            }
            float *to = pass ? fx->want_nomask_actions + (size_t)r * (size_t)fx->action_size : row;
            for (int k = 0; k < fx->action_size; k++)
                to[k] = policy->space.kind == SK_SPACE_DISCRETE ? (float)actions[k] : continuous[k];
        }
        memcpy(row + fx->action_size, work.out[SK_NET_ACTOR],
               (size_t)policy->logits_size * sizeof(float));
        row[fx->action_size + policy->logits_size] = work.out[SK_NET_CRITIC][0];
        memcpy(row + fx->action_size + policy->logits_size + 1, state,
               (size_t)fx->state_size * sizeof(float));
    }
    sk_policy_work_free(&work);
}

static void write_rows(const fixture *fx) {
    size_t O = (size_t)fx->obs_size, rows = (size_t)fx->rows;
    if (fx->bytes) write_file(fx->dir, "obs.bin", fx->obs_u8, rows * O);
    else write_file(fx->dir, "obs.bin", fx->obs, rows * O * sizeof(float));
    write_file(fx->dir, "start.bin", fx->start, rows);
    if (fx->masks) write_file(fx->dir, "mask.bin", fx->masks, rows * (size_t)fx->mask_size);
}

/* Compares got (rows, want_width) with the reference: actions equal, the rest within tol. */
static void compare(const fixture *fx, const char *what, const float *got) {
    int action_mismatches = 0, value_mismatches = 0;
    double max_diff = 0.0;
    for (int r = 0; r < fx->rows; r++)
        for (int k = 0; k < fx->want_width; k++) {
            float g = got[(size_t)r * (size_t)fx->want_width + k];
            float w = fx->want[(size_t)r * (size_t)fx->want_width + k];
            if (k < fx->action_size && fx->lp.policy.space.kind == SK_SPACE_DISCRETE) {
                if (g != w && action_mismatches++ < 5)
                    print_error("%s: row %d head %d: action %g, skinner's %g\n", what, r, k,
                                (double)g, (double)w);
                continue;
            }
            double diff = fabs((double)g - (double)w) / fmax(1.0, fabs((double)w));
            max_diff = fmax(max_diff, diff);
            if (!(diff <= OUTPUT_TOL) && value_mismatches++ < 5)
                print_error("%s: row %d value %d: %.9g, skinner's %.9g\n", what, r, k, (double)g,
                            (double)w);
        }
    print_message("%s: %d rows, %d action mismatches, largest output difference %.3g\n", what,
                  fx->rows, action_mismatches, max_diff);
    assert_int_equal(action_mismatches, 0);
    assert_int_equal(value_mismatches, 0);
}

static bool have_program(const char *name) {
    char command[256];
    snprintf(command, sizeof command, "command -v %s >/dev/null 2>&1", name);
    return system(command) == 0;
}

static void check_c_header(fixture *fx, const kind_case *kc) {
    if (!have_program("cc")) {
        TEST_SKIP_PART("C header", "no C compiler (cc) on PATH");
        return;
    }
    char header[128], command[1024];
    snprintf(header, sizeof header, "%s/policy.h", fx->dir);
    if (sk_export_c_header(&fx->lp, header, kc->name) != SK_OK)
        fail_msg("export of %s: %s", kc->name, sk_last_error());
    snprintf(command, sizeof command,
             "cc -Wall -Wextra -Werror -std=c99 -O2 -I %s %s/tests/export/driver.c -o %s/driver "
             "-lm && %s/driver %s",
             fx->dir, SKINNER_SOURCE_DIR, fx->dir, fx->dir, fx->dir);
    if (system(command) != 0) fail_msg("%s: '%s' failed", kc->name, command);
    float *got = read_floats(fx->dir, "out.bin", (size_t)fx->rows * (size_t)fx->want_width);
    char what[96];
    snprintf(what, sizeof what, "%s, C header", kc->name);
    compare(fx, what, got);
    free(got);
}

/* The Python of the ONNX checks: the test venv (tests/CMakeLists.txt, SKINNER_TEST_PYTHON),
 * or NULL when it is not made yet (scripts/setup.sh --test makes it). */
static const char *test_python(void) {
    struct stat info;
    return stat(SKINNER_TEST_PYTHON, &info) == 0 ? SKINNER_TEST_PYTHON : NULL;
}

/* onnx_run.py's exit code for a missing onnx or onnxruntime */
#define ONNX_RUN_MISSING_PACKAGE 3

static void check_onnx(fixture *fx, const kind_case *kc) {
    char model[128], command[8192];
    snprintf(model, sizeof model, "%s/policy.onnx", fx->dir);
    if (sk_export_onnx(&fx->lp, model) != SK_OK)
        fail_msg("ONNX export of %s: %s", kc->name, sk_last_error());
    const char *python = test_python();
    if (!python) {
        TEST_SKIP_PART("ONNX Runtime", "no test venv at %s (scripts/setup.sh --test makes it)",
                       SKINNER_TEST_PYTHON);
        return;
    }
    const sk_policy *policy = &fx->lp.policy;
    int heads = policy->space.kind == SK_SPACE_DISCRETE ? policy->space.num_heads
                                                        : -policy->space.dim;
    snprintf(command, sizeof command, "%s %s/tests/export/onnx_run.py %s %s %s %d %d %d %d",
             python, SKINNER_SOURCE_DIR, model, fx->dir, fx->bytes ? "uint8" : "float32",
             fx->obs_size, fx->mask_size, fx->state_size, heads);
    int status = system(command);
    if (WIFEXITED(status) && WEXITSTATUS(status) == ONNX_RUN_MISSING_PACKAGE) {
        TEST_SKIP_PART("ONNX Runtime", "the test venv lacks onnx or onnxruntime (scripts/setup.sh "
                                       "--test installs python/requirements-test.txt)");
        return;
    }
    if (status != 0) fail_msg("%s: '%s' failed (onnx's checker or ONNX Runtime)", kc->name, command);
    float *got = read_floats(fx->dir, "onnx_out.bin", (size_t)fx->rows * (size_t)fx->want_width);
    char what[96];
    snprintf(what, sizeof what, "%s, ONNX Runtime", kc->name);
    compare(fx, what, got);
    if (fx->masks) { /* one row of ones as the mask: every action allowed */
        float *nomask =
            read_floats(fx->dir, "onnx_nomask.bin", (size_t)fx->rows * (size_t)fx->want_width);
        int mismatches = 0;
        for (int r = 0; r < fx->rows; r++)
            for (int k = 0; k < fx->action_size; k++)
                mismatches += nomask[(size_t)r * (size_t)fx->want_width + k] !=
                              fx->want_nomask_actions[(size_t)r * (size_t)fx->action_size + k];
        print_message("%s with a mask of ones: %d action mismatches\n", kc->name, mismatches);
        assert_int_equal(mismatches, 0);
        free(nomask);
    }
    free(got);
}

static void fixture_free(fixture *fx) {
    sk_free(fx->lp.params);
    if (fx->lp.obs_map.size) sk_norm_map_free(&fx->lp.obs_map);
    free(fx->obs);
    free(fx->obs_u8);
    free(fx->start);
    free(fx->masks);
    free(fx->want);
    free(fx->want_nomask_actions);
    char command[128];
    snprintf(command, sizeof command, "rm -rf %s", fx->dir);
    if (!getenv("SKINNER_KEEP_EXPORT") && system(command) != 0) print_error("cannot remove %s\n", fx->dir);
}

static void run_case(const kind_case *kc) {
    const sk_env_def *env = sk_env_find(kc->env_id);
    if (!env) {
        TEST_SKIP("%s is not registered (%s)", kc->env_id, sk_last_error());
        return;
    }
    fixture fx = {0};
    snprintf(fx.dir, sizeof fx.dir, "/tmp/skinner-export-XXXXXX");
    assert_non_null(mkdtemp(fx.dir));
    build_policy(&fx, kc, env);
    record_rows(&fx, kc);
    reference(&fx);
    if (kc->clip) { /* else the case would not tell a clipping export from one that is not */
        print_message("%s: %d of %d rows' means outside the bounds\n", kc->name, fx.clipped_rows,
                      fx.rows);
        assert_true(fx.clipped_rows > 0 && fx.clipped_rows < fx.rows);
    }
    write_rows(&fx);
    check_c_header(&fx, kc);
    check_onnx(&fx, kc);
    fixture_free(&fx);
}

static void test_mlp(void **state) {
    (void)state;
    run_case(&(kind_case){"mlp", "CartPole-v1", NULL, false, MASK_NONE, true, false});
}
static void test_gaussian(void **state) {
    (void)state;
    run_case(&(kind_case){"gaussian", "Pendulum-v1", NULL, false, MASK_NONE, true, false});
}
static void test_gaussian_clipped(void **state) {
    (void)state;
    run_case(&(kind_case){"gaussian, clipped", "MountainCarContinuous-v0", NULL, false, MASK_NONE,
                          true, true});
}
static void test_cnn(void **state) {
    (void)state;
    run_case(&(kind_case){"cnn", "MinAtar/Breakout-v1", NULL, true, MASK_NONE, false, false});
}
static void test_lstm(void **state) {
    (void)state;
    run_case(&(kind_case){"lstm", "CartPole-v1", &sk_core_lstm, false, MASK_NONE, true, false});
}
static void test_gru(void **state) {
    (void)state;
    run_case(&(kind_case){"gru", "Acrobot-v1", &sk_core_gru, false, MASK_NONE, false, false});
}
static void test_cnn_lstm(void **state) {
    (void)state;
    run_case(&(kind_case){"cnn_lstm", "MinAtar/Breakout-v1", &sk_core_lstm, true, MASK_NONE, false, false});
}
static void test_masked_multihead(void **state) {
    (void)state;
    run_case(&(kind_case){"masked_multihead", "CartPole-v1", NULL, false, MASK_PLAIN, true, false});
}
static void test_masked_by_head0(void **state) {
    (void)state;
    run_case(&(kind_case){"masked_by_head0", "CartPole-v1", &sk_core_gru, false, MASK_BY_HEAD0,
                          false, false});
}

/* docs/export.md's shell blocks, read at test time and run verbatim, in order, with the
 * build's skinner first on PATH: they train CartPole-v1, export runs/cp as policy.onnx and
 * policy.h and record a GIF and an MP4; then its Python blocks, in order, with the test venv's
 * Python: the first writes the exports again from the loaded policy, the next runs policy.onnx
 * with onnxruntime. The header's greedy actions then equal the loaded agent's (sk_agent_act) on
 * 500 observations of CartPole-v1, and the model passes onnx's checker. */
static void test_docs_commands(void **state) {
    (void)state;
    char doc[4096], dir[64] = "/tmp/skinner-export-docs-XXXXXX", command[8192];
    snprintf(doc, sizeof doc, "%s/docs/export.md", SKINNER_SOURCE_DIR);
    FILE *f = fopen(doc, "r");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    /* every shell block, in the page's order, into one script; the Python blocks kept aside */
    enum { MAX_PYTHON_BLOCKS = 4 };
    static char shell[16384];
    char *python_blocks[MAX_PYTHON_BLOCKS];
    int num_python = 0;
    size_t used = 0;
    for (char *at = text; (at = strstr(at, "```")) != NULL;) {
        bool sh = strncmp(at, "```sh\n", 6) == 0, py = strncmp(at, "```python\n", 10) == 0;
        char *body = strchr(at, '\n') + 1, *end = strstr(body, "```");
        assert_non_null(end);
        if (sh) {
            assert_true(used + (size_t)(end - body) < sizeof shell);
            memcpy(shell + used, body, (size_t)(end - body));
            used += (size_t)(end - body);
        }
        if (py) {
            assert_true(num_python < MAX_PYTHON_BLOCKS);
            python_blocks[num_python++] = body;
        }
        at = end + 3;
        *end = 0; /* a Python block ends here (the scan went past it) */
    }
    shell[used] = 0;
    assert_true(used > 0);
    assert_true(num_python >= 2); /* the exports from Python, and ONNX Runtime on them */
    assert_non_null(mkdtemp(dir));
    char script[128];
    snprintf(script, sizeof script, "%s/commands.sh", dir);
    write_file(dir, "commands.sh", shell, used);
    char program_dir[4096];
    snprintf(program_dir, sizeof program_dir, "%s", SKINNER_BINARY);
    *strrchr(program_dir, '/') = 0;
    snprintf(command, sizeof command, "cd %s && PATH=%s:$PATH bash -e %s", dir, program_dir, script);
    if (system(command) != 0) fail_msg("docs/export.md's commands failed: %s", command);
    /* then its Python blocks: the first writes the same two files again from the loaded
     * policy, the next runs the model */
    struct stat info;
    char module_dir[4200];
    snprintf(module_dir, sizeof module_dir, "%s/python/skinner", SKINNER_BUILD_DIR);
    const char *python = test_python();
    if (python && stat(module_dir, &info) == 0) {
        snprintf(command, sizeof command, "cd %s && rm policy.onnx policy.h", dir);
        assert_int_equal(system(command), 0);
        for (int k = 0; k < num_python; k++) {
            char name[32];
            snprintf(name, sizeof name, "block%d.py", k);
            write_file(dir, name, python_blocks[k], strlen(python_blocks[k]));
            snprintf(command, sizeof command,
                     "cd %s && PYTHONPATH=%s/python %s %s && test -s policy.onnx && test -s policy.h",
                     dir, SKINNER_BUILD_DIR, python, name);
            if (system(command) != 0)
                fail_msg("docs/export.md's Python block %d failed: %s", k + 1, command);
        }
    } else {
#ifdef SKINNER_NO_PYTHON_BY_DESIGN /* a sanitizer or fuzzing build: not a missing requirement */
        print_message("docs/export.md's Python blocks left out: %s\n", SKINNER_NO_PYTHON_BY_DESIGN);
#else
        TEST_SKIP_PART("Python blocks", "no Python module in %s or no test venv at %s "
                       "(scripts/setup.sh --test)", module_dir, SKINNER_TEST_PYTHON);
#endif
    }
    char path[256];
    const char *videos[2] = {"cartpole.gif", "cartpole.mp4"};
    for (int v = 0; v < 2; v++) {
        snprintf(path, sizeof path, "%s/%s", dir, videos[v]);
        assert_int_equal(stat(path, &info), 0);
        assert_true(info.st_size > 1000);
    }

    snprintf(path, sizeof path, "%s/runs/cp/policy.safetensors", dir);
    sk_agent *agent;
    if (sk_agent_load(&agent, path, NULL) != SK_OK) fail_msg("%s", sk_last_error());
    enum { DOC_ROWS = 500 };
    float *obs = calloc(DOC_ROWS * 4, sizeof(float));
    uint8_t *starts = calloc(DOC_ROWS, 1);
    int32_t *want = calloc(DOC_ROWS, sizeof(int32_t));
    sk_vec *vec;
    assert_int_equal(sk_vec_create(&vec, sk_env_find("CartPole-v1"), 1, 1, NULL), SK_OK);
    sk_vec_reset(vec, 11);
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    for (int r = 0; r < DOC_ROWS; r++) {
        memcpy(obs + 4 * r, b->obs, 4 * sizeof(float));
        assert_int_equal(sk_agent_act(agent, b->obs, NULL, 1, true, b->actions, NULL), SK_OK);
        want[r] = b->actions[0];
        sk_vec_step(vec);
    }
    sk_vec_destroy(vec);
    sk_agent_free(agent);
    write_file(dir, "obs.bin", obs, DOC_ROWS * 4 * sizeof(float));
    write_file(dir, "start.bin", starts, DOC_ROWS);
    snprintf(command, sizeof command,
             "cc -Wall -Wextra -Werror -std=c99 -O2 -I %s %s/tests/export/driver.c -o %s/driver "
             "-lm && %s/driver %s",
             dir, SKINNER_SOURCE_DIR, dir, dir, dir);
    if (system(command) != 0) fail_msg("'%s' failed", command);
    const int width = 1 + 2 + 1; /* action, two logits, value */
    float *got = read_floats(dir, "out.bin", (size_t)DOC_ROWS * width);
    int mismatches = 0;
    for (int r = 0; r < DOC_ROWS; r++) mismatches += (int)got[r * width] != want[r];
    print_message("docs/export.md's policy.h: %d of %d greedy actions differ from the agent's\n",
                  mismatches, DOC_ROWS);
    assert_int_equal(mismatches, 0);
    if (python) {
        snprintf(command, sizeof command,
                 "%s -c 'import onnx, sys; "
                 "onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' "
                 "%s/policy.onnx", python, dir);
        assert_int_equal(system(command), 0);
    }
    free(got);
    free(obs);
    free(starts);
    free(want);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    if (system(command) != 0) print_error("cannot remove %s\n", dir);
}

/* `skinner export`'s failures: usage errors exit 2 saying what was expected, a checkpoint that
 * cannot be read exits 1 naming it. */
static void expect_export(const char *args, int want_code, const char *want_text) {
    char command[4400], output[4096] = "";
    snprintf(command, sizeof command, "%s export %s 2>&1", SKINNER_BINARY, args);
    FILE *pipe = popen(command, "r");
    assert_non_null(pipe);
    size_t n = fread(output, 1, sizeof output - 1, pipe);
    output[n] = 0;
    int status = pclose(pipe);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code != want_code || !strstr(output, want_text))
        fail_msg("skinner export %s: exit %d (expected %d), output without '%s':\n%s", args,
                 code, want_code, want_text, output);
}

static void test_cli_errors(void **state) {
    (void)state;
    expect_export("", 2, "expected a CHECKPOINT and --onnx FILE or --c FILE");
    expect_export("runs/x", 2, "expected a CHECKPOINT and --onnx FILE or --c FILE");
    expect_export("runs/x --c", 2, "--c needs a file name");
    expect_export("runs/x --png out.png", 2, "unknown option '--png'");
    expect_export("a b --c x.h", 2, "one CHECKPOINT only");
    expect_export("/nonexistent/policy.safetensors --c /tmp/x.h", 1,
                  "/nonexistent/policy.safetensors");
    expect_export("--help", 0, "usage: skinner export CHECKPOINT");
}

/* The candidates kind reads indices, not numbers: both exports refuse it, naming why. */
static void test_refuses_candidates(void **state) {
    (void)state;
    sk_loaded_policy lp = {0};
    lp.policy.kind = &sk_kind_candidates;
    assert_int_equal(sk_export_c_header(&lp, "/nonexistent/policy.h", NULL), SK_ERR_INVALID);
    assert_non_null(strstr(sk_last_error(), "candidates"));
    assert_int_equal(sk_export_onnx(&lp, "/nonexistent/policy.onnx"), SK_ERR_INVALID);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlp),
        cmocka_unit_test(test_gaussian),
        cmocka_unit_test(test_gaussian_clipped),
        cmocka_unit_test(test_cnn),
        cmocka_unit_test(test_lstm),
        cmocka_unit_test(test_gru),
        cmocka_unit_test(test_cnn_lstm),
        cmocka_unit_test(test_masked_multihead),
        cmocka_unit_test(test_masked_by_head0),
        cmocka_unit_test(test_refuses_candidates),
        cmocka_unit_test(test_docs_commands),
        cmocka_unit_test(test_cli_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
