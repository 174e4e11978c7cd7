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
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
dir=${1:-$(mktemp -d)}
skinner=${SKINNER:-$root/build/skinner}
steps=${STEPS:-100000}
trials=${TRIALS:-12}
shared=$(cd "${SHARED:-$root/../shared}" && pwd)
bench_need sweep_prover "build first" "$skinner"
bench_init
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
# preset and best of a seed one after the other, each evaluated on the test split
pair() {
    "$skinner" train Prover-v0 --config "$root/configs/prover_family.ini" \
        --env.dataset "$shared/datasets/family" --total-steps "$steps" --seed "$1" \
        --threads 1 --run-dir "$dir/preset-s$1" --force --quiet > /dev/null
    "$skinner" eval Prover-v0 --checkpoint "$dir/preset-s$1" --json --threads 1 \
        > "$dir/preset-s$1.json" 2> /dev/null
    "$skinner" train Prover-v0 --config "$dir/sweep/best.ini" --total-steps "$steps" \
        --seed "$1" --threads 1 --run-dir "$dir/best-s$1" --force --quiet > /dev/null
    "$skinner" eval Prover-v0 --checkpoint "$dir/best-s$1" --json --threads 1 \
        > "$dir/best-s$1.json" 2> /dev/null
}
bench_sweep_vs_preset "$dir/prover.ini" pair
/usr/bin/python3 - "$dir" "$out" "$commit" "$date" "$sweep_seconds" "$load_before" "$load_after" \
    "$steps" "$root/bench" <<'PY'
import json, os, statistics, sys
d, out, commit, date, seconds, load_before, load_after, steps, bench = sys.argv[1:]
sys.path.insert(0, bench)
import sweep_report
with open(out, "w") as f:
    sweep_report.head(f, d, f"Prover-v0 on family: a sweep's best config against the preset, "
                      f"RL-only MRR at {int(steps):,} steps ({date}, commit {commit})",
                      f"`STEPS={steps} bench/sweep_prover.sh` (its sweep file is written by the "
                      "script: four PPO keys, `metric = eval.mrr`)", load_before, load_after,
                      seconds)
    f.write("Then seeds 11-13 (no trial ran them), preset and best alternately, each evaluated by "
            "`skinner eval Prover-v0 --checkpoint RUN --json` (the test split, both sides, all "
            "corruptions, no KGE):\n\n")
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
    sweep_report.tail(f, d)
print(out)
PY
