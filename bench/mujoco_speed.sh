#!/usr/bin/env bash
# shellcheck disable=SC2086 # the rounds are space-separated lists, split on purpose
# Issue 50 ask 6: HalfCheetah-v5 stepping against the limit and the peers, in one run. Each round
# runs, one after another: the raw physics (bench/mujoco_raw.c: mj_step in a C loop on the
# module's model file, the same libmujoco, divided by frame_skip), `skinner bench env` on 1 and 2
# threads, EnvPool's HalfCheetah-v4 (its own bundled MuJoCo) on 1 and 2 threads, and Gymnasium's
# SyncVectorEnv (bench/mujoco_peers.py step); the table gives the medians of ROUNDS rounds, in
# env steps per wall second and per CPU second (user + system: a shared machine slows the wall
# clock, less the CPU clock). Writes bench/results/DATE-COMMIT-mujoco-speed.md.
#
# usage: bench/mujoco_speed.sh
#   ROUNDS=5, SECONDS_EACH=3, NUM_ENVS=64 (skinner and EnvPool), GYM_ENVS=8 (SyncVectorEnv),
#   SKINNER=build/skinner, PEERS_PYTHON (envpool and gymnasium; default bench/.venv-peers/bin/python)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
skinner=${SKINNER:-$root/build/skinner}
peers_python=${PEERS_PYTHON:-$root/bench/.venv-peers/bin/python}
rounds=${ROUNDS:-5}
seconds=${SECONDS_EACH:-3}
num_envs=${NUM_ENVS:-64}
gym_envs=${GYM_ENVS:-8}
model=$root/modules/mujoco/models/half_cheetah.xml
frame_skip=5
bench_need mujoco_speed "build first" "$skinner"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 "$root/bench/mujoco_raw.c" -I/usr/local/include -L/usr/local/lib -Wl,-rpath,/usr/local/lib \
    -lmujoco -o "$work/raw"
bench_init
# "wall_sps cpu_sps" in env steps
raw() {
    "$work/raw" "$model" "$frame_skip" "$seconds" |
        awk -v f="$frame_skip" '{ printf "%d %d\n", $1 / f / $2, $1 / f / $3 }'
}
sk() {
    /usr/bin/time -o "$work/t" -f '%U %S' "$skinner" bench env HalfCheetah-v5 --threads "$1" \
        --num-envs "$num_envs" --seconds "$seconds" --json 2> /dev/null |
        /usr/bin/python3 -c "import json, sys
r = json.loads(sys.stdin.read().strip().splitlines()[-1]); u, s = open('$work/t').read().split()[-2:]
print(int(r['sps']), int(r['sps'] * r.get('seconds', $seconds) / (float(u) + float(s))))" 2> /dev/null ||
        echo "n/a n/a"
}
peer() { # THREADS (0: Gymnasium's SyncVectorEnv) NUM_ENVS
    "$peers_python" "$root/bench/mujoco_peers.py" step HalfCheetah-v5 "$2" "$1" "$seconds" 2> /dev/null |
        /usr/bin/python3 -c "import json, sys; r = json.loads(sys.stdin.read()); print(int(r['sps']), int(r['cpu_sps']))" ||
        echo "n/a n/a"
}
names=("raw mj_step / frame_skip, C loop, 1 thread" "skinner bench env, 1 thread, $num_envs envs"
    "skinner bench env, 2 threads, $num_envs envs" "EnvPool HalfCheetah-v4, 1 thread, $num_envs envs"
    "EnvPool HalfCheetah-v4, 2 threads, $num_envs envs" "Gymnasium SyncVectorEnv, $gym_envs envs")
declare -A wall cpus # not cpu: bench/lib.sh names the CPU model so
load0=$(cut -d' ' -f1 /proc/loadavg)
for ((r = 0; r < rounds; r++)); do
    i=0
    for result in "$(raw)" "$(sk 1)" "$(sk 2)" "$(peer 1 "$num_envs")" "$(peer 2 "$num_envs")" "$(peer 0 "$gym_envs")"; do
        read -r w c <<< "$result"
        wall[$i]="${wall[$i]:-} $w" cpus[$i]="${cpus[$i]:-} $c"
        i=$((i + 1))
    done
done
load1=$(cut -d' ' -f1 /proc/loadavg)
out=$root/bench/results/$(date -u +%Y-%m-%d)-$commit-mujoco-speed.md
envpool_mujoco=$("$peers_python" -c "import ctypes, envpool, os
lib = ctypes.CDLL(os.path.join(os.path.dirname(envpool.__file__), 'mujoco', 'mujoco_gym_envpool.so'))
lib.mj_versionString.restype = ctypes.c_char_p
print(envpool.__version__, 'with its own MuJoCo', lib.mj_versionString().decode())" 2> /dev/null || echo "n/a")
{
    echo "# HalfCheetah-v5 stepping against the raw physics and the peers ($(date -u +%Y-%m-%d), commit $commit)"
    echo
    echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, shared (load average $load0 at the start, $load1 at the end)."
    echo "\`bench/mujoco_speed.sh\` (ROUNDS=$rounds, ${seconds} s each, medians; the programs alternate within a round)."
    echo "MuJoCo 3.3.7 (libmujoco of PyPI's wheel) for the raw loop, skinner and Gymnasium; EnvPool $envpool_mujoco."
    echo "Env steps per second: per wall second, and per CPU second (user + system)."
    echo
    echo "| what | env steps/s (wall) | env steps/CPU-s | per CPU-s / raw |"
    echo "|---|---|---|---|"
    raw_cpu=$(median ${cpus[0]})
    for ((i = 0; i < ${#names[@]}; i++)); do
        c=$(median ${cpus[$i]})
        echo "| ${names[$i]} | $(median ${wall[$i]}) | $c | $(ratio "$c" "$raw_cpu") |"
    done
    echo
    w1=$(median ${wall[1]}) w2=$(median ${wall[2]}) c1=$(median ${cpus[1]}) c2=$(median ${cpus[2]})
    echo "skinner, 2 threads against 1: $(ratio "$w2" "$w1")x per wall second; per CPU second $(ratio "$c2" "$c1")"
    echo "(2 x that is the speedup two free cores would give). Targets (issue 50): 1 thread per CPU-s >= 0.90 of raw; 2 threads >= 1.8x."
    echo
    echo "Rounds (wall, per CPU-s): "
    for ((i = 0; i < ${#names[@]}; i++)); do echo "- ${names[$i]}:${wall[$i]} /${cpus[$i]}"; done
} > "$out"
cat "$out"
