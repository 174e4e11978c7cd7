"""Shared set-up of the Python module's tests: where the repository, the build
and ../shared are. ctest runs them as `/usr/bin/python3 -m pytest` with
PYTHONPATH=build/python and SKINNER_BUILD=build."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SKINNER_BUILD", REPO / "build"))
SHARED = REPO.parent / "shared"
COUNTRIES = SHARED / "datasets" / "countries_s3"


@pytest.fixture
def countries():
    if not COUNTRIES.is_dir():
        pytest.skip(f"no dataset at {COUNTRIES}")
    return str(COUNTRIES)
