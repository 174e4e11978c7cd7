#!/usr/bin/env bash
# Issue 32's time goal: wall seconds for MinAtar/GAME-v1 to reach a mean training return of
# TARGET (the last 100 episodes, as metrics.csv's mean_return) on both cores, for training
# seeds SEEDS, one run at a time; each run stops once it is there (or after LIMIT seconds).
# The time is the run's own wall_seconds at the first row at or above TARGET (its updates'
# clock, not the process start). Writes bench/results/DATE-COMMIT-minatar-time-to.md.
#
# usage: bench/minatar_time_to.sh [CONFIG...]
#   each CONFIG is '-' (the env's preset) or an INI layered on it with --config
#   (default: '-' configs/minatar_fast.ini); GAME=Breakout TARGET=28 SEEDS="1 2 3"
#   THREADS=2 LIMIT=300 SKINNER=build/skinner
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${SKINNER:-$root/build/skinner}
game=${GAME:-Breakout}
target=${TARGET:-28}
seeds=${SEEDS:-1 2 3}
threads=${THREADS:-2}
limit=${LIMIT:-300}
configs=("$@")
[[ ${#configs[@]} -gt 0 ]] || configs=(- "$root/configs/minatar_fast.ini")
bench_need minatar_time_to "build first" "$skinner"
bench_init
out=$root/bench/results/$date-$commit-minatar-time-to.md
tmp=$(mktemp -d)
pid=
trap 'rm -rf "$tmp"; [[ -z $pid ]] || kill "$pid" 2> /dev/null || true' EXIT

# the first metrics.csv row at or above the target: "steps seconds", or nothing
reached() {
    [[ -f $1 ]] || return 0 # not written yet
    awk -F, -v t="$target" 'NR > 1 && $5 != "" && $5 + 0 >= t { print $2, $3; exit }' "$1"
}

rows=()
for config in "${configs[@]}"; do
    for seed in $seeds; do
        dir=$tmp/run
        rm -rf "$dir"
        args=(train "MinAtar/$game-v1" --seed "$seed" --threads "$threads" --run-dir "$dir" --quiet)
        [[ $config == - ]] || args+=(--config "$config")
        load=$(cut -d' ' -f1 /proc/loadavg)
        "$skinner" "${args[@]}" > /dev/null 2>&1 &
        pid=$!
        hit=
        for ((i = 0; i < limit * 5; i++)); do
            sleep 0.2
            hit=$(reached "$dir/metrics.csv")
            [[ -n $hit ]] && break
            kill -0 "$pid" 2> /dev/null || break
        done
        kill "$pid" 2> /dev/null || true
        wait "$pid" 2> /dev/null || true
        name=$([[ $config == - ]] && echo "preset" || basename "$config")
        if [[ -n $hit ]]; then
            read -r steps seconds <<< "$hit"
            rows+=("| $name | $seed | $(awk -v s="$steps" 'BEGIN { printf "%.2fM", s / 1e6 }') | $seconds | $load |")
        else
            rows+=("| $name | $seed | not reached | > $limit | $load |")
        fi
        echo "minatar_time_to: ${rows[-1]}" >&2
    done
done

{
    echo "# MinAtar/$game-v1 to a training return of $target on $threads threads"
    echo
    echo "$date, commit $commit, $cpu ($(nproc) cores). \`bench/minatar_time_to.sh ${configs[*]}\`"
    echo "(GAME=$game TARGET=$target SEEDS=\"$seeds\" THREADS=$threads): one run at a time, each"
    echo "stopped at the first update whose mean return over the last 100 training episodes is"
    echo "$target or more; seconds are the run's own wall_seconds there. Load: the 1-minute load"
    echo "average as the run started."
    echo
    echo "| config | seed | steps | seconds | load |"
    echo "| --- | --- | --- | --- | --- |"
    printf '%s\n' "${rows[@]}"
} > "$out"
echo "wrote $out"
