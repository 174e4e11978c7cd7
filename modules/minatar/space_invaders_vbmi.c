/*
 * MinAtar's Space Invaders' observation with AVX-512 VBMI, and the batch step with it inlined:
 * compiled with -march=x86-64-v4 -mavx512vbmi (modules/minatar/CMakeLists.txt), run where the
 * CPU has VBMI and the level in use is avx512 (minatar_ops_for_cpu); elsewhere the portable
 * si_observe of space_invaders.c. tests/test_minatar_space_invaders.c replays MinAtar's traces
 * through whichever this CPU runs, at every SKINNER_ISA level.
 */
#include "space_invaders_rules.h"

#include <immintrin.h>

#include <immintrin.h>

/* A row of the observation (60 bytes: ten cells of six channels) is one byte permutation of a
 * vector holding the row's maps as 0/1 bytes: the aliens in bytes 0..9, the friendly bullets in
 * 16..25, the enemy bullets in 32..41 and the cannon in 48..57 (byte 15 is always 0). The
 * permutation's indices: g_si_row_lanes[0] while the block marches left (its aliens also in
 * the left channel, none in the right), [1] while it marches right. */
enum { SI_LANE_FRIENDLY = 16, SI_LANE_ENEMY = 32, SI_LANE_CANNON = 48, SI_LANE_ZERO = 15 };
#define SI_CELL_LANES(x, left)                                                                     \
    SI_LANE_CANNON + (x), (x), (left) ? (x) : SI_LANE_ZERO, (left) ? SI_LANE_ZERO : (x),          \
        SI_LANE_FRIENDLY + (x), SI_LANE_ENEMY + (x)
#define SI_ROW_LANES(left)                                                                         \
    {SI_CELL_LANES(0, left), SI_CELL_LANES(1, left), SI_CELL_LANES(2, left),                      \
     SI_CELL_LANES(3, left), SI_CELL_LANES(4, left), SI_CELL_LANES(5, left),                      \
     SI_CELL_LANES(6, left), SI_CELL_LANES(7, left), SI_CELL_LANES(8, left),                      \
     SI_CELL_LANES(9, left), SI_LANE_ZERO, SI_LANE_ZERO, SI_LANE_ZERO, SI_LANE_ZERO}
_Static_assert(SI_CHANNEL_CANNON == 0 && SI_CHANNEL_ALIEN == 1 && SI_CHANNEL_ALIEN_LEFT == 2 &&
                   SI_CHANNEL_ALIEN_RIGHT == 3 && SI_CHANNEL_FRIENDLY_BULLET == 4 &&
                   SI_CHANNEL_ENEMY_BULLET == 5,
               "SI_CELL_LANES lists the channels in this order");
static const uint8_t g_si_row_lanes[2][64] = {SI_ROW_LANES(1), SI_ROW_LANES(0)};

/* Ten permutations and ten 60-byte stores, no branch on the board's contents (the scalar
 * version in space_invaders.c sets cells one bit at a time and mispredicts its loops' exits). */
void minatar_si_observe_vbmi(const void *state, uint8_t *obs) {
    const space_invaders *game = state;
    enum { ROW_BYTES = MINATAR_SIDE * SI_NUM_CHANNELS };
    const __m512i lanes = _mm512_loadu_si512(g_si_row_lanes[game->alien_dir < 0 ? 0 : 1]);
    const __m512i ones = _mm512_set1_epi8(1);
    const __mmask64 row_bytes = (__mmask64)((1ull << ROW_BYTES) - 1);
    for (int y = 0; y < MINATAR_SIDE; y++) {
        uint64_t cannon = y == SI_BOTTOM_ROW ? 1ull << game->cannon : 0;
        uint64_t bits = (uint64_t)(game->aliens[y] & SI_ROW_MASK) |
                        (uint64_t)(game->friendly_bullets[y] & SI_ROW_MASK) << SI_LANE_FRIENDLY |
                        (uint64_t)(game->enemy_bullets[y] & SI_ROW_MASK) << SI_LANE_ENEMY |
                        cannon << SI_LANE_CANNON;
        __m512i maps = _mm512_maskz_mov_epi8(_cvtu64_mask64(bits), ones);
        _mm512_mask_storeu_epi8(obs + y * ROW_BYTES, row_bytes,
                                _mm512_permutexvar_epi8(lanes, maps));
    }
}

void minatar_si_step_vbmi(const minatar_batch *batch, const sk_env_io *io, int lo, int hi) {
    minatar_batch_step(batch, io, lo, hi, sizeof(space_invaders), si_act, minatar_si_observe_vbmi,
                       si_reset);
}
