"""skinner.make: Gymnasium 1.x vector-env conventions, same-step autoreset,
zero copy, determinism against the C library, and bad input."""

import ctypes
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import skinner
from cartpole_ref import step as cartpole_step
from conftest import BUILD, require


# Gymnasium 1.4.0's observation spaces of the classic-control envs, from its source (CartPole's
# unbounded velocities are float32's largest value there; skinner says inf).
GYMNASIUM_OBS_BOUNDS = {
    "CartPole-v1": ([-4.8, -np.inf, -12 * 2 * math.pi / 360 * 2, -np.inf],
                    [4.8, np.inf, 12 * 2 * math.pi / 360 * 2, np.inf]),
    "Acrobot-v1": ([-1, -1, -1, -1, -4 * math.pi, -9 * math.pi],
                   [1, 1, 1, 1, 4 * math.pi, 9 * math.pi]),
    "MountainCar-v0": ([-1.2, -0.07], [0.6, 0.07]),
    "MountainCarContinuous-v0": ([-1.2, -0.07], [0.6, 0.07]),
    "Pendulum-v1": ([-1, -1, -8], [1, 1, 8]),
}


@pytest.mark.parametrize("env_id", sorted(GYMNASIUM_OBS_BOUNDS))
def test_observation_spaces_are_gymnasiums(env_id):
    low, high = (np.array(b, np.float32) for b in GYMNASIUM_OBS_BOUNDS[env_id])
    with skinner.make(env_id, num_envs=4, seed=3) as env:
        space = env.single_observation_space
        assert np.array_equal(space.low, low) and np.array_equal(space.high, high)
        assert np.array_equal(env.observation_space.high, np.tile(high, (4, 1)))
        obs, _ = env.reset(seed=3)
        for _ in range(300):
            assert env.observation_space.contains(obs)
            obs, *_ = env.step(env.action_space.sample())


def test_spaces_and_attributes():
    with skinner.make("CartPole-v1", num_envs=8, seed=0) as env:
        assert env.num_envs == 8
        assert env.single_observation_space.shape == (4,)
        assert env.single_observation_space.dtype == np.float32
        assert env.single_action_space.n == 2
        assert env.observation_space.shape == (8, 4)
        assert env.action_space.shape == (8,)
        assert list(env.action_space.nvec) == [2] * 8
        assert env.max_episode_steps == 500 and env.reward_threshold == 475
        assert str(env.metadata["autoreset_mode"]).lower().replace("_", "").endswith("samestep")
    assert env.closed
    with skinner.make("Pendulum-v1", num_envs=3) as env:
        box = env.single_action_space
        assert box.shape == (1,) and box.low[0] == -2.0 and box.high[0] == 2.0
        assert env.action_space.shape == (3, 1)
        assert env.single_action_space.sample().shape == (1,)
    with skinner.make("cartpole") as env:  # aliases, as the CLI takes them
        assert env.env_id == "CartPole-v1"


def test_reset_and_step_types():
    with skinner.make("CartPole-v1", num_envs=4, seed=3) as env:
        obs, infos = env.reset(seed=3)
        assert obs.shape == (4, 4) and obs.dtype == np.float32 and infos == {}
        assert np.all(np.abs(obs) <= 0.05)
        out = env.step(np.zeros(4, np.int64))
        assert len(out) == 5
        obs, rewards, terminations, truncations, infos = out
        assert rewards.dtype == np.float32 and rewards.shape == (4,)
        assert terminations.dtype == np.bool_ and truncations.dtype == np.bool_
        assert np.all(rewards == 1.0)


def test_same_step_autoreset_against_reference_dynamics():
    """One env pushed right until it falls: each observation follows
    Gymnasium's equations (float64) from the one before, and the step that
    ends the episode returns the next episode's first observation with the
    terminal one in infos["final_obs"] and the episode in infos["episode"]."""
    with skinner.make("CartPole-v1", num_envs=1, seed=7) as env:
        obs, _ = env.reset(seed=7)
        state = obs[0].astype(np.float64)
        for t in range(1, 200):
            obs, rewards, terminations, truncations, infos = env.step(np.ones(1, np.int32))
            expected, terminated = cartpole_step(state, 1)
            if terminated:
                break
            assert not terminations[0] and "final_obs" not in infos
            np.testing.assert_allclose(obs[0], expected, rtol=1e-6, atol=1e-7)
            state = obs[0].astype(np.float64)
        assert terminated and terminations[0] and not truncations[0]
        assert infos["_final_obs"].tolist() == [True] and infos["_episode"].tolist() == [True]
        np.testing.assert_allclose(infos["final_obs"][0], expected, rtol=1e-6, atol=1e-7)
        assert np.all(np.abs(obs[0]) <= 0.05)  # the next episode's reset state
        assert infos["episode"]["r"][0] == t and infos["episode"]["l"][0] == t


def test_truncation_at_the_time_limit():
    """MountainCar with action 1 (no push) never reaches the goal: every env
    is truncated at step 200 exactly, not terminated."""
    with skinner.make("MountainCar-v0", num_envs=5, seed=1) as env:
        env.reset()
        for t in range(1, 201):
            obs, rewards, terminations, truncations, infos = env.step(np.ones(5, np.int32))
            if t < 200:
                assert not truncations.any() and "episode" not in infos
        assert truncations.all() and not terminations.any()
        assert infos["episode"]["l"].tolist() == [200] * 5
        assert infos["episode"]["r"].tolist() == [-200.0] * 5


def test_zero_copy_views():
    with skinner.make("CartPole-v1", num_envs=16, seed=0) as env:
        addresses = env._buffer_addresses()
        obs0, _ = env.reset()
        obs1, rew1, term1, trunc1, _ = env.step(np.zeros(16, np.int32))
        obs2, rew2, term2, trunc2, _ = env.step(np.ones(16, np.int32))
        for name, a, b in (("obs", obs1, obs2), ("rewards", rew1, rew2),
                           ("terminated", term1, term2), ("truncated", trunc1, trunc2)):
            assert a.__array_interface__["data"][0] == addresses[name], name
            assert b.__array_interface__["data"][0] == addresses[name], name
        assert obs0.__array_interface__["data"][0] == addresses["obs"]
        # the same memory: the earlier view shows the later step's values
        assert np.array_equal(obs1, obs2)
        # env.actions: a staging buffer that stays put; what is written there is stepped
        staging = env.actions.__array_interface__["data"][0]
        env.actions[:] = 1
        obs_before = obs2.copy()
        env.step(env.actions)
        assert env.actions.__array_interface__["data"][0] == staging
        with skinner.make("CartPole-v1", num_envs=16, seed=0) as twin:
            twin.reset()
            twin.step(np.zeros(16, np.int32))
            twin.step(np.ones(16, np.int32))
            assert np.array_equal(twin.step(np.ones(16, np.int32))[0], obs2)


def test_copy_gives_fresh_arrays():
    with skinner.make("CartPole-v1", num_envs=4, seed=0, copy=True) as env:
        addresses = env._buffer_addresses()
        obs0, _ = env.reset()
        obs1 = env.step(np.zeros(4, np.int32))[0]
        assert obs1.__array_interface__["data"][0] != addresses["obs"]
        assert not np.array_equal(obs0, obs1)


def test_views_outlive_close():
    env = skinner.make("CartPole-v1", num_envs=4, seed=0)
    obs, _ = env.reset()
    kept = obs.copy()
    env.close()
    env.close()  # idempotent
    assert np.array_equal(obs, kept)  # still readable memory
    with pytest.raises(ValueError, match="closed"):
        env.step(np.zeros(4, np.int32))
    with pytest.raises(ValueError, match="closed"):
        env.reset()


def _c_trajectory(env_id, num_envs, seed, actions):
    """The same run through libskinner.so with ctypes: the C library's own
    sk_vec, no module in between."""
    lib = ctypes.CDLL(str(BUILD / "libskinner.so.0"))
    lib.sk_env_find.restype = ctypes.c_void_p
    lib.sk_env_find.argtypes = [ctypes.c_char_p]
    lib.sk_vec_create.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_int,
                                  ctypes.c_int, ctypes.c_void_p]
    lib.sk_vec_buffers_of.restype = ctypes.POINTER(ctypes.c_void_p * 9)
    lib.sk_vec_buffers_of.argtypes = [ctypes.c_void_p]
    for name in ("sk_vec_reset", "sk_vec_step", "sk_vec_destroy"):
        getattr(lib, name).argtypes = [ctypes.c_void_p] + ([ctypes.c_uint64] if name == "sk_vec_reset" else [])
    vec = ctypes.c_void_p()
    env = lib.sk_env_find(env_id.encode())
    assert lib.sk_vec_create(ctypes.byref(vec), env, num_envs, 1, None) == 0
    buffers = lib.sk_vec_buffers_of(vec).contents
    obs_size = 4
    as_array = lambda ptr, ctype, n: np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctype)), (n,))
    lib.sk_vec_reset(vec, seed)
    out = [as_array(buffers[0], ctypes.c_float, num_envs * obs_size).copy()]
    act = as_array(buffers[2], ctypes.c_int32, num_envs)
    for a in actions:
        act[:] = a
        lib.sk_vec_step(vec)
        out.append(as_array(buffers[0], ctypes.c_float, num_envs * obs_size).copy())
    lib.sk_vec_destroy(vec)
    return np.array(out).reshape(len(actions) + 1, num_envs, obs_size)


def test_same_seed_same_trajectories_as_the_c_library():
    rng = np.random.default_rng(5)
    actions = rng.integers(0, 2, (300, 32)).astype(np.int32)
    expected = _c_trajectory("CartPole-v1", 32, 11, actions)
    for run in range(2):
        with skinner.make("CartPole-v1", num_envs=32, seed=11) as env:
            got = [env.reset()[0].copy()]
            for a in actions:
                got.append(env.step(a)[0].copy())
        assert np.array_equal(np.array(got), expected), f"run {run}"
    with skinner.make("CartPole-v1", num_envs=32, seed=12) as env:
        assert not np.array_equal(env.reset()[0], expected[0])


def test_threads_split_the_batch_without_changing_results():
    actions = np.random.default_rng(1).integers(0, 2, (100, 64)).astype(np.int32)
    results = []
    for threads in (1, 2):
        with skinner.make("CartPole-v1", num_envs=64, threads=threads, seed=3) as env:
            env.reset()
            for a in actions:
                obs = env.step(a)[0]
            results.append(obs.copy())
    assert np.array_equal(results[0], results[1])


def test_reset_seeds():
    with skinner.make("CartPole-v1", num_envs=4, seed=5) as env:
        a = env.reset(seed=9)[0].copy()
        b = env.reset()[0].copy()  # the next seed of the sequence: new starts
        c = env.reset(seed=9)[0].copy()
        assert np.array_equal(a, c) and not np.array_equal(a, b)
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=-1)
        with pytest.raises(ValueError, match="options"):
            env.reset(options={"x": 1})


@pytest.mark.parametrize("actions, message", [
    (np.zeros(3, np.int32), r"shape \(4,\)"),
    (np.zeros((4, 2), np.int32), r"shape \(4,\)"),
    (np.zeros(4, np.float32), "integers"),
    (np.zeros(4, bool), "integers"),
    (np.array([0, 1, 2, 0]), r"action 2 of env 2 is out of range \(expected 0 <= action < 2\)"),
    (np.array([0, -1, 0, 0], np.int32), "action -1 of env 1 is out of range"),
    (np.array([0, 2**40, 0, 0], np.int64), "out of range"),
    ("left", "integers"),
])
def test_bad_discrete_actions(actions, message):
    with skinner.make("CartPole-v1", num_envs=4, seed=0) as env:
        obs, _ = env.reset()
        env.actions[:] = [1, 0, 1, 0]
        obs, rewards, terminations, truncations, _ = env.step(env.actions)
        before = [a.copy() for a in (obs, rewards, terminations, truncations, env.actions)]
        with pytest.raises(ValueError, match=message):
            env.step(actions)
        after = (obs, rewards, terminations, truncations, env.actions)
        for a, b in zip(before, after):  # nothing was stepped, nothing you see was written
            assert np.array_equal(a, b)
        env.step(np.zeros(4, np.int32))  # and the env still works


def test_actions_of_other_integer_types_and_layouts():
    """Every integer type and layout steps as the same int32 actions do:
    other widths, strides, byte orders and misaligned buffers."""
    unaligned = np.frombuffer(b"\0" + np.array([1, 0, 1, 1, 0, 1], np.int32).tobytes(), np.int32, offset=1)
    layouts = [np.array([1, 0, 1, 1, 0, 1], np.uint8), np.array([1, 9, 0, 9, 1, 9, 1, 9, 0, 9, 1, 9], np.int16)[::2],
               np.array([[1], [0], [1], [1], [0], [1]], np.int64), [1, 0, 1, 1, 0, 1],
               np.array([1, 0, 1, 1, 0, 1], ">i4"), unaligned]
    results = []
    for a in layouts:
        with skinner.make("CartPole-v1", num_envs=6, seed=0) as env:
            env.reset()
            results.append(env.step(a)[0].copy())
    for r in results[1:]:
        assert np.array_equal(r, results[0])


def test_numpy_integer_seeds():
    with skinner.make("CartPole-v1", num_envs=2, seed=np.uint32(4)) as env:
        a = env.reset(seed=np.int64(3))[0].copy()
        assert np.array_equal(a, env.reset(seed=3)[0])


SEEDS_OUT_OF_RANGE = [2**64, 2**64 + 5, 2**70, -1, -(2**63)]


@pytest.mark.parametrize("seed", SEEDS_OUT_OF_RANGE)
def test_make_refuses_the_seeds_reset_refuses(seed):
    """A seed outside [0, 2**64) is refused by make, reset and bench
    alike (test_train: Policy.seed, evaluate), never wrapped around (2**64 was seed 0, -1 was 2**64-1)."""
    message = rf"seed = {seed} is out of range \(expected an int in \[0, 2\*\*64\) or None\)"
    with pytest.raises(ValueError, match=message):
        skinner.make("CartPole-v1", num_envs=2, seed=seed)
    with skinner.make("CartPole-v1", num_envs=2, seed=0) as env:
        with pytest.raises(ValueError, match=message):
            env.reset(seed=seed)
    with pytest.raises(ValueError, match=message):
        skinner.bench("CartPole-v1", num_envs=2, seconds=0.01, seed=seed)


def test_make_takes_every_seed_reset_takes():
    for seed in (0, 2**63, 2**64 - 1, np.uint64(2**64 - 1)):
        with skinner.make("CartPole-v1", num_envs=3, seed=seed) as env:
            first = env.reset()[0].copy()
            assert np.array_equal(first, env.reset(seed=seed)[0]), seed
    with skinner.make("CartPole-v1", num_envs=3, seed=0) as zero, \
            skinner.make("CartPole-v1", num_envs=3, seed=2**64 - 1) as top:
        assert not np.array_equal(zero.reset()[0], top.reset()[0])
    for bad in (1.5, "1", [1]):
        with pytest.raises(TypeError, match="seed must be an int"):
            skinner.make("CartPole-v1", seed=bad)


def test_num_envs_is_capped_as_the_cli_caps_it():
    cli = subprocess.run([str(BUILD / "skinner"), "bench", "env", "CartPole-v1", "--num-envs",
                          str(2**30), "--seconds", "0.01"], capture_output=True, text=True,
                         timeout=60)
    assert cli.returncode == 2, cli.stderr
    cap = int(re.search(r"--num-envs = 1073741824 is out of range \(expected 1\.\.(\d+)\)",
                        cli.stderr).group(1))
    for num_envs in (2**30, cap + 1, 2**31, 2**64, 0, -1):
        message = rf"num_envs = {num_envs} is out of range \(expected 1\.\.{cap}\)"
        with pytest.raises(ValueError, match=message):
            skinner.make("CartPole-v1", num_envs=num_envs)
        with pytest.raises(ValueError, match=message):
            skinner.bench("CartPole-v1", num_envs=num_envs, seconds=0.01)
    with pytest.raises(TypeError, match="num_envs must be an int"):
        skinner.make("CartPole-v1", num_envs=2.0)
    with skinner.make("CartPole-v1", num_envs=np.int64(3)) as env:
        assert env.num_envs == 3


def test_bad_continuous_actions():
    with skinner.make("Pendulum-v1", num_envs=2, seed=0) as env:
        env.reset()
        with pytest.raises(ValueError, match=r"shape \(2,\)"):
            env.step(np.zeros((3, 1), np.float32))
        with pytest.raises(ValueError, match=r"action nan of env 1, dim 0 is not finite .*\[-2, 2\]"):
            env.step(np.array([[0.0], [math.nan]]))
        with pytest.raises(ValueError, match="real numbers"):
            env.step(np.array([[True], [False]]))
        obs, rewards, *_ = env.step(np.array([[5.0], [-5.0]]))  # clipped to [-2, 2] by the env
        assert rewards.dtype == np.float32


def test_masks_multi_head_actions(countries):
    with skinner.make("Prover-v0", num_envs=4, seed=0, dataset=countries) as env:
        obs, infos = env.reset()
        mask = infos["action_mask"]
        assert mask.dtype == np.bool_ and mask.shape == (4, env.spec_info["mask_size"])
        heads = env.spec_info["heads"]
        allowed = [int(np.flatnonzero(row[:heads[0]])[0]) for row in mask]
        refused = [j for j in range(heads[0]) if not mask[0, j]]
        if refused:
            bad = np.array(allowed, np.int32).reshape(4, *([1] if len(heads) > 1 else []))
            bad = np.array(allowed)
            bad[0] = refused[0]
            if len(heads) > 1:
                bad = np.column_stack([bad] + [np.zeros(4, np.int64)] * (len(heads) - 1))
            with pytest.raises(ValueError, match="not allowed by its mask"):
                env.step(bad)
        good = np.array(allowed)
        if len(heads) > 1:
            good = np.column_stack([good] + [np.zeros(4, np.int64)] * (len(heads) - 1))
        env.step(good)


def test_config_sizes_the_buffers(countries):
    # Prover-v0's observation is 3A(1 + S) values and its action one of S
    with skinner.make("Prover-v0", num_envs=3, seed=0, dataset=countries, max_atoms=4,
                      max_successors=7) as env:
        obs, infos = env.reset()
        assert obs.shape == (3, 3 * 4 * (1 + 7))
        assert infos["action_mask"].shape == (3, 7)
        assert env.spec_info["mask_size"] == 7 and env.spec_info["heads"] == [7]
        obs, *_ = env.step(np.array([int(np.flatnonzero(row)[0]) for row in infos["action_mask"]]))
        assert obs.shape == (3, 96)
    with pytest.raises(ValueError, match="env.max_successors"):
        skinner.make("Prover-v0", dataset=countries, max_successors=5000)


def test_unknown_env_and_bad_arguments():
    with pytest.raises(ValueError, match="CartPole-v1"):  # the message lists the known envs
        skinner.make("NoSuchEnv-v0")
    with pytest.raises(ValueError, match="num_envs"):
        skinner.make("CartPole-v1", num_envs=0)
    with pytest.raises(ValueError, match="threads"):
        skinner.make("CartPole-v1", threads=-1)
    with pytest.raises(ValueError, match="env.precision"):
        skinner.make("CartPole-v1", precision="float16")
    with pytest.raises(ValueError, match="nonsense"):
        skinner.make("CartPole-v1", nonsense=1)
    with pytest.raises(ValueError, match="no_such.so"):
        skinner.make("./no_such.so:X-v0")


def test_bench_through_the_module():
    r = skinner.bench("CartPole-v1", num_envs=256, seconds=0.05)
    assert r["steps"] > 0 and r["steps"] % 256 == 0 and r["steps_per_second"] > 0


def test_plugin_envs():
    """An env from a plugin (examples/plugin's GridWorld-v0, built by the
    tests): loaded by make, masked, and trained like a built-in."""
    plugin = require(BUILD / "tests" / "libgridworld.so", "built with the tests")
    with skinner.make(f"{plugin}:GridWorld-v0", num_envs=4, seed=0) as env:
        assert env.spec_info["plugin"] == str(plugin)
        obs, infos = env.reset()
        mask = infos["action_mask"]
        refused = np.argwhere(~mask)
        if len(refused):  # a masked-out move is refused, naming env and head
            env_index, action = refused[0]
            bad = mask.argmax(1)
            bad[env_index] = action
            with pytest.raises(ValueError, match=f"env {env_index}, head 0 is not allowed"):
                env.step(bad)
        env.step(mask.argmax(1))  # the first allowed move of each env
    result = skinner.train("GridWorld-v0", total_steps=200_000, threads=1, seed=1,
                           stop_when_solved=True)
    assert result["solved"]


def test_each_step_has_its_own_infos():
    with skinner.make("CartPole-v1", num_envs=64, seed=1) as env:
        env.reset()
        rng = np.random.default_rng(0)
        ended = []
        for _ in range(300):
            infos = env.step(rng.integers(0, 2, 64))[4]
            if "episode" in infos:
                ended.append(infos)
                infos["episode"].pop("l")  # what one caller does to its dict
                infos.pop("final_obs")
        assert len(ended) > 2
        assert "l" not in ended[0]["episode"]
        infos = env.step(np.zeros(64, np.int32))[4]
        while "episode" not in infos:
            infos = env.step(np.zeros(64, np.int32))[4]
        assert set(infos["episode"]) == {"r", "l"} and "final_obs" in infos


def test_import_refuses_what_the_cpu_cannot_run():
    """`import skinner` refuses an environment that asks for code the CPU cannot run, as the
    program does at start, rather than running other code silently or dying of an illegal
    instruction later. A level that is no level is refused on any machine."""
    env = dict(os.environ, SKINNER_ISA="avx3")
    done = subprocess.run([sys.executable, "-c", "import skinner"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0, "import skinner accepted SKINNER_ISA=avx3"
    assert "ImportError" in done.stderr, done.stderr
    assert "SKINNER_ISA=avx3 is not a level (expected baseline, avx2 or avx512)" in done.stderr, \
        done.stderr
    env["SKINNER_ISA"] = "baseline"
    done = subprocess.run([sys.executable, "-c", "import skinner"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
