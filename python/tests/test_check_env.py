"""skinner.check_env (docs/check.md): the env checker of `skinner check` from
Python. It passes a built-in env and a well-behaved Python-defined env, and
flags broken Python-defined envs by the check that fits each fault."""

import numpy as np
import pytest

import skinner


class Walker:
    """A walker on 0..29 starting on 0..9 from a per-reset RNG; obs =
    [position / 29, steps / 20, noise in [0, 1)], each in the declared Box
    [0, 1]; 3 moves (left, stay, right); position 29 terminates with +1,
    other steps cost 0.01."""

    single_observation_space = skinner.spaces.Box(0.0, 1.0, (3,), np.float32)
    single_action_space = skinner.spaces.Discrete(3)

    def __init__(self, num_envs):
        self.n = num_envs
        self.rng = np.random.default_rng(0)
        self.pos = np.zeros(num_envs, np.int64)
        self.t = np.zeros(num_envs, np.int64)

    def obs(self):
        noise = self.rng.random(self.n)
        return np.stack([self.pos / 29.0, self.t / 20.0, noise], axis=1).astype(np.float32)

    def reset(self, seed, mask=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        rows = np.ones(self.n, bool) if mask is None else np.asarray(mask, bool)
        self.pos[rows] = self.rng.integers(0, 10, rows.sum())
        self.t[rows] = 0
        return self.obs()

    def step(self, actions):
        self.pos = np.clip(self.pos + actions - 1, 0, 29)
        self.t += 1
        done = self.pos == 29
        rewards = np.where(done, 1.0, -0.01).astype(np.float32)
        return self.obs(), rewards, done, np.zeros(self.n, bool)


class NanReward(Walker):
    def step(self, actions):
        obs, rewards, terminated, truncated = super().step(actions)
        rewards[2] = np.nan if self.t[2] == 3 else rewards[2]
        return obs, rewards, terminated, truncated


class OutsideBox(Walker):
    def step(self, actions):
        obs, rewards, terminated, truncated = super().step(actions)
        obs[1, 0] = 2.0  # the Box is [0, 1]
        return obs, rewards, terminated, truncated


class Nondeterministic(Walker):
    def reset(self, seed, mask=None):
        # the global stream instead of the seed: two runs of one seed differ
        return super().reset(None if seed is None else int(np.random.randint(1 << 30)), mask)


for name, cls in [("CheckWalker-v0", Walker), ("CheckNanReward-v0", NanReward),
                  ("CheckOutsideBox-v0", OutsideBox), ("CheckNondeterministic-v0", Nondeterministic)]:
    if name not in skinner.envs():
        skinner.register(name, cls, max_episode_steps=20)


def statuses(report):
    return {check["name"]: check for check in report["checks"]}


def test_builtin_env_passes():
    report = skinner.check_env("CartPole-v1")
    assert report["env"] == "CartPole-v1" and report["failed"] == 0
    checks = statuses(report)
    assert checks["same_seed"]["status"] == "pass"
    assert checks["threads"]["status"] == "pass"
    assert checks["state_restore"]["status"] == "pass"
    assert checks["speed"]["status"] == "info"


def test_good_python_env_passes():
    report = skinner.check_env("CheckWalker-v0")
    assert report["failed"] == 0, report
    checks = statuses(report)
    # the declared Box is the observation space's: observations were held to [0, 1]
    assert "inside the declared Box" in checks["obs_space"]["detail"]
    assert checks["time_limit"]["status"] == "pass" and "20" in checks["time_limit"]["detail"]
    # a Python env steps its whole batch at once, and its own objects are not saved
    assert checks["threads"]["status"] == "skip"
    assert checks["other_rows"]["status"] == "skip"
    assert checks["state_restore"]["status"] == "skip"


@pytest.mark.parametrize("env_id, check, env_index", [
    ("CheckNanReward-v0", "rewards", 2),
    ("CheckOutsideBox-v0", "obs_space", 1),
    ("CheckNondeterministic-v0", "same_seed", None),
])
def test_broken_python_env_flagged(env_id, check, env_index):
    with pytest.raises(skinner.EnvCheckError, match=check) as raised:
        skinner.check_env(env_id)
    report = raised.value.report
    failed = statuses(report)[check]
    assert failed["status"] == "FAIL", report
    if env_index is not None:
        assert failed["env"] == env_index
        assert f"env {env_index}" in str(raised.value)
    # without raising, the same report
    quiet = skinner.check_env(env_id, raise_on_failure=False)
    assert statuses(quiet)[check]["status"] == "FAIL" and quiet["failed"] >= 1


def test_options_and_errors():
    report = skinner.check_env("CartPole-v1", num_envs=4, steps=70, seed=5)
    assert (report["num_envs"], report["steps"], report["seed"]) == (4, 70, 5)
    with pytest.raises(ValueError, match="unknown"):
        skinner.check_env("NoSuchEnv-v0")
    with pytest.raises(ValueError, match="nope"):
        skinner.check_env("CartPole-v1", nope=1)


class RaisesAtStep3(Walker):
    def step(self, actions):
        if self.t[0] >= 2:
            raise KeyError("the walker broke at step 3")
        return super().step(actions)


if "CheckRaises-v0" not in skinner.envs():
    skinner.register("CheckRaises-v0", RaisesAtStep3, max_episode_steps=20)


def test_env_exception_propagates():
    with pytest.raises(KeyError, match="broke at step 3"):
        skinner.check_env("CheckRaises-v0")


def test_docs_python_block_runs_verbatim():
    """docs/check.md's Python block, as printed."""
    import pathlib
    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "check.md").read_text()
    blocks = doc.split("```python\n")[1:]
    assert blocks, "docs/check.md has no python block"
    for block in blocks:
        exec(compile(block.split("```")[0], "docs/check.md", "exec"), {})
