#!/usr/bin/env bash
# Issue 33 asks 1 and 3: the learner's speed against 4e786c5's binary. `skinner bench train ENV
# --threads THREADS` for the CartPole, fast, LSTM and MinAtar Breakout presets, this build and
# the old one alternating, REPEATS runs each of SECONDS: the medians of env steps/s (wall clock)
# and of env steps per CPU-second (user + system, which a loaded machine distorts less), and
# their ratios. Then bench/learner_gemm (the GEMM shapes by candidate), plain and with
# OPENBLAS_CORETYPE=Haswell. Writes bench/results/DATE-COMMIT-learner.md with the load.
# usage: bench/learner.sh [SKINNER=build/skinner] [OLD=/work/old4e/build/skinner] [REPEATS=5]
#                         [SECONDS=3] [THREADS=2] [NAME=learner]
# (NAME names the results file: another OLD, e.g. the parent commit's build, gets its own.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${1:-$root/build/skinner}
old=${2:-/work/old4e/build/skinner}
repeats=${3:-5}
seconds=${4:-3}
threads=${5:-2}
name=${6:-learner}
gemm_bench=$(dirname "$skinner")/bench/learner_gemm
for program in "$skinner" "$old" "$gemm_bench"; do
    [[ -x $program ]] || { echo "learner: no program at $program (build first: cmake --build BUILD --target skinner_cli learner_gemm)" >&2; exit 2; }
done
bench_init
out=$root/bench/results/$date-$commit-$name.md
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

mapfile -t workloads < <(bench_preset_workloads "$root")

mapfile -t lines < <(compare "$skinner" "" "$old" "")
printf 'learner: %s\n' "${lines[@]}" >&2
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

gemm_table() {
    "$gemm_bench" 9 | /usr/bin/python3 -c "import json, sys
rows = {}
for line in sys.stdin:
    r = json.loads(line)
    if 'peak' in r or 'store_bytes' in r:  # FMA peaks, store bandwidths: bench/isa.sh reports them
        continue
    key = (r['pass'], r['shape'])
    rows.setdefault(key, {})[r['candidate']] = '%.1f' % r['gflops'] if r.get('available', True) else '-'
for (which, shape), c in rows.items():
    print('| %s | %s | %s | %s | %s | %s |' % (which, shape, c['openblas'], c.get('skinner_avx512', '-'), c.get('skinner_avx2', '-'), c.get('libxsmm', '-')))"
}
gemm_plain=$(gemm_table)
gemm_haswell=$(OPENBLAS_CORETYPE=Haswell gemm_table)

{
    echo "# The learner: this build against $old"
    echo
    echo "$date, commit $commit, $cpu ($(nproc) cores). \`bench/learner.sh\` ($repeats runs each of"
    echo "${seconds} s, alternating this build and $old; \`skinner bench train ENV --threads $threads\`)."
    echo "Load average before: $load_before; after: $load_after (other jobs share the cores: the wall"
    echo "clock figures move with them, the per-CPU-second ones less)."
    echo
    echo "| workload | new env steps/s | old | new / old | new per CPU-s | old per CPU-s | new / old |"
    echo "|---|---|---|---|---|---|---|"
    printf '%s\n' "${lines[@]}"
    echo
    echo "## The GEMMs by candidate (bench/learner_gemm, GFLOP/s, medians of 9 alternating rounds, one thread)"
    echo
    echo "Plain (OpenBLAS picks its kernels for the CPU):"
    echo
    echo "| pass | shape (B rows, C in, OC out) | OpenBLAS | skinner AVX-512 | skinner AVX2 | libxsmm |"
    echo "|---|---|---|---|---|---|"
    echo "$gemm_plain"
    echo
    echo "With OPENBLAS_CORETYPE=Haswell (OpenBLAS pinned to its AVX2 kernels; the others unchanged):"
    echo
    echo "| pass | shape (B rows, C in, OC out) | OpenBLAS | skinner AVX-512 | skinner AVX2 | libxsmm |"
    echo "|---|---|---|---|---|---|"
    echo "$gemm_haswell"
} > "$out"
echo "learner: wrote $out" >&2
