#!/usr/bin/python3
"""Runs README.md's blocks as printed (issue 30: the README is a newcomer's front page).

The blocks are read from README.md at test time, never copied here. In a fresh temporary
folder, in the README's order:
- each ```sh block, line by line, with bash, the build's `skinner` first on PATH and
  PKG_CONFIG_PATH at a `cmake --install` of the build into a temporary prefix (so the
  README's pkg-config line finds skinner's installed headers and .pc files);
- each ```python block with /usr/bin/python3 and the build's module (PYTHONPATH=BUILD/python,
  as ctest's python_module test);
- each ```c block is written to the file its marker names (below), for the shell blocks after
  it to compile.

A comment right before a block's fence steers it (tests/doc_blocks.py lists them all):
  <!-- test: file NAME -->               write the block to NAME instead of running it
  <!-- test: skip: REASON -->            not run, by design; the reason is printed (make run,
                                         make test)
  <!-- test: run by: TEST -->            another ctest test runs it (not run here)
  <!-- test: env NAME=VALUE ... -->      run it with these variables set: a smaller budget for
                                         a slow block, documented where the block is
Blocks in other languages (```text, ```ini) carry a marker saying what they are (docs_inventory).

Also checked: the README stays a front page (at most MAX_LINES lines), every relative link
in it names a file or folder of the source tree, and it has at least a
shell block, a Python block and a C file, so a rewrite that drops the plugin or the Python
example fails here rather than passing with nothing run.

usage: readme_check.py --build BUILD_DIR --source SOURCE_DIR [--page README.md]
                       [--no-python-module WHY]
Exit 0 when every block ran with exit code 0; 1 with the failing command, its exit code and
its output otherwise. A build without the Python module by design (a sanitizer or fuzzing
build: --no-python-module says why) leaves the Python block out; one that lacks it otherwise
(no python3-dev) reports it SKIPPED, and fails the test under CI=true.
"""
import argparse
import os
import re
import shlex
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skinner_proc  # noqa: E402
from doc_blocks import read_blocks, runs_here, shell_commands  # noqa: E402

MAX_LINES = 160  # "at most ~150 lines"
COMMAND_TIMEOUT_SECONDS = 300
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")


def fail(where, what, result=None):
    print(f"readme_check: README.md:{where}: {what}")
    if result is not None:
        print("--- stdout ---\n" + result.stdout[-4000:] + "--- stderr ---\n" + result.stderr[-4000:])
    sys.exit(1)


def run(argv, where, what, env, cwd, shell=False):
    """A timeout kills the command's process group (a shell line's skinner too) and fails
    the test naming the command with its output (tests/skinner_proc.py)."""
    result = skinner_proc.run(argv, COMMAND_TIMEOUT_SECONDS, cwd=cwd, env=env, shell=shell,
                              executable="/bin/bash" if shell else None)
    if result.returncode != 0:
        fail(where, f"{what} exited with {result.returncode}", result)
    return result


def install_prefix(build, tmp, env):
    """cmake --install of the build into tmp/prefix; the folder that holds skinner-plugin.pc."""
    prefix = os.path.join(tmp, "prefix")
    run(["cmake", "--install", build, "--prefix", prefix], "-", "cmake --install", env, tmp)
    for root, _, files in os.walk(prefix):
        if "skinner-plugin.pc" in files:
            return root
    fail("-", f"cmake --install put no skinner-plugin.pc under {prefix}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--page", default="README.md", choices=["README.md"],
                        help="the page it runs (named for tests/docs_inventory.py)")
    parser.add_argument("--no-python-module", metavar="WHY")
    args = parser.parse_args()
    build, source = os.path.realpath(args.build), os.path.realpath(args.source)
    readme = os.path.join(source, "README.md")
    blocks, num_lines = read_blocks(readme)
    if num_lines > MAX_LINES:
        fail(num_lines, f"the README has {num_lines} lines; a front page keeps to {MAX_LINES} "
             "(the reference goes to docs/)")
    text = open(readme, encoding="utf-8").read()
    for number, line in enumerate(text.split("\n"), 1):
        for target in LINK.findall(line):
            path = target[0]
            if "://" not in path and not os.path.exists(os.path.join(source, path)):
                fail(number, f"the link to '{path}' names nothing in {source}")
    ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    python_dir = os.path.join(build, "python")
    has_python_module = os.path.isdir(os.path.join(python_dir, "skinner"))
    tmp = tempfile.mkdtemp(prefix="skinner-readme-")
    counts = {"sh": 0, "python": 0, "file": 0}
    try:
        env = dict(os.environ)
        env["PATH"] = build + os.pathsep + env.get("PATH", "")
        env["PYTHONPATH"] = python_dir
        env.pop("SKINNER_CONFIG_DIR", None)  # the build's skinner finds the repo's configs/
        # a sanitizer build: fontconfig and libltdl (under PLplot's cairo devices, for
        # skinner plot) keep allocations for the life of the process, as test_plot says
        suppressions = os.path.join(tmp, "lsan.supp")
        with open(suppressions, "w", encoding="utf-8") as out:
            out.write("leak:libfontconfig.so\nleak:libltdl.so\n")
        env.setdefault("LSAN_OPTIONS", f"suppressions={suppressions}:print_suppressions=0")
        pkgconfig = None
        for block in blocks:
            marker = block.marker or ""
            if not runs_here(block):
                # by design, or another test's: not a missing requirement, not a skipped case
                print(f"not run here: README.md:{block.line} ({block.lang}): {marker}")
                continue
            block_env = dict(env)
            if marker.startswith("env "):
                for pair in shlex.split(marker[4:]):
                    name, _, value = pair.partition("=")
                    block_env[name] = value
            if marker.startswith("file "):
                name = marker[5:].strip()
                if os.path.basename(name) != name or not name:
                    fail(block.line, f"'test: file {name}' must name a file in the test's folder")
                with open(os.path.join(tmp, name), "w", encoding="utf-8") as out:
                    out.write(block.text)
                print(f"README.md:{block.line}: wrote {name} ({block.lang})")
                counts["file"] += 1
            elif block.lang in ("sh", "bash", "shell"):
                for where, command in shell_commands(block):
                    if "pkg-config" in command and pkgconfig is None:
                        pkgconfig = install_prefix(build, tmp, env)
                    if pkgconfig:
                        block_env["PKG_CONFIG_PATH"] = pkgconfig
                    print(f"README.md:{where}: $ {command}", flush=True)
                    result = run(command, where, f"'{command}'", block_env, tmp, shell=True)
                    sys.stdout.write(result.stdout[-1500:])
                counts["sh"] += 1
            elif block.lang == "python":
                if args.no_python_module:
                    print(f"not run: README.md:{block.line} (python): {args.no_python_module}")
                    continue
                if not has_python_module:
                    why = f"the build has no Python module ({python_dir}/skinner)"
                    if ci:
                        fail(block.line, why + "; under CI=true that fails")
                    print(f"SKIPPED: README.md:{block.line} (python): {why}")
                    continue
                script = os.path.join(tmp, f"readme_{block.line}.py")
                with open(script, "w", encoding="utf-8") as out:
                    out.write(block.text)
                print(f"README.md:{block.line}: /usr/bin/python3 (the Python block)", flush=True)
                result = run(["/usr/bin/python3", script], block.line, "the Python block",
                             block_env, tmp)
                sys.stdout.write(result.stdout[-1500:])
                counts["python"] += 1
            elif block.lang == "c":
                fail(block.line, "a C block without a '<!-- test: file NAME -->' marker has "
                     "nothing to compile it")
        wanted = {"sh": 1, "file": 1, "python": 1 if has_python_module else 0}
        for kind, least in wanted.items():
            if counts[kind] < least:
                fail("-", f"ran {counts[kind]} {kind} blocks; the README should have at least "
                     f"{least} (a newcomer's shell commands, the plugin's C file, the Python example)")
        print(f"readme_check: ran {counts['sh']} shell and {counts['python']} Python blocks, "
              f"wrote {counts['file']} files")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
