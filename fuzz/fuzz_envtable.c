/*
 * Env tables and what a plugin writes (issue 30): an sk_env_def built from the
 * input (sizes, spaces, masks, Box bounds, the head-0 prior, extras, state
 * arrays), checked by sk_env_validate; an accepted one is created as a vec of
 * a stub env whose reset and step write what the rest of the input says (NaN,
 * infinities, unwritten values, out-of-Box values, masks with nothing allowed,
 * ended episodes with bad final observations), stepped with training's checks,
 * its actions checked and sampled, its state arrays listed and checked. Any
 * crash, sanitizer report or assert is a finding; refusals are expected.
 */
#include "fuzz_util.h"

#include "envs/registry.h"
#include "policy/policy.h"
#include "vec/vec_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* Buffers past this many bytes per vec are not created (the fuzzer's memory
 * limit); the table is still validated. */
#define MAX_VEC_BYTES (1u << 22)
#define MAX_ENVS 8
#define MAX_STEPS 6

typedef struct input {
    const uint8_t *data;
    size_t size, pos;
} input;

static uint8_t take_u8(input *in) { return in->pos < in->size ? in->data[in->pos++] : 0; }

static uint32_t take_u32(input *in) {
    uint32_t value = 0;
    for (int b = 0; b < 4; b++) value |= (uint32_t)take_u8(in) << (8 * b);
    return value;
}

/* A float that is often a special one: NaN, +-inf, the canary's bits, 0.5, huge. */
static float take_float(input *in) {
    static const uint32_t specials[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x7fc0ca9eu,
                                        0x3f000000u, 0x7f7fffffu, 0xbf800000u, 0x00000000u};
    uint8_t pick = take_u8(in);
    uint32_t bits = pick < 128 ? specials[pick % 8] : take_u32(in);
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* A size that is often at an edge: 0, 1, 2, 3, 7, 65536, INT_MAX, -1. */
static int take_size(input *in) {
    static const int edges[] = {0, 1, 2, 3, 7, 65536, INT_MAX, -1};
    uint8_t pick = take_u8(in);
    return pick < 200 ? edges[pick % 8] : (int)take_u32(in);
}

/* ------------------------------------------------------------ the stub env */

/* What every stub env reads its outputs from: the rest of the input. */
static input g_script;

typedef struct stub_state {
    int num_envs;
    int32_t *elapsed; /* (num_envs) */
    double *extra[4]; /* (num_envs) each: arrays listed by state_arrays */
} stub_state;

static const sk_env_def *g_def; /* the table being fuzzed */

static sk_status stub_create(void **out, int num_envs, const sk_config *cfg) {
    (void)cfg;
    stub_state *s = sk_alloc(sizeof *s);
    if (!s) return sk_fail(SK_ERR_NOMEM, "stub: out of memory");
    s->num_envs = num_envs;
    s->elapsed = sk_alloc((size_t)num_envs * sizeof(int32_t));
    for (int a = 0; a < 4; a++) s->extra[a] = sk_alloc((size_t)num_envs * sizeof(double));
    *out = s;
    return SK_OK;
}

static void stub_destroy(void *state) {
    stub_state *s = state;
    sk_free(s->elapsed);
    for (int a = 0; a < 4; a++) sk_free(s->extra[a]);
    sk_free(s);
}

/* Env i's outputs: each observation value written (from the script) or left
 * as it was, masks from the script, a reward. */
static void write_outputs(const sk_env_io *io, int i, bool step) {
    const sk_env_def *def = g_def;
    size_t O = (size_t)def->obs_size, M = (size_t)def->mask_size;
    uint8_t skip = take_u8(&g_script); /* bit 0: leave the last value unwritten */
    for (size_t k = 0; k < O; k++)
        if (!((skip & 1) && k + 1 == O)) io->obs[(size_t)i * O + k] = take_float(&g_script);
    for (size_t k = 0; k < M; k++) io->masks[(size_t)i * M + k] = take_u8(&g_script) & 1;
    if (!step) return;
    io->rewards[i] = take_float(&g_script);
    uint8_t flags = take_u8(&g_script);
    io->terminated[i] = flags & 1;
    io->truncated[i] = (flags >> 1) & 1;
    if (flags & 3) {
        for (size_t k = 0; k < O; k++) io->final_obs[(size_t)i * O + k] = take_float(&g_script);
        for (int f = 0; f < def->num_log_fields; f++)
            io->episode_log[(size_t)i * (size_t)def->num_log_fields + (size_t)f] =
                take_float(&g_script);
    }
}

static void stub_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    (void)seed;
    stub_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->elapsed[i] = 0;
        write_outputs(io, i, false);
    }
}

static void stub_step(void *state, const sk_env_io *io, int lo, int hi) {
    stub_state *s = state;
    for (int i = lo; i < hi; i++) {
        s->elapsed[i]++;
        write_outputs(io, i, true);
    }
}

/* A count from the script (-1..20), each array of a type from the script
 * (0..8, past the last sk_array_type too), within the 2 x SK_MAX_ENV_ARRAYS
 * entries sk_vec_state_arrays gives room for. */
static int stub_state_arrays(void *state, sk_env_array *arrays) {
    stub_state *s = state;
    int count = (int)(take_u8(&g_script) % 22) - 1;
    for (int a = 0; a < count; a++) {
        uint8_t type = take_u8(&g_script) % 9;
        bool i32 = type == SK_ARRAY_I32;
        arrays[a] = (sk_env_array){
            .name = a % 2 ? "elapsed" : "extra",
            .type = (sk_array_type)(type == SK_ARRAY_F64 || i32 ? type
                                                                : (type > 5 ? type : SK_ARRAY_F64)),
            .count = take_u8(&g_script) % 4 == 0 ? 0 : 1,
            .data = i32 ? (void *)s->elapsed : (void *)s->extra[a % 4],
            .has_range = take_u8(&g_script) & 1,
            .lo = 0.0,
            .hi = 10.0,
        };
    }
    return count;
}

static sk_status stub_run(const sk_env_def *env, const sk_config *env_cfg, const sk_config *options,
                          const sk_actor *actor, const sk_parallel *parallel,
                          sk_progress_fn progress, void *progress_user, sk_env_report *out) {
    (void)env, (void)env_cfg, (void)options, (void)actor, (void)parallel, (void)progress;
    (void)progress_user, (void)out;
    return SK_OK;
}

static void stub_heuristic(const void *state, int lo, int hi, int32_t *actions) {
    (void)state, (void)lo, (void)hi, (void)actions;
}

/* ------------------------------------------------------------ the table */

static const char *const g_names_two[] = {"left", "right", NULL};
static const char *const g_names_empty[] = {"", NULL};
static const char *const g_names_none[] = {NULL};
static const sk_env_evaluation g_eval_good = {.name = "ranking", .run = stub_run};
static const sk_env_evaluation g_eval_no_run = {.name = "ranking", .run = NULL};
static const sk_env_evaluation g_eval_no_name = {.name = NULL, .run = stub_run};

static void build_table(input *in, sk_env_def *def, sk_env_extras *extras, float *low,
                        float *high) {
    memset(def, 0, sizeof *def);
    def->id = "Fuzz-v0";
    def->obs_size = take_u8(in) % 70 - 2; /* -2..67 */
    sk_action_space *space = &def->action_space;
    uint8_t kind = take_u8(in);
    space->kind = kind < 120   ? SK_SPACE_DISCRETE
                  : kind < 250 ? SK_SPACE_CONTINUOUS
                               : (sk_space_kind)kind;
    space->num_heads = take_u8(in) % 11 - 1;
    for (int h = 0; h < SK_MAX_HEADS; h++) {
        space->head_sizes[h] = take_size(in);
        space->relevant_when[h] =
            take_u8(in) < 200 ? 0 : ((uint64_t)take_u32(in) << 32 | take_u32(in));
    }
    space->masks_by_head0 = take_u8(in) & 1;
    for (int k = 0; k < SK_MAX_HEAD0_PRIOR; k++)
        space->head0_prior[k] = take_u8(in) < 200 ? 0.0f : take_float(in);
    space->dim = take_u8(in) % 19 - 1;
    for (int d = 0; d < SK_MAX_ACTION_DIM; d++) {
        space->low[d] = take_u8(in) < 200 ? -1.0f : take_float(in);
        space->high[d] = take_u8(in) < 200 ? 1.0f : take_float(in);
    }
    uint8_t masks = take_u8(in) % 4;
    int expected = sk_action_mask_size(space);
    int one_more = expected < INT_MAX ? expected + 1 : 0; /* a size the layout does not have */
    def->mask_size = masks == 0 ? 0 : masks == 1 ? expected : masks == 2 ? take_size(in) : one_more;
    def->max_episode_steps = take_size(in);
    def->solved_threshold = take_u8(in) < 200 ? NAN : (double)take_float(in);
    def->num_log_fields = take_u8(in) % 11 - 1;
    static const char *const log_names[SK_MAX_LOG_FIELDS] = {
        "episode_return", "episode_length", "a", "b", "c", "d", "e", "f"};
    for (int k = 0; k < SK_MAX_LOG_FIELDS; k++)
        def->log_names[k] = take_u8(in) < 250 ? log_names[k] : "";
    uint8_t functions = take_u8(in); /* a set bit below 5 leaves that function NULL (rarely) */
    bool drop = functions >= 250;
    def->create = drop && (functions & 1) ? NULL : stub_create;
    def->destroy = stub_destroy;
    def->reset = drop && (functions & 2) ? NULL : stub_reset;
    def->step = drop && (functions & 4) ? NULL : stub_step;
    def->state_arrays = drop && (functions & 8) ? NULL : stub_state_arrays;
    uint8_t box = take_u8(in) % 4; /* none, both, low only, high only */
    int box_size = def->obs_size > 0 ? def->obs_size : 0;
    for (int k = 0; k < box_size; k++) {
        low[k] = take_u8(in) < 128 ? -1.0f : take_float(in);
        high[k] = take_u8(in) < 128 ? 1.0f : take_float(in);
    }
    def->obs_low = box == 1 || box == 2 ? low : NULL;
    def->obs_high = box == 1 || box == 3 ? high : NULL;
    uint8_t extra = take_u8(in);
    if (extra < 100) return;
    memset(extras, 0, sizeof *extras);
    static const char *const presets[] = {NULL, "cartpole", "", "../x", "a/b"};
    extras->preset = presets[take_u8(in) % 5];
    extras->bench_num_envs = take_u8(in) < 200 ? 0 : (int)take_u32(in);
    const char *const *const names[] = {NULL, g_names_two, g_names_empty, g_names_none};
    extras->action_names = names[take_u8(in) % 4];
    const sk_env_evaluation *const evaluations[] = {NULL, &g_eval_good, &g_eval_no_run,
                                                    &g_eval_no_name};
    extras->evaluation = evaluations[take_u8(in) % 4];
    extras->heuristic = take_u8(in) & 1 ? stub_heuristic : NULL;
    def->extras = extras;
}

/* Whether the vec's buffers stay under MAX_VEC_BYTES (in 64 bits: sizes were validated to fit an
 * int). */
static bool small_enough(const sk_env_def *def, int num_envs) {
    int64_t per_env = (int64_t)def->obs_size * 8 + def->mask_size +
                      def->action_space.num_heads * 4 + def->num_log_fields * 4 + 16;
    int64_t logits = 0;
    for (int h = 0; def->action_space.kind == SK_SPACE_DISCRETE && h < def->action_space.num_heads;
         h++)
        logits += def->action_space.head_sizes[h];
    return per_env * num_envs <= MAX_VEC_BYTES && logits * 4 <= MAX_VEC_BYTES;
}

/* Samples an action for each env from zero logits under its mask: whatever the
 * mask, a valid index per head (NaN log-probabilities are fine). */
static void sample_each(sk_vec *vec) {
    const sk_env_def *def = sk_vec_env(vec);
    const sk_action_space *space = &def->action_space;
    if (space->kind != SK_SPACE_DISCRETE) return;
    size_t logits_size = 0;
    for (int h = 0; h < space->num_heads; h++) logits_size += (size_t)space->head_sizes[h];
    float *logits = sk_alloc(logits_size * sizeof(float));
    if (!logits) return;
    const sk_vec_buffers *b = sk_vec_buffers_of(vec);
    uint64_t rng = 1;
    for (int i = 0; i < sk_vec_num_envs(vec); i++) {
        const uint8_t *mask = def->mask_size ? b->masks + (size_t)i * (size_t)def->mask_size : NULL;
        int32_t *row = b->actions + (size_t)i * (size_t)space->num_heads;
        float logp;
        sk_categorical_sample(space, logits, mask, 1, &rng, i % 2, row, &logp);
        for (int h = 0; h < space->num_heads; h++)
            if (row[h] < 0 || row[h] >= space->head_sizes[h]) abort();
    }
    sk_free(logits);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    input in = {data, size, 0};
    static sk_env_def def;
    static sk_env_extras extras;
    static float low[128], high[128];
    build_table(&in, &def, &extras, low, high);
    char why[512];
    if (!sk_env_validate(&def, why, sizeof why)) return 0;
    int num_envs = 1 + take_u8(&in) % MAX_ENVS, steps = take_u8(&in) % (MAX_STEPS + 1);
    if (!small_enough(&def, num_envs)) return 0;
    g_def = &def;
    g_script = (input){data, size, in.pos};
    sk_vec *vec = NULL;
    if (sk_vec_create(&vec, &def, num_envs, 1, NULL) != SK_OK) return 0;
    sk_vec_reset_checked(vec, 0, num_envs, 1);
    sk_vec_fault(vec);
    for (int t = 1; t <= steps; t++) {
        sample_each(vec);
        sk_vec_check_actions(vec, 0, num_envs, "the fuzzer");
        sk_vec_step_checked(vec, 0, num_envs, t);
        sk_vec_fault(vec);
    }
    sk_env_array arrays[SK_MAX_ENV_ARRAYS];
    sk_vec_state_arrays(vec, arrays);
    sk_vec_check_state(vec, "fuzz");
    sk_vec_destroy(vec);
    return 0;
}
