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
 *
 * The rules of a frame are in space_invaders_rules.h, shared with space_invaders_vbmi.c, which
 * builds the observation and the step for AVX-512 VBMI; this file has the portable ones and the
 * tables, and an env picks one table at create (minatar_ops_for_cpu).
 */
#include "space_invaders_rules.h"

static void si_init(void *state, bool ramping) {
    space_invaders *game = state;
    *game = (space_invaders){.ramping = ramping};
}

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

/* What the portable table and the VBMI one share. */
#define SI_TABLE                                                                                   \
    .name = "space_invaders", .channels = SI_NUM_CHANNELS, .state_size = sizeof(space_invaders),   \
    .init = si_init, .reset = si_reset, .act = si_act,                                            \
    .num_minimal_actions = MINATAR_COUNT(MINATAR_SPACE_INVADERS_MINIMAL_ACTIONS),                  \
    .minimal_actions = {MINATAR_SPACE_INVADERS_MINIMAL_ACTIONS},                                   \
    .validate = si_validate

#if defined(__x86_64__)
/* The observation, and the step with it inlined, built for AVX-512 VBMI (space_invaders_vbmi.c). */
static const minatar_game_ops g_space_invaders_vbmi = {
    SI_TABLE,
    .observe = minatar_si_observe_vbmi,
    .step = minatar_si_step_vbmi,
};
#endif

const minatar_game_ops minatar_space_invaders = {
    SI_TABLE,
    .observe = si_observe,
    .step = si_step,
#if defined(__x86_64__)
    .vbmi = &g_space_invaders_vbmi,
#endif
};
