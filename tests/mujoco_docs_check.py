#!/usr/bin/python3
"""docs/mujoco.md's blocks run as printed (issue 50), as readme_check.py runs README.md's (its
block reader and markers): in a fresh temporary folder, in the page's order, each ```sh block
line by line with the build's `skinner` first on PATH, each ```python block with
/usr/bin/python3 and the build's module. A `skip:`, `output:` or `run by:` marker above a block
(tests/doc_blocks.py) leaves it out, saying why. A build without the module, or whose
modules/mujoco/models/ had no model file for a command's task ("this build embeds no ..."),
skips (77), and fails under CI=true.

usage: mujoco_docs_check.py --build BUILD_DIR --source SOURCE_DIR [--page docs/PAGE.md]
(--page: another page of blocks run the same way; algorithms_docs_check runs docs/algorithms.md)"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skinner_proc  # noqa: E402
from doc_blocks import read_blocks, runs_here, shell_commands  # noqa: E402

CI = os.environ.get("CI", "") not in ("", "0", "false")
TIMEOUT_SECONDS = 300


def skip(why):
    print(f"SKIPPED: mujoco_docs_check: {why}")
    sys.exit(1 if CI else 77)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--page", default="docs/mujoco.md")
    args = parser.parse_args()
    name = args.page
    build = os.path.abspath(args.build)
    page = os.path.join(args.source, name)
    blocks, _ = read_blocks(page)
    env = dict(os.environ, PATH=f"{build}:{os.environ['PATH']}",
               PYTHONPATH=os.path.join(build, "python"))
    ran = 0
    with tempfile.TemporaryDirectory() as tmp:
        for block in blocks:
            if block.lang not in ("sh", "python"):
                continue
            if not runs_here(block):
                print(f"mujoco_docs_check: {name}:{block.line}: not run ({block.marker})")
                continue
            if block.lang == "python":
                script = os.path.join(tmp, f"block{block.line}.py")
                with open(script, "w") as f:
                    f.write(block.text)
                commands = [(block.line, ["/usr/bin/python3", script], False)]
            else:
                commands = [(line, command, True) for line, command in shell_commands(block)]
            for line, command, shell in commands:
                done = skinner_proc.run(command, TIMEOUT_SECONDS, shell=shell, cwd=tmp, env=env,
                                        executable="/bin/bash" if shell else None)
                out = done.stdout + done.stderr
                if done.returncode != 0 and "this build embeds no" in out:
                    skip(f"{name}:{line}: {out.strip().splitlines()[-1]}")
                if done.returncode != 0 and "unknown env" in out.lower():
                    skip(f"{name}:{line}: the MuJoCo module is not built (no MuJoCo at "
                         "configure time: scripts/setup.sh installs it)")
                if done.returncode != 0:
                    print(f"mujoco_docs_check: {name}:{line}: exited {done.returncode}\n{out[-4000:]}")
                    return 1
                ran += 1
    print(f"mujoco_docs_check: {ran} commands of {name} ran")
    return 0 if ran else 1


if __name__ == "__main__":
    sys.exit(main())
