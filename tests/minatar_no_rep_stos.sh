#!/bin/bash
# The MinAtar module's x86-64 build clears observations without `rep stos`: GCC's generic-tuned
# expansion of a 400-1000 byte memset at x86-64-v2, whose start-up cost was a third of Asterix's
# observe (modules/minatar/CMakeLists.txt, -mmemset-strategy).
# usage: minatar_no_rep_stos.sh MODULE.so   (exit 77: no objdump here)
module=$1
if ! command -v objdump > /dev/null; then
    echo "SKIPPED: minatar_no_rep_stos: no objdump on PATH to disassemble $module"
    exit 77
fi
if [ ! -f "$module" ]; then
    echo "minatar_no_rep_stos: no module at '$module' (expected the built skinner-minatar.so)" >&2
    exit 1
fi
found=$(objdump -d --no-show-raw-insn "$module" | awk '/^[0-9a-f]+ </ { f = $2 } /rep stos/ { print f, $0 }')
if [ -n "$found" ]; then
    echo "minatar_no_rep_stos: $module clears memory with rep stos (expected SSE stores in a loop):" >&2
    echo "$found" >&2
    exit 1
fi
echo "minatar_no_rep_stos: no rep stos in $module"
