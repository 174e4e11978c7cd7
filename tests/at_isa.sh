#!/usr/bin/env bash
# at_isa.sh LEVEL SKINNER CMD [ARGS...]: CMD with SKINNER_ISA=LEVEL, so that one machine tests the
# kernels of every ISA level it has (issue 48 ask 5). A level this CPU lacks cannot run here: that
# is a skip (exit 77) naming the CPU, even under CI, since no package brings the instructions.
# SKINNER is the build's program, which says whether the CPU has LEVEL.
set -uo pipefail
level=$1 skinner=$2
shift 2
if ! refusal=$(SKINNER_ISA=$level "$skinner" --version 2>&1); then
    if [[ $refusal == *"lacks $level"* ]]; then
        echo "SKIPPED: $(basename "$1") at $level: ${refusal#skinner: error: }"
        exit 77
    fi
    echo "at_isa: SKINNER_ISA=$level: $refusal"
    exit 1
fi
echo "at_isa: $(basename "$1") with SKINNER_ISA=$level (${refusal##*kernels: })"
SKINNER_ISA=$level exec "$@"
