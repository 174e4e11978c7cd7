#!/usr/bin/env bash
# Issue 34 ask 5, Pareto search against random search at equal wall time: CartPole-v1's sweep
# (configs/sweeps/cartpole.ini: solve time, six keys, 3 seeds a trial, 2 trials at once) with
# a budget of SECONDS wall seconds each, for sweep seeds 1-3 of each method, the two methods
# alternating so both see the same load. The best solve time so far (the metric: mean over the
# trial's seeds; a trial with an unsolved seed has none) against trials done and against
# seconds. Writes bench/results/DATE-COMMIT-sweep-methods.md.
#
# usage: bench/sweep_methods.sh [DIR]   (default: a new temporary folder)
#   SKINNER=build/skinner the program; SECONDS_BUDGET=90 each sweep's wall seconds;
#   SEEDS="1 2 3" the sweep seeds; SEEDS_PER_TRIAL=N overrides the sweep file's 5.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
dir=${1:-$(mktemp -d)}
skinner=${SKINNER:-$root/build/skinner}
budget=${SECONDS_BUDGET:-90}
seeds=${SEEDS:-1 2 3}
seeds_per_trial=${SEEDS_PER_TRIAL:-}
bench_need sweep_methods "build first" "$skinner"
bench_init
out=$root/bench/results/$date-$commit-sweep-methods.md
mkdir -p "$dir"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for seed in $seeds; do
    for method in pareto random; do
        name=$method-s$seed
        [[ -f $dir/$name/sweep.jsonl && -f $dir/$name.done ]] && continue
        rm -rf "${dir:?}/$name"
        sed -e "s/^method = .*/method = $method/" -e "s/^seconds = .*/seconds = $budget/" \
            -e "s/^trials = .*/trials = 1000/" -e "s/^seed = .*/seed = $seed/" \
            ${seeds_per_trial:+-e "s/^seeds_per_trial = .*/seeds_per_trial = $seeds_per_trial/"} \
            "$root/configs/sweeps/cartpole.ini" > "$dir/$name.ini"
        "$skinner" sweep --config "$dir/$name.ini" --run-dir "$dir/$name" --quiet
        touch "$dir/$name.done"
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/python3 - "$dir" "$out" "$commit" "$date" "$budget" "$load_before" "$load_after" \
    "$seeds" <<'PY'
import json, math, os, statistics, sys
d, out, commit, date, budget, load_before, load_after, seeds = sys.argv[1:]
budget, seeds = float(budget), seeds.split()
seeds_per_trial = next((l.split("=")[1].split(";")[0].strip()
                        for l in open(os.path.join(d, "pareto-s" + seeds[0] + ".ini"))
                        if l.startswith("seeds_per_trial")), "1")
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
def curve(method, seed):
    lines = [json.loads(l) for l in open(os.path.join(d, f"{method}-s{seed}", "sweep.jsonl"))]
    lines.sort(key=lambda l: l["sweep_seconds"])
    best, points = math.inf, []
    for count, line in enumerate(lines, 1):
        if line["status"] == "ok":
            best = min(best, line["metric"])
        points.append((count, line["sweep_seconds"], best))
    return points
def at_trials(points, n):
    vals = [b for c, _, b in points if c <= n]
    return vals[-1] if vals else math.inf
def at_seconds(points, s):
    vals = [b for _, t, b in points if t <= s]
    return vals[-1] if vals else math.inf
fmt = lambda v: "-" if math.isinf(v) else f"{v:.3f}"
trial_marks = [5, 10, 20, 30, 40]
second_marks = [budget / 4, budget / 2, 3 * budget / 4, budget]
with open(out, "w") as f:
    f.write(f"# Pareto search against random search, CartPole-v1 solve time ({date}, commit {commit})\n\n")
    f.write(f"Machine: {cpu}, {os.cpu_count()} cores, shared (load average {load_before} before, "
            f"{load_after} after). Command: `SECONDS_BUDGET={budget:.0f} SEEDS_PER_TRIAL={seeds_per_trial} bench/sweep_methods.sh`: "
            f"configs/sweeps/cartpole.ini with `seconds = {budget:.0f}` per sweep, sweep seeds "
            f"{', '.join(seeds)}, methods alternating. Figures: the best mean solve time (s, over a "
            f"trial's {seeds_per_trial} seeds; lower is better) found so far; '-': no trial solved on "
            "all its seeds yet. Against seconds, a trial counts when it finished: trials running at "
            "the budget's end finish after it, so the last column can be worse than the trials "
            "table's.\n\n")
    for title, marks, pick, unit in (("trials done", trial_marks, at_trials, ""),
                                     ("sweep seconds", second_marks, at_seconds, " s")):
        f.write(f"## Best so far against {title}\n\n| method | sweep seed | trials | "
                + " | ".join(f"{m:g}{unit}" for m in marks) + " |\n|---|---|---|"
                + "---|" * len(marks) + "\n")
        for method in ("pareto", "random"):
            rows = []
            for seed in seeds:
                points = curve(method, seed)
                vals = [pick(points, m) for m in marks]
                rows.append(vals)
                f.write(f"| {method} | {seed} | {len(points)} | " + " | ".join(fmt(v) for v in vals) + " |\n")
            medians = [statistics.median(col) for col in zip(*rows)]
            f.write(f"| {method} | median | | " + " | ".join(fmt(v) for v in medians) + " |\n")
        f.write("\n")
print(out)
PY
