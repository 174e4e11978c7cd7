#!/usr/bin/env bash
# Issue 38 ask 5: `skinner prover run` (the one command, settings derived from the KB, no
# hand-made preset) on each DATASET for training seeds 1-3: test split, 100 sampled negatives
# per side, the hybrid's weights and proof search tuned on valid. Reports RL-only, KGE-only and
# tuned-hybrid MRR, Hits@1/3/10, the tuned choice, the proof rate by recorded depth and the
# time of each stage, and the hybrid's distance below KGE-only on test against the spread of
# KGE-only over the seeds. Writes bench/results/DATE-COMMIT-prover-run.md.
# usage: bench/prover_run.sh [DATASET ...] (default: countries_s3 family wn18rr)
#   SKINNER=build/skinner  THREADS=2 (each stage's --threads)  SEEDS="1 2 3"
#   RUNS=DIR keeps the run folders there (default: a temporary folder); a rerun with the same
#   RUNS resumes each unfinished run at its stage (`skinner prover run` is resumable).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
skinner=${SKINNER:-$root/build/skinner}
threads=${THREADS:-2}
seeds=${SEEDS:-1 2 3}
datasets=("$@")
[[ ${#datasets[@]} -gt 0 ]] || datasets=(countries_s3 family wn18rr)
[[ -x $skinner ]] || { echo "prover_run: no skinner at $skinner (build first)" >&2; exit 2; }
export SKINNER_CONFIG_DIR=$root/configs # Prover-v0's preset under the derived settings
runs=${RUNS:-}
if [[ -z $runs ]]; then
    runs=$(mktemp -d)
    trap 'rm -rf "$runs"' EXIT
fi
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%Y-%m-%d)
out=$root/bench/results/$date-$commit-prover-run.md
{
    echo "# skinner prover run: countries_s3, family, WN18RR with derived settings"
    echo
    echo "$date, commit $commit, $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) cores, shared"
    echo "with other jobs: load average $(cut -d' ' -f1-3 /proc/loadavg) at the start),"
    echo "\`bench/prover_run.sh ${datasets[*]}\` (THREADS=$threads): \`skinner prover run --dataset"
    echo "../shared/datasets/NAME --run-dir DIR --seed S --threads $threads\`, no preset: the settings are"
    echo "derived from the KB (docs/prover.md). Test split, 100 sampled filtered corruptions per side;"
    echo "the hybrid's weights and proof search chosen on valid (KGE-only among the choices)."
    echo
} > "$out"
for dataset in "${datasets[@]}"; do
    data=$root/../shared/datasets/$dataset
    [[ -d $data ]] || { echo "prover_run: no $data" >&2; exit 2; }
    {
        echo "## $dataset"
        echo
        echo "| seed | settings s | KGE s | policy s | tune + rank s | RL-only MRR | KGE-only MRR | hybrid MRR | hybrid H@1 | H@3 | H@10 | tuned choice (valid MRR; KGE-only) | proved | proved by depth |"
        echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    } >> "$out"
    for seed in $seeds; do
        dir=$runs/$dataset-s$seed
        echo "prover_run: $dataset seed $seed -> $dir" >&2
        "$skinner" prover run --dataset "$data" --run-dir "$dir" --seed "$seed" \
            --threads "$threads" >&2
        python3 - "$dir/report.json" "$seed" >> "$out" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
g, t, s = r["ranking"], r["ranking"]["tuned"], r["stage_seconds"]
depth = " ".join(f"{k} {v[0]}/{v[1]}" for k, v in g["proved_by_depth"].items())
print(f"| {sys.argv[2]} | {s['settings']:.1f} | {s['kge']:.1f} | {s['policy']:.1f} | {s['rank']:.1f} "
      f"| {g['mrr']:.4f} | {g['kge']['mrr']:.4f} | {g['hybrid']['mrr']:.4f} "
      f"| {g['hybrid']['hits1']:.4f} | {g['hybrid']['hits3']:.4f} | {g['hybrid']['hits10']:.4f} "
      f"| {t['choice']} ({t['chosen_valid_mrr']:.4f}; {t['kge_valid_mrr']:.4f}) "
      f"| {100 * g['proved_rate']:.1f}% | {depth} |")
EOF
    done
    python3 - "$runs" "$dataset" "$seeds" >> "$out" <<'EOF'
import json, sys
runs, dataset, seeds = sys.argv[1], sys.argv[2], sys.argv[3].split()
rows = [json.load(open(f"{runs}/{dataset}-s{s}/report.json"))["ranking"] for s in seeds]
mean = lambda xs: sum(xs) / len(xs)
rl, kge, hyb = ([r["mrr"] for r in rows], [r["kge"]["mrr"] for r in rows],
                [r["hybrid"]["mrr"] for r in rows])
spread = max(kge) - min(kge)
gap = [h - k for h, k in zip(hyb, kge)]
print(f"\nMeans: RL-only {mean(rl):.4f}, KGE-only {mean(kge):.4f}, hybrid {mean(hyb):.4f}. "
      f"Hybrid minus KGE-only on test, by seed: {', '.join(f'{g:+.4f}' for g in gap)} "
      f"(the KGE-only spread over the seeds: {spread:.4f}).\n")
EOF
done
echo "prover_run: wrote $out" >&2
