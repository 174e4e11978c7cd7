#!/usr/bin/env bash
# A core without oneDNN (issue 31 ask 2). libskinner.so and the skinner program do not link
# libdnnl (only the convolution backend libskinner-dnnl.so does); CartPole-v1 trains without
# loading either, and trains with the backend made unavailable (SKINNER_CONV_BACKEND pointing
# at a file that is not there); in that state a CNN policy is refused with a message naming
# the backend file and what to install, and so is a backend file that cannot be loaded or is
# not a backend. The same CNN command with the backend in place trains (the control).
# Usage: core_without_dnnl.sh BUILD_DIR BACKEND_BUILT (ON/OFF: SKINNER_DNNL)
set -euo pipefail
build_dir=$(realpath "$1")
backend_built=$2
fail() { echo "core_without_dnnl: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
skinner=$build_dir/skinner
backend=$build_dir/libskinner-dnnl.so
shopt -s nullglob
core=("$build_dir"/libskinner.so* "$skinner")
((${#core[@]} >= 2)) || fail "no libskinner.so in $build_dir"

# 1. the core's files name no libdnnl; the backend's does (so the grep can see one)
for f in "${core[@]}"; do
    deps=$(ldd "$f") || fail "ldd $f failed"
    if grep -i dnnl <<< "$deps"; then fail "$f needs libdnnl"; fi
done
if [[ $backend_built == ON ]]; then
    [[ -e $backend ]] || fail "no $backend although the build made it (SKINNER_DNNL=ON)"
    deps=$(ldd "$backend") || fail "ldd $backend failed"
    grep -q 'libdnnl\.so' <<< "$deps" ||
        fail "ldd $backend shows no libdnnl: this check could not see one in the core either"
fi

# 2. CartPole-v1 never loads the backend nor libdnnl (ld.so's own list of what it opened)
LD_DEBUG=files "$skinner" train CartPole-v1 --total-steps 20000 --run-dir "$work/cartpole" \
    > "$work/cartpole.out" 2> "$work/cartpole.err" ||
    { tail -n 20 "$work/cartpole.err"; fail "CartPole-v1 did not train"; }
if grep -E 'file=[^ ]*(dnnl)' "$work/cartpole.err"; then
    fail "CartPole-v1's training opened the lines above"
fi
grep -q 'file=libopenblas' "$work/cartpole.err" ||
    fail "LD_DEBUG=files listed no libopenblas: the check above cannot see what is opened"
[[ $(wc -l < "$work/cartpole/metrics.csv") -gt 1 ]] || fail "CartPole-v1 wrote no metrics rows"

# 3. ... and trains with the backend unavailable
absent=$work/absent/libskinner-dnnl.so
SKINNER_CONV_BACKEND=$absent "$skinner" train CartPole-v1 --total-steps 20000 \
    --run-dir "$work/cartpole_absent" > "$work/absent.out" 2>&1 ||
    { tail -n 20 "$work/absent.out"; fail "CartPole-v1 did not train with the backend absent"; }
[[ $(wc -l < "$work/cartpole_absent/metrics.csv") -gt 1 ]] ||
    fail "CartPole-v1 wrote no metrics rows with the backend absent"

# 4. a CNN policy is refused in that state, naming the file and what to install
cnn=(train MinAtar/Breakout-v1 --policy.encoder cnn --total-steps 2048)
refused() { # refused NAME BACKEND_PATH TEXT...: the CNN run fails and prints every TEXT
    local name=$1 path=$2
    shift 2
    if SKINNER_CONV_BACKEND=$path "$skinner" "${cnn[@]}" --run-dir "$work/$name" \
        > "$work/$name.out" 2>&1; then
        fail "policy.encoder=cnn trained with SKINNER_CONV_BACKEND=$path"
    fi
    for text in "$@"; do
        grep -qF -- "$text" "$work/$name.out" ||
            { cat "$work/$name.out"; fail "the refusal ($name) does not say '$text'"; }
    done
    echo "refused ($name): $(grep -m1 error "$work/$name.out")"
}
refused absent "$absent" "$absent" "libskinner-dnnl.so" "was not found" "libdnnl-dev"
printf 'not a shared object\n' > "$work/broken.so"
refused broken "$work/broken.so" "$work/broken.so" "could not be loaded" "libdnnl-dev"
refused not_backend "$build_dir/libskinner.so.0" "is not a convolution backend"

# 5. the control: with the backend in place the same command trains
if [[ $backend_built == ON ]]; then
    "$skinner" "${cnn[@]}" --run-dir "$work/cnn" > "$work/cnn.out" 2>&1 ||
        { tail -n 20 "$work/cnn.out"; fail "policy.encoder=cnn did not train with the backend"; }
fi
echo "core_without_dnnl: ok"
