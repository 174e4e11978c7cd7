/*
 * A depth-limited alpha-beta (negamax) searcher for Connect Four: the module's
 * built-in opponent "alphabeta:DEPTH" (`skinner eval ConnectFour-v1 --opponent
 * alphabeta:4`, env.c's opponent table), which bench/connect4_vs_alphabeta.c
 * also plays. It is an opponent, never part of a policy: it reads the whole
 * board and searches it, which no trained policy does.
 *
 * Depth d looks d plies ahead (1: the mover's own drop). A win found at ply p
 * scores C4_SEARCH_WIN - p (sooner is better), a loss the negation; a leaf
 * scores the board by its open windows of four (the 69 rows, columns and
 * diagonals of four cells holding stones of one player only: 1, 4 and 16 for
 * one, two and three stones, for the mover minus the opponent's) plus 2 per
 * stone in the centre column. The root picks uniformly at random among the
 * best-scoring columns (rng), so games against it vary.
 */
#ifndef SK_CONNECT4_SEARCH_H
#define SK_CONNECT4_SEARCH_H

#include <stdint.h>

#define C4_SEARCH_WIN 1000000
#define C4_SEARCH_MAX_DEPTH 10

/* The score of the position for the mover (stones mine, every stone all) by
 * the leaf heuristic above. */
int c4_search_eval(uint64_t mine, uint64_t all);

/* The mover's column by a depth-`depth` search (1..C4_SEARCH_MAX_DEPTH), ties broken by rng;
 * -1 when the board is full. *score (may be NULL): the chosen column's value. */
int c4_search_move(uint64_t mine, uint64_t all, int depth, uint64_t *rng, int *score);

#endif
