# Sourced by the bench scripts that compare two programs or two settings on the presets: the
# presets' workloads, a median and a ratio, one `bench train` run's figures and two programs'
# runs alternated. (Issue 53 ask 9 asks the rest of bench/*.sh to share it too.)
# shellcheck shell=bash

# "name|env|extra flags" for `skinner bench train`; root is the repository
bench_preset_workloads() {
    local root=$1
    printf '%s\n' \
        "CartPole-v1 (preset)|CartPole-v1|" \
        "CartPole-v1 (cartpole_fast.ini)|CartPole-v1|--config $root/configs/cartpole_fast.ini" \
        "CartPole-v1 (cartpole_lstm.ini)|CartPole-v1|--config $root/configs/cartpole_lstm.ini" \
        "MinAtar/Breakout-v1 (preset)|MinAtar/Breakout-v1|"
}
# the median of the numbers given (n/a left out)
median() { printf '%s\n' "$@" | { grep -v n/a || true; } | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# x / y to two places, or n/a
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { if (x + 0 > 0 && y + 0 > 0) printf "%.2f", x / y; else printf "n/a" }'; }
# the median of each column of the lines given ("x y ..." each), on one line; n/a for a column
# with no number
column_medians() {
    local k columns value values=()
    columns=$(awk '{ print NF; exit }' <<< "$1")
    for ((k = 1; k <= columns; k++)); do
        # shellcheck disable=SC2046
        value=$(median $(printf '%s\n' "$@" | awk -v k="$k" '{ print $k }'))
        values+=("${value:-n/a}")
    done
    echo "${values[*]}"
}

# One `skinner bench train` run: prints "wall_sps cpu_sps rollout learn" (env steps per wall
# second and per CPU-second, user + system, which a loaded machine distorts less; the rollout's
# and the learning's seconds per update), or "n/a n/a n/a n/a" when it fails (an old binary
# without the env). Uses $threads and $seconds; VAR=VALUE words after EXTRA go into the run's
# environment.
# usage: run PROGRAM ENV "EXTRA FLAGS" [VAR=VALUE ...]
run() {
    local program=$1 env=$2 extra=$3 timing
    shift 3
    timing=$(mktemp)
    # shellcheck disable=SC2086
    env "$@" /usr/bin/time -o "$timing" -f '%U %S' "$program" bench train "$env" --threads "$threads" \
        --seconds "$seconds" $extra --json 2> /dev/null |
        /usr/bin/python3 -c "import json, sys
r = json.load(sys.stdin); user, system = open('$timing').read().split()[-2:]
print(int(r['sps']), int(r['steps'] / (float(user) + float(system))),
      '%.6f %.6f' % (r['rollout_seconds'] / r['updates'], r['learn_seconds'] / r['updates']))" 2> /dev/null ||
        echo "n/a n/a n/a n/a"
    rm -f "$timing"
}

# ENV's figures (run's four) of A and B, $repeats runs of each, A's and B's alternating so that
# both see the same load: A's medians, then B's, on one line. ENV_A and ENV_B are VAR=VALUE
# words for each side's runs (or "").
# usage: alternate PROGRAM_A "ENV_A" PROGRAM_B "ENV_B" ENV "EXTRA FLAGS"
alternate() {
    local program_a=$1 env_a=$2 program_b=$3 env_b=$4 env=$5 extra=$6 r
    local a_runs=() b_runs=()
    for ((r = 0; r < repeats; r++)); do
        # shellcheck disable=SC2086
        a_runs+=("$(run "$program_a" "$env" "$extra" $env_a)")
        # shellcheck disable=SC2086
        b_runs+=("$(run "$program_b" "$env" "$extra" $env_b)")
    done
    echo "$(column_medians "${a_runs[@]}") $(column_medians "${b_runs[@]}")"
}

# The presets ($workloads), A against B alternating $repeats times: one table row each,
# "| name | A wall | B wall | A/B | A per CPU-s | B per CPU-s | A/B |". ENV_A and ENV_B are
# VAR=VALUE words for each side's runs (or "").
# usage: compare PROGRAM_A "ENV_A" PROGRAM_B "ENV_B"
compare() {
    local program_a=$1 env_a=$2 program_b=$3 env_b=$4 w name env extra aw ac bw bc
    for w in "${workloads[@]}"; do
        IFS='|' read -r name env extra <<< "$w"
        read -r aw ac _ _ bw bc _ _ <<< "$(alternate "$program_a" "$env_a" "$program_b" "$env_b" "$env" "$extra")"
        echo "| $name | $aw | $bw | $(ratio "$aw" "$bw") | $ac | $bc | $(ratio "$ac" "$bc") |"
    done
}

# ---- what every bench script starts with (issue 53 ask 9)

# The tree's commit, today's date (UTC) and the CPU's model name, for a results file's first
# lines; the tree's presets for every skinner the script runs. Uses $root.
bench_init() {
    commit=$(git -C "$root" rev-parse --short HEAD)
    date=$(date -u +%Y-%m-%d)
    cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
    export SKINNER_CONFIG_DIR=$root/configs
}

# Whether run folder DIR finished its training (summary.json written and not interrupted), so
# that a bench script reuses it instead of training again.
# usage: bench_finished DIR
bench_finished() {
    [[ -f $1/summary.json ]] && /usr/bin/python3 -c \
        "import json,sys; s=json.load(open(sys.argv[1])); sys.exit(s.get('interrupted', True))" \
        "$1/summary.json"
}

# Trains into run folder DIR unless it finished (bench_finished): runs COMMAND (a `skinner
# train ...` line) with --run-dir DIR --force --quiet, its stdout dropped, saying so on stderr.
# usage: bench_train_unless_finished NAME DIR WHAT COMMAND...
bench_train_unless_finished() {
    local name=$1 dir=$2 what=$3
    shift 3
    bench_finished "$dir" && return 0
    echo "$name: training $what into $dir" >&2
    "$@" --run-dir "$dir" --force --quiet > /dev/null
}

# Stops with exit status 2 naming the script, the first program that is missing and HINT (how
# to build it, or the script's usage line).
# usage: bench_need NAME HINT PROGRAM...
bench_need() {
    local name=$1 hint=$2 program
    shift 2
    for program in "$@"; do
        [[ -x $program ]] || { echo "$name: no program at $program ($hint)" >&2; exit 2; }
    done
}

# ---- a sweep's best config against its preset (bench/sweep_minatar.sh, bench/sweep_prover.sh)

# Runs the sweep file SPEC into $dir/sweep (or resumes it there), writes its report to
# $dir/report.txt, then calls PAIR SEED for seeds 11-13, which no trial ran: PAIR trains (and
# evaluates) the preset into $dir/preset-sSEED and $dir/sweep/best.ini into $dir/best-sSEED. Sets
# sweep_seconds, load_before and load_after. Uses $skinner and $dir.
# usage: bench_sweep_vs_preset SPEC PAIR
bench_sweep_vs_preset() {
    local spec=$1 pair=$2 seed start
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    start=$(date +%s.%N)
    if [[ -f $dir/sweep/sweep.ini ]]; then "$skinner" sweep --resume "$dir/sweep" > /dev/null
    else "$skinner" sweep --config "$spec" --run-dir "$dir/sweep" > /dev/null; fi
    sweep_seconds=$(echo "$(date +%s.%N) - $start" | bc)
    "$skinner" sweep report "$dir/sweep" > "$dir/report.txt"
    for seed in 11 12 13; do "$pair" "$seed"; done
    load_after=$(cut -d' ' -f1-3 /proc/loadavg)
}
