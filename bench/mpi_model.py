#!/usr/bin/env python3
"""Cost model of data-parallel training at scale, from measurements on this machine, for
comm.mode = exact and comm.mode = scale (docs/distributed.md).

For each workload it measures, with `skinner bench train` (median of REPEATS runs):
  - T_c, the compute of one update on one core (1 process, 1 thread): in weak scaling every
    rank keeps the preset's envs, so a rank's rollout and its share of every minibatch (1/K of
    a K times larger batch) cost what one process of one thread spends per update;
  - under `mpirun -np 2 --threads 1`, in each mode: what rank 0 hands MPI per update, split
    into the allreduces (A calls, S bytes: at K = 2 each sends n of its n-byte vector, so S is
    the sum of n) and the rest (exact: the rollout exchange and small merges, R bytes; scale:
    the small merges alone, R bytes), in C other calls.
Then, for K ranks on a network of bandwidth B with latency alpha per message, per update:
  exact   allreduces  A (K - 1 + log2 K) alpha + 2 (K - 1) / K * S / B
                      (rank order: an alltoall of K chunks, then an allgather)
          rollout     (K - 1) alpha + (K - 1) * R_rank / B
                      (every rank receives every other rank's block; R_rank = 2 R: at K = 2 a
                      rank's block is half the preset's rollout, at scale each rank holds a
                      whole preset)
          small       C log2 K alpha
  scale   allreduces  A L alpha + L S / B, L = log2 K (+ 2 when K is not a power of two),
                      for vectors under 128 kB; from 128 kB, A 2 L alpha + 2 (K - 1) / K S / B
                      (one fused allreduce of [gradient | loss sums] per minibatch, added in a
                      fixed tree: recursive doubling, L swaps of the whole vector; or, for
                      large vectors, a reduce-scatter by recursive halving and an allgather,
                      Rabenseifner's; comm_mpi.c's HALVING_MIN_BYTES; the stop decisions are
                      such sums too)
          small       C log2 K alpha + (K - 1) R / B
                      (the normaliser moments and episode records: every rank receives every
                      rank's; no rollout exchange)
and the efficiency T_c / (T_c + T_comm), no overlap of communication with compute.
usage: bench/mpi_model.py [SKINNER] [REPEATS] [SECONDS]; prints a Markdown table, then the
measurements as a JSON line; bench/mpi_model.py --measured FILE recomputes the table from the
last such line of FILE (another network or formula, without measuring again), with T_c of
a workload replaced by "WORKLOAD=MS" arguments (e.g. a quiet machine's: the shared machine's
load stretches T_c, which flatters the efficiency).
"""
import json
import math
import os
import statistics
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
recompute = len(sys.argv) > 2 and sys.argv[1] == "--measured"
measuring = [] if recompute else sys.argv[1:]
skinner = measuring[0] if len(measuring) > 0 else os.path.join(root, "build", "skinner")
repeats = int(measuring[1]) if len(measuring) > 1 else 5
seconds = measuring[2] if len(measuring) > 2 else "3"
countries = os.path.join(root, "..", "shared", "datasets", "countries_s3")
env = dict(os.environ, SKINNER_CONFIG_DIR=os.path.join(root, "configs"))
workloads = [
    ("CartPole-v1 (preset)", ["CartPole-v1"], seconds),
    ("CartPole-v1 (cartpole_fast.ini)",
     ["CartPole-v1", "--config", os.path.join(root, "configs", "cartpole_fast.ini")], seconds),
    ("Prover-v0 (countries_s3)", ["Prover-v0", "--env.dataset", countries], seconds),
    ("MinAtar Breakout-v1 (preset)", ["MinAtar/Breakout-v1"], "8"),
]
networks = [("10 Gbit/s, 20 us", 10e9 / 8, 20e-6), ("100 Gbit/s, 3 us", 100e9 / 8, 3e-6)]
ranks = [8, 64, 1024]
HALVING_MIN_BYTES = 128 * 1024 # src/cli/comm_mpi.c: from here the tree halves, then gathers
STOPS = 3 # one-value tree sums a update: an env fault, an abort, a stop (trainer.c's any_rank)


def bench(args, threads, mode, secs):
    cmd = [skinner, "bench", "train", *args, "--threads", str(threads), "--seconds", secs, "--json"]
    if mode:
        cmd = ["mpirun", "--allow-run-as-root", "-np", "2", *cmd, "--comm.mode", mode]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def comm_time(mode, k, bw, alpha, A, S, R, C):
    """Seconds of communication per update at k ranks: (allreduces, rollout exchange, rest)."""
    lg = math.log2(k)
    if mode == "exact":
        return (A * (k - 1 + lg) * alpha + 2 * (k - 1) / k * S / bw,
                (k - 1) * alpha + (k - 1) * 2 * R / bw, C * lg * alpha)
    steps = math.floor(lg) + (0 if lg.is_integer() else 2)
    if S / A >= HALVING_MIN_BYTES:
        reduce = A * 2 * steps * alpha + 2 * (k - 1) / k * S / bw
    else:
        reduce = A * steps * alpha + steps * S / bw
    return reduce, 0.0, C * lg * alpha + (k - 1) * R / bw


def measure(args, secs):
    """T_c and, per mode, A, S, R, C (see the top) from alternating runs."""
    one, two = [], {"exact": [], "scale": []}
    for _ in range(repeats): # alternating
        one.append(bench(args, 1, None, secs))
        for mode in two:
            two[mode].append(bench(args, 1, mode, secs))
    found = {"t_c": statistics.median(r["seconds"] / r["updates"] for r in one)}
    for mode, runs in two.items():
        A = statistics.median(r["comm_allreduces_per_update"] for r in runs)
        S = statistics.median(r["comm_allreduce_bytes_per_update"] for r in runs)
        R = statistics.median(r["comm_bytes_per_update"] - r["comm_allreduce_bytes_per_update"] for r in runs)
        calls = statistics.median(r["comm_calls_per_update"] for r in runs)
        if mode == "exact": # the stop decisions (STOPS a update) are tree sums of one value, 1 call
            A -= STOPS      # each; the ordered allreduces make 2 calls each, the exchange 1
            C = calls - 2 * A - 1
        else: # every allreduce a tree: 1 call each at K = 2, 2 when it halves then gathers
            C = calls - A * (2 if S / A >= HALVING_MIN_BYTES else 1)
        found[mode] = {"A": A, "S": S, "R": R, "C": C}
    return found


if recompute:
    lines = [l for l in open(sys.argv[2]) if l.startswith("<!-- measured: ")]
    measured = json.loads(lines[-1][len("<!-- measured: "):-len(" -->\n")])
    for override in sys.argv[3:]:
        name, ms = override.rsplit("=", 1)
        measured[name]["t_c"] = float(ms) / 1e3
else:
    measured = {name: measure(args, secs) for name, args, secs in workloads}

print("| workload | T_c (1 core) | mode | A, S per update | R, C per update | network | "
      + " | ".join(f"K = {k}" for k in ranks) + " |")
print("| --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in ranks) + " |")
for name, found in measured.items():
    t_c = found["t_c"]
    for j, mode in enumerate(("exact", "scale")):
        A, S, R, C = (found[mode][key] for key in "ASRC")
        for i, (net, bw, alpha) in enumerate(networks):
            cells = []
            for k in ranks:
                t_reduce, t_rollout, t_small = comm_time(mode, k, bw, alpha, A, S, R, C)
                t = t_reduce + t_rollout + t_small
                cells.append(f"{100 * t_c / (t_c + t):.0f}% (ar {1e3 * t_reduce:.1f}, ro {1e3 * t_rollout:.1f}, "
                             f"other {1e3 * t_small:.1f} ms)")
            head = f"{name} | {1e3 * t_c:.2f} ms" if i == 0 and j == 0 else " | "
            head += f" | {mode} | {A:.0f}, {S / 1e3:.0f} kB | {R / 1e3:.0f} kB, {C:.0f}" if i == 0 else " | | |"
            print(f"| {head} | {net} | " + " | ".join(cells) + " |")
print("<!-- measured: " + json.dumps(measured) + " -->")
