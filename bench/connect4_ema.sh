#!/usr/bin/env bash
# Issue 52 ask 3's swing: ConnectFour-v1 runs trained with ppo.ema_decay, whose checkpoints hold
# the weights' moving average as the policy and the weights themselves (state.raw_params), on
# one trajectory. Plays every kept checkpoint of each run (bench/connect4_curve.sh's RUN-curve
# folder) and the final one against alpha-beta depth DEPTH (default 4), GAMES games (default
# 400) a match, first move alternating, greedy and sampled, as the average and as the weights
# (C4_RAW=1). Writes bench/results/DATE-COMMIT-connect4-ema.md: per seed the final policies
# over MATCHES match seeds (default 5), the swing from FROM agent steps on (default 40M: the
# lowest checkpoint and the largest fall between neighbours), then the curve.
#
# usage: bench/connect4_ema.sh DIR [ARGS...]
#   DIR/sSEED is each run (trained here with ARGS, e.g. --threads 1 --ppo.ema_decay 0.99, by
#   bench/connect4_curve.sh unless finished); SEEDS="1 2" the training seeds;
#   SKINNER=build/skinner, BENCH=build/bench/connect4_vs_alphabeta.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
[[ $# -ge 1 ]] || { sed -n 2,14p "$0" >&2; exit 2; }
dir=${1%/}
shift
bench=${BENCH:-$root/build/bench/connect4_vs_alphabeta}
depth=${DEPTH:-4}
games=${GAMES:-400}
matches=${MATCHES:-5}
from=${FROM:-40000000}
seeds=${SEEDS:-1 2}
[[ -x $bench ]] || { echo "connect4_ema: build the bench first (make)" >&2; exit 2; }
bench_init
# the win rate of CHECKPOINT at match seed SEED, as the average ("") or the weights (raw),
# greedy ("") or sampled (--sample)
rate() {
    local raw=()
    [[ $3 == raw ]] && raw=(C4_RAW=1)
    env "${raw[@]}" C4_ENV=ConnectFour-v1 C4_MIN_DEPTH="$depth" "$bench" "$1" "$games" "$depth" \
        "$2" ${4:-} | tail -n 1 | awk -F'|' '{ gsub(/[ %]/, "", $7); print $7 }'
}
mean() { printf '%s\n' "$@" | awk '{ s += $1 } END { printf "%.1f", s / NR }'; }
sections=()
for seed in $seeds; do
    run=$dir/s$seed
    if ! bench_finished "$run"; then
        ENV=ConnectFour-v1 "$root/bench/connect4_curve.sh" "$run" --train.seed "$seed" --force \
            "$@" > /dev/null
    fi
    final="| kind | greedy, $matches matches | sampled, $matches matches |
| --- | --- | --- |"
    for kind in average raw; do
        g=() s=()
        for ((m = 1; m <= matches; m++)); do
            g+=("$(rate "$run/policy.safetensors" "$m" "$kind")")
            s+=("$(rate "$run/policy.safetensors" "$m" "$kind" --sample)")
        done
        final+="
| $kind | $(mean "${g[@]}")% ($(IFS=/; echo "${g[*]}")) | $(mean "${s[@]}")% ($(IFS=/; echo "${s[*]}")) |"
    done
    curve="| agent steps | average, greedy | weights, greedy | average, sampled | weights, sampled |
| --- | --- | --- | --- | --- |"
    points=$(mktemp)
    for steps in $(ls "$run-curve" 2> /dev/null | sed -n 's/^\([0-9]*\)\.safetensors$/\1/p' | sort -n); do
        f=$run-curve/$steps.safetensors
        row="$steps $(rate "$f" 1 average) $(rate "$f" 1 raw) $(rate "$f" 1 average --sample) $(rate "$f" 1 raw --sample)"
        echo "$row" >> "$points"
        curve+="
| $(echo "$row" | awk '{ printf "%s | %s%% | %s%% | %s%% | %s%%", $1, $2, $3, $4, $5 }') |"
    done
    swing=$(awk -v from="$from" '
        $1 >= from {
            for (c = 2; c <= 5; c++) {
                if (!(c in low) || $c < low[c]) low[c] = $c
                if (seen && prev[c] - $c > fall[c]) fall[c] = prev[c] - $c
                prev[c] = $c
            }
            seen = 1; n++
        }
        END {
            split("average, greedy|weights, greedy|average, sampled|weights, sampled", name, "|")
            printf "| measure (%d checkpoints from %d steps) | %s | %s | %s | %s |\n| --- | --- | --- | --- | --- |\n", n, from, name[1], name[2], name[3], name[4]
            printf "| lowest | %s%% | %s%% | %s%% | %s%% |\n", low[2], low[3], low[4], low[5]
            printf "| largest fall between neighbours | %.1f | %.1f | %.1f | %.1f |", fall[2], fall[3], fall[4], fall[5]
        }' "$points")
    rm -f "$points"
    sections+=("## Seed $seed

$(sed -n 's/^ema_decay = /ppo.ema_decay = /p' "$run/config.ini" | head -1); the final policy (match seeds 1 to $matches):

$final

From $from agent steps on:

$swing

Each kept checkpoint (match seed 1):

$curve")
done
out=$root/bench/results/$(date -u +%Y-%m-%d)-$commit-connect4-ema.md
{
    echo "# Connect Four v1: the weights' moving average against the weights ($(date -u +%Y-%m-%d), $commit)"
    echo
    echo "Machine: $cpu ($(nproc) cores). Trained with \`skinner train ConnectFour-v1 --train.seed SEED $*\`"
    echo "(configs/connect4_cnn.ini; the learner trains as without ppo.ema_decay), each checkpoint"
    echo "then played with \`C4_ENV=ConnectFour-v1 C4_MIN_DEPTH=$depth ${bench#"$root"/} CKPT $games $depth MATCH\`"
    echo "as the average (the policy the checkpoint holds) and with C4_RAW=1 as the weights,"
    echo "greedy and with \`--sample\`: win rates against depth $depth."
    for section in "${sections[@]}"; do
        echo
        echo "$section"
    done
} > "$out"
cat "$out"
echo "connect4_ema: wrote $out" >&2
