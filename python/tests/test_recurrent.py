"""Recurrent policies from Python: Policy.act carries the memory (state) the
caller hands back, episode_start clears it, and the state and actions agree
with the same network rebuilt in PyTorch from state_dict (torch.nn.LSTM)."""

import numpy as np
import pytest

import skinner
from conftest import require_torch


@pytest.fixture(scope="module")
def solved_lstm(tmp_path_factory):
    """CartPole-P-v1's preset (an LSTM core) trained until solved."""
    run = tmp_path_factory.mktemp("cartpole-p")
    summary = skinner.train("CartPole-P-v1", run_dir=run, seed=1, threads=2,
                            stop_when_solved=True, force=True)
    assert summary["solved"], summary
    return skinner.load(run)


def episodes(policy, carry, n=8, seed=3):
    """Mean return of n greedy episodes; carry=False forgets the memory at
    every step (as if the policy had none)."""
    env = skinner.make("CartPole-P-v1", num_envs=n, seed=seed)
    obs, _ = env.reset(seed=seed)
    state, returns, done = None, np.zeros(n), np.zeros(n, bool)
    totals = np.zeros(n)
    start = np.ones(n, bool)
    while not done.all():
        actions, state = policy.act(obs, deterministic=True, state=state if carry else None,
                                    episode_start=start)
        obs, reward, terminated, truncated, _ = env.step(actions)
        totals += np.where(done, 0.0, reward)
        ended = terminated | truncated
        done |= ended
        start = ended
    env.close()
    return totals.mean()


def test_memory_is_what_solves_the_velocity_hidden_cartpole(solved_lstm):
    policy = solved_lstm
    assert policy.state_size == 2 * 64  # LSTM: h then c
    with_memory = episodes(policy, carry=True)
    without = episodes(policy, carry=False)
    assert with_memory >= 400, with_memory
    assert without < 200, without


def test_state_semantics_and_errors(solved_lstm, tmp_path):
    policy = solved_lstm
    obs = np.array([[0.01, 0.0, -0.02, 0.0], [0.03, 0.0, 0.01, 0.0]], np.float32)
    actions, state = policy.act(obs, deterministic=True)
    assert state.shape == (2, policy.state_size) and state.dtype == np.float32
    assert np.abs(state[:, :64]).max() <= 1.0 and np.abs(state).max() > 0
    # the caller's array is not changed; episode_start clears that row only
    before = state.copy()
    _, fresh = policy.act(obs, deterministic=True, state=state, episode_start=[True, False])
    np.testing.assert_array_equal(state, before)
    _, from_zero = policy.act(obs, deterministic=True)
    np.testing.assert_array_equal(fresh[0], from_zero[0])
    assert not np.array_equal(fresh[1], from_zero[1])
    # a single observation has a single memory
    action, one = policy.act(obs[0], deterministic=True)
    assert one.shape == (policy.state_size,)
    with pytest.raises(ValueError, match="state must have shape"):
        policy.act(obs, state=np.zeros((3, policy.state_size), np.float32))
    with pytest.raises(ValueError, match="episode_start"):
        policy.act(obs, state=state, episode_start=[True])
    bad = state.copy()
    bad[0, 0] = 2.0  # h is o * tanh(c): never outside [-1, 1]
    with pytest.raises(ValueError, match="state row 0"):
        policy.act(obs, state=bad)
    # a feed-forward policy takes no state
    run = tmp_path / "ff"
    skinner.train("CartPole-v1", run_dir=run, total_steps=2048, seed=1, threads=1)
    ff = skinner.load(run)
    assert ff.state_size == 0
    with pytest.raises(ValueError, match="feed-forward"):
        ff.act(obs, state=state)


def test_agrees_with_torch_lstm(tmp_path):
    torch = require_torch()
    run = tmp_path / "run"
    # raw observations (no normaliser) so that the torch net reads what skinner's reads
    skinner.train("CartPole-P-v1", config={"ppo.norm_obs": False}, run_dir=run,
                  total_steps=8192, seed=2, threads=1)
    policy = skinner.load(run)
    sd = {k: torch.from_numpy(v) for k, v in policy.state_dict().items()}
    encoder = torch.nn.Linear(4, 64)
    encoder.load_state_dict({"weight": sd["encoder.weight"], "bias": sd["encoder.bias"]})
    lstm = torch.nn.LSTM(64, 64)
    lstm.load_state_dict({k[len("core."):]: v for k, v in sd.items() if k.startswith("core.")})
    actor = torch.nn.Linear(64, 2)
    actor.load_state_dict({"weight": sd["actor.0.weight"], "bias": sd["actor.0.bias"]})
    rng = np.random.default_rng(0)
    B, steps = 5, 12
    state = None
    h = torch.zeros(1, B, 64)
    c = torch.zeros(1, B, 64)
    checked = 0
    for t in range(steps):
        obs = rng.normal(0.0, 0.5, (B, 4)).astype(np.float32)
        start = rng.random(B) < 0.2
        actions, state = policy.act(obs, deterministic=True, state=state, episode_start=start)
        keep = torch.from_numpy(~start).float().view(1, B, 1)
        with torch.no_grad():
            x = torch.tanh(encoder(torch.from_numpy(obs))).unsqueeze(0)
            out, (h, c) = lstm(x, (h * keep, c * keep))
            logits = actor(out[0])
        np.testing.assert_allclose(state[:, :64], h[0].numpy(), atol=2e-5)
        np.testing.assert_allclose(state[:, 64:], c[0].numpy(), atol=2e-5)
        margin = (logits[:, 0] - logits[:, 1]).abs().numpy()
        sure = margin > 1e-4  # rows where rounding cannot flip the argmax
        np.testing.assert_array_equal(actions[sure], logits.argmax(1).numpy()[sure])
        checked += int(sure.sum())
    assert checked > B * steps // 2
