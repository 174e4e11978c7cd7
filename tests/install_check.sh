#!/usr/bin/env bash
# make install's promise (issue 30, item 3): from an existing build folder, `make install
# PREFIX=DIR` installs into DIR every time (two prefixes in turn), never into the prefix
# cached in the build folder (/usr/local by default); the program, libraries, headers,
# presets and pkg-config files land under DIR; the Python package imports with
# /usr/bin/python3 after exactly the line make install printed, and finds the installed
# presets; the header's worked example builds against DIR with `pkg-config --cflags --libs
# skinner`, runs without LD_LIBRARY_PATH and trains CartPole-v1 to solved; the env modules
# are installed and the installed program and Python package list their envs by themselves.
set -euo pipefail
build_dir=$(realpath "$1")
source_dir=$(realpath "$2")
fail() { echo "install_check: $*"; exit 1; }
marker=$(mktemp) # skinner files newer than this under the cached prefix were installed there
prefixes=()
trap 'rm -rf "$marker" "${prefixes[@]}"' EXIT
cached=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build_dir/CMakeCache.txt")
[[ -n $cached ]] || fail "no CMAKE_INSTALL_PREFIX in $build_dir/CMakeCache.txt"

for round in 1 2; do
    prefix=$(mktemp -d)
    prefixes+=("$prefix")
    out=$(make -s --no-print-directory -C "$source_dir" install BUILD="$build_dir" PREFIX="$prefix" \
          JOBS=1 2>&1) ||
        { tail -n 30 <<< "$out"; fail "make install PREFIX=$prefix failed"; }
    grep -e '^-- skinner' -e '^export' <<< "$out" || true
    outside=$(sed -n 's/^-- \(Installing\|Up-to-date\): //p' <<< "$out" | grep -v "^$prefix/" || true)
    [[ -z $outside ]] || fail "make install PREFIX=$prefix wrote outside it: $outside"
    grep -q "^-- skinner: installed under $prefix\$" <<< "$out" || fail "make install did not say where"
    pc=$(find "$prefix" -name skinner.pc | head -1)
    [[ -n $pc ]] || fail "no skinner.pc under $prefix"
    lib_dir=$(dirname "$(dirname "$pc")")
    for f in "$prefix/bin/skinner" "$prefix/include/skinner.h" "$prefix/include/skinner/env.h" \
             "$lib_dir/libskinner.so.0" "$lib_dir/libskinner.a" "$lib_dir/pkgconfig/skinner-plugin.pc" \
             "$prefix/share/skinner/configs/cartpole.ini"; do
        [[ -e $f ]] || fail "make install PREFIX=$prefix: $f is missing"
    done
    # the env modules (issue 31 ask 1): installed under LIBDIR/skinner/modules and found there
    # by the installed program by itself, from any folder, with no --env-lib
    for module in minatar prover morpho; do
        [[ -e $lib_dir/skinner/modules/skinner-$module.so ]] ||
            fail "make install PREFIX=$prefix: $lib_dir/skinner/modules/skinner-$module.so is missing"
    done
    envs=$(cd / && env -u SKINNER_MODULE_PATH "$prefix/bin/skinner" envs 2>&1) ||
        fail "the installed skinner envs failed: $envs"
    for id in MinAtar/Breakout-v1 Prover-v0 Morpho-v0; do
        grep -q "^$id " <<< "$envs" || fail "the installed skinner envs does not list $id: $envs"
    done
    [[ $envs != *warning* ]] || fail "the installed skinner envs warned: $envs"
    # a CNN policy: the installed program loads the installed oneDNN backend (it never
    # falls back to the build folder's, which is outside its tree)
    [[ -e $lib_dir/libskinner-dnnl.so ]] || fail "make install PREFIX=$prefix: no $lib_dir/libskinner-dnnl.so"
    cnn=$(cd / && env -u SKINNER_CONV_BACKEND "$prefix/bin/skinner" train MinAtar/Breakout-v1 \
        --total-steps 8192 --quiet --run-dir "$prefix/cnn" 2>&1) ||
        fail "the installed skinner could not train MinAtar's CNN preset: $cnn"
    # the Python package, where it was built: imported after exactly what make install said
    if grep -q "^-- skinner: the Python package is in" <<< "$out"; then
        export_line=$(grep '^export PYTHONPATH=' <<< "$out" || true)
        if grep -q "does not search" <<< "$out"; then
            [[ -n $export_line ]] || fail "make install said python3 does not search the package's folder, but not what to export"
        fi
        echo "python3 after: ${export_line:-nothing}"
        py=$(cd / && unset PYTHONPATH && eval "$export_line" && /usr/bin/python3 -c "
import os, skinner
assert os.path.realpath(skinner.__file__).startswith(os.path.realpath('$prefix')), skinner.__file__
print('preset', skinner._preset_paths('CartPole-v1')[0])
r = skinner.train('CartPole-v1', total_steps=4096, threads=1)
print('steps', r['total_steps'])
print('modules', all(e in skinner.envs() for e in ('MinAtar/Breakout-v1', 'Prover-v0', 'Morpho-v0')))") || fail "the installed Python package did not import as make install said"
        echo "$py"
        [[ $py == *"preset $prefix/share/skinner/configs/cartpole.ini"* && $py == *"steps 4096"* ]] ||
            fail "the installed Python module did not find its presets or train"
        [[ $py == *"modules True"* ]] || fail "the installed Python module does not see the modules' envs"
    fi
done
installed_there=$(find "$cached" -newer "$marker" -name '*skinner*' 2>/dev/null | head -5 || true)
[[ -z $installed_there ]] || fail "files were installed into the cached prefix $cached: $installed_there"

# the header's example against the last prefix, through pkg-config; skinner.pc gives the
# library's folder as run path, so it runs without LD_LIBRARY_PATH
export PKG_CONFIG_PATH=$lib_dir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
cc -std=c17 -Wall -Wextra -Werror "$source_dir/examples/train_cartpole.c" -o "$prefix/example" \
    $(pkg-config --cflags --libs skinner)
out=$(env -u LD_LIBRARY_PATH "$prefix/example")
echo "$out"
[[ $out == solved=1* ]] || fail "the example did not solve CartPole-v1"
# the installed program finds its installed presets (no warning about a missing preset)
err=$("$prefix/bin/skinner" train cartpole --total-steps 2048 --quiet --run-dir "$prefix/run" 2>&1 >/dev/null || true)
if grep -q "no preset" <<< "$err"; then fail "installed skinner found no preset: $err"; fi
# the dashboard (issue 35): the installed skinner serve, on a free loopback port, answers GET /
# with the installed page and the page's Chart.js script with the installed copy (not Debian's
# /usr/share/javascript/chart.js, which the build tree's program falls back to)
if grep -q '^MICROHTTPD_FOUND:INTERNAL=1' "$build_dir/CMakeCache.txt"; then
    web=$prefix/share/skinner/web
    for f in "$web/index.html" "$web/app.js" "$web/vendor/chart.min.js"; do
        [[ -e $f ]] || fail "make install PREFIX=$prefix: $f is missing (the dashboard's page)"
    done
    mkdir -p "$prefix/runs"
    (cd / && exec "$prefix/bin/skinner" serve "$prefix/runs" --port 0 --port-file "$prefix/port" \
        >/dev/null) &
    serve_pid=$!
    for _ in $(seq 100); do [[ -s $prefix/port ]] && break; sleep 0.1; done
    [[ -s $prefix/port ]] || { kill "$serve_pid" 2>/dev/null; fail "the installed skinner serve did not start"; }
    got=$(/usr/bin/python3 - "$(cat "$prefix/port")" "$web" <<'PY'
import http.client, re, sys
port, web = int(sys.argv[1]), sys.argv[2]
def get(path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    r = conn.getresponse()
    return r.status, r.read()
status, page = get("/")
print("page", status == 200 and page == open(f"{web}/index.html", "rb").read())
script = re.search(rb'<script src="(vendor/chart[^"]*)"', page)
status, body = get("/" + script.group(1).decode()) if script else (0, b"")
print("chartjs", status == 200 and body == open(f"{web}/vendor/chart.min.js", "rb").read())
PY
) || true
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    echo "$got"
    [[ $got == *"page True"* ]] || fail "the installed skinner serve did not serve the installed page at /"
    [[ $got == *"chartjs True"* ]] || fail "the installed skinner serve did not serve the installed Chart.js"
fi
echo "install_check: ok"
