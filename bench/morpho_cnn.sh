#!/usr/bin/env bash
# Morpho-v0's convolutional host, the speed figures issue 17 asks for, in one run:
#   - conv_bench: the machine's GEMM peak through oneDNN (fp32, bf16) and OpenBLAS, one core,
#     and each of the host's convolutions through im2col + OpenBLAS sgemm against oneDNN;
#   - `skinner bench env Morpho-v0 --env.host cnn` on both cores (8 envs), fp32 and bf16
#     alternating REPEATS times, with the host alone and with 3 conv_heavy seeds blending in
#     every env (env.fixed_seeds 3): median host epochs/s;
#   - FLOPs per epoch from the layer shapes (training: forward, input and weight gradients, 3x
#     the forward; validation: the subsets of blending seeds as the depth-first pass runs them),
#     the rate they imply and its share of the measured peak on 2 cores.
# Writes bench/results/DATE-COMMIT-morpho-cnn.md.
# usage: bench/morpho_cnn.sh [SKINNER=build/skinner] [REPEATS=3] [BENCH_SECONDS=10]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${1:-$root/build/skinner}
repeats=${2:-3}
seconds=${3:-10}
conv_bench=$(dirname "$skinner")/bench/conv_bench
[[ -x $skinner && -x $conv_bench ]] || { echo "morpho_cnn: build first (no $skinner or $conv_bench)" >&2; exit 2; }
bench_init
out=$root/bench/results/$date-$commit-morpho-cnn.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$conv_bench" 1 > "$tmp/conv.jsonl"
for ((r = 0; r < repeats; r++)); do
    for seeds in 0 3; do
        for precision in fp32 bf16; do
            "$skinner" bench env Morpho-v0 --env.host cnn --env.precision "$precision" \
                --env.fixed_seeds "$seeds" --threads 2 --seconds "$seconds" --json \
                >> "$tmp/env-$seeds-$precision.jsonl"
        done
    done
done

python3 - "$tmp" "$date" "$commit" "$cpu" "$(nproc)" "$repeats" "$seconds" > "$out" <<'EOF'
import json, statistics, sys
tmp, date, commit, cpu, cores, repeats, seconds = sys.argv[1:]
cores = int(cores)
conv = [json.loads(l) for l in open(f"{tmp}/conv.jsonl")]
peak = {}
for f in conv:
    if f["figure"] == "peak" and f["library"] == "onednn":
        peak[f["type"]] = max(peak.get(f["type"], 0.0), f["gflops"])

# The CNN host at env.channels = 8 (host.c): three 3x3 stride-2 convolutions 28 -> 14 -> 7 -> 4,
# channels 8, 16, 32, a mean pool and a 32 x 10 head; conv_heavy = two 3x3 convolutions C -> C
# at the slot's grid (conv_blocks.h). Multiply-adds per image:
geom = [(14, 8), (7, 16), (4, 32)]
stage_in = [(28, 1), (14, 8), (7, 16)]
stage = [g[0] ** 2 * g[1] * 9 * cin for g, (side, cin) in zip(geom, stage_in)]
head = 32 * 10
heavy = [2 * side * side * c * 9 * c for side, c in geom]
batches, batch_size, val_size = 8, 256, 1000
def epoch_flops(seeds):
    on = [k < seeds for k in range(3)]
    train = 3 * (sum(stage) + head + sum(h for h, o in zip(heavy, on) if o)) * batches * batch_size
    # depth first over the subsets: stage k runs once per subset of the seeds before it
    val, paths = 0, 1
    for k in range(3):
        val += paths * stage[k]
        if on[k]:
            val += paths * heavy[k]
            paths *= 2
    val = (val + paths * head) * val_size
    return 2 * (train + val)

def median_sps(seeds, precision):
    return statistics.median(json.loads(l)["sps"] for l in open(f"{tmp}/env-{seeds}-{precision}.jsonl"))

print("# Morpho-v0, convolutional host: host epochs per second, fp32 and bf16\n")
print(f"{date}, commit {commit}, {cpu} ({cores} cores), `bench/morpho_cnn.sh`: median of {repeats} "
      f"alternating {seconds}-s runs of `skinner bench env Morpho-v0 --env.host cnn "
      "--env.precision P --env.fixed_seeds S --threads 2` (8 envs, an epoch is 8 x 256 images, "
      "validation on 1,000).\n")
print("Peak (one core, oneDNN matmul, largest of the shapes conv_bench runs): "
      f"fp32 {peak.get('f32', 0):.0f} GFLOP/s, bf16 {peak.get('bf16', 0):.0f} GFLOP/s; "
      f"x{cores} cores below.\n")
print("| seeds blending | precision | host epochs/s | GFLOP per epoch | GFLOP/s | share of peak |")
print("| --- | --- | --- | --- | --- | --- |")
for seeds in (0, 3):
    for precision, kind in (("fp32", "f32"), ("bf16", "bf16")):
        sps = median_sps(seeds, precision)
        flops = epoch_flops(seeds)
        rate = sps * flops / 1e9
        share = rate / (cores * peak[kind]) if kind in peak else float("nan")
        print(f"| {seeds} conv_heavy | {precision} | {sps:.1f} | {flops / 1e9:.2f} | {rate:.1f} | {100 * share:.1f}% |")
print()
print("## Each convolution at 256 images (conv_bench, one core, ms per call)\n")
print("| shape | im2col | sgemm | im2col + sgemm | oneDNN fp32 fwd | oneDNN bf16 fwd | oneDNN fp32 fwd+bwd | oneDNN bf16 fwd+bwd | oneDNN kernel |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
fmt = lambda v: "-" if v is None else f"{v:.3f}"
for f in conv:
    if f["figure"] != "conv":
        continue
    print(f"| {f['shape']} | {fmt(f.get('im2col_ms'))} | {fmt(f.get('sgemm_ms'))} | {fmt(f.get('im2col_sgemm_ms'))} | "
          f"{fmt(f['onednn_f32_fwd_ms'])} | {fmt(f['onednn_bf16_fwd_ms'])} | {fmt(f['onednn_f32_train_ms'])} | "
          f"{fmt(f['onednn_bf16_train_ms'])} | {f.get('impl_bf16', '')} |")
EOF
echo "wrote $out"
cat "$out"
