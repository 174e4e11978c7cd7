"""skinner's classic-control envs against Gymnasium 1.4.0 itself (in the test venv), live:

- Gymnasium's own env checker (gymnasium.utils.env_checker.check_env) passes skinner.gym_env
  of each env, warning of nothing Gymnasium's own env is not warned of;
- the spaces equal Gymnasium's env's, and the vector env's batched spaces are what
  gymnasium.vector.utils.batch_space makes of them; the autoreset mode is
  gymnasium.vector.AutoresetMode.SAME_STEP, with final_obs where an episode ended;
- each env stepped beside gymnasium.make(id) from the same state: skinner's float64 state
  (VecEnv.state()) is put into Gymnasium's env's unwrapped.state after every reset, the same
  actions go to both (Box actions drawn beyond the bounds, so that both clip), and obs
  (float32), reward, terminated and truncated are compared exactly at every step, over
  whole episodes, time limits included."""

import warnings

import numpy as np
import pytest

import skinner
from conftest import require_package

# each env's state arrays in the order of Gymnasium's unwrapped.state, and its episodes
ENVS = {
    "CartPole-v1": (("x", "x_dot", "theta", "theta_dot"), 40),
    "Acrobot-v1": (("theta1", "theta2", "dtheta1", "dtheta2"), 8),
    "MountainCar-v0": (("position", "velocity"), 6),
    "MountainCarContinuous-v0": (("position", "velocity"), 3),
    "Pendulum-v1": (("theta", "theta_dot"), 8),
}


def checker_warnings(env):
    gymnasium = require_package("gymnasium")
    from gymnasium.utils.env_checker import check_env
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)  # Gymnasium draws with pygame, not installed
    return {str(w.message) for w in caught}


@pytest.mark.parametrize("env_id", ENVS)
def test_gymnasium_check_env(env_id):
    gymnasium = require_package("gymnasium")
    env = skinner.gym_env(env_id, seed=1)
    assert isinstance(env, gymnasium.Env)
    ours = checker_warnings(env)
    theirs = checker_warnings(gymnasium.make(env_id).unwrapped)
    assert ours <= theirs, f"{env_id}: warned of {ours - theirs}"
    env.close()


@pytest.mark.parametrize("env_id", ENVS)
def test_spaces_and_vector_conventions(env_id):
    gymnasium = require_package("gymnasium")
    from gymnasium.vector import AutoresetMode
    from gymnasium.vector.utils import batch_space
    theirs = gymnasium.make(env_id)
    with skinner.make(env_id, num_envs=3, seed=1) as env:
        assert env.single_observation_space == theirs.observation_space
        assert env.single_action_space == theirs.action_space
        assert env.observation_space == batch_space(theirs.observation_space, 3)
        assert env.action_space == batch_space(theirs.action_space, 3)
        assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
        obs, _ = env.reset(seed=2)
        assert env.observation_space.contains(obs)
        ended = 0
        for _ in range(1200):
            obs, rewards, terminations, truncations, infos = env.step(env.action_space.sample())
            assert env.observation_space.contains(obs)
            done = terminations | truncations
            if done.any():  # same step: obs is the next episode's, final_obs the ending one's
                assert np.array_equal(infos["_final_obs"], done)
                assert all(env.single_observation_space.contains(row)
                           for row in infos["final_obs"][done])
                ended += int(done.sum())
            else:
                assert "final_obs" not in infos
        assert ended > 0, f"{env_id}: no episode ended in 1,200 steps"


def put_state(real, ours, names):
    """Gymnasium's env's state := skinner's env 0's float64 state."""
    state = ours.state()
    real.unwrapped.state = np.array([state[name][0, 0] for name in names], np.float64)


# Found by this test: skinner's Acrobot-v1 float64 state differs from Gymnasium's by about one
# ULP (1e-17) from the first step (its RK4 arithmetic is not Gymnasium's operation for
# operation); with seed 11 and these actions it shows in the float32 observation at step 3,390
# (episode 7, its step 390): sin(theta2) 0.05642047 against Gymnasium's 0.05642046, one ULP.
ACROBOT_ULP = pytest.mark.xfail(strict=True, raises=AssertionError,
                                reason="Acrobot-v1's state is ~1 ULP off Gymnasium's float64 "
                                       "state; a float32 observation differs at step 3,390")


@pytest.mark.parametrize("env_id", [pytest.param(env_id, marks=ACROBOT_ULP)
                                    if env_id == "Acrobot-v1" else env_id for env_id in ENVS])
def test_steps_beside_gymnasium(env_id):
    gymnasium = require_package("gymnasium")
    names, episodes = ENVS[env_id]
    real = gymnasium.make(env_id)
    ours = skinner.make(env_id, num_envs=1, seed=11, copy=True)
    rng = np.random.default_rng(12)
    space = ours.single_action_space
    obs, _ = ours.reset(seed=11)
    real.reset(seed=0)
    put_state(real, ours, names)
    # Gymnasium's observation of that state is skinner's first observation
    observe = (getattr(real.unwrapped, "_get_obs", None) or getattr(real.unwrapped, "_get_ob", None)
               or (lambda: np.array(real.unwrapped.state, np.float32)))
    assert np.array_equal(observe(), obs[0]), f"{env_id}: {observe()} against {obs[0]}"
    ended, step, length = 0, 0, 0
    while ended < episodes:
        if isinstance(space, gymnasium.spaces.Discrete):
            action = int(rng.integers(space.n))
            batch = np.array([action], np.int32)
        else:  # beyond the bounds: both clip
            action = rng.uniform(1.5 * space.low, 1.5 * space.high).astype(np.float32)
            batch = action[None, :]
        want_obs, want_reward, want_term, want_trunc, _ = real.step(action)
        got_obs, rewards, terminations, truncations, infos = ours.step(batch)
        step, length = step + 1, length + 1
        done = bool(terminations[0] or truncations[0])
        got = infos["final_obs"][0] if done else got_obs[0]
        at = f"{env_id}, step {step} (episode {ended + 1}, its step {length}), action {action}"
        assert want_obs.dtype == np.float32 and np.array_equal(got, want_obs), \
            f"{at}: obs {got.tolist()}, Gymnasium's {want_obs.tolist()}"
        assert rewards[0] == np.float32(want_reward), \
            f"{at}: reward {rewards[0]!r}, Gymnasium's {want_reward!r}"
        assert bool(terminations[0]) == want_term, f"{at}: terminated {terminations[0]}"
        assert bool(truncations[0]) == want_trunc, f"{at}: truncated {truncations[0]}"
        if done:
            ended, length = ended + 1, 0
            real.reset()
            put_state(real, ours, names)  # skinner's env has reset within the step
    ours.close()
    real.close()


def test_docs_gym_env_block_runs_verbatim():
    """docs/python.md's skinner.gym_env block, as printed."""
    from conftest import REPO
    doc = (REPO / "docs" / "python.md").read_text()
    blocks = [block.split("```")[0] for block in doc.split("```python\n")[1:]
              if "skinner.gym_env(" in block.split("```")[0]]
    assert len(blocks) == 1, "docs/python.md's gym_env block is gone"
    exec(compile(blocks[0], "docs/python.md", "exec"), {})
