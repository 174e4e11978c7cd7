"""skinner's MinAtar games stepped beside the real MinAtar 1.0.15 (PyPI's minatar, in the test
venv), live, from seeds the recorded traces of ../shared/reference/minatar never used (those
are 0 to 3; these are 101 and up). docs/minatar.md, "Seeding": with env.seed_mode = numpy,
skinner's env 0 of seed s plays MinAtar's episodes of env.seed(s), its sticky-action draw and
the game's draws taken from one numpy RandomState as MinAtar's are. So both start from the
same seed, take the same requested actions and are compared after every step: the (10, 10, C)
state (MinAtar's bool channels against skinner's uint8 observation, final_obs at a terminal
step), the reward and the terminal flag, and after each terminal step MinAtar's reset() against
skinner's next first observation.

- random play, sticky 0.1 with ramping and sticky 0 without, all six actions (-v0), 3,000
  steps a game: Freeway's episodes are its own 2,500-step limit;
- the minimal action sets (-v1) through MinAtar's minimal_action_set();
- a long Space Invaders episode (over 1,500 steps, waves ramping to their fastest) played by a
  lookahead player, which random play never reaches (its episodes end within 250 steps)."""

import copy

import numpy as np
import pytest

import skinner
from conftest import require_package

GAMES = {"asterix": "Asterix", "breakout": "Breakout", "freeway": "Freeway",
         "seaquest": "Seaquest", "space_invaders": "SpaceInvaders"}


def pair(game, seed, sticky, ramping, version="v0"):
    """The real MinAtar env and skinner's, both seeded with seed and reset."""
    minatar = require_package("minatar")
    real = minatar.Environment(game, sticky_action_prob=sticky, difficulty_ramping=ramping)
    real.seed(seed)
    real.reset()
    ours = skinner.make(f"MinAtar/{GAMES[game]}-{version}", num_envs=1, seed=seed, copy=True,
                        seed_mode="numpy", sticky_action_prob=sticky, difficulty_ramping=ramping)
    return real, ours


def difference(what, got, want):
    """'' when skinner's state equals MinAtar's, else where they differ first."""
    if got.shape != want.shape:
        return f"{what}: shape {got.shape}, MinAtar's {want.shape}"
    cells = np.argwhere(got != want)
    if not len(cells):
        return ""
    y, x, channel = cells[0]
    return (f"{what}: {len(cells)} cells differ, first [y={y}][x={x}][channel {channel}]: "
            f"skinner {got[y, x, channel]}, MinAtar {int(want[y, x, channel])}")


def play(game, seed, sticky, ramping, steps, choose, version="v0"):
    """Steps both envs with choose(real_env, step)'s actions (MinAtar's action numbers) until
    `steps` steps; asserts they agree at every step. Returns the episode lengths."""
    real, ours = pair(game, seed, sticky, ramping, version)
    actions = list(range(6)) if version == "v0" else list(real.minimal_action_set())
    where = f"{game} ({version}), seed {seed}, sticky {sticky}, ramping {ramping}"
    obs, _ = ours.reset(seed=seed)
    assert not difference("first state", obs[0], real.state()), where
    lengths, length = [], 0
    for step in range(steps):
        action = choose(real, step)
        reward, terminal = real.act(actions[action])
        obs, rewards, terminated, truncated, infos = ours.step(np.array([action], np.int32))
        length += 1
        at = f"{where}, step {step} (episode step {length}), action {actions[action]}"
        assert rewards[0] == reward, f"{at}: reward {rewards[0]}, MinAtar's {reward}"
        assert bool(terminated[0]) == terminal, \
            f"{at}: terminated {bool(terminated[0])}, MinAtar's terminal {terminal}"
        assert not truncated[0], f"{at}: truncated (MinAtar has no time limit but Freeway's)"
        state_after = infos["final_obs"][0] if terminal else obs[0]
        mismatch = difference("state after the step", state_after, real.state())
        assert not mismatch, f"{at}: {mismatch}"
        if terminal:
            real.reset()
            mismatch = difference("state after the reset", obs[0], real.state())
            assert not mismatch, f"{at}: {mismatch}"
            lengths.append(length)
            length = 0
    ours.close()
    return lengths


def uniform(count, act_seed):
    """Requested actions from their own numpy stream, as the traces' players draw them."""
    rng = np.random.RandomState(act_seed)
    return lambda real, step: int(rng.randint(count))


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed, sticky, ramping", [(101, 0.1, True), (202, 0.0, False)])
def test_random_play_matches_minatar(game, seed, sticky, ramping):
    lengths = play(game, seed, sticky, ramping, 3000, uniform(6, seed + 1))
    assert lengths, f"{game}: no episode ended in 3,000 steps"
    if game == "freeway":  # its own limit: the game ends on its 2,501st act()
        assert lengths[0] == 2501


@pytest.mark.parametrize("game", GAMES)
def test_minimal_action_set_matches_minatar(game):
    minatar = require_package("minatar")
    count = len(minatar.Environment(game).minimal_action_set())
    play(game, 303, 0.1, True, 1000, uniform(count, 304), version="v1")


def lookahead(horizon=8):
    """A player that tries each move on a copy of MinAtar's game (its sticky draw left out)
    followed by `horizon` steps of firing, and takes the one that scores most without dying.
    Only the actions matter: the comparison is of the two envs under them."""
    tie_break = np.random.RandomState(3)

    def choose(real, step):
        best, best_score = 0, -np.inf
        for action in (5, 0, 1, 3):  # fire, stay, left, right
            game = copy.deepcopy(real.env)
            reward, dead = game.act(action)
            total = reward
            for k in range(horizon):
                if dead:
                    break
                reward, dead = game.act(5 if k % 2 == 0 else 0)
                total += reward * 0.9 ** k
            score = total - (100 if dead else 0) + 0.01 * tie_break.rand()
            if score > best_score:
                best, best_score = action, score
        return best
    return choose


def test_long_space_invaders_episode_matches_minatar():
    """Sticky 0 with ramping: the lookahead player's first episode of seed 5 lasts 1,730
    steps, through waves that ramp the aliens to their fastest march."""
    lengths = play("space_invaders", 5, 0.0, True, 1800, lookahead())
    assert lengths and lengths[0] >= 1500, f"the player's episodes: {lengths}"
