/*
 * Pictures of the classic-control envs (sk_env_extras.render), drawn as Gymnasium 1.x's
 * render_mode="rgb_array" draws them: the same canvas sizes, colours, shapes and scales
 * (gymnasium/envs/classic_control/, one file an env). Gymnasium draws with pygame on a canvas whose y
 * axis points up and flips it at the end; here a shape is given in those coordinates and
 * each pixel is written at row height - 1 - y. Pygame's anti-aliased edges are left out:
 * filled shapes cover the pixels whose centres they contain. Pendulum's torque arrow (an
 * image file in Gymnasium) is left out too. Only a caller that asks for frames calls these.
 */
#include "acrobot.h"
#include "cartpole.h"
#include "mountaincar.h"
#include "pendulum.h"
#include "render.h"

#include <math.h>
#include <string.h>

typedef struct canvas {
    uint8_t *rgb;
    int width, height;
} canvas;

typedef struct point {
    double x, y;
} point;

static void fill(canvas *c, uint8_t r, uint8_t g, uint8_t b) {
    for (int i = 0; i < c->width * c->height; i++) {
        c->rgb[3 * i] = r;
        c->rgb[3 * i + 1] = g;
        c->rgb[3 * i + 2] = b;
    }
}

/* pixel (x, y) of the y-up canvas */
static void put(canvas *c, int x, int y, const uint8_t color[3]) {
    if (x < 0 || y < 0 || x >= c->width || y >= c->height) return;
    uint8_t *p = c->rgb + 3 * ((size_t)(c->height - 1 - y) * (size_t)c->width + (size_t)x);
    memcpy(p, color, 3);
}

/* A convex or concave polygon, by the even-odd rule at each pixel's centre. */
static void polygon(canvas *c, const point *v, int n, const uint8_t color[3]) {
    double lo_x = v[0].x, hi_x = v[0].x, lo_y = v[0].y, hi_y = v[0].y;
    for (int k = 1; k < n; k++) {
        lo_x = fmin(lo_x, v[k].x), hi_x = fmax(hi_x, v[k].x);
        lo_y = fmin(lo_y, v[k].y), hi_y = fmax(hi_y, v[k].y);
    }
    for (int y = (int)floor(lo_y); y <= (int)ceil(hi_y); y++)
        for (int x = (int)floor(lo_x); x <= (int)ceil(hi_x); x++) {
            double px = x + 0.5, py = y + 0.5;
            bool inside = false;
            for (int i = 0, j = n - 1; i < n; j = i++)
                if ((v[i].y > py) != (v[j].y > py) &&
                    px < (v[j].x - v[i].x) * (py - v[i].y) / (v[j].y - v[i].y) + v[i].x)
                    inside = !inside;
            if (inside) put(c, x, y, color);
        }
}

static void circle(canvas *c, int cx, int cy, int radius, const uint8_t color[3]) {
    for (int y = cy - radius; y <= cy + radius; y++)
        for (int x = cx - radius; x <= cx + radius; x++)
            if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= radius * radius) put(c, x, y, color);
}

/* A one-pixel line from a to b. */
static void line(canvas *c, point a, point b, const uint8_t color[3]) {
    int steps = (int)ceil(fmax(fabs(b.x - a.x), fabs(b.y - a.y))) * 2 + 1;
    for (int s = 0; s <= steps; s++) {
        double t = (double)s / steps;
        put(c, (int)floor(a.x + t * (b.x - a.x)), (int)floor(a.y + t * (b.y - a.y)), color);
    }
}

/* The rectangle (l, b)-(r, t) turned by angle (counter-clockwise, as pygame's
 * Vector2.rotate_rad) and moved by (dx, dy). */
static void box(point out[4], double l, double r, double t, double b, double angle, double dx,
                double dy) {
    const point corners[4] = {{l, b}, {l, t}, {r, t}, {r, b}};
    for (int k = 0; k < 4; k++) {
        double x = corners[k].x, y = corners[k].y;
        out[k] = (point){x * cos(angle) - y * sin(angle) + dx, x * sin(angle) + y * cos(angle) + dy};
    }
}

static const uint8_t BLACK[3] = {0, 0, 0};

/* ---- CartPole: 600 x 400 ---- */

void sk_cartpole_render(const void *state, int index, uint8_t *rgb) {
    const sk_cartpole_state *s = state;
    double x = s->x ? s->x[index] : (double)s->x32[index];
    double theta = s->theta ? s->theta[index] : (double)s->theta32[index];
    canvas c = {rgb, SK_CARTPOLE_RENDER_WIDTH, SK_CARTPOLE_RENDER_HEIGHT};
    const double x_threshold = 2.4, length = 0.5; /* cartpole.c's constants */
    double scale = c.width / (x_threshold * 2);
    double pole_width = 10.0, pole_len = scale * (2 * length), cart_width = 50.0,
           cart_height = 30.0, axle_offset = cart_height / 4.0;
    double cart_x = x * scale + c.width / 2.0, cart_y = 100; /* the top of the cart */
    fill(&c, 255, 255, 255);
    point v[4];
    box(v, -cart_width / 2, cart_width / 2, cart_height / 2, -cart_height / 2, 0.0, cart_x, cart_y);
    polygon(&c, v, 4, BLACK);
    box(v, -pole_width / 2, pole_width / 2, pole_len - pole_width / 2, -pole_width / 2, -theta,
        cart_x, cart_y + axle_offset);
    polygon(&c, v, 4, (const uint8_t[3]){202, 152, 101});
    circle(&c, (int)cart_x, (int)(cart_y + axle_offset), (int)(pole_width / 2),
           (const uint8_t[3]){129, 132, 203});
    line(&c, (point){0, cart_y}, (point){c.width, cart_y}, BLACK);
}

/* ---- Acrobot: 500 x 500 ---- */

void sk_acrobot_render(const void *state, int index, uint8_t *rgb) {
    const sk_acrobot_state *s = state;
    double s0 = s->theta1[index], s1 = s->theta2[index];
    canvas c = {rgb, SK_ACROBOT_RENDER_SIZE, SK_ACROBOT_RENDER_SIZE};
    const double link_1 = 1.0, link_2 = 1.0; /* acrobot.c's LINK_LENGTH_1 and _2 */
    double bound = link_1 + link_2 + 0.2, scale = c.width / (bound * 2), offset = c.width / 2.0;
    fill(&c, 255, 255, 255);
    point joints[3] = {{0, 0},
                       {-link_1 * cos(s0) * scale, link_1 * sin(s0) * scale},
                       {0, 0}};
    joints[2] = (point){joints[1].x - link_2 * cos(s0 + s1) * scale,
                        joints[1].y + link_2 * sin(s0 + s1) * scale};
    double thetas[2] = {s0 - M_PI / 2, s0 + s1 - M_PI / 2};
    line(&c, (point){-bound * scale + offset, 1 * scale + offset},
         (point){bound * scale + offset, 1 * scale + offset}, BLACK);
    for (int k = 0; k < 2; k++) {
        /* Gymnasium swaps each joint's coordinates ([:, ::-1]): x is the second */
        double jx = joints[k].y + offset, jy = joints[k].x + offset;
        double link_len = (k == 0 ? link_1 : link_2) * scale;
        point v[4];
        box(v, 0, link_len, 0.1 * scale, -0.1 * scale, thetas[k], jx, jy);
        polygon(&c, v, 4, (const uint8_t[3]){0, 204, 204});
        circle(&c, (int)jx, (int)jy, (int)(0.1 * scale), (const uint8_t[3]){204, 204, 0});
    }
}

/* ---- MountainCar: 600 x 400 ---- */

static double mountain_height(double position) { return sin(3 * position) * 0.45 + 0.55; }

void sk_mountaincar_render(const void *state, int index, uint8_t *rgb) {
    const sk_mountaincar_state *s = state;
    double pos = s->position[index];
    canvas c = {rgb, SK_MOUNTAINCAR_RENDER_WIDTH, SK_MOUNTAINCAR_RENDER_HEIGHT};
    const double min_position = -1.2, max_position = 0.6, goal_position = 0.5;
    double scale = c.width / (max_position - min_position);
    double car_width = 40, car_height = 20, clearance = 10;
    fill(&c, 255, 255, 255);
    point prev = {0, mountain_height(min_position) * scale};
    for (int k = 1; k < 100; k++) { /* numpy's linspace(min, max, 100) */
        double xs = min_position + (max_position - min_position) * k / 99.0;
        point next = {(xs - min_position) * scale, mountain_height(xs) * scale};
        line(&c, prev, next, BLACK);
        prev = next;
    }
    double angle = cos(3 * pos), base_x = (pos - min_position) * scale,
           base_y = clearance + mountain_height(pos) * scale;
    point v[4];
    box(v, -car_width / 2, car_width / 2, car_height, 0, angle, base_x, base_y);
    polygon(&c, v, 4, BLACK);
    for (int k = 0; k < 2; k++) {
        double wx = (k == 0 ? 1 : -1) * car_width / 4;
        double rx = wx * cos(angle), ry = wx * sin(angle);
        circle(&c, (int)(rx + base_x), (int)(ry + base_y), (int)(car_height / 2.5),
               (const uint8_t[3]){128, 128, 128});
    }
    int flag_x = (int)((goal_position - min_position) * scale);
    int flag_y1 = (int)(mountain_height(goal_position) * scale), flag_y2 = flag_y1 + 50;
    line(&c, (point){flag_x, flag_y1}, (point){flag_x, flag_y2}, BLACK);
    polygon(&c, (const point[3]){{flag_x, flag_y2}, {flag_x, flag_y2 - 10}, {flag_x + 25, flag_y2 - 5}},
            3, (const uint8_t[3]){204, 204, 0});
}

/* ---- Pendulum: 500 x 500 ---- */

void sk_pendulum_render(const void *state, int index, uint8_t *rgb) {
    const sk_pendulum_state *s = state;
    double theta = s->theta[index];
    canvas c = {rgb, SK_PENDULUM_RENDER_SIZE, SK_PENDULUM_RENDER_SIZE};
    double bound = 2.2, scale = c.width / (bound * 2), offset = c.width / 2.0;
    double rod_length = 1 * scale, rod_width = 0.2 * scale;
    const uint8_t rod[3] = {204, 77, 77};
    fill(&c, 255, 255, 255);
    point v[4];
    box(v, 0, rod_length, rod_width / 2, -rod_width / 2, theta + M_PI / 2, offset, offset);
    polygon(&c, v, 4, rod);
    circle(&c, (int)offset, (int)offset, (int)(rod_width / 2), rod);
    double end_x = rod_length * cos(theta + M_PI / 2), end_y = rod_length * sin(theta + M_PI / 2);
    circle(&c, (int)(end_x + offset), (int)(end_y + offset), (int)(rod_width / 2), rod);
    circle(&c, (int)offset, (int)offset, (int)(0.05 * scale), BLACK);
}
