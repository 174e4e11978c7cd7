#!/usr/bin/env bash
# The cost of training's env-output checks (issue 30, items 5 and 6): the NaN
# canary written into each observation row before reset and step, and the scan
# of what the env wrote (observations finite and inside the declared Box,
# rewards and final_obs finite, a legal action per mask head). Two builds of
# skinner, one without the checks (OLD) and one with them (NEW), alternate run by
# run, REPEATS times each, on `skinner bench train CartPole-v1` (its preset) and
# on the fast CartPole preset, where the env step is the largest share of the
# loop and a check costs the most. The budget is 2%.
#
# Each run is measured two ways: env steps per wall-clock second (what bench
# train prints) and env steps per CPU second of the process (user + system,
# from its rusage). On a machine shared with other work the wall-clock figure
# swings by tens of percent from run to run; the CPU-time figure does not
# count the time the process waited for a core, so it is the one that can
# resolve 2%. Both are medians; new / old per figure.
# Writes bench/results/DATE-NEWCOMMIT-env-checks.md.
# usage: bench/env_checks.sh OLD_SKINNER NEW_SKINNER [SECONDS_PER_RUN=3] [REPEATS=7] [THREADS=1]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
old=$1
new=$2
seconds=${3:-3}
repeats=${4:-7}
threads=${5:-1}
[[ -x $old && -x $new ]] || { echo "env_checks: usage: bench/env_checks.sh OLD_SKINNER NEW_SKINNER [SECONDS] [REPEATS] [THREADS]" >&2; exit 2; }
bench_init

describe() { git -C "$(dirname "$1")" rev-parse --short HEAD 2>/dev/null || echo unknown; }
old_commit=$(describe "$old")
new_commit=$(describe "$new")
out=$root/bench/results/$date-$new_commit-env-checks.md

# row NAME ARGS...: both programs, alternating, REPEATS times each; one table row
row() {
    python3 - "$old" "$new" "$repeats" "$@" <<'PY'
import json, os, statistics, subprocess, sys
old, new, repeats, name, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
wall = {old: [], new: []}
cpu = {old: [], new: []}
for _ in range(repeats):
    for program in (old, new):
        child = subprocess.Popen([program, *args, "--json"], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
        text = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        if status != 0:
            sys.exit(f"env_checks: {program} {' '.join(args)} failed ({status})")
        result = json.loads(text)
        wall[program].append(result["sps"])
        cpu[program].append(result["steps"] / (usage.ru_utime + usage.ru_stime))
def k(v): return f"{v / 1e3:.1f}k"
a, b = statistics.median(wall[old]), statistics.median(wall[new])
c, d = statistics.median(cpu[old]), statistics.median(cpu[new])
spread = lambda xs: f"{k(min(xs))}..{k(max(xs))}"
print(f"| {name} | {k(a)} | {k(b)} | {b / a:.3f} | {k(c)} | {k(d)} | {d / c:.3f} | "
      f"{spread(cpu[old])} / {spread(cpu[new])} |")
PY
}

{
echo "# Training's env-output checks: $new_commit (with) against $old_commit (without), $date"
echo
echo "Machine: $cpu, $(nproc) cores, $(uname -sr); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
echo "Command: bench/env_checks.sh OLD NEW $seconds $repeats $threads: medians of $repeats runs of $seconds s"
echo "each on $threads thread(s), the two programs alternating run by run."
echo
echo "| figure | wall steps/s $old_commit | $new_commit | new / old | CPU steps/s $old_commit | $new_commit | new / old | CPU range old / new |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
row "bench train CartPole-v1 (preset)" bench train CartPole-v1 --seconds "$seconds" --threads "$threads"
row "bench train CartPole-v1, configs/cartpole_fast.ini" bench train CartPole-v1 --seconds "$seconds" --threads "$threads" --config "$root/configs/cartpole_fast.ini"
micro=$(dirname "$new")/bench/env_checks_bench
if [[ -x $micro ]]; then
    echo
    echo "The checks alone ($micro, from NEW's build: a vec of 256 envs on one thread,"
    echo "alternating 200-step blocks of plain and checked steps, medians of 200 blocks each"
    echo "in the thread's CPU time; actions all 0, so CartPole's episodes end every ~9 steps,"
    echo "the checks' slow path, more often than in training):"
    echo
    echo "| env | ns per env step, plain | checked | the checks |"
    echo "| --- | --- | --- | --- |"
    for env in CartPole-v1 Acrobot-v1 Pendulum-v1; do
        "$micro" "$env" 256 200 200 | python3 -c 'import json,sys; r=json.load(sys.stdin); print("| %s | %.2f | %.2f | %.2f |" % (r["env"], r["plain_ns_per_env_step"], r["checked_ns_per_env_step"], r["check_ns_per_env_step"]))'
    done
fi
} | tee "$out"
echo "wrote $out" >&2
