#!/usr/bin/env bash
# Issue 48 ask 3: where the MinAtar preset's CPU time goes at SKINNER_ISA=avx2 and at baseline
# (cblas_sgemm), as on an AVX2-only host (ONEDNN_MAX_CPU_ISA=AVX2, OpenBLAS pinned to its Haswell
# kernels), and what the avx2 / baseline ratio could become if one part got faster.
#  1. `skinner bench train MinAtar/Breakout-v1` under `perf record -e cpu-clock` (no hardware
#     counters needed), the two levels alternating, REPEATS runs each of SECONDS: every sample
#     put in a category by its library and symbol (the convolution: oneDNN's JIT code and
#     libdnnl; the dense GEMM: skinner's kernels or OpenBLAS; ...), as CPU microseconds per env
#     step (samples x 250 us / steps), medians per category.
#  2. One run with ONEDNN_VERBOSE=1: the convolution's time by primitive and batch (wall time,
#     for its split only).
#  3. The ceilings: the ratio with the convolution free, and with it at the dense GEMM's speed.
# Writes bench/results/DATE-COMMIT-minatar-split.md with the load.
# usage: bench/minatar_split.sh [SKINNER=build/skinner] [REPEATS=3] [SECONDS=8] [THREADS=2]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=$(realpath "${1:-$root/build/skinner}")
repeats=${2:-3}
seconds=${3:-8}
threads=${4:-2}
bench_need minatar_split "usage: bench/minatar_split.sh [SKINNER] [REPEATS] [SECONDS] [THREADS]" "$skinner"
command -v perf > /dev/null || { echo "minatar_split: needs perf (linux-perf)" >&2; exit 2; }
bench_init
out=$root/bench/results/$date-$commit-minatar-split.md
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
host="ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell"

# One profiled run: prints "STEPS" and leaves $work/LEVEL-R.data
profile() {
    local level=$1 r=$2
    # shellcheck disable=SC2086
    env SKINNER_ISA="$level" $host perf record -q -F 4000 -e cpu-clock -o "$work/$level-$r.data" \
        "$skinner" bench train MinAtar/Breakout-v1 --threads "$threads" --seconds "$seconds" \
        --json 2> /dev/null | /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['steps'])"
}
for ((r = 0; r < repeats; r++)); do
    for level in avx2 baseline; do
        echo "$level $r $(profile "$level" "$r")" >> "$work/steps"
        perf report -i "$work/$level-$r.data" --no-children --sort dso,sym --stdio -g none -n \
            2> /dev/null > "$work/$level-$r.txt"
    done
    echo "minatar_split: round $((r + 1)) of $repeats" >&2
done
# shellcheck disable=SC2086
env SKINNER_ISA=avx2 $host ONEDNN_VERBOSE=1 "$skinner" bench train MinAtar/Breakout-v1 \
    --threads "$threads" --seconds "$seconds" 2> /dev/null | grep '^onednn_verbose,exec' > "$work/verbose" || true
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

tables=$(/usr/bin/python3 - "$work" <<'EOF'
import collections, re, statistics, sys
work = sys.argv[1]
CATS = ['dense GEMM', 'convolution (oneDNN)', 'elementwise and other nn', 'memset/memcpy',
        'obs widening', 'env and rollout', 'kernel', 'rest']
def category(dso, sym):
    if dso.startswith('[JIT]') or 'libdnnl' in dso or 'skinner-dnnl' in dso: return CATS[1]
    if 'openblas' in dso or sym == 'gemm' or sym.startswith('sk_gemm_small') or 'cblas' in sym:
        return CATS[0]
    if sym.startswith('kernel_') or sym.startswith('sk_categorical') or sym in (
            'sk_grad_norm', 'cnn_backward', 'cnn_forward', 'sk_linear_forward',
            'sk_linear_backward', 'transpose_block', 'sk_learner_update', 'minibatch_job'):
        return CATS[2]
    if re.search('mem(set|move|cpy)', sym): return CATS[3]
    if sym == 'sk_obs_widen': return CATS[4]
    if 'minatar' in dso or sym.startswith(('breakout', 'sk_vec_step', 'sk_rollout')) or sym == 'obs_rows_good':
        return CATS[5]
    if dso.startswith('[kernel'): return CATS[6]
    return CATS[7]
us = {'avx2': collections.defaultdict(list), 'baseline': collections.defaultdict(list)}
for line in open(work + '/steps'):
    level, r, steps = line.split()
    per = collections.Counter()
    for row in open('%s/%s-%s.txt' % (work, level, r)):
        m = re.match(r'\s+[\d.]+%\s+(\d+)\s+(\S+(?: tid \d+)?)\s+\[.\]\s+(\S+)', row)
        if m: per[category(m.group(2), m.group(3))] += int(m.group(1))
    for c in CATS + ['total']:
        n = sum(per.values()) if c == 'total' else per[c]
        us[level][c].append(n * 250.0 / int(steps))
med = {lv: {c: statistics.median(v) for c, v in d.items()} for lv, d in us.items()}
a, b = med['avx2'], med['baseline']
print('| part | avx2 us/step | share | baseline us/step | share | baseline / avx2 |')
print('|---|---|---|---|---|---|')
for c in CATS + ['total']:
    print('| %s | %.1f | %.0f%% | %.1f | %.0f%% | %s |' % (
        c, a[c], 100 * a[c] / a['total'], b[c], 100 * b[c] / b['total'],
        '%.2f' % (b[c] / a[c]) if a[c] > 0.05 else '-'))
conv, dense, total = a[CATS[1]], a[CATS[0]], a['total']
print()
print('Ratio avx2 / baseline per CPU-second now: %.2f. With the convolution free at avx2: %.2f; '
      'with it twice as fast: %.2f. For 1.5x the avx2 side must be %.1f us/step, %.1f under '
      'today\'s; the convolution is %.1f of it.' % (
          b['total'] / total, b['total'] / (total - conv), b['total'] / (total - conv / 2),
          b['total'] / 1.5, total - b['total'] / 1.5, conv))
print()
print('The convolution at avx2 by primitive (one ONEDNN_VERBOSE=1 run; wall time):')
print()
print('| primitive | problem | calls | ms | share |')
print('|---|---|---|---|---|')
rows = collections.defaultdict(lambda: [0, 0.0])
for line in open(work + '/verbose'):
    f = line.rstrip().split(',')
    key = (f[3] + ' ' + f[5], f[-2])
    rows[key][0] += 1
    rows[key][1] += float(f[-1])
all_ms = sum(v[1] for v in rows.values()) or 1.0
for (prim, problem), (n, ms) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
    print('| %s | %s | %d | %.1f | %.0f%% |' % (prim, problem, n, ms, 100 * ms / all_ms))
EOF
)

{
    echo "# MinAtar preset: where the time goes at avx2 and baseline ($date, $commit)"
    echo
    echo "Machine: $cpu, $(nproc) cores; $($skinner --version | sed -n 's/^kernels: //p'). Load average"
    echo "$load_before before, $load_after after. \`bench/minatar_split.sh $*\`: $repeats alternating runs"
    echo "of $seconds s each per level, $threads threads, $host; perf cpu-clock at 4 kHz; medians."
    echo
    echo "$tables"
} > "$out"
cat "$out"
echo "minatar_split: wrote $out" >&2
