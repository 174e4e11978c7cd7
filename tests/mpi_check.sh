#!/usr/bin/env bash
# Data-parallel training under Open MPI (docs/distributed.md), end to end through the
# program: `mpirun -np K skinner train ... --threads 1` must compute bit for bit what
# `skinner train ... --threads K` computes in one process (metrics.csv without its
# wall-clock columns, and every checkpoint tensor but the wall-clock one), for
# CartPole-v1 (K = 2, 3), an LSTM policy and Morpho-v0 (masked, 8 heads); a resumed
# mpirun run equals an uninterrupted one; rank 0's config is the run's; a killed rank
# ends the job with a message and leaves a checkpoint that resumes; SIGINT to mpirun
# stops every rank with a resumable run; an env that fails on one rank names the rank, as does
# a rank that lacks the env (its module);
# Prover-v0's ranking and episode evaluation split over ranks give one process's figures.
# usage: mpi_check.sh BUILD_DIR SOURCE_DIR RANK_FAIL_PLUGIN
set -euo pipefail
build_dir=$(realpath "$1")
source_dir=$(realpath "$2")
plugin=$(realpath "$3")
skinner=$build_dir/skinner
export SKINNER_CONFIG_DIR=$source_dir/configs
mpirun=(mpirun --allow-run-as-root --oversubscribe)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "mpi_check: FAIL: $*"; exit 1; }
pass() { echo "mpi_check: ok: $*"; }

# same_run A B, interrupt_run TOTAL ARGS (tests/mpi_common.sh)
source "$source_dir/tests/mpi_common.sh"

# 1. equivalence: K ranks of 1 thread against K threads
quick=(--total-steps 20480 --quiet)
for K in 2 3; do
    "$skinner" train CartPole-v1 --threads $K "${quick[@]}" --run-dir t$K > /dev/null
    "${mpirun[@]}" -np $K "$skinner" train CartPole-v1 --threads 1 "${quick[@]}" --run-dir m$K > /dev/null
    same_run t$K m$K
    pass "CartPole-v1: mpirun -np $K --threads 1 equals --threads $K"
done
"$skinner" train CartPole-P-v1 --threads 2 "${quick[@]}" --run-dir tl > /dev/null
"${mpirun[@]}" -np 2 "$skinner" train CartPole-P-v1 --threads 1 "${quick[@]}" --run-dir ml > /dev/null
same_run tl ml
pass "CartPole-P-v1 (LSTM core): mpirun -np 2 equals --threads 2"
morpho=(--env.epochs 8 --ppo.horizon 16 --total-steps 256 --quiet)
"$skinner" train Morpho-v0 --threads 2 "${morpho[@]}" --run-dir tm > /dev/null
"${mpirun[@]}" -np 2 "$skinner" train Morpho-v0 --threads 1 "${morpho[@]}" --run-dir mm > /dev/null
same_run tm mm
grep -q '^4,256,' mm/metrics.csv || fail "Morpho-v0 under mpirun did not run 4 updates"
pass "Morpho-v0 (8 masked heads): mpirun -np 2 equals --threads 2"

# 2. rank 0 reads the command line: a rank started with another seed (MPMD) follows rank 0
"${mpirun[@]}" -np 1 "$skinner" train CartPole-v1 --threads 1 --seed 1 "${quick[@]}" --run-dir md : \
    -np 1 "$skinner" train CartPole-v1 --threads 1 --seed 7 "${quick[@]}" --run-dir elsewhere > /dev/null
[[ ! -e elsewhere ]] || fail "rank 1 wrote a run folder"
same_run t2 md
pass "a rank given another --seed and --run-dir runs rank 0's config"

# a rank that cannot find rank 0's env (its node lacks the module) stops every rank, named
# (the ranks agree before the trainer's first collective; mpirun also ends a job whose
# process exits non-zero, so this checks the message and that nothing hangs)
set +e
out=$(timeout 60 "${mpirun[@]}" -np 1 "$skinner" train MinAtar/Breakout-v1 --threads 1 \
    --total-steps 8192 --quiet --run-dir mmod : -np 1 -x SKINNER_MODULE_PATH=/nonexistent \
    "$skinner" train MinAtar/Breakout-v1 --threads 1 --total-steps 8192 --quiet 2>&1)
code=$?
set -e
[[ $code -ne 0 && $code -ne 124 ]] || fail "a rank without the env's module: exit $code (124: hung)"
grep -q "rank 1: unknown environment 'MinAtar/Breakout-v1'" <<< "$out" ||
    fail "a rank without the env's module: no message naming rank 1 and the env: $out"
pass "a rank that lacks the env's module stops the job, named"

batch=2048 # CartPole-v1's preset: 16 envs x 128 steps

# 4. a killed rank ends the job with a message, and the last checkpoint resumes
long=(--threads 1 --total-steps 2000000000 --quiet --train.checkpoint_every 5)
"${mpirun[@]}" -np 2 "$skinner" train CartPole-v1 "${long[@]}" --run-dir killed > killed.log 2>&1 &
job=$!
for _ in $(seq 100); do [[ -s killed/policy.safetensors ]] && break; sleep 0.1; done
[[ -s killed/policy.safetensors ]] || fail "no checkpoint within 10 s"
victim=$(pgrep -P "$job" -f "run-dir killed" | tail -1)
[[ -n $victim ]] || fail "no rank process of mpirun $job"
kill -KILL "$victim"
start=$SECONDS
for _ in $(seq 300); do kill -0 "$job" 2> /dev/null || break; sleep 0.1; done
kill -0 "$job" 2> /dev/null && { kill -KILL "$job"; fail "mpirun still runs 30 s after a rank was killed"; }
rc=0
wait "$job" || rc=$?
[[ $rc -ne 0 ]] || fail "mpirun exited 0 after a rank was killed"
grep -qiE "signal 9|killed" killed.log || fail "no message names the killed rank: $(cat killed.log)"
ended=$((SECONDS - start))
"$skinner" train CartPole-v1 --threads 2 --quiet --resume killed --total-steps 4000000 > resumed.log 2>&1 ||
    fail "the killed run's checkpoint does not resume: $(tail -3 resumed.log)"
pass "a killed rank ended the job within $ended s with a message; its checkpoint resumes (2 threads)"

# 5. SIGINT to mpirun: every rank stops at the same update with a resumable run, and
# the run resumed under mpirun equals the uninterrupted one
total=$((2000 * batch))
"${mpirun[@]}" -np 2 "$skinner" train CartPole-v1 --threads 1 --total-steps $total --quiet \
    --run-dir whole > /dev/null
interrupt_run $total
"${mpirun[@]}" -np 2 "$skinner" train CartPole-v1 --threads 1 --quiet --resume interrupted \
    --total-steps $total > /dev/null || fail "the interrupted run does not resume"
same_run whole interrupted
pass "SIGINT to mpirun stopped every rank at step $steps; resumed under mpirun, it equals the uninterrupted run"

# 6. an env that fails on one rank fails the run, naming the rank and the error
rc=0
SKINNER_TEST_FAIL_RANK=1 "${mpirun[@]}" -x SKINNER_TEST_FAIL_RANK -np 2 "$skinner" --env-lib "$plugin" \
    train RankFail-v0 --threads 1 --quiet --run-dir rankfail > rankfail.log 2>&1 || rc=$?
[[ $rc -ne 0 ]] || fail "a run whose env failed on rank 1 exited 0"
grep -q "rank 1: RankFail-v0: cannot read its data on this node (rank 1)" rankfail.log ||
    fail "the message does not name rank 1 and its error: $(cat rankfail.log)"
pass "an env failing on rank 1: $(grep -m1 'rank 1' rankfail.log)"

# 7. fewer envs than ranks is refused with the numbers
rc=0
"${mpirun[@]}" -np 3 "$skinner" train CartPole-v1 --threads 1 --env.num_envs 2 --quiet \
    --run-dir few > few.log 2>&1 || rc=$?
[[ $rc -ne 0 ]] && grep -q "env.num_envs = 2 is fewer than the 3 processes" few.log ||
    fail "2 envs over 3 ranks: $(cat few.log)"
pass "2 envs over 3 ranks refused"
# 8. Prover-v0's ranking splits its queries over the ranks and merges them: the same figures
countries=${SKINNER_SHARED_DIR:-$source_dir/../shared}/datasets/countries_s3
if [[ -d $countries ]]; then
    "$skinner" train Prover-v0 --env.dataset "$countries" --total-steps 8192 --quiet --run-dir prover > /dev/null
    for args in "--corrupt both" "--split train --queries 100 --corrupt both"; do
        # shellcheck disable=SC2086
        "$skinner" eval Prover-v0 --checkpoint prover --json $args > one.json
        # shellcheck disable=SC2086
        "${mpirun[@]}" -np 3 "$skinner" eval Prover-v0 --checkpoint prover --json --threads 1 $args > three.json
        grep -q '"mrr"' three.json || fail "no ranking from mpirun: $(cat three.json)"
        diff <(sed 's/"seconds": [0-9.e+-]*//' one.json) <(sed 's/"seconds": [0-9.e+-]*//' three.json) > /dev/null ||
            fail "ranking $args over 3 ranks differs: $(cat one.json three.json)"
    done
    pass "Prover-v0 ranking over 3 ranks equals one process (test and train splits, both sides)"
else
    # loud, as tests/test_util.h's skips: make test lists it; under CI it fails
    [[ ${CI:-} == "" || ${CI:-} == 0 || ${CI:-} == false ]] ||
        fail "$countries is missing (CI=true: a missing requirement fails the run)"
    echo "SKIPPED: ranking over 3 ranks: $countries is missing (put ../shared next to the repository or set SKINNER_SHARED_DIR)"
fi
# 9. episode evaluation: each rank runs a slice of the evaluation envs, the counted episodes
# are summed in one process's order: greedy policies and controllers give the same figures
for spec in "CartPole-v1 --checkpoint t2 --greedy --episodes 30" \
            "CartPole-P-v1 --checkpoint tl --greedy --episodes 25" \
            "Morpho-v0 --policy heuristic --episodes 3 --env.epochs 4" \
            "CartPole-v1 --policy random --episodes 30"; do
    # shellcheck disable=SC2086
    "$skinner" eval $spec --json > one.json
    # shellcheck disable=SC2086
    "${mpirun[@]}" -np 3 "$skinner" eval $spec --json > three.json
    grep -q '"mean_return"' three.json || fail "no evaluation from mpirun: $(cat three.json)"
    cmp -s one.json three.json || fail "eval $spec over 3 ranks differs: $(cat one.json three.json)"
done
pass "episode evaluation over 3 ranks equals one process (MLP and LSTM greedy, Morpho-v0's heuristic, random)"
rc=0
"${mpirun[@]}" -np 2 "$skinner" eval CartPole-v1 --checkpoint t2 --episodes 4 --trace trace.jsonl \
    > trace.log 2>&1 || rc=$?
[[ $rc -ne 0 ]] && grep -q "run an evaluation with a trace as one process" trace.log ||
    fail "a trace under mpirun: $(cat trace.log)"
pass "a trace under mpirun is refused"
echo "mpi_check: all passed"
