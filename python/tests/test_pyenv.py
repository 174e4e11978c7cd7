"""Python-defined envs (skinner.register): skinner calls the class once per
batch step, and does the time limit, autoreset and episode statistics in C."""

import numpy as np
import pytest

import skinner
from cartpole_ref import NumpyCartPole

CALLS = {"step": 0}


class Counter:
    """obs = [steps taken in this episode, env index]; reward = the action;
    action 1 terminates. Counts step calls (one per batch step)."""

    single_observation_space = skinner.spaces.Box(-np.inf, np.inf, (2,), np.float32)
    single_action_space = skinner.spaces.Discrete(2)

    def __init__(self, num_envs, start=0):
        self.n = num_envs
        self.t = np.full(num_envs, start, np.float32)
        self.reset_masks = []

    def obs(self):
        return np.stack([self.t, np.arange(self.n, dtype=np.float32)], axis=1)

    def reset(self, seed, mask=None):
        self.reset_masks.append(None if mask is None else np.array(mask))
        if mask is None:
            self.t[:] = 0
        else:
            self.t[mask] = 0
        return self.obs()

    def step(self, actions):
        CALLS["step"] += 1
        assert actions.shape == (self.n,) and actions.dtype == np.int32
        self.t += 1
        return self.obs(), actions.astype(np.float32), actions == 1, np.zeros(self.n, bool)


class Raises(Counter):
    def step(self, actions):
        if self.t[0] >= 2:
            raise RuntimeError("the env broke at step 3")
        return super().step(actions)


class BadShape(Counter):
    def step(self, actions):
        obs, r, te, tr = super().step(actions)
        return obs[:, :1], r, te, tr


skinner.register("Counter-v0", Counter, max_episode_steps=4, reward_threshold=1.0)
skinner.register("CounterRaises-v0", Raises, max_episode_steps=100)
skinner.register("CounterBadShape-v0", BadShape, max_episode_steps=100)
if "NumpyCartPole-v1" not in skinner.envs():  # test_train registers it too
    skinner.register("NumpyCartPole-v1", NumpyCartPole, max_episode_steps=500, reward_threshold=475.0)


def test_registered_like_a_built_in():
    assert "Counter-v0" in skinner.envs()
    d = skinner.describe("Counter-v0")
    assert d["python"] and d["obs_size"] == 2 and d["heads"] == [2]
    assert d["max_episode_steps"] == 4 and d["reward_threshold"] == 1.0
    with pytest.raises(ValueError, match="already"):
        skinner.register("Counter-v0", Counter)
    with pytest.raises(ValueError, match="1-D Box"):
        class NoBox(Counter):
            single_observation_space = skinner.spaces.Discrete(3)
        skinner.register("NoBox-v0", NoBox)
    with pytest.raises(ValueError, match="single_observation_space"):
        skinner.register("NoSpaces-v0", object)


def test_autoreset_time_limit_and_episode_statistics():
    with skinner.make("Counter-v0", num_envs=3, seed=0) as env:
        obs, _ = env.reset()
        assert obs[:, 0].tolist() == [0, 0, 0]
        before = CALLS["step"]
        # env 0 terminates at its 2nd step; envs 1, 2 run into the limit of 4
        plan = [[0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]
        seen = []
        for a in plan:
            obs, rewards, terminations, truncations, infos = env.step(np.array(a))
            seen.append((obs.copy(), rewards.copy(), terminations.copy(), truncations.copy(),
                         {k: (v.copy() if isinstance(v, np.ndarray) else {kk: vv.copy() for kk, vv in v.items()})
                          for k, v in infos.items()}))
        assert CALLS["step"] - before == len(plan)  # once per batch step, not per env
        # step 2: env 0 terminated with return 1, length 2; its next episode starts at 0
        obs, rewards, te, tr, infos = seen[1]
        assert te.tolist() == [True, False, False] and not tr.any()
        assert infos["_final_obs"].tolist() == [True, False, False]
        assert infos["final_obs"][0].tolist() == [2, 0]
        assert obs[0].tolist() == [0, 0] and obs[1].tolist() == [2, 1]
        assert infos["episode"]["r"][0] == 1.0 and infos["episode"]["l"][0] == 2
        # step 4: envs 1 and 2 reach the limit: truncated, not terminated
        obs, rewards, te, tr, infos = seen[3]
        assert tr.tolist() == [False, True, True] and not te.any()
        assert infos["final_obs"][1].tolist() == [4, 1] and obs[1].tolist() == [0, 1]
        assert infos["episode"]["l"][1:].tolist() == [4, 4]
        assert infos["episode"]["r"][1:].tolist() == [0.0, 0.0]
        # env 0's second episode is 2 steps old at step 4, not truncated
        assert obs[0].tolist() == [2, 0]


def test_bad_returns_and_threads_are_refused():
    with skinner.make("CounterBadShape-v0", num_envs=2, seed=0) as env:
        env.reset()
        with pytest.raises(ValueError, match=r"obs must have shape \(2, 2\)"):
            env.step(np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="one thread"):
        skinner.make("Counter-v0", num_envs=2, threads=2)


def test_constructor_errors_reach_python():
    class Fails(Counter):
        def __init__(self, num_envs):
            raise KeyError("no config")
    skinner.register("Fails-v0", Fails)
    with pytest.raises(KeyError, match="no config"):
        skinner.make("Fails-v0", num_envs=2)


def test_bench_calls_python_once_per_batch_step():
    before = CALLS["step"]
    r = skinner.bench("Counter-v0", num_envs=64, seconds=0.05)
    assert r["steps"] == 64 * (CALLS["step"] - before) and r["steps"] > 0


def test_an_exception_reaches_python_then_the_env_refuses_to_step_until_reset():
    with skinner.make("CounterRaises-v0", num_envs=2, seed=0) as env:
        env.reset()
        env.step(np.zeros(2, np.int32))
        env.step(np.zeros(2, np.int32))
        with pytest.raises(RuntimeError, match="broke at step 3"):
            env.step(np.zeros(2, np.int32))
        # no silent fake data afterwards
        with pytest.raises(RuntimeError, match="raised in an earlier step; reset"):
            env.step(np.zeros(2, np.int32))
        obs, _ = env.reset()
        assert obs[:, 0].tolist() == [0, 0]
        assert env.step(np.zeros(2, np.int32))[0][:, 0].tolist() == [1, 1]


class Keeps(Counter):
    kept = []

    def step(self, actions):
        Keeps.kept.append(actions)
        return super().step(actions)


class BoxEnv(Counter):
    single_action_space = skinner.spaces.Box(-1.0, 1.0, (2,), np.float32)
    seen = []

    def step(self, actions):
        BoxEnv.seen.append(actions.copy())
        return super().step(np.zeros(self.n, np.int32))


skinner.register("Keeps-v0", Keeps, max_episode_steps=100)
skinner.register("BoxEnv-v0", BoxEnv, max_episode_steps=100)


def test_the_actions_a_python_env_gets_are_its_own():
    """The class may keep the actions it is given: a fresh array each step,
    not a view of skinner's buffer (overwritten by the next step, freed by
    close)."""
    with skinner.make("Keeps-v0", num_envs=3, seed=0) as env:
        env.reset()
        env.step(np.array([0, 1, 0]))
        env.step(np.array([1, 1, 1]))
    import gc

    gc.collect()
    junk = [np.full(3, 7, np.int32) for _ in range(1000)]  # reuse freed memory
    assert Keeps.kept[-2].tolist() == [0, 1, 0] and Keeps.kept[-1].tolist() == [1, 1, 1]
    del junk


def test_box_actions_reach_a_python_env_clipped():
    with skinner.make("BoxEnv-v0", num_envs=2, seed=0) as env:
        env.reset()
        env.step(np.array([[5.0, -0.5], [-5.0, 0.25]]))
    assert BoxEnv.seen[-1].tolist() == [[1.0, -0.5], [-1.0, 0.25]]


def test_spaces_skinner_cannot_take_are_refused():
    class Start:  # Gymnasium's Discrete(3, start=5), duck-typed
        n, start, shape = 3, 5, ()

    class Binary:  # Gymnasium's MultiBinary(4) has an n too
        n, shape = 4, (4,)

    for space in (Start(), Binary()):
        with pytest.raises(ValueError, match="Discrete"):
            skinner.register("Odd-v0", Counter, action_space=space)
    with pytest.raises(ValueError, match="max_episode_steps = 0"):
        skinner.register("ZeroLimit-v0", Counter, max_episode_steps=0)
    skinner.register("NoLimit-v0", Counter)
    assert skinner.describe("NoLimit-v0")["max_episode_steps"] is None
