"""Multi-agent envs from Python (docs/multiagent.md, "Python"): the batch of (env, agent)
rows, PettingZoo's Parallel API over one env (dicts against the batch they view), and a
Python-defined 2-agent env registered and trained like a single-agent one.

PettingZoo's own parallel_api_test runs on these envs in test_pettingzoo_api.py."""

import ast

import numpy as np
import pytest

import skinner

ARENA = dict(num_agents=16, width=20, height=20, food=20)


class Relay:
    """Two agents per env: agent `left` and `right` see [is_left, is_right, target] and
    score +1 when their action is the target, which flips every step. left finishes after
    2 steps, right after 4; left keeps saying terminated (and scoring) after it finished,
    which skinner must ignore (a finished row has no reward or flag until the reset)."""

    single_observation_space = skinner.spaces.Box(0.0, 1.0, (3,), np.float32)
    single_action_space = skinner.spaces.Discrete(2)

    def __init__(self, num_envs):
        self.n = num_envs
        self.t = np.zeros(num_envs, np.int64)
        self.target = np.zeros(num_envs, np.int64)

    def obs(self):
        obs = np.zeros((2 * self.n, 3), np.float32)
        obs[0::2, 0] = 1.0
        obs[1::2, 1] = 1.0
        obs[:, 2] = np.repeat(self.target, 2)
        return obs

    def reset(self, seed, mask=None):
        mask = np.ones(self.n, bool) if mask is None else mask
        assert mask.shape == (self.n,)  # one flag per env, not per row
        self.t[mask] = 0
        self.target[mask] = 0
        return self.obs()

    def step(self, actions):
        assert actions.shape == (2 * self.n,)
        rewards = (actions == np.repeat(self.target, 2)).astype(np.float32)
        self.t += 1
        self.target = 1 - self.target
        terminated = np.zeros(2 * self.n, bool)
        terminated[0::2] = self.t >= 2
        terminated[1::2] = self.t == 4
        return self.obs(), rewards, terminated, np.zeros(2 * self.n, bool)


class TakeTurns(Relay):
    """Relay where only one agent acts at a time (a fifth array, active): left on even
    steps, right on odd ones."""

    def step(self, actions):
        obs, rewards, terminated, truncated = super().step(actions)
        active = np.zeros(2 * self.n, bool)
        active[0::2] = self.t % 2 == 0
        active[1::2] = self.t % 2 == 1
        return obs, rewards, terminated, truncated, active


if "Relay-v0" not in skinner.envs():
    skinner.register("Relay-v0", Relay, max_episode_steps=50, num_agents=2,
                     agent_names=["left", "right"])
    skinner.register("TakeTurns-v0", TakeTurns, max_episode_steps=50, num_agents=2)


def test_arena_rows():
    with skinner.make("Arena-v0", num_envs=3, seed=5, **ARENA) as env:
        assert (env.num_envs, env.num_agents, env.num_rows) == (3, 16, 48)
        assert env.agent_names == [f"agent_{k}" for k in range(16)]
        obs, infos = env.reset()
        assert obs.shape == (48, 11, 11, 3) and obs.dtype == np.uint8
        assert env.observation_space.shape == (48, 11, 11, 3)
        assert infos["active"].all() and env.active.shape == (48,)
        # every view has its own head in the centre: the head channel (2) is set there
        assert (obs[:, 5, 5, 2] == 1).all()
        ends = 0
        for _ in range(60):
            obs, rewards, terminations, truncations, infos = env.step(
                np.random.default_rng(0).integers(0, 4, 48))
            ends += int(terminations.sum())
            assert env.active.all()  # snakes are reborn at once: every row acts
            for row in np.flatnonzero(terminations):
                assert rewards[row] == -1.0
                assert infos["episode"]["r"][row] <= infos["episode"]["l"][row]
        assert ends > 0


def test_bench_counts_agents():
    result = skinner.bench("Arena-v0", num_envs=2, seconds=0.1, **ARENA)
    assert result["num_agents"] == 16
    assert result["agent_steps_per_second"] == pytest.approx(16 * result["steps_per_second"])
    assert skinner.bench("CartPole-v1", num_envs=8, seconds=0.05)["num_agents"] == 1


def test_parallel_dicts_view_the_batch():
    """Without copy=True the dict's observations are rows of skinner's buffer (no copy):
    a view kept from one step shows the next step's observation, as the batch's do."""
    env = skinner.parallel_env("Arena-v0", seed=11, **ARENA)
    batch = env.batch
    obs, _ = env.reset()
    assert obs["agent_0"].base is obs["agent_1"].base  # one buffer, one row each
    rows = {agent: row for row, agent in enumerate(env.possible_agents)}
    rng = np.random.default_rng(1)
    seen_end = False
    for _ in range(100):
        if not env.agents:
            break
        actions = {agent: int(rng.integers(0, 4)) for agent in env.agents}
        before = list(env.agents)
        kept = {agent: obs[agent] for agent in before}
        obs, rewards, terminations, truncations, infos = env.step(actions)
        for agent, action in actions.items():  # the batch's action rows are the dict's
            assert batch.actions[rows[agent]] == action
        for agent in before:
            if terminations[agent] or truncations[agent]:
                seen_end = True
                assert "episode" in infos[agent] and agent not in env.agents
                continue
            assert agent in env.agents
            assert np.shares_memory(kept[agent], obs[agent])
            assert np.array_equal(kept[agent], obs[agent])
    assert seen_end
    env.close()


def test_parallel_dicts_equal_the_batch_arrays():
    """The dict API against the batch it steps, value by value: the same env stepped
    through ParallelEnv and, with the same seed and actions, through a VecEnv of one env."""
    env = skinner.parallel_env("Arena-v0", seed=21, copy=True, **ARENA)
    batch = skinner.make("Arena-v0", num_envs=1, seed=21, copy=True, **ARENA)
    obs, _ = env.reset()
    batch_obs, _ = batch.reset()
    for agent, row in zip(env.possible_agents, range(16)):
        assert np.array_equal(obs[agent], batch_obs[row])
    rng = np.random.default_rng(2)
    for _ in range(40):
        if not env.agents:
            break
        full = rng.integers(0, 4, 16).astype(np.int32)
        live = set(env.agents)
        # the dict view gives done agents the first allowed action (0): do the same
        full[[row for row, agent in enumerate(env.possible_agents) if agent not in live]] = 0
        obs, rewards, terminations, truncations, infos = env.step(
            {agent: int(full[row]) for row, agent in enumerate(env.possible_agents)
             if agent in live})
        b_obs, b_rewards, b_term, b_trunc, b_infos = batch.step(full)
        for row, agent in enumerate(env.possible_agents):
            if agent not in live:
                assert agent not in obs
                continue
            ended = b_term[row] or b_trunc[row]
            expected = b_infos["final_obs"][row] if ended else b_obs[row]
            assert np.array_equal(obs[agent], expected)
            assert rewards[agent] == float(b_rewards[row])
            assert terminations[agent] == bool(b_term[row])
            assert truncations[agent] == bool(b_trunc[row])
            if ended:
                assert infos[agent]["episode"]["r"] == float(b_infos["episode"]["r"][row])
                assert infos[agent]["episode"]["l"] == float(b_infos["episode"]["l"][row])
    env.close()
    batch.close()


def test_done_agents_take_no_actions():
    env = skinner.parallel_env("Relay-v0", seed=1)
    env.reset()
    env.step({"left": 0, "right": 0})
    env.step({"left": 1, "right": 1})  # left ends here
    assert env.agents == ["right"]
    with pytest.raises(ValueError, match="'left' is done"):
        env.step({"left": 0, "right": 0})
    with pytest.raises(KeyError, match="not an agent"):
        env.action_space("middle")
    env.close()


def test_python_env_rows_masks_and_logs():
    """Relay's rows by hand: the target is 0, 1, 0, 1; acting on it scores 1 a step. left
    ends at step 2 (return 2, length 2) and is inactive, with no reward or flag (though
    Relay still reports both), until right ends at step 4 and the env resets."""
    env = skinner.make("Relay-v0", num_envs=3, seed=1)
    assert (env.num_agents, env.num_rows, env.agent_names) == (2, 6, ["left", "right"])
    obs, infos = env.reset()
    assert obs.shape == (6, 3) and infos["active"].all()
    expected_active = [[1, 1], [0, 1], [0, 1], [1, 1]]
    for t in range(4):
        target = t % 2
        obs, rewards, terminations, truncations, infos = env.step(np.full(6, target))
        left, right = slice(0, 6, 2), slice(1, 6, 2)
        assert (rewards[right] == 1.0).all()
        assert (rewards[left] == (1.0 if t < 2 else 0.0)).all()
        assert (terminations[left] == (t == 1)).all()
        assert (terminations[right] == (t == 3)).all()
        assert not truncations.any()
        assert (env.active.reshape(3, 2) == expected_active[t]).all()
        if t == 1:
            assert (infos["episode"]["r"][left] == 2.0).all()
            assert (infos["episode"]["l"][left] == 2.0).all()
        if t == 3:
            assert (infos["episode"]["r"][right] == 4.0).all()
            assert (infos["episode"]["l"][right] == 4.0).all()
            assert (obs[:, 2] == 0.0).all()  # reset: the target is 0 again
    env.close()


def test_python_env_active_from_step():
    env = skinner.make("TakeTurns-v0", num_envs=2, seed=1)
    env.reset()
    _, _, _, _, infos = env.step(np.zeros(4, np.int32))  # t = 1: right's turn
    assert list(infos["active"]) == [False, True, False, True]
    env.step(np.zeros(4, np.int32))  # t = 2: left ends
    assert list(env.active) == [False, False, False, False]
    env.close()


def test_python_env_trains():
    """Relay's best play scores 2 (left) and 4 (right), a mean return of 3; random play
    half that. One shared policy reads the role from the observation."""
    summary = skinner.train("Relay-v0", total_steps=40960, seed=1, threads=1,
                            config={"ppo.horizon": 64, "env.num_envs": 8})
    assert summary["total_steps"] == 40960  # 40 updates of 8 envs x 2 agents x 64
    assert summary["final_mean_return"] > 2.7, summary


def test_per_role_from_python(tmp_path):
    """policy.per_role through skinner.train and skinner.load: the checkpoint's tensors are
    the agents' (left.*, right.*), and the loaded policy acts on whole envs only (row r is
    agent r % 2)."""
    run = tmp_path / "run"
    skinner.train("Relay-v0", total_steps=2048, seed=1, threads=1, run_dir=str(run),
                  config={"ppo.horizon": 64, "env.num_envs": 8, "policy.per_role": True})
    policy = skinner.load(run)
    assert {name.split(".")[0] for name in policy.state_dict()} == {"left", "right"}
    obs = np.zeros((4, 3), np.float32)
    assert policy.act(obs).shape == (4,)
    with pytest.raises(Exception, match="a multiple of 2"):
        policy.act(obs[:3])


def test_evaluate_against_opponents(tmp_path):
    """skinner.evaluate(opponent=...) (issue 52 ask 2): a Connect Four policy against
    random, alpha-beta and itself, the first move alternating, each rate's interval
    against scipy's Wilson interval; unknown opponents refused naming the env's."""
    from scipy.stats import binomtest

    run = tmp_path / "c4"
    skinner.train("ConnectFour-v1", total_steps=65536, seed=1, run_dir=str(run), threads=1,
                  config={"env.num_envs": 64, "ppo.horizon": 128, "ppo.num_minibatches": 4})
    vs_random = skinner.evaluate(run, episodes=200, greedy=True, seed=1, opponent="random")
    assert vs_random["games"] == 200
    assert vs_random["wins"] + vs_random["draws"] + vs_random["losses"] == 200
    assert vs_random["wins_rate"] > 0.7, vs_random
    assert vs_random["by_role"]["first"]["games"] == 100
    assert vs_random["by_role"]["second"]["games"] == 100
    for name in ("wins", "draws", "losses"):
        want = binomtest(vs_random[name], 200).proportion_ci(0.95, method="wilson")
        assert vs_random[name + "_ci95"] == pytest.approx((want.low, want.high), abs=1e-9)
    vs_search = skinner.evaluate(run, episodes=100, seed=1, opponent="alphabeta:4")
    assert vs_search["losses_rate"] > vs_search["wins_rate"], vs_search
    itself = skinner.evaluate(run, episodes=200, seed=2, opponent=run)
    assert abs(itself["wins_rate"] - itself["losses_rate"]) < 0.2, itself
    with pytest.raises(ValueError, match="unknown opponent 'minimax' for ConnectFour-v1 "
                       r"\(expected random, heuristic, alphabeta:DEPTH \(1..10\)"):
        skinner.evaluate(run, episodes=10, opponent="minimax")


def test_docs_opponent_block(tmp_path, monkeypatch, capsys):
    """docs/multiagent.md's "Against an opponent": its first command trains runs/c4 (run
    as printed, by the build's skinner), then its Python block runs as printed."""
    import shlex
    import subprocess

    from conftest import BUILD, REPO

    text = (REPO / "docs" / "multiagent.md").read_text()
    section = text.split("\n## Against an opponent\n", 1)[1].split("\n## ", 1)[0]
    train = next(line for line in section.splitlines() if line.startswith("skinner train"))
    blocks = [block.split("\n", 1)[1] for block in section.split("```")[1::2]
              if block.startswith("python\n")]
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SKINNER_CONFIG_DIR", str(REPO / "configs"))
    subprocess.run([str(BUILD / "skinner")] + shlex.split(train)[1:], check=True,
                   capture_output=True)
    exec(compile(blocks[0], "docs/multiagent.md", "exec"), {})
    rate, low, high, first = capsys.readouterr().out.replace("(", "").replace(")", "") \
        .replace(",", " ").split()
    assert float(low) <= float(rate) <= float(high) and int(first) == 50


def test_docs_python_blocks(capsys):
    """docs/multiagent.md's Python section, every block run as printed."""
    from conftest import REPO

    text = (REPO / "docs" / "multiagent.md").read_text()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = [block.split("\n", 1)[1] for block in section.split("```")[1::2]
              if block.startswith("python\n")]
    assert len(blocks) == 3
    for block in blocks:
        exec(compile(block, "docs/multiagent.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("16 ")
    assert out[1] == "every snake has died once; batch rows: 16"
    assert out[2].startswith("Dict(") and "'action_mask': Box(0, 1, (7,), int8)" in out[2]
    assert sorted(ast.literal_eval(out[3]).values()) in ([-1.0, 1.0], [0.0, 0.0])
    assert float(out[4]) > 2.7
