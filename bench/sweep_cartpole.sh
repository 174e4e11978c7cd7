#!/usr/bin/env bash
# Issue 34 ask 5, the CartPole-v1 figure: a sweep of at most 10 minutes on the 2 cores
# (configs/sweeps/cartpole.ini: Pareto search on solve time, 420 s budget, 2 trials at once,
# seeds 1-5 a trial, a trial with an unsolved seed failed), then its best config against the
# preset on seeds 101-105, which no trial ran, alternating runs so both see the same load, at
# one thread (as the sweep's trials ran) and at two (the preset's threads = 0 here). Writes bench/results/DATE-COMMIT-sweep-cartpole.md.
#
# usage: bench/sweep_cartpole.sh [SWEEP_DIR]   (default: a new temporary folder)
#   SKINNER=build/skinner the program; SWEEP=configs/sweeps/cartpole.ini the sweep file.
# Solve times are wall seconds of runs sharing the machine with whatever else runs: the
# table gives the load average, and the comparison is fair only between its own columns.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
dir=${1:-$(mktemp -d)/sweep}
skinner=${SKINNER:-$root/build/skinner}
sweep=${SWEEP:-$root/configs/sweeps/cartpole.ini}
bench_need sweep_cartpole "build first" "$skinner"
bench_init
out=$root/bench/results/$date-$commit-sweep-cartpole.md
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s.%N)
if [[ -f $dir/sweep.ini ]]; then "$skinner" sweep --resume "$dir" > /dev/null
else "$skinner" sweep --config "$sweep" --run-dir "$dir" > /dev/null; fi
sweep_seconds=$(echo "$(date +%s.%N) - $start" | bc)
"$skinner" sweep report "$dir" > "$dir/report.txt"
runs=$dir/validate
mkdir -p "$runs"
for threads in 1 2; do
    for seed in 101 102 103 104 105; do
        "$skinner" train CartPole-v1 --seed "$seed" --threads "$threads" --stop-when-solved \
            --run-dir "$runs/preset-t$threads-s$seed" --force --quiet > /dev/null
        "$skinner" train CartPole-v1 --config "$dir/best.ini" --seed "$seed" --threads "$threads" \
            --stop-when-solved --total-steps 500000 \
            --run-dir "$runs/best-t$threads-s$seed" --force --quiet > /dev/null
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/python3 - "$dir" "$runs" "$out" "$commit" "$date" "$sweep_seconds" "$load_before" \
    "$load_after" "$sweep" "$root" <<'PY'
import json, os, platform, statistics, subprocess, sys
d, runs, out, commit, date, seconds, load_before, load_after, sweep, root = sys.argv[1:]
lines = [json.loads(l) for l in open(os.path.join(d, "sweep.jsonl"))]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
def row(kind, threads):
    times, steps, solved = [], [], 0
    for seed in range(101, 106):
        s = json.load(open(os.path.join(runs, f"{kind}-t{threads}-s{seed}", "summary.json")))
        if s["solved"]:
            solved += 1
            times.append(s["solved_at_seconds"])
            steps.append(s["solved_at_steps"])
    med = statistics.median(times) if times else float("nan")
    med_steps = statistics.median(steps) if steps else float("nan")
    return solved, med, med_steps, times
best = open(os.path.join(d, "best.ini")).read()
report = open(os.path.join(d, "report.txt")).read()
with open(out, "w") as f:
    f.write(f"# CartPole-v1: a sweep's best config against the preset ({date}, commit {commit})\n\n")
    f.write(f"Machine: {cpu}, {os.cpu_count()} cores, shared (load average {load_before} before, "
            f"{load_after} after: other training ran alongside). Command: `bench/sweep_cartpole.sh` "
            f"(sweep file `{os.path.relpath(sweep, root)}`).\n\n")
    ok = sum(1 for l in lines if l["status"] == "ok")
    f.write(f"The sweep: {len(lines)} trials ({ok} ok, {len(lines) - ok} failed: a seed that did not "
            f"solve within the trial's steps has no solve time) in {float(seconds):.0f} s of wall time.\n\n")
    f.write("Seeds 101-105 (no trial ran them), `--stop-when-solved`, preset and best run alternately:\n\n")
    f.write("| config | threads | solved | median solve s | median solve steps | solve seconds |\n|---|---|---|---|---|---|\n")
    for threads in (1, 2):
        for kind in ("preset", "best"):
            solved, med, med_steps, times = row(kind, threads)
            f.write(f"| {kind} | {threads} | {solved}/5 | {med:.3f} | {med_steps:.0f} | "
                    + ", ".join(f"{t:.3f}" for t in times) + " |\n")
    f.write("\nThe best config (`best.ini`, the report's pick: the best mean of a trial and its re-tests):\n\n```ini\n"
            + best + "```\n\nThe report:\n\n```text\n" + report + "```\n")
print(out)
PY
