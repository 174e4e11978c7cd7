#!/usr/bin/env bash
# Issue 48 asks 3 and 6: what each ISA level's kernels are worth, in one run.
#  1. The core's FMA peak per vector width and the GEMM shapes by candidate (bench/learner_gemm):
#     the AVX2 kernels as a share of the AVX2 peak.
#  2. `skinner bench train` on the CartPole, fast, LSTM and MinAtar Breakout presets with
#     SKINNER_ISA=avx2 against SKINNER_ISA=baseline (cblas_sgemm), both with OpenBLAS pinned to
#     its Haswell kernels (OPENBLAS_CORETYPE=Haswell), as on an AVX2 host; alternating, REPEATS
#     runs each of SECONDS, medians of env steps/s wall clock and per CPU-second.
#  3. With NATIVE set (a -DSKINNER_NATIVE=ON build's program): the default (portable) build at its
#     own level against it, the same way.
# Writes bench/results/DATE-COMMIT-isa.md with the CPU and the load.
# usage: bench/isa.sh [SKINNER=build/skinner] [NATIVE=] [REPEATS=5] [SECONDS=3] [THREADS=2]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=$(realpath "${1:-$root/build/skinner}")
native=${2:-}
repeats=${3:-5}
seconds=${4:-3}
threads=${5:-2}
gemm_bench=$(dirname "$skinner")/bench/learner_gemm
for program in "$skinner" "$gemm_bench" ${native:+"$native"}; do
    [[ -x $program ]] || { echo "isa: no program at $program (usage: bench/isa.sh [SKINNER] [NATIVE] [REPEATS] [SECONDS] [THREADS])" >&2; exit 2; }
done
bench_init
out=$root/bench/results/$date-$commit-isa.md
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
mapfile -t workloads < <(bench_preset_workloads "$root")



gemm=$("$gemm_bench" 9)
gemm_table=$(/usr/bin/python3 -c "import json, sys
rows, peaks = {}, {}
for line in sys.stdin:
    r = json.loads(line)
    if 'peak' in r:
        peaks[r['peak']] = max(peaks.get(r['peak'], 0.0), r['gflops'])
        continue
    if 'store_bytes' in r:
        continue
    rows.setdefault((r['pass'], r['shape']), {})[r['candidate']] = r['gflops'] if r.get('available', True) else None
print('Measured FMA peak of one core: ' + ', '.join('%s %.1f GFLOP/s' % kv for kv in peaks.items()) + '.')
print()
print('| pass | shape | OpenBLAS | skinner AVX-512 | skinner AVX2 | AVX2 / AVX2 peak | libxsmm |')
print('|---|---|---|---|---|---|---|')
fmt = lambda v: '-' if v is None else '%.1f' % v
for (which, shape), c in rows.items():
    avx2 = c.get('skinner_avx2')
    share = '-' if avx2 is None or 'avx2' not in peaks else '%.0f%%' % (100 * avx2 / peaks['avx2'])
    print('| %s | %s | %s | %s | %s | %s | %s |' % (which, shape, fmt(c.get('openblas')), fmt(c.get('skinner_avx512')), fmt(avx2), share, fmt(c.get('libxsmm'))))
" <<< "$gemm")
echo "isa: GEMM shapes measured" >&2
pinned="OPENBLAS_CORETYPE=Haswell"
kernels=$(compare "$skinner" "SKINNER_ISA=avx2 $pinned" "$skinner" "SKINNER_ISA=baseline $pinned")
echo "isa: avx2 against baseline measured" >&2
if [[ -n $native ]]; then
    portable=$(compare "$skinner" "SKINNER_ISA_UNSET=1" "$native" "SKINNER_ISA_UNSET=1")
    echo "isa: portable against native measured" >&2
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

{
    echo "# ISA levels: the AVX2 kernels and the portable build ($date, $commit)"
    echo
    echo "Machine: $cpu, $(nproc) cores; $($skinner --version | sed -n 's/^kernels: //p'). Load average"
    echo "$load_before before, $load_after after. \`bench/isa.sh $*\`: $repeats alternating runs of"
    echo "$seconds s each, $threads threads; medians."
    echo
    echo "## The GEMM kernels (bench/learner_gemm, GFLOP/s, one core)"
    echo
    echo "$gemm_table"
    echo
    echo "## Presets: SKINNER_ISA=avx2 against baseline (cblas_sgemm), OpenBLAS on its Haswell kernels"
    echo
    echo "| workload | avx2 env steps/s | baseline | avx2 / baseline | avx2 per CPU-s | baseline per CPU-s | ratio |"
    echo "|---|---|---|---|---|---|---|"
    echo "$kernels"
    if [[ -n $native ]]; then
        echo
        echo "## The default (portable) build against -DSKINNER_NATIVE=ON ($native), each at its own level"
        echo
        echo "| workload | portable env steps/s | native | portable / native | portable per CPU-s | native per CPU-s | ratio |"
        echo "|---|---|---|---|---|---|---|"
        echo "$portable"
    fi
} > "$out"
echo "isa: wrote $out"
cat "$out"
