#!/usr/bin/env bash
# The rollout's and the learning's seconds per update of two builds on the multi-agent presets
# (where the acting forward's rows and the per-role gather matter, issue 53 ask 7), from
# `skinner bench train --json`: REPEATS runs of each, the two programs alternating run by run
# (bench/lib.sh's alternate), medians. Prints a markdown table.
# usage: bench/rollout_time.sh OLD_SKINNER NEW_SKINNER [SECONDS=8] [REPEATS=3] [ENV...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
usage=$(sed -n "s/^# \(usage: .*\)/\1/p" "$0") # the header's line
[[ $# -ge 2 ]] || { echo "rollout_time: $usage" >&2; exit 2; }
bench_need rollout_time "$usage" "$1" "$2"
old=$1
new=$2
seconds=${3:-8}
repeats=${4:-3}
threads=2
shift $(($# < 4 ? $# : 4))
envs=("$@")
[[ ${#envs[@]} -gt 0 ]] || envs=(ConnectFour-v1 ConnectFour-v0 Arena-v0)
bench_init # both programs read this tree's presets (an old build's own folder may have none)
echo "| preset | rollout s/update old | new | new / old | learn s/update old | new | steps/s old | new | new / old |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
# seconds to three places, or n/a (a program without the env)
seconds3() { if [[ $1 == n/a ]]; then echo n/a; else printf '%.3f' "$1"; fi; }
for env in "${envs[@]}"; do
    read -r so _ ro lo sn _ rn ln <<< "$(alternate "$old" "" "$new" "" "$env" "")"
    echo "| $env | $(seconds3 "$ro") | $(seconds3 "$rn") | $(ratio "$rn" "$ro") | $(seconds3 "$lo") |" \
        "$(seconds3 "$ln") | $so | $sn | $(ratio "$sn" "$so") |"
done
