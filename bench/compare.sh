#!/usr/bin/env bash
# Two builds of skinner in one run: bench/run.sh's figures (raw env stepping on one
# core at N = 1, 64, 1024, 8192; the heavy envs at their own size on all cores; PPO
# training steps/s with the presets and the fast CartPole preset), each measured
# REPEATS times with the two programs alternating, so that both see the same load.
# Medians, and the ratio new / old. Writes bench/results/DATE-COMMIT-vs-OLDCOMMIT.md.
# usage: bench/compare.sh OLD_SKINNER NEW_SKINNER [SECONDS_PER_RUN=1] [REPEATS=5]
# With COMPARE_PARTS=train, only the training rows (the presets; the env rows take most of the
# run's time).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
old=$1
new=$2
seconds=${3:-1}
repeats=${4:-5}
[[ -x $old && -x $new ]] || { echo "compare: usage: bench/compare.sh OLD_SKINNER NEW_SKINNER [SECONDS] [REPEATS]" >&2; exit 2; }
bench_init

describe() { git -C "$(dirname "$1")" rev-parse --short HEAD 2>/dev/null || echo unknown; }
old_commit=$(describe "$old")
new_commit=$(git -C "$root" rev-parse --short HEAD)
out=$root/bench/results/$date-$new_commit-vs-$old_commit.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { python3 -c 'import json,statistics,sys; print(statistics.median(json.loads(l)["sps"] for l in sys.stdin))' < "$1"; }
fmt() { python3 -c 'import sys; v=float(sys.argv[1]); print(f"{v/1e6:.2f}M" if v>=1e6 else (f"{v/1e3:.1f}k" if v>=1e3 else f"{v:.1f}"))' "$1"; }

# row NAME ARGS...: both programs, alternating, REPEATS times each
row() {
    local name=$1
    shift
    : > "$tmp/old"
    : > "$tmp/new"
    for r in $(seq "$repeats"); do
        "$old" "$@" --json >> "$tmp/old" 2>/dev/null
        "$new" "$@" --json >> "$tmp/new" 2>/dev/null
    done
    local a b
    a=$(median "$tmp/old")
    b=$(median "$tmp/new")
    echo "| $name | $(fmt "$a") | $(fmt "$b") | $(python3 -c "print(f'{$b/$a:.3f}')") |"
}

{
echo "# skinner $new_commit against $old_commit, $date"
echo
echo "Machine: $cpu, $(nproc) cores, $(uname -sr); OpenBLAS core type: ${OPENBLAS_CORETYPE:-auto}."
echo "Command: bench/compare.sh OLD NEW $seconds $repeats: medians of $repeats runs of each"
echo "figure, the two programs alternating run by run."
echo
echo "| figure (env steps/s) | $old_commit | $new_commit | new / old |"
echo "| --- | --- | --- | --- |"
# the envs both programs have (a newer one may add envs the older lacks)
envs_of() { "$1" envs --json | python3 -c 'import json,sys; [print(e["id"], e["bench_num_envs"] == 4096) for e in map(json.loads, sys.stdin)]'; }
both=$(comm -12 <(envs_of "$old" | sort) <(envs_of "$new" | sort))
light=$(awk '$2 == "True" {print $1}' <<< "$both")
heavy=$(awk '$2 == "False" {print $1}' <<< "$both")
[[ ${COMPARE_PARTS:-all} == train ]] && light="" heavy=""
for env in $light; do
    for n in 1 64 1024 8192; do
        row "bench env $env, N=$n, 1 thread" bench env "$env" --threads 1 --num-envs "$n" --seconds "$seconds"
    done
done
[[ ${COMPARE_PARTS:-all} == train ]] ||
    row "bench env CartPole-v1 float32, N=4096, 1 thread" bench env CartPole-v1 --threads 1 --num-envs 4096 --seconds "$seconds" --env.precision float32
for env in $heavy; do
    row "bench env $env, its default N, $(nproc) threads" bench env "$env" --threads "$(nproc)" --seconds $((seconds * 5))
done
for env in CartPole-v1 Acrobot-v1 Pendulum-v1; do
    row "bench train $env (preset)" bench train "$env" --seconds $((seconds * 3))
done
row "bench train CartPole-v1, configs/cartpole_fast.ini" bench train CartPole-v1 --config "$root/configs/cartpole_fast.ini" --seconds $((seconds * 3))
row "bench train CartPole-v1, configs/cartpole_lstm.ini" bench train CartPole-v1 --config "$root/configs/cartpole_lstm.ini" --seconds $((seconds * 3))
row "bench train MinAtar/Breakout-v1 (preset)" bench train MinAtar/Breakout-v1 --seconds $((seconds * 3))
# the multi-agent presets: turn-based self-play (v0: a pool in every game, MLP; v1: in a fifth,
# CNN on uint8 boards) and every agent acting at every step (Arena)
for env in ConnectFour-v1 ConnectFour-v0 Arena-v0; do
    row "bench train $env (preset)" bench train "$env" --seconds $((seconds * 3))
done
} | tee "$out"
echo "written to $out" >&2
