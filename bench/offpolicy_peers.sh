#!/usr/bin/env bash
# Issue 51 ask 6: skinner's SAC and DQN against Stable-Baselines3's (2.9.2, bench/.venv-peers,
# made by bench/peers.sh) on the same hyperparameters, one thread each (skinner --threads 1,
# torch.set_num_threads(1)), one env, alternating, REPEATS times: gradient updates per wall
# second and per CPU-second, and env steps per second, after learning starts (bench/offpolicy_peers.py
# says how each side is timed). SAC on Pendulum-v1 and HalfCheetah-v5, DQN on CartPole-v1 and
# MinAtar/Breakout-v1.
# Writes bench/results/DATE-COMMIT-offpolicy-peers.md with the machine and the load.
# usage: bench/offpolicy_peers.sh [BUILD=build] [REPEATS=3] [SAC_STEPS=2000] [DQN_STEPS=20000]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-$root/build}")
repeats=${2:-3}
sac_steps=${3:-2000}
dqn_steps=${4:-20000}
venv=${PEERS_VENV:-$root/bench/.venv-peers}
[[ -x $build/skinner ]] || { echo "offpolicy_peers: no skinner in $build (build first)" >&2; exit 2; }
[[ -x $venv/bin/python ]] || { echo "offpolicy_peers: no $venv (bench/peers.sh makes it)" >&2; exit 2; }
commit=$(git -C "$root" rev-parse --short HEAD)
date=$(date -u +%F)
out=$root/bench/results/$date-$commit-offpolicy-peers.md
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
header="# SAC and DQN: skinner against Stable-Baselines3

$date, commit $commit, $cpu ($(nproc) cores). \`bench/offpolicy_peers.sh $* \` ($repeats repeats,
alternating; the medians). One env, one thread on each side (skinner \`--threads 1\`, SB3 with
\`torch.set_num_threads(1)\`, torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null), device cpu).
Same hyperparameters: SAC two 256 x 256 ReLU Q networks and a 256 x 256 actor, batch 256,
buffer 100,000, learning starts 1,000, a gradient step every env step; DQN 128 x 128 ReLU,
batch 128, buffer 10,000, learning starts 10,000, a gradient step every 10 env steps, target
every 500; DQN on MinAtar/Breakout-v1 (sticky actions 0.1) skinner's MinAtar network (a 3x3
convolution to 16 channels, a 64-unit ReLU layer, two 64-unit tanh layers) with SB3's
features extractor built alike, batch 32, buffer 100,000, learning starts 10,000, a gradient
step every 4 env steps, target every 1,000, Adam at 1e-4. SB3 steps its actor every gradient step, skinner (CleanRL's schedule) 2 actor steps
every 2nd: the same count. Only the steps after learning starts are timed. Load average before: $load_before;
after: @LOAD_AFTER@ (other jobs share the cores: the per-CPU-second columns move less).

"
PYTHONPATH='' "$venv/bin/python" "$root/bench/offpolicy_peers.py" --skinner "$build/skinner" \
    --repeats "$repeats" --measured "$sac_steps" --dqn-measured "$dqn_steps" --header "$header" --out "$out"
sed -i "s|@LOAD_AFTER@|$(cut -d' ' -f1-3 /proc/loadavg)|" "$out"
echo "offpolicy_peers: wrote $out" >&2
