#!/usr/bin/env bash
# Arena-v0's figures (issue 37 ask 4b): agent steps per second on one core, and the mean
# return over a training run with the preset (configs/arena.ini).
#
# Speed: `skinner bench env Arena-v0 --json` (its default 64 maps of 64 snakes, 4096 rows, one
# thread, uniformly random actions) ROUNDS times: each round's wall-clock rate, its rate per
# CPU-second of the process (user + system time from getrusage: what a loaded machine's
# time-slicing does not lower) and the load average, then the medians.
# Training: `skinner train Arena-v0 --seed SEED --total-steps STEPS`, then metrics.csv's
# mean_return (the last 100 lives) at the first update, a few points along, and the last.
# Writes bench/results/DATE-COMMIT-arena.md.
#
# usage: bench/arena.sh   (ROUNDS=5 SECONDS_EACH=5 STEPS=2000000 SEED=1 THREADS=1
#                          SKINNER=build/skinner; STEPS=0 skips training)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${SKINNER:-$root/build/skinner}
rounds=${ROUNDS:-5}
seconds=${SECONDS_EACH:-5}
steps=${STEPS:-2000000}
seed=${SEED:-1}
threads=${THREADS:-1}
bench_need arena "build first" "$skinner"
bench_init
out=$root/bench/results/$date-$commit-arena.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$skinner" "$rounds" "$seconds" "$tmp" << 'PY'
import json, os, resource, statistics, subprocess, sys
skinner, rounds, seconds, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rows, wall, per_cpu = [], [], []
for k in range(1, rounds + 1):
    load = open("/proc/loadavg").read().split()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([skinner, "bench", "env", "Arena-v0", "--seconds", seconds, "--json"],
                         check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = json.loads(out)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    wall.append(r["agent_sps"])
    per_cpu.append(r["steps"] * r["num_agents"] / used)
    rows.append(f"| {k} | {wall[-1] / 1e6:.1f}M | {per_cpu[-1] / 1e6:.1f}M | "
                f"{r['sps'] / 1e3:.0f}k | {used:.2f} | {load} |")
with open(os.path.join(tmp, "speed.md"), "w") as f:
    f.write("\n".join(rows) + "\n")
with open(os.path.join(tmp, "medians.txt"), "w") as f:
    f.write(f"{statistics.median(wall) / 1e6:.1f}M {statistics.median(per_cpu) / 1e6:.1f}M\n")
PY
read -r median median_cpu < "$tmp/medians.txt"

train_rows=()
if [[ $steps != 0 ]]; then
    train_load=$(cut -d' ' -f1 /proc/loadavg)
    "$skinner" train Arena-v0 --seed "$seed" --threads "$threads" --total-steps "$steps" \
        --run-dir "$tmp/run" --quiet > /dev/null
    # update, steps, wall seconds, mean_return, mean_length at about 0, 10, 25, 50, 75 and 100%
    mapfile -t train_rows < <(python3 - "$tmp/run/metrics.csv" << 'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["mean_return"] != ""]
picks = sorted({0, *(round(f * (len(rows) - 1)) for f in (0.1, 0.25, 0.5, 0.75, 1.0))})
for k in picks:
    r = rows[k]
    print(f"| {r['update']} | {int(r['steps']) / 1e6:.2f}M | {float(r['wall_seconds']):.0f} | "
          f"{float(r['mean_return']):.2f} | {float(r['mean_length']):.0f} |")
PY
    )
fi

{
    echo "# Arena-v0 ($date, $commit)"
    echo
    echo "Machine: $cpu, $(nproc) cores, shared with other jobs: the load average at each start"
    echo "is in the tables."
    echo
    echo "## Speed: one core, 64 maps x 64 snakes (4096 rows), random actions"
    echo
    echo '```'
    echo "skinner bench env Arena-v0 --seconds $seconds --json   # $rounds rounds"
    echo '```'
    echo
    echo "| round | agent steps/s (wall) | agent steps per CPU-second | map steps/s (wall) | CPU seconds | load |"
    echo "|---|---|---|---|---|---|"
    cat "$tmp/speed.md"
    echo
    echo "Medians: **$median agent steps/s** wall clock, **$median_cpu per CPU-second** of the"
    echo "bench's one thread (goal: 20M on one core). On a loaded machine the process gets a share"
    echo "of a core and its wall-clock rate drops with it; the per-CPU-second rate is what a"
    echo "quiet core gives, less the cache it shares."
    if [[ $steps != 0 ]]; then
        echo
        echo "## Training: the preset (configs/arena.ini), seed $seed, $threads thread(s), load $train_load at start"
        echo
        echo '```'
        echo "skinner train Arena-v0 --seed $seed --threads $threads --total-steps $steps"
        echo '```'
        echo
        echo "Steps are agent steps (rows). mean_return: the last 100 lives (+1 a food, -1 a death)."
        echo
        echo "| update | steps | seconds | mean return | mean life length |"
        echo "|---|---|---|---|---|"
        printf '%s\n' "${train_rows[@]}"
    fi
} > "$out"
echo "arena: wrote $out"
cat "$out"
