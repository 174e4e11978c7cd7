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
# convolutional host: oneDNN; bench/learner_gemm's third candidate: libxsmm.
packages=(build-essential cmake pkg-config libopenblas-dev libcjson-dev zlib1g-dev
          libncurses-dev libplplot-dev plplot-driver-cairo libcmocka-dev tmux
          dataset-fashion-mnist clang libclang-rt-14-dev
          python3-dev python3-numpy python3-pytest
          openmpi-bin libopenmpi-dev libdnnl-dev
          libavcodec-dev libavformat-dev libswscale-dev libmicrohttpd-dev
          libxsmm-dev)
# --test (make test): PyTorch too, for the Python tests that compare skinner's networks with
# PyTorch's (a reference only: skinner never imports it); strace and gdb, with which
# resolve_once counts a command's file opens and env lookups; scikit-learn, whose
# GaussianProcessRegressor test_sweep_gp checks skinner's GP against. Without them those tests
# skip, or under CI fail. test_export (issue 36): python3-onnx's checker, and node with npm's
# onnxruntime-node (below: its Linux CPU runtime comes in the package; its install script only
# fetches GPU builds, so --ignore-scripts) in the repository's node_modules, not committed.
if [[ ${1:-} == --test ]]; then
    packages+=(python3-torch strace gdb python3-sklearn python3-onnx nodejs)
    # skinner serve's browser test (issue 35): Debian's Chromium, its ChromeDriver, Selenium
    packages+=(chromium chromium-driver python3-selenium)
    # Debian's npm, unless npm is there already (NodeSource's nodejs brings its own)
    command -v npm >/dev/null 2>&1 || packages+=(npm)
fi

# Node packages into ROOT/node_modules (not committed), once npm is there: uPlot, the charts of
# skinner serve's page (installed with skinner), always; onnxruntime-node with --test. One npm
# command for all of them: an `npm install --no-save` removes what an earlier one put there.
install_onnxruntime_node() {
    local root wanted=(uplot@1.6.32) name need=0
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    if [[ ${1:-} == --test || -f "$root/node_modules/onnxruntime-node/package.json" ]]; then
        wanted+=(onnxruntime-node)
    fi
    for name in "${wanted[@]}"; do
        [[ -f "$root/node_modules/${name%@*}/package.json" ]] || need=1
    done
    [[ $need == 1 ]] || return 0
    if ! command -v npm >/dev/null 2>&1; then
        echo "skinner setup: no npm, so no uPlot: skinner serve's page has no charts (run with --test)" >&2
        return 0
    fi
    echo "skinner setup: npm install --ignore-scripts ${wanted[*]} in $root"
    (cd "$root" && npm install --ignore-scripts --no-audit --no-fund --no-save --no-package-lock "${wanted[@]}")
}

missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    install_onnxruntime_node "${1:-}"
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
install_onnxruntime_node "${1:-}"
