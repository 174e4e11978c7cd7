#!/usr/bin/env bash
# Arena-v0's figures (issue 37 ask 4b): agent steps per second on one core, and the mean
# return over a training run with the preset (configs/arena.ini).
#
# Speed: `skinner bench env Arena-v0` (its default 64 maps of 64 snakes, 4096 rows, one
# thread, uniformly random actions) ROUNDS times; the median and each round's load average.
# Training: `skinner train Arena-v0 --seed SEED --total-steps STEPS`, then metrics.csv's
# mean_return (the last 100 lives) at the first update, a few points along, and the last.
# Writes bench/results/DATE-COMMIT-arena.md.
#
# usage: bench/arena.sh   (ROUNDS=5 SECONDS_EACH=5 STEPS=2000000 SEED=1 THREADS=1
#                          SKINNER=build/skinner; STEPS=0 skips training)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
skinner=${SKINNER:-$root/build/skinner}
rounds=${ROUNDS:-5}
seconds=${SECONDS_EACH:-5}
steps=${STEPS:-2000000}
seed=${SEED:-1}
threads=${THREADS:-1}
[[ -x $skinner ]] || { echo "arena: no skinner at $skinner (build first)" >&2; exit 2; }
export SKINNER_CONFIG_DIR=$root/configs
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%Y-%m-%d)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
out=$root/bench/results/$date-$commit-arena.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

speed_rows=()
for ((round = 1; round <= rounds; round++)); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$skinner" bench env Arena-v0 --seconds "$seconds" --json > "$tmp/round.json"
    read -r env_sps agent_sps <<< "$(python3 -c 'import json,sys; r = json.load(open(sys.argv[1])); print(r["sps"], r["agent_sps"])' "$tmp/round.json")"
    cat "$tmp/round.json" >> "$tmp/rounds.jsonl"
    speed_rows+=("| $round | $(awk -v s="$agent_sps" 'BEGIN { printf "%.1fM", s / 1e6 }') | $(awk -v s="$env_sps" 'BEGIN { printf "%.0fk", s / 1e3 }') | $load |")
done
median=$(python3 -c 'import json,statistics,sys; print("%.1fM" % (statistics.median(json.loads(l)["agent_sps"] for l in open(sys.argv[1])) / 1e6))' "$tmp/rounds.jsonl")

train_rows=()
if [[ $steps != 0 ]]; then
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$skinner" train Arena-v0 --seed "$seed" --threads "$threads" --total-steps "$steps" \
        --run-dir "$tmp/run" --quiet > /dev/null
    train_load=$load
    # update, steps, wall seconds, mean_return, mean_length at about 0, 10, 25, 50, 75 and 100%
    mapfile -t train_rows < <(python3 - "$tmp/run/metrics.csv" << 'EOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["mean_return"] != ""]
picks = sorted({0, *(round(f * (len(rows) - 1)) for f in (0.1, 0.25, 0.5, 0.75, 1.0))})
for k in picks:
    r = rows[k]
    print(f"| {r['update']} | {int(r['steps']) / 1e6:.2f}M | {float(r['wall_seconds']):.0f} | "
          f"{float(r['mean_return']):.2f} | {float(r['mean_length']):.0f} |")
EOF
    )
fi

{
    echo "# Arena-v0 ($date, $commit)"
    echo
    echo "Machine: $cpu, $(nproc) cores; load average at each start in the tables (the machine is"
    echo "shared: a loaded round is slower, the quiet ones are the figure)."
    echo
    echo "## Speed: one core, 64 maps x 64 snakes (4096 rows), random actions"
    echo
    echo '```'
    echo "skinner bench env Arena-v0 --seconds $seconds --json   # $rounds rounds"
    echo '```'
    echo
    echo "| round | agent steps/s | map steps/s | load |"
    echo "|---|---|---|---|"
    printf '%s\n' "${speed_rows[@]}"
    echo
    echo "Median: **$median agent steps/s** on one core (goal: 20M)."
    if [[ $steps != 0 ]]; then
        echo
        echo "## Training: the preset (configs/arena.ini), seed $seed, $threads thread(s), load $train_load at start"
        echo
        echo '```'
        echo "skinner train Arena-v0 --seed $seed --threads $threads --total-steps $steps"
        echo '```'
        echo
        echo "Steps count agent steps (rows). mean_return: the last 100 lives (+1 a food, -1 a death)."
        echo
        echo "| update | steps | seconds | mean return | mean life length |"
        echo "|---|---|---|---|---|"
        printf '%s\n' "${train_rows[@]}"
    fi
} > "$out"
echo "arena: wrote $out"
cat "$out"
