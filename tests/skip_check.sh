#!/usr/bin/env bash
# Tests that skip do so loudly (issue 30, item 7): with the shared references pointed
# at a missing folder (SKINNER_SHARED_DIR), a test that needs them prints one
# `SKIPPED: <case>: <why>` line per case naming the folder, a program whose every case
# skipped exits 77 (ctest's SKIP_RETURN_CODE), and under CI=true the same cases fail,
# naming the folder. The same for the Python tests, and scripts/skipped_cases.sh's count
# (after ctest, and as ctest's last test).
# (The skips it provokes are echoed indented, so that make test does not count them.)
# Usage: skip_check.sh SOURCE_DIR TEST_CARTPOLE SKIP_ALL [PYTHON PYTHONPATH BUILD_DIR]
set -uo pipefail
source_dir=$1 some_skip=$2 all_skip=$3 python=${4:-} python_path=${5:-} build_dir=${6:-}
fail() { echo "skip_check: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
missing=$work/no-shared-here
export SKINNER_SHARED_DIR=$missing
unset CI

# outside CI: the reference cases skip, naming the folder, and the others pass
out=$("$some_skip" 2>&1); status=$?
echo "$out" | grep -E '^(SKIPPED|skipped)' | sed 's/^/  expected: /'
(( status == 0 )) || fail "$some_skip exited $status without the references (expected 0: the rest passed)"
skips=$(grep -c "^SKIPPED: test_[a-z_]*: $missing .*is missing" <<< "$out")
(( skips == 3 )) || fail "expected 3 SKIPPED lines naming $missing, got $skips"
grep -q "^skipped 3 of [0-9]* cases" <<< "$out" || fail "no count of the skipped cases"
# every case skipped: exit 77
"$all_skip" > "$work/all.out" 2>&1; status=$?
(( status == 77 )) || fail "a program whose every case skipped exited $status, expected 77"
(( $(grep -c "^SKIPPED: test_needs_shared[a-z_]*: $missing" "$work/all.out") == 2 )) ||
    fail "expected 2 SKIPPED lines: $(cat "$work/all.out")"

# under CI: the same cases fail, naming the folder
out=$(CI=true "$some_skip" 2>&1); status=$?
(( status == 3 )) || fail "under CI=true $some_skip exited $status, expected 3 (failed cases)"
(( $(grep -c "^FAILED: test_[a-z_]*: $missing .*CI=true" <<< "$out") == 3 )) ||
    fail "under CI=true the failures do not name $missing: $out"
if CI=true "$all_skip" > /dev/null 2>&1; then fail "under CI=true a program with only skips passed"; fi

# make test's summary from ctest's log (the log's layout: 'N/M Testing: NAME', then output)
{ echo "1/2 Testing: test_x"; echo "$out" | sed 's/^FAILED/SKIPPED/'; echo "2/2 Testing: test_y"
  echo "SKIPPED: test_b, part 'wn18rr': why"; } > "$work/LastTest.log"
summary=$(bash "$source_dir/scripts/skipped_cases.sh" "$work/LastTest.log")
echo "$summary"
grep -q "^skipped: 3 cases and 1 part of cases, because:" <<< "$summary" ||
    fail "skipped_cases.sh does not count 3 cases and 1 part"
grep -q "^      test_x: test_transitions" <<< "$summary" || fail "skipped_cases.sh does not list the case"
# as ctest's last test: it reads the log ctest is writing and reports Skipped (77) if any skipped
mv "$work/LastTest.log" "$work/LastTest.log.tmp"
bash "$source_dir/scripts/skipped_cases.sh" --during "$work" > /dev/null; status=$?
(( status == 77 )) || fail "skipped_cases.sh --during exited $status with skips in the log, expected 77"
echo "1/1 Testing: test_x" > "$work/LastTest.log.tmp"
bash "$source_dir/scripts/skipped_cases.sh" --during "$work" > /dev/null ||
    fail "skipped_cases.sh --during failed on a log without skips"

# the Python tests: the same, through conftest.py's require
if [[ -n $python ]]; then
    out=$(cd "$work" && PYTHONPATH=$python_path SKINNER_BUILD=$build_dir "$python" -m pytest -q \
        -p no:cacheprovider "$source_dir/python/tests/test_vec.py" \
        -k "test_masks_multi_head_actions or test_config_sizes_the_buffers" 2>&1); status=$?
    echo "$out" | grep -E '^(SKIPPED|skipped)' | sed 's/^/  expected: /'
    (( status == 0 )) || fail "pytest exited $status without the references: $out"
    (( $(grep -c "^SKIPPED: .*test_vec.py::test_[a-z_]*: $missing/datasets/countries_s3 is missing" <<< "$out") == 2 )) ||
        fail "pytest's summary does not list the 2 skipped tests naming $missing: $out"
    out=$(cd "$work" && CI=true PYTHONPATH=$python_path SKINNER_BUILD=$build_dir "$python" -m pytest -q \
        -p no:cacheprovider "$source_dir/python/tests/test_vec.py" \
        -k "test_masks_multi_head_actions or test_config_sizes_the_buffers" 2>&1); status=$?
    (( status != 0 )) || fail "under CI=true pytest passed without the references"
    grep -q "$missing/datasets/countries_s3 is missing.*CI=true" <<< "$out" ||
        fail "under CI=true pytest's failure does not name $missing: $out"
fi
echo "skip_check: ok"
