#!/usr/bin/env bash
# Issue 37 ask 4a: a ConnectFour-v0 policy trained by self-play against an Elo-rated pool
# (configs/connect4.ini) against the alpha-beta searcher of modules/connect4/search.c at depths 1..6
# (and 0, a uniformly random player), GAMES games a depth (default 200), first move alternating,
# the policy greedy. Writes bench/results/DATE-COMMIT-connect4.md: the win rate per depth, the
# run's final ratings (elo.csv) and how it was trained. The goal of the issue: >= 80% against
# depth 4.
#
# usage: bench/connect4_vs_alphabeta.sh [RUN_DIR]
#   RUN_DIR (default a new temporary folder) is the training run; a finished run found there
#   (summary.json written, not interrupted) is reused, not trained again:
#     skinner train ConnectFour-v0 --threads 1 --run-dir runs/connect4
#   ENV=ConnectFour-v1 trains and plays the image observation's env (configs/connect4_cnn.ini);
#   STEPS=N trains N agent steps instead of the preset's; SKINNER=build/skinner the program;
#   BENCH=build/bench/connect4_vs_alphabeta the match program; THREADS=1 the training threads.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
run=${1:-$(mktemp -d)/connect4}
skinner=${SKINNER:-$root/build/skinner}
bench=${BENCH:-$root/build/bench/connect4_vs_alphabeta}
games=${GAMES:-200}
threads=${THREADS:-1}
env=${ENV:-ConnectFour-v0}
[[ -x $skinner && -x $bench ]] || { echo "connect4_vs_alphabeta: build skinner and bench first" >&2; exit 2; }
bench_init
if ! bench_finished "$run"; then
    "$skinner" train "$env" --threads "$threads" --run-dir "$run" \
        ${STEPS:+--train.total_steps $STEPS} --force
fi
out=$root/bench/results/$(date -u +%Y-%m-%d)-$commit-connect4.md
table=$(C4_ENV=$env C4_MIN_DEPTH=0 "$bench" "$run/policy.safetensors" "$games" 6 1)
sampled=$(C4_ENV=$env C4_MIN_DEPTH=0 "$bench" "$run/policy.safetensors" "$games" 6 1 --sample)
steps=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['total_steps'])" "$run/summary.json")
seconds=$(/usr/bin/python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['wall_seconds']))" "$run/summary.json")
if [[ -f $run/elo.csv ]]; then
    elo="Last row of the run's elo.csv (update, games rated, the learner's rating, the pool's):
\`$(tail -n 1 "$run/elo.csv")\`"
else
    elo="No pool (selfplay.enabled = false): one policy played both sides, no ratings."
fi
preset=$(sed -n 's/^encoder = /encoder /p; s/^enabled = /selfplay.enabled /p' "$run/config.ini" | paste -sd' ')
{
    echo "# Connect Four: self-play policy vs alpha-beta ($(date -u +%Y-%m-%d), commit $commit)"
    echo
    echo "Trained with \`skinner train $env --threads $threads\` (the run's config.ini: $preset):"
    echo "$steps agent steps in ${seconds} s of wall clock on a machine shared with other work. Then"
    echo "\`C4_ENV=$env C4_MIN_DEPTH=0 build/bench/connect4_vs_alphabeta RUN/policy.safetensors $games 6 1\`: the policy greedy,"
    echo "the searcher (modules/connect4/search.c: negamax with alpha-beta, open-window heuristic at the"
    echo "leaves, random ties) at each depth, first move alternating; depth 0 is a random player."
    echo
    echo "$table"
    echo
    echo "The greedy policy and a searcher whose ties are rare replay a few lines (a win or a loss"
    echo "of 50 games at once); the same games with the policy sampling its moves (\`... --sample\`):"
    echo
    echo "$sampled"
    echo
    echo "$elo"
    echo
    echo "Goal of issue 37: >= 80% of 200 games against depth 4."
} > "$out"
echo "wrote $out"
cat "$out"
