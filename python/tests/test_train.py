"""skinner.train, skinner.load, skinner.evaluate: the C trainer driven from
Python with the GIL released, callbacks, Ctrl-C, and policies on NumPy."""

import json
import os
import signal
import struct
import threading
import time

import numpy as np
import pytest

import skinner
from cartpole_ref import NumpyCartPole
from conftest import REPO, require_torch

if "NumpyCartPole-v1" not in skinner.envs():
    skinner.register("NumpyCartPole-v1", NumpyCartPole, max_episode_steps=500,
                     reward_threshold=475.0)



def cartpole_preset():
    """configs/cartpole.ini's keys but the built-in env's own (env.precision)."""
    import configparser

    ini = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
    ini.read(REPO / "configs" / "cartpole.ini")
    return {f"{section}.{key}": value for section in ini.sections()
            for key, value in ini[section].items() if f"{section}.{key}" != "env.precision"}


def test_a_python_env_trains_to_its_threshold(tmp_path):
    calls = {"step": 0, "reset": 0}

    class Counted(NumpyCartPole):
        def step(self, actions):
            calls["step"] += 1
            return super().step(actions)

    skinner.register("CountedCartPole-v1", Counted, max_episode_steps=500, reward_threshold=475.0)
    result = skinner.train("CountedCartPole-v1", config=cartpole_preset(), seed=1, total_steps=400_000,
                           stop_when_solved=True, run_dir=tmp_path / "run")
    assert result["solved"], result
    assert result["final_mean_return"] >= 475
    # one Python call per batch step of the preset's 16 envs
    assert calls["step"] == result["total_steps"] // 16
    # evaluated like a built-in, from its checkpoint
    ev = skinner.evaluate(tmp_path / "run", episodes=10, greedy=True)
    assert ev["episodes"] == 10 and ev["mean_return"] > 400
    with pytest.raises(ValueError, match="cannot be resumed"):
        skinner.train("CountedCartPole-v1", resume=tmp_path / "run")
    with pytest.raises(ValueError, match="one thread"):
        skinner.train("CountedCartPole-v1", config=cartpole_preset(), threads=2, total_steps=1000)
    with pytest.raises(ValueError, match=r"train.slices = 4; expected 0 or 1"):
        skinner.train("CountedCartPole-v1", config={**cartpole_preset(), "train.slices": 4},
                      total_steps=1000)


def test_the_callback_sees_every_update_and_can_stop_the_run(tmp_path):
    seen = []

    def callback(stats):
        seen.append(stats)
        return stats["update"] < 3

    result = skinner.train("CartPole-v1", seed=2, total_steps=10**6, callback=callback,
                           run_dir=tmp_path / "run")
    assert [s["update"] for s in seen] == [1, 2, 3]
    assert result["interrupted"] and result["updates"] == 3
    assert result["total_steps"] == seen[-1]["steps"]
    assert {"mean_return", "policy_loss", "value_loss", "entropy", "sps"} <= set(seen[0])
    # stopped cleanly: the checkpoint is written and the run resumes from it
    assert (tmp_path / "run" / "policy.safetensors").is_file()
    resumed = skinner.train("CartPole-v1", resume=tmp_path / "run", total_steps=3 * 2048 + 2048)
    assert resumed["total_steps"] == 4 * 2048 and not resumed["interrupted"]


def test_an_exception_in_the_callback_is_raised():
    def callback(stats):
        raise ZeroDivisionError("callback failed")

    with pytest.raises(ZeroDivisionError, match="callback failed"):
        skinner.train("CartPole-v1", total_steps=100_000, callback=callback)


def test_the_gil_is_released_while_training():
    ticks = []
    stop = threading.Event()

    def other():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=other)
    thread.start()
    time.sleep(0.01)
    start = time.perf_counter()
    result = skinner.train("CartPole-v1", seed=3, total_steps=200_000, threads=1)
    end = time.perf_counter()
    stop.set()
    thread.join()
    during = [t for t in ticks if start < t < end]
    # the Python thread kept ticking through the run: without the GIL released
    # it would have had no tick inside it at all
    assert end - start > 0.1, result
    assert len(during) >= 0.25 * (end - start) / 0.001 / 2, (len(during), end - start)


def test_ctrl_c_stops_the_run_cleanly_then_raises(tmp_path):
    # Ctrl-C sent from the 3rd update's callback, not from a timer: a timer
    # fired before the run had started (or between runs) on a loaded machine
    steps_seen = []

    def interrupt_at_third_update(stats):
        steps_seen.append(stats["steps"])
        if len(steps_seen) == 3:
            os.kill(os.getpid(), signal.SIGINT)
        return True

    with pytest.raises(KeyboardInterrupt):
        skinner.train("CartPole-v1", total_steps=10**8, run_dir=tmp_path / "run", threads=1,
                      callback=interrupt_at_third_update)
    batch = steps_seen[0]
    # the run stopped after the update that saw the signal, and said so
    assert steps_seen == [batch, 2 * batch, 3 * batch]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["total_steps"] == 3 * batch
    assert (tmp_path / "run" / "policy.safetensors").is_file()
    # the checkpoint holds those 3 updates: the resumed run starts after them
    resumed = []
    result = skinner.train("CartPole-v1", resume=tmp_path / "run", total_steps=4 * batch,
                           callback=lambda stats: resumed.append(stats["steps"]))
    assert not result["interrupted"]
    assert resumed == [4 * batch]
    assert result["total_steps"] == 4 * batch


def test_bad_train_arguments(tmp_path):
    with pytest.raises(ValueError, match="ppo.nonsense"):
        skinner.train("CartPole-v1", config={"ppo.nonsense": 1}, total_steps=1000)
    with pytest.raises(ValueError, match="ppo.learning_rate"):
        skinner.train("CartPole-v1", config={"ppo": {"learning_rate": -1}}, total_steps=1000)
    # a ppo.* key given to DQN would be read and ignored (the preset sets ppo.*): refused by
    # name, from a dict or from the user's INI file, while the preset's own ppo.* stay quiet
    with pytest.raises(ValueError, match="ppo.ent_coef applies only with train.algo = ppo; "
                                         "this run's is dqn"):
        skinner.train("CartPole-v1", config={"train.algo": "dqn", "ppo.ent_coef": 0.1},
                      total_steps=1000)
    ini = tmp_path / "dqn.ini"
    ini.write_text("[train]\nalgo = dqn\n[ppo]\ngamma = 0.9\n")
    with pytest.raises(ValueError, match="ppo.gamma applies only with train.algo = ppo"):
        skinner.train("CartPole-v1", config=ini, total_steps=1000)
    ini.write_text("[train]\nalgo = dqn\n[dqn]\nlearning_starts = 0\n")
    assert skinner.train("CartPole-v1", config=ini, total_steps=160)["total_steps"] == 160
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("keep me")
    with pytest.raises(FileExistsError, match="not empty"):
        skinner.train("CartPole-v1", total_steps=1000, run_dir=tmp_path / "full")
    assert (tmp_path / "full" / "x").read_text() == "keep me"
    with pytest.raises(TypeError, match="callable"):
        skinner.train("CartPole-v1", total_steps=1000, callback=3)


def _safetensors(path):
    """The tensors of a safetensors file, read with the format's published
    layout (8-byte header length, JSON header, raw data), not with skinner."""
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        assert t["dtype"] == "F32" or not name.startswith(("actor", "critic"))
        if t["dtype"] == "F32":
            out[name] = np.frombuffer(data[8 + n + begin:8 + n + end], np.float32).reshape(t["shape"])
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run = tmp_path_factory.mktemp("cartpole") / "run"
    skinner.train("CartPole-v1", seed=1, total_steps=60_000, run_dir=run,
                  config={"ppo.norm_obs": False, "ppo.norm_reward": False})
    return run


def test_load_state_dict_matches_the_file(trained):
    policy = skinner.load(trained)
    assert policy.env_id == "CartPole-v1"
    sd = policy.state_dict()
    on_disk = _safetensors(trained / "policy.safetensors")
    assert set(sd) == {k for k in on_disk if k.startswith(("actor.", "critic."))}
    for name, value in sd.items():
        assert value.dtype == np.float32
        np.testing.assert_array_equal(value, on_disk[name])


def test_act_agrees_with_a_pytorch_network_built_from_the_state_dict(trained):
    torch = require_torch()
    policy = skinner.load(trained)
    sd = {k: torch.from_numpy(v) for k, v in policy.state_dict().items()}
    actor = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64),
                                torch.nn.Tanh(), torch.nn.Linear(64, 2))
    # torch's Sequential numbers its modules with the activations in between
    actor.load_state_dict({f"{2 * i}.{kind}": sd[f"actor.{i}.{kind}"]
                           for i in range(3) for kind in ("weight", "bias")})
    obs = np.random.default_rng(0).normal(0, 0.5, (512, 4)).astype(np.float32)
    with torch.no_grad():
        logits = actor(torch.from_numpy(obs)).numpy()
    greedy = policy.act(obs, deterministic=True)
    assert greedy.shape == (512,) and greedy.dtype == np.int32
    clear = np.abs(logits[:, 1] - logits[:, 0]) > 1e-4
    np.testing.assert_array_equal(greedy[clear], logits.argmax(1)[clear])
    # sampling follows the softmax: the share of 1s matches its mean probability
    p1 = 1 / (1 + np.exp(logits[:, 0] - logits[:, 1]))
    policy.seed(0)
    draws = np.stack([policy.act(obs) for _ in range(40)])
    assert abs(draws.mean() - p1.mean()) < 0.02
    # one observation gives one action
    assert policy.act(obs[0], deterministic=True) == greedy[0]


def test_act_rejects_bad_input(trained):
    policy = skinner.load(trained)
    with pytest.raises(ValueError, match=r"obs must have shape \(4,\)"):
        policy.act(np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="not one the policy can take"):
        policy.act(np.array([0, np.nan, 0, 0], np.float32))
    with pytest.raises(ValueError, match="no action masks"):
        policy.act(np.zeros(4, np.float32), action_mask=np.ones(2, bool))
    with pytest.raises(ValueError, match="corrupt"):
        skinner.load(trained / "config.ini")
    with pytest.raises(OSError):
        skinner.load(trained / "missing.safetensors")


@pytest.mark.parametrize("seed", [2**64, -1])
def test_seeds_out_of_range_are_refused_not_wrapped(trained, seed):
    message = rf"seed = {seed} is out of range"
    with pytest.raises(ValueError, match=message):
        skinner.load(trained).seed(seed)
    with pytest.raises(ValueError, match=message):
        skinner.evaluate(trained, episodes=1, seed=seed)


def test_evaluate_matches_the_cli_figures(trained):
    a = skinner.evaluate(trained, episodes=8, greedy=True, seed=3)
    b = skinner.evaluate(trained, episodes=8, greedy=True, seed=3)
    assert a == b and a["episodes"] == 8 and a["min_return"] <= a["mean_return"] <= a["max_return"]


class FailsLate(NumpyCartPole):
    calls = 0

    def step(self, actions):
        FailsLate.calls += 1
        if FailsLate.calls == 100:
            raise KeyError("lost the pole")
        return super().step(actions)


def test_an_env_exception_aborts_training_without_learning_from_it(tmp_path):
    """The env fails inside the first rollout (step 100 of 128): the trainer
    learns nothing from that rollout, writes no checkpoint of it, and the
    exception reaches the caller."""
    skinner.register("FailsLate-v1", FailsLate, max_episode_steps=500)
    updates = []
    with pytest.raises(KeyError, match="lost the pole"):
        skinner.train("FailsLate-v1", config=cartpole_preset(), total_steps=100_000,
                      run_dir=tmp_path / "run", callback=updates.append)
    assert updates == []
    assert not (tmp_path / "run" / "policy.safetensors").exists()
    rows = (tmp_path / "run" / "metrics.csv").read_text().strip().splitlines()
    assert len(rows) == 1  # the header only


def test_a_numpy_false_stops_the_run():
    result = skinner.train("CartPole-v1", total_steps=10**6, callback=lambda s: np.False_)
    assert result["interrupted"] and result["updates"] == 1


def test_a_policy_is_not_reloaded_under_an_act(trained):
    """act() converting a slow observation (its __array__ releases the GIL)
    keeps the policy: another thread's __init__ on it is refused, not a free
    of the network the act is about to run."""
    policy = skinner.load(trained)
    obs = np.random.default_rng(0).normal(0, 0.5, (8, 4)).astype(np.float32)
    expected = policy.act(obs, deterministic=True)
    converting, release = threading.Event(), threading.Event()
    results = []

    class SlowObs:
        def __array__(self, dtype=None, copy=None):
            converting.set()
            release.wait(10)
            return obs if dtype is None else obs.astype(dtype)

    thread = threading.Thread(
        target=lambda: results.append(policy.act(SlowObs(), deterministic=True)))
    thread.start()
    try:
        assert converting.wait(10)
        with pytest.raises(RuntimeError, match="another thread"):
            policy.__init__(str(trained / "policy.safetensors"))
    finally:
        release.set()
        thread.join(10)
    np.testing.assert_array_equal(results[0], expected)
    policy.__init__(str(trained / "policy.safetensors"))  # once no act runs, it reloads
    np.testing.assert_array_equal(policy.act(obs, deterministic=True), expected)


def test_one_policy_acted_on_from_several_threads(trained):
    policy = skinner.load(trained)
    obs = [np.random.default_rng(k).normal(0, 0.5, (256, 4)).astype(np.float32) for k in range(4)]
    expected = [policy.act(o, deterministic=True) for o in obs]
    failures = []

    def worker(k):
        for _ in range(100):
            if not np.array_equal(policy.act(obs[k], deterministic=True), expected[k]):
                failures.append(k)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_a_preset_of_several_files_layers_them_in_order(tmp_path):
    """MinAtar/Seaquest-v1's preset is "minatar minatar_seaquest": Python trains with the
    suite's file and the game's over it, as `skinner train` does, and config keys over both."""
    run = tmp_path / "seaquest"
    skinner.train("MinAtar/Seaquest-v1", total_steps=8192, run_dir=str(run), seed=1, threads=1)
    config = (run / "config.ini").read_text()
    assert "encoder = cnn" in config  # configs/minatar.ini
    assert "ent_coef = 0.02" in config  # configs/minatar_seaquest.ini, over the suite's 0.01
    run = tmp_path / "seaquest-over"
    skinner.train("MinAtar/Seaquest-v1", config={"ppo.ent_coef": 0.05}, total_steps=8192,
                  run_dir=str(run), seed=1, threads=1)
    assert "ent_coef = 0.05" in (run / "config.ini").read_text()


def test_resume_of_a_solved_run_trains_to_its_budget(tmp_path):
    # issue 52: the run's config.ini keeps stop_when_solved = true; the resume trains on unless
    # it asks for stop_when_solved again (the CLI's rule)
    first = skinner.train("CartPole-v1", run_dir=tmp_path / "run", stop_when_solved=True)
    assert first["solved"]
    batch = first["total_steps"] // first["updates"]
    budget = first["total_steps"] + 8 * batch
    resumed = skinner.train("CartPole-v1", resume=tmp_path / "run", total_steps=budget)
    assert resumed["total_steps"] == budget, (first["total_steps"], resumed["total_steps"])
    assert resumed["solved_at_steps"] == first["solved_at_steps"]
    again = skinner.train("CartPole-v1", resume=tmp_path / "run", total_steps=budget + 8 * batch,
                          stop_when_solved=True)
    assert again["total_steps"] == budget + batch  # the 100-episode mean still holds
