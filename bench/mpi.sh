#!/usr/bin/env bash
# Data-parallel training over Open MPI against threads in one process, on this machine:
# `mpirun -np 2 skinner bench train ENV --threads 1` against `skinner bench train ENV
# --threads 2` (the same two cores, the same computation bit for bit), alternating,
# REPEATS runs each: median steps/s, their ratio, and what rank 0 handed MPI to send
# per update (payload bytes and collective calls, counted by the program, not estimated).
# Workloads: CartPole-v1 (its preset and configs/cartpole_fast.ini), Prover-v0 on
# countries_s3, Morpho-v0. Writes bench/results/DATE-COMMIT-mpi.md.
# usage: bench/mpi.sh [SKINNER=build/skinner] [REPEATS=5] [SECONDS=3] [MORPHO_SECONDS=12]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
skinner=${1:-$root/build/skinner}
repeats=${2:-5}
seconds=${3:-3}
morpho_seconds=${4:-12}
[[ -x $skinner ]] || { echo "mpi: no skinner at $skinner (build first)" >&2; exit 2; }
command -v mpirun > /dev/null || { echo "mpi: no mpirun (scripts/setup.sh installs Open MPI)" >&2; exit 2; }
export SKINNER_CONFIG_DIR=$root/configs
countries=$root/../shared/datasets/countries_s3
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%Y-%m-%d)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
out=$root/bench/results/$date-$commit-mpi.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpirun=(mpirun --allow-run-as-root -np 2)

workloads=(
    "CartPole-v1 (preset)|CartPole-v1|$seconds|"
    "CartPole-v1 (cartpole_fast.ini)|CartPole-v1|$seconds|--config $root/configs/cartpole_fast.ini"
    "Prover-v0 (countries_s3)|Prover-v0|$seconds|--env.dataset $countries"
    "Morpho-v0 (preset)|Morpho-v0|$morpho_seconds|"
)
{
    echo "# Data-parallel training: mpirun -np 2 x 1 thread against 2 threads in one process"
    echo
    echo "$date, commit $commit, $cpu ($(nproc) cores), Open MPI $(mpirun --version | head -1 | awk '{print $NF}'),"
    echo "\`bench/mpi.sh\` ($repeats runs each, alternating; \`skinner bench train\` for $seconds s,"
    echo "Morpho-v0 for $morpho_seconds s). Both modes compute the same numbers (tests/mpi_check.sh);"
    echo "bytes and calls are what rank 0 handed MPI to send per update (payload; each collective"
    echo "call counted once)."
    echo
    echo "| workload | 2 threads, steps/s | np 2 x 1 thread, steps/s | np 2 / threads | bytes per update | calls per update | updates/s (np 2) |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    for w in "${workloads[@]}"; do
        IFS='|' read -r name env secs args <<< "$w"
        rm -f "$tmp/one.jsonl" "$tmp/mpi.jsonl"
        for _ in $(seq "$repeats"); do
            # shellcheck disable=SC2086
            "$skinner" bench train "$env" --threads 2 --seconds "$secs" --json $args >> "$tmp/one.jsonl"
            # shellcheck disable=SC2086
            "${mpirun[@]}" "$skinner" bench train "$env" --threads 1 --seconds "$secs" --json $args \
                >> "$tmp/mpi.jsonl"
        done
        python3 - "$name" "$tmp/one.jsonl" "$tmp/mpi.jsonl" <<'PY'
import json, statistics, sys
name = sys.argv[1]
one = [json.loads(l) for l in open(sys.argv[2])]
mpi = [json.loads(l) for l in open(sys.argv[3])]
a = statistics.median(r["sps"] for r in one)
b = statistics.median(r["sps"] for r in mpi)
bytes_ = statistics.median(r["comm_bytes_per_update"] for r in mpi)
calls = statistics.median(r["comm_calls_per_update"] for r in mpi)
ups = statistics.median(r["updates"] / r["seconds"] for r in mpi)
runs = lambda rs: ", ".join(f"{r['sps']:,.0f}" for r in rs)
print(f"| {name} | {a:,.0f} ({runs(one)}) | {b:,.0f} ({runs(mpi)}) | {b / a:.2f} | {bytes_:,.0f} | {calls:.0f} | {ups:.1f} |")
PY
    done
} | tee "$out"
echo "wrote $out" >&2
