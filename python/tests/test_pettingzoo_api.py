"""PettingZoo's own parallel_api_test (pettingzoo 1.27.0, in the test venv) on
skinner.parallel_env: the multi-agent built-ins (Connect Four with either observation,
Arena) and the Python-defined Relay and TakeTurns of test_multiagent.py. It checks what
docs/multiagent.md promises of the Parallel API: dicts keyed by the live agents, agents never
revived and all finished before `agents` is empty, the same space object on every call,
reset's seed and options. test_observations_inside_their_space checks what it does not: every
observation inside observation_space(agent).

The test samples each live agent's action from action_space(agent), masked only when the
observation is a dict with an "action_mask" (PettingZoo's classic games' form, which
parallel_env adopts for envs with masks). skinner refuses a forbidden action, so Connect Four
passes only with the mask in the observation: a random draw reaches a full column in some
games only, hence several seeds, and test_unmasked_draw_reaches_a_full_column shows that the
same seeds fail with the mask taken out of the observation."""

import numpy as np
import pytest

import skinner
from conftest import require_package
from test_multiagent import ARENA  # importing it registers Relay-v0 and TakeTurns-v0

SEEDS = range(6)  # env and sampling seeds; each runs two games (parallel_api_test's resets)
CONNECT_FOUR = [("ConnectFour-v0", {}), ("ConnectFour-v1", {})]
ENVS = CONNECT_FOUR + [("Arena-v0", ARENA)]


def run_api_test(env_id, config, seed):
    pettingzoo_test = require_package("pettingzoo.test")
    env = skinner.parallel_env(env_id, seed=seed, **config)
    env.action_space(env.possible_agents[0]).seed(seed)  # one space for every agent
    try:
        pettingzoo_test.parallel_api_test(env, num_cycles=1000)
    finally:
        env.close()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("env_id, config", ENVS)
def test_parallel_api_test(env_id, config, seed):
    run_api_test(env_id, config, seed)


@pytest.mark.parametrize("env_id", ["Relay-v0", "TakeTurns-v0"])
def test_parallel_api_test_python_envs(env_id):
    run_api_test(env_id, {}, 0)


@pytest.mark.parametrize("env_id, config", CONNECT_FOUR)
def test_unmasked_draw_reaches_a_full_column(env_id, config, monkeypatch):
    """The control: parallel_env's observations as they were before the mask moved into
    them (the plain array, the mask in infos only). Over the same seeds some game's unmasked
    draw picks a full column, which skinner refuses, so the test above passes because of the
    mask in the observation, not because its seeds never meet a full column."""
    monkeypatch.setattr(skinner.ParallelEnv, "_observe",
                        lambda self, observation, row, ended=False: observation)
    monkeypatch.setattr(skinner.ParallelEnv, "observation_space",
                        lambda self, agent: self.batch.single_observation_space)
    refused = []
    for seed in SEEDS:
        try:
            run_api_test(env_id, config, seed)
        except ValueError as error:
            refused.append((seed, str(error)))
    assert refused, f"no seed of {list(SEEDS)} drew a masked action: the control proves nothing"
    assert all("observation's \"action_mask\"" in message for _, message in refused), refused


@pytest.mark.parametrize("env_id, config", ENVS)
def test_observations_inside_their_space(env_id, config):
    """A game of random (masked) moves: each observation inside observation_space(agent),
    with masks PettingZoo's dict, an int8 mask viewing the batch's bool row (no copy), an
    ended agent's mask allowing nothing."""
    env = skinner.parallel_env(env_id, seed=3, **config)
    space = env.observation_space(env.possible_agents[0])
    masked = env.batch.spec_info["mask_size"] > 0
    assert masked == (env_id in dict(CONNECT_FOUR))
    rng = np.random.default_rng(3)
    obs, _ = env.reset()
    while env.agents:
        for agent, observation in obs.items():
            assert space.contains(observation), (agent, observation)
        actions = {}
        for agent in env.agents:
            if masked:
                mask = obs[agent]["action_mask"]
                assert mask.dtype == np.int8 and np.shares_memory(mask, env._masks)
                actions[agent] = int(rng.choice(np.flatnonzero(mask)))
            else:
                actions[agent] = int(rng.integers(env.action_space(agent).n))
        live = list(env.agents)
        obs, _, terminations, truncations, _ = env.step(actions)
        for agent in live:
            if masked and (terminations[agent] or truncations[agent]):
                assert not obs[agent]["action_mask"].any()
    for agent, observation in obs.items():
        assert space.contains(observation), (agent, observation)
    env.close()
