/*
 * skinner's MuJoCo model files (modules/mujoco/models) against Gymnasium's (issue 50 ask 2).
 *
 * Each of our files is compiled beside Gymnasium's file of the same name, read from
 * ../shared/reference/mujoco/assets (never copied into the project), by the same libmujoco,
 * and the two mjModels are compared field by field:
 *   - every size of MJMODEL_INTS (nq, nv, nbody, ..., narena);
 *   - every array of MJMODEL_POINTERS (mjxmacro.h), element by element, bit for bit: ints,
 *     floats, doubles, bytes and characters (the names buffer among them, so every body,
 *     joint, geom, site and actuator carries Gymnasium's name at Gymnasium's index);
 *   - mjOption (MJOPTION_SCALARS, MJOPTION_VECTORS), mjVisual word by word, mjStatistic.
 * A difference prints the field, its first differing index (row and column) and both values.
 * A difference is allowed only when KNOWN_DIFFERENCES names it with a reason (none does today:
 * the files compile to Gymnasium's mjModel exactly); an entry that no longer matches a
 * difference fails the test too, so the table cannot go stale (test_allowance_table).
 *
 * The comparison must be able to fail: test_perturbations compiles edited copies of our files
 * (an explicit mass in the XML text, a length one ulp off, the timestep, a visual setting, a
 * body's name; v4's models against v5's) and requires each edit to be reported in the field
 * it changes. test_gymnasium_twice is the control in the other direction: Gymnasium's file
 * compiled twice shows no difference (the compiler is deterministic here, random textures
 * included), so a reported difference is the files'. test_same_trajectories steps each pair
 * with the same controls and finds the states equal bit for bit, while v4's walker against
 * v5's parts within 55 steps.
 *
 * Without ../shared (SKINNER_SHARED_DIR) the comparison cases skip, loudly (fail under
 * CI=true); test_ours_compile still checks that our files load.
 */
#include "test_util.h"

#include <mujoco/mujoco.h>
#include <mujoco/mjxmacro.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERROR_SIZE 1024
#define MAX_REPORTED 64

/* Our files, each compiled beside Gymnasium's file of the same name. */
static const char *const MODEL_FILES[] = {
    "half_cheetah.xml",      "hopper.xml",   "walker2d.xml",
    "walker2d_v5.xml",       "ant.xml",      "humanoid.xml",
    "swimmer.xml",           "reacher.xml",  "inverted_pendulum.xml",
    "inverted_double_pendulum.xml", "pusher.xml", "pusher_v5.xml",
};
#define NUM_MODELS (sizeof MODEL_FILES / sizeof MODEL_FILES[0])

/* A difference allowed, with its reason (file NULL: in every file). Tables of them end with an
 * entry whose field is NULL. */
typedef struct known_difference {
    const char *file;
    const char *field;
    const char *reason;
} known_difference;

#define MAX_KNOWN 16 /* entries a table may hold, its end included */

/* The differences our files are allowed: none while they compile to Gymnasium's mjModel
 * exactly. An entry here goes into modules/mujoco/models/README.md too. */
static const known_difference KNOWN_DIFFERENCES[] = {
    {NULL, NULL, NULL},
};

/* What one comparison found: the differing fields, by name. */
typedef struct diff_report {
    const char *file;
    const known_difference *known; /* the allowed differences */
    int differing;                 /* fields that differ, allowed or not */
    int unexplained;               /* of those, fields `known` does not name */
    const char *fields[MAX_REPORTED];
    bool known_used[MAX_KNOWN]; /* which entries of `known` matched a difference */
    bool quiet; /* the perturbation cases expect differences: print them, but as expected */
} diff_report;

static bool report_has(const diff_report *report, const char *field) {
    for (int i = 0; i < report->differing && i < MAX_REPORTED; i++)
        if (strcmp(report->fields[i], field) == 0) return true;
    return false;
}

/* Records a differing field; says whether the report's table allows it. */
static void report_field(diff_report *report, const char *field, const char *detail) {
    const char *reason = NULL;
    for (size_t k = 0; report->known && k < MAX_KNOWN && report->known[k].field; k++) {
        const known_difference *known = &report->known[k];
        if (strcmp(known->field, field) == 0 &&
            (!known->file || strcmp(known->file, report->file) == 0)) {
            reason = known->reason;
            report->known_used[k] = true;
        }
    }
    if (report->differing < MAX_REPORTED) report->fields[report->differing] = field;
    report->differing++;
    if (!reason) report->unexplained++;
    const char *verdict = reason ? "allowed" : report->quiet ? "expected" : "DIFFERS";
    fprintf(stderr, "  %s %s: %s: %s%s%s\n", report->file, verdict, field, detail,
            reason ? "; because " : "", reason ? reason : "");
}

/* The entries of `known` that matched no difference in any of the reports (a stale table);
 * prints each. */
static int stale_entries(const known_difference *known, const diff_report *reports,
                         size_t count) {
    int stale = 0;
    for (size_t k = 0; k < MAX_KNOWN && known[k].field; k++) {
        bool used = false;
        for (size_t r = 0; r < count; r++) used |= reports[r].known_used[k];
        if (used) continue;
        print_error("the table of allowed differences names %s in %s, which does not differ\n",
                    known[k].field, known[k].file ? known[k].file : "every file");
        stale++;
    }
    return stale;
}

typedef enum value_kind { KIND_DOUBLE, KIND_FLOAT, KIND_INT, KIND_BYTE, KIND_CHAR } value_kind;

/* an array's element kind, from its element type (the lvalue conversion drops const) */
#define KIND_OF(array)                                                                             \
    _Generic((array)[0], mjtNum: KIND_DOUBLE, float: KIND_FLOAT, int: KIND_INT,                    \
             mjtByte: KIND_BYTE, char: KIND_CHAR)

static const size_t KIND_SIZE[] = {
    [KIND_DOUBLE] = sizeof(mjtNum), [KIND_FLOAT] = sizeof(float), [KIND_INT] = sizeof(int),
    [KIND_BYTE] = sizeof(mjtByte),  [KIND_CHAR] = sizeof(char),
};

/* Bit for bit: -0.0 is not 0.0 here (a light's direction "-0 0 -1.3" is written so). */
static bool element_equal(value_kind kind, const void *a, const void *b, size_t i) {
    size_t size = KIND_SIZE[kind];
    return memcmp((const char *)a + i * size, (const char *)b + i * size, size) == 0;
}

/* One element as text; for a character array, the NUL-terminated string holding it. */
static void element_text(char *out, size_t size, value_kind kind, const void *array, size_t i) {
    switch (kind) {
    case KIND_DOUBLE: snprintf(out, size, "%.17g", ((const mjtNum *)array)[i]); break;
    case KIND_FLOAT: snprintf(out, size, "%.9g", (double)((const float *)array)[i]); break;
    case KIND_INT: snprintf(out, size, "%d", ((const int *)array)[i]); break;
    case KIND_BYTE: snprintf(out, size, "%u", (unsigned)((const mjtByte *)array)[i]); break;
    case KIND_CHAR: {
        const char *text = array;
        size_t start = i;
        while (start > 0 && text[start - 1]) start--;
        char shown[3] = {text[i] ? text[i] : '\\', text[i] ? '\0' : '0', '\0'};
        snprintf(out, size, "'%s' in \"%.80s\"", shown, text + start);
        break;
    }
    }
}

/* Compares one array of rows x cols elements; reports its first differing element. */
static void compare_array(diff_report *report, const char *field, value_kind kind,
                          const void *ours, const void *gym, size_t ours_rows, size_t gym_rows,
                          size_t cols) {
    char detail[512];
    if (ours_rows != gym_rows) {
        snprintf(detail, sizeof detail, "%zu rows in ours, %zu in Gymnasium's", ours_rows,
                 gym_rows);
        report_field(report, field, detail);
        return;
    }
    size_t count = ours_rows * cols;
    if (count && (!ours || !gym)) {
        report_field(report, field, "allocated in one model only");
        return;
    }
    size_t first = count, differing = 0;
    for (size_t i = 0; i < count; i++)
        if (!element_equal(kind, ours, gym, i)) {
            if (first == count) first = i;
            differing++;
        }
    if (!differing) return;
    char ours_text[160], gym_text[160];
    element_text(ours_text, sizeof ours_text, kind, ours, first);
    element_text(gym_text, sizeof gym_text, kind, gym, first);
    snprintf(detail, sizeof detail,
             "[%zu] (row %zu, column %zu): ours %s, Gymnasium's %s (%zu of %zu elements differ)",
             first, first / cols, first % cols, ours_text, gym_text, differing, count);
    report_field(report, field, detail);
}

static void compare_int(diff_report *report, const char *field, long ours, long gym) {
    if (ours == gym) return;
    char detail[128];
    snprintf(detail, sizeof detail, "ours %ld, Gymnasium's %ld", ours, gym);
    report_field(report, field, detail);
}

static void compare_double(diff_report *report, const char *field, double ours, double gym) {
    if (memcmp(&ours, &gym, sizeof ours) == 0) return;
    char detail[128];
    snprintf(detail, sizeof detail, "ours %.17g, Gymnasium's %.17g", ours, gym);
    report_field(report, field, detail);
}

/* mjVisual holds only 4-byte ints and floats (mjmodel.h): compared word by word. */
_Static_assert(sizeof(mjVisual) % sizeof(int) == 0 && sizeof(int) == sizeof(float),
               "mjVisual is compared as 4-byte words");

static void compare_visual(diff_report *report, const mjVisual *ours, const mjVisual *gym) {
    const unsigned char *a = (const void *)ours, *b = (const void *)gym;
    for (size_t offset = 0; offset < sizeof(mjVisual); offset += sizeof(int)) {
        if (memcmp(a + offset, b + offset, sizeof(int)) == 0) continue;
        int ours_int, gym_int;
        float ours_float, gym_float;
        memcpy(&ours_int, a + offset, sizeof ours_int);
        memcpy(&gym_int, b + offset, sizeof gym_int);
        memcpy(&ours_float, a + offset, sizeof ours_float);
        memcpy(&gym_float, b + offset, sizeof gym_float);
        char detail[256];
        snprintf(detail, sizeof detail,
                 "first at byte %zu: ours %d (as float %.9g), Gymnasium's %d (as float %.9g)",
                 offset, ours_int, (double)ours_float, gym_int, (double)gym_float);
        report_field(report, "vis", detail);
        return;
    }
}

/* Compares every field of the two models into the report. */
static void compare_models(diff_report *report, const mjModel *ours, const mjModel *gym) {
#define X(name) compare_int(report, #name, (long)ours->name, (long)gym->name);
    MJMODEL_INTS
#undef X

#define X(type, name)                                                                              \
    compare_double(report, "opt." #name, (double)ours->opt.name, (double)gym->opt.name);
    MJOPTION_SCALARS
#undef X
#define X(name, size)                                                                              \
    compare_array(report, "opt." #name, KIND_OF(ours->opt.name), ours->opt.name, gym->opt.name,    \
                  1, 1, size);
    MJOPTION_VECTORS
#undef X

    compare_visual(report, &ours->vis, &gym->vis);
    compare_double(report, "stat.meaninertia", ours->stat.meaninertia, gym->stat.meaninertia);
    compare_double(report, "stat.meanmass", ours->stat.meanmass, gym->stat.meanmass);
    compare_double(report, "stat.meansize", ours->stat.meansize, gym->stat.meansize);
    compare_double(report, "stat.extent", ours->stat.extent, gym->stat.extent);
    compare_array(report, "stat.center", KIND_DOUBLE, ours->stat.center, gym->stat.center, 1, 1, 3);

    /* Row counts name mjModel sizes (nbody, ...) and columns may too (MJ_M(nq), mjNFLUID):
     * both are read from the model `model` points at, once for each side. */
    const mjModel *model;
#undef MJ_M
#define MJ_M(n) model->n
#define X(type, name, rows, cols)                                                                  \
    {                                                                                              \
        model = ours;                                                                              \
        size_t ours_rows = (size_t)model->rows, ours_cols = (size_t)(cols);                        \
        model = gym;                                                                               \
        size_t gym_rows = (size_t)model->rows, gym_cols = (size_t)(cols);                          \
        if (ours_cols != gym_cols)                                                                 \
            compare_int(report, #name " (columns)", (long)ours_cols, (long)gym_cols);              \
        else                                                                                       \
            compare_array(report, #name, KIND_OF(ours->name), ours->name, gym->name, ours_rows,    \
                          gym_rows, ours_cols);                                                    \
    }
#define XNV X
    MJMODEL_POINTERS
#undef XNV
#undef X
#undef MJ_M
#define MJ_M(n) n
}

/* ------------------------------------------------------------------ loading */

static void ours_path(char *out, size_t size, const char *file) {
    int length = snprintf(out, size, "%s/modules/mujoco/models/%s", SKINNER_SOURCE_DIR, file);
    if (length < 0 || (size_t)length >= size) fail_msg("path too long for %s", file);
}

static void gym_path(char *out, size_t size, const char *shared, const char *file) {
    int length = snprintf(out, size, "%s/reference/mujoco/assets/%s", shared, file);
    if (length < 0 || (size_t)length >= size) fail_msg("path too long: %s/.../%s", shared, file);
}

/* Declares shared_var, the shared folder; skips the case (fails it under CI) when the folder
 * or its Gymnasium model files are absent. */
#define REQUIRE_GYM_ASSETS(shared_var)                                                             \
    REQUIRE_SHARED(shared_var);                                                                    \
    do {                                                                                           \
        char assets_dir[4096];                                                                     \
        gym_path(assets_dir, sizeof assets_dir, shared_var, "");                                   \
        if (access(assets_dir, R_OK) != 0)                                                         \
            TEST_SKIP("%s (Gymnasium's MuJoCo model files) is missing", assets_dir);              \
    } while (0)

/* Compiles an MJCF file; fails the case naming the file and MuJoCo's message. */
static mjModel *load_file(const char *path) {
    char error[ERROR_SIZE] = "";
    mjModel *model = mj_loadXML(path, NULL, error, sizeof error);
    if (!model) fail_msg("%s does not compile: %s", path, error);
    return model;
}

/* Our file `file`, compiled. */
static mjModel *load_ours(const char *file) {
    char path[4096];
    ours_path(path, sizeof path, file);
    return load_file(path);
}

/* Gymnasium's file `file` from the shared folder, compiled. */
static mjModel *load_gym(const char *shared, const char *file) {
    char path[4096];
    gym_path(path, sizeof path, shared, file);
    return load_file(path);
}

/* Compiles MJCF text (an edited copy of a file); fails the case with MuJoCo's message. */
static mjModel *load_text(const char *what, const char *xml) {
    char error[ERROR_SIZE] = "";
    mjSpec *spec = mj_parseXMLString(xml, NULL, error, sizeof error);
    if (!spec) fail_msg("%s does not parse: %s", what, error);
    mjModel *model = mj_compile(spec, NULL);
    if (!model) fail_msg("%s does not compile: %s", what, mjs_getError(spec));
    mj_deleteSpec(spec);
    return model;
}

static char *read_text(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) fail_msg("cannot open %s", path);
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    size_t got = fread(text, 1, (size_t)size, file);
    fclose(file);
    assert_int_equal(got, (size_t)size);
    text[size] = '\0';
    return text;
}

/* `text` with its one occurrence of `from` replaced by `to` (fails if not exactly one). */
static char *replace_once(const char *text, const char *from, const char *to) {
    const char *at = strstr(text, from);
    if (!at || strstr(at + 1, from))
        fail_msg("the edit expects exactly one '%s' in the file", from);
    size_t head = (size_t)(at - text), from_len = strlen(from), to_len = strlen(to);
    char *edited = malloc(strlen(text) - from_len + to_len + 1);
    assert_non_null(edited);
    memcpy(edited, text, head);
    memcpy(edited + head, to, to_len);
    strcpy(edited + head + to_len, at + from_len);
    return edited;
}

/* ------------------------------------------------------------------ cases */

/* Our files compile on their own (no ../shared needed) and actuate something. */
static void test_ours_compile(void **state) {
    (void)state;
    for (size_t i = 0; i < NUM_MODELS; i++) {
        mjModel *model = load_ours(MODEL_FILES[i]);
        print_message("%-30s nq %2d nv %2d nu %2d nbody %2d ngeom %2d\n", MODEL_FILES[i],
                      model->nq, model->nv, model->nu, model->nbody, model->ngeom);
        assert_true(model->nu > 0);
        mj_deleteModel(model);
    }
}

/* Each of our files compiles to Gymnasium's mjModel, field by field. */
static void test_models_match_gymnasium(void **state) {
    (void)state;
    REQUIRE_GYM_ASSETS(shared);
    _Static_assert(sizeof KNOWN_DIFFERENCES / sizeof KNOWN_DIFFERENCES[0] <= MAX_KNOWN,
                   "MAX_KNOWN holds KNOWN_DIFFERENCES");
    print_message("MuJoCo %s\n", mj_versionString());
    diff_report reports[NUM_MODELS];
    int unexplained = 0;
    for (size_t i = 0; i < NUM_MODELS; i++) {
        mjModel *ours = load_ours(MODEL_FILES[i]), *gym = load_gym(shared, MODEL_FILES[i]);
        reports[i] = (diff_report){.file = MODEL_FILES[i], .known = KNOWN_DIFFERENCES};
        compare_models(&reports[i], ours, gym);
        print_message("%-30s %d fields differ, %d of them unexplained\n", MODEL_FILES[i],
                      reports[i].differing, reports[i].unexplained);
        unexplained += reports[i].unexplained;
        mj_deleteModel(ours);
        mj_deleteModel(gym);
    }
    int stale = stale_entries(KNOWN_DIFFERENCES, reports, NUM_MODELS);
    if (unexplained || stale)
        fail_msg("%d unexplained differences from Gymnasium's models, %d stale table entries",
                 unexplained, stale);
}

/* Control: Gymnasium's file compiled twice compares equal. */
static void test_gymnasium_twice(void **state) {
    (void)state;
    REQUIRE_GYM_ASSETS(shared);
    for (size_t i = 0; i < NUM_MODELS; i++) {
        mjModel *first = load_gym(shared, MODEL_FILES[i]);
        mjModel *second = load_gym(shared, MODEL_FILES[i]);
        diff_report report = {.file = MODEL_FILES[i]};
        compare_models(&report, first, second);
        assert_int_equal(report.differing, 0);
        mj_deleteModel(first);
        mj_deleteModel(second);
    }
}

/* Our `file` compiled with `from` replaced by `to` in its text (from NULL: as it is); `what`
 * gets a description of it. */
static mjModel *compile_ours(const char *file, const char *from, const char *to, char *what,
                             size_t what_size) {
    char path[4096];
    ours_path(path, sizeof path, file);
    char *text = read_text(path);
    char *edited = from ? replace_once(text, from, to) : NULL;
    if (from) snprintf(what, what_size, "our %s with %s -> %s", file, from, to);
    else snprintf(what, what_size, "our %s", file);
    mjModel *model = load_text(what, edited ? edited : text);
    free(edited);
    free(text);
    return model;
}

/* Equal models step alike: the two models driven by the same controls stay equal bit for bit
 * over TRAJECTORY_STEPS steps (what the array comparison implies, shown on the physics the
 * tasks run). */
#define TRAJECTORY_STEPS 500

/* The first step (from 1) after which the two models' states differ; 0 if none does. */
static int first_differing_step(const mjModel *ours, const mjModel *gym) {
    mjData *ours_data = mj_makeData(ours), *gym_data = mj_makeData(gym);
    assert_non_null(ours_data);
    assert_non_null(gym_data);
    assert_int_equal(ours->nu, gym->nu);
    int differing = 0;
    for (int step = 0; step < TRAJECTORY_STEPS && !differing; step++) {
        /* a deterministic swing over the whole control range, a phase per actuator */
        for (int u = 0; u < ours->nu; u++)
            ours_data->ctrl[u] = gym_data->ctrl[u] = sin(0.05 * step + u);
        mj_step(ours, ours_data);
        mj_step(gym, gym_data);
        size_t qpos_bytes = sizeof(mjtNum) * (size_t)ours->nq;
        size_t qvel_bytes = sizeof(mjtNum) * (size_t)ours->nv;
        if (memcmp(ours_data->qpos, gym_data->qpos, qpos_bytes) != 0 ||
            memcmp(ours_data->qvel, gym_data->qvel, qvel_bytes) != 0)
            differing = step + 1;
    }
    mj_deleteData(ours_data);
    mj_deleteData(gym_data);
    return differing;
}

static void test_same_trajectories(void **state) {
    (void)state;
    REQUIRE_GYM_ASSETS(shared);
    for (size_t i = 0; i < NUM_MODELS; i++) {
        mjModel *ours = load_ours(MODEL_FILES[i]), *gym = load_gym(shared, MODEL_FILES[i]);
        int differing = first_differing_step(ours, gym);
        if (differing)
            fail_msg("%s: the state differs from Gymnasium's model's after step %d",
                     MODEL_FILES[i], differing);
        mj_deleteModel(ours);
        mj_deleteModel(gym);
    }
    print_message("%zu models: equal states over %d steps each\n", NUM_MODELS, TRAJECTORY_STEPS);
    /* the check can fail: v4's walker (the right foot's friction 0.9) against v5's (1.9) */
    mjModel *ours = load_ours("walker2d.xml"), *gym = load_gym(shared, "walker2d_v5.xml");
    int differing = first_differing_step(ours, gym);
    print_message("our walker2d.xml against Gymnasium's walker2d_v5.xml: differs after step %d\n",
                  differing);
    assert_true(differing > 0);
    mj_deleteModel(ours);
    mj_deleteModel(gym);
}

/* Compiles our `file` edited (see compile_ours), compares it with Gymnasium's `gym_file` and
 * requires `field` among the differences. */
static void expect_detected(const char *shared, const char *file, const char *gym_file,
                            const char *from, const char *to, const char *field) {
    char what[256];
    mjModel *ours = compile_ours(file, from, to, what, sizeof what);
    mjModel *gym = load_gym(shared, gym_file);
    print_message("%s against Gymnasium's %s:\n", what, gym_file);
    diff_report report = {.file = file, .quiet = true};
    compare_models(&report, ours, gym);
    if (!report_has(&report, field))
        fail_msg("%s: the comparison did not report %s (%d fields reported)", what, field,
                 report.differing);
    assert_true(report.unexplained > 0);
    mj_deleteModel(ours);
    mj_deleteModel(gym);
}

/* The comparison can fail: edits of our files' text are reported where they land. */
static void test_perturbations(void **state) {
    (void)state;
    REQUIRE_GYM_ASSETS(shared);
    /* a mass: an explicit mass on the hopper's torso geom instead of its density's */
    expect_detected(shared, "hopper.xml", "hopper.xml", "name=\"torso_geom\"",
                    "name=\"torso_geom\" mass=\"3.6\"", "body_mass");
    /* one ulp: 0.2 is the double after Gymnasium's 0.19999999999999996 */
    expect_detected(shared, "hopper.xml", "hopper.xml", "size=\"0.05 0.19999999999999996\"",
                    "size=\"0.05 0.2\"", "geom_size");
    /* the sign of a zero: a light's direction */
    expect_detected(shared, "hopper.xml", "hopper.xml", "dir=\"-0 0 -1.3\"", "dir=\"0 0 -1.3\"",
                    "light_dir");
    /* an option, and a visual setting */
    expect_detected(shared, "half_cheetah.xml", "half_cheetah.xml", "timestep=\"0.01\"",
                    "timestep=\"0.011\"", "opt.timestep");
    expect_detected(shared, "hopper.xml", "hopper.xml", "znear=\"0.02\"", "znear=\"0.03\"",
                    "vis");
    /* a name the tasks read, of the same length */
    expect_detected(shared, "half_cheetah.xml", "half_cheetah.xml", "body name=\"bfoot\"",
                    "body name=\"xfoot\"", "names");
    /* v4's model is not v5's: the right foot's friction */
    expect_detected(shared, "walker2d.xml", "walker2d_v5.xml", NULL, NULL, "geom_friction");
    expect_detected(shared, "pusher_v5.xml", "pusher.xml", NULL, NULL, "body_mass");
}

/* The table of allowed differences: an entry lets its difference pass, with its reason, and an
 * entry that matches no difference is reported stale. */
static void test_allowance_table(void **state) {
    (void)state;
    REQUIRE_GYM_ASSETS(shared);
    static const known_difference allowed[] = {
        {"half_cheetah.xml", "opt.timestep", "this case's edit"},
        {"half_cheetah.xml", "body_mass", "nothing: this entry must be reported stale"},
        {NULL, NULL, NULL},
    };
    char what[256];
    mjModel *ours = compile_ours("half_cheetah.xml", "timestep=\"0.01\"", "timestep=\"0.02\"",
                                 what, sizeof what);
    mjModel *gym = load_gym(shared, "half_cheetah.xml");
    diff_report report = {.file = "half_cheetah.xml", .known = allowed};
    compare_models(&report, ours, gym);
    assert_int_equal(report.differing, 1);
    assert_int_equal(report.unexplained, 0);
    assert_int_equal(stale_entries(allowed, &report, 1), 1);
    mj_deleteModel(ours);
    mj_deleteModel(gym);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ours_compile),
        cmocka_unit_test(test_models_match_gymnasium),
        cmocka_unit_test(test_gymnasium_twice),
        cmocka_unit_test(test_same_trajectories),
        cmocka_unit_test(test_perturbations),
        cmocka_unit_test(test_allowance_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
