/*
 * The branch search of a candidate's proof (sk_rank_options.branches).
 *
 * With branches = B > 0 and alternatives = K, a candidate's greedy proof
 * (attempt 0) is followed by attempts that each leave the greedy path once:
 * at each of its first B steps t in turn, the 2nd, 3rd, ..., (K + 1)th most
 * likely action there (the ones tried before masked out), after the greedy
 * path's first t actions and followed by greedy actions. The candidate scores
 * the best log-probability of the proofs found (SK_RANK_FAILED if none). An
 * attempt's log-probability is that of the policy's own distribution: the
 * replayed steps keep the greedy path's, and the branch's is the masked
 * choice's times 1 - (the probability of the actions masked out).
 *
 * An attempt stops, like a greedy proof, once its running sum falls below the
 * candidate's bound or its best proof so far (it can no longer beat either),
 * and at a dead state; one that could not reach either is not started, and a
 * candidate stops once a proof beats its bound. None of this changes the
 * ranks (the same argument as for greedy proofs): an attempt's path is fixed
 * by the greedy path and the actions tried before at its branch step, every
 * attempt that is started reaches its branch step, and a branch past where the
 * greedy path was cut starts from a prefix that is already below the bound or
 * dead, so it cannot give a proof that counts.
 *
 * The workers (rank_workers.c) call it when an attempt starts, around each
 * policy step, and when an attempt ends.
 */
#include "rank_internal.h"

#include "skinner.h"

#include <stdio.h>

#include <stdlib.h>

#include <math.h>

/* Attempt a >= 1 of the branch search: branch step (a - 1) / alternatives,
 * taking the (a - 1) % alternatives + 2nd most likely action there. */
static int branch_step(const rank_workers *w, int a) { return (a - 1) / w->alternatives; }
static int branch_rank(const rank_workers *w, int a) { return (a - 1) % w->alternatives + 2; }

void sk_rank_branch_start(rank_workers *w, int slot, int attempt) {
    w->attempt[slot] = attempt;
    w->step[slot] = 0;
    if (attempt == 0) {
        w->best[slot] = SK_RANK_FAILED;
        w->path_len[slot] = 0;
    } else if (branch_rank(w, attempt) == 2) { /* a new branch step: only its greedy action tried */
        size_t at = (size_t)slot * (size_t)w->max_steps + (size_t)branch_step(w, attempt);
        w->tried_action[(size_t)slot * (size_t)(w->alternatives + 1)] = w->path_action[at];
        w->tried_count[slot] = 1;
        w->tried_mass[slot] = exp((double)w->path_logp[at]);
    }
}

/* Number of allowed actions in mask[0..n). */
static int32_t allowed_count(const uint8_t *mask, int n) {
    int32_t count = 0;
    for (int j = 0; j < n; j++) count += mask[j] != 0;
    return count;
}

/* Before the policy acts: at its branch step an attempt cannot take the
 * actions tried there before, and attempt 0 records how many it may take. */
void sk_rank_branch_before_act(rank_workers *w, int first, int last) {
    const sk_vec_buffers *b = sk_vec_buffers_of(w->vec);
    int mask_size = sk_vec_env(w->vec)->mask_size;
    for (int i = first; i < last; i++) {
        if (w->job[i] < 0) continue;
        int a = w->attempt[i], t = w->step[i];
        uint8_t *mask = b->masks + (size_t)i * (size_t)mask_size;
        if (a == 0 && t < w->max_steps)
            w->path_allowed[(size_t)i * (size_t)w->max_steps + (size_t)t] =
                allowed_count(mask, mask_size);
        if (a > 0 && t == branch_step(w, a)) {
            const int32_t *tried = w->tried_action + (size_t)i * (size_t)(w->alternatives + 1);
            for (int k = 0; k < w->tried_count[i]; k++) mask[tried[k]] = 0;
        }
    }
}

/* After it acted: replayed steps take the greedy path's actions and
 * log-probabilities, a branch step's log-probability becomes that of the
 * unmasked distribution (and its action is tried), and attempt 0's path is
 * recorded. */
void sk_rank_branch_after_act(rank_workers *w, int first, int last) {
    const sk_vec_buffers *b = sk_vec_buffers_of(w->vec);
    size_t heads = (size_t)sk_vec_env(w->vec)->action_space.num_heads;
    for (int i = first; i < last; i++) {
        if (w->job[i] < 0) continue;
        size_t path = (size_t)i * (size_t)w->max_steps;
        int a = w->attempt[i], t = w->step[i];
        int32_t *action = b->actions + (size_t)i * heads;
        if (a == 0) {
            if (t < w->max_steps) {
                w->path_action[path + (size_t)t] = *action;
                w->path_logp[path + (size_t)t] = w->logp[i];
                w->path_len[i] = t + 1;
            }
        } else if (t < branch_step(w, a)) {
            *action = w->path_action[path + (size_t)t];
            w->logp[i] = w->path_logp[path + (size_t)t];
        } else if (t == branch_step(w, a)) {
            w->logp[i] += (float)log1p(-w->tried_mass[i]); /* log(1 - p(the masked actions)) */
            int32_t *tried = w->tried_action + (size_t)i * (size_t)(w->alternatives + 1);
            tried[w->tried_count[i]++] = *action;
            w->tried_mass[i] += exp((double)w->logp[i]);
        }
    }
}

int sk_rank_branch_next(const rank_workers *w, int i, int attempt, bool bounded, double bound) {
    size_t path = (size_t)i * (size_t)w->max_steps;
    int len = SK_MIN(w->path_len[i], w->branches);
    if (bounded && w->best[i] > bound) return 0; /* it ranks above its true query */
    double floor = bounded ? fmax(bound, w->best[i]) : w->best[i];
    int a = attempt + 1;
    if (attempt > 0 && branch_rank(w, a) > 2) { /* the next action at the same step */
        int t = branch_step(w, a);
        double prefix = 0.0;
        for (int k = 0; k < t; k++) prefix += w->path_logp[path + (size_t)k];
        /* the next action has at most 1 - p(those tried); fewer than rank allowed: none */
        if (w->path_allowed[path + (size_t)t] >= branch_rank(w, a) && w->tried_mass[i] < 1.0 &&
            prefix + log1p(-w->tried_mass[i]) >= floor)
            return a;
        a = (t + 1) * w->alternatives + 1; /* the next step's first branch */
    }
    double prefix = 0.0;
    for (int k = 0; k < branch_step(w, a) && k < len; k++) prefix += w->path_logp[path + (size_t)k];
    for (int t = branch_step(w, a); t < len; t++) {
        float greedy = w->path_logp[path + (size_t)t];
        /* the second action has at most 1 - p(greedy action) */
        if (w->path_allowed[path + (size_t)t] >= 2 && prefix + log1p(-exp((double)greedy)) >= floor)
            return t * w->alternatives + 1;
        prefix += greedy;
    }
    return 0;
}
