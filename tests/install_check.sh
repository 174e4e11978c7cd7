#!/usr/bin/env bash
# make install's promise: the program, library, header, presets and pkg-config
# file land under PREFIX, and the header's worked example builds against them
# with `pkg-config --cflags --libs skinner` and trains CartPole-v1 to solved.
set -euo pipefail
build_dir=$1
source_dir=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix" > /dev/null
for f in bin/skinner include/skinner.h share/skinner/configs/cartpole.ini; do
    [[ -e $prefix/$f ]] || { echo "install_check: $prefix/$f is missing"; exit 1; }
done
pc_dir=$(dirname "$(find "$prefix" -name skinner.pc | head -1)")
[[ -n $pc_dir ]] || { echo "install_check: no skinner.pc installed"; exit 1; }
export PKG_CONFIG_PATH=$pc_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
cc -std=c17 -Wall -Wextra -Werror "$source_dir/examples/train_cartpole.c" -o "$prefix/example" \
    $(pkg-config --cflags --libs skinner)
# -lskinner links libskinner.so, installed beside the .pc file's folder; a prefix
# outside the loader's search path needs LD_LIBRARY_PATH
out=$(LD_LIBRARY_PATH=$(dirname "$pc_dir")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$prefix/example")
echo "$out"
[[ $out == solved=1* ]] || { echo "install_check: the example did not solve CartPole-v1"; exit 1; }
# the installed program finds its installed presets (no warning about a missing preset)
err=$("$prefix/bin/skinner" train cartpole --total-steps 2048 --quiet --run-dir "$prefix/run" 2>&1 >/dev/null || true)
if grep -q "no preset" <<< "$err"; then echo "install_check: installed skinner found no preset: $err"; exit 1; fi
# the Python module, where it was built: installed beside the library, it imports
# from the prefix and finds the installed presets
py_dir=$(find "$prefix" -name _core.*.so -path '*/skinner/*' | head -1)
if [[ -n $py_dir ]]; then
    site=$(dirname "$(dirname "$py_dir")")
    out=$(cd / && PYTHONPATH=$site /usr/bin/python3 -c "
import skinner, os
assert os.path.dirname(skinner.__file__).startswith('$prefix'), skinner.__file__
print('preset', skinner._preset_path('CartPole-v1'))
r = skinner.train('CartPole-v1', total_steps=4096, threads=1)
print('steps', r['total_steps'])")
    echo "$out"
    [[ $out == *"preset $prefix/share/skinner/configs/cartpole.ini"* && $out == *"steps 4096"* ]] ||
        { echo "install_check: the installed Python module did not import or find its presets"; exit 1; }
fi
echo "install_check: ok"
