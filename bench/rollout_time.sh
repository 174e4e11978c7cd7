#!/usr/bin/env bash
# The rollout's and the learning's seconds per update of two builds on the multi-agent presets
# (where the acting forward's rows and the per-role gather matter, issue 53 ask 7), from
# `skinner bench train --json`: REPEATS runs of each, the two programs alternating run by run,
# medians. Prints a markdown table.
# usage: bench/rollout_time.sh OLD_SKINNER NEW_SKINNER [SECONDS=8] [REPEATS=3] [ENV...]
set -euo pipefail
old=$1
new=$2
seconds=${3:-8}
repeats=${4:-3}
shift $(($# < 4 ? $# : 4))
envs=("$@")
[[ ${#envs[@]} -gt 0 ]] || envs=(ConnectFour-v1 ConnectFour-v0 Arena-v0)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the medians of a file of JSON lines: rollout and learn seconds per update, env steps/s
medians() {
    /usr/bin/python3 -c 'import json, statistics, sys
rs = [json.loads(line) for line in open(sys.argv[1])]
def median(key, per_update):
    return statistics.median(r[key] / (r["updates"] if per_update else 1) for r in rs)
print("%.3f %.3f %.0f" % (median("rollout_seconds", True), median("learn_seconds", True), median("sps", False)))' "$1"
}
echo "| preset | rollout s/update old | new | new / old | learn s/update old | new | steps/s old | new | new / old |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for env in "${envs[@]}"; do
    : > "$tmp/old"
    : > "$tmp/new"
    for _ in $(seq "$repeats"); do
        "$old" bench train "$env" --threads 2 --seconds "$seconds" --json 2> /dev/null >> "$tmp/old"
        "$new" bench train "$env" --threads 2 --seconds "$seconds" --json 2> /dev/null >> "$tmp/new"
    done
    read -r ro lo so <<< "$(medians "$tmp/old")"
    read -r rn ln sn <<< "$(medians "$tmp/new")"
    echo "| $env | $ro | $rn | $(awk -v a="$rn" -v b="$ro" 'BEGIN { printf "%.2f", a / b }') | $lo | $ln | $so | $sn | $(awk -v a="$sn" -v b="$so" 'BEGIN { printf "%.2f", a / b }') |"
done
