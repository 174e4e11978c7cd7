#!/usr/bin/env python3
"""Eval and export of off-policy runs (issue 51 ask 1): a short SAC run on Pendulum-v1 and a
short DQN run on CartPole-v1, each checked against a NumPy re-implementation of its learner's
acting rule read from the checkpoint's safetensors weights alone (not through skinner):
  - SAC: relu layers sac.actor.*, then tanh(sac.actor.mean) scaled into the bounds [-2, 2]
    (Gymnasium's Pendulum-v1 max_torque), CleanRL's deterministic action;
  - DQN: the Q network (actor.*, relu) and the argmax of its Q values.
Checked with that reference:
  1. skinner.load(run).act(obs) on a batch of observations (within 1e-5; DQN: equal);
  2. `skinner eval ENV --checkpoint RUN --episodes N --seed S --json` and Python's
     skinner.evaluate give the return of the reference acting in skinner.make(ENV, num_envs=N,
     seed=S), each env's first episode (eval's seeding), and say greedy;
  3. the ONNX model of `skinner export` passes onnx's checker and under ONNX Runtime gives the
     reference's action (and DQN's Q values as logits_0), and has no "value" output (the
     critics are no state value); DQN's --epsilon (check_epsilon);
  4. the C header of `skinner export`, compiled with cc, gives the same actions.

usage: test_offpolicy_eval.py BUILD_DIR   (run by the test venv's Python, the module on
PYTHONPATH). Exit 0 when all hold, 1 naming every miss, 77 when onnx or onnxruntime is missing
(CI=true: 1)."""
import json
import os
import struct
import subprocess
import sys
import shutil
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skinner_proc  # noqa: E402
from skinner_proc import check  # noqa: E402

TOL = 1e-5
EPISODES, SEED = 4, 3
RUNS = {
    # name: (env, steps, flags); relu and 32 wide for DQN so that the reference knows its net
    "sac": ("Pendulum-v1", 600, ["--train.algo", "sac", "--env.num_envs", "1",
                                 "--sac.learning_starts", "300", "--sac.hidden", "64"]),
    "dqn": ("CartPole-v1", 30000, ["--train.algo", "dqn", "--env.num_envs", "4",
                                  "--dqn.learning_starts", "1000", "--replay.size", "2000",
                                  "--policy.hidden", "32", "--policy.layers", "2",
                                  "--policy.activation", "relu"]),
}


def read_safetensors(path):
    """{name: float32 array} of a safetensors file's F32 tensors, by its own header."""
    with open(path, "rb") as f:
        data = f.read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        lo, hi = info["data_offsets"]
        out[name] = np.frombuffer(data[8 + size + lo:8 + size + hi], dtype="<f4").reshape(info["shape"])
    return out


def relu_mlp(x, layers):
    """x (B, in) through [(W (out, in), b)], ReLU between layers, none after the last."""
    h = x.astype(np.float64)
    for k, (w, b) in enumerate(layers):
        h = h @ w.astype(np.float64).T + b.astype(np.float64)
        if k < len(layers) - 1:
            h = np.maximum(h, 0.0)
    return h


def sac_reference(weights):
    """CleanRL's deterministic SAC action from the checkpoint's sac.actor.* (saved flat)."""
    layers, k, width = [], 0, 3  # Pendulum-v1's observation: cos, sin, angular velocity
    while f"sac.actor.{k}.weight" in weights:
        b = weights[f"sac.actor.{k}.bias"]
        layers.append((weights[f"sac.actor.{k}.weight"].reshape(len(b), width), b))
        width, k = len(b), k + 1
    mb = weights["sac.actor.mean.bias"]
    layers.append((weights["sac.actor.mean.weight"].reshape(len(mb), width), mb))
    low, high = -2.0, 2.0
    return lambda obs: np.tanh(relu_mlp(obs, layers)) * (high - low) / 2 + (high + low) / 2


def dqn_q(weights):
    layers, k = [], 0
    while f"actor.{k}.weight" in weights:
        layers.append((weights[f"actor.{k}.weight"], weights[f"actor.{k}.bias"]))
        k += 1
    return lambda obs: relu_mlp(obs, layers)


def reference_returns(skinner, env_id, act, discrete):
    """Each env's first episode's return, the reference acting, as eval seeds its envs."""
    returns = np.zeros(EPISODES)
    done = np.zeros(EPISODES, bool)
    with skinner.make(env_id, num_envs=EPISODES, seed=SEED) as env:
        obs, _ = env.reset()
        while not done.all():
            action = act(np.array(obs, np.float32))
            action = action.astype(np.int32) if discrete else action.astype(np.float32)
            obs, rewards, terminations, truncations, _ = env.step(action)
            returns += np.where(done, 0.0, rewards)
            done |= np.asarray(terminations, bool) | np.asarray(truncations, bool)
    return returns


def check_epsilon(skinner, cli, run, root, q):
    """`skinner eval --epsilon E` on the DQN run: its trace's actions, replayed in skinner.make
    from the same seed, give the trace's returns, and differ from the reference's argmax at
    about E / 2 of the steps (a uniform pick of CartPole's 2 actions is the greedy one half the
    time); without the exploration they would never differ."""
    episodes, epsilon = 32, 0.3
    trace = os.path.join(root, "epsilon.jsonl")
    done = skinner_proc.run([cli, "eval", "CartPole-v1", "--checkpoint", run, "--episodes", str(episodes),
                             "--seed", str(SEED), "--epsilon", str(epsilon), "--trace", trace], timeout=300)
    check(done.returncode == 0, f"dqn: skinner eval --epsilon exits 0 ({done.stderr.strip()[-300:]})")
    if done.returncode != 0:
        return
    actions, returns = {}, {}
    with open(trace) as f:
        for line in f:
            row = json.loads(line)
            if row.get("end"):
                returns[row["env"]] = row["return"]
            else:
                actions[(row["env"], row["step"])] = row["action"][0]
    replayed, steps, differ = np.zeros(episodes), 0, 0
    finished = np.zeros(episodes, bool)
    with skinner.make("CartPole-v1", num_envs=episodes, seed=SEED) as env:
        obs, _ = env.reset()
        for t in range(500):
            greedy = np.argmax(q(np.array(obs, np.float32)), axis=1)
            chosen = np.array([actions.get((i, t), 0) for i in range(episodes)], np.int32)
            live = ~finished
            steps += int(live.sum())
            differ += int((live & (chosen != greedy)).sum())
            obs, rewards, terminations, truncations, _ = env.step(chosen)
            replayed += np.where(finished, 0.0, rewards)
            finished |= np.asarray(terminations, bool) | np.asarray(truncations, bool)
            if finished.all():
                break
    want = [returns.get(i) for i in range(episodes)]
    check(want == replayed.tolist(), "dqn: the --epsilon trace's actions replayed give its returns")
    share, sigma = differ / steps, (epsilon / 2 * (1 - epsilon / 2) / steps) ** 0.5
    check(abs(share - epsilon / 2) <= 4 * sigma,
          f"dqn: --epsilon {epsilon} leaves the argmax at {share:.3f} of {steps} steps "
          f"(expected {epsilon / 2} +- {4 * sigma:.3f})")
    done = skinner_proc.run([cli, "eval", "Pendulum-v1", "--checkpoint", os.path.join(root, "sac"),
                             "--episodes", "1", "--epsilon", "0.1"], timeout=120)
    check(done.returncode == 1 and "epsilon-greedy evaluation is for a DQN run" in done.stderr,
          f"sac: --epsilon is refused with the reason ({done.stderr.strip()})")


def run_onnx(model, obs):
    import onnxruntime as ort
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, {"obs": obs})))


DRIVER = r"""
#include "policy.h"
#include <stdio.h>
int main(void) {
    policy_obs_t obs[POLICY_OBS_SIZE];
    policy_action_t action[POLICY_ACTION_SIZE];
    while (fread(obs, sizeof obs, 1, stdin) == 1) {
        policy_act(obs, NULL, NULL, action);
        for (int d = 0; d < POLICY_ACTION_SIZE; d++) printf("%.9g\n", (double)action[d]);
    }
    return 0;
}
"""


def run_c_header(header, obs, folder):
    with open(os.path.join(folder, "driver.c"), "w") as f:
        f.write(DRIVER)
    program = os.path.join(folder, "driver")
    skinner_proc.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-I", os.path.dirname(header),
                      os.path.join(folder, "driver.c"), "-o", program, "-lm"], timeout=120, check=True)
    proc = skinner_proc.start([program], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out, _ = skinner_proc.communicate(proc, 60, obs.astype(np.float32).tobytes())
    check(proc.returncode == 0, f"the C header's driver exits 0 ({proc.returncode})")
    return np.array([float(v) for v in out.split()])


def check_run(skinner, build, root, name, have_onnx):
    env_id, steps, flags = RUNS[name]
    cli = os.path.join(build, "skinner")
    run = os.path.join(root, name)
    done = skinner_proc.run([cli, "train", env_id, "--total-steps", str(steps), "--run-dir", run, "--seed", "1",
                             "--quiet", *flags], timeout=600)
    check(done.returncode == 0, f"{name}: skinner train exits 0 ({done.stderr.strip()[-300:]})")
    checkpoint = os.path.join(run, "policy.safetensors")
    check(f"skinner eval {env_id} --checkpoint {checkpoint}" in done.stdout,
          f"{name}: train's closing lines point at skinner eval")
    weights = read_safetensors(checkpoint)
    discrete = name == "dqn"
    if discrete:
        q = dqn_q(weights)
        act = lambda obs: np.argmax(q(obs), axis=1)  # noqa: E731
    else:
        act = sac_reference(weights)
    rng = np.random.default_rng(51)
    scale = np.array([2.4, 3.0, 0.21, 3.0]) if discrete else np.array([1.0, 1.0, 8.0])
    obs = (rng.uniform(-1.0, 1.0, (256, len(scale))) * scale).astype(np.float32)
    want = act(obs)
    if discrete:  # a Q network that always picks one action would test no argmax
        check(len(set(want.tolist())) == 2, f"dqn: the reference takes both actions on the batch")

    # 1. skinner's own action, greedy or not
    policy = skinner.load(run)
    for deterministic in (True, False):
        got = np.asarray(policy.act(obs, deterministic=deterministic), np.float64).reshape(want.shape)
        diff = float(np.max(np.abs(got - want)))
        check(diff <= TOL, f"{name}: skinner.load().act(deterministic={deterministic}) is the reference's "
                           f"action on 256 observations (largest difference {diff:.3g})")

    # 2. eval's return, the CLI's and Python's
    want_returns = reference_returns(skinner, env_id, act, discrete)
    check(np.all(np.isfinite(want_returns)), f"{name}: the reference's returns are finite")
    done = skinner_proc.run([cli, "eval", env_id, "--checkpoint", run, "--episodes", str(EPISODES),
                             "--seed", str(SEED), "--json"], timeout=300)
    check(done.returncode == 0, f"{name}: skinner eval exits 0 ({done.stderr.strip()[-300:]})")
    if done.returncode == 0:
        report = json.loads(done.stdout.strip().splitlines()[-1])
        mean = float(np.mean(want_returns))
        check(abs(report["mean_return"] - mean) <= 1e-3 * max(1.0, abs(mean)),
              f"{name}: skinner eval's mean return {report['mean_return']} is the reference's {mean:.6g} "
              f"({want_returns.round(3).tolist()})")
        check(report["greedy"] is True, f"{name}: skinner eval says it acted greedily")
    if discrete:
        check_epsilon(skinner, cli, run, root, q)
    py = skinner.evaluate(run, episodes=EPISODES, seed=SEED)
    check(abs(py["mean_return"] - float(np.mean(want_returns))) <= 1e-3 * max(1.0, abs(np.mean(want_returns))),
          f"{name}: skinner.evaluate's mean return {py['mean_return']} is the reference's")

    # 3. and 4. the exports
    model, header = os.path.join(root, f"{name}.onnx"), os.path.join(root, name, "policy.h")
    done = skinner_proc.run([cli, "export", run, "--onnx", model, "--c", header], timeout=120)
    check(done.returncode == 0, f"{name}: skinner export exits 0 ({done.stderr.strip()[-300:]})")
    if done.returncode != 0:
        return
    if have_onnx:
        import onnx
        try:
            onnx.checker.check_model(onnx.load(model), full_check=True)
            check(True, f"{name}: the ONNX model passes onnx's checker (full check)")
        except onnx.checker.ValidationError as error:
            check(False, f"{name}: the ONNX model passes onnx's checker: {error}")
        out = run_onnx(model, obs)
        check("value" not in out, f"{name}: the ONNX model has no value output ({sorted(out)})")
        diff = float(np.max(np.abs(out["action"].reshape(want.shape) - want)))
        check(diff <= TOL, f"{name}: ONNX Runtime's action is the reference's (largest difference {diff:.3g})")
        if discrete:
            qd = float(np.max(np.abs(out["logits_0"] - q(obs)) / np.maximum(1.0, np.abs(q(obs)))))
            check(qd <= TOL, f"dqn: ONNX Runtime's logits_0 are the Q values (largest difference {qd:.3g})")
    got = run_c_header(header, obs, os.path.join(root, name)).reshape(want.shape)
    diff = float(np.max(np.abs(got - want)))
    check(diff <= TOL, f"{name}: the C header's policy_act is the reference's action (largest difference {diff:.3g})")


def main():
    build = sys.argv[1]
    import skinner
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
        have_onnx = True
    except ImportError:
        have_onnx = False
        print("SKIP the ONNX checks: the test venv lacks onnx or onnxruntime (scripts/setup.sh --test)")
    root = tempfile.mkdtemp(prefix="skinner-offpolicy-eval-")
    for name in RUNS:
        try:
            check_run(skinner, build, root, name, have_onnx)
        except (ValueError, RuntimeError, OSError) as error:
            check(False, f"{name}: {type(error).__name__}: {error}")
    if skinner_proc.FAILS:
        skinner_proc.finish()  # exits 1 naming the first miss
    if not have_onnx:
        return 1 if os.environ.get("CI") == "true" else 77
    shutil.rmtree(root, ignore_errors=True)
    skinner_proc.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
