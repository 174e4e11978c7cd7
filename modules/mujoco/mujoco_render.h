/*
 * Pictures of the MuJoCo envs (render.c, docs/mujoco.md "Seeing it"): skinner's own
 * projection of the model's geoms, drawn from mjData's geom_xpos and geom_xmat.
 */
#ifndef SK_MUJOCO_RENDER_H
#define SK_MUJOCO_RENDER_H

#include <mujoco/mujoco.h>
#include <stdbool.h>
#include <stdint.h>

/* The picture's size (sk_env_extras.render_width and render_height): Gymnasium's
 * default for its MuJoCo tasks. */
#define MJ_RENDER_WIDTH 480
#define MJ_RENDER_HEIGHT 480

/* A camera as MuJoCo's free camera is given: the point looked at, the distance to it,
 * azimuth and elevation in degrees (azimuth 90: looking along +y; elevation < 0: from
 * above), the vertical field of view in degrees. track: lookat follows body 1 in x and y,
 * at offset from it. */
typedef struct mj_camera {
    double lookat[3], distance, azimuth, elevation, fovy;
    bool track;
    double offset[2];
} mj_camera;

/* The camera a task's video uses: framed on the model's geoms at qpos0 (d is a workspace:
 * its positions are overwritten), seen from the side, or from higher up when the model
 * lies flat; tracking body 1 when `track`. */
void mj_default_camera(const mjModel *m, mjData *d, bool track, mj_camera *cam);
/* cam where d's body 1 is now (cam itself when it does not track). */
void mj_camera_follow(const mj_camera *cam, const mjData *d, mj_camera *out);
/* Draw d (after mj_kinematics) into rgb (height rows of width pixels, top row first, 3
 * bytes a pixel); depth and ids (width x height each) receive each pixel's distance along
 * its ray and the geom it shows (INFINITY and -1: sky). */
void mj_draw(const mjModel *m, const mjData *d, const mj_camera *cam, int width, int height,
             uint8_t *rgb, float *depth, int *ids);
/* Where point p falls in the picture (pixel x to the right, y down; false: behind the
 * camera). */
bool mj_project(const mj_camera *cam, int width, int height, const double p[3], double *px,
                double *py);
/* A physics state (mj_getState's `spec`) drawn with mj_default_camera: false (and a black
 * picture) when out of memory. */
bool mj_render_state(const mjModel *m, const double *physics, unsigned spec, bool track,
                     int width, int height, uint8_t *rgb);

#endif
