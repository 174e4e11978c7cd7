/*
 * Pictures of a MuJoCo env (sk_env_extras.render, docs/mujoco.md "Seeing it"): skinner's
 * own projection of the model's geoms, not MuJoCo's renderer (mjr_* needs an OpenGL
 * context: EGL or OSMesa and Mesa's drivers, one context per thread, for one option).
 *
 * A ray per pixel from a pinhole camera placed as MuJoCo's free camera is (a point looked
 * at, a distance, an azimuth and an elevation), met with each geom in the geom's own frame
 * (geom_xpos, geom_xmat, geom_size after mj_kinematics): planes, spheres, capsules,
 * ellipsoids, cylinders and boxes. The nearest hit wins (a depth test per pixel); only
 * the pixels within a geom's projected bounding sphere (geom_rbound) are tried. A hit is
 * shaded flat by its normal (a light at the camera and one above), planes as a 1 m
 * checker so that motion shows; a pixel that meets nothing is sky.
 */
#include "mujoco_render.h"

#include <math.h>
#include <string.h>

typedef struct view {
    double pos[3], fwd[3], right[3], up[3];
    double focal; /* pixels per unit of tan */
    int width, height;
} view;

static double dot3(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void view_of(const mj_camera *cam, int width, int height, view *v) {
    double az = cam->azimuth * M_PI / 180.0, el = cam->elevation * M_PI / 180.0;
    v->fwd[0] = cos(el) * cos(az), v->fwd[1] = cos(el) * sin(az), v->fwd[2] = sin(el);
    for (int k = 0; k < 3; k++) v->pos[k] = cam->lookat[k] - cam->distance * v->fwd[k];
    /* right = fwd x z, up = right x fwd */
    double r[3] = {v->fwd[1], -v->fwd[0], 0.0};
    double n = sqrt(dot3(r, r));
    for (int k = 0; k < 3; k++) v->right[k] = r[k] / n;
    v->up[0] = v->right[1] * v->fwd[2] - v->right[2] * v->fwd[1];
    v->up[1] = v->right[2] * v->fwd[0] - v->right[0] * v->fwd[2];
    v->up[2] = v->right[0] * v->fwd[1] - v->right[1] * v->fwd[0];
    v->focal = 0.5 * height / tan(0.5 * cam->fovy * M_PI / 180.0);
    v->width = width, v->height = height;
}

bool mj_project(const mj_camera *cam, int width, int height, const double p[3], double *px,
                double *py) {
    view v;
    view_of(cam, width, height, &v);
    double rel[3] = {p[0] - v.pos[0], p[1] - v.pos[1], p[2] - v.pos[2]};
    double z = dot3(rel, v.fwd);
    if (z <= 1e-9) return false;
    *px = 0.5 * width + v.focal * dot3(rel, v.right) / z;
    *py = 0.5 * height - v.focal * dot3(rel, v.up) / z;
    return true;
}

/* ---- rays met with one geom, in its frame: the distance along the ray (or INFINITY)
 * and the normal there ---- */

static double sphere_hit(const double o[3], const double d[3], double r) {
    double b = dot3(o, d), c = dot3(o, o) - r * r, a = dot3(d, d);
    double disc = b * b - a * c;
    if (disc < 0.0) return INFINITY;
    double s = sqrt(disc), t = (-b - s) / a;
    if (t > 1e-9) return t;
    t = (-b + s) / a;
    return t > 1e-9 ? t : INFINITY;
}

/* the side of a z-axis cylinder of radius r within |z| <= h */
static double tube_hit(const double o[3], const double d[3], double r, double h) {
    double a = d[0] * d[0] + d[1] * d[1];
    if (a < 1e-18) return INFINITY;
    double b = o[0] * d[0] + o[1] * d[1], c = o[0] * o[0] + o[1] * o[1] - r * r;
    double disc = b * b - a * c;
    if (disc < 0.0) return INFINITY;
    double s = sqrt(disc);
    for (int k = 0; k < 2; k++) {
        double t = (-b + (k ? s : -s)) / a;
        if (t > 1e-9 && fabs(o[2] + t * d[2]) <= h) return t;
    }
    return INFINITY;
}

static double box_hit(const double o[3], const double d[3], const double *half, int *axis) {
    double near = -INFINITY, far = INFINITY;
    for (int k = 0; k < 3; k++) {
        if (fabs(d[k]) < 1e-18) {
            if (fabs(o[k]) > half[k]) return INFINITY;
            continue;
        }
        double t1 = (-half[k] - o[k]) / d[k], t2 = (half[k] - o[k]) / d[k];
        if (t1 > t2) { double t = t1; t1 = t2; t2 = t; }
        if (t1 > near) near = t1, *axis = k;
        if (t2 < far) far = t2;
    }
    return near <= far && near > 1e-9 ? near : INFINITY;
}

/* The nearest hit of the ray (o, d in the geom's frame) with geom g, its normal in that
 * frame into n. */
static double geom_hit(const mjModel *m, int g, const double o[3], const double d[3], double n[3]) {
    const double *size = m->geom_size + 3 * g;
    double t = INFINITY, p[3];
    switch (m->geom_type[g]) {
    case mjGEOM_PLANE: {
        if (o[2] <= 0.0 || d[2] >= 0.0) return INFINITY; /* seen from its front alone */
        t = -o[2] / d[2];
        double x = o[0] + t * d[0], y = o[1] + t * d[1];
        if ((size[0] > 0 && fabs(x) > size[0]) || (size[1] > 0 && fabs(y) > size[1]))
            return INFINITY;
        n[0] = 0, n[1] = 0, n[2] = 1;
        return t;
    }
    case mjGEOM_SPHERE:
        t = sphere_hit(o, d, size[0]);
        for (int k = 0; k < 3; k++) n[k] = o[k] + t * d[k];
        break;
    case mjGEOM_ELLIPSOID: {
        double os[3], ds[3];
        for (int k = 0; k < 3; k++) os[k] = o[k] / size[k], ds[k] = d[k] / size[k];
        t = sphere_hit(os, ds, 1.0);
        for (int k = 0; k < 3; k++) n[k] = (o[k] + t * d[k]) / (size[k] * size[k]);
        break;
    }
    case mjGEOM_CAPSULE:
    case mjGEOM_CYLINDER: {
        double r = size[0], h = size[1];
        t = tube_hit(o, d, r, h);
        int part = 0; /* 0: the side, else the end at z = part * h */
        for (int end = -1; end <= 1; end += 2) {
            double te;
            if (m->geom_type[g] == mjGEOM_CAPSULE) {
                double oc[3] = {o[0], o[1], o[2] - end * h};
                te = sphere_hit(oc, d, r);
            } else {
                te = fabs(d[2]) < 1e-18 ? INFINITY : (end * h - o[2]) / d[2];
                if (te <= 1e-9) te = INFINITY;
                double x = o[0] + te * d[0], y = o[1] + te * d[1];
                if (x * x + y * y > r * r) te = INFINITY;
            }
            if (te < t) t = te, part = end;
        }
        for (int k = 0; k < 3; k++) p[k] = o[k] + t * d[k];
        if (m->geom_type[g] == mjGEOM_CAPSULE || part == 0)
            n[0] = p[0], n[1] = p[1], n[2] = part == 0 ? 0.0 : p[2] - part * h;
        else
            n[0] = 0, n[1] = 0, n[2] = part;
        break;
    }
    case mjGEOM_BOX: {
        int axis = 0;
        t = box_hit(o, d, size, &axis);
        n[0] = n[1] = n[2] = 0.0;
        n[axis] = o[axis] + t * d[axis] > 0 ? 1.0 : -1.0;
        break;
    }
    default: return INFINITY; /* meshes, height fields, SDFs: not drawn */
    }
    return t;
}

/* ---- the picture ---- */

static void geom_colour(const mjModel *m, int g, float out[3]) {
    const float *rgba = m->geom_rgba + 4 * g;
    int mat = m->geom_matid[g];
    /* a material colours a geom whose own rgba is MuJoCo's default, as MuJoCo does */
    if (mat >= 0 && rgba[0] == 0.5f && rgba[1] == 0.5f && rgba[2] == 0.5f)
        rgba = m->mat_rgba + 4 * mat;
    memcpy(out, rgba, 3 * sizeof(float));
}

static bool drawn(const mjModel *m, int g) {
    return m->geom_rgba[4 * g + 3] > 0.0f && m->geom_group[g] <= 2 &&
           (m->geom_matid[g] < 0 || m->mat_rgba[4 * m->geom_matid[g] + 3] > 0.0f);
}

/* The pixel rectangle that geom g's bounding sphere can cover: false when none. */
static bool bounds(const view *v, const double c[3], double r, int box[4]) {
    box[0] = 0, box[1] = 0, box[2] = v->width, box[3] = v->height;
    if (r <= 0.0) return true; /* planes: anywhere */
    double rel[3] = {c[0] - v->pos[0], c[1] - v->pos[1], c[2] - v->pos[2]};
    double x = dot3(rel, v->right), y = dot3(rel, v->up), z = dot3(rel, v->fwd);
    if (z + r <= 0.0) return false;
    if (z - r <= 1e-6) return true;
    /* x / z over the box holding the sphere is extreme at its corners */
    double lo_x = INFINITY, hi_x = -INFINITY, lo_y = INFINITY, hi_y = -INFINITY;
    for (int i = 0; i < 4; i++) {
        double zz = z + ((i & 1) ? r : -r), sx = x + ((i & 2) ? r : -r),
               sy = y + ((i & 2) ? r : -r);
        lo_x = fmin(lo_x, sx / zz), hi_x = fmax(hi_x, sx / zz);
        lo_y = fmin(lo_y, sy / zz), hi_y = fmax(hi_y, sy / zz);
    }
    box[0] = (int)fmax(0.0, floor(0.5 * v->width + v->focal * lo_x));
    box[2] = (int)fmin(v->width, ceil(0.5 * v->width + v->focal * hi_x) + 1);
    box[1] = (int)fmax(0.0, floor(0.5 * v->height - v->focal * hi_y));
    box[3] = (int)fmin(v->height, ceil(0.5 * v->height - v->focal * lo_y) + 1);
    return box[0] < box[2] && box[1] < box[3];
}

void mj_draw(const mjModel *m, const mjData *d, const mj_camera *cam, int width, int height,
             uint8_t *rgb, float *depth, int *ids) {
    view v;
    view_of(cam, width, height, &v);
    size_t count = (size_t)width * (size_t)height;
    for (size_t i = 0; i < count; i++) depth[i] = INFINITY, ids[i] = -1;
    /* sky: lighter towards the top */
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            uint8_t *p = rgb + 3 * ((size_t)y * (size_t)width + (size_t)x);
            double f = (double)y / height;
            p[0] = (uint8_t)(150 + 60 * (1 - f)), p[1] = (uint8_t)(180 + 50 * (1 - f)), p[2] = 235;
        }
    for (int g = 0; g < m->ngeom; g++) {
        if (!drawn(m, g)) continue;
        const double *c = d->geom_xpos + 3 * g, *R = d->geom_xmat + 9 * g;
        int box[4];
        double rbound = m->geom_type[g] == mjGEOM_PLANE ? 0.0 : m->geom_rbound[g];
        if (m->geom_type[g] != mjGEOM_PLANE && rbound <= 0.0) continue;
        if (!bounds(&v, c, rbound, box)) continue;
        float colour[3];
        geom_colour(m, g, colour);
        /* the camera in the geom's frame: local = R^T (world - c) */
        double rel[3] = {v.pos[0] - c[0], v.pos[1] - c[1], v.pos[2] - c[2]}, o[3];
        for (int k = 0; k < 3; k++) o[k] = R[k] * rel[0] + R[3 + k] * rel[1] + R[6 + k] * rel[2];
        for (int y = box[1]; y < box[3]; y++)
            for (int x = box[0]; x < box[2]; x++) {
                double sx = (x + 0.5 - 0.5 * width) / v.focal;
                double sy = (0.5 * height - y - 0.5) / v.focal;
                double w[3], dl[3], n[3];
                for (int k = 0; k < 3; k++) w[k] = v.fwd[k] + sx * v.right[k] + sy * v.up[k];
                for (int k = 0; k < 3; k++) dl[k] = R[k] * w[0] + R[3 + k] * w[1] + R[6 + k] * w[2];
                double t = geom_hit(m, g, o, dl, n);
                size_t i = (size_t)y * (size_t)width + (size_t)x;
                if (!(t < depth[i])) continue;
                depth[i] = (float)t, ids[i] = g;
                /* the normal in the world, facing the camera */
                double nw[3], len;
                for (int k = 0; k < 3; k++)
                    nw[k] = R[3 * k] * n[0] + R[3 * k + 1] * n[1] + R[3 * k + 2] * n[2];
                len = sqrt(dot3(nw, nw)), len = len > 0 ? len : 1;
                double head = fabs(dot3(nw, w)) / (len * sqrt(dot3(w, w)));
                double top = fmax(0.0, nw[2] / len);
                double shade = 0.25 + 0.5 * head + 0.25 * top;
                double tone = 1.0;
                if (m->geom_type[g] == mjGEOM_PLANE) {
                    double px = o[0] + t * dl[0], py = o[1] + t * dl[1];
                    tone = ((long)floor(px) + (long)floor(py)) & 1 ? 0.8 : 1.0;
                }
                uint8_t *p = rgb + 3 * i;
                for (int k = 0; k < 3; k++) {
                    double value = 255.0 * colour[k] * shade * tone;
                    p[k] = (uint8_t)(value > 255.0 ? 255.0 : value);
                }
            }
    }
}

/* The drawn geoms' bounding box in the world (planes left out). */
static void extent(const mjModel *m, const mjData *d, double lo[3], double hi[3]) {
    for (int k = 0; k < 3; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
    for (int g = 0; g < m->ngeom; g++) {
        if (m->geom_type[g] == mjGEOM_PLANE || !drawn(m, g)) continue;
        const double *size = m->geom_size + 3 * g, *R = d->geom_xmat + 9 * g;
        double half[3]; /* the geom's own box */
        switch (m->geom_type[g]) {
        case mjGEOM_SPHERE: half[0] = half[1] = half[2] = size[0]; break;
        case mjGEOM_CAPSULE: half[0] = half[1] = size[0], half[2] = size[1] + size[0]; break;
        case mjGEOM_CYLINDER: half[0] = half[1] = size[0], half[2] = size[1]; break;
        case mjGEOM_ELLIPSOID:
        case mjGEOM_BOX: memcpy(half, size, sizeof half); break;
        default: half[0] = half[1] = half[2] = m->geom_rbound[g];
        }
        for (int k = 0; k < 3; k++) {
            double reach = fabs(R[3 * k]) * half[0] + fabs(R[3 * k + 1]) * half[1] +
                           fabs(R[3 * k + 2]) * half[2];
            lo[k] = fmin(lo[k], d->geom_xpos[3 * g + k] - reach);
            hi[k] = fmax(hi[k], d->geom_xpos[3 * g + k] + reach);
        }
    }
    if (!(lo[0] <= hi[0])) /* nothing but planes */
        for (int k = 0; k < 3; k++) lo[k] = -1.0, hi[k] = 1.0;
}

void mj_default_camera(const mjModel *m, mjData *d, bool track, mj_camera *cam) {
    /* framed on the model at qpos0: the same distance every frame */
    mju_copy(d->qpos, m->qpos0, m->nq);
    mj_kinematics(m, d);
    double lo[3], hi[3];
    extent(m, d, lo, hi);
    double span[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    double radius = 0.5 * sqrt(dot3(span, span));
    cam->fovy = 45.0;
    cam->azimuth = 90.0; /* looking along +y: x to the right, z up */
    /* a body that lies flat (Reacher, Swimmer, Ant) is seen from higher up */
    cam->elevation = span[2] < 0.3 * fmax(span[0], span[1]) ? -55.0 : -15.0;
    cam->distance = 1.3 * radius / sin(0.5 * cam->fovy * M_PI / 180.0);
    cam->track = track && m->nbody > 1;
    for (int k = 0; k < 3; k++) cam->lookat[k] = 0.5 * (lo[k] + hi[k]);
    /* tracking follows body 1 in x and y from where it started */
    if (cam->track)
        for (int k = 0; k < 2; k++) cam->offset[k] = cam->lookat[k] - d->xpos[3 + k];
}

void mj_camera_follow(const mj_camera *cam, const mjData *d, mj_camera *out) {
    *out = *cam;
    if (!cam->track) return;
    for (int k = 0; k < 2; k++) out->lookat[k] = d->xpos[3 + k] + cam->offset[k];
}

bool mj_render_state(const mjModel *m, const double *physics, unsigned spec, bool track,
                     int width, int height, uint8_t *rgb) {
    mjData *d = mj_makeData(m);
    size_t count = (size_t)width * (size_t)height;
    float *depth = mju_malloc(count * sizeof(float));
    int *ids = mju_malloc(count * sizeof(int));
    bool ok = d && depth && ids;
    if (ok) {
        mj_camera cam, now;
        mj_default_camera(m, d, track, &cam);
        mj_setState(m, d, physics, spec);
        mj_kinematics(m, d);
        mj_camera_follow(&cam, d, &now);
        mj_draw(m, d, &now, width, height, rgb, depth, ids);
    } else {
        memset(rgb, 0, 3 * count);
    }
    if (d) mj_deleteData(d);
    mju_free(depth);
    mju_free(ids);
    return ok;
}
