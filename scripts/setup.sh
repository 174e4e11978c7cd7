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
# convolutional host: oneDNN.
packages=(build-essential cmake pkg-config libopenblas-dev libcjson-dev zlib1g-dev
          libncurses-dev libplplot-dev plplot-driver-cairo libcmocka-dev tmux
          dataset-fashion-mnist clang libclang-rt-14-dev
          python3-dev python3-numpy python3-pytest
          openmpi-bin libopenmpi-dev libdnnl-dev)
# --test (make test): PyTorch too, for the Python tests that compare skinner's networks with
# PyTorch's (a reference only: skinner never imports it); strace and gdb, with which
# resolve_once counts a command's file opens and env lookups; scikit-learn, whose
# GaussianProcessRegressor test_sweep_gp checks skinner's GP against. Without them those tests
# skip, or under CI fail.
if [[ ${1:-} == --test ]]; then
    packages+=(python3-torch strace gdb python3-sklearn)
fi

missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "skinner setup: installing ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
    echo "skinner setup: not root; run this and retry:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
