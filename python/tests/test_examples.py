"""The examples in examples/python run as documented (the PyTorch one where
torch is installed), and so do the Python-defined envs the docs print:
each block of docs/python.md and README.md that registers an env runs as
printed, read from the .md at test time."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

import skinner
from conftest import REPO, require_package, require_torch

EXAMPLES = REPO / "examples" / "python"


def environment():
    """os.environ with the skinner under test first on the path, from any folder."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(pathlib.Path(skinner.__file__).parents[1]),
                                         env.get("PYTHONPATH", "")])
    return env


def run(script, *args, timeout=120):
    return subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True,
                          text=True, timeout=timeout, env=environment())


def documented_arguments(script):
    """The arguments of the command the script's docstring prints
    (`PYTHONPATH=build/python /usr/bin/python3 examples/python/X.py ARGS`)."""
    text = (EXAMPLES / script).read_text()
    m = re.search(rf"^\s*PYTHONPATH=\S+ \S+ examples/python/{re.escape(script)}(.*)$", text, re.M)
    assert m, f"{script} prints no command to run it"
    return m.group(1).split()


def test_random_actions():
    out = run("random_actions.py", *documented_arguments("random_actions.py"))
    assert out.returncode == 0, out.stderr
    assert re.search(r"steps/s", out.stdout), out.stdout


def test_numpy_env_example_solves():
    out = run("numpy_env.py", *documented_arguments("numpy_env.py"))  # as printed: no flags
    assert out.returncode == 0, out.stdout + out.stderr
    assert "solved after" in out.stdout
    mean = float(re.search(r"mean return ([0-9.]+)", out.stdout.splitlines()[-1]).group(1))
    assert mean >= 475


def test_torch_ppo_example_runs():
    require_torch()
    out = run("torch_ppo.py", "--total-steps", "8192", "--seed", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"steps/s", out.stdout), out.stdout


DOCS_WITH_PYTHON_ENVS = ["docs/python.md", "README.md"]


def python_env_blocks():
    """(file, block number, code) of every ```python block that registers an env."""
    blocks = []
    for name in DOCS_WITH_PYTHON_ENVS:
        text = (REPO / name).read_text()
        fenced = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
        blocks += [(name, k, code) for k, code in enumerate(fenced) if "skinner.register(" in code]
    return blocks


def test_the_docs_print_a_python_env():
    assert any(name == "docs/python.md" for name, _, _ in python_env_blocks()), \
        "docs/python.md has no Python-defined env block left to run"


@pytest.mark.parametrize("name, index, code", python_env_blocks(),
                         ids=[f"{name}:{index}" for name, index, _ in python_env_blocks()])
def test_docs_python_env_block_runs_as_printed(tmp_path, name, index, code):
    """The block as the page prints it, in a fresh interpreter, in an empty
    folder (a run_dir it names lands there)."""
    script = tmp_path / "block.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env=environment())
    where = f"{name}, python block {index}"
    assert out.returncode == 0, f"{where}:\n{out.stdout}\n{out.stderr}"
    if "skinner.train(" in code and "callback=" in code:
        # training on a Python-defined env reports its progress through the callback
        assert len(out.stdout.splitlines()) >= 2, f"{where} printed no progress:\n{out.stdout}"
    if 'print("solved:"' in code:
        assert out.stdout.splitlines()[-1].startswith("solved: True"), f"{where}:\n{out.stdout}"


def python_md_blocks():
    """(block number, skip reason or None, code) of every ```python block of docs/python.md, in
    page order. A block is skipped only with a `<!-- test: skip: REASON -->` line just above it,
    as tests/readme_check.py reads README.md's markers."""
    text = (REPO / "docs" / "python.md").read_text()
    found = re.findall(r"^(?:<!-- test: skip: (.+?) -->\n)?```python\n(.*?)^```", text, re.M | re.S)
    return [(k, reason or None, code) for k, (reason, code) in enumerate(found)]


@pytest.fixture(scope="module")
def python_md_folder(tmp_path_factory):
    """One folder for the page's blocks: a later block reads the run an earlier one wrote
    (Policies loads runs/cp, which Training trains), as a reader running them in turn would."""
    return tmp_path_factory.mktemp("python_md")


@pytest.mark.parametrize("index, reason, code", python_md_blocks(),
                         ids=[f"block{index}" for index, _, _ in python_md_blocks()])
def test_python_md_block_runs_as_printed(python_md_folder, index, reason, code):
    """Each block of docs/python.md runs verbatim, in a fresh interpreter, in page order: no
    name it uses comes from another block, and none loops forever."""
    if reason:
        pytest.skip(f"docs/python.md block {index}: {reason}")
    if re.search(r"^import torch|^import .*\btorch\b", code, re.M):
        require_torch()
    if re.search(r"^import .*\bgymnasium\b", code, re.M):
        require_package("gymnasium")
    script = python_md_folder / f"block{index}.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, cwd=python_md_folder, env=environment())
    assert out.returncode == 0, f"docs/python.md, python block {index}:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
