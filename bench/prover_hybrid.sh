#!/usr/bin/env bash
# Issue 15's pipeline for training seeds 1-3 on family or WN18RR: KGE (configs/kge_DATASET.ini),
# the RL policy (configs/prover_DATASET.ini), then the hybrid ranking of the test split with 100
# sampled negatives per side (skinner eval Prover-v0 --kge), reporting RL-only, KGE-only and
# hybrid MRR, the share of true queries proved by recorded depth, and the wall time of each
# stage. Writes bench/results/DATE-COMMIT-hybrid-DATASET.md.
# Each policy is ranked twice: by its greedy proofs, and with the branch search of SEARCH (default
# the dataset's preset below; `skinner eval --help`), whose figures are the headline ones.
# usage: bench/prover_hybrid.sh [family|wn18rr] [SKINNER=build/skinner] [KGE_DIR]
#   KGE_DIR: reuse KGE runs KGE_DIR/kge-s1..3 (WN18RR's take 9-13 min each on 2 cores) instead of
#   training them; their training time is then read from their metrics.csv.
#   SEARCH="--branches N --alternatives K" overrides the search.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
dataset=${1:-family}
skinner=${2:-$root/build/skinner}
kge_dir=${3:-}
[[ $dataset == family || $dataset == wn18rr ]] || { echo "hybrid: dataset family or wn18rr, not '$dataset'" >&2; exit 2; }
[[ -x $skinner ]] || { echo "hybrid: no skinner at $skinner (build first)" >&2; exit 2; }
# the search presets, chosen on the valid split (docs/prover.md)
# (WN18RR: none; the search proves more corruptions there and the hybrid falls)
declare -A search_preset=([family]="--branches 5 --alternatives 5" [wn18rr]="")
search=${SEARCH-${search_preset[$dataset]}}
bench_init
data=$root/../shared/datasets/$dataset
[[ -d $data ]] || { echo "hybrid: no $data" >&2; exit 2; }
out=$root/bench/results/$date-$commit-hybrid-$dataset.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
    echo "# Prover-v0 on $dataset: RL-only, KGE-only and hybrid ranking"
    echo
    echo "$date, commit $commit, $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) cores),"
    echo "\`bench/prover_hybrid.sh $dataset\`. Test split, all queries, 100 sampled filtered"
    echo "corruptions per side, head and tail averaged (DeepProofLog's protocol). Presets:"
    echo "configs/kge_$dataset.ini, configs/prover_$dataset.ini.${kge_dir:+ KGE runs reused from $kge_dir (their own training time).}"
    echo "Proof search: \`${search:-none (greedy proofs)}\` (ranking s, RL MRR, hybrid, proved); greedy proofs"
    echo "alone in the columns marked greedy."
    echo
    echo "| seed | KGE train s | RL train s | ranking s | greedy ranking s | RL MRR | greedy RL MRR | KGE MRR | hybrid MRR | greedy hybrid MRR | hybrid H@1 | H@10 | proved (greedy) | proved by depth |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for seed in 1 2 3; do
        start=$(date +%s.%N)
        if [[ -n $kge_dir ]]; then
            kge=$kge_dir/kge-s$seed
            kge_seconds=$(python3 -c "import csv,sys; rows=list(csv.DictReader(open(sys.argv[1]))); print(rows[-1]['wall_seconds'])" "$kge/metrics.csv")
        else
            kge=$tmp/kge$seed
            (cd "$root" && "$skinner" kge train --config "configs/kge_$dataset.ini" --dataset "$data" \
                --seed "$seed" --run-dir "$kge" --quiet > /dev/null)
            kge_seconds=
        fi
        mid=$(date +%s.%N)
        (cd "$root" && "$skinner" train prover --config "configs/prover_$dataset.ini" \
            --env.dataset "$data" --seed "$seed" --run-dir "$tmp/rl$seed" --quiet > /dev/null)
        mid2=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$skinner" eval Prover-v0 --checkpoint "$tmp/rl$seed" --kge "$kge" --negatives 100 \
            --corrupt both --split test $search --json 2> /dev/null > "$tmp/eval$seed.json"
        end=$(date +%s.%N)
        if [[ -n $search ]]; then
            "$skinner" eval Prover-v0 --checkpoint "$tmp/rl$seed" --kge "$kge" --negatives 100 \
                --corrupt both --split test --json 2> /dev/null > "$tmp/greedy$seed.json"
        else
            cp "$tmp/eval$seed.json" "$tmp/greedy$seed.json"
        fi
        python3 - "$tmp/eval$seed.json" "$tmp/greedy$seed.json" "$seed" "$start" "$mid" "$mid2" "$end" "$kge_seconds" <<'PY'
import json, sys
r, g = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
seed, t0, t1, t2, t3 = sys.argv[3], *map(float, sys.argv[4:8])
kge_s = float(sys.argv[8]) if sys.argv[8] else t1 - t0
depths = " ".join(f"{d}: {p}/{n}" for d, (p, n) in r["proved_by_depth"].items())
print(f"| {seed} | {kge_s:.1f} | {t2 - t1:.1f} | {t3 - t2:.1f} | {g['seconds']:.1f} | {r['mrr']:.4f} "
      f"| {g['mrr']:.4f} | {r['kge']['mrr']:.4f} | {r['hybrid']['mrr']:.4f} | {g['hybrid']['mrr']:.4f} "
      f"| {r['hybrid']['hits1']:.4f} | {r['hybrid']['hits10']:.4f} "
      f"| {100 * r['proved_rate']:.1f}% ({100 * g['proved_rate']:.1f}%) | {depths} |")
PY
    done
    # the mean and spread (min-max) over the seeds
    python3 - "$tmp" "$search" <<'PY'
import json, sys
searched = bool(sys.argv[2])
runs = [json.load(open(f"{sys.argv[1]}/eval{s}.json")) for s in (1, 2, 3)]
greedy = [json.load(open(f"{sys.argv[1]}/greedy{s}.json")) for s in (1, 2, 3)]
def cell(values):
    return f"{sum(values) / len(values):.4f} ({min(values):.4f}-{max(values):.4f})"
print()
line = (f"Mean (min-max) over the seeds, {'with the search' if searched else 'greedy proofs'}: "
        f"RL-only {cell([r['mrr'] for r in runs])}, KGE-only {cell([r['kge']['mrr'] for r in runs])}, "
        f"hybrid {cell([r['hybrid']['mrr'] for r in runs])}")
if searched:
    line += (f"; greedy proofs alone: RL-only {cell([r['mrr'] for r in greedy])}, "
             f"hybrid {cell([r['hybrid']['mrr'] for r in greedy])}")
print(line + ".")
PY
} | tee "$out"
echo "wrote $out" >&2
