"""skinner.evaluate(..., epsilon=E) (issue 51): a DQN run evaluated epsilon-greedily, as
`skinner eval --epsilon E` does, on a short CartPole-v1 run of configs/cartpole_dqn.ini:
  - epsilon=0 is evaluate()'s greedy DQN, and both are the CLI's --epsilon 0 --json figures;
  - epsilon=1 never reads Q: its returns are a uniformly random policy's (NumPy's draws in
    skinner.make, within four standard errors), far from the greedy run's, and the CLI's
    --epsilon 1 for the same seed gives the same numbers (and so does 0.3);
  - the refusals: epsilon outside [0, 1], with a PPO run (the CLI's message), with opponent=
    (and the CLI's --opponent)."""

import json
import math
import subprocess

import numpy as np
import pytest

import skinner
from conftest import BUILD, REPO

EPISODES, SEED = 256, 3
FIGURES = ("episodes", "mean_return", "std_return", "min_return", "max_return", "mean_length")


def cli(*args):
    return subprocess.run([str(BUILD / "skinner"), *map(str, args)], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def dqn_run(tmp_path_factory):
    """30,000 steps of the DQN preset: greedy returns far above a random policy's ~22."""
    run = tmp_path_factory.mktemp("dqn") / "run"
    done = cli("train", "CartPole-v1", "--config", REPO / "configs" / "cartpole_dqn.ini",
               "--total-steps", 30000, "--seed", 1, "--run-dir", run, "--quiet")
    assert done.returncode == 0, done.stderr
    return run


def cli_figures(run, epsilon):
    done = cli("eval", "CartPole-v1", "--checkpoint", run, "--episodes", EPISODES, "--seed",
               SEED, "--epsilon", epsilon, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def same_figures(py, report):
    """Python's dict and the CLI's JSON (printed with %.6g) agree on every figure."""
    for name in FIGURES:
        assert py[name] == pytest.approx(report[name], rel=1e-5, abs=1e-9), name


def random_returns(per_env, num_envs=16):
    """Returns of uniformly random actions (NumPy's generator) in skinner.make's CartPole-v1:
    each env's first per_env episodes (same-step autoreset), as eval counts a quota per env."""
    rng = np.random.default_rng(51)
    returns = [[] for _ in range(num_envs)]
    with skinner.make("CartPole-v1", num_envs=num_envs, seed=11) as env:
        env.reset()
        running = np.zeros(num_envs)
        while min(map(len, returns)) < per_env:
            actions = rng.integers(0, 2, num_envs, dtype=np.int32)
            _, rewards, terminations, truncations, _ = env.step(actions)
            running += rewards
            for i in np.flatnonzero(np.asarray(terminations) | np.asarray(truncations)):
                returns[i].append(running[i])
                running[i] = 0.0
    return np.array([r for env_returns in returns for r in env_returns[:per_env]])


def test_epsilon_zero_is_the_greedy_evaluation(dqn_run):
    plain = skinner.evaluate(dqn_run, episodes=EPISODES, seed=SEED)
    zero = skinner.evaluate(dqn_run, episodes=EPISODES, seed=SEED, epsilon=0.0)
    assert zero == plain
    report = cli_figures(dqn_run, 0)
    assert report["greedy"] is True
    same_figures(zero, report)


def test_epsilon_one_is_uniform_play(dqn_run):
    greedy = skinner.evaluate(dqn_run, episodes=EPISODES, seed=SEED)
    uniform = skinner.evaluate(dqn_run, episodes=EPISODES, seed=SEED, epsilon=1.0)
    same_figures(uniform, cli_figures(dqn_run, 1))
    reference = random_returns(EPISODES // 16)
    se = math.sqrt((uniform["std_return"] ** 2 + reference.var()) / EPISODES)
    print(f"greedy {greedy['mean_return']:.2f}; epsilon 1 {uniform['mean_return']:.2f} +- "
          f"{uniform['std_return']:.2f}; NumPy's random {reference.mean():.2f} +- "
          f"{reference.std():.2f}")
    assert abs(uniform["mean_return"] - reference.mean()) <= 4 * se
    # else the check above could not tell epsilon's draws from the greedy action
    assert greedy["mean_return"] - reference.mean() > 20 * se


def test_epsilon_between_is_the_clis(dqn_run):
    between = skinner.evaluate(dqn_run, episodes=EPISODES, seed=SEED, epsilon=0.3)
    same_figures(between, cli_figures(dqn_run, 0.3))
    assert between != skinner.evaluate(dqn_run, episodes=EPISODES, seed=SEED)


@pytest.mark.parametrize("epsilon", [1.5, -0.25, float("nan")])
def test_epsilon_outside_zero_one_is_refused(dqn_run, epsilon):
    with pytest.raises(ValueError, match=rf"epsilon = {epsilon:g} \(expected a chance in \[0, 1\]\)"):
        skinner.evaluate(dqn_run, episodes=1, epsilon=epsilon)


def test_epsilon_with_another_learner_is_refused_as_the_cli_does(tmp_path):
    run = tmp_path / "ppo"
    skinner.train("CartPole-v1", total_steps=2048, seed=1, run_dir=run)
    with pytest.raises(ValueError, match="epsilon-greedy evaluation is for a DQN run") as error:
        skinner.evaluate(run, episodes=1, epsilon=0.05)
    done = cli("eval", "CartPole-v1", "--checkpoint", run, "--episodes", 1, "--epsilon", 0.05)
    assert done.returncode == 1 and str(error.value) in done.stderr, done.stderr
    assert skinner.evaluate(run, episodes=2, epsilon=0.0) == skinner.evaluate(run, episodes=2)


def test_epsilon_with_an_opponent_is_refused(dqn_run):
    with pytest.raises(ValueError, match=r"epsilon = 0.1 acts with a DQN checkpoint on its own, "
                       r"not against an opponent \(expected epsilon = 0 with opponent=\)"):
        skinner.evaluate(dqn_run, episodes=1, epsilon=0.1, opponent="random")
    done = cli("eval", "CartPole-v1", "--checkpoint", dqn_run, "--episodes", 1, "--epsilon", 0.1,
               "--opponent", "random")
    assert done.returncode == 2, done.stderr
    assert "--epsilon acts with a DQN checkpoint over --episodes, not with --opponent" in done.stderr
