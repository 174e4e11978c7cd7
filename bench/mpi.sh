#!/usr/bin/env bash
# Data-parallel training over Open MPI against threads in one process, on this machine: for
# K = 2 and 3, `skinner bench train ENV --threads K` (one process), `mpirun -np K skinner
# bench train ENV --threads 1` in comm.mode = exact (the same numbers bit for bit as the
# threads) and in comm.mode = scale (each rank learns from its own envs' rows), alternating,
# REPEATS runs each: median steps/s, their ratios (all from this one session), what rank 0
# handed MPI to send per update (payload bytes and collective calls, counted by the program)
# and rank 0's rollout storage. K = 3 oversubscribes the 2 cores.
# Workloads: CartPole-v1 (its preset and configs/cartpole_fast.ini), Prover-v0 on
# countries_s3. Writes bench/results/DATE-COMMIT-mpi-scale.md.
# usage: bench/mpi.sh [SKINNER=build/skinner] [REPEATS=5] [SECONDS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${1:-$root/build/skinner}
repeats=${2:-5}
seconds=${3:-3}
bench_need mpi "build first" "$skinner"
command -v mpirun > /dev/null || { echo "mpi: no mpirun (scripts/setup.sh installs Open MPI)" >&2; exit 2; }
bench_init
countries=$root/../shared/datasets/countries_s3
out=$root/bench/results/$date-$commit-mpi-scale.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpirun=(mpirun --allow-run-as-root --oversubscribe)

workloads=(
    "CartPole-v1 (preset)|CartPole-v1|"
    "CartPole-v1 (cartpole_fast.ini)|CartPole-v1|--config $root/configs/cartpole_fast.ini"
    "Prover-v0 (countries_s3)|Prover-v0|--env.dataset $countries"
)
{
    echo "# Data-parallel training: threads, mpirun in comm.mode = exact and in comm.mode = scale"
    echo
    echo "$date, commit $commit, $cpu ($(nproc) cores), Open MPI $(mpirun --version | head -1 | awk '{print $NF}'),"
    echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared: other"
    echo "sessions' training ran on the same cores, so single runs vary by 2x or more; the medians"
    echo "and ratios below come from one session of alternating runs). \`bench/mpi.sh\` ($repeats runs"
    echo "each, \`skinner bench train\` for $seconds s). Bytes and calls are what rank 0 handed MPI to"
    echo "send per update; rollout is rank 0's rollout storage."
    echo
    echo "| workload | K | K threads, steps/s | np K exact | np K scale | exact / threads | scale / threads | scale / exact | bytes per update, exact / scale | calls per update, exact / scale | rollout bytes per rank, exact / scale |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for w in "${workloads[@]}"; do
        IFS='|' read -r name env args <<< "$w"
        for K in 2 3; do
            rm -f "$tmp"/*.jsonl
            for _ in $(seq "$repeats"); do
                # shellcheck disable=SC2086
                "$skinner" bench train "$env" --threads $K --seconds "$seconds" --json $args >> "$tmp/threads.jsonl"
                for mode in exact scale; do
                    # shellcheck disable=SC2086
                    "${mpirun[@]}" -np $K "$skinner" bench train "$env" --threads 1 --seconds "$seconds" \
                        --json --comm.mode $mode $args >> "$tmp/$mode.jsonl"
                done
            done
            python3 - "$name" "$K" "$tmp" <<'PY'
import json, statistics, sys
name, K, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
runs = {m: [json.loads(l) for l in open(f"{tmp}/{m}.jsonl")] for m in ("threads", "exact", "scale")}
med = lambda m, key: statistics.median(r[key] for r in runs[m])
sps = {m: med(m, "sps") for m in runs}
def each(mode):
    single = ", ".join(f"{r['sps']:,.0f}" for r in runs[mode])
    return f"{sps[mode]:,.0f} ({single})"
print(f"| {name} | {K} | {each('threads')} | {each('exact')} | {each('scale')} | "
      f"{sps['exact'] / sps['threads']:.2f} | {sps['scale'] / sps['threads']:.2f} | "
      f"{sps['scale'] / sps['exact']:.2f} | "
      f"{med('exact', 'comm_bytes_per_update'):,.0f} / {med('scale', 'comm_bytes_per_update'):,.0f} | "
      f"{med('exact', 'comm_calls_per_update'):.0f} / {med('scale', 'comm_calls_per_update'):.0f} | "
      f"{med('exact', 'rollout_bytes_per_rank'):,.0f} / {med('scale', 'rollout_bytes_per_rank'):,.0f} |")
PY
        done
    done
} | tee "$out"
echo "wrote $out" >&2
