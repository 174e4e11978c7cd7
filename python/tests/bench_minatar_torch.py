"""bench/minatar_torch_ppo.py, the PyTorch PPO skinner's training speed is compared with
(issue 32, ask 5). ctest runs this file alone (test minatar_torch_ppo); its name keeps it out
of the python_module run, which collects test_*.py.

- A short run on MinAtar/Breakout-v1 completes, writes its CSV and prints where its time went.
- Its network is skinner's for the same config: the same parameter count as the checkpoint
  of a `skinner.train` run, the same tensor names and shapes, and, loaded with that
  checkpoint's weights, the greedy actions skinner's policy takes (a flatten in another
  order, another activation or a missing layer would change them).
- Its GAE is skinner's sk_gae, transcribed env by env: terminal, truncated and both."""

import csv
import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import skinner
from conftest import BUILD, REPO, require_torch

SCRIPT = REPO / "bench" / "minatar_torch_ppo.py"
ENV = "MinAtar/Breakout-v1"
CSV_COLUMNS = ["update", "steps", "wall_seconds", "sps", "mean_return", "mean_length", "episodes"]
SPLIT_PARTS = ("env stepping", "acting", "update", "other")


def load_bench():
    spec = importlib.util.spec_from_file_location("minatar_torch_ppo", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_short_run_writes_csv_and_time_split(tmp_path):
    require_torch()
    out = tmp_path / "torch.csv"
    # 16 envs x 64 steps: 4 updates of 1,024 steps
    command = [sys.executable, str(SCRIPT), "--env", ENV, "--total-steps", "4096", "--seed", "3",
               "--threads", "1", "--set", "policy.encoder=cnn", "--set", "env.num_envs=16",
               "--set", "ppo.horizon=64", "--out", str(out), "--skinner", str(BUILD / "skinner")]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    with open(out) as f:
        rows = list(csv.reader(f))
    assert rows[0] == CSV_COLUMNS
    table = [dict(zip(CSV_COLUMNS, map(float, row))) for row in rows[1:]]
    assert [r["update"] for r in table] == [1, 2, 3, 4]
    assert [r["steps"] for r in table] == [1024, 2048, 3072, 4096]
    walls = [r["wall_seconds"] for r in table]
    assert all(0 < a < b for a, b in zip(walls, walls[1:])), walls
    # a random Breakout paddle loses a ball within ~10 steps: 16 envs end episodes every update
    assert all(r["episodes"] > 0 and np.isfinite(r["mean_return"]) for r in table)
    assert all(r["mean_length"] >= 1 for r in table)

    lines = run.stdout.splitlines()
    total = [l for l in lines if l.startswith("4096 steps in ")]
    assert total, run.stdout
    total_seconds = float(total[0].split(" steps in ")[1].split(" s")[0])
    split = {}
    for part in SPLIT_PARTS:
        line = [l for l in lines if l.startswith("  " + part)]
        assert len(line) == 1, f"no time-split line for {part!r} in:\n{run.stdout}"
        fields = line[0].split()
        split[part] = (float(fields[-3]), float(fields[-1].rstrip("%")))
    assert all(seconds >= 0 for seconds, _ in split.values())
    assert sum(s for s, _ in split.values()) == pytest.approx(total_seconds, abs=0.05)
    assert sum(p for _, p in split.values()) == pytest.approx(100.0, abs=0.5)
    # every part did happen: stepping, acting and the update each took time
    assert all(split[p][0] > 0 for p in ("env stepping", "acting", "update"))


CONFIGS = {
    "cnn defaults": ["policy.encoder=cnn"],
    "cnn padded, strided, relu": ["policy.encoder=cnn", "policy.cnn_channels=8,16,4",
                                  "policy.cnn_kernels=3,3,2", "policy.cnn_strides=1,2,1",
                                  "policy.cnn_padding=1,0,0", "policy.activation=relu",
                                  "policy.hidden=32", "policy.layers=1"],
    "mlp encoder": ["policy.encoder=mlp", "policy.hidden=48", "policy.layers=3"],
    # a shared dense layer after the flatten (the Nature/CleanRL Atari network's), one layer per net
    "cnn dense": ["policy.encoder=cnn", "policy.cnn_channels=16", "policy.cnn_kernels=3",
                  "policy.cnn_strides=1", "policy.cnn_padding=0", "policy.cnn_dense=64",
                  "policy.layers=1"],
}


@pytest.mark.parametrize("name", CONFIGS)
def test_network_is_skinners(name, tmp_path):
    torch = require_torch()
    bench = load_bench()
    overrides = CONFIGS[name]
    args = bench.parse_args(["--env", ENV, "--skinner", str(BUILD / "skinner")] +
                            [a for o in overrides for a in ("--set", o)])
    settings = bench.Settings(bench.resolved_config(args))
    env = skinner.make(ENV, num_envs=1, seed=5, **settings.env_keys)
    agent = bench.build_agent(torch, settings.policy, env.single_observation_space.shape,
                              int(env.single_action_space.n))

    # skinner's network for the same config: the checkpoint of a run of one update at learning
    # rate 0, so the weights are its initialisation (zero biases: trained ones soon favour one
    # action in every row, and the comparison below would see nothing)
    config = dict(o.split("=", 1) for o in overrides)
    config["ppo.learning_rate"] = "0"
    skinner.train(ENV, config=config, run_dir=tmp_path / "run", seed=1, threads=1,
                  total_steps=1, force=True)
    policy = skinner.load(tmp_path / "run")
    state = policy.state_dict()
    ours = agent.state_dict()
    assert sum(v.size for v in state.values()) == sum(p.numel() for p in agent.parameters())
    assert sorted(state) == sorted(ours)
    for key, value in state.items():  # checkpoints keep a conv weight 2-d: (out, in*kh*kw)
        assert value.size == ours[key].numel(), key
        assert value.shape[0] == ours[key].shape[0], key

    agent.load_state_dict({k: torch.from_numpy(v.copy()).view(ours[k].shape) for k, v in state.items()})
    # random 0/1 images, denser than a game's frames (whose few objects leave most rows with
    # the same greedy action): the rows' choices differ, so a wrong net would show
    obs = (np.random.default_rng(5).random((256,) + env.single_observation_space.shape) < 0.2)
    obs = obs.astype(np.uint8)
    env.close()
    with torch.no_grad():
        logits, _ = agent(torch.from_numpy(obs))
    greedy = np.asarray(policy.act(obs.reshape(256, -1), deterministic=True))  # flat rows
    # near-ties aside (fp32 sums in another order), the same argmax
    top2 = torch.topk(logits, 2).values
    clear = (top2[:, 0] - top2[:, 1] > 1e-4).numpy()
    assert clear.sum() >= 128, "too few rows with a clear greedy action to compare"
    assert len(set(greedy[clear].tolist())) >= 2, "every row picks one action: nothing is compared"
    np.testing.assert_array_equal(logits.argmax(1).numpy()[clear], greedy[clear])


def test_gae_is_skinners():
    """gae() over all envs at once against sk_gae (src/train/ppo.c) transcribed env by env:
    a terminal step has no value after it, a truncated one the bootstrap value (or none with
    ppo.bootstrap_truncated = false), and both cut the trace."""
    torch = require_torch()
    bench = load_bench()
    horizon, num_envs, gamma, lam = 16, 6, 0.9, 0.8
    rng = np.random.default_rng(7)
    rewards, values, bootstrap = (rng.normal(size=(horizon, num_envs)).astype(np.float32)
                                  for _ in range(3))
    next_value = rng.normal(size=num_envs).astype(np.float32)
    terminated = rng.random((horizon, num_envs)) < 0.15
    truncated = rng.random((horizon, num_envs)) < 0.15  # some steps both, as sk_gae allows

    for bootstrap_truncated in (True, False):
        expected = np.zeros((horizon, num_envs))
        for i in range(num_envs):
            last = 0.0
            for t in reversed(range(horizon)):
                following = next_value[i] if t == horizon - 1 else values[t + 1, i]
                if terminated[t, i]:
                    last = rewards[t, i] - values[t, i]
                elif truncated[t, i]:
                    cut = gamma * bootstrap[t, i] if bootstrap_truncated else 0.0
                    last = rewards[t, i] + cut - values[t, i]
                else:
                    last = rewards[t, i] + gamma * following - values[t, i] + gamma * lam * last
                expected[t, i] = last

        class Settings:
            pass

        s = Settings()
        s.horizon, s.gamma, s.gae_lambda = horizon, gamma, lam
        s.bootstrap_truncated = bootstrap_truncated
        got = bench.gae(s, *(torch.from_numpy(x) for x in (rewards, values, next_value,
                                                            terminated, truncated, bootstrap)))
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)
