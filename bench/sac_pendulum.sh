#!/usr/bin/env bash
# Issue 51 ask 6: SAC on Pendulum-v1 reaches -200 within 20k steps, on 3 seeds. Trains
# `skinner train Pendulum-v1 --train.algo sac --env.num_envs 1 --total-steps 20000 --seed S`
# (CleanRL's sac_continuous_action setting: one env, its defaults, which are sac.*'s) for each
# seed, one at a time, into RUNS/pendulum-sac-sS (a run folder already there is read, not
# trained again), then reads each episode's return back from metrics.csv: with one env an
# iteration ends at most one episode, and while fewer than 100 have ended the mean_return
# column is the mean of all of them, so episode k's return is k m_k - (k - 1) m_(k-1). Prints,
# per seed, the env step at which the mean of the last 10 episodes first passes -200, that mean
# at the end, the wall time and the env (= gradient) steps per second after learning starts.
# usage: bench/sac_pendulum.sh [BUILD=build] [RUNS=runs] [SEEDS="1 2 3"]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-$root/build}")
runs=${2:-runs}
seeds=${3:-1 2 3}
[[ -x $build/skinner ]] || { echo "sac_pendulum: no skinner in $build (build first)" >&2; exit 2; }
for s in $seeds; do
    run=$runs/pendulum-sac-s$s
    [[ -f $run/summary.json ]] && continue
    "$build/skinner" train Pendulum-v1 --train.algo sac --env.num_envs 1 --total-steps 20000 --seed "$s" \
        --run-dir "$run" --quiet
done
echo "| seed | last-10 mean first past -200 at env step | last 10 episodes at 20k | episodes | wall s | steps/s after learning starts |"
echo "|---|---|---|---|---|---|"
for s in $seeds; do
    /usr/bin/python3 - "$runs/pendulum-sac-s$s/metrics.csv" "$s" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
returns, at, seen, prev = [], [], 0, 0.0
for r in rows:
    k = int(r["episodes"])
    if k == seen:
        continue
    if k != seen + 1 or k > 100:
        raise SystemExit("sac_pendulum: %s: episodes jump from %d to %d (needs one env and <= 100 episodes)"
                         % (sys.argv[1], seen, k))
    m = float(r["mean_return"])
    returns.append(k * m - (k - 1) * prev)
    at.append(int(r["steps"]))
    seen, prev = k, m
first = next((at[i] for i in range(9, len(returns)) if sum(returns[i - 9:i + 1]) / 10 > -200), None)
start = next(r for r in rows if int(r["steps"]) >= 5000)
end = rows[-1]
rate = (int(end["steps"]) - int(start["steps"])) / (float(end["wall_seconds"]) - float(start["wall_seconds"]))
print("| %s | %s | %.0f | %d | %.0f | %.0f |" % (sys.argv[2], "{:,}".format(first) if first else "not reached",
      sum(returns[-10:]) / 10, len(returns), float(end["wall_seconds"]), rate))
PY
done
