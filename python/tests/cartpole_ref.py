"""Gymnasium's CartPole-v1 dynamics in NumPy float64, written from its
published equations (Barto, Sutton and Anderson 1983, as Gymnasium's
cartpole.py states them: Euler integration, tau 0.02, force 10, thresholds 12
degrees and 2.4), as an independent reference for skinner's observations."""

import math
import pathlib
import sys

import numpy as np


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


# The batched NumPy CartPole the tests register is the example's
# (examples/python/numpy_env.py): the tests train it, and test_examples runs
# the example itself.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"))
from numpy_env import NumpyCartPole  # noqa: E402
