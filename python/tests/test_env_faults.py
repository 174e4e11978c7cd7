"""An env's faults are the env's (issue 30, item 5): a Python-defined env that
returns a NaN reward or observation, or one outside its observation_space,
stops skinner.train with a RuntimeError naming the env, its index, the step
and the value, not a FloatingPointError advising a lower learning rate."""

import numpy as np
import pytest

import skinner
from conftest import BUILD, require

FAULT_ENV, FAULT_STEP = 1, 3


class Steady:
    """obs = [0.5, 0.5], reward 1, episodes of 10 steps; env FAULT_ENV
    misbehaves at its step FAULT_STEP (see the subclasses)."""

    single_observation_space = skinner.spaces.Box(-1.0, 1.0, (2,), np.float32)
    single_action_space = skinner.spaces.Discrete(2)

    def __init__(self, num_envs):
        self.n = num_envs
        self.t = np.zeros(num_envs, np.int64)

    def reset(self, seed, mask=None):
        self.t[:] = 0
        return np.full((self.n, 2), 0.5, np.float32)

    def step(self, actions):
        self.t += 1
        obs = np.full((self.n, 2), 0.5, np.float32)
        reward = np.ones(self.n, np.float32)
        ended = self.t >= 10
        self.t[ended] = 0
        self.misbehave(obs, reward)
        return obs, reward, ended, np.zeros(self.n, bool)

    def misbehave(self, obs, reward):
        pass


class NanReward(Steady):
    def misbehave(self, obs, reward):
        if self.t[FAULT_ENV] == FAULT_STEP:
            reward[FAULT_ENV] = np.nan


class NanObs(Steady):
    def misbehave(self, obs, reward):
        if self.t[FAULT_ENV] == FAULT_STEP:
            obs[FAULT_ENV, 1] = np.nan


class OutOfBox(Steady):
    def misbehave(self, obs, reward):
        if self.t[FAULT_ENV] == FAULT_STEP:
            obs[FAULT_ENV, 0] = 3.0


skinner.register("PyNanReward-v0", NanReward, max_episode_steps=100)
skinner.register("PyNanObs-v0", NanObs, max_episode_steps=100)
skinner.register("PyOutOfBox-v0", OutOfBox, max_episode_steps=100)


@pytest.mark.parametrize(
    "env_id, what",
    [
        ("PyNanReward-v0", "reward = nan is not finite"),
        ("PyNanObs-v0", "observation value 1 = nan is not finite"),
        # the observation_space Box (-1, 1) becomes the table's obs_low/obs_high
        ("PyOutOfBox-v0", "observation value 0 = 3 is outside the declared Box [-1, 1]"),
    ],
)
def test_a_nan_from_the_env_is_named_as_the_envs_fault(env_id, what):
    with pytest.raises(RuntimeError) as caught:
        skinner.train(env_id, total_steps=20000, threads=1,
                      config={"env.num_envs": 4, "ppo.horizon": 16})
    assert not isinstance(caught.value, FloatingPointError)
    message = str(caught.value)
    assert env_id in message and what in message, message
    assert f"env index {FAULT_ENV}" in message and f"step {FAULT_STEP}" in message, message
    assert "learning_rate" not in message, message



def test_a_plugin_mask_without_legal_action_raises_instead_of_aborting():
    """A plugin env (tests/plugins/hostile_plugin.c, NoLegal-v0) whose env 1
    allows no action at its step 3: the sampler asserted and killed the
    interpreter; now the rollout names the env and Python gets a RuntimeError."""
    plugin = require(BUILD / "tests" / "libhostile_no_legal.so", "built with the tests")
    with pytest.raises(RuntimeError) as caught:
        skinner.train(f"{plugin}:NoLegal-v0", total_steps=20000, threads=1,
                      config={"env.num_envs": 4, "ppo.horizon": 16})
    message = str(caught.value)
    assert "NoLegal-v0" in message and "env index 1, step 3" in message, message
    assert "its mask row allows no action of head 0" in message, message
