#!/usr/bin/env bash
# `skinner check ID` passes on a MuJoCo task (issue 50): on the model this build embeds, else on
# ../shared's copy of Gymnasium's model file through --env.model. Without the module (MuJoCo
# absent at configure time) or without either model it skips (77), and under CI=true fails.
# Usage: mujoco_check.sh SKINNER SHARED_DIR ID MODEL_FILE
set -uo pipefail
skinner=$1 shared=${SKINNER_SHARED_DIR:-$2} id=$3 file=$4
skip() {
    echo "SKIPPED: mujoco_check $id: $*"
    [[ ${CI:-} == "" || ${CI:-} == 0 || ${CI:-} == false ]] && exit 77
    echo "CI=true: a missing requirement fails the run"
    exit 1
}
# the list whole first: grep -q stops reading at its match, and under pipefail the program's
# next line-buffered write would then die of SIGPIPE and fail the pipeline
envs=$("$skinner" envs)
grep -q "^$id " <<< "$envs" || skip "$id is not built (no MuJoCo at configure time: scripts/setup.sh installs it)"
args=()
if ! "$skinner" check "$id" --steps 1 > /dev/null 2>&1; then
    model=$shared/reference/mujoco/assets/$file
    [[ -f $model ]] || skip "this build embeds no $file and $model is missing"
    args=(--env.model "$model")
fi
out=$("$skinner" check "$id" "${args[@]}" 2>&1)
status=$?
echo "$out"
[[ $status == 0 ]] || { echo "mujoco_check: FAIL: skinner check $id ${args[*]} exited $status"; exit 1; }
grep -q "^$id: [0-9]* passed, 0 failed" <<< "$out" || { echo "mujoco_check: FAIL: no clean summary line"; exit 1; }
