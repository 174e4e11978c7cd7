#!/usr/bin/env python3
"""Cost model of data-parallel training at scale, from measurements on this machine.

For each workload it measures, with `skinner bench train` (median of REPEATS runs):
  - T_c, the compute of one update on one core (1 process, 1 thread): in weak scaling every
    rank keeps the preset's envs, so a rank's rollout and its share of every minibatch (1/K of
    a K times larger batch) cost what one process of one thread spends per update;
  - under `mpirun -np 2 --threads 1`: what rank 0 hands MPI per update, split into the ordered
    allreduces (A calls, S bytes: at K = 2 each sends n of its n-byte vector, so S = sum of n)
    and the rest (the rollout exchange and small merges: R bytes, C calls).
Then, for K ranks on a network of bandwidth B with latency alpha per message, per update:
  allreduces  A (K - 1 + log2 K) alpha + 2 (K - 1) / K * S / B
              (an alltoall of K chunks, then an allgather; sums in rank order)
  rollout     (K - 1) alpha + (K - 1) * R_rank / B
              (every rank receives every other rank's block; R_rank = 2 R: at K = 2 a rank's
              block is half the preset's rollout, at scale each rank holds a whole preset)
  small       C log2 K alpha
and the efficiency T_c / (T_c + T_comm), no overlap of communication with compute.
usage: bench/mpi_model.py [SKINNER] [REPEATS] [SECONDS]; prints a Markdown table.
"""
import json
import math
import os
import statistics
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
skinner = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "skinner")
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
seconds = sys.argv[3] if len(sys.argv) > 3 else "3"
countries = os.path.join(root, "..", "shared", "datasets", "countries_s3")
env = dict(os.environ, SKINNER_CONFIG_DIR=os.path.join(root, "configs"))
workloads = [
    ("CartPole-v1 (preset)", ["CartPole-v1"], seconds),
    ("CartPole-v1 (cartpole_fast.ini)",
     ["CartPole-v1", "--config", os.path.join(root, "configs", "cartpole_fast.ini")], seconds),
    ("Prover-v0 (countries_s3)", ["Prover-v0", "--env.dataset", countries], seconds),
    ("Morpho-v0 (preset)", ["Morpho-v0"], "12"),
]
networks = [("10 Gbit/s, 20 us", 10e9 / 8, 20e-6), ("100 Gbit/s, 3 us", 100e9 / 8, 3e-6)]
ranks = [8, 64, 1024]


def bench(args, threads, mpi, secs):
    cmd = [skinner, "bench", "train", *args, "--threads", str(threads), "--seconds", secs, "--json"]
    if mpi:
        cmd = ["mpirun", "--allow-run-as-root", "-np", "2", *cmd]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


print("| workload | T_c (1 core) | A, S per update | R, C per update | network | "
      + " | ".join(f"K = {k}" for k in ranks) + " |")
print("| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in ranks) + " |")
for name, args, secs in workloads:
    one = [bench(args, 1, False, secs) for _ in range(repeats)]
    two = [bench(args, 1, True, secs) for _ in range(repeats)]
    t_c = statistics.median(r["seconds"] / r["updates"] for r in one)
    A = statistics.median(r["comm_allreduces_per_update"] for r in two)
    S = statistics.median(r["comm_allreduce_bytes_per_update"] for r in two)
    R = statistics.median(r["comm_bytes_per_update"] - r["comm_allreduce_bytes_per_update"] for r in two)
    C = statistics.median(r["comm_calls_per_update"] for r in two) - 2 * A - 1
    for i, (net, bw, alpha) in enumerate(networks):
        cells = []
        for k in ranks:
            lg = math.log2(k)
            t_reduce = A * (k - 1 + lg) * alpha + 2 * (k - 1) / k * S / bw
            t_rollout = (k - 1) * alpha + (k - 1) * 2 * R / bw
            t_small = C * lg * alpha
            t = t_reduce + t_rollout + t_small
            cells.append(f"{100 * t_c / (t_c + t):.0f}% (ar {1e3 * t_reduce:.1f}, ro {1e3 * t_rollout:.1f} ms)")
        head = (f"{name} | {1e3 * t_c:.2f} ms | {A:.0f}, {S / 1e3:.0f} kB | {R / 1e3:.0f} kB, {C:.0f}"
                if i == 0 else " | | |")
        print(f"| {head} | {net} | " + " | ".join(cells) + " |")
    sys.stdout.flush()
