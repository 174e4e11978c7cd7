#!/usr/bin/env bash
# skinner beside its peers from PyPI, in one run (issue 47 ask 4): CartPole-v1 stepping at
# N = 1, 64, 4096 on one thread (skinner's C loop and Python VecEnv, Gymnasium's vector envs,
# EnvPool), MinAtar Breakout stepping (skinner against minatar's NumPy Environment), and PPO
# to a return on CartPole-v1 and MinAtar/Breakout-v1 (skinner's presets against
# Stable-Baselines3 and CleanRL 1.2.0's ppo.py, each with its own defaults and with skinner's
# preset's hyperparameters). bench/peers.py does the measuring and says what was not measured.
# Writes bench/results/DATE-COMMIT-peers.md. About 25 minutes; QUICK=1 is a smoke run of a
# couple of minutes (two sizes, one round, 45 s caps).
#
# The peers live in their own venv, bench/.venv-peers, made here from Debian's /usr/bin/python3
# (the interpreter skinner's module is built for) without the system's packages, from the pins
# of bench/requirements-peers.txt, and made again only when that file changes (a stamp holds its
# checksum, as scripts/setup.sh's test venv does). It is neither the test venv nor CI's: torch
# from PyPI is the CUDA build (the CPU-only index is not reachable here), about 4.5 GB installed.
#
# usage: bench/peers.sh [SECONDS_PER_RUN=1] [REPEATS=3]
#   SKINNER=build/skinner (its build's python/ is the module), CAP=200 (seconds per PPO run
#   of a peer), BREAKOUT_TARGET=10, QUICK=1, PEERS_VENV=bench/.venv-peers, PEER_THREADS=1
#   (torch's threads in the peers' PPO; skinner trains on all cores and on one thread, and
#   each peer is compared with skinner on as many threads). One, because on this shared
#   2-core machine under load torch's OpenMP threads wait on each other: at load ~7, 2,000
#   512x64x64 products took 0.24 s on one thread and 2.0 s on two. On a quiet machine, try 2.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
usage="usage: bench/peers.sh [SECONDS_PER_RUN=1] [REPEATS=3]  (SKINNER=path CAP=200 BREAKOUT_TARGET=10 PEER_THREADS=1 QUICK=1)"
[[ ${1:-} != -h && ${1:-} != --help ]] || { echo "$usage"; exit 0; }
[[ $# -le 2 ]] || { echo "$usage" >&2; exit 2; }
seconds=${1:-1}
repeats=${2:-3}
skinner=$(realpath -m "${SKINNER:-$root/build/skinner}")
module=$(dirname "$skinner")/python
cap=${CAP:-200}
target=${BREAKOUT_TARGET:-10}
peer_threads=${PEER_THREADS:-1}
venv=${PEERS_VENV:-$root/bench/.venv-peers}
[[ -x $skinner && -d $module/skinner ]] || {
    echo "peers: no $skinner with its Python module beside it (build first)" >&2; echo "$usage" >&2; exit 2; }
quick=()
if [[ ${QUICK:-0} == 1 ]]; then
    seconds=${1:-0.3}
    repeats=${2:-1}
    cap=${CAP:-45}
    quick=(--quick --cleanrl-steps 20000)
fi

# The bench venv: made again when the pins change.
requirements=$root/bench/requirements-peers.txt
stamp=$venv/.skinner-requirements
sum=$(sha256sum "$requirements" | cut -d' ' -f1)
if [[ ! -x $venv/bin/python || ! -f $stamp || $(cat "$stamp") != "$sum" ]]; then
    echo "peers: making $venv from /usr/bin/python3 and bench/requirements-peers.txt" >&2
    start=$(date +%s)
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input)
    "${pip[@]}" -r "$requirements"
    # CleanRL 1.2.0 declares Requires-Python <3.11 and pins gym and friends it does not need for
    # ppo.py: its code alone, unchanged, beside the gym 0.23.1 the file above pins for it.
    "${pip[@]}" --no-deps --ignore-requires-python cleanrl==1.2.0
    echo "$sum" > "$stamp"
    echo "peers: venv made in $(($(date +%s) - start)) s, $(du -sh "$venv" | cut -f1)" >&2
fi

bench_init
date=$(date +%F)
out=$root/bench/results/$date-$commit-peers.md
mkdir -p "$root/bench/results"
isa=$(grep -o -w 'avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//')
command="bench/peers.sh $seconds $repeats (CAP=$cap BREAKOUT_TARGET=$target PEER_THREADS=$peer_threads${QUICK:+ QUICK=$QUICK})"
PYTHONPATH=$module "$venv/bin/python" "$root/bench/peers.py" --skinner "$skinner" \
    --seconds "$seconds" --repeats "$repeats" --cap "$cap" --breakout-target "$target" --peer-threads "$peer_threads" \
    --out "$out" --date "$date" --commit "$commit" --cpu "$cpu" --isa "ISA: ${isa:-x86-64}" \
    --command "$command" --load-start "$(cut -d' ' -f1-3 /proc/loadavg)" "${quick[@]}"
