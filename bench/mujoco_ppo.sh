#!/usr/bin/env bash
# Issue 50 ask 5: PPO with each task's preset (configs/mujoco.ini, or the task's own where it has
# one: configs/mujoco_halfcheetah.ini, configs/mujoco_ant.ini) at 1M env steps, for training
# seeds SEEDS on each task of TASKS, one run at a time; each final checkpoint evaluated over 10
# episodes (sampled, as CleanRL's evaluation, and greedy). Beside each task: the raw physics of
# the same steps (bench/mujoco_peers.py physics: mujoco.mj_step(m, d, nstep=frame_skip) on the
# module's model file, from Python, the same MuJoCo 3.3.7) and the published figures
# (../shared/reference/mujoco/README.md). Writes bench/results/DATE-COMMIT-mujoco-ppo.md.
#
# usage: bench/mujoco_ppo.sh [RUNS_DIR]
#   RUNS_DIR (default a new temporary folder) holds the run folders TASK-sSEED; a finished run
#   found there (summary.json written, not interrupted) is reused, not trained again. One this
#   script trained has its time.txt; one trained by hand (two at a time, say: `skinner train
#   TASK --train.algo sac --env.num_envs 1 --seed S --threads 1 --total-steps 1000000 --run-dir
#   RUNS_DIR/TASK-sS`) has none, and its row gives summary.json's wall seconds and no CPU ones.
#   TASKS="HalfCheetah-v5 Hopper-v5 Walker2d-v5 Ant-v5 Humanoid-v5", SEEDS="1 2 3"
#   (SEEDS_Ant-v5 overrides one task's, with '-' for '_': SEEDS_Ant_v5="1"), STEPS=1000000,
#   THREADS=2, SKINNER=build/skinner, PYTHON (with mujoco; default the tree's .venv/bin/python,
#   else python3),
#   SB3_STEPS=N also runs Stable-Baselines3's PPO for N steps on each of SB3_TASKS (default
#   SB3_TASK, default HalfCheetah-v5), seed 1, in PEERS_PYTHON (bench/.venv-peers/bin/python),
#   after skinner's runs.
#   ALGO=sac trains CleanRL's SAC instead (`--train.algo sac --env.num_envs 1`: train.algo sac's
#   defaults, docs/algorithms.md), into DATE-COMMIT-mujoco-sac.md; its eval is the actor's
#   deterministic action, so the sampled and greedy columns agree.
# Times: wall and CPU (user + system) seconds of each run, from /usr/bin/time. The machine is
# shared, so the CPU seconds are the steadier figure: "physics" is the CPU seconds one core spends
# in mj_step for the same env steps, and "CPU / physics" compares the two (issue 50: at most 1.3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
runs=${1:-$(mktemp -d)}
skinner=${SKINNER:-$root/build/skinner}
tasks=${TASKS:-HalfCheetah-v5 Hopper-v5 Walker2d-v5 Ant-v5 Humanoid-v5}
steps=${STEPS:-1000000}
threads=${THREADS:-2}
python=${PYTHON:-$root/.venv/bin/python}
[[ -x $python ]] || python=python3
peers_python=${PEERS_PYTHON:-$root/bench/.venv-peers/bin/python}
bench_need mujoco_ppo "build first" "$skinner"
bench_init
mkdir -p "$runs" "$root/bench/results"
algo=${ALGO:-ppo}
if [[ $algo != ppo && $algo != sac ]]; then
    echo "mujoco_ppo: ALGO=$algo (expected ppo or sac)" >&2
    exit 2
fi
# how each run trains: the task's preset (PRESET below), or SAC on one env
how="--config configs/PRESET"
[[ $algo == sac ]] && how="--train.algo sac --env.num_envs 1"
out=$root/bench/results/$(date -u +%Y-%m-%d)-$commit-mujoco-$algo.md
py() { /usr/bin/python3 -c "$@"; }
# task -> "model file|frame_skip|CleanRL PPO|SB3 zoo PPO|CleanRL SAC|SB3 zoo SAC|preset"
facts() {
    case $1 in
    HalfCheetah-v5) echo "half_cheetah.xml|5|2906 +- 1129|5819|9635 +- 1424|9535|mujoco_halfcheetah.ini" ;;
    Hopper-v5) echo "hopper.xml|4|2052 +- 314|2410|2310 +- 343|2326|mujoco.ini" ;;
    Walker2d-v5) echo "walker2d_v5.xml|4|2891 +- 231|3479|3591 +- 911|3863|mujoco.ini" ;;
    Ant-v5) echo "ant.xml|5|-|1327|-|4616|mujoco_ant.ini" ;;
    Humanoid-v5) echo "humanoid.xml|5|742 +- 156|-|4996 +- 686|6232 (2M)|mujoco.ini" ;;
    Humanoid-v4) echo "humanoid.xml|5|742 +- 156|-|4996 +- 686|6232 (2M)|mujoco.ini" ;;
    *) echo "mujoco_ppo: no facts for $1" >&2; exit 2 ;;
    esac
}
finished() {
    [[ -f $1/summary.json ]] && py \
        "import json,sys; s=json.load(open(sys.argv[1])); sys.exit(s.get('interrupted', True))" "$1/summary.json"
}
{
    if [[ $algo == sac ]]; then
        echo "# MuJoCo SAC, train.algo sac's defaults (CleanRL's), one env, $steps env steps ($(date -u +%Y-%m-%d), commit $commit)"
    else
        echo "# MuJoCo PPO, each task's preset, $steps env steps ($(date -u +%Y-%m-%d), commit $commit)"
    fi
    echo
    echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, shared with other work."
    echo "Each run: \`skinner train TASK $how --seed S --threads $threads --total-steps $steps\`, one at a time;"
    echo "eval: \`skinner eval TASK --checkpoint RUN --episodes 10\` (sampled) and with \`--greedy\`."
    echo "Training return: metrics.csv's last mean_return (the last 100 episodes). Physics: CPU seconds"
    echo "of one core in \`mj_step\` for the same env steps (bench/mujoco_peers.py physics, 20k env steps"
    echo "scaled); the run's CPU seconds over it is the issue's \"at most 1.3x its physics\"."
    echo
    echo "| task | preset | seed | eval (sampled) | eval (greedy) | training return | wall s | CPU s | physics CPU s | CPU / physics | load avg (start, end) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
} > "$out"
summary=()
for task in $tasks; do
    IFS='|' read -r model skip cleanrl sb3zoo sac sb3sac preset <<< "$(facts "$task")"
    var=SEEDS_${task//-/_}
    seeds=${!var:-${SEEDS:-1 2 3}}
    phys=$("$python" "$root/bench/mujoco_peers.py" physics "$root/modules/mujoco/models/$model" "$skip" 20000)
    phys_cpu=$(py "import json,sys; p=json.loads(sys.argv[1]); print('%.1f' % (p['cpu_seconds'] * $steps / 20000))" "$phys")
    evals=()
    for seed in $seeds; do
        dir=$runs/$task-s$seed
        if ! finished "$dir"; then
            rm -rf "$dir"
            mkdir -p "$dir"
            load0=$(cut -d' ' -f1 /proc/loadavg)
            # shellcheck disable=SC2086 # $how is words: options and their values
            /usr/bin/time -o "$dir/time.tmp" -f '%e %U %S' "$skinner" train "$task" ${how/configs\/PRESET/$root/configs/$preset} \
                --seed "$seed" --threads "$threads" --total-steps "$steps" --run-dir "$dir" --force --quiet
            echo "$(cat "$dir/time.tmp") $load0 $(cut -d' ' -f1 /proc/loadavg)" > "$dir/time.txt"
        fi
        if [[ -f $dir/time.txt ]]; then
            read -r wall user sys load0 load1 < "$dir/time.txt"
        else # trained by hand: its own wall clock, no CPU seconds or load
            wall=$(py "import json,sys; print(json.load(open(sys.argv[1]))['wall_seconds'])" "$dir/summary.json")
            user=- sys=- load0=- load1=-
        fi
        sampled=$("$skinner" eval "$task" --checkpoint "$dir" --episodes 10 --json 2> /dev/null)
        greedy=$("$skinner" eval "$task" --checkpoint "$dir" --episodes 10 --greedy --json 2> /dev/null)
        row=$(py "import csv, json, sys
s, g = json.loads(sys.argv[1]), json.loads(sys.argv[2])
rows = list(csv.DictReader(open(sys.argv[3] + '/metrics.csv')))
timed = sys.argv[5] != '-'
cpu = float(sys.argv[5]) + float(sys.argv[6]) if timed else None
print('%.0f +- %.0f | %.0f +- %.0f | %.0f | %.0f | %s | %s | %s' % (s['mean_return'], s['std_return'],
      g['mean_return'], g['std_return'], float(rows[-1]['mean_return']), float(sys.argv[4]),
      '%.0f' % cpu if timed else '-', sys.argv[7], '%.2f' % (cpu / float(sys.argv[7])) if timed else '-'))" \
            "$sampled" "$greedy" "$dir" "$wall" "$user" "$sys" "$phys_cpu")
        [[ $algo == sac ]] && preset="sac, 1 env"
        echo "| $task | $preset | $seed | ${row} | $load0, $load1 |" >> "$out"
        evals+=("$(py "import json,sys; print(json.loads(sys.argv[1])['mean_return'])" "$sampled")")
    done
    mean=$(printf '%s\n' "${evals[@]}" | awk '{ s += $1 } END { printf "%.0f", s / NR }')
    summary+=("| $task | ${#evals[@]} | $mean | $cleanrl | $sb3zoo | $sac | $sb3sac | $(py "print('%.0f%%' % (100 * $mean / float('$sac'.split()[0] if '$sac' != '-' else '$sb3sac')))") |")
done
{
    echo
    echo "## Against the published figures (1M steps; reference/mujoco/README.md)"
    echo
    echo "| task | seeds | skinner eval mean | CleanRL PPO (v4, training return) | SB3 zoo PPO (v3) | CleanRL SAC | SB3 zoo SAC | skinner / SAC |"
    echo "|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${summary[@]}"
} >> "$out"
if [[ -n ${SB3_STEPS:-} ]]; then
    sb3_tasks=${SB3_TASKS:-${SB3_TASK:-HalfCheetah-v5}}
    {
        echo
        echo "## Stable-Baselines3 PPO, the same settings, seed 1, $SB3_STEPS steps, torch on $threads threads"
        echo
        echo "\`$peers_python bench/mujoco_peers.py sb3 TASK $SB3_STEPS 1 $threads\`, after skinner's runs, one at a time."
        echo "Its env steps run in one Python thread (SB3's DummyVecEnv of 8 Gymnasium envs)."
        echo
        echo "| task | steps | wall s (learn) | CPU s (whole process: import, learn, eval) | steps/s | training return | eval (sampled, 10) | skinner's wall s, seed 1 | load avg (start, end) |"
        echo "|---|---|---|---|---|---|---|---|---|"
    } >> "$out"
    for task in $sb3_tasks; do
        load0=$(cut -d' ' -f1 /proc/loadavg)
        r=$(/usr/bin/time -o "$runs/sb3-$task.time" -f '%U %S' \
            "$peers_python" "$root/bench/mujoco_peers.py" sb3 "$task" "$SB3_STEPS" 1 "$threads" 2> "$runs/sb3-$task.err") ||
            { echo "mujoco_ppo: SB3 on $task failed:" >&2; tail -5 "$runs/sb3-$task.err" >&2; exit 1; }
        read -r user sys < "$runs/sb3-$task.time"
        ours=-
        [[ -f $runs/$task-s1/time.txt ]] && ours=$(cut -d' ' -f1 "$runs/$task-s1/time.txt")
        py "import json,sys; r=json.loads(sys.argv[1]); print('| $task | %d | %.0f | %.0f | %.0f | %s | %.0f +- %.0f | $ours | $load0, %s |' % (r['steps'], r['seconds'], $user + $sys, r['sps'], '%.0f' % r['train_return'] if r['train_return'] is not None else '-', r['eval_mean'], r['eval_std'], open('/proc/loadavg').read().split()[0]))" "$r" >> "$out"
    done
fi
echo "mujoco_ppo: wrote $out"
