#!/usr/bin/env bash
# Installs the Debian packages skinner needs to build and test, if missing.
# As root it runs apt-get; otherwise it prints the command and fails.
set -euo pipefail

# build: compiler, cmake, BLAS, JSON, gzip/crc, the monitor's ncurses and the
# plotter's PLplot with its cairo driver; test: cmocka and tmux (monitor tests); data:
# Fashion-MNIST for Morpho-v0 (/usr/share/datasets/fashion-mnist); fuzz: clang and its
# libFuzzer runtime (libclang_rt.fuzzer, a Recommends of clang that --no-install-recommends skips);
# the Python module: headers, NumPy and pytest for Debian's python3; data-parallel training:
# Open MPI (mpirun and the headers and library skinner links when it finds them); Morpho's
# convolutional host: oneDNN; bench/learner_gemm's third candidate: libxsmm. Only Debian's
# packages and PyPI are used: nothing comes from npm.
packages=(build-essential cmake pkg-config libopenblas-dev libcjson-dev zlib1g-dev
          libncurses-dev libplplot-dev plplot-driver-cairo libcmocka-dev tmux
          dataset-fashion-mnist clang libclang-rt-14-dev
          python3-dev python3-numpy python3-pytest
          openmpi-bin libopenmpi-dev libdnnl-dev
          libavcodec-dev libavformat-dev libswscale-dev libmicrohttpd-dev
          libxsmm-dev)
# The dashboard's charts: Debian's Chart.js (docs/dashboard.md says why), installed with skinner.
packages+=(libjs-chart.js)
# pip for Debian's python3: install_mujoco below fetches the pinned MuJoCo wheel with it
packages+=(python3-pip)
# --test (make test): PyTorch too, for the Python tests that compare skinner's networks with
# PyTorch's (a reference only: skinner never imports it); strace and gdb, with which
# resolve_once counts a command's file opens and env lookups; scikit-learn, whose
# GaussianProcessRegressor test_sweep_gp checks skinner's GP against. Without them those tests
# skip, or under CI fail. python3-venv: the test environment below. qemu-user-static: portable_check.
if [[ ${1:-} == --test ]]; then
    packages+=(python3-torch strace gdb python3-sklearn python3-venv)
    # MuJoCo's own renderer headless (EGL on Mesa's software driver), the reference
    # python/tests/test_mujoco_render.py compares the MuJoCo envs' pictures with
    packages+=(libegl1 libegl-mesa0 libgl1-mesa-dri)
    # the portable build on the oldest CPU it targets: qemu-x86_64-static -cpu Nehalem (issue 48)
    packages+=(qemu-user-static)
    # skinner serve's browser test (issue 35): Debian's Chromium, its ChromeDriver, Selenium
    packages+=(chromium chromium-driver python3-selenium)
fi

# The test environment (--test): ROOT/.venv, made from Debian's /usr/bin/python3 (the interpreter
# the module is built for; a python3 earlier on PATH may be pyenv's) with --system-site-packages,
# so NumPy, PyTorch and pytest stay Debian's, and the pinned peers of python/requirements-test.txt
# from PyPI on top (Gymnasium, PettingZoo, MinAtar, ONNX and ONNX Runtime, TensorBoard). Made
# again when the requirements change (a stamp holds their checksum); nothing is fetched at test time.
make_test_venv() {
    local root venv requirements stamp sum
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    venv=${SKINNER_TEST_VENV:-$root/.venv}
    requirements=$root/python/requirements-test.txt
    stamp=$venv/.skinner-requirements
    sum=$(sha256sum "$requirements" | cut -d' ' -f1)
    [[ -x $venv/bin/python && -f $stamp && $(cat "$stamp") == "$sum" ]] && return 0
    echo "skinner setup: the test venv $venv (/usr/bin/python3, pinned from python/requirements-test.txt)"
    rm -rf "$venv"
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        -r "$requirements"
    echo "$sum" > "$stamp"
}

# MuJoCo (issue 50; scripts/mujoco.version says why the wheel): the pinned wheel is fetched from
# PyPI with pip (no Python is installed by it), checked against its sha256, and its libmujoco and
# headers unpacked into /usr/local (lib/libmujoco.so.VERSION with a libmujoco.so link,
# include/mujoco), where CMake and the loader find them like any library. Skipped for the cross
# build: the aarch64 tree builds without the MuJoCo module.
install_mujoco() {
    local root version wheel sha256 tmp
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    # shellcheck disable=SC1091
    eval "$(grep -E '^(version|wheel|sha256)=' "$root/scripts/mujoco.version")"
    [[ -f /usr/local/lib/libmujoco.so.$version && -f /usr/local/include/mujoco/mujoco.h ]] && return 0
    echo "skinner setup: MuJoCo $version from PyPI's $wheel into /usr/local"
    if [[ $(id -u) -ne 0 ]]; then
        echo "skinner setup: not root; run scripts/setup.sh as root to install MuJoCo $version" >&2
        exit 1
    fi
    tmp=$(mktemp -d)
    /usr/bin/python3 -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
        --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.11 \
        -d "$tmp" "mujoco==$version"
    echo "$sha256  $tmp/$wheel" | sha256sum --check --quiet || {
        echo "skinner setup: $wheel does not match the sha256 in scripts/mujoco.version" >&2
        rm -rf "$tmp"; exit 1; }
    (cd "$tmp" && /usr/bin/python3 -m zipfile -e "$wheel" x)
    install -D -m 0644 "$tmp/x/mujoco/libmujoco.so.$version" "/usr/local/lib/libmujoco.so.$version"
    ln -sf "libmujoco.so.$version" /usr/local/lib/libmujoco.so
    rm -rf /usr/local/include/mujoco
    cp -r "$tmp/x/mujoco/include/mujoco" /usr/local/include/mujoco
    chmod -R a+rX /usr/local/include/mujoco
    ldconfig
    rm -rf "$tmp"
}

# --cross aarch64 (make cross ARCH=aarch64; docs/install.md, "aarch64"): Debian's cross compiler,
# the arm64 multiarch packages of the dependencies that install beside their amd64 twins
# (installing one upgrades its amd64 twin to the same version, as multiarch requires), and qemu
# to run the tests. Left out, with the CMake option that builds without them (Makefile's
# CROSS_FLAGS): libplplot-dev:arm64 (it replaces the host's libplplot-dev; SKINNER_PLOT=OFF),
# libopenmpi-dev:arm64 (it replaces the host's Open MPI; SKINNER_MPI=OFF), an arm64 Python
# (python3-dev:arm64 replaces the host's python3; SKINNER_PYTHON_MODULE=OFF), libdnnl-dev:arm64
# (dpkg refuses it: its oneapi/dnnl/dnnl_config.h, a file both arches install, says
# DNNL_GPU_RUNTIME NONE where amd64's says OCL; SKINNER_DNNL=OFF). libxsmm has no arm64 package
# (bench/learner_gemm builds without it).
if [[ ${1:-} == --cross ]]; then
    case ${2:-} in
    aarch64) debian_arch=arm64 triple=aarch64-linux-gnu ;;
    *) echo "skinner setup: --cross takes aarch64 (got '${2:-}')" >&2; exit 2 ;;
    esac
    packages=(gcc-$triple cmake pkg-config qemu-user-static)
    for dev in libc6-dev libopenblas-dev libcjson-dev zlib1g-dev libncurses-dev libcmocka-dev \
               libmicrohttpd-dev libavcodec-dev libavformat-dev libswscale-dev; do
        packages+=("$dev:$debian_arch")
    done
    if ! dpkg --print-foreign-architectures | grep -qx "$debian_arch"; then
        echo "skinner setup: adding the $debian_arch architecture to dpkg (dpkg --add-architecture)"
        [[ $(id -u) -eq 0 ]] || { echo "  run as root: dpkg --add-architecture $debian_arch" >&2; exit 1; }
        dpkg --add-architecture "$debian_arch"
    fi
    set -- cross # no test venv: the cross build's tests need no Python
fi

missing=()
# Installed for this machine's architecture (or for all): with a foreign architecture added
# (arm64, for the cross build) dpkg lists one line per architecture installed.
native_arch=$(dpkg --print-architecture)
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status} ${Architecture}\n' "$pkg" 2>/dev/null || true)
    wanted="$native_arch|all"
    [[ $pkg != *:* ]] || wanted=${pkg##*:} # libopenblas-dev:arm64, for the cross build
    grep -qxE "install ok installed ($wanted)" <<< "$status" || missing+=("$pkg")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    [[ ${1:-} == cross ]] || install_mujoco
    [[ ${1:-} != --test ]] || make_test_venv
    exit 0
fi

echo "skinner setup: installing ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
    echo "skinner setup: not root; run this and retry:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
[[ ${1:-} == cross ]] || install_mujoco
[[ ${1:-} != --test ]] || make_test_venv
