#!/usr/bin/env bash
# What skipped in a ctest run, and why, from ctest's log. Each test prints
# `SKIPPED: <case>: <why>` for a case it skipped, or `SKIPPED: <case>, part '<part>': <why>`
# for a part of one (tests/test_util.h, python/tests/conftest.py, tests/mpi_check.sh); this
# groups them by reason under the test that printed them.
#   skipped_cases.sh [build/Testing/Temporary/LastTest.log]   after ctest (make test runs it)
#   skipped_cases.sh --during DIR   as ctest's last test (skipped_cases): reads the log ctest is
#                                   writing in DIR and exits 77 (ctest: Skipped) if any skipped
set -euo pipefail
during=0
if [[ ${1:-} == --during ]]; then
    during=1
    log=$(ls -t "$2"/LastTest*.log.tmp 2>/dev/null | head -1 || true)
else
    log=${1:-build/Testing/Temporary/LastTest.log}
fi
[[ -n $log && -f $log ]] || { echo "skipped_cases: no ctest log at ${log:-${2:-}}"; exit 0; }
summary=$(awk '
/^[0-9]+\/[0-9]+ Testing: / { test = $3; next }
/^SKIPPED: / {
    line = substr($0, 10)
    split_at = index(line, ": ")
    what = substr(line, 1, split_at - 1); why = substr(line, split_at + 2)
    if (what ~ /, part \x27/) parts++; else cases++
    if (!(why in listed)) { reasons[++num_reasons] = why; listed[why] = ""; count[why] = 0 }
    listed[why] = listed[why] "\n      " test ": " what
    count[why]++
}
END {
    if (cases + parts == 0) { print "skipped: none"; exit }
    printf "skipped: %d case%s", cases, cases == 1 ? "" : "s"
    if (parts) printf " and %d part%s of cases", parts, parts == 1 ? "" : "s"
    print ", because:"
    for (r = 1; r <= num_reasons; r++) printf "  %d: %s%s\n", count[reasons[r]], reasons[r], listed[reasons[r]]
}' "$log")
echo "$summary"
(( during )) && [[ $summary != "skipped: none" ]] && exit 77
exit 0
