"""skinner.from_gymnasium (issue 52 ask 4): single Gymnasium envs stepped by skinner, checked
against Gymnasium itself. Each env is stepped beside gymnasium.vector.SyncVectorEnv in
same-step autoreset mode, made from the same callables and given the same seeds and actions
(an independent reference: Gymnasium's own loop, not skinner's code), across the autoreset
boundary; then check_env, a short training run that must raise CartPole-v1's return, and the
trained policy played in a plain gymnasium.make env.

Run alone (ctest python_from_gymnasium), not by python_module, so that its registrations do
not count against the 32 Python-defined envs of python_module's one process.
"""

import configparser
import copy

import numpy as np
import pytest

import skinner
from conftest import REPO, require_package

gym = require_package("gymnasium")
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402


def cartpole():
    return gym.make("CartPole-v1")


def wrapped():
    """A time limit of 25 (so that truncations happen under random actions), a reward
    transform, and Gymnasium's own episode statistics."""
    env = gym.wrappers.TimeLimit(gym.make("CartPole-v1"), max_episode_steps=25)
    env = gym.wrappers.TransformReward(env, lambda r: 2.0 * r - 0.5)
    return gym.wrappers.RecordEpisodeStatistics(env)


DICT_SPACE = gym.spaces.Dict({"cart": gym.spaces.Box(-np.inf, np.inf, (2,), np.float32),
                              "pole": gym.spaces.Box(-np.inf, np.inf, (2,), np.float32),
                              "side": gym.spaces.Discrete(2)})


def dict_obs():
    """CartPole with a Dict observation, through Gymnasium's TransformObservation."""
    def split(obs):
        return {"cart": obs[:2], "pole": obs[2:], "side": int(obs[0] > 0)}
    return gym.wrappers.TransformObservation(gym.make("CartPole-v1"), split, DICT_SPACE)


def lockstep(env, ref, seed, steps, actions_seed=0):
    """Steps skinner's env and Gymnasium's SyncVectorEnv with the same seed and actions;
    asserts every output equal; returns how many terminations and truncations were crossed."""
    rng = np.random.default_rng(actions_seed)
    obs, _ = env.reset(seed=seed)
    ref_obs, _ = ref.reset(seed=seed)
    np.testing.assert_array_equal(obs, np.asarray(ref_obs, np.float32))
    ended = {"terminated": 0, "truncated": 0, "returns": [], "lengths": []}
    for t in range(steps):
        actions = rng.integers(0, 2, env.num_envs)
        obs, rewards, terms, truncs, infos = env.step(actions)
        ref_obs, ref_rewards, ref_terms, ref_truncs, ref_infos = ref.step(actions)
        where = f"step {t}"
        np.testing.assert_array_equal(terms, ref_terms, where)
        np.testing.assert_array_equal(truncs, ref_truncs, where)
        np.testing.assert_array_equal(rewards, np.asarray(ref_rewards, np.float32), where)
        np.testing.assert_array_equal(obs, np.asarray(ref_obs, np.float32), where)
        done = terms | truncs
        assert ("final_obs" in infos) == done.any(), where
        if not done.any():
            continue
        np.testing.assert_array_equal(infos["_final_obs"], ref_infos["_final_obs"], where)
        ref_final = np.stack([np.asarray(ref_infos["final_obs"][i], np.float32)
                              for i in np.flatnonzero(done)])
        np.testing.assert_array_equal(infos["final_obs"][done], ref_final, where)
        ended["terminated"] += int(terms.sum())
        ended["truncated"] += int(truncs.sum())
        final_info = ref_infos.get("final_info", {})
        if "episode" in final_info:  # RecordEpisodeStatistics: Gymnasium's own count
            np.testing.assert_allclose(infos["episode"]["r"][done],
                                       final_info["episode"]["r"][done], rtol=1e-6)
            np.testing.assert_array_equal(infos["episode"]["l"][done],
                                          final_info["episode"]["l"][done])
            ended["returns"] += list(final_info["episode"]["r"][done])
            ended["lengths"] += list(final_info["episode"]["l"][done])
    return ended


def test_cartpole_steps_as_sync_vector_env_does_across_resets():
    fns = [cartpole] * 4
    with skinner.from_gymnasium(fns) as env:
        assert env.env_id == "Gymnasium-CartPole-v1"
        assert env.max_episode_steps == 500 and env.reward_threshold == 475.0
        ref = SyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)
        ended = lockstep(env, ref, seed=7, steps=300)
        assert ended["terminated"] >= 20  # the autoreset boundary was crossed, many times
        # a second seed, and a reset with no seed going on from the envs' own generators
        ended = lockstep(env, ref, seed=2**40 + 3, steps=50, actions_seed=1)
        assert ended["terminated"] > 0
        ref.close()


def test_gymnasiums_default_next_step_mode_maps_onto_it_one_call_later():
    """docs/python.md's mapping: NEXT_STEP's obs at an ending step is final_obs here, and the
    obs of its next call (which ignores the action and resets) is obs here."""
    with skinner.from_gymnasium([cartpole], env_id="NextStepCartPole-v1") as env:
        ref = SyncVectorEnv([cartpole], autoreset_mode=AutoresetMode.NEXT_STEP)
        obs, _ = env.reset(seed=9)
        np.testing.assert_array_equal(obs, ref.reset(seed=9)[0])
        rng, ends = np.random.default_rng(2), 0
        for t in range(200):
            actions = rng.integers(0, 2, 1)
            obs, rewards, terms, truncs, infos = env.step(actions)
            ref_obs, ref_rewards, ref_terms, ref_truncs, _ = ref.step(actions)
            np.testing.assert_array_equal(rewards, ref_rewards, f"step {t}")
            np.testing.assert_array_equal(terms | truncs, ref_terms | ref_truncs, f"step {t}")
            if not (terms | truncs)[0]:
                np.testing.assert_array_equal(obs, ref_obs, f"step {t}")
                continue
            ends += 1
            np.testing.assert_array_equal(infos["final_obs"], ref_obs, f"step {t}")
            ref_obs, ref_rewards, ref_terms, ref_truncs, _ = ref.step(1 - actions)  # ignored
            assert ref_rewards[0] == 0 and not (ref_terms | ref_truncs)[0]
            np.testing.assert_array_equal(obs, ref_obs, f"after step {t}")
        assert ends >= 5
        ref.close()


def test_a_wrapped_env_truncates_and_counts_episodes_as_gymnasium_does():
    fns = [wrapped] * 3
    with skinner.from_gymnasium(fns, env_id="WrappedCartPole-v1") as env:
        assert env.max_episode_steps == 25  # the outer TimeLimit, from the env's spec
        ref = SyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)
        ended = lockstep(env, ref, seed=11, steps=200)
        assert ended["terminated"] > 0 and ended["truncated"] > 0
        assert len(ended["returns"]) == ended["terminated"] + ended["truncated"]
        # the transformed rewards were counted: 2 * 1 - 0.5 a step
        np.testing.assert_allclose(ended["returns"], 1.5 * np.array(ended["lengths"]))
        ref.close()


def test_a_dict_observation_is_flattened_as_gymnasium_flattens_it():
    with skinner.from_gymnasium([dict_obs] * 2, env_id="DictCartPole-v1") as env:
        flat = gym.spaces.flatten_space(DICT_SPACE)
        assert env.single_observation_space.shape == flat.shape == (6,)
        ref = SyncVectorEnv([lambda: gym.wrappers.FlattenObservation(dict_obs())] * 2,
                            autoreset_mode=AutoresetMode.SAME_STEP)
        ended = lockstep(env, ref, seed=5, steps=100)
        assert ended["terminated"] > 0
        ref.close()


def test_env_objects_are_lent_and_copied_for_a_second_batch():
    objects = [gym.make("CartPole-v1") for _ in range(2)]
    env = skinner.from_gymnasium(objects, env_id="ObjectCartPole-v1", seed=3)
    obs, _ = env.reset(seed=3)
    np.testing.assert_array_equal(obs[1], objects[1].unwrapped.state.astype(np.float32))
    # check_env makes three batches at once: the objects are deep-copied for those
    report = skinner.check_env(env)
    assert report["failed"] == 0 and report["passed"] >= 10
    env.step(np.array([1, 0]))
    np.testing.assert_array_equal(env.step(np.array([0, 0]))[0][0],
                                  objects[0].unwrapped.state.astype(np.float32))
    env.close()


class Recorder(gym.Env):
    """Records the actions it gets; its spaces are given in the constructor."""

    def __init__(self, action_space, observation_space=None):
        self.action_space = action_space
        self.observation_space = observation_space or gym.spaces.Box(0, 1, (1,), np.float32)
        self.seen = []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        self.seen.append(np.array(action))
        return self.observation_space.sample(), 0.0, False, False, {}


def test_actions_reach_the_env_in_its_own_space():
    spaces = {
        "Discrete": gym.spaces.Discrete(3, start=-1),
        "MultiDiscrete": gym.spaces.MultiDiscrete([3, 4], start=[1, -2]),
        "MultiBinary": gym.spaces.MultiBinary(3),
        "Box": gym.spaces.Box(-1.0, 1.0, (2, 2), np.float64),
    }
    for name, space in spaces.items():
        made = []

        def make(space=space):
            made.append(Recorder(space))
            return made[-1]

        with skinner.from_gymnasium([make] * 2, env_id=f"Recorder{name}-v0", seed=0) as env:
            env.reset()
            batch = np.stack([env.single_action_space.sample() for _ in range(2)])
            env.step(batch)
        for k, recorder in enumerate(made):
            got = recorder.seen[-1]
            if name == "Box":
                expected = batch[k].astype(np.float32).reshape(2, 2)
                assert got.dtype == np.float64
            else:
                expected = batch[k] + getattr(space, "start", 0)
            np.testing.assert_array_equal(got, expected, name)
            assert space.contains(np.asarray(got, space.dtype)), name


class DuckBox:
    """A Box by its attributes only, not gymnasium.spaces'."""

    def __init__(self, size):
        self.shape, self.dtype = (size,), np.dtype(np.float32)
        self.low, self.high = np.zeros(size, np.float32), np.ones(size, np.float32)


class DuckDiscrete:
    def __init__(self, n):
        self.n, self.shape, self.dtype = n, (), np.dtype(np.int64)


class Walk:
    """A duck-typed env (no Gymnasium base class): position t / 8, reward = action, ends at 8."""

    observation_space, action_space = DuckBox(1), DuckDiscrete(2)

    def reset(self, *, seed=None, options=None):
        self.t = 0 if seed is None else seed % 3
        return np.array([self.t / 8], np.float32), {}

    def step(self, action):
        self.t += 1
        return np.array([self.t / 8], np.float32), float(action), self.t >= 8, False, {}


def test_a_duck_typed_env_steps_and_autoresets_in_the_same_step():
    with skinner.from_gymnasium([Walk] * 2, env_id="Walk-v0") as env:
        assert env.max_episode_steps is None
        obs, _ = env.reset(seed=4)  # env k seeded with 4 + k: starts at (4 + k) % 3
        assert obs[:, 0].tolist() == [1 / 8, 2 / 8]
        for _ in range(6):
            obs, rewards, terms, truncs, infos = env.step(np.array([1, 0]))
        assert terms.tolist() == [False, True] and "final_obs" in infos
        assert infos["final_obs"][1, 0] == 1.0 and obs[1, 0] == 0.0  # reset with no seed
        assert infos["episode"]["l"][1] == 6 and infos["episode"]["r"][1] == 0


class Shaped(gym.Env):
    """Observations of a given Box, drawn from the space's own generator (seeded by reset);
    warns of an action mask in its reset info."""

    action_space = gym.spaces.Discrete(2)

    def __init__(self, observation_space):
        self.observation_space = copy.deepcopy(observation_space)  # a generator of its own

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(2**31)))
        return self.observation_space.sample(), {"action_mask": np.ones(2, np.int8)}

    def step(self, action):
        return self.observation_space.sample(), 0.0, False, False, {}


def test_images_stay_bytes_other_boxes_are_reshaped_and_masks_are_not_read():
    image = gym.spaces.Box(0, 255, (5, 4, 3), np.uint8)
    grid = gym.spaces.Box(-1.0, 1.0, (2, 3), np.float64)
    for name, space in (("Image", image), ("Grid", grid)):
        fns = [lambda space=space: Shaped(space)] * 2
        with pytest.warns(UserWarning, match=r"info\['action_mask'\], which skinner does not read"):
            env = skinner.from_gymnasium(fns, env_id=f"Shaped{name}-v0")
            obs, _ = env.reset(seed=3)
        ref = SyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)
        ref_obs, _ = ref.reset(seed=3)
        if name == "Image":
            assert env.single_observation_space.shape == (5, 4, 3) and obs.dtype == np.uint8
            np.testing.assert_array_equal(obs, ref_obs)
        else:
            assert env.single_observation_space.shape == (6,) and obs.dtype == np.float32
            np.testing.assert_array_equal(obs, ref_obs.reshape(2, 6).astype(np.float32))
        np.testing.assert_array_equal(env.step(np.array([0, 1]))[0].reshape(ref_obs.shape),
                                      ref.step(np.array([0, 1]))[0].astype(obs.dtype))
        env.close()
        ref.close()


def refusal(space_of, what, match, **kwargs):
    class Env(Walk):
        pass
    setattr(Env, what, space_of)
    with pytest.raises(ValueError, match=match):
        skinner.from_gymnasium([Env], env_id="Refused-v0", **kwargs)


def test_spaces_it_cannot_take_are_refused_by_name():
    refusal(gym.spaces.Text(5), "observation_space", r"Text observations are not supported")
    refusal(gym.spaces.Sequence(gym.spaces.Discrete(2)), "observation_space",
            r"Sequence observations are not supported")
    refusal(gym.spaces.Graph(gym.spaces.Box(0, 1, (2,)), None), "observation_space",
            r"Graph observations are not supported")
    refusal(gym.spaces.OneOf([gym.spaces.Discrete(2), gym.spaces.Discrete(3)]),
            "observation_space", r"OneOf observations are not supported")
    refusal(gym.spaces.Dict({"a": gym.spaces.Discrete(2)}), "action_space",
            r"Dict actions are not supported")
    refusal(gym.spaces.Tuple([gym.spaces.Discrete(2)]), "action_space",
            r"Tuple actions are not supported")
    refusal(gym.spaces.Box(0, 3, (2,), np.int64), "action_space", r"Box actions are not supported")
    refusal(gym.spaces.MultiDiscrete([[2, 2], [2, 2]]), "action_space",
            r"MultiDiscrete of shape \(2, 2\) is not supported")
    refusal(skinner.spaces.Dict({"a": skinner.spaces.Box(0, 1, (1,), np.float32)}),
            "observation_space", r"Dict that is not gymnasium.spaces' cannot be flattened")
    with pytest.raises(ValueError, match="already an env id"):
        skinner.from_gymnasium([cartpole], env_id="CartPole-v1")
    with pytest.raises(TypeError, match=r"env_fns\[1\] = 3 is neither"):
        skinner.from_gymnasium([cartpole, 3])


def test_an_old_gym_api_and_a_misshapen_observation_are_named():
    class FourValues(Walk):
        def step(self, action):
            return super().step(action)[:4]

    class Misshapen(Walk):
        def step(self, action):
            return (np.zeros(3, np.float32),) + super().step(action)[1:]

    with skinner.from_gymnasium([FourValues], env_id="FourValues-v0") as env:
        env.reset(seed=0)
        with pytest.raises(ValueError, match=r"env 0: step returned tuple of 4 values"):
            env.step(np.zeros(1, np.int32))
    with skinner.from_gymnasium([Misshapen], env_id="Misshapen-v0") as env:
        env.reset(seed=0)
        with pytest.raises(ValueError, match=r"env 0 returned an observation of shape \(3,\)"):
            env.step(np.zeros(1, np.int32))


def test_check_env_fails_on_a_broken_env():
    """check_env's checks reach through the adapter: a NaN observation fails one."""
    class NanAt5(Walk):
        def step(self, action):
            obs, *rest = super().step(action)
            return (np.array([np.nan], np.float32) if self.t == 5 else obs, *rest)

    env = skinner.from_gymnasium([NanAt5] * 2, env_id="NanAt5-v0", seed=0)
    with pytest.raises(skinner.EnvCheckError, match="obs_space"):
        skinner.check_env(env)
    env.close()


def cartpole_preset():
    """configs/cartpole.ini's PPO keys (not the built-in env's own, env.precision)."""
    ini = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
    ini.read(REPO / "configs" / "cartpole.ini")
    return {f"{section}.{key}": value for section in ini.sections() if section != "env"
            for key, value in ini[section].items()}


def test_training_through_it_raises_cartpoles_return(tmp_path):
    """A short run on Gymnasium's own CartPole-v1; then evaluate, and the policy played in a
    plain gymnasium.make env, outside skinner."""
    env = skinner.from_gymnasium([cartpole] * 16)
    progress = []
    summary = skinner.train(env, config=cartpole_preset(), seed=1, total_steps=60_000,
                            run_dir=tmp_path / "run", callback=progress.append)
    assert progress[-1]["steps"] == summary["total_steps"]
    assert len(progress) == summary["updates"] == 60_000 // (16 * 128)
    assert summary["final_mean_return"] > 100, summary
    assert progress[0]["mean_return"] < 50  # it learned: a random policy lasts ~22 steps
    evaluated = skinner.evaluate(tmp_path / "run", episodes=10, greedy=True)
    assert evaluated["mean_return"] > 100, evaluated
    policy = skinner.load(tmp_path / "run")
    played = gym.make("CartPole-v1")
    returns = []
    for episode in range(5):
        obs, _ = played.reset(seed=100 + episode)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = played.step(
                int(policy.act(obs, deterministic=True)))
            total, done = total + reward, terminated or truncated
        returns.append(total)
    assert np.mean(returns) > 100, returns
    env.close()
