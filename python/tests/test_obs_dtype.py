"""Observations with a shape and a dtype (issue 32 ask 1) from Python: a uint8 env's
observations are zero-copy uint8 views of shape (num_envs, H, W, C), its spaces
Box(0, 1, (H, W, C), uint8), and it trains through skinner.train. Pixels-v0 is
tests/plugins/pixels_plugin.c (10x10x3, one lit cell); MinAtar/Breakout-v1 is 10x10x4."""

import numpy as np
import pytest

import skinner

from conftest import BUILD, require


def pixels_id():
    plugin = require(BUILD / "tests" / "libpixels_plugin.so", "the uint8 fixture env (ctest builds it)")
    return f"{plugin}:Pixels-v0"


def test_minatar_uint8_views():
    env = skinner.make("MinAtar/Breakout-v1", num_envs=8)
    assert str(env.single_observation_space) == "Box(0, 1, (10, 10, 4), uint8)"
    assert env.observation_space.shape == (8, 10, 10, 4)
    assert env.observation_space.dtype == np.uint8
    obs, _ = env.reset(seed=1)
    assert obs.dtype == np.uint8 and obs.shape == (8, 10, 10, 4)
    assert set(np.unique(obs)) <= {0, 1}
    after, *_ = env.step(np.zeros(8, np.int64))
    assert np.shares_memory(obs, after)  # the vec's own buffer, no copy
    env.close()


def test_pixels_spaces_and_image():
    env = skinner.make(pixels_id(), num_envs=4)
    assert str(env.single_observation_space) == "Box(0, 1, (10, 10, 3), uint8)"
    obs, _ = env.reset(seed=3)
    assert obs.shape == (4, 10, 10, 3) and obs.dtype == np.uint8
    # one lit cell in channel 0, and row 0's marker of the cell's half in channel 1 or 2
    for image in obs:
        assert image[..., 0].sum() == 1
        row, col = np.argwhere(image[..., 0])[0]
        assert image[0, col, 1 if col < 5 else 2] == 1
        assert image.sum() == 2
    env.close()


def test_pixels_trains_from_python(tmp_path):
    summary = skinner.train(pixels_id(), run_dir=tmp_path / "run", seed=1, threads=1,
                            total_steps=20000, force=True)
    # a blind policy returns 4 of 8 on average; reading the image returns up to 8
    assert summary["final_mean_return"] > 6.5, summary


def test_act_takes_images_as_the_env_gives_them(tmp_path):
    """policy.act reads (batch, H, W, C) and (H, W, C) observations as they come from the
    env, the same as their flat rows; other shapes are refused naming the expected ones."""
    skinner.train(pixels_id(), run_dir=tmp_path / "run", seed=1, threads=1, total_steps=4096,
                  force=True)
    policy = skinner.load(tmp_path / "run")
    env = skinner.make(pixels_id(), num_envs=16)
    obs, _ = env.reset(seed=2)
    flat = np.asarray(policy.act(obs.reshape(16, -1), deterministic=True))
    np.testing.assert_array_equal(np.asarray(policy.act(obs, deterministic=True)), flat)
    assert int(policy.act(obs[3], deterministic=True)) == flat[3]
    with pytest.raises(ValueError, match=r"images \(10, 10, 3\) or \(batch, 10, 10, 3\).*"
                                         r"got \(16, 10, 5, 3\)"):
        policy.act(obs[:, :, :5])
    env.close()


class Grid:
    """A 3x4 float observation (a 2-d shape): action 1 earns 1 when cell (2, 3) is lit."""

    single_observation_space = skinner.spaces.Box(0, 1, (3, 4), np.float32)
    single_action_space = skinner.spaces.Discrete(2)

    def __init__(self, num_envs):
        self.n = num_envs
        self.rng = np.random.default_rng(1)

    def frame(self):
        return (self.rng.random((self.n, 3, 4)) < 0.5).astype(np.float32)

    def reset(self, seed, mask=None):
        self.obs = self.frame()
        return self.obs

    def step(self, actions):
        reward = (actions == self.obs[:, 2, 3]).astype(np.float32)
        self.obs = self.frame()
        return self.obs, reward, np.zeros(self.n, bool), np.zeros(self.n, bool)


skinner.register("PyGrid-v0", Grid, max_episode_steps=8)


def test_act_takes_one_image_of_a_2d_shape(tmp_path):
    """(H, W) is one image for an env of shape (H, W), (batch, H, W) a batch of them."""
    skinner.train("PyGrid-v0", run_dir=tmp_path / "run", seed=1, threads=1, total_steps=2048,
                  force=True)
    policy = skinner.load(tmp_path / "run")
    frames = (np.random.default_rng(2).random((16, 3, 4)) < 0.5).astype(np.float32)
    flat = np.asarray(policy.act(frames.reshape(16, 12), deterministic=True))
    np.testing.assert_array_equal(np.asarray(policy.act(frames, deterministic=True)), flat)
    for k in range(16):
        assert int(policy.act(frames[k], deterministic=True)) == flat[k]


class Image:
    """A Python-defined uint8 image env: a 6x6x2 image whose channel 0 lights one cell;
    action 1 earns 1 when the cell is in the right half, action 0 in the left."""

    single_observation_space = skinner.spaces.Box(0, 1, (6, 6, 2), np.uint8)
    single_action_space = skinner.spaces.Discrete(2)

    def __init__(self, num_envs):
        self.n = num_envs
        self.rng = np.random.default_rng(0)
        self.cell = np.zeros(num_envs, np.int64)

    def image(self):
        obs = np.zeros((self.n, 6, 6, 2), np.uint8)
        obs[np.arange(self.n), self.cell // 6, self.cell % 6, 0] = 1
        return obs

    def reset(self, seed, mask=None):
        new = self.rng.integers(0, 36, self.n)
        self.cell = new if mask is None else np.where(mask, new, self.cell)
        return self.image()

    def step(self, actions):
        reward = (actions == (self.cell % 6 >= 3)).astype(np.float32)
        self.cell = self.rng.integers(0, 36, self.n)
        return self.image(), reward, np.zeros(self.n, bool), np.zeros(self.n, bool)


skinner.register("PyImage-v0", Image, max_episode_steps=8)


def test_python_defined_uint8_image_env(tmp_path):
    d = skinner.describe("PyImage-v0")
    assert d["obs_dtype"] == "uint8" and tuple(d["obs_shape"]) == (6, 6, 2)
    with skinner.make("PyImage-v0", num_envs=4) as env:
        assert str(env.single_observation_space) == "Box(0, 1, (6, 6, 2), uint8)"
        obs, _ = env.reset(seed=1)
        assert obs.dtype == np.uint8 and obs.shape == (4, 6, 6, 2)
        assert (obs.reshape(4, -1).sum(axis=1) == 1).all()
        obs, *_ = env.step(np.zeros(4, np.int64))
        assert (obs.reshape(4, -1).sum(axis=1) == 1).all()
    summary = skinner.train("PyImage-v0", run_dir=tmp_path / "run", seed=1, threads=1,
                            total_steps=20000, force=True)
    assert summary["final_mean_return"] > 6.0, summary  # blind: 4 of 8



def test_checkpoint_of_another_dtype_refused(tmp_path):
    """A run of PyImage-v0 (uint8 6x6x2) loaded where PyImage-v0 observes float32 6x6x2:
    the same size, another dtype, refused naming both."""
    import subprocess
    import sys
    run = tmp_path / "run"
    skinner.train("PyImage-v0", run_dir=run, seed=1, threads=1, total_steps=2048, force=True)
    assert skinner.load(run) is not None  # the same type loads
    # a fresh process where PyImage-v0 observes float32 images of the same shape
    script = f"""
import numpy as np
import skinner
class FloatImage:
    single_observation_space = skinner.spaces.Box(0, 1, (6, 6, 2), np.float32)
    single_action_space = skinner.spaces.Discrete(2)
    def __init__(self, num_envs): self.n = num_envs
    def reset(self, seed, mask=None): return np.zeros((self.n, 6, 6, 2), np.float32)
    def step(self, a): return (np.zeros((self.n, 6, 6, 2), np.float32), np.zeros(self.n, np.float32),
                               np.zeros(self.n, bool), np.zeros(self.n, bool))
skinner.register("PyImage-v0", FloatImage, max_episode_steps=8)
try:
    skinner.load({str(run)!r})
except Exception as error:
    print(error)
    raise SystemExit(3)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "uint8 6x6x2" in done.stdout and "float32 6x6x2" in done.stdout, done.stdout
