#!/usr/bin/env bash
# Issue 33 ask 2: two threads in one process against two MPI processes of one thread, and the
# pool's spinning (src/vec/pool.c) on and off: `skinner bench train ENV --threads 2` with
# SKINNER_POOL_SPIN_US=0 (sleep at once, as before the spin) and with the default, against
# `mpirun -np 2 skinner bench train ENV --threads 1`, alternating, REPEATS runs each of SECONDS.
# Medians of env steps/s and their ratios. Writes bench/results/DATE-COMMIT-threads-vs-processes.md.
# usage: bench/threads_vs_processes.sh [SKINNER=build/skinner] [REPEATS=5] [SECONDS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${1:-$root/build/skinner}
repeats=${2:-5}
seconds=${3:-3}
bench_need threads_vs_processes "build first" "$skinner"
command -v mpirun > /dev/null || { echo "threads_vs_processes: no mpirun (scripts/setup.sh installs Open MPI)" >&2; exit 2; }
bench_init
out=$root/bench/results/$date-$commit-threads-vs-processes.md

workloads=(
    "CartPole-v1 (preset)|CartPole-v1|"
    "CartPole-v1 (cartpole_fast.ini)|CartPole-v1|--config $root/configs/cartpole_fast.ini"
    "CartPole-v1 (cartpole_lstm.ini)|CartPole-v1|--config $root/configs/cartpole_lstm.ini"
    "MinAtar/Breakout-v1 (preset)|MinAtar/Breakout-v1|"
)
sps() { /usr/bin/python3 -c "import json, sys; print(int(json.load(sys.stdin)['sps']))"; }
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
best() { printf '%s\n' "$@" | sort -n | tail -1; }

lines=()
for w in "${workloads[@]}"; do
    IFS='|' read -r name env extra <<< "$w"
    sleep0=() spin=() mpi=()
    for ((r = 0; r < repeats; r++)); do
        # shellcheck disable=SC2086
        sleep0+=("$(SKINNER_POOL_SPIN_US=0 "$skinner" bench train "$env" --threads 2 --seconds "$seconds" $extra --json 2> /dev/null | sps)")
        # shellcheck disable=SC2086
        spin+=("$("$skinner" bench train "$env" --threads 2 --seconds "$seconds" $extra --json 2> /dev/null | sps)")
        # shellcheck disable=SC2086
        mpi+=("$(mpirun --allow-run-as-root -np 2 "$skinner" bench train "$env" --threads 1 --seconds "$seconds" $extra --json 2> /dev/null | sps)")
    done
    a=$(median "${sleep0[@]}") b=$(median "${spin[@]}") c=$(median "${mpi[@]}")
    A=$(best "${sleep0[@]}") B=$(best "${spin[@]}") C=$(best "${mpi[@]}")
    ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.2f", x / y }'; }
    lines+=("| $name | $a (${sleep0[*]}) | $b (${spin[*]}) | $c (${mpi[*]}) | $(ratio "$b" "$a") / $(ratio "$B" "$A") | $(ratio "$b" "$c") / $(ratio "$B" "$C") |")
    echo "threads_vs_processes: ${lines[-1]}" >&2
done

{
    echo "# Two threads against two MPI processes, and the pool's spin"
    echo
    echo "$date, commit $commit, $cpu ($(nproc) cores), $(mpirun --version | head -1)."
    echo "\`bench/threads_vs_processes.sh\` ($repeats runs each of ${seconds} s, alternating;"
    echo "\`skinner bench train ENV\` env steps/s). 'sleep': --threads 2 with SKINNER_POOL_SPIN_US=0"
    echo "(the pool as before: every wait a sleep on a condition variable); 'spin': --threads 2 with"
    echo "the default bounded, adaptive spin; 'np 2': mpirun -np 2 --threads 1 (comm.mode = exact,"
    echo "the same numbers as two threads). Load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    echo "Each cell: the median (every run). Ratios: of the medians / of the best runs; on this"
    echo "shared machine the best of several alternating runs is the figure least touched by other"
    echo "work, the median the one a user sees."
    echo
    echo "| workload | sleep, steps/s | spin, steps/s | np 2, steps/s | spin / sleep | spin / np 2 |"
    echo "| --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${lines[@]}"
} > "$out"
echo "wrote $out"
