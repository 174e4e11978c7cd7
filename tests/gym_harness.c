/* The classic-control env harness: gym_harness.h says what it checks. */
#include "gym_harness.h"

/* --------------------------------------------------------------------- a run */

void gym_open_cfg(gym_run *run, const gym_env *env, int num_envs, sk_config *cfg) {
    memset(run, 0, sizeof *run);
    assert_non_null(cfg);
    assert_true(env->state_size <= GYM_MAX_STATE && env->def->obs_size <= GYM_MAX_OBS);
    run->env = env;
    run->num_envs = num_envs;
    run->cfg = cfg;
    assert_int_equal(env->def->create(&run->state, num_envs, cfg), SK_OK);
    assert_int_equal(*(const int *)run->state, num_envs); /* its first member: see gym_env */
    /* each env reads only its own kind of action; the other pointer stays NULL so that an env
     * reading the wrong one crashes instead of passing */
    bool continuous = env->def->action_space.kind == SK_SPACE_CONTINUOUS;
    env_io_alloc(&run->io, num_envs, env->def->obs_size, continuous ? NULL : &run->actions,
                 continuous ? &run->actions_continuous : NULL);
}

void gym_open(gym_run *run, const gym_env *env, int num_envs) {
    gym_open_cfg(run, env, num_envs, sk_config_new());
}

void gym_close(gym_run *run) {
    run->env->def->destroy(run->state);
    sk_config_free(run->cfg);
    env_io_free(&run->io);
}

/* The state's array at byte offset field. */
static void *state_array(const void *state, size_t field) {
    void *array;
    memcpy(&array, (const char *)state + field, sizeof array);
    return array;
}

static double coord_of(const gym_env *env, const void *state, int i, int k) {
    return ((const double *)state_array(state, env->coord_field[k]))[i];
}

static int32_t elapsed_of(const gym_env *env, const void *state, int i) {
    return ((const int32_t *)state_array(state, env->elapsed_field))[i];
}

static double return_of(const gym_env *env, const void *state, int i) {
    void *array = state_array(state, env->return_field);
    return env->float_return ? (double)((float *)array)[i] : ((double *)array)[i];
}

static void observe(const gym_env *env, const void *state, int i, float *obs) {
    if (env->expected_obs) {
        env->expected_obs(state, i, obs);
        return;
    }
    for (int k = 0; k < env->state_size; k++) obs[k] = (float)coord_of(env, state, i, k);
}

/* Whether env i's state is one a reset may draw: see gym_uniform. */
static bool in_reset_bounds(const gym_env *env, const void *state, int i) {
    for (int k = 0; k < env->state_size; k++) {
        const gym_uniform *u = &env->reset_uniform[k];
        double v = coord_of(env, state, i, k);
        bool inside = u->low == u->high ? v == u->low
                      : env->float32_reset
                          ? v >= (double)(float)u->low && v <= (double)(float)u->high
                          : v >= u->low && v < u->high;
        if (!inside) return false;
    }
    return true;
}

void gym_set_state(gym_run *run, int i, const double *state, int32_t elapsed,
                   double episode_return) {
    const gym_env *env = run->env;
    for (int k = 0; k < env->state_size; k++)
        ((double *)state_array(run->state, env->coord_field[k]))[i] = state[k];
    ((int32_t *)state_array(run->state, env->elapsed_field))[i] = elapsed;
    void *returns = state_array(run->state, env->return_field);
    if (env->float_return)
        ((float *)returns)[i] = (float)episode_return;
    else
        ((double *)returns)[i] = episode_return;
}

void gym_set_action(gym_run *run, int i, double action) {
    if (run->actions_continuous)
        run->actions_continuous[i] = (float)action;
    else
        run->actions[i] = (int32_t)action;
}

void gym_poison(gym_run *run) { env_io_poison(&run->io, run->num_envs, run->env->def->obs_size); }

void gym_step(gym_run *run) { run->env->def->step(run->state, &run->io, 0, run->num_envs); }

void gym_reset(gym_run *run, uint64_t seed) {
    run->env->def->reset(run->state, &run->io, 0, run->num_envs, seed);
}

double gym_coord(const gym_run *run, int i, int k) { return coord_of(run->env, run->state, i, k); }

int32_t gym_elapsed(const gym_run *run, int i) { return elapsed_of(run->env, run->state, i); }

/* ----------------------------------------------------------------- comparison */

double gym_float_ulp(float x) {
    float a = fabsf(x);
    return (double)nextafterf(a, INFINITY) - (double)a;
}

/* A state coordinate after a step: a float64 state within tol's relative (or absolute) bound;
 * a float32 state must itself be a float32, within obs_max_ulp of the recorded one. */
static void check_coord(checker *ck, const gym_env *env, int row, const char *field, double got,
                        double want, const gym_tolerance *tol) {
    if (!env->float32_state) {
        if (tol->state_rel > 0.0) {
            check_state(ck, row, field, got, want, tol->state_rel);
            return;
        }
        double abs_err = fabs(got - want), rel = test_rel_err(got, want, STATE_ABS_FLOOR);
        if (abs_err > ck->max_state_abs || isnan(abs_err)) ck->max_state_abs = abs_err;
        if (rel > ck->max_state_rel || isnan(rel)) ck->max_state_rel = rel;
        if (!(abs_err <= tol->state_abs))
            mismatch(ck, row, field, "got %.17g, want %.17g (abs err %.3g > %.3g)", got, want,
                     abs_err, tol->state_abs);
        return;
    }
    double abs_err = fabs(got - want);
    if (abs_err > ck->max_state_abs || isnan(abs_err)) ck->max_state_abs = abs_err;
    int ulp = ulp_distance((float)got, (float)want);
    if (ulp > ck->max_state_ulp) ck->max_state_ulp = ulp;
    if ((double)(float)got != got)
        mismatch(ck, row, field, "got %.17g, which is not a float32 value", got);
    else if ((double)(float)want != want)
        mismatch(ck, row, field, "the recorded %.17g is not a float32 value", want);
    else if (ulp > env->obs_max_ulp)
        mismatch(ck, row, field, "got %.9g, want %.9g (%d ulp > %d)", got, want, ulp,
                 env->obs_max_ulp);
}

/* A float32 value against a recorded one: within max_ulp floats of its float32 cast, or
 * within abs_tol of the recorded value (plus max_ulp float ulps where ulp_plus_abs). */
static void check_float32(checker *ck, const gym_env *env, int row, const char *field,
                          float got, double want_csv, int max_ulp, double abs_tol,
                          int *max_ulp_seen, double *max_abs_seen) {
    float want = (float)want_csv;
    int ulp = ulp_distance(got, want);
    double abs_err = fabs((double)got - want_csv);
    if (ulp > *max_ulp_seen) *max_ulp_seen = ulp;
    if (abs_err > *max_abs_seen || isnan(abs_err)) *max_abs_seen = abs_err;
    if (ulp <= max_ulp) return;
    double allowed = abs_tol + (env->ulp_plus_abs ? max_ulp * gym_float_ulp(want) : 0.0);
    if (!(abs_err <= allowed))
        mismatch(ck, row, field, "got %.9g, want %.17g (%d ulp > %d, abs err %.3g > %.3g)",
                 (double)got, want_csv, ulp, max_ulp, abs_err, allowed);
}

static void check_observation(checker *ck, const gym_env *env, int row, const char *field,
                              float got, double want, const gym_tolerance *tol) {
    if (env->ulp_plus_abs)
        check_float32(ck, env, row, field, got, want, env->obs_max_ulp, tol->obs_abs,
                      &ck->max_obs_ulp, &ck->max_obs_abs);
    else /* the recorded observation is a float32: abs error against it */
        check_obs(ck, row, field, got, want, env->obs_max_ulp, tol->obs_abs);
}

/* A float reward or logged return; exact where the env's rewards are. */
static void check_reward(checker *ck, const gym_env *env, int row, const char *field,
                         float got, double want, double abs_tol) {
    if (env->reward_max_ulp == 0 && abs_tol == 0.0)
        check_float(ck, row, field, got, want);
    else
        check_float32(ck, env, row, field, got, want, env->reward_max_ulp, abs_tol,
                      &ck->max_reward_ulp, &ck->max_reward_abs);
}

/* The env's double running return against the recorded sum. */
static void check_double_return(checker *ck, int row, const char *field, double got,
                                double want, const gym_tolerance *tol) {
    double abs_err = fabs(got - want), rel = test_rel_err(got, want, STATE_ABS_FLOOR);
    if (abs_err > ck->max_return_abs || isnan(abs_err)) ck->max_return_abs = abs_err;
    if (rel > ck->max_return_rel || isnan(rel)) ck->max_return_rel = rel;
    if (!(rel <= tol->state_rel || abs_err <= tol->return_abs))
        mismatch(ck, row, field, "got %.17g, want %.17g (rel err %.3g > %.3g, abs %.3g > %.3g)",
                 got, want, rel, tol->state_rel, abs_err, tol->return_abs);
}

/* Prints the largest errors of every kind, then fails on any mismatch. */
static void finish(const checker *ck, const char *what) {
    print_message("%s: max state error %.3g abs / %.3g rel / %d float ulp; max double-return "
                  "error %.3g abs / %.3g rel; max obs error %.3g abs / %d ulp; max reward/log "
                  "error %.3g abs / %d ulp; %d mismatches\n",
                  what, ck->max_state_abs, ck->max_state_rel, ck->max_state_ulp,
                  ck->max_return_abs, ck->max_return_rel, ck->max_obs_abs, ck->max_obs_ulp,
                  ck->max_reward_abs, ck->max_reward_ulp, ck->failures);
    checker_fail_on_mismatches(ck, what);
}

/* --------------------------------------------------------------- the files */

static void load(const gym_env *env, const char *shared, bool transitions, csv_table *t,
                 gym_columns *c) {
    csv_load_reference(t, shared, transitions ? env->transitions : env->episodes);
    int obs_size = env->def->obs_size;
    c->episode = c->t = c->truncated = -1;
    c->action = csv_col(t, "action");
    c->reward = csv_col(t, "reward");
    c->terminated = csv_col(t, "terminated");
    csv_cols(t, "state", env->state_size, c->state);
    csv_cols(t, "next_obs", obs_size, c->obs);
    for (int k = 0; k < GYM_MAX_STATE; k++) c->next_state[k] = -1;
    if (transitions) {
        assert_int_equal(t->rows, GYM_TRANSITION_ROWS);
        csv_cols(t, "next_state", env->state_size, c->next_state);
    } else {
        c->episode = csv_col(t, "episode");
        c->t = csv_col(t, "t");
        c->truncated = csv_col(t, "truncated");
        /* 20 whole episodes */
        assert_int_equal((int)csv_at(t, t->rows - 1, c->episode), GYM_RECORDED_EPISODES - 1);
    }
}

static void recorded_state(const gym_env *env, const csv_table *t, const int *cols, int row,
                           double *state) {
    for (int k = 0; k < env->state_size; k++) state[k] = csv_at(t, row, cols[k]);
}

static void check_obs_row(checker *ck, const gym_env *env, int row, const char *prefix,
                          const float *obs, const csv_table *t, const gym_columns *c,
                          const gym_tolerance *tol) {
    for (int k = 0; k < env->def->obs_size; k++) {
        char field[64];
        snprintf(field, sizeof field, "%s%s", prefix, env->obs_names[k]);
        check_observation(ck, env, row, field, obs[k], csv_at(t, row, c->obs[k]), tol);
    }
}

/* The state after env 0's step against the recorded one in columns cols of row want_row. */
static void check_state_row(checker *ck, const gym_run *run, int row, const csv_table *t,
                            const int *cols, int want_row, const gym_tolerance *tol) {
    for (int k = 0; k < run->env->state_size; k++)
        check_coord(ck, run->env, row, run->env->state_names[k], gym_coord(run, 0, k),
                    csv_at(t, want_row, cols[k]), tol);
}

/* After an episode ends, env 0 is the next episode's first state, observed. */
static void check_autoreset(checker *ck, const gym_run *run, int row) {
    const gym_env *env = run->env;
    check_int(ck, row, "elapsed after autoreset", elapsed_of(env, run->state, 0), 0);
    check_int(ck, row, "episode_return after autoreset is 0",
              return_of(env, run->state, 0) == 0.0, 1);
    check_int(ck, row, "reset state in bounds", in_reset_bounds(env, run->state, 0), 1);
    float want[GYM_MAX_OBS];
    observe(env, run->state, 0, want);
    bool same = true;
    for (int k = 0; k < env->def->obs_size; k++) same &= run->io.obs[k] == want[k];
    check_int(ck, row, "obs after autoreset is the new state's", same, 1);
}

/* ---------------------------------------------------------------- the replays */

void gym_transitions(const gym_env *env, const char *shared, gym_row_hook hook, void *ctx) {
    csv_table t;
    gym_columns c;
    load(env, shared, true, &t, &c);
    checker ck = {.source = env->transitions, .csv_lines = env->csv_lines};
    const gym_tolerance *tol = &env->one_step;
    int terminal_rows = 0, identical_rows = 0;
    gym_run run;
    gym_open(&run, env, 1);
    for (int r = 0; r < t.rows; r++) {
        double state[GYM_MAX_STATE];
        recorded_state(env, &t, c.state, r, state);
        gym_set_state(&run, 0, state, 0, 0.0);
        gym_poison(&run);
        gym_set_action(&run, 0, csv_at(&t, r, c.action));
        gym_step(&run);
        if (hook) hook(ctx, &run, &t, &c, r);

        bool want_term = csv_at(&t, r, c.terminated) != 0.0;
        if (env->never_terminates) check_int(&ck, r, "csv terminated", want_term, 0);
        check_int(&ck, r, "terminated", run.io.terminated[0], want_term);
        check_int(&ck, r, "truncated", run.io.truncated[0], 0);
        double want_reward = csv_at(&t, r, c.reward);
        check_reward(&ck, env, r, "reward", run.io.rewards[0], want_reward, tol->reward_abs);
        if (want_term && run.io.terminated[0]) {
            /* autoreset: the state arrays already hold the next episode */
            terminal_rows++;
            check_obs_row(&ck, env, r, "final_", run.io.final_obs, &t, &c, tol);
            check_reward(&ck, env, r, "episode_log[0] (return)", run.io.episode_log[0],
                         want_reward, tol->return_abs);
            check_float(&ck, r, "episode_log[1] (length)", run.io.episode_log[1], 1.0);
            check_autoreset(&ck, &run, r);
        } else if (!want_term && !run.io.terminated[0]) {
            check_state_row(&ck, &run, r, &t, c.next_state, r, tol);
            bool identical = true;
            for (int k = 0; k < env->state_size; k++)
                identical &= gym_coord(&run, 0, k) == csv_at(&t, r, c.next_state[k]);
            identical_rows += identical;
            check_obs_row(&ck, env, r, "", run.io.obs, &t, &c, tol);
            check_int(&ck, r, "elapsed", elapsed_of(env, run.state, 0), 1);
            if (env->check_double_return)
                check_double_return(&ck, r, "reward (double, episode_return)",
                                    return_of(env, run.state, 0), want_reward, tol);
        }
    }
    gym_close(&run);
    print_message("%s: %d rows, %d terminal; %d of %d next states bit-identical\n",
                  env->transitions, t.rows, terminal_rows, identical_rows,
                  t.rows - terminal_rows);
    /* the file exercises termination, where the env has it */
    if (!env->never_terminates) assert_true(terminal_rows > 0);
    csv_free(&t);
    finish(&ck, "one step from recorded states");
}

/* Checks env 0's step against episodes-file row r: flags, reward, observation, and at an end
 * the episode log and the autoreset, else the step count and the running return (the recorded
 * return up to and including row r). Returns whether the recorded episode ended there. */
static bool check_episode_step(checker *ck, const gym_run *run, const csv_table *t,
                               const gym_columns *c, int r, double recorded_return,
                               const gym_tolerance *tol) {
    const gym_env *env = run->env;
    int step_number = (int)csv_at(t, r, c->t) + 1;
    if (env->never_terminates)
        check_int(ck, r, "csv terminated", csv_at(t, r, c->terminated) != 0.0, 0);
    episode_columns flags = {.t = c->t, .terminated = c->terminated, .truncated = c->truncated};
    bool ended = check_episode_flags(ck, &run->io, t, &flags, r, env->max_steps);
    check_reward(ck, env, r, "reward", run->io.rewards[0], csv_at(t, r, c->reward),
                 tol->reward_abs);
    check_obs_row(ck, env, r, ended ? "final_" : "", ended ? run->io.final_obs : run->io.obs, t,
                  c, tol);
    if (ended) {
        check_reward(ck, env, r, "episode_log[0] (return)", run->io.episode_log[0],
                     recorded_return, tol->return_abs);
        check_float(ck, r, "episode_log[1] (length)", run->io.episode_log[1], step_number);
        check_autoreset(ck, run, r);
    } else {
        check_int(ck, r, "elapsed", elapsed_of(env, run->state, 0), step_number);
        if (env->check_double_return)
            check_double_return(ck, r, "episode_return (double)",
                                return_of(env, run->state, 0), recorded_return, tol);
    }
    return ended;
}

void gym_episodes_per_step(const gym_env *env, const char *shared, gym_row_hook hook, void *ctx) {
    csv_table t;
    gym_columns c;
    load(env, shared, false, &t, &c);
    checker ck = {.source = env->episodes, .csv_lines = env->csv_lines};
    gym_run run;
    gym_open(&run, env, 1);
    int truncations = 0, terminations = 0;
    double recorded_return = 0.0; /* of the current episode before row r */
    for (int r = 0; r < t.rows; r++) {
        int step = (int)csv_at(&t, r, c.t);
        if (step == 0) recorded_return = 0.0;
        double state[GYM_MAX_STATE];
        recorded_state(env, &t, c.state, r, state);
        gym_set_state(&run, 0, state, step, recorded_return);
        gym_poison(&run);
        gym_set_action(&run, 0, csv_at(&t, r, c.action));
        gym_step(&run);
        if (hook) hook(ctx, &run, &t, &c, r);
        recorded_return += csv_at(&t, r, c.reward);
        bool ended = check_episode_step(&ck, &run, &t, &c, r, recorded_return, &env->one_step);
        /* within an episode, the next row's state is this step's result */
        if (!ended && r + 1 < t.rows && csv_at(&t, r + 1, c.episode) == csv_at(&t, r, c.episode))
            check_state_row(&ck, &run, r, &t, c.state, r + 1, &env->one_step);
        truncations += run.io.truncated[0] == 1;
        terminations += run.io.terminated[0] == 1;
    }
    gym_close(&run);
    print_message("%s, per step: %d steps, %d terminations, %d truncations\n", env->episodes,
                  t.rows, terminations, truncations);
    if (env->episodes_terminate)
        assert_true(truncations > 0 && terminations > 0);
    else /* every recorded episode hits the time limit */
        assert_int_equal(truncations, GYM_RECORDED_EPISODES);
    assert_int_equal(terminations + truncations, GYM_RECORDED_EPISODES);
    csv_free(&t);
    finish(&ck, "per-step replay of 20 episodes");
}

/* Past a chaotic env's horizon the replay may diverge, but its rules still hold: it ends by
 * termination, or by truncation at exactly max_steps, and logs its own steps and rewards. */
static bool past_horizon_end(checker *ck, const gym_run *run, const csv_table *t,
                             const gym_columns *c, int first, int last, int steps,
                             bool ended, double env_return) {
    int episode = (int)csv_at(t, first, c->episode), recorded_length = last - first + 1;
    if (!ended) {
        mismatch(ck, last, "episode end",
                 "episode %d ran out of recorded actions after %d steps without ending", episode,
                 steps);
        return false;
    }
    int max_steps = run->env->max_steps;
    check_int(ck, last, "truncated only at the step limit",
              run->io.truncated[0] ? steps : max_steps, max_steps);
    check_float(ck, first + steps - 1, "episode_log[0] (return)", run->io.episode_log[0],
                env_return);
    check_float(ck, first + steps - 1, "episode_log[1] (length)", run->io.episode_log[1], steps);
    bool exact = steps == recorded_length &&
                 run->io.terminated[0] == (csv_at(t, first + steps - 1, c->terminated) != 0.0);
    if (!exact)
        print_message("episode %d: free run %s at step %d past the horizon (recorded: %d steps, "
                      "%s)\n",
                      episode, run->io.terminated[0] ? "terminated" : "truncated", steps,
                      recorded_length,
                      csv_at(t, last, c->terminated) != 0.0 ? "terminated" : "truncated");
    return exact;
}

void gym_episodes_free_run(const gym_env *env, const char *shared, gym_row_hook hook, void *ctx) {
    csv_table t;
    gym_columns c;
    load(env, shared, false, &t, &c);
    checker ck = {.source = env->episodes, .csv_lines = env->csv_lines};
    int horizon = INT32_MAX;
    if (env->free_run_growth) {
        horizon = 0;
        while (env->free_run_growth(horizon + 1).state_abs <= env->free_run_horizon_tol)
            horizon++;
        print_message("free run: horizon %d steps (the bound %.3g at step 1, %.3g there)\n",
                      horizon, env->free_run_growth(1).state_abs,
                      env->free_run_growth(horizon).state_abs);
    }
    int episodes = 0, exact_ends = 0;
    for (int first = 0; first < t.rows;) {
        int last = csv_run_end(&t, first, c.episode);
        assert_int_equal((int)csv_at(&t, first, c.t), 0);
        double state[GYM_MAX_STATE];
        recorded_state(env, &t, c.state, first, state);
        for (int k = 0; k < env->state_size && env->float32_reset; k++)
            if (state[k] != (double)(float)state[k]) /* as Gymnasium draws it */
                mismatch(&ck, first, env->state_names[k], "first state %.17g is not a float32",
                         state[k]);
        gym_run run;
        gym_open(&run, env, 1);
        gym_set_state(&run, 0, state, 0, 0.0);
        double recorded_return = 0.0, env_return = 0.0;
        int steps = 0;
        bool ended = false;
        for (int r = first; r <= last && !ended; r++) {
            gym_poison(&run);
            gym_set_action(&run, 0, csv_at(&t, r, c.action));
            gym_step(&run);
            if (hook) hook(ctx, &run, &t, &c, r);
            steps++;
            recorded_return += csv_at(&t, r, c.reward);
            env_return += (double)run.io.rewards[0];
            ended = run.io.terminated[0] || run.io.truncated[0];
            if (steps > horizon) continue; /* past the horizon the bound says nothing */
            gym_tolerance tol = env->free_run_growth ? env->free_run_growth(steps) : env->free_run;
            bool want_end = check_episode_step(&ck, &run, &t, &c, r, recorded_return, &tol);
            if (!check_episode_end(&ck, r, (int)csv_at(&t, r, c.episode), ended, want_end,
                                   r == last, steps, last - first + 1))
                break;
            /* the recorded state before the next step is this step's result */
            if (!ended && r < last) check_state_row(&ck, &run, r, &t, c.state, r + 1, &tol);
        }
        if (steps <= horizon)
            exact_ends += ended && steps == last - first + 1;
        else
            exact_ends += past_horizon_end(&ck, &run, &t, &c, first, last, steps, ended,
                                           env_return);
        gym_close(&run);
        episodes++;
        first = last + 1;
    }
    assert_int_equal(episodes, GYM_RECORDED_EPISODES);
    csv_free(&t);
    print_message("free run: %d of %d episodes end exactly as recorded\n", exact_ends, episodes);
    finish(&ck, "free-running replay of 20 episodes");
}

/* ------------------------------------------------------------------ resets */

/* Whether envs i of a and j of b hold the same state (in the env's distinct coordinate). */
static bool same_start(const gym_run *a, int i, const gym_run *b, int j) {
    int coord = a->env->reset_distinct_coord;
    if (coord >= 0) return gym_coord(a, i, coord) == gym_coord(b, j, coord);
    for (int k = 0; k < a->env->state_size; k++)
        if (gym_coord(a, i, k) != gym_coord(b, j, k)) return false;
    return true;
}

/* Fails if two envs start alike; the whole state is compared pairwise, one coordinate sorted. */
static void assert_distinct_starts(const gym_run *run, const char *what) {
    int coord = run->env->reset_distinct_coord, n = run->num_envs;
    if (coord < 0) {
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (same_start(run, i, run, j)) fail_msg("envs %d and %d %s", i, j, what);
        return;
    }
    double *values = malloc((size_t)n * sizeof *values);
    assert_non_null(values);
    for (int i = 0; i < n; i++) values[i] = gym_coord(run, i, coord);
    char label[96];
    snprintf(label, sizeof label, "%s %s =", what, run->env->state_names[coord]);
    assert_all_distinct(values, n, label);
    free(values);
}

/* Each env is a new episode's first state: step 0, return 0, in bounds, observed. */
static void assert_first_states(const gym_run *run) {
    const gym_env *env = run->env;
    int obs_size = env->def->obs_size;
    for (int i = 0; i < run->num_envs; i++) {
        if (elapsed_of(env, run->state, i) != 0) fail_msg("env %d: elapsed is not 0", i);
        if (return_of(env, run->state, i) != 0.0) fail_msg("env %d: return is not 0", i);
        if (!in_reset_bounds(env, run->state, i))
            fail_msg("%s env %d: the first state is outside the reset bounds", env->def->id, i);
        float want[GYM_MAX_OBS];
        observe(env, run->state, i, want);
        for (int k = 0; k < obs_size; k++)
            if (run->io.obs[obs_size * i + k] != want[k])
                fail_msg("%s env %d %s = %.9g, want %.9g", env->def->id, i, env->obs_names[k],
                         (double)run->io.obs[obs_size * i + k], (double)want[k]);
    }
}

#define GYM_RESET_ENVS 10000
#define GYM_STREAM_ENVS 1000

/* The first states' statistics: see gym_uniform. With 10000 draws the mean's sd is
 * (high - low) / 346 and the sample variance's relative sd 0.9%, so 5% is over 5 sd. */
static void assert_uniform_starts(const gym_run *run) {
    const gym_env *env = run->env;
    bool float64_start = false;
    for (int k = 0; k < env->state_size; k++) {
        const gym_uniform *u = &env->reset_uniform[k];
        double sum = 0.0, sum_sq = 0.0, lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < run->num_envs; i++) {
            double v = gym_coord(run, i, k);
            if (env->float32_reset && v != (double)(float)v)
                fail_msg("%s env %d %s = %.17g is not a float32 value", env->def->id, i,
                         env->state_names[k], v);
            float64_start |= v != (double)(float)v;
            sum += v;
            sum_sq += v * v;
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
        if (u->low == u->high) continue;
        double mean = sum / run->num_envs, variance = sum_sq / run->num_envs - mean * mean;
        double var = (u->high - u->low) * (u->high - u->low) / 12.0;
        print_message("%s reset %-9s mean %+.4e variance %.4e (uniform: %.4e) range [%.5f, "
                      "%.5f]\n",
                      env->def->id, env->state_names[k], mean, variance, var, lo, hi);
        assert_true(fabs(mean - 0.5 * (u->low + u->high)) < u->mean_tol);
        assert_true(fabs(variance / var - 1.0) < 0.05);
        assert_true(lo < u->low + u->fill && hi > u->high - u->fill); /* fills the interval */
    }
    /* Gymnasium draws in float64 unless it says otherwise */
    if (!env->float32_reset) assert_true(float64_start);
}

void gym_reset_streams(const gym_env *env) {
    gym_run a, b;
    gym_open(&a, env, GYM_RESET_ENVS);
    gym_open(&b, env, GYM_RESET_ENVS);
    gym_poison(&a);
    gym_reset(&a, 42);
    assert_first_states(&a);
    assert_uniform_starts(&a);
    /* same seed: identical; different seed: different in every env */
    gym_reset(&b, 42);
    for (int i = 0; i < GYM_RESET_ENVS; i++)
        for (int k = 0; k < env->state_size; k++)
            if (gym_coord(&a, i, k) != gym_coord(&b, i, k))
                fail_msg("%s seed 42 twice: env %d %s differs", env->def->id, i,
                         env->state_names[k]);
    gym_reset(&b, 43);
    int same = 0;
    for (int i = 0; i < GYM_RESET_ENVS; i++) same += same_start(&a, i, &b, i);
    if (same)
        fail_msg("%s seeds 42 and 43 start alike in %d of %d envs", env->def->id, same,
                 GYM_RESET_ENVS);
    gym_close(&a);
    gym_close(&b);

    /* no two envs share a start: each index has its own stream; and the stream depends on
     * (seed, index) only, not on how the range is split into calls, so threads that reset
     * disjoint ranges reproduce a single-threaded run */
    gym_open(&a, env, GYM_STREAM_ENVS);
    gym_open(&b, env, GYM_STREAM_ENVS);
    gym_reset(&a, 7);
    assert_distinct_starts(&a, "reset to the same");
    env->def->reset(b.state, &b.io, 600, GYM_STREAM_ENVS, 7);
    env->def->reset(b.state, &b.io, 0, 1, 7);
    env->def->reset(b.state, &b.io, 1, 600, 7);
    for (int i = 0; i < GYM_STREAM_ENVS; i++)
        for (int k = 0; k < env->state_size; k++)
            if (gym_coord(&a, i, k) != gym_coord(&b, i, k))
                fail_msg("%s env %d %s depends on the reset range", env->def->id, i,
                         env->state_names[k]);
    gym_close(&a);
    gym_close(&b);
}

void gym_autoreset_streams(const gym_env *env, const double *state, double action,
                           double (*policy)(const gym_run *run, int i)) {
    gym_run run;
    gym_open(&run, env, GYM_STREAM_ENVS);
    gym_reset(&run, 7); /* seeds each env's stream */
    for (int i = 0; i < GYM_STREAM_ENVS; i++) gym_set_state(&run, i, state, 0, 0.0);
    int steps = 0;
    bool ended = false;
    do {
        for (int i = 0; i < GYM_STREAM_ENVS; i++)
            gym_set_action(&run, i, policy ? policy(&run, i) : action);
        gym_poison(&run);
        gym_step(&run);
        steps++;
        for (int i = 1; i < GYM_STREAM_ENVS; i++) {
            assert_int_equal(run.io.terminated[i], run.io.terminated[0]);
            assert_int_equal(run.io.truncated[i], run.io.truncated[0]);
        }
        ended = run.io.terminated[0] || run.io.truncated[0];
    } while (!ended && steps < env->max_steps);
    print_message("%s streams: %d identical envs ended together after %d steps\n", env->def->id,
                  GYM_STREAM_ENVS, steps);
    if (env->never_terminates) {
        assert_int_equal(run.io.terminated[0], 0);
        assert_int_equal(run.io.truncated[0], 1);
        assert_int_equal(steps, env->max_steps);
    } else {
        assert_int_equal(run.io.terminated[0], 1);
    }
    /* autoreset draws from the env's own stream: envs in the same state that end at the same
     * step start different new episodes, each observed */
    assert_distinct_starts(&run, "autoreset to the same");
    assert_first_states(&run);
    int obs_size = env->def->obs_size;
    for (int i = 0; i < GYM_STREAM_ENVS; i++) /* every env ended in the same state */
        for (int k = 0; k < obs_size; k++)
            assert_true(run.io.final_obs[obs_size * i + k] == run.io.final_obs[k]);
    gym_close(&run);
}

void gym_truncation(gym_run *run, const gym_env *env, const double *state,
                    const double *terminal_state, double action, double start_return) {
    int limit = env->max_steps, num_envs = env->never_terminates ? 3 : 4;
    gym_open(run, env, num_envs);
    gym_reset(run, 11);
    gym_set_state(run, 0, state, limit - 1, start_return);
    gym_set_state(run, 1, state, 0, 0.0);
    gym_set_state(run, 2, state, limit - 2, start_return);
    if (num_envs == 4) gym_set_state(run, 3, terminal_state, limit - 1, start_return);
    for (int i = 0; i < num_envs; i++) gym_set_action(run, i, action);
    gym_poison(run);
    gym_step(run);
    const sk_env_io *io = &run->io;
    int obs_size = env->def->obs_size;

    assert_int_equal(io->truncated[0], 1);
    assert_int_equal(io->terminated[0], 0);
    assert_true(io->rewards[0] == io->rewards[1]); /* the same state and action */
    assert_true(io->episode_log[1] == (float)limit);
    for (int k = 0; k < obs_size; k++) /* final_obs is the post-step state of the ended episode */
        assert_true(io->final_obs[k] == io->obs[obs_size + k]);
    gym_run next = *run; /* env 0 only: its next episode */
    next.num_envs = 1;
    assert_first_states(&next);

    assert_int_equal(io->truncated[1], 0);
    assert_int_equal(io->terminated[1], 0);
    assert_int_equal(gym_elapsed(run, 1), 1);
    assert_true(isnan(io->episode_log[ENV_LOG_FIELDS]) && isnan(io->final_obs[obs_size]));

    assert_int_equal(io->truncated[2], 0); /* one step short of the limit */
    assert_int_equal(io->terminated[2], 0);
    assert_int_equal(gym_elapsed(run, 2), limit - 1);

    if (num_envs == 4) {
        assert_int_equal(io->terminated[3], 1); /* both at once: terminated wins */
        assert_int_equal(io->truncated[3], 0);
        assert_true(io->episode_log[3 * ENV_LOG_FIELDS + 1] == (float)limit);
    }
}

void gym_step_range(gym_run *run, const gym_env *env, double action) {
    gym_open(run, env, 3);
    gym_reset(run, 5);
    double before[3][GYM_MAX_STATE];
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < env->state_size; k++) before[i][k] = gym_coord(run, i, k);
        gym_set_action(run, i, action);
    }
    gym_poison(run);
    env->def->step(run->state, &run->io, 1, 2);
    int obs_size = env->def->obs_size;
    for (int i = 0; i < 3; i += 2) {
        for (int k = 0; k < env->state_size; k++) assert_true(gym_coord(run, i, k) == before[i][k]);
        for (int k = 0; k < obs_size; k++) assert_true(isnan(run->io.obs[obs_size * i + k]));
        assert_true(isnan(run->io.rewards[i]));
        assert_int_equal(elapsed_of(env, run->state, i), 0);
        assert_int_equal(run->io.terminated[i], 7);
    }
    int moved = 0, named = 0;
    for (int k = 0; k < env->state_size; k++)
        if (env->step_moves & (1u << k)) {
            named++;
            moved += gym_coord(run, 1, k) != before[1][k];
        }
    assert_true(env->step_moves_all ? moved == named : moved > 0);
    float want[GYM_MAX_OBS];
    observe(env, run->state, 1, want);
    for (int k = 0; k < obs_size; k++) assert_true(run->io.obs[obs_size + k] == want[k]);
    assert_int_equal(elapsed_of(env, run->state, 1), 1);
    assert_int_equal(run->io.terminated[1], 0);
    assert_int_equal(run->io.truncated[1], 0);
}
