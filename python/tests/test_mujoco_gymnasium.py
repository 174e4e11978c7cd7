"""skinner's MuJoCo tasks (modules/mujoco, docs/mujoco.md) against Gymnasium's, stepped live on
the same MuJoCo (the test venv pins the version scripts/mujoco.version pins).

EnvPool's alignment: reset skinner's env, copy its physics state (qpos, qvel) into
gymnasium.make(id) with set_state, then step both with the same random actions until
Gymnasium's episode ends, over several seeds. Each task runs twice where it can: on the model
skinner embeds (modules/mujoco/models/, against Gymnasium's own model file: the model files are
compared too) and on Gymnasium's model file from ../shared/reference/mujoco/assets passed as
--env.model (env.model here), against Gymnasium's env on the same file.

Tolerances: skinner observes float32, so each observation must equal Gymnasium's float64
observation rounded to float32 (exactly: the physics is the same library's, bit for bit);
rewards within 1e-6 relative (a float32 reward of a float64 sum); terminated exactly, and
truncated as skinner defines it (Gymnasium's TimeLimit also truncates a terminating step;
skinner's truncated means "and not terminated", docs/mujoco.md)."""

import numpy as np
import pytest

import skinner
from conftest import SHARED, require, require_package, under_ci

ASSETS = SHARED / "reference" / "mujoco" / "assets"

# id -> Gymnasium's model file; what modules/mujoco/tasks.c provides
TASKS = {
    "HalfCheetah-v5": "half_cheetah.xml",
    "Hopper-v5": "hopper.xml",
    "Walker2d-v5": "walker2d_v5.xml",
    "Swimmer-v5": "swimmer.xml",
    "InvertedPendulum-v5": "inverted_pendulum.xml",
    "Ant-v5": "ant.xml",
    "Hopper-v4": "hopper.xml",
    "Walker2d-v4": "walker2d.xml",
    "InvertedPendulum-v4": "inverted_pendulum.xml",
    "Ant-v4": "ant.xml",
    "InvertedDoublePendulum-v5": "inverted_double_pendulum.xml",
    "InvertedDoublePendulum-v4": "inverted_double_pendulum.xml",
    "Reacher-v5": "reacher.xml",
    "Reacher-v4": "reacher.xml",
    "Pusher-v5": "pusher_v5.xml",
    "Humanoid-v5": "humanoid.xml",
    "Humanoid-v4": "humanoid.xml",
}
SEEDS = (1, 2, 3)
NUM_ENVS = 3
INDEX = 1  # the env compared: not env 0, so each env's own stream is exercised
REWARD_RTOL = 1e-6


def require_mujoco_module():
    known = skinner._core.env_ids()
    missing = [task for task in TASKS if task not in known]
    if not missing:
        return
    message = (f"the MuJoCo module is not built ({', '.join(missing)} unknown): install MuJoCo "
               "(scripts/setup.sh) and configure again")
    if under_ci():
        pytest.fail(f"{message}; CI=true: a missing requirement fails the run", pytrace=False)
    pytest.skip(message)


def make_pair(task, source):
    """skinner's env and Gymnasium's, on the embedded model or on the reference file."""
    gym = require_package("gymnasium")
    require_mujoco_module()
    if source == "embedded":
        try:
            ours = skinner.make(task, num_envs=NUM_ENVS, seed=0)
        except ValueError as error:
            if "embeds no" not in str(error):
                raise
            pytest.skip(str(error))
        return ours, gym.make(task)
    path = require(ASSETS / TASKS[task], "Gymnasium's MuJoCo model files of ../shared/reference/"
                                         "mujoco: put ../shared next to the repository or set "
                                         "SKINNER_SHARED_DIR")
    ours = skinner.make(task, num_envs=NUM_ENVS, seed=0, model=str(path))
    # v4's constructors take no xml_file: they load their own copy of the same file
    real = gym.make(task) if task.endswith("-v4") else gym.make(task, xml_file=str(path))
    return ours, real


def run_episode(ours, real, seed):
    """One aligned episode; returns the steps it took and the episode's info sums."""
    obs, _ = ours.reset(seed=seed)
    real.reset(seed=seed)
    qpos, qvel = ours.get_state(INDEX)
    real.unwrapped.set_state(qpos, qvel)
    expected = real.unwrapped._get_obs()
    np.testing.assert_array_equal(obs[INDEX], expected.astype(np.float32),
                                  err_msg=f"seed {seed}: the first observation")
    low, high = ours.single_action_space.low, ours.single_action_space.high
    rng = np.random.default_rng(seed)
    sums = {}
    for step in range(1, ours.max_episode_steps + 1):
        # the whole Box and a little past it: ctrl = action, unclipped, in both
        actions = rng.uniform(low * 1.1, high * 1.1, size=(NUM_ENVS, low.size)).astype(np.float32)
        obs, rewards, terminated, truncated, infos = ours.step(actions)
        g_obs, g_reward, g_terminated, g_truncated, g_info = real.step(
            actions[INDEX].astype(np.float64))
        for key, value in g_info.items():
            if key.startswith("reward_"):
                sums[key] = sums.get(key, 0.0) + float(value)
        where = f"seed {seed}, step {step}"
        ended = bool(terminated[INDEX] or truncated[INDEX])
        got = infos["final_obs"][INDEX] if ended else obs[INDEX]
        np.testing.assert_array_equal(got, g_obs.astype(np.float32),
                                      err_msg=f"{where}: the observation")
        assert abs(rewards[INDEX] - g_reward) <= REWARD_RTOL * max(1.0, abs(g_reward)), (
            f"{where}: reward {rewards[INDEX]!r}, Gymnasium's {g_reward!r}")
        assert bool(terminated[INDEX]) == bool(g_terminated), f"{where}: terminated"
        assert bool(truncated[INDEX]) == (bool(g_truncated) and not g_terminated), (
            f"{where}: truncated")
        if g_terminated or g_truncated:
            return step, infos["episode"], sums
    pytest.fail(f"seed {seed}: Gymnasium's episode did not end within {ours.max_episode_steps}")


@pytest.mark.parametrize("source", ["embedded", "reference"])
@pytest.mark.parametrize("task", list(TASKS))
def test_matches_gymnasium(task, source):
    ours, real = make_pair(task, source)
    with ours:
        # spaces: the Box from the model's ctrlrange, the observation's size
        assert ours.single_action_space.shape == real.action_space.shape
        np.testing.assert_array_equal(ours.single_action_space.low, real.action_space.low)
        np.testing.assert_array_equal(ours.single_action_space.high, real.action_space.high)
        assert ours.single_observation_space.shape == real.observation_space.shape
        assert ours.max_episode_steps == real.spec.max_episode_steps
        for seed in SEEDS:
            steps, episode, sums = run_episode(ours, real, seed)
            # the episode log: its length and each reward term's sum (float32 sums)
            assert episode["l"][INDEX] == steps
            for key, total in sums.items():
                if key in episode:
                    assert abs(episode[key][INDEX] - total) <= 1e-5 * max(1.0, abs(total)), (
                        f"seed {seed}: the log's {key} {episode[key][INDEX]}, Gymnasium's {total}")
    real.close()


def test_ant_without_contact_forces():
    """Ant-v5's include_cfrc_ext_in_observation=False (Gymnasium's keyword; skinner's
    env.include_cfrc_ext_in_observation, which configs/mujoco_ant.ini sets): 27 values, the
    same rewards (contact cost included); another task refuses the key."""
    gym = require_package("gymnasium")
    require_mujoco_module()
    ours = skinner.make("Ant-v5", num_envs=NUM_ENVS, seed=0, include_cfrc_ext_in_observation=False)
    real = gym.make("Ant-v5", include_cfrc_ext_in_observation=False)
    with ours:
        assert ours.single_observation_space.shape == real.observation_space.shape == (27,)
        for seed in SEEDS:
            steps, episode, sums = run_episode(ours, real, seed)
            assert episode["l"][INDEX] == steps
            assert sums["reward_contact"] != 0.0  # charged, though not observed
    real.close()
    with pytest.raises(ValueError, match="include_cfrc_ext_in_observation"):
        skinner.make("Hopper-v5", num_envs=1, include_cfrc_ext_in_observation=False)


@pytest.mark.parametrize("task", ["HalfCheetah-v5", "Hopper-v5", "Ant-v5"])
def test_set_state_from_gymnasium(task):
    """The other direction: Gymnasium's reset state set into skinner's env (set_state) gives
    Gymnasium's observation, and the next step agrees."""
    ours, real = make_pair(task, "reference")
    with ours:
        ours.reset(seed=7)
        g_obs, _ = real.reset(seed=7)
        qpos, qvel = real.unwrapped.data.qpos.copy(), real.unwrapped.data.qvel.copy()
        obs = ours.set_state(INDEX, qpos, qvel)
        np.testing.assert_array_equal(obs, g_obs.astype(np.float32))
        got_qpos, got_qvel = ours.get_state(INDEX)
        np.testing.assert_array_equal(got_qpos, qpos)
        np.testing.assert_array_equal(got_qvel, qvel)
        actions = np.full((NUM_ENVS, ours.single_action_space.shape[0]), 0.5, np.float32)
        obs, rewards, *_ = ours.step(actions)
        g_obs, g_reward, *_ = real.step(actions[INDEX].astype(np.float64))
        np.testing.assert_array_equal(obs[INDEX], g_obs.astype(np.float32))
        with pytest.raises(ValueError, match="qvel"):
            ours.set_state(INDEX, qpos, np.full_like(qvel, np.nan))
        with pytest.raises(ValueError, match="positions"):
            ours.set_state(INDEX, qpos[:-1], qvel)
        with pytest.raises(ValueError, match="index"):
            ours.set_state(NUM_ENVS, qpos, qvel)
    real.close()


def test_model_missing_what_the_task_reads():
    """--env.model takes any MJCF, but one without what the task reads is refused by name."""
    require_mujoco_module()
    path = require(ASSETS / "inverted_pendulum.xml", "Gymnasium's MuJoCo model files")
    with pytest.raises(ValueError, match="nq"):
        skinner.make("Ant-v5", num_envs=1, model=str(path))
    with pytest.raises(OSError, match="env.model .*no_such_model.xml"):
        skinner.make("Ant-v5", num_envs=1, model=str(ASSETS / "no_such_model.xml"))
