"""The examples in examples/python run as documented (the PyTorch one where
torch is installed)."""

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO

EXAMPLES = REPO / "examples" / "python"


def run(script, *args, timeout=120):
    env = dict(os.environ)
    return subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def test_random_actions():
    out = run("random_actions.py")
    assert out.returncode == 0, out.stderr
    assert re.search(r"steps/s", out.stdout), out.stdout


def test_numpy_env_example_solves():
    out = run("numpy_env.py", "--seed", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "solved after" in out.stdout
    mean = float(re.search(r"mean return ([0-9.]+)", out.stdout.splitlines()[-1]).group(1))
    assert mean >= 475


def test_torch_ppo_example_runs():
    pytest.importorskip("torch", reason="python3-torch is not installed: the PyTorch example is skipped")
    out = run("torch_ppo.py", "--total-steps", "8192", "--seed", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"steps/s", out.stdout), out.stdout
