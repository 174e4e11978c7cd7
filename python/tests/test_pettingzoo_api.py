"""PettingZoo's own parallel_api_test (pettingzoo 1.27.0, in the test venv) on
skinner.parallel_env: the multi-agent built-ins (Connect Four with either observation,
Arena) and the Python-defined Relay and TakeTurns of test_multiagent.py. It checks what
docs/multiagent.md promises of the Parallel API: dicts keyed by the live agents, agents never
revived and all finished before `agents` is empty, observations inside observation_space(agent),
the same space object on every call, reset's seed and options.

The test samples each live agent's action from action_space(agent), masked only when the
observation is a dict with an "action_mask" (PettingZoo's classic games' form). skinner gives
the mask in infos["action_mask"] and refuses a forbidden action (docs/python.md), so once a
Connect Four column is full the test's unmasked draw can pick it and step() raises ValueError:
a real difference from PettingZoo's convention, kept visible here as a strict xfail (the action
spaces are seeded so that the draw reaches a full column), not hidden by a lucky seed."""

import pytest

import skinner
from conftest import require_package
from test_multiagent import ARENA  # importing it registers Relay-v0 and TakeTurns-v0

MASK_IN_INFOS = pytest.mark.xfail(
    strict=True, raises=ValueError,
    reason="the mask is in infos, which parallel_api_test does not read: its unmasked draw "
           "picks a full column, which skinner refuses")


@pytest.mark.parametrize("env_id, config, sample_seed", [
    pytest.param("ConnectFour-v0", {}, 3, marks=MASK_IN_INFOS),
    pytest.param("ConnectFour-v1", {}, 1, marks=MASK_IN_INFOS),
    ("Arena-v0", ARENA, 0), ("Relay-v0", {}, 0), ("TakeTurns-v0", {}, 0)])
def test_parallel_api_test(env_id, config, sample_seed):
    pettingzoo_test = require_package("pettingzoo.test")
    env = skinner.parallel_env(env_id, seed=4, **config)
    env.action_space(env.possible_agents[0]).seed(sample_seed)  # one space for every agent
    try:
        pettingzoo_test.parallel_api_test(env, num_cycles=1000)
    finally:
        env.close()
