#!/usr/bin/env bash
# Recurrent policies, the figures issue 16 asks for, in one run:
#   - CartPole-P-v1 and Pendulum-P-v1 (velocities hidden): the presets (LSTM and GRU cores) to the
#     threshold for seeds 1-5, steps and wall seconds; the feed-forward MLP's best
#     100-episode mean over seeds 1-3 at the same budget (policy.core = none);
#   - CartPole-v1 fully observed with configs/cartpole_lstm.ini, seeds 1-5;
#   - `skinner bench train CartPole-v1`, feed-forward preset and LSTM preset alternating
#     REPEATS times: median steps/s, their ratio, and each one's model FLOPs per step.
# Writes bench/results/DATE-COMMIT-recurrent.md.
# usage: bench/recurrent.sh [SKINNER=build/skinner] [REPEATS=5] [BENCH_SECONDS=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${1:-$root/build/skinner}
repeats=${2:-5}
seconds=${3:-3}
bench_need recurrent "build first" "$skinner"
bench_init
out=$root/bench/results/$date-$commit-recurrent.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# solve ENV SEED [ARGS...]: "steps seconds" of a --stop-when-solved run, or "- best" if not solved
solve() {
    local env=$1 seed=$2
    shift 2
    local run=$tmp/$env-$seed-$RANDOM
    "$skinner" train "$env" --seed "$seed" --stop-when-solved --quiet --run-dir "$run" "$@" >/dev/null
    python3 - "$run" <<'EOF'
import json, sys, csv
run = sys.argv[1]
s = json.load(open(f"{run}/summary.json"))
rows = list(csv.DictReader(open(f"{run}/metrics.csv")))
best = max(float(r["mean_return"]) for r in rows if r["mean_return"] not in ("", "nan"))
if s.get("solved"):
    print(s["solved_at_steps"], f'{s["solved_at_seconds"]:.2f}', f"{best:.1f}")
else:
    print("-", "-", f"{best:.1f}")
EOF
}

{
    echo "# Recurrent policies: solving what needs memory, and what it costs"
    echo
    echo "$date, commit $commit, $cpu ($(nproc) cores), \`bench/recurrent.sh\`. Wall times are"
    echo "on the 2-core machine with nothing else running; each solve uses both cores."
    echo
    for task in "CartPole-P-v1:475" "Pendulum-P-v1:-200"; do
        env=${task%%:*}
        threshold=${task##*:}
        echo "## $env (threshold $threshold)"
        echo
        echo "| policy | seed | solved at steps | wall s | best 100-episode mean |"
        echo "| --- | --- | --- | --- | --- |"
        core=$(sed -n 's/^core *= *//p' "$root/configs/$(echo "${env%-v1}" | tr 'A-Z' 'a-z' | tr '-' '_').ini")
        core=${core^^}
        for seed in 1 2 3 4 5; do
            read -r steps secs best < <(solve "$env" "$seed")
            echo "| preset ($core core) | $seed | $steps | $secs | $best |"
        done
        for seed in 1 2 3; do
            read -r steps secs best < <(solve "$env" "$seed" --policy.core none --policy.layers 2)
            echo "| feed-forward MLP (2x64) | $seed | $steps | $secs | $best |"
        done
        echo
    done
    echo "## CartPole-v1 (fully observed) with an LSTM core (configs/cartpole_lstm.ini)"
    echo
    echo "| seed | solved at steps | wall s | best 100-episode mean |"
    echo "| --- | --- | --- | --- |"
    for seed in 1 2 3 4 5; do
        read -r steps secs best < <(solve CartPole-v1 "$seed" --config "$root/configs/cartpole_lstm.ini")
        echo "| $seed | $steps | $secs | $best |"
    done
    echo
    echo "## Training throughput: \`skinner bench train CartPole-v1 --seconds $seconds\`, $repeats runs each, alternating"
    echo
    for k in $(seq "$repeats"); do
        "$skinner" bench train CartPole-v1 --seconds "$seconds" --json >>"$tmp/ff.jsonl"
        "$skinner" bench train CartPole-v1 --seconds "$seconds" --json \
            --config "$root/configs/cartpole_lstm.ini" >>"$tmp/lstm.jsonl"
    done
    python3 - "$tmp/ff.jsonl" "$tmp/lstm.jsonl" <<'EOF'
import json, statistics, sys
rows = {}
for name, path in (("feed-forward preset (MLP 2x64)", sys.argv[1]),
                   ("LSTM preset (encoder 64, LSTM 64, linear heads)", sys.argv[2])):
    runs = [json.loads(l) for l in open(path)]
    rows[name] = (statistics.median(r["sps"] for r in runs), runs[0]["flops_per_step"],
                  statistics.median(r["gflops"] for r in runs), [round(r["sps"]) for r in runs])
print("| policy | median steps/s | runs | model FLOPs/step | GFLOP/s |")
print("| --- | --- | --- | --- | --- |")
for name, (sps, flops, gflops, runs) in rows.items():
    print(f"| {name} | {sps:,.0f} | {', '.join(f'{r:,}' for r in runs)} | {flops:,.0f} | {gflops:.1f} |")
(ff, ff_flops, _, _), (lstm, lstm_flops, _, _) = rows.values()
print()
print(f"LSTM / feed-forward: {lstm / ff:.2f}x the steps/s for {lstm_flops / ff_flops:.2f}x the FLOPs per step.")
EOF
} | tee "$out"
echo "wrote $out" >&2
