/* The off-policy learners through the trainer.
 *
 * DQN: a run interrupted and resumed from its checkpoint (replay buffer
 * included, wrapped around) continues exactly as the run that never stopped; with
 * replay.save = false the resume runs on from an empty buffer and says it is inexact;
 * what DQN cannot train is refused with the reason.
 *
 * SAC (src/train/sac.c on the same loop): an interrupted run resumed from its checkpoint
 * (buffer, networks, targets, temperature and Adam included) repeats the straight run row
 * for row, with several gradient steps per round; what SAC cannot train is refused; its
 * checkpoint, loaded as eval and export load it (an MLP policy and a squash), acts as sac_core's
 * own deterministic action from the same weights (sk_sac_act), and exports; with one env it
 * updates on train.threads threads, the same bits as on one. */
#include "test_recorder.h"

#include "export/export.h"
#include "train/actor.h"
#include "train/algo.h"
#include "train/sac_core.h"
#include "skinner/safetensors.h"

#include <math.h>

static sk_config *dqn_config(const char *steps, bool save_replay) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "CartPole-v1");
    sk_config_set(cfg, "env.num_envs", "8");
    sk_config_set(cfg, "train.algo", "dqn");
    sk_config_set(cfg, "train.total_steps", steps);
    sk_config_set(cfg, "train.threads", "2");
    sk_config_set(cfg, "train.checkpoint_every", "0");
    sk_config_set(cfg, "dqn.learning_starts", "40"); /* more gradient steps than iterations by the stop */
    sk_config_set(cfg, "dqn.train_frequency", "4"); /* 2 gradient steps an iteration of 8 */
    sk_config_set(cfg, "dqn.target_network_frequency", "96");
    sk_config_set(cfg, "dqn.batch_size", "32");
    sk_config_set(cfg, "dqn.double", "true");
    sk_config_set(cfg, "dqn.n_step", "3");
    sk_config_set(cfg, "replay.size", "400"); /* wraps before the stop */
    sk_config_set(cfg, "replay.save", save_replay ? "true" : "false");
    return cfg;
}

static sk_config *sac_config(const char *env) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", env);
    sk_config_set(cfg, "env.num_envs", "4");
    sk_config_set(cfg, "train.algo", "sac");
    sk_config_set(cfg, "train.total_steps", "400");
    sk_config_set(cfg, "train.threads", "2");
    sk_config_set(cfg, "train.checkpoint_every", "0");
    sk_config_set(cfg, "sac.hidden", "16");
    sk_config_set(cfg, "sac.batch_size", "32");
    sk_config_set(cfg, "sac.learning_starts", "100");
    sk_config_set(cfg, "sac.train_frequency", "2"); /* 3 gradient steps every 2 env steps */
    sk_config_set(cfg, "sac.gradient_steps", "3");
    sk_config_set(cfg, "replay.size", "200");       /* wraps before the stop */
    return cfg;
}

static char g_dir[64];
static char g_log[4096];

static void capture(int level, const char *message, void *user) {
    (void)level;
    (void)user;
    size_t used = strlen(g_log);
    snprintf(g_log + used, sizeof g_log - used, "%s\n", message);
}

static void resumed(bool save_replay, recorder *straight, recorder *joined) {
    static recorder first, second;
    char path[128];
    snprintf(path, sizeof path, "%s/dqn.safetensors", g_dir);
    memset(straight, 0, sizeof *straight);
    memset(&first, 0, sizeof first);
    memset(&second, 0, sizeof second);
    /* the same budget (epsilon's schedule spans it), stopped after 48 iterations */
    sk_config *a = dqn_config("768", save_replay), *b = dqn_config("768", save_replay);
    sk_config *c = dqn_config("768", save_replay);
    train_recorded(a, straight, NULL, NULL, NULL);
    first.stop_after = 48;
    train_recorded(b, &first, NULL, path, NULL);
    assert_int_equal(first.count, 48);
    g_log[0] = '\0';
    sk_set_log_callback(capture, NULL);
    train_recorded(c, &second, path, NULL, NULL);
    sk_set_log_callback(NULL, NULL);
    *joined = first;
    for (int i = 0; i < second.count; i++) joined->rows[joined->count++] = second.rows[i];
    assert_int_equal(straight->count, 96);
    assert_int_equal(joined->count, 96);
    sk_config_free(a);
    sk_config_free(b);
    sk_config_free(c);
}

static void test_resume_with_the_buffer_is_exact(void **state) {
    (void)state;
    static recorder straight, joined;
    resumed(true, &straight, &joined);
    int learned = 0;
    for (int i = 0; i < straight.count; i++) {
        if (memcmp(&straight.rows[i], &joined.rows[i], sizeof straight.rows[i]) != 0)
            fail_msg("update row %d differs after resuming with the buffer", i + 1);
        learned += !isnan(straight.rows[i].value_loss);
    }
    assert_true(learned > 80); /* gradient steps before and after the stop */
    assert_null(strstr(g_log, "inexact"));
}

static void test_resume_without_the_buffer_says_inexact(void **state) {
    (void)state;
    static recorder straight, joined;
    resumed(false, &straight, &joined);
    printf("log: %s", g_log);
    assert_non_null(strstr(g_log, "inexact"));
    /* the rows up to the stop agree; after it the buffer differs, so the losses do */
    assert_memory_equal(&straight.rows[47], &joined.rows[47], sizeof straight.rows[47]);
    bool differs = false;
    for (int i = 48; i < 96; i++)
        differs |= straight.rows[i].value_loss != joined.rows[i].value_loss;
    assert_true(differs);
}

/* cfg (freed here) with key = value is refused, the message holding `reason`. */
static void refused(sk_config *cfg, const char *env, const char *key, const char *value,
                    const char *reason) {
    sk_config_set(cfg, "env.id", env);
    if (key) sk_config_set(cfg, key, value);
    sk_trainer *tr = NULL;
    assert_int_not_equal(sk_trainer_create(&tr, cfg), SK_OK);
    printf("%s\n", sk_last_error());
    assert_non_null(strstr(sk_last_error(), reason));
    sk_config_free(cfg);
}

static void test_what_dqn_cannot_train_is_refused(void **state) {
    (void)state;
    refused(dqn_config("768", true), "Pendulum-v1", NULL, NULL, "not one Discrete head");
    refused(dqn_config("768", true), "CartPole-v1", "policy.core", "lstm", "policy.core");
    refused(dqn_config("768", true), "CartPole-v1", "train.algo", "dqm", "train.algo");
    refused(dqn_config("768", true), "CartPole-v1", "replay.size", "404",
            "multiple of the 8 env rows");
    /* another learner's key names its learner (before: "unknown config key") */
    refused(dqn_config("768", true), "CartPole-v1", "sac.tau", "0.1",
            "sac.tau applies only with train.algo = sac; this run's is dqn");
    sk_config *ppo = dqn_config("768", true);
    sk_config_set(ppo, "train.algo", "ppo");
    refused(ppo, "CartPole-v1", NULL, NULL, "applies only with train.algo = dqn; this run's is ppo");
    ppo = sk_config_new();
    sk_config_set(ppo, "replay.size", "1000");
    refused(ppo, "CartPole-v1", NULL, NULL,
            "replay.size applies only with train.algo = dqn or sac; this run's is ppo");
    /* the keys a user gave: another learner's ppo.* is refused, the run's own are not */
    sk_config *given = sk_config_new(), *run = sk_config_new();
    sk_config_set(given, "ppo.ent_coef", "0.1");
    sk_config_set(given, "train.seed", "3");
    assert_int_equal(sk_config_check_learner_keys(given, run), SK_OK); /* PPO, the default */
    sk_config_set(run, "train.algo", "sac");
    assert_int_equal(sk_config_check_learner_keys(given, run), SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), "ppo.ent_coef applies only with train.algo = ppo; "
                                            "this run's is sac"));
    sk_config_free(given);
    given = sk_config_new();
    sk_config_set(given, "replay.size", "1000");
    sk_config_set(given, "sac.tau", "0.01");
    assert_int_equal(sk_config_check_learner_keys(given, run), SK_OK);
    sk_config_set(run, "train.algo", "dqn");
    assert_int_equal(sk_config_check_learner_keys(given, run), SK_ERR_CONFIG);
    assert_non_null(strstr(sk_last_error(), "sac.tau applies only with train.algo = sac"));
    sk_config_free(given);
    sk_config_free(run);
    /* a misspelt key of the run's own learner is unknown, with the nearest known one */
    refused(dqn_config("768", true), "CartPole-v1", "replay.sze", "100",
            "unknown config key 'replay.sze' (did you mean 'replay.size'?)");
}

static void test_sac_resume_is_exact(void **state) {
    (void)state;
    static recorder straight, first, second;
    char path[128];
    snprintf(path, sizeof path, "%s/sac.safetensors", g_dir);
    sk_config *cfg = sac_config("Pendulum-v1");
    train_recorded(cfg, &straight, NULL, NULL, NULL);
    first.stop_after = 50;
    train_recorded(cfg, &first, NULL, path, NULL);
    train_recorded(cfg, &second, path, NULL, NULL);
    assert_int_equal(straight.count, 100);
    assert_int_equal(first.count, 50);
    assert_int_equal(second.count, 50);
    int learned = 0;
    for (int i = 0; i < straight.count; i++) {
        const sk_update_stats *want = &straight.rows[i];
        const sk_update_stats *got = i < 50 ? &first.rows[i] : &second.rows[i - 50];
        if (memcmp(want, got, sizeof *want) != 0) fail_msg("row %d differs after resuming", i + 1);
        learned += !isnan(want->value_loss);
    }
    assert_true(learned > 70);
    sk_config_free(cfg);
}

/* sac_core's own deterministic action (its actor net, tanh, the bounds) from the checkpoint's
 * sac.actor.* beside eval's acting path (sk_policy_actor on the loaded MLP, squashed). */
static void test_sac_checkpoint_acts_as_its_actor(void **state) {
    (void)state;
    enum { ROWS = 64 };
    static recorder run;
    char path[128], onnx[160], header[160];
    snprintf(path, sizeof path, "%s/sac-eval.safetensors", g_dir);
    sk_config *cfg = sac_config("Pendulum-v1");
    train_recorded(cfg, &run, NULL, path, NULL);
    sk_config_free(cfg);
    sk_loaded_policy lp;
    if (sk_policy_load(&lp, path, "Pendulum-v1") != SK_OK) fail_msg("load: %s", sk_last_error());
    assert_true(lp.squash && lp.greedy_only && lp.no_value);
    const sk_action_space *space = &lp.env->action_space;
    sk_sac_config config = sk_sac_defaults(3, 1, space->low, space->high);
    config.hidden = 16;
    config.max_rows = ROWS;
    sk_sac *sac = NULL;
    assert_int_equal(sk_sac_create(&sac, &config), SK_OK);
    sk_st_file *file = NULL;
    assert_int_equal(sk_st_open(&file, path), SK_OK);
    int copied = 0;
    for (int a = 0; a < sk_sac_num_arrays(sac); a++) {
        const sk_sac_array *array = &sk_sac_arrays(sac)[a];
        if (strncmp(array->name, "actor.", 6) != 0 || array->grad == NULL) continue;
        char name[64];
        snprintf(name, sizeof name, "sac.%s", array->name);
        const sk_st_tensor *t = sk_st_find(file, name);
        assert_non_null(t);
        memcpy(array->data, t->data, (size_t)array->rows * (size_t)array->cols * sizeof(float));
        copied++;
    }
    sk_st_close(file);
    assert_int_equal(copied, 2 * (config.layers + 2)); /* the layers, the mean and log-std heads */
    float obs[ROWS * 3], want[ROWS], got[ROWS];
    uint64_t rng = sk_rng_seed(51, 1);
    for (int k = 0; k < ROWS * 3; k++) obs[k] = (float)sk_rng_uniform(&rng, -4.0, 4.0);
    sk_sac_act(sac, obs, ROWS, NULL, true, want, NULL);
    sk_policy_actor actor;
    assert_int_equal(sk_policy_actor_init(&actor, &lp, 1, ROWS, 1), SK_OK);
    sk_policy_actor_act(&actor, 0, obs, NULL, ROWS, false, NULL, got, NULL); /* not asked greedy */
    double max_diff = 0.0;
    for (int r = 0; r < ROWS; r++) max_diff = fmax(max_diff, fabs((double)got[r] - (double)want[r]));
    print_message("SAC checkpoint: eval's action against sk_sac_act's, largest difference %.3g\n",
                  max_diff);
    assert_true(max_diff <= 1e-5);
    sk_policy_actor_free(&actor);
    sk_eval_result result;
    assert_int_equal(sk_evaluate(path, NULL, 2, false, 1, NULL, &result), SK_OK);
    assert_true(isfinite(result.mean_return) && result.mean_length == 200.0);
    snprintf(onnx, sizeof onnx, "%s/sac.onnx", g_dir);
    snprintf(header, sizeof header, "%s/sac.h", g_dir);
    assert_int_equal(sk_export_onnx(&lp, onnx), SK_OK);
    assert_int_equal(sk_export_c_header(&lp, header, path), SK_OK);
    sk_loaded_policy_free(&lp);
    sk_sac_destroy(sac);
}

static void test_what_sac_cannot_train_is_refused(void **state) {
    (void)state;
    refused(sac_config("CartPole-v1"), "CartPole-v1", NULL, NULL, "not continuous");
    refused(sac_config("Pendulum-v1"), "Pendulum-v1", "policy.core", "gru", "policy.core");
    refused(sac_config("Pendulum-v1"), "Pendulum-v1", "sac.gradient_steps", "0",
            "sac.gradient_steps");
}

/* Trains cfg (freed) into run folder `name` under g_dir; path = that folder's file `file`. */
static void train_into(sk_config *cfg, const char *name, const char *file, char *path, size_t size) {
    char dir[128];
    snprintf(dir, sizeof dir, "%s/%s", g_dir, name);
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    train_recorded(cfg, &rec, NULL, NULL, dir);
    sk_config_free(cfg);
    snprintf(path, size, "%s/%s", dir, file);
}

/* Counts the grad_norms events of run folder `name` (trained from cfg, freed) whose norms
 * hold `tensor`, and of those the ones with a positive norm for it. */
static void grad_norm_events(sk_config *cfg, const char *name, const char *tensor, int *events,
                             int *positive) {
    char path[160], line[4096], key[64];
    sk_config_set(cfg, "train.grad_stats_every", "1");
    train_into(cfg, name, "events.jsonl", path, sizeof path);
    snprintf(key, sizeof key, "\"%s\": ", tensor);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    *events = *positive = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strstr(line, "\"type\": \"grad_norms\"")) continue;
        const char *at = strstr(line, key);
        *events += 1;
        *positive += at && strtod(at + strlen(key), NULL) > 0;
    }
    fclose(f);
}

/* grad_norms events name the tensors of the learner that ran: PPO's, each update; DQN and SAC
 * leave the PPO learner's gradients untouched, so events of its tensors would be zeros that
 * describe nothing (a 1M-step SAC run wrote 150 MB of them). */
static void test_grad_norms_only_from_the_learner_that_ran(void **state) {
    (void)state;
    int events, positive;
    sk_config *ppo = sk_config_new();
    sk_config_set(ppo, "env.id", "CartPole-v1");
    sk_config_set(ppo, "env.num_envs", "8");
    sk_config_set(ppo, "train.total_steps", "512");
    sk_config_set(ppo, "train.checkpoint_every", "0");
    sk_config_set(ppo, "ppo.horizon", "16");
    grad_norm_events(ppo, "ppo-norms", "actor.0.weight", &events, &positive);
    assert_int_equal(events, 4); /* 512 steps of 8 envs x 16 */
    assert_int_equal(positive, 4);
    grad_norm_events(dqn_config("512", false), "dqn-norms", "actor.0.weight", &events, &positive);
    assert_int_equal(events, 0);
    grad_norm_events(sac_config("Pendulum-v1"), "sac-norms", "actor.0.weight", &events, &positive);
    assert_int_equal(events, 0);
}

/* Whether run folder `name`'s events.jsonl (trained from cfg, freed) records the config
 * section `section`, and a `key` in it (NULL: the section at all). */
static bool config_event(sk_config *cfg, const char *name, const char *section, const char *key) {
    char path[160], line[4096], want[96], field[96];
    train_into(cfg, name, "events.jsonl", path, sizeof path);
    snprintf(want, sizeof want, "\"section\": \"%s\"", section);
    snprintf(field, sizeof field, "\"%s\": ", key ? key : "");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    bool found = false;
    while (fgets(line, sizeof line, f) && !found)
        found = strstr(line, "\"type\": \"config\"") && strstr(line, want) && strstr(line, field);
    fclose(f);
    return found;
}

/* events.jsonl records the learner's own config sections (it recorded PPO's only, so a SAC
 * run's tau or a DQN run's learning_starts were in config.ini alone), and a PPO run none of
 * theirs. */
static void test_events_record_the_learners_config(void **state) {
    (void)state;
    assert_true(config_event(sac_config("Pendulum-v1"), "sac-config", "sac", "tau"));
    assert_true(config_event(sac_config("Pendulum-v1"), "sac-config2", "replay", "size"));
    assert_true(config_event(dqn_config("512", false), "dqn-config", "dqn", "learning_starts"));
    sk_config *ppo = sk_config_new();
    sk_config_set(ppo, "env.id", "CartPole-v1");
    sk_config_set(ppo, "train.total_steps", "512");
    assert_false(config_event(ppo, "ppo-config", "dqn", NULL)); /* no empty section either */
}

/* The run folder's config.ini value of `key` (in its section) after a short run of cfg (freed) in `name`. */
static long resolved(sk_config *cfg, const char *name, const char *key) {
    char path[160], line[256], prefix[64];
    train_into(cfg, name, "config.ini", path, sizeof path);
    snprintf(prefix, sizeof prefix, "%s = ", key);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    long value = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, prefix, strlen(prefix)) == 0) value = strtol(line + strlen(prefix), NULL, 10);
    fclose(f);
    return value;
}

static sk_config *breakout_dqn(const char *replay_size, const char *save) {
    sk_config *cfg = sk_config_new();
    sk_config_set(cfg, "env.id", "MinAtar/Breakout-v1");
    sk_config_set(cfg, "env.num_envs", "64");
    sk_config_set(cfg, "train.algo", "dqn");
    sk_config_set(cfg, "train.total_steps", "128");
    sk_config_set(cfg, "train.threads", "1");
    sk_config_set(cfg, "replay.size", replay_size);
    sk_config_set(cfg, "replay.save", save);
    return cfg;
}

/* An off-policy iteration is a few env steps, so unless given the checkpoint and log
 * intervals count env steps: a row every 100, a checkpoint every 50,000, or, when the
 * checkpoint holds a buffer of more than 50,000 KB, every buffer-KB env steps (a checkpoint
 * writes at most 1 KB per env step: 5M steps of DQN on MinAtar wrote 81 GB at 50,000). Each in
 * iterations of 64 env steps here (64 envs, a gradient step every 4: one step each). */
static void test_checkpoints_spaced_by_the_buffer_they_hold(void **state) {
    (void)state;
    long small = resolved(breakout_dqn("6400", "true"), "ckpt-small", "checkpoint_every");
    assert_int_equal(small, (50000 + 63) / 64);
    long rows = resolved(breakout_dqn("6400", "true"), "ckpt-rows", "log_every");
    assert_int_equal(rows, (100 + 63) / 64);
    /* 100,032 Breakout transitions: two 10x10x4 frames (800 bytes) and a few more each */
    long big = resolved(breakout_dqn("100032", "true"), "ckpt-big", "checkpoint_every");
    assert_true(big * 64 >= 100032L * 800 / 1024);
    assert_true(big * 64 <= 100032L * 900 / 1024 + 64);
    long unsaved = resolved(breakout_dqn("100032", "false"), "ckpt-unsaved", "checkpoint_every");
    assert_int_equal(unsaved, (50000 + 63) / 64);
    sk_config *given = breakout_dqn("100032", "true");
    sk_config_set(given, "train.checkpoint_every", "7");
    assert_int_equal(resolved(given, "ckpt-given", "checkpoint_every"), 7);
}

/* SAC with one env, as CleanRL trains it, updates on train.threads threads (its own pool,
 * not the vec's one a env) and learns the same bits as on one; DQN's updates take one. */
/* A CSV of numbers (nan allowed) into rows[r][c] (at most 128 rows of 16); its header into
 * header. The row count. */
static int read_csv(const char *dir, const char *name, char *header, size_t size,
                    double rows[][16]) {
    char path[160], line[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("no %s", path);
    assert_non_null(fgets(header, (int)size, f));
    header[strcspn(header, "\n")] = '\0';
    int count = 0;
    while (count < 128 && fgets(line, sizeof line, f)) {
        char *at = line;
        for (int c = 0; c < 16 && *at && *at != '\n'; c++) {
            rows[count][c] = strtod(at, &at);
            if (*at == ',') at++;
        }
        count++;
    }
    fclose(f);
    return count;
}

static char *file_text(const char *dir, const char *name) {
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot read %s", path);
    char *text = calloc(1 << 16, 1);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    assert_true(n > 0 && n < (1 << 16) - 1);
    return text;
}

/* learner.csv: DQN's epsilon on CleanRL's linear schedule, its gradient steps and buffer
 * fill by the rows' steps (counted here from the config), a mean Q once it learns; a row
 * beside each metrics.csv row; a run stopped and resumed in its folder writes the same file
 * as one that never stopped. SAC's temperature in the last row is its checkpoint's
 * exp(log_alpha). */
static void test_learner_figures(void **state) {
    (void)state;
    static recorder straight, first, second;
    static double rows[128][16], metrics[128][16];
    char a[96], b[96], header[512], checkpoint[128];
    snprintf(a, sizeof a, "%s/learner-a", g_dir);
    snprintf(b, sizeof b, "%s/learner-b", g_dir);
    snprintf(checkpoint, sizeof checkpoint, "%s/policy.safetensors", b);
    sk_config *cfg = dqn_config("768", true);
    train_recorded(cfg, &straight, NULL, NULL, a);
    first.stop_after = 48;
    train_recorded(cfg, &first, NULL, NULL, b);
    /* a row past the checkpoint (as a run killed after its checkpoint leaves): cut on resume */
    char path[160];
    snprintf(path, sizeof path, "%s/learner.csv", b);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("52,416,0.5,1,2,3\n", f);
    fclose(f);
    train_recorded(cfg, &second, checkpoint, NULL, b);
    sk_config_free(cfg);
    char *want = file_text(a, "learner.csv"), *got = file_text(b, "learner.csv");
    assert_string_equal(got, want);
    free(want), free(got);
    int n = read_csv(a, "learner.csv", header, sizeof header, rows);
    assert_string_equal(header, "update,steps,epsilon,q_value,gradient_steps,replay_rows");
    assert_int_equal(read_csv(a, "metrics.csv", header, sizeof header, metrics), n);
    assert_true(n > 6);
    for (int r = 0; r < n; r++) {
        double steps = rows[r][1];
        assert_true(rows[r][0] == metrics[r][0] && steps == metrics[r][1]);
        /* 1 -> 0.05 over half of the 768 steps; a gradient step at each multiple of
         * dqn.train_frequency (4) past dqn.learning_starts (40); replay.size 400 */
        double epsilon = fmax(1.0 + (0.05 - 1.0) / (0.5 * 768.0) * steps, 0.05);
        double gradient_steps = fmax(0.0, floor(steps / 4.0) - 10.0);
        if (fabs(rows[r][2] - epsilon) > 1e-6 || rows[r][4] != gradient_steps ||
            rows[r][5] != fmin(steps, 400.0))
            fail_msg("row %d (steps %g): epsilon %g, gradient steps %g, replay rows %g; expected "
                     "%g, %g, %g", r + 1, steps, rows[r][2], rows[r][4], rows[r][5], epsilon,
                     gradient_steps, fmin(steps, 400.0));
        assert_true(gradient_steps > 0 ? isfinite(rows[r][3]) : isnan(rows[r][3]));
    }
    assert_true(rows[n - 1][2] == 0.05 && rows[0][2] < 1.0); /* the schedule ran to its end */

    snprintf(a, sizeof a, "%s/learner-sac", g_dir);
    snprintf(checkpoint, sizeof checkpoint, "%s/policy.safetensors", a);
    cfg = sac_config("Pendulum-v1");
    memset(&straight, 0, sizeof straight);
    train_recorded(cfg, &straight, NULL, NULL, a);
    sk_config_free(cfg);
    n = read_csv(a, "learner.csv", header, sizeof header, rows);
    assert_string_equal(header, "update,steps,alpha,qf1_value,qf2_value,gradient_steps,replay_rows");
    sk_st_file *file = NULL;
    assert_int_equal(sk_st_open(&file, checkpoint), SK_OK);
    const sk_st_tensor *log_alpha = sk_st_find(file, "sac.log_alpha");
    assert_non_null(log_alpha);
    double alpha = exp((double)((const float *)log_alpha->data)[0]);
    sk_st_close(file);
    print_message("SAC: learner.csv's last alpha %.9g, the checkpoint's exp(log_alpha) %.9g\n",
                  rows[n - 1][2], alpha);
    assert_true(fabs(rows[n - 1][2] - alpha) <= 1e-6 * alpha && alpha < 1.0);
    /* 3 gradient steps every 2 env steps past sac.learning_starts (100) of 400 */
    assert_true(rows[n - 1][1] == 400 && rows[n - 1][5] == 3 * (400 - 100) / 2);
    assert_true(rows[0][2] == 1.0 && isnan(rows[0][3]) && isfinite(rows[n - 1][4]));
}

static void test_sac_updates_on_every_thread(void **state) {
    (void)state;
    static recorder rows[2];
    sk_trainer *tr = NULL;
    for (int k = 0; k < 2; k++) {
        sk_config *cfg = sac_config("Pendulum-v1");
        sk_config_set(cfg, "env.num_envs", "1");
        sk_config_set(cfg, "train.total_steps", "240");
        sk_config_set(cfg, "train.threads", k ? "2" : "1");
        assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
        assert_int_equal(sk_trainer_threads(tr), 1); /* the vec's: one env */
        assert_int_equal(sk_trainer_learner_threads(tr), k ? 2 : 1);
        sk_trainer_destroy(tr);
        train_recorded(cfg, &rows[k], NULL, NULL, NULL);
        sk_config_free(cfg);
    }
    assert_int_equal(rows[0].count, 120);
    assert_int_equal(rows[1].count, rows[0].count);
    int learned = 0;
    for (int i = 0; i < rows[0].count; i++) {
        if (memcmp(&rows[0].rows[i], &rows[1].rows[i], sizeof rows[0].rows[i]) != 0)
            fail_msg("update %d differs between 1 and 2 threads", i + 1);
        learned += !isnan(rows[0].rows[i].value_loss);
    }
    assert_true(learned > 60);
    sk_config *cfg = sac_config("Pendulum-v1"); /* no more threads than its 2 row blocks */
    sk_config_set(cfg, "train.threads", "4");
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_learner_threads(tr), 2);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
    cfg = dqn_config("400", true);
    assert_int_equal(sk_trainer_create(&tr, cfg), SK_OK);
    assert_int_equal(sk_trainer_threads(tr), 2);
    assert_int_equal(sk_trainer_learner_threads(tr), 1);
    sk_trainer_destroy(tr);
    sk_config_free(cfg);
}

static int setup(void **state) {
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/skinner_offpolicy_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_with_the_buffer_is_exact),
        cmocka_unit_test(test_resume_without_the_buffer_says_inexact),
        cmocka_unit_test(test_what_dqn_cannot_train_is_refused),
        cmocka_unit_test(test_sac_resume_is_exact),
        cmocka_unit_test(test_sac_checkpoint_acts_as_its_actor),
        cmocka_unit_test(test_what_sac_cannot_train_is_refused),
        cmocka_unit_test(test_sac_updates_on_every_thread),
        cmocka_unit_test(test_grad_norms_only_from_the_learner_that_ran),
        cmocka_unit_test(test_events_record_the_learners_config),
        cmocka_unit_test(test_checkpoints_spaced_by_the_buffer_they_hold),
        cmocka_unit_test(test_learner_figures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
