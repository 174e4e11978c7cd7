/*
 * The MuJoCo env, one loop for every task (mujoco_env.h): the task's row says
 * what differs. What Gymnasium's mujoco_env.py does, in C:
 *   reset: mj_resetData, qpos = qpos0 + noise, qvel = noise, mj_forward;
 *   step:  ctrl = the raw action (MuJoCo clamps a limited ctrl itself), mj_step
 *          frame_skip times, mj_rnePostConstraint (cfrc_ext for the contact
 *          terms), then the task reads mjData as Gymnasium reads it: positions
 *          after mj_step describe the state before its last integration.
 *
 * Each env's mjData is a workspace: the state that persists is the SoA arrays
 * below (what a checkpoint keeps), set into mjData at the start of a step and
 * read back at its end. mj_step depends on MuJoCo's integration state alone,
 * so a restored run steps bit for bit as the saved one would have; what a
 * task reads before the frames (the position its velocity differences) is
 * kept in `before` for the same reason.
 */
#include "mujoco_env.h"
#include "mujoco_render.h"

#include <float.h>
#include <string.h>

typedef struct mj_state {
    const mj_task *task;
    mj_model_ref ref;
    const mjModel *model;
    int num_envs, state_size, obs_size;
    bool extra_obs;    /* the task's extra_obs is observed (mj_extra_obs_on) */
    double dt; /* timestep x frame_skip */
    mjData **data;     /* (num_envs) workspaces */
    double *physics;   /* (num_envs, state_size) MJ_STATE_SPEC's state */
    double *before;    /* (num_envs, 2) the tracked position after the last step */
    double *episode;   /* (num_envs, 1 + MJ_NUM_TERMS) the return and each term's sum */
    int32_t *elapsed;  /* (num_envs) steps into the episode */
    uint64_t *rng;     /* (num_envs) reset noise */
} mj_state;

#define EPISODE_WIDTH (1 + MJ_NUM_TERMS)

int mj_obs_size(const mj_task *task, const mjModel *m, bool extra_obs) {
    if (task->custom_obs_size) return task->custom_obs_size(m);
    return m->nq - task->qpos_skip + m->nv +
           (extra_obs && task->extra_obs_size ? task->extra_obs_size(m) : 0);
}

sk_status mj_extra_obs_on(const mj_task *task, const sk_config *cfg, bool *on) {
    *on = true;
    if (!task->cfrc_obs_optional) return SK_OK;
    return sk_cfg_bool(cfg, "env.include_cfrc_ext_in_observation", true, on);
}

/* ---- configure and create ---- */

sk_status mj_configure(sk_env_def *def, const sk_config *cfg) {
    const mj_task *task = mj_task_find(def->id);
    mj_model_ref ref;
    bool extra_obs = true;
    sk_status status = task ? mj_model_for(task, cfg, &ref) : SK_ERR_INVALID;
    if (status == SK_OK) status = mj_extra_obs_on(task, cfg, &extra_obs);
    if (status != SK_OK) return status;
    const mjModel *m = ref.model;
    def->obs_size = mj_obs_size(task, m, extra_obs);
    def->max_episode_steps = task->max_steps;
    def->action_space.dim = m->nu;
    /* Gymnasium's Box: the model's ctrlrange as float32, limited or not */
    for (int k = 0; k < m->nu; k++) {
        def->action_space.low[k] = (float)m->actuator_ctrlrange[2 * k];
        def->action_space.high[k] = (float)m->actuator_ctrlrange[2 * k + 1];
    }
    return SK_OK;
}

void mj_destroy(void *state) {
    mj_state *s = state;
    if (!s) return;
    for (int e = 0; s->data && e < s->num_envs; e++)
        if (s->data[e]) mj_deleteData(s->data[e]);
    sk_free(s->data);
    sk_free(s->physics);
    sk_free(s->before);
    sk_free(s->episode);
    sk_free(s->elapsed);
    sk_free(s->rng);
    sk_free(s);
}

sk_status mj_create(const mj_task *task, void **state, int num_envs, const sk_config *cfg) {
    mj_model_ref ref;
    bool extra_obs = true;
    sk_status status = mj_model_for(task, cfg, &ref);
    if (status == SK_OK) status = mj_extra_obs_on(task, cfg, &extra_obs);
    if (status != SK_OK) return status;
    mj_state *s = sk_alloc(sizeof *s);
    if (!s) return sk_fail(SK_ERR_NOMEM, "%s: out of memory", task->id);
    const mjModel *m = ref.model;
    *s = (mj_state){.task = task, .ref = ref, .model = m, .num_envs = num_envs,
                    .state_size = mj_stateSize(m, MJ_STATE_SPEC),
                    .obs_size = mj_obs_size(task, m, extra_obs), .extra_obs = extra_obs,
                    .dt = m->opt.timestep * task->frame_skip};
    size_t n = (size_t)num_envs;
    s->data = sk_alloc(n * sizeof *s->data);
    s->physics = sk_alloc(n * (size_t)s->state_size * sizeof(double));
    s->before = sk_alloc(n * 2 * sizeof(double));
    s->episode = sk_alloc(n * EPISODE_WIDTH * sizeof(double));
    s->elapsed = sk_alloc(n * sizeof(int32_t));
    s->rng = sk_alloc(n * sizeof(uint64_t));
    bool ok = s->data && s->physics && s->before && s->episode && s->elapsed && s->rng;
    for (int e = 0; ok && e < num_envs; e++) ok = (s->data[e] = mj_makeData(m)) != NULL;
    if (!ok) {
        mj_destroy(s);
        return sk_fail(SK_ERR_NOMEM, "%s: out of memory for %d envs' MuJoCo data", task->id,
                       num_envs);
    }
    /* a state that steps before any reset: the model's own initial state */
    for (int e = 0; e < num_envs; e++)
        mj_getState(m, s->data[e], s->physics + (size_t)e * (size_t)s->state_size,
                    MJ_STATE_SPEC);
    *state = s;
    return SK_OK;
}

/* ---- what the task reads ---- */

static void tracked(const mj_state *s, const mjData *d, double out[2]) {
    const mjModel *m = s->model;
    out[0] = out[1] = 0.0;
    switch (s->task->track) {
    case MJ_TRACK_NONE: break;
    case MJ_TRACK_QPOS:
        out[0] = d->qpos[0];
        out[1] = m->nq > 1 ? d->qpos[1] : 0.0;
        break;
    case MJ_TRACK_BODY1_XPOS:
        out[0] = d->xpos[3];
        out[1] = d->xpos[4];
        break;
    case MJ_TRACK_MASS_CENTRE: {
        double total = 0.0;
        for (int b = 0; b < m->nbody; b++) {
            out[0] += m->body_mass[b] * d->xipos[3 * b];
            out[1] += m->body_mass[b] * d->xipos[3 * b + 1];
            total += m->body_mass[b];
        }
        out[0] /= total;
        out[1] /= total;
        break;
    }
    }
}

static void observe(const mj_state *s, const mjData *d, float *out) {
    const mjModel *m = s->model;
    const mj_task *task = s->task;
    if (task->observe) {
        task->observe(task, &s->ref, d, out);
        return;
    }
    for (int k = task->qpos_skip; k < m->nq; k++) *out++ = (float)d->qpos[k];
    for (int k = 0; k < m->nv; k++) {
        double v = d->qvel[k];
        if (task->qvel_clip > 0.0) v = v < -task->qvel_clip ? -task->qvel_clip
                                       : v > task->qvel_clip ? task->qvel_clip : v;
        *out++ = (float)v;
    }
    if (task->extra_obs && s->extra_obs) task->extra_obs(task, m, d, out);
}

static double *physics_of(const mj_state *s, int e) {
    return s->physics + (size_t)e * (size_t)s->state_size;
}

/* After reset, set_physics and every step: the state kept, the position the
 * next step differences, the observation. */
static void settle(mj_state *s, int e, float *obs_row) {
    mjData *d = s->data[e];
    mj_getState(s->model, d, physics_of(s, e), MJ_STATE_SPEC);
    if (s->task->carry) s->task->carry(s->task, &s->ref, d, s->before + 2 * (size_t)e);
    else tracked(s, d, s->before + 2 * (size_t)e);
    observe(s, d, obs_row);
}

static void new_episode(mj_state *s, int e, float *obs_row) {
    const mjModel *m = s->model;
    const mj_task *task = s->task;
    mjData *d = s->data[e];
    uint64_t *rng = &s->rng[e];
    double scale = task->noise_scale;
    mj_resetData(m, d);
    if (task->reset_state) {
        task->reset_state(task, &s->ref, d, rng);
    } else {
        for (int k = 0; k < m->nq; k++)
            d->qpos[k] = m->qpos0[k] + sk_rng_uniform(rng, -scale, scale);
        for (int k = 0; k < m->nv; k++)
            d->qvel[k] = task->qvel_noise_kind == MJ_NOISE_NORMAL
                             ? scale * sk_rng_normal(rng)
                             : sk_rng_uniform(rng, -scale, scale);
    }
    mj_forward(m, d);
    s->elapsed[e] = 0;
    memset(s->episode + (size_t)e * EPISODE_WIDTH, 0, EPISODE_WIDTH * sizeof(double));
    settle(s, e, obs_row);
}

static float *obs_row(const mj_state *s, float *obs, int e) {
    return obs + (size_t)e * (size_t)s->obs_size;
}

void mj_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed) {
    mj_state *s = state;
    for (int e = lo; e < hi; e++) {
        s->rng[e] = sk_rng_seed(seed, (uint64_t)e);
        new_episode(s, e, obs_row(s, io->obs, e));
    }
}

/* forward weight x velocity + survival bonus - ctrl weight x |a|^2 - contact cost */
static double locomotion_reward(const mj_state *s, const mjData *d, int e, double ctrl_square,
                                double terms[MJ_NUM_TERMS], bool *healthy) {
    const mj_task *task = s->task;
    const double *before = s->before + 2 * (size_t)e;
    double after[2];
    tracked(s, d, after);
    double velocity = (after[0] - before[0]) / s->dt;
    *healthy = task->healthy ? task->healthy(task, s->model, d) : true;
    terms[MJ_TERM_FORWARD] = task->forward_weight * velocity;
    terms[MJ_TERM_SURVIVE] =
        *healthy || task->bonus == MJ_BONUS_ALWAYS ? task->healthy_reward : 0.0;
    double ctrl_cost = task->ctrl_weight * ctrl_square;
    double contact_cost = task->contact_cost ? task->contact_cost(task, s->model, d) : 0.0;
    terms[MJ_TERM_CTRL] = -ctrl_cost;
    terms[MJ_TERM_CONTACT] = -contact_cost;
    /* Gymnasium's order: the rewards, less the costs */
    return (terms[MJ_TERM_FORWARD] + terms[MJ_TERM_SURVIVE]) - (ctrl_cost + contact_cost);
}

void mj_step_envs(void *state, const sk_env_io *io, int lo, int hi) {
    mj_state *s = state;
    const mjModel *m = s->model;
    const mj_task *task = s->task;
    int nu = m->nu;
    for (int e = lo; e < hi; e++) {
        mjData *d = s->data[e];
        mj_setState(m, d, physics_of(s, e), MJ_STATE_SPEC);
        const float *action = io->actions_continuous + (size_t)e * (size_t)nu;
        double ctrl_square = 0.0;
        for (int k = 0; k < nu; k++) {
            d->ctrl[k] = action[k];
            ctrl_square += d->ctrl[k] * d->ctrl[k];
        }
        for (int f = 0; f < task->frame_skip; f++) mj_step(m, d);
        mj_rnePostConstraint(m, d);

        double terms[MJ_NUM_TERMS] = {0};
        bool healthy = true;
        double reward = task->reward ? task->reward(task, &s->ref, d, action,
                                                    s->before + 2 * (size_t)e, terms, &healthy)
                                     : locomotion_reward(s, d, e, ctrl_square, terms, &healthy);
        io->rewards[e] = (float)reward;

        double *episode = s->episode + (size_t)e * EPISODE_WIDTH;
        episode[0] += (double)io->rewards[e];
        for (int t = 0; t < MJ_NUM_TERMS; t++) episode[1 + t] += terms[t];
        s->elapsed[e]++;
        bool terminated = !healthy;
        bool truncated = !terminated && s->elapsed[e] >= task->max_steps;
        io->terminated[e] = terminated;
        io->truncated[e] = truncated;
        float *obs = obs_row(s, io->obs, e);
        settle(s, e, obs);
        if (!terminated && !truncated) continue;
        memcpy(obs_row(s, io->final_obs, e), obs, (size_t)s->obs_size * sizeof(float));
        float *log = io->episode_log + (size_t)e * (size_t)(2 + task->num_terms);
        log[0] = (float)episode[0];
        log[1] = (float)s->elapsed[e];
        for (int t = 0; t < task->num_terms; t++) log[2 + t] = (float)episode[1 + task->terms[t]];
        new_episode(s, e, obs);
    }
}

/* ---- checkpoints ---- */

int mj_state_arrays(void *state, sk_env_array *arrays) {
    mj_state *s = state;
    arrays[0] = (sk_env_array){"physics", SK_ARRAY_F64, s->state_size, s->physics, false, 0, 0};
    arrays[1] = (sk_env_array){"before", SK_ARRAY_F64, 2, s->before, true, -DBL_MAX, DBL_MAX};
    arrays[2] = (sk_env_array){"episode", SK_ARRAY_F64, EPISODE_WIDTH, s->episode, true,
                               -DBL_MAX, DBL_MAX};
    arrays[3] = (sk_env_array){"elapsed", SK_ARRAY_I32, 1, s->elapsed, true, 0,
                               s->task->max_steps - 1};
    arrays[4] = (sk_env_array){"rng", SK_ARRAY_U64, 1, s->rng, false, 0, 0};
    return 5;
}

/* The parts of MJ_STATE_SPEC's state, in MuJoCo's order (mjtState's bits). */
static const char *const g_state_parts[] = {
    "time", "qpos", "qvel", "act", "qacc_warmstart", "ctrl", "qfrc_applied", "xfrc_applied",
    "eq_active", "mocap_pos", "mocap_quat", "userdata", "plugin_state"};
_Static_assert(sizeof g_state_parts / sizeof g_state_parts[0] == mjNSTATE,
               "one name per mjtState bit");

/* A restored physics state MuJoCo can step: every value finite and within
 * mjMAXVAL (past it MuJoCo resets the env itself, with a warning), time not
 * negative, each constraint on or off. */
sk_status mj_check_state(const void *state, int num_envs) {
    const mj_state *s = state;
    const mjModel *m = s->model;
    for (int e = 0; e < num_envs; e++) {
        const double *values = physics_of(s, e);
        int at = 0;
        for (int part = 0; part < mjNSTATE; part++) {
            if (!(MJ_STATE_SPEC & (1u << part))) continue;
            int size = mj_stateSize(m, 1u << part);
            for (int k = 0; k < size; k++) {
                double v = values[at + k];
                bool bad = !(v >= -mjMAXVAL && v <= mjMAXVAL) ||
                           (part == 0 && v < 0.0) ||
                           ((1u << part) == mjSTATE_EQ_ACTIVE && v != 0.0 && v != 1.0);
                if (bad)
                    return sk_fail(SK_ERR_CORRUPT,
                                   "%s: env.physics of env %d holds %s[%d] = %.17g (expected a "
                                   "finite value within +-%g%s)",
                                   s->task->id, e, g_state_parts[part], k, v, mjMAXVAL,
                                   part == 0 ? ", not negative"
                                   : (1u << part) == mjSTATE_EQ_ACTIVE ? ", 0 or 1" : "");
            }
            at += size;
        }
    }
    return SK_OK;
}

/* ---- the physics state from outside (sk_vec_set_physics, Python's set_state) ---- */

static void physics_sizes(const void *state, int *qpos_size, int *qvel_size) {
    const mj_state *s = state;
    *qpos_size = s->model->nq;
    *qvel_size = s->model->nv;
}

static void get_physics(const void *state, int index, double *qpos, double *qvel) {
    const mj_state *s = state;
    const double *values = physics_of(s, index);
    int nq = s->model->nq;
    memcpy(qpos, values + 1, (size_t)nq * sizeof(double)); /* after time */
    memcpy(qvel, values + 1 + nq, (size_t)s->model->nv * sizeof(double));
}

static sk_status set_physics(void *state, int index, const double *qpos, const double *qvel,
                             float *obs) {
    mj_state *s = state;
    const mjModel *m = s->model;
    for (int k = 0; k < m->nq + m->nv; k++) {
        double v = k < m->nq ? qpos[k] : qvel[k - m->nq];
        if (!(v >= -mjMAXVAL && v <= mjMAXVAL))
            return sk_fail(SK_ERR_INVALID, "%s: %s[%d] = %g (expected a finite value within +-%g)",
                           s->task->id, k < m->nq ? "qpos" : "qvel", k < m->nq ? k : k - m->nq,
                           v, mjMAXVAL);
    }
    mjData *d = s->data[index];
    mj_setState(m, d, physics_of(s, index), MJ_STATE_SPEC);
    memcpy(d->qpos, qpos, (size_t)m->nq * sizeof(double));
    memcpy(d->qvel, qvel, (size_t)m->nv * sizeof(double));
    mj_forward(m, d);
    settle(s, index, obs);
    return SK_OK;
}

/* A picture of env `index` (render.c): tracking body 1 on the locomotion tasks */
static void render(const void *state, int index, uint8_t *rgb) {
    const mj_state *s = state;
    mj_render_state(s->model, physics_of(s, index), MJ_STATE_SPEC, s->task->track != MJ_TRACK_NONE,
                    MJ_RENDER_WIDTH, MJ_RENDER_HEIGHT, rgb);
}

const sk_env_extras mj_extras = {
    .preset = "mujoco", /* configs/mujoco.ini; a task may name its own (mj_task.preset) */
    .bench_num_envs = 256,
    .render_width = MJ_RENDER_WIDTH,
    .render_height = MJ_RENDER_HEIGHT,
    .render = render,
    .physics_sizes = physics_sizes,
    .get_physics = get_physics,
    .set_physics = set_physics,
};
