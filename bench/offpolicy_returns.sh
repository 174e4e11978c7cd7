#!/usr/bin/env bash
# Issue 51 ask 6: skinner's SAC and DQN against Stable-Baselines3's (bench/.venv-peers, made by
# bench/peers.sh) on returns: whole runs, the same tasks, budgets and hyperparameters, one env and
# one thread a side, training seeds SEEDS, each final policy over EPISODES deterministic
# evaluation episodes (bench/offpolicy_returns.py says what is set on each side and what cannot
# be: SB3's SAC has one learning rate). SAC on Pendulum-v1 (20,000 steps), DQN on CartPole-v1
# (500,000 steps). Writes bench/results/DATE-COMMIT-offpolicy-returns.md with the machine and load.
# usage: bench/offpolicy_returns.sh [BUILD=build] [SEEDS=1,2,3] [EPISODES=20]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-$root/build}")
seeds=${2:-1,2,3}
episodes=${3:-20}
venv=${PEERS_VENV:-$root/bench/.venv-peers}
[[ -x $build/skinner ]] || { echo "offpolicy_returns: no skinner in $build (build first)" >&2; exit 2; }
[[ -x $venv/bin/python ]] || { echo "offpolicy_returns: no $venv (bench/peers.sh makes it)" >&2; exit 2; }
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%F)
out=$root/bench/results/$date-$commit-offpolicy-returns.md
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
header="# SAC and DQN returns: skinner against Stable-Baselines3

$date, commit $commit, $cpu ($(nproc) cores), kernels: $("$build/skinner" --version | sed -n 's/^kernels: //p').
\`bench/offpolicy_returns.sh $*\`: training seeds $seeds, one env and one thread a side (SB3
$("$venv/bin/python" -c 'import stable_baselines3 as s, torch; print(s.__version__ + ", torch " + torch.__version__)'), device cpu), each final policy
over $episodes deterministic episodes on an env seeded 1,000 + the training seed. Load average
before: $(cut -d' ' -f1-3 /proc/loadavg); after: @LOAD_AFTER@ (the seconds a run are wall clock on a shared machine).

"
PYTHONPATH='' "$venv/bin/python" "$root/bench/offpolicy_returns.py" --skinner "$build/skinner" \
    --seeds "$seeds" --episodes "$episodes" --header "$header" --out "$out"
sed -i "s|@LOAD_AFTER@|$(cut -d' ' -f1-3 /proc/loadavg)|" "$out"
echo "offpolicy_returns: wrote $out" >&2
