# Shared by tests/mpi_check.sh and tests/mpi_scale_check.sh (sourced; each defines fail).
# same_run A B: metrics.csv rows equal but for wall_seconds and sps (columns 3, 4), and
# every tensor of the checkpoints equal byte for byte but state.seconds
same_run() {
    [[ -s $1/metrics.csv && -s $2/metrics.csv ]] || fail "$1 or $2 has no metrics.csv"
    diff <(cut -d, -f1,2,5- "$1/metrics.csv") <(cut -d, -f1,2,5- "$2/metrics.csv") > /dev/null ||
        fail "metrics.csv of $1 and $2 differ: $(diff <(cut -d, -f1,2,5- "$1/metrics.csv") <(cut -d, -f1,2,5- "$2/metrics.csv") | head -4)"
    /usr/bin/python3 - "$1/policy.safetensors" "$2/policy.safetensors" <<'PY' || fail "checkpoints of $1 and $2 differ"
import json, struct, sys
def tensors(path):
    blob = open(path, "rb").read()
    n = struct.unpack("<Q", blob[:8])[0]
    header, data = json.loads(blob[8:8 + n]), blob[8 + n:]
    return {k: data[v["data_offsets"][0]:v["data_offsets"][1]] for k, v in header.items()
            if k != "__metadata__"}
a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
bad = sorted(k for k in set(a) | set(b) if k != "state.seconds" and a.get(k) != b.get(k))
if bad:
    print("tensors differ:", bad[:8])
    sys.exit(1)
PY
    [[ $(wc -l < "$1/metrics.csv") -ge 3 ]] || fail "$1 trained for fewer than 2 updates"
}

# interrupt_run TOTAL ARGS...: `mpirun -np 2 skinner train CartPole-v1 --threads 1` of TOTAL
# steps with ARGS into the run folder `interrupted`, SIGINT to mpirun after 4 updates' rows of
# metrics.csv (waiting up to 120 s: on a loaded machine the ranks start slowly, and a signal
# before they have set up their handlers ends the job without a summary); checks the run
# stopped early with an interrupted summary and sets steps to the last row's (needs mpirun
# and skinner set by the caller). The ranks spin on both cores, and on a loaded CI machine this
# loop once waited for a core until an 819k-step run had ended: the callers train 2000 updates
# (4M steps, seconds), and the loop runs at nice -10 where it may (as root, as CI runs). The
# ranks keep their priority: mpirun kills a rank still running 1 s after the signal reached
# it, and a niced rank on a busy machine could not finish its update and checkpoint in time.
interrupt_run() {
    local total=$1 job
    shift
    "${mpirun[@]}" -np 2 "$skinner" train CartPole-v1 --threads 1 --total-steps "$total" --quiet \
        "$@" --run-dir interrupted > interrupted.log 2>&1 &
    job=$!
    (
        renice -n -10 -p "$BASHPID" > /dev/null 2>&1 || true
        for _ in $(seq 2400); do
            [[ $({ wc -l < interrupted/metrics.csv; } 2> /dev/null || echo 0) -gt 4 ]] && break
            sleep 0.05
        done
    )
    kill -INT "$job"
    wait "$job" || true
    grep -q '"interrupted": true' interrupted/summary.json ||
        fail "no interrupted summary (did the run end before the signal?): $(cat interrupted.log)"
    steps=$(tail -1 interrupted/metrics.csv | cut -d, -f2)
    [[ $steps -lt $total ]] || fail "the interrupted run ran to the end"
}
