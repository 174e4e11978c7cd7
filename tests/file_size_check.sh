#!/usr/bin/env bash
# Files stay small enough to read in one sitting (issue 31 ask 7, STYLE.md): no source
# file of the library, its headers or the Python module (src/, include/, python/src/)
# has more than LIMIT lines unless its opening comment says why it stays whole, in a
# line containing "stays whole:" among its first 40 lines. Prints every file over the
# limit with its lines and its reason, and fails naming each one that has none.
# Usage: file_size_check.sh SOURCE_DIR [LIMIT (default 800)]
set -uo pipefail
source_dir=$1 limit=${2:-800}
[[ -d $source_dir/src ]] || { echo "file_size_check: no src/ in '$source_dir'"; exit 1; }
failed=0 checked=0
while IFS= read -r -d '' file; do
    checked=$((checked + 1))
    lines=$(wc -l < "$file")
    (( lines > limit )) || continue
    name=${file#"$source_dir"/}
    reason=$(head -n 40 "$file" | grep -m1 -o 'stays whole:.*')
    if [[ -n $reason ]]; then
        echo "over $limit lines with a reason: $name ($lines lines): $reason"
    else
        echo "file_size_check: $name has $lines lines (expected at most $limit, or a" \
             "'stays whole:' reason in its first 40 lines); split it along a seam"
        failed=$((failed + 1))
    fi
done < <(find "$source_dir/src" "$source_dir/include" "$source_dir/python/src" -type f \
              \( -name '*.c' -o -name '*.h' -o -name '*.py' \) -print0 2> /dev/null | sort -z)
(( checked > 0 )) || { echo "file_size_check: no source files under $source_dir"; exit 1; }
(( failed == 0 )) || exit 1
echo "file_size_check: $checked files, none over $limit lines without a reason"
