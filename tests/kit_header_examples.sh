#!/usr/bin/env bash
# The worked examples at the top of include/skinner/nn.h and include/skinner/pool.h (the
# public layers and worker pool for env authors, issue 31 ask 1), cut out of the headers
# verbatim, built against include/ alone with -lskinner and run: the dense layer fitted by
# Adam finds y = 1 + x0 + 2 x1, the pool squares 0..9, and skinner/module.h's program finds
# a MinAtar env and the Prover module's KGE call in the build folder's modules; and a C++
# program can include every kit header.
# Usage: kit_header_examples.sh BUILD_DIR SOURCE_DIR [SANITIZERS]
#   SANITIZERS: the build's SKINNER_SANITIZE (address,undefined): the examples link its
#   instrumented libskinner, so they are built with the same runtime
set -euo pipefail
build_dir=$(realpath "$1")
source_dir=$(realpath "$2")
sanitize=()
[[ -n ${3:-} ]] && sanitize=(-fsanitize="$3")
fail() { echo "kit_header_examples: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# example HEADER NAME EXPECTED: the comment's program from '#include <skinner/HEADER>' to the
# brace after main's 'return 0;', with the ' *     ' margin taken off
example() {
    local header=$1 name=$2 expected=$3
    awk -v first=" *     #include <skinner/$header>" '
        $0 == first { on = 1 }
        on { print }
        on && $0 ~ /^ \*         return 0;$/ { closing = 1; next }
        closing && $0 ~ /^ \*     }$/ { exit }' "$source_dir/include/skinner/$header" |
        sed -e 's/^ \*     //' -e 's/^ \*$//' > "$work/$name.c"
    grep -q 'int main' "$work/$name.c" || fail "no program at the top of skinner/$header"
    cc -std=c17 -Wall -Wextra -Werror "${sanitize[@]}" -I"$source_dir/include" -I"$build_dir/include" "$work/$name.c" -o "$work/$name" \
        -L"$build_dir" -lskinner -Wl,-rpath,"$build_dir" -lm ||
        { cat -n "$work/$name.c"; fail "skinner/$header's example does not build"; }
    local out
    out=$("$work/$name") || fail "skinner/$header's example exited $?"
    [[ $out == "$expected" ]] || fail "skinner/$header's example printed '$out', expected '$expected'"
    echo "skinner/$header: $out"
}
# a C++ host includes the kit too (every header has its extern "C" guard)
for header in "$source_dir"/include/skinner.h "$source_dir"/include/skinner/*.h; do
    printf '#include "%s"\nint main() { return 0; }\n' "$header" > "$work/cxx.cc"
    c++ -std=c++17 -fsyntax-only -Wall -Werror -I"$source_dir/include" -I"$build_dir/include" "$work/cxx.cc" ||
        fail "a C++ program cannot include $(basename "$header")"
done
example nn.h nn "w = (1.00, 2.00), b = 1.00"
example pool.h pool "9 81"
example module.h module "MinAtar/Breakout-v1, KGE calls: yes"
