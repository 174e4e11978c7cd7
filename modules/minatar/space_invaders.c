/*
 * MinAtar's Space Invaders (rules restated from MinAtar 1.0.15 in
 * ../shared/reference/minatar/rules/space_invaders.md): a cannon on the bottom
 * row shoots upward at a block of 24 aliens that marches sideways, steps down
 * at the walls and shoots back. +1 per alien killed; the game ends when an
 * alien or an enemy bullet reaches the cannon, or when the block steps down
 * while it holds an alien on the bottom row. A cleared wave is refilled, and
 * with difficulty ramping the aliens then move one frame faster (down to 6).
 *
 * The game draws no random numbers (the only draw per act() is the sticky
 * rule's, made by the caller), so its rng argument is unused.
 */
#include "space_invaders.h"

#include "minatar_batch.h"

enum {
    SI_CHANNEL_CANNON,
    SI_CHANNEL_ALIEN,
    SI_CHANNEL_ALIEN_LEFT,  /* every alien, while the block marches left */
    SI_CHANNEL_ALIEN_RIGHT, /* every alien, while the block marches right */
    SI_CHANNEL_FRIENDLY_BULLET,
    SI_CHANNEL_ENEMY_BULLET,
    SI_NUM_CHANNELS
};

#define SI_BOTTOM_ROW (MINATAR_SIDE - 1)      /* the cannon's row */
#define SI_RIGHT_COLUMN (MINATAR_SIDE - 1)
#define SI_ROW_MASK ((1u << MINATAR_SIDE) - 1) /* the ten cells of a row */
#define SI_CANNON_START 5
#define SI_SHOT_COOL_DOWN 5       /* frames between the cannon's shots */
#define SI_ENEMY_MOVE_INTERVAL 12 /* frames between alien moves, at the start */
#define SI_ENEMY_MOVE_FASTEST 6   /* ramping stops once the interval is down to this */
#define SI_ENEMY_SHOT_INTERVAL 10 /* frames between alien shots */
/* A wave: rows 0..3, columns 2..7 (24 aliens) */
#define SI_WAVE_ROWS 4
#define SI_WAVE_COLUMNS (((1u << 8) - 1) & ~((1u << 2) - 1))

static void si_init(void *state, bool ramping) {
    space_invaders *game = state;
    *game = (space_invaders){.ramping = ramping};
}

static void si_fill_wave(space_invaders *game) {
    for (int y = 0; y < SI_WAVE_ROWS; y++) game->aliens[y] = (uint16_t)SI_WAVE_COLUMNS;
}

static void si_reset(void *state, minatar_rng *rng) {
    (void)rng; /* MinAtar's reset draws nothing */
    space_invaders *game = state;
    bool ramping = game->ramping;
    *game = (space_invaders){
        .cannon = SI_CANNON_START,
        .alien_dir = -1,
        .move_interval = SI_ENEMY_MOVE_INTERVAL,
        .move_timer = SI_ENEMY_MOVE_INTERVAL,
        .shot_timer = SI_ENEMY_SHOT_INTERVAL,
        .ramping = ramping,
    };
    si_fill_wave(game);
}

/* The columns holding at least one cell of a map, as bits. */
static unsigned si_columns(const uint16_t rows[MINATAR_SIDE]) {
    unsigned columns = 0;
    for (int y = 0; y < MINATAR_SIDE; y++) columns |= rows[y];
    return columns;
}

static int si_count(const uint16_t rows[MINATAR_SIDE]) {
    int count = 0;
    for (int y = 0; y < MINATAR_SIDE; y++) count += __builtin_popcount(rows[y]);
    return count;
}

/* The aliens' march: sideways, or down one row (and turn) at a wall. */
static void si_move_aliens(space_invaders *game) {
    int alien_count = si_count(game->aliens);
    game->move_timer = alien_count < game->move_interval ? alien_count : game->move_interval;
    unsigned columns = si_columns(game->aliens);
    bool at_left_wall = (columns & 1u) && game->alien_dir < 0;
    bool at_right_wall = (columns & (1u << SI_RIGHT_COLUMN)) && game->alien_dir > 0;
    if (at_left_wall || at_right_wall) {
        game->alien_dir = -game->alien_dir;
        if (game->aliens[SI_BOTTOM_ROW]) game->terminal = true;
        /* MinAtar rolls the map: the bottom row comes back as the top row */
        uint16_t bottom = game->aliens[SI_BOTTOM_ROW];
        for (int y = SI_BOTTOM_ROW; y > 0; y--) game->aliens[y] = game->aliens[y - 1];
        game->aliens[0] = bottom;
    } else {
        /* a roll too in MinAtar, but the leading column is empty, so nothing wraps */
        for (int y = 0; y < MINATAR_SIDE; y++) {
            unsigned row = game->aliens[y];
            row = game->alien_dir < 0 ? row >> 1 : row << 1;
            game->aliens[y] = (uint16_t)(row & SI_ROW_MASK);
        }
    }
    if (game->aliens[SI_BOTTOM_ROW] & (1u << game->cannon)) game->terminal = true;
}

/* The aliens' shot: from the lowest alien of the column nearest the cannon (of two at the
 * same distance, the left one), starting on that alien's own cell. */
static void si_alien_shoots(space_invaders *game) {
    unsigned columns = si_columns(game->aliens);
    for (int distance = 0; distance < MINATAR_SIDE; distance++) {
        const int candidates[2] = {game->cannon - distance, game->cannon + distance};
        for (int k = 0; k < (distance ? 2 : 1); k++) {
            int x = candidates[k];
            if (x < 0 || x >= MINATAR_SIDE || !(columns & (1u << x))) continue;
            int y = SI_BOTTOM_ROW;
            while (!(game->aliens[y] & (1u << x))) y--;
            game->enemy_bullets[y] |= (uint16_t)(1u << x);
            return;
        }
    }
}

static float si_act(void *state, minatar_rng *rng, int action, bool *terminal) {
    (void)rng; /* the game draws nothing */
    space_invaders *game = state;
    if (game->terminal) {
        *terminal = true;
        return 0.0f;
    }
    int reward = 0;
    /* the cannon: fire when cooled down, otherwise (or for any other action) move */
    if (action == MINATAR_FIRE && game->cool_down == 0) {
        game->friendly_bullets[SI_BOTTOM_ROW] |= (uint16_t)(1u << game->cannon);
        game->cool_down = SI_SHOT_COOL_DOWN;
    } else if (action == MINATAR_LEFT && game->cannon > 0) {
        game->cannon--;
    } else if (action == MINATAR_RIGHT && game->cannon < SI_RIGHT_COLUMN) {
        game->cannon++;
    }
    /* bullets: the cannon's move up (off the top, gone), the aliens' down (off the bottom) */
    for (int y = 0; y < SI_BOTTOM_ROW; y++)
        game->friendly_bullets[y] = game->friendly_bullets[y + 1];
    game->friendly_bullets[SI_BOTTOM_ROW] = 0;
    for (int y = SI_BOTTOM_ROW; y > 0; y--) game->enemy_bullets[y] = game->enemy_bullets[y - 1];
    game->enemy_bullets[0] = 0;
    unsigned cannon_bit = 1u << game->cannon;
    if (game->enemy_bullets[SI_BOTTOM_ROW] & cannon_bit) game->terminal = true;
    if (game->aliens[SI_BOTTOM_ROW] & cannon_bit) game->terminal = true;
    /* the aliens move, then shoot, each on its timer */
    if (game->move_timer == 0) si_move_aliens(game);
    if (game->shot_timer == 0) {
        game->shot_timer = SI_ENEMY_SHOT_INTERVAL;
        si_alien_shoots(game);
    }
    /* hits: only cells where a bullet and an alien end the frame together (a bullet and an
     * alien that swap cells pass through each other, as in MinAtar) */
    for (int y = 0; y < MINATAR_SIDE; y++) {
        uint16_t hits = game->aliens[y] & game->friendly_bullets[y];
        reward += __builtin_popcount(hits);
        game->aliens[y] &= (uint16_t)~hits;
        game->friendly_bullets[y] &= (uint16_t)~hits;
    }
    if (game->cool_down > 0) game->cool_down--;
    game->move_timer--;
    game->shot_timer--;
    /* a cleared wave: a new one (direction and timers kept), faster with ramping */
    if (si_count(game->aliens) == 0) {
        if (game->move_interval > SI_ENEMY_MOVE_FASTEST && game->ramping) {
            game->move_interval--;
            game->ramp_index++;
        }
        si_fill_wave(game);
    }
    *terminal = game->terminal;
    return (float)reward;
}

#if defined(__AVX512VBMI__) && defined(__AVX512BW__)
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
 * version below sets cells one bit at a time and mispredicts its loops' exits). */
static void si_observe(const void *state, uint8_t *obs) {
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
#else
/* Sets channel of every cell of the map (its rows' bits) in obs. */
static void si_draw_map(uint8_t *obs, const uint16_t rows[MINATAR_SIDE], int channel) {
    for (int y = 0; y < MINATAR_SIDE; y++)
        for (unsigned bits = rows[y]; bits; bits &= bits - 1) {
            int x = __builtin_ctz(bits);
            obs[(y * MINATAR_SIDE + x) * SI_NUM_CHANNELS + channel] = 1;
        }
}

/* The board cleared, then only the live cells set: a few dozen stores, not 600. */
static void si_observe(const void *state, uint8_t *obs) {
    const space_invaders *game = state;
    memset(obs, 0, MINATAR_SIDE * MINATAR_SIDE * SI_NUM_CHANNELS);
    int alien_direction_channel =
        game->alien_dir < 0 ? SI_CHANNEL_ALIEN_LEFT : SI_CHANNEL_ALIEN_RIGHT;
    obs[(SI_BOTTOM_ROW * MINATAR_SIDE + game->cannon) * SI_NUM_CHANNELS + SI_CHANNEL_CANNON] = 1;
    si_draw_map(obs, game->aliens, SI_CHANNEL_ALIEN);
    si_draw_map(obs, game->aliens, alien_direction_channel);
    si_draw_map(obs, game->friendly_bullets, SI_CHANNEL_FRIENDLY_BULLET);
    si_draw_map(obs, game->enemy_bullets, SI_CHANNEL_ENEMY_BULLET);
}
#endif

/* The maps hold only the board's ten columns (a bit above them would march onto it); the timers
 * count down to 0 from their intervals. */
static bool si_validate(const void *state, char *why, size_t why_size) {
    const space_invaders *game = state;
    const struct {
        const char *name;
        const uint16_t *rows;
    } maps[] = {{"aliens", game->aliens},
                {"friendly_bullets", game->friendly_bullets},
                {"enemy_bullets", game->enemy_bullets}};
    for (size_t m = 0; m < sizeof maps / sizeof maps[0]; m++) {
        for (int y = 0; y < MINATAR_SIDE; y++) {
            if (!(maps[m].rows[y] & ~SI_ROW_MASK)) continue;
            snprintf(why, why_size, "%s[%d] is 0x%x (expected bits 0..%d only)", maps[m].name, y,
                     (unsigned)maps[m].rows[y], SI_RIGHT_COLUMN);
            return false;
        }
    }
    if (game->alien_dir != -1 && game->alien_dir != 1) {
        snprintf(why, why_size, "alien_dir is %d (expected -1 or 1)", (int)game->alien_dir);
        return false;
    }
    return minatar_check_range("cannon", game->cannon, 0, SI_RIGHT_COLUMN, why, why_size) &&
           minatar_check_range("move_interval", game->move_interval, SI_ENEMY_MOVE_FASTEST,
                               SI_ENEMY_MOVE_INTERVAL, why, why_size) &&
           minatar_check_range("move_timer", game->move_timer, 0, SI_ENEMY_MOVE_INTERVAL, why,
                               why_size) &&
           minatar_check_range("shot_timer", game->shot_timer, 0, SI_ENEMY_SHOT_INTERVAL, why,
                               why_size) &&
           minatar_check_range("cool_down", game->cool_down, 0, SI_SHOT_COOL_DOWN, why,
                               why_size) &&
           minatar_check_range("ramp_index", game->ramp_index, 0,
                               SI_ENEMY_MOVE_INTERVAL - SI_ENEMY_MOVE_FASTEST, why, why_size) &&
           minatar_check_flag("ramping", &game->ramping, why, why_size) &&
           minatar_check_flag("terminal", &game->terminal, why, why_size);
}

MINATAR_BATCH_STEP(si_step, space_invaders, si_act, si_observe, si_reset)

const minatar_game_ops minatar_space_invaders = {
    .name = "space_invaders",
    .channels = SI_NUM_CHANNELS,
    .state_size = sizeof(space_invaders),
    .init = si_init,
    .reset = si_reset,
    .act = si_act,
    .observe = si_observe,
    .step = si_step,
    .num_minimal_actions = 4,
    .minimal_actions = {MINATAR_NOOP, MINATAR_LEFT, MINATAR_RIGHT, MINATAR_FIRE},
    .validate = si_validate,
};
