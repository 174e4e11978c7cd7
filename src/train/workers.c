/*
 * The workers' dispatch: a job run for every worker on the vec's threads, one worker a thread
 * or, with train.slices, more workers taken as each thread comes free; and the rollout's
 * idle share it measures (sk_trainer_rollout_idle).
 */
#include "trainer_internal.h"

typedef struct dispatch {
    sk_trainer *tr;
    sk_parallel_job job;
} dispatch;

static void dispatch_job(void *ctx, int thread, int num_threads) {
    const dispatch *d = ctx;
    sk_trainer *tr = d->tr;
    double start = sk_now();
    if (tr->num_workers == num_threads) {
        d->job(tr, thread, num_threads);
    } else {
        for (int w; (w = atomic_fetch_add_explicit(&tr->next_worker, 1, memory_order_relaxed)) <
                    tr->num_workers;)
            d->job(tr, w, tr->num_workers);
    }
    tr->thread_busy[thread] = sk_now() - start;
}

double sk_trainer_run_workers(sk_trainer *tr, sk_parallel_job job) {
    dispatch d = {tr, job};
    atomic_store_explicit(&tr->next_worker, 0, memory_order_relaxed); /* published by the run */
    double start = sk_now();
    sk_vec_parallel(tr->vec, dispatch_job, &d);
    return sk_now() - start;
}

double sk_trainer_run_rollout(sk_trainer *tr) {
    /* here, between the learner's last write of the weights (an update, a restore, a
     * checkpoint's load) and the workers' reads: every rollout starts from a fresh copy;
     * self-play's pool_t is made where a member is written (selfplay.c), as members change
     * only every selfplay.snapshot_every updates */
    sk_learner *ln = &tr->learner;
    sk_policy_transpose_weights(&ln->policy, ln->params, ln->params_t);
    size_t pool = sk_selfplay_pool_floats(tr);
    for (int w = 0; w < tr->num_workers; w++) {
        sk_policy_work *work = &tr->workers[w].work;
        sk_policy_work_use_transposed(work, 0, ln->params, ln->params_t, ln->policy.num_params);
        sk_policy_work_use_transposed(work, 1, pool ? tr->sp.pool : NULL, tr->sp.pool_t, pool);
    }
    double wall = sk_trainer_run_workers(tr, sk_rollout_job);
    for (int w = 0; w < tr->num_workers; w++)
        for (int slot = 0; slot < SK_POLICY_TRANSPOSED; slot++)
            sk_policy_work_use_transposed(&tr->workers[w].work, slot, NULL, NULL, 0);
    return wall;
}

void sk_trainer_run_threads(sk_trainer *tr, sk_parallel_job job, void *ctx) {
    sk_vec_parallel(tr->vec, job, ctx);
}

double sk_trainer_rollout_idle(const sk_trainer *tr) {
    const sk_run_progress *p = &tr->progress;
    return p->rollout_available > 0 ? SK_MAX(0.0, 1.0 - p->rollout_busy / p->rollout_available)
                                     : 0.0;
}
