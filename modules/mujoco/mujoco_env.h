/*
 * The MuJoCo module's internals (docs/mujoco.md): Gymnasium's MuJoCo tasks on
 * MuJoCo's C library, one read-only mjModel per model file shared by every env
 * that steps it, one mjData per env.
 *
 * A task is one row of mj_task (tasks.c): which model, how an observation is
 * put together, what the reward weighs, when the body is healthy, its noise,
 * frame_skip and step limit. env.c runs every row the same way: reset as
 * Gymnasium's mujoco_env.py does (mj_resetData, qpos0 + noise, qvel noise,
 * mj_forward), step as it does (ctrl = the raw action, mj_step frame_skip
 * times, mj_rnePostConstraint), the task's functions read mjData after.
 */
#ifndef SK_MUJOCO_ENV_H
#define SK_MUJOCO_ENV_H

#include <mujoco/mujoco.h>
#include <skinner/env.h>

/* The part of mjData a checkpoint keeps: MuJoCo's integration state (time,
 * qpos, qvel, act, the warm start, ctrl, applied forces, mocap, user data):
 * mj_step's result depends on it alone (MuJoCo's documentation of mjtState). */
#define MJ_STATE_SPEC mjSTATE_INTEGRATION

/* Reward terms each task may log, in this order (Gymnasium's info keys). */
enum { MJ_TERM_FORWARD, MJ_TERM_CTRL, MJ_TERM_SURVIVE, MJ_TERM_CONTACT, MJ_TERM_DIST,
       MJ_TERM_DISTANCE_PENALTY, MJ_TERM_VELOCITY_PENALTY, MJ_TERM_NEAR, MJ_NUM_TERMS };

/* How reset draws the noise added to qpos0 and to the zero velocities. */
typedef enum mj_noise_kind { MJ_NOISE_UNIFORM, MJ_NOISE_NORMAL } mj_noise_kind;

/* Which position a task differentiates for its forward velocity (read before
 * and after the frames, divided by dt), as Gymnasium reads it. */
typedef enum mj_track {
    MJ_TRACK_NONE,
    MJ_TRACK_QPOS,        /* qpos[0] and qpos[1] (a slider root) */
    MJ_TRACK_BODY1_XPOS,  /* xpos of body 1 (Ant's torso) */
    MJ_TRACK_MASS_CENTRE, /* the mass-weighted mean of xipos (Humanoid) */
} mj_track;

/* When the survival bonus is paid: v5 only while healthy; v4 on every step
 * (also the terminating one) since the episode ends when it is not. */
typedef enum mj_bonus { MJ_BONUS_WHILE_HEALTHY, MJ_BONUS_ALWAYS } mj_bonus;

typedef struct mj_task mj_task;

/* One model the task reads and the sizes it needs: names of bodies, joints
 * and sites that must exist, and at least min_nq positions. */
typedef struct mj_needs {
    int min_nq, min_nv, min_nu, min_nbody, min_nsite;
    const char *bodies[4];
    const char *sites[4];
} mj_needs;

/* A loaded model: shared read-only by every env (model.c keeps one per
 * source for the life of the process). */
typedef struct mj_model_ref {
    const mjModel *model;
    int ids[8]; /* the task's bodies then sites, resolved once (mj_needs order) */
} mj_model_ref;

struct mj_task {
    const char *id;        /* "HalfCheetah-v5" */
    const char *model;     /* the embedded file, "half_cheetah.xml" */
    const char *summary;
    const char *preset; /* the task's configs/PRESET.ini (sk_env_extras.preset); NULL: "mujoco" */
    int frame_skip;
    int max_steps;
    double solved; /* Gymnasium's reward_threshold, NAN: none */
    /* reset: qpos0 + noise(qpos_noise), qvel = noise(qvel_noise) */
    mj_noise_kind qvel_noise_kind;
    double noise_scale;
    /* observation: qpos[qpos_skip:], qvel (clipped to +-qvel_clip when > 0),
     * then what `extra_obs` adds */
    int qpos_skip;
    double qvel_clip;
    int (*extra_obs_size)(const mjModel *m);
    float *(*extra_obs)(const mj_task *task, const mjModel *m, const mjData *d, float *out);
    /* Ant-v5: env.include_cfrc_ext_in_observation (Gymnasium's keyword, default true) may
     * leave extra_obs out; the reward is the same either way */
    bool cfrc_obs_optional;
    /* reward: forward_weight * velocity + survival bonus - ctrl_weight * |a|^2 - contact */
    mj_track track;
    double forward_weight, ctrl_weight, healthy_reward, contact_weight;
    mj_bonus bonus;
    double (*contact_cost)(const mj_task *task, const mjModel *m, const mjData *d);
    /* NULL: always healthy, never terminates */
    bool (*healthy)(const mj_task *task, const mjModel *m, const mjData *d);
    /* Tasks that are no locomotion (InvertedDoublePendulum, Reacher) replace parts of the
     * loop; NULL: the loop's own. reset_state sets qpos and qvel after mj_resetData (in
     * place of the noise above); observe writes the whole observation (obs_size(m)
     * values); reward computes the reward, its terms and whether the body is healthy from
     * the state after the frames and `before` (what carry kept of the state before them;
     * the tracked position when carry is NULL). */
    void (*reset_state)(const mj_task *task, const mj_model_ref *ref, mjData *d, uint64_t *rng);
    int (*custom_obs_size)(const mjModel *m);
    void (*observe)(const mj_task *task, const mj_model_ref *ref, const mjData *d, float *out);
    double (*reward)(const mj_task *task, const mj_model_ref *ref, const mjData *d,
                     const float *action, const double before[2], double terms[MJ_NUM_TERMS],
                     bool *healthy);
    void (*carry)(const mj_task *task, const mj_model_ref *ref, const mjData *d, double out[2]);
    mj_needs needs;
    /* Gymnasium's sizes with its model (the table's defaults before configure) */
    int obs_size, action_dim;
    float action_low, action_high;
    int num_terms;                  /* terms logged after return and length */
    int terms[MJ_NUM_TERMS];        /* which, in log order */
};

#define MJ_NUM_TASKS 17
extern const mj_task mj_tasks[MJ_NUM_TASKS];
/* The task of an id, or NULL. */
const mj_task *mj_task_find(const char *id);

/* The model of a task as cfg says: env.model's file when set (any MJCF), else
 * the module's embedded copy of task->model. Loaded once per source and kept;
 * checked against task->needs (naming what is missing). SK_ERR_IO /
 * SK_ERR_INVALID with a message. */
sk_status mj_model_for(const mj_task *task, const sk_config *cfg, mj_model_ref *out);
/* The embedded model file `name`, or NULL when this build has none. */
const char *mj_embedded(const char *name, int *size);
/* The names of the embedded models, NULL-terminated. */
extern const char *const mj_embedded_names[];

/* The observation size of a task on model m, with or without extra_obs. */
int mj_obs_size(const mj_task *task, const mjModel *m, bool extra_obs);
/* Whether the task's extra_obs is observed under cfg: env.include_cfrc_ext_in_observation
 * where the task takes it (cfrc_obs_optional), read as configure and create read it; else
 * true, the key left unread (so a task without it refuses it as unused). */
sk_status mj_extra_obs_on(const mj_task *task, const sk_config *cfg, bool *on);

/* The env tables (tasks.c), NULL-terminated. */
extern const sk_env_def *const mj_env_tables[MJ_NUM_TASKS + 1];

/* What the tables share (env.c). */
sk_status mj_configure(sk_env_def *def, const sk_config *cfg);
sk_status mj_create(const mj_task *task, void **state, int num_envs, const sk_config *cfg);
extern const sk_env_extras mj_extras;
void mj_destroy(void *state);
void mj_reset(void *state, const sk_env_io *io, int lo, int hi, uint64_t seed);
void mj_step_envs(void *state, const sk_env_io *io, int lo, int hi);
int mj_state_arrays(void *state, sk_env_array *arrays);
sk_status mj_check_state(const void *state, int num_envs);

#endif
