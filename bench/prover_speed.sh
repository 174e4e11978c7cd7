#!/usr/bin/env bash
# Prover-v0's speed: raw env stepping on one core (skinner bench env, random allowed actions,
# N = 1024 envs) on countries_s3, family and WN18RR, medians of REPEATS runs, beside a baseline
# binary in the same run (ratios on this noisy machine only mean something side by side);
# then, given policies, ranking times: family's full filtered test ranking (RL-only), with
# the least model settling the unprovable candidates and without it (--no-prune: the policy
# proves every candidate), and WN18RR's 100-negative hybrid ranking, on 2 threads. Writes bench/results/DATE-COMMIT-prover-speed.md.
# usage: bench/prover_speed.sh [SECONDS=3] [REPEATS=3] [BASELINE_SKINNER] [FAMILY_RL WN18RR_RL WN18RR_KGE]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-3}
repeats=${2:-3}
baseline=${3:-}
family_rl=${4:-}
wn_rl=${5:-}
wn_kge=${6:-}
skinner=$root/build/skinner
[[ -x $skinner ]] || { echo "prover_speed: build first (make build)" >&2; exit 1; }
data=$root/../shared/datasets
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%Y-%m-%d)
out=$root/bench/results/$date-$commit-prover-speed.md

median_sps() { # binary dataset
    for _ in $(seq "$repeats"); do
        "$1" bench env Prover-v0 --env.dataset "$data/$2" --threads 1 --num-envs 1024 \
            --seconds "$seconds" --json 2> /dev/null
    done | python3 -c 'import json,statistics,sys; print(round(statistics.median(json.loads(l)["sps"] for l in sys.stdin)))'
}
# A table row from skinner eval --json on stdin: NAME, then mrr (RL-only) or hybrid.
row() {
    python3 -c "
import json, sys
r = json.load(sys.stdin)
mrr = r['mrr'] if sys.argv[2] == 'mrr' else r['hybrid']['mrr']
print(f'| {sys.argv[1]} (MRR {mrr:.3f}) | {r[\"candidates\"]:,} | {r[\"settled\"]:,} | {r[\"steps\"]:,} | {r[\"seconds\"]:.1f} | {r[\"candidates\"] / r[\"seconds\"]:,.0f} |')
" "$1" "$2"
}
fmt() { python3 -c 'import sys; v=float(sys.argv[1]); print(f"{v/1e6:.2f}M" if v>=1e6 else f"{v/1e3:.0f}k")' "$1"; }

{
    echo "# Prover-v0 speed, $date, commit $commit"
    echo
    echo "Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores."
    echo "Command: bench/prover_speed.sh $seconds $repeats${baseline:+ $baseline} (medians of $repeats runs of ${seconds} s)."
    echo
    echo "## Env stepping, one core, 1024 envs, random allowed actions (env steps/s)"
    echo
    if [[ -n $baseline ]]; then
        echo "| dataset | this commit | baseline | ratio |"
        echo "| --- | --- | --- | --- |"
    else
        echo "| dataset | this commit |"
        echo "| --- | --- |"
    fi
    for d in countries_s3 family wn18rr; do
        ours=$(median_sps "$skinner" "$d")
        if [[ -n $baseline ]]; then
            theirs=$(median_sps "$baseline" "$d")
            echo "| $d | $(fmt "$ours") | $(fmt "$theirs") | $(python3 -c "print(f'{$ours/$theirs:.1f}x')") |"
        else
            echo "| $d | $(fmt "$ours") |"
        fi
    done
    if [[ -n $family_rl ]]; then
        echo
        echo "## Ranking, 2 threads"
        echo
        echo "| ranking | candidates | settled by the least model | policy steps | seconds | candidates/s |"
        echo "| --- | --- | --- | --- | --- | --- |"
        "$skinner" eval Prover-v0 --checkpoint "$family_rl" --split test --threads 2 --json 2> /dev/null |
            row "family, full filtered, RL-only" mrr
        "$skinner" eval Prover-v0 --checkpoint "$family_rl" --split test --threads 2 --no-prune \
            --json 2> /dev/null | row "family, full filtered, RL-only, --no-prune" mrr
    fi
    if [[ -n $wn_rl && -n $wn_kge ]]; then
        "$skinner" eval Prover-v0 --checkpoint "$wn_rl" --kge "$wn_kge" --negatives 100 --split test \
            --threads 2 --json 2> /dev/null |
            row "WN18RR, 100 negatives, hybrid" hybrid
    fi
} | tee "$out"
echo "wrote $out" >&2
