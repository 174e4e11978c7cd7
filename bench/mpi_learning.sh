#!/usr/bin/env bash
# Learning curves of comm.mode = scale against threads (docs/distributed.md): the CartPole-v1
# preset, SEEDS seeds, `skinner train CartPole-v1 --threads 2 --seed S` against `mpirun -np 2
# skinner train CartPole-v1 --threads 1 --comm.mode scale --seed S` (the same batch per
# update: 16 envs x 128 steps over the run), TOTAL steps each. Reports, per mode, the mean
# return of the 100-episode window at a few step counts (median and range over the seeds)
# and the steps at which each seed first reached the solved threshold (475). Steps, not
# seconds: the machine is shared. Writes bench/results/DATE-COMMIT-mpi-scale-learning.md.
# usage: bench/mpi_learning.sh [SKINNER=build/skinner] [SEEDS=5] [TOTAL=245760]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${1:-$root/build/skinner}
seeds=${2:-5}
total=${3:-245760}
bench_need mpi_learning "build first" "$skinner"
command -v mpirun > /dev/null || { echo "mpi_learning: no mpirun" >&2; exit 2; }
bench_init
out=$root/bench/results/$date-$commit-mpi-scale-learning.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for seed in $(seq "$seeds"); do # alternating
    "$skinner" train CartPole-v1 --threads 2 --seed "$seed" --total-steps "$total" --quiet \
        --run-dir "$tmp/threads-$seed" > /dev/null
    mpirun --allow-run-as-root -np 2 "$skinner" train CartPole-v1 --threads 1 --comm.mode scale \
        --seed "$seed" --total-steps "$total" --quiet --run-dir "$tmp/scale-$seed" > /dev/null
done
{
    echo "# Learning: comm.mode = scale (mpirun -np 2 x 1 thread) against 2 threads, CartPole-v1 preset"
    echo
    echo "$date, commit $commit, \`bench/mpi_learning.sh\`: seeds 1-$seeds, $total steps each (the"
    echo "preset's 16 envs x 128 steps a update in both). Mean return of the last 100 episodes at"
    echo "each step count: median over the seeds [min, max]; then the steps at which each seed's"
    echo "window first reached 475 (the solved threshold; - : not within $total steps)."
    echo
    python3 - "$tmp" "$seeds" "$total" <<'PY'
import csv, statistics, sys
tmp, seeds, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
marks = [s for s in (20480, 40960, 61440, 81920, 122880, 163840, 245760) if s <= total]
def rows(mode, seed):
    with open(f"{tmp}/{mode}-{seed}/metrics.csv") as f:
        return [(int(r["steps"]), float(r["mean_return"])) for r in csv.DictReader(f)]
print("| mode | " + " | ".join(f"{m:,} steps" for m in marks) + " | solved at (per seed) |")
print("| --- | " + " | ".join("---" for _ in marks) + " | --- |")
for mode, label in (("threads", "2 threads"), ("scale", "np 2 scale")):
    runs = [rows(mode, s) for s in range(1, seeds + 1)]
    cells = []
    for m in marks:
        at = [next(ret for steps, ret in run if steps >= m) for run in runs]
        cells.append(f"{statistics.median(at):.0f} [{min(at):.0f}, {max(at):.0f}]")
    solved = [next((f"{steps:,}" for steps, ret in run if ret >= 475), "-") for run in runs]
    print(f"| {label} | " + " | ".join(cells) + " | " + ", ".join(solved) + " |")
PY
} | tee "$out"
echo "wrote $out" >&2
