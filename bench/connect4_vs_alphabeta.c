/*
 * connect4_vs_alphabeta CHECKPOINT [GAMES] [MAX_DEPTH] [SEED] [--sample]: a
 * trained ConnectFour-v0 policy against the alpha-beta searcher of
 * modules/connect4/search.h (the module's opponent "alphabeta") at depths 1..MAX_DEPTH (default 200 games, depth 6,
 * seed 1), first move alternating (the policy moves first in the even games).
 * The policy acts greedily (its most likely legal column) unless --sample;
 * the searcher breaks ties at random, so games differ. Prints one Markdown
 * row per depth: wins, draws, losses and the win rate of the policy.
 * C4_MIN_DEPTH=0 adds depth 0, a uniformly random opponent; C4_ENV=ConnectFour-v1
 * for a policy of the image observation. A policy.per_role checkpoint plays each side
 * with that side's policy (first's when it moves first, second's when second).
 * C4_RAW=1 plays a ppo.ema_decay checkpoint's weights (state.raw_params) rather than
 * their moving average, the policy it holds.
 */
#include "connect4/c4.h"
#include "connect4/search.h"
#include "train/actor.h"
#include "train/eval.h"

#include "skinner/safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OBS_SIZE (2 * C4_CELLS + 1)

/* The policy's column for the mover (stones mine, all), with the observation
 * its env builds: ConnectFour-v0's planes or v1's image. With a policy per role
 * (policy.per_role) the rows are an env's two agents: the position goes in the
 * mover's row (side: 0 first, 1 second), the other row a copy whose action is unused. */
static int policy_move(sk_policy_actor *pa, uint64_t mine, uint64_t all, int side, bool greedy) {
    int rows = sk_policy_roles(&pa->lp->policy), row = rows > 1 ? side : 0;
    uint8_t mask[2 * C4_COLS];
    for (int c = 0; c < C4_COLS; c++) mask[c] = mask[C4_COLS + c] = c4_can_play(all, c);
    int32_t action[2] = {0, 0};
    if (pa->lp->env->obs_dtype == SK_OBS_U8) {
        uint8_t image[2][3 * C4_CELLS];
        c4_image(mine, all, true, image[0]);
        memcpy(image[1], image[0], sizeof image[0]);
        sk_policy_actor_act_u8(pa, 0, image[0], mask, rows, greedy, action, NULL, NULL);
        return action[row];
    }
    float obs[2][OBS_SIZE];
    c4_planes(mine, all, obs[0]);
    obs[0][2 * C4_CELLS] = 1.0f; /* its move */
    memcpy(obs[1], obs[0], sizeof obs[0]);
    sk_policy_actor_act(pa, 0, obs[0], mask, rows, greedy, action, NULL, NULL);
    return action[row];
}

/* Depth 0: a uniformly random legal column (a baseline below the searcher). */
static int random_move(uint64_t all, uint64_t *rng) {
    int legal[C4_COLS], count = 0;
    for (int c = 0; c < C4_COLS; c++)
        if (c4_can_play(all, c)) legal[count++] = c;
    return legal[sk_rng_below(rng, (uint32_t)count)];
}

/* One game: +1 the policy won, 0 a draw, -1 it lost. */
static int play(sk_policy_actor *pa, int depth, bool policy_first, bool greedy, uint64_t *rng) {
    uint64_t stones[2] = {0, 0}, all = 0; /* [0]: the policy's */
    int mover = policy_first ? 0 : 1;
    for (int ply = 0; ply < C4_CELLS; ply++) {
        int col = mover == 0 ? policy_move(pa, stones[0], all, policy_first ? 0 : 1, greedy)
                  : depth > 0 ? c4_search_move(stones[1], all, depth, rng, NULL)
                              : random_move(all, rng);
        if (col < 0 || col >= C4_COLS || !c4_can_play(all, col)) return mover == 0 ? -1 : 1;
        uint64_t stone = c4_drop_bit(all, col);
        stones[mover] |= stone;
        all |= stone;
        if (c4_has_four(stones[mover])) return mover == 0 ? 1 : -1;
        mover = 1 - mover;
    }
    return 0;
}

/* lp's weights from the checkpoint's state.raw_params (ppo.ema_decay's, in the policy's
 * flat layout); false, said on stderr, without them. */
static bool raw_weights(sk_loaded_policy *lp, const char *path) {
    sk_st_file *file = NULL;
    if (sk_st_open(&file, path) != SK_OK) return false;
    const sk_st_tensor *raw = sk_st_find(file, "state.raw_params");
    bool ok = raw && raw->dtype == SK_ST_F32 && raw->ndim == 1 &&
              raw->shape[0] == (int64_t)lp->policy.num_params;
    if (ok) memcpy(lp->params, raw->data, lp->policy.num_params * sizeof(float));
    else fprintf(stderr, "connect4_vs_alphabeta: C4_RAW: %s has no state.raw_params of %zu "
                 "floats (not a ppo.ema_decay run's checkpoint)\n", path, lp->policy.num_params);
    sk_st_close(file);
    return ok;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CHECKPOINT [GAMES] [MAX_DEPTH] [SEED] [--sample]\n", argv[0]);
        return 2;
    }
    int games = argc > 2 ? atoi(argv[2]) : 200, max_depth = argc > 3 ? atoi(argv[3]) : 6;
    uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
    bool greedy = !(argc > 5 && strcmp(argv[5], "--sample") == 0);
    sk_loaded_policy lp;
    sk_policy_actor pa;
    const char *env_id = getenv("C4_ENV") ? getenv("C4_ENV") : "ConnectFour-v0";
    bool loaded = sk_policy_load(&lp, argv[1], env_id) == SK_OK;
    if (loaded && getenv("C4_RAW") && !raw_weights(&lp, argv[1])) return 1;
    if (!loaded || sk_policy_actor_init(&pa, &lp, 1, 2, seed) != SK_OK) {
        fprintf(stderr, "connect4_vs_alphabeta: %s\n", sk_last_error());
        return 1;
    }
    printf("| depth | games | wins | draws | losses | win rate | as first | as second |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    int min_depth = getenv("C4_MIN_DEPTH") ? atoi(getenv("C4_MIN_DEPTH")) : 1;
    for (int depth = min_depth; depth <= max_depth; depth++) {
        uint64_t rng = sk_rng_seed(seed, (uint64_t)depth);
        int wins = 0, draws = 0, losses = 0, first_wins = 0, second_wins = 0;
        for (int g = 0; g < games; g++) {
            bool first = g % 2 == 0;
            int result = play(&pa, depth, first, greedy, &rng);
            wins += result > 0;
            draws += result == 0;
            losses += result < 0;
            if (result > 0) *(first ? &first_wins : &second_wins) += 1;
        }
        printf("| %d | %d | %d | %d | %d | %.1f%% | %d/%d | %d/%d |\n", depth, games, wins, draws,
               losses, 100.0 * wins / games, first_wins, (games + 1) / 2, second_wins, games / 2);
        fflush(stdout);
    }
    sk_policy_actor_free(&pa);
    sk_loaded_policy_free(&lp);
    return 0;
}
