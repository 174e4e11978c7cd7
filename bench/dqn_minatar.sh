#!/usr/bin/env bash
# Issue 51's DQN results on MinAtar: `train.algo = dqn` with its image defaults (CleanRL's
# dqn_atari.py: docs/algorithms.md) on the five -v1 games for STEPS env steps (default 5M, the
# length of MinAtar's own DQN runs), for training seeds SEEDS, then 100 evaluation episodes of
# each trained network, greedy and epsilon-greedy at 0.05 (CleanRL's evaluation of dqn_atari).
# Writes bench/results/DATE-COMMIT-dqn-minatar.md.
#
# usage: bench/dqn_minatar.sh [RUNS_DIR]
#   RUNS_DIR (default a new temporary folder) holds the run folders GAME-sSEED; a finished run
#   found there (its summary.json written and not interrupted) is reused, not trained again, so
#   runs trained earlier, one per core, make the table:
#     skinner train MinAtar/Breakout-v1 --train.algo dqn --total-steps 5000000 --seed 1 \
#       --threads 1 --run-dir RUNS_DIR/Breakout-s1
#   SEEDS="1" and GAMES="Asterix Breakout Freeway Seaquest SpaceInvaders" pick the runs;
#   SKINNER=build/skinner the program; THREADS=1 the training threads.
# Wall times are the runs' own (summary.json): on a machine busy with other work they are
# upper bounds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
runs=${1:-$(mktemp -d)}
skinner=${SKINNER:-$root/build/skinner}
seeds=${SEEDS:-1}
games=${GAMES:-Asterix Breakout Freeway Seaquest SpaceInvaders}
threads=${THREADS:-1}
steps=${STEPS:-5000000}
bench_need dqn_minatar "build first" "$skinner"
bench_init
mkdir -p "$runs"
out=$root/bench/results/$date-$commit-dqn-minatar.md
for game in $games; do
    for seed in $seeds; do
        dir=$runs/$game-s$seed
        bench_train_unless_finished dqn_minatar "$dir" "MinAtar/$game-v1 seed $seed" \
            "$skinner" train "MinAtar/$game-v1" --train.algo dqn --total-steps "$steps" \
            --seed "$seed" --threads "$threads"
        "$skinner" eval "MinAtar/$game-v1" --checkpoint "$dir" --episodes 100 --json \
            2> /dev/null > "$dir/eval-greedy.json"
        "$skinner" eval "MinAtar/$game-v1" --checkpoint "$dir" --episodes 100 --epsilon 0.05 \
            --json 2> /dev/null > "$dir/eval-eps005.json"
    done
done
/usr/bin/python3 - "$out" "$runs" "$date" "$commit" "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" \
    "$(nproc)" "$games" "$seeds" "$steps" <<'PY'
import csv, json, sys
out, runs, date, commit, cpu, cores, games, seeds, steps = sys.argv[1:10]
lines = ["# DQN on MinAtar: the five -v1 games (train.algo = dqn, its image defaults)", "",
         f"{date}, commit {commit}, {cpu} ({cores} cores). `bench/dqn_minatar.sh`: "
         f"{int(steps):,} env steps a run, sticky actions 0.1 and difficulty ramping (the -v1 "
         "ids' defaults), training seeds " + ", ".join(seeds.split()) + "; 'train' is the mean "
         "return of the last 100 training episodes (epsilon-greedy at the schedule's 0.01), "
         "'greedy' and 'eps 0.05' are 100 evaluation episodes of the final network "
         "(`skinner eval --episodes 100`, with `--epsilon 0.05` for the second).", "",
         "| game | seed | train | greedy | eps 0.05 | train at 1M / 2.5M steps | steps/s | wall s |",
         "| --- | --- | --- | --- | --- | --- | --- | --- |"]
for game in games.split():
    for seed in seeds.split():
        d = f"{runs}/{game}-s{seed}"
        s = json.load(open(f"{d}/summary.json"))
        rows = list(csv.DictReader(open(f"{d}/metrics.csv")))
        at = lambda n: next((float(r["mean_return"]) for r in rows if int(r["steps"]) >= n), float("nan"))
        g = json.load(open(f"{d}/eval-greedy.json"))
        e = json.load(open(f"{d}/eval-eps005.json"))
        lines.append(f"| {game} | {seed} | {s['final_mean_return']:.1f} | {g['mean_return']:.1f} "
                     f"(sd {g['std_return']:.1f}) | {e['mean_return']:.1f} (sd {e['std_return']:.1f}) "
                     f"| {at(1_000_000):.1f} / {at(2_500_000):.1f} | {s['sps']:.0f} "
                     f"| {s['wall_seconds']:.0f} |")
open(out, "w").write("\n".join(lines) + "\n")
print(out)
PY
