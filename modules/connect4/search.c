/* The alpha-beta searcher of search.h. */
#include "search.h"

#include <skinner/env.h>

#include "c4.h"

#include <pthread.h>

#define NUM_WINDOWS 69

static uint64_t g_windows[NUM_WINDOWS];
static int g_num_windows;
/* the table is filled once, whichever thread searches first (an evaluation's workers may) */
static pthread_once_t g_windows_once = PTHREAD_ONCE_INIT;

/* Every line of four cells as a mask. */
static void windows_fill(void) {
    static const int steps[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}}; /* (row, col) */
    int count = 0;
    for (int d = 0; d < 4; d++)
        for (int r = 0; r < C4_ROWS; r++)
            for (int c = 0; c < C4_COLS; c++) {
                int r3 = r + 3 * steps[d][0], c3 = c + 3 * steps[d][1];
                if (r3 < 0 || r3 >= C4_ROWS || c3 < 0 || c3 >= C4_COLS) continue;
                uint64_t mask = 0;
                for (int k = 0; k < 4; k++) mask |= c4_bit(r + k * steps[d][0], c + k * steps[d][1]);
                g_windows[count++] = mask;
            }
    g_num_windows = count; /* 24 rows + 21 columns + 12 + 12 diagonals */
}

static void windows_init(void) { pthread_once(&g_windows_once, windows_fill); }

int c4_search_eval(uint64_t mine, uint64_t all) {
    static const int weight[4] = {0, 1, 4, 16};
    windows_init();
    uint64_t theirs = all & ~mine;
    int score = 0;
    for (int w = 0; w < g_num_windows; w++) {
        uint64_t window = g_windows[w];
        int own = __builtin_popcountll(mine & window), other = __builtin_popcountll(theirs & window);
        if (own && !other) score += weight[own];
        else if (other && !own) score -= weight[other];
    }
    uint64_t centre = ((1ULL << C4_ROWS) - 1) << (3 * C4_COL_BITS);
    return score + 2 * (__builtin_popcountll(mine & centre) - __builtin_popcountll(theirs & centre));
}

static const int g_order[C4_COLS] = {3, 2, 4, 1, 5, 0, 6}; /* centre first: more cut-offs */

static int negamax(uint64_t mine, uint64_t all, int depth, int ply, int alpha, int beta) {
    if (__builtin_popcountll(all) == C4_CELLS) return 0;
    for (int c = 0; c < C4_COLS; c++) /* a win now ends the search of this node */
        if (c4_can_play(all, c) && c4_has_four(mine | c4_drop_bit(all, c)))
            return C4_SEARCH_WIN - ply;
    if (depth <= 1) {
        /* the mover's best drop by the heuristic, seen from the mover */
        int best = -C4_SEARCH_WIN;
        for (int k = 0; k < C4_COLS; k++) {
            int c = g_order[k];
            if (!c4_can_play(all, c)) continue;
            uint64_t stone = c4_drop_bit(all, c);
            int value = c4_search_eval(mine | stone, all | stone);
            if (value > best) best = value;
        }
        return best;
    }
    int best = -C4_SEARCH_WIN;
    for (int k = 0; k < C4_COLS; k++) {
        int c = g_order[k];
        if (!c4_can_play(all, c)) continue;
        uint64_t next_all = all | c4_drop_bit(all, c);
        /* the opponent moves next: its stones are next_all minus ours */
        int value = -negamax(next_all & ~(mine | c4_drop_bit(all, c)), next_all, depth - 1,
                             ply + 1, -beta, -alpha);
        if (value > best) best = value;
        if (value > alpha) alpha = value;
        if (alpha >= beta) break;
    }
    return best;
}

int c4_search_move(uint64_t mine, uint64_t all, int depth, uint64_t *rng, int *score) {
    int values[C4_COLS], best = -C4_SEARCH_WIN - 1, any = 0;
    for (int c = 0; c < C4_COLS; c++) {
        values[c] = 0;
        if (!c4_can_play(all, c)) continue;
        any = 1;
        uint64_t stone = c4_drop_bit(all, c), next_all = all | stone;
        if (c4_has_four(mine | stone)) values[c] = C4_SEARCH_WIN;
        else if (depth <= 1) values[c] = c4_search_eval(mine | stone, next_all);
        else /* full window at the root: exact values, so ties are true ties */
            values[c] = -negamax(next_all & ~(mine | stone), next_all, depth - 1, 1,
                                 -C4_SEARCH_WIN - 1, C4_SEARCH_WIN + 1);
        if (values[c] > best) best = values[c];
    }
    if (!any) return -1;
    int ties = 0;
    for (int c = 0; c < C4_COLS; c++) ties += c4_can_play(all, c) && values[c] == best;
    int pick = (int)sk_rng_below(rng, (uint32_t)ties);
    for (int c = 0; c < C4_COLS; c++)
        if (c4_can_play(all, c) && values[c] == best && pick-- == 0) {
            if (score) *score = best;
            return c;
        }
    return -1;
}
