#!/usr/bin/env bash
# Issue 34 ask 5, the MinAtar figure: MinAtar/Breakout-v1 at a fixed budget of STEPS env steps
# (configs/minatar.ini otherwise): a Pareto sweep of five PPO keys on the training return
# (final_mean_return: the mean of the last 100 episodes), then the best config against the
# preset on seeds 11-13, which no trial ran; each pair (preset, best) of a seed trains side by
# side, one thread each (the return at a fixed step count does not depend on the load).
# Writes bench/results/DATE-COMMIT-sweep-minatar.md.
#
# usage: bench/sweep_minatar.sh [DIR]   (default: a new temporary folder)
#   SKINNER=build/skinner the program; STEPS=2000000; TRIALS=8; GAME=Breakout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
dir=${1:-$(mktemp -d)}
skinner=${SKINNER:-$root/build/skinner}
steps=${STEPS:-2000000}
trials=${TRIALS:-8}
game=${GAME:-Breakout}
bench_need sweep_minatar "build first" "$skinner"
bench_init
out=$root/bench/results/$date-$commit-sweep-minatar.md
mkdir -p "$dir"
cat > "$dir/minatar.ini" <<INI
[sweep]
env = MinAtar/$game-v1
config = $root/configs/minatar.ini
method = pareto
metric = final_mean_return
goal = max
cost = seconds
trials = $trials
trials_at_once = 2
threads_per_trial = 1
seeds_per_trial = 1

[train]
total_steps = $steps

[ppo.learning_rate]
distribution = log_uniform
min = 3e-4
max = 3e-3
centre = 0.001

[ppo.ent_coef]
distribution = uniform
min = 0
max = 0.03
centre = 0.01

[ppo.update_epochs]
distribution = integer
min = 1
max = 6
centre = 4

[ppo.num_minibatches]
distribution = pow2
min = 4
max = 32
centre = 16

[ppo.gamma]
distribution = logit
min = 0.97
max = 0.995
centre = 0.99
INI
# preset and best of a seed side by side, one thread each (the return at a fixed step count
# does not depend on the load)
pair() {
    "$skinner" train "MinAtar/$game-v1" --config "$root/configs/minatar.ini" --total-steps "$steps" \
        --seed "$1" --threads 1 --run-dir "$dir/preset-s$1" --force --quiet > /dev/null &
    "$skinner" train "MinAtar/$game-v1" --config "$dir/sweep/best.ini" --total-steps "$steps" \
        --seed "$1" --threads 1 --run-dir "$dir/best-s$1" --force --quiet > /dev/null
    wait
}
bench_sweep_vs_preset "$dir/minatar.ini" pair
/usr/bin/python3 - "$dir" "$out" "$commit" "$date" "$sweep_seconds" "$load_before" "$load_after" \
    "$steps" "$game" "$root/bench" <<'PY'
import json, os, statistics, sys
d, out, commit, date, seconds, load_before, load_after, steps, game, bench = sys.argv[1:]
sys.path.insert(0, bench)
import sweep_report
with open(out, "w") as f:
    sweep_report.head(f, d, f"MinAtar/{game}-v1 at {int(steps):,} steps: a sweep's best config "
                      f"against the preset ({date}, commit {commit})",
                      f"`STEPS={steps} bench/sweep_minatar.sh` (its sweep file is written by the "
                      "script: five PPO keys, metric final_mean_return)", load_before, load_after,
                      seconds)
    f.write("Then seeds 11-13 (no trial ran them), the training return (mean of the last 100 "
            "episodes) at the same budget:\n\n| config | seed | return | train s |\n|---|---|---|---|\n")
    means = {}
    for kind in ("preset", "best"):
        values = []
        for seed in (11, 12, 13):
            s = json.load(open(os.path.join(d, f"{kind}-s{seed}", "summary.json")))
            values.append(s["final_mean_return"])
            f.write(f"| {kind} | {seed} | {s['final_mean_return']:.2f} | {s['wall_seconds']:.0f} |\n")
        means[kind] = statistics.mean(values)
        f.write(f"| {kind} | mean | {means[kind]:.2f} | |\n")
    f.write(f"\nBest minus preset, mean return over seeds 11-13: {means['best'] - means['preset']:+.2f}.\n\n")
    sweep_report.tail(f, d)
print(out)
PY
