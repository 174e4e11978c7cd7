#!/usr/bin/env bash
# A checkpoint written at one ISA level resumes at another (issue 48 ask 4): CartPole-v1 trained
# with SKINNER_ISA=baseline, resumed at the highest level this CPU has, resumed once more at
# baseline. Each leg must continue the run (metrics.csv's steps reach its budget, one row per
# update, no step counted twice) and events.jsonl must record each leg's level. The legs may not
# match an uninterrupted run bit for bit (FMA rounds differently); at one level they do, which
# test_resume checks at every level (test_resume@LEVEL).
# Usage: isa_resume_check.sh SKINNER. Skips (77) on a CPU with one level only.
set -euo pipefail
skinner=$(realpath "$1")
fail() { echo "isa_resume_check: FAIL: $*"; exit 1; }
top=baseline
for level in avx2 avx512; do
    if SKINNER_ISA=$level "$skinner" --version > /dev/null 2>&1; then top=$level; fi
done
if [[ $top == baseline ]]; then
    echo "SKIPPED: isa_resume_check: this CPU has the baseline level only"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=$work/run
leg() { # LEVEL BUDGET [--resume]
    local level=$1 budget=$2
    shift 2
    SKINNER_ISA=$level "$skinner" train CartPole-v1 --total-steps "$budget" --run-dir "$run" "$@" \
        > "$work/leg-$level-$budget.log" 2>&1 || { cat "$work/leg-$level-$budget.log"; fail "the $level leg to $budget steps failed"; }
    local last
    last=$(tail -n 1 "$run/metrics.csv" | cut -d, -f2)
    [[ $last -ge $budget ]] || fail "the $level leg stopped at $last steps, before its budget $budget"
}
leg baseline 8192
leg "$top" 16384 --resume "$run"
leg baseline 24576 --resume "$run"
# one row per update, steps strictly increasing: the resumed legs continued, not restarted
awk -F, 'NR > 1 { if ($2 <= prev) { print "steps go from " prev " to " $2 " at row " NR; bad = 1 } prev = $2 }
         END { exit bad }' "$run/metrics.csv" || fail "metrics.csv's steps do not increase across the legs"
levels=$(grep -oE '"type": "run_(started|resumed)".*"isa": "[a-z0-9]+"' "$run/events.jsonl" |
         sed -E 's/.*"isa": "([a-z0-9]+)"/\1/' | tr '\n' ' ')
[[ $levels == "baseline $top baseline " ]] || fail "events.jsonl records the legs' levels as '$levels', expected 'baseline $top baseline'"
echo "isa_resume_check: trained at baseline, resumed at $top, resumed at baseline: $(tail -n 1 "$run/metrics.csv" | cut -d, -f2) steps"
