#!/usr/bin/env bash
# Two builds' GEMM kernels shape by shape: bench/learner_gemm of an OLD build and of this one,
# RUNS runs each, alternating, ROUNDS rounds a run; medians over the runs of each shape's
# GFLOP/s at AVX2 and AVX-512 as shares of the core's FMA peak at that width (the largest of
# the runs' measurements), and the store bandwidths that bound the shapes whose output leaves
# L1 (bench/learner_gemm.c). Writes bench/results/DATE-COMMIT-TOPIC.md with the CPU and the load.
# usage: bench/gemm_versions.sh OLD_LEARNER_GEMM [NEW_LEARNER_GEMM=build/bench/learner_gemm]
#            [RUNS=5] [ROUNDS=9] [TOPIC=gemm-versions]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
[[ $# -ge 1 ]] || { echo "usage: bench/gemm_versions.sh OLD_LEARNER_GEMM [NEW] [RUNS] [ROUNDS] [TOPIC]" >&2; exit 2; }
old=$(realpath "$1")
new=$(realpath "${2:-$root/build/bench/learner_gemm}")
runs=${3:-5}
rounds=${4:-9}
topic=${5:-gemm-versions}
bench_need gemm_versions "build its learner_gemm target" "$old" "$new"
bench_init
out=$root/bench/results/$date-$commit-$topic.md
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for run in $(seq "$runs"); do
    "$old" "$rounds" > "$tmp/old.$run"
    "$new" "$rounds" > "$tmp/new.$run"
    echo "gemm_versions: run $run of $runs" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
table=$(/usr/bin/python3 - "$tmp" "$runs" <<'PY'
import json, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
peaks, stores, shapes = {}, {}, {}
for which in ('old', 'new'):
    for run in range(1, runs + 1):
        for line in open('%s/%s.%d' % (tmp, which, run)):
            r = json.loads(line)
            if 'peak' in r:
                peaks[r['peak']] = max(peaks.get(r['peak'], 0.0), r['gflops'])
            elif 'store_bytes' in r:
                stores.setdefault((r['store_bytes'], r['row_bytes']), []).append(r['gbps'])
            elif r.get('available', True) and r['candidate'].startswith('skinner_'):
                key = (r['pass'], r['shape'], r['B'], r['C'], r['OC'])
                shapes.setdefault(key, {}).setdefault((which, r['candidate']), []).append(r['gflops'])
print('FMA peak of one core (the largest of all runs\' measurements): '
      + ', '.join('%s %.1f GFLOP/s' % kv for kv in peaks.items()) + '.')
print()
print('Store bandwidth (GB/s, median of the runs; 64-byte stores, a column block of every row at a time):')
print()
print('| bytes | row bytes | GB/s | us |')
print('|---|---|---|---|')
for (size, row), v in stores.items():
    g = statistics.median(v)
    print('| %d | %d%s | %.1f | %.2f |' % (size, row, ' (in order)' if row == 64 else '', g, size / g / 1e3))
print()
print('| pass | shape (B, C -> OC) | AVX2 old | AVX2 new | new / old | old / peak | new / peak | AVX-512 old | AVX-512 new | new / old | new / peak |')
print('|---|---|---|---|---|---|---|---|---|---|---|')
def med(c, which, cand):
    v = c.get((which, cand))
    return statistics.median(v) if v else None
fmt = lambda v: '-' if v is None else '%.1f' % v
def ratio(a, b):
    return '-' if a is None or b is None else '%.2f' % (a / b)
def share(v, level):
    return '-' if v is None or level not in peaks else '%.0f%%' % (100 * v / peaks[level])
for (which, shape, B, C, OC), c in shapes.items():
    o2, n2 = med(c, 'old', 'skinner_avx2'), med(c, 'new', 'skinner_avx2')
    o5, n5 = med(c, 'old', 'skinner_avx512'), med(c, 'new', 'skinner_avx512')
    print('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
        which, shape, fmt(o2), fmt(n2), ratio(n2, o2), share(o2, 'avx2'), share(n2, 'avx2'),
        fmt(o5), fmt(n5), ratio(n5, o5), share(n5, 'avx512')))
PY
)
{
    echo "# GEMM kernels: $old against this build ($date, $commit)"
    echo
    echo "Machine: $cpu, $(nproc) cores. Load average $load_before before, $load_after after."
    echo "\`bench/gemm_versions.sh $*\`: $runs runs of each build's bench/learner_gemm, alternating,"
    echo "$rounds rounds a run; GFLOP/s of one core, medians over the runs (each run's figure is the"
    echo "median of its rounds)."
    echo
    echo "$table"
} > "$out"
echo "gemm_versions: wrote $out"
cat "$out"
