"""The Python module's speed (BENCHMARKS.md: "CartPole stepped from Python, one core,
4096 / 65536 envs: >= 50% / >= 90% of the C figure in the same run").

Part 1: CartPole-v1 at env.precision float32 on one thread, stepped by a Python
loop (16 pre-drawn int32 action arrays, cycled; passed to step as they are, or
copied into env.actions first), against `skinner bench env` (the C loop of the
CLI) and skinner.bench (a C loop inside the module), the four alternating run
by run; medians of REPEATS runs.
Part 2: examples/python/numpy_env.py's NumPy CartPole under skinner.train (the
cartpole preset, one thread) for a fixed number of steps: steps/s and the share
of the wall time spent inside the Python env's step and reset, against the
built-in CartPole-v1 under the same trainer and config.

Writes bench/results/DATE-COMMIT-python.md.
usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_step.py [--seconds 1] [--repeats 5]
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import skinner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
import numpy_env  # noqa: E402  (the example's env class, found through the path above)

SIZES = (4096, 65536)
TARGETS = {4096: 0.50, 65536: 0.90}  # Python / C, BENCHMARKS.md
NUM_ACTION_ARRAYS = 16


def python_loop(num_envs, seconds, into_buffer=False):
    """Env steps/s of a Python loop calling env.step. Actions are drawn before
    the clock starts, so that the loop measures skinner, not NumPy's generator.
    into_buffer: copy them into env.actions (skinner's preallocated action array)
    and pass that, as a policy writing its actions in place would."""
    rng = np.random.default_rng(num_envs)
    action_sets = [rng.integers(0, 2, num_envs, dtype=np.int32) for _ in range(NUM_ACTION_ARRAYS)]
    with skinner.make("CartPole-v1", num_envs=num_envs, threads=1, seed=1,
                      precision="float32") as env:
        env.reset()
        buffer = env.actions
        for actions in action_sets:  # warm the caches and the page tables
            env.step(actions)
        steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            for actions in action_sets:  # the clock is read once per 16 steps
                if into_buffer:
                    np.copyto(buffer, actions)
                    env.step(buffer)
                else:
                    env.step(actions)
            steps += NUM_ACTION_ARRAYS
        elapsed = time.perf_counter() - start
    return steps * num_envs / elapsed


def cli_bench(num_envs, seconds):
    out = subprocess.run([os.path.join(ROOT, "build", "skinner"), "bench", "env", "CartPole-v1",
                          "--threads", "1", "--num-envs", str(num_envs), "--seconds", str(seconds),
                          "--env.precision", "float32", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["sps"]


def module_bench(num_envs, seconds):
    return skinner.bench("CartPole-v1", num_envs=num_envs, threads=1, seconds=seconds,
                         precision="float32")["steps_per_second"]


class TimedNumpyCartPole(numpy_env.NumpyCartPole):
    """The example's env with its time inside step and reset added up (on the
    class: skinner makes the instances)."""

    step_seconds = 0.0
    reset_seconds = 0.0

    def step(self, actions):
        start = time.perf_counter()
        result = super().step(actions)
        TimedNumpyCartPole.step_seconds += time.perf_counter() - start
        return result

    def reset(self, seed, mask=None):
        start = time.perf_counter()
        obs = super().reset(seed, mask)
        TimedNumpyCartPole.reset_seconds += time.perf_counter() - start
        return obs


def train_run(env_id, config, total_steps):
    TimedNumpyCartPole.step_seconds = TimedNumpyCartPole.reset_seconds = 0.0
    start = time.perf_counter()
    result = skinner.train(env_id, config=config, total_steps=total_steps, threads=1, seed=1,
                           stop_when_solved=False)
    wall = time.perf_counter() - start
    return {"sps": result["total_steps"] / wall, "wall": wall,
            "env_seconds": TimedNumpyCartPole.step_seconds + TimedNumpyCartPole.reset_seconds,
            "step_share": TimedNumpyCartPole.step_seconds / wall,
            "reset_share": TimedNumpyCartPole.reset_seconds / wall,
            "mean_return": result["final_mean_return"]}


def fmt(sps):
    return f"{sps / 1e6:.1f}M" if sps >= 1e6 else f"{sps / 1e3:.0f}k"


def machine():
    cpu = "unknown CPU"
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        cpu = next(line.split(":", 1)[1].strip() for line in lscpu.splitlines()
                   if line.startswith("Model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, {' '.join(os.uname()[i] for i in (0, 2))}"


def bench_arguments(doc, name, train_steps):
    """The options of the Python benches (this one, python_gym_env.py) and where their results
    go: (args, date, commit, out), out bench/results/DATE-COMMIT-NAME.md unless --out."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="per stepping run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--train-steps", type=int, default=train_steps)
    parser.add_argument("--train-repeats", type=int, default=3)
    parser.add_argument("--out", help=f"default: bench/results/DATE-COMMIT-{name}.md")
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    out = args.out or os.path.join(ROOT, "bench", "results", f"{date}-{commit}-{name}.md")
    return args, date, commit, out


def write_results(lines, out):
    """Prints the results' lines and writes them to out."""
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    print(f"written to {out}", file=sys.stderr)


def main():
    args, date, commit, out = bench_arguments(__doc__, "python", 200_000)

    programs = {"python": python_loop, "python_buffer": lambda n, s: python_loop(n, s, True),
                "cli": cli_bench, "module": module_bench}
    runs = {(name, n): [] for name in programs for n in SIZES}
    for repeat in range(args.repeats):  # alternating, so that all see the same load
        for n in SIZES:
            for name, program in programs.items():
                runs[name, n].append(program(n, args.seconds))
        print(f"stepping: run {repeat + 1}/{args.repeats} done", file=sys.stderr)
    median = {key: statistics.median(values) for key, values in runs.items()}

    numpy_env.register()
    skinner.register("TimedNumpyCartPole-v1", TimedNumpyCartPole, max_episode_steps=500,
                     reward_threshold=475)
    config = numpy_env.preset_without_precision(numpy_env.CARTPOLE_PRESET)
    trains = {"python": [], "builtin": []}
    for repeat in range(args.train_repeats):
        trains["python"].append(train_run("TimedNumpyCartPole-v1", config, args.train_steps))
        trains["builtin"].append(train_run("CartPole-v1", config, args.train_steps))
        print(f"training: run {repeat + 1}/{args.train_repeats} done", file=sys.stderr)

    def train_median(kind, key):
        return statistics.median(run[key] for run in trains[kind])

    lines = [
        f"# skinner's Python module, {date}, commit {commit}",
        "",
        f"Machine: {machine()}; Python {sys.version.split()[0]}, NumPy {np.__version__}.",
        f"Command: PYTHONPATH=build/python /usr/bin/python3 bench/python_step.py "
        f"--seconds {args.seconds:g} --repeats {args.repeats} --train-steps {args.train_steps} "
        f"--train-repeats {args.train_repeats}",
        "",
        "## CartPole-v1 stepped from Python, env.precision float32, one thread, env steps/s",
        "",
        f"Medians of {args.repeats} runs of {args.seconds:g} s, the four programs alternating run "
        "by run. Python: a loop calling env.step on 16 pre-drawn int32 action arrays, cycled; "
        "Python into env.actions: the same arrays copied by np.copyto into env.actions, "
        "which is passed to step. CLI: `build/skinner bench env "
        "CartPole-v1 --threads 1 --num-envs N --env.precision float32 --json`. skinner.bench: "
        "the module's own C loop, actions drawn in C.",
        "",
        "| N | Python | Python into env.actions | CLI (C) | skinner.bench | Python / CLI "
        "| target |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n in SIZES:
        ratio = median["python", n] / median["cli", n]
        verdict = "met" if ratio >= TARGETS[n] else "missed"
        lines.append(f"| {n} | {fmt(median['python', n])} | {fmt(median['python_buffer', n])} | "
                     f"{fmt(median['cli', n])} | {fmt(median['module', n])} | {ratio:.3f} "
                     f"| >= {TARGETS[n]:.2f}: {verdict} |")
    wall_python = train_median("python", "wall")
    wall_builtin = train_median("builtin", "wall")
    num_envs = int(config["env.num_envs"])
    batch_steps = args.train_steps / num_envs
    extra = (wall_python - wall_builtin) / batch_steps
    inside = train_median("python", "env_seconds") / batch_steps
    lines += [
        "",
        "## A NumPy env under skinner.train",
        "",
        f"examples/python/numpy_env.py's NumpyCartPole (float64 state, one batch call per step), "
        f"trained {args.train_steps} steps with configs/cartpole.ini ({num_envs} envs; "
        f"env.precision dropped) on one thread, against the built-in CartPole-v1 with the same "
        f"config; medians of {args.train_repeats} runs, alternating. Shares: time inside the "
        f"class's step / reset (time.perf_counter around each call) over the run's wall time.",
        "",
        "| env | steps/s | wall s | in env.step | in env.reset | mean return at the end |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| NumpyCartPole (Python) | {fmt(train_median('python', 'sps'))} | {wall_python:.2f} | "
        f"{train_median('python', 'step_share'):.0%} | "
        f"{train_median('python', 'reset_share'):.0%} | "
        f"{train_median('python', 'mean_return'):.0f} |",
        f"| CartPole-v1 (built-in, C) | {fmt(train_median('builtin', 'sps'))} | {wall_builtin:.2f} "
        f"| - | - | {train_median('builtin', 'mean_return'):.0f} |",
        "",
        f"Per batch step of {num_envs} envs, the Python env costs {extra * 1e6:.1f} us more than "
        f"the built-in one: {inside * 1e6:.1f} us inside the class's step and reset (NumPy), "
        f"{(extra - inside) * 1e6:.1f} us in skinner's glue around the calls (the GIL, reading "
        f"and copying the returned arrays, the time limit and autoreset in C).",
    ]
    write_results(lines, out)


if __name__ == "__main__":
    main()
