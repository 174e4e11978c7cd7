#!/usr/bin/env bash
# Issue 34 ask 5, the Prover figure: Prover-v0 on family (configs/prover_family.ini) at a fixed
# budget of STEPS env steps, RL only (no KGE): a Pareto sweep of the learning rate, entropy
# coefficient, update epochs and horizon on `skinner eval`'s MRR (metric = eval.mrr), then the
# best config against the preset on seeds 11-13, which no trial ran, alternating. Writes
# bench/results/DATE-COMMIT-sweep-prover.md.
#
# usage: bench/sweep_prover.sh [DIR]   (default: a new temporary folder)
#   SKINNER=build/skinner the program; STEPS=100000 the step budget of every run; TRIALS=12;
#   SHARED=../shared (the datasets).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(mktemp -d)}
skinner=${SKINNER:-$root/build/skinner}
steps=${STEPS:-100000}
trials=${TRIALS:-12}
shared=$(cd "${SHARED:-$root/../shared}" && pwd)
[[ -x $skinner ]] || { echo "sweep_prover: no skinner at $skinner (build first)" >&2; exit 2; }
export SKINNER_CONFIG_DIR=$root/configs
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%Y-%m-%d)
out=$root/bench/results/$date-$commit-sweep-prover.md
mkdir -p "$dir"
cat > "$dir/prover.ini" <<INI
[sweep]
env = Prover-v0
config = $root/configs/prover_family.ini
method = pareto
metric = eval.mrr
eval = --threads 1
goal = max
cost = seconds
trials = $trials
trials_at_once = 2
threads_per_trial = 1
seeds_per_trial = 1

[env]
dataset = $shared/datasets/family

[train]
total_steps = $steps

[ppo.learning_rate]
distribution = log_uniform
min = 1e-4
max = 3e-3
centre = 0.00025

[ppo.ent_coef]
distribution = uniform
min = 0
max = 0.05
centre = 0.01

[ppo.update_epochs]
distribution = integer
min = 1
max = 8
centre = 4

[ppo.horizon]
distribution = pow2
min = 16
max = 128
centre = 32
INI
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s.%N)
if [[ -f $dir/sweep/sweep.ini ]]; then "$skinner" sweep --resume "$dir/sweep" > /dev/null
else "$skinner" sweep --config "$dir/prover.ini" --run-dir "$dir/sweep" > /dev/null; fi
sweep_seconds=$(echo "$(date +%s.%N) - $start" | bc)
"$skinner" sweep report "$dir/sweep" > "$dir/report.txt"
for seed in 11 12 13; do
    "$skinner" train Prover-v0 --config "$root/configs/prover_family.ini" \
        --env.dataset "$shared/datasets/family" --total-steps "$steps" --seed "$seed" \
        --threads 1 --run-dir "$dir/preset-s$seed" --force --quiet > /dev/null
    "$skinner" eval Prover-v0 --checkpoint "$dir/preset-s$seed" --json --threads 1 \
        > "$dir/preset-s$seed.json" 2> /dev/null
    "$skinner" train Prover-v0 --config "$dir/sweep/best.ini" --seed "$seed" \
        --run-dir "$dir/best-s$seed" --force --quiet > /dev/null
    "$skinner" eval Prover-v0 --checkpoint "$dir/best-s$seed" --json --threads 1 \
        > "$dir/best-s$seed.json" 2> /dev/null
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/python3 - "$dir" "$out" "$commit" "$date" "$sweep_seconds" "$load_before" "$load_after" \
    "$steps" <<'PY'
import json, os, statistics, sys
d, out, commit, date, seconds, load_before, load_after, steps = sys.argv[1:]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
lines = [json.loads(l) for l in open(os.path.join(d, "sweep", "sweep.jsonl"))]
ok = sum(1 for l in lines if l["status"] == "ok")
with open(out, "w") as f:
    f.write(f"# Prover-v0 on family: a sweep's best config against the preset, RL-only MRR at "
            f"{int(steps):,} steps ({date}, commit {commit})\n\n")
    f.write(f"Machine: {cpu}, {os.cpu_count()} cores, shared (load average {load_before} before, "
            f"{load_after} after). Command: `STEPS={steps} bench/sweep_prover.sh` (its sweep file "
            "is written by the script: four PPO keys, `metric = eval.mrr`).\n\n")
    f.write(f"The sweep: {len(lines)} trials ({ok} ok) in {float(seconds):.0f} s. Then seeds 11-13 "
            "(no trial ran them), preset and best alternately, each evaluated by `skinner eval "
            "Prover-v0 --checkpoint RUN --json` (the test split, both sides, all corruptions, no KGE):\n\n")
    f.write("| config | seed | MRR | hits@1 | hits@10 | proved rate | train s |\n|---|---|---|---|---|---|---|\n")
    means = {}
    for kind in ("preset", "best"):
        mrrs = []
        for seed in (11, 12, 13):
            e = json.load(open(os.path.join(d, f"{kind}-s{seed}.json")))
            s = json.load(open(os.path.join(d, f"{kind}-s{seed}", "summary.json")))
            mrrs.append(e["mrr"])
            f.write(f"| {kind} | {seed} | {e['mrr']:.4f} | {e['hits1']:.4f} | {e['hits10']:.4f} | "
                    f"{e['proved_rate']:.4f} | {s['wall_seconds']:.1f} |\n")
        means[kind] = statistics.mean(mrrs)
        f.write(f"| {kind} | mean | {means[kind]:.4f} | | | | |\n")
    f.write(f"\nBest minus preset, mean MRR over seeds 11-13: {means['best'] - means['preset']:+.4f}.\n\n")
    f.write("The best config:\n\n```ini\n" + open(os.path.join(d, "sweep", "best.ini")).read()
            + "```\n\nThe report:\n\n```text\n" + open(os.path.join(d, "report.txt")).read() + "```\n")
print(out)
PY
