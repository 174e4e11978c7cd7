#!/usr/bin/python3
"""docs/sweeps.md's blocks run as printed (issue 34; the docs' commands are tested verbatim).

In a fresh temporary folder holding a link `configs` to the source tree's configs/ (the page's
commands name configs/sweeps/*.ini as from the repository's root), in the page's order: each
```sh block line by line with bash and the build's `skinner` first on PATH, each ```python
block with /usr/bin/python3 and the build's module (PYTHONPATH=BUILD/python). The blocks are
read with tests/doc_blocks.py's reader, markers included. Without the build's Python module
the Python blocks are SKIPPED loudly, and under CI=true that fails.

usage: test_sweep_docs.py --build BUILD_DIR --source SOURCE_DIR [--page docs/sweeps.md]
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skinner_proc  # noqa: E402
from doc_blocks import read_blocks, runs_here, shell_commands  # noqa: E402

TIMEOUT_SECONDS = 300


def fail(where, what, result=None):
    print(f"test_sweep_docs: docs/sweeps.md:{where}: {what}")
    if result is not None:
        print("--- stdout ---\n" + result.stdout[-4000:] + "--- stderr ---\n" + result.stderr[-4000:])
    sys.exit(1)


def run(argv, where, env, cwd, shell=False):
    """A timeout kills the command's process group (a shell line's skinner too) and fails
    the test naming the command with its output (tests/skinner_proc.py)."""
    result = skinner_proc.run(argv, TIMEOUT_SECONDS, cwd=cwd, env=env, shell=shell,
                              executable="/bin/bash" if shell else None)
    if result.returncode != 0:
        fail(where, f"exited with {result.returncode}", result)
    sys.stdout.write(result.stdout[-1500:])
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--page", default="docs/sweeps.md", choices=["docs/sweeps.md"],
                        help="the page it runs (named for tests/docs_inventory.py)")
    parser.add_argument("--no-python-module", metavar="WHY",
                        help="the build has no Python module by design (a sanitizer or fuzzing "
                             "build): leave the Python block out, saying why")
    args = parser.parse_args()
    build, source = os.path.realpath(args.build), os.path.realpath(args.source)
    blocks, _ = read_blocks(os.path.join(source, "docs", "sweeps.md"))
    ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    has_python = os.path.isdir(os.path.join(build, "python", "skinner"))
    env = dict(os.environ)
    env["PATH"] = build + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.path.join(build, "python")
    env.pop("SKINNER_CONFIG_DIR", None)
    tmp = tempfile.mkdtemp(prefix="skinner-sweep-docs-")
    ran = {"sh": 0, "python": 0}
    try:
        # a sanitizer build: fontconfig and libltdl (under PLplot's cairo devices, which
        # `skinner sweep report` draws with) keep allocations for the life of the process
        suppressions = os.path.join(tmp, "lsan.supp")
        with open(suppressions, "w", encoding="utf-8") as out:
            out.write("leak:libfontconfig.so\nleak:libltdl.so\n")
        env.setdefault("LSAN_OPTIONS", f"suppressions={suppressions}:print_suppressions=0")
        os.symlink(os.path.join(source, "configs"), os.path.join(tmp, "configs"))
        for block in blocks:
            if not runs_here(block):
                print(f"not run here: docs/sweeps.md:{block.line}: {block.marker}")
                continue
            if block.lang in ("sh", "bash"):
                for where, command in shell_commands(block):
                    print(f"docs/sweeps.md:{where}: $ {command}", flush=True)
                    result = run(command, where, env, tmp, shell=True)
                    # best.ini trains what was tuned, not the trials' budget (issue 52: it ended
                    # "not solved ... after 28672 steps", the sweep's 30k-step trial budget)
                    if command.startswith("skinner train") and "not solved" in result.stdout:
                        fail(where, "the page's train command ends not solved", result)
                ran["sh"] += 1
            elif block.lang == "python":
                if not has_python and args.no_python_module:
                    print(f"not run: docs/sweeps.md:{block.line} (python): "
                          f"{args.no_python_module}")
                    continue
                if not has_python:
                    why = f"the build has no Python module ({build}/python/skinner)"
                    if ci:
                        fail(block.line, why + "; under CI=true that fails")
                    print(f"SKIPPED: docs/sweeps.md:{block.line} (python): {why}")
                    continue
                script = os.path.join(tmp, f"block_{block.line}.py")
                with open(script, "w", encoding="utf-8") as out:
                    out.write(block.text)
                print(f"docs/sweeps.md:{block.line}: /usr/bin/python3 (the Python block)", flush=True)
                run(["/usr/bin/python3", script], block.line, env, tmp)
                ran["python"] += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if ran["sh"] < 2:
        fail("-", f"expected the page's shell blocks to run, ran {ran['sh']}")
    print(f"test_sweep_docs: ran {ran['sh']} shell and {ran['python']} Python block(s)")


main()
