"""A batched CartPole written in NumPy, registered with skinner and trained by
skinner's C trainer: how to bring an env of your own without writing C.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/numpy_env.py

As a module (bench/python_step.py uses it so): `from numpy_env import
NumpyCartPole, register`.
"""

import argparse
import configparser
import math
import os
import tempfile
import time

import numpy as np

import skinner

try:  # Gymnasium's spaces where it is installed, skinner's own otherwise
    from gymnasium import spaces
except ImportError:
    from skinner import spaces

ENV_ID = "NumpyCartPole-v1"
CARTPOLE_PRESET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                               "configs", "cartpole.ini")

# Gymnasium's CartPole-v1 (classic_control/cartpole.py, after Barto, Sutton and
# Anderson 1983): SI units, Euler integration.
GRAVITY = 9.8
MASSCART = 1.0
MASSPOLE = 0.1
TOTAL_MASS = MASSCART + MASSPOLE
LENGTH = 0.5  # half the pole's length
POLEMASS_LENGTH = MASSPOLE * LENGTH
FORCE_MAG = 10.0
TAU = 0.02  # seconds between state updates
THETA_THRESHOLD = 12 * 2 * math.pi / 360  # 12 degrees
X_THRESHOLD = 2.4
RESET_BOUND = 0.05  # each state variable starts uniform in [-0.05, 0.05]


class NumpyCartPole:
    """num_envs CartPoles stepped together. The state is float64 as Gymnasium
    keeps it; observations are float32. No time limit here: skinner applies
    max_episode_steps, and autoresets ended envs through reset(None, mask)."""

    single_observation_space = spaces.Box(-np.inf, np.inf, (4,), np.float32)
    single_action_space = spaces.Discrete(2)

    def __init__(self, num_envs):
        self.num_envs = num_envs
        self.state = np.zeros((num_envs, 4))  # columns: x, x_dot, theta, theta_dot
        self.rng = np.random.default_rng()
        self.rewards = np.ones(num_envs, np.float32)  # +1 every step, the last one too
        self.truncations = np.zeros(num_envs, bool)

    def reset(self, seed, mask=None):
        """Draws a fresh state for the rows in mask (all rows when None); seed
        None keeps the env's own random stream (skinner's autoreset does that)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        if mask is None:
            self.state[:] = self.rng.uniform(-RESET_BOUND, RESET_BOUND, self.state.shape)
        else:
            mask = np.asarray(mask, bool)
            self.state[mask] = self.rng.uniform(-RESET_BOUND, RESET_BOUND, (int(mask.sum()), 4))
        return self.state.astype(np.float32)

    def step(self, actions):
        x, x_dot, theta, theta_dot = self.state.T
        force = np.where(actions == 1, FORCE_MAG, -FORCE_MAG)
        costheta, sintheta = np.cos(theta), np.sin(theta)
        temp = (force + POLEMASS_LENGTH * theta_dot**2 * sintheta) / TOTAL_MASS
        thetaacc = (GRAVITY * sintheta - costheta * temp) / (
            LENGTH * (4.0 / 3.0 - MASSPOLE * costheta**2 / TOTAL_MASS))
        xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
        # Euler: positions move with the old velocities (Gymnasium's "euler" mode)
        self.state = np.stack([x + TAU * x_dot, x_dot + TAU * xacc,
                               theta + TAU * theta_dot, theta_dot + TAU * thetaacc], axis=1)
        x, theta = self.state[:, 0], self.state[:, 2]
        terminations = (np.abs(x) > X_THRESHOLD) | (np.abs(theta) > THETA_THRESHOLD)
        return self.state.astype(np.float32), self.rewards, terminations, self.truncations


def register():
    """Registers NumpyCartPole-v1 with skinner once per process (a second
    registration of an id is an error)."""
    if ENV_ID not in skinner.envs():
        skinner.register(ENV_ID, NumpyCartPole, max_episode_steps=500, reward_threshold=475)
    return ENV_ID


def preset_without_precision(path):
    """The preset at path as {"section.key": value}, without env.precision:
    that key belongs to the built-in CartPole, and a Python-defined env takes
    no env.* keys but num_envs (the trainer refuses keys nobody reads)."""
    parser = configparser.ConfigParser()
    if not parser.read(path):
        raise FileNotFoundError(path)
    return {f"{section}.{key}": value for section in parser.sections()
            for key, value in parser[section].items() if f"{section}.{key}" != "env.precision"}


def main():
    parser = argparse.ArgumentParser(description="trains skinner's PPO on a NumPy CartPole")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--total-steps", type=int, default=500_000)
    args = parser.parse_args()
    register()
    start = time.perf_counter()

    def progress(stats):
        if stats["update"] % 5:
            return
        print(f"update {stats['update']:4d}  steps {stats['steps']:7d}  "
              f"mean return {stats['mean_return']:6.1f}  {stats['sps'] / 1e3:6.1f} k steps/s")

    with tempfile.TemporaryDirectory() as tmp:
        run_dir = os.path.join(tmp, "run")
        # configs/cartpole.ini is the built-in CartPole's preset (16 envs, PPO);
        # a Python-defined env steps on one thread.
        config = preset_without_precision(CARTPOLE_PRESET)
        result = skinner.train(ENV_ID, config=config, run_dir=run_dir, callback=progress,
                               total_steps=args.total_steps, threads=1, seed=args.seed,
                               stop_when_solved=True)
        seconds = time.perf_counter() - start
        if result["solved"]:
            print(f"solved after {result['solved_at_steps']} steps, "
                  f"{result['solved_at_seconds']:.2f} s of training ({seconds:.2f} s wall)")
        else:
            print(f"not solved: mean return {result['final_mean_return']:.1f} after "
                  f"{result['total_steps']} steps")
        scores = skinner.evaluate(run_dir, episodes=20, greedy=True)
        print(f"greedy policy over {scores['episodes']} episodes: mean return "
              f"{scores['mean_return']:.1f} +- {scores['std_return']:.1f}")
    return 0 if result["solved"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
