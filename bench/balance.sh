#!/usr/bin/env bash
# Issue 33 ask 6: the share of the rollout the threads spend waiting for each other, where
# steps cost uneven time, with one slice of the envs per thread (train.slices = 0, the default)
# and with more slices than threads, taken as each thread comes free (train.slices = K). For
# each workload, REPEATS runs of `skinner bench train ENV --threads THREADS --seconds S --json`
# alternating the two: medians of the idle share (1 - thread-seconds in jobs / (threads x the
# rollout's wall seconds)), of env steps/s and of rollout seconds per 1000 env steps, and the
# ratio of steps/s. Writes bench/results/DATE-COMMIT-balance.md with the load.
# usage: bench/balance.sh [BUILD=build] [REPEATS=5] [THREADS=2]
# (BUILD holds skinner and bench/libuneven_plugin.so: cmake --build BUILD --target skinner_cli
#  uneven_plugin)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
build=${1:-$root/build}
repeats=${2:-5}
threads=${3:-2}
skinner=$build/skinner
plugin=$build/bench/libuneven_plugin.so
for f in "$skinner" "$plugin"; do
    [[ -e $f ]] || { echo "balance: no $f (cmake --build BUILD --target skinner_cli uneven_plugin)" >&2; exit 2; }
done
bench_init
data=$root/../shared/datasets
out=$root/bench/results/$date-$commit-balance.md
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# name|env and options|seconds a run|slices
workloads=(
    "Uneven-v0 (bench/uneven_plugin.c: 64 envs, the first 16 eight times slower, steps 1-4x)|$plugin:Uneven-v0 --env.num_envs 64|4|16"
    "Prover-v0 on WN18RR (configs/prover_wn18rr.ini, 128 envs)|Prover-v0 --config $root/configs/prover_wn18rr.ini --env.dataset $data/wn18rr|8|16"
    "Morpho-v0 (configs/morpho.ini, 4 envs: host epochs with seeds blending)|Morpho-v0|12|4"
)
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# one run: "idle sps rollout_ms_per_1000_steps"
run() {
    local spec=$1 seconds=$2 slices=$3
    # shellcheck disable=SC2086
    "$skinner" bench train $spec --threads "$threads" --seconds "$seconds" --train.slices "$slices" \
        --json 2> /dev/null | /usr/bin/python3 -c "import json, sys
r = json.load(sys.stdin)
print(r['rollout_idle'], r['sps'], 1e6 * r['rollout_seconds'] / r['steps'])"
}

rows=()
for w in "${workloads[@]}"; do
    IFS='|' read -r name spec seconds slices <<< "$w"
    a_idle=() a_sps=() a_ms=() b_idle=() b_sps=() b_ms=()
    for ((r = 0; r < repeats; r++)); do
        read -r i s m <<< "$(run "$spec" "$seconds" 0)"
        a_idle+=("$i") a_sps+=("$s") a_ms+=("$m")
        read -r i s m <<< "$(run "$spec" "$seconds" "$slices")"
        b_idle+=("$i") b_sps+=("$s") b_ms+=("$m")
    done
    row=$(awk -v n="$name" -v k="$slices" -v t="$threads" -v ai="$(median "${a_idle[@]}")" \
        -v bi="$(median "${b_idle[@]}")" -v as="$(median "${a_sps[@]}")" -v bs="$(median "${b_sps[@]}")" \
        -v am="$(median "${a_ms[@]}")" -v bm="$(median "${b_ms[@]}")" 'BEGIN {
        printf "| %s | %.1f%% | %.1f%% (%d slices) | %.0f | %.0f | %.2f | %.1f | %.1f |", n, 100 * ai,
            100 * bi, k, as, bs, bs / as, am, bm }')
    echo "balance: $row" >&2
    rows+=("$row")
done

{
    echo "# Balanced stepping: threads idle in the rollout, one slice per thread against more slices"
    echo
    echo "$date, commit $commit, $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) cores)."
    echo "\`bench/balance.sh\` ($repeats runs each, alternating; \`skinner bench train ENV --threads $threads"
    echo "--train.slices K\`). Load average before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo "Idle: the share of the rollout's thread-seconds spent waiting for the slowest thread."
    echo
    echo "| workload | idle, a slice per thread | idle, more slices | steps/s, a slice per thread | more slices | ratio | rollout ms per 1000 steps, a slice per thread | more slices |"
    echo "|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
} > "$out"
echo "balance: wrote $out" >&2
