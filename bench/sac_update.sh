#!/usr/bin/env bash
# Issue 51 ask 6: SAC's learner against the machine's FLOP limit. bench/sac_update (HalfCheetah's
# sizes, CleanRL's networks and schedule, batch 256) REPEATS times on 1 and on 2 threads,
# alternating: the medians of updates/s, of GFLOP/s (wall clock) and of GFLOP per CPU-second (which
# the other jobs of a shared machine distort less), against the best one-core FMA peak the runs
# measured. Writes bench/results/DATE-COMMIT-sac-update.md with the load.
# usage: bench/sac_update.sh [BUILD=build] [REPEATS=5] [ROUNDS=9] [UPDATES=40]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
repeats=${2:-5}
rounds=${3:-9}
updates=${4:-40}
program=$build/bench/sac_update
[[ -x $program ]] || { echo "sac_update: no program at $program (build first: cmake --build BUILD --target sac_update)" >&2; exit 2; }
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%Y-%m-%d)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
# the kernels' level (SKINNER_ISA=avx2 forces a lower one; the peak is measured at the same level)
level=$("$build/skinner" --version | sed -n 's/^kernels: //p')
suffix=${SKINNER_ISA:+-$SKINNER_ISA}
out=$root/bench/results/$date-$commit-sac-update$suffix.md
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
lines=$(mktemp)
for ((r = 0; r < repeats; r++)); do
    for threads in 1 2; do
        "$program" "$rounds" "$updates" "$threads" | sed -n "1s/^{/{\"threads_run\": $threads, /p;\$s/^{/{\"threads_run\": $threads, /p" >> "$lines"
        echo "sac_update: run $((r + 1)) of $repeats on $threads thread(s) done" >&2
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
table=$(/usr/bin/python3 -c "import json, statistics, sys
rows = [json.loads(line) for line in open('$lines')]
peak = max(r['gflops_one_core'] for r in rows if 'gflops_one_core' in r)
for threads in (1, 2):
    runs = [r for r in rows if r['threads_run'] == threads and 'updates_per_s' in r]
    med = lambda key: statistics.median(r[key] for r in runs)
    print('| %d | %.1f | %.1f | %.2f | %.1f | %.2f | %.1f |' % (threads, med('updates_per_s'), med('gflops'),
          med('gflops') / (peak * threads), med('gflops_per_cpu_s'), med('gflops_per_cpu_s') / peak,
          1e6 / med('updates_per_s') / 60))
print()
print('One-core FMA peak (best of the runs, bench/fma_peak.h): %.1f GFLOP/s; the 2-core machine: %.1f.' % (peak, 2 * peak))
print('FLOP per update (layers only, 2 per multiply-add): %.4g; a 1M-step run: %.3g.' % (rows[1]['gflop_per_update'] * 1e9, rows[1]['flop_1m_steps']))")
rm -f "$lines"
{
    echo "# SAC's learner against the FMA peak"
    echo
    echo "$date, commit $commit, $cpu ($(nproc) cores), kernels: $level. \`${SKINNER_ISA:+SKINNER_ISA=$SKINNER_ISA }bench/sac_update.sh $build $repeats $rounds $updates\`"
    echo "(\`bench/sac_update $rounds $updates THREADS\`, $repeats runs each on 1 and 2 threads, alternating;"
    echo "each run's figure is the median of $rounds rounds of $updates updates, the table the median of the runs)."
    echo "Obs 17, act 6 (HalfCheetah's), two 256 x 256 ReLU Q networks, targets and the actor, batch 256"
    echo "in 2 row blocks, CleanRL's schedule (a critic step per update, 2 actor and alpha steps every"
    echo "2nd). Load average before: $load_before; after: $load_after (other jobs share the cores: the wall"
    echo "clock figures move with them, the per-CPU-second ones less)."
    echo
    echo "| threads | updates/s | GFLOP/s | of the threads' peak | GFLOP per CPU-s | per CPU-s of one core's peak | minutes for 1M updates |"
    echo "|---|---|---|---|---|---|---|"
    echo "$table"
} > "$out"
echo "sac_update: wrote $out" >&2
