/*
 * Connect Four's rules on bitboards (John Tromp's layout, as Pascal Pons's
 * solver): column c's cells are bits c * 7 .. c * 7 + 5 from the bottom, bit
 * c * 7 + 6 a sentinel row that stays empty, so a shift by 1 (vertical), 7
 * (horizontal), 6 and 8 (the diagonals) never wraps from one column into
 * the next. A position is the mover's stones and all stones; the module, its
 * alpha-beta searcher (search.h) and the tests share these functions.
 */
#ifndef SK_C4_H
#define SK_C4_H

#include <stdbool.h>
#include <stdint.h>

#define C4_ROWS 6
#define C4_COLS 7
#define C4_CELLS (C4_ROWS * C4_COLS)
#define C4_COL_BITS (C4_ROWS + 1)

/* The cell (row from the bottom, column) as a bit. */
static inline uint64_t c4_bit(int row, int col) { return 1ULL << (col * C4_COL_BITS + row); }

/* The bottom cell of every column, and every playable cell. */
#define C4_BOTTOM 0x0040810204081ULL /* bit c * 7 for c = 0..6 */
#define C4_FULL (C4_BOTTOM * ((1ULL << C4_ROWS) - 1))

/* Whether stones hold four in a row (any direction). */
static inline bool c4_has_four(uint64_t stones) {
    static const int shifts[4] = {1, C4_COL_BITS, C4_COL_BITS - 1, C4_COL_BITS + 1};
    for (int d = 0; d < 4; d++) {
        uint64_t pairs = stones & (stones >> shifts[d]);
        if (pairs & (pairs >> (2 * shifts[d]))) return true;
    }
    return false;
}

/* Whether column col still has room in the position `all` (every stone). */
static inline bool c4_can_play(uint64_t all, int col) {
    return (all & c4_bit(C4_ROWS - 1, col)) == 0;
}

/* The bit where a stone dropped into col lands. */
static inline uint64_t c4_drop_bit(uint64_t all, int col) {
    return (all + c4_bit(0, col)) & (((1ULL << C4_ROWS) - 1) << (col * C4_COL_BITS));
}

/* Stones of the player (mine) and every stone (all) as the mover sees them:
 * value k of the 2 x 42 planes, own stones then the opponent's, row-major
 * from the top row (row 5) to the bottom. */
static inline void c4_planes(uint64_t mine, uint64_t all, float *out) {
    for (int r = 0; r < C4_ROWS; r++)
        for (int c = 0; c < C4_COLS; c++) {
            uint64_t bit = c4_bit(C4_ROWS - 1 - r, c);
            int k = r * C4_COLS + c;
            out[k] = (mine & bit) ? 1.0f : 0.0f;
            out[C4_CELLS + k] = ((all & ~mine) & bit) ? 1.0f : 0.0f;
        }
}

/* The stones of b left-right mirrored: column c to column 6 - c. */
static inline uint64_t c4_mirror(uint64_t b) {
    uint64_t out = 0, column = (1ULL << C4_COL_BITS) - 1;
    for (int c = 0; c < C4_COLS; c++)
        out |= ((b >> (c * C4_COL_BITS)) & column) << ((C4_COLS - 1 - c) * C4_COL_BITS);
    return out;
}

/* The same board as a 6 x 7 x 3 image, channels last (row-major from the top
 * row, as c4_planes): cell (r, c)'s bytes 3 (r * 7 + c) + 0 own stone, + 1
 * the opponent's, + 2 whether it is the player's move (the same in every cell). */
static inline void c4_image(uint64_t mine, uint64_t all, bool to_move, uint8_t *out) {
    for (int r = 0; r < C4_ROWS; r++)
        for (int c = 0; c < C4_COLS; c++) {
            uint64_t bit = c4_bit(C4_ROWS - 1 - r, c);
            uint8_t *cell = out + 3 * (r * C4_COLS + c);
            cell[0] = (mine & bit) ? 1 : 0;
            cell[1] = ((all & ~mine) & bit) ? 1 : 0;
            cell[2] = to_move ? 1 : 0;
        }
}

#endif
