#!/usr/bin/env bash
# Issue 31 ask 1: libskinner.a, like libskinner.so, defines only sk_/SK_ global names (a
# program linking the static library gets no unprefixed name of ours to collide with), and
# each env module (BUILD/modules/skinner-*.so) exports only sk_ names (its table, SK_PLUGIN_EXPORT,
# and the entry points it offers, such as the Prover module's sk_module_kge_*).
# usage: symbols_check.sh BUILD_DIR
set -euo pipefail
build_dir=$1
fail=0
# nm -g --defined-only: one "ADDRESS TYPE NAME" line per global symbol defined
# (a sanitizer build adds AddressSanitizer's __odr_asan.NAME twin of each global NAME)
unprefixed() { awk 'NF == 3 { print $3 }' | sed 's/^__odr_asan\.//' | grep -v -E '^(sk_|SK_)' | sort -u || true; }
check() { # what, names
    if [[ -n $2 ]]; then
        echo "symbols_check: $1 defines $(wc -l <<< "$2") global names without the sk_/SK_ prefix:"
        sed 's/^/  /' <<< "$2"
        fail=1
    fi
}
static_lib="$build_dir/libskinner.a"
shared_lib=$(ls "$build_dir"/libskinner.so.* 2>/dev/null | head -1)
[[ -f $static_lib && -n $shared_lib ]] || { echo "symbols_check: no libskinner.a/.so in $build_dir"; exit 1; }
# symbols FILE [nm flags]: nm's listing, or the test fails (an nm that fails lists nothing,
# which must not read as "no unprefixed names")
symbols() {
    local file=$1 out
    shift
    out=$(nm "$@" -g --defined-only "$file" 2>/dev/null) || { echo "symbols_check: nm failed on $file"; exit 1; }
    [[ -n $out ]] || { echo "symbols_check: nm lists no symbols in $file"; exit 1; }
    printf '%s\n' "$out"
}
listing=$(symbols "$static_lib"); check "$static_lib" "$(unprefixed <<< "$listing")"
listing=$(symbols "$shared_lib" -D); check "$shared_lib" "$(unprefixed <<< "$listing")"
# the oneDNN backend exports its one entry point, nothing else
backend="$build_dir/libskinner-dnnl.so"
if [[ -e $backend ]]; then
    listing=$(symbols "$backend" -D)
    extra=$(awk 'NF == 3 { print $3 }' <<< "$listing" | grep -v -x 'sk_conv_backend_entry' || true)
    check "$backend (beyond sk_conv_backend_entry)" "$extra"
fi
modules=("$build_dir"/modules/skinner-*.so)
[[ -e ${modules[0]} ]] || { echo "symbols_check: no modules in $build_dir/modules"; exit 1; }
for module in "${modules[@]}"; do
    listing=$(symbols "$module" -D); check "$module" "$(unprefixed <<< "$listing")"
done
if [[ $fail == 0 ]]; then
    echo "symbols_check: ok ($static_lib, $shared_lib and ${#modules[@]} modules: sk_/SK_ names only)"
fi
exit $fail
