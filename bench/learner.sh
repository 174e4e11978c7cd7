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
export SKINNER_CONFIG_DIR=$root/configs
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%Y-%m-%d)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
out=$root/bench/results/$date-$commit-$name.md
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

workloads=(
    "CartPole-v1 (preset)|CartPole-v1|"
    "CartPole-v1 (cartpole_fast.ini)|CartPole-v1|--config $root/configs/cartpole_fast.ini"
    "CartPole-v1 (cartpole_lstm.ini)|CartPole-v1|--config $root/configs/cartpole_lstm.ini"
    "MinAtar/Breakout-v1 (preset)|MinAtar/Breakout-v1|"
)
median() { printf '%s\n' "$@" | { grep -v n/a || true; } | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { if (x + 0 > 0 && y + 0 > 0) printf "%.2f", x / y; else printf "n/a" }'; }

# one run: "wall_sps cpu_sps"
run() {
    local program=$1 env=$2 extra=$3 timing
    timing=$(mktemp)
    # shellcheck disable=SC2086
    /usr/bin/time -o "$timing" -f '%U %S' "$program" bench train "$env" --threads "$threads" \
        --seconds "$seconds" $extra --json 2> /dev/null |
        /usr/bin/python3 -c "import json, sys
r = json.load(sys.stdin); user, system = open('$timing').read().split()[-2:]
print(int(r['sps']), int(r['steps'] / (float(user) + float(system))))" 2> /dev/null ||
        echo "n/a n/a" # the old binary may not have the env (4e786c5 has no MinAtar)
    rm -f "$timing"
}

lines=()
for w in "${workloads[@]}"; do
    IFS='|' read -r name env extra <<< "$w"
    new_wall=() new_cpu=() old_wall=() old_cpu=()
    for ((r = 0; r < repeats; r++)); do
        read -r a b <<< "$(run "$skinner" "$env" "$extra")"
        new_wall+=("$a") new_cpu+=("$b")
        read -r a b <<< "$(run "$old" "$env" "$extra")"
        old_wall+=("$a") old_cpu+=("$b")
    done
    nw=$(median "${new_wall[@]}") nc=$(median "${new_cpu[@]}")
    ow=$(median "${old_wall[@]}") oc=$(median "${old_cpu[@]}")
    lines+=("| $name | $nw | $ow | $(ratio "$nw" "$ow") | $nc | $oc | $(ratio "$nc" "$oc") |")
    echo "learner: ${lines[-1]}" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

gemm_table() {
    "$gemm_bench" 9 | /usr/bin/python3 -c "import json, sys
rows = {}
for line in sys.stdin:
    r = json.loads(line)
    key = (r['pass'], r['shape'])
    rows.setdefault(key, {})[r['candidate']] = '%.1f' % r['gflops'] if r.get('available', True) else '-'
for (which, shape), c in rows.items():
    print('| %s | %s | %s | %s | %s |' % (which, shape, c['openblas'], c['skinner_avx512'], c['libxsmm']))"
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
    echo "| pass | shape (B rows, C in, OC out) | OpenBLAS | skinner AVX-512 | libxsmm |"
    echo "|---|---|---|---|---|"
    echo "$gemm_plain"
    echo
    echo "With OPENBLAS_CORETYPE=Haswell (OpenBLAS pinned to its AVX2 kernels; the others unchanged):"
    echo
    echo "| pass | shape (B rows, C in, OC out) | OpenBLAS | skinner AVX-512 | libxsmm |"
    echo "|---|---|---|---|---|"
    echo "$gemm_haswell"
} > "$out"
echo "learner: wrote $out" >&2
