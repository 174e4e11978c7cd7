#!/usr/bin/env bash
# Issue 37 ask 4a: a Connect Four run's strength along the way. Trains `skinner train ENV ARGS...`
# into RUN_DIR and, each time the run's periodic checkpoint (RUN_DIR/policy.safetensors) changes,
# keeps a copy (RUN_DIR-curve/STEPS.safetensors, beside the run: skinner train wants the run's
# folder to itself) and plays it against alpha-beta depth DEPTH
# (default 4) for GAMES games (default 200), first move alternating, greedy and then sampling its
# moves (build/bench/connect4_vs_alphabeta). Appends a row per checkpoint to RUN_DIR-curve/curve.md:
# agent steps, greedy wins/draws/losses, greedy and sampled win rates. A greedy policy against a
# searcher with few ties replays a few lines, so its figure swings between checkpoints; the
# sampled one is the steadier.
#
# usage: bench/connect4_curve.sh RUN_DIR [ARGS...]
#   ENV (default ConnectFour-v1) the env; ARGS go to skinner train (e.g. --total-steps 60000000
#   --threads 2 --selfplay.enabled true --selfplay.pool_share 0.2); with --resume RUN_DIR in
#   ARGS a stopped run goes on. SKINNER=build/skinner, BENCH=build/bench/connect4_vs_alphabeta,
#   POLL=60 the seconds between looks at the checkpoint.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
[[ $# -ge 1 ]] || { sed -n 2,16p "$0" >&2; exit 2; }
run=${1%/}
out=$run-curve
shift
skinner=${SKINNER:-$root/build/skinner}
bench=${BENCH:-$root/build/bench/connect4_vs_alphabeta}
env=${ENV:-ConnectFour-v1}
depth=${DEPTH:-4}
games=${GAMES:-200}
poll=${POLL:-60}
[[ -x $skinner && -x $bench ]] || { echo "connect4_curve: build skinner and bench first" >&2; exit 2; }
bench_init
mkdir -p "$out"
[[ -f $out/curve.md ]] || {
    echo "| agent steps | greedy wins/draws/losses (depth $depth) | greedy win rate | sampled win rate |"
    echo "| --- | --- | --- | --- |"
} > "$out/curve.md"
steps_of() {
    /usr/bin/python3 -c "
import json, struct, sys
f = open(sys.argv[1], 'rb'); n = struct.unpack('<Q', f.read(8))[0]
print(json.loads(f.read(n)).get('__metadata__', {}).get('steps', ''))" "$1"
}
play() { # CHECKPOINT [--sample]: the last row of the match table, split on '|'
    C4_ENV=$env C4_MIN_DEPTH=$depth "$bench" "$1" "$games" "$depth" 1 ${2:-} | tail -n 1
}
look() {
    [[ -f $run/policy.safetensors ]] || return 0
    local copy=$out/latest.safetensors steps
    cp "$run/policy.safetensors" "$copy"
    steps=$(steps_of "$copy")
    [[ -n $steps && ! -f $out/$steps.safetensors ]] || return 0
    mv "$copy" "$out/$steps.safetensors"
    IFS='|' read -r _ _ _ wins draws losses rate _ <<< "$(play "$out/$steps.safetensors")"
    IFS='|' read -r _ _ _ _ _ _ sampled _ <<< "$(play "$out/$steps.safetensors" --sample)"
    echo "| $steps | ${wins// /}/${draws// /}/${losses// /} | ${rate// /} | ${sampled// /} |" >> "$out/curve.md"
    tail -n 1 "$out/curve.md"
}
"$skinner" train "$env" --run-dir "$run" "$@" > "$out/train.log" 2>&1 &
trainer=$!
while kill -0 "$trainer" 2> /dev/null; do
    sleep "$poll"
    look
done
wait "$trainer" || { echo "connect4_curve: training failed (see $out/train.log)" >&2; exit 1; }
look
