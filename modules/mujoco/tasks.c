/*
 * Gymnasium's MuJoCo tasks as rows (gymnasium/envs/mujoco/, its v4 and v5 files,
 * with their default arguments, exclude_current_positions_from_observation
 * among them): each row is a model, what the observation holds, the reward's
 * weights and the healthy test. env.c runs them all. v4 rows exist where v4
 * computes something else than v5: its survival bonus is paid on the
 * terminating step too (MJ_BONUS_ALWAYS), Walker2d-v4 has its own model file,
 * Ant-v4 observes no contact forces and pays no contact cost,
 * InvertedPendulum-v4 pays 1 on every step.
 */
#include "mujoco_env.h"

#include <string.h>

/* ---- healthy tests (Gymnasium's is_healthy; strict or not as it is) ---- */

/* Hopper: qpos[1] (z) above 0.7, |qpos[2]| (angle) below 0.2, and every
 * value of qpos[2:] and qvel within (-100, 100). */
static bool hopper_healthy(const mj_task *task, const mjModel *m, const mjData *d) {
    (void)task;
    const double z_min = 0.7, angle_limit = 0.2, state_limit = 100.0;
    for (int k = 2; k < m->nq + m->nv; k++) {
        double v = k < m->nq ? d->qpos[k] : d->qvel[k - m->nq];
        if (!(v > -state_limit && v < state_limit)) return false;
    }
    return d->qpos[1] > z_min && d->qpos[2] > -angle_limit && d->qpos[2] < angle_limit;
}

/* Walker2d: 0.8 < z < 2 and -1 < angle < 1. */
static bool walker_healthy(const mj_task *task, const mjModel *m, const mjData *d) {
    (void)task, (void)m;
    const double z_min = 0.8, z_max = 2.0, angle_limit = 1.0;
    return d->qpos[1] > z_min && d->qpos[1] < z_max && d->qpos[2] > -angle_limit &&
           d->qpos[2] < angle_limit;
}

static bool all_finite(const mjModel *m, const mjData *d) {
    for (int k = 0; k < m->nq; k++)
        if (!isfinite(d->qpos[k])) return false;
    for (int k = 0; k < m->nv; k++)
        if (!isfinite(d->qvel[k])) return false;
    return true;
}

/* Ant: a finite state and the torso's z (qpos[2]) within [0.2, 1.0], ends included. */
static bool ant_healthy(const mj_task *task, const mjModel *m, const mjData *d) {
    (void)task;
    const double z_min = 0.2, z_max = 1.0;
    return all_finite(m, d) && d->qpos[2] >= z_min && d->qpos[2] <= z_max;
}

/* InvertedPendulum: a finite observation and the pole within 0.2 rad. */
static bool pendulum_healthy(const mj_task *task, const mjModel *m, const mjData *d) {
    (void)task;
    const double angle_limit = 0.2;
    return all_finite(m, d) && !(fabs(d->qpos[1]) > angle_limit);
}

/* ---- contact forces (Ant-v5): cfrc_ext clipped to [-1, 1] ---- */

static double clip_unit(double v) {
    return v < -1.0 ? -1.0 : v > 1.0 ? 1.0 : v;
}

static int cfrc_obs_size(const mjModel *m) {
    return 6 * (m->nbody - 1);
}

/* clip(cfrc_ext[1:], -1, 1), every body but the world */
static float *cfrc_obs(const mj_task *task, const mjModel *m, const mjData *d, float *out) {
    (void)task;
    for (int k = 6; k < 6 * m->nbody; k++) *out++ = (float)clip_unit(d->cfrc_ext[k]);
    return out;
}

/* contact_cost_weight * sum(clip(cfrc_ext, -1, 1)^2), over every body */
static double cfrc_cost(const mj_task *task, const mjModel *m, const mjData *d) {
    double sum = 0.0;
    for (int k = 0; k < 6 * m->nbody; k++) {
        double v = clip_unit(d->cfrc_ext[k]);
        sum += v * v;
    }
    return task->contact_weight * sum;
}

/* ---- Humanoid: the body's inertias, velocities, actuator and contact forces ---- */

/* 1.0 < z (qpos[2]) < 2.0 */
static bool humanoid_healthy(const mj_task *task, const mjModel *m, const mjData *d) {
    (void)task, (void)m;
    const double z_min = 1.0, z_max = 2.0;
    return d->qpos[2] > z_min && d->qpos[2] < z_max;
}

/* v5 leaves out what is always zero: the world body's cinert, cvel and cfrc_ext and the
 * free joint's six actuator forces; v4 observes them too */
static int humanoid_size(const mjModel *m, int skip_body, int skip_dof) {
    return (10 + 6 + 6) * (m->nbody - skip_body) + (m->nv - skip_dof);
}
static int humanoid_size_v5(const mjModel *m) {
    return humanoid_size(m, 1, 6);
}
static int humanoid_size_v4(const mjModel *m) {
    return humanoid_size(m, 0, 0);
}

/* cinert, cvel, qfrc_actuator and cfrc_ext (v5: from body 1 and dof 6 on) */
static float *humanoid_obs(const mj_task *task, const mjModel *m, const mjData *d, float *out) {
    int body = task->extra_obs_size == humanoid_size_v5 ? 1 : 0;
    int dof = body ? 6 : 0;
    for (int k = 10 * body; k < 10 * m->nbody; k++) *out++ = (float)d->cinert[k];
    for (int k = 6 * body; k < 6 * m->nbody; k++) *out++ = (float)d->cvel[k];
    for (int k = dof; k < m->nv; k++) *out++ = (float)d->qfrc_actuator[k];
    for (int k = 6 * body; k < 6 * m->nbody; k++) *out++ = (float)d->cfrc_ext[k];
    return out;
}

/* v5: contact_weight * sum(cfrc_ext^2) over every body, at most 10 */
static double humanoid_contact_cost(const mj_task *task, const mjModel *m, const mjData *d) {
    const double max_cost = 10.0;
    double sum = 0.0;
    for (int k = 0; k < 6 * m->nbody; k++) sum += d->cfrc_ext[k] * d->cfrc_ext[k];
    double cost = task->contact_weight * sum;
    return cost > max_cost ? max_cost : cost;
}

/* ---- InvertedDoublePendulum: the tip (site 0) above 1, near (0, 2) ---- */

static double clip10(double v) {
    return v < -10.0 ? -10.0 : v > 10.0 ? 10.0 : v;
}

/* v5: the cart's x, sin and cos of the angles, clipped qvel, the first clipped
 * qfrc_constraint; v4: every qfrc_constraint */
static int pendulum2_size(const mjModel *m, int constraints) {
    return 1 + 2 * (m->nq - 1) + m->nv + constraints;
}
static int pendulum2_size_v5(const mjModel *m) {
    return pendulum2_size(m, 1);
}
static int pendulum2_size_v4(const mjModel *m) {
    return pendulum2_size(m, m->nv);
}

static void pendulum2_observe(const mj_task *task, const mj_model_ref *ref, const mjData *d,
                              float *out) {
    const mjModel *m = ref->model;
    *out++ = (float)d->qpos[0];
    for (int k = 1; k < m->nq; k++) *out++ = (float)sin(d->qpos[k]);
    for (int k = 1; k < m->nq; k++) *out++ = (float)cos(d->qpos[k]);
    for (int k = 0; k < m->nv; k++) *out++ = (float)clip10(d->qvel[k]);
    /* v5 keeps the first only */
    int constraints = task->custom_obs_size == pendulum2_size_v5 ? 1 : m->nv;
    for (int k = 0; k < constraints; k++) *out++ = (float)clip10(d->qfrc_constraint[k]);
}

static double pendulum2_reward(const mj_task *task, const mj_model_ref *ref, const mjData *d,
                               const float *action, const double before[2],
                               double terms[MJ_NUM_TERMS], bool *healthy) {
    (void)ref, (void)action, (void)before;
    double x = d->site_xpos[0], y = d->site_xpos[2];
    double v1 = d->qvel[1], v2 = d->qvel[2];
    double dist_penalty = 0.01 * x * x + (y - 2) * (y - 2);
    double vel_penalty = 1e-3 * v1 * v1 + 5e-3 * v2 * v2;
    *healthy = !(y <= 1.0);
    double alive = *healthy || task->bonus == MJ_BONUS_ALWAYS ? task->healthy_reward : 0.0;
    terms[MJ_TERM_SURVIVE] = alive;
    terms[MJ_TERM_DISTANCE_PENALTY] = -dist_penalty;
    terms[MJ_TERM_VELOCITY_PENALTY] = -vel_penalty;
    return alive - dist_penalty - vel_penalty;
}

/* ---- Reacher: the fingertip (body "fingertip") to the target (body "target") ---- */

enum { REACHER_FINGERTIP, REACHER_TARGET }; /* mj_model_ref.ids, in needs.bodies' order */

static void reacher_reset(const mj_task *task, const mj_model_ref *ref, mjData *d,
                          uint64_t *rng) {
    (void)task;
    const mjModel *m = ref->model;
    const double angle_noise = 0.1, goal_range = 0.2, velocity_noise = 0.005;
    for (int k = 0; k < m->nq; k++)
        d->qpos[k] = sk_rng_uniform(rng, -angle_noise, angle_noise) + m->qpos0[k];
    double goal[2];
    do { /* uniform in the disc of radius 0.2, by rejection as Gymnasium draws it */
        goal[0] = sk_rng_uniform(rng, -goal_range, goal_range);
        goal[1] = sk_rng_uniform(rng, -goal_range, goal_range);
    } while (!(sqrt(goal[0] * goal[0] + goal[1] * goal[1]) < goal_range));
    d->qpos[m->nq - 2] = goal[0];
    d->qpos[m->nq - 1] = goal[1];
    for (int k = 0; k < m->nv; k++)
        d->qvel[k] = k < m->nv - 2 ? sk_rng_uniform(rng, -velocity_noise, velocity_noise) : 0.0;
}

static void reacher_vector(const mj_model_ref *ref, const mjData *d, double out[3]) {
    for (int k = 0; k < 3; k++)
        out[k] = d->xpos[3 * ref->ids[REACHER_FINGERTIP] + k] -
                 d->xpos[3 * ref->ids[REACHER_TARGET] + k];
}

/* cos and sin of the arm's two angles, the target's position, the arm's velocities, the
 * fingertip less the target (v5: x and y; v4: x, y and z) */
static int reacher_size_v5(const mjModel *m) {
    return m->nq + 6;
}
static int reacher_size_v4(const mjModel *m) {
    return m->nq + 7;
}

static void reacher_observe(const mj_task *task, const mj_model_ref *ref, const mjData *d,
                            float *out) {
    const mjModel *m = ref->model;
    for (int k = 0; k < 2; k++) *out++ = (float)cos(d->qpos[k]);
    for (int k = 0; k < 2; k++) *out++ = (float)sin(d->qpos[k]);
    for (int k = 2; k < m->nq; k++) *out++ = (float)d->qpos[k];
    for (int k = 0; k < 2; k++) *out++ = (float)d->qvel[k];
    double vector[3];
    reacher_vector(ref, d, vector);
    int components = task->custom_obs_size == reacher_size_v5 ? 2 : 3;
    for (int k = 0; k < components; k++) *out++ = (float)vector[k];
}

static double reacher_distance(const mj_model_ref *ref, const mjData *d) {
    double v[3];
    reacher_vector(ref, d, v);
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* v4 pays the distance before the step: kept at the end of the last one */
static void reacher_carry_v4(const mj_task *task, const mj_model_ref *ref, const mjData *d,
                             double out[2]) {
    (void)task;
    out[0] = -reacher_distance(ref, d);
    out[1] = 0.0;
}

static double reacher_reward(const mj_task *task, const mj_model_ref *ref, const mjData *d,
                             const float *action, const double before[2],
                             double terms[MJ_NUM_TERMS], bool *healthy) {
    double ctrl_square = 0.0;
    for (int k = 0; k < ref->model->nu; k++) ctrl_square += (double)action[k] * action[k];
    double dist = task->carry ? before[0] : -reacher_distance(ref, d);
    terms[MJ_TERM_DIST] = dist;
    terms[MJ_TERM_CTRL] = -ctrl_square * task->ctrl_weight;
    *healthy = true;
    return terms[MJ_TERM_DIST] + terms[MJ_TERM_CTRL];
}

/* ---- Pusher: the arm's tip (body "tips_arm") pushes the object (body "object") to the
 * goal (body "goal") ---- */

enum { PUSHER_TIP, PUSHER_OBJECT, PUSHER_GOAL, PUSHER_ARM_JOINTS = 7 };

/* the arm at qpos0, the object uniform in [-0.3, 0] x [-0.2, 0.2] but more than 0.17 from
 * the goal at (0, 0) (by rejection), the arm's velocities noise, the object's and goal's 0 */
static void pusher_reset(const mj_task *task, const mj_model_ref *ref, mjData *d,
                         uint64_t *rng) {
    (void)task;
    const mjModel *m = ref->model;
    const double min_distance = 0.17, velocity_noise = 0.005;
    double object[2];
    do {
        object[0] = sk_rng_uniform(rng, -0.3, 0.0);
        object[1] = sk_rng_uniform(rng, -0.2, 0.2);
    } while (!(sqrt(object[0] * object[0] + object[1] * object[1]) > min_distance));
    for (int k = 0; k < m->nq; k++) d->qpos[k] = m->qpos0[k];
    d->qpos[m->nq - 4] = object[0];
    d->qpos[m->nq - 3] = object[1];
    d->qpos[m->nq - 2] = d->qpos[m->nq - 1] = 0.0;
    for (int k = 0; k < m->nv; k++)
        d->qvel[k] = k < m->nv - 4 ? sk_rng_uniform(rng, -velocity_noise, velocity_noise) : 0.0;
}

static int pusher_size(const mjModel *m) {
    (void)m;
    return 2 * PUSHER_ARM_JOINTS + 9;
}

/* the arm's 7 positions and velocities, then the tip's, the object's and the goal's xpos */
static void pusher_observe(const mj_task *task, const mj_model_ref *ref, const mjData *d,
                           float *out) {
    (void)task;
    for (int k = 0; k < PUSHER_ARM_JOINTS; k++) *out++ = (float)d->qpos[k];
    for (int k = 0; k < PUSHER_ARM_JOINTS; k++) *out++ = (float)d->qvel[k];
    for (int body = PUSHER_TIP; body <= PUSHER_GOAL; body++)
        for (int k = 0; k < 3; k++) *out++ = (float)d->xpos[3 * ref->ids[body] + k];
}

static double body_distance(const mj_model_ref *ref, const mjData *d, int a, int b) {
    double sum = 0.0;
    for (int k = 0; k < 3; k++) {
        double v = d->xpos[3 * ref->ids[a] + k] - d->xpos[3 * ref->ids[b] + k];
        sum += v * v;
    }
    return sqrt(sum);
}

static double pusher_reward(const mj_task *task, const mj_model_ref *ref, const mjData *d,
                            const float *action, const double before[2],
                            double terms[MJ_NUM_TERMS], bool *healthy) {
    (void)before;
    const double near_weight = 0.5, dist_weight = 1.0;
    double ctrl_square = 0.0;
    for (int k = 0; k < ref->model->nu; k++) ctrl_square += (double)action[k] * action[k];
    terms[MJ_TERM_NEAR] = -body_distance(ref, d, PUSHER_OBJECT, PUSHER_TIP) * near_weight;
    terms[MJ_TERM_DIST] = -body_distance(ref, d, PUSHER_OBJECT, PUSHER_GOAL) * dist_weight;
    terms[MJ_TERM_CTRL] = -ctrl_square * task->ctrl_weight;
    *healthy = true;
    return terms[MJ_TERM_DIST] + terms[MJ_TERM_CTRL] + terms[MJ_TERM_NEAR];
}

/* ---- the rows ---- */

#define LOCOMOTION_TERMS .num_terms = 3, .terms = {MJ_TERM_FORWARD, MJ_TERM_CTRL, MJ_TERM_SURVIVE}
#define RUNNER_TERMS .num_terms = 2, .terms = {MJ_TERM_FORWARD, MJ_TERM_CTRL}

#define HALF_CHEETAH(version)                                                                      \
    {.id = "HalfCheetah-" version, .model = "half_cheetah.xml",                                    \
     .summary = "a planar cheetah runs forward (MuJoCo; Gymnasium's " version ")",                 \
     .preset = "mujoco_halfcheetah", .frame_skip = 5, .max_steps = 1000, .qvel_noise_kind = MJ_NOISE_NORMAL, .noise_scale = 0.1,   \
     .solved = 4800, .qpos_skip = 1, .track = MJ_TRACK_QPOS, .forward_weight = 1.0,                \
     .ctrl_weight = 0.1,                                                                           \
     .needs = {.min_nq = 2, .min_nv = 1, .min_nu = 1, .min_nbody = 2}, .obs_size = 17,             \
     .action_dim = 6, .action_low = -1, .action_high = 1, RUNNER_TERMS}

#define HOPPER(version, bonus_rule)                                                                \
    {.id = "Hopper-" version, .model = "hopper.xml",                                               \
     .summary = "a one-legged planar hopper hops forward without falling (MuJoCo; " version ")",  \
     .frame_skip = 4, .max_steps = 1000, .solved = 3800, .noise_scale = 5e-3, .qpos_skip = 1,     \
     .qvel_clip = 10.0, .track = MJ_TRACK_QPOS, .forward_weight = 1.0, .ctrl_weight = 1e-3,        \
     .healthy_reward = 1.0, .bonus = bonus_rule, .healthy = hopper_healthy,                                               \
     .needs = {.min_nq = 3, .min_nv = 1, .min_nu = 1, .min_nbody = 2}, .obs_size = 11,             \
     .action_dim = 3, .action_low = -1, .action_high = 1, LOCOMOTION_TERMS}

#define WALKER(version, file, bonus_rule)                                                          \
    {.id = "Walker2d-" version, .model = file,                                                     \
     .summary = "a two-legged planar walker walks forward without falling (MuJoCo; " version ")", \
     .frame_skip = 4, .max_steps = 1000, .solved = NAN, .noise_scale = 5e-3, .qpos_skip = 1,      \
     .qvel_clip = 10.0, .track = MJ_TRACK_QPOS, .forward_weight = 1.0, .ctrl_weight = 1e-3,        \
     .healthy_reward = 1.0, .bonus = bonus_rule, .healthy = walker_healthy,                                               \
     .needs = {.min_nq = 3, .min_nv = 1, .min_nu = 1, .min_nbody = 2}, .obs_size = 17,             \
     .action_dim = 6, .action_low = -1, .action_high = 1, LOCOMOTION_TERMS}

#define ANT_COMMON(version)                                                                        \
    .id = "Ant-" version, .model = "ant.xml",                                                      \
    .summary = "a four-legged ant walks forward in 3D (MuJoCo; Gymnasium's " version ")",          \
    .frame_skip = 5, .max_steps = 1000, .solved = 6000, .qvel_noise_kind = MJ_NOISE_NORMAL,        \
    .noise_scale = 0.1, .qpos_skip = 2, .track = MJ_TRACK_BODY1_XPOS, .forward_weight = 1.0, .ctrl_weight = 0.5,       \
    .healthy_reward = 1.0, .healthy = ant_healthy,                                                 \
    .needs = {.min_nq = 3, .min_nv = 1, .min_nu = 1, .min_nbody = 2}, .action_dim = 8,             \
    .action_low = -1, .action_high = 1

#define HUMANOID_COMMON(version, size_fn)                                                          \
    .id = "Humanoid-" version, .model = "humanoid.xml",                                            \
    .summary = "a 3D humanoid walks forward without falling (MuJoCo; Gymnasium's " version ")",   \
    .frame_skip = 5, .max_steps = 1000, .solved = NAN, .noise_scale = 1e-2, .qpos_skip = 2,        \
    .extra_obs_size = size_fn, .extra_obs = humanoid_obs, .track = MJ_TRACK_MASS_CENTRE,          \
    .forward_weight = 1.25, .ctrl_weight = 0.1, .healthy_reward = 5.0,                             \
    .healthy = humanoid_healthy,                                                                   \
    .needs = {.min_nq = 3, .min_nv = 6, .min_nu = 1, .min_nbody = 2}, .action_dim = 17,            \
    .action_low = -0.4f, .action_high = 0.4f

#define PENDULUM2(version, size, size_fn, bonus_rule)                                              \
    {.id = "InvertedDoublePendulum-" version, .model = "inverted_double_pendulum.xml",            \
     .summary = "a cart balances a two-link pole (MuJoCo; Gymnasium's " version ")",              \
     .frame_skip = 5, .max_steps = 1000, .solved = 9100, .qvel_noise_kind = MJ_NOISE_NORMAL,      \
     .noise_scale = 0.1, .healthy_reward = 10.0, .bonus = bonus_rule,                              \
     .custom_obs_size = size_fn, .observe = pendulum2_observe, .reward = pendulum2_reward,         \
     .needs = {.min_nq = 2, .min_nv = 3, .min_nu = 1, .min_nbody = 2, .min_nsite = 1},            \
     .obs_size = size, .action_dim = 1, .action_low = -1, .action_high = 1, .num_terms = 3,       \
     .terms = {MJ_TERM_SURVIVE, MJ_TERM_DISTANCE_PENALTY, MJ_TERM_VELOCITY_PENALTY}}

#define REACHER(version, size, size_fn, carry_fn)                                                  \
    {.id = "Reacher-" version, .model = "reacher.xml",                                             \
     .summary = "a two-link arm reaches a random target (MuJoCo; Gymnasium's " version ")",       \
     .frame_skip = 2, .max_steps = 50, .solved = -3.75, .ctrl_weight = 1.0,                        \
     .reset_state = reacher_reset, .custom_obs_size = size_fn, .observe = reacher_observe,        \
     .reward = reacher_reward, .carry = carry_fn,                                                  \
     .needs = {.min_nq = 4, .min_nv = 3, .min_nu = 1, .min_nbody = 2,                              \
               .bodies = {"fingertip", "target"}},                                                 \
     .obs_size = size, .action_dim = 2, .action_low = -1, .action_high = 1, .num_terms = 2,       \
     .terms = {MJ_TERM_DIST, MJ_TERM_CTRL}}

#define PUSHER(version, file)                                                                      \
    {.id = "Pusher-" version, .model = file,                                                       \
     .summary = "a 7-joint arm pushes an object to a goal (MuJoCo; Gymnasium's " version ")",     \
     .frame_skip = 5, .max_steps = 100, .solved = 0.0, .ctrl_weight = 0.1,                         \
     .reset_state = pusher_reset, .custom_obs_size = pusher_size, .observe = pusher_observe,      \
     .reward = pusher_reward,                                                                      \
     .needs = {.min_nq = 11, .min_nv = 11, .min_nu = 1, .min_nbody = 2,                            \
               .bodies = {"tips_arm", "object", "goal"}},                                          \
     .obs_size = 23, .action_dim = 7, .action_low = -2, .action_high = 2, .num_terms = 3,         \
     .terms = {MJ_TERM_DIST, MJ_TERM_CTRL, MJ_TERM_NEAR}}

const mj_task mj_tasks[MJ_NUM_TASKS] = {
    HALF_CHEETAH("v5"),
    HOPPER("v5", MJ_BONUS_WHILE_HEALTHY),
    WALKER("v5", "walker2d_v5.xml", MJ_BONUS_WHILE_HEALTHY),
    {.id = "Swimmer-v5", .model = "swimmer.xml",
     .summary = "a three-link swimmer swims forward in a viscous fluid (MuJoCo; v5)",
     .frame_skip = 4, .max_steps = 1000, .solved = 360, .noise_scale = 0.1, .qpos_skip = 2,
     .track = MJ_TRACK_QPOS, .forward_weight = 1.0, .ctrl_weight = 1e-4,
     .needs = {.min_nq = 3, .min_nv = 1, .min_nu = 1, .min_nbody = 2}, .obs_size = 8,
     .action_dim = 2, .action_low = -1, .action_high = 1, RUNNER_TERMS},
    {.id = "InvertedPendulum-v5", .model = "inverted_pendulum.xml",
     .summary = "a cart balances an upright pole (MuJoCo; Gymnasium's v5)",
     .frame_skip = 2, .max_steps = 1000, .solved = 950, .noise_scale = 0.01, .healthy_reward = 1.0,
     .healthy = pendulum_healthy, .needs = {.min_nq = 2, .min_nv = 1, .min_nu = 1, .min_nbody = 2},
     .obs_size = 4, .action_dim = 1, .action_low = -3, .action_high = 3, .num_terms = 1,
     .terms = {MJ_TERM_SURVIVE}},
    {ANT_COMMON("v5"), .preset = "mujoco_ant", .extra_obs_size = cfrc_obs_size, .extra_obs = cfrc_obs,
     .cfrc_obs_optional = true,
     .contact_weight = 5e-4, .contact_cost = cfrc_cost, .obs_size = 105, .num_terms = 4,
     .terms = {MJ_TERM_FORWARD, MJ_TERM_CTRL, MJ_TERM_SURVIVE, MJ_TERM_CONTACT}},
    /* v4 where it differs */
    HOPPER("v4", MJ_BONUS_ALWAYS),
    WALKER("v4", "walker2d.xml", MJ_BONUS_ALWAYS),
    {.id = "InvertedPendulum-v4", .model = "inverted_pendulum.xml",
     .summary = "a cart balances an upright pole (MuJoCo; Gymnasium's v4)",
     .frame_skip = 2, .max_steps = 1000, .solved = 950, .noise_scale = 0.01, .healthy_reward = 1.0,
     .bonus = MJ_BONUS_ALWAYS, .healthy = pendulum_healthy,
     .needs = {.min_nq = 2, .min_nv = 1, .min_nu = 1, .min_nbody = 2}, .obs_size = 4,
     .action_dim = 1, .action_low = -3, .action_high = 3, .num_terms = 1,
     .terms = {MJ_TERM_SURVIVE}},
    {ANT_COMMON("v4"), .bonus = MJ_BONUS_ALWAYS, .obs_size = 27, LOCOMOTION_TERMS},
    PENDULUM2("v5", 9, pendulum2_size_v5, MJ_BONUS_WHILE_HEALTHY),
    PENDULUM2("v4", 11, pendulum2_size_v4, MJ_BONUS_ALWAYS),
    REACHER("v5", 10, reacher_size_v5, NULL),
    REACHER("v4", 11, reacher_size_v4, reacher_carry_v4),
    /* no Pusher-v4: Gymnasium runs it on MuJoCo 2 only (it refuses mujoco >= 3) */
    PUSHER("v5", "pusher_v5.xml"),
    {HUMANOID_COMMON("v5", humanoid_size_v5), .contact_weight = 5e-7,
     .contact_cost = humanoid_contact_cost, .obs_size = 348, .num_terms = 4,
     .terms = {MJ_TERM_FORWARD, MJ_TERM_CTRL, MJ_TERM_SURVIVE, MJ_TERM_CONTACT}},
    /* v4: the bonus as Hopper-v4, no contact cost, 376 values (the world body's parts too) */
    {HUMANOID_COMMON("v4", humanoid_size_v4), .bonus = MJ_BONUS_ALWAYS, .obs_size = 376,
     LOCOMOTION_TERMS},
};

const mj_task *mj_task_find(const char *id) {
    for (int k = 0; k < MJ_NUM_TASKS; k++)
        if (strcmp(mj_tasks[k].id, id) == 0) return &mj_tasks[k];
    return NULL;
}

/* ---- the env tables: filled from the rows when the module loads ---- */

static const char *const g_term_names[MJ_NUM_TERMS] = {
    [MJ_TERM_FORWARD] = "reward_forward", [MJ_TERM_CTRL] = "reward_ctrl",
    [MJ_TERM_SURVIVE] = "reward_survive", [MJ_TERM_CONTACT] = "reward_contact",
    [MJ_TERM_DIST] = "reward_dist",       [MJ_TERM_DISTANCE_PENALTY] = "distance_penalty",
    [MJ_TERM_VELOCITY_PENALTY] = "velocity_penalty", [MJ_TERM_NEAR] = "reward_near"};

/* create has no table to tell the tasks apart: one function per row */
#define CREATE(row)                                                                                \
    static sk_status create_##row(void **state, int num_envs, const sk_config *cfg) {             \
        return mj_create(&mj_tasks[row], state, num_envs, cfg);                                   \
    }
CREATE(0) CREATE(1) CREATE(2) CREATE(3) CREATE(4) CREATE(5) CREATE(6) CREATE(7) CREATE(8)
CREATE(9) CREATE(10) CREATE(11) CREATE(12) CREATE(13) CREATE(14) CREATE(15) CREATE(16)
static sk_status (*const g_creates[MJ_NUM_TASKS])(void **, int, const sk_config *) = {
    create_0, create_1, create_2, create_3, create_4,
    create_5, create_6, create_7, create_8, create_9, create_10, create_11, create_12, create_13,
    create_14, create_15, create_16};

static sk_env_def g_tables[MJ_NUM_TASKS];
/* mj_extras with each task's preset */
static sk_env_extras g_extras[MJ_NUM_TASKS];
const sk_env_def *const mj_env_tables[MJ_NUM_TASKS + 1] = {
    &g_tables[0], &g_tables[1], &g_tables[2], &g_tables[3], &g_tables[4],
    &g_tables[5], &g_tables[6], &g_tables[7], &g_tables[8], &g_tables[9], &g_tables[10],
    &g_tables[11], &g_tables[12], &g_tables[13], &g_tables[14], &g_tables[15], &g_tables[16], NULL};

/* Runs when the module is loaded, before skinner reads its tables. */
__attribute__((constructor)) static void fill_tables(void) {
    for (int row = 0; row < MJ_NUM_TASKS; row++) {
        const mj_task *task = &mj_tasks[row];
        sk_env_def *def = &g_tables[row];
        g_extras[row] = mj_extras;
        if (task->preset) g_extras[row].preset = task->preset;
        *def = (sk_env_def){
            .id = task->id,
            .summary = task->summary,
            .obs_size = task->obs_size,
            .action_space = {.kind = SK_SPACE_CONTINUOUS, .dim = task->action_dim},
            .max_episode_steps = task->max_steps,
            .solved_threshold = task->solved,
            .num_log_fields = 2 + task->num_terms,
            .log_names = {"return", "length"},
            .create = g_creates[row],
            .destroy = mj_destroy,
            .reset = mj_reset,
            .step = mj_step_envs,
            .state_arrays = mj_state_arrays,
            .check_state = mj_check_state,
            .extras = &g_extras[row],
            .configure = mj_configure,
        };
        for (int k = 0; k < task->action_dim; k++) {
            def->action_space.low[k] = task->action_low;
            def->action_space.high[k] = task->action_high;
        }
        for (int t = 0; t < task->num_terms; t++) def->log_names[2 + t] = g_term_names[task->terms[t]];
    }
}
