#!/usr/bin/env bash
# Issue 32's results: PPO with the MinAtar preset (configs/minatar.ini: a CNN encoder, 10M env
# steps, sticky actions 0.1, difficulty ramping; Seaquest's own keys over it) on the five -v1 games for training seeds SEEDS,
# then 100 evaluation episodes of each trained policy, sampled and greedy. Writes
# bench/results/DATE-COMMIT-minatar-ppo.md (a row per run, a mean/min/max row per game, the
# floor and goal of the issue) and docs/minatar-GAME.png (`skinner plot` of each game's runs).
#
# usage: bench/minatar_ppo.sh [RUNS_DIR]
#   RUNS_DIR (default a new temporary folder) holds the run folders GAME-sSEED; a finished run
#   found there (its summary.json written and not interrupted) is reused, not trained again, so
#   the table can be built from runs trained earlier, one lane per core:
#     RUNS=runs/minatar; for g in Breakout Seaquest; do skinner train MinAtar/$g-v1 \
#       --seed 1 --threads 1 --run-dir $RUNS/$g-s1; done
#   SEEDS="1 2 3" and GAMES="Asterix Breakout Freeway Seaquest SpaceInvaders" (the defaults) pick
#   the runs; SKINNER=build/skinner the program; THREADS=0 (all cores) the training threads;
#   STEPS=N trains N steps instead of the preset's 10M (a smoke test of this script).
# Wall times are the runs' own (summary.json, metrics.csv): on a machine busy with other work
# they are upper bounds, and the table says which runs trained side by side.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
runs=${1:-$(mktemp -d)}
skinner=${SKINNER:-$root/build/skinner}
seeds=${SEEDS:-1 2 3}
games=${GAMES:-Asterix Breakout Freeway Seaquest SpaceInvaders}
threads=${THREADS:-0}
steps=${STEPS:-}
bench_need minatar_ppo "build first" "$skinner"
bench_init
mkdir -p "$runs"
out=$root/bench/results/$date-$commit-minatar-ppo.md
for game in $games; do
    for seed in $seeds; do
        dir=$runs/$game-s$seed
        # the env's own preset (minatar.ini; Seaquest's file over it), as a user trains
        # shellcheck disable=SC2086
        bench_train_unless_finished minatar_ppo "$dir" "MinAtar/$game-v1 seed $seed" \
            "$skinner" train "MinAtar/$game-v1" --seed "$seed" --threads "$threads" \
            ${steps:+--total-steps $steps}
        for mode in sampled greedy; do
            flag=; [[ $mode == greedy ]] && flag=--greedy
            # shellcheck disable=SC2086
            "$skinner" eval "MinAtar/$game-v1" --checkpoint "$dir" --episodes 100 $flag --json \
                2> /dev/null > "$dir/eval-$mode.json"
        done
    done
done
for game in $games; do # one figure a game: their returns differ by 20x
    dirs=()
    for seed in $seeds; do dirs+=("$runs/$game-s$seed"); done
    "$skinner" plot "${dirs[@]}" -o "$root/docs/minatar-$game.png" --width 900 --height 330 > /dev/null
done
/usr/bin/python3 - "$out" "$runs" "$date" "$commit" "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" \
    "$(nproc)" "$games" "$seeds" <<'PY'
import csv, json, statistics, sys
out, runs, date, commit, cpu, cores, games, seeds = sys.argv[1:9]
games, seeds = games.split(), seeds.split()
# the issue's anchors: floor (gymnax's PPO at 10M, Seaquest >= 20) and goal (pgx's PPO at 20M)
floor = {"Asterix": 15, "Breakout": 28, "Freeway": 58, "Seaquest": 20, "SpaceInvaders": 131}
goal = {"Asterix": 22, "Breakout": 50, "Freeway": 63, "Seaquest": 54, "SpaceInvaders": 145}

def first_reaching(rows, target):
    for r in rows:
        if float(r["mean_return"]) >= target:
            return int(r["steps"]), float(r["wall_seconds"])
    return None

def fmt_reach(hit):
    return f"{hit[0] / 1e6:.2f}M / {hit[1]:.0f} s" if hit else "not reached"

lines = [f"# MinAtar PPO: the five games, configs/minatar.ini (Seaquest: minatar_seaquest.ini over it)", "",
         f"{date}, commit {commit}, {cpu} ({cores} cores). `bench/minatar_ppo.sh`: -v1 ids "
         "(minimal actions), sticky actions 0.1, difficulty ramping, 10M env steps, training "
         f"seeds {', '.join(seeds)}; 100 evaluation episodes per run (`skinner eval --episodes 100`, "
         "sampled and `--greedy`). 'train' is the mean return of the last 100 training episodes. "
         "Floor: gymnax's PPO at 10M steps (Seaquest >= 20); goal: pgx's PPO at 20M steps.", "",
         "| game | seed | train | eval sampled | eval greedy | steps/s | wall s | floor at (steps / s) | goal at (steps / s) |",
         "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
summary = []
for game in games:
    evals = []
    for seed in seeds:
        d = f"{runs}/{game}-s{seed}"
        s = json.load(open(f"{d}/summary.json"))
        rows = list(csv.DictReader(open(f"{d}/metrics.csv")))
        es = json.load(open(f"{d}/eval-sampled.json"))
        eg = json.load(open(f"{d}/eval-greedy.json"))
        evals.append(es["mean_return"])
        lines.append(f"| {game} | {seed} | {s['final_mean_return']:.1f} | {es['mean_return']:.1f} "
                     f"(sd {es['std_return']:.1f}) | {eg['mean_return']:.1f} | {s['sps']:.0f} "
                     f"| {s['wall_seconds']:.0f} | {fmt_reach(first_reaching(rows, floor[game]))} "
                     f"| {fmt_reach(first_reaching(rows, goal[game]))} |")
    mean = statistics.mean(evals)
    verdict = "goal" if mean >= goal[game] else "floor" if mean >= floor[game] else "below floor"
    summary.append(f"| {game} | {mean:.1f} ({min(evals):.1f}-{max(evals):.1f}) | {floor[game]} "
                   f"| {goal[game]} | {verdict} |")
lines += ["", "Sampled evaluation return over the seeds, mean (min-max):", "",
          "| game | eval sampled | floor | goal | meets |", "| --- | --- | --- | --- | --- |"]
lines += summary
open(out, "w").write("\n".join(lines) + "\n")
print(out)
PY
