#!/usr/bin/env bash
# Issue 38 ask 3: potential-based reward shaping (env.shaping = C) against none, measured on the
# valid split: for each DATASET (family, wn18rr) and training seed, the policy trained with
# configs/prover_DATASET.ini for STEPS env steps on THREADS threads with C = 0 and with each C of
# SHAPING, then `skinner eval Prover-v0 --split valid --negatives 100` (RL-only, greedy proofs):
# MRR, the share of true queries proved, and proved by recorded depth. The same seed gives both
# arms the same initial weights and env streams. Writes bench/results/DATE-COMMIT-prover-shaping.md.
# usage: bench/prover_shaping.sh [DATASET ...] (default: family wn18rr)
#   SKINNER=build/skinner  SEEDS="1 2 3"  SHAPING="0.1"  STEPS=2000000  THREADS=1
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${SKINNER:-$root/build/skinner}
seeds=${SEEDS:-1 2 3}
shaping=${SHAPING:-0.1}
steps=${STEPS:-2000000}
threads=${THREADS:-1}
datasets=("$@")
[[ ${#datasets[@]} -gt 0 ]] || datasets=(family wn18rr)
bench_need prover_shaping "build first" "$skinner"
bench_init
out=$root/bench/results/$date-$commit-prover-shaping.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
    echo "# Prover-v0: potential-based reward shaping against none, on valid"
    echo
    echo "$date, commit $commit, $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) cores; load"
    echo "average $(cut -d' ' -f1-3 /proc/loadavg) at the start). \`bench/prover_shaping.sh ${datasets[*]}\`:"
    echo "configs/prover_DATASET.ini, $steps steps on $threads thread(s), \`--env.shaping C\`; then"
    echo "\`skinner eval Prover-v0 --split valid --negatives 100\` (RL-only, greedy proofs)."
    echo
    echo "| dataset | seed | C | RL-only MRR | proved | proved by depth (proved/queries) |"
    echo "| --- | --- | --- | --- | --- | --- |"
} > "$out"
for dataset in "${datasets[@]}"; do
    data=$root/../shared/datasets/$dataset
    [[ -d $data && -f $root/configs/prover_$dataset.ini ]] ||
        { echo "prover_shaping: no $data or configs/prover_$dataset.ini" >&2; exit 2; }
    for seed in $seeds; do
        for c in 0 $shaping; do
            run=$tmp/$dataset-s$seed-c$c
            echo "prover_shaping: $dataset seed $seed C $c" >&2
            "$skinner" train Prover-v0 --config "$root/configs/prover_$dataset.ini" \
                --env.dataset "$data" --env.shaping "$c" --seed "$seed" --threads "$threads" \
                --total-steps "$steps" --run-dir "$run" --quiet > /dev/null
            "$skinner" eval Prover-v0 --checkpoint "$run" --split valid --negatives 100 \
                --threads "$threads" --json 2> /dev/null > "$run.json"
            python3 - "$run.json" "$dataset" "$seed" "$c" >> "$out" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
depth = " ".join(f"{d}: {p}/{n}" for d, (p, n) in r["proved_by_depth"].items())
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {r['mrr']:.4f} | {100 * r['proved_rate']:.1f}% | {depth} |")
EOF
        done
    done
    python3 - "$tmp" "$dataset" "$seeds" "$shaping" >> "$out" <<'EOF'
import json, sys
tmp, dataset, seeds, shaping = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
def runs(c):
    return [json.load(open(f"{tmp}/{dataset}-s{s}-c{c}.json")) for s in seeds]
base = runs("0")
for c in shaping:
    arm = runs(c)
    gain = [a["mrr"] - b["mrr"] for a, b in zip(arm, base)]
    print(f"\n{dataset}, C = {c} against none: RL-only MRR {sum(b['mrr'] for b in base) / len(base):.4f} "
          f"-> {sum(a['mrr'] for a in arm) / len(arm):.4f} (by seed: {', '.join(f'{g:+.4f}' for g in gain)}).")
EOF
done
echo "prover_shaping: wrote $out" >&2
