#!/usr/bin/env bash
# Issue 36 ask 2's figure: nanoseconds per action of a policy exported as a C header
# (`skinner export RUN --c policy.h`), for CartPole-v1's preset (MLP), its LSTM preset
# (configs/cartpole_lstm.ini), Pendulum-v1's preset (Gaussian) and MinAtar/Breakout-v1's preset
# (CNN over uint8 images). Each policy is trained briefly (its weights' values do not change
# the work), then tests/export/driver.c, compiled with cc -O2 -std=c99 as a user would, times
# policy_act over 1,000 random observations, PASSES times: CPU time of the process (the figure
# holds on a shared machine; wall time there counts other programs' turns), median of 3 runs.
# usage: bench/export_c.sh [SKINNER=build/skinner] [PASSES=200]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
skinner=${1:-$root/build/skinner}
passes=${2:-200}
bench_need export_c "build first" "$skinner"
bench_init
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "export_c: $(git -C "$root" rev-parse --short HEAD) on $cpu, $passes passes of 1000 rows"
printf '%-28s %10s %12s\n' policy params ns/action

# bench NAME ENV STEPS DTYPE [TRAIN ARGS...]
bench() {
    local name=$1 env=$2 steps=$3 dtype=$4
    shift 4
    local dir=$tmp/$name
    mkdir -p "$dir"
    "$skinner" train "$env" --total-steps "$steps" --quiet --run-dir "$dir/run" "$@" >/dev/null
    "$skinner" export "$dir/run" --c "$dir/policy.h" >/dev/null
    local obs_size params
    obs_size=$(sed -n 's/^#define POLICY_OBS_SIZE \([0-9]*\).*/\1/p' "$dir/policy.h")
    params=$(/usr/bin/python3 -c "import re,sys; t=open(sys.argv[1]).read(); print(sum(int(n) for n in re.findall(r'static const float policy_\w+\[(\d+)\]', t)))" "$dir/policy.h")
    /usr/bin/python3 - "$dir" "$obs_size" "$dtype" <<'PY'
import sys, numpy as np
d, n, dtype = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(36)
obs = rng.integers(0, 2, (1000, n), dtype=np.uint8) if dtype == "uint8" else rng.normal(size=(1000, n)).astype(np.float32)
obs.tofile(f"{d}/obs.bin")
np.zeros(1000, np.uint8).tofile(f"{d}/start.bin")
PY
    cc -O2 -std=c99 -Wall -Wextra -Werror -I "$dir" "$root/tests/export/driver.c" -o "$dir/driver" -lm
    local runs=()
    for _ in 1 2 3; do runs+=("$("$dir/driver" "$dir" bench "$passes" | awk '{print $1}')"); done
    local median
    median=$(printf '%s\n' "${runs[@]}" | sort -g | sed -n 2p)
    printf '%-28s %10s %12s\n' "$name" "$params" "$median"
}

bench "CartPole-v1 mlp" CartPole-v1 20000 float32
bench "CartPole-v1 lstm" CartPole-v1 20000 float32 --config "$root/configs/cartpole_lstm.ini"
bench "Pendulum-v1 gaussian" Pendulum-v1 20000 float32
bench "MinAtar/Breakout-v1 cnn" MinAtar/Breakout-v1 20000 uint8 --threads 1
