#!/usr/bin/env bash
# pip's way in (issue 49, docs/install.md "A wheel"): from a clean copy of the tree (the files
# git tracks or would, nothing built), `make wheel` builds and repairs the manylinux wheel; it
# installs into a fresh venv of Debian's /usr/bin/python3 (no system site-packages), and the
# copy is moved away, so that nothing can come from a source or build tree. Then, from the venv
# alone: the program on PATH is the real ELF binary; its --version, skinner.__version__,
# `python -m skinner --version` and the wheel's name agree; skinner.check_env passes CartPole-v1
# and MinAtar/Breakout-v1 (a module); skinner.train solves CartPole-v1; the program trains
# MinAtar's CNN preset (the oneDNN backend); the example plugin builds with the package's
# skinner-plugin.pc and trains; skinner serve answers /api/runs. `pip uninstall -y skinner`
# then leaves the venv as it was before the install, file for file.
# Needs PyPI (pip fetches scikit-build-core, NumPy, auditwheel): without it, it skips
# (exit 77) outside CI and fails under CI.
set -euo pipefail
source_dir=$(realpath "$2")
fail() { echo "wheel_check: $*"; exit 1; }
work=$(mktemp -d)
serve_pid=
trap '[[ -n $serve_pid ]] && kill "$serve_pid" 2>/dev/null; rm -rf "$work"' EXIT

if ! /usr/bin/python3 -c "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/pip/', timeout=10)" 2>/dev/null; then
    [[ ${CI:-} == true ]] && fail "PyPI is not reachable (pip needs it to build the wheel)"
    echo "SKIPPED: wheel_check: PyPI is not reachable (pip needs it to build the wheel)"
    exit 77
fi

# the clean copy: what git tracks, and new files it does not ignore, as they are now
mkdir "$work/src"
(cd "$source_dir" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -xf - -C "$work/src"
start=$SECONDS
out=$(make -s --no-print-directory -C "$work/src" wheel JOBS="${JOBS:-2}" 2>&1) ||
    { tail -n 40 <<< "$out"; fail "make wheel failed"; }
grep -E '^(wheel|tag|size):' <<< "$out"
echo "make wheel: $((SECONDS - start)) s"
wheel=$(sed -n 's/^wheel: //p' <<< "$out")
[[ $wheel == /* ]] || wheel=$work/src/$wheel # wheel_repair.py names it from the tree's root
[[ -f $wheel && $wheel == *manylinux* ]] || fail "make wheel made no manylinux wheel: $out"
cp "$wheel" "$work/"
wheel=$work/$(basename "$wheel")
mv "$work/src" "$work/moved" # nothing may come from the tree or its build folders

venv=$work/venv
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install -q numpy # the dependency first, so that the listings differ by skinner alone
find "$venv" -not -path '*/__pycache__*' | sort > "$work/before"
"$venv/bin/pip" install -q "$wheel" || fail "pip install $wheel failed"

mkdir "$work/run" && cd "$work/run"
export PATH=$venv/bin:$PATH
unset LD_LIBRARY_PATH PYTHONPATH SKINNER_MODULE_PATH SKINNER_CONV_BACKEND SKINNER_CONFIG_DIR \
    SKINNER_PROGRAM PKG_CONFIG_PATH

# the program on PATH is the real one, not a shim, and knows its version
[[ $(command -v skinner) == "$venv/bin/skinner" ]] || fail "skinner on PATH is $(command -v skinner)"
[[ $(head -c 4 "$venv/bin/skinner" | od -An -c | tr -d ' ') == '177ELF' ]] ||
    fail "$venv/bin/skinner is not an ELF program: $(head -c 80 "$venv/bin/skinner")"
program_version=$(skinner --version | sed -n 's/^skinner //p')
module_version=$(python -m skinner --version | sed -n 's/^skinner //p')
python_version=$(python -c "import skinner; print(skinner.__version__)")
wheel_version=$(basename "$wheel" | cut -d- -f2)
echo "versions: program $program_version, python -m $module_version, package $python_version, wheel $wheel_version"
[[ -n $program_version && $program_version == "$python_version" && $program_version == "$module_version" &&
   $program_version == "$wheel_version" ]] || fail "the versions disagree"

# the package: check_env on a classic env and a module's, then train CartPole-v1 to solved
python - << 'EOF' || fail "the installed package did not check or solve"
import os, skinner, sysconfig
assert skinner.__file__.startswith(sysconfig.get_paths()["purelib"]), skinner.__file__
for env_id in ("CartPole-v1", "MinAtar/Breakout-v1"):
    skinner.check_env(env_id)
    print("check_env", env_id, "ok")
r = skinner.train("CartPole-v1", stop_when_solved=True, total_steps=2_000_000)
print("solved", r["solved"], "after", r["total_steps"], "steps")
assert r["solved"], r
EOF

# the program: MinAtar's preset (a CNN: the package's oneDNN backend) from the venv's PATH
skinner train MinAtar/Breakout-v1 --total-steps 20000 --quiet --run-dir runs/breakout ||
    fail "skinner train MinAtar/Breakout-v1 failed"
[[ -f runs/breakout/policy.safetensors ]] || fail "the Breakout run wrote no checkpoint"
echo "train MinAtar/Breakout-v1: ok"

# a plugin against the package's kit, as docs/install.md prints it
PKG_CONFIG_PATH=$(python -c "import os, skinner; print(os.path.join(os.path.dirname(skinner.__file__), 'lib', 'pkgconfig'))")
export PKG_CONFIG_PATH
cp "$work/moved/examples/plugin/gridworld.c" .
cc -std=c17 -O2 gridworld.c -o libgridworld.so $(pkg-config --cflags --libs skinner-plugin) ||
    fail "the plugin did not build against the package's skinner-plugin.pc"
skinner train ./libgridworld.so:GridWorld-v0 --stop-when-solved > plugin.out 2>&1 ||
    { cat plugin.out; fail "skinner train of the plugin failed"; }
grep "^solved GridWorld-v0" plugin.out || { cat plugin.out; fail "the plugin's env was not solved"; }

# the dashboard, from the package's web folder, on a free loopback port
skinner serve runs --bind 127.0.0.1 --port 0 --port-file port > serve.out 2>&1 &
serve_pid=$!
for _ in $(seq 100); do [[ -s port ]] && break; sleep 0.1; done
[[ -s port ]] || { cat serve.out; fail "skinner serve did not start"; }
runs=$(curl -sf "http://127.0.0.1:$(cat port)/api/runs") || fail "GET /api/runs failed"
page=$(curl -sf "http://127.0.0.1:$(cat port)/") || fail "GET / failed"
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
grep -q breakout <<< "$runs" || fail "/api/runs does not list the Breakout run: $runs"
grep -qi "<html" <<< "$page" || fail "GET / is not the dashboard's page"
echo "serve /api/runs: ok"

cd "$work"
pip uninstall -y -q skinner
find "$venv" -not -path '*/__pycache__*' | sort > "$work/after"
left=$(comm -13 "$work/before" "$work/after")
[[ -z $left ]] || fail "pip uninstall left files behind: $left"
pycache_left=$(find "$venv" -path '*skinner*' | head -5)
[[ -z $pycache_left ]] || fail "pip uninstall left files behind: $pycache_left"
echo "wheel_check: ok ($((SECONDS - start)) s)"
