/* skinner bench env / bench train. */
#include "../core/config.h"
#include "../core/core.h"
#include "../core/isa.h"
#include "../core/rng.h"
#include "skinner/vec.h"
#include "../train/trainer_internal.h"
#include "../vec/random_actions.h"
#include "comm_cli.h"
#include "commands.h"
#include "train.h"

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static const char *g_bench_usage =
    "usage: skinner bench env ENV [--num-envs N] [--threads N] [--seconds S] [--env.KEY VALUE ...] [--json]\n"
    "       skinner bench train ENV [--seconds S] [--threads N] [--SECTION.KEY VALUE ...] [--json]\n"
    "\n"
    "bench env    raw env stepping with uniformly random actions (among the allowed\n"
    "             ones where the env's masks depend on head 0), autoreset on; prints\n"
    "             env steps per second summed over threads (and agent steps, env\n"
    "             steps x agents, for a multi-agent env). --num-envs defaults to\n"
    "             4096, or the env's own default (a slow env declares a smaller one:\n"
    "             'skinner envs --json' shows it as bench_num_envs); --threads to 1\n"
    "bench train  the whole PPO loop (rollout, advantages, update) with the env's\n"
    "             preset, for S seconds (any --total-steps is ignored: the learning\n"
    "             rate stays at its configured value); prints env steps per second\n";

typedef struct env_bench {
    const sk_env_def *env;
    sk_vec *vec;
    const sk_vec_buffers *buffers; /* the vec's */
    double seconds;
    long long *steps; /* per worker */
    uint64_t seed;
    atomic_llong total; /* all workers' steps so far, for the progress line */
    bool show_progress;
    bool masked; /* the env masks choices and wants them honoured (masks_by_head0) */
    bool slow;   /* steps take milliseconds: check the clock after each */
} env_bench;

#define STEPS_PER_CHECK 64

/* Worker w writes random actions into its slice of the vec's buffer and steps
 * the slice, for b->seconds. */
static void env_bench_job(void *ctx, int w, int num_workers) {
    (void)num_workers;
    env_bench *b = ctx;
    int slice_lo, slice_hi;
    sk_vec_slice(b->vec, w, &slice_lo, &slice_hi);
    const int lo = slice_lo, hi = slice_hi;
    if (hi == lo) return;
    /* the actions are per row: (env, agent) pairs of a multi-agent env */
    const int agents = sk_vec_num_agents(b->vec), rows_lo = lo * agents, rows_hi = hi * agents;
    const sk_action_space *space = &b->env->action_space;
    /* the action loops compiled for the CPU's ISA level, like the envs' steps */
    const sk_random_actions *random = sk_random_actions_used();
    uint64_t rng = sk_rng_seed(b->seed, 0xbe4c0000ULL + (uint64_t)w);
    long long steps = 0;
    double start = sk_now(), last_print = start;
    /* a slow env (a huge knowledge base, a host network) checks the clock after every
     * step: a step of over 1/1000 of the budget makes it so, whatever the env says */
    bool slow = b->slow;
    for (double batch_start = start; batch_start - start < b->seconds; batch_start = sk_now()) {
        if (w == 0 && b->show_progress && batch_start - last_print > 0.25) {
            last_print = batch_start;
            double elapsed = last_print - start;
            long long total = atomic_load_explicit(&b->total, memory_order_relaxed);
            fprintf(stderr, "\r%s: %.3g steps  %.3g steps/s  %.1f/%.1f s  eta %.1f s\033[K",
                    b->env->id, (double)total, (double)total / elapsed, elapsed, b->seconds,
                    b->seconds - elapsed);
        }
        int k = 0;
        for (; k < STEPS_PER_CHECK; k++) {
            /* counter-based hashes of a key per step, so the discrete and continuous loops
             * run on every lane of the level in use */
            if (space->kind == SK_SPACE_CONTINUOUS)
                random->continuous(b->buffers->actions_continuous, space, rows_lo, rows_hi,
                                   (uint32_t)(sk_rng_next(&rng) >> 32));
            else if (b->masked)
                random->masked(b->buffers->actions, space, b->buffers->masks,
                               b->env->mask_size, rows_lo, rows_hi, &rng);
            else
                random->discrete(b->buffers->actions, space, rows_lo, rows_hi,
                                 (uint32_t)(sk_rng_next(&rng) >> 32));
            sk_vec_step_range(b->vec, lo, hi);
            if (!slow && steps == 0 && k == 0 && sk_now() - batch_start > b->seconds / 1000)
                slow = true; /* judged on the first step */
            if (slow && sk_now() - start >= b->seconds) {
                k++;
                break;
            }
        }
        steps += (long long)k * (hi - lo);
        atomic_fetch_add_explicit(&b->total, (long long)k * (hi - lo), memory_order_relaxed);
    }
    if (w == 0 && b->show_progress) fputs("\r\033[K", stderr);
    b->steps[w] = steps;
}

static int bench_env(int argc, char **argv) {
    if (argc < 1 || argv[0][0] == '-') {
        bool help = argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0);
        fputs(g_bench_usage, help ? stdout : stderr);
        return help ? SK_EXIT_OK : cli_error(SK_EXIT_USAGE, "missing ENV (see 'skinner envs')");
    }
    const sk_env_def *env = sk_env_find(argv[0]);
    if (!env) return cli_error(SK_EXIT_USAGE, "%s", sk_last_error());
    long long num_envs = sk_env_extras_of(env)->bench_num_envs ? sk_env_extras_of(env)->bench_num_envs : 4096, threads = 1;
    double seconds = 3.0;
    bool json = false;
    int rc = SK_EXIT_OK;
    sk_config *cfg = sk_config_new(); /* env.* options, e.g. --env.dataset PATH */
    cli_args args = {argc, 1, argv};
    while (args.index < argc) {
        const char *value = NULL, *arg = argv[args.index];
        bool missing = false;
        if (cli_env_flag(&args, cfg, &rc)) {
            if (rc != SK_EXIT_OK) {
                sk_config_free(cfg);
                return rc;
            }
            continue;
        }
        if (cli_flag(&args, "--num-envs", &value, &missing)) {
            if (!missing && !cli_parse_int("--num-envs", value, 1, 1 << 24, &num_envs, &rc)) goto usage_error;
        } else if (cli_flag(&args, "--threads", &value, &missing)) {
            if (!missing && !cli_parse_int("--threads", value, 1, 1024, &threads, &rc)) goto usage_error;
        } else if (cli_flag(&args, "--seconds", &value, &missing)) {
            if (!missing && !cli_parse_double("--seconds", value, 0.01, 1e6, &seconds, &rc)) goto usage_error;
        } else if (cli_flag(&args, "--json", NULL, NULL)) {
            json = true;
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(g_bench_usage, stdout);
            sk_config_free(cfg);
            return SK_EXIT_OK;
        } else {
            rc = cli_error(SK_EXIT_USAGE, "unknown option '%s' (see 'skinner bench --help')", arg);
            goto usage_error;
        }
        if (missing) {
            rc = cli_error(SK_EXIT_USAGE, "option '%s' needs a value", arg);
            goto usage_error;
        }
    }
    if (threads > num_envs) threads = num_envs;
    env_bench b = {.seconds = seconds, .seed = 1, .show_progress = isatty(STDERR_FILENO) != 0,
                   .slow = sk_env_extras_of(env)->bench_num_envs > 0};
    b.steps = calloc((size_t)threads, sizeof(long long));
    if (!b.steps) {
        rc = cli_error(SK_EXIT_FAILURE, "out of memory for %lld threads", threads);
        goto done;
    }
    if (sk_vec_create(&b.vec, env, (int)num_envs, (int)threads, cfg) != SK_OK ||
        sk_cfg_check_unused(cfg, "env") != SK_OK) {
        rc = cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
        goto done;
    }
    b.env = env = sk_vec_env(b.vec); /* the sizes its config gave it */
    b.masked = env->mask_size > 0 && env->action_space.masks_by_head0;
    b.buffers = sk_vec_buffers_of(b.vec);
    sk_vec_reset(b.vec, b.seed);
    double start = sk_now();
    sk_vec_parallel(b.vec, env_bench_job, &b);
    double elapsed = sk_now() - start;
    long long total = 0;
    for (int w = 0; w < threads; w++) total += b.steps[w];
    double sps = (double)total / elapsed;
    int agents = sk_vec_num_agents(b.vec); /* a multi-agent env's steps move every agent */
    if (json)
        printf("{\"bench\": \"env\", \"env\": \"%s\", \"num_envs\": %lld, \"threads\": %lld, "
               "\"seconds\": %.3f, \"steps\": %lld, \"sps\": %.0f, \"num_agents\": %d, "
               "\"agent_sps\": %.0f, \"isa\": \"%s\"}\n",
               env->id, num_envs, threads, elapsed, total, sps, agents, sps * agents,
               sk_isa_level_name(sk_isa_level_used()));
    else if (agents > 1)
        printf("%s: %lld envs of %d agents, %lld thread%s, %.2f s: %.3g env steps/s, %.3g agent "
               "steps/s\n", env->id, num_envs, agents, threads, threads == 1 ? "" : "s", elapsed,
               sps, sps * agents);
    else
        printf("%s: %lld envs, %lld thread%s, %.2f s: %.3g env steps/s\n", env->id, num_envs,
               threads, threads == 1 ? "" : "s", elapsed, sps);
done:
    sk_vec_destroy(b.vec);
    free(b.steps);
    sk_config_free(cfg);
    return rc;
usage_error:
    sk_config_free(cfg);
    return rc;
}

typedef struct train_bench {
    double seconds;
    cli_progress progress;
} train_bench;

static bool stop_after(const sk_update_stats *st, void *user) {
    train_bench *b = user;
    cli_progress_update(st, &b->progress);
    return st->wall_seconds < b->seconds;
}

static int bench_train(int argc, char **argv) {
    sk_run_plan plan;
    if (sk_run_plan_init(&plan) != SK_OK) return cli_error(SK_EXIT_FAILURE, "%s", sk_last_error());
    sk_config *cfg = plan.cfg;
    cli_train_extra extra = {.allow_bench_flags = true, .seconds = 10.0};
    char *unused_resume = NULL;
    /* under mpirun: rank 0's command line for every rank, rank 0 reports */
    const sk_comm *comm = cli_comm();
    int rc = cli_train_config_shared(argc, argv, &plan, &extra, g_bench_usage, &unused_resume);
    free(unused_resume);
    if (rc != SK_EXIT_OK || extra.help) {
        sk_run_plan_free(&plan);
        return rc;
    }
    bool root = comm->rank == 0;
    if (comm->size > 1) {
        /* the seconds budget is rank 0's too */
        double seconds = extra.seconds;
        sk_comm_bcast_f64(comm, &seconds, 1, 0);
        extra.seconds = seconds;
    }
    /* a bench runs for --seconds, not for steps: the learning rate is annealed
     * over a budget it never reaches, so it stays at its configured value */
    sk_config_set(cfg, "train.total_steps", "1000000000000");
    sk_trainer *trainer = NULL;
    if (sk_trainer_create_plan(&trainer, &plan, comm) != SK_OK) {
        rc = root ? cli_error(SK_EXIT_FAILURE, "%s", sk_last_error()) : SK_EXIT_FAILURE;
        sk_run_plan_free(&plan);
        return rc;
    }
    train_bench b = {.seconds = extra.seconds,
                     .progress = {.tty = isatty(STDERR_FILENO),
                                  .quiet = extra.quiet || !isatty(STDERR_FILENO) || !root,
                                  .seconds_budget = extra.seconds}};
    sk_trainer_set_callback(trainer, stop_after, &b);
    cli_comm_traffic before = cli_comm_traffic_of();
    sk_status run_status = sk_trainer_run(trainer);
    cli_comm_traffic after = cli_comm_traffic_of();
    if (b.progress.tty && !b.progress.quiet) fputs("\r\033[K", stderr);
    if (run_status != SK_OK) {
        rc = root ? cli_error(SK_EXIT_FAILURE, "%s", sk_last_error()) : SK_EXIT_FAILURE;
    } else if (root) {
        sk_train_result r = sk_trainer_result(trainer);
        char mean_return[32] = "null"; /* JSON has no NaN: no episode finished */
        if (!isnan(r.final_mean_return))
            snprintf(mean_return, sizeof mean_return, "%.4g", r.final_mean_return);
        double flops = sk_trainer_flops_per_step(trainer);
        /* what rank 0 handed MPI to send per update (0 in one process) */
        double updates = (double)r.total_steps / (double)sk_trainer_batch_size(trainer);
        double bytes = updates > 0 ? (double)(after.bytes - before.bytes) / updates : 0.0;
        double calls = updates > 0 ? (double)(after.calls - before.calls) / updates : 0.0;
        double reduce_bytes =
            updates > 0 ? (double)(after.allreduce_bytes - before.allreduce_bytes) / updates : 0.0;
        double reduces =
            updates > 0 ? (double)(after.allreduce_calls - before.allreduce_calls) / updates : 0.0;
        double rollout_seconds, learn_seconds;
        sk_trainer_time_split(trainer, &rollout_seconds, &learn_seconds);
        if (extra.json)
            printf("{\"bench\": \"train\", \"isa\": \"%s\", \"env\": \"%s\", \"processes\": %d, \"threads\": %d, "
                   "\"seconds\": %.3f, \"rollout_seconds\": %.3f, \"learn_seconds\": %.3f, "
                   "\"steps\": %lld, \"sps\": %.0f, \"mean_return\": %s, "
                   "\"flops_per_step\": %.0f, \"gflops\": %.3f, \"updates\": %.0f, "
                   "\"comm_bytes_per_update\": %.0f, \"comm_calls_per_update\": %.1f, "
                   "\"comm_allreduce_bytes_per_update\": %.0f, "
                   "\"comm_allreduces_per_update\": %.1f, \"params\": %zu, \"batch\": %d, "
                   "\"comm_mode\": \"%s\", \"rollout_bytes_per_rank\": %zu, "
                   "\"exchange_bytes_per_rank\": %zu, \"slices\": %d, \"rollout_idle\": %.4f}\n",
                   sk_isa_level_name(sk_isa_level_used()), plan.env->id, comm->size,
                   sk_trainer_threads(trainer), r.wall_seconds,
                   rollout_seconds, learn_seconds, (long long)r.total_steps, r.sps, mean_return, flops, flops * r.sps * 1e-9,
                   updates, bytes, calls, reduce_bytes, reduces, sk_trainer_num_params(trainer),
                   sk_trainer_batch_size(trainer), trainer->s.comm_scale ? "scale" : "exact",
                   sk_trainer_rollout_bytes(trainer), sk_trainer_exchange_bytes(trainer),
                   trainer->num_workers, sk_trainer_rollout_idle(trainer));
        else {
            printf("%s: PPO loop %.2f s, %lld env steps: %.3g env steps/s (mean return %.1f); "
                   "model %.3g FLOPs/step, %.2f GFLOP/s\n",
                   plan.env->id, r.wall_seconds, (long long)r.total_steps, r.sps,
                   r.final_mean_return, flops, flops * r.sps * 1e-9);
            printf("time: rollout (envs, acting) %.2f s (%.0f%%), learning %.2f s (%.0f%%); "
                   "threads idle %.1f%% of the rollout (%d slices on %d threads)\n",
                   rollout_seconds, 100.0 * rollout_seconds / r.wall_seconds, learn_seconds,
                   100.0 * learn_seconds / r.wall_seconds, 100.0 * sk_trainer_rollout_idle(trainer),
                   trainer->num_workers, sk_trainer_threads(trainer));
            if (comm->size > 1)
                printf("%d processes x %d threads; rank 0 sent %.3g bytes in %.0f collective calls "
                       "per update\n",
                       comm->size, sk_trainer_threads(trainer), bytes, calls);
        }
    }
    sk_trainer_destroy(trainer);
    sk_run_plan_free(&plan);
    return rc;
}

/* Which kernels a figure came from, on its own line ahead of text output (--json carries "isa"). */
static void print_kernels(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return;
    char isa[160];
    sk_isa_describe(isa, sizeof isa);
    printf("kernels: %s\n", isa);
}

int cmd_bench(int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "env") == 0) {
        print_kernels(argc, argv);
        return bench_env(argc - 1, argv + 1);
    }
    if (argc >= 1 && strcmp(argv[0], "train") == 0) {
        print_kernels(argc, argv);
        return bench_train(argc - 1, argv + 1);
    }
    bool help = argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0);
    fputs(g_bench_usage, help ? stdout : stderr);
    if (help) return SK_EXIT_OK;
    return cli_error(SK_EXIT_USAGE, argc ? "unknown bench '%s' (expected env or train)"
                                          : "missing what to bench%s (expected env or train)",
                     argc ? argv[0] : "");
}
