#!/usr/bin/env bash
# Issue 33 ask 4: the MinAtar preset's convolutions in fp32 against bf16 (policy.cnn_precision,
# oneDNN's bf16 primitives on this AVX-512-BF16 CPU). The training step's speed:
# `skinner bench train MinAtar/Breakout-v1 --threads 2` with each precision, alternating, REPEATS
# runs of SECONDS, medians of env steps/s wall clock and per CPU-second; then one seed of each to
# STEPS env steps, both at once (each run is deterministic for its thread count, so sharing the
# cores changes its time, not its curve): the mean training return at each 10% of the run.
# Writes bench/results/DATE-COMMIT-learner-bf16.md.
# usage: bench/learner_bf16.sh [SKINNER=build/skinner] [REPEATS=5] [SECONDS=3] [STEPS=2000000] [SEED=1]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${1:-$root/build/skinner}
repeats=${2:-5}
seconds=${3:-3}
steps=${4:-2000000}
seed=${5:-1}
bench_need learner_bf16 "build first" "$skinner"
bench_init
out=$root/bench/results/$date-$commit-learner-bf16.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

run() { # precision -> "wall_sps cpu_sps"
    /usr/bin/time -o "$work/time" -f '%U %S' "$skinner" bench train MinAtar/Breakout-v1 --threads 2 \
        --seconds "$seconds" --policy.cnn_precision "$1" --json 2> /dev/null |
        /usr/bin/python3 -c "import json, sys
r = json.load(sys.stdin); user, system = open('$work/time').read().split()[-2:]
print(int(r['sps']), int(r['steps'] / (float(user) + float(system))))"
}
declare -A wall cpu_rate
for ((r = 0; r < repeats; r++)); do
    for p in fp32 bf16; do
        read -r a b <<< "$(run "$p")"
        wall[$p]+="$a " cpu_rate[$p]+="$b "
    done
done
for p in fp32 bf16; do
    "$skinner" train MinAtar/Breakout-v1 --seed "$seed" --threads 2 --total-steps "$steps" \
        --run-dir "$work/run_$p" --quiet --policy.cnn_precision "$p" > "$work/log_$p" 2>&1 &
done
wait
curve() {
    /usr/bin/python3 - "$1/metrics.csv" "$steps" << 'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
total = int(sys.argv[2])
marks = [total * k // 10 for k in range(1, 11)]
cells = []
for m in marks:
    near = [r for r in rows if int(r["steps"]) <= m]
    cells.append("%.1f" % float(near[-1]["mean_return"]) if near else "-")
print(" | ".join(cells), "|", rows[-1]["wall_seconds"])
PY
}
{
    echo "# MinAtar Breakout's convolutions: fp32 against bf16"
    echo
    echo "$date, commit $commit, $cpu ($(nproc) cores). \`bench/learner_bf16.sh\`. Load average before:"
    echo "$load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    echo "Training step speed (\`skinner bench train MinAtar/Breakout-v1 --threads 2\`, $repeats alternating"
    echo "runs of $seconds s, medians; every run in parentheses):"
    echo
    echo "| precision | env steps/s | env steps per CPU-second |"
    echo "|---|---|---|"
    for p in fp32 bf16; do
        # shellcheck disable=SC2086
        echo "| $p | $(median ${wall[$p]}) (${wall[$p]% }) | $(median ${cpu_rate[$p]}) (${cpu_rate[$p]% }) |"
    done
    echo
    echo "Learning (seed $seed, $steps env steps, --threads 2, both runs at once): the mean training"
    echo "return at each tenth of the run, and the run's wall seconds (shared cores):"
    echo
    echo "| precision | 10% | 20% | 30% | 40% | 50% | 60% | 70% | 80% | 90% | 100% | seconds |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    for p in fp32 bf16; do echo "| $p | $(curve "$work/run_$p") |"; done
} > "$out"
echo "learner_bf16: wrote $out" >&2
