/*
 * The MuJoCo envs' pictures (modules/mujoco/render.c, docs/mujoco.md "Seeing it", issue 50
 * ask 7), against geometry worked out here by hand:
 *   - a sphere and a box seen head on cover the disc and the rectangle a pinhole camera
 *     puts them in (their sizes from the distance and the field of view), at the depth
 *     of their near surface;
 *   - HalfCheetah's torso is drawn where this file's own projection of its centre falls,
 *     and moving the torso +1 m in x (qpos[0]) with a fixed camera moves its pixels right
 *     by the focal length / depth; a tracking camera keeps it in place;
 *   - every model file of modules/mujoco/models draws with its bodies taking a sane share
 *     of the picture.
 */
#include "test_util.h"

#include "../modules/mujoco/mujoco_render.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIDE 240

typedef struct picture {
    uint8_t rgb[3 * SIDE * SIDE];
    float depth[SIDE * SIDE];
    int ids[SIDE * SIDE];
} picture;

static mjModel *from_string(const char *xml) {
    char error[512] = "";
    mjSpec *spec = mj_parseXMLString(xml, NULL, error, sizeof error);
    if (!spec) fail_msg("parse: %s", error);
    mjModel *m = mj_compile(spec, NULL);
    if (!m) fail_msg("compile: %s", mjs_getError(spec));
    mj_deleteSpec(spec);
    return m;
}

/* the focal length in pixels of a camera with vertical field of view fovy degrees */
static double focal(int height, double fovy) {
    return 0.5 * height / tan(0.5 * fovy * M_PI / 180.0);
}

static const mj_camera g_head_on = {.lookat = {0, 0, 0}, .distance = 5.0, .azimuth = 90.0,
                                    .elevation = 0.0, .fovy = 45.0};

static void test_sphere_and_box(void **unused) {
    (void)unused;
    mjModel *m = from_string("<mujoco><worldbody><geom type='sphere' size='0.5'/>"
                             "<geom type='box' pos='3 0 0' size='0.5 0.3 0.2'/>"
                             "</worldbody></mujoco>");
    mjData *d = mj_makeData(m);
    mj_kinematics(m, d);
    picture *p = malloc(sizeof *p);
    mj_camera cam = g_head_on;
    mj_draw(m, d, &cam, SIDE, SIDE, p->rgb, p->depth, p->ids);
    double f = focal(SIDE, cam.fovy), D = cam.distance, r = 0.5;
    /* the sphere's silhouette: a disc of radius f r / sqrt(D^2 - r^2) about the centre */
    double radius = f * r / sqrt(D * D - r * r);
    int sphere = 0;
    for (int i = 0; i < SIDE * SIDE; i++) sphere += p->ids[i] == 0;
    printf("sphere: %d pixels, expected %.1f\n", sphere, M_PI * radius * radius);
    assert_true(fabs(sphere - M_PI * radius * radius) < 0.03 * M_PI * radius * radius);
    int centre = (SIDE / 2) * SIDE + SIDE / 2;
    assert_int_equal(p->ids[centre], 0);
    assert_true(fabs(p->depth[centre] - (D - r)) < 1e-3);
    /* the box, 3 m to the right: its near face (y = -0.3) is its silhouette */
    mj_camera side = cam;
    side.lookat[0] = 3.0;
    mj_draw(m, d, &side, SIDE, SIDE, p->rgb, p->depth, p->ids);
    int lo_x = SIDE, hi_x = -1, lo_y = SIDE, hi_y = -1;
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++)
            if (p->ids[y * SIDE + x] == 1)
                lo_x = x < lo_x ? x : lo_x, hi_x = x > hi_x ? x : hi_x,
                lo_y = y < lo_y ? y : lo_y, hi_y = y > hi_y ? y : hi_y;
    double width = 2 * 0.5 * f / (D - 0.3), height = 2 * 0.2 * f / (D - 0.3);
    printf("box: %dx%d pixels, expected %.1fx%.1f\n", hi_x - lo_x + 1, hi_y - lo_y + 1, width,
           height);
    assert_true(fabs(hi_x - lo_x + 1 - width) <= 1.5);
    assert_true(fabs(hi_y - lo_y + 1 - height) <= 1.5);
    assert_true(fabs(0.5 * (lo_x + hi_x + 1) - SIDE / 2) <= 1.0);
    free(p);
    mj_deleteData(d);
    mj_deleteModel(m);
}

static mjModel *load_model(const char *name) {
    char path[1024], error[512] = "";
    snprintf(path, sizeof path, "%s/modules/mujoco/models/%s", SKINNER_SOURCE_DIR, name);
    mjModel *m = mj_loadXML(path, NULL, error, sizeof error);
    if (!m) fail_msg("%s: %s", path, error);
    return m;
}

/* the mean pixel of geom g (false: not seen) */
static bool centroid(const picture *p, int g, double *cx, double *cy, int *count) {
    double sx = 0, sy = 0;
    int n = 0;
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++)
            if (p->ids[y * SIDE + x] == g) sx += x + 0.5, sy += y + 0.5, n++;
    *count = n;
    if (!n) return false;
    *cx = sx / n, *cy = sy / n;
    return true;
}

static void test_cheetah_moves(void **unused) {
    (void)unused;
    mjModel *m = load_model("half_cheetah.xml");
    mjData *d = mj_makeData(m);
    mj_camera fixed;
    mj_default_camera(m, d, false, &fixed);
    fixed.distance *= 2.0; /* so that the torso stays whole in the picture 1 m along */
    mj_kinematics(m, d); /* qpos0 */
    int torso = mj_name2id(m, mjOBJ_GEOM, "torso");
    assert_true(torso >= 0);
    picture *p = malloc(sizeof *p);
    mj_draw(m, d, &fixed, SIDE, SIDE, p->rgb, p->depth, p->ids);
    double x0 = 0, y0 = 0;
    int n0;
    assert_true(centroid(p, torso, &x0, &y0, &n0));
    /* this file's own pinhole: the torso's centre in camera coordinates */
    double az = fixed.azimuth * M_PI / 180, el = fixed.elevation * M_PI / 180;
    double fwd[3] = {cos(el) * cos(az), cos(el) * sin(az), sin(el)};
    double right[3] = {sin(az), -cos(az), 0};
    double up[3] = {right[1] * fwd[2] - right[2] * fwd[1], right[2] * fwd[0] - right[0] * fwd[2],
                    right[0] * fwd[1] - right[1] * fwd[0]};
    double rel[3], f = focal(SIDE, fixed.fovy);
    for (int k = 0; k < 3; k++)
        rel[k] = d->geom_xpos[3 * torso + k] - (fixed.lookat[k] - fixed.distance * fwd[k]);
    double depth = rel[0] * fwd[0] + rel[1] * fwd[1] + rel[2] * fwd[2];
    double px = SIDE / 2.0 + f * (rel[0] * right[0] + rel[1] * right[1]) / depth;
    double py = SIDE / 2.0 - f * (rel[0] * up[0] + rel[1] * up[1] + rel[2] * up[2]) / depth;
    printf("torso: %d pixels about (%.1f, %.1f); its centre projects to (%.1f, %.1f)\n", n0, x0,
           y0, px, py);
    assert_int_equal(p->ids[(int)py * SIDE + (int)px], torso);
    assert_true(fabs(x0 - px) < 2.0);
    /* +1 m in x: right by f / depth pixels, level */
    d->qpos[0] += 1.0;
    mj_kinematics(m, d);
    mj_draw(m, d, &fixed, SIDE, SIDE, p->rgb, p->depth, p->ids);
    double x1 = 0, y1 = 0;
    int n1;
    assert_true(centroid(p, torso, &x1, &y1, &n1));
    printf("moved +1 m: (%.1f, %.1f), expected a shift of %.1f pixels right\n", x1, y1, f / depth);
    assert_true(fabs((x1 - x0) - f / depth) < 0.1 * f / depth);
    assert_true(fabs(y1 - y0) < 2.0);
    /* a tracking camera keeps the torso where it was */
    mj_camera tracking, now;
    mj_default_camera(m, d, true, &tracking); /* leaves d at qpos0 */
    mj_draw(m, d, &tracking, SIDE, SIDE, p->rgb, p->depth, p->ids);
    assert_true(centroid(p, torso, &x0, &y0, &n0));
    d->qpos[0] += 1.0;
    mj_kinematics(m, d);
    mj_camera_follow(&tracking, d, &now);
    mj_draw(m, d, &now, SIDE, SIDE, p->rgb, p->depth, p->ids);
    assert_true(centroid(p, torso, &x1, &y1, &n1));
    printf("tracking: (%.1f, %.1f) at qpos0, (%.1f, %.1f) 1 m along\n", x0, y0, x1, y1);
    assert_true(fabs(x1 - x0) < 1.0 && fabs(y1 - y0) < 1.0);
    free(p);
    mj_deleteData(d);
    mj_deleteModel(m);
}

static void test_every_model(void **unused) {
    (void)unused;
    char dir_path[1024];
    snprintf(dir_path, sizeof dir_path, "%s/modules/mujoco/models", SKINNER_SOURCE_DIR);
    DIR *dir = opendir(dir_path);
    assert_non_null(dir);
    int models = 0;
    struct dirent *entry;
    picture *p = malloc(sizeof *p);
    while ((entry = readdir(dir))) {
        size_t len = strlen(entry->d_name);
        if (len < 4 || strcmp(entry->d_name + len - 4, ".xml")) continue;
        mjModel *m = load_model(entry->d_name);
        mjData *d = mj_makeData(m);
        mj_camera cam;
        mj_default_camera(m, d, true, &cam);
        mj_kinematics(m, d);
        mj_draw(m, d, &cam, SIDE, SIDE, p->rgb, p->depth, p->ids);
        int body = 0, floor = 0;
        for (int i = 0; i < SIDE * SIDE; i++) {
            if (p->ids[i] < 0) continue;
            if (m->geom_type[p->ids[i]] == mjGEOM_PLANE) floor++;
            else body++;
        }
        double share = (double)body / (SIDE * SIDE);
        printf("%s: bodies %.1f%% of the picture, planes %.1f%%\n", entry->d_name, 100 * share,
               100.0 * floor / (SIDE * SIDE));
        assert_true(share > 0.005 && share < 0.7);
        mj_deleteData(d);
        mj_deleteModel(m);
        models++;
    }
    closedir(dir);
    free(p);
    assert_true(models >= 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sphere_and_box),
        cmocka_unit_test(test_cheetah_moves),
        cmocka_unit_test(test_every_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
