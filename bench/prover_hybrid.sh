#!/usr/bin/env bash
# Issue 15's family pipeline for seeds 1-3: KGE (configs/kge_family.ini), the RL policy
# (configs/prover_family.ini), then the hybrid ranking of family's test split with 100
# sampled negatives per side (skinner eval Prover-v0 --kge), reporting RL-only, KGE-only
# and hybrid MRR and the wall time of each stage. Writes bench/results/DATE-COMMIT-hybrid.md.
# usage: bench/prover_hybrid.sh [SKINNER=build/skinner]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
skinner=${1:-$root/build/skinner}
[[ -x $skinner ]] || { echo "hybrid: no skinner at $skinner (build first)" >&2; exit 2; }
export SKINNER_CONFIG_DIR=$root/configs
family=$root/../shared/datasets/family
[[ -d $family ]] || { echo "hybrid: no $family" >&2; exit 2; }
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%Y-%m-%d)
out=$root/bench/results/$date-$commit-hybrid.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
    echo "# Prover-v0 on family: RL-only, KGE-only and hybrid ranking"
    echo
    echo "$date, commit $commit, $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) cores),"
    echo "\`bench/prover_hybrid.sh\`. Test split, all 5,626 queries, 100 sampled filtered corruptions"
    echo "per side, head and tail averaged (DeepProofLog's protocol)."
    echo
    echo "| seed | KGE train s | RL train s | ranking s | RL MRR | KGE MRR | hybrid MRR | hybrid H@1 | H@10 |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for seed in 1 2 3; do
        start=$(date +%s.%N)
        (cd "$root" && "$skinner" kge train --config configs/kge_family.ini --dataset "$family" \
            --seed "$seed" --run-dir "$tmp/kge$seed" --quiet > /dev/null)
        mid=$(date +%s.%N)
        (cd "$root" && "$skinner" train prover --config configs/prover_family.ini \
            --env.dataset "$family" --seed "$seed" --run-dir "$tmp/rl$seed" --quiet > /dev/null)
        mid2=$(date +%s.%N)
        "$skinner" eval Prover-v0 --checkpoint "$tmp/rl$seed" --kge "$tmp/kge$seed" --negatives 100 \
            --corrupt both --split test --json 2> /dev/null > "$tmp/eval$seed.json"
        end=$(date +%s.%N)
        python3 - "$tmp/eval$seed.json" "$seed" "$start" "$mid" "$mid2" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
seed, t0, t1, t2, t3 = sys.argv[2], *map(float, sys.argv[3:])
print(f"| {seed} | {t1 - t0:.1f} | {t2 - t1:.1f} | {t3 - t2:.1f} | {r['mrr']:.3f} | {r['kge']['mrr']:.3f} "
      f"| {r['hybrid']['mrr']:.3f} | {r['hybrid']['hits1']:.3f} | {r['hybrid']['hits10']:.3f} |")
PY
    done
} | tee "$out"
echo "wrote $out" >&2
