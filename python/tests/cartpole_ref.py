"""Gymnasium's CartPole-v1 dynamics in NumPy float64, written from its
published equations (Barto, Sutton and Anderson 1983, as Gymnasium's
cartpole.py states them: Euler integration, tau 0.02, force 10, thresholds 12
degrees and 2.4), as an independent reference for skinner's observations."""

import math

import numpy as np

import skinner

GRAVITY, MASSCART, MASSPOLE, LENGTH, FORCE_MAG, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
TOTAL_MASS = MASSPOLE + MASSCART
POLEMASS_LENGTH = MASSPOLE * LENGTH
THETA_LIMIT = 12 * 2 * math.pi / 360
X_LIMIT = 2.4


def step(state, action):
    """One env: (x, x_dot, theta, theta_dot) float64 -> (next state, terminated)."""
    x, x_dot, theta, theta_dot = state
    force = FORCE_MAG if action == 1 else -FORCE_MAG
    costheta, sintheta = math.cos(theta), math.sin(theta)
    temp = (force + POLEMASS_LENGTH * theta_dot**2 * sintheta) / TOTAL_MASS
    thetaacc = (GRAVITY * sintheta - costheta * temp) / (
        LENGTH * (4.0 / 3.0 - MASSPOLE * costheta**2 / TOTAL_MASS))
    xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    x = x + TAU * x_dot
    x_dot = x_dot + TAU * xacc
    theta = theta + TAU * theta_dot
    theta_dot = theta_dot + TAU * thetaacc
    nxt = np.array([x, x_dot, theta, theta_dot])
    terminated = x < -X_LIMIT or x > X_LIMIT or theta < -THETA_LIMIT or theta > THETA_LIMIT
    return nxt, terminated


class NumpyCartPole:
    """A batched CartPole written in NumPy, registered with skinner.register in
    the tests: the same equations over a whole batch at once."""

    single_observation_space = skinner.spaces.Box(-np.inf, np.inf, (4,), np.float32)
    single_action_space = skinner.spaces.Discrete(2)

    def __init__(self, num_envs):
        self.n = num_envs
        self.state = np.zeros((num_envs, 4))
        self.rng = np.random.default_rng(0)
        self.reset_calls = []

    def reset(self, seed, mask=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        rows = np.ones(self.n, bool) if mask is None else np.asarray(mask, bool)
        self.reset_calls.append((seed, rows.copy()))
        self.state[rows] = self.rng.uniform(-0.05, 0.05, (int(rows.sum()), 4))
        return self.state.astype(np.float32)

    def step(self, actions):
        x, x_dot, theta, theta_dot = self.state.T
        force = np.where(actions == 1, FORCE_MAG, -FORCE_MAG)
        costheta, sintheta = np.cos(theta), np.sin(theta)
        temp = (force + POLEMASS_LENGTH * theta_dot**2 * sintheta) / TOTAL_MASS
        thetaacc = (GRAVITY * sintheta - costheta * temp) / (
            LENGTH * (4.0 / 3.0 - MASSPOLE * costheta**2 / TOTAL_MASS))
        xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
        self.state = np.stack([x + TAU * x_dot, x_dot + TAU * xacc, theta + TAU * theta_dot,
                               theta_dot + TAU * thetaacc], axis=1)
        x, theta = self.state[:, 0], self.state[:, 2]
        terminated = (np.abs(x) > X_LIMIT) | (np.abs(theta) > THETA_LIMIT)
        return (self.state.astype(np.float32), np.ones(self.n, np.float32), terminated,
                np.zeros(self.n, bool))
