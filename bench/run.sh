#!/usr/bin/env bash
# The benchmark table of ../shared/BENCHMARKS.md: raw env steps/s on one core at
# N = 1, 64, 1024, 8192 for every env (default precision), the scalar-loop
# yardstick beside CartPole at env.precision float64 and float32 in the same
# run, PPO training steps/s on all cores, and CartPole's time to solve.
# Medians of REPEATS runs. Writes bench/results/DATE-COMMIT.md.
# usage: bench/run.sh [SECONDS_PER_RUN=1] [REPEATS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-1}
repeats=${2:-3}
skinner=$root/build/skinner
scalar=$root/build/bench/scalar_cartpole
[[ -x $skinner && -x $scalar ]] || { echo "bench: build first (make build)" >&2; exit 1; }

median() { python3 -c 'import json,statistics,sys; print(round(statistics.median(json.loads(l)["sps"] for l in sys.stdin)))'; }
fmt() { python3 -c 'import sys; v=float(sys.argv[1]); print(f"{v/1e6:.2f}M" if v>=1e6 else f"{v/1e3:.0f}k")' "$1"; }

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(date -u +%Y-%m-%d)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
flags=$(grep -o 'avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')
out=$root/bench/results/$date-$commit.md
mkdir -p "$root/bench/results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
echo "# skinner benchmarks, $date, commit $commit"
echo
echo "Machine: $cpu, $(nproc) cores ($flags), $(uname -sr); OpenBLAS core type: ${OPENBLAS_CORETYPE:-auto}."
echo "Command: bench/run.sh $seconds $repeats (medians of $repeats runs of ${seconds}s)."
echo
echo "## Raw env stepping, one core (skinner bench env ENV --threads 1 --num-envs N), env steps/s"
echo
echo "| env | N=1 | N=64 | N=1024 | N=8192 |"
echo "| --- | --- | --- | --- | --- |"
# envs whose steps are heavy (a default bench size of their own, e.g. Morpho-v0's
# host epochs) are benched apart, at that size on all cores
light=$("$skinner" envs --json | python3 -c 'import json,sys; [print(e["id"]) for e in map(json.loads, sys.stdin) if e["bench_num_envs"] == 4096]')
heavy=$("$skinner" envs --json | python3 -c 'import json,sys; [print(e["id"]) for e in map(json.loads, sys.stdin) if e["bench_num_envs"] != 4096]')
for env in $light; do
    row="| $env |"
    for n in 1 64 1024 8192; do
        sps=$(for r in $(seq "$repeats"); do "$skinner" bench env "$env" --threads 1 --num-envs "$n" --seconds "$seconds" --json; done | median)
        row="$row $(fmt "$sps") |"
    done
    echo "$row"
done
echo
for env in $heavy; do
    sps=$(for r in $(seq "$repeats"); do "$skinner" bench env "$env" --threads "$(nproc)" --seconds $((seconds * 5)) --json; done | median)
    echo "$env (its default number of envs, $(nproc) threads): $(python3 -c "print(f'{$sps:.0f}')") env steps/s"
    echo
done
# The yardstick and both CartPole precisions, interleaved so that all three see the same load.
cartpole() { "$skinner" bench env CartPole-v1 --threads 1 --num-envs 4096 --seconds "$seconds" --env.precision "$1" --json; }
for r in $(seq "$repeats"); do
    "$scalar" 4096 "$seconds" >> "$tmp/scalar"
    cartpole float64 >> "$tmp/float64"
    cartpole float32 >> "$tmp/float32"
done
scalar_sps=$(median < "$tmp/scalar")
ratio() { python3 -c "print(f'{$1/$scalar_sps:.2f}')"; }
echo "CartPole-v1 at 4096 envs, one core, same run (interleaved):"
echo
echo "| program | steps/s | / yardstick |"
echo "| --- | --- | --- |"
echo "| yardstick: plain scalar C loop (struct per env, double, libm) | $(fmt "$scalar_sps") | 1.00x |"
for precision in float64 float32; do
    sps=$(median < "$tmp/$precision")
    echo "| skinner, env.precision = $precision | $(fmt "$sps") | $(ratio "$sps")x |"
done
echo
echo "## Training (skinner bench train ENV, preset, all cores), env steps/s"
echo
echo "| env | steps/s |"
echo "| --- | --- |"
for env in CartPole-v1 Acrobot-v1 Pendulum-v1; do
    sps=$(for r in $(seq "$repeats"); do "$skinner" bench train "$env" --seconds $((seconds * 3)) --json; done | median)
    echo "| $env | $(fmt "$sps") |"
done
sps=$(for r in $(seq "$repeats"); do "$skinner" bench train CartPole-v1 --config "$root/configs/cartpole_fast.ini" --seconds $((seconds * 3)) --json; done | median)
echo "| CartPole-v1, configs/cartpole_fast.ini | $(fmt "$sps") |"
echo
echo "## Time to solve CartPole-v1 (bench/solve.sh CartPole-v1 5)"
echo
echo '```'
SKINNER=$skinner "$root/bench/solve.sh" CartPole-v1 5
echo '```'
} | tee "$out"
echo "written to $out" >&2
