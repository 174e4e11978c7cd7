#!/usr/bin/env bash
# `skinner eval HalfCheetah-v5 --video` (issue 50 ask 7): a short run's episode is recorded with
# the module's pictures (modules/mujoco/render.c) into RUN/videos/, one frame a step, and the
# dashboard (`skinner serve`) lists it and serves it as video/mp4, as any env's video. Skips
# (77) without the module, the embedded model or FFmpeg; CI=true turns a skip into a failure.
# Usage: mujoco_video_check.sh SKINNER
set -uo pipefail
skinner=$1
skip() {
    echo "SKIPPED: mujoco_video_check: $*"
    [[ ${CI:-} == "" || ${CI:-} == 0 || ${CI:-} == false ]] && exit 77
    echo "CI=true: a missing requirement fails the run"
    exit 1
}
fail() { echo "mujoco_video_check: FAIL: $*"; exit 1; }
envs=$("$skinner" envs) # whole, before grep -q (which stops at its match: SIGPIPE under pipefail)
grep -q "^HalfCheetah-v5 " <<< "$envs" || skip "HalfCheetah-v5 is not built (no MuJoCo)"
"$skinner" check HalfCheetah-v5 --steps 1 > /dev/null 2>&1 || skip "this build embeds no half_cheetah.xml"
tmp=$(mktemp -d)
server=
cleanup() { [[ -n $server ]] && kill "$server" 2> /dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
run=$tmp/runs/cheetah
"$skinner" train HalfCheetah-v5 --total-steps 4096 --run-dir "$run" --quiet > "$tmp/train.log" 2>&1 \
    || { cat "$tmp/train.log"; fail "training exited non-zero"; }
out=$("$skinner" eval HalfCheetah-v5 --checkpoint "$run" --episodes 1 --video "$run/videos/cheetah.mp4" 2>&1)
status=$?
echo "$out"
if [[ $status != 0 ]] && grep -qi "ffmpeg\|--video" <<< "$out"; then
    skip "this build has no --video (FFmpeg's libraries were not found)"
fi
[[ $status == 0 ]] || fail "skinner eval --video exited $status"
# one frame a step: HalfCheetah-v5's episode is 1000 steps
grep -Eq "\b1000 frames" <<< "$out" || fail "expected 1000 frames in the output"
size=$(stat -c %s "$run/videos/cheetah.mp4" 2> /dev/null || echo 0)
(( size > 20000 )) || fail "cheetah.mp4 is $size bytes (expected a video of 1000 frames of 480x480)"
# the dashboard lists it and serves it as a video
"$skinner" serve "$tmp/runs" --port 0 --port-file "$tmp/port" > "$tmp/serve.log" 2>&1 &
server=$!
for _ in $(seq 50); do [[ -s $tmp/port ]] && break; sleep 0.1; done
port=$(cat "$tmp/port" 2> /dev/null) || fail "skinner serve wrote no port"
files=$(curl -s "http://127.0.0.1:$port/api/files?run=0/cheetah")
echo "dashboard files: $files"
grep -q "videos/cheetah.mp4" <<< "$files" || fail "the dashboard does not list videos/cheetah.mp4"
type=$(curl -s -o /dev/null -w '%{content_type} %{size_download}' \
    "http://127.0.0.1:$port/api/media?run=0/cheetah&name=videos/cheetah.mp4")
echo "dashboard media: $type"
[[ $type == "video/mp4 $size" ]] || fail "expected video/mp4 of $size bytes from /api/media"
echo "mujoco_video_check: ok ($size bytes)"
