"""Shared set-up of the Python module's tests: where the repository, the build
and ../shared are. ctest runs them as `.venv/bin/python -m pytest` (the test venv,
docs/install.md) with PYTHONPATH=build/python and SKINNER_BUILD=build.

Skips are loud (as the C tests' TEST_SKIP in tests/test_util.h): a test whose
requirement is absent skips through `require`, the summary prints one line
`SKIPPED: <test>: <why>` per skipped test (which `make test` gathers), and under
CI (CI=true) a missing requirement fails the test instead, naming the path."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SKINNER_BUILD", REPO / "build"))
# the references and datasets: $SKINNER_SHARED_DIR, else ../shared next to the repository
SHARED = pathlib.Path(os.environ.get("SKINNER_SHARED_DIR") or REPO.parent / "shared")
COUNTRIES = SHARED / "datasets" / "countries_s3"


def under_ci():
    return os.environ.get("CI", "") not in ("", "0", "false")


def require(path, why):
    """`path` when it exists; otherwise skips the test saying what is missing and
    why it matters (under CI fails it instead)."""
    path = pathlib.Path(path)
    if path.exists():
        return path
    message = f"{path} is missing ({why})"
    if under_ci():
        pytest.fail(f"{message}; CI=true: a missing requirement fails the run", pytrace=False)
    pytest.skip(message)


def require_torch():
    """torch, for the comparisons against PyTorch; `make test` installs Debian's python3-torch
    (scripts/setup.sh --test). Skips without it, and under CI fails instead."""
    try:
        import torch
    except ImportError as error:
        message = f"could not import torch ({error}): install python3-torch (scripts/setup.sh --test)"
        if under_ci():
            pytest.fail(f"{message}; CI=true: a missing requirement fails the run", pytrace=False)
        pytest.skip(message)
    return torch


def require_package(name):
    """The module `name`, one of the peers python/requirements-test.txt pins (gymnasium,
    pettingzoo, minatar, onnx, onnxruntime) into the test venv (scripts/setup.sh --test).
    Skips without it, and under CI fails instead."""
    import importlib
    try:
        return importlib.import_module(name)
    except ImportError as error:
        message = (f"could not import {name} ({error}): the test venv has it (scripts/setup.sh "
                   "--test installs python/requirements-test.txt)")
        if under_ci():
            pytest.fail(f"{message}; CI=true: a missing requirement fails the run", pytrace=False)
        pytest.skip(message)


@pytest.fixture
def countries():
    return str(require(COUNTRIES, "the dataset countries_s3 of ../shared: put ../shared next to "
                                  "the repository or set SKINNER_SHARED_DIR"))


def pytest_terminal_summary(terminalreporter):
    skipped = terminalreporter.stats.get("skipped", [])
    for report in skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason
        terminalreporter.write_line(f"SKIPPED: {report.nodeid}: {reason}")
    if skipped:
        terminalreporter.write_line(f"skipped {len(skipped)} tests (the SKIPPED lines above say why)")
