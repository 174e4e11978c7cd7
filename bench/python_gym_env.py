"""What skinner.from_gymnasium costs per env step, against skinner's own CartPole-v1
(issue 52 ask 4; docs/python.md, "Gymnasium envs you have").

Part 1, stepping from Python, 16 envs (the cartpole preset's count), random actions drawn
before the clock starts, env steps/s:
  - skinner's built-in CartPole-v1 (skinner.make, float64 as the preset steps it);
  - Gymnasium's CartPole-v1 through skinner.from_gymnasium (16 gymnasium.make envs);
  - the same 16 envs in Gymnasium's own gymnasium.vector.SyncVectorEnv (same-step autoreset),
    what a user stepped before;
  - skinner.bench on the from_gymnasium env (skinner's C loop calling the envs).
Part 2, skinner.train for --train-steps steps with configs/cartpole.ini's PPO keys (16 envs,
one thread): the built-in CartPole-v1 against the from_gymnasium one.
The programs alternate run by run, so that all see the same load; medians of the runs.

Writes bench/results/DATE-COMMIT-from-gymnasium.md.
usage: PYTHONPATH=build/python .venv/bin/python bench/python_gym_env.py [--seconds 1]
       [--repeats 5] [--train-steps 60000] [--train-repeats 3]
"""

import configparser
import os
import statistics
import sys
import time

import numpy as np

import skinner
from python_step import bench_arguments, fmt, machine, write_results  # noqa: E402  (bench/)

import gymnasium as gym  # noqa: E402
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUM_ENVS = 16
NUM_ACTION_ARRAYS = 64


def cartpole():
    return gym.make("CartPole-v1")


def stepped(env, seconds):
    """Env steps/s of a Python loop calling env.step on pre-drawn actions."""
    rng = np.random.default_rng(0)
    action_sets = [rng.integers(0, 2, NUM_ENVS) for _ in range(NUM_ACTION_ARRAYS)]
    env.reset(seed=1)
    for actions in action_sets[:8]:  # warm up
        env.step(actions)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for actions in action_sets:
            env.step(actions)
        steps += NUM_ACTION_ARRAYS
    return steps * NUM_ENVS / (time.perf_counter() - start)


def preset():
    ini = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
    ini.read(os.path.join(ROOT, "configs", "cartpole.ini"))
    config = {f"{section}.{key}": value for section in ini.sections() if section != "env"
              for key, value in ini[section].items()}
    config["env.num_envs"] = NUM_ENVS
    return config


def trained(env, total_steps):
    start = time.perf_counter()
    result = skinner.train(env, config=preset(), total_steps=total_steps, threads=1, seed=1)
    wall = time.perf_counter() - start
    return {"sps": result["total_steps"] / wall, "wall": wall,
            "mean_return": result["final_mean_return"]}


def main():
    args, date, commit, out = bench_arguments(__doc__, "from-gymnasium", 60_000)

    load_before = os.getloadavg()[0]
    builtin = skinner.make("CartPole-v1", num_envs=NUM_ENVS, seed=1)
    adapted = skinner.from_gymnasium([cartpole] * NUM_ENVS, seed=1)
    reference = SyncVectorEnv([cartpole] * NUM_ENVS, autoreset_mode=AutoresetMode.SAME_STEP)
    programs = {
        "builtin": lambda s: stepped(builtin, s),
        "from_gymnasium": lambda s: stepped(adapted, s),
        "sync_vector_env": lambda s: stepped(reference, s),
        "bench": lambda s: skinner.bench(adapted.env_id, num_envs=NUM_ENVS,
                                         seconds=s)["steps_per_second"],
    }
    runs = {name: [] for name in programs}
    for repeat in range(args.repeats):
        for name, program in programs.items():
            runs[name].append(program(args.seconds))
        print(f"stepping: run {repeat + 1}/{args.repeats} done", file=sys.stderr)
    step = {name: statistics.median(values) for name, values in runs.items()}

    trains = {"builtin": [], "from_gymnasium": []}
    for repeat in range(args.train_repeats):
        trains["builtin"].append(trained("CartPole-v1", args.train_steps))
        trains["from_gymnasium"].append(trained(adapted, args.train_steps))
        print(f"training: run {repeat + 1}/{args.train_repeats} done", file=sys.stderr)
    train = {kind: {key: statistics.median(run[key] for run in runs_of) for key in runs_of[0]}
             for kind, runs_of in trains.items()}

    def us(sps):
        return f"{1e6 / sps:.2f}"

    lines = [
        f"# skinner.from_gymnasium against skinner's own CartPole-v1, {date}, commit {commit}",
        "",
        f"Machine: {machine()}; Python {sys.version.split()[0]}, NumPy {np.__version__}, "
        f"Gymnasium {gym.__version__}. Load average (1 min) {load_before:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores.",
        f"Command: PYTHONPATH=build/python .venv/bin/python bench/python_gym_env.py "
        f"--seconds {args.seconds:g} --repeats {args.repeats} --train-steps {args.train_steps} "
        f"--train-repeats {args.train_repeats}",
        "",
        f"## Stepping from Python, {NUM_ENVS} envs, random actions",
        "",
        f"Medians of {args.repeats} runs of {args.seconds:g} s, the programs alternating run by "
        "run; actions drawn before the clock starts.",
        "",
        "| env | env steps/s | us per env step |",
        "| --- | --- | --- |",
        f"| CartPole-v1, skinner's own (skinner.make) | {fmt(step['builtin'])} | "
        f"{us(step['builtin'])} |",
        f"| gymnasium.make(\"CartPole-v1\") x {NUM_ENVS} through skinner.from_gymnasium | "
        f"{fmt(step['from_gymnasium'])} | {us(step['from_gymnasium'])} |",
        f"| the same envs in gymnasium.vector.SyncVectorEnv (same-step) | "
        f"{fmt(step['sync_vector_env'])} | {us(step['sync_vector_env'])} |",
        f"| skinner.bench on the from_gymnasium env (C loop, actions drawn in C) | "
        f"{fmt(step['bench'])} | {us(step['bench'])} |",
        "",
        f"An env step through from_gymnasium takes {step['builtin'] / step['from_gymnasium']:.0f} "
        "times as long as one of skinner's own CartPole-v1, and "
        f"{step['sync_vector_env'] / step['from_gymnasium']:.2f} times as long as one of "
        "Gymnasium's SyncVectorEnv over the same envs: the time is Gymnasium's env.step.",
        "",
        f"## skinner.train, {args.train_steps} steps, configs/cartpole.ini's PPO keys, "
        f"{NUM_ENVS} envs, one thread",
        "",
        f"Medians of {args.train_repeats} runs, alternating.",
        "",
        "| env | steps/s | wall s | mean return at the end |",
        "| --- | --- | --- | --- |",
    ]
    for kind, label in (("builtin", "CartPole-v1, skinner's own"),
                        ("from_gymnasium", "Gymnasium's CartPole-v1 through from_gymnasium")):
        lines.append(f"| {label} | {fmt(train[kind]['sps'])} | {train[kind]['wall']:.2f} | "
                     f"{train[kind]['mean_return']:.0f} |")
    write_results(lines, out)
    adapted.close()
    builtin.close()
    reference.close()


if __name__ == "__main__":
    main()
