#!/usr/bin/env bash
# Issue 32 ask 5: skinner's PPO training speed on the MinAtar games against
# bench/minatar_torch_ppo.py (a CleanRL-style PyTorch PPO: the same preset, network and envs),
# on this machine, the two alternating REPEATS times per game so that both see the same load.
# skinner: `skinner bench train MinAtar/GAME-v1 --seconds SECONDS --json` (the preset, all
# cores); torch: the script for TORCH_STEPS steps on --threads 2. Medians, the ratio, the
# FLOPs per env step and the GFLOP/s they make against the machine's measured sgemm peak,
# and where each spends its time. Writes bench/results/DATE-COMMIT-minatar-vs-torch.md.
# usage: bench/minatar_vs_torch.sh [GAMES="Asterix Breakout Freeway Seaquest SpaceInvaders"]
#   SKINNER_BUILD=build (the program and the Python module), SECONDS_PER_RUN=5, TORCH_STEPS=24576,
#   REPEATS=3, PEAK=296 (GFLOP/s: OpenBLAS sgemm 2048^3 on 2 threads, ../shared/BENCHMARKS.md)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
games=${1:-Asterix Breakout Freeway Seaquest SpaceInvaders}
build=${SKINNER_BUILD:-$root/build}
seconds=${SECONDS_PER_RUN:-5}
torch_steps=${TORCH_STEPS:-24576}
repeats=${REPEATS:-3}
peak=${PEAK:-296}
[[ -x $build/skinner && -d $build/python ]] || {
    echo "minatar_vs_torch: no $build/skinner and $build/python (build first)" >&2; exit 2; }
/usr/bin/python3 -c "import torch" 2> /dev/null || {
    echo "minatar_vs_torch: Debian's python3-torch is not installed" >&2; exit 2; }
bench_init
out=$root/bench/results/$date-$commit-minatar-vs-torch.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for game in $games; do
    for r in $(seq "$repeats"); do
        echo "minatar_vs_torch: $game, run $r of $repeats" >&2
        "$build/skinner" bench train "MinAtar/$game-v1" --seconds "$seconds" --json \
            2> /dev/null >> "$tmp/$game.skinner"
        PYTHONPATH=$build/python SKINNER_BUILD=$build /usr/bin/python3 \
            "$root/bench/minatar_torch_ppo.py" --env "MinAtar/$game-v1" \
            --total-steps "$torch_steps" --threads 2 --out "$tmp/$game-$r.csv" \
            > "$tmp/$game-$r.torch"
    done
done
/usr/bin/python3 - "$out" "$tmp" "$date" "$commit" "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" \
    "$(nproc)" "$games" "$repeats" "$seconds" "$torch_steps" "$peak" "$(uptime | sed 's/.*load average: //')" <<'PY'
import json, re, statistics, sys
out, tmp, date, commit, cpu, cores, games, repeats, seconds, torch_steps, peak, load = sys.argv[1:13]
games, repeats, peak = games.split(), int(repeats), float(peak)
lines = ["# MinAtar: skinner's PPO against a PyTorch PPO, same machine", "",
         f"{date}, commit {commit}, {cpu} ({cores} cores), load average at the end {load}. "
         f"`bench/minatar_vs_torch.sh`: for each game, {repeats} alternating runs of "
         f"`skinner bench train MinAtar/GAME-v1 --seconds {seconds} --json` (configs/minatar.ini, "
         f"both cores) and `bench/minatar_torch_ppo.py --total-steps {torch_steps} --threads 2` "
         "(the same preset, network and envs through skinner's Python module; Debian's "
         "python3-torch). Medians. FLOPs per env step count the matrix products of one rollout "
         "forward and 4 epochs of forward and backward; the share is of "
         f"{peak:.0f} GFLOP/s, OpenBLAS's sgemm on 2048-square matrices with 2 threads here.", "",
         "| game | skinner steps/s | torch steps/s | ratio | MFLOP per step | skinner GFLOP/s | share of peak | skinner: rollout / learning | torch: env / acting / update / other |",
         "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
for game in games:
    runs = [json.loads(l) for l in open(f"{tmp}/{game}.skinner")]
    sk = statistics.median(r["sps"] for r in runs)
    flops = runs[0]["flops_per_step"]
    roll = statistics.median(r["rollout_seconds"] / r["seconds"] for r in runs)
    learn = statistics.median(r["learn_seconds"] / r["seconds"] for r in runs)
    torch_sps, shares = [], {}
    for r in range(1, repeats + 1):
        text = open(f"{tmp}/{game}-{r}.torch").read()
        torch_sps.append(float(re.search(r"steps in [0-9.]+ s: ([0-9.]+) steps/s", text).group(1)))
        for part in ("env stepping", "acting", "update", "other"):
            m = re.search(r"^  " + part + r".* ([0-9.]+)%$", text, re.M)
            shares.setdefault(part, []).append(float(m.group(1)))
    th = statistics.median(torch_sps)
    split = " / ".join(f"{statistics.median(v):.0f}%" for v in shares.values())
    gflops = flops * sk * 1e-9
    lines.append(f"| {game} | {sk:,.0f} | {th:,.0f} | {sk / th:.1f}x | {flops / 1e6:.2f} "
                 f"| {gflops:.1f} | {100 * gflops / peak:.0f}% | {100 * roll:.0f}% / {100 * learn:.0f}% "
                 f"| {split} |")
open(out, "w").write("\n".join(lines) + "\n")
print(out)
PY
