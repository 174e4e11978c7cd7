"""skinner beside its peers from PyPI, in one run (issue 47 ask 4). Run by bench/peers.sh in
the bench venv bench/.venv-peers; see that script for the usage.

1. CartPole-v1 stepping, N = 1, 64, 4096 envs, one thread, random actions: skinner's C loop
   (`skinner bench env`), skinner's Python VecEnv, Gymnasium's CartPoleVectorEnv
   (make_vec, "vector_entry_point") and SyncVectorEnv (make_vec, "sync"), EnvPool. The programs
   alternate within each round; medians of the rounds.
2. MinAtar Breakout stepping: skinner (C and Python) against minatar's NumPy Environment.
3. PPO to a return: skinner's presets against Stable-Baselines3's PPO (its defaults, and
   skinner's preset's hyperparameters) and CleanRL 1.2.0's ppo.py, one seed each, each peer run
   capped at --cap seconds. Every run is a subprocess timed from its launch by this script.
"""

import argparse
import csv
import json
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUM_ACTION_ARRAYS = 16  # pre-drawn action arrays, cycled, so no program times NumPy's RNG
EPISODE_WINDOW = 100    # the mean return over the last 100 finished episodes, as skinner's


# ---------------------------------------------------------------- stepping

def python_loop(step, num_envs, num_actions, seconds):
    """Env steps/s of `step(actions)` called from a Python loop for about `seconds`."""
    rng = np.random.default_rng(num_envs)
    action_sets = [rng.integers(0, num_actions, num_envs, dtype=np.int32)
                   for _ in range(NUM_ACTION_ARRAYS)]
    for actions in action_sets:  # warm up
        step(actions)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for actions in action_sets:
            step(actions)
        steps += NUM_ACTION_ARRAYS
    return steps * num_envs / (time.perf_counter() - start)


def skinner_c(skinner_bin, env_id, num_envs, seconds):
    out = subprocess.run([skinner_bin, "bench", "env", env_id, "--num-envs", str(num_envs),
                          "--threads", "1", "--seconds", str(seconds), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["sps"]


def skinner_python(env_id, num_envs, seconds):
    import skinner
    with skinner.make(env_id, num_envs=num_envs, threads=1, seed=1) as env:
        env.reset()
        return python_loop(env.step, num_envs, env.single_action_space.n, seconds)


def gymnasium_vec(mode, num_envs, seconds):
    import gymnasium
    env = gymnasium.make_vec("CartPole-v1", num_envs=num_envs, vectorization_mode=mode)
    env.reset(seed=1)
    try:
        return python_loop(env.step, num_envs, 2, seconds)
    finally:
        env.close()


def envpool_cartpole(num_envs, seconds):
    import envpool
    env = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=num_envs,
                       batch_size=num_envs, num_threads=1, seed=1)
    env.reset()
    try:
        return python_loop(env.step, num_envs, 2, seconds)
    finally:
        env.close()


def minatar_numpy(seconds):
    """minatar's own Environment (NumPy, one env, no batching), random actions of the minimal
    set, reset at each terminal; sticky 0.1 and difficulty ramping as its defaults and
    skinner's MinAtar/Breakout-v1."""
    from minatar import Environment
    env = Environment("breakout", sticky_action_prob=0.1, difficulty_ramping=True)
    env.reset()
    actions = env.minimal_action_set()
    rng = np.random.default_rng(1)
    picks = [actions[i] for i in rng.integers(0, len(actions), 4096)]
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for action in picks:
            _, terminal = env.act(action)
            env.state()  # the observation, as a step of the others writes it
            if terminal:
                env.reset()
        steps += len(picks)
    return steps / (time.perf_counter() - start)


def stepping(args, log):
    sizes = [1, 64] if args.quick else [1, 64, 4096]
    cartpole = {
        "skinner C (`skinner bench env`)":
            lambda n: skinner_c(args.skinner, "CartPole-v1", n, args.seconds),
        "skinner Python VecEnv": lambda n: skinner_python("CartPole-v1", n, args.seconds),
        "Gymnasium CartPoleVectorEnv (make_vec vector_entry_point)":
            lambda n: gymnasium_vec("vector_entry_point", n, args.seconds),
        "Gymnasium SyncVectorEnv (make_vec sync)": lambda n: gymnasium_vec("sync", n, args.seconds),
        "EnvPool (num_threads=1, batch_size=N)": lambda n: envpool_cartpole(n, args.seconds),
    }
    breakout = {
        "skinner C (`skinner bench env`)":
            lambda n: skinner_c(args.skinner, "MinAtar/Breakout-v1", n, args.seconds),
        "skinner Python VecEnv": lambda n: skinner_python("MinAtar/Breakout-v1", n, args.seconds),
        "minatar Environment (NumPy, one env in a loop)":
            lambda n: minatar_numpy(args.seconds) if n == 1 else None,
    }
    results = {}
    for game, programs in (("CartPole-v1", cartpole), ("MinAtar/Breakout-v1", breakout)):
        runs = {(name, n): [] for name in programs for n in sizes}
        loads = []
        for repeat in range(args.repeats):
            loads.append(os.getloadavg()[0])
            for n in sizes:
                for name, program in programs.items():  # alternating
                    sps = program(n)
                    if sps is not None:
                        runs[name, n].append(sps)
            log(f"stepping {game}: round {repeat + 1}/{args.repeats}")
        results[game] = {"median": {key: statistics.median(v) for key, v in runs.items() if v},
                         "runs": runs, "loads": loads, "sizes": sizes}
    return results


# ---------------------------------------------------------------- PPO to a return

def watch(command, target, cap, parse, cwd, poll=None, env=None):
    """Launches `command` and follows it until the mean of the last 100 returns reaches
    `target`, the program exits, or `cap` seconds pass. `parse(line)` gives (step, return) of
    a finished episode or None; `poll()` (for skinner) gives (step, mean) from its metrics.csv.
    Returns "reached": (seconds from launch, steps) at the target or None, "wall": seconds until
    it was stopped, "steps" and "mean" as last seen, and its output "lines"."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    arrived = queue.Queue()  # (seconds since launch, line), read by a thread as they come
    reader = threading.Thread(target=lambda: [arrived.put((time.perf_counter() - start, line))
                                              for line in proc.stdout], daemon=True)
    reader.start()
    returns, last_step, reached, mean, lines = [], 0, None, float("nan"), []
    while True:
        elapsed = time.perf_counter() - start
        while not arrived.empty():
            when, line = arrived.get()
            lines.append(line.rstrip("\n"))
            got = parse(line) if parse else None
            if got:
                last_step = got[0]
                returns.append(got[1])
                del returns[:-EPISODE_WINDOW]
                mean = sum(returns) / len(returns)
                if reached is None and len(returns) == EPISODE_WINDOW and mean >= target:
                    reached = (when, last_step)
        if poll:
            got = poll()
            if got:
                last_step, mean = got
                if reached is None and mean >= target:
                    reached = (elapsed, last_step)
        if reached or elapsed > cap or (proc.poll() is not None and not reader.is_alive()
                                         and arrived.empty()):
            break
        time.sleep(0.05)
    stopped = proc.poll() is None  # at the target or the cap, not by its own end
    if stopped:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    reader.join(10)
    while not arrived.empty():
        lines.append(arrived.get()[1].rstrip("\n"))
    return {"reached": reached, "wall": time.perf_counter() - start, "steps": last_step,
            "mean": mean, "lines": lines, "exit": None if stopped else proc.returncode}


def skinner_metrics(path):
    """(steps, mean_return, seconds) of metrics.csv's last row with a mean return."""
    try:
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r.get("mean_return")]
    except OSError:
        return None
    if not rows:
        return None
    last = rows[-1]
    return int(float(last["steps"])), float(last["mean_return"]), float(last["wall_seconds"])


def run_skinner(args, env_id, target, extra, tmp):
    run_dir = tempfile.mkdtemp(prefix="skinner-" + env_id.replace("/", "-") + "-", dir=tmp)
    command = [args.skinner, "train", env_id, "--seed", "1", "--run-dir", run_dir, "--quiet"]
    command += extra
    metrics = os.path.join(run_dir, "metrics.csv")

    def poll():
        got = skinner_metrics(metrics)
        return got[:2] if got else None

    result = watch(command, target, args.cap, None, ROOT, poll=poll)
    got = skinner_metrics(metrics)
    if got:  # steps/s by the run's own clock
        result["sps"] = got[0] / got[2] if got[2] > 0 else float("nan")
    result["command"] = " ".join(["skinner"] + command[1:]).replace(tmp, "$TMP")
    return result


CLEANRL_LINE = re.compile(r"global_step=(\d+), episodic_return=\[?([-0-9.e]+)")
SB3_LINE = re.compile(r"^episode step=(\d+) return=([-0-9.e]+)")


def run_cleanrl(args, target, extra, tmp):
    command = [sys.executable, "-u", "-m", "cleanrl.ppo", "--env-id", "CartPole-v1",
               "--cuda", "False", "--seed", "1", "--total-timesteps", str(args.cleanrl_steps)]
    command += extra
    cwd = tempfile.mkdtemp(dir=tmp)  # ppo.py writes runs/ (TensorBoard) into its cwd

    def parse(line):
        m = CLEANRL_LINE.search(line)
        return (int(m.group(1)), float(m.group(2))) if m else None

    env = dict(os.environ, OMP_NUM_THREADS=str(args.peer_threads))
    result = watch(command, target, args.cap, parse, cwd, env=env)
    rates = [int(m.group(1)) for m in map(re.compile(r"^SPS: (\d+)").search, result["lines"]) if m]
    result["sps"] = rates[-1] if rates else float("nan")
    result["command"] = " ".join([f"OMP_NUM_THREADS={args.peer_threads}", "python", "-m",
                                  "cleanrl.ppo"] + command[4:])
    return result


def run_sb3(args, spec, target, tmp):
    spec = dict(spec, threads=args.peer_threads)
    command = [sys.executable, "-u", os.path.abspath(__file__), "--sb3-run", json.dumps(spec)]

    def parse(line):
        m = SB3_LINE.search(line)
        return (int(m.group(1)), float(m.group(2))) if m else None

    result = watch(command, target, args.cap, parse, tmp)
    rates = [float(m.group(1)) for m in
             map(re.compile(r"^rate steps_per_second=([0-9.]+)").search, result["lines"]) if m]
    result["sps"] = rates[-1] if rates else float("nan")
    result["command"] = f"python bench/peers.py --sb3-run '{json.dumps(spec)}'"
    return result


def linear(start):
    return lambda progress_remaining: progress_remaining * start


class MinAtarCNN:
    """Built on demand (torch is imported only in --sb3-run): skinner's MinAtar encoder, one 3x3
    convolution of 16 channels, ReLU, flattened, a shared 64-unit Linear and ReLU
    (configs/minatar.ini), as an SB3 features extractor."""

    @staticmethod
    def make():
        import torch
        from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

        class Extractor(BaseFeaturesExtractor):
            def __init__(self, observation_space):
                super().__init__(observation_space, features_dim=64)
                height, width, channels = observation_space.shape
                self.net = torch.nn.Sequential(
                    torch.nn.Conv2d(channels, 16, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                    torch.nn.Linear(16 * (height - 2) * (width - 2), 64), torch.nn.ReLU())

            def forward(self, observations):
                return self.net(observations.permute(0, 3, 1, 2).float())

        return Extractor


def sb3_run(spec):
    """One SB3 PPO run (a subprocess of this script): prints each finished episode's return and
    stops at the target's 100-episode mean or at its step budget."""
    import torch
    import gymnasium
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    torch.set_num_threads(spec["threads"])
    if spec["env"].startswith("MinAtar/"):
        from minatar.gym import register_envs  # Gymnasium 1.x loads no plugins: by hand
        register_envs()
    env = make_vec_env(spec["env"], n_envs=spec["n_envs"], seed=1)  # Monitor: raw returns
    if spec.get("normalize"):
        env = VecNormalize(env, norm_obs=True, norm_reward=True, gamma=spec["ppo"]["gamma"])
    ppo = dict(spec["ppo"])
    for key in ("learning_rate", "clip_range"):
        if isinstance(ppo.get(key), str) and ppo[key].startswith("lin_"):
            ppo[key] = linear(float(ppo[key][4:]))
    policy_kwargs = {}
    if spec.get("net") == "separate64":
        policy_kwargs = dict(net_arch=dict(pi=[64, 64], vf=[64, 64]),
                             activation_fn=torch.nn.Tanh)
    elif spec.get("net") == "minatar_cnn":
        policy_kwargs = dict(features_extractor_class=MinAtarCNN.make(),
                             net_arch=dict(pi=[64, 64], vf=[64, 64]),
                             activation_fn=torch.nn.Tanh, share_features_extractor=True)
    model = PPO(spec.get("policy", "MlpPolicy"), env, seed=1, device="cpu",
                policy_kwargs=policy_kwargs or None, **ppo)
    target = spec["target"]
    start = time.perf_counter()

    class Report(BaseCallback):
        returns = []

        def _on_step(self):
            for info in self.locals["infos"]:
                if "episode" in info:
                    Report.returns = (Report.returns + [info["episode"]["r"]])[-EPISODE_WINDOW:]
                    print(f"episode step={self.num_timesteps} return={info['episode']['r']}")
            rate = self.num_timesteps / (time.perf_counter() - start)
            if self.n_calls % 256 == 0:
                print(f"rate steps_per_second={rate:.1f}")
            if len(Report.returns) == EPISODE_WINDOW and np.mean(Report.returns) >= target:
                print(f"rate steps_per_second={rate:.1f}")
                return False
            return True

    model.learn(total_timesteps=spec["steps"], callback=Report())
    print(f"rate steps_per_second={model.num_timesteps / (time.perf_counter() - start):.1f}")
    gymnasium  # the import above makes SB3 use Gymnasium's registry


# The runs of part 3. skinner's CartPole preset (configs/cartpole.ini): 16 envs x 128 steps, 4
# minibatches, 4 epochs, lr 0.0025 annealed, gamma 0.99, lambda 0.95, clip 0.2, ent 0.01, vf 0.5,
# max_grad_norm 0.5, normalised observations and rewards, separate 4-64-64 tanh actor and critic.
# SB3's defaults for CartPole are rl-baselines3-zoo's hyperparams/ppo.yml entry.
SB3_ZOO_CARTPOLE = dict(n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20,
                        ent_coef=0.0, learning_rate="lin_0.001", clip_range="lin_0.2")
SB3_ZOO_CARTPOLE_STEPS = 100_000  # the zoo's n_timesteps
SB3_AS_SKINNER_CARTPOLE = dict(n_steps=128, batch_size=512, n_epochs=4, learning_rate="lin_0.0025",
                               gamma=0.99, gae_lambda=0.95, clip_range=0.2, ent_coef=0.01,
                               vf_coef=0.5, max_grad_norm=0.5)
CLEANRL_AS_SKINNER_CARTPOLE = ["--num-envs", "16", "--learning-rate", "0.0025"]
# configs/minatar.ini: 64 envs x 128 steps, 16 minibatches (512 rows), 4 epochs, lr 0.001
# annealed, the rest as CartPole's without normalisation.
SB3_AS_SKINNER_MINATAR = dict(n_steps=128, batch_size=512, n_epochs=4, learning_rate="lin_0.001",
                              gamma=0.99, gae_lambda=0.95, clip_range=0.2, ent_coef=0.01,
                              vf_coef=0.5, max_grad_norm=0.5)


def training(args, log):
    tmp = tempfile.mkdtemp(prefix="skinner-peers-")
    cp_target, br_target = 475.0, args.breakout_target
    cp_steps = 100_000 if args.quick else 500_000
    br_steps = 10_000_000
    runs = []

    def record(what, hyper, result, target, env_id, threads=args.peer_threads):
        result.update(what=what, hyper=hyper, target=target, env=env_id, threads=threads,
                      load=os.getloadavg()[0])
        result.pop("lines", None)
        runs.append(result)
        log(f"ppo {env_id} {what} ({hyper}): reached {result['reached']}, "
            f"{result.get('sps', float('nan')):.0f} steps/s, load {result['load']:.2f}")

    cores = os.cpu_count()
    record("skinner", "preset", run_skinner(args, "CartPole-v1", cp_target,
                                             ["--stop-when-solved"], tmp),
           cp_target, "CartPole-v1", threads=cores)
    record("skinner", "preset", run_skinner(args, "CartPole-v1", cp_target,
                                             ["--stop-when-solved", "--threads", "1"], tmp),
           cp_target, "CartPole-v1", threads=1)
    record("SB3 PPO", "rl-zoo defaults (8 envs)",
           run_sb3(args, dict(env="CartPole-v1", n_envs=8, ppo=SB3_ZOO_CARTPOLE,
                              steps=SB3_ZOO_CARTPOLE_STEPS, target=cp_target), cp_target, tmp),
           cp_target, "CartPole-v1")
    record("SB3 PPO", "skinner's preset",
           run_sb3(args, dict(env="CartPole-v1", n_envs=16, ppo=SB3_AS_SKINNER_CARTPOLE,
                              normalize=True, net="separate64", steps=cp_steps,
                              target=cp_target), cp_target, tmp), cp_target, "CartPole-v1")
    record("CleanRL ppo.py", "its defaults (4 envs)", run_cleanrl(args, cp_target, [], tmp),
           cp_target, "CartPole-v1")
    record("CleanRL ppo.py", "skinner's preset, no normalisation (ppo.py has none)",
           run_cleanrl(args, cp_target, CLEANRL_AS_SKINNER_CARTPOLE, tmp),
           cp_target, "CartPole-v1")
    record("skinner", "preset", run_skinner(args, "MinAtar/Breakout-v1", br_target, [], tmp),
           br_target, "MinAtar/Breakout-v1", threads=cores)
    record("skinner", "preset", run_skinner(args, "MinAtar/Breakout-v1", br_target,
                                             ["--threads", "1"], tmp),
           br_target, "MinAtar/Breakout-v1", threads=1)
    record("SB3 PPO", "its defaults (MlpPolicy, 1 env)",
           run_sb3(args, dict(env="MinAtar/Breakout-v1", n_envs=1, ppo={}, steps=br_steps,
                              target=br_target), br_target, tmp), br_target, "MinAtar/Breakout-v1")
    record("SB3 PPO", "skinner's preset (its CNN as a features extractor)",
           run_sb3(args, dict(env="MinAtar/Breakout-v1", n_envs=64, ppo=SB3_AS_SKINNER_MINATAR,
                              net="minatar_cnn", steps=br_steps, target=br_target),
                   br_target, tmp), br_target, "MinAtar/Breakout-v1")
    shutil.rmtree(tmp, ignore_errors=True)
    return runs


# ---------------------------------------------------------------- the report

def fmt(sps):
    if sps != sps:
        return "-"
    return f"{sps / 1e6:.2f}M" if sps >= 1e6 else (f"{sps / 1e3:.1f}k" if sps >= 1e3 else f"{sps:.0f}")


def versions():
    import importlib.metadata as md
    names = ["numpy", "gymnasium", "envpool", "minatar", "stable-baselines3", "torch",
             "cleanrl", "gym"]
    out = []
    for name in names:
        try:
            out.append(f"{name} {md.version(name)}")
        except md.PackageNotFoundError:
            out.append(f"{name} (not installed)")
    return ", ".join(out)


def report(args, step_results, ppo_runs):
    lines = [f"# skinner beside its peers, {args.date}, commit {args.commit}", "",
             f"Machine: {args.cpu}; {args.isa}; {os.cpu_count()} cores. Python "
             f"{sys.version.split()[0]} in bench/.venv-peers: {versions()}.",
             f"Command: `{args.command}`" + (" (QUICK: a smoke run, not figures)" if args.quick
                                             else "") + ".",
             f"Load average (1 min) at the start: {args.load_start}. The machine is shared with "
             "other engineers' builds and tests: absolute figures are noisy; the ratios come from "
             "programs alternating in the same run.", ""]
    for game, res in step_results.items():
        sizes = res["sizes"]
        names = list(dict.fromkeys(name for name, _ in res["runs"]))
        base = "skinner C (`skinner bench env`)"
        lines += [f"## {game} stepping, one thread, random actions, env steps/s", "",
                  f"Medians of {args.repeats} rounds of {args.seconds:g} s, the programs "
                  "alternating within each round; load average at each round's start: "
                  + ", ".join(f"{x:.2f}" for x in res["loads"]) + ". Ratio: skinner C / the "
                  "program, same rounds.", "",
                  "| program | " + " | ".join(f"N={n}" for n in sizes) + " |",
                  "| --- |" + " --- |" * len(sizes)]
        for name in names:
            cells = []
            for n in sizes:
                value = res["median"].get((name, n))
                if value is None:
                    cells.append("-")
                elif name == base:
                    cells.append(fmt(value))
                else:
                    cells.append(f"{fmt(value)} (skinner C {fmt(res['median'][base, n])}: "
                                 f"{res['median'][base, n] / value:.1f}x)")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["Commands: skinner C: `SKINNER bench env ENV --num-envs N --threads 1 --seconds S "
              "--json`; skinner Python: `skinner.make(ENV, num_envs=N, threads=1, seed=1)`, "
              "`env.step(actions)`; Gymnasium: `gymnasium.make_vec(\"CartPole-v1\", num_envs=N, "
              "vectorization_mode=MODE)`; EnvPool: `envpool.make(\"CartPole-v1\", "
              "env_type=\"gymnasium\", num_envs=N, batch_size=N, num_threads=1, seed=1)`; minatar: "
              "`Environment(\"breakout\", sticky_action_prob=0.1, difficulty_ramping=True)`, "
              "`act(a)`, `state()`, `reset()` at a terminal. Every Python loop cycles 16 "
              "pre-drawn int32 action arrays; skinner's C loop draws its own. skinner runs "
              "CartPole at its default float64, bit-faithful to Gymnasium; skinner autoresets "
              "in the same step, Gymnasium 1.x and EnvPool in the next.", ""]
    if ppo_runs:
        lines += ["## PPO: wall seconds from launch to a mean return over the last 100 episodes",
                  "",
                  f"One seed each (seed 1), one run at a time; each run capped at {args.cap:g} s "
                  "and stopped at the target. Targets: CartPole-v1 475; MinAtar/Breakout-v1 "
                  f"{args.breakout_target:g}. Steps/s by each program's own clock (skinner: "
                  "metrics.csv; SB3: from learn(); CleanRL: its last `SPS:` line); the wall "
                  "seconds include each program's start-up (Python and torch imports for the "
                  "peers). skinner: its preset on all cores and on one thread; the peers: torch on "
                  f"{args.peer_threads} thread(s) (PEER_THREADS; torch.set_num_threads for SB3, "
                  "OMP_NUM_THREADS for CleanRL). The ratios compare runs on the same number of "
                  "threads. "
                  "skinner's CartPole time is to the first update whose 100-episode mean is "
                  "at the target; the peers' to the episode that brings it there.", "",
                  "| env | program | hyperparameters | to the target | steps then | env steps/s "
                  "| threads | skinner on as many threads / it (time; steps/s) | load |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        skinner_of = {(r["env"], r["threads"]): r for r in ppo_runs if r["what"] == "skinner"}
        for r in ppo_runs:
            if r["reached"]:
                when, steps = f"{r['reached'][0]:.1f} s", f"{r['reached'][1]:,}"
            else:
                how = ("stopped at the cap" if r["exit"] is None or r["wall"] >= args.cap
                       else "its step budget ran out")
                when = f"not reached in {r['wall']:.0f} s, {how} (mean {r['mean']:.1f})"
                steps = f"{r['steps']:,} run"
            ratio = "-"
            sk = skinner_of.get((r["env"], r["threads"]))
            if r["what"] != "skinner" and sk:
                parts = []
                if sk["reached"] and r["reached"]:
                    parts.append(f"{r['reached'][0] / sk['reached'][0]:.0f}x faster "
                                 f"({sk['reached'][0]:.1f} s vs {r['reached'][0]:.1f} s)")
                elif sk["reached"]:
                    parts.append(f"> {r['wall'] / sk['reached'][0]:.0f}x faster")
                if r.get("sps") and r["sps"] == r["sps"] and sk.get("sps"):
                    parts.append(f"{sk['sps'] / r['sps']:.0f}x the steps/s "
                                 f"({fmt(sk['sps'])} vs {fmt(r['sps'])})")
                ratio = "; ".join(parts) or "-"
            lines.append(f"| {r['env']} | {r['what']} | {r['hyper']} | {when} | {steps} | "
                         f"{fmt(r.get('sps', float('nan')))} | {r['threads']} | {ratio} "
                         f"| {r['load']:.2f} |")
        lines += ["", "Commands (from the tree's root; $TMP a scratch folder):", ""]
        lines += [f"- `{r['command']}`" for r in ppo_runs]
        lines.append("")
    lines += ["## Not measured", ""] + [f"- {x}" for x in NOT_MEASURED] + [""]
    return "\n".join(lines)


NOT_MEASURED = [
    "PufferLib 3.0.0 (its CartPole, its vectorisation, its trainer): PyPI has only its sdist, "
    "whose setup.py downloads raylib-5.5_webassembly and Box2D from GitHub at build time (these "
    "machines reach Debian and PyPI only), and it pins gymnasium<=0.29.1 against the "
    "gymnasium 1.4.0 of this venv. Building it would mean patching its build: not done.",
    "EnvPool 1.2.7: PyPI's 1.2.7 wheels are for CPython 3.12-3.14; Debian 12's python3 is 3.11, "
    "whose newest EnvPool wheel is 1.2.5, used here.",
    "CleanRL on MinAtar: 1.2.0's ppo.py makes its envs with gym 0.23 (`gym.make`), which "
    "MinAtar does not register with (MinAtar registers with Gymnasium). CleanRL 1.2.0 itself "
    "declares Requires-Python <3.11: it is installed with --no-deps --ignore-requires-python, "
    "its pinned gym 0.23.1 beside it, and its ppo.py runs unchanged.",
    "pgx and gymnax (JAX) on CPU: optional in the ask; left out to keep the run and the venv "
    "small.",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sb3-run", help=argparse.SUPPRESS)
    parser.add_argument("--skinner")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cap", type=float, default=200.0)
    parser.add_argument("--breakout-target", type=float, default=10.0)
    parser.add_argument("--cleanrl-steps", type=int, default=500_000)
    parser.add_argument("--peer-threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-train", action="store_true")
    parser.add_argument("--out")
    for key in ("date", "commit", "cpu", "isa", "command", "load-start"):
        parser.add_argument("--" + key, default="?")
    args = parser.parse_args()
    if args.sb3_run:
        return sb3_run(json.loads(args.sb3_run))

    def log(message):
        print(f"peers: {message}", file=sys.stderr, flush=True)

    step_results = stepping(args, log)
    ppo_runs = [] if args.no_train else training(args, log)
    text = report(args, step_results, ppo_runs)
    print(text)
    with open(args.out, "w") as f:
        f.write(text)
    log(f"written to {args.out}")


if __name__ == "__main__":
    main()
