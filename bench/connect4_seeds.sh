#!/usr/bin/env bash
# Issue 52 ask 3: the ConnectFour-v1 preset on several training seeds against the alpha-beta
# searcher at depth DEPTH (default 4). Trains each seed's run into DIR/sSEED with
# bench/connect4_curve.sh (a finished run there is reused), which keeps the periodic checkpoints
# in DIR/sSEED-curve; then plays every kept checkpoint and the final policy, GAMES games
# (default 200) a match, first move alternating, greedy and sampling its moves
# (build/bench/connect4_vs_alphabeta), the final policy on MATCHES match seeds (default 5) and at
# every depth from 1 to 6 (match seed 1). Writes bench/results/DATE-COMMIT-connect4-seeds.md: a
# row per seed, the depths' table, then each seed's curve.
# The issue's goal: >= 80% against depth 4, greedy and sampled, on every seed.
#
# usage: bench/connect4_seeds.sh DIR [ARGS...]
#   ARGS go to skinner train (e.g. --threads 2); SEEDS="1 2 3" the training seeds;
#   SKINNER=build/skinner, BENCH=build/bench/connect4_vs_alphabeta.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
[[ $# -ge 1 ]] || { sed -n 2,13p "$0" >&2; exit 2; }
dir=${1%/}
shift
bench=${BENCH:-$root/build/bench/connect4_vs_alphabeta}
depth=${DEPTH:-4}
games=${GAMES:-200}
matches=${MATCHES:-5}
seeds=${SEEDS:-1 2 3}
[[ -x $bench ]] || { echo "connect4_seeds: build the bench first (make)" >&2; exit 2; }
bench_init
mkdir -p "$dir"
# the win rate (a number) of CHECKPOINT's match at match seed SEED [--sample]
rate() {
    C4_ENV=ConnectFour-v1 C4_MIN_DEPTH=$depth "$bench" "$1" "$games" "$depth" "$2" ${3:-} |
        tail -n 1 | awk -F'|' '{ gsub(/[ %]/, "", $7); print $7 }'
}
steps_of() {
    /usr/bin/python3 -c "
import json, struct, sys
f = open(sys.argv[1], 'rb'); n = struct.unpack('<Q', f.read(8))[0]
print(json.loads(f.read(n)).get('__metadata__', {}).get('steps', ''))" "$1"
}
# wins/draws/losses of CHECKPOINT's greedy match at match seed 1: a draw is no win either
wdl() {
    C4_ENV=ConnectFour-v1 C4_MIN_DEPTH=$depth "$bench" "$1" "$games" "$depth" 1 |
        tail -n 1 | awk -F'|' '{ gsub(/ /, ""); printf "%s/%s/%s", $4, $5, $6 }'
}
mean() { printf '%s\n' "$@" | awk '{ s += $1 } END { printf "%.1f", s / NR }'; }
# the win rates of CHECKPOINT [--sample] at depths 1..6, match seed 1, as "a / b / ..."
depths() {
    C4_ENV=ConnectFour-v1 C4_MIN_DEPTH=1 "$bench" "$1" "$games" 6 1 ${2:-} | tail -n 6 |
        awk -F'|' '{ gsub(/ /, "", $7); printf "%s%s", (NR > 1 ? " / " : ""), $7 }'
}
rows=() curves=() depth_rows=()
for seed in $seeds; do
    run=$dir/s$seed
    if ! bench_finished "$run"; then
        ENV=ConnectFour-v1 "$root/bench/connect4_curve.sh" "$run" --train.seed "$seed" \
            --force "$@" > /dev/null
    fi
    greedy=() sampled=()
    for ((m = 1; m <= matches; m++)); do
        greedy+=("$(rate "$run/policy.safetensors" "$m")")
        sampled+=("$(rate "$run/policy.safetensors" "$m" --sample)")
    done
    rows+=("| $seed | $(steps_of "$run/policy.safetensors") | ${greedy[0]}% ($(wdl "$run/policy.safetensors")) | ${sampled[0]}% | $(mean "${greedy[@]}")% ($(IFS=/; echo "${greedy[*]}")) | $(mean "${sampled[@]}")% ($(IFS=/; echo "${sampled[*]}")) |")
    depth_rows+=("| $seed | $(depths "$run/policy.safetensors") | $(depths "$run/policy.safetensors" --sample) |")
    curve="Seed $seed, each kept checkpoint (match seed 1):

| agent steps | greedy | greedy wins/draws/losses | sampled |
| --- | --- | --- | --- |"
    for steps in $(ls "$run-curve" 2> /dev/null | sed -n 's/^\([0-9]*\)\.safetensors$/\1/p' | sort -n); do
        curve+="
| $steps | $(rate "$run-curve/$steps.safetensors" 1)% | $(wdl "$run-curve/$steps.safetensors") | $(rate "$run-curve/$steps.safetensors" 1 --sample)% |"
    done
    curves+=("$curve")
done
out=$root/bench/results/$(date -u +%Y-%m-%d)-$commit-connect4-seeds.md
{
    echo "# Connect Four v1 against alpha-beta depth $depth, training seeds $seeds ($(date -u +%Y-%m-%d), $commit)"
    echo
    echo "Machine: $cpu ($(nproc) cores; lscpu). Trained with \`skinner train ConnectFour-v1 --train.seed SEED $*\`"
    echo "(configs/connect4_cnn.ini), then \`C4_ENV=ConnectFour-v1 C4_MIN_DEPTH=$depth ${bench#"$root"/}"
    echo "RUN/policy.safetensors $games $depth MATCH\` (greedy) and the same with \`--sample\`."
    echo
    echo "| training seed | agent steps | greedy, match 1 (wins/draws/losses) | sampled, match 1 | greedy, $matches matches | sampled, $matches matches |"
    echo "| --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${rows[@]}"
    echo
    echo "The final policies at depths 1 to 6 (match seed 1; the sampled column draws the policy's"
    echo "moves from one stream through the depths in order):"
    echo
    echo "| training seed | greedy, depth 1 / 2 / 3 / 4 / 5 / 6 | sampled, depth 1 / 2 / 3 / 4 / 5 / 6 |"
    echo "| --- | --- | --- |"
    printf '%s\n' "${depth_rows[@]}"
    for curve in "${curves[@]}"; do
        echo
        echo "$curve"
    done
} > "$out"
cat "$out"
echo "connect4_seeds: wrote $out" >&2
