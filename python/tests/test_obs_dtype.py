"""Observations with a shape and a dtype (issue 32 ask 1) from Python: a uint8 env's
observations are zero-copy uint8 views of shape (num_envs, H, W, C), its spaces
Box(0, 1, (H, W, C), uint8), and it trains through skinner.train. Pixels-v0 is
tests/plugins/pixels_plugin.c (10x10x3, one lit cell); MinAtar/Breakout-v1 is 10x10x4."""

import numpy as np

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
